"""DGBDTRanker, LightGBM's LGBMRanker interface: fit/predict on query data,
LightGBM's group / eval_group errors, eval_at in the metric names, early
stopping, clone/pickle/get_params, the same model as dgbdt.train, LightGBM
4.7's predictions on pre-binned data, the shared rank.train check (LightGBM's
own test_lambdarank) and data-parallel training under mpiexec."""

import json
import pickle
import sys
import warnings

import numpy as np
import pytest
from mpi_launch import TESTS, run_mpi
from prebinned import BASE, LGB_ONLY, prebinned
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.utils import get_tags

import dgbdt
from dgbdt import DGBDTRanker

sys.path.insert(0, str(TESTS / "mpi"))
from ranker import FIT, PARAMS, rank_data  # noqa: E402


@pytest.fixture(scope="module")
def data():
    """(X, y, group) for training and validation."""
    return rank_data(0), rank_data(1, n_queries=40)


def _fit(data, **kw):
    (X, y, g), (Xv, yv, gv) = data
    est = DGBDTRanker(n_estimators=kw.pop("n_estimators", 5), **kw.pop("params", {}))
    return est.fit(X, y, group=g, eval_set=[(Xv, yv)], eval_group=[gv], **kw)


def test_fit_predict(data):
    (X, y, g), (Xv, yv, gv) = data
    est = _fit(data, n_estimators=20)
    assert est.objective_ == "lambdarank"
    assert est.n_features_in_ == X.shape[1]
    assert isinstance(est.booster_, dgbdt.Booster)
    assert est.predict(Xv).shape == (len(Xv),)
    assert est.feature_importances_.shape == (X.shape[1],)
    assert est.feature_importances_[0] == est.feature_importances_.max()  # the strong feature
    # default eval_at (1, 2, 3, 4, 5) and metric "ndcg"
    ndcg = est.evals_result_["valid_0"]
    assert list(ndcg) == [f"ndcg@{k}" for k in (1, 2, 3, 4, 5)]
    assert ndcg["ndcg@3"][-1] > ndcg["ndcg@3"][0]
    assert est.best_score_["valid_0"]["ndcg@3"] == ndcg["ndcg@3"][-1]
    # LightGBM's check_is_fitted test: one-row queries train too
    DGBDTRanker(n_estimators=2).fit(X, y, group=np.ones(len(X)))


def test_rank_xendcg(data):
    est = _fit(data, params={"objective": "rank_xendcg", "random_state": 5}, eval_at=[2])
    assert est.objective_ == "rank_xendcg" and list(est.evals_result_["valid_0"]) == ["ndcg@2"]


def test_lightgbm_errors(data):
    (X, y, g), (Xv, yv, gv) = data
    est = DGBDTRanker(n_estimators=2)
    with pytest.raises(ValueError, match="Should set group for ranking task"):
        est.fit(X, y)
    with pytest.raises(ValueError, match="eval_group cannot be None"):
        est.fit(X, y, group=g, eval_set=[(Xv, yv)])
    msg = r"Length of eval_group \(1\) not equal to length of eval_set \(2\)"
    with pytest.raises(ValueError, match=msg):
        est.fit(X, y, group=g, eval_set=[(Xv, yv), (Xv, yv)], eval_group=[gv])
    with pytest.raises(ValueError, match="group sizes sum to"):
        est.fit(X, y, group=g[:-1])
    with pytest.raises(ValueError, match="group sizes sum to"):
        est.fit(X, y, group=g, eval_set=[(Xv, yv)], eval_group=[g])
    with pytest.raises(ValueError, match="needs query groups"):
        est.fit(X, y, group=g, eval_set=[(Xv, yv)], eval_group=[None])


def test_eval_at_reaches_the_metric_names(data):
    est = _fit(data, eval_at=[1, 3], eval_metric="map")
    assert sorted(est.evals_result_["valid_0"]) == ["map@1", "map@3", "ndcg@1", "ndcg@3"]
    assert list(est.booster_.params["eval_at"]) == [1, 3]
    # an alias among the params wins, with LightGBM's warning
    with pytest.warns(UserWarning, match="Found 'ndcg_at' in params. Will use it instead"):
        est = _fit(data, params={"ndcg_at": [2, 4]}, eval_at=[1, 3])
    assert list(est.evals_result_["valid_0"]) == ["ndcg@2", "ndcg@4"]


def test_custom_eval_metric_gets_the_groups(data):
    def n_queries(y_true, y_pred, weight, group):
        return "n_queries", float(len(group)), True

    (X, y, g), (Xv, yv, gv) = data
    est = DGBDTRanker(n_estimators=2).fit(
        X, y, group=g, eval_set=[(Xv, yv), (X, y)], eval_group=[gv, g], eval_metric=n_queries
    )
    assert est.evals_result_["valid_0"]["n_queries"] == [len(gv)] * 2
    assert est.evals_result_["training"]["n_queries"] == [len(g)] * 2


def test_best_iteration_with_early_stopping(data):
    est = _fit(
        data,
        n_estimators=100,
        params={"learning_rate": 0.3, "num_leaves": 15, "min_child_samples": 5},
        eval_at=[3],
        callbacks=[dgbdt.early_stopping(5, verbose=False)],
    )
    ndcg = est.evals_result_["valid_0"]["ndcg@3"]
    assert est.best_iteration_ == int(np.argmax(ndcg)) + 1
    assert len(ndcg) == est.best_iteration_ + 5 < 100
    assert est.best_score_["valid_0"]["ndcg@3"] == max(ndcg)
    (Xv, _, _) = data[1]
    np.testing.assert_array_equal(
        est.predict(Xv), est.booster_.predict(Xv, num_iteration=est.best_iteration_)
    )


