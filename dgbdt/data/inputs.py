"""What dgbdt takes as data, in one place: a polars or Arrow table read as
pandas, a DataFrame told apart, numbers checked to be real and to fit float64
(the one cast of a non-numeric array, for the Dataset and for predict),
sparse fill values; predict's rows: a model's input checked (width, feature
names, category columns coded by the model's lists) and handed out as float64
blocks.  The Dataset reads its columns through dgbdt.data.sources."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .categorical import category_codes

if TYPE_CHECKING:
    from types import ModuleType

    import pandas as pd
    import scipy.sparse as sp


def is_sparse(data: object) -> bool:
    """Whether data is a scipy sparse matrix or array, without importing scipy:
    no such object exists before scipy.sparse is imported."""
    module = sys.modules.get("scipy.sparse")
    return module is not None and bool(module.issparse(data))


def scipy_sparse() -> ModuleType:
    """scipy.sparse, imported when first needed."""
    import scipy.sparse  # noqa: PLC0415 - import dgbdt does not load scipy (import time)

    return scipy.sparse


def is_dataframe(data: object) -> bool:
    return type(data).__module__.startswith("pandas") and hasattr(data, "columns")


def as_pandas_if_arrow(data: Any) -> Any:
    """A polars DataFrame or a pyarrow Table as a pandas DataFrame (names kept;
    polars Categorical/Enum and Arrow dictionary columns become category
    columns); any other ``data`` as it is."""
    module = type(data).__module__
    if module.startswith("polars") and hasattr(data, "to_pandas") and hasattr(data, "columns"):
        return data.to_pandas()
    if module.startswith("pyarrow") and hasattr(data, "to_pandas") and hasattr(data, "schema"):
        return data.to_pandas()
    return data


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
    a wrong count is left to the width check, whose message says more."""
    got = [str(c) for c in columns]
    if len(got) != len(feature_names) or got == feature_names or _default_names(feature_names):
        return
    i = next(i for i, (a, b) in enumerate(zip(got, feature_names, strict=True)) if a != b)
    raise ValueError(
        f"the feature names of X differ from the model's at column {i}: expected "
        f"{feature_names[i]!r}, got {got[i]!r} (a DataFrame's columns must be the "
        "model's feature names in order; pass validate_features=False to predict "
        "by column position)"
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
    X = as_pandas_if_arrow(X)
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
        X = scipy_sparse().csr_matrix(X)
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
