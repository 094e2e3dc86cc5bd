"""Booster.refit, and the training Booster's update / rollback_one_iter /
add_valid / eval, against LightGBM 4.7's semantics: on the same model
(dgbdt's, read by LightGBM, or LightGBM's read by dgbdt) refit gives the same
leaf values; otherwise against dgbdt.train and hand-computed values."""

import numpy as np
import pytest
from prebinned import BASE, LGB_ONLY, prebinned

import dgbdt


def _train(params, X, y, rounds, **kwargs):
    return dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y), rounds, **kwargs)


def _raw(booster, X):
    return booster.predict(X, raw_score=True)


@pytest.mark.parametrize(
    "objective, extra",
    [
        ("regression", {}),
        ("regression", {"lambda_l1": 0.5, "max_delta_step": 0.05}),
        ("binary", {}),
        ("multiclass", {"num_class": 3}),
    ],
)
def test_refit_equals_lightgbms_refit_of_the_same_model(objective, extra):
    lgb = pytest.importorskip("lightgbm")
    X, y = prebinned(objective, n=600)
    X_new, y_new = prebinned(objective, n=500, seed=1)
    params = {**BASE, "objective": objective, "learning_rate": 0.3, **extra}
    ours = _train(params, X, y, 4)
    theirs = lgb.Booster(model_str=ours.model_to_string(format="lightgbm"))
    np.testing.assert_array_equal(_raw(ours, X), theirs.predict(X, raw_score=True))
    for decay_rate in (0.9, 0.3, 0.0, 1.0):
        refitted = ours.refit(X_new, y_new, decay_rate=decay_rate)
        expected = theirs.refit(X_new, y_new, decay_rate=decay_rate)
        np.testing.assert_allclose(
            _raw(refitted, X), expected.predict(X, raw_score=True), rtol=0, atol=1e-9
        )
    # the model itself is left as it was
    np.testing.assert_array_equal(_raw(ours, X), theirs.predict(X, raw_score=True))


def test_refit_with_path_smooth_weights_and_init_score_as_lightgbm():
    """LightGBM's refit path-smooths toward tree->leaf_parent(i), the parent's
    node index (its training Booster's trees hold it; models read from text do
    not); dgbdt follows it.  LightGBM's model read by dgbdt, refitted by both."""
    lgb = pytest.importorskip("lightgbm")
    X, y = prebinned("binary", n=600)
    X_new, y_new = prebinned("binary", n=500, seed=1)
    # float32 weights: LightGBM keeps them so
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=len(y_new)).astype(np.float32)
    init = np.random.default_rng(3).normal(scale=0.3, size=len(y_new))
    params = {**BASE, "objective": "binary", "learning_rate": 0.3, "path_smooth": 5.0}
    params.update(min_data_in_leaf=3, lambda_l1=0.2)
    p = {**params, **LGB_ONLY}
    theirs = lgb.train(p, lgb.Dataset(X, y, params=p), 4, keep_training_booster=True)
    ours = dgbdt.Booster(model_str=theirs.model_to_string())
    for kwargs in ({}, {"weight": w, "init_score": init}):
        expected = theirs.refit(X_new, y_new, decay_rate=0.4, **kwargs)
        refitted = ours.refit(X_new, y_new, decay_rate=0.4, **kwargs)
        np.testing.assert_allclose(
            _raw(refitted, X), expected.predict(X, raw_score=True), rtol=0, atol=1e-9
        )


def test_refit_of_one_regression_tree_by_hand():
    X, y = prebinned("regression", n=400)
    X_new, y_new = prebinned("regression", n=300, seed=4)
    lr, l2 = 0.3, 0.5
    booster = _train({**BASE, "objective": "regression", "learning_rate": lr}, X, y, 1)
    leaves = booster.predict(X_new, pred_leaf=True)[:, 0]
    old = _raw(booster, X_new)  # the starting score is refitted with the first tree
    decay = 0.25
    refitted = booster.refit(X_new, y_new, decay_rate=decay)
    # gradients at score 0: -y; hessians 1; output -G / (H + l2), not shrunk: the
    # first tree carries the starting score, whose shrinkage LightGBM sets to 1
    sums = np.bincount(leaves, weights=y_new)
    counts = np.bincount(leaves)
    new_leaf = sums / (counts + 1e-15 + l2)
    np.testing.assert_allclose(
        _raw(refitted, X_new), decay * old + (1 - decay) * new_leaf[leaves], rtol=0, atol=1e-12
    )
    assert refitted.num_trees() == 1 and refitted is not booster


def test_refit_errors():
    X, y = prebinned("regression", n=300)
    booster = _train({**BASE, "objective": "regression"}, X, y, 2)
    with pytest.raises(ValueError, match="decay_rate"):
        booster.refit(X, y, decay_rate=1.5)
    with pytest.raises(ValueError, match="features"):
        booster.refit(X[:, :3], y)

    def l2(preds, data):
        return preds - data.get_label(), np.ones_like(preds)

    custom = _train({**BASE, "objective": l2}, X, y, 2)
    with pytest.raises(ValueError, match="Cannot refit"):
        custom.refit(X, y)


