"""One way to do each thing: lint, exceptions and type names each have one definition."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import maxrepeat
from maxrepeat.core import errors
from tests.conftest import EXAMPLES, ROOT

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]
PKG = ROOT / "src" / "maxrepeat"


@pytest.mark.parametrize("name", ["graders.yaml", "eval.yaml", "claude-code.yaml"])
def test_api_and_cli_lint_agree(name: str) -> None:
    """`maxrepeat.lint()` and `maxrepeat lint` report the same problems (eval specs too)."""
    path = EXAMPLES / name
    if not path.exists():
        pytest.skip(f"{name} is not among the examples")
    api = [str(p) for p in maxrepeat.lint(path)]
    run = subprocess.run([*CLI, "lint", str(path)], capture_output=True, text=True, check=False)
    assert run.stdout.splitlines() == api
    assert run.returncode == (1 if api else 0)


def test_api_and_cli_lint_agree_on_a_broken_eval_spec(tmp_path: Path) -> None:
    """A problem inside an eval spec's max-repeat entry: the same line from both."""
    spec = tmp_path / "eval.yaml"
    spec.write_text("stimuli:\n  - name: a\n    graders:\n      - type: max-repeat\n"
                    "        config: {max: 0}\n")
    api = [str(p) for p in maxrepeat.lint(spec)]
    run = subprocess.run([*CLI, "lint", str(spec)], capture_output=True, text=True, check=False)
    assert api == run.stdout.splitlines() == [
        f"{spec}:5:23: stimuli[0].graders[0].config.max must be an integer >= 1 (got 0)"]


def _exception_classes() -> list[tuple[str, str]]:
    """(module file, class name) of every class the package defines that derives from an
    exception (directly, or from one of its own)."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")
                         for b in node.bases}
                if any(b.endswith(("Error", "Exception", "Stopped")) for b in bases):
                    found.append((str(path.relative_to(PKG)), node.name))
    return found


def test_every_exception_is_defined_in_core_errors() -> None:
    """Exceptions live in core/errors.py, in the tree its docstring draws; elsewhere only
    a framework's own stop error (deriving from `LoopStopped`) and private control flow."""
    doc = errors.__doc__ or ""
    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type):
            assert issubclass(value, errors.MaxRepeatError), name
            assert name in doc, f"{name} is not drawn in the tree"
    for module, cls in _exception_classes():
        if module == "core/errors.py":
            continue
        assert cls.startswith("_") or module.startswith("guards/"), f"{module}: {cls}"


def test_one_name_for_a_wrong_type() -> None:
    """The same fault reads the same wherever it is found: ``got a number``, not ``got int``."""
    [row] = maxrepeat.grade_record(3, {"max": 1})
    assert row["evidence"].endswith("(got a number)")
    bad = maxrepeat.Trajectory([maxrepeat.Event("tool_call", maxrepeat.EventData(tool_name=3))])
    result = maxrepeat.grade(bad, maxrepeat.MaxRepeatConfig(1))
    assert "toolName must be a string (got a number)" in result.evidence
    monitor = maxrepeat.Monitor(maxrepeat.MaxRepeatConfig(1))
    for event in bad.events:
        monitor.feed(event)
    assert monitor.result().evidence == result.evidence


def test_steps_hand_out_plain_values() -> None:
    """`maxrepeat.steps()` on a trajectory read from a file gives plain values, never the
    reader's undecoded ``msgspec.Raw`` slices."""
    import msgspec

    [trajectory] = maxrepeat.read_trajectories(EXAMPLES / "loop.json")
    found = maxrepeat.steps(trajectory, maxrepeat.MaxRepeatConfig(2))
    values = [v for s in found for c in s.calls for v in (c.arguments, c.observation)]
    assert values and not any(isinstance(v, msgspec.Raw) for v in values)
    assert found[0].calls[0].arguments == {"path": "src/parse.py"}


def test_results_encode_decode_and_give_their_schema_from_one_definition() -> None:
    """A result's JSON, its decoding and its JSON Schema all come from the struct itself,
    and `to_dict()` is exactly the encoded JSON."""
    import json

    import msgspec

    [trajectory] = maxrepeat.read_trajectories(EXAMPLES / "loop.json")
    result = maxrepeat.grade(trajectory, maxrepeat.MaxRepeatConfig(2, max_cycle_period=2))
    assert result.metadata.runs
    text = msgspec.json.encode(result)
    assert json.loads(text) == result.to_dict()
    assert msgspec.json.decode(text, type=maxrepeat.GraderResult) == result
    schema = msgspec.json.schema(maxrepeat.GraderResult)
    defs = schema["$defs"]
    assert list(defs["GraderResult"]["properties"]) == list(result.to_dict())
    assert list(defs["ResultMetadata"]["properties"]) == list(result.metadata.to_dict())
