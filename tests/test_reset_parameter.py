"""dgbdt.reset_parameter: per-round parameters (LightGBM's callback), refused
parameters, the model's record, estimators, resuming a snapshot, and the
agreement over ranks (tests/mpi/reset_parameter.py).
"""

import json
import pathlib
import re

import numpy as np
import pytest
from mpi_launch import TESTS, run_mpi
from prebinned import BASE as PREBINNED_BASE
from prebinned import LGB_ONLY, prebinned

import dgbdt
from dgbdt.boosting.callbacks import SCHEDULE_KEY, CallbackEnv
from dgbdt.models.tree import LEAF_FIELDS, NODE_FIELDS

N = 6
PARAMS = {"objective": "regression", "num_leaves": 7, "min_data_in_leaf": 5, "verbosity": -1}
RATES = [0.5, 0.4, 0.3, 0.2, 0.1, 0.05]


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, np.nan_to_num(X[:, 0]) + np.sin(np.nan_to_num(X[:, 1])) + 0.1 * rng.normal(size=n)


def assert_same_trees(a, b):
    """Every tree array equal bit for bit."""
    assert a.num_trees() == b.num_trees()
    for i, (ta, tb) in enumerate(zip(a.trees, b.trees, strict=True)):
        assert ta.n_leaves == tb.n_leaves, f"tree {i}"
        for name in NODE_FIELDS + LEAF_FIELDS:
            x, y = getattr(ta, name), getattr(tb, name)
            assert x.tobytes() == y.tobytes(), f"tree {i} {name}"


def _train(params, rounds, callbacks=None, init_model=None, data=None):
    X, y = _data() if data is None else data
    return dgbdt.train(
        params, dgbdt.Dataset(X, y), rounds, init_model=init_model, callbacks=callbacks
    )


def _round_by_round(params, per_round):
    """The model of training one round at a time, each with its own params."""
    model = None
    for values in per_round:
        model = _train({**params, **values}, 1, init_model=model)
    return model


# --------------------------------------------------------------------------- #
# the schedule gives the model of those per-round params
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "schedule",
    [{"learning_rate": RATES}, {"eta": lambda i: RATES[i]}],
    ids=["list", "function_of_an_alias"],
)
def test_learning_rate_schedule_equals_training_round_by_round(schedule):
    ours = _train(PARAMS, N, callbacks=[dgbdt.reset_parameter(**schedule)])
    assert_same_trees(ours, _round_by_round(PARAMS, [{"learning_rate": r} for r in RATES]))
    # each tree records its own rate; the model's params the last one
    assert [t.shrinkage for t in ours.trees] == RATES
    assert ours.config["learning_rate"] == RATES[-1]
    assert SCHEDULE_KEY not in ours.config  # a finished training: nothing to resume
    text = ours.model_to_string(format="lightgbm")
    expected = [str(r) for r in RATES]
    if abs(ours.init_score[0]) > 1e-15:  # the first tree carries it: LightGBM's AddBias
        expected[0] = "1.0"
    assert re.findall(r"shrinkage=(\S+)", text) == expected
    assert "[learning_rate: 0.05]" in text


def test_split_and_sampling_parameters_take_effect():
    per_round = [
        {"lambda_l2": float(i % 3), "min_data_in_leaf": [5, 40, 5, 20, 60, 5][i]}
        | {"bagging_fraction": 1.0 - 0.1 * i, "bagging_freq": 0 if i < 2 else 2}
        | {"num_leaves": 7 if i < 3 else 3, "feature_fraction": 1.0 if i % 2 else 0.6}
        for i in range(N)
    ]
    schedule = {k: [values[k] for values in per_round] for k in per_round[0]}
    ours = _train(PARAMS, N, callbacks=[dgbdt.reset_parameter(**schedule)])
    assert_same_trees(ours, _round_by_round(PARAMS, per_round))
    leaves = [t.n_leaves for t in ours.trees]
    assert leaves[0] == 7 and max(leaves[3:]) == 3
    assert not any(t.shrinkage for t in ours.trees)  # the learning rate never changed
    plain = _train(PARAMS, N)
    assert not np.array_equal(plain.trees[1].leaf_value, ours.trees[1].leaf_value)
    assert {k: ours.config[k] for k in schedule} == per_round[-1]


