"""Reading and writing text files on K ranks without copying them around.

* :func:`read_row_part` (data- and voting-parallel): rank r reads only its part of
  the file's bytes, cut at line boundaries, so every line belongs to exactly one
  rank and no rank reads the whole file; a file with queries is cut at query
  boundaries instead (:mod:`dgbdt.io.querycuts`), so every query is on one rank.
  Gzip cannot be cut by byte range: rank 0 decompresses it and scatters the parts
  (or the user pre-partitions).
* :func:`read_column_block` (feature-parallel): every rank reads every row but
  keeps only its own block of columns.
* :func:`write_parts_in_order`: each rank writes its lines at its offset of one
  temporary file, which rank 0 renames: the output is in input order and never
  half-written.

Errors a rank finds in its part (a malformed line, a missing file) are agreed
after each local step, so every rank stops with that message and none is left
waiting in a collective.  Line numbers in messages count from the file's start.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from ..data.inputs import scipy_sparse
from ..distributed.comm import agree_on_errors, agreed
from ..files import publish, temp_beside
from .errors import DataFormatError
from .filebytes import (
    count_lines,
    is_gzip,
    line_start_in,
    part_bounds,
    read_file_bytes,
    read_head,
    read_header_line,
    whole_lines,
)
from .querycuts import Layout, Part, check_queries_contiguous, query_cuts, query_mode
from .reading import parse_text, read_data, sniff_format
from .sidefiles import read_query_file, read_side_files
from .values import LoadedData

if TYPE_CHECKING:
    from _typeshed import StrPath

    from ..distributed.comm import SerialComm

_T = TypeVar("_T")


def run_agreed(comm: SerialComm, step: Callable[[], _T]) -> _T:
    """Run ``step()`` on this rank; every rank raises if any rank's step raised."""
    result: _T | None = None
    error: BaseException | None = None
    try:
        result = step()
    except (OSError, ValueError) as exc:  # DataFormatError is a ValueError
        error = exc
    agree_on_errors(comm, error)
    return cast("_T", result)  # step() returned: agree_on_errors raises otherwise


def _exclusive_sum(comm: SerialComm, value: int) -> tuple[int, int]:
    """(sum of ``value`` on the ranks before this one, sum over all ranks)."""
    every = comm.per_rank(value)
    return int(every[: comm.rank].sum()), int(every.sum())


def read_row_part(path: StrPath, comm: SerialComm, options: Mapping[str, Any]) -> LoadedData:
    """This rank's rows of ``path`` (a :class:`dgbdt.io.LoadedData`).

    ``options``: keyword arguments of :func:`dgbdt.io.read_data` (header,
    label_column, weight_column, group_column, ignore_columns, zero_based, fmt,
    side_files, features_only).
    Side files (``.weight``, ``.init``, ``.position``) are sliced to this rank's rows.
    A file with queries (a ``.query`` file, a group column or LibSVM ``qid:``
    fields; not when ``features_only``) is cut at query boundaries so that each
    query is whole on one rank (:mod:`dgbdt.io.querycuts`); the rank then gets the
    sizes of its own queries (``group``; an empty array without rows) and, with
    ids, their ``query_ids``.
    """
    path = os.fspath(path)
    options = dict(options)
    fmt = options.pop("fmt", "auto")
    side_files = options.pop("side_files", True)

    def local_read() -> tuple[Layout, bytes | None, bytes, int]:
        found_fmt, sep = sniff_format(path, fmt, options.get("header", False))
        gzipped = is_gzip(path)
        whole = read_file_bytes(path) if gzipped and comm.rank == 0 else None
        start, end = (0, 0) if gzipped else part_bounds(path, comm.rank, comm.size)
        return Layout(path, found_fmt, sep, options), whole, _read_bytes(path, start, end), start

    layout, whole, data, start = run_agreed(comm, local_read)
    gzipped = comm.any_rank(whole is not None)
    if gzipped:
        data, start, mode = _gzip_share(comm, layout, whole, side_files)
        del whole
    else:
        part = Part(layout, data, start, comm.rank)
        del data
        data, start, mode = _plain_share(comm, layout, part, side_files)
        del part
    out, first_line = _parse_share(comm, layout, data, start)
    del data
    _agree_on_width(comm, out, layout.fmt, path)
    row_offset, n_total = _exclusive_sum(comm, out.X.shape[0])
    if mode == "ids":
        run_agreed(comm, lambda: _own_queries(out, layout, first_line))
    if side_files:
        last = comm.rank == comm.size - 1 if mode == "file" else None
        run_agreed(comm, lambda: read_side_files(path, out, row_offset, n_total, last))
    if mode == "ids":
        assert out.query_ids is not None  # set by the parse, or by _own_queries
        check_queries_contiguous(comm, out.query_ids, path)
    return out


