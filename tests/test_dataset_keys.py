"""LightGBM's Dataset keywords that dgbdt takes without using: ``categorical_feature``
defaults to ``'auto'`` in LightGBM, so code written for it passes that value."""

import numpy as np
import pandas as pd
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


@pytest.mark.parametrize("value", [[0], ["x"], "name:x", "0", np.array([1])])
def test_declared_categorical_features_are_not_supported_yet(value):
    X, y = _data()
    with pytest.raises(ValueError, match="categorical features are not supported by dgbdt yet"):
        dgbdt.Dataset(X, y, categorical_feature=value)


def test_auto_with_a_pandas_category_column_still_says_what_to_do():
    df = pd.DataFrame({"x": np.arange(6.0), "c": pd.Categorical(list("abcabc"))})
    with pytest.raises(TypeError, match="categorical features are not supported yet"):
        dgbdt.train(
            {"verbosity": -1}, dgbdt.Dataset(df, np.arange(6.0), categorical_feature="auto"), 1
        )
