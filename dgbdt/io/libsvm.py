"""LibSVM text: scikit-learn's C parser plus a Numba scan of the ``qid:`` tokens,
and the exact Python parser that names the first bad line."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Literal

import numpy as np

from ..data.inputs import scipy_sparse
from ..native.text import LINE_BAD_QID, LINE_BLANK, LINE_QID, libsvm_qids
from .errors import DataFormatError, clip_text, data_error
from .filebytes import count_lines, file_lines
from .values import MAX_SPARSE_COLUMNS, LoadedData, query_sizes, to_float

if TYPE_CHECKING:
    from _typeshed import StrPath


def looks_like_libsvm(data: bytes, max_lines: int = 50) -> bool:
    seen = 0
    for line in io.BytesIO(data):
        line = line.split(b"#", 1)[0].strip()
        if not line:
            continue
        tokens = line.split()
        if any(b":" in tok for tok in tokens[1:]):
            return True
        seen += 1
        if seen >= max_lines:
            break
    return False


_INT64_MAX = 2**63 - 1


_CAP_NOTE = f"above the limit of {MAX_SPARSE_COLUMNS} columns (dgbdt.io.MAX_SPARSE_COLUMNS)"


def read_libsvm(
    path: StrPath,
    data: bytes,
    *,
    zero_based: bool,
    n_features: int | None,
    first_line: int = 1,
    features_only: bool = False,
) -> LoadedData:
    from sklearn.datasets import load_svmlight_file  # noqa: PLC0415 - import dgbdt does not load scikit-learn (import time)

    if n_features is not None and int(n_features) > MAX_SPARSE_COLUMNS:
        raise ValueError(f"n_features={n_features} for {path} is {_CAP_NOTE}")

    def exact() -> LoadedData:
        return _parse_libsvm_python(path, data, zero_based, n_features, first_line, features_only)

    try:
        # query_id=False: scikit-learn still skips a leading 'qid:' token, but does
        # not collect the ids with one np.append per row (quadratic in the rows).
        X, y = load_svmlight_file(
            io.BytesIO(data),
            n_features=n_features,
            zero_based=bool(zero_based),
            query_id=False,
            dtype=np.float64,
        )
    except Exception:  # noqa: BLE001 - the Python scan names the line, or parses it
        return exact()
    # Beyond the cap, or an index repeated on a line (scikit-learn refuses those
    # today; not every version did): the exact parser names the line.
    if X.shape[1] > MAX_SPARSE_COLUMNS or not X.has_canonical_format:
        return exact()
    if not features_only and not np.all(np.isfinite(y)):
        return exact()
    group = ids = None
    # scikit-learn skips any second token starting with 'qid'; rows with one are found
    # by the scan below.  (b"q" in data is a memchr, 30x faster than b"qid" in data.)
    if b"q" in data:
        found = _libsvm_groups(path, data, len(y), features_only)
        if found is False:
            return exact()
        if found is not None:
            group, ids = found
    sp = scipy_sparse()
    X = sp.csr_matrix(X, dtype=np.float64)
    if n_features is None and X.nnz == 0:
        X = sp.csr_matrix((X.shape[0], 0))  # no pairs: no columns (scikit-learn says 1)
    label = None if features_only else np.asarray(y, np.float64)
    return LoadedData(X=X, label=label, group=group, query_ids=ids)


def _libsvm_groups(
    path: StrPath, data: bytes, n_rows: int, features_only: bool
) -> tuple[np.ndarray, np.ndarray] | Literal[False] | None:
    """``(query sizes, query ids)`` from the ``qid:`` tokens of LibSVM ``data`` (None: no qids), or
    False where the exact parser must decide (a bad or missing qid, a query seen
    again).  ``features_only``: qids are not used, only checked to be tokens the
    exact parser skips too."""
    n_lines = count_lines(data)
    qids = np.zeros(n_lines, np.int64)
    kinds = np.zeros(n_lines, np.int8)
    libsvm_qids(np.frombuffer(data, np.uint8), qids, kinds)
    rows = kinds != LINE_BLANK
    row_kinds = kinds[rows]
    if len(row_kinds) != n_rows or np.any(row_kinds == LINE_BAD_QID):
        return False
    if features_only:
        return None
    with_qid = row_kinds == LINE_QID
    if with_qid.all() and n_rows:
        try:
            return query_sizes(path, qids[rows], np.arange(n_rows))
        except DataFormatError:
            return False
    if with_qid.any():
        return False  # rows with and without qid: the exact parser names the line
    return None


def _parse_libsvm_python(
    path: StrPath,
    data: bytes,
    zero_based: bool,
    n_features: int | None,
    first_line: int = 1,
    features_only: bool = False,
) -> LoadedData:
    """Slow exact parser: raises DataFormatError at the first bad line, else parses.
    ``first_line`` is the file line number of the first line of ``data``."""
    offset = 0 if zero_based else 1
    labels, indptr, qids, qid_lines = [], [0], [], []
    indices: list[int] = []
    values: list[float] = []
    for lineno, raw in enumerate(file_lines(data), start=first_line):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        rest = text.split()
        if not features_only:
            labels.append(_libsvm_label(path, lineno, rest[0], raw))
            rest = rest[1:]
        elif ":" not in rest[0]:
            rest = rest[1:]  # the label, unread (a line may also have none)
        if rest and rest[0].startswith("qid:"):
            if not features_only:  # predict uses no queries: skipped unread
                qids.append(_libsvm_qid(path, lineno, rest[0], raw))
                qid_lines.append(lineno)
            rest = rest[1:]
        elif qids:
            raise data_error(
                path, lineno, "missing qid: (earlier rows have one) in", clip_text(raw)
            )
        _libsvm_pairs(path, lineno, rest, raw, offset, n_features, indices, values)
        indptr.append(len(indices))
    if qids and len(qids) != len(labels):
        # a row without qid came before the first row with one
        raise DataFormatError(
            f"{path}, line {qid_lines[0]}: qid: appears after rows without "
            f"one in {'qid:' + str(qids[0])!r}"
        )
    ncol = n_features if n_features is not None else (max(indices) + 1 if indices else 0)
    X = scipy_sparse().csr_matrix(
        (
            np.asarray(values, np.float64),
            np.asarray(indices, np.int64),
            np.asarray(indptr, np.int64),
        ),
        shape=(len(indptr) - 1, ncol),
    )
    X.sort_indices()  # no index repeats on a line (checked); explicit zeros are kept
    group = ids = None
    if qids:
        base = first_line - 1
        group, ids = query_sizes(
            path, np.asarray(qids, np.int64), np.asarray(qid_lines) - base, data, base
        )
    label = None if features_only else np.asarray(labels, np.float64)
    return LoadedData(X=X, label=label, group=group, query_ids=ids)


def _libsvm_label(path: StrPath, lineno: int, first: str, raw: str) -> float:
    if ":" in first:
        raise data_error(path, lineno, "missing label before", first, raw)
    try:
        label = to_float(first)
    except ValueError:
        raise data_error(path, lineno, "cannot parse label", first, raw) from None
    if not np.isfinite(label):
        raise data_error(path, lineno, "non-finite label", first, raw)
    return label


def _libsvm_qid(path: StrPath, lineno: int, token: str, raw: str) -> int:
    try:
        qid = int(token[4:])
        if abs(qid) > _INT64_MAX:
            raise ValueError
    except ValueError:
        raise data_error(path, lineno, "cannot parse query id", token, raw) from None
    return qid


def _libsvm_pairs(
    path: StrPath,
    lineno: int,
    tokens: list[str],
    raw: str,
    offset: int,
    n_features: int | None,
    indices: list[int],
    values: list[float],
) -> None:
    """Append the columns and values of one line's ``idx:val`` tokens to ``indices``
    and ``values``; the first bad token (unparsable, out of range, repeated) raises."""
    start = len(indices)
    for tok in tokens:
        idx_s, colon, val_s = tok.partition(":")
        try:
            if not colon:
                raise ValueError
            idx = int(idx_s)
            val = to_float(val_s)
        except ValueError:
            raise data_error(path, lineno, "cannot parse index:value pair", tok, raw) from None
        col = idx - offset
        if col < 0:
            what = "negative feature index" if idx < 0 else "feature index 0 in a one-based file"
            raise data_error(path, lineno, what, tok, raw)
        if n_features is not None and col >= n_features:
            raise data_error(
                path, lineno, f"feature index beyond n_features={n_features}", tok, raw
            )
        if col >= MAX_SPARSE_COLUMNS:
            raise data_error(path, lineno, f"feature index {idx} {_CAP_NOTE}:", tok, raw)
        indices.append(col)
        values.append(val)
    if len(indices) - start > 1:
        seen: set[int] = set()
        for k in range(start, len(indices)):
            if indices[k] in seen:  # LightGBM would sum them, scikit-learn refuses
                raise data_error(
                    path,
                    lineno,
                    f"feature index {indices[k] + offset} repeated on the line:",
                    tokens[k - start],
                    raw,
                )
            seen.add(indices[k])
