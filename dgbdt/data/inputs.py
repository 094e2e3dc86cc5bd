"""What dgbdt takes as data, in one place: a polars or Arrow table read as
pandas, a DataFrame told apart, numbers checked to be real and to fit float64,
sparse fill values."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt


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


def fills_zero(value: Any) -> bool:
    """Whether a sparse fill value is zero (a pandas sparse column of it is
    sparse input)."""
    try:
        return float(value) == 0.0
    except (TypeError, ValueError):
        return False
