"""Delimited text (CSV, TSV, runs of whitespace): the serial reference reader,
which checks the whole text and names the first offending line, and the dispatch
to the chunked reader (:mod:`dgbdt.io.chunked`) for large text."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .chunked import read_delimited_chunked
from .columns import ColumnPlan, ColumnSpec, plan_columns
from .errors import DataFormatError, clip_text, data_error
from .fields import field_counts_of, header_names, read_csv_kwargs, split_fields
from .filebytes import file_lines, line_at
from .values import LoadedData, query_sizes

if TYPE_CHECKING:
    from _typeshed import StrPath

# Text of at least this many bytes is parsed in chunks of about _CHUNK_BYTES, on
# up to numba.get_num_threads() threads (pandas' C parser and the Numba scan both
# release the GIL); smaller text, or any problem, takes the serial path, whose
# checks name the offending line.  pandas >= 3 parses a *file path* on several
# threads itself, which is what the benchmark's plain read_csv gets.  Chunks of
# 1-2 MiB parsed fastest on 1M x 28 (pandas' buffers stay in cache): 0.85-0.9 s CPU
# against 1.05-1.15 s at 4 MiB and 1.3 s at 256 KiB (per-call overhead).
_PARALLEL_MIN_BYTES = 8 << 20
_CHUNK_BYTES = 2 << 20


@dataclass(frozen=True)
class _Rows:
    """The rows of delimited text, for messages: ``line_no[i]`` is the 1-based line
    (within ``data``) of row ``i``; ``data`` starts at the file's line ``base + 1``."""

    path: StrPath
    data: bytes
    sep: str | None
    line_no: np.ndarray
    base: int


def read_delimited(
    path: StrPath,
    data: bytes,
    *,
    sep: str | None,
    header: bool,
    spec: ColumnSpec,
    header_text: str | None = None,
    first_line: int = 1,
) -> LoadedData:
    """The :class:`LoadedData` of delimited ``data`` with the columns of ``spec``
    (a :class:`~dgbdt.io.columns.ColumnSpec`)."""
    if sep is not None and (len(sep) != 1 or ord(sep) > 127):
        raise ValueError(f"sep must be one ASCII character or None, got {sep!r}")
    if len(data) >= _PARALLEL_MIN_BYTES:
        out = read_delimited_chunked(
            path,
            data,
            sep=sep,
            header=header,
            header_text=header_text,
            spec=spec,
            chunk_bytes=_CHUNK_BYTES,
        )
        if out is not None:
            return out
    return _read_delimited_serial(
        path,
        data,
        sep=sep,
        header=header,
        spec=spec,
        header_text=header_text,
        first_line=first_line,
    )


def _read_delimited_serial(
    path: StrPath,
    data: bytes,
    *,
    sep: str | None,
    header: bool,
    spec: ColumnSpec,
    header_text: str | None = None,
    first_line: int = 1,
) -> LoadedData:
    """The reference reader: checks everything on the whole text and names the first
    offending line of any problem."""
    header_in_data = header and header_text is None
    rows, names, n_cols = _checked_lines(
        path, data, sep, header_in_data, header_text if header else None, first_line
    )
    plan = plan_columns(path, names, n_cols, spec)
    values = _converted(rows, plan.used, n_cols, skip=1 if header_in_data else 0)
    label, weight, (group, ids) = _checked_roles(rows, values, plan)
    position = plan.position
    X = _take_columns(values, [position[c] for c in plan.keep])
    feature_names = None if names is None else [names[i] for i in plan.keep]
    return LoadedData(
        X=X, label=label, weight=weight, group=group, feature_names=feature_names, query_ids=ids
    )


