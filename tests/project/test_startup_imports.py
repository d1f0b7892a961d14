"""What ``maxrepeat grade`` of one small native file imports (issue 17: start-up).

Start-up time itself is measured by ``bench/run.py --only startup`` and never asserted
here (a loaded machine would make such a test flaky). What is pinned is the cause: the
modules a plain grade must not import, because only other paths need them (other
readers, YAML, rich, ijson, the streaming reader, the ``tools`` regex translator, the
near-duplicate normalizers, OpenSSL's hashlib).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_REPORT = """
import sys
from maxrepeat.cli import main
try:
    main(sys.argv[2:])
finally:
    with open(sys.argv[1], "w") as fh:
        fh.write("\\n".join(sorted(sys.modules)))
"""

#: imported only by the paths that need them
_NOT_ON_THE_GRADE_PATH = (
    "yaml", "rich", "ijson", "re2", "hashlib", "_hashlib", "tempfile", "zipfile",
    "concurrent.futures.process", "maxrepeat.core.toolmatch", "maxrepeat.core.near.matching",
    "maxrepeat.core.monitor", "maxrepeat.readers._vally_stream", "maxrepeat.specs.configfile",
    "maxrepeat.specs.evalspec", "maxrepeat.guards",
)


#: the readers package's own modules, imported by every path that reads
_READERS_MACHINERY = frozenset({"registry", "source", "walk"})


def _imported(tmp_path: Path, *args: str) -> set[str]:
    out = tmp_path / "modules.txt"
    proc = subprocess.run([sys.executable, "-c", _REPORT, str(out), *args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return set(out.read_text().split("\n"))


def _native_file(tmp_path: Path) -> Path:
    path = tmp_path / "run.json"
    events = [{"type": "tool_call", "data": {"toolName": "ls", "toolCallId": f"c{i}",
                                             "arguments": {"path": "."}}} for i in range(5)]
    path.write_text(json.dumps({"id": "r", "events": events}))
    return path


def test_grading_one_native_file_imports_one_reader_and_nothing_it_does_not_use(
        tmp_path: Path) -> None:
    path = _native_file(tmp_path)
    for args in (["--max", "3", "-o", "jsonl", "-q"], ["--max", "3"],
                 ["--max", "3", "--output", "jsonl", "--quiet"]):
        mods = _imported(tmp_path, "grade", str(path), *args)
        # click's parser tries a short option (-q) as a long one first and, failing,
        # looks for close matches with difflib: only short options may cost that import
        assert "-q" in args or "difflib" not in mods, args
        # format modules: not the package's own machinery (registry, source, walk) and
        # not its shared `_`-helpers
        readers = sorted(m for m in mods if m.startswith("maxrepeat.readers.")
                         and not m.rsplit(".", 1)[1].startswith("_")
                         and m.rsplit(".", 1)[1] not in _READERS_MACHINERY)
        assert readers == ["maxrepeat.readers.vally"], args
        assert not [m for m in _NOT_ON_THE_GRADE_PATH if m in mods], args


def test_the_paths_that_need_them_still_import_them(tmp_path: Path) -> None:
    """The lazy imports are reached: ``--tools`` compiles patterns, ``normalize`` builds
    the normalizers (through a config file, so YAML is read too)."""
    path = _native_file(tmp_path)
    mods = _imported(tmp_path, "grade", str(path), "--max", "3", "--tools", "^l", "-q")
    assert "maxrepeat.core.toolmatch" in mods
    config = tmp_path / "graders.yaml"
    config.write_text("graders:\n  - type: max-repeat\n    config:\n      max: 3\n"
                      "      normalize: [numbers]\n")
    mods = _imported(tmp_path, "grade", str(path), "--config", str(config), "-q")
    assert {"maxrepeat.core.near.matching", "maxrepeat.specs.configfile"} <= mods


_GC_STATES = """
import gc, sys
import maxrepeat.cli
states = {"after import": gc.isenabled()}
from maxrepeat.engines import batch
graded = batch.BatchGrader.graded
def watched(self):
    states["while grading"] = gc.isenabled()
    return graded(self)
batch.BatchGrader.graded = watched
try:
    maxrepeat.cli.main(["grade", sys.argv[1], "--max", "3", "-q"])
except SystemExit:
    states["after main"] = gc.isenabled()
