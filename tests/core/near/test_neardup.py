"""Near-duplicate matching (issue 14): the keys, the normalizers, similarity, and the
Monitor equal to grade() at every prefix with every key."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxrepeat import MaxRepeatConfig, Monitor, grade
from maxrepeat.core.errors import ConfigError
from maxrepeat.core.near.config import near_from
from maxrepeat.core.near.matching import Clusters, Transform, expand_normalizers, similarity
from tests.conftest import call, result, turn

LONG = ("============================= test session starts ==============================\n"
        "collected 12 items\n\ntests/test_io.py ..F.........\n\n"
        "FAILED tests/test_io.py::test_read - AssertionError: expected b'abc' got b'abd'\n")
VOLATILE_OUTPUTS = [
    "1 failed in 0.53s", "1 failed in 0.61s", "1 failed in 1.2s",
    "\x1b[31m1 failed\x1b[0m in 3ms  \n",
    "done at 2024-05-01T10:00:01Z", "done at 2024-05-01T10:00:09Z",
    "worker pid 4121 listening on 127.0.0.1:8123", "worker pid 5000 listening on 127.0.0.1:9000",
    "wrote /tmp/tmpa1b2c3/out.txt", "wrote /tmp/tmpzz9x8y/out.txt",
    "id 123e4567-e89b-12d3-a456-426614174000", "id 00000000-e89b-12d3-a456-426614174000",
    "object at 0x7f3a2b1c", "object at 0x7f3a2b99", "attempt 1", "attempt 2", "",
    # Codex CLI <= 0.4x: the output a JSON string with the command's duration in it
    '{"output":"FAIL\\n","metadata":{"exit_code":1,"duration_seconds":0.5}}',
    '{"output":"FAIL\\tp\\t0.205s\\n","metadata":{"exit_code":1,"duration_seconds":1.25}}',
    '{"output":"FAIL\\n","metadata":{"exit_code":2,"duration_seconds":0.5}}',
    "{'took': 12, 'timeout_ms': 10000}", "{'took': 7, 'timeout_ms': 10000}",
    LONG, LONG.replace("abd", "abe"), LONG.replace("12 items", "13 items"), LONG * 2,
]
ARGS: list[Any] = [
    {"command": "pytest -q", "description": "Run tests"},
    {"command": "pytest -q", "description": "Re-run the tests"},
    {"command": "sleep 1; date", "timeout": 30},
    {"command": "cat /tmp/tmpq1w2e3/log"}, {"command": "cat /tmp/tmpzzzzz9/log"},
    {"command": "echo marker1"}, {"command": "echo marker2"},
    {"code": LONG}, {"code": LONG.replace("abd", "abz")}, None, "text",
]

near_configs = st.builds(
    lambda max_, period, match, ignore, normalize, replace, sim, with_obs: MaxRepeatConfig(
        max_, period, match,
        ignore_arguments=ignore if match == "name-args" else None,
        normalize=normalize, replace=replace, similarity=sim,
        similarity_min_length=40 if sim is not None else None,
        with_observation=with_obs if match == "name-args" else None),
    st.integers(1, 3), st.integers(1, 4), st.sampled_from(["observation", "name-args"]),
    st.sampled_from([None, ["description"], {"^bash$": ["description", "timeout"]}]),
    st.sampled_from([None, ["volatile"], ["volatile", "numbers"], ["durations", "ansi"]]),
    st.sampled_from([None, [{"pattern": r"marker\d+", "with": "marker"}]]),
    st.sampled_from([None, None, 0.6, 0.9]),
    st.sampled_from([None, None, True, False]),
)


@st.composite
def volatile_streams(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Turns and bare calls whose arguments and results vary in volatile ways, with
    repeated blocks, parallel calls, late, early and missing results."""
    events: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    blocks: list[list[tuple[str, Any, Any, str]]] = []
    for _ in range(draw(st.integers(1, 6))):
        blocks.append([(draw(st.sampled_from(["bash", "read"])), draw(st.sampled_from(ARGS)),
                        draw(st.sampled_from(VOLATILE_OUTPUTS)),
                        draw(st.sampled_from(["after"] * 6 + ["late", "before", "missing"])))
                       for _ in range(draw(st.integers(1, 2)))])
    plan = blocks * draw(st.integers(1, 3))
    for n, block in enumerate(plan):
        body: list[dict[str, Any]] = []
        for c, (tool, args, out, where) in enumerate(block):
            # A repeated block gets other volatile values the second time round.
            if n >= len(blocks) and draw(st.booleans()):
                out = draw(st.sampled_from(VOLATILE_OUTPUTS))
            cid = f"c{n}-{c}"
            ev, res = call(tool, cid, args), result(cid, out)
            body += {"after": [ev, res], "before": [res, ev], "late": [ev],
                     "missing": [ev]}[where]
            if where == "late":
                late.append(res)
        events += turn(*body) if len(block) > 1 or draw(st.booleans()) else body
        if late and draw(st.booleans()):
            events.append(late.pop(0))
    return events + late


