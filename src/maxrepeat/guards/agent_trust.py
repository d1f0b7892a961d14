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

Every reason is a `ConfigError` in the one message grammar, with the fix as its hint.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError

__all__ = ["Load", "will_load", "codex_hook_hash", "CHECKS"]


@dataclass(frozen=True)
class Load:
    """Whether the agent loads a guard (``loads``), the ``problems`` that keep it from
    loading (each with its fix as hint) and ``notes`` on how the agent must be run."""

    loads: bool
    problems: tuple[ConfigError, ...] = ()
    notes: tuple[str, ...] = ()


def _locate(text: str, needle: str) -> tuple[int, int]:
    at = text.find(needle)
    if at < 0:
        return 1, 1
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def _toml_key_at(text: str, table: str, key: str) -> str:
    """A needle for `_locate`: the text from the ``key =`` line of the TOML table whose
    header names ``table`` (what `_locate` finds first), or the header; ``table`` alone
    when neither is there."""
    inside = False
    for i, line in enumerate(text.splitlines(keepends=True)):
        bare = line.strip()
        if bare.startswith("["):
            inside = table in bare
        elif inside and bare.split("=", 1)[0].strip() == key:
            return "".join(text.splitlines(keepends=True)[i:])
    return table


def _problem(file: Path, text: str, needle: str, path: str, expectation: str, got: str,
             hint: str) -> ConfigError:
    line, col = _locate(text, needle)
    return ConfigError(path, expectation, got, hint=hint, file=str(file), line=line, col=col)


def _read(path: Path) -> tuple[str, Any]:
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


