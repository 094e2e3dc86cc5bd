"""Checks of the fields a Dataset holds (label, weight, group, position, init
score) and of the numbers it is given, and the rule that raises a rank's
error on every rank."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..distributed.comm import agreed
from .inputs import as_float

if TYPE_CHECKING:
    from ..distributed.comm import SerialComm


def as_1d(values: Any, name: str, n_samples: int) -> npt.NDArray[np.float64] | None:
    """One value per row; a column vector (n, 1), e.g. a one-column DataFrame, is
    flattened with a warning (as LightGBM does), any other 2-D shape refused."""
    if values is None:
        return None
    arr = as_float(values, name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        warnings.warn(
            f"{name} is a column vector of shape {arr.shape}; using it as 1-D", stacklevel=3
        )
    elif arr.ndim > 1:
        raise ValueError(f"{name} must be 1-D (one value per row), got shape {arr.shape}")
    arr = arr.ravel()
    if arr.shape[0] != n_samples:
        raise ValueError(f"{name} has {arr.shape[0]} entries but data has {n_samples} rows")
    return arr


def check_init_score(init_score: Any, n_samples: int) -> npt.NDArray[np.float64] | None:
    """``init_score`` as float64 of (n,), (n, n_classes) or LightGBM's flat class-major
    (n * n_classes,): every value finite, since it *is* the starting score (a NaN
    one trained and then failed to save the model)."""
    if init_score is None:
        return None
    init = as_float(init_score, "init_score")
    if (init.size == 0) != (n_samples == 0) or init.size % max(n_samples, 1):  # empty shard: none
        raise ValueError(
            f"init_score has {init.size} values; expected a multiple of "
            f"the {n_samples} rows (n_samples or n_samples x n_classes)"
        )
    bad = np.flatnonzero(~np.isfinite(init.ravel()))
    if len(bad):
        where = np.unravel_index(int(bad[0]), init.shape)
        raise ValueError(
            f"init_score[{', '.join(str(int(i)) for i in where)}] is "
            f"{init[where]}; init scores must be finite"
        )
    return init


def check_group(group: Any, n_samples: int) -> npt.NDArray[np.int64] | None:
    """Query sizes as int64, non-negative and summing to the ``n_samples`` rows."""
    if group is None:
        return None
    sizes = np.asarray(group)
    if sizes.ndim != 1:
        raise ValueError(f"group must be 1-D (one size per query), got shape {sizes.shape}")
    if sizes.size and (
        sizes.dtype.kind not in "iuf" or not np.all(np.isfinite(sizes)) or np.any(sizes % 1)
    ):
        raise ValueError("group must hold integer query sizes")
    sizes = sizes.astype(np.int64)
    if np.any(sizes < 0):
        bad = int(np.flatnonzero(sizes < 0)[0])
        raise ValueError(f"group[{bad}] is {sizes[bad]}; query sizes must be >= 0")
    if int(sizes.sum()) != n_samples:
        raise ValueError(
            f"group sizes sum to {int(sizes.sum())} but data has {n_samples} rows "
            "(group holds the number of rows of each query, in order)"
        )
    return sizes


def check_position(position: Any, n_samples: int) -> npt.NDArray[np.int64] | None:
    """Positions as int64, one per row."""
    if position is None:
        return None
    pos = np.asarray(position)
    if pos.ndim != 1 or pos.shape[0] != n_samples:
        raise ValueError(
            f"position must have one value per row ({n_samples}), got shape {pos.shape}"
        )
    if pos.size and (
        pos.dtype.kind not in "iuf" or not np.all(np.isfinite(pos)) or np.any(pos % 1)
    ):
        raise ValueError("position must hold integers")
    return pos.astype(np.int64)


def check_label(label: npt.NDArray[np.float64] | None) -> npt.NDArray[np.float64] | None:
    if label is not None and not np.all(np.isfinite(label)):
        bad = int(np.flatnonzero(~np.isfinite(label))[0])
        raise ValueError(f"label contains {label[bad]} at row {bad}; labels must be finite")
    return label


def check_weight(weight: npt.NDArray[np.float64] | None) -> npt.NDArray[np.float64] | None:
    if weight is not None and (not np.all(np.isfinite(weight)) or np.any(weight < 0)):
        bad = int(np.flatnonzero(~(np.isfinite(weight) & (weight >= 0)))[0])
        raise ValueError(
            f"weight contains {weight[bad]} at row {bad}; weights must be finite and >= 0"
        )
    return weight


def raise_on_every_rank(comm: SerialComm | None, error: BaseException | None, what: str) -> None:
    """Raise ``error`` (an exception or None) on this rank, and on every rank when
    any rank has one, so that none waits in a collective: a rank's own error, or
    a ValueError saying which ranks ``what``."""
    if comm is None or comm.size == 1:
        if error is not None:
            raise error
        return
    failed = np.flatnonzero(comm.per_rank(error is not None))
    if error is not None:
        raise agreed(error)
    if len(failed):
        raise agreed(ValueError(f"rank(s) {failed.tolist()} {what} (see their messages)"))