@settings(max_examples=int(os.environ.get("MAXREPEAT_NEAR_EXAMPLES", "250")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(events=volatile_streams(), config=near_configs)
def test_monitor_equals_grade_at_every_prefix(events: list[dict[str, Any]],
                                              config: MaxRepeatConfig) -> None:
    """With every near-duplicate key, feed() is grade() of the prefix after every event,
    and a state saved mid-way continues exactly."""
    monitor = Monitor(config)
    for k, event in enumerate(events, 1):
        assert monitor.feed(event).to_dict() == grade({"events": events[:k]}, config).to_dict(), k
    cut = len(events) // 2
    first = Monitor(config)
    first.feed_all(events[:cut])
    second = Monitor.from_bytes(first.to_bytes(), config)
    assert second.feed_all(events[cut:]).to_dict() == grade({"events": events}, config).to_dict()


def _loop(outputs: list[str], args: list[Any] | None = None) -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    for i, out in enumerate(outputs):
        a = args[i] if args else {"command": "pytest -q"}
        events += turn(call("bash", f"c{i}", a), result(f"c{i}", out))
    return {"events": events}


def test_volatile_loop_found_only_with_normalize() -> None:
    """The same pytest run whose duration changes: exact matching sees no loop."""
    t = _loop(["1 failed in 0.53s", "1 failed in 0.61s", "1 failed in 0.58s", "1 failed in 1.02s"])
    assert grade(t, MaxRepeatConfig(3)).passed
    got = grade(t, MaxRepeatConfig(3, normalize=["volatile"]))
    assert not got.passed and got.metadata.occurrences == 4
    # The preview still shows what the agent saw.
    assert "0.53s" in got.metadata.pattern[0]


def test_reworded_description_ignored_per_tool() -> None:
    """Claude Code's Bash description reworded each time: ignored for Bash only."""
    args = [{"command": "npm test", "description": d}
            for d in ["Run tests", "Re-run the tests", "Run the test suite again"]]
    t = _loop(["x", "y", "z"], args)
    assert grade(t, MaxRepeatConfig(2, match="name-args")).passed
    cfg = MaxRepeatConfig(2, match="name-args", ignore_arguments={"^bash$": ["description"]})
    assert not grade(t, cfg).passed
    other = MaxRepeatConfig(2, match="name-args", ignore_arguments={"^read$": ["description"]})
    assert grade(t, other).passed


def test_with_observation_tells_a_poll_that_progresses_from_a_stuck_one() -> None:
    """The same command each time: a poll whose answer advances is not a repeat with
    with_observation, a poll answered the same (but for the clock) is; without the
    answer in the key both are repeats."""
    poll = {"command": "./status.sh", "description": "Check the job"}
    moving = _loop([f"{t} job 42: running, {p}% done" for t, p in
                    [("02:51:19", 25), ("02:51:20", 50), ("02:51:21", 75)]] + ["job 42: done"],
                   [poll] * 4)
    stuck = _loop([f"2026-12-01T02:48:3{i}.91Z GET /health: connection refused"
                   for i in range(4)], [poll] * 4)
    base = {"match": "name-args", "normalize": ["volatile"]}
    plain = MaxRepeatConfig(2, **base)  # type: ignore[arg-type]
    both = MaxRepeatConfig(2, **base, with_observation=True)  # type: ignore[arg-type]
    assert not grade(moving, plain).passed and grade(moving, both).passed
    assert not grade(stuck, plain).passed
    got = grade(stuck, both)
    assert not got.passed and got.metadata.occurrences == 4
    # its previews show the answers, as observation mode's do
    assert got.metadata.pattern[0].endswith('-> "2026-12-01T02:48:30.91Z GET /health: '
                                            'connection refused"')
    # a different action answered the same is not a repeat either
    other = _loop(["updated"] * 4, [{"command": f"edit {i}"} for i in range(4)])
    assert not grade(other, MaxRepeatConfig(2)).passed and grade(other, both).passed


def test_with_observation_keeps_calls_without_an_answer() -> None:
    """A think tool's empty answer between the same failing calls: the step keeps its
    action (not empty, as in observation mode), so the cycle of two repeats."""
    events: list[dict[str, Any]] = []
    for i in range(3):
        events += turn(call("book", f"b{i}", {"amount": 833}), result(f"b{i}", "Error: 1203"))
        events += turn(call("think", f"t{i}", {"thought": "use the certificate"}),
                       result(f"t{i}", ""))
    cfg = MaxRepeatConfig(2, 2, "name-args", normalize=["volatile"], with_observation=True)
    got = grade({"events": events}, cfg)
    assert not got.passed and got.metadata.period == 2
    assert grade({"events": events}, MaxRepeatConfig(2, 2, normalize=["volatile"])).passed


def test_numbers_off_by_default_in_volatile() -> None:
    """Counters are often progress: volatile leaves plain numbers alone."""
    t = _loop(["page 1 of 9", "page 2 of 9", "page 3 of 9"])
    assert grade(t, MaxRepeatConfig(2, normalize=["volatile"])).passed
    assert not grade(t, MaxRepeatConfig(2, normalize=["volatile", "numbers"])).passed


def test_user_replacement() -> None:
    """echo marker1, echo marker2, ...: a replace rule makes them one action."""
    args = [{"command": f"echo marker{i}"} for i in range(4)]
    t = _loop(["ok"] * 4, args)
    cfg = MaxRepeatConfig(3, match="name-args",
                          replace=[{"pattern": r"marker\d+", "with": "marker"}])
    assert grade(t, MaxRepeatConfig(3, match="name-args")).passed
    assert not grade(t, cfg).passed


def test_similarity_groups_long_outputs() -> None:
    """Long outputs differing in a word are one cluster at 0.8, not at 1.0."""
    outs = [LONG.replace("abd", w) for w in ("ab1", "ab2", "ab3", "ab4")]
    t = _loop(outs)
    assert grade(t, MaxRepeatConfig(3, similarity=1.0)).passed
    assert not grade(t, MaxRepeatConfig(3, similarity=0.8)).passed


@pytest.mark.parametrize("text,want", [
    ("took 0.53s", "took <duration>"), ("took 1m2.5s", "took <duration>"),
    ("at 2024-05-01T10:00:01.123Z.", "at <time>."), ("Mon, 01 Jan 2024 10:00:00 GMT", "<time>"),
    ("12:01:02 ready", "<time> ready"), ("\x1b[1;31mred\x1b[0m", "red"), ("a  \nb\t\n", "a\nb"),
    ("id 123e4567-e89b-12d3-a456-426614174000", "id <uuid>"),
    ("commit 3f2a9c1d4e5b6a7f", "commit <hex>"), ("at 0x7ffd5e8c", "at <addr>"),
    ("pid 4121 port=8080", "pid <n> port=<n>"), ("http://localhost:51234/x", "http://localhost:<port>/x"),
    ("/tmp/tmpa1b2c3/out.txt", "/tmp/<tmp>/out.txt"), ("/tmp/notes.md", "/tmp/notes.md"),
    ("page 3 of 9", "page 3 of 9"), ("1796093270545835417", "<time>"), ("1796093270.5", "<time>"),
    # a number under a key naming a measured time, in JSON, a Python dict or bare
    ('{"output":"FAIL","metadata":{"exit_code":1,"duration_seconds":0.5}}',
     '{"output":"FAIL","metadata":{"exit_code":1,"duration_seconds":<duration>}}'),
    ("{'elapsed': 3, 'took' : 12, 'n': 4}",
     "{'elapsed': <duration>, 'took' : <duration>, 'n': 4}"),
    ('"durationMs":230,"totalDurationMs": 1.5e3',
     '"durationMs":<duration>,"totalDurationMs": <duration>'),
    ('"wall_time": -0.25 "wallTime":1 "time_taken":2',
     '"wall_time": <duration> "wallTime":<duration> "time_taken":<duration>'),
    ("tool_uses: 2\nduration_ms: 32855", "tool_uses: 2\nduration_ms: <duration>"),
    ("Wall time: 0.0013 seconds", "Wall time: <duration>"),
    # after an escape written out, in output that is itself JSON text (go test's time)
    ("FAIL\\tcore/telemetry\\t0.205s\\n", "FAIL\\tcore/telemetry\\t<duration>\\n"),
    ("\\n1m2s \\q0.5s \\t.5s", "\\n<duration> \\q0.5s \\t.5s"),
    # not a measured time: other keys, bounds someone set, other spellings
    ('"exit_code": 1, "timeout_ms": 10000', '"exit_code": 1, "timeout_ms": 10000'),
    ('"timeout_duration": 30, "latency_budget_ms": 5, "duration_limit": 9',
     '"timeout_duration": 30, "latency_budget_ms": 5, "duration_limit": 9'),
    ('"DURATION": 5 "duration"=5 "duration":"5" "duration\': 5 x"took": 1 éduration: 2',
     '"DURATION": 5 "duration"=5 "duration":"5" "duration\': 5 x"took": 1 éduration: 2'),
    ('"duration": 0x1f "took": 5abc "took": 5. "took": 5é',
     '"duration": 0x1f "took": 5abc "took": 5. "took": 5é'),
    ("Process Group PGID: 18424", "Process Group PGID: <n>"),
    ("<shellId: 3 completed>", "<shellId: <n> completed>"), ("deadbeef", "deadbeef"),
    ("version 3.11", "version 3.11"),
])
def test_volatile_normalizers(text: str, want: str) -> None:
    near = near_from({"normalize": ["volatile"]})
    assert near is not None
    assert Transform(near).text(text) == want


def test_config_rules_and_round_trip() -> None:
    """Every key is checked with the message grammar; to_dict/from_mapping round-trips."""
    bad = [
        ({"normalize": "volatile"}, 'normalize must be a non-empty list of'),
        ({"normalize": ["numbrs"]}, "did you mean numbers?"),
        ({"similarity": 2}, "similarity must be a number from 0.5 to 1 (got 2)"),
        ({"similarity_min_length": 10}, "similarity_min_length must be used with similarity"),
        ({"ignore_arguments": ["description"]}, "ignore_arguments must be used with match "
                                                "name-args (got match observation)"),
        ({"match": "name", "normalize": ["ansi"]}, "normalize must be used with match"),
        ({"with_observation": True}, "with_observation must be used with match name-args "
                                     "(got match observation); observation mode compares"),
        ({"match": "name-args", "with_observation": 1},
         "with_observation must be true or false (got 1)"),
        ({"replace": [{"pattern": "(", "with": ""}]}, "replace[0].pattern must be a valid"),
        ({"replace": [{"pattern": "[\\s\\S]*", "with": "x"}]}, "keeps different texts apart"),
        ({"replace": [{"pattern": "a"}]}, "replace[0] must be a mapping with exactly"),
        ({"match": "name-args", "ignore_arguments": ["description", "command"]},
         'ignore_arguments[1] must be a name that does not carry the action (got "command", '
         "which makes every call of a tool taking it the same); ignore it per tool"),
    ]
    for extra, words in bad:
        with pytest.raises(ConfigError) as exc:
            MaxRepeatConfig.from_mapping({"max": 2, **extra})
        assert words in str(exc.value)
    cfg = MaxRepeatConfig(2, match="name-args", ignore_arguments={"^Bash$": ["description"]},
                          normalize=["volatile"], similarity=0.9, similarity_min_length=100,
                          with_observation=True)
    assert MaxRepeatConfig.from_mapping(cfg.to_dict()) == cfg
    # with_observation: false alone is exact name-args matching (the same code path)
    assert MaxRepeatConfig(2, match="name-args", with_observation=False).near is None
    assert MaxRepeatConfig(2).to_dict() == {"max": 2, "max_cycle_period": 1,
                                            "match": "observation"}


def test_measure_and_clusters_are_deterministic() -> None:
    """The measure is symmetric; a cluster's members become its first member's text."""
    a, b = LONG, LONG.replace("abd", "abx")
    assert similarity(a, b) == similarity(b, a) < 1.0
    c = Clusters(0.7)
    assert c.assign(a) == a and c.assign(b) == a and c.texts == [a]
    assert expand_normalizers(["volatile"])[0] == "ansi"


def test_lint_against_a_real_trajectory_flags_settings_that_equal_every_step(
        tmp_path: Any) -> None:
    """`maxrepeat lint --against RUN` (a separate process) flags ignoring the one argument
    that tells a tool's calls apart; the API does the same; without --against it is clean."""
    import json
    import subprocess
    import sys

    import maxrepeat

    config = tmp_path / "g.yaml"
    config.write_text("graders:\n  - type: max-repeat\n    config:\n      max: 2\n"
                      "      match: name-args\n      ignore_arguments: {'^bash$': [cmd]}\n")
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"id": "r1", "events": [
        call("bash", str(i), {"cmd": c}) for i, c in enumerate(["ls", "pwd", "make"])]}))
    cmd = [str(Path(sys.executable).parent / "maxrepeat"), "lint", str(config)]
    against = subprocess.run([*cmd, "--against", str(run)], capture_output=True, text=True)
    assert against.returncode == 1
    assert against.stdout.strip() == (
        f"{config}: graders[0].config must be near-duplicate settings that keep different "
        "steps apart (got all 3 steps of r1 equal, 3 different exactly); ignore fewer "
        "arguments or anchor the replace patterns")
    assert subprocess.run(cmd, capture_output=True, text=True).returncode == 0
    runs = list(maxrepeat.read_trajectories(run))
    assert [p.path for p in maxrepeat.lint(config, runs)] == ["graders[0].config"]


