"""Checkpoints and resume: training N rounds equals training M, saving, and
resuming for N - M, bit for bit; the checkpoint and log_progress callbacks.
"""

import json
import re

import numpy as np
import pytest
from mpi_launch import run_mpi

import dgbdt
from dgbdt.callback import CallbackEnv, checkpoint, log_progress
from dgbdt.models.tree import LEAF_FIELDS, NODE_FIELDS

N_ROUNDS, RESUME_AT = 10, 4  # 4 is not a multiple of bagging_freq=3
SAMPLING = {"bagging_fraction": 0.7, "bagging_freq": 3, "feature_fraction": 0.8}


def _data(objective, n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    z = 2.0 * X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.normal(size=n)
    X[rng.random(X.shape) < 0.05] = np.nan
    if objective == "binary":
        return X, (z > 0).astype(np.float64)
    if objective in ("multiclass", "multiclassova"):
        return X, np.digitize(z, [-1.0, 1.0]).astype(np.float64)
    if objective in ("poisson", "tweedie", "gamma", "mape"):
        return X, np.exp(0.5 * z)
    if objective == "cross_entropy_lambda":
        return X, 1.0 / (1.0 + np.exp(-z))
    return X, z


CASES = {
    "regression": {"objective": "regression"},
    "binary": {"objective": "binary"},
    "multiclass": {"objective": "multiclass", "num_class": 3},
    "regression_l1": {"objective": "regression_l1"},  # leaf values renewed after growing
    "quantile_sqrt": {"objective": "quantile", "alpha": 0.8, "reg_sqrt": True},
    "mape": {"objective": "mape"},
    "poisson": {"objective": "poisson"},
    "tweedie": {"objective": "tweedie"},
    "cross_entropy_lambda": {"objective": "cross_entropy_lambda"},
    "multiclassova": {"objective": "multiclassova", "num_class": 3},
}


def _params(case, **extra):
    return {
        **CASES[case],
        **SAMPLING,
        "num_leaves": 7,
        "min_data_in_leaf": 5,
        "learning_rate": 0.3,
        "verbosity": -1,
        **extra,
    }


def assert_same_trees(a, b):
    """Every tree array equal bit for bit (float arrays compared as bytes, so
    -0.0 != 0.0 and any last-bit difference fails)."""
    assert a.num_trees() == b.num_trees()
    for i, (ta, tb) in enumerate(zip(a.trees, b.trees, strict=True)):
        assert ta.n_leaves == tb.n_leaves, f"tree {i}"
        for name in NODE_FIELDS + LEAF_FIELDS:
            x, y = getattr(ta, name), getattr(tb, name)
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), f"tree {i} {name}"


def assert_same_model_file(a, b):
    """Model documents equal except the recorded ``params.num_iterations``:
    that is each training call's own number of rounds (N for the uninterrupted
    run, N - M for the resumed one), kept as given, as LightGBM records its
    config.  Everything else (trees, init score, bins, best_iteration) is equal."""
    da, db = a.dump_model(format="json"), b.dump_model(format="json")
    for d in (da, db):
        d["params"].pop("num_iterations")
    assert da == db


def _resume(params, X, y, m, n, init_path):
    """Train m rounds, save, and resume from the file for n - m rounds, each on a
    freshly built Dataset, as a new process would."""
    dgbdt.train(params, dgbdt.Dataset(X, y), m).save_model(init_path)
    return dgbdt.train(params, dgbdt.Dataset(X, y), n - m, init_model=str(init_path))


