"""Metrics vs scikit-learn, LightGBM's rules and LightGBM itself."""

import numpy as np
import pytest
from sklearn import metrics as skm

from dgbdt.objective.metrics import METRICS, get_metric

SEEDS = [0, 1, 2]
N = 301  # odd, so the two halves differ in size


def _weights(rng, weighted, n=N):
    return rng.uniform(0.1, 3.0, n) if weighted else None


def _data(kind, rng, n=N, k=4):
    if kind == "regression":
        return rng.normal(size=n), rng.normal(size=n)
    if kind == "binary":
        return rng.integers(0, 2, n).astype(float), rng.uniform(0.01, 0.99, n)
    p = rng.uniform(0.01, 1.0, (n, k))
    return rng.integers(0, k, n).astype(float), p / p.sum(axis=1, keepdims=True)


KIND = {
    "l2": "regression",
    "rmse": "regression",
    "l1": "regression",
    "huber": "regression",
    "binary_logloss": "binary",
    "binary_error": "binary",
    "auc": "binary",
    "multi_logloss": "multiclass",
    "multi_error": "multiclass",
}


def test_registry_names():
    from test_metrics_more import KIND as MORE  # the other metrics, tested there

    # auc_mu takes raw scores: tested below; average_precision and r2 in test_metrics_more
    # ndcg and map: tests/test_metrics_rank.py
    ranking = {"ndcg", "map"}
    assert set(METRICS) == set(KIND) | set(MORE) | {"auc_mu", "average_precision", "r2"} | ranking
    assert all(m.name == name for name, m in METRICS.items())
    higher = ["r2", "auc", "average_precision", "auc_mu"]
    assert [n for n, m in METRICS.items() if m.higher_better] == [*higher, "ndcg", "map"]
    assert [n for n, m in METRICS.items() if m.raw_scores] == ["auc_mu", "ndcg", "map"]
    assert [n for n, m in METRICS.items() if m.partial is None] == higher


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_against_sklearn(seed, weighted):
    rng = np.random.default_rng(seed)
    w = _weights(rng, weighted)
    y, p = _data("regression", rng)
    mse = skm.mean_squared_error(y, p, sample_weight=w)
    assert get_metric("l2").compute(y, p, w) == pytest.approx(mse, rel=1e-12)
    assert get_metric("rmse").compute(y, p, w) == pytest.approx(np.sqrt(mse), rel=1e-12)
    assert get_metric("l1").compute(y, p, w) == pytest.approx(
        skm.mean_absolute_error(y, p, sample_weight=w), rel=1e-12
    )

    y, p = _data("binary", rng)
    assert get_metric("binary_logloss").compute(y, p, w) == pytest.approx(
        skm.log_loss(y, p, sample_weight=w), rel=1e-12
    )
    assert get_metric("binary_error").compute(y, p, w) == pytest.approx(
        1 - skm.accuracy_score(y, p > 0.5, sample_weight=w), rel=1e-12
    )
    assert get_metric("auc").compute(y, p, w) == pytest.approx(
        skm.roc_auc_score(y, p, sample_weight=w), rel=1e-12
    )

    y, p = _data("multiclass", rng)
    assert get_metric("multi_logloss").compute(y, p, w) == pytest.approx(
        skm.log_loss(y, p, sample_weight=w, labels=range(4)), rel=1e-12
    )
    assert get_metric("multi_error").compute(y, p, w) == pytest.approx(
        1 - skm.accuracy_score(y, p.argmax(axis=1), sample_weight=w), rel=1e-12
    )


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_huber_formula(seed, weighted):
    rng = np.random.default_rng(seed)
    w = _weights(rng, weighted)
    y, p = _data("regression", rng)
    for alpha in (0.3, 0.9, 2.0):
        d = np.abs(p - y)
        loss = [0.5 * e * e if e <= alpha else alpha * (e - 0.5 * alpha) for e in d]
        expected = np.average(loss, weights=w)
        got = get_metric("huber").compute(y, p, w, alpha=alpha)
        assert got == pytest.approx(expected, rel=1e-12)
    # both branches must have been used for the test to mean something
    assert (d <= 0.9).any() and (d > 0.9).any()
    assert get_metric("huber").compute(y, p, w) == pytest.approx(
        get_metric("huber").compute(y, p, w, alpha=0.9), rel=0
    )


