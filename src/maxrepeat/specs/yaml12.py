"""YAML 1.2 (core schema) on top of PyYAML's parser: how the seed framework reads YAML.

PyYAML resolves unquoted scalars by YAML 1.1, where ``010`` is 8, ``1:30`` is 90, ``1_0``
is 10 and ``no`` is false. The framework (TypeScript) reads YAML 1.2's core schema, where
those are 10 and the texts ``"1:30"``, ``"1_0"``, ``"no"``. `Loader` keeps PyYAML's parser
(and its C speed and positions) but tags every unquoted scalar as *plain*; `plain_value`
then resolves it by the core schema, and `yaml11_value` says what YAML 1.1 would have
made of it, so lint can explain a value that a YAML 1.1 reader sees differently.

Integers beyond 2**53 become the double JavaScript holds, as every number of the
framework is one.

>>> [plain_value(t) for t in ("010", "0o10", "0x1F", "1:30", "1_0", "no", "~", "1e3", ".inf")]
[10, 8, 31, '1:30', '1_0', 'no', None, 1000.0, inf]
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Final

import yaml

__all__ = ["Loader", "PyLoader", "PlainScalars", "RedefinableAnchors", "PLAIN_TAG",
           "plain_value", "tagged_value", "yaml11_value",
           "yaml_directive", "nonspecific", "special_tag", "SPECIAL_HINT", "js_key",
           "key_identity", "Masks", "redefined_anchor"]

#: the tag `Loader` gives an unquoted, untagged scalar (resolved later by `plain_value`)
PLAIN_TAG: Final = "tag:maxrepeat.dev,2026:plain"
_SAFE_INTEGER: Final = 2**53
_NULL: Final = re.compile(r"(?:~|null|Null|NULL)?\Z")
_BOOL: Final = {"true": True, "True": True, "TRUE": True,
                "false": False, "False": False, "FALSE": False}
_INT: Final = re.compile(r"[-+]?[0-9]+\Z")
_OCT: Final = re.compile(r"0o[0-7]+\Z")
_HEX: Final = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT: Final = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INF: Final = re.compile(r"([-+]?)\.(?:inf|Inf|INF)\Z")
_NAN: Final = re.compile(r"\.(?:nan|NaN|NAN)\Z")

try:  # the C parser is several times faster; positions are the same
    _Base: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Base = yaml.SafeLoader


class PlainScalars:
    """A resolver mix-in that leaves unquoted scalars unresolved (tagged `PLAIN_TAG`)."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        """The tag of an untagged node: `PLAIN_TAG` for an unquoted scalar."""
        if kind is yaml.ScalarNode and implicit[0]:
            return PLAIN_TAG
        return super().resolve(kind, value, implicit)  # type: ignore[misc]


class Loader(PlainScalars, _Base):  # type: ignore[misc]
    """PyYAML's safe loader that leaves unquoted scalars unresolved (tagged `PLAIN_TAG`)."""


class RedefinableAnchors:
    """A pure-Python composer mix-in where an anchor may be defined again, as YAML 1.2
    and npm `yaml` allow: an alias means the nearest definition before it. PyYAML refuses
    a second ``&a`` ("found duplicate anchor"), its C composer too, so a text it refuses
    that way is composed again by `PyLoader` (``specs/located.py``).

    >>> node = yaml.compose("[&a 1, *a, &a 2, *a]", Loader=PyLoader)
    >>> [n.value for n in node.value]
    ['1', '1', '2', '2']
    """

    anchors: dict[str, Any]

    def compose_node(self, parent: Any, index: Any) -> Any:
        """A node, its anchor (if any) first forgotten so that it is defined afresh."""
        if not self.check_event(yaml.AliasEvent):  # type: ignore[attr-defined]
            anchor = self.peek_event().anchor  # type: ignore[attr-defined]
            if anchor is not None:
                self.anchors.pop(anchor, None)
        return super().compose_node(parent, index)  # type: ignore[misc]


class PyLoader(RedefinableAnchors, PlainScalars, yaml.SafeLoader):
    """`Loader` on PyYAML's pure-Python parser, with anchors that may be defined again."""


