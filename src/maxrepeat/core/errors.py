"""The exception tree: every error maxrepeat raises on purpose is defined here and
derives from `MaxRepeatError`::

    MaxRepeatError
    ├── ConfigError (ValueError)            a grader config breaks a rule of the spec
    ├── PatternSyntaxError (ValueError)     a tools pattern new RegExp would refuse
    ├── UnsafeMatchError (ValueError)       a tools pattern too costly on one tool name
    ├── TrajectoryFormatError (ValueError)  a trajectory cannot be read
    │   └── CutLastLineError                the last JSONL line is cut off (a crash)
    ├── MalformedValueError (ValueError)    a value in a trajectory is not JSON (bytes, …)
    ├── MissingExtraError (ImportError)     an optional part without its extra
    ├── NotRegularFile (OSError)            a path to read is a FIFO, a directory, a device
    └── LoopStopped                         a live guard stopped the run (each framework's
                                            stop error derives from it and its own error)

Errors carry structured fields (file, position, key path, expectation, found value) so a
caller can act on them without parsing text; ``str(error)`` renders the one message grammar

    <file>:<line>:<col>: <path> must be <expectation> (got <value>)[; hint]

where ``<value>`` names a JSON value's type with `type_name` (``got a number``).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "MaxRepeatError",
    "ConfigError",
    "PatternSyntaxError",
    "UnsafeMatchError",
    "TrajectoryFormatError",
    "CutLastLineError",
    "MalformedValueError",
    "MissingExtraError",
    "NotRegularFile",
    "LoopStopped",
    "type_name",
]


def type_name(value: Any) -> str:
    """How an error message names the JSON type of ``value`` (``a string``, ``null``…):
    the one wording of ``(got …)`` for a value of the wrong type.

    >>> type_name(3), type_name(None), type_name([])
    ('a number', 'null', 'an array')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class MaxRepeatError(Exception):
    """Base of every error maxrepeat raises on purpose.

    >>> import maxrepeat
    >>> try:
    ...     maxrepeat.MaxRepeatConfig(max=0)
    ... except maxrepeat.MaxRepeatError as err:
    ...     print(type(err).__name__, err)
    ConfigError max must be an integer >= 1 (got 0)
    """


def _where(file: str | None, line: int | None, col: int | None) -> str:
    if file is None:
        return ""
    if line is None:
        return f"{file}: "
    if col is None:
        return f"{file}:{line}: "
    return f"{file}:{line}:{col}: "


class ConfigError(MaxRepeatError, ValueError):
    """A grader configuration breaks a rule of the spec (§2).

    >>> e = ConfigError("graders[0].config.max", "an integer >= 1", "0", file="g.yaml", line=4,
    ...                 col=10)
    >>> str(e)
    'g.yaml:4:10: graders[0].config.max must be an integer >= 1 (got 0)'
    """

    def __init__(
        self,
        path: str,
        expectation: str,
        got: str,
        *,
        hint: str | None = None,
        file: str | None = None,
        line: int | None = None,
        col: int | None = None,
    ) -> None:
        self.path = path
        self.expectation = expectation
        self.got = got
        self.hint = hint
        self.file = file
        self.line = line
        self.col = col
        #: every problem found where this one was (a file may have several)
        self.problems: tuple[ConfigError, ...] = (self,)
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The error in the project's one message grammar."""
        text = (f"{_where(self.file, self.line, self.col)}{self.path} must be {self.expectation}"
                f" (got {self.got})")
        if self.hint:
            text += f"; {self.hint}"
        return text

    def __str__(self) -> str:
        return self.message

    def located(self, file: str | None, line: int | None, col: int | None) -> ConfigError:
        """The same problem, placed at a position in a file."""
        return ConfigError(
            self.path, self.expectation, self.got, hint=self.hint, file=file, line=line, col=col
        )


