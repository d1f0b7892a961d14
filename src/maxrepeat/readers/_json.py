"""JSON helpers shared by the readers: strict fast decoding, lenient retry, fault positions.

msgspec decodes first (fast, strict). When it refuses the bytes, the standard library
tries: it accepts ``NaN``/``Infinity`` and lone surrogate escapes, and such a trajectory is
marked as read leniently. When both refuse, the error names the file, line and column.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any, Final, TypeVar

import msgspec

from ..core.canonical import float_literal, json_int
from ..core.errors import CutLastLineError, TrajectoryFormatError

__all__ = [
    "BOM",
    "strip_bom",
    "decode",
    "decode_typed",
    "iter_lines",
    "first_json_char",
    "looks_like_jsonl",
    "JSON_DECODER",
    "CutLastLineError",
    "decode_line",
    "first_jsonl_record",
]

BOM: Final = b"\xef\xbb\xbf"
_TOO_DEEP: Final = "not readable: JSON nested too deeply (more levels than the decoder allows)"
T = TypeVar("T")


#: Untyped decoder; integral floats become ints (deep equality: 1.0 == 1).
class _Decoder:
    """msgspec's decoder, except for integers past 64 bits, which it refuses: those are
    read by the standard library (numbers of more than 4,300 digits included, as the
    doubles JavaScript makes of them; issue 18), and so is a text holding a lone
    surrogate (an ``arguments`` string read from ``"\\ud800"``: msgspec cannot encode
    it; the value keeps it, as the readers keep a file's own ``\\ud800``, issue 30).
    Failures stay ``msgspec.DecodeError``."""

    _fast: Final = msgspec.json.Decoder(float_hook=float_literal)

    def decode(self, data: str | bytes | bytearray | memoryview) -> Any:
        try:
            return self._fast.decode(data)
        except msgspec.ValidationError as err:
            if "out of range" not in str(err):
                raise
        except UnicodeEncodeError:
            pass  # a text with a lone surrogate (not UTF-8): kept, as a file's escape is
        try:
            text = data if isinstance(data, str) else bytes(data).decode("utf-8")
            return json.loads(text, parse_float=float_literal, parse_int=json_int)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise msgspec.DecodeError(str(exc)) from None


JSON_DECODER: Final = _Decoder()


def strip_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte order mark."""
    return data[3:] if data.startswith(BOM) else data


def _position(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    return line, offset - start + 1


def _located(source: str, reason: str, line: int | None, col: int | None = None
             ) -> TrajectoryFormatError:
    """The error at ``line``; a JSONL record is named ``file:line`` already, and its
    position must read ``file:3:40``, not ``file:3:3:40``."""
    if line is not None and source.endswith(f":{line}"):
        source = source[: -len(f":{line}")]
    return TrajectoryFormatError(source, reason, line=line, col=col)


def _fault(data: bytes, source: str, line0: int) -> TrajectoryFormatError:
    """The error for bytes neither decoder accepts, with its line and column."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _position(data, exc.start)
        return _located(source, f"not UTF-8: invalid byte 0x{data[exc.start]:02x}",
                        line + line0, col)
    # Trailing whitespace never makes JSON valid; without it a cut-off record is reported
    # where its content ends, not on the line after its newline.
    text = text.rstrip()
    try:
        json.loads(text, parse_int=json_int)
    except json.JSONDecodeError as exc:
        msg = exc.msg
        if exc.pos >= len(text) or msg.startswith("Unterminated string"):
            msg = f"{msg} (the input ends early: truncated?)"
        return _located(source, f"not valid JSON: {msg}", exc.lineno + line0, exc.colno)
    except RecursionError:
        return _located(source, _TOO_DEEP, line0 + 1)
    return _located(source, "not valid JSON", line0 + 1)


def decode(data: bytes, source: str, *, line0: int = 0) -> tuple[Any, bool]:
    """(value, lenient) for JSON bytes; raises `TrajectoryFormatError` with a position.

    ``line0`` is added to line numbers (the line a JSONL record starts on, minus one).
    """
    data = strip_bom(data)
    try:
        return JSON_DECODER.decode(data), False
    except msgspec.DecodeError:
        pass
    except RecursionError:
        raise _located(source, _TOO_DEEP, line0 + 1 if line0 else None) from None
    try:
        text = data.decode("utf-8")
        value = json.loads(text, parse_float=float_literal, parse_int=json_int)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise _fault(data, source, line0) from None
    return value, True


def decode_typed(data: bytes, type_: type[T], source: str, *, line0: int = 0) -> T | None:
    """Fast typed decode; None when the bytes are valid JSON of another shape or need
    leniency (the caller then falls back to `decode`). Raises for bytes that are not JSON
    only through `decode`."""
    try:
        return msgspec.json.decode(strip_bom(data), type=type_)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None


def iter_lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of each non-blank line, streamed."""
    for n, line in enumerate(stream, 1):
        if n == 1:
            line = strip_bom(line)
        if line.strip():
            yield n, line


def first_json_char(head: bytes) -> bytes:
    """The first non-whitespace byte (after a BOM), or ``b""``."""
    stripped = strip_bom(head).lstrip()
    return stripped[:1]


def first_jsonl_record(head: bytes) -> Any:
    """The first record of JSONL ``head`` (decoded), or None when it is not JSONL.

    >>> first_jsonl_record(b'{"a": 1}\\n{"a": 2}\\n')
    {'a': 1}
    """
    if not looks_like_jsonl(head):
        return None
    return JSON_DECODER.decode(strip_bom(head).lstrip().split(b"\n", 1)[0])


def looks_like_jsonl(head: bytes) -> bool:
    """Whether the first line is a complete JSON object followed by more lines."""
    body = strip_bom(head).lstrip()
    if not body.startswith(b"{"):
        return False
    nl = body.find(b"\n")
    if nl < 0:
        return False
    try:
        value = JSON_DECODER.decode(body[:nl])
    except (msgspec.DecodeError, RecursionError):
        return False
    return isinstance(value, dict)


def decode_line(line: bytes, source: str, number: int) -> tuple[Any, bool]:
    """(value, lenient) of one JSONL line; `CutLastLineError` for an unterminated last line
    that does not parse, `TrajectoryFormatError` for any other bad line."""
    try:
        return decode(line.rstrip(b"\r\n"), source, line0=number - 1)
    except TrajectoryFormatError as err:
        if line.endswith(b"\n"):
            raise
        raise CutLastLineError(err.source, err.reason, line=err.line, col=err.col,
                               position=err.position) from None
