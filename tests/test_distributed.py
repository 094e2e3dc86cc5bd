"""Distributed training under mpiexec equals single-process training.

Each test launches ``mpiexec -n K`` (see mpi_launch.py) on unequal row shards
(one empty for K >= 3) and compares the model rank 0 saved with a model
trained in this process on the concatenated rows.
"""

import importlib.util
import json

import numpy as np
import pytest
from mpi_launch import TESTS, run_mpi, run_mpi_file

import dgbdt

_spec = importlib.util.spec_from_file_location("shard_data", TESTS / "mpi" / "shard_data.py")
shard_data = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shard_data)

BASE = {
    "objective": "binary",
    "num_leaves": 15,
    "learning_rate": 0.2,
    "min_data_in_leaf": 10,
    "metric": ["binary_logloss", "auc"],
    "verbosity": -1,
}


def serial_model(params, n_rounds):
    X, y, X_valid, y_valid = shard_data.make_data()
    train_set = dgbdt.Dataset(X, y)
    evals = {}
    booster = dgbdt.train(
        {**params, "tree_learner": "serial"},
        train_set,
        n_rounds,
        valid_sets=[dgbdt.Dataset(X_valid, y_valid, reference=train_set)],
        valid_names=["valid"],
        callbacks=[dgbdt.record_evaluation(evals)],
    )
    return booster, evals


def assert_same_trees(a, b):
    """Same split features and thresholds, tree by tree."""
    assert a.num_trees() == b.num_trees()
    for i, (ta, tb) in enumerate(zip(a.trees, b.trees, strict=True)):
        assert ta.n_leaves == tb.n_leaves, f"tree {i}"
        np.testing.assert_array_equal(ta.split_feature, tb.split_feature, err_msg=f"tree {i}")
        np.testing.assert_array_equal(ta.threshold, tb.threshold, err_msg=f"tree {i}")


def train_both(tmp_path, k, script, params, n_rounds):
    """Train on K ranks with ``script`` and in this process; returns
    (mpiexec result, distributed booster, rank 0's info, serial booster, serial evals)."""
    result = run_mpi(k, script, tmp_path, json.dumps(params), n_rounds)
    assert result.returncode == 0, result.stderr[-3000:]
    distributed = dgbdt.Booster(model_file=tmp_path / "model.json")
    info = json.loads((tmp_path / "result.json").read_text())
    serial, serial_evals = serial_model(params, n_rounds)
    return result, distributed, info, serial, serial_evals


def assert_same_model(distributed, serial):
    """Same trees, and predictions on the validation rows within 1e-6."""
    assert_same_trees(distributed, serial)
    _, _, X_valid, _ = shard_data.make_data()
    np.testing.assert_allclose(
        distributed.predict(X_valid, raw_score=True),
        serial.predict(X_valid, raw_score=True),
        rtol=0,
        atol=1e-6,
    )


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize(
    "extra",
    [
        {"check_consistency": True},
        {"bagging_fraction": 0.7, "bagging_freq": 1, "feature_fraction": 0.8},
    ],
    ids=["plain", "bagging+feature_fraction"],
)
def test_data_parallel_equals_serial(tmp_path, k, extra):
    params = {**BASE, **extra, "tree_learner": "data"}
    n_rounds = 8
    result, distributed, info, serial, serial_evals = train_both(
        tmp_path, k, "train_shards.py", params, n_rounds
    )
    assert info["same_model_on_all_ranks"]
    # Bin boundaries do not depend on the number of ranks.
    assert (
        distributed.dump_model(format="json")["bin_upper_bounds"]
        == serial.dump_model(format="json")["bin_upper_bounds"]
    )
    assert_same_model(distributed, serial)
    # Metrics of the sharded validation set are global: equal to one process's.
    for metric in ("binary_logloss", "auc"):
        np.testing.assert_allclose(
            info["evals"]["valid"][metric], serial_evals["valid"][metric], rtol=1e-9
        )
    # Only rank 0 logs: one line per round.
    assert result.stdout.count("valid's auc") == n_rounds
    assert info["comm"]["bytes"]["reduce_scatter"] > 0


