"""Bin upper bounds agree with LightGBM's, bound for bound.

How LightGBM's bounds are read
------------------------------
LightGBM's Python package does not expose a feature's bin upper bounds, but
it does expose, for any data set, the bin of every row:
``Dataset._dump_text`` (LGBM_DatasetDumpText) writes one line per row with
the bin index of each feature.  A data set built with ``reference=`` another
one is binned with the reference's bin mappers, unchanged.  So, with a
one-feature reference data set built on the column under test:

* **check** (``assert_same_bounds_as_lightgbm``): for every finite bound
  ``u[k]`` of ours, LightGBM must put ``u[k]`` in bin ``k`` and the next
  double above it, ``nextafter(u[k], +inf)``, in bin ``k + 1``; with the same
  number of bins (``Dataset.feature_num_bin``) this holds exactly when
  LightGBM's ``k``-th bound is ``u[k]``, bit for bit (LightGBM bins a value
  ``v`` into the first bin with ``v <= bound``, as we do).  Stronger than
  equality within 1e-12 relative, and it also sees empty bins (the zero bin
  of a column without zeros), which bounds read from a model's split
  thresholds would miss;
* **recovery** (``lightgbm_upper_bounds``): bisection over the ordered
  doubles, all bounds at once, 64 rounds of one small reference-binned data
  set each, finds LightGBM's bounds without knowing ours.  The check uses it
  to say what LightGBM has when it fails, and one test compares with it
  directly.

LightGBM sees the whole column (``bin_construct_sample_cnt`` >= rows), as do
we (``sample_cnt`` >= rows), so the two sample the same rows.
``feature_pre_filter=False`` keeps features LightGBM would drop as unsplittable
(it reports 0 bins for a feature it drops as trivial, i.e. with one bin).
"""

import os
import tempfile
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dgbdt.data.binning import find_bin_mapper

lgb = pytest.importorskip("lightgbm")

_SIGN_BIT = np.int64(-0x8000000000000000)
_MAGNITUDE = np.int64(0x7FFFFFFFFFFFFFFF)
_MAX = np.finfo(np.float64).max


def _ordered_key(x):
    """int64 keys that sort like the doubles (-0.0 and 0.0 share key 0)."""
    i = np.asarray(x, np.float64).view(np.int64)
    return np.where(i >= 0, i, -(i & _MAGNITUDE))


def _from_ordered_key(k):
    k = np.asarray(k, np.int64)
    return np.where(k >= 0, k, (-k) | _SIGN_BIT).view(np.float64)


def _lgb_params(max_bin, min_data_in_bin, n):
    return {
        "max_bin": max_bin,
        "min_data_in_bin": min_data_in_bin,
        "verbosity": -1,
        "feature_pre_filter": False,
        "enable_bundle": False,
        "num_threads": 1,
        "bin_construct_sample_cnt": max(n, 200_000),
    }


class LightGBMBinner:
    """LightGBM's bin mapper of one column, queried through reference binning."""

    def __init__(self, column, max_bin, min_data_in_bin):
        column = np.asarray(column)
        if not hasattr(lgb.Dataset, "_dump_text"):
            pytest.skip("this lightgbm has no Dataset._dump_text")
        n = column.shape[0]
        data = column.reshape(-1, 1) if column.ndim == 1 else column
        self.reference = lgb.Dataset(
            data, label=np.zeros(n), params=_lgb_params(max_bin, min_data_in_bin, n)
        ).construct()
        # 0 means LightGBM dropped the feature as trivial: a single bin.
        self.n_bins = max(self.reference.feature_num_bin(0), 1)

    def bins_of(self, values):
        """LightGBM's bin index of each value (no NaN)."""
        values = np.ascontiguousarray(values, np.float64)
        if self.reference.feature_num_bin(0) == 0:
            return np.zeros(len(values), np.int64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Overriding the parameters from Reference Dataset"
            probe = lgb.Dataset(values.reshape(-1, 1), reference=self.reference).construct()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bins.txt")
            probe._dump_text(path)
            with open(path) as f:
                lines = f.read().splitlines()[-len(values) :]
        return np.array([int(line.split(",")[0]) for line in lines], np.int64)


def lightgbm_upper_bounds(binner, n_value_bins):
    """LightGBM's first ``n_value_bins`` bin upper bounds, found by bisection.

    Bound ``k`` is the largest double that LightGBM puts in a bin <= k; all
    bounds are bisected together (one probe data set per round).
    """
    k = np.arange(n_value_bins - 1)
    lo = np.full(len(k), _ordered_key(-_MAX), np.int64)  # bin(lo) <= k
    hi = np.full(len(k), _ordered_key(_MAX), np.int64)  # bin(hi) > k
    while np.any(hi > lo + 1):
        mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)  # no int64 overflow
        left = binner.bins_of(_from_ordered_key(mid)) <= k
        lo = np.where(left, mid, lo)
        hi = np.where(left, hi, mid)
    return np.append(_from_ordered_key(lo), np.inf)


