"""A Dataset's raw data as columns (``FeatureSource``): numpy arrays, pandas
DataFrames (category and sparse columns included) and scipy.sparse matrices
read column by column as binning wants them, contiguous float64 or a sparse
(values, rows) pair; a subset's rows of them (``RowSubset``); the size checks
of sparse input."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..io import MAX_SPARSE_COLUMNS
from .categorical import category_codes
from .inputs import (
    as_numeric,
    checked_sparse,
    complex_error,
    fills_zero,
    is_complex,
    is_dataframe,
    is_row_parts,
    is_sparse,
    scipy_sparse,
)

if TYPE_CHECKING:
    from .binning import RawColumn


def _human_bytes(n: float) -> str:  # type: ignore[return]  # (the loop returns, at PiB last)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # not POSIX: no check
        return None


# Bytes per row a training needs whatever the features: gradient and hessian
# (float32), score (float64), row index (uint32) and the sparse part's row pointer
# (int64).
BYTES_PER_ROW = 4 + 4 + 8 + 4 + 8


def check_sparse_shape(shape: tuple[int, ...]) -> None:
    """Sparse input is binned column by column and kept sparse (dgbdt.data.store), so
    its size is its non-zeros, but each column has a CSC pointer and bin bounds
    and each row its training buffers: refuse more than MAX_SPARSE_COLUMNS
    columns, or more rows than memory holds (an empty 3 x 2e9 or 2**50 x 2
    matrix costs nothing to make)."""
    n_samples, n_features = (int(v) for v in shape)
    memory = _physical_memory()
    per_rows = n_samples * BYTES_PER_ROW
    if n_features <= MAX_SPARSE_COLUMNS and (memory is None or per_rows <= memory):
        return
    why = (
        f"more than the {MAX_SPARSE_COLUMNS} columns dgbdt takes from sparse input "
        "(dgbdt.io.MAX_SPARSE_COLUMNS); keep only the columns that hold values"
        if n_features > MAX_SPARSE_COLUMNS
        else f"its {n_samples} rows need {_human_bytes(per_rows)} of training buffers "
        f"({BYTES_PER_ROW} bytes a row), more than this machine's "
        f"{_human_bytes(memory)} of memory"  # type: ignore[arg-type]  # (not None here)
    )
    raise ValueError(f"sparse data of shape {tuple(shape)}: {why}")


def _sparse_column(col: Any) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]] | None:
    """(values, rows) of a pandas sparse column whose fill value is 0, else None."""
    array = col.array
    if not hasattr(array, "sp_values") or not fills_zero(array.fill_value):
        return None
    values = np.asarray(array.sp_values, dtype=np.float64)
    return np.ascontiguousarray(values), np.asarray(array.sp_index.indices, np.int64)


def has_sparse_columns(df: Any) -> bool:
    """Whether a DataFrame has pandas sparse columns that fill with 0 (kept sparse)."""
    return any(hasattr(dtype, "fill_value") and fills_zero(dtype.fill_value) for dtype in df.dtypes)


def _dataframe_columns(df: Any, category_lists: Iterable[Sequence[Any]]) -> Iterator[RawColumn]:
    """A frame's columns as FeatureSource yields them; a category column as the
    float codes of its values in ``category_lists`` (its column's list, by
    value: frames may order or hold their categories differently), NaN for
    missing or unlisted values."""
    lists = iter(category_lists)
    for i, name in enumerate(df.columns):
        col = df.iloc[:, i]  # by position: names may repeat
        sparse = _sparse_column(col)
        if sparse is not None:
            yield sparse  # a sparse column stays sparse
            continue
        if str(col.dtype) == "category":
            yield category_codes(col, next(lists))
            continue
        if col.dtype == object or str(col.dtype) in ("string", "str"):
            raise TypeError(
                f"Column {name!r} holds strings (dtype {col.dtype}); a categorical "
                "column must be a pandas category column (df[col].astype('category')) "
                "or integer codes"
            )
        try:
            yield col.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"Column {name!r} of dtype {col.dtype} is not numeric") from exc


def frame_category_lists(df: Any) -> tuple[list[list[Any]], list[int]]:
    """The category lists of a frame's category columns, in column order
    (LightGBM's ``pandas_categorical``), and those columns' positions."""
    found = [
        (i, df.iloc[:, i].cat.categories.tolist())
        for i, dtype in enumerate(df.dtypes)
        if str(dtype) == "category"
    ]
    return [c for _, c in found], [i for i, _ in found]


class FeatureSource:
    """Uniform column access over numpy arrays, pandas DataFrames and scipy.sparse.

    Columns come out as contiguous float64 (dense) or a (values, row_indices)
    pair (sparse), so the binning kernels are compiled for one dtype only.
    """

    names: list[str] | None
    category_lists: list[list[Any]]
    category_columns: list[int]
    kind: str
    shape: tuple[int, ...]
    compact: Any  # (sparse input) a scipy.sparse CSC matrix of the used columns
    used: npt.NDArray[np.int64]  # (sparse input)
    parts: list[np.ndarray]  # (a Sequence or a list of parts: their rows' arrays)

    def __init__(self, data: Any) -> None:
        self.names = None
        # pandas category columns: their positions and the category lists their
        # values are coded by (the frame's own until training agrees on others)
        self.category_lists, self.category_columns = [], []
        self.auto_columns: list[int] = []  # the categorical features "auto" takes
        if is_row_parts(data):
            self.kind = "parts"
            self.data = data  # as given: get_data returns it (LightGBM)
            self.parts = read_parts(data)
            self.shape = (sum(len(p) for p in self.parts), self.parts[0].shape[1])
            return
        if is_complex(data):
            raise complex_error(data, "data")
        if is_sparse(data):
            data = checked_sparse(data, "data")
            check_sparse_shape(data.shape)
            self.kind = "sparse"
            # Only the columns holding entries, and which they are: a hashed-text
            # matrix of 2**24 columns costs its non-zeros, not its width.
            self.compact, self.used = compact_columns(data)
            self.shape = tuple(int(v) for v in data.shape)
        elif is_dataframe(data):
            self.kind = "frame"
            self.data = data
            self.shape = data.shape
            self.names = [str(c) for c in data.columns]
            self.category_lists, self.category_columns = frame_category_lists(data)
            # "auto" takes the unordered ones: an ordered column trains on its
            # codes as numbers (LightGBM)
            self.auto_columns = [
                i for i in self.category_columns if not data.iloc[:, i].cat.ordered
            ]
        else:
            arr = np.asarray(data)
            if arr.ndim == 1:
                raise ValueError(
                    f"data must be 2-dimensional (n_samples, n_features), got shape {arr.shape}; "
                    "reshape a single feature with X.reshape(-1, 1)"
                )
            if arr.ndim != 2:
                raise ValueError(f"data must be 2-dimensional, got shape {arr.shape}")
            arr = as_numeric(arr, "data")  # (complex: refused above)
            self.kind = "dense"
            self.data = arr
            self.shape = arr.shape

    @property
    def data(self) -> Any:
        """The data as given (sparse: a CSC matrix of every column, made on request)."""
        if self.kind != "sparse":
            return self._data
        m, counts = self.compact, np.zeros(self.shape[1], np.int64)
        counts[self.used] = np.diff(m.indptr)
        indptr = np.concatenate([[0], np.cumsum(counts)])
        return scipy_sparse().csc_matrix((m.data, m.indices, indptr), shape=self.shape)

    @data.setter
    def data(self, value: Any) -> None:
        self._data = value

    def take_rows(self, rows: npt.NDArray[np.int64]) -> Any:
        """The data at ``rows`` (sorted), in the input's kind (parts: one array)."""
        if self.kind == "frame":
            return self.data.iloc[rows]
        if self.kind != "parts":
            return self.data[rows]
        ends = np.cumsum([len(p) for p in self.parts])
        part = np.searchsorted(ends, rows, side="right")
        starts = ends - np.array([len(p) for p in self.parts])
        taken = [self.parts[i][rows[part == i] - starts[i]] for i in np.unique(part)]
        return np.concatenate(taken) if taken else self.parts[0][:0]

    def keeps_sparse(self) -> bool:
        """Whether (some) columns come sparse: binned one by one, not into one matrix."""
        return self.kind == "sparse" or (self.kind == "frame" and has_sparse_columns(self.data))

    def used_columns(self) -> npt.NDArray[np.int64] | None:
        """Sorted int64 columns that may hold a value other than 0.0 (sparse
        input: those with entries); None: every column."""
        return self.used if self.kind == "sparse" else None

    def bytes_per_column(self) -> int:
        """About how many bytes one column and its sampled values take while
        bounds are found (sparse: 24 per stored value; else 16 per row)."""
        if self.kind == "sparse":
            return 24 * self.compact.nnz // max(len(self.used), 1) + 64
        return 16 * self.shape[0] + 64

    def columns(self, used: npt.NDArray[np.int64] | None = None) -> Iterator[RawColumn]:
        """Each column in order, or each of ``used`` (sorted column indices)."""
        if self.kind == "sparse":
            yield from _sparse_columns(self.compact, self.used, used, self.shape[1])
        elif self.kind == "frame":
            yield from _only(_dataframe_columns(self.data, self.category_lists), used)
        elif self.kind == "parts":  # a column at a time: the parts are never joined whole
            for f in range(self.shape[1]) if used is None else used:
                yield np.concatenate([p[:, f] for p in self.parts]).astype(np.float64, copy=False)
        else:
            for f in range(self.shape[1]) if used is None else used:
                yield np.ascontiguousarray(self.data[:, f], dtype=np.float64)


def _only(columns: Iterable[RawColumn], used: npt.ArrayLike | None) -> Iterator[RawColumn]:
    """The columns of ``used`` (sorted indices; None: all) among ``columns``, in
    order (a frame's category columns are coded in column order)."""
    if used is None:
        yield from columns
        return
    wanted = set(np.asarray(used).tolist())
    for f, col in enumerate(columns):
        if f in wanted:
            yield col


def compact_columns(data: Any) -> tuple[Any, npt.NDArray[np.int64]]:
    """(CSC matrix of the columns of sparse ``data`` holding entries, duplicates
    summed; their sorted int64 indices), in time and memory of the non-zeros
    (a CSC copy of every column would take a pointer per column)."""
    sp = scipy_sparse()
    if data.format == "csc":
        m = sp.csc_matrix(data)  # shares data's arrays
        if not m.has_canonical_format:  # summed in a copy: in place, data's would change
            m = m.copy()
            m.sum_duplicates()
        used = np.flatnonzero(np.diff(m.indptr)).astype(np.int64)
        indptr = np.append(m.indptr[used], m.indptr[-1]).astype(m.indptr.dtype)
        return sp.csc_matrix((m.data, m.indices, indptr), shape=(m.shape[0], len(used))), used
    coo = sp.coo_matrix(data)
    used, col = np.unique(coo.col, return_inverse=True)
    m = sp.csc_matrix((coo.data, (coo.row, col.reshape(-1))), shape=(coo.shape[0], len(used)))
    m.sum_duplicates()
    return m, used.astype(np.int64)


def _sparse_columns(
    m: Any, have: npt.NDArray[np.int64], used: npt.NDArray[np.int64] | None, width: int
) -> Iterator[tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]]:
    """(values, rows) of each column of ``used`` (None: all ``width``) of the
    compact CSC ``m`` holding the columns ``have``; a column not among them is
    empty."""
    empty = (np.zeros(0, np.float64), np.zeros(0, np.int64))
    wanted = range(width) if used is None else used
    pos = np.searchsorted(have, np.asarray(wanted, np.int64))
    pos = np.minimum(pos, max(len(have) - 1, 0))
    for f, i in zip(wanted, pos.tolist(), strict=True):
        if not len(have) or have[i] != f:
            yield empty
            continue
        lo, hi = m.indptr[i], m.indptr[i + 1]
        yield (
            np.ascontiguousarray(m.data[lo:hi], dtype=np.float64),
            np.ascontiguousarray(m.indices[lo:hi], dtype=np.int64),
        )


