"""Starting the resident hook server (`hookclient`: a call that found none starts it, after
the full path has answered). Apart from `hookclient` so that a call the server answers
never reads this code: what the agent's process imports is paid at every tool call."""

from __future__ import annotations

import os
import sys

__all__ = ["start_server"]


def start_server(path: str) -> None:
    """Start the server for ``path`` in the background, detached (its own session,
    standard streams on /dev/null, in ``/``), with this process's import path and only
    the environment that decides how Python starts (no secrets)."""
    code = ("import os, sys; os.closerange(3, 1 << 16); sys.path[:] = sys.argv[2:]; "
            "from maxrepeat.cli.hookserver import serve; serve(sys.argv[1])")
    argv = [sys.executable, *(["-O"] * sys.flags.optimize), "-X",
            f"utf8={sys.flags.utf8_mode}", "-c", code, path, *sys.path]
    keep = ("PYTHON", "LC_", "MAXREPEAT_")
    env = {k: v for k, v in os.environ.items()
           if k.startswith(keep) or k in ("LANG", "HOME", "PATH", "TMPDIR", "XDG_RUNTIME_DIR")}
    null = os.devnull
    try:
        os.posix_spawn(sys.executable, argv, env, setsid=True, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0)])
    except OSError:
        pass  # no server: the next call runs the full path, and tries again
