"""Ray Data integration (the ``ray`` extra: ``pip install 'maxrepeat[ray]'``).

`grade_dataset` grades a Ray Dataset of trajectories and returns a Dataset of results, one
row per trajectory and grader, each row the result dict of spec §5
(`GraderResult.to_dict`)::

    import ray, maxrepeat.engines.ray
    ray.init(address="ray://head.example.internal:10001")   # or ray.init() for a local Ray
    lines = ray.data.read_text("s3://bucket/rollouts/*.jsonl", include_paths=True)
    results = maxrepeat.engines.ray.grade_dataset(lines, {"max": 3, "max_cycle_period": 2})
    results.write_json("s3://bucket/grades/")

Rows may hold a trajectory dict (``trajectory`` or the row itself when it has
``events``), JSON text of one trajectory (``text``, as `ray.data.read_text` gives one JSONL
line per row), or any column named by ``column``. `grade_paths_on_ray` is what
``maxrepeat grade --engine ray`` uses: files the cluster can read, graded as the local
engine's units, results streamed back in input order.

Functions shipped to workers are module-level (importable by name, so picklable) and take
only plain values; decoders are built inside the worker when it imports ``maxrepeat``.
The workers need ``maxrepeat`` installed (or a ``runtime_env`` that installs it).
"""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

from ..core.errors import MissingExtraError
from .driver import Detail, Graded, Graders
from .records import Configs, _grade, as_configs

__all__ = ["grade_dataset", "grade_paths_on_ray", "init", "connect_timeout", "CONNECT_TIMEOUT"]


def _ray() -> Any:
    try:
        import ray
        import ray.data  # the data extra: ray[data]
    except ImportError:
        raise MissingExtraError("ray", "ray[data]") from None
    return ray


#: Seconds to wait for a Ray cluster to accept the connection (``MAXREPEAT_RAY_TIMEOUT``
#: overrides): an unreachable or silent address is an error after this, never a hang.
CONNECT_TIMEOUT: Final = 30.0


def connect_timeout() -> float:
    """The connection timeout in seconds (``MAXREPEAT_RAY_TIMEOUT``, else 30).

    >>> connect_timeout() > 0
    True
    """
    try:
        value = float(os.environ.get("MAXREPEAT_RAY_TIMEOUT", ""))
    except ValueError:
        return CONNECT_TIMEOUT
    return value if value > 0 else CONNECT_TIMEOUT


def _host_port(address: str) -> tuple[str, int] | None:
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rstrip("/").rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _probe(address: str, timeout: float) -> None:
    """Fail at once (refused) or within ``timeout`` (unreachable) when nothing listens."""
    import socket

    target = _host_port(address)
    if target is None:
        return  # let Ray say what it makes of the address
    try:
        socket.create_connection(target, timeout=timeout).close()
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise ConnectionError(
            f"cannot connect to Ray at {address}: {reason} (waited up to {timeout:g} s; "
            "MAXREPEAT_RAY_TIMEOUT sets the wait)") from None


class _NotMainThread(logging.Filter):
    """Drops Ray's note that a driver started off the main thread has no SIGTERM handler
    (we connect in a helper thread to bound the wait; the CLI handles its signals)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in record.getMessage()


def init(address: str | None = None, *, quiet: bool = False,
         timeout: float | None = None) -> Any:
    """Connect to the Ray cluster at ``address`` (else ``RAY_ADDRESS``, else start a local
    Ray) unless this process is already connected; returns the ``ray`` module.

    A cluster address must answer within ``timeout`` seconds (`connect_timeout`):
    otherwise, or when Ray refuses it, `ConnectionError` with one line saying why.
    ``quiet`` keeps Ray's own log lines and progress bars off standard error.
    """
    ray = _ray()
    if ray.is_initialized():
        return ray
    target = address or os.environ.get("RAY_ADDRESS") or None
    # Ray's informational lines ("Connecting to existing Ray cluster ...") are not ours to
    # print; its warnings are, unless quiet
    options: dict[str, Any] = {"ignore_reinit_error": True, "log_to_driver": False,
                               "logging_level": logging.ERROR if quiet else logging.WARNING}
    if target in (None, "local", "auto"):
        ray.init(address=target, **options)
    else:
        assert target is not None
        limit = timeout if timeout is not None else connect_timeout()
        _probe(target, limit)
        _connect_bounded(ray, target, options, limit)
    if quiet:
        _silence(ray)
    return ray


def _silence(ray: Any) -> None:
    """No Ray log lines or progress bars on standard error (``--quiet``)."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    for name in ("ray", "ray.data", "ray.data._internal.execution.streaming_executor"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _connect_bounded(ray: Any, target: str, options: dict[str, Any], limit: float) -> None:
    import threading

    outcome: list[BaseException | None] = []

    def connect() -> None:
        try:
            ray.init(address=target, **options)
            outcome.append(None)
        except BaseException as exc:  # handed to the caller's thread below
            outcome.append(exc)

    logging.getLogger("ray._private.worker").addFilter(_NotMainThread())
    thread = threading.Thread(target=connect, name="maxrepeat-ray-connect", daemon=True)
    thread.start()
    thread.join(limit)
    if not outcome:
        raise ConnectionError(
            f"cannot connect to Ray at {target}: no answer within {limit:g} s "
            "(MAXREPEAT_RAY_TIMEOUT sets the wait)")
    error = outcome[0]
    if error is not None:
        lines = str(error).strip().splitlines() or [type(error).__name__]
        raise ConnectionError(f"cannot connect to Ray at {target}: {lines[0]}") from None