print(states)
"""


def test_the_collector_is_paused_only_while_the_command_starts(tmp_path: Path) -> None:
    """cli/_gc.py: off while click and the command's modules are imported, on again for
    the work, for an importer of maxrepeat.cli and after main()."""
    proc = subprocess.run([sys.executable, "-c", _GC_STATES, str(_native_file(tmp_path))],
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == (
        "{'after import': True, 'while grading': True, 'after main': True}"), proc.stderr


# -- agent hook calls ------------------------------------------------------------------
#
# An agent runs ``maxrepeat hook AGENT`` as a new process at every tool call, so what the
# process imports is paid at every call (bench/RESULTS.md, "Claude Code hook": start-up
# was ~90% of a later call). A plain call is run without click (cli/hookrun.py) and
# imports only what the guard uses. (These tests call ``main(ARGS)``, the full path; a
# call run by the ``maxrepeat`` script is answered by the resident server, and what its
# process imports is pinned by tests/cli/test_hook_resident.py.)

#: imported by other commands or options, never by a plain hook call
_NOT_ON_THE_HOOK_PATH = (
    "click", "yaml", "rich", "ijson", "re2", "hashlib", "_hashlib", "tempfile", "shutil",
    "zipfile", "difflib", "concurrent.futures", "maxrepeat.cli.group", "maxrepeat.cli.hook",
    "maxrepeat.cli.agent_hooks", "maxrepeat.cli.grade", "maxrepeat.guards.install",
    "maxrepeat.specs", "maxrepeat.reporters", "maxrepeat.engines",
    "maxrepeat.core.toolmatch", "maxrepeat.core.near.matching", "maxrepeat.core.near.normalizers",
)
#: what only a first call (no saved state) needs: the monitors built from the batch tables
_FIRST_CALL_ONLY = ("maxrepeat.core.monitor.frombatch",)

_OUT = "ls: cannot access '/nope': No such file or directory"


def _hook_session(agent: str, tmp: Path, calls: int) -> tuple[Path, dict[str, object]]:
    """A session log of ``calls`` answered calls and one more made (as the agent writes
    it when its post-call hook runs), and that hook's input."""
    if agent == "claude-code":
        log, lines = tmp / "cc.jsonl", []
        for i in range(calls + 1):
            lines.append({"type": "assistant", "uuid": f"a{i}", "sessionId": "s", "message": {
                "id": f"m{i}", "role": "assistant", "content": [{
                    "type": "tool_use", "id": f"t{i}", "name": "Bash",
                    "input": {"command": "ls /nope"}}]}})
            if i < calls:
                lines.append({"type": "user", "uuid": f"u{i}", "sessionId": "s", "message": {
                    "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                 "content": _OUT, "is_error": True}]}})
        payload: dict[str, object] = {
            "session_id": "s", "transcript_path": str(log), "cwd": str(tmp),
            "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_input": {"command": "ls /nope"}, "tool_use_id": f"t{calls}", "error": _OUT}
    elif agent == "codex":
        log = tmp / "rollout.jsonl"
        lines = [{"type": "session_meta", "payload": {"id": "s"}},
                 {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "t"}}]
        for i in range(calls + 1):
            lines.append({"type": "response_item", "payload": {
                "type": "function_call", "name": "exec_command", "call_id": f"c{i}",
                "arguments": json.dumps({"cmd": "ls /nope"})}})
            if i < calls:
                lines.append({"type": "response_item", "payload": {
                    "type": "function_call_output", "call_id": f"c{i}", "output": _OUT}})
        payload = {"session_id": "s", "turn_id": "t", "transcript_path": str(log),
                   "cwd": str(tmp), "hook_event_name": "PostToolUse", "model": "m",
                   "permission_mode": "default", "tool_name": "Bash",
                   "tool_input": {"command": "ls /nope"}, "tool_use_id": f"c{calls}",
                   "tool_response": _OUT}
    elif agent == "gemini-cli":
        log = tmp / "gemini.jsonl"
        lines = [{"sessionId": "s", "projectHash": "h", "kind": "main",
                  "startTime": "2026-12-01T00:00:00Z", "lastUpdated": "2026-12-01T00:00:00Z"}]
        for i in range(calls):
            lines.append({"id": f"g{i}", "type": "gemini", "content": "", "toolCalls": [{
                "id": f"c{i}", "name": "run_shell_command", "args": {"command": "ls /nope"},
                "status": "error", "result": [{"functionResponse": {
                    "id": f"c{i}", "name": "run_shell_command",
                    "response": {"output": _OUT}}}]}]})
        payload = {"session_id": "s", "transcript_path": str(log), "cwd": str(tmp),
                   "hook_event_name": "AfterTool", "timestamp": "2026-12-01T00:00:00Z",
                   "tool_name": "run_shell_command", "tool_input": {"command": "ls /nope"},
                   "tool_response": {"llmContent": _OUT, "returnDisplay": _OUT}}
    else:
        log = tmp / "copilot" / "session-state" / "s" / "events.jsonl"
        lines = [{"type": "session.start", "data": {"sessionId": "s"}, "id": "e0"}]
        for i in range(calls + 1):
            lines += [{"type": "assistant.message", "id": f"a{i}", "data": {
                "messageId": f"m{i}", "content": "", "toolRequests": [{
                    "toolCallId": f"c{i}", "name": "bash",
                    "arguments": {"command": "ls /nope"}}]}},
                {"type": "tool.execution_start", "id": f"s{i}", "data": {
                    "toolCallId": f"c{i}", "toolName": "bash",
                    "arguments": {"command": "ls /nope"}}}]
            if i < calls:
                lines.append({"type": "tool.execution_complete", "id": f"d{i}", "data": {
                    "toolCallId": f"c{i}", "success": False,
                    "result": {"content": _OUT}}})
        payload = {"sessionId": "s", "timestamp": 0, "cwd": str(tmp), "toolName": "bash",
                   "toolArgs": json.dumps({"command": "ls /nope"}),
                   "toolResult": {"resultType": "failure", "textResultForLlm": _OUT}}
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return log, payload


def _hook_imports(tmp_path: Path, agent: str, payload: dict[str, object],
                  *flags: str) -> tuple[set[str], str]:
    out = tmp_path / "modules.txt"
    env = {**os.environ, "COPILOT_HOME": str(tmp_path / "copilot")}
    proc = subprocess.run([sys.executable, "-c", _REPORT, str(out), "hook", agent, *flags],
                          input=json.dumps(payload), capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode in (0, 2) and not proc.stderr, proc.stderr
    return set(out.read_text().split("\n")), proc.stdout


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini-cli", "copilot-cli"])
def test_a_hook_call_imports_neither_click_nor_what_only_other_paths_need(
        tmp_path: Path, agent: str) -> None:
    """First call (no saved state) and a later call (state saved), as the agent runs the
    command ``hook install`` writes: neither imports click, YAML, the reporters, the
    engines, the other agents' guards or readers, the near-duplicate or ``tools``
    machinery, OpenSSL's hashlib or tempfile; and the guard still speaks."""
    cache = str(tmp_path / "cache")
    flags = ("--max", "2", "--max-cycle-period", "2", "--cache-dir", cache)
    seen = []
    for later in (False, True):
        _, payload = _hook_session(agent, tmp_path, 3 if later else 2)
        mods, stdout = _hook_imports(tmp_path, agent, payload, *flags)
        assert not [m for m in _NOT_ON_THE_HOOK_PATH if m in mods], agent
        assert later == (not [m for m in _FIRST_CALL_ONLY if m in mods]), agent
        # this agent's module and the agents' shared helpers (`agents._common`) only
        agents = sorted(m for m in mods if m.startswith("maxrepeat.guards.agents.")
                        and m != "maxrepeat.guards.agents._common")
        assert agents == [f"maxrepeat.guards.agents.{agent.replace('-', '_')}"]
        # format modules: not the package's own machinery (registry, source, walk) and
        # not its shared `_`-helpers
        readers = sorted(m for m in mods if m.startswith("maxrepeat.readers.")
                         and not m.rsplit(".", 1)[1].startswith("_")
                         and m.rsplit(".", 1)[1] not in _READERS_MACHINERY)
        assert readers == [f"maxrepeat.readers.{agent.replace('-', '_')}"], readers
        seen.append(stdout)
    assert any(tmp_path.joinpath("cache").iterdir())  # the later call had a saved state
    # (Copilot CLI reads no answer from its post-call hook: the guard answers before calls)
    assert agent == "copilot-cli" or "maxrepeat loop guard" in seen[1], seen


def test_hook_flags_click_must_read_still_go_to_click(tmp_path: Path) -> None:
    """``--help``, an unknown flag, a config file: click (and YAML) are imported then."""
    _, payload = _hook_session("claude-code", tmp_path, 1)
    mods, stdout = _hook_imports(tmp_path, "claude-code", payload, "--help")
    assert "click" in mods and "Usage:" in stdout
    config = tmp_path / "graders.yaml"
    config.write_text("graders:\n  - type: max-repeat\n    config:\n      max: 3\n")
    mods, _ = _hook_imports(tmp_path, "claude-code", payload, "--config", str(config),
                            "--cache-dir", str(tmp_path / "c"))
    assert "click" not in mods and "maxrepeat.specs.configfile" in mods