def test_quantized_training_constraints_and_goss_switched_on_mid_training():
    per_round = [
        {"use_quantized_grad": i >= 2, "monotone_constraints": [1, 0, 0, 0, 0] if i >= 4 else None}
        | {"data_sample_strategy": "goss" if i >= 3 else "bagging", "learning_rate": 0.5}
        for i in range(N)
    ]
    schedule = {k: [values[k] for values in per_round] for k in per_round[0]}
    ours = _train(PARAMS, N, callbacks=[dgbdt.reset_parameter(**schedule)])
    assert_same_trees(ours, _round_by_round(PARAMS, per_round))


def test_a_schedule_agrees_with_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y = prebinned("regression")
    params = {**PREBINNED_BASE, "objective": "regression", "learning_rate": 0.3}
    # round 0 takes the schedule's first values too, as in LightGBM
    schedule = {
        "learning_rate": [0.7, 0.2, 0.1, 0.05],
        "lambda_l2": [3.0, 2.0, 0.0, 5.0],
        "min_data_in_leaf": [10, 20, 50, 5],
        "num_leaves": [6, 4, 8, 31],
    }
    lgb_params = {**params, **LGB_ONLY}
    theirs = lgb.train(
        lgb_params,
        lgb.Dataset(X, y, params=lgb_params),
        4,
        callbacks=[lgb.reset_parameter(**schedule)],
    )
    ours = dgbdt.train(
        {**params, "verbosity": -1},
        dgbdt.Dataset(X, y),
        4,
        callbacks=[dgbdt.reset_parameter(**schedule)],
    )
    assert [t["num_leaves"] for t in theirs.dump_model()["tree_info"]] == [6, 4, 8, 31]
    assert [t.n_leaves for t in ours.trees] == [6, 4, 8, 31]
    np.testing.assert_allclose(
        ours.predict(X, raw_score=True), theirs.predict(X, raw_score=True), rtol=0, atol=1e-6
    )
    # both models record the last round's values
    text = theirs.model_to_string()
    for key, values in schedule.items():
        assert f"[{key}: {values[-1]:g}]" in text
        assert ours.config[key] == values[-1]


def test_the_estimators_take_the_callback():
    X, y = _data()
    reg = dgbdt.DGBDTRegressor(n_estimators=N, num_leaves=7, min_child_samples=5, verbose=-1)
    reg.fit(X, y, callbacks=[dgbdt.reset_parameter(learning_rate=RATES)])
    expected = _train({**PARAMS, "learning_rate": 0.1}, N, [dgbdt.reset_parameter(eta=RATES)])
    np.testing.assert_array_equal(reg.predict(X), expected.predict(X))
    clf = dgbdt.DGBDTClassifier(n_estimators=N, num_leaves=7, verbose=-1)
    clf.fit(X, y > 0, callbacks=[dgbdt.reset_parameter(learning_rate=RATES)])
    assert [t.shrinkage for t in clf.booster_.trees] == RATES


# --------------------------------------------------------------------------- #
# errors
# --------------------------------------------------------------------------- #
def test_lightgbm_list_length_error():
    with pytest.raises(ValueError, match=re.escape("Length of list 'learning_rate' has to be")):
        _train(PARAMS, N - 1, callbacks=[dgbdt.reset_parameter(learning_rate=RATES)])


def test_values_and_names_are_checked_when_the_callback_is_made():
    with pytest.raises(ValueError, match="Only list and callable values are supported"):
        dgbdt.reset_parameter(learning_rate=0.1)
    with pytest.raises(ValueError, match="Unknown parameter 'learning_rat'"):
        dgbdt.reset_parameter(learning_rat=RATES)
    with pytest.raises(ValueError, match="both 'eta' and 'learning_rate'"):
        dgbdt.reset_parameter(eta=RATES, learning_rate=RATES)


