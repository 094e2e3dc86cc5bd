"""Binning kernels: bin upper bounds from sampled values, values -> bin indices.

A feature with ``n_value_bins`` value bins maps value ``v`` to the first bin
``b`` with ``v <= upper_bounds[b]``; the last upper bound is +inf.  Features
that hold NaN get one extra bin after the value bins (the NaN bin).  The bound
before the last is +inf too when the largest values are +inf or huge (see
_bound_between): +inf is then binned with the largest finite values and the
last value bin stays empty, as in LightGBM (which counts that bin too).

The bounds follow LightGBM 4.x (src/io/bin.cpp: GreedyFindBin,
FindBinWithZeroAsOneBin, BinMapper::FindBin) so that both libraries bin the
same data alike; tests/test_binning_lightgbm.py checks them against LightGBM.
"""

import numpy as np
from numba import njit, prange

# While bounds are found, |v| <= K_ZERO_THRESHOLD counts as zero, as in
# LightGBM (kZeroThreshold in include/LightGBM/meta.h; its C API leaves such
# values out of the bin sample), and zero keeps a bin of its own,
# (-K_ZERO_THRESHOLD, K_ZERO_THRESHOLD].  LightGBM
# writes the constant as the float literal 1e-35f, so its value is float32(1e-35)
# = 1.0000000180025095e-35; those bounds appear in its models as split thresholds.
K_ZERO_THRESHOLD = float(np.float32(1e-35))


@njit(cache=True, inline="always")
def _bound_between(low, high):
    """Upper bound of a bin that ends at ``low`` when the next starts at ``high``.

    The midpoint, moved up one ulp (LightGBM's GetDoubleUpperBound): the bound
    then stays >= low even when low and high are one ulp apart.  Taken in
    plain double arithmetic, as LightGBM does, so that ±inf and huge values
    get LightGBM's bins: next to +inf (or where low + high overflows) the
    bound is +inf, so +inf shares the bin of the largest finite values, and
    the bin that the last bound (+inf again) closes stays empty; next to -inf
    (or a sum overflowing to -inf) it is the lowest float, -1.797e308, so -inf
    gets a bin of its own.
    """
    return np.nextafter((low + high) / 2.0, np.inf)


@njit(cache=True, inline="always")
def _append_bound(upper_bounds, n, value):
    """Append ``value`` unless it is within one ulp above the last bound
    (LightGBM's CheckDoubleEqualOrdered); return the new count."""
    if n > 0 and value <= np.nextafter(upper_bounds[n - 1], np.inf):
        return n
    upper_bounds[n] = value
    return n + 1


