"""Side files as LightGBM reads them: ``<path>.weight``, ``<path>.init``,
``<path>.query`` and ``<path>.position``."""

from __future__ import annotations

import math
import os
import re
from typing import TYPE_CHECKING

import numpy as np

from ..files import check_regular_file
from .errors import DataFormatError, data_error
from .values import LoadedData, format_id, to_float

if TYPE_CHECKING:
    from _typeshed import StrPath


#: the largest query size a .query line may give: LightGBM's row counts are
#: int32 (data_size_t), and int64 sums of such sizes cannot overflow
MAX_QUERY_SIZE = 2**31 - 1


def _read_side_values(side: str, what: str) -> tuple[list[list[float]], list[int]]:
    """Rows of floats of a side file, with their 1-based line numbers.  Every value
    must be finite: a NaN init score, say, would train and then fail to save.  A
    byte order mark may start the file (as a data or config file); lines end at
    ``\n``, ``\r\n`` or ``\r`` (Python's universal newlines)."""
    rows: list[list[float]] = []
    line_nos: list[int] = []
    with open(side, encoding="utf-8-sig", errors="replace") as fh:
        for lineno, raw in enumerate(fh, start=1):
            tokens = raw.replace(",", " ").split()
            if not tokens:
                continue
            row: list[float] = []
            for tok in tokens:
                try:
                    value = to_float(tok)
                except ValueError:
                    raise data_error(side, lineno, "cannot parse number", tok, raw) from None
                if not math.isfinite(value):  # nan, inf, 1e999
                    raise data_error(side, lineno, f"non-finite {what}", tok, raw)
                row.append(value)
            rows.append(row)
            line_nos.append(lineno)
    return rows, line_nos


def _per_row_values(
    side: str, path: str, n: int, what: str, width: int | None = None
) -> np.ndarray:
    """(n, k) values of a side file with one line per data row of ``path``;
    every line holds ``width`` values (or as many as the first line)."""
    rows, lines = _read_side_values(side, what)
    if len(rows) != n:
        raise DataFormatError(
            f"{side}: has {len(rows)} lines, expected one per row of {path} ({n} rows)"
        )
    k = width or (len(rows[0]) if rows else 1)
    for r, ln in zip(rows, lines, strict=True):
        if len(r) != k:
            raise data_error(
                side, ln, f"expected {k} value(s) per line, got", " ".join(map(str, r))
            )
    return np.array(rows, np.float64).reshape(n, k)


def _side_file(path: str, suffix: str, what: str) -> str | None:
    """``path + suffix`` when it exists, None when not; a directory, FIFO or device
    there is an error (never opened: a FIFO would block), as is a broken link."""
    side = path + suffix
    if not os.path.lexists(side):
        return None
    return check_regular_file(side, what)


def _weights(side: str, path: str, n_total: int) -> np.ndarray:
    weight = _per_row_values(side, path, n_total, "weight", width=1)[:, 0]
    negative = np.flatnonzero(weight < 0)
    if len(negative):
        _, lines = _read_side_values(side, "weight")
        raise data_error(
            side, lines[int(negative[0])], "negative weight", format_id(weight[negative[0]])
        )
    return weight


def read_query_file(path: StrPath, n_total: int | None = None) -> np.ndarray | None:
    """The query sizes (int64) of ``<path>.query``, or None when there is none: one
    non-negative integer per line, summing to ``n_total`` (the rows of ``path``)
    when given; errors name the file and line."""
    path = os.fspath(path)
    side = _side_file(path, ".query", "query file")
    if side is None:
        return None
    rows, lines = _read_side_values(side, "query size")
    for r, ln in zip(rows, lines, strict=True):
        if len(r) != 1 or not float(r[0]).is_integer() or r[0] < 0:
            raise data_error(
                side,
                ln,
                "expected one non-negative integer query size per line, got",
                " ".join(map(str, r)),
            )
        if r[0] > MAX_QUERY_SIZE:  # 1e23 would overflow int64 (and sums of sizes)
            raise data_error(
                side, ln, f"query size out of range (at most {MAX_QUERY_SIZE} rows), got", str(r[0])
            )
    sizes = np.array([int(r[0]) for r in rows], np.int64)
    if n_total is not None:
        check_query_sum(path, sizes, n_total)
    return sizes


