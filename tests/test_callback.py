"""Callbacks driven by hand-built CallbackEnv sequences."""

import pytest

from dgbdt.callback import (
    CallbackEnv,
    EarlyStopException,
    early_stopping,
    log_evaluation,
    record_evaluation,
)


def _run(callbacks, history, params=None):
    """Drive callbacks like the boosting loop: one env per iteration.

    ``history[i]`` is the evaluation_result_list of iteration ``i``. Returns
    the EarlyStopException raised, or None.
    """
    callbacks = sorted(callbacks, key=lambda cb: cb.order)
    for i, results in enumerate(history):
        env = CallbackEnv(None, params or {}, i, 0, len(history), results)
        try:
            for cb in callbacks:
                cb(env)
        except EarlyStopException as exc:
            exc.stopped_at = i
            return exc
    return None


def _hist(name, values, higher_better=False, data="valid_0"):
    return [[(data, name, v, higher_better)] for v in values]


def _zip(*histories):
    return [sum(items, []) for items in zip(*histories, strict=True)]


def test_callback_env_fields():
    lgb = pytest.importorskip("lightgbm")
    import dataclasses

    ours = CallbackEnv._fields
    theirs = (
        tuple(f.name for f in dataclasses.fields(lgb.callback.CallbackEnv))
        if dataclasses.is_dataclass(lgb.callback.CallbackEnv)
        else lgb.callback.CallbackEnv._fields
    )
    assert ours == theirs


def test_orders_match_lightgbm():
    assert (log_evaluation().order, record_evaluation({}).order, early_stopping(1).order) == (
        10,
        20,
        30,
    )
    assert not any(
        cb.before_iteration for cb in (log_evaluation(), record_evaluation({}), early_stopping(1))
    )


# --- log_evaluation --------------------------------------------------------


def test_log_format(capsys):
    hist = _zip(
        _hist("l2", [0.5, 0.25, 0.123456789, 1e-7]),
        _hist("auc", [0.5, 0.6, 0.7, 0.8], True, "valid_1"),
    )
    _run([log_evaluation()], hist)
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "[1]\tvalid_0's l2: 0.5\tvalid_1's auc: 0.5",
        "[2]\tvalid_0's l2: 0.25\tvalid_1's auc: 0.6",
        "[3]\tvalid_0's l2: 0.123457\tvalid_1's auc: 0.7",
        "[4]\tvalid_0's l2: 1e-07\tvalid_1's auc: 0.8",
    ]


def test_log_period_and_stdv(capsys):
    hist = [[("valid", "l1", float(i), False, 0.5)] for i in range(7)]
    _run([log_evaluation(period=3)], hist)
    assert capsys.readouterr().out.splitlines() == [
        "[3]\tvalid's l1: 2 + 0.5",
        "[6]\tvalid's l1: 5 + 0.5",
    ]
    _run([log_evaluation(period=3, show_stdv=False)], hist[:3])
    assert capsys.readouterr().out == "[3]\tvalid's l1: 2\n"
    _run([log_evaluation(period=0)], hist)
    _run([log_evaluation()], [[], []])  # nothing to log
    assert capsys.readouterr().out == ""


def test_log_goes_through_log_function(monkeypatch, capsys):
    import dgbdt.boosting.callbacks as cbm

    seen = []
    monkeypatch.setattr(cbm, "_log", seen.append)
    _run([log_evaluation(), early_stopping(1)], _hist("l2", [1.0, 2.0]))
    assert capsys.readouterr().out == ""
    assert seen[0] == "[1]\tvalid_0's l2: 1"  # order 10 runs before early stopping's 30
    assert seen[1].startswith("Training until") and seen[-1].startswith("Early stopping")


# --- record_evaluation -----------------------------------------------------


def test_record_evaluation():
    result = {"stale": {"x": [1]}}
    hist = _zip(
        _hist("l2", [3.0, 2.0, 1.0], data="training"),
        _hist("l2", [4.0, 3.5, 3.0]),
        _hist("auc", [0.6, 0.7, 0.65], True),
    )
    # valid_0 carries two metrics in the same dataset
    _run([record_evaluation(result)], hist)
    assert result == {
        "training": {"l2": [3.0, 2.0, 1.0]},
        "valid_0": {"l2": [4.0, 3.5, 3.0], "auc": [0.6, 0.7, 0.65]},
    }
    assert list(result["valid_0"]) == ["l2", "auc"]
    _run([record_evaluation(result)], hist[:1])  # a new run clears the old one
    assert result["training"] == {"l2": [3.0]}


