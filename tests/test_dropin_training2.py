"""LightGBM drop-in behaviour of training, part 2 (issue 28): the objective /
metric / num_class checks, ``metric=[]``, the C++ log lines LightGBM prints
while training, and rounds without a split.  Each test names the LightGBM
behaviour it mirrors; where LightGBM is the reference it is run directly."""

import numpy as np
import pytest
from mpi_launch import run_mpi_file

import dgbdt
import dgbdt.log
from dgbdt.params.table import resolve_params

QUIET = {"verbosity": -1}


def _l2(preds, train_data):
    return preds - train_data.get_label(), np.ones_like(preds)


def _data(n=200, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, X[:, 0] + 0.3 * rng.normal(size=n)


class _Lines:
    """A logger keeping what it gets: ``I|`` info, ``W|`` warning lines."""

    def __init__(self):
        self.lines = []

    def info(self, msg):
        self.lines.append(f"I| {msg}")

    def warning(self, msg):
        self.lines.append(f"W| {msg}")


@pytest.fixture
def dgbdt_log(monkeypatch):
    """A _Lines logger registered with dgbdt for one test (the default restored)."""
    for name in ("_LOGGER", "_INFO_METHOD", "_WARNING_METHOD"):
        monkeypatch.setattr(dgbdt.log, name, getattr(dgbdt.log, name))
    logger = _Lines()
    dgbdt.register_logger(logger)
    return logger


# --------------------------------------------------------------------------- #
# objective, metric and num_class must fit
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "params, culprit",
    [
        (
            {"objective": _l2, "num_class": 1, "metric": "multi_logloss"},
            "'multi_logloss'.*num_class=1",
        ),
        ({"objective": _l2, "num_class": 1, "metric": "softmax"}, "'multi_logloss'.*num_class=1"),
        (
            {"objective": _l2, "num_class": 3, "metric": "binary_error"},
            "'binary_error'.*num_class=3",
        ),
        ({"objective": _l2, "num_class": 1, "metric": "multi_error"}, "'multi_error'.*num_class=1"),
        (
            {"objective": "multiclass", "num_class": 3, "metric": "binary_logloss"},
            "'binary_logloss'",
        ),
        ({"objective": "binary", "metric": "auc_mu"}, "'auc_mu'.*'binary'"),
    ],
)
def test_metric_must_fit_multiclass_or_not(params, culprit):
    """LightGBM (Config::CheckParamConflict): a multiclass metric needs a multiclass
    objective and the other way round, a callable objective counting as multiclass
    when num_class > 1: LightGBMError "Multiclass objective and metrics don't match"."""
    X, y = _data()
    y = np.round(np.clip(y, 0, 2))
    with pytest.raises(
        dgbdt.DGBDTError, match=f"Multiclass objective and metrics don't match.*{culprit}"
    ):
        dgbdt.cv({**QUIET, **params}, dgbdt.Dataset(X, y), num_boost_round=2)


@pytest.mark.parametrize(
    "params, message",
    [
        (
            {"objective": "multiclass"},
            "Number of classes should be specified and greater than 1 for multiclass "
            "training: .*num_class=1",
        ),
        (
            {"objective": "ovr", "num_class": 1},
            "Number of classes should be specified and greater than 1 for multiclass "
            "training: .*'multiclassova' with num_class=1",
        ),
        (
            {"num_class": 3},
            "Number of classes must be 1 for non-multiclass training: .*'regression' with num_class=3",
        ),
    ],
)
def test_num_class_must_fit_the_objective(params, message):
    """LightGBM: the num_class checks of Config::CheckParamConflict, LightGBMError."""
    X, y = _data()
    with pytest.raises(dgbdt.DGBDTError, match=message):
        dgbdt.train({**QUIET, **params}, dgbdt.Dataset(X, y), 1)


def test_callable_objective_with_classes_takes_multiclass_metrics_only():
    """LightGBM: a callable objective with num_class > 1 has no default metric and
    takes multiclass metrics; with num_class=1 no metric either."""
    X, y = _data()
    y = np.round(np.clip(y, 0, 2))

    def softmax_obj(preds, data):
        return np.zeros_like(preds), np.ones_like(preds)

    params = {**QUIET, "objective": softmax_obj, "num_class": 3}
    assert dgbdt.cv(params, dgbdt.Dataset(X, y), num_boost_round=2) == {}
    res = dgbdt.cv({**params, "metric": "multi_error"}, dgbdt.Dataset(X, y), num_boost_round=2)
    assert set(res) == {"valid multi_error-mean", "valid multi_error-stdv"}
    res = dgbdt.cv({**QUIET, "objective": _l2, "num_class": 1}, dgbdt.Dataset(X, y), 2)
    assert res == {}


