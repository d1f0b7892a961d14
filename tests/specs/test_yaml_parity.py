"""Config YAML as the framework's reader (npm `yaml` 2.9.1, `YAML.parse`) reads it: the
classes of issue 31 (Y1-Y3, Y8, Y9), each with the framework's own reading written out;
`test_campaign_yaml.py` keeps comparing against the package itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from maxrepeat.specs.configfile import compose_located, parse_config_text
from maxrepeat.specs.lint import lint

CONFIG = "graders:\n  - type: max-repeat\n    config:\n      max: {}\n"


def _max_problems(value: str) -> list[str]:
    return [str(p) for p in parse_config_text(CONFIG.format(value), "g.yaml")[1]]


@pytest.mark.parametrize(("value", "got"), [("!!float 1", '"1"'), ("! 3", '"3"'),
                                            ("!!int 1.0", '"1.0"'), ("!!bool yes", '"yes"'),
                                            ("&a ! 3", '"3"'), ("! '3'", '"3"')])
def test_y1_y2_a_tag_whose_test_rejects_the_text_makes_a_string(value: str, got: str) -> None:
    """Y1, Y2: `max: !!float 1` and `max: ! 3` are strings in JavaScript: invalid."""
    assert _max_problems(value) == [
        f"g.yaml:4:12: graders[0].config.max must be an integer >= 1 (got {got})"]


@pytest.mark.parametrize("value", ["!!int 3", "!!float 3.0", "!!int 0x3", "!!float 3e0",
                                   "!<tag:yaml.org,2002:int> 3"])
def test_a_tag_whose_test_accepts_the_text_resolves_it(value: str) -> None:
    assert _max_problems(value) == []


def test_y3_a_yaml_1_1_directive_is_refused_not_misread() -> None:
    """Y3: with `%YAML 1.1` the framework reads `max: 010` as 8; maxrepeat refuses the
    file (a documented choice) instead of reading 10."""
    problems = [str(p) for p in parse_config_text("%YAML 1.1\n---\n" + CONFIG.format("010"),
                                                  "g.yaml")[1]]
    assert problems == ["g.yaml:1:1: document must be YAML 1.2 (no %YAML directive for another "
                        "version) (got %YAML 1.1); the framework then reads the file by YAML "
                        "1.1's rules (010 is 8, yes is true); maxrepeat reads YAML 1.2 only: "
                        "remove the directive"]
    assert parse_config_text("# c\n%YAML 1.2\n---\n" + CONFIG.format("010"), "g.yaml")[1] == []


@pytest.mark.parametrize(("text", "at"), [("graders: &a [*a]\n", "1:10: graders[0]"),
                                          ("x: &a {b: *a}\n", "1:4: x.b"),
                                          (CONFIG.format("&m [1, *m]"),
                                           "4:12: graders[0].config.max[1]")])
def test_y8_a_value_containing_itself_is_a_located_error(tmp_path: Path, text: str,
                                                         at: str) -> None:
    """Y8: this raised an uncaught RecursionError ("internal error … a maxrepeat bug")."""
    path = tmp_path / "g.yaml"
    path.write_text(text, encoding="utf-8")
    problems = [str(p) for p in lint(path)]
    assert len(problems) == 1
    assert "must be a value that does not contain itself (got an alias inside its own " \
        "anchor)" in problems[0]
    assert problems[0].startswith(f"{path}:{at} must")


@pytest.mark.parametrize(("text", "got"), [
    ("x: !!binary aGVsbG8=\n", "a !!binary value"),
    ("x: !!timestamp 2001-12-14\n", "a !!timestamp value"),
    ("x: !!set {a, b}\n", "a !!set value"),
    ("x: !!omap [{a: 1}]\n", "a !!omap value"),
    ("x: !!pairs [{a: 1}]\n", "a !!pairs value"),
    ("[a]: 1\n", "a list as a key"),
    ("? {a: 1}\n: 1\n", "a mapping as a key"),
])
def test_y9_yaml_1_1_types_and_complex_keys_are_refused(text: str, got: str) -> None:
    """Y9: the framework reads these as Buffer, Date, Set, Map and a key's YAML text;
    no config holds one, so each is one located problem (a deliberate choice)."""
    root, problems = compose_located(text, "g.yaml")
    assert root is None
    assert [f"(got {got})" in str(p) for p in problems] == [True]


def test_keys_are_javascript_object_keys() -> None:
    """Found by the YAML campaign: `1` and `true` are two keys for the framework (Python's
    dict made them one, a false "given once" problem); `1` and `1.0` are one key; keys
    are the texts a JavaScript object holds."""
    root, problems = compose_located("1: a\ntrue: b\nnull: c\n1.5: d\n", "g.yaml")
    assert problems == [] and root is not None
    assert root.plain() == {"1": "a", "true": "b", "": "c", "1.5": "d"}
    problems = compose_located("1: a\n1.0: b\n", "g.yaml")[1]
    assert [str(p) for p in problems] == [
        "g.yaml:2:1: 1 must be given once (got a second 1.0 key); first given at line 1"]


@pytest.mark.parametrize(("text", "value"), [
    ('x: "\\uD83D\\uDE00"\n', "\U0001F600"), ('x: "\\uD83D"\n', "\ud83d"),
    ('x: "a\\uDE00b"\n', "a\ude00b"), ('x: "\\\\uD83D"\n', "\\uD83D"), ("x: \\uD83D\n", "\\uD83D"),
])
def test_y5_surrogate_escapes_read_as_javascript_reads_them(text: str, value: str) -> None:
    """Y5: a pair of surrogate escapes is one character, a lone one a lone code unit (as
    JavaScript strings hold it); they were "invalid Unicode character escape"."""
    root, problems = compose_located(text, "g.yaml")
    assert problems == [] and root is not None
    assert root.plain() == {"x": value}


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\u2029"])
def test_y6_nel_ls_ps_are_characters_not_line_breaks(char: str) -> None:
    """Y6: YAML 1.2 has only LF and CR as line breaks; PyYAML broke lines at these (a
    syntax error, or line numbers off by one)."""
    root, problems = compose_located(f"x: a{char}b\ny: [1, z]\n", "g.yaml")
    assert problems == [] and root is not None
    assert root.plain() == {"x": f"a{char}b", "y": [1, "z"]}
    assert root.value["y"].line == 2


@pytest.mark.parametrize(("text", "value"), [
    ("[?x]\n", ["?x"]), ("[?x y, 2]\n", ["?x y", 2]), ("{?x: 1}\n", {"?x": 1}),
    ("[?x: 1]\n", [{"?x": 1}]), ("[? x]\n", [{"x": None}]), ("{-: 1}\n", {"-": 1}),
    ("[-x]\n", ["-x"]),
])
def test_y7_flow_collections_read_as_yaml_1_2(text: str, value: object) -> None:
    """Y7: `?x` in a flow collection is text in YAML 1.2 (PyYAML read an explicit key)."""
    root, problems = compose_located(text, "g.yaml")
    assert problems == [] and root is not None
    assert root.plain() == value


@pytest.mark.parametrize("text", ["[-]\n", "[a, -]\n", "{k: -}\n", "[!!str -]\n"])
def test_y7_a_lone_dash_in_a_flow_collection_is_refused(text: str) -> None:
    """Y7: npm yaml refuses a block sequence indicator inside a flow collection; PyYAML
    read the text "-"."""
    root, problems = compose_located(text, "g.yaml")
    assert root is None
    assert ['(got "-" inside a flow collection)' in str(p) for p in problems] == [True]


@pytest.mark.parametrize("text", ['a:\n  b: "x\n  y"\n', 'a: "x\ny"\n', "a: 'x\ny'\n",
                                  '- "x\ny"\n', 'a: ["x\ny"]\n', 'a: "x\\\ny"\n',
                                  'a: "x\n y\n"\n', 'a: "x\n\ny"\n'])
def test_y4_a_quoted_text_continued_too_little_indented_is_refused(text: str) -> None:
    """Y4: npm yaml says "Missing closing quote"; PyYAML joined the lines."""
    root, problems = compose_located(text, "g.yaml")
    assert root is None
    assert ["(got a quoted text continued on a line indented no more than its collection)"
            in str(p) for p in problems] == [True]


@pytest.mark.parametrize(("text", "value"), [
    ('a:\n  b: "x\n   y"\n', {"a": {"b": "x y"}}), ('a: "x\n\n y"\n', {"a": "x\ny"}),
    ('"x\ny"\n', "x y"), ('a: "x\\\n  y"\n', {"a": "xy"}), ('a: "x\n y\n  "\n', {"a": "x y "}),
])
def test_y4_a_quoted_text_continued_further_in_is_read(text: str, value: object) -> None:
    root, problems = compose_located(text, "g.yaml")
    assert problems == [] and root is not None
    assert root.plain() == value


@pytest.mark.parametrize(("text", "value"), [
    ("a: &y 1\nb: &y 2\nc: *y\n", {"a": 1, "b": 2, "c": 2}),
    ("a: &y [&y 1, *y]\n", {"a": [1, 1]}),
    ("true: [!!null -0, &y : x, [&y : x, 1.0]]\n",
     {"true": ["-0", {"": "x"}, [{"": "x"}, 1.0]]}),
    ('a: &y "\\ud800"\nb: &y 2\nc: [*y]\n', {"a": "\ud800", "b": 2, "c": [2]}),
])
def test_an_anchor_defined_again_is_read_as_javascript_reads_it(text: str,
                                                                value: object) -> None:
    """YAML 1.2 lets an anchor be defined again (an alias means the nearest definition
    before it); npm `yaml` reads these, and PyYAML's "found duplicate anchor" is no error
    here (found by the YAML campaign, seed 2562100473)."""
    root, problems = compose_located(text, "g.yaml")
    assert problems == []
    assert root is not None and root.plain() == value
