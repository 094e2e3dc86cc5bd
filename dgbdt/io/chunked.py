"""The chunked reader of large delimited text: chunks cut at line ends, parsed by
pandas on several threads straight into a C-order ``X``; any failed check hands
the text back to the serial reader (:mod:`dgbdt.io.delimited`), which names it."""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numba
import numpy as np

from ..native.text import CR, NEWLINE, WHITESPACE_SEP, byte_counts, count_rows, field_counts
from .columns import ColumnPlan, ColumnSpec, plan_columns
from .errors import DataFormatError
from .fields import header_names, read_csv_kwargs
from .filebytes import BOM, line_start_in
from .values import LoadedData, query_sizes

if TYPE_CHECKING:
    from _typeshed import StrPath

#: A chunk's (newlines, separators, '\r') counts.
_Tally = tuple[int, int, int]


def _n_threads() -> int:
    try:
        return max(1, int(numba.get_num_threads()))
    except Exception:  # noqa: BLE001 - no threading layer: one thread
        return 1


def _chunk_bounds(data: bytes, start: int, size: int) -> list[tuple[int, int]]:
    """``[(lo, hi), ...]`` covering ``data[start:]``, cut after a newline every ~``size`` bytes."""
    bounds: list[tuple[int, int]] = []
    lo = start
    while lo < len(data):
        hi = line_start_in(data, lo + size)
        bounds.append((lo, hi))
        lo = hi
    return bounds


@dataclass(frozen=True)
class _Chunks:
    """Text cut into chunks ``bounds`` (byte ranges ``[lo, hi)``) of ``n_cols`` fields
    a row, ``buf`` its bytes as uint8, ``sep_code`` the delimiter for the scans."""

    path: StrPath
    data: bytes
    buf: np.ndarray
    bounds: list[tuple[int, int]]
    sep: str | None
    sep_code: int
    n_cols: int
    names: list[str] | None
    plan: ColumnPlan


def read_delimited_chunked(
    path: StrPath,
    data: bytes,
    *,
    sep: str | None,
    header: bool,
    header_text: str | None,
    spec: ColumnSpec,
    chunk_bytes: int,
) -> LoadedData | None:
    """The serial reader's result, from chunks of about ``chunk_bytes`` parsed in
    parallel, or None whenever a check fails (the serial reader then names the
    problem).  Same result because chunks are cut at line ends and pandas, with
    quoting off, reads every line on its own."""
    sep_code = WHITESPACE_SEP if sep is None else ord(sep)
    buf = np.frombuffer(data, np.uint8)
    found = _columns_of(data, buf, sep, sep_code, header, header_text)
    if found is None:
        return None
    start, names, n_cols = found
    try:
        plan = plan_columns(path, names, n_cols, spec)
    except ValueError:
        return None  # the serial reader checks the data first, then the options
    if not plan.used:
        return None
    bounds = _chunk_bounds(data, start, chunk_bytes)
    if not bounds:
        return None
    # pandas drops a byte order mark at the start of what it reads: only the file's may go
    if any(data.startswith(BOM, lo) for lo, _ in bounds[1:]):
        return None
    job = _Chunks(path, data, buf, bounds, sep, sep_code, n_cols, names, plan)
    with ThreadPoolExecutor(min(_n_threads(), len(bounds))) as pool:
        return _parse_chunks(pool, job)


def _line_fields(buf: np.ndarray, lo: int, hi: int, sep_code: int) -> int:
    """Fields of the line ``buf[lo:hi]``, -1 when it holds a stray ``\\r``."""
    one = np.zeros(1, np.int64)
    stray = field_counts(buf[lo:hi], sep_code, one)
    return -1 if stray >= 0 else int(one[0])


def _columns_of(
    data: bytes,
    buf: np.ndarray,
    sep: str | None,
    sep_code: int,
    header: bool,
    header_text: str | None,
) -> tuple[int, list[str] | None, int] | None:
    """``(start, names, n_cols)``: the offset of the first line after the header, the
    column names (None without a header) and the number of columns (the header's,
    else the first non-blank line's); None when a check fails."""
    start = 0
    names: list[str] | None = None
    if header and header_text is None:
        end = data.find(b"\n")
        if end < 0 or _line_fields(buf, 0, end, sep_code) <= 0:
            return None
        names = header_names(data[:end].decode("utf-8", errors="replace"), sep)
        start = end + 1
    elif header and header_text is not None:  # (it is not None here; said for mypy)
        names = header_names(header_text, sep)
    if names is not None:
        return start, names, len(names)
    n_cols, lo = 0, start
    while lo < len(data) and n_cols == 0:
        hi = data.find(b"\n", lo)
        hi = len(data) if hi < 0 else hi
        n_cols = _line_fields(buf, lo, hi, sep_code)
        lo = hi + 1
    return None if n_cols <= 0 else (start, None, n_cols)