# --------------------------------------------------------------------------- #
# metric=[]
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "metric, names",
    [
        ([], ["l2"]),
        ("", ["l2"]),
        (None, ["l2"]),
        (["None"], []),
        ("na", []),
        (["l1", "l2"], ["l1", "l2"]),
    ],
)
def test_empty_metric_list_means_the_objective_default(metric, names):
    """LightGBM joins a list metric with commas: [] is "" (the objective's default
    metric); "None" / "na" / "null" / "custom" mean no metric."""
    X, y = _data()
    params = {**QUIET, "objective": "regression"}
    if metric is not None:
        params["metric"] = metric
    record = {}
    ds = dgbdt.Dataset(X, y)
    dgbdt.train(
        params,
        ds,
        2,
        valid_sets=[ds],
        valid_names=["t"],
        callbacks=[dgbdt.record_evaluation(record)],
    )
    assert list(record.get("t", {})) == names


def test_reset_parameter_keeps_no_metric():
    """LightGBM: metric cannot change during training; metric="None" stays no
    metric when reset_parameter changes another parameter."""
    X, y = _data()
    ds = dgbdt.Dataset(X, y)
    record = {}
    booster = dgbdt.train(
        {**QUIET, "metric": "None"},
        ds,
        3,
        valid_sets=[ds],
        callbacks=[
            dgbdt.reset_parameter(learning_rate=[0.3, 0.2, 0.1]),
            dgbdt.record_evaluation(record),
        ],
    )
    assert booster.current_iteration() == 3 and record == {}


# --------------------------------------------------------------------------- #
# rounds without a split
# --------------------------------------------------------------------------- #
def test_training_goes_on_after_a_round_without_split(dgbdt_log):
    """LightGBM's Python train() ignores Booster.update's "finished": each round
    without a split warns, evaluates and calls the callbacks; the model keeps
    only the first round's stumps."""
    X = np.repeat([0.0, 1.0], 20).reshape(-1, 1)
    y = X[:, 0].copy()
    params = {
        "objective": "regression",
        "learning_rate": 1.0,
        "num_leaves": 2,
        "min_data_in_leaf": 1,
    }
    record = {}
    ds = dgbdt.Dataset(X, y)
    booster = dgbdt.train(
        {**params, "verbosity": 0},
        ds,
        5,
        valid_sets=[ds],
        callbacks=[dgbdt.record_evaluation(record)],
    )
    assert booster.current_iteration() == 1
    assert len(record["training"]["l2"]) == 5
    stopped = [line for line in dgbdt_log.lines if "Stopped training" in line]
    assert (
        stopped
        == [
            "I| [LightGBM] [Warning] Stopped training because there are no more leaves that meet "
            "the split requirements"
        ]
        * 4
    )


# --------------------------------------------------------------------------- #
# LightGBM's log lines
# --------------------------------------------------------------------------- #
def _cases():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    yb = (X[:, 0] > 0) * 1.0
    yr = X[:, 0] + rng.normal(size=200)
    yc = ((X[:, 0] > 0) + (X[:, 1] > 0)) * 1.0
    # (float32 weights: LightGBM keeps its weights as float32)
    w = rng.uniform(0.5, 2.0, 200).astype(np.float32).astype(np.float64)
    g = np.full(20, 10)
    return X, {
        "binary": ({"objective": "binary", "metric": "auc,binary_error"}, yb, None, None),
        "regression": ({"objective": "regression"}, yr, None, None),
        "mape": ({"objective": "mape"}, yr, None, None),
        "multiclass": ({"objective": "multiclass", "num_class": 3}, yc, None, None),
        "ova": ({"objective": "multiclassova", "num_class": 4}, yc, None, None),
        "xentropy": ({"objective": "cross_entropy", "metric": "kldiv,xentropy"}, yb, None, None),
        "xentlambda": ({"objective": "cross_entropy_lambda"}, yb, w, None),
        "lambdarank": ({"objective": "lambdarank", "metric": "map,ndcg"}, yc, None, g),
        "custom": ({"objective": _l2, "metric": "l2"}, yr, None, None),
        "no_split": ({"objective": "binary", "min_data_in_leaf": 500}, yb, None, None),
        "quiet": ({"objective": "binary", "min_data_in_leaf": 500, "verbose": 0}, yb, None, None),
    }


