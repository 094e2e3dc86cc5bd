"""native.random: counter-based uniforms, the same however the rows are sharded."""

import numpy as np
import pytest
from dgbdt.native.random import uniform_fill, uniform_from_counter
from scipy import stats


def fill(seed, stream, first, n):
    out = np.full(n, np.nan)
    uniform_fill(seed, stream, first, out)
    return out


@pytest.mark.parametrize("seed, stream", [(0, 0), (1, 2), (2**31 - 1, 3 * 1_000_003 + 17)])
def test_deterministic_in_unit_interval_and_uniform(seed, stream):
    u = fill(seed, stream, 0, 200_000)
    np.testing.assert_array_equal(u, fill(seed, stream, 0, 200_000))
    assert np.all(u >= 0.0) and np.all(u < 1.0)
    assert abs(u.mean() - 0.5) < 0.005
    assert abs(u.var() - 1 / 12) < 0.002
    assert stats.kstest(u, "uniform").pvalue > 1e-4
    counts = np.bincount((u * 64).astype(int), minlength=64)
    assert stats.chisquare(counts).pvalue > 1e-4
    # Neighbouring draws are uncorrelated.
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.01


def test_shards_agree_with_one_long_fill():
    long = fill(5, 7, 0, 10_000)
    for first, n in [(0, 1), (1000, 500), (3333, 4444), (9999, 1), (10_000, 0)]:
        np.testing.assert_array_equal(fill(5, 7, first, n), long[first : first + n])
    for i in (0, 1, 1234, 9999):
        assert uniform_from_counter(5, 7, i) == long[i]


def test_seeds_and_streams_differ():
    a = fill(1, 1, 0, 1000)
    for other in (fill(2, 1, 0, 1000), fill(1, 2, 0, 1000), fill(1, 1, 1, 1000)):
        assert not np.array_equal(a, other)
        assert abs(np.corrcoef(a, other)[0, 1]) < 0.1


def test_large_indices():
    big = 2**40
    u = fill(3, 4, big, 100)
    assert np.all((u >= 0) & (u < 1))
    assert uniform_from_counter(3, 4, big + 99) == u[99]
