"""PyYAML's pure-Python loader with YAML 1.2's flow-collection rules (issue 31, Y7).

PyYAML's scanner follows YAML 1.1 inside ``[...]`` and ``{...}``: every ``?`` is an
explicit key and every ``:`` a value indicator, and a value cannot follow an empty key.
YAML 1.2, and npm `yaml` (the framework's reader), read ``?x`` and ``:x`` there as text
(also after a tag or an anchor, or as a mapping's value), ``?`` and ``:`` as indicators
only before a space or a flow indicator (or ``:`` right after a quoted key), and ``[:]``
as ``[{"": null}]``. `FlowLoader` is used only for a text the C loader refused
(``specs/located.py``), so a config that PyYAML reads costs what it did.

>>> import yaml
>>> node = yaml.compose("[:, !!str ?x, {a: ?y}]", Loader=FlowLoader)
>>> [type(n).__name__ for n in node.value], node.value[1].value, node.value[2].value[0][1].value
(['MappingNode', 'ScalarNode', 'MappingNode'], '?x', '?y')
"""

from __future__ import annotations

import re
from typing import Any, Final

import yaml
from yaml.tokens import KeyToken, ScalarToken

from .yaml12 import PlainScalars, RedefinableAnchors

__all__ = ["FlowLoader"]

_SPACE: Final = "\0 \t\r\n\x85\u2028\u2029"
_FLOW: Final = ",[]{}"
_PAIR: Final = re.compile("[\ud800-\udbff][\udc00-\udfff]")


_Base: Any = yaml.SafeLoader


class FlowLoader(RedefinableAnchors, PlainScalars, _Base):  # type: ignore[misc]
    """The safe loader, unquoted scalars left unresolved (`PLAIN_TAG`), flow rules of 1.2."""

    def check_key(self) -> bool:
        """``?`` is a key indicator before a space (or, in flow, a flow indicator)."""
        after = self.peek(1)
        return bool(after in _SPACE or (self.flow_level and after in _FLOW))

    def check_value(self) -> bool:
        """``:`` is a value indicator before a space or, in flow, a flow indicator, or
        right after a JSON-like key (quoted, or a flow collection: ``{"a":b}``)."""
        after = self.peek(1)
        if not self.flow_level:
            return bool(after in _SPACE)
        before = self.buffer[self.pointer - 1] if self.pointer else ""
        return bool(after in _SPACE + _FLOW or (before and before in "\"']}"))

    def check_plain(self) -> bool:
        """``?x``, ``:x`` and ``-x`` start text in flow collections too."""
        ch, after = self.peek(), self.peek(1)
        if ch not in _SPACE + "-?:" + _FLOW + "#&*!|>'\"%@`":
            return True
        return bool(ch in "-?:" and after not in _SPACE and
                    (not self.flow_level or after not in _FLOW))

    def fetch_value(self) -> None:
        """A ``:`` where a flow entry starts has an empty key (``[: x]``)."""
        if self.flow_level and self.flow_level not in self.possible_simple_keys \
                and self.allow_simple_key:
            mark = self.get_mark()
            self.tokens.append(KeyToken(mark, mark))
        super().fetch_value()

    def scan_flow_scalar(self, style: Any) -> Any:
        """A quoted scalar, its UTF-16 surrogate escapes joined (``"\\uD83D\\uDE00"``)."""
        token = super().scan_flow_scalar(style)
        token.value = _PAIR.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass")
                                .decode("utf-16-le"), token.value)
        return token

    def scan_plain(self) -> Any:
        """PyYAML's plain scanner, with ``?`` allowed inside a flow collection's text."""
        chunks: list[str] = []
        start_mark = end_mark = self.get_mark()
        indent = self.indent + 1
        spaces: Any = []
        while True:
            length = 0
            if self.peek() == "#":
                break
            while True:
                ch = self.peek(length)
                if ch in _SPACE or (ch == ":" and self.peek(length + 1) in
                                    _SPACE + (_FLOW if self.flow_level else "")) \
                        or (self.flow_level and ch in _FLOW):
                    break
                length += 1
            if length == 0:
                break
            self.allow_simple_key = False
            chunks.extend(spaces)
            chunks.append(self.prefix(length))
            self.forward(length)
            end_mark = self.get_mark()
            spaces = self.scan_plain_spaces(indent, start_mark)
            if not spaces or self.peek() == "#" or (not self.flow_level and self.column < indent):
                break
        return ScalarToken("".join(chunks), True, start_mark, end_mark)
