"""Inspect AI logs: ``.eval`` (a zip archive) and the legacy ``.json`` log.

A ``.eval`` holds ``header.json`` (the log without samples; ``_journal/start.json`` while
a run is still going) and one ``samples/<id>_epoch_<n>.json`` per sample and epoch; it is
read one sample at a time with Python 3.14's ``zipfile`` (``backports.zstd`` on 3.11-3.13,
a dependency of the core): Inspect writes its members with zstd (zip method 93) by default
since 0.3.206, which older ``zipfile`` cannot inflate. A member that cannot be read (bad
data, encrypted, an unknown method) is an error in place of its sample; the other samples
are still graded. A ``.json`` log is one
``EvalLog`` object with ``samples[]``.

One trajectory per sample and epoch, with id ``<task>/<sample id>/epoch<n>`` (``task`` from
``eval.task``).

What marks a model response (one turn): each ``role: assistant`` message of the sample's
``messages``. Its ``tool_calls`` are the calls (``function``, ``id``, ``arguments`` — already
an object, decoded if a string). ``role: tool`` messages answer by ``tool_call_id``; the
result is the ``content`` (a content list becomes its text; when it is empty and the tool
failed, the error message the model was shown), and an ``error`` object becomes
``success: false``. Large strings stored as ``attachment://<hash>`` are replaced by the
sample's ``attachments`` entry before anything is compared.
"""

from __future__ import annotations

import os
import sys
import zlib
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any, Final

from ..core.errors import TrajectoryFormatError
from . import Item, Reader, Source
from ._chat import first_char, has_key, load_document
from ._inspect_messages import (
    FORMAT,
    events_from_messages,
    trajectory_from_messages,
    trajectory_from_sample,
)
from ._json import decode
from ._toolevents import type_name

__all__ = ["READER", "trajectory_from_sample", "trajectory_from_messages", "events_from_messages"]

#: a literal: the registry reads it without importing this module (readers/_declared.py)
NAME = "inspect"
assert NAME == FORMAT  # the name the trajectories of `_inspect_messages` carry
_ZIP_MAGIC: Final = b"PK\x03\x04"


def _task(log: Any) -> str:
    spec = log.get("eval") if isinstance(log, Mapping) else None
    task = spec.get("task") if isinstance(spec, Mapping) else None
    return task if isinstance(task, str) else "task"


def _read_json(source: Source) -> Iterator[Item]:
    try:
        log, lenient = load_document(source)
    except TrajectoryFormatError as err:
        yield err
        return
    samples = log.get("samples") if isinstance(log, Mapping) else None
    if not isinstance(samples, list):
        if isinstance(log, Mapping) and "samples" not in log and "eval" in log:
            return  # a log written without samples (header only): no trajectories
        yield TrajectoryFormatError(
            source.name, f"must be an array (got {type_name(samples)})", position="samples")
        return
    task = _task(log)
    for i, sample in enumerate(samples):
        try:
            yield trajectory_from_sample(sample, task, source=f"{source.name}[{i}]",
                                         lenient=lenient, path=f"samples[{i}]")
        except TrajectoryFormatError as err:
            yield err


def _number_key(text: str) -> tuple[int, str] | None:
    """A sort key putting ASCII digit strings in numeric order without ``int()`` (which
    refuses more than 4,300 digits and reads ``²`` as a digit it cannot convert)."""
    if text.isascii() and text.isdigit():
        digits = text.lstrip("0") or "0"
        return len(digits), digits
    return None


def _sample_key(name: str) -> tuple[int, tuple[int, str], str, tuple[int, str]]:
    # samples/<id>_epoch_<n>.json: numeric ids in numeric order, then by epoch
    stem = name[len("samples/"):-len(".json")]
    sid, _, epoch = stem.rpartition("_epoch_")
    sid_key, epoch_key = _number_key(sid), _number_key(epoch)
    if sid_key is not None and epoch_key is not None:
        return 0, sid_key, "", epoch_key
    return 1, (0, ""), stem, (0, "")


def _zipfile() -> ModuleType:
    """The ``zipfile`` that reads zstd members (Python >= 3.14, else the backport)."""
    if sys.version_info >= (3, 14):
        import zipfile
    else:
        from backports.zstd import zipfile
    return zipfile


