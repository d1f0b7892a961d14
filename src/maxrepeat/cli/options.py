"""The flags and helpers every ``maxrepeat`` command shares: one grader given inline or a
config file, and the one way a command stops on a usage error (exit 2).

Click is imported by the functions that use it, not here: an agent hook call reads its
grader flags with `inline_config` without click (cli/hookrun.py)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any, Final, NoReturn, TypeVar

from ..core.config import MaxRepeatConfig
from ..core.configrules import MATCH_MODES, check_config
from ..core.errors import ConfigError

__all__ = ["EXIT_CODES_HELP", "die", "say", "inline_config", "inline_given",
           "configs_from_flags", "grader_options", "write"]

EXIT_CODES_HELP = (
    "Exit codes: 0 every result passed; 1 at least one failed; "
    "2 at least one error (bad config, unreadable or malformed input, grader error). "
    "Errors take precedence over failures. 130: interrupted (Ctrl-C)."
)


def say(message: str) -> None:
    """One line on standard error, with every control, format and separator character of
    a file name, key or value escaped: no terminal escape, carriage return, bell or bidi
    override from an input reaches the screen (issue 18, finding 13)."""
    import click

    from ..core.preview import inert

    click.echo(f"maxrepeat: {inert(message)}", err=True)


def die(message: str) -> NoReturn:
    say(message)
    sys.exit(2)

class _Digits(str):
    """A flag value that is an integer of more digits than Python converts (4,300):
    the rules report it as such instead of as ``inf``."""

    def __repr__(self) -> str:
        return f"a {len(self.lstrip('+-'))}-digit number"


#: a flag's number as ASCII text: an integer, or a decimal one (its sign kept, so that
#: the rules can say what is wrong with ``-3``); no underscores, spaces or other scripts
_INTEGER: Final = re.compile(r"[+-]?[0-9]+")
_DECIMAL: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def count(text: str) -> int | None:
    """A flag's count (``-j``, ``--max-runs``, ``--warn-at`` …): ASCII digits only, else
    None. Python's ``int`` would also take ``1_0``, `` 3 `` and full-width ``３``.

    >>> count("007"), count("1_0"), count("\uff13"), count("-1")
    (7, None, None, None)
    """
    return int(text) if text.isascii() and text.isdigit() else None


def _number(text: str | None) -> Any:
    """A flag's number as written (``--max``, ``--max-cycle-period``): ASCII digits only
    (`_INTEGER`, `_DECIMAL`); anything else, ``1_0`` or ``３`` included, stays text and is
    refused by the rules as such; a huge integer is kept as text."""
    if text is None:
        return None
    if _INTEGER.fullmatch(text):
        return _Digits(text) if len(text.lstrip("+-")) > 4000 else int(text)
    if _DECIMAL.fullmatch(text):
        return float(text)
    return text


def count_type(least: int) -> Any:
    """The click type of a count flag of at least ``least`` (read by `count`)."""
    import click

    class Count(click.ParamType):  # type: ignore[type-arg, unused-ignore]  # click 8.5+
        name = "integer"

        def convert(self, value: Any, param: Any, ctx: Any) -> int:
            if isinstance(value, int) and not isinstance(value, bool):
                number: int | None = value  # a default
            else:
                number = count(str(value))
            if number is None or number < least:
                self.fail(f"must be a whole number of at least {least} in ASCII digits "
                          f"(got {value!r})", param, ctx)
            return number

    return Count()


_FLAG_OF = {"max": "--max", "max_cycle_period": "--max-cycle-period", "match": "--match",
            "tools": "--tools"}

def inline_config(
    max_: str | None,
    period: str | None,
    match: str | None,
    tools: Sequence[str],
    name: str | None,
    preset: str | None = None,
) -> MaxRepeatConfig:
    """A grader from the inline flags (over ``preset``'s keys, when one is named),
    checked by the same rules as a config file."""
    raw: dict[str, Any] = {"max": _number(max_)} if max_ is not None else {}
    if period is not None:
        raw["max_cycle_period"] = _number(period)
    if match is not None:
        raw["match"] = match
    if tools:
        raw["tools"] = list(tools)
    if preset is not None:
        from ..core.presets import PRESET_NAMES, preset_mapping

        if preset not in PRESET_NAMES:
            raise ConfigError("--preset", f"one of {', '.join(PRESET_NAMES)}", preset)
        raw = preset_mapping(preset, raw)
        if "max" not in raw:
            raise ConfigError("--max", f"given with --preset {preset}", "nothing",
                              hint=f"the {preset} preset has no max of its own")
    problems = check_config(raw)
    if problems:
        err = problems[0][0]
        head, _, rest = err.path.partition("[")
        flag = _FLAG_OF.get(head, head) + (f"[{rest}" if rest else "")
        raise ConfigError(flag, err.expectation, err.got, hint=err.hint)
    return MaxRepeatConfig.from_mapping(raw, name=name)


def inline_given(max_: str | None, period: str | None, match: str | None,
                 tools: Sequence[str], name: str | None, preset: str | None) -> bool:
    """Whether any inline grader flag (or ``--preset``) was given."""
    return any(v is not None for v in (max_, period, match, name, preset)) or bool(tools)

def configs_from_flags(
    config_file: str | None,
    max_: str | None,
    period: str | None,
    match: str | None,
    tools: Sequence[str],
    name: str | None,
    preset: str | None = None,
) -> list[MaxRepeatConfig]:
    inline = inline_given(max_, period, match, tools, name, preset)
    if config_file is not None and inline:
        die("give either --config FILE or the inline grader flags (--max, --preset …), "
            "not both")
    if config_file is not None:
        from ..specs.configfile import load_config

        try:
            return load_config(config_file)
        except ConfigError as err:
            for problem in err.problems:
                say(str(problem))
            sys.exit(2)
    if not inline:
        die("no grader: give --config FILE, --preset live, or --max N (with optional "
            "--max-cycle-period, --match, --tools)")
    if max_ is None and preset is None:
        die("--max must be given with the inline grader flags (got nothing)")
    try:
        return [inline_config(max_, period, match, tools, name, preset)]
    except ConfigError as err:
        die(str(err))

def write(stream: IO[str], text: str) -> None:
    if text:
        stream.write(text)
        stream.flush()

F = TypeVar("F", bound=Callable[..., Any])

def grader_options(verb: str, preset_help: str | None = None) -> Callable[[F], F]:
    """The grader flags shared by ``grade`` and ``hook``: ``--config FILE``, or one grader
    given inline (``--max N`` and friends, checked by `inline_config`)."""
    import click

    options = [
        click.option("-c", "--config", "config_file", metavar="FILE",
                     help="YAML file with a graders: list of max-repeat graders."),
        click.option("--max", "max_", metavar="N",
                     help=f"Inline grader: {verb} above N occurrences."),
        click.option("--max-cycle-period", "period", metavar="P",
                     help="Inline grader: longest cycle period to detect (1-10, default 1)."),
        click.option("--match", metavar="MODE",
                     help="Inline grader: what counts as the same action "
                     f"({', '.join(MATCH_MODES)}; default observation)."),
        click.option("--tools", multiple=True, metavar="REGEX",
                     help="Inline grader: watch only tools matching REGEX "
                     "(repeatable; unanchored)."),
        click.option("--name", metavar="NAME", help="Inline grader: display name."),
        click.option("--preset", metavar="NAME",
                     help=preset_help or "Inline grader: start from a named setting "
                     "(live: the live guards' default, see docs/configuration.md; "
                     "seed: the seed's defaults); the flags above replace its keys."),
    ]

    def apply(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return apply