@pytest.mark.parametrize("k", [2, 3])
def test_feature_parallel_equals_serial(tmp_path, k):
    params = {**BASE, "tree_learner": "feature", "feature_fraction": 0.8, "check_consistency": True}
    n_rounds = 6
    result, distributed, info, serial, serial_evals = train_both(
        tmp_path, k, "train_shards.py", params, n_rounds
    )
    assert_same_model(distributed, serial)
    np.testing.assert_allclose(
        info["evals"]["valid"]["auc"], serial_evals["valid"]["auc"], rtol=1e-9
    )
    # Only split records travel: one per rank per leaf, whatever the data size.
    comm = info["comm"]
    assert comm["bytes"]["reduce_scatter"] == 0
    per_record = 12 * 8
    assert max(comm["bytes_per_tree"]) <= per_record * 2 * BASE["num_leaves"]


@pytest.mark.parametrize(
    "mode, message",
    [
        ("callback", "callback failed on the last rank"),
        ("bad_label", "needs labels 0 or 1"),
        ("before_train", "rank script failed before training"),
        ("params", "params['num_leaves'] is 7 on rank 2 but 31 on rank 0"),
    ],
)
def test_a_failing_rank_ends_every_rank(mode, message):
    import time

    start = time.monotonic()
    result = run_mpi(3, "fail.py", mode, timeout=60)
    elapsed = time.monotonic() - start
    assert result.returncode != 0
    assert message in result.stderr
    assert elapsed < 30, f"took {elapsed:.1f} s"


def test_demo_runs_distributed_on_two_ranks():
    import subprocess
    import sys

    from mpi_launch import mpiexec_path

    mpiexec_path()  # skips without the mpich wheel
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "dgbdt",
            "demo",
            "--rows",
            "20000",
            "--rounds",
            "5",
            "--leaves",
            "15",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "on 2 rank(s)" in result.stdout
    assert "reloaded model predicts identically" in result.stdout
    assert "kB per tree" in result.stdout
    assert "kB/tree" in result.stdout  # log_evaluation(show_comm=True)


def test_readme_distributed_example_runs(tmp_path):
    import re

    readme = (TESTS.parent / "README.md").read_text()
    code = next(
        c for c in re.findall(r"```python\n(.*?)\n```", readme, flags=re.S) if "train_dp.py" in c
    )
    script = tmp_path / "train_dp.py"
    script.write_text("import os, sys\nos.chdir(sys.argv[1])\n" + code)
    result = run_mpi_file(2, script, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "model.json").exists()
    assert re.search(r"\[\d+, \d+, \d+\]", result.stdout)


VOTING_CASES = [  # (n_noise, top_k, max_auc_loss)
    (0, 20, 0.005),  # the setting: 28 features, top_k 20
    (200, 5, 0.01),  # a real vote: 10 of 228 features elected per leaf
]


