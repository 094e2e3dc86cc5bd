"""dgbdt.cv: LightGBM's cv (folds, results, early stopping, CVBooster) on one
process, and keyed folds under mpiexec equal to one process's."""

import importlib.util
import json

import numpy as np
import pytest
from mpi_launch import TESTS, run_mpi
from prebinned import BASE, LGB_ONLY, prebinned

import dgbdt

_spec = importlib.util.spec_from_file_location("cv_ranks", TESTS / "mpi" / "cv.py")
cv_ranks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cv_ranks)

REGRESSION = {**BASE, "objective": "regression", "learning_rate": 0.3, "metric": ["l2", "l1"]}


def _ours(params, X, y, rounds, **kwargs):
    group = kwargs.pop("group", None)
    train_set = dgbdt.Dataset(X, y, group=group)
    return dgbdt.cv({**params, "verbosity": -1}, train_set, rounds, **kwargs)


def _lightgbm(params, X, y, rounds, **kwargs):
    lgb = pytest.importorskip("lightgbm")
    group = kwargs.pop("group", None)
    p = {**params, **LGB_ONLY}
    return lgb.cv(p, lgb.Dataset(X, y, group=group, params=p), rounds, **kwargs)


def _assert_same_results(ours, theirs, atol=1e-12):
    assert [k for k in ours if k != "cvbooster"] == [k for k in theirs if k != "cvbooster"]
    for key in ours:
        if key != "cvbooster":
            np.testing.assert_allclose(ours[key], theirs[key], rtol=0, atol=atol, err_msg=key)