def _get(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _claude_code(scope: str, file: Path, project: Path, home: Path,
                 env: Mapping[str, str]) -> Load:
    config = env.get("CLAUDE_CONFIG_DIR")
    system = Path("/etc/claude-code")
    managed = [system / "managed-settings.json",
               *sorted((system / "managed-settings.d").glob("*.json"))]
    files = [*managed, (Path(config) if config else home / ".claude") / "settings.json",
             project / ".claude" / "settings.json", project / ".claude" / "settings.local.json"]
    problems = []
    for path in files:
        text, value = _read(path)
        if _get(value, "disableAllHooks") is True:
            problems.append(_problem(path, text, '"disableAllHooks"', "disableAllHooks",
                                     "false or absent for Claude Code to run hooks", "true",
                                     "remove it, or set it to false"))
        if path in managed and _get(value, "allowManagedHooksOnly") is True:
            problems.append(_problem(path, text, '"allowManagedHooksOnly"',
                                     "allowManagedHooksOnly", "false or absent for Claude "
                                     "Code to run hooks outside the managed settings", "true",
                                     "managed settings: ask the administrator"))
    notes = ("an interactive session asks you to trust the folder first; claude -p does "
             "not ask",) if scope == "project" else ()
    return Load(not problems, tuple(problems), notes)


#: Codex's event names in its hook trust keys
_CODEX_EVENTS = {"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use"}


def codex_hook_hash(event: str, group: Mapping[str, Any], handler: Mapping[str, Any]) -> str:
    """The hash Codex keeps for a trusted command hook (``trusted_hash``; ``currentHash``
    in its app server's ``hooks/list``): SHA-256 of the canonical JSON of the event, the
    group's matcher and the handler as Codex normalizes it.

    >>> codex_hook_hash("PreToolUse", {}, {"type": "command", "command": "x", "timeout": 30})[:15]
    'sha256:dd23e2df'
    """
    timeout = handler.get("timeout")
    norm: dict[str, Any] = {"type": "command", "command": handler.get("command"),
                            "timeout": max(1, timeout if isinstance(timeout, int) else 600),
                            "async": handler.get("async") is True}
    if handler.get("statusMessage") is not None:
        norm["statusMessage"] = handler["statusMessage"]
    body: dict[str, Any] = {"event_name": _CODEX_EVENTS.get(event, event), "hooks": [norm]}
    if isinstance(group.get("matcher"), str):
        body["matcher"] = group["matcher"]
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _toml_key(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _codex(scope: str, file: Path, project: Path, home: Path,
           env: Mapping[str, str], guard: Callable[[Any], bool]) -> Load:
    config = Path(env.get("CODEX_HOME") or home / ".codex") / "config.toml"
    text, value = _read(config)
    value = value if isinstance(value, dict) else {}
    problems = []
    if _get(value, "features", "hooks") is False:
        problems.append(_problem(config, text, _toml_key_at(text, "[features]", "hooks"),
                                 "features.hooks", "true or absent", "false",
                                 "remove the line, or set it to true"))
    if scope == "project":
        folder = str(project.resolve())
        level = _get(value, "projects", folder, "trust_level")
        root = next((p for p in (project.resolve(), *project.resolve().parents)
                     if (p / ".git").exists()), None)
        if level is None and root is not None:  # Codex also takes the repository's entry
            level = _get(value, "projects", str(root), "trust_level")
        if level != "trusted":
            problems.append(_problem(
                config, text, _toml_key_at(text, folder, "trust_level"),
                f"projects.{_toml_key(folder)}.trust_level",
                '"trusted" for Codex to read the project\'s .codex/', json.dumps(level)
                if level else "nothing", f"run `codex exec --trust` once in {folder}, or add "
                f"[projects.{_toml_key(folder)}] trust_level = \"trusted\" to {config}"))
    _, hooks = _read(file)
    lines = []
    for event, groups in (_get(hooks, "hooks") or {}).items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            for h, handler in enumerate(_get(group, "hooks") or []):
                if not (isinstance(handler, dict) and guard(handler.get("command"))):
                    continue
                key = f"{file.resolve()}:{_CODEX_EVENTS.get(event, event)}:{g}:{h}"
                digest = codex_hook_hash(event, group, handler)
                state = _get(value, "hooks", "state", key)
                if _get(state, "trusted_hash") != digest:
                    lines.append(f"[hooks.state.{_toml_key(key)}]\ntrusted_hash = "
                                 f"{_toml_key(digest)}")
                if _get(state, "enabled") is False:
                    problems.append(_problem(config, text, key, f"hooks.state.{_toml_key(key)}"
                                             ".enabled", "true or absent", "false",
                                             "enable the hook in /hooks in codex"))
    if lines:
        problems.append(_problem(
            config, text, "[hooks.state", "hooks.state.<hook>.trusted_hash",
            "the hook's current hash for Codex to run it", "nothing",
            "trust it in /hooks in codex, or run codex exec --dangerously-bypass-hook-trust "
            f"(this run only), or add to {config}:\n" + "\n".join(lines)))
    bypass = ("runs in codex exec --dangerously-bypass-hook-trust",) \
        if lines and len(problems) == 1 else ()
    return Load(not problems, tuple(problems), bypass)


def _gemini_settings(env: Mapping[str, str], home: Path) -> list[Path]:
    system = Path(env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or "/etc/gemini-cli/settings.json")
    defaults = Path(env.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
                    or system.parent / "system-defaults.json")
    return [system, defaults, home / ".gemini" / "settings.json"]


def _gemini_trusted(folder: Path, home: Path, env: Mapping[str, str]
                    ) -> tuple[bool, Path, str]:
    """Whether Gemini CLI trusts ``folder``, its trusted-folders file and the level of
    the rule that decides (the longest that covers the folder)."""
    path = Path(env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
                or home / ".gemini" / "trustedFolders.json")
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") in ("true", "false"):
        return env["GEMINI_CLI_TRUST_WORKSPACE"] == "true", path, "GEMINI_CLI_TRUST_WORKSPACE"
    _, rules = _read(path)
    best, level = -1, ""
    for rule, value in (rules.items() if isinstance(rules, dict) else ()):
        base = Path(rule).parent if value == "TRUST_PARENT" else Path(rule)
        if folder.resolve().is_relative_to(base.resolve()) and len(rule) > best:
            best, level = len(rule), str(value)
    return level in ("TRUST_FOLDER", "TRUST_PARENT"), path, level


def _gemini(scope: str, file: Path, project: Path, home: Path,
            env: Mapping[str, str]) -> Load:
    problems = []
    layers = _gemini_settings(env, home) + [project / ".gemini" / "settings.json"]
    trust_on = True
    for path in layers[:3]:
        on = _get(_read(path)[1], "security", "folderTrust", "enabled")
        trust_on = on if isinstance(on, bool) else trust_on
    trusted, rules, level = _gemini_trusted(project, home, env)
    if trust_on and not trusted:
        folder = _toml_key(str(project.resolve()))
        text = _read(rules)[0]
        problems.append(_problem(
            rules, text, folder, folder, '"TRUST_FOLDER" for Gemini CLI to run any settings '
            "hook there (gemini -p does not even start)", json.dumps(level) if level else
            "nothing", f"trust the folder when gemini asks, or add {folder}: \"TRUST_FOLDER\" "
            "to that file, or run gemini -p with GEMINI_CLI_TRUST_WORKSPACE=true"))
    if scope == "project" and project.resolve() == home.resolve():
        problems.append(ConfigError("project", "a folder other than your home folder for "
                                    "Gemini CLI to read its .gemini/settings.json",
                                    str(project), hint="install with --user"))
    for path in layers if trusted or not trust_on else layers[:3]:
        text, value = _read(path)
        editable = "" if path != layers[0] and path != layers[1] else \
            " (system settings, which maxrepeat hook install does not edit: ask the " \
            "administrator)"
        if _get(value, "hooksConfig", "enabled") is False:
            problems.append(_problem(path, text, '"enabled"', "hooksConfig.enabled", "true "
                                     "or absent", "false", "set it to true" + editable))
        disabled = _get(value, "hooksConfig", "disabled")
        if isinstance(disabled, list) and "maxrepeat-loop-guard" in disabled:
            problems.append(_problem(path, text, '"maxrepeat-loop-guard"',
                                     "hooksConfig.disabled", "a list without "
                                     '"maxrepeat-loop-guard"', json.dumps(disabled),
                                     "remove it" + editable))
    return Load(not problems, tuple(problems))


def _copilot(scope: str, file: Path, project: Path, home: Path,
             env: Mapping[str, str]) -> Load:
    if scope != "project":
        return Load(True)
    config = Path(env.get("COPILOT_HOME") or home / ".copilot") / "config.json"
    text, value = _read(config)
    folders = [_get(value, key) for key in ("trustedFolders", "trusted_folders")]
    listed = [Path(f).resolve() for group in folders if isinstance(group, list)
              for f in group if isinstance(f, str)]
    folder = project.resolve()
    if folder in listed or any(folder.is_relative_to(f) for f in listed):
        return Load(True)
    note = ("an interactive session asks you to trust the folder; for copilot -p trust it "
            "once, or set COPILOT_ALLOW_ALL=true",)
    if env.get("COPILOT_ALLOW_ALL") == "true":
        return Load(True, (), ("loads with COPILOT_ALLOW_ALL=true (set here)",) + note)
    return Load(False, (_problem(
        config, text, '"trustedFolders"', "trustedFolders", f"a list holding {folder} for "
        "Copilot CLI to read .github/hooks/ with -p", json.dumps([str(f) for f in listed]),
        "start copilot in the folder and trust it, or run copilot -p with "
        "COPILOT_ALLOW_ALL=true"),), note)


#: agent -> its check (the Codex check also needs to tell the guard's handlers)
CHECKS: dict[str, Callable[..., Load]] = {"claude-code": _claude_code, "codex": _codex,
                                          "gemini-cli": _gemini, "copilot-cli": _copilot}


def will_load(agent: str, scope: str, file: Path, *, project: Path, home: Path,
              env: Mapping[str, str] | None = None) -> Load:
    """Whether ``agent`` loads the guard installed in ``file`` (``scope``), for a session
    started in ``project`` by a user whose home is ``home`` (``env``: the environment the
    agent runs with; this process's by default)."""
    environ = os.environ if env is None else env
    if agent == "codex":
        from .install import is_guard_command

        return _codex(scope, file, project, home, environ,
                      lambda c: is_guard_command(c, "codex"))
    return CHECKS[agent](scope, file, project, home, environ)
