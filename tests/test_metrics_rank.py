"""The ranking metrics ndcg@k and map@k (LightGBM's NDCGMetric and MapMetric):
the kernels and the metrics against naive twins written from LightGBM's
definitions, against scikit-learn's ndcg_score, against LightGBM itself, their
names and errors, and over two ranks (threads, and mpiexec)."""

import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from dgbdt.native import rank_metric
from mpi_launch import TESTS, run_mpi

import dgbdt
from dgbdt.boosting.evaluation import EvalSet, Evaluator
from dgbdt.distributed.comm import SerialComm
from dgbdt.objective.metrics import get_metric
from dgbdt.objective.ranking import default_label_gain, discounts, query_boundaries
from dgbdt.params.table import resolve_params

sys.path.insert(0, str(TESTS / "mpi"))
from rank_metrics import EVAL_AT, query_cut, rank_data  # noqa: E402

KS = (1, 2, 3, 5, 10, 40)  # 40: beyond every query


# --------------------------------------------------------------------------- #
# naive twins, written from LightGBM's definitions
# --------------------------------------------------------------------------- #
def _ranked(score):
    """Row offsets by score descending, ties in row order (a stable sort)."""
    return sorted(range(len(score)), key=lambda i: -score[i])


def _twin_ndcg_query(label, score, ks, gains):
    """(NDCG at each k, trivial): maxDCG from the labels, the highest label first."""
    disc = [1.0 / np.log2(2.0 + j) for j in range(len(label))]
    order = _ranked(score)
    best = sorted((int(v) for v in label), reverse=True)
    max_dcg = [sum(disc[j] * gains[best[j]] for j in range(min(k, len(label)))) for k in ks]
    if max_dcg[0] <= 0:
        return [1.0] * len(ks), True
    out = []
    for k, m in zip(ks, max_dcg, strict=True):
        dcg = sum(gains[int(label[order[j]])] * disc[j] for j in range(min(k, len(label))))
        out.append(dcg * (1.0 / m if m > 0 else -1.0))
    return out, False


def _twin_map_query(label, score, ks):
    order = _ranked(score)
    npos = sum(1 for v in label if v > 0.5)
    out = []
    for k in ks:
        hits, ap = 0, 0.0
        for j in range(min(k, len(label))):
            if label[order[j]] > 0.5:
                hits += 1
                ap += hits / (j + 1.0)
        out.append(ap / min(npos, k) if npos > 0 else 1.0)
    return out


def _twin_query_weights(weight, b):
    """Metadata::CalculateQueryWeights: float32 sums in row order / row count."""
    w = np.asarray(weight, np.float32)
    out = []
    for lo, hi in zip(b[:-1], b[1:], strict=True):
        total = np.float32(0.0)
        for i in range(lo, hi):
            total = np.float32(total + w[i])
        out.append(float(total / np.float32(hi - lo)) if hi > lo else 0.0)
    return out


def _twin(name, label, score, weight, b, ks, gains=None):
    """The metric: sum_q w_q v_q / sum_q w_q; an NDCG-trivial query adds 1 unweighted."""
    label = np.asarray(label, np.float32)
    qw = [1.0] * (len(b) - 1) if weight is None else _twin_query_weights(weight, b)
    num = np.zeros(len(ks))
    for q, (lo, hi) in enumerate(zip(b[:-1], b[1:], strict=True)):
        if name == "ndcg":
            v, trivial = _twin_ndcg_query(label[lo:hi], score[lo:hi], ks, gains)
            num += 1.0 if trivial and weight is not None else np.array(v) * qw[q]
        else:
            num += np.array(_twin_map_query(label[lo:hi], score[lo:hi], ks)) * qw[q]
    return list(num / sum(qw))