# --- the pre-checks skip only substitutions that would not change the text -----------------

_FRAGMENTS = [
    "1 failed in 0.53s", "took 1m2.5s", "12 ms", "3 secs", "2024-05-01T10:00:01.123Z",
    "Mon, 01 Jan 2024 10:00:00 GMT", "Jan  5, 2024 10:00", "Dec 31", "12:01:02", "1:02:03.5",
    "1712345678", "1712345678.123", "1796093270545835417", "1796093270545835", "PGID: 18424",
    "shellId: 3", "pgid=7", "123e4567-e89b-12d3-a456-426614174000",
    "deadbeef-dead-beef-dead-beefdeadbeef", "3f2a9c1d4e5b6a7f", "3F2A9C1D4E5B6A7F",
    "0x7ffd5e8c", "pid 4121", "PID=77", "Process #12", "port:8080", "localhost:51234",
    "127.0.0.1:80", "0.0.0.0:443", "[::1]:9000", ":::8080", "::1:22", "worker[12345]",
    "[100%]", "/tmp/tmpa1b2c3/out.txt", "/var/folders/x1/T/f", "/dev/shm/q9", "/private/tmp/x",
    "C:\\Users\\me\\AppData\\Local\\Temp\\tmp1", "\x1b[31mred\x1b[0m", "\x1b(B", "a  \n",
    "\t\n", "\r\n", " ", "\n", "x", "AssertionError", "expected", "Tue", "March", "_17",
    "v1.2.3", "case_17", "test_mod_2.py::case_2", "e5", "42", ".", "-", ":", "/", "\\", "é", "µs",
    '"duration_seconds":0.5', '"duration_seconds": 12', "'elapsed': 3.25", '"took":5}',
    '"durationMs":230,', '"exit_code": 1', '"timeout_ms": 10000', '"timeout_duration": 30',
    "duration_ms: 32855", "Wall time: 0.0013 seconds", '"wall_time": -1.5e-3',
    '"time_taken":1E+2', '"latency"  :  7', '"DURATION": 5', '"duration"=5', '"duration":"5"',
    "\"duration': 5", '"duration": 0x1f', '"took": 5abc', '"took": 5.', "\\t0.205s",
    "FAIL\\tcore/telemetry\\t0.260s\\n", "\\n1m2s", "\\r3 ms", "\\q0.5s", "\\t.5s",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=6)), max_size=8),
       st.sampled_from([["volatile"], ["volatile", "numbers"], ["timestamps"], ["durations"],
                        ["ids", "pids"], ["addresses"], ["temp-paths", "ansi"],
                        ["trailing-whitespace"], ["numbers"]]))