def assert_same_bounds_as_lightgbm(
    column, upper_bounds, nan_bin, max_bin, min_data_in_bin, binner=None
):
    binner = binner or LightGBMBinner(column, max_bin, min_data_in_bin)
    has_nan = bool(np.isnan(np.asarray(column, np.float64)).any())
    assert (nan_bin >= 0) == has_nan
    if nan_bin >= 0:
        assert nan_bin == len(upper_bounds), "the NaN bin is the last bin"
    n_bins = len(upper_bounds) + (nan_bin >= 0)
    n_value_bins_lgb = binner.n_bins - has_nan if binner.n_bins > 1 else 1
    finite = upper_bounds[:-1]
    ok = n_bins == binner.n_bins or (binner.n_bins == 1 and len(upper_bounds) == 1)
    if ok and len(finite):
        at = binner.bins_of(finite)
        above = binner.bins_of(np.nextafter(finite, np.inf))
        k = np.arange(len(finite))
        ok = np.array_equal(at, k) and np.array_equal(above, k + 1)
    if not ok:
        theirs = lightgbm_upper_bounds(binner, n_value_bins_lgb)
        raise AssertionError(
            f"bounds differ from LightGBM's (max_bin={max_bin}, "
            f"min_data_in_bin={min_data_in_bin}): {len(upper_bounds)} value bins vs "
            f"{n_value_bins_lgb}\nours:     {upper_bounds.tolist()}\n"
            f"LightGBM: {theirs.tolist()}"
        )


def dgbdt_bounds(column, max_bin, min_data_in_bin):
    column = np.ascontiguousarray(column, np.float64)
    m = find_bin_mapper([column], len(column), max_bin, min_data_in_bin, 10**9, 0)
    return m.upper_bounds[0], int(m.nan_bins[0])


def _columns():
    """Columns that exercise every rule of LightGBM's bin finder."""
    rng = np.random.default_rng(20240601)
    n = 3000
    cols = {}
    cols["normal"] = rng.normal(size=n)
    x = rng.normal(size=n)
    x[rng.random(n) < 0.7] = 0.0
    cols["many_zeros"] = x
    cols["positive_only"] = rng.exponential(size=n)
    cols["negative_only"] = -rng.exponential(size=n)
    cols["mostly_negative"] = np.where(
        rng.random(n) < 0.85, -rng.lognormal(size=n), rng.lognormal(size=n)
    )
    cols["few_distinct"] = rng.integers(-3, 5, n).astype(np.float64)
    cols["few_distinct_positive"] = rng.integers(1, 9, n).astype(np.float64)
    cols["ties"] = np.round(rng.normal(size=n), 1)  # > 40 values, some big counts
    x = rng.normal(size=n)
    x[rng.random(n) < 0.3] = 1.5  # one value bigger than a bin
    x[rng.random(n) < 0.05] = -0.25
    cols["heavy_ties"] = x
    x = rng.normal(size=n)
    x[rng.random(n) < 0.2] = np.nan
    cols["nan"] = x
    x = rng.integers(0, 3, n).astype(np.float64)
    x[rng.random(n) < 0.1] = np.nan
    cols["nan_few_distinct"] = x
    one = 1.0
    cols["ulp_neighbours_tiny_huge"] = rng.choice(
        np.array(
            [
                one,
                np.nextafter(one, 2.0),
                np.nextafter(np.nextafter(one, 2.0), 2.0),
                2.0,
                -1.0,
                1e-40,
                -1e-36,
                5e-324,
                1e300,
                1.7e308,
                -1.7e308,
                3.0,
            ]
        ),
        n,
    )
    cols["constant_positive"] = np.full(n, 2.5)
    cols["all_zero"] = np.zeros(n)
    cols["all_nan"] = np.full(n, np.nan)
    cols["tiny_sample"] = rng.normal(size=12)
    return cols


COLUMNS = _columns()
SETTINGS = [(255, 3), (63, 20), (16, 1), (4, 5), (2, 1), (300, 3)]


@pytest.mark.parametrize("max_bin, min_data_in_bin", SETTINGS)
@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_bounds_equal_lightgbm(name, max_bin, min_data_in_bin):
    column = COLUMNS[name]
    ub, nan_bin = dgbdt_bounds(column, max_bin, min_data_in_bin)
    assert len(ub) + (nan_bin >= 0) <= max_bin
    assert_same_bounds_as_lightgbm(column, ub, nan_bin, max_bin, min_data_in_bin)


