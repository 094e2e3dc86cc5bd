"""The metrics (dgbdt.objective.metrics): against scikit-learn, naive twins written
from LightGBM's formulas, the additive split, the distributed path, LightGBM's edge
rules and LightGBM itself.  l2 ... multi_error and auc_mu first; then LightGBM's
other regression / binary metrics (quantile ... kullback_leibler, average_precision,
r2) and multi_error@k.  The ranking metrics: tests/test_metrics_rank.py."""

import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from sklearn import metrics as skm

from dgbdt.boosting.evaluation import global_metric
from dgbdt.distributed.comm import SerialComm
from dgbdt.objective.metrics import METRICS, get_metric

SEEDS = [0, 1, 2]
N = 301  # odd, so the two halves differ in size
F32_1E10 = float(np.float32(1e-10))  # PoissonMetric / TweedieMetric clip at 1e-10f


def _f32(x):
    """LightGBM stores labels and weights as float32 (label_t)."""
    return None if x is None else np.asarray(x, np.float32).astype(np.float64)


def _weights(rng, weighted, n=N):
    return rng.uniform(0.1, 3.0, n) if weighted else None


def _f32_weights(rng, weighted, n=N):
    """The weights of ``_weights`` as LightGBM stores them (float32)."""
    return _f32(rng.uniform(0.1, 3.0, n)) if weighted else None


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
    # KIND and OTHER_KIND: the metrics of predictions; auc_mu takes raw scores;
    # average_precision and r2 are gathered, not sums (all tested below)
    # ndcg and map: tests/test_metrics_rank.py
    ranking = {"ndcg", "map"}
    assert (
        set(METRICS)
        == set(KIND) | set(OTHER_KIND) | {"auc_mu", "average_precision", "r2"} | ranking
    )
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


# --------------------------------------------------------------------------- #
# LightGBM's other regression / binary metrics (quantile ... kullback_leibler,
# average_precision, r2) and multi_error@k
# --------------------------------------------------------------------------- #
def _other_data(kind, rng, n=N):
    """(label, transformed pred) for each kind of metric, with edge values mixed in."""
    if kind == "regression":
        return _f32(rng.normal(scale=2.0, size=n)), rng.normal(scale=2.0, size=n)
    if kind == "count":  # poisson / tweedie: preds include values below the 1e-10f clip
        pred = np.exp(rng.normal(size=n))
        pred[:5] = [0.0, 1e-12, F32_1E10, 2e-10, 1e-300]
        return _f32(rng.poisson(2.0, n)), pred
    if kind == "positive":  # gamma: labels > 0
        return _f32(rng.gamma(2.0, 1.5, n)), np.exp(rng.normal(size=n))
    if kind == "unit":  # cross-entropy: labels in [0, 1], probabilities hitting the clip
        label = _f32(rng.uniform(size=n))
        label[:4] = [0.0, 1.0, 0.0, 1.0]
        pred = rng.uniform(size=n)
        pred[:8] = [0.0, 1.0, 1.0, 0.0, 1e-13, 1 - 1e-13, 0.5, 1e-12]
        return label, pred
    if kind == "lambda":  # cross_entropy_lambda: pred is hhat = log(1 + exp(raw))
        return _f32(rng.uniform(size=n)), np.log1p(np.exp(rng.normal(scale=2.0, size=n)))
    raise AssertionError(kind)


OTHER_KIND = {
    "quantile": "regression",
    "mape": "regression",
    "fair": "regression",
    "poisson": "count",
    "gamma": "positive",
    "gamma_deviance": "positive",
    "tweedie": "count",
    "cross_entropy": "unit",
    "cross_entropy_lambda": "lambda",
    "kullback_leibler": "unit",
}
OPTIONS = {
    "quantile": [{"alpha": 0.9}, {"alpha": 0.25}],
    "fair": [{"fair_c": 1.0}, {"fair_c": 0.3}],
    "tweedie": [{"tweedie_variance_power": 1.5}, {"tweedie_variance_power": 1.1}],
}


# --------------------------------------------------------------------------- #
# naive twins: one row at a time, straight from the formulas in LightGBM's source
# --------------------------------------------------------------------------- #
def _xent(y, p):
    """XentLoss; ``1 - y`` is LightGBM's float ``1.0f - label``."""
    one_minus_y = float(np.float32(1.0) - np.float32(y))
    a = y * math.log(p if p > 1e-12 else 1e-12)
    b = one_minus_y * math.log(1 - p if 1 - p > 1e-12 else 1e-12)
    return -(a + b)