BAGGED = {
    **BASE,
    "objective": "binary",
    "learning_rate": 0.3,
    "bagging_fraction": 0.7,
    "bagging_freq": 2,
    "feature_fraction": 0.8,
}


def test_update_continues_as_train_does():
    X, y = prebinned("binary", n=600)
    expected = _train(BAGGED, X, y, 6)
    booster = dgbdt.Booster({**BAGGED, "verbosity": -1}, dgbdt.Dataset(X, y))
    assert booster.current_iteration() == 0
    assert [booster.update() for _ in range(6)] == [False] * 6
    np.testing.assert_array_equal(_raw(booster, X), _raw(expected, X))
    kept = _train(BAGGED, X, y, 4, keep_training_booster=True)
    kept.update()
    kept.update()
    np.testing.assert_array_equal(_raw(kept, X), _raw(expected, X))


def test_update_with_fobj_is_one_iteration_of_a_custom_objective():
    X, y = prebinned("regression", n=500)

    def l2(preds, data):
        return preds - data.get_label(), np.ones_like(preds)

    # a custom objective starts from 0: so does regression without boost_from_average
    params = {**BASE, "learning_rate": 0.3, "boost_from_average": False, "verbosity": -1}
    expected = _train({**params, "objective": l2}, X, y, 3)
    booster = dgbdt.Booster({**params, "objective": "regression"}, dgbdt.Dataset(X, y))
    for _ in range(3):
        booster.update(fobj=l2)
    np.testing.assert_allclose(_raw(booster, X), _raw(expected, X), rtol=0, atol=1e-12)


def test_update_reports_a_finished_training_as_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y = prebinned("regression", n=200)
    params = {**BASE, "objective": "regression", "min_data_in_leaf": 150}
    ours = dgbdt.Booster({**params, "verbosity": -1}, dgbdt.Dataset(X, y))
    p = {**params, **LGB_ONLY}
    theirs = lgb.Booster(p, lgb.Dataset(X, y, params=p))
    # no split leaves 150 rows on both sides: finished; the first stumps stay
    for _ in range(2):
        assert ours.update() is theirs.update() is True
        assert ours.current_iteration() == theirs.current_iteration() == 1
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)


def test_rollback_one_iter_takes_the_iteration_off_the_scores():
    X, y = prebinned("binary", n=600)
    X_valid, y_valid = prebinned("binary", n=300, seed=7)
    train_set = dgbdt.Dataset(X, y)
    valid = dgbdt.Dataset(X_valid, y_valid, reference=train_set)
    booster = dgbdt.train(
        {**BAGGED, "verbosity": -1},
        train_set,
        5,
        valid_sets=[valid],
        valid_names=["v"],
        keep_training_booster=True,
    )
    booster.rollback_one_iter().rollback_one_iter()
    assert booster.current_iteration() == 3
    three = _train(BAGGED, X, y, 3)
    np.testing.assert_array_equal(_raw(booster, X), _raw(three, X))
    # the training and validation scores lost those trees: metrics of 3 rounds
    fresh = dgbdt.Booster({**BAGGED, "verbosity": -1}, dgbdt.Dataset(X, y))
    for _ in range(3):
        fresh.update()
    fresh_valid = fresh.eval(dgbdt.Dataset(X_valid, y_valid), "v")
    for ours, expected in zip(
        booster.eval_valid() + booster.eval_train(), fresh_valid + fresh.eval_train(), strict=True
    ):
        assert ours[:2] == expected[:2]
        assert ours[2] == pytest.approx(expected[2], abs=1e-12)
    # and training goes on as if they never were (the bag of round 3 drawn again)
    booster.update()
    booster.update()
    np.testing.assert_array_equal(_raw(booster, X), _raw(_train(BAGGED, X, y, 5), X))


def test_rollback_keeps_an_init_models_iterations_as_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y = prebinned("regression", n=300)
    params = {**BASE, "objective": "regression"}
    init = _train(params, X, y, 2)
    booster = _train(params, X, y, 2, init_model=init, keep_training_booster=True)
    p = {**params, **LGB_ONLY}
    theirs = lgb.train(
        p,
        lgb.Dataset(X, y, params=p),
        2,
        init_model=lgb.Booster(model_str=init.model_to_string(format="lightgbm")),
        keep_training_booster=True,
    )
    for _ in range(3):
        booster.rollback_one_iter()
        theirs.rollback_one_iter()
    assert booster.current_iteration() == theirs.current_iteration() == 2
    # a plain model just loses its last iteration's trees
    plain = _train({**params, "objective": "multiclass", "num_class": 3}, X, np.arange(300) % 3, 2)
    assert plain.rollback_one_iter().num_trees() == 3


