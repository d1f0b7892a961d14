"""YAML documents as located values: every value with its line and column, read as the
framework's YAML reader (the npm `yaml` package, YAML 1.2) reads it (`specs.yaml12`), with
duplicate keys reported and what that reader would read otherwise refused with one
located problem (`compose_located`). Shared by config files and eval specs.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Any, Final

import yaml

from ..core.configrules import show_value
from ..core.errors import ConfigError
from .yaml12 import (
    PLAIN_TAG,
    SPECIAL_HINT,
    Loader,
    Masks,
    PyLoader,
    js_key,
    key_identity,
    nonspecific,
    plain_value,
    redefined_anchor,
    special_tag,
    tagged_value,
    yaml_directive,
)
from .yaml12_flow import FlowLoader

__all__ = ["Located", "compose_located", "MAX_VALUES"]


@dataclass(frozen=True, slots=True)
class Located:
    """A YAML value with where it stands: ``line``/``col`` are 1-based.

    ``value`` holds plain Python values for scalars, a dict of ``key -> Located`` for
    mappings and a list of ``Located`` for sequences. ``text`` is the source text of an
    unquoted scalar (to explain YAML 1.1 coercions), else None.
    """

    value: Any
    line: int
    col: int
    key_line: int = 0
    key_col: int = 0
    text: str | None = None

    def plain(self) -> Any:
        """The value with positions stripped."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value


def compose_located(text: str, file: str) -> tuple[Located | None, list[ConfigError]]:
    """Parse YAML ``text`` into a `Located` tree, with duplicate-key problems.

    What the framework's YAML reader would read otherwise, or as a value no config holds,
    is refused with one located problem: a ``%YAML 1.1`` directive, a value that contains
    itself, ``!!binary`` ``!!timestamp`` ``!!set`` ``!!omap`` ``!!pairs`` values and
    keys that are lists or mappings (docs/design/framework-semantics.md).
    """
    directive = yaml_directive(text)
    if directive is not None:
        at_line, at_col, version = directive
        return None, [ConfigError(
            "document", "YAML 1.2 (no %YAML directive for another version)",
            f"%YAML {version}", hint="the framework then reads the file by YAML 1.1's rules "
            "(010 is 8, yes is true); maxrepeat reads YAML 1.2 only: remove the directive",
            file=file, line=at_line, col=at_col)]
    masks = Masks(text)
    try:
        node = _compose(masks)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        return None, [
            ConfigError("document", "valid YAML", str(exc.problem or exc), file=file,
                        line=line, col=col)
        ]
    except yaml.YAMLError as exc:
        return None, [ConfigError("document", "valid YAML", str(exc), file=file)]
    if node is None:
        return None, []
    walk = _Walk(masks.text, file, [], [MAX_VALUES], set(), masks)
    try:
        return walk.convert(node, ""), walk.problems
    except _TooManyValues:
        return None, [ConfigError(
            "document",
            f"small enough: at most {MAX_VALUES:,} values once its aliases are expanded",
            "more", hint="an alias of an anchor that itself repeats aliases (an alias "
            "bomb) grows exponentially; write the values out", file=file, line=1, col=1)]
    except _Refused as exc:
        return None, [exc.error]
    except RecursionError:
        return None, [ConfigError("document", "nested less deeply", "more levels than "
                                  "Python's recursion limit", file=file, line=1, col=1)]


def _compose(masks: Masks) -> yaml.Node | None:
    """PyYAML's node tree of the masked text; each surrogate escape it refuses is masked
    in turn (at most 64: a config holds a few)."""
    if _FLOW_QUESTION.search(masks.text):
        with contextlib.suppress(yaml.YAMLError):
            flow: yaml.Node | None = yaml.compose(masks.text, Loader=FlowLoader)
            return flow
    for _ in range(64):
        try:
            node: yaml.Node | None = yaml.compose(masks.text, Loader=Loader)
            return node
        except yaml.MarkedYAMLError as exc:
            if redefined_anchor(exc):
                return _compose_python(masks)
            mark = exc.problem_mark
            if mark is None or "invalid Unicode character escape" not in str(exc.problem) \
                    or not masks.unmask_escape(mark.index):
                return _compose_flow(masks, exc)
    last: yaml.Node | None = yaml.compose(masks.text, Loader=Loader)
    return last