@pytest.mark.parametrize("k", [2, 4])
def test_voting_parallel_is_close_to_data_parallel(tmp_path, k):
    # every case in one launch (K ranks start once)
    out = tmp_path / "voting.json"
    cases = json.dumps([[n_noise, top_k] for n_noise, top_k, _ in VOTING_CASES])
    result = run_mpi(k, "train_voting.py", out, cases, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    infos = json.loads(out.read_text())
    assert len(infos) == len(VOTING_CASES), infos
    for n_noise, top_k, max_auc_loss in VOTING_CASES:
        info = infos[f"{n_noise}-{top_k}"]
        assert info["voting"]["auc"] >= info["data"]["auc"] - max_auc_loss, (n_noise, info)
        if n_noise:
            # Only the elected features' histograms travel: far fewer bytes.
            assert info["voting"]["bytes_per_tree"] * 5 < info["data"]["bytes_per_tree"], info


def test_vote_election_rules():
    from dgbdt.native.voting import elect as kernel

    def elect(proposals, top_k, rule):
        return kernel(proposals.astype(np.float64), top_k, rule == "votes")

    # 3 ranks x top_k 2: (feature, gain)
    proposals = np.array([[[4, 1.0], [7, 0.5]], [[7, 2.0], [1, 0.1]], [[7, 0.2], [4, 0.3]]])
    # votes: 7 -> 3, 4 -> 2, 1 -> 1: PV-Tree keeps the 2*top_k most voted
    np.testing.assert_array_equal(elect(proposals, 1, "votes"), [4, 7])
    np.testing.assert_array_equal(elect(proposals, 2, "votes"), [1, 4, 7])
    # LightGBM: top_k by mean gain x share of votes: 7 -> 0.9, 4 -> 0.433, 1 -> 0.033
    np.testing.assert_array_equal(elect(proposals, 1, "weighted_gain"), [7])
    # ties on votes break by summed gain, then by feature index
    tie = np.array([[[3, 1.0], [5, 1.0]], [[9, 1.0], [-1, -np.inf]]])
    np.testing.assert_array_equal(elect(tie, 1, "votes"), [3, 5])
    assert len(elect(np.full((2, 2, 2), -1.0), 2, "votes")) == 0


@pytest.mark.parametrize(
    "class_weight, shards",
    [(None, "halves"), ("balanced", "halves"), (None, "tiny"), (None, "weights0")],
)
def test_classifier_under_mpiexec_equals_serial(tmp_path, class_weight, shards):
    # class_weight="balanced" counts the classes over every rank's rows; a rank
    # may hold a single row
    from dgbdt import DGBDTClassifier

    out = tmp_path / "proba.npy"
    result = run_mpi(2, "estimator.py", out, class_weight or "none", shards, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    proba = np.load(out)
    X, y, X_valid, _ = shard_data.make_data()
    labels = np.where(X[:, 0] > 1.0, "c", np.where(y > 0, "b", "a"))
    order = np.argsort(labels == "c", kind="stable")
    weight = None
    if shards == "weights0":  # rank 0's half weighs 2, the rest 1
        weight = np.where(np.arange(len(X)) < len(X) // 2, 2.0, 1.0)
    serial = DGBDTClassifier(n_estimators=10, num_leaves=15, class_weight=class_weight).fit(
        X[order], labels[order], sample_weight=weight
    )
    np.testing.assert_allclose(proba, serial.predict_proba(X_valid), atol=1e-6)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize(
    "extra",
    [{}, {"bagging_fraction": 0.7, "bagging_freq": 1, "feature_fraction": 0.8}],
    ids=["plain", "bagging+feature_fraction"],
)
def test_feature_parallel_column_blocks_equal_serial(tmp_path, k, extra):
    params = {**BASE, **extra, "tree_learner": "feature", "check_consistency": True}
    n_rounds = 6
    result, distributed, info, serial, serial_evals = train_both(
        tmp_path, k, "train_blocks.py", params, n_rounds
    )
    assert info["n_features"] == 28  # the model uses global feature indices
    # The saved model predicts on full rows on one machine like any other.
    assert_same_model(distributed, serial)
    np.testing.assert_allclose(
        info["evals"]["valid"]["auc"], serial_evals["valid"]["auc"], rtol=1e-9
    )
    assert info["comm"]["bytes"]["reduce_scatter"] == 0  # no histograms travel


def test_column_blocks_must_cover_every_column_once(tmp_path):
    script = tmp_path / "bad_blocks.py"
    script.write_text(
        "import sys\nimport numpy as np\nimport dgbdt\nfrom dgbdt.distributed.comm import world_comm\n"
        "comm = world_comm()\nX = np.random.default_rng(0).random((200, 4)); y = X[:, 0]\n"
        "cols = np.array([0, 1]) if comm.rank == 0 else np.array([1, 2])\n"
        "dgbdt.train({'tree_learner': 'feature', 'verbosity': -1},\n"
        "            dgbdt.Dataset(X[:, cols], y, feature_indices=cols), 3)\n"
    )
    result = run_mpi_file(2, script, timeout=60)
    assert result.returncode != 0
    assert "exactly once" in result.stderr and "column 1" in result.stderr


@pytest.mark.parametrize(
    "objective, metric",
    [("regression_l1", "l1"), ("regression", "l2"), ("multiclass", "multi_logloss")],
)
def test_data_parallel_objectives_use_global_statistics(tmp_path, objective, metric):
    # L1: init score and leaf values are *global* weighted medians; L2: a global
    # mean; multiclass: global class priors.  All equal one process's.
    params = {**BASE, "objective": objective, "metric": metric, "tree_learner": "data"}
    if objective == "multiclass":
        params["num_class"] = 2
    n_rounds = 5
    result, distributed, info, serial, serial_evals = train_both(
        tmp_path, 3, "train_shards.py", params, n_rounds
    )
    np.testing.assert_allclose(distributed.init_score, serial.init_score, rtol=1e-12)
    assert_same_model(distributed, serial)
    np.testing.assert_allclose(
        info["evals"]["valid"][metric], serial_evals["valid"][metric], rtol=1e-9
    )


def test_a_dataset_binned_before_row_sharded_training(tmp_path):
    # Binned by the user on one rank's rows: refused when its raw data is gone
    # (every rank ends), re-binned over all ranks when it was kept.
    result = run_mpi(2, "preconstructed.py", tmp_path, "freed")
    assert result.returncode != 0
    assert "binned on 1 rank(s) and trains row-sharded on 2" in result.stderr
    result = run_mpi(2, "preconstructed.py", tmp_path, "kept")
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads((tmp_path / "result.json").read_text())["same_model"]


def test_weights_on_some_ranks_only(tmp_path):
    # Ranks without weights weigh their rows 1 (they used to skip the weights'
    # all-gather the others made, and every rank hung).
    result = run_mpi(2, "partial_weights.py", tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    X, y, _, _ = shard_data.make_data()
    lo, hi = shard_data.shard_bounds(len(y), 2)[0]
    weight = np.ones(len(y))
    weight[lo:hi] = np.linspace(0.5, 2.0, hi - lo)
    serial = dgbdt.train(
        {"objective": "regression_l1", "num_leaves": 15, "verbosity": -1},
        dgbdt.Dataset(X, y, weight=weight),
        5,
    )
    distributed = dgbdt.Booster(model_file=str(tmp_path / "model.json"))
    np.testing.assert_allclose(distributed.predict(X), serial.predict(X), atol=1e-6)


def _edge_case(tmp_path, case, k=3):
    result = run_mpi(k, "edge_cases.py", tmp_path, case, timeout=90)
    return result, (
        json.loads((tmp_path / "result.json").read_text())
        if (tmp_path / "result.json").exists()
        else None
    )


def _mean_prediction(preds, data):
    return "mean_pred", float(np.mean(preds)), True


def test_custom_feval_is_computed_over_every_ranks_rows(tmp_path):
    # Each rank used to compute it on its own rows (an empty one: NaN), and
    # early stopping then ended ranks at different rounds: a hang.
    result, out = _edge_case(tmp_path, "feval")
    assert result.returncode == 0, result.stderr[-3000:]
    X, y, Xv, yv = shard_data.make_data()
    train = dgbdt.Dataset(X, y)
    evals = {}
    serial = dgbdt.train(
        {
            "objective": "binary",
            "num_leaves": 7,
            "verbosity": -1,
            "metric": "None",
            "early_stopping_round": 2,
        },
        train,
        30,
        valid_sets=[dgbdt.Dataset(Xv, yv, reference=train)],
        feval=_mean_prediction,
        callbacks=[dgbdt.record_evaluation(evals)],
    )
    np.testing.assert_allclose(
        out["evals"]["valid_0"]["mean_pred"], evals["valid_0"]["mean_pred"], rtol=1e-9
    )
    assert out["best_iteration"] == serial.best_iteration


def test_init_score_on_every_rank_but_an_empty_one(tmp_path):
    result, out = _edge_case(tmp_path, "init_score")
    assert result.returncode == 0, result.stderr[-3000:]
    X, y, Xv, _ = shard_data.make_data()
    serial = dgbdt.train(
        {"objective": "regression", "num_leaves": 7, "verbosity": -1},
        dgbdt.Dataset(X, y, init_score=np.full(len(y), 0.25)),
        3,
    )
    np.testing.assert_allclose(out["raw"], serial.predict(Xv, raw_score=True), atol=1e-6)


def test_column_blocks_break_ties_by_global_feature(tmp_path):
    result, out = _edge_case(tmp_path, "blocks_tie", k=2)
    assert result.returncode == 0, result.stderr[-3000:]
    X, y, _, _ = shard_data.make_data()
    X = X.copy()
    X[:, 25] = 2.0 * X[:, 8]
    serial = dgbdt.train(
        {"objective": "binary", "num_leaves": 7, "verbosity": -1}, dgbdt.Dataset(X, y), 2
    )
    ours = [t["split_feature"] for t in out["model"]]
    assert ours == [t["split_feature"] for t in serial.dump_model(format="json")["trees"]]
    assert any(8 in f for f in ours) and not any(25 in f for f in ours)


def test_feature_parallel_validation_rows_must_match(tmp_path):
    result, _ = _edge_case(tmp_path, "valid_rows")
    assert result.returncode != 0
    assert "same rows of validation set 'valid_0' on every rank" in result.stderr
