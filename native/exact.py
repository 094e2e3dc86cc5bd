"""Exact sums of float32 and float64 values, by exponent: the input of
dgbdt.distributed.exact_sum.

A finite float32 is ``m * 2**(e - 150)`` with an integer significand
``|m| < 2**24`` and a biased exponent ``1 <= e <= 254`` (subnormals: e = 1,
no implicit bit).  Summing the significands per exponent in int64 is exact
(no rounding, so no dependence on the order of addition) and cannot overflow
below 2**39 values; the caller turns the 255 partial sums into one integer.
A float64 is ``m * 2**(e - 1075)`` with ``|m| < 2**53``: its significand is
summed in two 32-bit halves, which cannot overflow below 2**31 values.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def grouped_exponent_sums(bits, sample_indices, group_begin, group_count, out):
    """out[j, e] += signed significands of the values of group j whose exponent is e.

    Parameters
    ----------
    bits : uint32[n_samples]          # IN  float32 values viewed as their bits (finite)
    sample_indices : uint32[n_rows]   # IN  the rows, group by group
    group_begin, group_count : int64[n_groups]  # IN  group j is
                                      #     sample_indices[group_begin[j]:+group_count[j]]
    out : int64[n_groups, 256]        # IN/OUT
    """
    for j in range(group_begin.shape[0]):
        for i in range(group_begin[j], group_begin[j] + group_count[j]):
            b = bits[sample_indices[i]]
            e = np.int64((b >> np.uint32(23)) & np.uint32(0xFF))
            m = np.int64(b & np.uint32(0x7FFFFF))
            if e == 0:
                e = 1  # subnormal: the same scale as e = 1
            else:
                m += np.int64(0x800000)  # the implicit leading bit
            if b >> np.uint32(31):
                m = -m
            out[j, e] += m


@njit(cache=True)
def exponent_sums64(bits, high, low):
    """high[e], low[e] += the signed upper and lower 32 bits of the significands
    of the values whose exponent is e.

    Parameters
    ----------
    bits : uint64[n]          # IN  float64 values viewed as their bits (finite)
    high, low : int64[2048]   # IN/OUT
    """
    for i in range(bits.shape[0]):
        b = bits[i]
        e = np.int64((b >> np.uint64(52)) & np.uint64(0x7FF))
        m = np.int64(b & np.uint64(0xFFFFFFFFFFFFF))
        if e == 0:
            e = 1  # subnormal: the same scale as e = 1
        else:
            m += np.int64(1) << 52  # the implicit leading bit
        h = m >> 32
        lo = m & np.int64(0xFFFFFFFF)
        if b >> np.uint64(63):
            high[e] -= h
            low[e] -= lo
        else:
            high[e] += h
            low[e] += lo
