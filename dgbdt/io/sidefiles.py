"""Side files as LightGBM reads them: ``<path>.weight``, ``<path>.init`` and
``<path>.query``."""

import math
import os

import numpy as np

from ..files import check_regular_file
from .errors import DataFormatError, _error
from .values import _fmt_id, _to_float


def _read_side_values(side, what):
    """Rows of floats of a side file, with their 1-based line numbers.  Every value
    must be finite: a NaN init score, say, would train and then fail to save.  A
    byte order mark may start the file (as a data or config file); lines end at
    ``\n``, ``\r\n`` or ``\r`` (Python's universal newlines)."""
    rows, line_nos = [], []
    with open(side, encoding="utf-8-sig", errors="replace") as fh:
        for lineno, raw in enumerate(fh, start=1):
            tokens = raw.replace(",", " ").split()
            if not tokens:
                continue
            row = []
            for tok in tokens:
                try:
                    value = _to_float(tok)
                except ValueError:
                    raise _error(side, lineno, "cannot parse number", tok, raw) from None
                if not math.isfinite(value):  # nan, inf, 1e999
                    raise _error(side, lineno, f"non-finite {what}", tok, raw)
                row.append(value)
            rows.append(row)
            line_nos.append(lineno)
    return rows, line_nos


def _per_row_values(side, path, n, what, width=None):
    """(n, k) values of a side file with one line per data row of ``path``;
    every line holds ``width`` values (or as many as the first line)."""
    rows, lines = _read_side_values(side, what)
    if len(rows) != n:
        raise DataFormatError(
            f"{side}: has {len(rows)} lines, expected one per row of {path} ({n} rows)"
        )
    k = width or (len(rows[0]) if rows else 1)
    for r, ln in zip(rows, lines):
        if len(r) != k:
            raise _error(side, ln, f"expected {k} value(s) per line, got", " ".join(map(str, r)))
    return np.array(rows, np.float64).reshape(n, k)


def _side_file(path, suffix, what):
    """``path + suffix`` when it exists, None when not; a directory, FIFO or device
    there is an error (never opened: a FIFO would block), as is a broken link."""
    side = path + suffix
    if not os.path.lexists(side):
        return None
    return check_regular_file(side, what)


def _weights(side, path, n_total):
    weight = _per_row_values(side, path, n_total, "weight", width=1)[:, 0]
    negative = np.flatnonzero(weight < 0)
    if len(negative):
        _, lines = _read_side_values(side, "weight")
        raise _error(side, lines[int(negative[0])], "negative weight", _fmt_id(weight[negative[0]]))
    return weight


def read_side_files(path, out, row_offset=0, n_total=None):
    """Fill ``out``'s weight / init score / groups from ``<path>.weight|.init|.query``.

    ``out`` may hold rows ``row_offset ...`` of the ``n_total`` rows of ``path`` (one
    rank's part): side files describe the whole file and are sliced.  Query groups
    are kept only when ``out`` holds the whole file (a part may cut a query).
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
    side = None if out.group is not None else _side_file(path, ".query", "query file")
    if side is not None:
        rows, lines = _read_side_values(side, "query size")
        sizes = []
        for r, ln in zip(rows, lines):
            if len(r) != 1 or not float(r[0]).is_integer() or r[0] < 0:
                raise _error(
                    side,
                    ln,
                    "expected one non-negative integer query size per line, got",
                    " ".join(map(str, r)),
                )
            sizes.append(int(r[0]))
        if sum(sizes) != n_total:
            raise DataFormatError(
                f"{side}: query sizes ({len(sizes)} lines) sum to {sum(sizes)}, "
                f"expected the {n_total} rows of {path}"
            )
        if n == n_total:
            out.group = np.array(sizes, np.int64)
