"""Categorical features: which columns are categorical, their values, and the
category lists of pandas (and polars / Arrow) columns.

A categorical feature's values are non-negative integer categories (codes);
NaN and negative values are missing.  Its bins (dgbdt.data.binning.category_bins)
hold one category each, most frequent first; bin 0 holds the missing, rare
and unseen ones and always goes right.  A split sends a set of categories left
(a bitset in the model, LightGBM's layout).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

#: ``categorical_feature`` parsed: column indices and names, or "auto".
CategoricalSpec: TypeAlias = "tuple[int | str, ...] | Literal['auto']"

#: Categories are C ints in LightGBM's models (and bitsets of them): 0 <= c < 2**31.
MAX_CATEGORY = 2**31
#: A tree keeps a split's left categories as LightGBM's bitset while they are
#: below this, else as their sorted list (see dgbdt.models.tree).
BITSET_CATEGORY_LIMIT = 2**16


def parse_categorical_spec(value: Any) -> CategoricalSpec:
    """``categorical_feature`` as a tuple of column indices (int) or names
    (str), or "auto".  Accepts a list, a comma-separated string ("0,3"), or
    LightGBM's "name:carrier,origin"; "" or None declare nothing."""
    if value is None:
        return ()
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return (int(value),)  # one column (LightGBM takes a single index too)
    if isinstance(value, str):
        text = value.strip()
        if text == "auto":
            return "auto"
        if text.startswith("name:"):
            return tuple(n.strip() for n in text[5:].split(",") if n.strip())
        items = [t.strip() for t in text.split(",") if t.strip()]
        try:
            return tuple(int(t) for t in items)
        except ValueError:
            raise ValueError(
                f"categorical_feature={value!r}: give column indices (e.g. '0,3') "
                "or names with LightGBM's prefix (e.g. 'name:carrier,origin')"
            ) from None
    out: list[int | str] = []
    for item in value:
        if isinstance(item, (bool, np.bool_)):
            raise ValueError(
                f"categorical_feature entry {item!r} is a boolean: give indices or names"
            )
        if isinstance(item, (int, np.integer)):
            out.append(int(item))
        elif isinstance(item, str):
            out.append(item)
        else:
            raise ValueError(
                f"categorical_feature entry {item!r} is neither a column index nor a name"
            )
    return tuple(out)


def categorical_mask(
    spec: CategoricalSpec,
    names: Sequence[str],
    n_features: int,
    auto_columns: Iterable[int] = (),
    global_indices: Iterable[int] | None = None,
) -> npt.NDArray[np.bool_]:
    """bool per column: the categorical ones.

    ``spec`` is ``parse_categorical_spec``'s; "auto" takes ``auto_columns``
    (pandas category columns).  Indices are global column numbers (with
    ``global_indices``, the columns a feature-parallel rank holds)."""
    mask = np.zeros(n_features, bool)
    if spec == "auto":
        mask[list(auto_columns)] = True
        return mask
    position = {name: i for i, name in enumerate(names)}
    local = (
        {int(g): i for i, g in enumerate(global_indices)} if global_indices is not None else None
    )
    for item in spec:
        if isinstance(item, str):
            if item not in position:
                raise ValueError(
                    f"categorical_feature names {item!r}, which is not a feature name "
                    f"(features: {', '.join(map(repr, names[:10]))}"
                    f"{', ...' if len(names) > 10 else ''})"
                )
            mask[position[item]] = True
            continue
        if local is not None:
            if item in local:
                mask[local[item]] = True
            continue  # another rank's column
        if not 0 <= item < n_features:
            raise ValueError(
                f"categorical_feature index {item} is out of range: the data has "
                f"{n_features} columns (0 to {n_features - 1})"
            )
        mask[item] = True
    return mask


def check_category_values(values: npt.NDArray[np.float64], name: str) -> None:
    """A ValueError naming the column when a categorical column holds a value
    that is not an integer below 2**31 (NaN and negative values are missing)."""
    v = values[values >= 0]  # NaN and negatives are missing
    bad = (v >= MAX_CATEGORY) | (v != np.floor(v))
    if bad.any():
        raise ValueError(
            f"categorical feature {name!r} holds {float(v[bad][0])!r}: categories must be "
            f"integers in [0, 2**31) (negative values and NaN are missing); encode "
            "the column as integer codes or as a pandas category column"
        )


def category_codes(column: Any, categories: Sequence[Any] | None = None) -> npt.NDArray[np.float64]:
    """A pandas category column's codes as float64, NaN for missing values; by
    value in ``categories`` when given (a value not listed is NaN: unseen)."""
    if categories is not None:
        column = column.cat.set_categories(categories)
    codes = column.cat.codes.to_numpy()
    return np.where(codes < 0, np.nan, codes.astype(np.float64))


def union_categories(lists: Iterable[Iterable[Any]]) -> list[Any]:
    """One category list from several (each rank's, in rank order): every
    value once, in the order first seen.  Ranks' pandas category lists may
    differ; codes must not."""
    seen: set[tuple[str, Any]] = set()
    out: list[Any] = []
    for categories in lists:
        for c in categories:
            key = (type(c).__name__, c)
            if key not in seen:
                seen.add(key)
                out.append(c)
    return out