def test_record_evaluation_cv_and_type_error():
    result = {}
    _run([record_evaluation(result)], [[("valid", "l2", 1.0, False, 0.1)]])
    assert result == {"valid": {"l2-mean": [1.0], "l2-stdv": [0.1]}}
    with pytest.raises(TypeError, match="dictionary"):
        record_evaluation([])


# --- early_stopping --------------------------------------------------------


def test_lower_is_better_stops_after_patience(capsys):
    #          0    1    2    3    4    5    6
    values = [5.0, 4.0, 3.0, 3.5, 3.0, 3.2, 2.0]
    exc = _run([early_stopping(3)], _hist("l2", values))
    # best is iteration 2 (3.0; the later 3.0 is not strictly better); stops at 2 + 3
    assert (exc.best_iteration, exc.stopped_at) == (2, 5)
    assert exc.best_score == [("valid_0", "l2", 3.0, False)]
    out = capsys.readouterr().out
    assert "Training until validation scores don't improve for 3 rounds" in out
    assert "Early stopping, best iteration is:\n[3]\tvalid_0's l2: 3" in out


def test_higher_is_better():
    values = [0.6, 0.7, 0.8, 0.75, 0.79, 0.8]
    exc = _run([early_stopping(2, verbose=False)], _hist("auc", values, True))
    assert (exc.best_iteration, exc.stopped_at) == (2, 4)
    assert exc.best_score == [("valid_0", "auc", 0.8, True)]
    # an equal score is not an improvement
    exc = _run([early_stopping(2, verbose=False)], _hist("auc", [0.6, 0.8, 0.8, 0.7], True))
    assert (exc.best_iteration, exc.stopped_at) == (1, 3)


def test_final_iteration_raises_with_best(capsys):
    exc = _run([early_stopping(10)], _hist("l2", [3.0, 1.0, 2.0, 2.5]))
    assert (exc.best_iteration, exc.stopped_at) == (1, 3)
    assert "Did not meet early stopping. Best iteration is:\n[2]" in capsys.readouterr().out


def test_any_metric_stops_and_training_is_ignored():
    hist = _zip(
        _hist("l2", [5, 4, 3, 2, 1, 0], data="training"),  # would never stop
        _hist("l2", [5, 4, 3, 2, 1, 0]),  # keeps improving
        _hist("l1", [1, 2, 3, 4, 5, 6]),
    )  # best at 0
    exc = _run([early_stopping(2, verbose=False)], hist)
    assert (exc.best_iteration, exc.stopped_at) == (0, 2)
    assert exc.best_score == hist[0]
    # the training set alone never triggers: a stale training metric is skipped
    hist = _zip(_hist("l2", [1, 2, 3, 4, 5, 6], data="training"), _hist("l2", [5, 4, 3, 2, 1, 0]))
    exc = _run([early_stopping(2, verbose=False)], hist)
    assert (exc.best_iteration, exc.stopped_at) == (5, 5)  # only the final-iteration raise


def test_first_metric_only(capsys):
    hist = _zip(_hist("l2", [5, 4, 3, 2, 1, 0]), _hist("l1", [1, 2, 3, 4, 5, 6]))
    exc = _run([early_stopping(2, first_metric_only=True)], hist)
    assert (exc.best_iteration, exc.stopped_at) == (5, 5)
    assert "Evaluated only: l2" in capsys.readouterr().out
    exc = _run([early_stopping(2, first_metric_only=False, verbose=False)], hist)
    assert (exc.best_iteration, exc.stopped_at) == (0, 2)
    # first metric name of the list, on every validation set
    hist = _zip(
        _hist("l2", [5, 4, 3, 2, 1, 0]),
        _hist("l1", [1, 2, 3, 4, 5, 6]),
        _hist("l2", [1, 2, 3, 4, 5, 6], data="valid_1"),
    )
    exc = _run([early_stopping(2, first_metric_only=True, verbose=False)], hist)
    assert (exc.best_iteration, exc.stopped_at) == (0, 2)


