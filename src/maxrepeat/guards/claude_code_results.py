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
   result is ``stdout`` (leading blank lines and trailing white space off) and the trimmed
   ``stderr`` joined by a newline, or ``(Bash completed with no output)``; a string
   response is itself.

Whichever source gives it, the ``Shell cwd was reset to …`` line Claude Code appends to a
Bash command's stderr then comes off, as the ``claude-code`` reader takes it off the
transcript's result (`readers._agent_chrome.claude_code_result`).
3. **Learned templates.** A tool whose response is an object and whose content is a
   sentence naming some of its fields (Edit: *"The file {filePath} has been updated
   successfully."*, Write: *"File created successfully at: {filePath}"*): each pair
   teaches the content with the response's long string fields cut out, per response
   shape (its keys and flag values); the last template renders a new response of that
   shape when its literal text is a short sentence, or when the pair before agreed.
   On the corpus's Claude Code sessions this predicts 273 results, none wrongly. Without it, two
   edits of one file answered alike, which ``maxrepeat grade`` counts as a repeat in
   ``observation`` mode, were never told live
   (found replaying real sessions, ``docs/robustness.md``).

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
from ..readers._agent_chrome import claude_code_result
from ..readers._toolevents import content_text

__all__ = ["Learned", "predicted_result"]

_TAG: Final = re.compile(r"^<tool_use_error>(.*)</tool_use_error>$", re.S)
_LEADING_BLANK_LINES: Final = re.compile(r"^(?:\s*\n)+")


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


#: A template whose literal text is at most this long is used from one pair (a sentence
#: around the fields); a longer one (a snippet of the file, search results: text of that
#: one call) only once the next pair of its shape agrees.
_SHORT: Final = 200
#: Response fields shorter than this are not cut out of a template (a short value such
#: as ``"text"`` or ``"update"`` is found in too many sentences by chance).
_FIELD_MIN: Final = 8


def _shape(failed: bool, response: Any) -> bytes | None:
    """The shape of an object response: its keys and the values of its flags."""
    if failed or not isinstance(response, dict) or not response:
        return None
    flags = {k: v for k, v in response.items() if v is None or isinstance(v, bool)}
    try:
        return digest(b"T" + _ENCODER.encode([sorted(response), flags]))
    except (ValueError, TypeError, RecursionError, msgspec.EncodeError):
        return None


def _template(response: dict[str, Any], text: str) -> list[str] | None:
    """``text`` split at the response's long string fields: literals at even places,
    field names at odd ones (None: no field in it).

    >>> _template({"filePath": "/w/a.py", "oldString": "x = 1"}, "The file /w/a.py is ok")
    >>> _template({"filePath": "/w/src/a.py"}, "The file /w/src/a.py is ok")
    ['The file ', 'filePath', ' is ok']
    """
    parts = [text]
    fields = sorted(((k, v) for k, v in response.items()
                     if isinstance(v, str) and len(v) >= _FIELD_MIN),
                    key=lambda kv: (-len(kv[1]), kv[0]))
    for name, value in fields:
        out: list[str] = []
        for i, part in enumerate(parts):
            if i % 2:
                out.append(part)
                continue
            for j, seg in enumerate(part.split(value)):
                if j:
                    out.append(name)
                out.append(seg)
        parts = out
    return parts if len(parts) > 1 else None


def _render(parts: list[str], response: dict[str, Any]) -> str | None:
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            value = response.get(part)
            if not isinstance(value, str):
                return None
            out.append(value)
        else:
            out.append(part)
    return "".join(out)


def _shell_content(tool: Any, stdout: str, stderr: str) -> str:
    """The content Claude Code writes for a shell's output: the output without the blank
    lines that start it and the white space that ends it, then the trimmed stderr; for
    neither, the sentence saying the tool printed nothing.

    >>> _shell_content("Bash", "\\n\\nhi\\n", "\\nwarn\\n"), _shell_content("Bash", "", " ")
    ('hi\\nwarn', '(Bash completed with no output)')
    """
    out = _LEADING_BLANK_LINES.sub("", stdout).rstrip()
    text = "\n".join(part for part in (out, stderr.strip()) if part)
    return text if text.strip() else f"({tool if isinstance(tool, str) else 'Bash'} " \
        "completed with no output)"


class Learned(msgspec.Struct):
    """Recent (response digest -> transcript content) pairs, oldest first; and per
    response shape the last template seen, with whether the pair before agreed."""

    LIMIT: ClassVar[int] = 256
    pairs: dict[bytes, Any] = msgspec.field(default_factory=dict)
    templates: dict[bytes, tuple[list[str], bool]] = msgspec.field(default_factory=dict)

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
        shape = _shape(failed, response)
        text = content_text(block.get("content"))
        if shape is None or not isinstance(text, str):
            return
        templates = self.templates
        before = templates.pop(shape, None)
        parts = _template(response, text)
        if parts is not None:
            templates[shape] = (parts, before is not None and before[0] == parts)
            while len(templates) > self.LIMIT:
                del templates[next(iter(templates))]


def predicted_result(payload: Mapping[str, Any], learned: Learned) -> tuple[Any, bool]:
    """(result value, success) of the payload's call, as the transcript will hold it.

    >>> predicted_result({"hook_event_name": "PostToolUseFailure", "error": "Exit code 1"},
    ...                  Learned())
    ('Exit code 1', False)
    >>> predicted_result({"hook_event_name": "PostToolUse",
    ...                   "tool_response": {"stdout": "hi", "stderr": "warn"}}, Learned())
    ('hi\\nwarn', True)
    >>> predicted_result({"hook_event_name": "PostToolUse", "tool_response": {
    ...     "stdout": "/tmp", "stderr": "\\nShell cwd was reset to /w"}}, Learned())
    ('/tmp', True)
    """
    failed = payload.get("hook_event_name") == "PostToolUseFailure"
    response = payload.get("error") if failed else payload.get("tool_response")
    value, ok = _transcript_content(payload, learned, failed, response)
    # what Claude Code added to the tool's output comes off as the reader takes it off
    return claude_code_result(value, response), ok


def _transcript_content(payload: Mapping[str, Any], learned: Learned, failed: bool,
                        response: Any) -> tuple[Any, bool]:
    key = _key(failed, response)
    if key is not None and key in learned.pairs:
        return content_text(learned.pairs[key]), not failed
    if failed:
        return (_error_key(response) if isinstance(response, str) else response), False
    if isinstance(response, str):
        return response, True
    if isinstance(response, dict) and isinstance(response.get("stdout"), str) \
            and isinstance(response.get("stderr", ""), str):
        return _shell_content(payload.get("tool_name"), response["stdout"],
                              response.get("stderr", "")), True
    shape = _shape(failed, response)
    known = learned.templates.get(shape) if shape is not None else None
    if known is not None and isinstance(response, dict) and (
            known[1] or sum(map(len, known[0][::2])) <= _SHORT):
        rendered = _render(known[0], response)
        if rendered is not None:
            return rendered, True
    try:
        text = json.dumps(response, sort_keys=True, default=str)
    except (ValueError, TypeError, RecursionError):
        text = repr(response)
    return "\x00maxrepeat: unseen response " + text, True
