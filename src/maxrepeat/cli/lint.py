"""``maxrepeat lint``, ``schema`` and ``formats``: the commands that read no trajectory."""

from __future__ import annotations

import sys

import click

__all__ = ["lint_cmd", "schema_cmd", "formats_cmd"]

@click.command("lint", epilog="Exit codes: 0 every file is clean; 1 problems found; 2 usage error.")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False),
                metavar="FILE...")
@click.option("--against", "against", multiple=True,
              type=click.Path(exists=True, dir_okay=False), metavar="TRAJECTORY",
              help="A real trajectory file to try the graders on: near-duplicate settings "
                   "that make all of its steps equal are a problem (repeatable).")
def lint_cmd(files: tuple[str, ...], against: tuple[str, ...]) -> None:
    """Check config files against every rule of the spec; print each problem as
    FILE:LINE:COL: PATH must be EXPECTATION (got VALUE)[; hint]. Eval specs (a stimuli:
    list) are accepted too: only their max-repeat entries are checked."""
    from ..core.preview import inert
    from ..specs.lint import lint as lint_file

    runs = []
    if against:
        from ..readers import read_trajectories

        runs = [t for path in against for t in read_trajectories(path)]
    count = 0
    for path in files:
        for problem in lint_file(path, runs):
            count += 1
            click.echo(inert(str(problem)))  # no raw control from a key name
    if count:
        click.echo(f"{count} problem{'s' if count != 1 else ''} found in "
                   f"{len(files)} file{'s' if len(files) != 1 else ''}", err=True)
        sys.exit(1)
    click.echo(f"{len(files)} file{'s' if len(files) != 1 else ''} clean", err=True)

@click.command("schema")
def schema_cmd() -> None:
    """Print the JSON Schema (draft 2020-12) of the config file, for editors.

    \b
    Example (yaml-language-server):
      maxrepeat schema > maxrepeat.schema.json
      # first line of graders.yaml:
      # yaml-language-server: $schema=./maxrepeat.schema.json
    """
    import json

    from ..specs.schema import config_schema

    click.echo(json.dumps(config_schema(), indent=2))

@click.command("formats")
def formats_cmd() -> None:
    """List the input formats, one line each (name, then what it reads).

    \b
    Example:
      maxrepeat formats
      maxrepeat grade session.jsonl --input-format codex --max 3
    """
    from ..readers import all_readers

    readers = all_readers()
    width = max(len(r.name) for r in readers)
    for reader in readers:
        click.echo(f"{reader.name:<{width}}  {reader.description}")
