"""``maxrepeat hook codex``: the loop guard as an OpenAI Codex CLI hook.

Codex runs a command hook before (``PreToolUse``) and after (``PostToolUse``) each tool
call, with one JSON object on standard input::

    {"session_id", "turn_id", "transcript_path", "cwd", "hook_event_name", "model",
     "permission_mode", "tool_name", "tool_input", "tool_use_id",
     "tool_response"}                       # PostToolUse only

``transcript_path`` is the session's rollout file (``~/.codex/sessions/.../rollout-*.jsonl``,
read with the ``codex`` reader). When the hook runs, Codex has already written the call
(``function_call`` with ``call_id`` = ``tool_use_id``) but not its output: the guard takes
the call from the log (its name and arguments as the log spells them: ``exec_command``
with ``{"cmd": ...}``, where the payload says ``Bash`` with ``{"command": ...}``) and the
result from ``tool_response``. For a command, ``tool_response`` is its output alone,
while the rollout will record its exit code too: the guard adds the exit code Codex has
already written in the rollout (`.codex_results`), so the result is the one ``maxrepeat
grade`` of the finished rollout sees. A command still running after its first wait
(its output says ``Process running with session ID N``) gets its ``PostToolUse`` when a
``write_stdin`` call polling it sees it end, with the command's ``tool_use_id`` and the
poll's output: the guard judges that poll, the call whose output the rollout will show.

What the guard prints (exit code 0, one JSON object on standard output, nothing when
there is nothing to say):

* ``PostToolUse`` warning: ``{"hookSpecificOutput": {"hookEventName": "PostToolUse",
  "additionalContext": MESSAGE}}`` (Codex adds a developer message the model reads);
* ``PostToolUse`` block: ``{"decision": "block", "reason": MESSAGE}`` (Codex gives the
  model the reason in place of the call's output);
* ``PostToolUse`` stop: ``{"continue": false, "stopReason": MESSAGE, "reason": MESSAGE}``;
* ``PreToolUse`` (``name`` / ``name-args`` modes) when the call would extend a loop to a
  block or a stop: ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "deny", "permissionDecisionReason": MESSAGE}}``: the call does
  not run and the model reads the reason as its output.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...readers.codex import exec_output
from ..agent_trust import Load, dig, problem, read_settings, toml_key, toml_key_at
from ..agent_writers import GroupWriter, is_guard
from ..codex_results import WAIT, command_result
from ..hookcall import HookCall, HookOutput, hook_event, hook_output, payload_str, require
from ..policy import Action, Decision, loop_message
from . import Agent
from ._common import event_of, judging

if TYPE_CHECKING:
    from ...core.errors import ConfigError

__all__ = ["AGENT", "hook_call", "render", "guard", "EVENTS", "CodexWriter", "codex_hook_hash",
           "will_load"]

#: The hook events the guard handles (and `maxrepeat hook install codex` registers).
EVENTS = ("PreToolUse", "PostToolUse")


def hook_call(payload: Mapping[str, Any], *, wait: float = WAIT) -> HookCall:
    """The hook input as the guard's `HookCall` (`TrajectoryFormatError` when a field
    the guard needs is missing). After a command, its result is completed from the
    rollout (`.codex_results`, waiting at most ``wait`` seconds for it)."""
    event = hook_event(payload, EVENTS)
    data = dict(payload)
    name = require(payload_str(data, "tool_name"), "tool_name")
    phase = "pre" if event == "PreToolUse" else "post"
    log = payload_str(data, "transcript_path")
    call_id = payload_str(data, "tool_use_id")
    response = payload.get("tool_response")
    ok = True
    if phase == "post" and isinstance(response, str):
        found = command_result(log, call_id, wait)
        if found is not None:
            # a command that outlived its first wait reports its end through the
            # write_stdin call that polled it: that call is the step the result ends
            call_id, code = found
            response, ok = exec_output(code, response), code == 0
    return HookCall(
        phase=phase,
        session=payload_str(data, "session_id"),
        log=log,
        reader="codex",
        # without a rollout (transcript_path null: an ephemeral session) the call is
        # graded on its own, as the payload names it
        placement="id",
        name=name,
        arguments=payload.get("tool_input"),
        call_id=call_id,
        result=response,
        ok=ok,
    )


def render(call: HookCall, decision: Decision) -> HookOutput:
    """Codex's hook output for a decision (see the module docstring)."""

    def write(msg: str) -> dict[str, Any]:
        if call.phase == "pre":
            if decision.action is Action.STOP:
                # Codex cannot stop from PreToolUse (continue: false fails the hook
                # there): the call is refused, and the text says so rather than "stopping"
                msg = loop_message(Action.BLOCK, decision.loops, refused=True)
            return {"hookSpecificOutput": {
                "hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": msg}}
        if decision.action is Action.WARN:
            return {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                           "additionalContext": msg}}
        if decision.action is Action.BLOCK:
            return {"decision": "block", "reason": msg}
        return {"continue": False, "stopReason": msg, "reason": msg}

    return hook_output(decision, write)


