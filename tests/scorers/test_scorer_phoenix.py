"""The Phoenix scorer against a real Phoenix server: a scripted agent instrumented with
OpenInference (``arize-phoenix-otel``) sends its spans to a Phoenix server this module
starts (on 127.0.0.1, free ports, a temporary working directory), the spans are read back
from the server, graded, the scores logged back as span annotations and read back again.
Each verdict must equal ``maxrepeat.grade`` of the scripted run's events.

The server is the ``arize-phoenix`` package installed by scripts/test.sh into its own
environment, ``.phoenix-server/``: installed beside the client packages of the ``phoenix``
extra, its ``phoenix/__init__.py`` would import the whole server (~20 s of CPU, and a
deprecation warning from its LDAP dependency) into every ``import phoenix.otel``.
``MAXREPEAT_PHOENIX_SERVER`` names another Python holding it. Phoenix binds
its OTLP gRPC receiver to every interface: the launcher below binds it to 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade, tool_call, tool_result, turn_end, turn_start
from maxrepeat.core.config import unique_names
from maxrepeat.core.events import Trajectory
from maxrepeat.scorers.phoenix import annotate_traces, max_repeat, traces_of, turns_from_spans
from tests.conftest import ROOT, corpus_expected
from tests.guard_scenarios import NAME_ARGS, OBSERVATION, PARALLEL, SCRIPTS, tool_output

pytest.importorskip("phoenix.otel")
pytest.importorskip("phoenix.client")
pytest.importorskip("phoenix.evals")

SERVER_PYTHON = Path(os.environ.get("MAXREPEAT_PHOENIX_SERVER",
                                    ROOT / ".phoenix-server" / "bin" / "python"))
CONFIGS = [NAME_ARGS, OBSERVATION]
#: scenario -> model responses, each a list of (tool, arguments)
STEPS: dict[str, list[list[tuple[str, dict[str, Any]]]]] = {
    "loop": [[c] for c in SCRIPTS["loop"]],
    "cycle": [[c] for c in SCRIPTS["cycle"]],
    "clean": [[c] for c in SCRIPTS["clean"]],
    "parallel": PARALLEL,
}
# The launcher: Phoenix's own `phoenix serve`, its gRPC port bound to the loopback address.
_LAUNCH = """
import runpy, sys
import grpc.aio
_make = grpc.aio.server
def server(*args, **kwargs):
    made = _make(*args, **kwargs)
    add = made.add_insecure_port
    made.add_insecure_port = lambda address: add(address.replace("[::]", "127.0.0.1"))
    return made