def test_fold_means_equal_a_hand_rolled_loop():
    X, y = prebinned("regression", n=600)
    seed, nfold, rounds = 3, 3, 4
    ours = _ours(REGRESSION, X, y, rounds, nfold=nfold, stratified=False, seed=seed)
    # LightGBM's folds (np.random permutation cut in nfold parts), each trained
    # with dgbdt.train on rows binned with the whole training set's bins
    parts = np.array_split(np.random.RandomState(seed).permutation(len(y)), nfold)
    full = dgbdt.Dataset(X, y, free_raw_data=False)
    full.construct({**REGRESSION, "verbosity": -1})
    per_fold = []
    for k in range(nfold):
        test = np.sort(parts[k])
        train = np.sort(np.concatenate([parts[i] for i in range(nfold) if i != k]))
        evals = {}
        dgbdt.train(
            {**REGRESSION, "verbosity": -1},
            dgbdt.Dataset(X[train], y[train], reference=full),
            rounds,
            valid_sets=[dgbdt.Dataset(X[test], y[test], reference=full)],
            valid_names=["valid"],
            callbacks=[dgbdt.record_evaluation(evals)],
        )
        per_fold.append(evals["valid"])
    assert list(ours) == ["valid l2-mean", "valid l2-stdv", "valid l1-mean", "valid l1-stdv"]
    for metric in ("l2", "l1"):
        values = np.array([fold[metric] for fold in per_fold])
        np.testing.assert_allclose(ours[f"valid {metric}-mean"], values.mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(ours[f"valid {metric}-stdv"], values.std(axis=0), atol=1e-12)


@pytest.mark.parametrize(
    "objective, kwargs",
    [
        ("regression", {"stratified": False}),
        ("regression", {"stratified": False, "shuffle": False}),
        ("binary", {}),  # scikit-learn's StratifiedKFold(shuffle, seed)
        ("multiclass", {"metrics": "multi_logloss"}),
    ],
)
def test_equals_lightgbm_cv_on_prebinned_data(objective, kwargs):
    X, y = prebinned(objective, n=900)
    params = {**BASE, "objective": objective, "learning_rate": 0.3}
    if objective == "multiclass":
        params["num_class"] = 3
    kwargs = {"nfold": 3, "eval_train_metric": True, "seed": 5, **kwargs}
    ours = _ours(params, X, y, 4, **kwargs)
    _assert_same_results(ours, _lightgbm(params, X, y, 4, **kwargs))
    assert next(iter(ours)).startswith("train ")


def test_early_stopping_cuts_the_results_at_the_best_iteration():
    X, y = prebinned("regression", n=900)
    params = {**REGRESSION, "num_leaves": 31, "min_data_in_leaf": 1, "early_stopping_round": 3}
    kwargs = {"nfold": 3, "stratified": False, "return_cvbooster": True}
    ours = _ours(params, X, y, 60, **kwargs)
    theirs = _lightgbm(params, X, y, 60, **kwargs)
    _assert_same_results(ours, theirs)
    best = ours["cvbooster"].best_iteration
    assert best == theirs["cvbooster"].best_iteration == len(ours["valid l2-mean"]) < 57
    # training ran early_stopping_round rounds past the best one
    assert ours["cvbooster"].current_iteration() == [best + 3] * 3
    assert [b.best_iteration for b in ours["cvbooster"].boosters] == [best] * 3
    # the early_stopping callback, on the first metric only
    stopped = _ours(
        REGRESSION,
        X,
        y,
        60,
        nfold=3,
        stratified=False,
        callbacks=[dgbdt.early_stopping(2, first_metric_only=True, verbose=False)],
    )
    l2 = stopped["valid l2-mean"]
    assert int(np.argmin(l2)) == len(l2) - 1 and len(l2) < 60


def test_stratified_needs_class_labels_and_a_shuffle_as_lightgbm():
    X, y = prebinned("regression", n=300)
    with pytest.raises(ValueError, match="Supported target types"):
        _ours(REGRESSION, X, y, 2)  # stratified=True by default, as LightGBM
    Xb, yb = prebinned("binary", n=300)
    with pytest.raises(ValueError, match="random_state has no effect"):
        _ours({**BASE, "objective": "binary"}, Xb, yb, 2, shuffle=False)


def _ranking_data(n_queries=60, seed=3):
    rng = np.random.default_rng(seed)
    group = rng.integers(5, 15, size=n_queries)
    X, _ = prebinned("regression", n=int(group.sum()))
    return X, rng.integers(0, 4, size=len(X)).astype(np.float64), group


def test_ranking_splits_whole_queries_as_lightgbm():
    from sklearn.model_selection import GroupKFold

    X, y, group = _ranking_data()
    params = {**BASE, "objective": "lambdarank", "learning_rate": 0.3, "eval_at": [3]}
    for kwargs in ({"nfold": 3}, {"folds": GroupKFold(3)}):
        ours = _ours(params, X, y, 3, group=group, return_cvbooster=True, **kwargs)
        _assert_same_results(ours, _lightgbm(params, X, y, 3, group=group, **kwargs))
        # every fold trains on whole queries
        for booster in ours["cvbooster"].boosters:
            sizes = booster._loop.train_set.get_group()
            assert set(np.asarray(sizes).tolist()) <= set(group.tolist())
    with pytest.raises(ValueError, match="whole queries"):
        _ours(params, X, y, 2, group=group, folds=[(np.arange(10, len(y)), np.arange(10))])


@pytest.mark.filterwarnings("ignore:The groups parameter is ignored by KFold")
def test_folds_given_as_an_iterator_or_a_splitter():
    from sklearn.model_selection import KFold

    X, y = prebinned("regression", n=600)
    splitter = KFold(4, shuffle=True, random_state=1)
    _assert_same_results(
        _ours(REGRESSION, X, y, 3, folds=splitter), _lightgbm(REGRESSION, X, y, 3, folds=splitter)
    )
    folds = list(KFold(3).split(X))
    by_iterator = _ours(REGRESSION, X, y, 3, folds=iter(folds))
    _assert_same_results(by_iterator, _lightgbm(REGRESSION, X, y, 3, folds=iter(folds)))
    by_generator = _ours(REGRESSION, X, y, 3, folds=(f for f in folds))
    _assert_same_results(by_generator, by_iterator, atol=0)


def test_custom_objective_feval_and_no_metric_as_lightgbm():
    X, y = prebinned("binary", n=600)

    def logistic(preds, data):
        p = 1.0 / (1.0 + np.exp(-preds))
        return p - data.get_label(), p * (1.0 - p)

    def raw_l2(preds, data):
        return "raw_l2", float(np.mean((preds - data.get_label()) ** 2)), False

    params = {**BASE, "objective": logistic, "learning_rate": 0.3}
    kwargs = {"nfold": 3, "metrics": "None", "feval": raw_l2}
    ours = _ours(params, X, y, 3, **kwargs)
    assert list(ours) == ["valid raw_l2-mean", "valid raw_l2-stdv"]
    _assert_same_results(ours, _lightgbm(params, X, y, 3, **kwargs))


def test_init_model_and_reset_parameter_as_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y = prebinned("regression", n=600)
    params = {**BASE, "objective": "regression", "learning_rate": 0.3}
    init = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y), 2)
    schedule = [0.3, 0.2, 0.1]
    ours = dgbdt.cv(
        {**params, "verbosity": -1},
        dgbdt.Dataset(X, y, free_raw_data=False),
        3,
        nfold=3,
        stratified=False,
        init_model=init,
        callbacks=[dgbdt.reset_parameter(learning_rate=schedule)],
        return_cvbooster=True,
    )
    p = {**params, **LGB_ONLY}
    theirs = lgb.cv(
        p,
        lgb.Dataset(X, y, params=p, free_raw_data=False),
        3,
        nfold=3,
        stratified=False,
        init_model=lgb.Booster(model_str=init.model_to_string(format="lightgbm")),
        callbacks=[lgb.reset_parameter(learning_rate=schedule)],
    )
    _assert_same_results(ours, theirs)
    assert ours["cvbooster"].current_iteration() == [5, 5, 5]


