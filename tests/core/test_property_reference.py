"""grade() agrees with the brute-force reference of spec §3–4 on random trajectories."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings

import maxrepeat
from tests.reference import reference
from tests.strategies import configs, trajectories

FIELDS = ("occurrences", "period", "start_step", "end_step", "start_event", "end_event",
          "watched_steps", "watched_calls", "empty_steps")


def _meta(result: maxrepeat.GraderResult) -> dict[str, Any]:
    return {f: getattr(result.metadata, f) for f in FIELDS}


#: MAXREPEAT_EXAMPLES=20000 runs a longer campaign (checked to 8,000 during development)
@settings(max_examples=int(os.environ.get("MAXREPEAT_EXAMPLES", "1500")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(trajectories, configs())
def test_grade_matches_reference(trajectory: dict[str, Any], config: dict[str, Any]) -> None:
    """Figure, period, location and counts equal the brute-force reference."""
    got = maxrepeat.grade(trajectory, maxrepeat.MaxRepeatConfig.from_mapping(config))
    ref = reference(trajectory, config)
    assert got.status == "ok"
    assert _meta(got) == {f: getattr(ref, f) for f in FIELDS}
    assert got.passed == (ref.occurrences <= config["max"])
    assert got.score == (1.0 if got.passed else 0.0)


@settings(max_examples=200, deadline=None)
@given(trajectories, configs())
def test_grade_is_deterministic_through_json(trajectory: dict[str, Any],
                                            config: dict[str, Any]) -> None:
    """Grading the dict and the same trajectory read from JSON bytes gives the same result."""
    import json

    from maxrepeat.readers import Source, read_source

    cfg = maxrepeat.MaxRepeatConfig.from_mapping(config)
    direct = maxrepeat.grade(trajectory, cfg).to_dict()
    [read] = list(read_source(Source.from_bytes(json.dumps(trajectory).encode(), "t.json")))
    assert isinstance(read, maxrepeat.Trajectory)
    from_file = maxrepeat.grade(read, cfg).to_dict()
    # only where the run was read from differs (metadata.source names the file)
    assert from_file["metadata"].pop("source") == "t.json"
    direct["metadata"].pop("source")
    assert from_file == direct