def _compose_python(masks: Masks) -> yaml.Node | None:
    """A text the C loader refused for an anchor defined again, composed by `PyLoader`
    (then by the flow rules, when that refuses it too)."""
    try:
        node: yaml.Node | None = yaml.compose(masks.text, Loader=PyLoader)
    except yaml.MarkedYAMLError as exc:
        return _compose_flow(masks, exc)
    return node


def _compose_flow(masks: Masks, exc: yaml.MarkedYAMLError) -> yaml.Node | None:
    """A text the C loader refused, read again by YAML 1.2's flow rules (Y7: ``[:]``,
    ``[!!str ?x]``, ``{a: ?x}``); when that fails too, the C loader's error stands."""
    if "[" not in masks.text and "{" not in masks.text:
        raise exc
    try:
        node: yaml.Node | None = yaml.compose(masks.text, Loader=FlowLoader)
    except yaml.YAMLError:
        raise exc from None
    return node


#: a ``?`` inside a flow collection, which PyYAML's C parser reads by YAML 1.1 (Y7)
_FLOW_QUESTION: Final = re.compile(r"[\[{][^\n]*\?")

#: how many values a config may hold with its aliases expanded: a real config holds a few
#: dozen, while nine levels of nine aliases (an "alias bomb", 1 KB) hold 387 million
MAX_VALUES: Final = 100_000


class _TooManyValues(Exception):
    pass


