"""train() leaves the user's Dataset as it was: its label, weight, init_score and
params (binning it lazily is the one change, as documented), on one process
and on ranks of which only some have weights or init scores."""

import copy
import json

import numpy as np
from mpi_launch import run_mpi

import dgbdt


def _snapshot(ds):
    return {
        "label": None if ds.label is None else ds.label.copy(),
        "weight": None if ds.weight is None else ds.weight.copy(),
        "init_score": None if ds.init_score is None else ds.init_score.copy(),
        "params": copy.deepcopy(ds.params),
    }


def _assert_unchanged(ds, before):
    for key in ("label", "weight", "init_score"):
        now, was = getattr(ds, key), before[key]
        assert (now is None) == (was is None), key
        if was is not None:
            np.testing.assert_array_equal(now, was, err_msg=key)
    assert ds.params == before["params"]


def test_serial_training_leaves_the_datasets_unchanged():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 5))
    y = X[:, 0] + rng.normal(scale=0.3, size=600)
    train_set = dgbdt.Dataset(
        X[:400],
        y[:400],
        weight=np.linspace(0.5, 1.5, 400),
        init_score=np.full(400, 0.1),
        params={"max_bin": 31, "min_data_in_bin": 2},
        free_raw_data=False,
    )
    valid = dgbdt.Dataset(X[400:], y[400:], reference=train_set)
    plain = dgbdt.Dataset(X[:400], y[:400])
    before = [_snapshot(d) for d in (train_set, valid, plain)]
    params = {"objective": "regression", "num_leaves": 7, "verbosity": -1, "metric": "l2"}
    given = copy.deepcopy(params)
    first = dgbdt.train(params, train_set, 3, valid_sets=[valid, train_set])
    dgbdt.train(params, train_set, 2, valid_sets=[valid], init_model=first)
    dgbdt.train({**params, "boost_from_average": False}, plain, 2)
    assert params == given
    for ds, was in zip((train_set, valid, plain), before, strict=True):
        _assert_unchanged(ds, was)


def test_ranks_with_and_without_weights_leave_their_datasets_unchanged(tmp_path):
    # Rank 0 has weights and rank 1 an init score: each other rank trains with unit
    # weights / zero scores of its own, never written into the user's Dataset.
    result = run_mpi(2, "dataset_unchanged.py", tmp_path, timeout=90)
    assert result.returncode == 0, result.stderr[-3000:]
    for rank in range(2):
        got = json.loads((tmp_path / f"unchanged_{rank}.json").read_text())
        assert got == dict.fromkeys(
            ("label", "weight", "init_score", "dataset_params", "train_params"), True
        ), rank