def test_cvbooster_forwards_and_saves(tmp_path):
    X, y = prebinned("regression", n=600)
    out = _ours(REGRESSION, X, y, 3, nfold=3, stratified=False, return_cvbooster=True)
    booster = out["cvbooster"]
    assert isinstance(booster, dgbdt.CVBooster) and len(booster.boosters) == 3
    predictions = booster.predict(X[:7])
    assert isinstance(predictions, list) and len(predictions) == 3
    assert booster.num_trees() == [3, 3, 3]
    path = tmp_path / "cv.json"
    booster.save_model(path)
    for again in (
        dgbdt.CVBooster(model_file=path),
        dgbdt.CVBooster().model_from_string(booster.model_to_string()),
    ):
        assert again.best_iteration == booster.best_iteration == -1
        for a, b in zip(again.predict(X[:7]), predictions, strict=True):
            np.testing.assert_array_equal(a, b)


def test_errors_as_lightgbm():
    X, y = prebinned("regression", n=300)
    with pytest.raises(TypeError, match="cv\\(\\) only accepts Dataset object"):
        dgbdt.cv(REGRESSION, X, 2)
    with pytest.raises(ValueError, match="Number of boosting rounds must be greater than 0"):
        _ours(REGRESSION, X, y, 0, stratified=False)
    with pytest.raises(AttributeError, match="folds should be a generator or iterator"):
        _ours(REGRESSION, X, y, 2, folds=5)
    with pytest.raises(ValueError, match="query groups"):
        _ours({**BASE, "objective": "lambdarank"}, X, y, 2)


def test_keyed_folds():
    folds = dgbdt.KeyedKFold(4, seed=2)
    ids = folds.fold_ids(4000)
    assert set(ids.tolist()) == {0, 1, 2, 3}
    assert np.all(np.abs(np.bincount(ids) - 1000) < 120)
    # a row's fold is fixed by (seed, its global index): shards agree
    np.testing.assert_array_equal(ids[1234:], folds.fold_ids(4000 - 1234, first=1234))
    split = list(folds.split(np.empty((4000, 1))))
    for k, (train, test) in enumerate(split):
        np.testing.assert_array_equal(test, np.flatnonzero(ids == k))
        assert len(train) + len(test) == 4000
    groups = np.repeat(np.arange(100), 3)
    for _train, test in folds.split(np.empty(300), groups=groups):
        assert np.all(np.bincount(groups[test]) % 3 == 0)
    assert not np.array_equal(ids, dgbdt.KeyedKFold(4, seed=3).fold_ids(4000))
    with pytest.raises(ValueError, match="at least 2"):
        dgbdt.KeyedKFold(1)