class _Refused(Exception):
    def __init__(self, error: ConfigError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass
class _Walk:
    """The conversion of a composed document to `Located` values."""

    text: str
    file: str
    problems: list[ConfigError]
    budget: list[int]
    open_nodes: set[int]  # the collections being converted (a value inside itself)
    masks: Masks
    indent: int = -1  # the column of the innermost block collection

    def refuse(self, node: yaml.Node, path: str, expectation: str, got: str,
               hint: str) -> _Refused:
        return _Refused(ConfigError(path or "document", expectation, got, hint=hint,
                                    file=self.file, line=node.start_mark.line + 1,
                                    col=node.start_mark.column + 1))

    def convert(self, node: yaml.Node, path: str) -> Located:
        self.budget[0] -= 1
        if self.budget[0] < 0:
            raise _TooManyValues
        line, col = node.start_mark.line + 1, node.start_mark.column + 1
        special = special_tag(node.tag)
        if special is not None:
            raise self.refuse(node, path, "a string, number, boolean, null, list or mapping",
                              f"a !!{special} value", SPECIAL_HINT)
        if isinstance(node, yaml.ScalarNode):
            if node.style in ("'", '"') and node.end_mark.line > node.start_mark.line:
                self.quoted_lines(node, path)
            value = self.masks.unmask(node.value)
            if node.tag == PLAIN_TAG and (node.style or nonspecific(self.text, node)):
                return Located(value, line, col)  # quoted, or tagged "!"
            text = value if node.tag == PLAIN_TAG else None
            return Located(_scalar(node.tag, value), line, col, text=text)
        if id(node) in self.open_nodes:
            raise self.refuse(node, path, "a value that does not contain itself",
                              "an alias inside its own anchor", "the framework's YAML reader "
                              "builds a value that contains itself; write the value out")
        self.open_nodes.add(id(node))
        outer = self.indent
        assert isinstance(node, (yaml.MappingNode, yaml.SequenceNode))
        if not node.flow_style:
            self.indent = node.start_mark.column
        try:
            if isinstance(node, yaml.MappingNode):
                return Located(self.mapping(node, path), line, col)
            assert isinstance(node, yaml.SequenceNode)
            return Located([self.item(n, f"{path}[{i}]", node.flow_style)
                            for i, n in enumerate(node.value)], line, col)
        finally:
            self.open_nodes.discard(id(node))
            self.indent = outer

    def mapping(self, node: yaml.MappingNode, path: str) -> dict[str, Located]:
        out: dict[str, Located] = {}
        seen: dict[Any, Located] = {}
        for knode, vnode in node.value:
            if not isinstance(knode, yaml.ScalarNode):
                kind = "a list" if isinstance(knode, yaml.SequenceNode) else "a mapping"
                raise self.refuse(knode, path, "a mapping with text keys", f"{kind} as a key",
                                  "the framework's YAML reader turns such a key into its "
                                  "YAML text; no config key is one")
            value = self.convert(knode, path).value
            if self.question_key(knode):
                value = "?" + str(value)
            key = js_key(value)
            kpath = f"{path}.{key}" if path else key
            if key_identity(value) in seen:
                self.problems.append(
                    ConfigError(
                        kpath, "given once", f"a second {show_value(value)} key",
                        hint=f"first given at line {seen[key_identity(value)].key_line}",
                        file=self.file,
                        line=knode.start_mark.line + 1, col=knode.start_mark.column + 1,
                    )
                )
                continue
            child = self.item(vnode, kpath, node.flow_style)
            out[key] = seen[key_identity(value)] = Located(
                child.value, child.line, child.col,
                knode.start_mark.line + 1, knode.start_mark.column + 1, child.text,
            )
        return out

    def quoted_lines(self, node: yaml.Node, path: str) -> None:
        """A quoted scalar's later lines must be indented more than the block collection
        holding it (YAML 1.2; npm `yaml` says "Missing closing quote", Y4)."""
        lines = self.text[node.start_mark.index:node.end_mark.index].splitlines()[1:]
        for line in lines:
            if line.strip(" \t") and len(line) - len(line.lstrip(" ")) <= self.indent:
                raise self.refuse(node, path, "valid YAML", "a quoted text continued on a line "
                                  "indented no more than its collection", "the framework's "
                                  "YAML reader says \"Missing closing quote\"; indent the "
                                  "continued lines further")

    # npm `yaml` reads flow collections by YAML 1.2, where PyYAML's parser differs (Y7)
    def question_key(self, knode: yaml.Node) -> bool:
        """A plain key right after ``?`` (``{?x: 1}``): YAML 1.2 reads ``?x`` as text."""
        at = knode.start_mark.index
        return isinstance(knode, yaml.ScalarNode) and knode.tag == PLAIN_TAG and \
            not knode.style and knode.value != "" and at > 0 and self.text[at - 1] == "?"

    def item(self, node: yaml.Node, path: str, flow: bool | None) -> Located:
        """A flow collection's item or value: a lone ``-`` is refused, and ``[?x]`` is the
        text ``?x`` (not a mapping), as in YAML 1.2."""
        if flow and isinstance(node, yaml.ScalarNode) and not node.style and node.value == "-":
            raise self.refuse(node, "", "valid YAML", '"-" inside a flow collection',
                              "YAML 1.2 (the framework's reader) refuses a block sequence "
                              "there; quote it")
        if flow and isinstance(node, yaml.MappingNode) and len(node.value) == 1:
            knode, vnode = node.value[0]
            after = self.text[knode.end_mark.index:].lstrip(" \t")
            if self.question_key(knode) and isinstance(vnode, yaml.ScalarNode) and \
                    vnode.value == "" and not after.startswith(":"):
                line, col = node.start_mark.line + 1, node.start_mark.column + 1
                return Located("?" + self.masks.unmask(knode.value), line, col)
        return self.convert(node, path)


def _scalar(tag: str, value: str) -> Any:
    # YAML 1.2 core schema, as the framework reads it (see specs/yaml12.py)
    if tag == PLAIN_TAG:
        return plain_value(value)
    return tagged_value(tag, value)