def test_clone_pickle_and_get_params(data):
    (X, y, g), (Xv, _, _) = data
    est = DGBDTRanker(n_estimators=5, num_leaves=7, lambdarank_truncation_level=5)
    params = est.get_params()
    assert params["lambdarank_truncation_level"] == 5 and params["objective"] is None
    assert DGBDTRanker(**params).get_params() == params
    assert clone(est).get_params() == params
    est.set_params(num_leaves=5, label_gain=[0, 1, 3, 7, 15])
    assert est.get_params()["num_leaves"] == 5
    est.fit(X, y, group=g)
    assert est.booster_.params["num_leaves"] == 5
    assert est.booster_.params["lambdarank_truncation_level"] == 5
    again = clone(est).fit(X, y, group=g)
    np.testing.assert_array_equal(again.predict(Xv), est.predict(Xv))
    restored = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(restored.predict(Xv), est.predict(Xv))


def test_tags_say_neither_classifier_nor_regressor():
    est = DGBDTRanker()
    assert not is_classifier(est) and not is_regressor(est)
    tags = get_tags(est)
    assert tags.estimator_type is None  # as LightGBM's LGBMRanker
    assert tags.target_tags.required and tags.input_tags.allow_nan and tags.input_tags.sparse


def test_same_model_as_train(data):
    (X, y, g), (Xv, yv, gv) = data
    est = DGBDTRanker(n_estimators=6, num_leaves=7, min_child_samples=5, random_state=3)
    est.fit(X, y, group=g, eval_set=[(Xv, yv)], eval_group=[gv], eval_at=[1, 3])
    params = {"objective": "lambdarank", "num_leaves": 7, "min_data_in_leaf": 5, "seed": 3}
    train_set = dgbdt.Dataset(X, y, group=g)
    evals = {}
    booster = dgbdt.train(
        {**params, "eval_at": [1, 3], "verbosity": -1},
        train_set,
        6,
        valid_sets=[dgbdt.Dataset(Xv, yv, group=gv, reference=train_set)],
        callbacks=[dgbdt.record_evaluation(evals)],
    )
    np.testing.assert_array_equal(est.predict(Xv), booster.predict(Xv))
    assert est.evals_result_ == evals


def test_equals_lightgbm_on_prebinned_data():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X, s = prebinned("regression", n=1500)
    sizes = rng.integers(1, 25, 100)
    sizes = sizes[np.cumsum(sizes) <= len(X)]
    n = int(sizes.sum())
    X, s = X[:n], s[:n]
    y = np.clip(np.floor((s - s.min()) / np.ptp(s) * 5 + rng.normal(0, 0.7, n)), 0, 4)
    fit = {"group": sizes, "eval_set": [(X, y)], "eval_group": [sizes], "eval_at": [1, 3]}
    theirs = lgb.LGBMRanker(n_estimators=5, **BASE, **LGB_ONLY)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 4.7: "eval_set is deprecated"
        theirs.fit(X, y, **fit)
    ours = DGBDTRanker(n_estimators=5, **BASE).fit(X, y, **fit)
    want = theirs.predict(X, raw_score=True)
    np.testing.assert_allclose(ours.predict(X), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    for name, values in theirs.evals_result_["training"].items():
        np.testing.assert_allclose(ours.evals_result_["training"][name], values, atol=1e-5)


def test_shared_rank_data_as_lightgbm_test_lambdarank(shared_datasets):
    from sklearn.datasets import load_svmlight_file

    if not hasattr(dgbdt, "reset_parameter"):
        pytest.skip("dgbdt.reset_parameter is not there yet")
    d = shared_datasets / "lightgbm"
    X_train, y_train = load_svmlight_file(str(d / "rank.train"))
    X_test, y_test = load_svmlight_file(str(d / "rank.test"))
    q_train = np.loadtxt(str(d / "rank.train.query"))
    q_test = np.loadtxt(str(d / "rank.test.query"))
    gbm = DGBDTRanker(n_estimators=50, random_state=42)
    gbm.fit(
        X_train,
        y_train,
        group=q_train,
        eval_set=[(X_test, y_test)],
        eval_group=[q_test],
        eval_at=[1, 3],
        callbacks=[
            dgbdt.early_stopping(10, verbose=False),
            dgbdt.reset_parameter(learning_rate=lambda x: max(0.01, 0.1 - 0.01 * x)),
        ],
    )
    assert gbm.best_iteration_ <= 24
    assert gbm.best_score_["valid_0"]["ndcg@1"] > 0.5674
    assert gbm.best_score_["valid_0"]["ndcg@3"] > 0.578


def test_data_parallel_on_two_ranks_equals_one_process(tmp_path):
    # each rank passes whole queries (unequal shards) of training and validation
    result = run_mpi(2, "ranker.py", tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    got = json.loads((tmp_path / "ranker.json").read_text())
    (X, y, g), (Xv, yv, gv) = rank_data(0), rank_data(1, n_queries=40)
    serial = DGBDTRanker(**PARAMS).fit(
        X, y, group=g, eval_set=[(Xv, yv)], eval_group=[gv], **FIT,
        callbacks=[dgbdt.early_stopping(5, verbose=False)],
    )  # fmt: skip
    np.testing.assert_allclose(got["predict"], serial.predict(Xv), rtol=0, atol=1e-9)
    assert got["best_iteration"] == serial.best_iteration_
    assert serial.n_estimators_ < PARAMS["n_estimators"]  # early stopping ended both
    assert got["evals"].keys() == serial.evals_result_.keys()
    for name, values in serial.evals_result_["valid_0"].items():
        np.testing.assert_allclose(got["evals"]["valid_0"][name], values, rtol=1e-12)