@pytest.mark.parametrize(
    "key, values, message",
    [
        ("max_bin", [255, 63], "Cannot change max_bin after constructed Dataset"),
        ("min_data_in_bin", [3, 1], "Cannot change min_data_in_bin after constructed Dataset"),
        ("objective", ["regression", "huber"], "Cannot change objective during training"),
        ("alpha", [0.9, 0.5], "Cannot change alpha during training"),
        ("metric", ["l2", "l1"], "Cannot change metric during training"),
        ("num_iterations", [2, 3], "Cannot change num_iterations during training"),
        ("tree_learner", ["serial", "data"], "Cannot change tree_learner during training"),
    ],
)
def test_parameters_that_cannot_change_are_refused(key, values, message):
    # the first round's value is the current one (LightGBM refuses changes only)
    with pytest.raises(ValueError, match=f"reset_parameter, iteration 1: {message}"):
        _train(PARAMS, 2, callbacks=[dgbdt.reset_parameter(**{key: values})])


def test_invalid_values_are_refused_with_the_parameter_named():
    with pytest.raises(ValueError, match=r"iteration 0: Parameter 'num_leaves' must be"):
        _train(PARAMS, 2, callbacks=[dgbdt.reset_parameter(num_leaves=lambda i: 1)])
    with pytest.raises(ValueError, match="Cannot use monotone_constraints with objective"):
        _train(
            {**PARAMS, "objective": "regression_l1"},
            2,
            callbacks=[dgbdt.reset_parameter(monotone_constraints=[None, [1, 0, 0, 0, 0]])],
        )


def test_outside_train_the_callback_updates_env_params_as_lightgbm():
    params = {"learning_rate": 0.1}
    callback = dgbdt.reset_parameter(learning_rate=lambda i: 0.1 / (i + 1))
    assert (callback.order, callback.before_iteration) == (10, True)
    callback(CallbackEnv(None, params, 13, 10, 20, None))
    assert params == {"learning_rate": 0.025}


# --------------------------------------------------------------------------- #
# continuing: init_model restarts the schedule, a snapshot resumes it
# --------------------------------------------------------------------------- #
def _schedule(n):
    return dgbdt.reset_parameter(
        learning_rate=[0.5 * 0.8**i for i in range(n)],
        bagging_fraction=lambda i: 0.6 + 0.03 * i,
        lambda_l2=lambda i: float(i % 3),
    )


def test_resuming_a_snapshot_continues_the_schedule(tmp_path):
    params = {**PARAMS, "bagging_freq": 3, "bagging_fraction": 0.8}
    n, done = 10, 4
    prefix = tmp_path / "m.json"
    full = _train(params, n, [_schedule(n), dgbdt.checkpoint(prefix, done)])
    snapshot = dgbdt.Booster(model_file=f"{prefix}.snapshot_iter_{done}")
    assert snapshot.config[SCHEDULE_KEY] == [0, n]
    assert snapshot.config["learning_rate"] == 0.5 * 0.8 ** (done - 1)
    resumed = _train(params, n - done, [_schedule(n)], init_model=snapshot)
    assert_same_trees(full, resumed)
    a, b = full.dump_model(format="json"), resumed.dump_model(format="json")
    assert a["params"].pop("num_iterations") == n and b["params"].pop("num_iterations") == n - done
    assert a == b
    # lists keep the uninterrupted training's length
    with pytest.raises(ValueError, match="interrupted training: its schedule has 10 rounds"):
        _train(params, n - done, [_schedule(n - done)], init_model=snapshot)


def test_init_model_restarts_the_schedule_as_lightgbm(tmp_path):
    first = _train(PARAMS, 3, [dgbdt.reset_parameter(learning_rate=RATES[:3])])
    first.save_model(tmp_path / "first.json")  # a finished training
    more = _train(
        PARAMS,
        3,
        [dgbdt.reset_parameter(learning_rate=RATES[3:])],
        init_model=tmp_path / "first.json",
    )
    assert [t.shrinkage for t in more.trees] == RATES
    assert_same_trees(more, _train(PARAMS, N, [dgbdt.reset_parameter(learning_rate=RATES)]))


