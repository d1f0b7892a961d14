"""Whether an agent will load the guard ``maxrepeat hook install`` wrote, and if not, why.

A hook written into an agent's settings runs only when the agent reads that file and
lets its hooks run. Each agent has its own gates, measured with the pinned releases
(Claude Code 2.1.332, Codex 0.171.0, Gemini CLI 0.61.0, Copilot CLI 1.0.102):

* **Claude Code**: ``disableAllHooks`` in any settings file, or ``allowManagedHooksOnly``
  in the managed settings (``/etc/claude-code/managed-settings.json`` and
  ``managed-settings.d/``), turns the guard off. (An interactive session asks you to
  trust a new folder first; ``claude -p`` does not ask.)
* **Codex**: ``[features] hooks = false`` turns hooks off; a project's ``.codex/`` is read
  only in a trusted project (``[projects."<folder>"] trust_level = "trusted"`` in
  ``$CODEX_HOME/config.toml``, which ``codex exec --trust`` writes); and each hook runs
  only once trusted: ``[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash``
  equal to the hook's current hash (what ``/hooks`` in Codex writes), or for one run
  with ``--dangerously-bypass-hook-trust``.
* **Gemini CLI**: with folder trust on (the default), no settings hook runs in a folder
  you have not trusted (``~/.gemini/trustedFolders.json``, or ``GEMINI_CLI_TRUST_WORKSPACE=true``;
  ``gemini -p`` refuses to start there, exit 55); ``hooksConfig.enabled: false`` or the
  guard's name in ``hooksConfig.disabled`` turn it off, also from the system settings
  (``/etc/gemini-cli/settings.json``) that ``install`` does not edit.
* **Copilot CLI**: a project's ``.github/hooks/`` is read in prompt mode (``-p``) only in
  a trusted folder (``trustedFolders`` in ``$COPILOT_HOME/config.json``) or with
  ``COPILOT_ALLOW_ALL=true``; an interactive session asks you to trust the folder.

Each agent's check is its descriptor's (`maxrepeat.guards.agents`); this module holds what
they share: `Load`, reading settings (JSON or TOML) and placing a problem in the file.
Every reason is a `ConfigError` in the one message grammar, with the fix as its hint.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError

__all__ = ["Load", "will_load", "locate", "toml_key_at", "toml_key", "problem", "read_settings",
           "dig"]


@dataclass(frozen=True)
class Load:
    """Whether the agent loads a guard (``loads``), the ``problems`` that keep it from
    loading (each with its fix as hint) and ``notes`` on how the agent must be run."""

    loads: bool
    problems: tuple[ConfigError, ...] = ()
    notes: tuple[str, ...] = ()


def locate(text: str, needle: str) -> tuple[int, int]:
    at = text.find(needle)
    if at < 0:
        return 1, 1
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def toml_key_at(text: str, table: str, key: str) -> str:
    """A needle for `locate`: the text from the ``key =`` line of the TOML table whose
    header names ``table`` (what `locate` finds first), or the header; ``table`` alone
    when neither is there."""
    inside = False
    for i, line in enumerate(text.splitlines(keepends=True)):
        bare = line.strip()
        if bare.startswith("["):
            inside = table in bare
        elif inside and bare.split("=", 1)[0].strip() == key:
            return "".join(text.splitlines(keepends=True)[i:])
    return table


def problem(file: Path, text: str, needle: str, path: str, expectation: str, got: str,
             hint: str) -> ConfigError:
    line, col = locate(text, needle)
    return ConfigError(path, expectation, got, hint=hint, file=str(file), line=line, col=col)


def read_settings(path: Path) -> tuple[str, Any]:
    """A settings file's text and value (JSON, with ``//`` comment lines dropped as
    Copilot CLI writes them); ``("", None)`` when missing or unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return "", None
    if path.suffix == ".toml":
        try:
            return text, tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return text, None
    plain = "\n".join(x for x in text.splitlines() if not x.lstrip().startswith("//"))
    try:
        return text, json.loads(plain) if plain.strip() else {}
    except json.JSONDecodeError:
        return text, None


def dig(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def toml_key(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def will_load(agent: str, scope: str, file: Path, *, project: Path, home: Path,
              env: Mapping[str, str] | None = None) -> Load:
    """Whether ``agent`` loads the guard installed in ``file`` (``scope``), for a session
    started in ``project`` by a user whose home is ``home`` (``env``: the environment the
    agent runs with; this process's by default): the agent's own check
    (`maxrepeat.guards.agents.Agent.will_load`)."""
    from .agents import get

    return get(agent).will_load(scope, file, project, home, os.environ if env is None else env)
