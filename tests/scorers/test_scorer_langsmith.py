"""The LangSmith evaluator in LangSmith's own ``evaluate``, offline: a scripted agent
traced with ``@traceable`` (an ``llm`` run per model response, a ``tool`` run per call) is
the target, ``evaluate(..., upload_results=False)`` builds the run trees and hands them to
the evaluator, and each result must equal ``maxrepeat.grade`` of the scripted run's events.

There is no local LangSmith server. The SDK's client is pointed at a recorder this module
starts on 127.0.0.1, which answers every request with 404 and keeps it: the test asserts
that nothing was uploaded (no run, no feedback, no experiment), so the run trees graded
are the ones the SDK built in this process."""

from __future__ import annotations

import sys
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade, tool_call, tool_result, turn_end, turn_start
from maxrepeat.core.config import unique_names
from maxrepeat.core.events import Trajectory
from maxrepeat.scorers.langsmith import max_repeat, turns_from_run
from tests.guard_scenarios import NAME_ARGS, OBSERVATION, PARALLEL, SCRIPTS, tool_output
from tests.scorer_scenarios import scripted_langchain_agent

pytest.importorskip("langsmith")

CONFIGS = [NAME_ARGS, OBSERVATION]
STEPS: dict[str, list[list[tuple[str, dict[str, Any]]]]] = {
    "loop": [[c] for c in SCRIPTS["loop"]],
    "cycle": [[c] for c in SCRIPTS["cycle"]],
    "clean": [[c] for c in SCRIPTS["clean"]],
    "parallel": PARALLEL,
}

pytestmark = [
    # upload_results=False is marked beta by the SDK
    pytest.mark.filterwarnings("ignore:.upload_runs. parameter is in beta"),
]


class _Recorder(BaseHTTPRequestHandler):
    seen: list[tuple[str, str]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        type(self).seen.append((self.command, self.path))
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"detail": "not found"}')

    do_GET = do_POST = do_PATCH = do_PUT = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    _Recorder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGSMITH_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANGSMITH_ENDPOINT", url)
    try:
        yield url, _Recorder.seen
    finally:
        server.shutdown()
        server.server_close()