def read_parts(data: Any) -> list[np.ndarray]:
    """The rows of a RowSequence, or of a list of them or of 2-D arrays
    (``is_row_parts``), as numeric 2-D arrays of one width: a Sequence read
    once, ``batch_size`` rows at a time (LightGBM's batches), its batches kept
    as they come; arrays as they are."""
    parts: list[np.ndarray] = []
    for i, part in enumerate(data if isinstance(data, list) else [data]):
        what = f"data part {i}" if isinstance(data, list) else "data"
        if isinstance(part, np.ndarray):
            batches = [part]
        else:
            step = int(getattr(part, "batch_size", None) or 4096)
            n = len(part)
            batches = [np.asarray(part[lo : min(lo + step, n)]) for lo in range(0, n, step)]
        for batch in batches:
            if is_complex(batch):
                raise complex_error(batch, what)
            if batch.ndim != 2:
                raise ValueError(f"{what} must give 2-D rows, got shape {batch.shape}")
            parts.append(as_numeric(batch, what))
    if not parts:
        raise ValueError("data holds no rows (an empty Sequence)")
    widths = {p.shape[1] for p in parts}
    if len(widths) > 1:
        raise ValueError(f"the parts of data have different numbers of columns: {sorted(widths)}")
    return parts


class RowSubset:
    """The raw data of a :meth:`Dataset.subset`: its parent's FeatureSource at
    ``rows`` (sorted int64, repeats allowed), sliced column by column as binning
    reads them, never copied whole.  ``source`` None: the parent's raw data was
    freed, and the subset is binned from the parent's bin store instead."""

    kind: str
    shape: tuple[int, int]
    names: list[str] | None
    category_lists: list[list[Any]]
    category_columns: list[int]
    auto_columns: list[int]

    def __init__(
        self,
        source: FeatureSource | RowSubset | None,
        rows: npt.NDArray[np.int64],
        n_features: int,
        auto_categorical: Iterable[int],
    ) -> None:
        self.source, self.rows = source, rows
        self.kind = "binned" if source is None else source.kind
        self.shape = (len(rows), n_features)
        self.names = None if source is None else source.names
        self.category_lists = [] if source is None else list(source.category_lists)
        self.category_columns = [] if source is None else list(source.category_columns)
        self.auto_columns = list(auto_categorical)

    @property
    def data(self) -> Any:
        """The parent's raw data at the subset's rows (LightGBM's ``get_data``)."""
        assert self.source is not None  # (a subset without raw data holds no RowSubset)
        return self.source.take_rows(self.rows)

    def take_rows(self, rows: npt.NDArray[np.int64]) -> Any:
        """The parent's raw data at this subset's ``rows`` (sorted)."""
        assert self.source is not None  # (a subset without raw data holds no RowSubset)
        return self.source.take_rows(self.rows[rows])

    def keeps_sparse(self) -> bool:
        assert self.source is not None  # (a subset without raw data holds no RowSubset)
        return self.source.keeps_sparse()

    def used_columns(self) -> npt.NDArray[np.int64] | None:
        assert self.source is not None  # (a subset without raw data holds no RowSubset)
        return self.source.used_columns()

    def bytes_per_column(self) -> int:
        return 16 * len(self.rows) + 64

    def columns(self, used: npt.NDArray[np.int64] | None = None) -> Iterator[RawColumn]:
        src = self.source
        assert src is not None  # (a subset without raw data holds no RowSubset)
        if src.kind == "frame":  # coded by this subset's category lists (its reference's)
            columns = _only(_dataframe_columns(src.data, self.category_lists), used)
        else:
            columns = src.columns(used)
        for col in columns:
            yield _column_rows(col, self.rows)


def _column_rows(col: RawColumn, rows: npt.NDArray[np.int64]) -> RawColumn:
    """A FeatureSource column (dense, or sparse (values, ascending rows)) at ``rows``."""
    if not isinstance(col, tuple):
        return np.ascontiguousarray(col[rows])
    values, where = col
    if not len(where):
        return values[:0].copy(), np.zeros(0, np.int64)
    pos = np.minimum(np.searchsorted(where, rows), len(where) - 1)
    hit = where[pos] == rows
    return np.ascontiguousarray(values[pos[hit]]), np.flatnonzero(hit).astype(np.int64)
