"""One driver a framework for ``bench/guards.py``: how to run that framework's agent on a
scripted session, with and without its maxrepeat guard.

A driver is one module here, ``bench/frameworks/<framework>.py``, that ends with
``register(Driver(...))``; ``bench/guards.py`` imports every module of this package and
runs the drivers whose framework is installed. The interface:

``Driver(name, requires, run, hooks, surface=...)``

* ``name``: the framework as its docs page names it (``"pydantic-ai"``), also the
  ``--only`` key; the page is ``docs/integrations/<name>.md`` unless ``page`` says.
* ``requires``: the module whose presence means the framework is installed
  (``"pydantic_ai"``); import the framework only inside ``run`` and ``hooks``.
* ``run(session, config)``: runs ONE agent run of ``len(session.calls)`` single-call
  steps. The framework's own scripted or offline model answers its n-th request with the
  tool call ``session.calls[n]`` (a ``(tool name, arguments)`` pair; the arguments are
  ``{"path": ..., "text": ...}``) and, after the last one, a final answer; it calls
  ``session.step()`` first thing each time it is asked (that marks where a step starts).
  The agent's one tool, ``edit(path, text)``, returns ``session.tool(path)``. With
  ``config`` None the agent is built exactly as without maxrepeat (the floor); with a
  `MaxRepeatConfig` it is wired with ``loop_guard(config)`` as the framework's docs page
  shows. Any history limit the framework has is raised above the session's length.
* ``hooks()``: the guard's entry points the framework calls, as ``(owner, method name)``
  pairs (``owner`` a class, usually the guard's class or its logic class): the bench
  wraps each with a CPU timer (sync or async) before ``run`` and restores it after, so
  what is timed is the guard's own work at each call, framework excluded. A hook called
  from inside another timed hook is counted once.
* ``surface``: what ``run`` drives, in a few words for the bench's table: the
  framework's own agent loop (the default), or, where that loop cannot do 10,000 calls
  in minutes, the smallest real surface that calls the guard as the loop does (the
  module's docstring says which and why).

The session is clean (no loop): mostly distinct calls, and now and then the previous call
once more (two copies in a row, under every limit), so a guard that refuses, warns or
stops anything is wrong; the bench checks that every call ran.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Driver", "Session", "register", "drivers", "DRIVERS"]

#: every registered driver, by name, in registration order
DRIVERS: dict[str, Driver] = {}


@dataclass(frozen=True)
class Driver:
    """How to run one framework's agent on a session, guarded or not (see the module
    docstring)."""

    name: str
    requires: str
    run: Callable[[Session, Any], None]
    hooks: Callable[[], Sequence[tuple[Any, str]]]
    page: str = ""
    surface: str = "agent loop"

    @property
    def installed(self) -> bool:
        try:
            return importlib.util.find_spec(self.requires) is not None
        except ModuleNotFoundError:  # a submodule ("llama_index.core") of a missing package
            return False

    @property
    def docs_page(self) -> str:
        return f"docs/integrations/{self.page or self.name}.md"


def register(driver: Driver) -> Driver:
    """Add ``driver`` to `DRIVERS` (a module's last line)."""
    if driver.name in DRIVERS:
        raise ValueError(f"two drivers named {driver.name!r}")
    DRIVERS[driver.name] = driver
    return driver


def drivers() -> dict[str, Driver]:
    """Every driver of this package (each module imported once)."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return DRIVERS


class Session:
    """One clean scripted session of ``n`` single-call steps: what the model asks for,
    the tool's executions, and the CPU time at each step's start."""

    def __init__(self, n: int, repeat_every: int = 10) -> None:
        calls: list[tuple[str, dict[str, Any]]] = []
        for i in range(n):
            j = i - 1 if i % repeat_every == repeat_every // 2 else i  # the previous call again
            calls.append(("edit", {"path": f"src/f{j}.py", "text": f"x = {j}"}))
        self.calls = calls
        self.executed = 0
        self.starts: list[float] = []  # process_time at each model request
        self.spent: list[float] = [0.0]  # guard CPU s before the 1st request, then a step
        # counted the same way (bench/guards.py's counting mode): the Python calls, the
        # Python lines run and the peak bytes allocated inside the guard's hooks
        self.ops: list[int] = [0]
        self.lines: list[int] = [0]
        self.bytes: list[int] = [0]
        #: called at each step's start, once it is marked (the bench's floor beside the run)
        self.beside: Callable[[], None] | None = None

    def step(self) -> None:
        """The model is asked again: a new step starts."""
        self.starts.append(time.process_time())
        self.spent.append(0.0)
        self.ops.append(0)
        self.lines.append(0)
        self.bytes.append(0)
        if self.beside is not None:
            self.beside()

    def tool(self, path: str) -> str:
        """The ``edit`` tool's body."""
        self.executed += 1
        return f"wrote {path}"