@pytest.mark.parametrize("seed", range(6))
def test_bounds_equal_lightgbm_random(seed):
    """Random sizes, mixtures and settings (a small fuzz)."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([7, 50, 400, 2500]))
    x = rng.choice(rng.normal(size=int(rng.integers(1, 600))) * rng.choice([1, 100]), n)
    x[rng.random(n) < rng.random() * 0.6] = 0.0
    if rng.random() < 0.5:
        x[rng.random(n) < 0.2] = np.nan
    max_bin = int(rng.choice([3, 7, 32, 255]))
    min_data_in_bin = int(rng.choice([1, 3, 10]))
    ub, nan_bin = dgbdt_bounds(x, max_bin, min_data_in_bin)
    assert_same_bounds_as_lightgbm(x, ub, nan_bin, max_bin, min_data_in_bin)


@pytest.mark.parametrize("name", ["many_zeros", "heavy_ties", "nan", "few_distinct"])
def test_recovered_lightgbm_bounds(name):
    """LightGBM's bounds, recovered without ours, equal ours (and are not just
    near them: 1e-12 relative is the brief's tolerance, they agree exactly)."""
    column = COLUMNS[name]
    ub, nan_bin = dgbdt_bounds(column, 63, 3)
    binner = LightGBMBinner(column, 63, 3)
    theirs = lightgbm_upper_bounds(binner, binner.n_bins - (nan_bin >= 0))
    np.testing.assert_allclose(ub, theirs, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(ub, theirs)


@pytest.mark.parametrize("max_bin", [255, 16])
def test_sparse_column_equals_lightgbm(max_bin):
    """A sparse column (implicit zeros) gets LightGBM's bounds of the dense column."""
    rng = np.random.default_rng(7)
    n = 5000
    X = rng.normal(size=(n, 2)) * (rng.random((n, 2)) < 0.15)
    X[rng.random(n) < 0.05, 1] = np.nan
    m = sp.csc_matrix(X)
    cols = [
        (
            m.data[m.indptr[f] : m.indptr[f + 1]].astype(np.float64),
            m.indices[m.indptr[f] : m.indptr[f + 1]].astype(np.int64),
        )
        for f in range(2)
    ]
    mapper = find_bin_mapper(cols, n, max_bin, 3, 10**9, 0)
    for f in range(2):
        assert_same_bounds_as_lightgbm(
            X[:, f], mapper.upper_bounds[f], int(mapper.nan_bins[f]), max_bin, 3
        )


def _load_table(path):
    a = np.loadtxt(path, delimiter="\t", dtype=np.float64)
    return a[:, 1:], a[:, 0]


def _auc(y, score):
    from scipy.stats import rankdata

    ranks = rankdata(score)
    pos = y == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return (ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


@pytest.fixture(scope="module")
def binary_example(shared_datasets):
    root = shared_datasets / "lightgbm"
    paths = [root / "binary.train", root / "binary.test", root / "binary.train.weight"]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.skip(f"missing {missing}")
    X, y = _load_table(paths[0])
    Xt, yt = _load_table(paths[1])
    return X, y, Xt, yt, np.loadtxt(paths[2])


def test_binary_train_features_equal_lightgbm(binary_example):
    """Every feature of LightGBM's binary example, at the default max_bin."""
    X = binary_example[0]
    mapper = find_bin_mapper(
        (np.ascontiguousarray(X[:, f]) for f in range(X.shape[1])), X.shape[0], 255, 3, 200_000, 0
    )
    for f in range(X.shape[1]):
        assert_same_bounds_as_lightgbm(
            X[:, f], mapper.upper_bounds[f], int(mapper.nan_bins[f]), 255, 3
        )


def test_binary_auc_next_to_lightgbm(binary_example):
    """Test AUC of dgbdt and LightGBM at equal settings (printed; the
    threshold lives in tests/test_accuracy.py)."""
    import dgbdt

    X, y, Xt, yt, w = binary_example
    params = {
        "objective": "binary",
        "learning_rate": 0.1,
        "num_leaves": 63,
        "min_data_in_leaf": 50,
        "min_sum_hessian_in_leaf": 5,
        "max_bin": 255,
        "verbosity": -1,
    }
    ours = dgbdt.train(params, dgbdt.Dataset(X, y, weight=w), 100)
    theirs = lgb.train(params, lgb.Dataset(X, y, weight=w), 100)
    auc_ours = _auc(yt, ours.predict(Xt))
    auc_lgb = _auc(yt, theirs.predict(Xt))
    print(f"\nbinary.test AUC: dgbdt {auc_ours:.4f}, LightGBM {auc_lgb:.4f}")