def _agent() -> Any:
    """The scripted agent: one ``llm`` run per model response, then a ``tool`` run per
    call, all under the agent's own run (the target)."""
    from langsmith import traceable

    @traceable(run_type="tool", name="run_tests")
    def run_tests(path: str) -> str:
        return tool_output("run_tests", {"path": path})

    @traceable(run_type="tool", name="edit")
    def edit(path: str, text: str) -> str:
        return tool_output("edit", {"path": path})

    @traceable(run_type="llm", name="model")
    def model(step: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        return {"tool_calls": [{"name": n, "args": a} for n, a in step]}

    tools = {"run_tests": run_tests, "edit": edit}

    def agent(inputs: dict[str, Any]) -> dict[str, Any]:
        for step in STEPS[inputs["scenario"]]:
            model(step)
            for name, arguments in step:
                tools[name](**arguments)
        return {"answer": "Done."}

    return agent


def _expected(steps: list[list[tuple[str, dict[str, Any]]]]) -> Trajectory:
    """The scripted run as maxrepeat events, written out independently of the scorer."""
    events = []
    for t, step in enumerate(steps):
        ids = [f"{t}.{i}" for i in range(len(step))]
        pairs = list(zip(step, ids, strict=True))
        events += [turn_start(), *(tool_call(n, i, a) for (n, a), i in pairs),
                   *(tool_result(i, tool_output(n, a)) for (n, a), i in pairs), turn_end()]
    return Trajectory(events=events)


def test_langsmith_evaluate_results_equal_grade(
        recorder: tuple[str, list[tuple[str, str]]]) -> None:
    from langsmith import Client, evaluate
    from langsmith.schemas import Example

    url, seen = recorder
    now = datetime.now(UTC)
    dataset = uuid.uuid4()
    examples = [Example(id=uuid.uuid4(), dataset_id=dataset, created_at=now,
                        inputs={"scenario": s}, outputs={}) for s in STEPS]
    graded: list[Any] = []
    evaluator = max_repeat(CONFIGS)

    def keep(run: Any, example: Any) -> Any:
        graded.append(run)
        return evaluator(run, example)

    results = list(evaluate(_agent(), data=examples, evaluators=[keep],
                            upload_results=False, max_concurrency=0,
                            client=Client(api_url=url, api_key="unused")))
    assert len(results) == len(STEPS)
    for row in results:
        scenario = row["example"].inputs["scenario"]
        [result] = row["evaluation_results"]["results"]
        expected = [grade(_expected(STEPS[scenario]), c, name=n)
                    for c, n in zip(CONFIGS, unique_names(CONFIGS), strict=True)]
        passed = all(r.passed for r in expected)
        assert passed == (scenario == "clean")
        assert result.key == "max_repeat"
        assert result.score == (1.0 if passed else 0.0)
        assert result.comment == "\n".join(f"{r.name}: {r.evidence}" for r in expected)
        assert result.metadata["results"] == [
            {"name": r.name, "status": r.status, "passed": r.passed, **r.metadata.to_dict()}
            for r in expected]
        assert result.metadata["occurrences"] == max(r.occurrences for r in expected)
        [run] = [r for r in graded if r.id == row["run"].id]
        assert [[(c.name, c.arguments, c.result) for c in turn] for turn in
                turns_from_run(run)] == [[(n, a, tool_output(n, a)) for n, a in step]
                                         for step in STEPS[scenario]]
    # nothing left this process: no run, feedback, dataset or experiment was sent
    assert [r for r in seen if r[0] != "GET"] == []


def test_a_run_tree_traced_locally_is_graded_as_grade_does(
        recorder: tuple[str, list[tuple[str, str]]]) -> None:
    """The run tree of a ``@traceable`` agent run under ``tracing_context(enabled=
    "local")`` (no upload), taken when the run ends."""
    import langsmith as ls
    from langsmith import traceable

    _, seen = recorder
    ended: list[Any] = []
    agent = traceable(run_type="chain", name="agent")(_agent())
    with ls.tracing_context(enabled="local"):
        agent({"scenario": "cycle"}, langsmith_extra={"on_end": ended.append})
    [run] = ended
    config = MaxRepeatConfig(max=3, max_cycle_period=2, match="name-args")
    result = max_repeat(config, key="loops")(run)
    expected = grade(_expected(STEPS["cycle"]), config)
    assert (result.key, result.score, result.comment) == ("loops", 0.0, expected.evidence)
    assert [r for r in seen if r[0] != "GET"] == []


def test_errors_and_nested_tools() -> None:
    run = {"id": "a", "run_type": "chain", "child_runs": [
        {"id": "m", "run_type": "llm", "start_time": "2026-01-01T00:00:01+00:00"},
        {"id": "t", "name": "outer", "run_type": "tool", "inputs": {"q": 1},
         "start_time": "2026-01-01T00:00:02+00:00", "child_runs": [
             {"id": "u", "name": "inner", "run_type": "tool",
              "start_time": "2026-01-01T00:00:03+00:00"}]},
        {"id": "e", "name": "fails", "run_type": "tool", "error": "boom",
         "start_time": "2026-01-01T00:00:04+00:00"}]}
    assert [[(c.name, c.error) for c in turn] for turn in turns_from_run(run)] == [
        [("outer", None), ("fails", "boom")]]


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from maxrepeat import MissingExtraError

    monkeypatch.setitem(sys.modules, "langsmith.evaluation", None)
    with pytest.raises(MissingExtraError, match=r"maxrepeat\[langsmith\]"):
        max_repeat(MaxRepeatConfig(max=2))


def test_the_offline_block_of_the_page_runs_as_written(
        recorder: tuple[str, list[tuple[str, str]]], capsys: pytest.CaptureFixture[str]) -> None:
    """docs/integrations/langsmith.md's ``offline.py``, verbatim, prints the lines the page
    shows below it, and sends nothing."""
    import re

    from tests.conftest import ROOT

    _, seen = recorder
    text = (ROOT / "docs" / "integrations" / "langsmith.md").read_text(encoding="utf-8")
    block = re.search(r'^```py title="offline.py"\n(.*?)^```\n\n```text\n(.*?)^```', text,
                      re.MULTILINE | re.DOTALL)
    assert block is not None
    exec(compile(block.group(1), "langsmith.md:offline.py", "exec"), {"__name__": "__docs__"})
    printed = capsys.readouterr().out.splitlines()
    shown = block.group(2).splitlines()
    assert len(printed) == len(shown)
    for line, want in zip(printed, shown, strict=False):  # "..." ends a line whose rest varies
        assert line.startswith(want[:-3]) if want.endswith("...") else line == want
    assert [r for r in seen if r[0] != "GET"] == []


def _start_in_reverse(run: Any) -> None:
    """Restart the tool runs of each model response (calls ``c{i}_{j}``) in the opposite
    order of ``j``, inside the span of time the turn's tool runs took."""
    tools: list[Any] = []
    stack = [run]
    while stack:
        node = stack.pop()
        stack += node.child_runs or []
        tools += [node] if node.run_type == "tool" else []
    turns: dict[str, list[tuple[int, Any]]] = {}
    for node in tools:
        turn, _, j = node.outputs["output"].tool_call_id.partition("_")
        turns.setdefault(turn, []).append((int(j), node))
    for members in turns.values():
        first = min(node.start_time for _, node in members)
        for j, node in members:
            node.start_time = first + timedelta(microseconds=len(members) - j)


def test_a_langchain_agent_run_tree_is_graded_as_grade_does(
        recorder: tuple[str, list[tuple[str, str]]]) -> None:
    """A real LangChain v1 agent (``create_agent``, a LangGraph graph) as the target, with
    LangChain's fake chat model scripted to make two calls per response: LangGraph runs
    each call in a ``tools`` node of its own and records the result as a ``ToolMessage``;
    the verdict still has one turn per model response and the tools' texts as results.
    LangGraph runs a response's calls in threads, so which tool run starts first is up to
    the scheduler: the evaluator gets the real run tree with each turn's tool runs
    restarted in the opposite order of the model's ``tool_calls`` (what a loaded machine
    may record), and the evidence must still list them in the model's order.
    (LangChain's own tracer posts its runs even with ``upload_results=False``: here they
    reach the recorder on 127.0.0.1, nothing else.)"""
    pytest.importorskip("langchain")
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool
    from langsmith import Client, evaluate
    from langsmith.schemas import Example

    @tool
    def run_tests(path: str) -> str:
        """Run the tests under path."""
        return tool_output("run_tests", {"path": path})

    @tool
    def edit(path: str, text: str) -> str:
        """Write text to the file at path."""
        return tool_output("edit", {"path": path})

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        agent = scripted_langchain_agent(
            [[{"id": f"c{i}_{j}", "name": n, "args": a} for j, (n, a) in enumerate(step)]
             for i, step in enumerate(PARALLEL)], [run_tests, edit])
        out = agent.invoke({"messages": [HumanMessage("Make the tests pass.")]})
        return {"answer": out["messages"][-1].content}

    grader = max_repeat(CONFIGS)

    def evaluator(run: Any, example: Any) -> Any:
        _start_in_reverse(run)
        return grader(run, example)

    url, _ = recorder
    example = Example(id=uuid.uuid4(), dataset_id=uuid.uuid4(),
                      created_at=datetime.now(UTC), inputs={"task": "x"}, outputs={})
    [row] = evaluate(target, data=[example], evaluators=[evaluator],
                     upload_results=False, max_concurrency=0,
                     client=Client(api_url=url, api_key="unused"))
    [result] = row["evaluation_results"]["results"]
    expected = [grade(_expected(PARALLEL), c, name=n)
                for c, n in zip(CONFIGS, unique_names(CONFIGS), strict=True)]
    assert result.score == 0.0
    assert result.comment == "\n".join(f"{r.name}: {r.evidence}" for r in expected)