def _yent(y):
    return (y * math.log(y) if y > 0 else 0.0) + ((1 - y) * math.log(1 - y) if 1 - y > 0 else 0.0)


def _tweedie_row(y, p, rho):
    p = max(p, F32_1E10)
    return -y * p ** (1 - rho) / (1 - rho) + p ** (2 - rho) / (2 - rho)


def _row_loss(name, y, p, w, kw):
    if name == "quantile":
        d = y - p
        return (kw["alpha"] - 1) * d if d < 0 else kw["alpha"] * d
    if name == "mape":
        return abs(y - p) / max(1.0, abs(y))
    if name == "fair":
        c, x = kw["fair_c"], abs(p - y)
        return c * x - c * c * math.log(1 + x / c)
    if name == "poisson":
        p = max(p, F32_1E10)
        return p - y * math.log(p)
    if name == "gamma":  # c = double log(y) - float log(y) (SafeLog<float>)
        return y / p + math.log(p) - (math.log(y) - float(np.float32(math.log(y))))
    if name == "gamma_deviance":
        t = y / (p + 1e-9)
        return t - math.log(t) - 1
    if name == "tweedie":
        return _tweedie_row(y, p, kw["tweedie_variance_power"])
    if name in ("cross_entropy", "kullback_leibler"):
        return _xent(y, p)
    if name == "cross_entropy_lambda":  # the weight enters the loss
        return _xent(y, 1 - math.exp(-w * p))
    raise AssertionError(name)


def _naive(name, label, pred, weight, **kw):
    w = np.ones(len(label)) if weight is None else weight
    loss = [_row_loss(name, y, p, wi, kw) for y, p, wi in zip(label, pred, w, strict=True)]
    if name == "cross_entropy_lambda":  # mean over rows, not over weights
        return sum(loss) / len(label)
    total = sum(li * wi for li, wi in zip(loss, w, strict=True))
    if name == "gamma_deviance":  # twice the weighted sum: not a mean
        return 2 * total
    value = total / sum(w)
    if name == "kullback_leibler":
        value += sum(_yent(y) * wi for y, wi in zip(label, w, strict=True)) / sum(w)
    return value


@pytest.mark.parametrize("name", list(OTHER_KIND))
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_against_a_naive_twin(name, seed, weighted):
    rng = np.random.default_rng(seed)
    w = _f32_weights(rng, weighted)
    y, p = _other_data(OTHER_KIND[name], rng)
    for kw in OPTIONS.get(name, [{}]):
        expected = _naive(name, y, p, w, **kw)
        assert np.isfinite(expected)
        assert get_metric(name).compute(y, p, w, **kw) == pytest.approx(expected, rel=1e-12), kw