@pytest.mark.parametrize("case", list(CASES))
def test_resume_equals_uninterrupted(case, tmp_path):
    X, y = _data(CASES[case]["objective"])
    params = _params(case)
    full = dgbdt.train(params, dgbdt.Dataset(X, y), N_ROUNDS)
    resumed = _resume(params, X, y, RESUME_AT, N_ROUNDS, tmp_path / "m.json")
    assert resumed.current_iteration() == N_ROUNDS
    assert_same_trees(full, resumed)
    np.testing.assert_array_equal(
        full.predict(X, raw_score=True), resumed.predict(X, raw_score=True)
    )
    assert_same_model_file(full, resumed)
    # A model file round-trips exactly: same document, same predictions.
    path = tmp_path / "full.json"
    full.save_model(path)
    loaded = dgbdt.Booster(model_file=path)
    assert loaded.model_to_string() == full.model_to_string()
    np.testing.assert_array_equal(
        loaded.predict(X, raw_score=True), full.predict(X, raw_score=True)
    )


@pytest.mark.parametrize("resume_at", [1, 2, 3, 5])
def test_resume_at_any_point_of_the_bagging_cycle(resume_at, tmp_path):
    X, y = _data("regression")
    params = _params("regression")
    full = dgbdt.train(params, dgbdt.Dataset(X, y), 7)
    assert_same_trees(full, _resume(params, X, y, resume_at, 7, tmp_path / "m.json"))


def test_resume_stops_where_uninterrupted_training_stops(tmp_path):
    # y = x in {0, 1}: one round at learning rate 1 fits it exactly, then no
    # split gains anything: the later rounds add no tree (LightGBM drops the
    # stump rounds; its Python train goes on trying).
    X = np.repeat([0.0, 1.0], 20).reshape(-1, 1)
    y = X[:, 0].copy()
    params = {
        "objective": "regression",
        "learning_rate": 1.0,
        "num_leaves": 2,
        "min_data_in_leaf": 1,
        "verbosity": -1,
    }
    full = dgbdt.train(params, dgbdt.Dataset(X, y), 5)
    assert full.current_iteration() == 1
    resumed = _resume(params, X, y, 1, 5, tmp_path / "m.json")
    assert resumed.current_iteration() == 1
    assert_same_trees(full, resumed)


# --------------------------------------------------------------------------- #
# checkpoint callback
# --------------------------------------------------------------------------- #
def test_checkpoint_files_and_resume_from_snapshot(tmp_path):
    X, y = _data("binary")
    params = _params("binary")
    prefix = tmp_path / "model.json"
    full = dgbdt.train(params, dgbdt.Dataset(X, y), N_ROUNDS, callbacks=[checkpoint(prefix, 3)])
    names = sorted(p.name for p in tmp_path.iterdir())
    # LightGBM CLI naming; no temp files left behind by the atomic writes.
    assert names == [f"model.json.snapshot_iter_{i}" for i in (3, 6, 9)]
    for i in (3, 6, 9):
        snap = dgbdt.Booster(model_file=f"{prefix}.snapshot_iter_{i}")
        assert snap.current_iteration() == i
        np.testing.assert_array_equal(
            snap.predict(X, raw_score=True), full.predict(X, raw_score=True, num_iteration=i)
        )
    resumed = dgbdt.train(
        params, dgbdt.Dataset(X, y), N_ROUNDS - 6, init_model=f"{prefix}.snapshot_iter_6"
    )
    assert_same_trees(full, resumed)
    np.testing.assert_array_equal(resumed.predict(X), full.predict(X))


