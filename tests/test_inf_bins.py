"""±inf values get LightGBM's bins, splits and predictions (LightGBM 4.7).

LightGBM takes a bin bound as the midpoint of two neighbouring values in plain
double arithmetic, one ulp up (src/io/bin.cpp, GreedyFindBin).  Next to +inf
(or where the sum of two huge values overflows) that is +inf: +inf shares the
bin of the largest finite values, and the last bound, +inf again, closes an
empty bin that LightGBM counts.  Next to -inf it is the lowest double, so -inf
gets a bin of its own.  LightGBM's bins are read through reference binning, as
tests/test_binning_lightgbm.py reads them.
"""

import numpy as np
import pytest
from dgbdt.native.binning import map_to_bins

import dgbdt

lgb = pytest.importorskip("lightgbm")
from test_binning_lightgbm import LightGBMBinner, dgbdt_bounds  # noqa: E402

MAX = np.finfo(np.float64).max
EDGES = np.array([-np.inf, -MAX, -1e308, 1e308, MAX, np.inf])


def _columns():
    rng = np.random.default_rng(27)
    n = 600

    def put(x, fraction, value):
        x[rng.random(n) < fraction] = value
        return x

    cols = {
        "pos_inf": put(rng.normal(size=n), 0.1, np.inf),
        "neg_inf": put(rng.normal(size=n), 0.1, -np.inf),
        "both_inf_nan": put(put(put(rng.normal(size=n), 0.1, np.inf), 0.1, -np.inf), 0.1, np.nan),
        # as many distinct values as bins or fewer: a cut after every value
        "few_distinct_inf": rng.choice([-np.inf, -2.0, -1.0, 0.0, 1.0, 3.0, np.inf], n),
        # positive values, zeros and +inf (the zero_as_missing case)
        "positive_zeros_inf": put(put(rng.exponential(size=n), 0.3, 0.0), 0.1, np.inf),
        "only_inf": rng.choice([-np.inf, 0.0, np.inf], n),
        # midpoints that overflow to +-inf, and the largest floats next to +-inf
        "huge": rng.choice([-1.5e308, -1e308, -1.0, 0.0, 1.0, 1e308, 1.5e308], n),
        "largest_and_inf": rng.choice([-np.inf, -MAX, -1.0, 2.0, MAX, np.inf, np.nan], n),
    }
    return cols


COLUMNS = _columns()


@pytest.mark.parametrize("max_bin, min_data_in_bin", [(255, 3), (8, 1), (3, 1)])
@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_inf_bins_equal_lightgbm(name, max_bin, min_data_in_bin):
    """Same bin count (LightGBM's empty bin after +inf included) and the same
    bin for every value of the column, every finite bound and the double
    above it, and +-inf and the largest floats."""
    column = COLUMNS[name]
    ub, nan_bin = dgbdt_bounds(column, max_bin, min_data_in_bin)
    binner = LightGBMBinner(column, max_bin, min_data_in_bin)
    assert len(ub) + (nan_bin >= 0) == binner.n_bins, ub.tolist()
    finite = ub[np.isfinite(ub)]
    values = np.concatenate(
        [EDGES, finite, np.nextafter(finite, np.inf), column[~np.isnan(column)]]
    )
    ours = np.zeros(len(values), np.uint16)
    map_to_bins(values, ub, nan_bin, ours)
    theirs = binner.bins_of(values)
    bad = np.flatnonzero(ours != theirs)
    assert not len(bad), (
        f"values {values[bad[:6]].tolist()}: bins {ours[bad[:6]].tolist()} vs LightGBM's "
        f"{theirs[bad[:6]].tolist()}; our bounds {ub.tolist()}"
    )


def test_inf_bounds_are_lightgbms_midpoints():
    """The rule itself: the lowest double next to -inf; +inf next to the
    largest finite value, then +inf again for the empty last bin."""
    x = np.repeat([-np.inf, -1.0, 2.0, 5.0, np.inf], 2)
    ub, nan_bin = dgbdt_bounds(x, 255, 1)
    zero = float(np.float32(1e-35))  # LightGBM's kZeroThreshold
    assert nan_bin == -1
    assert ub.tolist() == [-MAX, -zero, zero, np.nextafter(3.5, np.inf), np.inf, np.inf]