def test_eval_methods_and_their_names():
    X, y = prebinned("regression", n=400)
    train_set = dgbdt.Dataset(X, y)
    booster = dgbdt.Booster(
        {**BASE, "objective": "regression", "metric": ["l2", "l1"], "verbosity": -1}, train_set
    )
    booster.update()
    other = dgbdt.Dataset(X[:100], y[:100], reference=train_set)
    assert [r[:2] for r in booster.eval_train()] == [("training", "l2"), ("training", "l1")]
    assert booster.eval_valid() == []
    result = booster.eval(other, "part")  # new data: added as a validation set
    assert [r[:2] for r in result] == [("part", "l2"), ("part", "l1")]
    assert booster.eval_valid() == result
    pred = booster.predict(X[:100])
    assert result[0][2] == pytest.approx(np.mean((pred - y[:100]) ** 2), rel=1e-12)
    assert booster.eval(train_set, "mine")[0][:2] == ("mine", "l2")
    feval = booster.eval_valid(feval=lambda p, d: ("n", float(len(p)), True))
    assert feval[-1] == ("part", "n", 100.0, True)


def test_training_booster_errors():
    X, y = prebinned("regression", n=200)
    train_set = dgbdt.Dataset(X, y)
    booster = dgbdt.Booster({**BASE, "objective": "regression", "verbosity": -1}, train_set)
    with pytest.raises(ValueError, match="does not replace the training data"):
        booster.update(train_set=dgbdt.Dataset(X, y))
    with pytest.raises(TypeError, match="Training data should be Dataset instance"):
        booster.update(train_set=X)
    with pytest.raises(TypeError, match="Validation data should be Dataset instance"):
        booster.add_valid(X, "x")
    assert booster.update(train_set=train_set) is False
    plain = _train({**BASE, "objective": "regression"}, X, y, 1)
    for call in (plain.update, plain.eval_train, plain.eval_valid):
        with pytest.raises(ValueError, match="keeps its training state"):
            call()
    # a copy (or pickle) is a plain model
    assert booster.__copy__()._loop is None


def test_command_line_refit_task_equals_booster_refit(tmp_path):
    from dgbdt.cli.commands import run

    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=300)
    X2, y2 = rng.normal(size=(200, 3)), rng.normal(size=200)
    train, new = tmp_path / "train.csv", tmp_path / "new.csv"
    np.savetxt(train, np.column_stack([y, X]), delimiter=",")
    np.savetxt(new, np.column_stack([y2, X2]), delimiter=",")
    np.savetxt(f"{new}.weight", rng.uniform(0.5, 2, 200))
    model, out = tmp_path / "m.json", tmp_path / "refit.json"
    args = ["objective=regression", "num_trees=5", "num_leaves=4", "verbosity=-1"]
    assert run(["train", f"data={train}", f"output_model={model}", *args]) == 0
    refit = ["refit", f"data={new}", f"input_model={model}", f"output_model={out}"]
    assert run([*refit, "refit_decay_rate=0.3", "verbosity=-1"]) == 0
    booster = dgbdt.Booster(model_file=model)
    want = booster.refit(X2, y2, 0.3, weight=np.loadtxt(f"{new}.weight"))
    got = dgbdt.Booster(model_file=out)
    np.testing.assert_allclose(got.predict(X2), want.predict(X2), rtol=1e-12, atol=1e-12)
    assert not np.allclose(got.predict(X2), booster.predict(X2))
    # the command line's split parameters reach the refit (over the model's)
    assert run([*refit, "refit_decay_rate=0", "lambda_l2=1000", "verbosity=-1"]) == 0
    want = booster.refit(
        X2, y2, 0.0, weight=np.loadtxt(f"{new}.weight"), dataset_params={"lambda_l2": 1000}
    )
    np.testing.assert_allclose(
        dgbdt.Booster(model_file=out).predict(X2), want.predict(X2), atol=1e-12
    )


@pytest.mark.parametrize("continued", [False, True])
def test_refit_of_a_dgbdt_model_equals_lightgbms_refit_of_its_own_training(continued):
    # LightGBM's first tree carries the starting score with shrinkage 1 (Tree::AddBias),
    # and a model continued at another learning rate keeps each tree's own
    lgb = pytest.importorskip("lightgbm")
    X, y = prebinned("regression", n=600)
    X_new, y_new = prebinned("regression", n=500, seed=1)
    params = {**BASE, "objective": "regression", "learning_rate": 0.1}
    ours = _train(params, X, y, 2)
    theirs = lgb.train({**params, **LGB_ONLY}, lgb.Dataset(X, y), 2)
    if continued:
        faster = {**params, "learning_rate": 0.5}
        ours = _train(faster, X, y, 2, init_model=ours)
        theirs = lgb.train({**faster, **LGB_ONLY}, lgb.Dataset(X, y), 2, init_model=theirs)
    np.testing.assert_allclose(_raw(ours, X), theirs.predict(X, raw_score=True), atol=1e-12)
    for decay_rate in (0.0, 0.5):
        want = theirs.refit(X_new, y_new, decay_rate=decay_rate).predict(X, raw_score=True)
        got = _raw(ours.refit(X_new, y_new, decay_rate=decay_rate), X)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
