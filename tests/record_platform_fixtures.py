"""Record the fixtures of the platform trace readers with the platforms' own SDKs, offline.

``python tests/record_platform_fixtures.py [mlflow] [langsmith] [phoenix]`` runs the
scripted agents of the scorer tests (tests/scorer_scenarios.py: ``loop`` and ``clean``)
and saves each platform's export of the run, as the platform writes it:

- ``tests/fixtures/mlflow-trace/{loop,clean}.json``: ``mlflow.get_trace(id).to_json()``
  of a trace logged to a local SQLite tracking store (an ``AGENT`` span, an ``LLM`` span
  per model response, ``TOOL`` spans beside it), as tests/scorers/test_scorer_mlflow.py traces;
- ``tests/fixtures/langsmith/{loop,clean}.json``: the ``RunTree`` of a ``@traceable``
  agent run under ``tracing_context(enabled="local")`` (no upload), as ``run.json()``
  writes it (tests/scorers/test_scorer_langsmith.py);
- ``tests/fixtures/openinference/{loop,clean}.jsonl``: the spans a local Phoenix server
  stored for an OpenInference-instrumented agent (tests/scorers/test_scorer_phoenix.py's server),
  read back with ``phoenix.client.Client().spans.get_spans`` and written one per line.

The fixtures are committed; rerun this script only to re-record them.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.scorer_scenarios import SCRIPTS, TOOLS, Turn

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SCENARIOS = ("loop", "clean")


def record_mlflow() -> None:
    import mlflow
    from mlflow.entities import SpanType

    def act(turn: Turn) -> None:
        for name, args in turn:
            try:
                mlflow.trace(TOOLS[name], name=name, span_type=SpanType.TOOL)(**args)
            except Exception:  # the agent reads the error and goes on
                pass

    @mlflow.trace(span_type=SpanType.LLM)
    def model(turn: Turn) -> list[str]:
        return [name for name, _ in turn]

    @mlflow.trace(span_type=SpanType.AGENT)
    def agent(script: list[Turn]) -> str:
        for turn in script:
            model(turn)
            act(turn)
        return "finished"

    work = Path(tempfile.mkdtemp())
    os.chdir(work)  # MLflow puts its artifacts under the working directory
    mlflow.set_tracking_uri(f"sqlite:///{work / 'mlflow.db'}")
    mlflow.set_experiment("maxrepeat-fixtures")
    out = FIXTURES / "mlflow-trace"
    out.mkdir(parents=True, exist_ok=True)
    for scenario in SCENARIOS:
        agent(SCRIPTS[scenario])
        trace_id = mlflow.get_last_active_trace_id()
        mlflow.flush_trace_async_logging()
        trace = mlflow.get_trace(trace_id)
        (out / f"{scenario}.json").write_text(trace.to_json(pretty=True) + "\n")


def _as_run(node: Any) -> Any:
    """A ``RunTree`` as the ``langsmith.schemas.Run`` the service returns for
    ``Client.read_run(id, load_child_runs=True)`` (``RunTree.json()`` leaves the
    children out)."""
    from langsmith import schemas

    return schemas.Run(**node.dict(), child_runs=[_as_run(c) for c in node.child_runs])


def record_langsmith() -> None:
    os.environ.update(LANGSMITH_TRACING="false", LANGSMITH_ENDPOINT="http://127.0.0.1:9")
    import langsmith as ls
    from langsmith import traceable

    tools = {n: traceable(run_type="tool", name=n)(f) for n, f in TOOLS.items()}

    @traceable(run_type="llm", name="model")
    def model(turn: Turn) -> dict[str, Any]:
        return {"tool_calls": [{"name": n, "args": a} for n, a in turn]}

    @traceable(run_type="chain", name="agent")
    def agent(inputs: dict[str, Any]) -> dict[str, Any]:
        for turn in SCRIPTS[inputs["scenario"]]:
            model(turn)
            for name, args in turn:
                try:
                    tools[name](**args)
                except Exception:  # the agent reads the error and goes on
                    pass
        return {"answer": "Done."}

    out = FIXTURES / "langsmith"
    out.mkdir(parents=True, exist_ok=True)
    for scenario in SCENARIOS:
        ended: list[Any] = []
        with ls.tracing_context(enabled="local"):  # kept here: nothing is uploaded
            agent({"scenario": scenario}, langsmith_extra={"on_end": ended.append})
        [run] = ended
        text = _as_run(run).model_dump_json(indent=2)
        (out / f"{scenario}.json").write_text(text + "\n")


def record_phoenix() -> None:
    import subprocess

    from phoenix.client import Client

    from tests.scorers.test_scorer_phoenix import (
        _LAUNCH,
        SERVER_PYTHON,
        STEPS,
        _free_port,
        _run_agent,
        _spans,
        _wait_ready,
    )

    work = Path(tempfile.mkdtemp())
    port, grpc_port = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc_port),
           "PHOENIX_TELEMETRY_ENABLED": "false", "PHOENIX_SQL_DATABASE_URL": "sqlite:///:memory:"}
    with (work / "server.log").open("wb") as log:
        server = subprocess.Popen([str(SERVER_PYTHON), "-c", _LAUNCH], env=env, stdout=log,
                                  stderr=subprocess.STDOUT, cwd=work)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_ready(url, server, work / "server.log")
            client = Client(base_url=url)
            out = FIXTURES / "openinference"
            out.mkdir(parents=True, exist_ok=True)
            for scenario in SCENARIOS:
                steps = STEPS[scenario]
                _run_agent(url, f"maxrepeat-{scenario}", steps)
                count = 1 + len(steps) + sum(len(s) for s in steps)
                spans = _spans(client, f"maxrepeat-{scenario}", count)
                assert len(spans) == count, (scenario, len(spans))
                (out / f"{scenario}.jsonl").write_text(
                    "".join(json.dumps(span) + "\n" for span in spans))
        finally:
            server.terminate()
            server.wait(timeout=30)


def main(argv: list[str]) -> None:
    recorders: dict[str, Any] = {"mlflow": record_mlflow, "langsmith": record_langsmith,
                                  "phoenix": record_phoenix}
    for name in argv or list(recorders):
        recorders[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
