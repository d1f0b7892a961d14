"""The one hook engine (`maxrepeat.guards.engine`): the sequence every agent CLI's hook runs
lives there only, the agents' parts stay small, and the engine's own steps (a held stop,
the pre-call refusal, the follow again on a reused call id) behave as documented."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import Event, tool_call, tool_result, turn_end, turn_start
from maxrepeat.guards import engine
from maxrepeat.guards.engine import (
    Followed,
    Monitors,
    Phase,
    Reused,
    StopRule,
    carry_stop,
    judge_call,
)
from maxrepeat.guards.policy import Action, Decision, Policy
from maxrepeat.guards.session import GuardSession, Snapshot

GUARDS = Path(engine.__file__).parent
#: the hook modules: the engine and the agents' parts that run inside it
HOOK_MODULES = ("engine.py", "claude_code.py", "_claude_code_log.py", "agentlog.py",
                "placement.py", "logread.py", "claude_code_backlog.py",
                "claude_code_results.py", "session.py", "hookcall.py")
#: what only the engine may do: open the session, make the snapshot, run the escalation
ENGINE_ONLY = {"GuardSession", "Snapshot", "Escalation", "signature_of", "would_exceed",
               "decide", "store"}
MAX_COMPLEXITY = 20  # radon's grade C at most
MAX_LINES = 60


def complexity(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """McCabe's cyclomatic complexity as radon counts it: 1, plus 1 per branch point
    (``if``/``elif``, conditional expression, loop, ``except``, ``assert``, each extra
    operand of ``and``/``or``, each ``for`` and ``if`` of a comprehension, each ``case``),
    plus 1 for a loop's or ``try``'s ``else``; nested functions count with their own."""
    n = 1
    for node in ast.walk(fn):
        if isinstance(node, (ast.If, ast.IfExp, ast.Assert, ast.ExceptHandler,
                             ast.match_case)):
            n += 1
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            n += 1 + bool(node.orelse)
        elif isinstance(node, ast.Try):
            n += bool(node.orelse)
        elif isinstance(node, ast.BoolOp):
            n += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            n += 1 + len(node.ifs)
    return n


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_the_complexity_count_sees_the_old_hook() -> None:
    """The old ``guard`` (one function holding the whole sequence) would fail the limit:
    a function of 21 branches counts 22, and the count follows radon's on known shapes."""
    branches = "\n".join(f"    if x == {i}:\n        y += 1" for i in range(21))
    tree = ast.parse(f"def f(x, y):\n{branches}\n    return y\n")
    assert complexity(_functions(tree)[0]) == 22 > MAX_COMPLEXITY
    tree = ast.parse("def g(a, b):\n    return [x for x in a if x and b or not x]\n")
    assert complexity(_functions(tree)[0]) == 5  # radon: 1 + comprehension 2 + or/and 2


def test_hook_modules_stay_small_and_simple() -> None:
    """Every function of the hook modules: complexity <= 20 (grade C), <= 60 lines."""
    too_complex, too_long = [], []
    for name in HOOK_MODULES:
        tree = ast.parse((GUARDS / name).read_text(encoding="utf-8"))
        for fn in _functions(tree):
            where = f"{name}:{fn.lineno} {fn.name}"
            if complexity(fn) > MAX_COMPLEXITY:
                too_complex.append(f"{where} ({complexity(fn)})")
            assert fn.end_lineno is not None
            if fn.end_lineno - fn.lineno + 1 > MAX_LINES:
                too_long.append(where)
    assert not too_complex and not too_long, (too_complex, too_long)


