"""Reading and writing text files on K ranks without copying them around.

* :func:`read_row_part` (data- and voting-parallel): rank r reads only its part of
  the file's bytes, cut at line boundaries, so every line belongs to exactly one
  rank and no rank reads the whole file.  Gzip cannot be cut by byte range: rank 0
  decompresses it and scatters the parts (or the user pre-partitions).
* :func:`read_column_block` (feature-parallel): every rank reads every row but
  keeps only its own block of columns.
* :func:`write_parts_in_order`: each rank writes its lines at its offset of one
  temporary file, which rank 0 renames: the output is in input order and never
  half-written.

Errors a rank finds in its part (a malformed line, a missing file) are agreed
after each local step, so every rank stops with that message and none is left
waiting in a collective.  Line numbers in messages count from the file's start.
"""

import functools
import os

import numpy as np
import scipy.sparse as sp

from ..comm import agree_on_errors
from ..files import publish, temp_beside
from .filebytes import (
    count_lines,
    is_gzip,
    read_file_bytes,
    read_head,
    read_header_line,
    read_part,
    split_parts,
    whole_lines,
)
from .reading import parse_text, read_data, sniff_format
from .sidefiles import read_side_files


def run_agreed(comm, step):
    """Run ``step()`` on this rank; every rank raises if any rank's step raised."""
    result, error = None, None
    try:
        result = step()
    except (OSError, ValueError) as exc:  # DataFormatError is a ValueError
        error = exc
    agree_on_errors(comm, error)
    return result


def _exclusive_sum(comm, value):
    """(sum of ``value`` on the ranks before this one, sum over all ranks)."""
    every = comm.per_rank(value)
    return int(every[: comm.rank].sum()), int(every.sum())


def read_row_part(path, comm, options):
    """This rank's rows of ``path`` (a :class:`dgbdt.io.LoadedData`).

    ``options``: keyword arguments of :func:`dgbdt.io.read_data` (header,
    label_column, weight_column, group_column, ignore_columns, zero_based, fmt,
    side_files, features_only).
    Side files (``.weight``, ``.init``) are sliced to this rank's rows.
    """
    path = os.fspath(path)
    options = dict(options)
    fmt = options.pop("fmt", "auto")
    side_files = options.pop("side_files", True)
    header = options.get("header", False)

    def local_read():
        found_fmt, sep = sniff_format(path, fmt, header)
        header_text = read_header_line(path) if header and comm.rank > 0 else None
        gzipped = is_gzip(path)
        data = None if gzipped else read_part(path, comm.rank, comm.size)
        parts = None
        if gzipped and comm.rank == 0:
            parts = split_parts(read_file_bytes(path), comm.size)
        return found_fmt, sep, header_text, gzipped, data, parts

    found_fmt, sep, header_text, gzipped, data, parts = run_agreed(comm, local_read)
    if gzipped:
        data = comm.scatter_bytes(parts)
        del parts
    first_line = 1 + _exclusive_sum(comm, count_lines(data))[0]
    out = run_agreed(
        comm,
        functools.partial(
            parse_text,
            path,
            data,
            fmt=found_fmt,
            sep=sep,
            header_text=header_text,
            first_line=first_line,
            **options,
        ),
    )
    del data
    _agree_on_width(comm, out, found_fmt, path)
    row_offset, n_total = _exclusive_sum(comm, out.X.shape[0])
    if side_files:
        run_agreed(comm, lambda: read_side_files(path, out, row_offset, n_total))
    return out


def _agree_on_width(comm, out, fmt, path):
    """Every rank's part must have the same columns: LibSVM parts widen to the widest
    (a part's highest index is not the file's); an empty part (no header to count
    columns from) takes the others' width; otherwise widths must agree."""
    n_rows, width = out.X.shape
    widest = int(comm.greatest_int([width])[0])
    error = None
    if fmt == "libsvm" and width < widest:
        out.X = sp.csr_matrix((out.X.data, out.X.indices, out.X.indptr), shape=(n_rows, widest))
    elif n_rows == 0 and width < widest:
        out.X = np.zeros((0, widest))
    elif width != widest:
        error = ValueError(
            f"{path}: rows of rank {comm.rank}'s part have {width} features, "
            f"other parts have {widest}"
        )
    agree_on_errors(comm, error)


def column_block(n_features, rank, size):
    """Global column numbers of rank ``rank``'s block: contiguous, sizes differ by at most 1."""
    return np.arange(n_features * rank // size, n_features * (rank + 1) // size)


def _first_lines(path, n_lines):
    """The start of a file holding at least its first ``n_lines`` whole lines."""
    n_bytes = 1 << 16
    while True:
        head = read_head(path, n_bytes)
        if count_lines(whole_lines(head)) >= n_lines or len(head) < n_bytes:
            return head
        n_bytes *= 4


def read_column_block(path, comm, options):
    """All rows of ``path`` with only this rank's block of columns.

    Returns ``(LoadedData, feature_indices)``: the block's global column numbers go
    to ``Dataset(feature_indices=...)``.
    """
    path = os.fspath(path)

    def local_read():
        fmt, sep = sniff_format(path, options.get("fmt", "auto"), options.get("header", False))
        if fmt == "libsvm":  # the width is the highest index: known after reading
            out = read_data(path, **options)
            block = column_block(out.X.shape[1], comm.rank, comm.size)
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


def write_parts_in_order(path, data, comm):
    """Write every rank's bytes ``data`` into ``path``, rank 0's first, atomically.

    Rank 0 creates a temporary file beside ``path``; each rank writes its bytes at
    its offset (the sum of the lengths before it); rank 0 renames the file when all
    succeeded and removes it otherwise.
    """
    path = os.fspath(path)
    offset, _ = _exclusive_sum(comm, len(data))

    def create():
        if comm.rank != 0:
            return b""
        fd, tmp = temp_beside(path)
        os.close(fd)
        return tmp.encode()

    tmp = comm.bcast_bytes(run_agreed(comm, create)).decode()

    def write():
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
