"""Fuzz tests of sparse inputs (dgbdt.data.inputs.checked_sparse).

CSR, CSC and COO matrices and arrays with random shapes, index dtypes (int32,
int64; int16 to uint64 set afterwards, indices and pointer each its own),
value dtypes (float32, float64, int, bool; float16 set afterwards), repeated
entries, empty rows and columns, and index arrays changed after scipy made the
matrix (where scipy no longer checks them): indices in and out of range or
negative, index pointers that do not start at 0, decrease, end past the stored
entries or have the wrong length.  Whatever the arrays, training, predict and
SHAP contributions (Booster and scikit-learn estimator) either give what the
dense equivalent gives (a slow, obvious twin reads the arrays: repeated
entries summed, integers and bools in float64) or raise ValueError/TypeError
naming the problem: never a segfault, an IndexError or a scipy error.

``DGBDT_FUZZ_EXAMPLES=500 pytest tests/test_sparse_fuzz.py`` fuzzes longer.
"""

import functools
import os
import re

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import dgbdt
from dgbdt.sklearn import DGBDTRegressor

FUZZ = settings(
    deadline=None,
    max_examples=int(os.environ.get("DGBDT_FUZZ_EXAMPLES", 100)),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PARAMS = {
    "verbosity": -1,
    "num_leaves": 4,
    "min_data_in_leaf": 1,
    "min_sum_hessian_in_leaf": 0.0,
    "min_data_in_bin": 1,
}
SKLEARN_PARAMS = {k: v for k, v in PARAMS.items() if k != "verbosity"}
ROUNDS = 3
N_FEATURES = 4  # the width of the fixed models that predict fuzzed matrices

CLASSES = {
    "csr": (sp.csr_matrix, sp.csr_array),
    "csc": (sp.csc_matrix, sp.csc_array),
    "coo": (sp.coo_matrix, sp.coo_array),
}
VALUE_DTYPES = (np.float64, np.float32, np.int64, np.int8, np.bool_)

# What a message names for each problem the twin finds.
NAMES = {
    "length": r"indices for \d+ values|index pointer \(indptr\) has \d+ values",
    "indptr": r"index pointer \(indptr\)",
    "values": r"holds values of dtype float16",
    "range": r"(row|column) index -?\d+ at (row|column|entry) \d+ is outside the matrix's \d+",
}


# ------------------------------------------------------------------ the twin


def _sum_dtype(values):
    """Repeated entries are summed as floats of their dtype, integers and bools
    as float64 (scipy would sum int8 100 + 100 to -56 and bool True + True
    to True; scikit-learn's checks cast to float64 first)."""
    return values.dtype if values.dtype.kind == "f" else np.float64


def _twin_coo(shape, values, row, col):
    n_rows, n_cols = shape
    if len(row) != len(values) or len(col) != len(values):
        return "length"
    if any(not 0 <= r < n_rows for r in row.tolist()) or any(
        not 0 <= c < n_cols for c in col.tolist()
    ):
        return "range"
    dense = np.zeros(shape, _sum_dtype(values))
    np.add.at(dense, (row, col), values)
    return dense


def _twin_compressed(fmt, shape, values, indptr, indices):
    n_major, n_minor = shape if fmt == "csr" else shape[::-1]
    if len(indices) != len(values) or len(indptr) != n_major + 1:
        return "length"
    ptr = indptr.tolist()
    if (
        ptr[0] != 0
        or any(a > b for a, b in zip(ptr[:-1], ptr[1:], strict=True))
        or ptr[-1] > len(indices)
    ):
        return "indptr"
    dense = np.zeros((n_major, n_minor), _sum_dtype(values))
    for major in range(n_major):
        for k in range(ptr[major], ptr[major + 1]):
            minor = int(indices[k])
            if not 0 <= minor < n_minor:
                return "range"
            dense[major, minor] += values[k]
    return dense if fmt == "csr" else dense.T


def twin(m):
    """The dense float64 matrix ``m``'s arrays stand for, or the name of their
    first problem (a key of NAMES)."""
    values = np.asarray(m.data)
    if values.dtype == np.float16:
        return "values"
    if m.format == "coo":
        out = _twin_coo(m.shape, values, np.asarray(m.row), np.asarray(m.col))
    else:
        out = _twin_compressed(m.format, m.shape, values, np.asarray(m.indptr), m.indices)
    return out if isinstance(out, str) else out.astype(np.float64)


# ------------------------------------------------------------------ matrices


@st.composite
def sparse_inputs(draw, n_cols=None):
    """A scipy sparse matrix or array (of ``n_cols`` columns, else 1 to 5),
    valid or with its index arrays broken after scipy made it."""
    shape = (draw(st.integers(2, 9)), n_cols or draw(st.integers(1, 5)))
    fmt = draw(st.sampled_from(sorted(CLASSES)))
    make = draw(st.sampled_from(CLASSES[fmt]))
    dtype = draw(st.sampled_from(VALUE_DTYPES))
    nnz = draw(st.integers(0, 2 * shape[0] * shape[1]))  # more than fit: repeats
    rows = draw(st.lists(st.integers(0, shape[0] - 1), min_size=nnz, max_size=nnz))
    cols = draw(st.lists(st.integers(0, shape[1] - 1), min_size=nnz, max_size=nnz))
    numbers = st.one_of(st.integers(-5, 5), st.floats(-100, 100, width=32))
    values = np.array(draw(st.lists(numbers, min_size=nnz, max_size=nnz)), dtype=np.float64)
    values = values.astype(dtype)
    index_dtype = draw(st.sampled_from([np.int32, np.int64]))
    coo = sp.coo_matrix((values, (np.array(rows, int), np.array(cols, int))), shape=shape)
    if fmt == "coo":
        m = make((values, (np.array(rows, index_dtype), np.array(cols, index_dtype))), shape=shape)
    else:
        # arrays with repeats, in drawn order within each row: made straight
        # from them, as users do, scipy neither sorts nor sums them
        key = coo.row if fmt == "csr" else coo.col
        minor = coo.col if fmt == "csr" else coo.row
        order = np.argsort(key, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(key, minlength=shape[fmt == "csc"]))])
        arrays = (values[order], minor[order].astype(index_dtype), indptr.astype(index_dtype))
        m = make(arrays, shape=shape)
    return draw(corrupt(m))