@pytest.mark.parametrize("name", [n for n in KIND if n != "auc"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_partial_sums_add_up(name, seed, weighted):
    m = get_metric(name)
    rng = np.random.default_rng(seed)
    w = _weights(rng, weighted)
    y, p = _data(KIND[name], rng)
    h = N // 3
    parts = [m.partial(y[s], p[s], None if w is None else w[s]) for s in (slice(0, h), slice(h, N))]
    assert all(s.dtype == np.float64 for s in parts)
    whole = m.compute(y, p, w)
    assert m.finalize(parts[0] + parts[1]) == pytest.approx(whole, rel=1e-12)
    np.testing.assert_allclose(parts[0] + parts[1], m.partial(y, p, w), rtol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_auc_with_ties(seed, weighted):
    rng = np.random.default_rng(seed)
    w = _weights(rng, weighted)
    y = rng.integers(0, 2, N).astype(float)
    p = np.round(rng.uniform(size=N), 1)  # 11 distinct values: many ties
    assert len(np.unique(p)) < 20
    assert get_metric("auc").compute(y, p, w) == pytest.approx(
        skm.roc_auc_score(y, p, sample_weight=w), rel=1e-12
    )


def test_auc_hand_example_and_one_class():
    auc = get_metric("auc")
    y = np.array([1, 0, 1, 0])
    p = np.array([0.9, 0.5, 0.5, 0.1])
    # pairs (pos, neg): (0.9,0.5)=1 (0.9,0.1)=1 (0.5,0.5)=0.5 (0.5,0.1)=1 -> 3.5/4
    assert auc.compute(y, p) == 0.875
    assert auc.compute(np.ones(5), np.linspace(0, 1, 5)) == 1.0
    assert auc.compute(np.zeros(5), np.linspace(0, 1, 5)) == 1.0
    # a label > 0 that is not 1 still counts as positive (LightGBM: label > 0)
    assert auc.compute(y * 2.0, p) == 0.875


def test_lightgbm_edge_rules():
    be = get_metric("binary_error")
    # prob exactly 0.5 predicts class 0
    assert be.compute([0, 1], [0.5, 0.5]) == 0.5
    assert be.compute([1], [0.5]) == 1.0 and be.compute([0], [0.5]) == 0.0
    me = get_metric("multi_error")
    tie = np.array([[0.4, 0.4, 0.2]])
    # a tie with the true class is an error for LightGBM, whichever class is true
    assert me.compute([0], tie) == 1.0 and me.compute([1], tie) == 1.0
    assert me.compute([1], tie, multi_error_top_k=2) == 0.0
    assert me.compute([2], np.array([[0.5, 0.3, 0.2]]), multi_error_top_k=2) == 1.0
    # clipping: log loss of a certain wrong answer is -log(float32(1e-15))
    cap = float(-np.log(np.float32(1e-15)))
    assert get_metric("binary_logloss").compute([1, 0], [0.0, 1.0]) == pytest.approx(cap, rel=1e-15)
    assert get_metric("multi_logloss").compute([2], np.array([[0.5, 0.5, 0.0]])) == pytest.approx(
        cap, rel=1e-15
    )
    # and no clipping just above the threshold
    assert get_metric("binary_logloss").compute([1], [1e-10]) == pytest.approx(
        -np.log(1e-10), rel=1e-15
    )


def test_errors():
    with pytest.raises(ValueError, match=r"'nope'.*l2.*multi_error"):
        get_metric("nope")
    assert get_metric("mse") is METRICS["l2"]
    assert get_metric("RMSE") is METRICS["rmse"]
    with pytest.raises(ValueError, match="pred must have shape"):
        get_metric("l2").compute([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="weight"):
        get_metric("l2").compute([1.0, 2.0], [1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="multiclass label"):
        get_metric("multi_error").compute([3.0], np.ones((1, 3)) / 3)
    with pytest.raises(TypeError):
        get_metric("l2").compute([1.0], [1.0], alpha=0.5)  # l2 takes no alpha


# --- agreement with LightGBM's own evaluation ------------------------------


def _lgb_eval(lgb, params, X, y, w, n_rounds=3):
    """Train on (X, y, w) validating on the same data; return (model, results)."""
    data = lgb.Dataset(X, y, weight=w)
    valid = lgb.Dataset(X, y, weight=w, reference=data)
    record = {}
    model = lgb.train(
        {"verbose": -1, "num_leaves": 4, "min_data_in_leaf": 5, "num_threads": 1, **params},
        data,
        n_rounds,
        valid_sets=[valid],
        callbacks=[lgb.record_evaluation(record)],
    )
    return model, record["valid_0"]


def _f32(x):
    # LightGBM stores labels and weights as float32 (label_t)
    return None if x is None else np.asarray(x, dtype=np.float32).astype(np.float64)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
def test_agrees_with_lightgbm(task, weighted):
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(7)
    n = 400
    X = rng.normal(size=(n, 3))
    w = _f32(_weights(rng, weighted, n))
    kw = {}
    if task == "regression":
        y = _f32(X[:, 0] + rng.normal(scale=1.0, size=n))
        names = ["l2", "rmse", "l1", "huber"]
        params = {"objective": "regression", "alpha": 0.7}
        kw = {"huber": {"alpha": 0.7}}
    elif task == "binary":
        y = (X[:, 0] + rng.normal(size=n) > 0).astype(float)
        names = ["binary_logloss", "binary_error", "auc"]
        params = {"objective": "binary"}
    else:
        y = np.digitize(X[:, 0] + rng.normal(scale=0.5, size=n), [-0.5, 0.5]).astype(float)
        names = ["multi_logloss", "multi_error"]
        params = {"objective": "multiclass", "num_class": 3}
    model, record = _lgb_eval(lgb, {**params, "metric": names}, X, y, w)
    pred = model.predict(X)
    assert set(record) == set(names)
    for name in names:
        ours = get_metric(name).compute(y, pred, w, **kw.get(name, {}))
        assert ours == pytest.approx(record[name][-1], rel=1e-10, abs=1e-12), name


# --------------------------------------------------------------------------- #
# auc_mu (LightGBM's AucMuMetric)
# --------------------------------------------------------------------------- #
def _naive_auc_mu(label, raw, weight, W):
    """Pairs of rows of classes i < j compared one by one, ties half."""
    k = raw.shape[1]
    w = np.ones(len(label)) if weight is None else weight
    total = 0.0
    for i in range(k):
        for j in range(i + 1, k):
            v = W[i] - W[j]
            dist = (v[i] - v[j]) * (raw @ v)
            s = 0.0
            for a in np.flatnonzero(label == i):
                for b in np.flatnonzero(label == j):
                    s += (
                        w[a]
                        * w[b]
                        * (1.0 if dist[b] < dist[a] else 0.5 if dist[b] == dist[a] else 0.0)
                    )
            total += s / w[label == i].sum() / w[label == j].sum()
    return 2.0 * total / k / (k - 1)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("matrix", [False, True])
def test_auc_mu_against_a_naive_twin(seed, weighted, matrix):
    from dgbdt.objective.metrics import auc_mu

    rng = np.random.default_rng(seed)
    n, k = 80, 4
    label = rng.integers(0, k, n).astype(float)
    raw = np.round(rng.normal(size=(n, k)), 1)  # many ties
    weight = _weights(rng, weighted, n)
    W = rng.uniform(0.5, 3.0, (k, k)) * (1 - np.eye(k)) if matrix else None
    expected = _naive_auc_mu(label, raw, weight, np.ones((k, k)) - np.eye(k) if W is None else W)
    assert auc_mu(label, raw, weight, W) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("matrix", [False, True])
def test_auc_mu_equals_lightgbm(weighted, matrix):
    lgb = pytest.importorskip("lightgbm")
    from sklearn.datasets import make_classification

    from dgbdt.objective.metrics import auc_mu

    X, y = make_classification(600, 8, n_informative=5, n_classes=5, random_state=0)
    rng = np.random.default_rng(1)
    # LightGBM stores weights as float32
    weight = rng.uniform(0.5, 2.0, len(y)).astype(np.float32) if weighted else None
    params = {
        "objective": "multiclass",
        "num_class": 5,
        "metric": "auc_mu",
        "verbose": -1,
        "num_leaves": 7,
    }
    W = None
    if matrix:
        W = np.arange(25, dtype=float).reshape(5, 5) % 7 + 1
        np.fill_diagonal(W, 0)
        params["auc_mu_weights"] = W.ravel().tolist()
    rec = {}
    booster = lgb.train(
        params,
        lgb.Dataset(X, y),
        3,
        valid_sets=[lgb.Dataset(X, y, weight=weight)],
        callbacks=[lgb.record_evaluation(rec)],
    )
    ours = [
        auc_mu(
            y,
            booster.predict(X, raw_score=True, num_iteration=i),
            None if weight is None else weight.astype(np.float64),
            W,
        )
        for i in (1, 2, 3)
    ]
    np.testing.assert_allclose(ours, rec["valid_0"]["auc_mu"], rtol=1e-12)


def test_auc_mu_weights_are_checked_like_lightgbm():
    from dgbdt.params.table import resolve_params

    base = {"objective": "multiclass", "num_class": 3, "metric": "auc_mu"}
    cfg = resolve_params({**base, "auc_mu_weights": "0,1,2,3,0,4,5,6,0"})
    assert cfg["auc_mu_weights"] == (0, 1, 2, 3, 0, 4, 5, 6, 0)
    assert resolve_params(base)["auc_mu_weights"] is None
    with pytest.raises(ValueError, match="must have num_class\\^2 = 9 values"):
        resolve_params({**base, "auc_mu_weights": [1, 2]})
    with pytest.raises(ValueError, match="non-zero off the diagonal; position 1"):
        resolve_params({**base, "auc_mu_weights": [0, 0, 1, 1, 0, 1, 1, 1, 0]})
    with pytest.raises(ValueError, match="auc_mu_weights"):
        resolve_params({**base, "auc_mu_weights": "0,x,1"})
    with pytest.raises(ValueError, match="does not fit objective 'binary'"):
        resolve_params({"objective": "binary", "metric": "auc_mu"})


def test_auc_mu_in_training_uses_raw_scores_over_every_rank_alike():
    import dgbdt
    from dgbdt.objective.metrics import auc_mu

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.5, 0.5]).astype(float)
    rec = {}
    booster = dgbdt.train(
        {
            "objective": "multiclass",
            "num_class": 3,
            "verbosity": -1,
            "metric": "auc_mu",
            "num_leaves": 5,
        },
        dgbdt.Dataset(X, y),
        3,
        valid_sets=[dgbdt.Dataset(X, y)],
        callbacks=[dgbdt.record_evaluation(rec)],
    )
    expected = auc_mu(y, booster.predict(X, raw_score=True))
    assert rec["valid_0"]["auc_mu"][-1] == pytest.approx(expected, rel=1e-12)
