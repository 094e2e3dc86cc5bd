"""Counter-based random numbers: a hash of (seed, stream, index).

A row's draw depends only on its global index, never on a generator's state,
threads or ranks, so bagging and sampling give the same rows however the data
is spread over processes.
"""

import numpy as np
from numba import njit, prange

_TO_UNIT = 1.0 / 18446744073709551616.0  # 2**-64


@njit(cache=True, inline="always")
def _splitmix64(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def uniform_from_counter(seed, stream, index):
    """A uniform number in [0, 1) fixed by (seed, stream, index)."""
    key = _splitmix64(np.uint64(seed) ^ _splitmix64(np.uint64(stream)))
    return _splitmix64(key ^ np.uint64(index)) * _TO_UNIT


@njit(cache=True, parallel=True)
def uniform_fill(seed, stream, first_index, out):
    """out[i] = uniform_from_counter(seed, stream, first_index + i).

    Parameters
    ----------
    seed, stream, first_index : int    # IN
    out : float64[n]                   # OUT
    """
    key = _splitmix64(np.uint64(seed) ^ _splitmix64(np.uint64(stream)))
    for i in prange(out.shape[0]):
        out[i] = _splitmix64(key ^ np.uint64(first_index + i)) * _TO_UNIT