grpc.aio.server = server
sys.argv = ["phoenix", "serve"]
runpy.run_module("phoenix.server.main", run_name="__main__")
"""

pytestmark = [
    # OpenTelemetry's SDK and Phoenix's client warn about their own deprecations
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def phoenix_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not SERVER_PYTHON.exists():
        message = f"no Phoenix server at {SERVER_PYTHON} (bash scripts/test.sh installs it)"
        if corpus_expected():
            pytest.fail(message)
        pytest.skip(message)
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc_port = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc_port),
           "PHOENIX_TELEMETRY_ENABLED": "false", "PHOENIX_LOG_MIGRATIONS": "false",
           # in memory: the tables are created at once instead of migrated, seconds sooner
           "PHOENIX_SQL_DATABASE_URL": "sqlite:///:memory:"}
    log = (work / "server.log").open("wb")
    server = subprocess.Popen([str(SERVER_PYTHON), "-c", _LAUNCH], env=env, stdout=log,
                              stderr=subprocess.STDOUT, cwd=work)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, server, work / "server.log")
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _wait_ready(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    import httpx

    # the server imports for ~20 s of CPU: minutes on a machine busy with other tests
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"Phoenix exited {server.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"Phoenix did not start in 600 s: {log.read_text()[-2000:]}")


def _run_agent(url: str, project: str, steps: list[list[tuple[str, dict[str, Any]]]],
               evaluator_trace: bool = False) -> None:
    """A scripted agent traced with OpenInference: an AGENT span, one LLM span per model
    response, then one TOOL span per call (children of the agent span, as the agent SDK
    instrumentations record them)."""
    from phoenix.otel import register

    provider = register(project_name=project, endpoint=f"{url}/v1/traces",
                        protocol="http/protobuf", batch=False,
                        set_global_tracer_provider=False, verbose=False)
    tracer = provider.get_tracer(__name__)

    @tracer.tool(name="run_tests")
    def run_tests(path: str) -> str:
        return tool_output("run_tests", {"path": path})

    @tracer.tool(name="edit")
    def edit(path: str, text: str) -> str:
        return tool_output("edit", {"path": path})

    tools = {"run_tests": run_tests, "edit": edit}
    with tracer.start_as_current_span("agent", openinference_span_kind="agent") as agent:
        agent.set_input("Make the tests pass.")
        for step in steps:
            with tracer.start_as_current_span("model", openinference_span_kind="llm") as llm:
                llm.set_output(json.dumps([{"name": n, "arguments": a} for n, a in step]))
            for name, arguments in step:
                tools[name](**arguments)
        agent.set_output("Done.")
    if evaluator_trace:  # an evaluator's own trace, as phoenix.evals records one: not graded
        with tracer.start_as_current_span("judge", openinference_span_kind="evaluator"):
            run_tests("tests/")
    provider.shutdown()


def _expected(steps: list[list[tuple[str, dict[str, Any]]]]) -> Trajectory:
    """The scripted run as maxrepeat events, written out independently of the scorer."""
    events = []
    for t, step in enumerate(steps):
        ids = [f"{t}.{i}" for i in range(len(step))]
        pairs = list(zip(step, ids, strict=True))
        events += [turn_start(), *(tool_call(n, i, a) for (n, a), i in pairs),
                   *(tool_result(i, tool_output(n, a)) for (n, a), i in pairs), turn_end()]
    return Trajectory(events=events)


def _spans(client: Any, project: str, count: int) -> list[Any]:
    """The project's spans once the server has stored all ``count`` of them."""
    deadline = time.monotonic() + 60
    while True:
        try:
            spans: list[Any] = client.spans.get_spans(project_identifier=project, limit=1000)
        except Exception:  # the project appears with its first span
            spans = []
        if len(spans) >= count or time.monotonic() > deadline:
            return spans
        time.sleep(0.3)


@pytest.fixture(scope="module")
def runs(phoenix_url: str) -> dict[str, tuple[str, list[Any]]]:
    """Each scenario run by the scripted agent into its own project, read back."""
    from phoenix.client import Client

    client = Client(base_url=phoenix_url)
    read: dict[str, tuple[str, list[Any]]] = {}
    for scenario, steps in STEPS.items():
        project = f"maxrepeat-{scenario}"
        _run_agent(phoenix_url, project, steps, evaluator_trace=scenario == "clean")
        count = 1 + len(steps) + sum(len(s) for s in steps) + 2 * (scenario == "clean")
        spans = _spans(client, project, count)
        assert len(spans) == count, (scenario, len(spans))
        read[scenario] = (project, spans)
    return read


#: the tests against the server are `slow` (the full suite and CI): its start costs ~25 CPU-s
#: on one worker. The fast subset keeps the mapping: tests/readers/test_reader_openinference.py
#: grades spans this server stored for this scripted agent (recorded) and checks that Phoenix's
#: evaluator (`max_repeat`) gives the same verdict; the tool-in-a-tool test below
_SERVER = pytest.mark.slow


@_SERVER
@pytest.mark.parametrize("scenario", list(STEPS))
def test_phoenix_annotation_equals_grade(scenario: str, phoenix_url: str,
                                         runs: dict[str, tuple[str, list[Any]]]) -> None:
    from phoenix.client import Client

    client = Client(base_url=phoenix_url)
    project, spans = runs[scenario]
    expected = [grade(_expected(STEPS[scenario]), c, name=n)
                for c, n in zip(CONFIGS, unique_names(CONFIGS), strict=True)]
    # the calls as Phoenix stored them: every call, in order, one turn per model response
    traces = traces_of(spans)
    assert len(traces) == 1 + (scenario == "clean")
    [(trace_id, trace)] = [(t, members) for t, members in traces.items()
                           if any(m["span_kind"] == "AGENT" for m in members)]
    assert [[(c.name, c.arguments, c.result) for c in turn] for turn in
            turns_from_spans(trace)] == [[(n, a, tool_output(n, a)) for n, a in step]
                                          for step in STEPS[scenario]]
    verdicts = annotate_traces(client, project, CONFIGS)
    assert list(verdicts) == [trace_id]  # the evaluator's trace is not graded
    [found] = verdicts.values()
    assert [r.to_dict() for r in found.results] == [r.to_dict() for r in expected]
    assert found.passed == all(r.passed for r in expected)
    assert found.passed == (scenario == "clean")
    # the annotation, read back from the server, on the trace's root (the agent span)
    [root] = [s for s in trace if not s.get("parent_id")]
    annotations = _annotations(client, project, root["context"]["span_id"])
    [annotation] = annotations
    assert annotation["name"] == "max_repeat"
    assert annotation["annotator_kind"] == "CODE"
    assert annotation["result"] == {"label": "pass" if found.passed else "fail",
                                    "score": found.score, "explanation": found.evidence}
    assert annotation["metadata"]["occurrences"] == max(r.occurrences for r in expected)
    # Phoenix's own evaluator interface gives the same score
    [score] = max_repeat(CONFIGS).evaluate({"spans": trace})
    assert (score.score, score.label, score.explanation) == (
        found.score, annotation["result"]["label"], found.evidence)


