"""Sparse data under mpiexec: the bin store (bundles, kept features, most
frequent bins) is the same on any number of ranks, and every learner trains
the model one process trains (data-parallel: the same trees; quantized: the
same bytes)."""

import importlib.util
import json

import numpy as np
import pytest
from mpi_launch import TESTS, run_mpi

import dgbdt

_spec = importlib.util.spec_from_file_location("sparse_data", TESTS / "mpi" / "sparse_data.py")
sparse_data = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sparse_data)

BASE = {
    "objective": "binary",
    "num_leaves": 15,
    "learning_rate": 0.2,
    "min_data_in_leaf": 10,
    "verbosity": -1,
}
N_ROUNDS = 6


def serial(params):
    X, y = sparse_data.make_sparse_data()
    train_set = dgbdt.Dataset(X, y)
    booster = dgbdt.train({**params, "tree_learner": "serial"}, train_set, N_ROUNDS)
    return booster, sparse_data.store_summary(train_set.store)


def distributed(tmp_path, k, params, mode="rows"):
    result = run_mpi(k, "train_sparse.py", tmp_path, json.dumps(params), N_ROUNDS, mode)
    assert result.returncode == 0, result.stderr[-3000:]
    info = json.loads((tmp_path / "result.json").read_text())
    return dgbdt.Booster(model_file=tmp_path / "model.json"), info


def trees(booster):
    return json.dumps(json.loads(booster.model_to_string(format="json"))["trees"])


@pytest.mark.parametrize("k", [2, 3, 4])
def test_data_parallel_bundles_and_trees_equal_one_process(tmp_path, k):
    params = {**BASE, "tree_learner": "data"}
    booster, info = distributed(tmp_path, k, params)
    want, summary = serial(params)
    assert summary["bundles"], "the data should bundle"
    for store in info["stores"]:  # every rank: the single-process store
        assert store == summary
    a, b = booster.trees, want.trees
    assert [t.split_feature.tolist() for t in a] == [t.split_feature.tolist() for t in b]
    assert [t.threshold.tolist() for t in a] == [t.threshold.tolist() for t in b]
    X, _ = sparse_data.make_sparse_data()
    np.testing.assert_allclose(
        booster.predict(X, raw_score=True), want.predict(X, raw_score=True), atol=1e-9
    )


@pytest.mark.parametrize("k", [2, 4])
def test_quantized_data_parallel_trees_are_byte_identical(tmp_path, k):
    params = {**BASE, "tree_learner": "data", "use_quantized_grad": True}
    booster, _ = distributed(tmp_path, k, params)
    want, _ = serial(params)
    assert trees(booster) == trees(want)


@pytest.mark.parametrize("mode", ["rows", "blocks"])
def test_feature_parallel_equals_one_process(tmp_path, mode):
    params = {**BASE, "tree_learner": "feature"}
    booster, _ = distributed(tmp_path, 2, params, mode)
    want, _ = serial(params)
    X, _ = sparse_data.make_sparse_data()
    assert [t.split_feature.tolist() for t in booster.trees] == [
        t.split_feature.tolist() for t in want.trees
    ]
    np.testing.assert_allclose(
        booster.predict(X, raw_score=True), want.predict(X, raw_score=True), atol=1e-9
    )


def test_voting_parallel_trains_on_sparse_data(tmp_path):
    params = {**BASE, "tree_learner": "voting", "top_k": 5}
    booster, info = distributed(tmp_path, 2, params)
    want, summary = serial(params)
    assert info["stores"][0] == summary
    X, y = sparse_data.make_sparse_data()
    from sklearn.metrics import roc_auc_score

    auc, serial_auc = roc_auc_score(y, booster.predict(X)), roc_auc_score(y, want.predict(X))
    assert auc > serial_auc - 0.02, (auc, serial_auc)


def test_voting_trees_do_not_depend_on_the_layout(tmp_path):
    # A feature elected by the other rank is sent by every rank: its bins must be
    # built everywhere, in the column layout too (fewer rows than a row chunk:
    # both layouts sum every bin in row order).
    params = {**BASE, "tree_learner": "voting", "top_k": 1, "min_data_in_leaf": 20}
    params.update(enable_bundle=False, is_enable_sparse=False)
    (tmp_path / "row").mkdir()
    (tmp_path / "col").mkdir()
    rows, cols = {**params, "force_row_wise": True}, {**params, "force_col_wise": True}
    by_rows, _ = distributed(tmp_path / "row", 2, rows, "constant")
    by_cols, _ = distributed(tmp_path / "col", 2, cols, "constant")
    assert trees(by_rows) == trees(by_cols)
    assert max(abs(t.leaf_value).max() for t in by_cols.trees) < 1.0