def check_query_sum(path: StrPath, sizes: np.ndarray, n_total: int) -> None:
    """Query sizes of ``<path>.query`` must sum to the ``n_total`` rows of ``path``."""
    if int(sizes.sum()) != n_total:
        side = os.fspath(path) + ".query"
        raise DataFormatError(
            f"{side}: query sizes ({len(sizes)} lines) sum to {int(sizes.sum())}, "
            f"expected the {n_total} rows of {path}"
        )


_INTEGER = re.compile(r"[+-]?[0-9]+")


def read_positions(path: StrPath, n_total: int) -> np.ndarray | None:
    """The positions (int64, one per row of ``path``) of ``<path>.position``, or
    None.  One position per line; integers are kept, and a file with any other
    text numbers each distinct line by its first appearance (LightGBM's
    Metadata::LoadPositions does so for every file): the whole file decides, so
    every rank of a sharded read numbers alike."""
    side = _side_file(os.fspath(path), ".position", "position file")
    if side is None:
        return None
    tokens: list[str] = []
    first_line: dict[str, int] = {}
    with open(side, encoding="utf-8-sig", errors="replace") as fh:
        for lineno, raw in enumerate(fh, start=1):
            text = raw.strip()
            if text:
                first_line.setdefault(text, lineno)
                tokens.append(text)
    if len(tokens) != n_total:
        raise DataFormatError(
            f"{side}: has {len(tokens)} lines, expected one position per row of {path} "
            f"({n_total} rows)"
        )
    if all(_INTEGER.fullmatch(t) and abs(int(t)) < 2**63 for t in first_line):
        return np.array([int(t) for t in tokens], np.int64)
    number = {t: i for i, t in enumerate(first_line)}  # dicts keep insertion order
    return np.array([number[t] for t in tokens], np.int64)


def read_side_files(
    path: StrPath,
    out: LoadedData,
    row_offset: int = 0,
    n_total: int | None = None,
    last_part: bool | None = None,
) -> None:
    """Fill ``out``'s weight / init score / groups / positions from
    ``<path>.weight|.init|.query|.position``.

    ``out`` may hold rows ``row_offset ...`` of the ``n_total`` rows of ``path`` (one
    rank's part): side files describe the whole file and are sliced.  Query sizes
    are sliced too when ``last_part`` is given (True for the file's last part): the
    part then holds whole queries (:func:`dgbdt.io.read_row_part` cut it at query
    boundaries; zero-size queries at its end go to the next part, trailing ones to
    the last part).  Without it a part of the file gets none (it may cut a query).
    """
    path = os.fspath(path)
    n = out.X.shape[0]
    n_total = n if n_total is None else n_total
    rows = slice(row_offset, row_offset + n)
    side = None if out.weight is not None else _side_file(path, ".weight", "weight file")
    if side is not None:
        out.weight = _weights(side, path, n_total)[rows].copy()
    side = None if out.init_score is not None else _side_file(path, ".init", "init score file")
    if side is not None:
        init = _per_row_values(side, path, n_total, "init score")[rows]
        out.init_score = init[:, 0].copy() if init.shape[1] == 1 else init
    if out.position is None:
        position = read_positions(path, n_total)
        out.position = None if position is None else position[rows].copy()
    if out.group is None:
        sizes = read_query_file(path, n_total)
        if sizes is not None:
            out.group = _part_queries(path, sizes, rows, n_total, last_part)


def _part_queries(
    path: str, sizes: np.ndarray, rows: slice, n_total: int, last_part: bool | None
) -> np.ndarray | None:
    """The sizes of the queries of the rows ``rows`` (a slice), which start and end
    at query boundaries; None for a part without ``last_part``."""
    if last_part is None:
        return sizes if rows.stop - rows.start == n_total else None
    bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    lo = int(np.searchsorted(bounds, rows.start, "left"))
    hi = len(sizes) if last_part else int(np.searchsorted(bounds, rows.stop, "left"))
    if bounds[lo] != rows.start or bounds[hi] != rows.stop:
        raise DataFormatError(
            f"{path}: the rows {rows.start}..{rows.stop - 1} of this part do not start "
            f"and end at query boundaries of {path}.query (a query would be cut)"
        )
    return sizes[lo:hi].copy()