def _read_bytes(path: str, start: int, end: int) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(start)
        return fh.read(end - start)


def _bytes_between(path: str, lo: int, hi: int, part: Part) -> bytes:
    """Bytes ``[lo, hi)`` of the file ``path``, taken from ``part`` where it holds them."""
    held_lo, held_hi = part.start, part.start + len(part.data)
    a, b = max(lo, held_lo), min(hi, held_hi)
    if a >= b:
        return _read_bytes(path, lo, hi)
    return b"".join(
        (
            _read_bytes(path, lo, a) if lo < a else b"",
            part.data[a - held_lo : b - held_lo],
            _read_bytes(path, b, hi) if b < hi else b"",
        )
    )


def _plain_share(
    comm: SerialComm, layout: Layout, part: Part, side_files: bool
) -> tuple[bytes, int, str | None]:
    """``(bytes, file offset, query mode)`` of this rank's range of a plain file:
    its even byte part, moved to query boundaries when the file has queries."""
    qid_rows = run_agreed(comm, part.has_qid_rows)
    mode = query_mode(layout, qid_rows, side_files, comm.any_rank)
    if mode is None or comm.size == 1:
        return part.data, part.start, mode
    sizes = run_agreed(comm, lambda: _query_sizes(layout.path)) if mode == "file" else None

    def gather(fn: Callable[[Part], Any]) -> np.ndarray:
        return comm.allgather(np.asarray(run_agreed(comm, lambda: fn(part)), np.int64))

    size = run_agreed(comm, lambda: os.path.getsize(layout.path))
    try:
        cuts = query_cuts(gather, mode, size, layout.path, sizes)
    except DataFormatError as exc:  # decided alike on every rank from gathered numbers
        raise agreed(exc) from None
    lo, hi = int(cuts[comm.rank]), int(cuts[comm.rank + 1])
    return run_agreed(comm, lambda: _bytes_between(layout.path, lo, hi, part)), lo, mode


def _query_sizes(path: str) -> np.ndarray:
    sizes = read_query_file(path)
    if sizes is None:
        raise DataFormatError(f"{path}.query: not found on this rank (other ranks read it)")
    return sizes