def _called(tree: ast.AST) -> set[str]:
    """The names called in ``tree`` (``f(...)`` and ``x.f(...)``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            out.add(f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute)
                    else "")
    return out


def test_the_agents_leave_the_sequence_to_the_engine() -> None:
    """Neither agent's hook opens the session, stores a snapshot or runs the escalation
    itself: a copy of the sequence growing back in ``claude_code.guard`` or
    ``agentlog.judge`` (or their followers) fails here."""
    for name in ("claude_code.py", "_claude_code_log.py", "agentlog.py"):
        tree = ast.parse((GUARDS / name).read_text(encoding="utf-8"))
        assert not _called(tree) & ENGINE_ONLY, (name, _called(tree) & ENGINE_ONLY)
        assert "judge_call" in _called(tree) or name == "_claude_code_log.py"
    engine_calls = _called(ast.parse((GUARDS / "engine.py").read_text(encoding="utf-8")))
    assert {"GuardSession", "Snapshot", "Escalation", "signature_of"} <= engine_calls


def test_carry_stop_follows_each_hooks_rule() -> None:
    stop = Decision(Action.STOP, "stop now", ())
    none = Decision(Action.NONE, None, ())
    # Claude Code: PostToolUseFailure cannot stop, so it holds; the next hook carries it
    assert carry_stop(StopRule(hold=True), None, stop) == (None, "stop now")
    assert carry_stop(StopRule(carry=True), "stop now", none) == ("stop now", None)
    # the held stop stays held through another PostToolUseFailure
    assert carry_stop(StopRule(hold=True), "earlier", none) == (None, "earlier")
    # Copilot CLI: held at preToolUse, dropped once the call has run
    assert carry_stop(StopRule(drop=True), "stop now", none) == (None, None)
    assert carry_stop(StopRule(), "stop now", none) == (None, "stop now")


class _Scripted:
    """A follower whose log is a list of events in memory (no log file)."""

    agent = reader = "scripted"
    session: str | None = "s1"
    log: str | None = None
    missing_ok = True
    signature: tuple[str, ...] = ("scripted-1",)

    def __init__(self, events: list[Event], current: list[Event] | None, phase: Phase,
                 rule: StopRule | None = None, held: str | None = None,
                 reuse: bool = False) -> None:
        self.events, self.current, self.phase = events, current, phase
        self.rule = rule or StopRule()
        self.held = held
        self.reuse = reuse
        self.followed: list[Snapshot | None] = []
        self.restarted = False
        self.settled: list[tuple[Decision, str | None]] = []

    def restore(self, snap: Snapshot | None, kit: Monitors) -> Snapshot | None:
        return snap

    def follow(self, gs: GuardSession, snap: Snapshot | None, kit: Monitors) -> Followed:
        self.followed.append(snap)
        if self.reuse and not self.restarted:
            raise Reused
        monitors = kit.built(self.events, self.restarted, False)
        return Followed(monitors, self.current, 0, 0, b"", [], 0)

    def restart(self) -> None:
        self.restarted = True

    def settle(self, decision: Decision, carried: str | None) -> bool:
        self.settled.append((decision, carried))
        return True

    def state(self) -> bytes:
        return b""


def _repeats(n: int) -> list[Event]:
    out: list[Event] = []
    for i in range(n):
        out += [turn_start(), tool_call("Bash", f"c{i}", {"command": "false"}),
                tool_result(f"c{i}", "Exit code 1", False), turn_end()]
    return out


CONFIG = [MaxRepeatConfig(2, match="name-args")]
POLICY = Policy()


def _judge(f: Any, tmp_path: Path) -> engine.Judged:
    return judge_call(f, CONFIG, policy=POLICY, cache_dir=tmp_path)


def test_pre_call_only_refuses(tmp_path: Path) -> None:
    """Before a call the engine refuses or says nothing: a call judged as if fed that
    would only warn gets no answer, one that exceeds the limit is refused."""
    call = [turn_start(), tool_call("Bash", "new", {"command": "false"}), turn_end()]
    quiet = _judge(_Scripted(_repeats(2), call, "pre"), tmp_path / "a")  # 3rd copy: warns
    assert quiet.decision.action is Action.NONE and quiet.decision.results[0].failed
    refused = _judge(_Scripted(_repeats(3), call, "pre"), tmp_path / "b")  # 4th: refused
    assert refused.decision.action >= Action.BLOCK and refused.decision.message


def test_post_call_feeds_the_current_call_and_decides(tmp_path: Path) -> None:
    call = [turn_start(), tool_call("Bash", "new", {"command": "false"}),
            tool_result("new", "Exit code 1", False), turn_end()]
    judged = _judge(_Scripted(_repeats(2), call, "post"), tmp_path)
    assert judged.decision.action is Action.WARN
    assert judged.decision.results[0].failed


def test_a_subagent_call_is_reported_not_judged(tmp_path: Path) -> None:
    judged = _judge(_Scripted(_repeats(5), None, "none"), tmp_path)
    assert judged.decision.action is Action.NONE and judged.decision.results[0].failed


def test_a_held_stop_is_taken_without_judging(tmp_path: Path) -> None:
    f = _Scripted(_repeats(5), None, "pre", StopRule(take=True), held="stopped earlier")
    judged = _judge(f, tmp_path)
    assert judged.decision == Decision(Action.STOP, "stopped earlier", ())
    assert f.followed == [] and f.held is None and f.settled == []


def test_a_held_stop_is_carried_with_the_next_answer(tmp_path: Path) -> None:
    f = _Scripted(_repeats(1), None, "post", StopRule(carry=True), held="stopped earlier")
    judged = _judge(f, tmp_path)
    assert judged.carried == "stopped earlier" and f.held is None
    assert f.settled == [(judged.decision, "stopped earlier")]


def test_a_reused_call_id_follows_again_from_the_start(tmp_path: Path) -> None:
    """`Reused` from the follower: it is told to restart and followed again with no
    snapshot (from the log's start), once."""
    f = _Scripted(_repeats(1), None, "post", reuse=True)
    _judge(_Scripted(_repeats(1), None, "post"), tmp_path)  # a snapshot to resume from
    _judge(f, tmp_path)
    assert f.restarted and len(f.followed) == 2
    assert f.followed[0] is not None and f.followed[1] is None
