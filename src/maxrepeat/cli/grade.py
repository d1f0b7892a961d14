"""``maxrepeat grade``: grade trajectory files with max-repeat graders and report.

Exit codes: 0 every result passed; 1 at least one failed; 2 at least one error (bad config
or flags, unreadable or malformed input, grader error). Errors take precedence.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ..core.errors import ConfigError
from .color import color_option, wants_color
from .options import (
    EXIT_CODES_HELP,
    configs_from_flags,
    count_type,
    die,
    grader_options,
    inline_given,
    say,
    write,
)
from .outputhelp import DEFAULT_OUTPUT, DerivedHelp, output_file_help, output_help

# Modules needed only on some paths (YAML, eval specs, engines) are imported where they
# are used: start-up time is measured (bench/RESULTS.md).
if TYPE_CHECKING:
    from ..core.summary import Summary
    from ..engines.grading import Grading
    from ..specs.evalspec import EvalSpec

__all__ = ["grade_cmd"]


def _eval_spec(
    path: str | None, stimulus: str | None, quiet: bool, other_graders: bool
) -> EvalSpec | None:
    if path is None:
        if stimulus is not None:
            die("--stimulus needs --eval-spec FILE")
        return None
    if other_graders:
        die("give one of --eval-spec FILE, --config FILE or the inline grader flags (--max …)")
    from ..specs.evalspec import load_eval_spec

    try:
        spec = load_eval_spec(path)
    except ConfigError as err:
        for problem in err.problems:
            say(str(problem))
        sys.exit(2)
    if stimulus is not None and stimulus not in spec.stimuli:
        die(f"--stimulus must name a stimulus of {path}: one of {', '.join(spec.stimuli)} "
             f"(got {stimulus})")
    if stimulus is not None and not spec.stimuli[stimulus].graders:
        die(f"--stimulus must name a stimulus with a max-repeat grader (got {stimulus})")
    note = spec.skip_note()
    if note is not None and not quiet:
        say(str(note))
    return spec

@click.command("grade", epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, metavar="[PATH|-]...")
@grader_options("fail")
@click.option("-e", "--eval-spec", "eval_spec", metavar="FILE",
              help="An eval spec (stimuli: with graders:): grade each trajectory with the "
                   "max-repeat graders of its stimulus (stimulus.name).")
@click.option("--stimulus", metavar="NAME",
              help="With --eval-spec: use this stimulus's graders for every trajectory.")
@click.option("-o", "--output-format", "--output", "output", default=None, metavar="FORMAT",
              cls=DerivedHelp, derive=output_help)
@click.option("-f", "--input-format", "--format", "fmt", default="auto", metavar="NAME",
              help="The trajectories' format (default: auto-detect; see 'maxrepeat "
                   "formats').")
@color_option()
@click.option("-q", "--quiet", is_flag=True, help="No progress or summary on standard error.")
@click.option("--output-file", "output_file", metavar="FILE", default=None,
              cls=DerivedHelp, derive=output_file_help)
@click.option("-j", "--jobs", type=count_type(1), default=None, metavar="N",
              help="Worker processes (default: the number of cores). Results keep input order.")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local",
              help="local (worker processes here) or ray (a Ray cluster; paths it can read).")
@click.option("--ray-address", metavar="ADDR", default=None,
              help="With --engine ray: the cluster to join (default: RAY_ADDRESS, or a local Ray).")
@click.option("--max-runs", "max_runs", type=count_type(0), default=100, metavar="N",
              show_default=True,
              help="List at most N runs above max per result, those with the most "
                   "occurrences (metadata.runsTotal counts them all); 0 lists all.")
def grade_cmd(
    paths: tuple[str, ...],
    config_file: str | None,
    max_: str | None,
    period: str | None,
    match: str | None,
    tools: tuple[str, ...],
    name: str | None,
    preset: str | None,
    output: str | None,
    fmt: str,
    color_choice: str,
    quiet: bool,
    output_file: str | None,
    jobs: int | None,
    engine: str,
    ray_address: str | None,
    eval_spec: str | None,
    stimulus: str | None,
    max_runs: int,
) -> None:
    """Grade trajectory files (or - for standard input; directories are walked).

    \b
    Examples:
      maxrepeat grade runs/ --config graders.yaml
      maxrepeat grade run.json --max 3 --max-cycle-period 2 --match name-args
      cat run.jsonl | maxrepeat grade - --max 2 --tools '^bash$' --output-format jsonl
      maxrepeat grade 'runs/**/*.jsonl' -j 8 --config graders.yaml -o jsonl > results.jsonl
      maxrepeat grade runs/ --config graders.yaml --output-file report.html
    """
    output = _check_inputs(paths, fmt, output, output_file)
    from ..core.preview import inert
    from ..engines.units import expand_inputs

    # Walked once, here, so that what a walk skipped is said once (engines expand again:
    # a list of files expands to itself).
    given = paths
    paths = tuple(expand_inputs(
        paths, on_skip=lambda msg: click.echo(f"maxrepeat: {inert(msg)}", err=True)))
    inline = inline_given(max_, period, match, tools, name, preset)
    spec = _eval_spec(eval_spec, stimulus, quiet, config_file is not None or inline)
    from ..engines.driver import Graders, SpecGraders

    graders = (SpecGraders(spec, stimulus) if spec is not None else
               Graders(configs_from_flags(config_file, max_, period, match, tools, name,
                                         preset)))
    graders.max_runs = max_runs
    from ..engines.grading import Grading
    from ..reporters import get_reporter

    color = (color_choice == "always" if output_file is not None  # an artifact, not a log
             else wants_color(color_choice, sys.stdout.isatty(), os.environ))
    grading = Grading(paths, graders, get_reporter(output, color), fmt=fmt, engine=engine,
                      jobs=jobs, address=ray_address, quiet=quiet,
                      on_error=None if output == "console" else say)
    sink = _open_output_file(output_file, given) if output_file is not None else None
    summary = _report(grading, sink, output_file, _show_bar(paths, quiet))
    if output != "console" and not quiet:
        from ..reporters.console import summary_text

        click.echo(summary_text(summary).rstrip("\n"), err=True)
    if summary.total == 0 and not summary.interrupted:
        click.echo("maxrepeat: no trajectory found in the inputs", err=True)
        sys.exit(2)
    sys.exit(summary.exit_code)


def _report(grading: Grading, sink: Any, output_file: str | None, bar: bool) -> Summary:
    """Run the batch into standard output or ``sink`` (an `AtomicTextFile`, committed
    whole or discarded); what a signal or a closed pipe ends is handled here."""
    from ..engines.progress import progress_bar
    from . import _gc
    from .sigint import SigintGuard

    _gc.resume()  # the modules are imported: the work starts (cli/_gc.py)
    try:
        with SigintGuard() as guard, progress_bar(bar) as on_unit:
            grading.on_unit = on_unit
            _start(grading, sink)
            # looked up here: the bar shows standard output above itself
            out: Any = sink if sink is not None else sys.stdout
            grading.stream(lambda text: write(out, text), guard.critical)
        out = sink if sink is not None else sys.stdout
        summary = grading.finish(lambda text: write(out, text))
        if sink is not None:
            try:
                sink.commit()
            except OSError as exc:
                die(f"--output-file could not be written (got {output_file}: "
                    f"{exc.strerror or exc}); the previous file is unchanged")
        return summary
    except BrokenPipeError:
        # The reader of our output went away (| head): the report is incomplete, so the
        # run has no verdict (exit 2, never 0 or 1). The workers are killed here; the one
        # line and the exit (at once, past the pool's exit-time join, which can wait for
        # ever) are `maxrepeat.cli.main`'s, whether or not standard error is the same pipe.
        grading.close(kill=True)
        from .group import _CutShort

        raise _CutShort() from None
    except KeyboardInterrupt as stop:  # Ctrl-C, SIGTERM or SIGHUP (cli/sigint.py)
        _interrupted(grading, sink, stop)
    finally:
        if sink is not None:
            sink.discard()  # nothing, after a commit; else no half report is left behind


def _start(grading: Grading, sink: Any) -> None:
    if grading.engine == "ray":
        from .rayengine import start_on_ray

        start_on_ray(grading, sink)
    else:
        grading.start()


def _check_inputs(
    paths: Sequence[str], fmt: str, output: str | None, output_file: str | None
) -> str:
    """Stop on a usage error in the paths, --input-format or --output-format; the output
    format (from --output-format, else the --output-file ending, else console)."""
    from ..readers import is_format, reader_names
    from ..reporters import is_output, output_for, output_names

    if not paths:
        die("give at least one PATH (a file, a directory, or - for standard input)")
    if fmt != "auto" and not is_format(fmt):
        die(f"--input-format must be one of auto, {', '.join(reader_names())} (got {fmt})")
    if output is None and output_file is not None:
        output = output_for(output_file) or "jsonl"
    if output is None:
        # the same report in a terminal, a CI log or `> out.txt`: JSON only when asked for
        output = DEFAULT_OUTPUT
    if not is_output(output):
        die(f"--output-format must be one of {', '.join(output_names())} (got {output})")
    return output


def _show_bar(paths: Sequence[str], quiet: bool) -> bool:
    """A bar for long batches only: several inputs, a directory or glob, or one big file."""
    return (not quiet and sys.stderr.isatty() and "-" not in paths
            and (len(paths) > 1 or not os.path.isfile(paths[0])
                 or os.path.getsize(paths[0]) > 64 * 1024 * 1024))


def _open_output_file(path: str, inputs: Sequence[str]) -> Any:
    from ..reporters._atomic import AtomicTextFile, refusal

    reason = refusal(path, inputs)
    if reason is not None:
        die(f"--output-file must be a regular file or a new path, not an input "
            f"(got {path}: {reason})")
    try:
        return AtomicTextFile(path)
    except OSError as exc:
        die(f"--output-file must be a file in a writable directory (got {path}: "
             f"{exc.strerror or exc})")

def _interrupted(grading: Grading, sink: Any, stop: BaseException) -> NoReturn:
    """Ctrl-C, SIGTERM or SIGHUP: stop the workers now, drop a half-written report file,
    print the summary of the results written so far, exit 128 + the signal's number (130
    for Ctrl-C, as shells do)."""
    import signal

    from .sigint import STOP_SIGNALS, exit_code

    for signum in STOP_SIGNALS:  # a second signal ends the process at once
        signal.signal(signum, signal.SIG_DFL)
    grading.close(kill=True)
    if sink is not None:
        sink.discard()
    from ..reporters.console import summary_text

    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        pass
    click.echo("maxrepeat: interrupted; partial summary of the results written so far:",
               err=True)
    click.echo(summary_text(grading.partial()).rstrip("\n"), err=True)
    if grading.used_pool:
        # The executor registers an exit-time join of its threads, which can wait forever
        # after its workers were killed; everything is written and flushed, so leave now.
        sys.stderr.flush()
        grading.release_ipc()
        os._exit(exit_code(stop))
    sys.exit(exit_code(stop))
