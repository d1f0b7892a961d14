"""The current call's result, as Claude Code's transcript will show it, from the hook input.

When a ``PostToolUse`` / ``PostToolUseFailure`` hook runs, the transcript holds the call
but not its result. In ``observation`` mode the guard needs that result *as the
transcript will record it* (the ``tool_result`` block's ``content``, which is what
``maxrepeat grade`` compares), while the hook input carries the tool's own response
(``tool_response``, the object the transcript keeps as ``toolUseResult``) or, for a
failure, the ``error`` text.

Two sources, best first:

1. **Learned pairs.** Every transcript result record holds both ``toolUseResult`` and the
   ``content`` the model saw. The guard remembers the last `Learned.LIMIT` pairs; when the
   current response equals one seen before, its content is that earlier content, exactly.
   A loop is a repeat, so the pair for the repeated call is always there when it matters.
2. **The rendering Claude Code uses** for the common cases: a failure's content is its
   error text (``Exit code 1``…, without the ``Error:`` prefix the response keeps); a Bash
   result is ``stdout`` and ``stderr`` joined by a newline; a string response is itself.
   Anything else gets a value no earlier result equals (its JSON with a marker), which is
   right whenever the response is new.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import msgspec

from ..core.fingerprints import digest
from ..readers._toolevents import content_text

__all__ = ["Learned", "predicted_result"]

_TAG: Final = re.compile(r"^<tool_use_error>(.*)</tool_use_error>$", re.S)


def _error_key(text: str) -> str:
    text = text.removeprefix("Error: ")
    found = _TAG.match(text)
    return found.group(1) if found else text


# Both sides of a pair come from the same JavaScript value written as JSON twice (the
# hook input's ``tool_response``, the transcript's ``toolUseResult``): its JSON with keys
# sorted is canonical enough, and ~3x cheaper than `canonical_bytes` (a first read learns
# every result of a long transcript).
_ENCODER: Final = msgspec.json.Encoder(order="sorted")


def _key(failed: bool, value: Any) -> bytes | None:
    try:
        if failed:
            if not isinstance(value, str):
                return None
            return digest(b"E" + _error_key(value).encode("utf-8", "surrogatepass"))
        return digest(b"S" + _ENCODER.encode(value))
    except (ValueError, TypeError, RecursionError, msgspec.EncodeError):
        return None


class Learned(msgspec.Struct):
    """Recent (response digest -> transcript content) pairs, oldest first."""

    LIMIT: ClassVar[int] = 256
    pairs: dict[bytes, Any] = msgspec.field(default_factory=dict)

    def learn(self, record: Mapping[str, Any]) -> None:
        """Remember the pair a transcript ``user`` record holds (if it holds one)."""
        if record.get("type") != "user" or "toolUseResult" not in record:
            return
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if len(blocks) != 1:
            return  # which response belongs to which block is not written down
        block = blocks[0]
        failed = block.get("is_error") is True
        response = record["toolUseResult"]
        key = _key(failed, response if not failed or isinstance(response, str)
                   else content_text(block.get("content")))
        if key is None:
            return
        pairs = self.pairs
        pairs.pop(key, None)
        pairs[key] = block.get("content")
        while len(pairs) > self.LIMIT:
            del pairs[next(iter(pairs))]


def predicted_result(payload: Mapping[str, Any], learned: Learned) -> tuple[Any, bool]:
    """(result value, success) of the payload's call, as the transcript will hold it.

    >>> predicted_result({"hook_event_name": "PostToolUseFailure", "error": "Exit code 1"},
    ...                  Learned())
    ('Exit code 1', False)
    >>> predicted_result({"hook_event_name": "PostToolUse",
    ...                   "tool_response": {"stdout": "hi", "stderr": "warn"}}, Learned())
    ('hi\\nwarn', True)
    """
    failed = payload.get("hook_event_name") == "PostToolUseFailure"
    response = payload.get("error") if failed else payload.get("tool_response")
    key = _key(failed, response)
    if key is not None and key in learned.pairs:
        return content_text(learned.pairs[key]), not failed
    if failed:
        return (_error_key(response) if isinstance(response, str) else response), False
    if isinstance(response, str):
        return response, True
    if isinstance(response, dict) and isinstance(response.get("stdout"), str) \
            and isinstance(response.get("stderr", ""), str):
        out, err = response["stdout"], response.get("stderr", "")
        return out + ("\n" if out and err else "") + err, True
    try:
        text = json.dumps(response, sort_keys=True, default=str)
    except (ValueError, TypeError, RecursionError):
        text = repr(response)
    return "\x00maxrepeat: unseen response " + text, True