def _gzip_share(
    comm: SerialComm, layout: Layout, whole: bytes | None, side_files: bool
) -> tuple[bytes, int, str | None]:
    """``(bytes, file offset, query mode)`` of this rank's range of a gzip file, which
    rank 0 decompressed (``whole``; None on the other ranks), cut into ranges and scatters."""
    k, root = comm.size, comm.rank == 0
    data = b"" if whole is None else whole  # rank 0's bytes (the others use none)
    qid_rows = run_agreed(comm, lambda: root and Part(layout, data, 0, 0).has_qid_rows())
    mode = query_mode(layout, qid_rows, side_files, comm.any_rank)

    def cut() -> np.ndarray:
        if not root:
            return np.zeros(k + 1, np.int64)
        even = [line_start_in(data, len(data) * p // k) for p in range(k + 1)]
        if mode is None:
            return np.asarray(even, np.int64)
        parts = [
            Part(layout, data[a:b], a, p)
            for p, (a, b) in enumerate(zip(even, even[1:], strict=False))
        ]

        def gather(fn: Callable[[Part], Any]) -> np.ndarray:
            return np.array([fn(part) for part in parts], np.int64).reshape(k, -1)

        sizes = _query_sizes(layout.path) if mode == "file" else None
        return query_cuts(gather, mode, len(data), layout.path, sizes)

    cuts = comm.bcast(run_agreed(comm, cut))
    pieces = [data[cuts[p] : cuts[p + 1]] for p in range(k)] if root else []  # root's only
    return comm.scatter_bytes(pieces), int(cuts[comm.rank]), mode


def _parse_share(
    comm: SerialComm, layout: Layout, data: bytes, start: int
) -> tuple[LoadedData, int]:
    """``(LoadedData, first line)`` of this rank's bytes ``data`` (starting at file
    offset ``start``): line numbers count from the file's start, and a range that
    does not hold the header line gets the file's."""
    first_line = 1 + _exclusive_sum(comm, count_lines(data))[0]
    holds_header = start == 0 and bool(data)

    def parse() -> LoadedData:
        header_text = None
        if layout.header and not holds_header:
            header_text = read_header_line(layout.path)
        return parse_text(
            layout.path,
            data,
            fmt=layout.fmt,
            sep=layout.sep,
            header_text=header_text,
            first_line=first_line,
            **layout.options,
        )

    return run_agreed(comm, parse), first_line


def _own_queries(out: LoadedData, layout: Layout, first_line: int) -> None:
    """A range read by query ids gets groups (empty without rows); a range whose rows
    have no ``qid:`` while others' do is an error, as in a whole-file read."""
    if out.group is not None:
        return
    if out.X.shape[0]:
        raise DataFormatError(
            f"{layout.path}, line {first_line}: the rows from this line on have no qid: "
            "but other rows of the file have one (every row needs one, or none)"
        )
    out.group = np.zeros(0, np.int64)
    out.query_ids = np.zeros(0, np.int64 if layout.fmt == "libsvm" else np.float64)


def _agree_on_width(comm: SerialComm, out: LoadedData, fmt: str, path: str) -> None:
    """Every rank's part must have the same columns: LibSVM parts widen to the widest
    (a part's highest index is not the file's); an empty part (no header to count
    columns from) takes the others' width; otherwise widths must agree."""
    n_rows, width = out.X.shape
    widest = int(comm.greatest_int([width])[0])
    error: ValueError | None = None
    if fmt == "libsvm" and width < widest:
        assert not isinstance(out.X, np.ndarray)  # LibSVM's X is a CSR matrix
        out.X = scipy_sparse().csr_matrix(
            (out.X.data, out.X.indices, out.X.indptr), shape=(n_rows, widest)
        )
    elif n_rows == 0 and width < widest:
        out.X = np.zeros((0, widest))
    elif width != widest:
        error = ValueError(
            f"{path}: rows of rank {comm.rank}'s part have {width} features, "
            f"other parts have {widest}"
        )
    agree_on_errors(comm, error)


def column_block(n_features: int, rank: int, size: int) -> np.ndarray:
    """Global column numbers of rank ``rank``'s block: contiguous, sizes differ by at most 1."""
    return np.arange(n_features * rank // size, n_features * (rank + 1) // size)


def _first_lines(path: str, n_lines: int) -> bytes:
    """The start of a file holding at least its first ``n_lines`` whole lines."""
    n_bytes = 1 << 16
    while True:
        head = read_head(path, n_bytes)
        if count_lines(whole_lines(head)) >= n_lines or len(head) < n_bytes:
            return head
        n_bytes *= 4


def read_column_block(
    path: StrPath, comm: SerialComm, options: Mapping[str, Any]
) -> tuple[LoadedData, np.ndarray]:
    """All rows of ``path`` with only this rank's block of columns.

    Returns ``(LoadedData, feature_indices)``: the block's global column numbers go
    to ``Dataset(feature_indices=...)``.
    """
    path = os.fspath(path)

    def local_read() -> tuple[LoadedData, np.ndarray]:
        fmt, sep = sniff_format(path, options.get("fmt", "auto"), options.get("header", False))
        if fmt == "libsvm":  # the width is the highest index: known after reading
            out = read_data(path, **options)
            block = column_block(out.X.shape[1], comm.rank, comm.size)
            assert not isinstance(out.X, np.ndarray)  # LibSVM's X is a CSR matrix
            out.X = out.X[:, block].tocsr()
            return out, block
        # Delimited: count the columns on the first whole lines (the header and
        # a row: a first line of 64 KiB or more is read to its end), then
        # convert only this block.
        head = _first_lines(path, 2 if options.get("header", False) else 1)
        head = whole_lines(head) or head
        rest = {k: v for k, v in options.items() if k != "fmt"}
        n_features = parse_text(path, head, fmt=fmt, sep=sep, **rest).X.shape[1]
        block = column_block(n_features, comm.rank, comm.size)
        return read_data(path, keep_features=block, **options), block

    return run_agreed(comm, local_read)


def write_parts_in_order(path: StrPath, data: bytes, comm: SerialComm) -> None:
    """Write every rank's bytes ``data`` into ``path``, rank 0's first, atomically.

    Rank 0 creates a temporary file beside ``path``; each rank writes its bytes at
    its offset (the sum of the lengths before it); rank 0 renames the file when all
    succeeded and removes it otherwise.
    """
    path = os.fspath(path)
    offset, _ = _exclusive_sum(comm, len(data))

    def create() -> bytes:
        if comm.rank != 0:
            return b""
        fd, tmp = temp_beside(path)
        os.close(fd)
        return tmp.encode()

    tmp = comm.bcast_bytes(run_agreed(comm, create)).decode()

    def write() -> None:
        fd = os.open(tmp, os.O_WRONLY)
        try:
            view, at = memoryview(data), offset
            while view:
                written = os.pwrite(fd, view, at)
                view, at = view[written:], at + written
            os.fsync(fd)
        finally:
            os.close(fd)

    try:
        run_agreed(comm, write)
        if comm.rank == 0:
            publish(tmp, path)
    finally:
        if comm.rank == 0 and os.path.exists(tmp):
            os.unlink(tmp)
