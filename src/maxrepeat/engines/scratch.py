"""A scratch SQLite database: where a document too large to hold resolves each call's
first result on disk (`engines.streamed`, `engines.windowed`). It lives in its own
temporary folder, removed by `ScratchDB.close`; durability is off (the data dies with the
run) and the page cache is capped at `CACHE_KIB`, so memory stays flat whatever the
document's size.
"""

from __future__ import annotations

import os
from typing import Final

__all__ = ["ScratchDB", "CACHE_KIB"]

#: The SQLite page cache of a scratch database, in KiB.
CACHE_KIB: Final = 4096


class ScratchDB:
    """A fresh database ``<name>.sqlite`` in a new temporary folder (``db``: the
    connection); `close` removes both.

    >>> s = ScratchDB("example")
    >>> s.db.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB
    True
    >>> s.close()
    """

    def __init__(self, name: str) -> None:
        import sqlite3
        import tempfile

        self._dir = tempfile.TemporaryDirectory(prefix=f"maxrepeat-{name}-")
        self.db = sqlite3.connect(os.path.join(self._dir.name, f"{name}.sqlite"))
        for pragma in ("journal_mode=OFF", "synchronous=OFF", f"cache_size=-{CACHE_KIB}",
                       "temp_store=FILE", "locking_mode=EXCLUSIVE"):
            self.db.execute("PRAGMA " + pragma)

    def close(self) -> None:
        """Close the database and remove its folder."""
        try:
            self.db.close()
        finally:
            self._dir.cleanup()
