"""Record the loop benchmark's agent runs:
``python bench/loops/record.py [--agent A] [--scenario S]``.

Each scenario below is a fixed list of shell commands that a scripted model (on
127.0.0.1, the e2e harness of tests/agent_harness.py and tests/scripted_anthropic.py)
makes a real agent CLI run, one per model turn: Codex CLI, Gemini CLI and Copilot CLI
from ``.npm-agents`` (installed by scripts/test.sh), and Claude Code. The commands really
run, so what changes between copies is what really changes: the clock, the time a test
takes, a fresh temporary directory, a counter in a file. The agent's own session log is
copied to ``bench/loops/recorded/<agent>--<scenario>.<ext>``; `labels.json` labels them
(``fixtures``), by reading the graded steps.

No guard is installed (the runs show the agent's behaviour, not the guard's). A run takes
a few seconds; the whole set about three minutes. Re-recording changes the logs (times,
ids) but not their steps, so the labels stay valid; run.py shows whether they do.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUT = HERE / "recorded"
sys.path[:0] = [str(ROOT)]

from tests.agent_harness import ScriptedModel, binary, run_agent, shell_turns  # noqa: E402

# A failing "test run" whose summary carries its real duration (a loop with a volatile
# part: the same failure, "1 failed in 0.04s", then "0.05s", ...).
FAILING_TEST = ("python3 -c \"import time; t = time.perf_counter(); sum(range(300000)); "
                "print('FAILED tests/test_parse.py::test_split - AssertionError: "
                "assert [1, 2] == [1, 2, 3]'); "
                "print('1 failed, 11 passed in %.3fs' % (time.perf_counter() - t + 0.3)); "
                "raise SystemExit(1)\"")
# A poll of a service that stays down, stamped with the clock.
POLL_DOWN = "date -u +%Y-%m-%dT%H:%M:%S.%NZ; echo 'GET /health: connection refused'; false"
# A command that writes into a fresh temporary directory and fails the same way.
# (no $(...): Gemini CLI refuses command substitution)
TEMP_RUN = ("mktemp -d | while read d; do echo \"building in $d\"; "
            "echo \"error: $d/out/app.o: undefined reference to 'parse_args'\"; done; false")
# The issue's own example: the nanosecond clock, and a failure.
DATE_FALSE = "date +%s%N; false"
# A job polled until it finishes: each poll shows progress, the last one success.
POLL_PROGRESS = ("echo x >> .polls; date -u +%H:%M:%S; awk 'END { if (NR < 4) "
                 "printf \"job 42: running, %d%% of shards done\\n\", NR * 25; "
                 "else print \"job 42: succeeded\" }' .polls")
SETUP_PAGES = "seq -f 'line %g of the log' 1 120 > big.log; wc -l big.log"
SETUP_FILES = ("for f in a b c d; do printf 'import os\\nVALUE = 1\\n' > $f.py; done; ls *.py")
SETUP_CHECK = ("printf 'def split(s):\\n    return s.split(\";\")\\n' > lib.py; "
               "printf 'from lib import split\\nassert split(\"1,2\") == [\"1\", \"2\"], "
               "split(\"1,2\")\\nprint(\"check passed\")\\n' > check.py; ls")
# -B: no bytecode cache (a fix of the same size in the same second would be read stale)
CHECK = "python3 -B check.py"

#: name -> (commands, kind): "loop" scenarios repeat one action with a volatile part;
#: "legit" scenarios repeat a tool in ways a reader accepts as progress.
SCENARIOS: dict[str, tuple[list[str], str]] = {
    "date-false": ([DATE_FALSE] * 5, "loop"),
    "failing-test-duration": ([FAILING_TEST] * 5, "loop"),
    "poll-down-timestamp": ([POLL_DOWN] * 5, "loop"),
    "temp-dir": ([TEMP_RUN] * 4, "loop"),
    "poll-until-done": ([POLL_PROGRESS] * 4, "legit"),
    "page-through-log": ([SETUP_PAGES] + [f"sed -n '{a},{a + 29}p' big.log"
                                          for a in (1, 31, 61, 91)], "legit"),
    "edit-four-files": ([SETUP_FILES] + [f"sed -i 's/VALUE = 1/VALUE = 2/' {f}.py && "
                                         f"echo 'updated {f}.py'" for f in "abcd"], "legit"),
    "rerun-after-fix": ([SETUP_CHECK, CHECK,
                         "sed -i 's/\";\"/\",\"/' lib.py && echo 'fixed the separator'",
                         CHECK], "legit"),
}
#: Claude Code only: the same command, its Bash ``description`` reworded each time.
DESCRIPTIONS = ["Run the tests", "Re-run the test suite", "Run tests again to check",
                "Run the failing test once more"]
AGENTS = ("codex", "gemini-cli", "copilot-cli", "claude-code")
CLAUDE = ROOT / ".npm-agents" / "node_modules" / ".bin" / "claude"


def record_harness(agent: str, name: str, commands: list[str], tmp: Path) -> Path:
    model = ScriptedModel(shell_turns(agent, commands))
    with model.serving():
        run = run_agent(agent, model, tmp / "home", None, prompt="fix the failing check",
                        timeout=240)
    if run.log is None:
        raise RuntimeError(f"{agent} {name}: no session log (exit {run.returncode}): "
                           f"{run.stderr[-2000:]}")
    return run.log


def record_claude(name: str, script: list[Any], tmp: Path) -> Path:
    from tests.scripted_anthropic import ScriptedModel as AnthropicModel
    from tests.scripted_anthropic import claude_folders

    project, config, _, env = claude_folders(tmp, os.environ.get("PATH", "/usr/bin:/bin"))
    with AnthropicModel(script).serving() as model:
        run = subprocess.run([str(CLAUDE), "-p", "fix the failing check", "--output-format",
                              "json", "--allowedTools", "Bash"],
                             cwd=project, env={**env, "ANTHROPIC_BASE_URL": model.url},
                             capture_output=True, text=True, timeout=240,
                             stdin=subprocess.DEVNULL)
    logs = sorted(config.glob("projects/*/*.jsonl"))
    if run.returncode != 0 or len(logs) != 1:
        raise RuntimeError(f"claude-code {name}: exit {run.returncode}, logs {logs}: "
                           f"{run.stderr[-2000:]}")
    return logs[0]


def claude_script(name: str, commands: list[str]) -> list[Any]:
    if name == "description-reworded":
        return [[("Bash", {"command": FAILING_TEST, "description": d})] for d in DESCRIPTIONS]
    return [[("Bash", {"command": c, "description": "Run it"})] for c in commands]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", action="append", default=[], choices=AGENTS,
                        help="record only with these agents (repeatable)")
    parser.add_argument("--scenario", action="append", default=[],
                        help="record only these scenarios (repeatable)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"folder (default {OUT})")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    todo: list[tuple[str, str, list[str]]] = []
    for agent in AGENTS:
        names = dict(SCENARIOS)
        if agent == "claude-code":
            names["description-reworded"] = ([FAILING_TEST] * len(DESCRIPTIONS), "loop")
        for name, (commands, _kind) in names.items():
            if (args.agent and agent not in args.agent) or \
                    (args.scenario and name not in args.scenario):
                continue
            todo.append((agent, name, commands))
    for agent, name, commands in todo:
        exe = CLAUDE if agent == "claude-code" else binary(agent)
        if not exe.exists():
            raise SystemExit(f"{exe} is missing: run scripts/test.sh first")
        with tempfile.TemporaryDirectory(prefix="maxrepeat-record-") as tmp:
            if agent == "claude-code":
                log = record_claude(name, claude_script(name, commands), Path(tmp))
            else:
                log = record_harness(agent, name, commands, Path(tmp))
            ext = "".join(log.suffixes[-1:]) or ".jsonl"
            dest = args.out / f"{agent}--{name}{ext}"
            shutil.copyfile(log, dest)
        print(f"{dest}  {dest.stat().st_size:,} bytes")
    print(json.dumps({"recorded": len(todo)}))


if __name__ == "__main__":
    main()
