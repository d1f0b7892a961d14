"""What the monitor keeps of a call or a result when it arrives: digests and previews,
never the values themselves (the same helpers `grade()` uses, so the same bytes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ..canonical import MalformedValueError, canonical_bytes, decode_value, is_empty
from ..fingerprints import digest, name_bytes
from ..preview import call_preview, json_preview
from ..steps import MISSING
from .state import Answer, Call

if TYPE_CHECKING:  # built by the tracker, only for near-duplicate settings
    from ..near.matching import Transform

__all__ = ["TOO_DEEP", "reduce_call", "reduce_answer"]

TOO_DEEP: Final = "a value in the trajectory is nested too deeply to compare"


def reduce_call(index: int, name: str, cid: str | None, arguments: Any, match: str,
                transform: Transform | None = None) -> Call:
    """A watched call as the monitor keeps it (``transform``: the near-duplicate settings,
    applied in event order). Raises `RecursionError`, `ValueError` or `TypeError` for a
    value that cannot be compared (as `grade()` would)."""
    nb = name_bytes(name)
    if match == "name":
        return Call(index, name, cid, call_preview(name, None, MISSING, "name"), nb)
    value = decode_value(arguments)
    head = call_preview(name, value, MISSING, "name-args")
    if match == "name-args":
        if transform is not None:
            value = transform.arguments(name, value)
        return Call(index, name, cid, head, digest(nb + canonical_bytes(value)))
    return Call(index, name, cid, head, nb)


def reduce_answer(value: Any, transform: Transform | None = None) -> Answer:
    """The first result of a call id as the monitor keeps it (an error entry when the
    value cannot be compared: using it makes the grade an error). The preview shows the
    value as it was; the key is of the value after ``transform``, if any."""
    try:
        value = decode_value(value)
        preview = json_preview(value)
        if transform is not None:
            value = transform.value(value)
        key = None if is_empty(value) else digest(canonical_bytes(value))
        return Answer(key, preview)
    except RecursionError:
        return Answer(None, "…", TOO_DEEP)
    except MalformedValueError as exc:
        return Answer(None, "…", f"malformed value in trajectory: {exc}")
    except Exception as exc:  # a bug, named as one (the monitor never raises on input)
        from ..grade import internal_error

        return Answer(None, "…", internal_error(exc))