# --------------------------------------------------------------------------- #
# kernels and metrics against the twins
# --------------------------------------------------------------------------- #
def test_kernels_per_query_equal_the_twins():
    label, score, weight, sizes = rank_data(seed=1, n_queries=40)
    b, ks, gains = query_boundaries(sizes), np.array(KS, np.int64), default_label_gain(None)
    lab32 = label.astype(np.float32)
    ndcg, trivial = np.empty((len(sizes), len(KS))), np.empty(len(sizes), np.uint8)
    rank_metric.ndcg_at(lab32, score, b, ks, gains, discounts(), ndcg, trivial)
    ap = np.empty((len(sizes), len(KS)))
    rank_metric.map_at(lab32, score, b, ks, ap)
    qw = np.empty(len(sizes), np.float32)
    rank_metric.query_weights(weight.astype(np.float32), b, qw)
    assert np.array_equal(qw, np.array(_twin_query_weights(weight, b), np.float32))
    for q, (lo, hi) in enumerate(zip(b[:-1], b[1:], strict=True)):
        v, t = _twin_ndcg_query(lab32[lo:hi], score[lo:hi], KS, gains)
        np.testing.assert_allclose(ndcg[q], v, rtol=1e-14, atol=0)
        assert bool(trivial[q]) == t
        np.testing.assert_allclose(ap[q], _twin_map_query(lab32[lo:hi], score[lo:hi], KS), 1e-14)
    assert trivial[0] and trivial[2] and np.all(ndcg[0] == 1.0) and np.all(ap[0] == 1.0)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("label_gain", [None, (0.0, 1.0, 3.0, 2.0, 9.0)])
def test_metrics_equal_the_twins(weighted, label_gain):
    label, score, weight, sizes = rank_data(seed=2, n_queries=50)
    weight = weight if weighted else None
    b = query_boundaries(sizes)
    gains = default_label_gain(label_gain)
    got = get_metric("ndcg").compute(
        label, score, weight, queries=b, eval_at=KS, label_gain=label_gain
    )
    np.testing.assert_allclose(got, _twin("ndcg", label, score, weight, b, KS, gains), 1e-13)
    got = get_metric("map").compute(label, score, weight, queries=b, eval_at=KS)
    np.testing.assert_allclose(got, _twin("map", label, score, weight, b, KS), 1e-13)


def test_edge_rules():
    ndcg, ap = get_metric("ndcg"), get_metric("map")
    b = np.array([0, 3], np.int64)
    # ties keep row order: the relevant row first or last among equal scores
    assert ndcg.compute([2, 0, 0], [1.0, 1.0, 1.0], queries=b, eval_at=[1]) == [1.0]
    assert ndcg.compute([0, 0, 2], [1.0, 1.0, 1.0], queries=b, eval_at=[1]) == [0.0]
    assert ap.compute([0, 1, 1], [1.0, 1.0, 1.0], queries=b, eval_at=[3]) == [(1 / 2 + 2 / 3) / 2]
    # all-zero and empty queries score 1; raw scores may be (n, 1)
    zero = np.array([0, 0, 3, 3], np.int64)
    assert ndcg.compute([0, 0, 0], np.zeros((3, 1)), queries=zero, eval_at=[1, 2]) == [1.0, 1.0]
    assert ap.compute([0, 0, 0], np.zeros(3), queries=zero, eval_at=[2]) == [1.0]
    # k beyond the query: every document counts; map divides by min(npos, k)
    assert ndcg.compute([1, 0, 0], [0.0, 1.0, 2.0], queries=b, eval_at=[40]) == [0.5]
    assert ap.compute([1, 0, 1], [3.0, 2.0, 1.0], queries=b, eval_at=[1, 40]) == pytest.approx(
        [1.0, 5 / 6], rel=1e-15
    )
    # no queries at all: 0 / 0, as LightGBM
    assert np.isnan(ap.compute([], [], queries=np.zeros(1, np.int64), eval_at=[1])[0])


def test_against_sklearn_ndcg_score():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(4)
    sizes = rng.integers(2, 15, 30)
    b = query_boundaries(sizes)
    label = rng.integers(0, 4, b[-1]).astype(float)
    label[b[:-1]] = 1.0  # every query has a relevant document
    score = rng.permutation(b[-1]) / 7.0  # no ties
    gains = tuple(float(i) for i in range(31))  # linear gains, as sklearn
    for k in (1, 3, 5, 20):
        want = np.mean(
            [
                sklearn_metrics.ndcg_score([label[lo:hi]], [score[lo:hi]], k=k)
                for lo, hi in zip(b[:-1], b[1:], strict=True)
            ]
        )
        got = get_metric("ndcg").compute(label, score, queries=b, eval_at=[k], label_gain=gains)
        assert got[0] == pytest.approx(want, rel=1e-12, abs=1e-15)


