"""What dgbdt takes as data, in one place: a polars or Arrow table read as
pandas, a DataFrame told apart, numbers checked to be real and to fit float64
(the one cast of a non-numeric array, for the Dataset and for predict), date
and duration columns refused, sparse matrices' structure checked, sparse fill
values; predict's rows: a model's input checked (width, feature
names, category columns coded by the model's lists) and handed out as float64
blocks.  The Dataset reads its columns through dgbdt.data.sources."""

from __future__ import annotations

import abc
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..log import DGBDTError
from .categorical import category_codes
from .names import without_spaces

if TYPE_CHECKING:
    from types import ModuleType

    import pandas as pd
    import scipy.sparse as sp


class RowSequence(abc.ABC):
    """Rows read on request (LightGBM's ``Sequence``, exported as
    ``dgbdt.Sequence``): data too large, or kept elsewhere (a file, a
    database), to be handed over as one array.  A subclass gives ``len(seq)``,
    ``seq[i]`` (row ``i``, 1-D) and ``seq[start:stop]`` (those rows, 2-D);
    ``batch_size`` is how many rows a Dataset reads at a time.  A Dataset takes
    one, or a list of them (their rows one after the other)."""

    #: Rows a Dataset reads per ``seq[start:stop]`` (None or 0: this default).
    batch_size: int | None = 4096

    @abc.abstractmethod
    def __getitem__(self, idx: Any) -> np.ndarray:
        """Row ``idx`` (an int: 1-D) or rows ``idx`` (a slice: 2-D)."""

    @abc.abstractmethod
    def __len__(self) -> int:
        """The number of rows."""


def is_row_parts(data: object) -> bool:
    """Whether ``data`` is a RowSequence, or a non-empty list of them or of
    2-D numpy arrays: rows in parts, read part by part (LightGBM takes
    those lists; a list of rows of numbers is one matrix instead)."""
    if isinstance(data, RowSequence):
        return True
    if not isinstance(data, list) or not data:
        return False
    if all(isinstance(p, RowSequence) for p in data):
        return True
    return all(isinstance(p, np.ndarray) and p.ndim == 2 for p in data)


def is_sparse(data: object) -> bool:
    """Whether data is a scipy sparse matrix or array, without importing scipy:
    no such object exists before scipy.sparse is imported."""
    module = sys.modules.get("scipy.sparse")
    return module is not None and bool(module.issparse(data))


def scipy_sparse() -> ModuleType:
    """scipy.sparse, imported when first needed."""
    import scipy.sparse  # noqa: PLC0415 - import dgbdt does not load scipy (import time)

    return scipy.sparse


# scipy checks a sparse matrix's structure where the matrix is made, and even
# then not the range of its indices (check_format(full_check=False)); arrays
# changed afterwards, or given with copy=False, reach its C conversions, which
# then read and write out of bounds (SIGSEGV) or make a matrix of other values.
# So every sparse input is checked here, in O(nnz) numpy and without copies,
# before anything converts it.