def _checked_lines(
    path: StrPath,
    data: bytes,
    sep: str | None,
    header_in_data: bool,
    header_text: str | None,
    first_line: int,
) -> tuple[_Rows, list[str] | None, int]:
    """``(rows, names, n_cols)`` of text whose every row has ``n_cols`` fields, or the
    error naming the first line with a stray ``\\r`` or another number of fields."""
    base = first_line - 1  # line numbers in messages count from the file's start
    counts, stray = field_counts_of(data, sep)
    if stray >= 0:
        # pandas ends a line at a lone '\r'; we count lines at '\n' only
        raise data_error(
            path,
            stray + 1 + base,
            "carriage return (\\r) inside the line",
            clip_text(line_at(data, stray + 1)),
        )
    line_no, names, n_cols = _rows_and_names(
        path, data, counts, sep, header_in_data, header_text, first_line
    )
    row_counts = counts[line_no - 1]
    bad = np.flatnonzero(row_counts != n_cols)
    if len(bad):
        ln = int(line_no[bad[0]])
        raise data_error(
            path,
            ln + base,
            f"expected {n_cols} fields, got {int(row_counts[bad[0]])}:",
            clip_text(line_at(data, ln)),
        )
    return _Rows(path, data, sep, line_no, base), names, n_cols


def _converted(rows: _Rows, used: list[int], n_cols: int, skip: int) -> np.ndarray:
    """The values of the file columns ``used`` of every row, ``(rows, len(used))``,
    converted by pandas' C parser (``skip``: header lines to skip)."""
    import pandas as pd  # noqa: PLC0415 - optional until used: import dgbdt does not load pandas

    n_rows = len(rows.line_no)
    if n_rows == 0 or not used:
        return np.zeros((n_rows, len(used)))
    try:
        frame = pd.read_csv(
            io.BytesIO(rows.data), skiprows=skip, **read_csv_kwargs(rows.sep, used, n_cols)
        )
    except Exception as exc:  # noqa: BLE001 - ParserError, UnicodeDecodeError, ...
        raise _rescan_delimited(
            rows.path, rows.data, rows.sep, rows.line_no, exc, rows.base, used
        ) from None
    # pandas keeps one float64 block, (columns, rows) in memory: ``values`` is a
    # Fortran-order view of it, so a column is contiguous.
    values = frame.to_numpy(dtype=np.float64)
    del frame
    if values.shape != (n_rows, len(used)):
        raise DataFormatError(
            f"{rows.path}: read {values.shape} values, expected {(n_rows, len(used))}"
        )
    return values


def _checked_roles(
    rows: _Rows, values: np.ndarray, plan: ColumnPlan
) -> tuple[np.ndarray | None, np.ndarray | None, tuple[np.ndarray | None, np.ndarray | None]]:
    """``(label, weight, (group sizes, query ids))`` from the converted ``values`` (None
    where there is no such column), each checked: finite, weights >= 0, queries
    contiguous."""
    position = plan.position

    def column(idx: int) -> np.ndarray:
        # a copy, so that the label does not keep pandas' whole block alive
        return np.array(values[:, position[idx]], np.float64)

    label: np.ndarray | None = None
    if plan.label is not None:
        label = column(plan.label)
        _check_finite(rows, label, "label", plan.label)
    weight: np.ndarray | None = None
    if plan.weight is not None:
        weight = column(plan.weight)
        _check_finite(rows, weight, "weight", plan.weight, nonnegative=True)
    groups: tuple[np.ndarray | None, np.ndarray | None] = (None, None)
    if plan.group is not None:
        qid = column(plan.group)
        _check_finite(rows, qid, "query id", plan.group)
        groups = query_sizes(rows.path, qid, rows.line_no, rows.data, rows.base)
    return label, weight, groups


def _rows_and_names(
    path: StrPath,
    data: bytes,
    counts: np.ndarray,
    sep: str | None,
    header_in_data: bool,
    header_text: str | None,
    first_line: int,
) -> tuple[np.ndarray, list[str] | None, int]:
    """``(line_no, names, n_cols)``: the 1-based line (within ``data``) of every row,
    the column names (None without a header) and the number of columns."""
    line_no = np.flatnonzero(counts > 0) + 1
    names: list[str] | None = None
    if header_in_data:
        end = data.find(b"\n")
        first = data[: None if end < 0 else end].decode("utf-8", errors="replace")
        if len(line_no) == 0 or line_no[0] != 1:
            raise data_error(path, first_line, "expected a header line, got", first[: 1 << 16])
        names = header_names(first, sep)
        line_no = line_no[1:]
    elif header_text is not None:
        names = header_names(header_text, sep)
    if names is not None:
        return line_no, names, len(names)
    return line_no, None, int(counts[line_no[0] - 1]) if len(line_no) else 0


