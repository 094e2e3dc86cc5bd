"""Files written by the dgbdt before issue 26's moves (tests/old_files/make.py
wrote them at b2a9886) still load and predict the same: a model file, a LightGBM
text model, a binary Dataset file, a pickled Booster and pickled estimators."""

import importlib.util
import pathlib
import pickle

import numpy as np
import pytest

import dgbdt

HERE = pathlib.Path(__file__).parent / "old_files"


def _make():
    spec = importlib.util.spec_from_file_location("old_files_make", HERE / "make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows():
    X, _ = _make().data()
    return X


@pytest.fixture(scope="module")
def expected():
    with np.load(HERE / "expected.npz") as saved:
        return dict(saved)


@pytest.mark.parametrize("name", ["model.json", "model_lightgbm.txt"])
def test_an_old_model_file_predicts_as_before(name, rows, expected):
    booster = dgbdt.Booster(model_file=HERE / name)
    np.testing.assert_allclose(booster.predict(rows), expected["booster"], rtol=0, atol=1e-12)


def test_an_old_model_file_is_predicted_bit_for_bit(rows, expected):
    booster = dgbdt.Booster(model_file=HERE / "model.json")
    assert np.array_equal(booster.predict(rows), expected["booster"])


def test_an_old_pickled_booster_unpickles_and_predicts_as_before(rows, expected):
    with open(HERE / "booster.pkl", "rb") as f:
        booster = pickle.load(f)
    assert isinstance(booster, dgbdt.Booster)
    assert np.array_equal(booster.predict(rows), expected["booster"])


def test_old_pickled_estimators_unpickle_and_predict_as_before(rows, expected):
    with open(HERE / "estimators.pkl", "rb") as f:
        estimators = pickle.load(f)
    clf, reg = estimators["classifier"], estimators["regressor"]
    assert isinstance(clf, dgbdt.DGBDTClassifier) and isinstance(reg, dgbdt.DGBDTRegressor)
    assert np.array_equal(clf.predict_proba(rows), expected["classifier"])
    assert np.array_equal(reg.predict(rows), expected["regressor"])


def test_an_old_binary_dataset_file_trains_the_same_model(rows, expected):
    params = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 10, "verbose": -1}
    booster = dgbdt.train(params, dgbdt.Dataset(HERE / "train.bin"), num_boost_round=8)
    assert np.array_equal(booster.predict(rows), expected["from_bin"])
    assert np.array_equal(expected["from_bin"], expected["booster"])