def _index_array(values: Any, what: str) -> np.ndarray:
    """``values`` as a 1-D integer ndarray (not copied), or an error naming ``what``."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{what} must hold integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D, got shape {arr.shape}")
    return arr


def _first_outside(indices: np.ndarray, size: int) -> int | None:
    """The position of the first index outside [0, size); None: all inside."""
    if not len(indices) or (indices.min() >= 0 and indices.max() < size):
        return None
    return int(np.flatnonzero((indices < 0) | (indices >= size))[0])


def _pointer_end(indptr: np.ndarray, n_major: int, n_stored: int, what: str, major: str) -> int:
    """A compressed matrix's number of entries, indptr[-1], once its index
    pointer is checked: n_major + 1 values from 0, never decreasing, ending at
    most at the ``n_stored`` entries it indexes."""
    if len(indptr) != n_major + 1:
        raise ValueError(
            f"{what} index pointer (indptr) has {len(indptr)} values; "
            f"its {n_major} {major}s need {n_major + 1}"
        )
    if indptr[0] != 0:
        raise ValueError(f"{what} index pointer (indptr) starts at {indptr[0]}, not at 0")
    down = np.flatnonzero(indptr[1:] < indptr[:-1])
    if len(down):
        i = int(down[0])
        raise ValueError(
            f"{what} index pointer (indptr) decreases at {major} {i} (indptr[{i}] = "
            f"{indptr[i]} > indptr[{i + 1}] = {indptr[i + 1]}): it must not decrease"
        )
    end = int(indptr[-1])
    if end > n_stored:
        raise ValueError(
            f"{what} index pointer (indptr) ends at {end}, beyond its {n_stored} "
            "stored entries (indices, data)"
        )
    return end


def _scipy_index_dtypes(*arrays: np.ndarray) -> bool:
    """Whether index arrays are of the one dtype, int32 or int64, scipy's C
    conversions take (arrays set after scipy made the matrix may not be: they
    fail with "Output dtype not compatible with inputs")."""
    return len({a.dtype for a in arrays}) == 1 and arrays[0].dtype in (np.int32, np.int64)


def _checked_coo(m: Any, values: np.ndarray, shape: tuple[int, int], what: str) -> Any:
    if values.ndim != 1:
        raise ValueError(f"{what} values (data) must be 1-D, got shape {values.shape}")
    coords = []
    for axis, (word, given) in enumerate((("row", m.row), ("column", m.col))):
        idx = _index_array(given, f"{what} {word} indices")
        if len(idx) != len(values):
            raise ValueError(f"{what} has {len(idx)} {word} indices for {len(values)} values")
        bad = _first_outside(idx, shape[axis])
        if bad is not None:
            raise ValueError(
                f"{what} {word} index {idx[bad]} at entry {bad} is outside the "
                f"matrix's {shape[axis]} {word}s"
            )
        coords.append(idx)
    if not _scipy_index_dtypes(*coords):  # made again: scipy casts them to its index dtype
        return type(m)((values, tuple(coords)), shape=shape)
    return m


def _checked_compressed(m: Any, values: np.ndarray, shape: tuple[int, int], what: str) -> Any:
    """CSR, CSC or BSR ``m`` checked (BSR: its pointer and indices count blocks)."""
    csc = m.format == "csc"
    major, minor = ("column", "row") if csc else ("row", "column")
    r, c = 1, 1
    if m.format == "bsr":
        r, c = values.shape[1:] if values.ndim == 3 else (0, 0)
        if not r or not c or shape[0] % r or shape[1] % c:
            raise ValueError(f"{what} blocks (data of shape {values.shape}) do not tile {shape}")
        major, minor = f"block {major}", f"block {minor}"
    elif values.ndim != 1:
        raise ValueError(f"{what} values (data) must be 1-D, got shape {values.shape}")
    n_major, n_minor = (shape[1], shape[0]) if csc else (shape[0] // r, shape[1] // c)
    indptr = _index_array(m.indptr, f"{what} index pointer (indptr)")
    indices = _index_array(m.indices, f"{what} indices")
    if len(indices) != len(values):
        raise ValueError(f"{what} has {len(indices)} indices for {len(values)} values (data)")
    end = _pointer_end(indptr, n_major, len(indices), what, major)
    bad = _first_outside(indices[:end], n_minor)
    if bad is not None:
        at = int(np.searchsorted(indptr, bad, side="right")) - 1
        raise ValueError(
            f"{what} {minor} index {indices[bad]} at {major} {at} is outside the "
            f"matrix's {n_minor} {minor}s"
        )
    # Made again (no copy of the values) where scipy's conversions would not
    # take it: entries stored past the pointer's end (scipy's prune drops them),
    # or index arrays of other dtypes (scipy casts them to its index dtype).
    if end < len(indices) or not _scipy_index_dtypes(indices, indptr):
        return type(m)((values[:end], indices[:end], indptr), shape=shape)
    return m


def _summed_as_numbers(m: Any) -> Any:
    """``m``, with integer or bool values as float64 where it may repeat an
    entry: scipy sums repeats in their dtype (int8 100 + 100 is -56, bool
    True + True is True), scikit-learn's checks cast to float64 first (200,
    2); dgbdt sums them as the numbers they are at every entry point."""
    if m.dtype.kind not in "biu" or getattr(m, "has_canonical_format", False):
        return m
    return m.astype(np.float64, copy=False)  # (the values only: indices are shared)


def checked_sparse(data: Any, name: str) -> Any:
    """Sparse ``data`` with a sound structure, else a ValueError (TypeError:
    indices that are not integers, values that are not numbers) naming
    ``name``, the format and what is wrong: a shape of two sizes; values of a
    dtype scipy's C code takes; integer index arrays; CSR, CSC and
    BSR index pointers of one more value than rows (columns, block rows), from
    0, never decreasing, ending within the stored entries (entries past the
    end are dropped, as scipy's prune does); indices, and COO coordinates,
    within the shape.  CSR/CSC/BSR/COO are checked before any conversion;
    LIL, DOK and DIA, whose conversions build what they give, as that CSR.
    Entries repeated at one position are summed, as scipy's conversions
    (toarray, tocsc, COO to CSR) and so every dgbdt entry point sum them, an
    integer or bool matrix's in float64 (see _summed_as_numbers): a matrix
    means its astype(float64).toarray().  (LightGBM's predict takes the last
    of them instead: a value scipy, scikit-learn and the matrix never show.)"""
    sizes = tuple(int(v) for v in data.shape)
    if len(sizes) != 2 or min(sizes) < 0:
        raise ValueError(f"{name} must be a 2-dimensional sparse matrix, got shape {sizes}")
    shape = (sizes[0], sizes[1])
    if data.format not in ("csr", "csc", "bsr", "coo"):
        return checked_sparse(data.tocsr(), name)
    what = f"{name} ({data.format.upper()})"
    values = np.asarray(data.data)
    # (complex: each caller refuses it in its own words; float16: scipy's C code does not take it)
    if values.dtype.kind not in "biufc" or values.dtype == np.float16:
        raise TypeError(
            f"{what} holds values of dtype {values.dtype}: dgbdt takes sparse matrices "
            "of bool, integers, float32 or float64"
        )
    if data.format == "coo":
        return _summed_as_numbers(_checked_coo(data, values, shape, what))
    return _summed_as_numbers(_checked_compressed(data, values, shape, what))


def is_dataframe(data: object) -> bool:
    return type(data).__module__.startswith("pandas") and hasattr(data, "columns")


def is_lazy_frame(data: object) -> bool:
    """Whether ``data`` is a polars LazyFrame: a query, not yet data."""
    return type(data).__module__.startswith("polars") and type(data).__name__ == "LazyFrame"


def as_pandas_if_arrow(data: Any, name: str = "data") -> Any:
    """A polars DataFrame or a pyarrow Table as a pandas DataFrame (names kept;
    polars Categorical/Enum and Arrow dictionary columns become category
    columns); any other ``data`` as it is.  A polars LazyFrame is refused
    (LightGBM's TypeError): it must be collected first.  A table's date, time
    and duration columns are refused (refuse_time_columns), before the
    conversion makes some of them object columns that no longer say so."""
    if is_lazy_frame(data):
        raise TypeError("data is a polars LazyFrame: collect it first (data.collect())")
    refuse_time_columns(data, name)
    module = type(data).__module__
    if module.startswith("polars") and hasattr(data, "to_pandas") and hasattr(data, "columns"):
        return data.to_pandas()
    if module.startswith("pyarrow") and hasattr(data, "to_pandas") and hasattr(data, "schema"):
        return data.to_pandas()
    return data


def _is_arrow_time(arrow_type: Any) -> bool:
    # pyarrow is loaded: an Arrow type exists
    return bool(sys.modules["pyarrow"].types.is_temporal(arrow_type))


def _is_time_dtype(dtype: Any) -> bool:
    """A pandas or numpy dtype of dates, times or durations: datetime64 (and
    pandas' tz-aware DatetimeTZDtype and Arrow timestamps, also of kind "M"),
    timedelta64, Period, or another Arrow date/time type (ArrowDtype)."""
    if getattr(dtype, "kind", None) in ("m", "M") or type(dtype).__name__ == "PeriodDtype":
        return True
    arrow = getattr(dtype, "pyarrow_dtype", None)
    return arrow is not None and _is_arrow_time(arrow)


def time_columns(data: Any) -> list[str]:
    """'name (dtype)' of each date, time or duration column of a pandas,
    polars or Arrow table; [] for anything else."""
    module = type(data).__module__
    if module.startswith("polars") and hasattr(data, "schema"):
        return [f"{c!r} ({t})" for c, t in data.schema.items() if t.is_temporal()]
    if module.startswith("pyarrow") and hasattr(data, "schema"):
        return [f"{f.name!r} ({f.type})" for f in data.schema if _is_arrow_time(f.type)]
    if is_dataframe(data):
        return [f"{c!r} ({t})" for c, t in data.dtypes.items() if _is_time_dtype(t)]
    return []


# How to turn dates into numbers, said by every refusal of them.
_TIME_ADVICE = (
    "their numbers depend on the unit (one instant as datetime64[s] and as "
    "datetime64[us] differs a million-fold), so dgbdt, like LightGBM, takes "
    "int, float or bool columns only. Convert them to numbers in a unit you "
    "choose, the same at fit and predict: e.g. pandas "
    "df[col].dt.as_unit('s').astype('int64') (seconds since 1970, or of a "
    "duration), polars pl.col(col).dt.epoch('s') or .dt.total_seconds(), or "
    "features such as .dt.dayofweek"
)


def refuse_time_columns(data: Any, name: str) -> None:
    """A ValueError naming the date, time and duration columns of a pandas,
    polars or Arrow table ``data``, if it has any (LightGBM refuses pandas'
    as "bad pandas dtypes"): taken as numbers they are integers of their own
    unit, and the same instants in another unit would predict differently."""
    found = time_columns(data)
    if found:
        raise ValueError(
            f"{name} has date, time or duration columns {', '.join(found)}: {_TIME_ADVICE}"
        )


def refuse_time_array(values: Any, name: str) -> None:
    """A ValueError if ``values`` is an array of numpy datetime64 or timedelta64:
    a cast would give integers of their unit (LightGBM takes them so)."""
    dtype = getattr(values, "dtype", None)
    if getattr(dtype, "kind", None) in ("m", "M"):
        raise ValueError(f"{name} holds dates or durations (dtype {dtype}): {_TIME_ADVICE}")


def check_input(data: Any, name: str) -> None:
    """What an entry point that converts ``data`` itself (the scikit-learn
    estimators' checks) refuses first, in the Dataset's and predict's words:
    date, time and duration columns or arrays, and sparse matrices whose
    structure is broken."""
    refuse_time_columns(data, name)
    refuse_time_array(data, name)
    if is_sparse(data):
        checked_sparse(data, name)


def is_complex(values: Any) -> bool:
    """Whether ``values`` (array, DataFrame, Series, list) holds complex numbers: a cast
    to float64 would drop the imaginary part with only a warning."""
    if is_dataframe(values):
        return any(getattr(d, "kind", "") == "c" for d in values.dtypes)
    dtype = getattr(values, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(values).dtype
        except (TypeError, ValueError):
            return False  # ragged and the like: the float conversion says what is wrong
    return getattr(dtype, "kind", "") == "c"


def complex_error(values: Any, name: str) -> TypeError:
    if is_dataframe(values):
        column = next(c for c, d in values.dtypes.items() if getattr(d, "kind", "") == "c")
        what = f"{name} column {column!r} is complex"
    else:
        dtype = values.dtype if hasattr(values, "dtype") else np.asarray(values).dtype
        what = f"{name} is complex ({dtype})"
    return TypeError(
        f"{what}; dgbdt takes real numbers only (casting would drop the imaginary part)"
    )


def as_float(values: Any, name: str) -> npt.NDArray[np.float64]:
    """``values`` as a float64 ndarray; complex numbers are a TypeError and numbers
    beyond float64 (a Python int over 1e308) a ValueError, both naming ``name``."""
    if is_complex(values):
        raise complex_error(values, name)
    if is_dataframe(values):
        values = values.to_numpy()
    try:
        return np.asarray(values, dtype=np.float64)
    except OverflowError as exc:
        raise ValueError(f"{name} holds a number beyond float64: {exc}") from None
    except TypeError as exc:
        raise TypeError(f"{name} must be numeric: {exc}") from None


def as_numeric(arr: np.ndarray, name: str) -> np.ndarray:
    """``arr`` as it is when its dtype holds numbers (complex included: each
    caller refuses complex numbers in its own words), else cast to float64
    (object arrays of numbers); a TypeError naming ``name`` when it cannot be."""
    if arr.dtype.kind in "fiubc":
        return arr
    refuse_time_array(arr, name)
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}") from exc


def fills_zero(value: Any) -> bool:
    """Whether a sparse fill value is zero (a pandas sparse column of it is
    sparse input)."""
    try:
        return float(value) == 0.0
    except (TypeError, ValueError):
        return False


# Rows converted to float64 at a time when predicting (bounds the extra memory).
PREDICT_CHUNK_ROWS = 1 << 17


# Sparse input is made dense a block of rows at a time, at most this many bytes
# (a 20,000-column matrix: 200 rows per block).
SPARSE_BLOCK_BYTES = 32 << 20


def _default_names(names: Iterable[str]) -> bool:
    """The names dgbdt gives features of data without names (Column_i)."""
    return all(name == f"Column_{i}" for i, name in enumerate(names))


def _check_feature_names(columns: Iterable[Any], feature_names: Sequence[str]) -> None:
    """A DataFrame's column names must be the model's, in order (scikit-learn;
    LightGBM's validate_features=True).  A model trained without names (its
    names are dgbdt's Column_i) is not checked, as scikit-learn only warns then;
    a wrong count is left to the width check, whose message says more.
    Columns are compared with their spaces as "_", as the model stores names
    (dgbdt.data.names.without_spaces): the training frame's columns pass."""
    given = [str(c) for c in columns]
    got = without_spaces(given)[0]
    if len(got) != len(feature_names) or got == feature_names or _default_names(feature_names):
        return
    i = next(i for i, (a, b) in enumerate(zip(got, feature_names, strict=True)) if a != b)
    raise DGBDTError(  # LightGBM's words (LGBM_BoosterValidateFeatureNames)
        f"Expected {feature_names[i]!r} at position {i} but found {given[i]!r}: the feature "
        "names of X differ from the model's (a DataFrame's columns must be the model's "
        "feature names in order; pass validate_features=False to predict by column position)"
    )


def _category_codes(df: pd.DataFrame, pandas_categorical: Sequence[Any]) -> pd.DataFrame:
    """A copy of ``df`` with its category columns as codes of the model's
    category lists (LightGBM's ``pandas_categorical``, in column order); a
    value not in the model's list is NaN (it goes right at every categorical
    split), as in LightGBM."""
    cat_cols = [
        c for c, dtype in zip(df.columns, df.dtypes, strict=True) if str(dtype) == "category"
    ]
    if len(cat_cols) != len(pandas_categorical):
        raise ValueError(
            f"X has {len(cat_cols)} category columns, the model's pandas_categorical "
            f"lists {len(pandas_categorical)}: give the columns the model was trained on"
        )
    df = df.copy()
    for col, categories in zip(cat_cols, pandas_categorical, strict=True):
        df[col] = category_codes(df[col], categories)
    return df


def pd_sparse_dtype() -> type[Any]:
    import pandas as pd  # noqa: PLC0415 - optional until used: import dgbdt does not load pandas

    return pd.SparseDtype


def frame_as_float64(
    df: pd.DataFrame,
    feature_names: Sequence[str],
    validate_features: bool,
    pandas_categorical: Sequence[Any] | None = None,
) -> npt.NDArray[np.float64]:
    if validate_features:
        _check_feature_names(df.columns, feature_names)
    if pandas_categorical is not None:
        df = _category_codes(df, pandas_categorical)
    for i, dtype in enumerate(df.dtypes):
        if str(dtype) == "category":
            # the codes would be right, the category values are not: refused as in
            # training (dgbdt.data.dataset._dataframe_columns, the same words)
            raise TypeError(
                f"Column {df.columns[i]!r} of X is a category column but the model was "
                "trained without any: give the column as in training (e.g. its "
                ".cat.codes, if those were the values trained on)"
            )
        if getattr(dtype, "kind", "") == "c":
            raise TypeError(
                f"column {df.columns[i]!r} of X is complex ({dtype}): "
                "dgbdt predicts from real numbers"
            )
    try:
        return df.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"X must be numeric, got column dtypes {sorted(set(map(str, df.dtypes)))}"
        ) from exc


def predict_matrix(
    X: Any,
    n_features: int,
    feature_names: Sequence[str],
    validate_features: bool,
    pandas_categorical: Sequence[Any] | None = None,
) -> np.ndarray | sp.csr_matrix:
    """X as a float-convertible 2-D numpy array or CSR matrix, its width checked."""
    if isinstance(X, (str, bytes, os.PathLike)):
        raise TypeError(
            f"data must be an array, DataFrame or sparse matrix, got {X!r}: "
            "Booster.predict does not read files (the command line does: "
            "dgbdt predict data=FILE)"
        )
    X = as_pandas_if_arrow(X, "X")
    if type(X).__module__.startswith("pandas") and hasattr(X, "columns"):
        if len(X.columns) and all(
            isinstance(d, pd_sparse_dtype()) and fills_zero(d.fill_value) for d in X.dtypes
        ):
            if validate_features:
                _check_feature_names(X.columns, feature_names)
            X = X.sparse.to_coo()  # kept sparse: densified a block of rows at a time
        else:
            X = frame_as_float64(X, feature_names, validate_features, pandas_categorical)
    if is_sparse(X):
        X = scipy_sparse().csr_matrix(checked_sparse(X, "X"))
    else:
        X = np.asarray(X)
        if X.ndim == 1:
            X = X.reshape(1, -1) if X.shape[0] == n_features else X.reshape(-1, 1)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
        X = as_numeric(X, "X")
    if X.dtype.kind == "c":  # converting would drop the imaginary part silently
        raise TypeError(f"X is complex ({X.dtype}): dgbdt predicts from real numbers")
    if X.shape[1] != n_features:
        raise ValueError(
            f"X has {X.shape[1]} features, but the model expects {n_features} features"
        )
    return X


def row_blocks(
    X: Any,
    n_features: int,
    feature_names: Sequence[str],
    validate_features: bool = False,
    pandas_categorical: Sequence[Any] | None = None,
) -> Iterator[tuple[int, npt.NDArray[np.float64]]]:
    """Yield (start, float64 C-contiguous block) of X, checking its width."""
    X = predict_matrix(X, n_features, feature_names, validate_features, pandas_categorical)
    n = X.shape[0]
    step = PREDICT_CHUNK_ROWS
    if is_sparse(X):
        step = max(1, min(step, SPARSE_BLOCK_BYTES // (8 * max(1, n_features))))
    for start in range(0, n, step):
        block = X[start : start + step]
        if is_sparse(block):
            block = block.toarray()
        block = np.ascontiguousarray(block, dtype=np.float64)
        if not block.flags.writeable:
            # A read-only array (e.g. a memmap) would compile a second kernel variant.
            block = block.copy()
        yield start, block