def _annotations(client: Any, project: str, span_id: str) -> list[Any]:
    deadline = time.monotonic() + 30
    while True:
        found: list[Any] = client.spans.get_span_annotations(
            span_ids=[span_id], project_identifier=project)
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.3)


def test_a_tool_inside_a_tool_is_not_a_call_of_the_model() -> None:
    def span(sid: str, kind: str, start: int, parent: str, **attributes: Any) -> Any:
        return {"context": {"span_id": sid, "trace_id": "t"}, "parent_id": parent,
                "status_code": "OK", "start_time": f"2026-01-01T00:00:{start:02d}+00:00",
                "attributes": {"openinference.span.kind": kind, **attributes}}

    spans = [span("a", "AGENT", 0, ""), span("m", "LLM", 1, "a"),
             span("t", "TOOL", 2, "a", **{"tool.name": "outer"}),
             span("u", "TOOL", 3, "t", **{"tool.name": "inner"}),
             span("e", "TOOL", 4, "a", **{"tool.name": "fails"})]
    spans[-1].update(status_code="ERROR", status_message="boom")
    turns = turns_from_spans(spans)
    assert [[(c.name, c.error) for c in turn] for turn in turns] == [
        [("outer", None), ("fails", "boom")]]


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from maxrepeat import MissingExtraError

    monkeypatch.setitem(sys.modules, "phoenix.evals", None)
    with pytest.raises(MissingExtraError, match=r"maxrepeat\[phoenix\]"):
        max_repeat(MaxRepeatConfig(max=2))


@_SERVER
def test_the_page_blocks_run_as_written(phoenix_url: str, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """docs/integrations/phoenix.md's two blocks, verbatim, against this server (found from
    ``PHOENIX_COLLECTOR_ENDPOINT``), over the looping agent's trace in ``my-agent``: each
    prints what the page shows below it."""
    import re

    from phoenix.client import Client

    _run_agent(phoenix_url, "my-agent", STEPS["loop"])
    assert len(_spans(Client(base_url=phoenix_url), "my-agent", 19)) == 19
    monkeypatch.setenv("PHOENIX_COLLECTOR_ENDPOINT", phoenix_url)
    text = (ROOT / "docs" / "integrations" / "phoenix.md").read_text(encoding="utf-8")
    blocks = re.findall(r'^```py title="([^"]+)"\n(.*?)^```\n\n```text\n(.*?)^```', text,
                        re.MULTILINE | re.DOTALL)
    assert [name for name, _, _ in blocks] == ["score_traces.py", "evaluator.py",
                                                "dataframe.py"]
    for name, code, shown in blocks:
        exec(compile(code, f"phoenix.md:{name}", "exec"), {"__name__": "__docs__"})
        assert capsys.readouterr().out == shown, name
    # both blocks that log left their annotation on the agent span, read back
    client = Client(base_url=phoenix_url)
    spans = _spans(client, "my-agent", 19)
    [root] = [s for s in spans if not s.get("parent_id")]
    deadline = time.monotonic() + 30
    while True:
        found = {a["name"]: a for a in client.spans.get_span_annotations(
            span_ids=[root["context"]["span_id"]], project_identifier="my-agent")}
        if {"max_repeat", "loops"} <= set(found) or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert found["loops"]["result"]["label"] == found["max_repeat"]["result"]["label"] == "fail"
    assert found["loops"]["result"]["explanation"] == found["max_repeat"]["result"][
        "explanation"]