#: Judge one Codex hook call: what to print, and the decision behind it.
guard = judging(hook_call, render)


class CodexWriter(GroupWriter):
    """Codex CLI: ``hooks.json`` beside the user or project config (Codex also reads
    ``[hooks]`` tables in ``config.toml``; the JSON file keeps the user's TOML untouched).
    Codex runs hooks it has not reviewed only after the user trusts them (``/hooks`` in
    the TUI), or with ``--dangerously-bypass-hook-trust``."""

    agent = "codex"
    events: tuple[str, ...] = EVENTS

    def path(self, scope: str, project: Path, home: Path) -> Path:
        if scope == "user":
            base = os.environ.get("CODEX_HOME")
            return (Path(base) if base else home / ".codex") / "hooks.json"
        return project / ".codex" / "hooks.json"

    def group(self, command: str) -> dict[str, Any]:
        return {"hooks": [{"type": "command", "command": command, "timeout": 30}]}


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
    import hashlib  # OpenSSL's: not on a hook call's path

    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def will_load(scope: str, file: Path, project: Path, home: Path,
              env: Mapping[str, str]) -> Load:
    """Whether Codex runs the guard in ``file``: hooks on, the project trusted (project
    scope) and each of the guard's handlers trusted with its current hash."""
    config = Path(env.get("CODEX_HOME") or home / ".codex") / "config.toml"
    text, value = read_settings(config)
    value = value if isinstance(value, dict) else {}
    problems = []
    if dig(value, "features", "hooks") is False:
        problems.append(problem(config, text, toml_key_at(text, "[features]", "hooks"),
                                 "features.hooks", "true or absent", "false",
                                 "remove the line, or set it to true"))
    if scope == "project":
        problems += _project_trust(config, text, value, project)
    lines = _handler_trust(file, config, text, value, problems)
    if lines:
        problems.append(problem(
            config, text, "[hooks.state", "hooks.state.<hook>.trusted_hash",
            "the hook's current hash for Codex to run it", "nothing",
            "trust it in /hooks in codex, or run codex exec --dangerously-bypass-hook-trust "
            f"(this run only), or add to {config}:\n" + "\n".join(lines)))
    bypass = ("runs in codex exec --dangerously-bypass-hook-trust",) \
        if lines and len(problems) == 1 else ()
    return Load(not problems, tuple(problems), bypass)


def _project_trust(config: Path, text: str, value: dict[str, Any],
                   project: Path) -> list[ConfigError]:
    """The problem of a project Codex does not trust (it would not read its .codex/)."""
    folder = str(project.resolve())
    level = dig(value, "projects", folder, "trust_level")
    root = next((p for p in (project.resolve(), *project.resolve().parents)
                 if (p / ".git").exists()), None)
    if level is None and root is not None:  # Codex also takes the repository's entry
        level = dig(value, "projects", str(root), "trust_level")
    if level == "trusted":
        return []
    return [problem(
        config, text, toml_key_at(text, folder, "trust_level"),
        f"projects.{toml_key(folder)}.trust_level",
        '"trusted" for Codex to read the project\'s .codex/', json.dumps(level)
        if level else "nothing", f"run `codex exec --trust` once in {folder}, or add "
        f"[projects.{toml_key(folder)}] trust_level = \"trusted\" to {config}")]


def _handler_trust(file: Path, config: Path, text: str, value: dict[str, Any],
                   problems: list[ConfigError]) -> list[str]:
    """The config lines that would trust the guard's handlers whose hash Codex has not
    trusted; a handler turned off adds its problem to ``problems``."""
    _, hooks = read_settings(file)
    lines = []
    for event, groups in (dig(hooks, "hooks") or {}).items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            for h, handler in enumerate(dig(group, "hooks") or []):
                if not (isinstance(handler, dict) and is_guard(handler.get("command"), "codex")):
                    continue
                key = f"{file.resolve()}:{_CODEX_EVENTS.get(event, event)}:{g}:{h}"
                digest = codex_hook_hash(event, group, handler)
                state = dig(value, "hooks", "state", key)
                if dig(state, "trusted_hash") != digest:
                    lines.append(f"[hooks.state.{toml_key(key)}]\ntrusted_hash = "
                                 f"{toml_key(digest)}")
                if dig(state, "enabled") is False:
                    problems.append(problem(config, text, key, f"hooks.state.{toml_key(key)}"
                                             ".enabled", "true or absent", "false",
                                             "enable the hook in /hooks in codex"))
    return lines


AGENT = Agent(
    name="codex", title="Codex CLI", reader="codex", events=EVENTS, guard=guard,
    event_of=event_of, writer=CodexWriter(), will_load=will_load,
    stop_exit="codex exec 0.171 does not stop on a hook: every further repeat is refused; "
              "the run exits 0",
    warm=("maxrepeat.readers.codex",))
