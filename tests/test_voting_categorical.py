"""Voting-parallel where every feature fits the election (n_features <= top_k)
equals one process: a high-cardinality categorical column (40 categories) on
unequal row shards, 2 and 3 ranks, float and quantized, both voting rules.

On these shards some leaves have a categorical split that no rank's local
scan finds worth proposing (cat_l2 weighs more on a rank's share of a leaf),
so a vote would lose it: with every feature elected there is no vote."""

import importlib.util
import itertools
import json

import numpy as np
import pytest
from mpi_launch import TESTS, run_mpi

import dgbdt

_spec = importlib.util.spec_from_file_location(
    "categorical_data", TESTS / "mpi" / "categorical_data.py"
)
categorical_data = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(categorical_data)

N_ROUNDS = 6
BASE = {
    "objective": "binary",
    "verbosity": -1,
    "tree_learner": "voting",
    "min_data_per_group": 5,
    "cat_smooth": 1,
}
CASES = {
    "float": BASE,
    "quantized": {**BASE, "use_quantized_grad": True},
    "weighted_gain": {**BASE, "voting_rule": "weighted_gain", "top_k": 4},
}
# the tree structure: which feature, which bin or categories, which children
STRUCTURE = ("split_feature", "threshold_bin", "left_child", "right_child", "default_left")
CATEGORIES = ("cat_boundaries", "cat_threshold")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = {}
    for k in (2, 3):
        path = tmp_path_factory.mktemp(f"k{k}") / "models.json"
        result = run_mpi(
            k, "voting_categorical_train.py", path, json.dumps(CASES), N_ROUNDS, timeout=300
        )
        assert result.returncode == 0, result.stderr[-3000:]
        out[k] = json.loads(path.read_text())
    return out


def _data():
    X, y = categorical_data.make_categorical_data(1500)
    return X, y, dgbdt.Dataset(X, y, categorical_feature=categorical_data.CATEGORICAL)


def _serial(name):
    _, _, train_set = _data()
    return dgbdt.train({**CASES[name], "tree_learner": "serial"}, train_set, N_ROUNDS)


def _most_categories_left(tree):
    bits = [bin(word).count("1") for word in tree.get("cat_threshold") or []]
    bounds = tree.get("cat_boundaries") or [0]
    return max((sum(bits[a:b]) for a, b in itertools.pairwise(bounds)), default=0)


def _trees(booster):
    return [tree.to_dict() for tree in booster.trees]


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("name", list(CASES))
def test_voting_with_every_feature_elected_equals_one_process(trained, k, name):
    X, _, _ = _data()
    model = dgbdt.Booster(model_str=trained[k][name])
    want = _serial(name)
    got_trees, want_trees = _trees(model), _trees(want)
    assert len(got_trees) == len(want_trees) == N_ROUNDS
    for i, (got, exp) in enumerate(zip(got_trees, want_trees, strict=True)):
        for field in STRUCTURE + CATEGORIES:
            assert got.get(field) == exp.get(field), f"K={k} {name} tree {i}: {field}"
    np.testing.assert_allclose(
        model.predict(X, raw_score=True), want.predict(X, raw_score=True), rtol=0, atol=1e-12
    )
    # the data exercise the many-vs-many split: a node sending several categories left
    assert max(_most_categories_left(t) for t in want_trees) > 1
    if name == "quantized":  # integer histograms: the same model bit for bit
        assert json.dumps(got_trees) == json.dumps(want_trees), f"K={k}"