@pytest.mark.parametrize("name", [*OTHER_KIND, "multi_error"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_partial_sums_over_two_halves_equal_the_whole(name, seed, weighted):
    m = get_metric(name)
    rng = np.random.default_rng(seed)
    w = _f32_weights(rng, weighted)
    if name == "multi_error":
        p = rng.uniform(size=(N, 4))
        y, kw = rng.integers(0, 4, N).astype(float), {"multi_error_top_k": 2}
    else:
        (y, p), kw = _other_data(OTHER_KIND[name], rng), OPTIONS.get(name, [{}])[-1]
    h = N // 3
    parts = [
        m.partial(y[s], p[s], None if w is None else w[s], **kw) for s in (slice(0, h), slice(h, N))
    ]
    assert all(s.dtype == np.float64 for s in parts)
    whole = m.compute(y, p, w, **kw)
    assert m.finalize(parts[0] + parts[1]) == pytest.approx(whole, rel=1e-12)
    np.testing.assert_allclose(parts[0] + parts[1], m.partial(y, p, w, **kw), rtol=1e-12)


# --------------------------------------------------------------------------- #
# average_precision and r2 (not sums: gathered)
# --------------------------------------------------------------------------- #
def _naive_average_precision(label, pred, weight):
    """Thresholds at each distinct score, best first; precision after a whole tie group."""
    w = np.ones(len(label)) if weight is None else weight
    pos_total = sum(wi for y, wi in zip(label, w, strict=True) if y > 0)
    if pos_total == 0 or pos_total == sum(w):
        return 1.0
    ap, tp, seen = 0.0, 0.0, 0.0
    for t in sorted(set(pred), reverse=True):
        group = [(y, wi) for y, p, wi in zip(label, pred, w, strict=True) if p == t]
        pos = sum(wi for y, wi in group if y > 0)
        tp, seen = tp + pos, seen + sum(wi for _, wi in group)
        ap += pos * tp / seen
    return ap / pos_total


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ties", [False, True])
def test_average_precision_against_a_naive_twin_and_sklearn(seed, weighted, ties):
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(seed)
    w = _f32_weights(rng, weighted)
    y = rng.integers(0, 2, N).astype(float) * rng.choice([1.0, 3.0], N)  # positive: label > 0
    p = np.round(rng.uniform(size=N), 1) if ties else rng.uniform(size=N)
    assert (len(np.unique(p)) < 20) == ties
    ap = get_metric("average_precision").compute(y, p, w)
    assert ap == pytest.approx(_naive_average_precision(y, p, w), rel=1e-12)
    assert ap == pytest.approx(average_precision_score(y > 0, p, sample_weight=w), rel=1e-12)


def test_average_precision_hand_example_and_one_class():
    ap = get_metric("average_precision")
    y = np.array([1, 0, 1, 0, 1])
    p = np.array([0.9, 0.8, 0.8, 0.1, 0.1])
    # groups: {0.9: +}, {0.8: -, +}, {0.1: -, +}: (1 * 1/1 + 1 * 2/3 + 1 * 3/5) / 3
    assert ap.compute(y, p) == pytest.approx((1 + 2 / 3 + 3 / 5) / 3, rel=1e-15)
    assert ap.compute(y, p, [1, 1, 1, 1, 3]) == pytest.approx(
        (1 + 2 / 3 + 3 * 5 / 7) / 5, rel=1e-15
    )
    for one_class in (np.ones(4), np.zeros(4)):
        assert ap.compute(one_class, np.linspace(0, 1, 4)) == 1.0
    assert ap.compute([], []) == 1.0
    assert ap.higher_better and ap.partial is None


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_r2_against_sklearn(seed, weighted):
    from sklearn.metrics import r2_score

    rng = np.random.default_rng(seed)
    w = _f32_weights(rng, weighted)
    y, p = _other_data("regression", rng)
    assert get_metric("r2").compute(y, p, w) == pytest.approx(
        r2_score(y, p, sample_weight=w), rel=1e-10
    )
    # R2Metric: a constant label gives 1.0 for a perfect fit, else 0.0
    assert get_metric("r2").compute(np.full(5, 2.0), np.full(5, 2.0)) == 1.0
    assert get_metric("r2").compute(np.full(5, 2.0), np.arange(5.0)) == 0.0


# --------------------------------------------------------------------------- #
# the distributed path: two ranks (threads) through evaluation.global_metric
# --------------------------------------------------------------------------- #
class _ThreadComm(SerialComm):
    """Rank ``rank`` of two ranks that are threads of this process."""

    def __init__(self, rank, hub):
        super().__init__()
        self.rank, self.size, self.hub = rank, 2, hub

    def _exchange(self, values):
        self.hub["slots"][self.rank] = np.asarray(values)
        self.hub["barrier"].wait(timeout=30)
        out = list(self.hub["slots"])
        self.hub["barrier"].wait(timeout=30)
        return out

    def allreduce(self, values, op="sum"):
        parts = self._exchange(values)
        return np.minimum(*parts) if op == "min" else parts[0] + parts[1]

    def allgatherv(self, values):
        parts = self._exchange(values)
        return np.concatenate(parts), np.array([len(q) for q in parts])


@pytest.mark.parametrize("name", [*OTHER_KIND, "average_precision", "r2"])
@pytest.mark.parametrize("weights", ["none", "both", "rank0"])
def test_two_ranks_agree_with_one_process(name, weights):
    rng = np.random.default_rng(5)
    kind = {"average_precision": "unit", "r2": "regression"}.get(name, OTHER_KIND.get(name))
    y, p = _other_data(kind, rng)
    w = _f32_weights(rng, weights != "none")
    h = N // 3
    shards = [(y[s], p[s], None if w is None else w[s]) for s in (slice(0, h), slice(h, N))]
    if weights == "rank0":  # rank 1 has no weights: its rows weigh 1
        shards[1] = shards[1][:2] + (None,)
        w = np.concatenate([w[:h], np.ones(N - h)])
    m, kw = get_metric(name), OPTIONS.get(name, [{}])[-1]
    hub = {"slots": [None, None], "barrier": threading.Barrier(2)}
    with ThreadPoolExecutor(2) as pool:
        futures = [
            pool.submit(global_metric, _ThreadComm(r, hub), m, *shards[r], kw) for r in (0, 1)
        ]
        values = [f.result(timeout=60) for f in futures]
    assert values[0] == values[1]
    assert values[0] == pytest.approx(m.compute(y, p, w, **kw), rel=1e-12)


# --------------------------------------------------------------------------- #
# LightGBM's rules at the edges
# --------------------------------------------------------------------------- #
def test_regression_edge_rules():
    q = get_metric("quantile")
    assert q.compute([1.0, 1.0], [0.0, 2.0], alpha=0.3) == pytest.approx((0.3 + 0.7) / 2)
    assert q.compute([1.0], [0.0]) == pytest.approx(0.9)  # alpha defaults to 0.9, as LightGBM
    mape = get_metric("mape")
    # the denominator is max(1, |label|): no blow-up at label 0
    assert mape.compute([0.5, -4.0, 0.0], [1.0, 0.0, 2.0]) == pytest.approx((0.5 + 1.0 + 2.0) / 3)
    # poisson / tweedie clip the prediction at 1e-10f, a float
    assert get_metric("poisson").compute([2.0], [0.0]) == F32_1E10 - 2.0 * math.log(F32_1E10)
    assert get_metric("poisson").compute([-1.0], [1.0]) == 1.0  # labels are not checked
    assert get_metric("tweedie").compute([1.0], [-5.0]) == pytest.approx(_tweedie_row(1, 0, 1.5))
    # gamma_deviance is twice the weighted sum, not a mean: twice the rows, twice the value
    gd = get_metric("gamma_deviance")
    y, p = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 1.0])
    assert gd.compute(np.tile(y, 2), np.tile(p, 2)) == pytest.approx(2 * gd.compute(y, p))
    assert gd.compute(y, p, [2.0, 2.0, 2.0]) == pytest.approx(2 * gd.compute(y, p))