def redefined_anchor(exc: yaml.YAMLError) -> bool:
    """Whether PyYAML refused a text only for an anchor defined twice (legal in 1.2)."""
    return "found duplicate anchor" in str(getattr(exc, "context", "") or "")


def _number(value: int) -> Any:
    if -_SAFE_INTEGER <= value <= _SAFE_INTEGER:
        return value
    try:
        return int(float(value))
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def plain_value(text: str) -> Any:
    """An unquoted scalar by the YAML 1.2 core schema (null, bool, int, float or str).

    >>> plain_value("TRUE"), plain_value("yes"), plain_value("-0x1")
    (True, 'yes', '-0x1')
    """
    if _NULL.match(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT.match(text):
        if len(text.lstrip("+-")) > 4000:  # past Python's digit limit: a double anyway
            return float("inf") if not text.startswith("-") else float("-inf")
        return _number(int(text, 10))
    if _OCT.match(text):
        return _number(int(text[2:], 8)) if len(text) < 4000 else float("inf")
    if _HEX.match(text):
        return _number(int(text[2:], 16)) if len(text) < 4000 else float("inf")
    if _FLOAT.match(text):
        return float(text)
    inf = _INF.match(text)
    if inf:
        return float("-inf") if inf.group(1) == "-" else float("inf")
    if _NAN.match(text):
        return float("nan")
    return text


#: the texts each standard tag accepts, as the npm `yaml` package's core schema tests
#: them; any other text under the tag is read as a string (``!!float 1`` is "1")
_TAG_TESTS: Final = {
    "tag:yaml.org,2002:int": re.compile(r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z"),
    "tag:yaml.org,2002:float": re.compile(
        r"(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN"
        r"|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+"
        r"|[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*))\Z"),
    "tag:yaml.org,2002:bool": re.compile(r"(?:[Tt]rue|TRUE|[Ff]alse|FALSE)\Z"),
    "tag:yaml.org,2002:null": re.compile(r"(?:~|[Nn]ull|NULL)?\Z"),
}


def tagged_value(tag: str, text: str) -> Any:
    """A scalar with an explicit tag (``!!int 10``), as the framework's YAML reader reads
    it: a standard tag resolves the text when its core-schema test accepts the text, and
    anything else (``!!float 1``, ``!!bool yes``, ``!custom 3``) is the string.

    >>> tagged_value("tag:yaml.org,2002:float", "1"), tagged_value("tag:yaml.org,2002:float", "1.0")
    ('1', 1.0)
    """
    test = _TAG_TESTS.get(tag)
    if test is None or not test.match(text):
        return text
    value = plain_value(text)
    if tag == "tag:yaml.org,2002:float" and isinstance(value, int):
        return float(value)
    return value


_DIRECTIVE: Final = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\n|%(?!YAML[ \t])[^\n]*\n)*"
                               r"%YAML[ \t]+([^ \t\n#]+)")


def yaml_directive(text: str) -> tuple[int, int, str] | None:
    """Line, column and version of a ``%YAML`` directive for a version other than 1.2
    before the first document (the npm `yaml` package then reads YAML 1.1).

    >>> yaml_directive("%YAML 1.1\\n---\\nmax: 010\\n"), yaml_directive("%YAML 1.2\\n")
    ((1, 1, '1.1'), None)
    """
    found = _DIRECTIVE.match(text)
    if found is None or found.group(1) == "1.2":
        return None
    start = found.start(1) - len("%YAML ")
    return text.count("\n", 0, start) + 1, 1, found.group(1)


def nonspecific(text: str, node: yaml.Node) -> bool:
    """Whether a scalar PyYAML resolved as untagged carries the non-specific tag ``!``
    (``! 3``), which makes it a string (the node starts at its properties)."""
    at = node.start_mark.index
    if text.startswith("&", at):  # an anchor first: `&a ! 3`
        while at < len(text) and text[at] not in " \t\n":
            at += 1
        while at < len(text) and text[at] in " \t":
            at += 1
    return text.startswith("!", at)


#: tags of YAML 1.1 types that the framework reads as bytes, dates, sets and maps
_SPECIAL: Final = ("binary", "timestamp", "set", "omap", "pairs")
SPECIAL_HINT: Final = ("the framework's YAML reader makes !!binary bytes, !!timestamp a date, "
                       "!!set a Set and !!omap or !!pairs a Map or list of pairs; no config "
                       "value is one of those")