def test_readme_example_runs():
    text = (TESTS.parent / "README.md").read_text()
    section = text[text.index("### Parameter schedules") :]
    code = re.search(r"```python\n(.*?)\n```", section, flags=re.S)[1]
    exec(compile(code, "README.md, Parameter schedules", "exec"), {})


# --------------------------------------------------------------------------- #
# distributed: agreed every round
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("tree_learner", ["data", "feature"])
def test_distributed_schedule_equals_one_process_and_rank_dependent_values_fail(
    tmp_path, tree_learner
):
    import importlib.util

    spec = importlib.util.spec_from_file_location("shard_data", TESTS / "mpi" / "shard_data.py")
    shard_data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shard_data)
    params = {
        "objective": "binary",
        "tree_learner": tree_learner,
        "min_data_in_leaf": 10,
        "bagging_freq": 2,
        "bagging_fraction": 0.9,
        "verbosity": -1,
    }
    result = run_mpi(2, "reset_parameter.py", tmp_path, json.dumps(params), N, timeout=90)
    assert result.returncode == 0, result.stderr[-3000:]
    # (a) the model of one process with the same schedule
    X, y, X_valid, _ = shard_data.make_data()
    schedule = dgbdt.reset_parameter(
        learning_rate=[0.3 * 0.8**i for i in range(N)],
        lambda_l2=lambda i: float(i % 3),
        num_leaves=lambda i: 15 if i < 2 else 7,
        bagging_fraction=lambda i: 1.0 - 0.05 * i,
    )
    serial = dgbdt.train(
        {**params, "tree_learner": "serial"}, dgbdt.Dataset(X, y), N, callbacks=[schedule]
    )
    distributed = dgbdt.Booster(model_file=tmp_path / "model.json")
    assert [t.n_leaves for t in distributed.trees] == [t.n_leaves for t in serial.trees]
    for a, b in zip(distributed.trees, serial.trees, strict=True):
        np.testing.assert_array_equal(a.split_feature, b.split_feature)
        np.testing.assert_array_equal(a.threshold, b.threshold)
    np.testing.assert_allclose(
        distributed.predict(X_valid, raw_score=True),
        serial.predict(X_valid, raw_score=True),
        rtol=0,
        atol=1e-6,
    )
    assert distributed.config["lambda_l2"] == float((N - 1) % 3)
    # one 8-byte allgather per round is all the agreement costs
    stats = json.loads((tmp_path / "stats.json").read_text())
    plain, constant = stats["plain"], stats["constant"]
    assert constant["calls"]["allgather"] - plain["calls"]["allgather"] == N
    assert constant["bytes"]["allgather"] - plain["bytes"]["allgather"] == 8 * N
    assert {k: v for k, v in constant["calls"].items() if k != "allgather"} == {
        k: v for k, v in plain["calls"].items() if k != "allgather"
    }
    # (b) a rank-dependent schedule: every rank raises the same error, at once
    errors = [pathlib.Path(tmp_path / f"error_{r}.txt").read_text().split("\n", 1) for r in (0, 1)]
    assert errors[0][1] == errors[1][1]
    assert errors[0][1].startswith(
        "reset_parameter gave ranks [1] other values than rank 0 at iteration 2: "
        "'learning_rate' is 0.1 on rank 0 but 0.2 on rank 1"
    )
    assert all(float(seconds) < 10 for seconds, _ in errors)
    # (c) a schedule on one rank only: every rank refuses it at the start
    only0 = [pathlib.Path(tmp_path / f"only0_{r}.txt").read_text().split("\n", 1) for r in (0, 1)]
    assert all("reset_parameter's scheduled parameters" in text for _, text in only0), only0
    assert all(float(seconds) < 10 for seconds, _ in only0)