@njit(cache=True, error_model="numpy")
def greedy_find_bin(distinct_values, counts, max_bin, total_cnt, min_data_in_bin, upper_bounds):
    """LightGBM's greedy bins over one run of values (one side of zero).

    * At most ``max_bin`` distinct values: cut after a value once the bin
      holds ``min_data_in_bin`` rows; the last bin takes what is left.
    * More: ``max_bin`` is first capped at ``total_cnt // min_data_in_bin``.
      A value holding at least ``total_cnt / max_bin`` rows is "big": it ends
      its bin, and the bin before it is closed early once it holds half the
      mean bin size, so a big value mostly gets a bin of its own.  The other
      values share the remaining bins equally (the mean size is recomputed
      after each cut from the rows and bins left).
    Cuts sit one ulp above the midpoint between the neighbouring values.
    Bins may hold fewer than ``min_data_in_bin`` rows in the second case (a
    bin closed before a big value); LightGBM accepts that too.

    Parameters
    ----------
    distinct_values : float64[n_distinct]   # IN  sorted, n_distinct >= 1
    counts : int64[n_distinct]              # IN  rows holding each value
    max_bin : int                           # IN  most bins allowed, >= 1
    total_cnt : int                         # IN  sum of counts
    min_data_in_bin : int                   # IN
    upper_bounds : float64[>= max_bin]      # OUT bin upper bounds, last = +inf

    Returns
    -------
    n_bins : int
    """
    n_distinct = distinct_values.shape[0]
    n = 0
    if n_distinct <= max_bin:
        cur_cnt = 0
        for i in range(n_distinct - 1):
            cur_cnt += counts[i]
            if cur_cnt >= min_data_in_bin:
                n_before = n
                n = _append_bound(
                    upper_bounds, n, _bound_between(distinct_values[i], distinct_values[i + 1])
                )
                if n > n_before:
                    cur_cnt = 0
        upper_bounds[n] = np.inf
        return n + 1

    if min_data_in_bin > 0:
        max_bin = max(min(max_bin, total_cnt // min_data_in_bin), 1)
    mean_bin_size = total_cnt / max_bin
    rest_bin_cnt = max_bin
    rest_sample_cnt = total_cnt
    is_big = np.zeros(n_distinct, dtype=np.bool_)
    for i in range(n_distinct):
        if counts[i] >= mean_bin_size:
            is_big[i] = True
            rest_bin_cnt -= 1
            rest_sample_cnt -= counts[i]
    # rest_bin_cnt can reach 0 below: the mean is then inf (or NaN), as in
    # LightGBM's double arithmetic, and only big values still cut.
    mean_bin_size = rest_sample_cnt / rest_bin_cnt

    # Bin k holds the values [first_value[k], last_value[k]].
    last_value = np.empty(max_bin, dtype=np.float64)
    first_value = np.empty(max_bin, dtype=np.float64)
    n_cuts = 0
    first_value[0] = distinct_values[0]
    cur_cnt = 0
    for i in range(n_distinct - 1):
        if not is_big[i]:
            rest_sample_cnt -= counts[i]
        cur_cnt += counts[i]
        half = mean_bin_size * 0.5
        # max(1, half) with C++ std::max's NaN behaviour (a NaN half gives 1).
        min_before_big = half if 1.0 < half else 1.0
        if is_big[i] or cur_cnt >= mean_bin_size or (is_big[i + 1] and cur_cnt >= min_before_big):
            last_value[n_cuts] = distinct_values[i]
            n_cuts += 1
            first_value[n_cuts] = distinct_values[i + 1]
            if n_cuts >= max_bin - 1:
                break
            cur_cnt = 0
            if not is_big[i]:
                rest_bin_cnt -= 1
                mean_bin_size = rest_sample_cnt / rest_bin_cnt
    for k in range(n_cuts):
        n = _append_bound(upper_bounds, n, _bound_between(last_value[k], first_value[k + 1]))
    upper_bounds[n] = np.inf
    return n + 1


@njit(cache=True, inline="always")
def _push_distinct(values, counts, n, value, count):
    """Append (value, count), merging a value within one ulp of the last
    (LightGBM's CheckDoubleEqualOrdered); returns the new length."""
    if n > 0 and value <= np.nextafter(values[n - 1], np.inf):
        values[n - 1] = value
        counts[n - 1] += count
        return n
    values[n] = value
    counts[n] = count
    return n + 1


@njit(cache=True, error_model="numpy")
def find_bin_upper_bounds(distinct_values, counts, max_bin, min_data_in_bin, upper_bounds):
    """Bin upper bounds of one numerical feature, as LightGBM 4.x finds them.

    LightGBM's BinMapper::FindBin + FindBinWithZeroAsOneBin (src/io/bin.cpp),
    without forced bins:

    1. values one ulp apart count as one value (the larger one stands for
       them); |v| <= K_ZERO_THRESHOLD counts as zero;
    2. zero gets a bin of its own, bounded by -/+K_ZERO_THRESHOLD, even when
       no row is zero, whenever negative values exist (then it is the bin
       after them) or positive values exist (then it is the bin before them):

           negatives ... | -1e-35 | zeros | 1e-35 | positives ... | +inf

    3. the other ``max_bin - 1`` bins are shared between the negative and the
       positive side in proportion to their row counts (the negative side
       first, rounded down, at least one; the positive side gets what the
       negative side leaves unused), and each side is cut by greedy_find_bin.

    Parameters
    ----------
    distinct_values : float64[n_distinct]   # IN  sorted ascending, distinct, no NaN
    counts : int64[n_distinct]              # IN  rows holding each value (> 0)
    max_bin : int                           # IN  most value bins allowed, >= 1
    min_data_in_bin : int                   # IN
    upper_bounds : float64[>= max(max_bin, 1)]  # OUT bin upper bounds, last = +inf

    Returns
    -------
    n_value_bins : int
    """
    n_distinct = distinct_values.shape[0]
    neg_values = np.empty(n_distinct, dtype=np.float64)
    neg_counts = np.empty(n_distinct, dtype=np.int64)
    pos_values = np.empty(n_distinct, dtype=np.float64)
    pos_counts = np.empty(n_distinct, dtype=np.int64)
    n_neg = 0
    n_pos = 0
    neg_total = 0
    pos_total = 0
    for i in range(n_distinct):
        v = distinct_values[i]
        c = counts[i]
        if v < -K_ZERO_THRESHOLD:
            n_neg = _push_distinct(neg_values, neg_counts, n_neg, v, c)
            neg_total += c
        elif v > K_ZERO_THRESHOLD:
            n_pos = _push_distinct(pos_values, pos_counts, n_pos, v, c)
            pos_total += c

    n = 0
    if n_neg > 0 and max_bin > 1:
        # Truncated share of the max_bin - 1 non-zero bins, as LightGBM computes it.
        left_max_bin = int(neg_total / (neg_total + pos_total) * (max_bin - 1))
        left_max_bin = max(1, left_max_bin)
        n = greedy_find_bin(
            neg_values[:n_neg],
            neg_counts[:n_neg],
            left_max_bin,
            neg_total,
            min_data_in_bin,
            upper_bounds,
        )
        upper_bounds[n - 1] = -K_ZERO_THRESHOLD  # the last negative bin ends at zero
    right_max_bin = max_bin - 1 - n
    if n_pos > 0 and right_max_bin > 0:
        upper_bounds[n] = K_ZERO_THRESHOLD
        n += 1
        n += greedy_find_bin(
            pos_values[:n_pos],
            pos_counts[:n_pos],
            right_max_bin,
            pos_total,
            min_data_in_bin,
            upper_bounds[n:],
        )
    else:
        upper_bounds[n] = np.inf
        n += 1
    return n


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


# Values searched together in map_to_bins: their binary searches are
# independent, so interleaving them hides each step's load latency (measured:
# 35 -> 8.6 ns per value on one thread).
_SEARCH_BLOCK = 16


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
    nan_value = nan_bin if nan_bin >= 0 else zero_bin
    # Bounds padded with +inf to a power of two: a fixed number of halvings.
    width = 1
    while width < n_value_bins:
        width <<= 1
    table = np.full(width, np.inf)
    table[:n_value_bins] = upper_bounds
    n = values.shape[0]
    n_blocks = (n + _SEARCH_BLOCK - 1) // _SEARCH_BLOCK
    for blk in prange(n_blocks):
        lo = blk * _SEARCH_BLOCK
        m = min(n, lo + _SEARCH_BLOCK) - lo
        pos = np.zeros(_SEARCH_BLOCK, np.int64)
        step = width >> 1
        while step > 0:
            for j in range(m):
                # pos ends as the number of bounds below the value: the first
                # bin with value <= bound (NaN compares false and stays 0).
                pos[j] += step * np.int64(table[pos[j] + step - 1] < values[lo + j])
            step >>= 1
        for j in range(m):
            v = values[lo + j]
            out[lo + j] = nan_value if np.isnan(v) else pos[j]


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
        out[row_indices[k]] = _value_to_bin(
            values[k], upper_bounds, n_value_bins, nan_bin, zero_bin
        )


@njit(cache=True)
def distinct_counts(sorted_values, n_implicit_zeros, distinct_out, counts_out):
    """Distinct values of ``sorted_values`` (ascending, no NaN) and their
    counts, with ``n_implicit_zeros`` more rows of 0.0 added in place; returns
    how many.  ``distinct_out``/``counts_out`` hold len(sorted_values) + 1."""
    n = 0
    zero_done = n_implicit_zeros == 0
    for i in range(len(sorted_values)):
        v = sorted_values[i]
        if not zero_done and v >= 0.0:
            zero_done = True
            # the zeros' entry: 0.0 (or the -0.0 of the values, equal to it)
            distinct_out[n] = v if v == 0.0 else 0.0
            counts_out[n] = n_implicit_zeros
            n += 1
        if n > 0 and distinct_out[n - 1] == v:
            counts_out[n - 1] += 1
        else:
            distinct_out[n] = v
            counts_out[n] = 1
            n += 1
    if not zero_done:
        distinct_out[n] = 0.0
        counts_out[n] = n_implicit_zeros
        n += 1
    return n


@njit(cache=True, parallel=True)
def map_categories(values, sorted_categories, bins_of_sorted, out):
    """Bins of a categorical feature's values: the bin of each category kept
    (``bins_of_sorted[k]`` for ``sorted_categories[k]``, ascending), else bin 0
    (NaN, negative, rare and unseen values).

    Parameters
    ----------
    values : float64[n]              # IN  integer-valued (checked by the caller) or NaN
    sorted_categories : int64[k]     # IN  ascending
    bins_of_sorted : int64[k]        # IN
    out : uint8|uint16[n]            # OUT
    """
    k = sorted_categories.shape[0]
    for i in prange(values.shape[0]):
        v = values[i]
        b = 0
        if v >= 0.0 and k > 0:  # False for NaN
            c = np.int64(v)
            j = np.searchsorted(sorted_categories, c)
            if j < k and sorted_categories[j] == c:
                b = bins_of_sorted[j]
        out[i] = b
