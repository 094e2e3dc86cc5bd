"""Binning kernels: bin upper bounds from sampled values, values -> bin indices.

A feature with ``n_value_bins`` value bins maps value ``v`` to the first bin
``b`` with ``v <= upper_bounds[b]``; the last upper bound is +inf.  Features
that hold NaN get one extra bin after the value bins (the NaN bin).
"""
import numpy as np
from numba import njit, prange


@njit(cache=True)
def find_bin_upper_bounds(distinct_values, counts, max_bin, min_data_in_bin, upper_bounds):
    """Greedy equal-count bins over the distinct values of one feature.

    Few distinct values each get their own bin; otherwise bins are cut so that
    every bin holds about ``remaining rows / remaining bins`` rows, and never
    fewer than ``min_data_in_bin`` (a frequent value fills a bin alone).
    A cut between two neighbouring values sits at their midpoint.

    Parameters
    ----------
    distinct_values : float64[n_distinct]   # IN  sorted, no NaN
    counts : int64[n_distinct]              # IN  rows holding each value
    max_bin : int                           # IN  most value bins allowed
    min_data_in_bin : int                   # IN
    upper_bounds : float64[>= max_bin]      # OUT bin upper bounds, last = +inf

    Returns
    -------
    n_value_bins : int
    """
    n_distinct = distinct_values.shape[0]
    if n_distinct == 0:
        upper_bounds[0] = np.inf
        return 1
    rest_count = 0.0
    for i in range(n_distinct):
        rest_count += counts[i]
    if n_distinct <= max_bin:
        target = 0.0                     # every distinct value may stand alone
    else:
        target = rest_count / max_bin
    n_bins = 0
    cur = 0.0
    for i in range(n_distinct - 1):
        cur += counts[i]
        if n_bins >= max_bin - 1:
            break
        if cur >= min_data_in_bin and cur >= target:
            low = distinct_values[i]
            high = distinct_values[i + 1]
            mid = low + (high - low) / 2.0
            if mid >= high:              # neighbours one ulp apart
                mid = low
            upper_bounds[n_bins] = mid
            n_bins += 1
            rest_count -= cur
            cur = 0.0
            if n_distinct > max_bin:
                target = rest_count / (max_bin - n_bins)
    upper_bounds[n_bins] = np.inf
    return n_bins + 1


@njit(cache=True, inline="always")
def _value_to_bin(value, upper_bounds, n_value_bins, nan_bin, zero_bin):
    if np.isnan(value):
        # A feature without NaN in training sends NaN where 0.0 goes
        # (LightGBM's missing_type=None); prediction does the same.
        return nan_bin if nan_bin >= 0 else zero_bin
    lo = 0
    hi = n_value_bins - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if value <= upper_bounds[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def value_to_bin(value, upper_bounds, nan_bin):
    """Bin index of one value (used for the bin of 0.0 and in tests)."""
    n = upper_bounds.shape[0]
    zero_bin = _value_to_bin(0.0, upper_bounds, n, -1, 0)
    return _value_to_bin(value, upper_bounds, n, nan_bin, zero_bin)


@njit(cache=True, parallel=True)
def map_to_bins(values, upper_bounds, nan_bin, out):
    """Bin every value of one dense column.

    Parameters
    ----------
    values : float64[n_samples]          # IN
    upper_bounds : float64[n_value_bins] # IN  last = +inf
    nan_bin : int                        # IN  bin of NaN, or -1 if the feature has none
    out : uint8|uint16[n_samples]        # OUT
    """
    n_value_bins = upper_bounds.shape[0]
    zero_bin = _value_to_bin(0.0, upper_bounds, n_value_bins, -1, 0)
    for i in prange(values.shape[0]):
        out[i] = _value_to_bin(values[i], upper_bounds, n_value_bins, nan_bin, zero_bin)


@njit(cache=True)
def map_sparse_to_bins(values, row_indices, upper_bounds, nan_bin, out):
    """Bin one sparse column (CSC slice); absent entries are 0.0.

    Parameters
    ----------
    values : float64[nnz]                # IN  stored values
    row_indices : int32|int64[nnz]       # IN  their rows
    upper_bounds : float64[n_value_bins] # IN
    nan_bin : int                        # IN
    out : uint8|uint16[n_samples]        # OUT
    """
    n_value_bins = upper_bounds.shape[0]
    zero_bin = _value_to_bin(0.0, upper_bounds, n_value_bins, -1, 0)
    out[:] = zero_bin
    for k in range(values.shape[0]):
        out[row_indices[k]] = _value_to_bin(values[k], upper_bounds, n_value_bins,
                                            nan_bin, zero_bin)