def test_min_delta():
    values = [1.0, 0.95, 0.91, 0.90, 0.5]
    # improvements of 0.05, 0.04, 0.01 are all <= 0.1: best stays at 0
    exc = _run([early_stopping(3, verbose=False, min_delta=0.1)], _hist("l2", values))
    assert (exc.best_iteration, exc.stopped_at) == (0, 3)
    exc = _run([early_stopping(3, verbose=False, min_delta=0.03)], _hist("l2", values))
    assert (exc.best_iteration, exc.stopped_at) == (4, 4)  # 0.95, 0.91 count; 0.90 does not
    values = [1.0, 0.95, 0.91, 0.90, 0.89, 0.5]
    exc = _run([early_stopping(2, verbose=False, min_delta=0.03)], _hist("l2", values))
    assert (exc.best_iteration, exc.stopped_at) == (2, 4)
    exc = _run([early_stopping(2, verbose=False)], _hist("l2", values))
    assert (exc.best_iteration, exc.stopped_at) == (5, 5)
    # higher-is-better uses the same margin upwards
    exc = _run(
        [early_stopping(2, verbose=False, min_delta=0.1)],
        _hist("auc", [0.5, 0.55, 0.59, 0.9], True),
    )
    assert (exc.best_iteration, exc.stopped_at) == (0, 2)
    # a list gives one delta per metric
    hist = _zip(_hist("l2", values), _hist("l1", values))
    exc = _run([early_stopping(3, verbose=False, min_delta=[0.0, 0.1])], hist)
    assert (exc.best_iteration, exc.stopped_at) == (0, 3)
    assert exc.best_score == hist[0]


def test_errors():
    # LightGBM: stopping_rounds <= 0 disables early stopping; a non-int is a TypeError
    assert early_stopping(0).enabled is False
    assert early_stopping(-2).enabled is False
    with pytest.raises(TypeError, match="early_stopping_round should be an integer. Got 'float'"):
        early_stopping(2.0)
    msg = "at least one dataset and eval metric is required"
    with pytest.raises(ValueError, match=msg):
        _run([early_stopping(2)], [[], []])
    with pytest.raises(ValueError, match="non-negative"):
        _run([early_stopping(2, min_delta=-0.1)], _hist("l2", [1.0]))
    with pytest.raises(ValueError, match="as many as metrics"):
        _run(
            [early_stopping(2, min_delta=[0.1, 0.2, 0.3])],
            _zip(_hist("l2", [1.0]), _hist("l1", [1.0])),
        )


def test_training_data_alone_disables_early_stopping():
    # LightGBM 4.7: a UserWarning "Only training set found, disabling early stopping."
    with pytest.warns(UserWarning, match="Only training set found, disabling early stopping"):
        assert _run([early_stopping(2)], _hist("l2", [1.0, 2.0, 3.0, 4.0], data="training")) is None


def test_dart_disables():
    with pytest.warns(UserWarning, match="dart"):
        assert _run([early_stopping(1)], _hist("l2", [1.0, 2.0, 3.0]), {"boosting": "dart"}) is None


def test_same_decisions_as_lightgbm_callback():
    """Feed identical sequences to LightGBM's callback and ours."""
    lgb = pytest.importorskip("lightgbm")
    import numpy as np

    # a bare Booster lets LightGBM's callback recognise the training set by name
    model = lgb.Booster.__new__(lgb.Booster)
    model._train_data_name = "training"

    rng = np.random.default_rng(0)
    for trial in range(30):
        n_it = 12
        hist = _zip(
            *[
                _hist(m, rng.uniform(size=n_it).round(1), m == "auc", data)
                for data in ("training", "valid_0", "valid_1")
                for m in ("l2", "auc")
            ]
        )
        kw = {
            "stopping_rounds": int(rng.integers(1, 5)),
            "first_metric_only": bool(trial % 2),
            "verbose": False,
            "min_delta": float(rng.choice([0.0, 0.15])),
        }
        ours = _run([early_stopping(**kw)], hist)
        theirs_cb = lgb.early_stopping(**kw)
        theirs = None
        for i, res in enumerate(hist):
            res = (
                [lgb.basic.EvalResult(*t) for t in res] if hasattr(lgb.basic, "EvalResult") else res
            )
            env = lgb.callback.CallbackEnv(model, {}, i, 0, n_it, res)
            try:
                theirs_cb(env)
            except lgb.callback.EarlyStopException as exc:
                theirs = (exc.best_iteration, i)
                break
        assert (ours.best_iteration, ours.stopped_at) == theirs, (trial, kw)