def special_tag(tag: str | None) -> str | None:
    """The name of a YAML 1.1 type tag (``binary`` for ``!!binary``), else None."""
    if tag is not None and tag.startswith("tag:yaml.org,2002:") and tag[18:] in _SPECIAL:
        return tag[18:]
    return None


def js_key(value: Any) -> str:
    """A mapping key as the framework holds it: JavaScript objects have text keys, so a
    scalar key is ``String(value)`` (null is the empty text).

    >>> [js_key(v) for v in (None, True, 1, 1.0, 1.5, 1e-7, 1e21, float("inf"), "k")]
    ['', 'true', '1', '1', '1.5', '1e-7', '1e+21', 'Infinity', 'k']
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        if 1e-6 <= abs(value) < 1e21:
            return f"{Decimal(repr(value)):f}"
        mantissa, _, exponent = repr(value).partition("e")
        return f"{mantissa}e{'-' if exponent.startswith('-') else '+'}{int(exponent[1:])}"
    return str(value)


def key_identity(value: Any) -> Any:
    """What makes two keys the same key for the framework's reader (``===`` of their
    values: 1 and 1.0 are one key, 1 and true are two)."""
    return (isinstance(value, bool), value)


#: YAML 1.1 line breaks that YAML 1.2 reads as ordinary characters (PyYAML's parser breaks
#: lines at them), and the private-use code points they stand in for while PyYAML parses
_NON_BREAKS: Final = "\x85\u2028\u2029"
_STAND_INS: Final = "\U0010FFFB\U0010FFFC\U0010FFFD"
_SURROGATE_ESCAPE: Final = re.compile(r"[dD][89a-fA-F][0-9a-fA-F]{2}")
_MASKED_SURROGATES: Final = re.compile("[\ue000-\ue7ff]")
_PAIR: Final = re.compile("[\ud800-\udbff][\udc00-\udfff]")


class Masks:
    """What YAML 1.2 allows and PyYAML's parser refuses, masked with stand-ins of the same
    length (so positions hold) before parsing and unmasked in the values: NEL, LS and PS
    as characters (not line breaks), and ``\\uD83D``-style surrogate escapes in double
    quotes (escapes of private-use units E000-E7FF while PyYAML parses)."""

    def __init__(self, text: str) -> None:
        self.breaks = any(c in text for c in _NON_BREAKS) and \
            not any(c in text for c in _STAND_INS)
        self.text = text.translate(str.maketrans(_NON_BREAKS, _STAND_INS)) if self.breaks \
            else text
        self.surrogates = False

    def unmask_escape(self, index: int) -> bool:
        """At a surrogate escape's hex digits (where PyYAML found an invalid escape):
        masked, and True; else False."""
        if self.text[index - 2:index] not in ("\\u",) or \
                not _SURROGATE_ESCAPE.match(self.text, index):
            return False
        unit = int(self.text[index:index + 4], 16) - 0xD800 + 0xE000
        self.text = f"{self.text[:index]}{unit:04X}{self.text[index + 4:]}"
        self.surrogates = True
        return True

    def unmask(self, value: str) -> str:
        """A scalar's text as YAML 1.2 reads it."""
        if self.breaks:
            value = value.translate(str.maketrans(_STAND_INS, _NON_BREAKS))
        if self.surrogates:
            value = _MASKED_SURROGATES.sub(lambda m: chr(ord(m.group()) - 0xE000 + 0xD800),
                                           value)
            value = _PAIR.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass")
                              .decode("utf-16-le"), value)
        return value


_CONSTRUCTOR: Final = yaml.constructor.SafeConstructor()
_RESOLVER: Any = yaml.resolver.Resolver()


def yaml11_value(text: str) -> Any:
    """What a YAML 1.1 reader (PyYAML, many older tools) makes of an unquoted scalar.

    >>> yaml11_value("010"), yaml11_value("1:30"), yaml11_value("no")
    (8, 90, False)
    """
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))
    node = yaml.ScalarNode(tag, text)
    try:
        value = _CONSTRUCTOR.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError):
        return text
    return value if isinstance(value, (str, int, float, bool)) or value is None else text
