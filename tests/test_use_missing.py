"""use_missing=false (LightGBM's): NaN is the value 0.0, in binning, training
and prediction, for dense and sparse input alike."""

import numpy as np
import pytest
import scipy.sparse as sp

import dgbdt

PARAMS = {"objective": "regression", "num_leaves": 7, "verbosity": -1, "use_missing": False}


def _data(n=800, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[rng.random(X.shape) < 0.2] = np.nan
    y = np.nan_to_num(X[:, 0]) + 2.0 * np.isnan(X[:, 1]) + 0.1 * rng.normal(size=n)
    return X, y


def test_nan_trains_and_predicts_as_zero():
    X, y = _data()
    with_nan = dgbdt.train(PARAMS, dgbdt.Dataset(X, y), 10)
    zeros = dgbdt.train(PARAMS, dgbdt.Dataset(np.nan_to_num(X), y), 10)
    doc = with_nan.dump_model(format="json")
    assert doc["nan_bins"] == [-1] * 4
    assert doc["trees"] == zeros.dump_model(format="json")["trees"]
    np.testing.assert_array_equal(
        with_nan.predict(X, raw_score=True), zeros.predict(np.nan_to_num(X), raw_score=True)
    )
    # with NaN as missing, the planted NaN signal is found: another model
    missing = dgbdt.train({**PARAMS, "use_missing": True}, dgbdt.Dataset(X, y), 10)
    assert missing.dump_model(format="json")["trees"] != doc["trees"]


def test_sparse_input_with_nan_entries_equals_dense():
    X, y = _data()
    X[np.abs(X) < 0.5] = 0.0
    dense = dgbdt.train(PARAMS, dgbdt.Dataset(X, y), 5)
    sparse = dgbdt.train(PARAMS, dgbdt.Dataset(sp.csr_matrix(X), y), 5)
    assert dense.dump_model(format="json")["trees"] == sparse.dump_model(format="json")["trees"]


def test_use_missing_is_a_binning_parameter():
    X, y = _data()
    ds = dgbdt.Dataset(X, y, params={"use_missing": False})
    booster = dgbdt.train({"objective": "regression", "verbosity": -1}, ds, 3)
    assert booster.dump_model(format="json")["nan_bins"] == [-1] * 4  # binned with NaN as 0.0
    with pytest.raises(ValueError, match="use_missing"):
        dgbdt.train({**PARAMS, "use_missing": "maybe"}, dgbdt.Dataset(X, y), 1)


@pytest.mark.parametrize(
    "value, expected", [(np.True_, True), (1.0, True), (None, True), ("false", False), (0, False)]
)
def test_use_missing_takes_python_and_lightgbm_spellings(value, expected):
    # (it was a LightGBM key dgbdt did not support: a warning at its default,
    # an error otherwise; tests/test_usability.py listed it there)
    from dgbdt.params.table import resolve_params

    assert resolve_params({"use_missing": value})["use_missing"] is expected


def test_max_bin_by_feature_bins_each_feature_with_its_own_max_bin():
    from dgbdt.data.binning import find_bin_mapper

    X, y = _data()
    max_bins = [2, 5, 255, 17]
    ds = dgbdt.Dataset(X, y, params={"max_bin_by_feature": "2,5,255,17"}).construct()
    for f, m in enumerate(max_bins):
        alone = find_bin_mapper([X[:, f]], len(X), m, 3, 200000, 0)
        np.testing.assert_array_equal(ds.bin_mapper.upper_bounds[f], alone.upper_bounds[0])
    assert (ds.bin_mapper.n_bins <= np.array(max_bins)).all()
    with pytest.raises(ValueError, match="max_bin_by_feature has 3 values but the data has 4"):
        dgbdt.Dataset(X, y, params={"max_bin_by_feature": [2, 3, 4]}).construct()
    with pytest.raises(ValueError, match="max_bin_by_feature"):
        dgbdt.Dataset(X, y, params={"max_bin_by_feature": [1, 3, 4, 5]}).construct()


@pytest.mark.parametrize("value", ["2.5", "abc", [3, True], "1e9", [2, float("nan")]])
def test_bad_max_bin_by_feature_values_name_the_parameter(value):
    from dgbdt.params.table import resolve_params

    with pytest.raises((ValueError, TypeError), match="max_bin_by_feature"):
        resolve_params({"max_bin_by_feature": value})