@st.composite
def corrupt(draw, m):
    """``m``, or ``m`` with one of its index arrays changed in place (scipy checks
    them only when it makes the matrix, and their range not even then)."""
    how = draw(st.sampled_from(["none", "index", "index", "indptr", "length", "dtypes", "f16"]))
    bad = st.one_of(st.integers(-3, -1), st.integers(0, 12), st.just(10**6))
    if how == "index" and m.nnz:
        arr = draw(st.sampled_from([m.row, m.col])) if m.format == "coo" else m.indices
        arr[draw(st.integers(0, len(arr) - 1))] = draw(bad)
    elif how == "indptr" and m.format != "coo":
        m.indptr[draw(st.integers(0, len(m.indptr) - 1))] = draw(bad)
    elif how == "length":
        if m.format == "coo":
            m.row = m.row[:-1] if len(m.row) else np.zeros(1, m.row.dtype)
        elif draw(st.booleans()):
            m.indptr = m.indptr[:-1]
        else:
            m.indices = np.append(m.indices, 0).astype(m.indices.dtype)
    elif how == "dtypes":  # other integer dtypes, each array its own: scipy's C code takes one
        dtypes = st.sampled_from([np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
        if m.format == "coo":
            m.coords = (m.row.astype(draw(dtypes)), m.col.astype(draw(dtypes)))
        else:
            m.indices, m.indptr = m.indices.astype(draw(dtypes)), m.indptr.astype(draw(dtypes))
    elif how == "f16":  # a dtype scipy's C code does not take
        m.data = m.data.astype(np.float16)
    event(f"{m.format}: {how}")
    return m


def outcome(fn):
    """fn()'s value, or the ValueError/TypeError it raised (any other escapes)."""
    try:
        return fn()
    except (ValueError, TypeError) as exc:
        return exc


def assert_names_problem(result, problem, m):
    assert isinstance(result, (ValueError, TypeError)), (
        f"a {m.format} matrix with a {problem} problem was taken: {m!r}"
    )
    assert re.search(NAMES[problem], str(result)), (problem, str(result))


def _train(X, y):
    return dgbdt.train(PARAMS, dgbdt.Dataset(X, label=y), num_boost_round=ROUNDS)


def _fit_predict(X, y):
    """Booster's predictions and contributions, and the estimator's predictions."""
    booster = _train(X, y)
    contrib = booster.predict(X, pred_contrib=True)
    model = DGBDTRegressor(n_estimators=ROUNDS, verbose=-1, **SKLEARN_PARAMS).fit(X, y)
    return (
        booster.predict(X),
        contrib.toarray() if sp.issparse(contrib) else contrib,
        model.predict(X),
    )


# ------------------------------------------------------------------ properties


@FUZZ
@given(sparse_inputs(), st.integers(0, 2**31 - 1))
def test_fit_and_predict_equal_the_dense_twin_or_name_the_problem(m, seed):
    y = np.random.default_rng(seed).normal(size=m.shape[0])
    expected = twin(m)
    result = outcome(lambda: _fit_predict(m, y))
    if isinstance(expected, str):
        assert_names_problem(result, expected, m)
        return
    dense = outcome(lambda: _fit_predict(expected, y))
    if isinstance(dense, Exception):  # e.g. nothing to split on: the same refusal
        assert type(result) is type(dense), (result, dense)
        return
    assert not isinstance(result, Exception), result
    np.testing.assert_allclose(result[0], dense[0], rtol=1e-9, atol=1e-12)
    # (sparse contributions of float32 data are float32, as LightGBM's)
    np.testing.assert_allclose(result[1], dense[1], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(result[2], dense[2], rtol=1e-9, atol=1e-12)


@functools.cache
def _model():
    """A Booster and a scikit-learn estimator over N_FEATURES columns."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, N_FEATURES))
    X[rng.random(X.shape) < 0.5] = 0.0
    y = X @ np.arange(1.0, N_FEATURES + 1)
    model = DGBDTRegressor(n_estimators=ROUNDS, verbose=-1, **SKLEARN_PARAMS).fit(X, y)
    return model.booster_, model


@FUZZ
@given(sparse_inputs(n_cols=N_FEATURES))
def test_predict_of_a_trained_model_equals_the_dense_twin_or_names_the_problem(m):
    booster, model = _model()
    expected = twin(m)
    for predict in (booster.predict, model.predict):
        result = outcome(lambda predict=predict: predict(m))
        if isinstance(expected, str):
            assert_names_problem(result, expected, m)
        else:
            assert not isinstance(result, Exception), result
            np.testing.assert_allclose(result, predict(expected), rtol=1e-12)
