"""LightGBM drop-in behaviour of training (issue 28): train/cv arguments,
parameters, early stopping and the log lines LightGBM prints.  Each test names
the LightGBM behaviour it mirrors; where LightGBM is the reference for a value
it is compared with ``lightgbm`` directly."""

import re

import numpy as np
import pytest

import dgbdt

QUIET = {"verbosity": -1}


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n)
    return X, y


def _l2(preds, train_data):
    return preds - train_data.get_label(), np.ones_like(preds)


# --------------------------------------------------------------------------- #
# early stopping
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("rounds", [0, -1])
def test_early_stopping_callback_non_positive_rounds_disable_it(rounds):
    """LightGBM: early_stopping(stopping_rounds <= 0) is a disabled callback, not an error."""
    cb = dgbdt.early_stopping(rounds)
    assert cb.enabled is False
    X, y = _data()
    b = dgbdt.train(QUIET, dgbdt.Dataset(X, y), 6, callbacks=[cb])
    assert b.current_iteration() == 6 and b.best_iteration == 0


def test_early_stopping_callback_rejects_non_integer_rounds():
    """LightGBM: TypeError "early_stopping_round should be an integer. Got 'str'"."""
    with pytest.raises(TypeError, match="early_stopping_round should be an integer. Got 'str'"):
        dgbdt.early_stopping("ten")


@pytest.mark.parametrize("value", [0, -3, None])
def test_early_stopping_round_param_non_positive_or_none_disables(value):
    """LightGBM: early_stopping_round <= 0 trains every round (and stays in
    Booster.params); None is dropped."""
    X, y = _data()
    Xv, yv = _data(seed=1)
    b = dgbdt.train(
        {**QUIET, "early_stopping_rounds": value},
        dgbdt.Dataset(X, y),
        5,
        valid_sets=[dgbdt.Dataset(Xv, yv)],
    )
    assert b.num_trees() == 5


def test_early_stopping_round_param_of_wrong_type():
    """LightGBM: a str early_stopping_round is a TypeError from train()."""
    X, y = _data()
    with pytest.raises(TypeError, match="early_stopping_round should be an integer. Got 'str'"):
        dgbdt.train({"early_stopping_round": "None"}, dgbdt.Dataset(X, y), 3)


def test_train_returns_the_model_cut_at_its_best_iteration():
    """LightGBM: train() saves and reloads the model at its best iteration unless
    keep_training_booster=True: its every tree is one of the best model's."""
    X, y = _data(400)
    Xv = np.random.default_rng(5).normal(size=(200, 4))
    yv = np.random.default_rng(6).normal(size=200)  # noise: stops early
    params = {**QUIET, "num_leaves": 7, "learning_rate": 0.5}

    def fit(keep):
        return dgbdt.train(
            params,
            dgbdt.Dataset(X, y),
            50,
            valid_sets=[dgbdt.Dataset(Xv, yv)],
            callbacks=[dgbdt.early_stopping(3, verbose=False)],
            keep_training_booster=keep,
        )

    b, kept = fit(False), fit(True)
    best = b.best_iteration
    assert 1 <= best and b.current_iteration() == best
    assert kept.best_iteration == best and kept.current_iteration() == best + 3
    # every tree of the returned model is one of the best model's
    best_model = kept.predict(X, num_iteration=best)
    np.testing.assert_array_equal(b.predict(X, num_iteration=-1), best_model)
    np.testing.assert_array_equal(b.predict(X), best_model)


def test_only_the_training_set_warns_and_disables_early_stopping():
    """LightGBM: a UserWarning "Only training set found, disabling early stopping."."""
    X, y = _data()
    ds = dgbdt.Dataset(X, y)
    with pytest.warns(UserWarning, match="Only training set found, disabling early stopping."):
        b = dgbdt.train(
            QUIET, ds, 3, valid_sets=[ds], callbacks=[dgbdt.early_stopping(1, verbose=False)]
        )
    assert b.current_iteration() == 3 and b.best_iteration == 0


# --------------------------------------------------------------------------- #
# custom objectives
# --------------------------------------------------------------------------- #
def test_callable_objective_is_recorded_as_none():
    """LightGBM: train() with a callable objective leaves params["objective"] == "none"
    (cv's boosters too)."""
    X, y = _data()
    b = dgbdt.train({**QUIET, "objective": _l2}, dgbdt.Dataset(X, y), 2)
    assert b.params["objective"] == "none"
    res = dgbdt.cv(
        {**QUIET, "objective": _l2},
        dgbdt.Dataset(X, y),
        2,
        nfold=2,
        stratified=False,
        return_cvbooster=True,
    )
    assert all(f.params["objective"] == "none" for f in res["cvbooster"].boosters)