def test_fast_rewrite_equals_every_substitution_in_order(parts: list[str],
                                                         names: list[str]) -> None:
    """`rewriter` (pre-checks, the combined scan) gives what applying every substitution
    of `NORMALIZERS` in order gives, on texts mixing volatile fragments and noise."""
    from maxrepeat.core.near.normalizers import NORMALIZERS, rewriter

    text = "".join(parts)
    expanded = expand_normalizers(names)
    want = text
    for name in expanded:
        for step in NORMALIZERS[name]:
            want = step(want) if callable(step) else step[0].sub(step[1], want)
    assert rewriter(expanded)(text) == want


_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1),
              st.integers(-10**30, 10**30), st.floats(allow_nan=False, allow_infinity=False),
              st.sampled_from([30.0, 1e400, -1e400, 2.5]), st.sampled_from(_FRAGMENTS),
              st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(["command", "description", "a", "b"]),
                                            inner, max_size=4)),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_arguments_read_from_a_file_key_as_decoded_ones(value: Any) -> None:
    """The batch path for arguments read from a file (decoded normalized, encoded without
    a second walk) gives the bytes of the general path (decode, rewrite, canonical)."""
    import json as std_json

    import msgspec

    from maxrepeat.core.canonical import (
        canonical_bytes,
        comparison_value,
        decode_value,
        normalized_bytes,
    )

    raw = msgspec.Raw(std_json.dumps(value).replace("Infinity", "1e400").encode())
    near = near_from({"match": "name-args", "normalize": ["volatile"],
                      "ignore_arguments": ["description"]})
    assert near is not None
    fast = normalized_bytes(Transform(near).arguments("Bash", comparison_value(raw)))
    slow = canonical_bytes(Transform(near).arguments("Bash", decode_value(raw)))
    assert fast == slow


def test_config_names_are_the_table_s_read_when_one_is_named(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The names ``normalize`` takes are the keys of the one table (`NORMALIZERS`), in its
    order, and ``volatile``; read when a config names a normalizer, so checking one that
    names none compiles no pattern (start-up), and a name added to the table is taken."""
    import subprocess
    import sys

    from maxrepeat.core.configrules import check_config
    from maxrepeat.core.near import normalizers

    code = ("import sys; from maxrepeat.core.configrules import check_config; "
            "assert check_config({'max': 3, 'similarity': 0.9}) == []; "
            "print('maxrepeat.core.near.normalizers' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert run.stdout.strip() == "False"

    monkeypatch.setattr(normalizers, "NORMALIZERS", {"builds": [], **normalizers.NORMALIZERS})
    assert check_config({"max": 3, "normalize": ["builds", "ansi"]}) == []
    [(err, _)] = check_config({"max": 3, "normalize": ["biulds"]})
    names = ", ".join(["builds", *normalizers.VOLATILE, "numbers", "volatile"])
    assert str(err) == f'normalize[0] must be one of {names} (got "biulds"); did you mean builds?'