def _log_of(lib, X, case):
    """The lines ``lib`` logs training ``case`` at verbose=1 with a validation set;
    without LightGBM's col-/row-wise timing lines (dgbdt does not time those) and
    its tree learner's per-tree "No further splits" warnings."""
    params, y, weight, group = case
    logger = _Lines()
    lib.register_logger(logger)
    train = lib.Dataset(X, y, weight=weight, group=group)
    valid = lib.Dataset(
        X[:100], y[:100], group=None if group is None else group[:10], reference=train
    )
    params = {"verbose": 1, "num_leaves": 4, **params}
    lib.train(params, train, 3, valid_sets=[valid], callbacks=[lib.early_stopping(5)])
    skip = ("Auto-choosing", "force_col_wise", "force_row_wise", "No further splits")
    return [line for line in logger.lines if not any(s in line for s in skip)]


@pytest.mark.parametrize("name", list(_cases()[1]))
def test_training_log_lines_are_lightgbm_s(name, dgbdt_log, monkeypatch):
    """LightGBM at verbose=1 logs, in this order: the objective's Init (class
    counts, label checks), the metrics' Init on the training data, "Total Bins",
    "Number of data points ...", the metrics' Init on each validation set, each
    class's "[...:BoostFromScore]" and "Start training from score", then per
    round "Stopped training ..." when nothing splits."""
    lgb = pytest.importorskip("lightgbm")
    for attr in ("_LOGGER", "_INFO_METHOD_NAME", "_WARNING_METHOD_NAME"):
        monkeypatch.setattr(lgb.basic, attr, getattr(lgb.basic, attr))
    X, cases = _cases()
    want = _log_of(lgb, X, cases[name])
    got = _log_of(dgbdt, X, cases[name])
    assert got == want
    assert any("[LightGBM] [Info]" in line for line in got) == (name != "quiet")


_RANK_SCRIPT = """
import sys
import numpy as np
import dgbdt
from dgbdt.distributed.comm import world_comm

comm = world_comm()
assert comm.size == 2, comm.size
lines = []


class Keep:
    def info(self, msg):
        lines.append(msg)

    def warning(self, msg):
        lines.append(msg)


dgbdt.register_logger(Keep())
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 3))
y = (X[:, 0] > 0.3) * 1.0
rows = slice(0, 100) if comm.rank == 0 else slice(100, 300)
params = {"objective": "binary", "tree_learner": "data", "verbosity": 1, "num_leaves": 4}
dgbdt.train(params, dgbdt.Dataset(X[rows], y[rows]), 2)
with open(f"{sys.argv[1]}/rank{comm.rank}.log", "w") as f:
    f.write("\\n".join(lines))
"""


def test_only_rank_0_logs_in_distributed_training(tmp_path):
    """LightGBM's machines each log; dgbdt's log is rank 0's only (one voice for
    the whole training), with the global class counts LightGBM's Init prints."""
    script = tmp_path / "ranks.py"
    script.write_text(_RANK_SCRIPT)
    result = run_mpi_file(2, script, tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "rank1.log").read_text() == ""
    rank0 = (tmp_path / "rank0.log").read_text().splitlines()
    y = (np.random.default_rng(0).normal(size=(300, 3))[:, 0] > 0.3) * 1.0
    pos = int(y.sum())
    assert f"[LightGBM] [Info] Number of positive: {pos}, number of negative: {300 - pos}" in rank0
    assert any(
        line.startswith("[LightGBM] [Info] Number of data points in the train set: 100,")
        for line in rank0
    )


def test_metric_given_as_a_set():
    """LightGBM: ``metric`` may be a set of names (its params are joined with
    commas); dgbdt sorts it, so every process (rank) reads one order."""
    cfg = resolve_params({"objective": "binary", "metric": {"binary_logloss", "auc"}})
    assert cfg["metric"] == ["auc", "binary_logloss"]