def test_checkpoint_counts_init_model_iterations(tmp_path):
    X, y = _data("regression")
    params = _params("regression")
    first = dgbdt.train(params, dgbdt.Dataset(X, y), 4)
    dgbdt.train(
        params,
        dgbdt.Dataset(X, y),
        4,
        init_model=first,
        callbacks=[checkpoint(str(tmp_path / "m"), 2)],
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.snapshot_iter_6", "m.snapshot_iter_8"]


def _env(booster, iteration, begin=0, end=10):
    return CallbackEnv(booster, {}, iteration, begin, end, [])


def test_checkpoint_disabled_and_only_on_logging_rank_zero(tmp_path):
    X, y = _data("regression")
    booster = dgbdt.train(_params("regression"), dgbdt.Dataset(X, y), 2)
    checkpoint(tmp_path / "off", 0)(_env(booster, 1))
    try:
        dgbdt.log.set_logging_rank(1)
        checkpoint(tmp_path / "other", 1)(_env(booster, 1))
    finally:
        dgbdt.log.set_logging_rank(0)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(TypeError, match="freq"):
        checkpoint(tmp_path / "m", 2.5)


# --------------------------------------------------------------------------- #
# log_progress callback
# --------------------------------------------------------------------------- #
LINE = re.compile(r"^\[(\d+)/(\d+)\] (\S+) s/iter, (\S+) s left$")


def test_log_progress_lines(capsys):
    X, y = _data("regression")
    params = _params("regression")
    first = dgbdt.train(params, dgbdt.Dataset(X, y), 10, callbacks=[log_progress(4)])
    lines = capsys.readouterr().out.splitlines()
    matches = [LINE.match(line) for line in lines]
    assert all(matches), lines
    assert [(int(m[1]), int(m[2])) for m in matches] == [(4, 10), (8, 10)]
    per_iter, left = (float(matches[-1][i]) for i in (3, 4))
    assert per_iter > 0 and left == pytest.approx(2 * per_iter, rel=0.05, abs=0.06)
    # A resumed run counts the init model's iterations, as the model does.
    dgbdt.train(params, dgbdt.Dataset(X, y), 5, init_model=first, callbacks=[log_progress()])
    lines = capsys.readouterr().out.splitlines()
    assert [LINE.match(line)[1] + "/" + LINE.match(line)[2] for line in lines] == [
        f"{i}/15" for i in range(11, 16)
    ]
    assert LINE.match(lines[-1])[4] == "0.0"


def test_log_progress_silent_off_rank_zero_and_when_disabled(capsys):
    progress = log_progress(1)
    progress.begin_training(_env(None, 0))
    try:
        dgbdt.log.set_logging_rank(1)
        progress(_env(None, 0))
    finally:
        dgbdt.log.set_logging_rank(0)
    log_progress(0)(_env(None, 0))
    assert capsys.readouterr().out == ""
    progress(_env(None, 1))
    assert LINE.match(capsys.readouterr().out.strip())[1] == "2"


# --------------------------------------------------------------------------- #
# data-parallel resume
# --------------------------------------------------------------------------- #
def test_data_parallel_resume_equals_uninterrupted(tmp_path):
    params = {**_params("binary"), "tree_learner": "data"}
    result = run_mpi(2, "resume.py", tmp_path, json.dumps(params), N_ROUNDS, RESUME_AT)
    assert result.returncode == 0, result.stderr[-3000:]
    full = dgbdt.Booster(model_file=tmp_path / "full.json")
    resumed = dgbdt.Booster(model_file=tmp_path / "resumed.json")
    assert resumed.current_iteration() == N_ROUNDS
    assert_same_trees(full, resumed)
    assert_same_model_file(full, resumed)
    # The snapshot and the models, no temp files; only rank 0 logged progress.
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "ckpt.snapshot_iter_4",
        "full.json",
        "resumed.json",
    ]
    assert result.stdout.count(f"/{N_ROUNDS}] ") == N_ROUNDS - RESUME_AT