def _read_eval(source: Source) -> Iterator[Item]:
    zipfile = _zipfile()  # only .eval logs need it; detection imports every reader

    # what a damaged member raises while it is read: zlib.error and the zstd error for
    # corrupt data, NotImplementedError for an unknown method, RuntimeError for an
    # encrypted member, ValueError for a bad header field
    member_faults = (zipfile.BadZipFile, EOFError, OSError, zlib.error, NotImplementedError,
                     RuntimeError, ValueError, _zstd_error())
    try:
        with source.open() as fh, zipfile.ZipFile(fh) as archive:
            names = archive.namelist()
            task = "task"
            for header in ("header.json", "_journal/start.json"):
                if header in names:
                    try:
                        data = _member(archive, header, source.name, member_faults)
                        task = _task(decode(data, f"{source.name}!{header}")[0])
                    except TrajectoryFormatError as err:
                        yield err
                    break
            samples = sorted((n for n in names if n.startswith("samples/")
                              and n.endswith(".json")), key=_sample_key)
            for name in samples:
                member = f"{source.name}!{name}"
                try:
                    value, lenient = decode(
                        _member(archive, name, source.name, member_faults), member)
                    yield trajectory_from_sample(value, task, source=member, lenient=lenient)
                except TrajectoryFormatError as err:
                    yield err
    except (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError, ValueError) as exc:
        yield TrajectoryFormatError(
            source.name, f"not a readable .eval zip archive (truncated or corrupt?): {exc}",
            position=f"byte {_size(source)} (end of file)")


#: Default for the most bytes one member may inflate to (``MAXREPEAT_MAX_EVAL_MEMBER``
#: overrides): far above real samples, far below what a small crafted archive can expand to.
MAX_MEMBER_BYTES: Final = 256 * 1024 * 1024


def max_member_bytes() -> int:
    """The inflated size limit of one ``.eval`` member, in bytes.

    >>> max_member_bytes() > 0
    True
    """
    try:
        value = int(os.environ.get("MAXREPEAT_MAX_EVAL_MEMBER", ""))
    except ValueError:
        return MAX_MEMBER_BYTES
    return value if value > 0 else MAX_MEMBER_BYTES


def _member(archive: Any, name: str, path: str, faults: tuple[type[BaseException], ...]
            ) -> bytes:
    """The bytes of one member, inflated in chunks and never beyond `max_member_bytes`;
    `TrajectoryFormatError` naming it when they cannot be read."""
    limit = max_member_bytes()
    chunks: list[bytes] = []
    size = 0
    try:
        with archive.open(name) as stream:
            while chunk := stream.read(1 << 20):
                size += len(chunk)
                if size > limit:
                    raise TrajectoryFormatError(
                        f"{path}!{name}", f"zip member must inflate to at most {limit:,} "
                        "bytes (got more: a zip bomb, or set MAXREPEAT_MAX_EVAL_MEMBER)")
                chunks.append(chunk)
    except TrajectoryFormatError:
        raise
    except faults as exc:
        raise TrajectoryFormatError(f"{path}!{name}", f"cannot read zip member: {exc}"
                                    ) from None
    return b"".join(chunks)


def _zstd_error() -> type[Exception]:
    if sys.version_info >= (3, 14):
        from compression.zstd import ZstdError
    else:
        from backports.zstd import ZstdError
    return ZstdError


def _size(source: Source) -> int:
    with source.open() as fh:
        return fh.seek(0, 2)


def _read(source: Source) -> Iterator[Item]:
    if source.head.startswith(_ZIP_MAGIC):
        yield from _read_eval(source)
    else:
        yield from _read_json(source)


def _sniff(head: bytes, source: Source) -> int:
    if head.startswith(_ZIP_MAGIC):
        if source.suffix == ".eval":
            return 95
        return 85 if (b"_journal/" in head or b"header.json" in head or b"samples/" in head) \
            else 0
    if first_char(head) != b"{":
        return 0
    if has_key(head, "eval", b"{") and has_key(head, "task") and (
            has_key(head, "run_id") or has_key(head, "eval_id") or has_key(head, "task_id")):
        return 90
    return 0


READER = Reader(
    name=NAME,
    description="Inspect AI logs: .eval (zip) and legacy .json; one trajectory per sample "
    "and epoch",
    extensions=(".eval", ".json"),
    markers=(b'PK\x03\x04', b'"eval"'),
    top=95,
    order=200,
    sniff=_sniff,
    read=_read,
)
