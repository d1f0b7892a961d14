"""Reporters: results in, text out. One module per output format.

Each format is a `Reporter` (``reporters.base``): ``add(result, detail)`` returns the
text to write for one result as it arrives (a line, for formats that stream), ``finish(summary)``
the text that ends the report, and ``render(results, summary)`` a whole report at once.

Adding an output is one module here, named after the output, whose ``REPORTER`` is its
`Reporter` class declaring ``name``, ``suffixes``, ``help`` and ``order`` (plus its
tests and its docs page). Nothing else names it: `OUTPUTS`, `output_for` and the
``grade`` command's help are derived by listing this package and reading each module's
``order`` and ``suffixes`` lines from its source, so no reporter is imported before it
is used (``rich`` is loaded only by the console reporter). Outputs of other packages
register under the ``maxrepeat.reporters`` entry-point group (name: the output, value:
``module:Class``); package metadata is read only for a name or a file ending no module
here declares.

>>> output_names()[:3]
['console', 'json', 'jsonl']
>>> output_for("report.xml"), output_for("report.ndjson"), output_for("report.bin")
('junit', 'jsonl', None)
"""

from __future__ import annotations

import ast
import functools
import importlib
import os
import re
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from .base import Reporter

__all__ = ["OUTPUTS", "ENTRY_POINTS", "get_reporter", "output_names", "is_output",
           "output_for", "reporter_class"]

#: the entry-point group of outputs from other packages
ENTRY_POINTS: Final = "maxrepeat.reporters"
_HERE: Final = os.path.dirname(__file__)
#: a class attribute the registry reads from a reporter module's source (one line each)
_ATTRIBUTE: Final = re.compile(r"^    (order|suffixes)(?:: ClassVar\[.*\])? = (.+)$",
                               re.MULTILINE)


def _declared(stem: str) -> tuple[int, str, tuple[str, ...]] | None:
    """(order, name, suffixes) of module ``stem``, read from its source; None when it is
    not an output (no ``REPORTER``). Imported only when its source cannot be read."""
    try:
        with open(os.path.join(_HERE, f"{stem}.py"), encoding="utf-8") as fh:
            text = fh.read()
        named = re.search(r"^REPORTER = (\w+)$", text, re.MULTILINE)
        if named is None:
            return None
        start = text.index(f"\nclass {named.group(1)}(") + 1
        end = re.compile(r"^\S", re.MULTILINE).search(text, text.index("\n", start))
        body = text[start:end.start() if end else len(text)]
        found = {k: ast.literal_eval(v) for k, v in _ATTRIBUTE.findall(body)}
        return found.get("order", 1000), stem, tuple(found.get("suffixes", ()))
    except (OSError, SyntaxError, ValueError):
        cls = getattr(importlib.import_module(f"{__name__}.{stem}"), "REPORTER", None)
        return None if cls is None else (cls.order, stem, cls.suffixes)


@functools.cache
def _table() -> tuple[tuple[int, str, tuple[str, ...]], ...]:
    """The built-in outputs in ``order`` (listed and read once per process)."""
    stems = (f[:-3] for f in os.listdir(_HERE)
             if f.endswith(".py") and not f.startswith("_") and f != "base.py")
    return tuple(sorted(e for e in map(_declared, stems) if e is not None))


@functools.cache
def _plugins() -> dict[str, str]:
    """Outputs of other packages: name -> ``module:attribute``, sorted by name."""
    from importlib.metadata import entry_points

    found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINTS)}
    return dict(sorted((n, v) for n, v in found.items() if n not in _builtin()))


def _builtin() -> dict[str, str]:
    return {name: f"{__name__}.{name}" for _, name, _ in _table()}


def _module(name: str) -> str | None:
    """The module of built-in output ``name`` (its one file read, not the package's)."""
    if name.isidentifier() and not name.startswith("_") and name != "base" \
            and os.path.isfile(os.path.join(_HERE, f"{name}.py")) \
            and _declared(name) is not None:
        return f"{__name__}.{name}"
    return None


def __getattr__(attribute: str) -> Any:
    if attribute == "OUTPUTS":  # derived on first use: the package is listed then
        return _builtin()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


def output_names() -> list[str]:
    """Every output: the built-in ones in ``order``, then other packages' by name."""
    return [*_builtin(), *_plugins()]


def is_output(name: str) -> bool:
    """Whether ``name`` is an output (package metadata read only for a name no module
    here declares)."""
    return _module(name) is not None or name in _plugins()


def reporter_class(name: str) -> type[Reporter]:
    """The `Reporter` class of output ``name``; `ValueError` for an unknown name."""
    where = _module(name) or _plugins().get(name)
    if where is None:
        raise ValueError(f"output must be one of {', '.join(output_names())} (got {name!r})")
    module, _, attribute = where.partition(":")
    cls: type[Reporter] = getattr(importlib.import_module(module), attribute or "REPORTER")
    if getattr(cls, "name", None) != name:
        raise ValueError(f"{where} must be a Reporter class named {name!r}")
    return cls


def get_reporter(name: str, color: bool | None = False) -> Reporter:
    """A new reporter of an output format (``color``: for the console format).

    >>> type(get_reporter("jsonl")).__name__
    'JsonlReporter'
    """
    return reporter_class(name)(color)


def output_for(path: str) -> str | None:
    """The output a report file's ending picks (built-in outputs first), or None."""
    suffix = os.path.splitext(path)[1].lower()
    for _, name, suffixes in _table():
        if suffix in suffixes:
            return name
    for name in _plugins():
        if suffix in reporter_class(name).suffixes:
            return name
    return None
