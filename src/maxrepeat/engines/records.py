"""Plain functions for data engines: grade one record, or a batch of records, to result dicts.

Spark, Dask, Ray or a plain ``multiprocessing.Pool`` can map these: they take and return
only plain, picklable values, build nothing at import beyond what ``maxrepeat`` itself
builds, and need no optional dependency.

A record is a trajectory in any of the shapes a row or a JSONL line takes: a dict in the
trajectory JSON shape (or carrying it under ``trajectory``), a `Trajectory`, or JSON text
or bytes of one such object. Each record gives one result dict (spec §5,
`GraderResult.to_dict`) per config; a record that cannot be read gives ``error`` results,
never an exception.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.config import MaxRepeatConfig
from ..core.errors import TrajectoryFormatError, type_name
from ..core.events import Trajectory, trajectory_from_dict
from .driver import Graders, grade_item

__all__ = ["grade_record", "grade_batch", "as_configs"]

ConfigLike = MaxRepeatConfig | Mapping[str, Any]
Configs = ConfigLike | Sequence[ConfigLike]


def as_configs(configs: Configs) -> tuple[MaxRepeatConfig, ...]:
    """Configs from one config or many, each a `MaxRepeatConfig` or its ``config:`` mapping
    (a ``name`` key names it).

    >>> [c.max for c in as_configs({"max": 3})]
    [3]
    """
    items: Sequence[ConfigLike] = (
        [configs] if isinstance(configs, (MaxRepeatConfig, Mapping)) else configs
    )
    out = []
    for item in items:
        if isinstance(item, MaxRepeatConfig):
            out.append(item)
        else:
            raw = dict(item)
            name = raw.pop("name", None)
            out.append(MaxRepeatConfig.from_mapping(raw, name=name))
    return tuple(out)


def _plain(value: Any) -> Any:
    # Columnar engines hand nested lists back as numpy arrays; the grader wants JSON values.
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    tolist = getattr(value, "tolist", None)
    if tolist is not None and not isinstance(value, (str, bytes)):
        return _plain(tolist())
    return value


def _trajectory(record: Any, source: str) -> Trajectory:
    if isinstance(record, Trajectory):
        return record
    if isinstance(record, (str, bytes, bytearray, memoryview)):
        from ..readers.vally import read_one

        data = record.encode("utf-8", "surrogatepass") if isinstance(record, str) else bytes(record)
        return read_one(data, source)
    if isinstance(record, Mapping):
        return trajectory_from_dict(_plain(record), source=source)
    raise TrajectoryFormatError(
        source, f"a record must be a trajectory object or JSON text (got {type_name(record)})"
    )


def _grade(record: Any, graders: Graders, source: str) -> list[dict[str, Any]]:
    try:
        item: Trajectory | TrajectoryFormatError = _trajectory(record, source)
    except TrajectoryFormatError as err:
        item = err
    return [r.to_dict() for r in grade_item(item, graders, source).results]


def grade_record(record: Any, configs: Configs, *, source: str = "<record>"
                 ) -> list[dict[str, Any]]:
    """The result dicts (one per config) for one record; ``source`` names a record that has
    no ``id``.

    >>> rows = grade_record('{"id": "r1", "events": []}', {"max": 2})
    >>> rows[0]["trajectory"], rows[0]["passed"]
    ('r1', True)
    """
    return _grade(record, Graders(as_configs(configs)), source)


def grade_batch(
    records: Iterable[Any], configs: Configs, *, source: str = "<record>"
) -> list[dict[str, Any]]:
    """The result dicts of many records, in order (each record's results together); record
    ``i`` without an ``id`` is named ``source[i]``.

    >>> rows = grade_batch([{"events": []}, '{"id": "b", "events": []}'], {"max": 1})
    >>> [r["trajectory"] for r in rows]
    ['<record>[0]', 'b']
    """
    graders = Graders(as_configs(configs))
    out: list[dict[str, Any]] = []
    for i, record in enumerate(records):
        out.extend(_grade(record, graders, f"{source}[{i}]"))
    return out
