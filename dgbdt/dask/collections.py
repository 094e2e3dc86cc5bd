"""Dask collections cut into aligned partitions, and predictions mapped over them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import dask.array as da
import numpy as np
from dask import delayed
from dask.base import tokenize

from ..log import DGBDTError

_FIELDS = ("data", "label", "weight", "group", "init_score")


def is_dask_collection(value: Any) -> bool:
    return hasattr(value, "__dask_graph__") and hasattr(value, "to_delayed")


def _pieces(name: str, value: Any) -> list[Any]:
    """The delayed partitions of a dask Array (rows only: columns in one chunk)
    or DataFrame / Series."""
    if not is_dask_collection(value):
        raise TypeError(
            f"dgbdt.dask: {name} must be a dask Array, DataFrame or Series, "
            f"got {type(value).__name__}"
        )
    if hasattr(value, "numblocks"):  # a dask array
        if value.ndim == 2 and value.numblocks[1] > 1:
            value = value.rechunk({1: -1})
        return list(value.to_delayed().ravel())
    return list(value.to_delayed())


def _rows(value: Any) -> int:
    return int(value.shape[0])


def _bundle(index: int, data: Any, label: Any, weight: Any, group: Any, init_score: Any) -> tuple:
    """One partition's fields, checked to be aligned (runs on a worker)."""
    n = _rows(data)
    for name, value in (("label", label), ("weight", weight), ("init_score", init_score)):
        if value is not None and _rows(value) != n:
            raise DGBDTError(
                f"dgbdt.dask: partition {index}: data has {n} rows but {name} has "
                f"{_rows(value)}; give every collection the same partitions (chunks)"
            )
    if group is not None:
        group = np.asarray(group, dtype=np.int64).ravel()
        if int(group.sum()) != n:
            raise DGBDTError(
                f"dgbdt.dask: partition {index}: its query sizes sum to {int(group.sum())} "
                f"but it holds {n} rows: a query crosses a partition boundary. Re-partition "
                "so that every query lies in one partition, with one chunk of group sizes "
                "per partition"
            )
    return (data, label, weight, group, init_score)


def _no_rows(value: Any) -> Any:
    if value is None:
        return None
    return value.iloc[:0] if hasattr(value, "iloc") else value[:0]


def no_rows(bundle: tuple) -> tuple:
    """A partition's fields cut to zero rows: what a rank without a share of a
    validation set evaluates (its columns and types, no rows)."""
    return tuple(_no_rows(value) for value in bundle)


def bundles(pieces: Sequence[Any], salt: str = "") -> list[Any]:
    """One delayed (data, label, weight, group, init score) per partition of
    ``pieces`` (those five collections, or None), its key named by ``salt`` (a
    new salt computes them anew)."""
    cut = [None if v is None else _pieces(name, v) for name, v in zip(_FIELDS, pieces, strict=True)]
    n = len(cut[0] or [])
    for name, parts in zip(_FIELDS, cut, strict=True):
        if parts is not None and len(parts) != n:
            raise DGBDTError(
                f"dgbdt.dask: data has {n} partitions but {name} has {len(parts)}; "
                "give every collection the same partitions (chunks)"
            )
    fields = [parts if parts is not None else [None] * n for parts in cut]
    # The salt in the key: the same inputs would otherwise give the same key, and
    # Dask would hand back the existing result (on a worker that may not answer).
    out = []
    for i in range(n):
        args = [f[i] for f in fields]
        key = f"dgbdt-partition-{i}-{tokenize(*args, salt)}"
        out.append(delayed(_bundle, pure=True)(i, *args, dask_key_name=key))
    return out


def map_predictions(
    predict: Callable[[Any], np.ndarray], data: Any, n_columns: int | None, dtype: Any
) -> Any:
    """``predict`` applied partition by partition: a dask Array of the rows'
    predictions (``n_columns`` None: one value per row)."""
    if not is_dask_collection(data):
        raise TypeError(
            f"dgbdt.dask: X must be a dask Array or DataFrame, got {type(data).__name__}; "
            "use to_local() to predict on local data"
        )
    if hasattr(data, "numblocks"):
        if data.ndim == 2 and data.numblocks[1] > 1:
            data = data.rechunk({1: -1})
        if n_columns is None:
            return data.map_blocks(predict, dtype=dtype, drop_axis=1)
        return data.map_blocks(predict, dtype=dtype, chunks=(data.chunks[0], (n_columns,)))
    blocks = [
        da.from_delayed(
            delayed(predict)(piece),
            shape=(np.nan,) if n_columns is None else (np.nan, n_columns),
            dtype=dtype,
        )
        for piece in data.to_delayed()
    ]
    return da.concatenate(blocks, axis=0)
