"""Constructed runs for the loop benchmark: loops with volatile parts, and legitimate
repetition. Each is modelled on a kind of run users report (the issue's examples); they
are written here, not recorded, and say so in the figures ("constructed").

Each case: (name, events, loops, legit) with loops as (start, end, period, reason) and
legit as (start, end, reason), inclusive step indexes (one step per turn here).
"""

from __future__ import annotations

from typing import Any

Case = tuple[str, list[dict[str, Any]], list[tuple[int, int, int, str]], list[tuple[int, int, str]]]


def _turn(n: int, tool: str, args: Any, out: Any) -> list[dict[str, Any]]:
    cid = f"c{n}"
    return [{"type": "turn_start", "data": {}},
            {"type": "tool_call", "data": {"toolName": tool, "toolCallId": cid, "arguments": args}},
            {"type": "tool_result", "data": {"toolCallId": cid, "result": out}},
            {"type": "turn_end", "data": {}}]


def _run(steps: list[tuple[str, Any, Any]]) -> list[dict[str, Any]]:
    return [e for n, (tool, args, out) in enumerate(steps) for e in _turn(n, tool, args, out)]


def _intro() -> list[tuple[str, Any, Any]]:
    return [("Read", {"file_path": "src/app.py"}, "def main():\n    return run()\n"),
            ("Grep", {"pattern": "def run", "path": "src"}, "src/core.py:12:def run():")]


LOG = ("============================= test session starts ==============================\n"
       "platform linux -- Python 3.12.3, pytest-8.3.2\ncollected 41 items\n\n"
       "tests/test_core.py ........F................................ [100%]\n\n"
       "FAILED tests/test_core.py::test_parse - AssertionError: assert 'a,b' == 'a;b'\n")


def volatile_loops() -> list[Case]:
    """Loops a reader sees at once, whose exact fingerprints all differ."""
    out: list[Case] = []
    steps = _intro() + [("Bash", {"command": "pytest -q"}, f"1 failed, 40 passed in {t}s")
                        for t in ("0.53", "0.61", "0.58", "0.66", "0.49")]
    out.append(("pytest-durations", _run(steps), [(2, 6, 1, "same pytest run, only the duration changes")], []))
    descs = ["Run tests", "Re-run the tests", "Run the test suite again", "Run tests once more"]
    steps = _intro() + [("Bash", {"command": "npm test", "description": d}, "1 failing\n  parse: expected ';'")
                        for d in descs]
    out.append(("claude-bash-description", _run(steps), [(2, 5, 1, "same npm test, description reworded")], []))
    steps = _intro() + [("execute_bash", {"command": "python app.py", "summary": s},
                         f"Traceback (most recent call last):\n  File \"app.py\", line 3\nKeyError: 'user'\n[pid {p}] exited 1")
                        for s, p in (("Run the app", 4121), ("Try running again", 4188),
                                     ("Check the app runs", 4203), ("Re-run app", 4266))]
    out.append(("openhands-summary-pid", _run(steps), [(2, 5, 1, "same crash, summary reworded and pid changes")], []))
    steps = _intro() + [("Bash", {"command": "curl -s localhost:8080/health"},
                         f"\x1b[31mconnection refused\x1b[0m at 2024-05-01T10:0{m}:1{m}Z")
                        for m in range(5)]
    out.append(("poll-timestamp", _run(steps), [(2, 6, 1, "polls a dead server; only the timestamp and colour codes differ")], []))
    steps = _intro() + [("Bash", {"command": "pytest -q --basetemp=/tmp/pytest-" + str(k)}, LOG.replace("41 items", "41 items") + f"\nresults in /tmp/pytest-{k}/tmp{k}a9x\n")
                        for k in range(4)]
    out.append(("pytest-tempdir", _run(steps), [(2, 5, 1, "same failing test run in a fresh temp dir")], []))
    steps = _intro()
    for k in range(3):
        steps += [("Edit", {"file_path": "src/core.py", "old_string": "a,b", "new_string": "a;b"},
                   "The file src/core.py has been updated."),
                  ("Bash", {"command": "pytest -q"}, LOG.replace("3.12.3", "3.12.3") + f"\n0.{40 + k}s")]
    out.append(("edit-test-cycle", _run(steps), [(2, 7, 2, "re-applies the same edit and re-runs the same failing test (period 2)")], []))
    steps = _intro() + [("Bash", {"command": "cat build.log"}, LOG.replace("collected 41 items", f"collected 41 items\nbuild id {h}"))
                        for h in ("3f2a9c1d4e5b6a7f", "9e8d7c6b5a4f3e2d", "0a1b2c3d4e5f6a7b", "7f6e5d4c3b2a1f0e")]
    out.append(("log-build-id", _run(steps), [(2, 5, 1, "reads the same log; only a hex build id differs")], []))
    return out


def legitimate() -> list[Case]:
    """Repetition a careful reader accepts as progress."""
    out: list[Case] = []
    steps = _intro() + [("Bash", {"command": "kubectl get pod web"}, f"web   0/1   {s}   {a}s")
                        for s, a in (("Pending", 3), ("Pending", 9), ("ContainerCreating", 15),
                                     ("Running", 21))]
    out.append(("poll-until-ready", _run(steps), [], [(2, 5, "polls a pod whose state changes, then it runs")]))
    steps = _intro() + [("Read", {"file_path": "src/big.py", "offset": o, "limit": 200},
                         "\n".join(f"{o + i}: line {o + i}" for i in range(0, 200, 40)))
                        for o in (1, 201, 401, 601)]
    out.append(("page-through-file", _run(steps), [], [(2, 5, "reads a long file page by page")]))
    steps = _intro() + [("Edit", {"file_path": f, "old_string": "import os", "new_string": "import os, sys"},
                         f"The file {f} has been updated.") for f in ("a.py", "b.py", "c.py", "d.py")]
    out.append(("edit-several-files", _run(steps), [], [(2, 5, "the same edit in four different files")]))
    steps = _intro() + [("Edit", {"file_path": "src/core.py", "old_string": "a,b", "new_string": "a;b"},
                         "The file src/core.py has been updated."),
                        ("Bash", {"command": "pytest -q"}, "1 failed, 40 passed in 0.52s"),
                        ("Edit", {"file_path": "src/core.py", "old_string": "split(',')", "new_string": "split(';')"},
                         "The file src/core.py has been updated."),
                        ("Bash", {"command": "pytest -q"}, "41 passed in 0.55s")]
    out.append(("rerun-after-fix", _run(steps), [], [(2, 5, "fixes, re-runs tests, fixes again, tests pass")]))
    steps = _intro() + [("Bash", {"command": f"pytest -q tests/test_{m}.py"}, f"{n} passed in 0.{n}s")
                        for m, n in (("io", 12), ("core", 30), ("cli", 7), ("api", 19))]
    out.append(("test-each-module", _run(steps), [], [(2, 5, "runs each module's tests once")]))
    steps = _intro() + [("Bash", {"command": "sleep 5; tail -1 train.log"}, f"epoch {e} loss {loss}")
                        for e, loss in ((1, "0.91"), (2, "0.72"), (3, "0.60"), (4, "0.55"))]
    out.append(("watch-training", _run(steps), [], [(2, 5, "watches a training log whose epoch and loss advance")]))
    steps = _intro() + [("Read", {"file_path": f}, f"# {f}\n" + "x = 1\n" * 3)
                        for f in ("a.py", "b.py", "c.py", "d.py")]
    out.append(("read-several-files", _run(steps), [], [(2, 5, "reads four files with the same short content")]))
    return out
