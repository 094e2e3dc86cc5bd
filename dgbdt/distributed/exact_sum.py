"""Sums of floats over every rank's rows, exact: the same on any number of ranks.

A float sum depends on the order of addition, so a global sum computed as
allreduce(local sums) changes in the last bits with the rank layout.  Starting
scores (boost_from_average) and label weights come from such sums; with
integer (quantized) histograms they are all that kept models from being
identical for any number of ranks.  Here every float64 is split exactly into
an integer mantissa and an exponent, each rank sums them as a Python integer
(no rounding at all), the integers are added over the ranks, and the total is
rounded once.  The result is the correctly rounded sum (as ``math.fsum``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..native.exact import exponent_sums64, grouped_exponent_sums

if TYPE_CHECKING:
    from .comm import SerialComm

# x = M * 2**(e - 1075) with |M| < 2**53 and a biased exponent e >= 1
# (subnormals): scaled by 2**_BIAS every term is an integer.
_BIAS = 1126


def local_exact_sum(values: npt.ArrayLike) -> int:
    """The exact sum of ``values`` times 2**_BIAS, as a Python int."""
    x = np.ascontiguousarray(np.asarray(values, np.float64).ravel())
    if not np.all(np.isfinite(x)):
        raise ValueError("cannot sum non-finite values exactly")
    # float64 m * 2**(e - 1075): significands summed per exponent by a kernel
    high = np.zeros(2048, np.int64)
    low = np.zeros(2048, np.int64)
    exponent_sums64(x.view(np.uint64), high, low)
    return sum(
        ((int(high[e]) << 32) + int(low[e])) << (int(e) - 1075 + _BIAS)
        for e in np.flatnonzero(high | low)
    )


def global_exact_sums(comm: SerialComm, arrays: Sequence[npt.ArrayLike]) -> list[float]:
    """Correctly rounded sums of each array over every rank's values (a list of floats)."""
    return _sum_over_ranks(comm, [local_exact_sum(a) for a in arrays])


def grouped_exact_sums(
    comm: SerialComm,
    values: npt.ArrayLike,
    sample_indices: np.ndarray,
    group_begin: Sequence[int] | np.ndarray,
    group_count: npt.ArrayLike,
) -> list[float]:
    """Correctly rounded sums of float32 ``values`` over groups of rows (a leaf's rows
    are ``sample_indices[group_begin[j]:+group_count[j]]``), over every rank's rows:
    a float64 per group, the same on any number of ranks.  Significands are summed
    per exponent by a kernel (native/exact.py: about a nanosecond a value), so this
    is cheap enough for every tree."""
    values = np.ascontiguousarray(values, dtype=np.float32)
    if not np.all(np.isfinite(values)):
        raise ValueError("cannot sum non-finite values exactly")
    buckets = np.zeros((len(group_begin), 256), np.int64)
    grouped_exponent_sums(
        values.view(np.uint32),
        sample_indices,
        np.asarray(group_begin, np.int64),
        np.asarray(group_count, np.int64),
        buckets,
    )
    # float32 m * 2**(e - 150), scaled by 2**_BIAS like local_exact_sum's totals
    totals = [
        sum(int(row[e]) << (int(e) - 150 + _BIAS) for e in np.flatnonzero(row)) for row in buckets
    ]
    return _sum_over_ranks(comm, totals)


def _sum_over_ranks(comm: SerialComm, totals: list[int]) -> list[float]:
    """Python-int totals (scaled by 2**_BIAS) added over the ranks, rounded once."""
    if comm.size > 1:
        text = ",".join(format(t, "x") for t in totals).encode()
        parts = comm.gather_bytes(text)
        totals = [0] * len(totals)
        for part in parts:
            totals = [t + int(p, 16) for t, p in zip(totals, part.decode().split(","), strict=True)]
    return [_to_float(t) for t in totals]


def _to_float(total: int) -> float:
    try:
        return total / (1 << _BIAS)  # int / int: rounded once, correctly
    except OverflowError:  # beyond the float range, as a float sum would be
        return math.inf if total > 0 else -math.inf
