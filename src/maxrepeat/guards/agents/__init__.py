"""The agents ``maxrepeat hook`` guards: one module per agent in this package, each
declaring one `Agent` named ``AGENT``.

An agent is found without importing anything: `names` lists this folder's modules (the
module ``gemini_cli.py`` is the agent ``gemini-cli``), and `get` imports one module when
it is needed. Everything else reads the descriptor: the hook command (``maxrepeat hook
NAME``, cli/agent_hooks.py and the plain call of cli/hookrun.py), ``hook install`` and
``uninstall`` (`Agent.writer`: a JSON settings writer, `maxrepeat.guards.install`, or the
files of a shim, `maxrepeat.guards.shimfiles`), ``hook status`` (`Agent.will_load`,
`Agent.stop_exit`, `Agent.event_of`) and the resident hook server (`Agent.warm`). Adding
an agent is one module here, its docs page and its end-to-end test.

Agents from other packages register under the ``maxrepeat.agents`` entry-point group
(name: the agent, value: ``module:AGENT``); they are looked up only for a name that is
not one of this folder's, so a hook call of a built-in agent never reads package
metadata.

>>> "claude-code" in names() and "codex" in names()
True
>>> get("codex").title
'Codex CLI'
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    from ...core.config import MaxRepeatConfig
    from ..agent_trust import Load
    from ..hookcall import HookOutput
    from ..install import SettingsWriter
    from ..policy import Decision, Policy
    from ..shimfiles import FilesWriter

__all__ = ["Agent", "Guard", "names", "get", "module_of", "ENTRY_POINTS"]

#: the entry-point group of agents from other packages
ENTRY_POINTS: Final = "maxrepeat.agents"
_HERE: Final = os.path.dirname(__file__)


class Guard(Protocol):
    """One hook call: the agent's hook input (``payload``) judged with ``configs``; what
    to print and how to exit (`HookOutput`), and the policy's `Decision` behind it.
    `TrajectoryFormatError` when the input or the agent's log cannot be read."""

    def __call__(self, payload: Mapping[str, Any], configs: Sequence[MaxRepeatConfig], *,
                 policy: Policy | None = ..., cache_dir: Path | None = ...
                 ) -> tuple[HookOutput, Decision]: ...


@dataclass(frozen=True)
class Agent:
    """What maxrepeat knows of one agent.

    ``name``: the command (``maxrepeat hook NAME``, ``hook install NAME``); ``title``: how
    people call it; ``reader``: the input format of its session log (``maxrepeat grade``
    reads a finished session with it); ``events``: the hook events the guard answers;
    ``guard``: one hook call; ``event_of``: which event a hook input is (for the verdict
    journal); ``writer``: where ``hook install`` writes the guard (a `SettingsWriter` of
    JSON settings, or a `FilesWriter` of shim files); ``will_load(scope, file, project,
    home, env)``: whether the agent will run what was installed, and if not, why;
    ``stop_exit``: what the agent's run does when the guard stops it (for ``hook
    status``); ``warm``: the modules a hook call of this agent imports, for the resident
    server to import ahead.
    """

    name: str
    title: str
    reader: str
    events: tuple[str, ...]
    guard: Guard
    event_of: Callable[[Mapping[str, Any]], str]
    writer: SettingsWriter | FilesWriter
    will_load: Callable[[str, Path, Path, Path, Mapping[str, str]], Load]
    stop_exit: str
    warm: tuple[str, ...] = ()


def _builtin() -> list[str]:
    return sorted(f[:-3].replace("_", "-") for f in os.listdir(_HERE)
                  if f.endswith(".py") and not f.startswith("_"))


def names() -> list[str]:
    """Every agent's name: this folder's, then those of the ``maxrepeat.agents`` entry
    points (sorted, each once)."""
    from importlib.metadata import entry_points

    out = _builtin()
    extra = sorted({ep.name for ep in entry_points(group=ENTRY_POINTS)} - set(out))
    return out + extra


def module_of(name: str) -> str | None:
    """The module (``module:attribute`` for an entry point) declaring agent ``name``;
    None when there is none. A built-in agent is found without reading package metadata.

    >>> module_of("gemini-cli")
    'maxrepeat.guards.agents.gemini_cli'
    >>> module_of("nobody") is None
    True
    """
    if name in _builtin():
        return f"{__name__}.{name.replace('-', '_')}"
    from importlib.metadata import entry_points

    found = [ep.value for ep in entry_points(group=ENTRY_POINTS) if ep.name == name]
    return found[0] if found else None


def get(name: str) -> Agent:
    """The agent ``name`` (`KeyError` when no module declares it)."""
    where = module_of(name)
    if where is None:
        raise KeyError(name)
    module, _, attribute = where.partition(":")
    agent = getattr(importlib.import_module(module), attribute or "AGENT")
    if not isinstance(agent, Agent) or agent.name != name:
        raise KeyError(f"{where} does not declare the agent {name!r}")
    return agent