def _parse_chunks(pool: ThreadPoolExecutor, job: _Chunks) -> LoadedData | None:
    """The LoadedData of the chunks of ``job`` parsed on ``pool``'s threads, each
    written at its first line, or None when a check fails."""
    import pandas as pd  # noqa: PLC0415, F401 - loaded here, before the threads use it

    plan = job.plan
    position = plan.position
    tallies, lines, line_offsets = _chunk_lines(
        pool, job.data, job.buf, job.bounds, job.sep, job.sep_code
    )
    n_lines = int(line_offsets[-1])
    X = np.empty((n_lines, len(plan.keep)), np.float64)
    roles = {
        role: idx
        for role, idx in (("label", plan.label), ("weight", plan.weight), ("group", plan.group))
        if idx is not None
    }
    extra = {role: np.empty(n_lines, np.float64) for role in roles}
    x_cols = _as_slice([position[c] for c in plan.keep])
    kwargs = read_csv_kwargs(job.sep, plan.used, job.n_cols)
    # Every row has n_cols fields: with all columns read, pandas fails on a longer row
    # and pads a shorter one, so (separators == (n_cols - 1) * rows) proves it from
    # the tallies; a '\r' (pandas ends lines there) or usecols (pandas then ignores
    # extra fields) needs the field scan.
    cheap_check = job.sep is not None and kwargs["usecols"] is None
    rows = [0] * len(job.bounds)
    failed: list[int] = []

    def parse(k: int) -> None:
        if failed:
            return
        values = _chunk_values(job, k, kwargs, tallies[k], cheap_check, lines[k])
        if values is None:
            failed.append(k)
            return
        at, m = int(line_offsets[k]), values.shape[0]
        if len(plan.keep):
            X[at : at + m] = values[:, x_cols]
        for role, arr in extra.items():
            arr[at : at + m] = values[:, position[roles[role]]]
        rows[k] = m

    list(pool.map(parse, range(len(job.bounds))))
    if failed:
        return None
    return _join_chunks(job.path, X, extra, rows, line_offsets, job.names, plan.keep, plan.group)


def _chunk_values(
    job: _Chunks, k: int, kwargs: dict[str, Any], tally: _Tally, cheap_check: bool, n_lines: int
) -> np.ndarray | None:
    """The converted values of chunk ``k``, a row per data line, or None when a check
    fails.  ``tally``: its (newlines, separators, '\\r') counts, ``n_lines`` its lines;
    ``cheap_check``: the tally may prove the field counts instead of the scan."""
    import pandas as pd  # noqa: PLC0415 - optional until used: import dgbdt does not load pandas

    lo, hi = job.bounds[k]
    n_used = len(job.plan.used)
    if not cheap_check or tally[2]:
        m = int(count_rows(job.buf[lo:hi], job.sep_code, job.n_cols))
        if m < 0:
            return None
    else:
        m = -1
    try:
        values = (
            pd.read_csv(io.BytesIO(job.data[lo:hi]), **kwargs).to_numpy(dtype=np.float64)
            if m != 0
            else np.empty((0, n_used))
        )
    except pd.errors.EmptyDataError:
        values = np.empty((0, n_used))  # only blank lines (the check below decides)
    except Exception:  # noqa: BLE001 - the serial reader names the line
        return None
    if m < 0:
        m = values.shape[0]
        if tally[1] != (job.n_cols - 1) * m:
            return None
    if values.shape != (m, n_used) or m > n_lines:
        return None
    return values


def _as_slice(cols: list[int]) -> slice | list[int]:
    """Consecutive column positions as a slice (numpy then copies a block, not a gather)."""
    if cols and cols == list(range(cols[0], cols[0] + len(cols))):
        return slice(cols[0], cols[0] + len(cols))
    return cols


def _chunk_lines(
    pool: ThreadPoolExecutor,
    data: bytes,
    buf: np.ndarray,
    bounds: list[tuple[int, int]],
    sep: str | None,
    sep_code: int,
) -> tuple[list[_Tally], list[int], np.ndarray]:
    """``(tallies, lines, line_offsets)`` of the chunks: (newlines, separators, '\r')
    counts, lines, and the line each chunk starts at.  Rows are written at the chunk's
    first *line*: exact unless there are blank lines, whose gaps are closed at the end."""
    # 256 matches no byte: whitespace text has no separator byte
    tallies = list(
        pool.map(
            lambda b: byte_counts(buf[b[0] : b[1]], NEWLINE, 256 if sep is None else sep_code, CR),
            bounds,
        )
    )
    lines = [int(t[0]) for t in tallies]
    if not data.endswith(b"\n"):
        lines[-1] += 1
    return tallies, lines, np.concatenate(([0], np.cumsum(lines))).astype(np.int64)


def _join_chunks(
    path: StrPath,
    X: np.ndarray,
    extra: dict[str, np.ndarray],
    rows: list[int],
    line_offsets: np.ndarray,
    names: list[str] | None,
    keep: list[int],
    group_idx: int | None,
) -> LoadedData | None:
    """The LoadedData of the parsed chunks (``rows[k]`` rows written at line
    ``line_offsets[k]``), or None when a check fails (the serial reader names it)."""
    n, n_lines = sum(rows), int(line_offsets[-1])
    if n == 0:
        return None
    if n < n_lines:  # blank lines: close the gaps, in order
        at = 0
        for k, m in enumerate(rows):
            src = int(line_offsets[k])
            if m and src != at:
                X[at : at + m] = X[src : src + m]
                for arr in extra.values():
                    arr[at : at + m] = arr[src : src + m]
            at += m
        X = X[:n].copy()
        extra = {role: arr[:n].copy() for role, arr in extra.items()}
    if not all(np.isfinite(arr).all() for arr in extra.values()):
        return None
    if "weight" in extra and np.any(extra["weight"] < 0):
        return None  # the serial reader names the negative weight's line
    group: np.ndarray | None = None
    ids: np.ndarray | None = None
    if group_idx is not None:
        try:
            group, ids = query_sizes(path, extra["group"], np.arange(n))
        except DataFormatError:
            return None
    feature_names = None if names is None else [names[i] for i in keep]
    return LoadedData(
        X=X,
        label=extra.get("label"),
        weight=extra.get("weight"),
        group=group,
        feature_names=feature_names,
        query_ids=ids,
    )