def test_gamma_rules():
    g = get_metric("gamma")
    with np.errstate(all="ignore"):
        assert g.compute([1.0], [-1.0]) == np.inf  # SafeLog of a negative is -inf
        assert np.isnan(g.compute([1.0], [0.0]))
    for name in ("gamma", "gamma_deviance"):  # CHECK_GT(label, 0)
        for bad in (0.0, -1.0, np.nan):
            with pytest.raises(ValueError, match="labels > 0"):
                get_metric(name).compute([1.0, bad], [1.0, 1.0])
    # the float log of the label: c is log(y) - float32(log(y)), not 0
    y = float(np.float32(0.3))
    c = math.log(y) - float(np.float32(math.log(y)))
    assert c != 0.0
    assert g.compute([y], [1.0]) == y + 0.0 - c


def test_cross_entropy_rules():
    ce, kl, cl = (
        get_metric(n) for n in ("cross_entropy", "kullback_leibler", "cross_entropy_lambda")
    )
    # log arguments clipped at the double 1e-12
    assert ce.compute([1.0, 0.0], [0.0, 1.0]) == pytest.approx(-math.log(1e-12), rel=1e-15)
    assert ce.compute([1.0], [1.0]) == 0.0
    # 1 - label is LightGBM's float 1.0f - label
    y = float(np.float32(0.1))
    b = float(np.float32(1) - np.float32(y))
    assert b != 1.0 - y
    assert ce.compute([y], [0.25]) == -(y * math.log(0.25) + b * math.log(0.75))
    # KL(y || y) is 0, up to that float rounding
    y = _f32(np.linspace(0, 1, 11))
    assert kl.compute(y, y) == pytest.approx(0.0, abs=1e-7)
    # cross_entropy_lambda: p = 1 - exp(-w hhat), mean over rows (not weights)
    h = math.log1p(math.exp(0.4))
    assert cl.compute([1.0, 0.0], [h, h], [2.0, 1.0]) == pytest.approx(
        (-math.log(1 - math.exp(-2 * h)) - math.log(math.exp(-h))) / 2, rel=1e-14
    )
    for m in (ce, kl, cl):
        with pytest.raises(ValueError, match=r"labels in \[0, 1\]"):
            m.compute([0.5, 1.5], [0.5, 0.5])
        with pytest.raises(ValueError, match="weights"):
            m.compute([0.5, 0.5], [0.5, 0.5], [1.0, -1.0])
    with pytest.raises(ValueError, match="positive weights"):  # xentlambda: weights > 0
        cl.compute([0.5, 0.5], [0.5, 0.5], [1.0, 0.0])
    for m in (ce, kl):  # zero weights are fine, a zero sum of weights is not
        assert m.compute([0.5, 0.5], [0.5, 0.2], [1.0, 0.0]) == m.compute([0.5], [0.5])
        with pytest.raises(ValueError, match="sum of weights"):
            m.compute([0.5], [0.5], [0.0])


