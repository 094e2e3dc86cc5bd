"""What a read returns, and the values every format reads alike: missing-value
tokens, the sparse column cap and contiguous query groups."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import DataFormatError, clip_text
from .filebytes import line_at

if TYPE_CHECKING:
    import scipy.sparse as sp
    from _typeshed import StrPath

#: The most columns a LibSVM file (largest index + 1) or a scipy.sparse matrix
#: given to ``Dataset`` may have.  A Dataset bins only the columns that hold
#: values (dgbdt.data.dataset), so hashed text of 2**24 columns costs its non-zeros;
#: the cap keeps an index like 2000000000 (a typo, or a file that is not
#: LibSVM) an error rather than a model of two billion features.
MAX_SPARSE_COLUMNS = 1 << 30


def _case_variants(word: str) -> set[str]:
    return {"".join(cs) for cs in itertools.product(*((c.lower(), c.upper()) for c in word))}


#: Missing values (NaN) in data and side files: what LightGBM's Common::Atof
#: (include/LightGBM/utils/common.h) reads as NaN -- na, nan and null in any case,
#: after an optional sign -- and the empty field; also N/A and None, which LightGBM
#: refuses ("Unknown token").  inf and infinity (any case, signed) are numbers.
NA_TOKENS = ("", "N/A", "None") + tuple(
    sorted(
        sign + variant
        for word in ("na", "nan", "null")
        for variant in _case_variants(word)
        for sign in ("", "+", "-")
    )
)


_NA_SET = frozenset(NA_TOKENS)


@dataclass
class LoadedData:
    """The arrays of a read.  ``group``: query sizes (int64, from a group column,
    ``qid:`` fields or a ``.query`` file); ``query_ids``: the id of each of those
    queries where the file names them (a group column: float64, ``qid:``: int64;
    None from a ``.query`` file); ``position``: int64 per row, from a
    ``.position`` file."""

    X: np.ndarray | sp.csr_matrix
    label: np.ndarray | None
    weight: np.ndarray | None = None
    group: np.ndarray | None = None
    init_score: np.ndarray | None = None
    feature_names: list[str] | None = None
    query_ids: np.ndarray | None = None
    position: np.ndarray | None = None


def to_float(token: str) -> float:
    """A number of a side file or LibSVM text: Python's float(), and the missing-value
    tokens of delimited text (NaN), so that ``NA`` reads alike everywhere."""
    return math.nan if token in _NA_SET else float(token)


def query_sizes(
    path: StrPath,
    qid: np.ndarray,
    line_no: np.ndarray,
    data: bytes | None = None,
    base: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """``(sizes, ids)``: run lengths of contiguous query ids (int64) and the id of
    each run; a query id seen again later is an error.

    ``line_no[i]`` is the 1-based line of row ``i`` in ``data`` (the file's bytes from
    line ``base + 1`` on), which, when given, lets the message quote that line.
    """
    if len(qid) == 0:
        return np.zeros(0, np.int64), np.asarray(qid)[:0].copy()
    change = np.flatnonzero(qid[1:] != qid[:-1]) + 1
    starts = np.concatenate(([0], change))
    ids = qid[starts]
    if len(np.unique(ids)) != len(ids):
        seen: set[Any] = set()
        for s, q in zip(starts, ids, strict=True):
            if q in seen:
                ln = int(line_no[s])
                where = "" if data is None else f" in {clip_text(line_at(data, ln))!r}"
                raise DataFormatError(
                    f"{path}, line {ln + base}: query id {format_id(q)!r} appears again "
                    f"after other queries (rows of a query must be "
                    f"contiguous){where}"
                )
            seen.add(q)
    return np.diff(np.append(starts, len(qid))).astype(np.int64), ids.copy()


def format_id(q: float | np.number[Any]) -> str:
    x = float(q)
    return str(int(x)) if x.is_integer() else str(x)