def _take_columns(values: np.ndarray, cols: list[int], block: int = 1 << 13) -> np.ndarray:
    """``values[:, cols]`` as a C-order array, copied in blocks of rows: ``values`` is
    Fortran-order, and a block of every column stays in cache while it is
    transposed (one fancy-indexing copy of the whole array reads each column
    once per output cache line)."""
    n = values.shape[0]
    out = np.empty((n, len(cols)), np.float64)
    if n == 0 or not cols:
        return out
    index: list[int] | slice = cols
    if cols == list(range(cols[0], cols[0] + len(cols))):
        src, index = values[:, cols[0] : cols[0] + len(cols)], slice(None)
    else:
        src = values
    for lo in range(0, n, block):
        out[lo : lo + block] = src[lo : lo + block, index]
    return out


def _check_finite(
    rows: _Rows, arr: np.ndarray, what: str, col: int, *, nonnegative: bool = False
) -> None:
    """The first missing or non-finite value of ``arr`` (or negative one, with
    ``nonnegative``: weights, as the Dataset wants them) raises, naming its line;
    ``col`` is its file column."""
    ok = np.isfinite(arr)
    if nonnegative:
        ok &= ~(arr < 0)
    bad = np.flatnonzero(~ok)
    if len(bad):
        ln = int(rows.line_no[bad[0]])
        text = line_at(rows.data, ln)
        fields = split_fields(text, rows.sep)
        field = fields[col].strip() if col < len(fields) else text.strip()
        problem = "negative" if np.isfinite(arr[bad[0]]) else "missing or non-finite"
        raise data_error(rows.path, ln + rows.base, f"{problem} {what}", field, text)


# What pandas' C parser takes for a number: ASCII digits, an optional exponent,
# blanks around it; or, with no blanks, inf/infinity in any case and a sign, or a
# missing-value token (NA_TOKENS).  (Python's float() also takes '1_000', other
# digits and other spaces, which pandas rejects.)  Every part is unambiguous (no two ways to match the same text), so a line that
# does not match fails in linear time.
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"


# inf and the missing-value tokens: pandas takes no blanks around these
_WORDS = r"[+-]?(?i:infinity|inf|nan|null|na)|N/A|None"


def _field_regex(sep: str | None) -> str:
    """A regex of one valid field; the padding never holds the separator, so a
    line regex built from it cannot backtrack between fields."""
    if sep is None:
        pad = "[\\n\\x0b\\x0c]"  # blanks separate the fields of whitespace text
    else:
        pad = "[" + "".join(re.escape(c) for c in "\t\n\x0b\x0c\r " if c != sep) + "]"
    empty = "" if sep is None else "|"  # an empty field exists only between separators
    return f"(?:{_WORDS}|{pad}*{_NUMBER}{pad}*{empty})"


def _rescan_delimited(
    path: StrPath,
    data: bytes,
    sep: str | None,
    line_no: np.ndarray,
    exc: BaseException,
    base: int = 0,
    columns: Sequence[int] | None = None,
) -> DataFormatError:
    """The DataFormatError for a file pandas rejected: the first row with a field that
    is neither a number nor a missing-value token (in pandas' terms), else ``exc``.
    Only the fields of ``columns`` (file column indices; None: all) count: pandas
    converts no other (ignored columns, and the label when predicting)."""
    one = _field_regex(sep)
    field_re = re.compile(one)
    if sep is None:
        line_re = re.compile(f"[ \\t\\r]*{one}(?:[ \\t\\r]+{one})*[ \\t\\r]*")
    else:
        line_re = re.compile(f"{one}(?:{re.escape(sep)}{one})*")
    lines = file_lines(data)
    for ln in line_no:
        text = lines[ln - 1]
        if line_re.fullmatch(text.rstrip("\r")):
            continue
        fields = split_fields(text, sep)
        for i in range(len(fields)) if columns is None else columns:
            field = fields[i] if i < len(fields) else ""
            if not field_re.fullmatch(field):
                error = data_error(
                    path, int(ln) + base, "cannot parse number", field.strip() or field, text
                )
                if int(ln) + base == 1:  # column names? (LightGBM: header=true)
                    error = DataFormatError(f"{error} (a header line? give header=true)")
                return error
        if columns is None:
            break  # fields fine one by one: should not happen; the generic message then
    return DataFormatError(f"{path}: {exc}")