def _ranking_data(rng, n_queries):
    sizes = rng.integers(1, 12, n_queries)
    n = int(sizes.sum())
    X = rng.normal(size=(n, 4))
    label = np.clip(np.round(X[:, 0] + rng.normal(size=n)), 0, 3)
    label[: sizes[0]] = 0.0  # a query without relevant documents
    return X, label, sizes


def test_agrees_with_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(7)
    X, y, sizes = _ranking_data(rng, 40)
    Xv, yv, sizes_v = _ranking_data(rng, 25)
    w = rng.uniform(0.5, 2.0, len(y))
    params = {
        "objective": "lambdarank",
        "metric": ["ndcg", "map"],
        "eval_at": [5, 1, 3],  # LightGBM sorts them
        "num_leaves": 5,
        "min_data_in_leaf": 3,
        "verbosity": -1,
    }
    train = lgb.Dataset(X, y, group=sizes, weight=w)
    valid = lgb.Dataset(Xv, yv, group=sizes_v, reference=train)
    evals = {}
    booster = lgb.train(
        params,
        train,
        4,
        valid_sets=[train, valid],
        valid_names=["training", "valid_0"],
        callbacks=[lgb.record_evaluation(evals)],
    )
    cfg = resolve_params({"objective": "regression", "metric": "ndcg,map", "eval_at": [5, 1, 3]})
    for data, (X_, y_, s_, w_) in {
        "training": (X, y, sizes, w),
        "valid_0": (Xv, yv, sizes_v, None),
    }.items():
        raw = booster.predict(X_, raw_score=True)
        names, values = [], []
        for name in ("ndcg", "map"):
            m = get_metric(name)
            kw = {**m.options_from(cfg), "queries": query_boundaries(s_)}
            names += m.result_names(cfg)
            values += m.compute(y_, raw, w_, **kw)
        assert names == list(evals[data])
        want = [evals[data][n][-1] for n in names]
        np.testing.assert_allclose(values, want, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- #
# names, registration, errors
# --------------------------------------------------------------------------- #
def test_names_aliases_and_params():
    for alias in ("lambdarank", "rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart"):
        assert get_metric(alias).name == "ndcg"
    assert get_metric("mean_average_precision").name == "map"
    ndcg, ap = get_metric("ndcg"), get_metric("map")
    assert ndcg.higher_better and ap.higher_better and ndcg.queries and ap.queries
    cfg = resolve_params({"metric": "ndcg"})
    assert ndcg.result_names(cfg) == [f"ndcg@{k}" for k in (1, 2, 3, 4, 5)]
    cfg = resolve_params({"objective": "binary", "metric": "map", "map_at": "10,2"})
    assert ap.result_names(cfg) == ["map@2", "map@10"]
    assert get_metric("l2").result_names(cfg) == ["l2"]
    with pytest.raises(ValueError, match="metric 'ndcg' does not fit objective 'multiclass'"):
        resolve_params({"objective": "multiclass", "num_class": 3, "metric": "ndcg"})


def test_errors():
    ndcg = get_metric("ndcg")
    b = np.array([0, 2], np.int64)
    with pytest.raises(ValueError, match="the ndcg metric needs query groups"):
        ndcg.compute([1, 0], [0.0, 1.0])
    with pytest.raises(ValueError, match="the ndcg metric: label 1.5 at row 1: .*integers"):
        ndcg.compute([1, 1.5], [0.0, 1.0], queries=b)
    with pytest.raises(ValueError, match="the ndcg metric: label -1 at row 0"):
        ndcg.compute([-1, 0], [0.0, 1.0], queries=b)
    with pytest.raises(ValueError, match="label 3 at row 0: it has no gain"):
        ndcg.compute([3, 0], [0.0, 1.0], queries=b, label_gain=(0.0, 1.0, 3.0))
    with pytest.raises(ValueError, match="queries must be row boundaries"):
        get_metric("map").compute([1, 0], [0.0, 1.0], queries=[0, 3])


def test_training_reports_every_k_and_refuses_a_set_without_groups():
    rng = np.random.default_rng(0)
    X, y, sizes = _ranking_data(rng, 12)
    params = {"objective": "regression", "metric": ["ndcg", "map", "l2"], "eval_at": [3, 1]}
    params.update(verbosity=-1, num_leaves=4, min_data_in_leaf=3)
    train = dgbdt.Dataset(X, y, group=sizes)
    valid = dgbdt.Dataset(X, y, group=sizes, reference=train)
    evals = {}
    dgbdt.train(
        {**params, "is_provide_training_metric": True},
        train,
        2,
        valid_sets=[valid],
        callbacks=[dgbdt.record_evaluation(evals)],
    )
    names = ["ndcg@1", "ndcg@3", "map@1", "map@3", "l2"]
    assert list(evals) == ["training", "valid_0"] and list(evals["valid_0"]) == names
    assert evals["training"] == evals["valid_0"]
    with pytest.raises(ValueError, match="The ndcg metric needs query groups: 'valid_0' has none"):
        dgbdt.train(params, train, 1, valid_sets=[dgbdt.Dataset(X, y, reference=train)])


# --------------------------------------------------------------------------- #
# over ranks: whole queries on each rank add up exactly
# --------------------------------------------------------------------------- #
class _ThreadComm(SerialComm):
    """Rank ``rank`` of two ranks that are threads of this process."""

    def __init__(self, rank, hub):
        super().__init__()
        self.rank, self.size, self.hub = rank, 2, hub

    def allreduce(self, values, op="sum"):
        self.hub["slots"][self.rank] = np.asarray(values)
        self.hub["barrier"].wait(timeout=30)
        parts = list(self.hub["slots"])
        self.hub["barrier"].wait(timeout=30)
        return np.minimum(*parts) if op == "min" else parts[0] + parts[1]


def _shards(sizes, arrays):
    b = query_boundaries(sizes)
    cut = query_cut(sizes, 2)
    for r in (0, 1):
        rows = slice(b[cut[r]], b[cut[r + 1]])
        yield [a[rows] for a in arrays], b[cut[r] : cut[r + 1] + 1] - b[cut[r]]


def test_two_thread_ranks_equal_one_process():
    label, score, weight, sizes = rank_data()
    cfg = resolve_params({"metric": ["ndcg", "map"], "eval_at": list(EVAL_AT)})
    hub = {"slots": [None, None], "barrier": threading.Barrier(2)}

    def rank(r, shard):
        (lab, sc, w), queries = shard
        es = EvalSet("valid_0", None, sc[None, :].copy(), lab, w, queries)
        return Evaluator([es], cfg, None, 1, _ThreadComm(r, hub), None).results()

    with ThreadPoolExecutor(2) as pool:
        futures = [
            pool.submit(rank, r, s) for r, s in enumerate(_shards(sizes, (label, score, weight)))
        ]
        results = [f.result(timeout=60) for f in futures]
    assert results[0] == results[1]
    es = EvalSet("valid_0", None, score[None, :], label, weight, query_boundaries(sizes))
    whole = Evaluator([es], cfg, None, 1, SerialComm(), None).results()
    assert [r[:2] for r in whole] == [r[:2] for r in results[0]]
    np.testing.assert_allclose([r[2] for r in results[0]], [r[2] for r in whole], 1e-14)


def test_mpi_two_ranks_equal_one_process(tmp_path):
    result = run_mpi(2, "rank_metrics.py", tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    got = json.loads((tmp_path / "ranked.json").read_text())
    label, score, weight, sizes = rank_data()
    b = query_boundaries(sizes)
    for name in ("ndcg", "map"):
        want = get_metric(name).compute(label, score, weight, queries=b, eval_at=EVAL_AT)
        np.testing.assert_allclose(got[name], want, rtol=1e-14)
        names = [r[1] for r in got["evaluator"] if r[1].startswith(name)]
        assert names == [f"{name}@{k}" for k in EVAL_AT]
        values = [r[2] for r in got["evaluator"] if r[1].startswith(name)]
        np.testing.assert_allclose(values, want, rtol=1e-14)
    assert "The ndcg metric needs query groups: 'valid_0' has none on another rank" in (
        got["refused"] or ""
    )
