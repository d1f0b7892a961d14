"""The one note of an install without the native fast path.

Where no C compiler was found at install time, ``pip install`` goes on without the
optional extension (setup.py) and pip shows its warning only with ``-v``: the grading is
then about 2.5 times slower, and nothing would say so. The first command run after such
an install says it once on standard error; a file in the user's cache directory
(``$XDG_CACHE_HOME/maxrepeat``, else ``~/.cache/maxrepeat``) remembers that it was said,
for this version. ``MAXREPEAT_PURE=1`` (the pure path asked for) is not such an install.
An agent's hook call never says it (it is not run through the click group).
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import __version__

__all__ = ["NOTE", "note_pure_python"]

NOTE = ("maxrepeat: note: the native fast path was not built when this package was "
        "installed (no C compiler or Python headers?), so the pure-Python path grades, "
        "about 2.5x slower. Reinstall where a compiler exists to get it; 'maxrepeat "
        "--version' shows which path runs. (Said once.)")


def _marker() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "maxrepeat" / f"pure-python-noted-{__version__}"


def note_pure_python() -> None:
    """Say `NOTE` on standard error if the extension is missing and it was not said yet."""
    if os.environ.get("MAXREPEAT_PURE", "") not in ("", "0"):
        return
    from ..core.accel import available

    if available():
        return
    marker = _marker()
    if marker.exists():
        return
    import click

    click.echo(NOTE, err=True)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass  # a read-only home: said at each run rather than never