def test_continuing_on_differently_binned_data_starts_from_the_models_predictions():
    # Data binned unlike the init model's: its trees' bin thresholds mean nothing
    # there, so the starting scores must come from the raw values.
    rng = np.random.default_rng(3)
    X1 = rng.normal(size=(600, 4))
    y1 = X1[:, 0] + rng.normal(0, 0.1, 600)
    X2 = rng.normal(2.0, 3.0, size=(500, 4))
    y2 = X2[:, 0] + rng.normal(0, 0.1, 500)
    params = {
        "objective": "regression",
        "num_leaves": 7,
        "min_data_in_leaf": 5,
        "verbosity": -1,
        "metric": "l2",
        "is_provide_training_metric": True,
    }
    first = dgbdt.train(params, dgbdt.Dataset(X1, y1), 5)
    evals = {}
    train_set = dgbdt.Dataset(X2, y2, params={"max_bin": 15})
    valid = dgbdt.Dataset(X1, y1, reference=train_set)
    booster = dgbdt.train(
        {**params, "max_bin": 15},
        train_set,
        1,
        init_model=first,
        valid_sets=[valid],
        valid_names=["valid"],
        callbacks=[dgbdt.record_evaluation(evals)],
    )
    assert booster.num_trees() == 6
    # The metrics seen during training are those of the final model's predictions.
    for X, y, name in ((X2, y2, "training"), (X1, y1, "valid")):
        l2 = float(np.mean((booster.predict(X) - y) ** 2))
        assert evals[name]["l2"][-1] == pytest.approx(l2, rel=1e-12)


# --------------------------------------------------------------------------- #
# Resume anywhere: killed on 3 ranks, resumed on 2
# --------------------------------------------------------------------------- #
@pytest.mark.slow
@pytest.mark.parametrize("quantized", [True, False])
def test_a_killed_job_resumes_on_another_number_of_ranks(tmp_path, quantized):
    """``mpiexec -n 3 dgbdt train`` killed after its snapshot at iteration 6, resumed
    with ``mpiexec -n 2`` from that snapshot: the trees of the uninterrupted run
    (byte-identical with quantized training; same splits with float training,
    whose sums depend on the rank count).  Bagging and feature_fraction are
    keyed on (seed, iteration, global row / feature): a snapshot needs nothing else."""
    import json

    from mpi_launch import run_mpi

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6))
    y = (X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=3000) > 0).astype(int)
    data = tmp_path / "train.csv"
    data.write_text(
        "".join(f"{t}," + ",".join(f"{v:.6f}" for v in r) + "\n" for t, r in zip(y, X, strict=True))
    )
    common = [
        f"data={data}",
        "objective=binary",
        "tree_learner=data",
        "num_leaves=15",
        "bagging_fraction=0.8",
        "bagging_freq=2",
        "feature_fraction=0.8",
        "verbosity=-1",
        f"use_quantized_grad={str(quantized).lower()}",
        "stochastic_rounding=true",
    ]
    full, killed, resumed = (tmp_path / f"{n}.json" for n in ("full", "killed", "resumed"))
    run = run_mpi(3, "cli_killed.py", 0, "train", *common, "num_trees=12", f"output_model={full}")
    assert run.returncode == 0, run.stderr[-3000:]
    run = run_mpi(
        3,
        "cli_killed.py",
        6,
        "train",
        *common,
        "num_trees=12",
        "snapshot_freq=3",
        f"output_model={killed}",
    )
    assert run.returncode != 0 and not killed.exists()
    snapshot = tmp_path / "killed.json.snapshot_iter_6"
    assert snapshot.exists() and not list(tmp_path.glob(".tmp-*"))
    run = run_mpi(
        2,
        "cli_killed.py",
        0,
        "train",
        *common,
        "num_trees=6",
        f"input_model={snapshot}",
        f"output_model={resumed}",
    )
    assert run.returncode == 0, run.stderr[-3000:]
    a, b = (json.loads(p.read_text()) for p in (full, resumed))
    assert len(a["trees"]) == len(b["trees"]) == 12
    if quantized:
        assert json.dumps(a["trees"]) == json.dumps(b["trees"])
        assert a["init_score"] == b["init_score"]
    for ta, tb in zip(a["trees"], b["trees"], strict=True):
        assert ta["split_feature"] == tb["split_feature"]
        assert ta["threshold"] == tb["threshold"]
        np.testing.assert_allclose(ta["leaf_value"], tb["leaf_value"], rtol=1e-9, atol=1e-12)