class TrajectoryFormatError(MaxRepeatError, ValueError):
    """A trajectory cannot be read: malformed bytes, or a shape no reader accepts.

    ``position`` is where the fault is, as precise as the format allows: ``line 3, column 7``,
    ``byte 120`` or a key path such as ``events[4].data.toolName``.

    >>> str(TrajectoryFormatError("run.json", "events[2].data.toolName must be a string (got 3)"))
    'run.json: events[2].data.toolName must be a string (got 3)'
    """

    def __init__(
        self,
        source: str | None,
        reason: str,
        *,
        line: int | None = None,
        col: int | None = None,
        position: str | None = None,
    ) -> None:
        self.source = source
        self.reason = reason
        self.line = line
        self.col = col
        self.position = position
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The error with its file and position."""
        where = _where(self.source, self.line, self.col)
        pos = f"{self.position}: " if self.position else ""
        return f"{where}{pos}{self.reason}"

    def __str__(self) -> str:
        return self.message

    @property
    def record(self) -> str | None:
        """Where the unreadable record is: ``file:line`` when the line is known, else the
        file (None when neither is).

        >>> TrajectoryFormatError("runs.jsonl", "not valid JSON", line=3, col=9).record
        'runs.jsonl:3'
        """
        if self.source is not None and self.line is not None:
            return f"{self.source}:{self.line}"
        return self.source

    def with_source(self, source: str, line: int | None = None) -> TrajectoryFormatError:
        """The same fault attributed to a file (and line) the core did not know about."""
        return TrajectoryFormatError(
            source,
            self.reason,
            line=self.line if line is None else line,
            col=self.col,
            position=self.position,
        )


class PatternSyntaxError(MaxRepeatError, ValueError):
    """A pattern that ``new RegExp`` would refuse, with the reason.

    >>> from maxrepeat.core.toolmatch import compile_pattern
    >>> compile_pattern("(?P<n>x)")
    Traceback (most recent call last):
      ...
    maxrepeat.core.errors.PatternSyntaxError: invalid group at offset 1
    """

    def __init__(self, reason: str, offset: int) -> None:
        self.reason = reason
        self.offset = offset
        super().__init__(f"{reason} at offset {offset}")


class UnsafeMatchError(MaxRepeatError, ValueError):
    """A ``tools`` pattern that needs more backtracking than allowed on one tool name.

    >>> UnsafeMatchError("(a)+x", 40, "it needs more than 200,000 backtracking steps").reason
    'it needs more than 200,000 backtracking steps'
    """

    def __init__(self, pattern: str, name_length: int, reason: str) -> None:
        self.pattern = pattern
        self.name_length = name_length
        self.reason = reason
        super().__init__(
            f"tools pattern {pattern!r} cannot be matched safely against a "
            f"{name_length}-character tool name: {self.reason}; patterns without "
            "back-references or lookaround are matched in linear time"
        )


class MalformedValueError(MaxRepeatError, ValueError):
    """A value in a trajectory that is not JSON (bytes, a set, an object) or cannot be
    decoded: the trajectory's fault, reported as ``malformed value in trajectory``.

    >>> from maxrepeat.core.canonical import canonical_bytes
    >>> canonical_bytes({"a": b"x"})
    Traceback (most recent call last):
    ...
    maxrepeat.core.errors.MalformedValueError: bytes is not a JSON value
    """


class CutLastLineError(TrajectoryFormatError):
    """The last line of a JSONL file is cut off (no newline, not valid JSON).

    A session file ends this way when the agent crashed or is still writing. The lines
    before it are a complete, exact prefix of the run, so readers of one-session files
    grade them and report this line as an error; a bad line *inside* the file is a plain
    `TrajectoryFormatError`, and the session is not graded (a gap could invent a loop).
    """


class NotRegularFile(MaxRepeatError, OSError):
    """A path maxrepeat would read is not a regular file (a FIFO, a directory, a device,
    a socket): refused before any read, which could block. ``kind`` says what it is;
    ``errno``, ``strerror`` and ``filename`` are the OSError's.

    >>> err = NotRegularFile(22, "not a regular file (a FIFO)", "state.json")
    >>> err.strerror, err.filename
    ('not a regular file (a FIFO)', 'state.json')
    """

    kind: str = "not a file"


class MissingExtraError(MaxRepeatError, ImportError):
    """An optional part was used without its extra installed.

    >>> print(MissingExtraError("ray", "ray"))
    this needs the optional dependency 'ray': pip install 'maxrepeat[ray]'
    """

    def __init__(self, extra: str, module: str) -> None:
        self.extra = extra
        self.module = module
        super().__init__(
            f"this needs the optional dependency {module!r}: pip install 'maxrepeat[{extra}]'"
        )


class LoopStopped(MaxRepeatError):
    """A live guard stopped the run: the loop went on up to the policy's ``stop_at``.

    Every framework's stop error derives from it and from that framework's own error
    class; ``decision`` is the guard's decision, and ``results`` the graders' results for
    the run so far, equal to ``maxrepeat grade`` of the run's messages.
    """

    def __init__(self, decision: Any) -> None:
        self.decision = decision
        super().__init__(getattr(decision, "message", None)
                         or "maxrepeat loop guard stopped the run")

    @property
    def results(self) -> tuple[Any, ...]:
        """The graders' results (`GraderResult`) for the run so far, the last step included."""
        return tuple(self.decision.results)
