"""Exact global sums: correctly rounded, and the same however the values are split."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dgbdt.distributed.comm import SerialComm
from dgbdt.distributed.exact_sum import global_exact_sums, grouped_exact_sums, local_exact_sum

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, max_size=60), st.lists(st.integers(0, 60), max_size=3))
def test_exact_sum_is_fsum_and_split_invariant(values, cuts):
    x = np.array(values, np.float64)
    total = global_exact_sums(SerialComm(), [x])[0]
    try:
        expected = math.fsum(values)
    except OverflowError:
        # fsum's partial sums overflowed; the exact sum may still round to a
        # finite float (e.g. 1 - 2**1023 - 2**1023 + ...): Fractions decide.
        exact = sum(Fraction(v) for v in values)
        try:
            expected = float(exact)
        except OverflowError:
            expected = math.inf if exact > 0 else -math.inf
    assert total == expected
    parts = np.split(x, sorted(c for c in cuts if c <= len(x)))
    assert sum(local_exact_sum(p) for p in parts) == local_exact_sum(x)


def test_wide_dynamic_range_and_subnormals():
    rng = np.random.default_rng(0)
    x = rng.normal(size=5000) * np.exp(rng.uniform(-300, 300, 5000))
    x[:3] = [5e-324, -5e-324, 1e-310]
    assert global_exact_sums(SerialComm(), [x, x[:10], []]) == [
        math.fsum(x),
        math.fsum(x[:10]),
        0.0,
    ]


def test_non_finite_values_are_refused():
    with pytest.raises(ValueError, match="non-finite"):
        local_exact_sum([1.0, np.inf])


float32s = st.floats(allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(float32s, max_size=80),
    st.lists(st.integers(0, 80), max_size=4),
    st.integers(0, 2**32 - 1),
)
def test_grouped_sums_are_fsum_of_each_group_in_any_row_order(values, cuts, seed):
    x = np.array(values, np.float32)
    rows = np.random.default_rng(seed).permutation(len(x)).astype(np.uint32)
    bounds = np.array(sorted({0, len(x), *(c for c in cuts if c <= len(x))}))
    begin, count = bounds[:-1], np.diff(bounds)
    got = grouped_exact_sums(SerialComm(), x, rows, begin, count)
    assert got == [
        math.fsum(x[rows[b : b + c]].astype(np.float64)) for b, c in zip(begin, count, strict=True)
    ]


def test_grouped_sums_cover_subnormals_and_the_float32_range():
    rng = np.random.default_rng(3)
    x = (rng.normal(size=3000) * np.exp2(rng.uniform(-140, 120, 3000))).astype(np.float32)
    x[:4] = [np.float32(1e-45), -np.float32(1e-45), np.finfo(np.float32).max, -1e-40]
    rows = np.arange(3000, dtype=np.uint32)
    got = grouped_exact_sums(SerialComm(), x, rows, [0, 10, 0], [10, 2990, 3000])
    assert got == [
        math.fsum(x[:10].astype(float)),
        math.fsum(x[10:].astype(float)),
        math.fsum(x.astype(float)),
    ]
    with pytest.raises(ValueError, match="non-finite"):
        grouped_exact_sums(SerialComm(), np.array([np.inf], np.float32), rows[:1], [0], [1])