def test_names_aliases_and_options():
    from dgbdt.params.table import resolve_params

    assert [n for n, m in METRICS.items() if m.higher_better] == [
        "r2",
        "auc",
        "average_precision",
        "auc_mu",
        "ndcg",
        "map",
    ]
    aliases = {
        "mean_absolute_percentage_error": "mape",
        "xentropy": "cross_entropy",
        "xentlambda": "cross_entropy_lambda",
        "kldiv": "kullback_leibler",
    }
    for alias, name in aliases.items():
        assert get_metric(alias.upper()) is METRICS[name]
    assert all(not METRICS[n].aliases for n in ("quantile", "fair", "poisson", "gamma", "tweedie"))
    cfg = {"alpha": 0.3, "fair_c": 2.0, "tweedie_variance_power": 1.2, "multi_error_top_k": 3}
    assert METRICS["quantile"].options_from(cfg) == {"alpha": 0.3}
    assert METRICS["fair"].options_from(cfg) == {"fair_c": 2.0}
    assert METRICS["tweedie"].options_from(cfg) == {"tweedie_variance_power": 1.2}
    assert METRICS["multi_error"].options_from(cfg) == {"multi_error_top_k": 3}
    # LightGBM's MultiErrorMetric::Name
    me = METRICS["multi_error"]
    assert me.result_name(cfg) == "multi_error@3"
    assert me.result_name({**cfg, "multi_error_top_k": 1}) == "multi_error"
    assert METRICS["l2"].result_name(cfg) == "l2"
    resolved = resolve_params(
        {"objective": "multiclass", "num_class": 3, "metric": "multi_error", "multi_error_top_k": 2}
    )
    assert me.options_from(resolved) == {"multi_error_top_k": 2}
    assert me.result_name(resolved) == "multi_error@2"
    resolved = resolve_params({"objective": "regression", "metric": "quantile,mape,fair"})
    assert resolved["metric"] == ["quantile", "mape", "fair"]
    assert METRICS["quantile"].options_from(resolved) == {"alpha": 0.9}


def test_multi_error_top_k_reaches_the_training_metric():
    import dgbdt

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = np.digitize(X[:, 0] + rng.normal(size=300), [-1.0, 0.0, 1.0]).astype(float)
    params = {"objective": "multiclass", "num_class": 4, "verbosity": -1, "num_leaves": 4}
    rec = {}
    booster = dgbdt.train(
        {**params, "metric": "multi_error", "multi_error_top_k": 2},
        dgbdt.Dataset(X, y),
        3,
        valid_sets=[dgbdt.Dataset(X, y)],
        callbacks=[dgbdt.record_evaluation(rec)],
    )
    ((values),) = rec["valid_0"].values()  # named multi_error@2 once evaluation asks result_name
    me = get_metric("multi_error")
    expected = me.compute(y, booster.predict(X), multi_error_top_k=2)
    assert values[-1] == expected
    assert expected < me.compute(y, booster.predict(X))


# --------------------------------------------------------------------------- #
# agreement with LightGBM's own evaluation
# --------------------------------------------------------------------------- #
def _labels(kind, X, rng):
    n = len(X)
    if kind == "regression":
        return _f32(X[:, 0] + rng.normal(size=n))
    if kind == "count":
        return _f32(rng.poisson(np.exp(0.5 * X[:, 0])))
    if kind == "positive":
        return _f32(rng.gamma(2.0, np.exp(0.3 * X[:, 0])))
    if kind == "unit":
        return _f32(1 / (1 + np.exp(-X[:, 0] - rng.normal(size=n))))
    if kind == "binary":
        return (X[:, 0] + rng.normal(size=n) > 0).astype(float)
    return np.digitize(X[:, 0] + rng.normal(scale=0.5, size=n), [-1.0, 0.0, 1.0]).astype(float)