def test_two_ranks_equal_one_process_with_the_keyed_folds(tmp_path):
    """mpiexec -n 2 (unequal row shards; ranking: whole queries per rank): cv's
    keyed folds give the results of one process with KeyedKFold's folds,
    early stopping included; other folds are refused."""
    result = run_mpi(2, "cv.py", tmp_path, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    info = json.loads((tmp_path / "result.json").read_text())
    keyed = dgbdt.KeyedKFold(cv_ranks.NFOLD, cv_ranks.SEED)
    X, y = cv_ranks.binary_data()
    binary = cv_ranks.run_cv(
        cv_ranks.BINARY, dgbdt.Dataset(X, y), 30, eval_train_metric=True, folds=keyed
    )
    X, y, group = cv_ranks.ranking_data()
    ranking = cv_ranks.run_cv(cv_ranks.RANKING, dgbdt.Dataset(X, y, group=group), 5, folds=keyed)
    for ours, theirs in ((binary, info["binary"]), (ranking, info["ranking"])):
        assert ours["best_iteration"] == theirs["best_iteration"]
        assert list(ours["results"]) == list(theirs["results"])
        for key, values in ours["results"].items():
            np.testing.assert_allclose(theirs["results"][key], values, rtol=1e-9, err_msg=key)
    assert 0 < binary["best_iteration"] < 30
    # rank 0 alone logs: one line per round trained (early stopping's rounds past the best)
    assert result.stdout.count("valid's auc") == binary["best_iteration"] + 3
    assert "under mpiexec" in info["refused"]


def test_more_folds_than_rows_is_an_error_naming_nfold():
    X = np.arange(6, dtype=float).reshape(3, 2)
    with pytest.raises(ValueError, match="nfold=5 is more folds than the 3 rows"):
        dgbdt.cv({"verbosity": -1}, dgbdt.Dataset(X, X[:, 0]), 2, nfold=5, stratified=False)


def test_reset_parameter_reaches_every_fold():
    # Each fold's loop applies the schedule to its own parameters: a fold
    # sharing cv's resolved dict with the others saw no change after the first.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 4))
    y = X[:, 0] + 0.1 * rng.standard_normal(600)
    params = {"objective": "regression", "num_leaves": 31, "min_data_in_leaf": 5, "verbosity": -1}
    schedule = dgbdt.reset_parameter(num_leaves=lambda i: 31 if i == 0 else 2)
    res = dgbdt.cv(
        params, dgbdt.Dataset(X, y), 3, nfold=3, stratified=False,
        return_cvbooster=True, callbacks=[schedule],
    )  # fmt: skip
    boosters = res["cvbooster"].boosters
    assert len(boosters) == 3
    for booster in boosters:
        assert [tree.n_leaves for tree in booster.trees][1:] == [2, 2]
        assert booster.params["num_leaves"] == 2


def _fold_data():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((600, 4))
    return X, X[:, 0] + 0.1 * rng.standard_normal(600)


def test_fpreproc_params_are_each_folds_own():
    # fpreproc's params (resolved for that fold) train the fold; cv's stay as given
    X, y = _fold_data()
    params = {"objective": "regression", "num_leaves": 31, "min_data_in_leaf": 5, "verbosity": -1}

    def fpreproc(train, valid, fold_params):
        return train, valid, {**fold_params, "num_leaves": 2}

    res = dgbdt.cv(
        params, dgbdt.Dataset(X, y), 2, nfold=3, stratified=False,
        fpreproc=fpreproc, return_cvbooster=True,
    )  # fmt: skip
    for booster in res["cvbooster"].boosters:
        assert [tree.n_leaves for tree in booster.trees] == [2, 2]
    assert params["num_leaves"] == 31


def test_fpreproc_returning_a_bad_value_names_the_parameter():
    X, y = _fold_data()

    def fpreproc(train, valid, fold_params):
        return train, valid, {**fold_params, "num_leaves": 0}

    with pytest.raises(ValueError, match="num_leaves"):
        dgbdt.cv(
            {"objective": "regression", "verbosity": -1}, dgbdt.Dataset(X, y), 2,
            nfold=3, stratified=False, fpreproc=fpreproc,
        )  # fmt: skip