def test_objective_none_trains_through_update_fobj():
    """LightGBM: objective="none" (null, custom, na) has no gradients of its own:
    Booster.update() needs fobj ("Cannot update due to null objective function."),
    and wrong gradient lengths name "number of models per one iteration"."""
    X, y = _data(100)
    for spelling in ("none", "null", "custom", "na"):
        bst = dgbdt.Booster({**QUIET, "objective": spelling}, dgbdt.Dataset(X, y))
        with pytest.raises(dgbdt.DGBDTError, match="Cannot update due to null objective function"):
            bst.update()
    bst.update(fobj=_l2)
    assert bst.current_iteration() == 1
    bad = lambda p, d: (np.ones(len(p) + 1), np.ones(len(p) + 1))  # noqa: E731
    with pytest.raises(ValueError, match=re.escape("number of models per one iteration (1)")):
        bst.update(fobj=bad)


# --------------------------------------------------------------------------- #
# arguments and parameters
# --------------------------------------------------------------------------- #
def test_train_and_cv_argument_errors():
    """LightGBM's TypeErrors / ValueErrors (its words) for train()'s and cv()'s arguments."""
    X, y = _data(50)
    with pytest.raises(TypeError, match=r"train\(\) only accepts Dataset object, .* 'list'\."):
        dgbdt.train({}, train_set=[])
    with pytest.raises(TypeError, match=r"Item 1 has type 'tuple'\."):
        dgbdt.train({}, dgbdt.Dataset(X, y), valid_sets=[dgbdt.Dataset(X, y), (1, 2)])
    for n in (0, -2):
        msg = rf"Number of boosting rounds must be greater than 0\. Got {n}\."
        with pytest.raises(ValueError, match=msg):
            dgbdt.train({}, dgbdt.Dataset(X, y), num_boost_round=n)
        with pytest.raises(ValueError, match=msg):
            dgbdt.cv({}, dgbdt.Dataset(X, y), num_boost_round=n)


def test_text_that_is_no_number_is_a_dgbdt_error():
    """LightGBM: LightGBMError 'Parameter num_leaves should be of type int, got "too-many"'."""
    X, y = _data(50)
    with pytest.raises(
        dgbdt.DGBDTError, match='Parameter num_leaves should be of type int, got "x"'
    ):
        dgbdt.train({"num_leaves": "x"}, dgbdt.Dataset(X, y), 1)


def test_unknown_parameter_is_a_warning_line(capsys):
    """LightGBM: "[LightGBM] [Warning] Unknown parameter: nonsense", then training
    goes on; verbosity < 0 silences it."""
    X, y = _data(50)
    dgbdt.train({"nonsense": 1, "verbosity": 0}, dgbdt.Dataset(X, y), 1)
    assert "[LightGBM] [Warning] Unknown parameter: nonsense" in capsys.readouterr().out
    dgbdt.train({"nonsense": 1, "verbosity": -1}, dgbdt.Dataset(X, y), 1)
    assert capsys.readouterr().out == ""


def test_alias_conflict_is_lightgbms_warning_line(capsys):
    """LightGBM: "[LightGBM] [Warning] verbosity is set=0, verbose=1 will be ignored.
    Current value: verbosity=0"."""
    X, y = _data(50)
    dgbdt.train({"verbose": 1, "verbosity": 0}, dgbdt.Dataset(X, y), 1)
    expected = (
        "[LightGBM] [Warning] verbosity is set=0, verbose=1 will be ignored. "
        "Current value: verbosity=0"
    )
    assert expected in capsys.readouterr().out


def test_conflicting_num_iterations_aliases_warn_as_lightgbm():
    """LightGBM: the main name wins, then the first alias in its order, with a
    UserWarning "... LightGBM will perform up to N boosting rounds"."""
    X, y = _data(50)
    with pytest.warns(UserWarning, match="LightGBM will perform up to 4 boosting rounds"):
        b = dgbdt.train({**QUIET, "max_iter": 5, "n_iter": 4}, dgbdt.Dataset(X, y))
    assert b.num_trees() == 4


@pytest.mark.parametrize("depth", [5, 7])
def test_max_depth_without_num_leaves_warns_as_lightgbm(depth, capsys):
    """LightGBM (config.cpp): max_depth >= 5 without num_leaves prints its warning line."""
    lgb = pytest.importorskip("lightgbm")
    X, y = _data(100)
    y = (y > 0).astype(float)
    params = {"objective": "binary", "max_depth": depth, "num_iterations": 1, "verbose": 0}
    lgb.Booster(params=params, train_set=lgb.Dataset(X, label=y))
    theirs = [ln for ln in capsys.readouterr().out.splitlines() if "constrain tree" in ln]
    dgbdt.Booster(params=params, train_set=dgbdt.Dataset(X, label=y))
    ours = [ln for ln in capsys.readouterr().out.splitlines() if "constrain tree" in ln]
    assert theirs and ours[0] == theirs[0]
    dgbdt.Booster(params={**params, "num_leaves": 31}, train_set=dgbdt.Dataset(X, label=y))
    assert "constrain tree" not in capsys.readouterr().out
