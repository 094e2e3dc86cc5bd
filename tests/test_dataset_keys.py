"""LightGBM's Dataset keyword ``categorical_feature``: what declares nothing
categorical (its default ``'auto'`` on numeric data, None, empty lists)
changes nothing (categorical features themselves: tests/test_categorical.py)."""

import numpy as np
import pytest

import dgbdt


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    return X, X[:, 0] + 0.1 * rng.normal(size=200)


@pytest.mark.parametrize("value", ["auto", None, [], (), ""])
def test_categorical_feature_that_declares_nothing_is_accepted(value):
    X, y = _data()
    params = {"verbosity": -1, "num_leaves": 4}
    plain = dgbdt.train(params, dgbdt.Dataset(X, y), 3)
    given = dgbdt.train(params, dgbdt.Dataset(X, y, categorical_feature=value), 3)
    np.testing.assert_array_equal(given.predict(X), plain.predict(X))