def _data(n=1200, seed=3):
    """Four features with +-inf (and NaN, zeros) that carry the label: trees
    that split +inf from the largest finite values where the bins allow it."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 3] = np.where(rng.random(n) < 0.3, 0.0, rng.exponential(size=n))
    pos, neg = rng.random((2, n, 4)) < 0.08
    for f in (0, 2, 3):
        X[pos[:, f], f] = np.inf
    for f in (1, 2):
        X[neg[:, f], f] = -np.inf
    X[rng.random(n) < 0.1, 2] = np.nan
    y = X[:, 0].clip(-3, 3) + 2.0 * (X[:, 1] > 0.5) + rng.normal(size=n) * 0.1
    y += np.where(np.isposinf(X[:, 0]), -8.0, 0.0) + np.where(np.isneginf(X[:, 1]), 5.0, 0.0)
    y += np.where(np.isposinf(X[:, 3]), 3.0, 0.0) + np.where(np.isnan(X[:, 2]), -2.0, 0.0)
    return X, y.astype(np.float32).astype(np.float64)


def _probe_rows(X):
    """Rows of +-inf, the largest floats, NaN and 0.0 in every feature, mixed."""
    rng = np.random.default_rng(5)
    special = np.array([-np.inf, -MAX, MAX, np.inf, np.nan, 0.0])
    rows = rng.choice(special, size=(400, X.shape[1]))
    return np.vstack([rows, np.tile(special[:, None], (1, X.shape[1]))])


VARIANTS = {
    "default": {},
    "no_missing": {"use_missing": False},
    "zero_as_missing": {"zero_as_missing": True},
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_one_round_equals_lightgbm(variant):
    """One round at learning rate 1: LightGBM's tree (thresholds as its model
    text writes them) and its predictions on the training rows and on rows of
    +-inf, NaN and the largest floats."""
    X, y = _data()
    params = {
        "objective": "regression",
        "learning_rate": 1.0,
        "num_leaves": 15,
        "min_data_in_leaf": 5,
        "max_bin": 255,
        "verbosity": -1,
        **VARIANTS[variant],
    }
    lgb_params = {**params, "deterministic": True, "num_threads": 1, "feature_pre_filter": False}
    theirs = lgb.train(lgb_params, lgb.Dataset(X, y, params=lgb_params), 1)
    ours = dgbdt.train(params, dgbdt.Dataset(X, y), 1)
    probes = _probe_rows(X)
    for rows in (X, probes):
        np.testing.assert_allclose(ours.predict(rows), theirs.predict(rows), rtol=1e-9, atol=1e-12)

    def thresholds(text):
        lines = [line for line in text.splitlines() if line.startswith("threshold=")]
        return [float(v) for line in lines for v in line[len("threshold=") :].split()]

    assert thresholds(ours.model_to_string(format="lightgbm")) == thresholds(
        theirs.model_to_string()
    )
    # LightGBM's own model, read by dgbdt, routes +-inf rows as LightGBM does
    loaded = dgbdt.Booster(model_str=theirs.model_to_string())
    np.testing.assert_allclose(loaded.predict(probes), theirs.predict(probes), rtol=1e-12)


def test_inf_bounds_survive_model_and_dataset_files(tmp_path):
    """A +inf bound before the last is written as the largest float (strict
    JSON) and read back as +inf; a binary Dataset file keeps it too."""
    X = np.column_stack([COLUMNS["few_distinct_inf"], COLUMNS["both_inf_nan"]])
    y = np.where(np.isposinf(X[:, 0]), 2.0, 0.0) + np.nan_to_num(X[:, 1], posinf=3, neginf=-3)
    ds = dgbdt.Dataset(X, y)
    model = dgbdt.train({"objective": "regression", "verbosity": -1}, ds, 3)
    bounds = ds.bin_mapper.upper_bounds
    assert bounds[0][-2:].tolist() == [np.inf, np.inf], bounds[0]
    text = model.model_to_string(format="dgbdt")
    assert "Infinity" not in text
    again = dgbdt.Booster(model_str=text)
    for a, b in zip(again.bin_mapper.upper_bounds, bounds, strict=True):
        np.testing.assert_array_equal(a, b)
    probes = _probe_rows(X)
    np.testing.assert_array_equal(again.predict(probes), model.predict(probes))
    ds.save_binary(tmp_path / "d.bin")
    loaded = dgbdt.Dataset(tmp_path / "d.bin").construct()
    for a, b in zip(loaded.bin_mapper.upper_bounds, bounds, strict=True):
        np.testing.assert_array_equal(a, b)
