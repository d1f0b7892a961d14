"""What a coding agent wraps around a tool's output, taken off again.

Three agents add text of their own to every shell result they log, and some of it changes
on every call even when the command and its output do not: ``observation`` matching
("same tool, same output") would then never see a repeat. Each function below knows one
agent's wrapper, in the exact form that agent's code writes it, and removes only the part
that is the agent's: the rule is anchored where the agent puts its text, so the same words
printed by the command itself stay. The reader of each agent's log and the live guard's
reading of the hook input both call the same function, so ``maxrepeat grade`` and the hook
judge the same observation. A value that is not in the agent's format is returned as it is.

Codex's ``exec_command`` header (``Chunk ID:``, ``Wall time:``) is dropped by the
``codex`` reader itself (`readers.codex.exec_output`).
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["copilot_cli_content", "copilot_cli_result", "gemini_cli_result",
           "claude_code_result"]

# -- GitHub Copilot CLI -----------------------------------------------------------------

#: The lines Copilot CLI's shell tools end a command's result with, each naming the
#: shell (group ``id``, taken out with the words around it, group ``cut``): the command
#: finished (the pattern Copilot's own terminal view uses to find and hide that line:
#: ``<shellId: 3 completed with exit code 2>``, ``<detached command with shellId: …>``),
#: it is still running when the call returns, or it was started detached.
_COPILOT_SHELL_LINES: Final = (
    re.compile(r"<(?:detached command (?=with))?"
               r"(?P<cut>(?:(?<=<detached command )with )?shellId: (?P<id>[^\r\n]+) )"
               r"completed with exit code -?\d+>[ \t]*\r?"),
    re.compile(r"<command (?P<cut>with shellId: (?P<id>[^\r\n]+?) )is still running after "
               r"\d+ seconds\.[^\r\n]*>[ \t]*\r?"),
    re.compile(r"<command started in detached background(?P<cut> with shellId: (?P<id>[^\r\n]+?))"
               r"\. You will be automatically notified when it completes\.>[ \t]*\r?"),
)
#: notices Copilot CLI may write after that line (its view skips them to find it)
_COPILOT_NOTICES: Final = ("<sandbox is active ",
                           "<this failure may be caused by the active sandbox policy.",
                           "<This command was retried outside the Copilot sandbox with user "
                           "approval and still failed.")


#: how Copilot CLI appends a ``postToolUse`` hook's ``additionalContext`` to a result
_COPILOT_GUIDANCE: Final = re.compile(
    r'\n\nTool "[^"\n]+" succeeded\. Additional guidance from [A-Za-z]+ hooks:\n')


def copilot_cli_content(content: Any, detailed: Any) -> Any:
    """A Copilot CLI result's ``content`` without the guidance a hook added to it.

    After a ``postToolUse`` hook answers with ``additionalContext``, Copilot CLI logs the
    result as the tool's text (kept alone in ``detailedContent``) followed by
    ``Tool "NAME" succeeded. Additional guidance from postToolUse hooks:`` and the hook's
    text. That is the hook's output, not the tool's: it is dropped when ``content`` is
    exactly ``detailedContent`` followed by it.

    >>> copilot_cli_content('ok\\n\\nTool "bash" succeeded. Additional guidance from '
    ...                     'postToolUse hooks:\\nslow down', "ok")
    'ok'
    >>> copilot_cli_content("ok, more", "ok")
    'ok, more'
    """
    if (isinstance(content, str) and isinstance(detailed, str) and content != detailed
            and content.startswith(detailed)
            and _COPILOT_GUIDANCE.match(content, len(detailed))):
        return detailed
    return content


def copilot_cli_result(value: Any) -> Any:
    """A Copilot CLI tool result without the shell's id in its closing line (the command
    completed, is still running, or was started detached).

    The shell id counts the shells of the session (a new one for every command), so two
    runs of the same command never had the same result. The line is the last one that is
    not blank, or the last before the sandbox notices Copilot puts after it; it keeps the
    exit code it reports, which is the command's.

    >>> copilot_cli_result("hi\\n<shellId: 7 completed with exit code 0>")
    'hi\\n<completed with exit code 0>'
    >>> copilot_cli_result("<command with shellId: 2 is still running after 30 seconds.>")
    '<command is still running after 30 seconds.>'
    >>> copilot_cli_result("<shellId: 7 completed with exit code 0>\\nprinted by the tool")
    '<shellId: 7 completed with exit code 0>\\nprinted by the tool'
    """
    if not isinstance(value, str) or "shellId: " not in value:
        return value
    lines = value.split("\n")
    at = len(lines) - 1
    while at >= 0 and (not lines[at] or lines[at].startswith(_COPILOT_NOTICES)):
        at -= 1
    if at < 0:
        return value
    for pattern in _COPILOT_SHELL_LINES:
        found = pattern.fullmatch(lines[at])
        if found is not None:
            line = lines[at]
            lines[at] = line[:found.start("cut")] + line[found.end("cut"):]
            return "\n".join(lines)
    return value


# -- Gemini CLI -------------------------------------------------------------------------

#: Gemini CLI's shell tool
GEMINI_SHELL: Final = "run_shell_command"
_UNTRUSTED_OPEN: Final = "<untrusted_context>\n"
_UNTRUSTED_CLOSE: Final = "\n</untrusted_context>"
#: the sections the shell tool's result starts with (``Command:`` in older releases)
_GEMINI_FIRST: Final = ("Output: ", "Command: ")
#: how Gemini CLI appends an ``AfterTool`` hook's ``additionalContext`` to a result (it
#: writes the context's ``<`` and ``>`` as ``&lt;`` and ``&gt;``, so none is inside)
_GEMINI_HOOK_CONTEXT: Final = re.compile(r"\n\n<hook_context>[^<>]*</hook_context>\Z")
#: the lines of process ids Gemini CLI writes after the command's sections, in this
#: order, last in the result
_GEMINI_PGID: Final = re.compile(r"Process Group PGID: (?:\d+|\(none\))")
_GEMINI_BACKGROUND_PIDS: Final = re.compile(r"Background PIDs: (?:\d+(?:, \d+)*|\(none\))")


#: the shell tool's answers for a command it leaves running, each naming the process id:
#: what stays around the id
_GEMINI_BACKGROUND: Final = (
    re.compile(r"(Command moved to background) \(PID: \d+\)"
               r"(\. Output hidden\. Press Ctrl\+B to view\.)\Z"),
    re.compile(r"(Command is running in background\.) PID: \d+\.( Initial output:\n)"),
)


def gemini_cli_result(tool: str | None, value: Any) -> Any:
    """A Gemini CLI result without what Gemini CLI adds to it: a hook's context (any
    tool), and the process ids of a ``run_shell_command`` result: its ``Background
    PIDs:`` and ``Process Group PGID:`` lines.

    An ``AfterTool`` hook's ``additionalContext`` is appended to the result as
    ``<hook_context>…</hook_context>`` after a blank line; it is the hook's output, not
    the tool's.

    The result is ``Output: …`` followed by ``Error:``, ``Exit Code:`` and ``Signal:``
    lines when they apply, then those two (in recent releases, 0.61.0, inside an
    ``<untrusted_context>`` wrapper, which stays: it is the same on every call). The
    process ids are new on every run of a command. A command left running in the
    background is answered with its process id instead (``Command moved to background
    (PID: 77). Output hidden. …``, ``Command is running in background. PID: 77. Initial
    output:``): the id goes.

    >>> gemini_cli_result("run_shell_command", "Output: hi\\nExit Code: 1\\n"
    ...                   "Process Group PGID: 4242")
    'Output: hi\\nExit Code: 1'
    >>> gemini_cli_result("read_file", "Output: hi\\nProcess Group PGID: 4242")
    'Output: hi\\nProcess Group PGID: 4242'
    >>> gemini_cli_result("read_file", "text\\n\\n<hook_context>slow down</hook_context>")
    'text'
    """
    if not isinstance(value, str):
        return value
    if value.endswith("</hook_context>"):
        context = _GEMINI_HOOK_CONTEXT.search(value)
        if context is not None:
            value = value[:context.start()]
    if tool != GEMINI_SHELL:
        return value
    wrapped = value.startswith(_UNTRUSTED_OPEN) and value.endswith(_UNTRUSTED_CLOSE)
    body = value[len(_UNTRUSTED_OPEN):-len(_UNTRUSTED_CLOSE)] if wrapped else value
    kept = _gemini_shell_text(body)
    if kept is None:
        return value
    return f"{_UNTRUSTED_OPEN}{kept}{_UNTRUSTED_CLOSE}" if wrapped else kept


def _gemini_shell_text(body: str) -> str | None:
    """A shell result (unwrapped) without its process ids; None when it names none."""
    if body.startswith(_GEMINI_FIRST):
        end = len(body)
        for line in (_GEMINI_PGID, _GEMINI_BACKGROUND_PIDS):
            start = body.rfind("\n", 0, end)
            if start >= 0 and line.fullmatch(body, start + 1, end):
                end = start
        return body[:end] if end < len(body) else None
    for pattern in _GEMINI_BACKGROUND:
        found = pattern.match(body)
        if found is not None:
            return f"{found.group(1)}{found.group(2)}{body[found.end():]}"
    return None


# -- Claude Code ------------------------------------------------------------------------

#: the notice Claude Code's Bash tool appends to the command's stderr when the command
#: left the project's folders and Claude Code moved the shell back: the last line of
#: stderr, as Claude Code's own view finds it to take it off (its pattern's ``.`` stops
#: at these line ends too)
_CWD_RESET: Final = re.compile(r"Shell cwd was reset to [^\n\r\u2028\u2029]+")


def claude_code_result(value: Any, response: Any) -> Any:
    """A Claude Code result without the ``Shell cwd was reset to …`` line, when the
    tool's response (the transcript's ``toolUseResult``, the hook input's
    ``tool_response``) says Claude Code wrote it: it ends the response's ``stderr``.

    The result the model read is the output and the stderr joined by a newline, so the
    notice is the result's last line; a result that is nothing but the notice keeps it
    (there is no output to separate it from).

    >>> claude_code_result("/tmp\\nShell cwd was reset to /w",
    ...                    {"stdout": "/tmp", "stderr": "\\nShell cwd was reset to /w"})
    '/tmp'
    >>> claude_code_result("/tmp\\nShell cwd was reset to /w", {"stdout": "/tmp\\n"
    ...                    "Shell cwd was reset to /w", "stderr": ""})
    '/tmp\\nShell cwd was reset to /w'
    """
    if not isinstance(value, str) or not isinstance(response, dict):
        return value
    stderr = response.get("stderr")
    if not isinstance(stderr, str):
        return value
    notice = stderr[stderr.rfind("\n") + 1:]  # the pattern's match is stderr's last line
    if _CWD_RESET.fullmatch(notice) is None:
        return value
    tail = "\n" + notice
    return value[:-len(tail)] if value.endswith(tail) else value
