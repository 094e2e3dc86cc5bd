"""SHAP contributions of very deep trees (dgbdt.native.shap, issue 27 item 13).

A chain tree -- each internal node's right child a leaf, its left child the
next node, the split features cycling over a few columns -- written as a
LightGBM model text and read by ``dgbdt.Booster(model_str=...)``.  Its paths
hold at most one element per distinct feature, so TreeSHAP's buffers must not
grow with the depth squared (a 30,000-deep chain once asked for tens of GB
and raised MemoryError) and its walk must not recurse.

* 30,000 deep over 3 features: the contributions are computed and add up to
  the prediction;
* 40 deep over 3 features and 12 deep over 6: equal to the brute-force
  Shapley values of tests/test_shap.py;
* 5,000 deep: equal to LightGBM's ``pred_contrib`` on the same model text;
* the path buffer size: LightGBM's triangle when every level may add a
  feature, linear in the depth when few features repeat.
"""

import numpy as np
import pytest
from dgbdt.native.shap import path_buffer_size
from test_shap import brute_force_contributions

import dgbdt

TOL = 1e-9


def chain_model_text(depth, n_features, seed=0):
    """A LightGBM model text of one chain tree ``depth`` nodes deep: node k
    splits feature k % n_features at a threshold falling from 1 to -1 with k,
    its right child leaf k, its left child node k + 1 (the last: leaf depth);
    NaN goes left (decision_type 2), so an all-NaN row reaches the bottom."""
    rng = np.random.default_rng(seed)
    k = np.arange(depth)
    feature = k % n_features
    threshold = 1.0 - 2.0 * k / depth + 0.01 * feature
    leaf_count = rng.integers(1, 10, depth + 1)
    internal_count = np.cumsum(leaf_count[::-1])[::-1][:depth]  # the leaves below

    def row(values):
        return " ".join(repr(v) for v in np.asarray(values).tolist())

    fields = {
        "num_leaves": depth + 1,
        "num_cat": 0,
        "split_feature": row(feature),
        "split_gain": row(np.ones(depth)),
        "threshold": row(threshold),
        "decision_type": row(np.full(depth, 2)),
        "left_child": row(np.append(k[1:], -depth - 1)),
        "right_child": row(-k - 1),
        "leaf_value": row(rng.normal(size=depth + 1)),
        "leaf_weight": row(leaf_count),
        "leaf_count": row(leaf_count),
        "internal_value": row(np.zeros(depth)),
        "internal_weight": row(internal_count),
        "internal_count": row(internal_count),
        "is_linear": 0,
        "shrinkage": 1,
    }
    tree = "Tree=0\n" + "".join(f"{key}={value}\n" for key, value in fields.items()) + "\n\n"
    header = {
        "version": "v4",
        "num_class": 1,
        "num_tree_per_iteration": 1,
        "label_index": 0,
        "max_feature_idx": n_features - 1,
        "objective": "regression",
        "feature_names": " ".join(f"Column_{f}" for f in range(n_features)),
        "feature_infos": " ".join(["[-2:2]"] * n_features),
        "tree_sizes": len(tree),
    }
    head = "tree\n" + "".join(f"{key}={value}\n" for key, value in header.items()) + "\n"
    return head + tree + "end of trees\n\npandas_categorical:null\n"


def _rows(n, n_features, seed=1):
    """Rows leaving the chain at every depth, and two reaching its bottom."""
    X = np.random.default_rng(seed).uniform(-1.2, 1.2, (n, n_features))
    X[0] = -1.5
    X[1] = np.nan
    return X


def test_a_30000_deep_chain_adds_up_to_the_prediction():
    booster = dgbdt.Booster(model_str=chain_model_text(30_000, 3))
    assert booster.trees[0].max_depth() == 30_000
    X = _rows(130, 3)  # three blocks of rows (native.shap.SHAP_BLOCK)
    contrib = booster.predict(X, pred_contrib=True, num_threads=2)
    assert contrib.shape == (130, 4)
    np.testing.assert_allclose(contrib.sum(axis=1), booster.predict(X), rtol=0, atol=TOL)
    assert np.all(contrib[:, :3] != 0)  # every row's walk saw every feature


@pytest.mark.parametrize("depth, n_features", [(40, 3), (12, 6)])
def test_a_deep_chain_equals_the_brute_force_shapley_values(depth, n_features):
    booster = dgbdt.Booster(model_str=chain_model_text(depth, n_features, seed=depth))
    X = _rows(30, n_features)
    got = booster.predict(X, pred_contrib=True)
    np.testing.assert_allclose(got, brute_force_contributions(booster, X), rtol=0, atol=TOL)


def test_a_5000_deep_chain_equals_lightgbm(tmp_path):
    lgb = pytest.importorskip("lightgbm")
    path = tmp_path / "chain.txt"
    path.write_text(chain_model_text(5_000, 4, seed=5))
    booster = dgbdt.Booster(model_file=str(path))
    X = _rows(70, 4)
    got = booster.predict(X, pred_contrib=True)
    want = lgb.Booster(model_file=str(path)).predict(X, pred_contrib=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL)


@pytest.mark.parametrize("depth", [0, 1, 7, 40])
def test_the_path_buffer_is_lightgbms_triangle_when_every_level_adds_a_feature(depth):
    assert path_buffer_size(depth, depth) == (depth + 1) * (depth + 2) // 2


def test_the_path_buffer_grows_linearly_with_depth_over_few_features():
    # min(k, 3) + 1 entries per level k <= 30,000: 1 + 2 + 3 + 4 * 29,998
    assert path_buffer_size(30_000, 3) == 6 + 4 * 29_998