# (objective params, label kind, metrics, rounds)
LGB_CASES = {
    "regression": (
        {"objective": "regression", "alpha": 0.3, "fair_c": 0.7},
        "regression",
        ["quantile", "mape", "fair", "r2"],
        3,
    ),
    "poisson": ({"objective": "poisson"}, "count", ["poisson", "tweedie", "mape"], 3),
    "gamma": ({"objective": "gamma"}, "positive", ["gamma", "gamma_deviance"], 3),
    "tweedie": (
        {"objective": "tweedie", "tweedie_variance_power": 1.3},
        "count",
        ["tweedie", "poisson"],
        3,
    ),
    "xentropy": (
        {"objective": "cross_entropy"},
        "unit",
        ["cross_entropy", "kullback_leibler", "average_precision"],
        3,
    ),
    "xentlambda": ({"objective": "cross_entropy_lambda"}, "unit", ["cross_entropy_lambda"], 3),
    # two rounds of four leaves: at most 16 scores over 400 rows, many ties
    "binary_ties": ({"objective": "binary"}, "binary", ["average_precision"], 2),
    "multi_error@2": (
        {"objective": "multiclass", "num_class": 4, "multi_error_top_k": 2},
        "multiclass",
        ["multi_error"],
        3,
    ),
    "multi_error@3": (
        {"objective": "multiclass", "num_class": 4, "multi_error_top_k": 3},
        "multiclass",
        ["multi_error"],
        3,
    ),
}


def _lightgbm_weight_sum(w):
    """Common::ObtainMinMaxSum: LightGBM's cross_entropy / kullback_leibler sum of
    weights, accumulated in float32, pairwise, in row order."""
    w = np.asarray(w, np.float32)
    total, i = (w[0], 2) if len(w) % 2 else (w[0] + w[1], 3)
    for k in range(i, len(w), 2):
        total = np.float32(total + np.float32(w[k - 1] + w[k]))
    return float(total)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("case", list(LGB_CASES))
def test_other_metrics_agree_with_lightgbm(case, weighted):
    lgb = pytest.importorskip("lightgbm")
    params, kind, names, rounds = LGB_CASES[case]
    rng = np.random.default_rng(11)
    n = 400
    X = rng.normal(size=(n, 3))
    y = _labels(kind, X, rng)
    w = _f32_weights(rng, weighted, n)
    train = lgb.Dataset(X, y, weight=w)
    record = {}
    model = lgb.train(
        {"verbose": -1, "num_leaves": 4, "min_data_in_leaf": 5, "num_threads": 1, **params}
        | {"metric": names},
        train,
        rounds,
        valid_sets=[lgb.Dataset(X, y, weight=w, reference=train)],
        callbacks=[lgb.record_evaluation(record)],
    )
    cfg = {"alpha": 0.9, "fair_c": 1.0, "tweedie_variance_power": 1.5, "multi_error_top_k": 1}
    cfg.update({k: v for k, v in params.items() if k in cfg})
    metrics = [get_metric(name) for name in names]
    assert list(record["valid_0"]) == [m.result_name(cfg) for m in metrics]
    for i in range(1, rounds + 1):
        pred = model.predict(X, num_iteration=i)
        if case == "binary_ties" and i == rounds:
            assert len(np.unique(pred)) <= 16
        for m in metrics:
            theirs = record["valid_0"][m.result_name(cfg)][i - 1]
            ours = m.compute(y, pred, w, **m.options_from(cfg))
            if weighted and m.name in ("cross_entropy", "kullback_leibler"):
                # LightGBM sums these weights in float32: about 1e-7 apart; with that
                # sum (which no sum over ranks could reproduce) the values agree.
                assert ours == pytest.approx(theirs, rel=1e-6)
                sums = m.partial(y, pred, w)
                sums[-1] = _lightgbm_weight_sum(w)
                ours = m.finalize(sums)
            # gamma: glibc's logf is off by one float ulp on some labels (see _gamma)
            rel = 5e-9 if m.name == "gamma" else 1e-12
            assert ours == pytest.approx(theirs, rel=rel, abs=1e-15), (m.name, i)