def _record_of(row: dict[str, Any], column: str | None) -> Any:
    if column is not None:
        return row[column]
    for key in ("text", "item"):
        if key in row:
            return row[key]
    if "events" not in row and "trajectory" in row and len(row) == 1:
        return row["trajectory"]
    return row


def _grade_row(row: dict[str, Any], graders: Graders, column: str | None) -> list[dict[str, Any]]:
    record = _record_of(row, column)
    if isinstance(record, (str, bytes)) and not record.strip():
        return []  # blank JSONL lines are not records
    source = row.get("path") if isinstance(row.get("path"), str) else "<row>"
    return _grade(record, graders, str(source))


def grade_dataset(dataset: Any, configs: Configs, *, column: str | None = None) -> Any:
    """A Dataset of result dicts (one row per record and config) for a Dataset of records.

    ``configs`` is a `MaxRepeatConfig`, a ``config:`` mapping, or a list of either.
    Nothing runs until the returned Dataset is consumed (Ray Data is lazy).

    >>> import ray, maxrepeat.engines.ray                                   # doctest: +SKIP
    >>> ds = ray.data.from_items([{"text": '{"id": "r", "events": []}'}])  # doctest: +SKIP
    >>> maxrepeat.engines.ray.grade_dataset(ds, {"max": 2}).take(1)[0]["passed"]  # doctest: +SKIP
    True
    """
    _ray()
    graders = Graders(as_configs(configs))
    return dataset.flat_map(_grade_row, fn_kwargs={"graders": graders, "column": column})


def _grade_unit_row(
    row: dict[str, Any], graders: Graders, fmt: str, detail: Detail | None
) -> dict[str, Any]:
    from .unitgrader import grade_unit

    outcome = grade_unit(pickle.loads(row["unit"]), graders, fmt, detail)
    return {"seq": row["seq"], "outcome": pickle.dumps(outcome)}


def grade_paths_on_ray(
    paths: Sequence[str],
    graders: Graders,
    fmt: str = "auto",
    *,
    address: str | None = None,
    on_error: Callable[[str], None] | None = None,
    detail: Detail | None = None,
    quiet: bool = False,
) -> Iterator[Graded]:
    """Grade files on a Ray cluster (the paths must be readable there): one `Graded`
    value per trajectory or unreadable input, in input order (like
    `BatchGrader.graded`). Raises `MissingExtraError` at once when Ray is not installed,
    `ConnectionError` when the cluster cannot be reached (see `init`)."""
    ray = init(address, quiet=quiet)
    from .unitgrader import grade_unit
    from .units import expand_inputs, plan_units

    units = list(plan_units(expand_inputs(paths), fmt, split=True))
    kwargs = {"graders": graders, "fmt": fmt, "detail": detail}

    def results() -> Iterator[Graded]:
        from .unitgrader import UnitOutcome

        remote = [(i, u) for i, u in enumerate(units) if u.paths != ("-",)]
        ready: dict[int, UnitOutcome] = {}
        rows: Iterator[dict[str, Any]] = iter(())
        if remote:
            ctx = ray.data.DataContext.get_current()
            ctx.execution_options.preserve_order = True
            ds = ray.data.from_items([{"seq": i, "unit": pickle.dumps(u)} for i, u in remote])
            rows = iter(ds.map(_grade_unit_row, fn_kwargs=kwargs).iter_rows())
        for seq, unit in enumerate(units):
            if unit.paths == ("-",):
                outcome = grade_unit(unit, graders, fmt, detail)
            else:
                while seq not in ready:
                    row = next(rows)
                    ready[int(row["seq"])] = pickle.loads(row["outcome"])
                outcome = ready.pop(seq)
            for graded in outcome.graded:
                if graded.error is not None and on_error is not None:
                    on_error(graded.error)
                yield graded

    return results()
