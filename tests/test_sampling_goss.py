"""GOSS and balanced bagging (dgbdt.boosting.sampling): against naive numpy twins,
independent of how rows are sharded (threads standing in for ranks here,
mpiexec in the distributed tests), LightGBM's unsampled first iterations,
parameter checks, and accuracy next to plain gbdt."""

import importlib.util
import json
import threading
import warnings

import numpy as np
import pytest
from dgbdt.native import common
from dgbdt.native.random import uniform_from_counter
from mpi_launch import TESTS, run_mpi

import dgbdt
from dgbdt.boosting.sampling import Sampler, global_top_threshold
from dgbdt.distributed.comm import SerialComm
from dgbdt.params.table import resolve_params
from dgbdt.streams import STREAM_BAGGING, STREAM_GOSS, stream_key
from dgbdt.treelearner.quantization import GradientQuantizer

QUIET = {"verbosity": -1}


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #
class _Shared:
    def __init__(self, k):
        self.slots = [None] * k
        self.barrier = threading.Barrier(k, timeout=60)


class ThreadComm(SerialComm):
    """Rank ``rank`` of ``k`` threads: allreduce over the threads (a stand-in for
    MPI in one process; the reduction is exact for the integer counts)."""

    def __init__(self, rank, shared):
        super().__init__()
        self.rank, self.size, self.shared = rank, len(shared.slots), shared

    def allreduce(self, values, op="sum"):
        shared = self.shared
        shared.slots[self.rank] = np.array(values, copy=True)
        shared.barrier.wait()
        stacked = np.stack(shared.slots)
        out = {"sum": stacked.sum(0), "min": stacked.min(0), "max": stacked.max(0)}[op]
        shared.barrier.wait()  # nobody overwrites a slot before every rank has read
        return out.astype(stacked.dtype)


def on_threads(bounds, work):
    """``work(comm, lo, hi)`` for each shard ``(lo, hi)`` on its own thread; results in order."""
    shared = _Shared(len(bounds))
    results, errors = [None] * len(bounds), []

    def run(rank):
        try:
            results[rank] = work(ThreadComm(rank, shared), *bounds[rank])
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)
            shared.barrier.abort()

    threads = [threading.Thread(target=run, args=(r,)) for r in range(len(bounds))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def shards(n, fractions):
    cuts = np.concatenate([[0], np.round(np.cumsum(fractions) * n).astype(int)])
    cuts[-1] = n
    return [(int(cuts[r]), int(cuts[r + 1])) for r in range(len(fractions))]


SHARDINGS = [[1.0], [0.3, 0.7], [0.5, 0.0, 0.5], [0.1, 0.4, 0.0, 0.5]]


def gradients(n, k, seed, ties):
    """(k, n) float32 gradients and hessians; with ``ties`` few distinct values
    (many rows share the threshold)."""
    rng = np.random.default_rng(seed)
    if ties:
        g = rng.integers(-3, 4, size=(k, n)) / 4.0
        h = np.full((k, n), 0.25)
    else:
        g = rng.normal(size=(k, n)) * np.exp(rng.normal(scale=3, size=(k, n)))
        h = rng.random((k, n)) * 0.25
    return g.astype(common.GRAD_DTYPE), h.astype(common.GRAD_DTYPE)


def naive_goss(g, h, top_rate, other_rate, seed, iteration):
    """The GOSS round of dgbdt.boosting.sampling, written out row by row: (bag, g, h)."""
    k, n = g.shape
    r = np.zeros(n, np.float32)
    for i in range(n):
        for c in range(k):
            r[i] = np.float32(r[i] + np.float32(abs(g[c, i] * h[c, i])))
    top_k = max(1, int(n * top_rate))
    other_k = int(n * other_rate)
    threshold = sorted(r, reverse=True)[top_k - 1]
    key = stream_key(STREAM_GOSS, iteration)
    g, h = g.copy(), h.copy()
    multiply = np.float32(n - top_k) / np.float32(other_k)
    bag = []
    for i in range(n):
        if r[i] >= threshold:
            bag.append(i)
        elif uniform_from_counter(seed, key, i) < other_k / (n - top_k):
            bag.append(i)
            g[:, i] *= multiply
            h[:, i] *= multiply
    return np.array(bag, np.int64), g, h, int(np.sum(r == threshold))


def goss_cfg(rates):
    return resolve_params(
        {"data_sample_strategy": "goss", "top_rate": rates[0], "other_rate": rates[1], "seed": 4}
    )


def bagging_seed(cfg):
    return (cfg["bagging_seed"] + cfg["seed"]) & 0x7FFFFFFF


def goss_on_shards(g, h, rates, fractions, iteration=12):
    """GOSS round ``iteration`` (sampled: learning_rate 0.1 skips 10) by one
    Sampler per shard of rows, ``fractions`` of them: (global bag, g, h)."""
    g, h, cfg = g.copy(), h.copy(), goss_cfg(rates)

    def work(comm, lo, hi):
        gs, hs = g[:, lo:hi].copy(), h[:, lo:hi].copy()
        sampler = Sampler(cfg, hi - lo, lo, np.arange(2, dtype=np.int32), row_comm=comm)
        sampler.start_round(iteration, 0, gs, hs)
        return sampler.bag.astype(np.int64) + lo, gs, hs

    parts = on_threads(shards(g.shape[1], fractions), work)
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts], axis=1),
        np.concatenate([p[2] for p in parts], axis=1),
    )


def _binary_data(n=2000, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    logit = 2.0 * X[:, 0] - 1.5 * X[:, 1] * (X[:, 2] > 0) + X[:, 3]
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float64)
    return X, y


def _train(params, X, y, rounds, **kw):
    return dgbdt.train({**QUIET, **params}, dgbdt.Dataset(X, y), rounds, **kw)


def _same_trees(a, b):
    """Boosters (or lists of trees) with the same trees, bit for bit."""
    a, b = getattr(a, "trees", a), getattr(b, "trees", b)
    assert len(a) == len(b)
    for i, (ta, tb) in enumerate(zip(a, b, strict=True)):
        for name in ("split_feature", "threshold", "leaf_value"):
            x, y = getattr(ta, name), getattr(tb, name)
            assert x.tobytes() == y.tobytes(), f"tree {i} {name}"


# --------------------------------------------------------------------------- #
# GOSS: the sample
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("rates", [(0.2, 0.1), (0.05, 0.5), (0.5, 0.5)])
def test_goss_sample_equals_naive_twin(seed, k, ties, rates):
    n = 1500
    g, h = gradients(n, k, seed, ties)
    seed = bagging_seed(goss_cfg(rates))
    want_bag, want_g, want_h, n_tied = naive_goss(g, h, *rates, seed, 12)
    bag, g2, h2 = goss_on_shards(g, h, rates, [1.0])
    np.testing.assert_array_equal(bag, want_bag)
    assert g2.tobytes() == want_g.tobytes() and h2.tobytes() == want_h.tobytes()
    if ties:
        assert n_tied > 1  # the threshold is shared: every tied row is kept
    top_k, other_k = max(1, int(n * rates[0])), int(n * rates[1])
    amplified = np.flatnonzero(np.any(g2 != g, axis=0) | np.any(h2 != h, axis=0))
    assert np.all(np.isin(amplified, bag))
    # roughly other_k sampled rows beside (at least) top_k large ones
    assert len(bag) >= top_k
    assert abs((len(bag) - top_k) - other_k) < 5 * np.sqrt(other_k) + n_tied


@pytest.mark.parametrize("fractions", SHARDINGS[1:], ids=["2 ranks", "3 ranks", "4 ranks"])
@pytest.mark.parametrize("ties", [False, True])
def test_goss_does_not_depend_on_the_sharding(fractions, ties):
    g, h = gradients(2000, 2, 5, ties)
    one = goss_on_shards(g, h, (0.2, 0.1), [1.0])
    many = goss_on_shards(g, h, (0.2, 0.1), fractions)
    np.testing.assert_array_equal(one[0], many[0])
    assert one[1].tobytes() == many[1].tobytes() and one[2].tobytes() == many[2].tobytes()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_global_top_threshold_is_the_exact_order_statistic(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    scores = (np.abs(rng.normal(size=n)) * np.exp(rng.normal(scale=20, size=n))).astype(np.float32)
    scores[:300] = 0.0
    scores[300:400] = np.float32(1e-44)  # subnormal
    scores[400:500] = scores[500]  # ties
    for top_k in (1, 2, 7, 300, 2600, 2701, n):
        want = np.sort(scores)[::-1][top_k - 1]
        for fractions in SHARDINGS:
            got = on_threads(
                shards(n, fractions),
                lambda comm, lo, hi, top_k=top_k: global_top_threshold(scores[lo:hi], top_k, comm),
            )
            assert all(t.view(np.float32) == want for t in got), (top_k, fractions)


def test_goss_with_few_rows():
    # n = 1: the one row is the top row; n = 5: other_k = 0, nothing sampled
    for n in (1, 5):
        g, h = gradients(n, 1, 0, False)
        bag, g2, _ = goss_on_shards(g, h, (0.2, 0.1), [1.0])
        assert len(bag) == 1 and g2.tobytes() == g.tobytes()


# --------------------------------------------------------------------------- #
# GOSS: in training
# --------------------------------------------------------------------------- #
def test_goss_skips_the_first_iterations():
    cfg = resolve_params({"data_sample_strategy": "goss", "learning_rate": 0.3})
    g0, h0 = gradients(1000, 1, 0, False)
    sampler = Sampler(cfg, 1000, 0, np.arange(3, dtype=np.int32), label=np.zeros(1000))
    for it in range(5):  # int(1 / 0.3) = 3 unsampled iterations
        g, h = g0.copy(), h0.copy()
        sampler.start_round(it, 0, g, h)
        assert sampler.bagged == (it >= 3)
        assert (g.tobytes() == g0.tobytes()) == (it < 3)
    # trained: the first int(1 / 0.1) = 10 rounds equal plain gbdt, the next differs
    X, y = _binary_data()
    params = {"objective": "binary", "learning_rate": 0.1, "num_leaves": 7}
    goss = _train({**params, "data_sample_strategy": "goss"}, X, y, 11)
    plain = _train(params, X, y, 11)
    _same_trees(goss.trees[:10], plain.trees[:10])
    assert goss.trees[10].leaf_value.tobytes() != plain.trees[10].leaf_value.tobytes()


def test_goss_first_iterations_equal_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y = _binary_data()
    params = {"objective": "binary", "learning_rate": 0.25, "num_leaves": 7, "seed": 3}
    ours = _train({**params, "data_sample_strategy": "goss"}, X, y, 4)
    theirs = lgb.train({**params, **QUIET, "data_sample_strategy": "goss"}, lgb.Dataset(X, y), 4)
    np.testing.assert_allclose(
        ours.predict(X, raw_score=True), theirs.predict(X, raw_score=True), rtol=0, atol=1e-5
    )


def test_goss_with_a_custom_objective_equals_the_builtin_one():
    X, y = _binary_data()
    y = y + 0.1 * X[:, 4]  # regression
    params = {"learning_rate": 0.3, "num_leaves": 7, "data_sample_strategy": "goss"}
    returned = []

    def l2(preds, train_set):
        grad, hess = preds - train_set.get_label(), np.ones_like(preds)
        returned.append((grad, grad.copy()))
        return grad, hess

    builtin = _train({**params, "objective": "regression", "boost_from_average": False}, X, y, 8)
    custom = _train({**params, "objective": l2}, X, y, 8)
    assert (
        custom.trees[7].leaf_value.tobytes()
        != _train({**params, "objective": l2, "data_sample_strategy": "bagging"}, X, y, 8)
        .trees[7]
        .leaf_value.tobytes()
    )
    np.testing.assert_allclose(
        custom.predict(X, raw_score=True), builtin.predict(X, raw_score=True), atol=1e-9
    )
    # GOSS amplified dgbdt's copy of the gradients, never the objective's arrays
    assert all(a.tobytes() == b.tobytes() for a, b in returned)


def test_quantized_training_quantizes_the_sampled_gradients(monkeypatch):
    seen = []
    start_round, quantize = Sampler.start_round, GradientQuantizer.quantize

    def recording_start(self, it, first_iter, g=None, h=None):
        start_round(self, it, first_iter, g, h)
        seen.append(("sampled", it, g[0].copy()))

    def recording_quantize(self, g, h, tree_index):
        seen.append(("quantized", tree_index, g.copy()))
        return quantize(self, g, h, tree_index)

    monkeypatch.setattr(Sampler, "start_round", recording_start)
    monkeypatch.setattr(GradientQuantizer, "quantize", recording_quantize)
    X, y = _binary_data()
    params = {"objective": "binary", "learning_rate": 0.5, "data_sample_strategy": "goss"}
    _train({**params, "use_quantized_grad": True, "num_leaves": 7}, X, y, 5)
    assert [s[:2] for s in seen] == [
        (kind, it) for it in range(5) for kind in ("sampled", "quantized")
    ]
    for (_, _, sampled), (_, _, quantized) in zip(seen[::2], seen[1::2], strict=True):
        assert sampled.tobytes() == quantized.tobytes()
    assert seen[-1][2].max() > seen[0][2].max()  # amplified rows reach the quantizer


@pytest.mark.parametrize("strategy", ["goss", "balanced"])
def test_resumed_training_draws_what_uninterrupted_training_does(strategy, tmp_path):
    X, y = _binary_data(n=800)
    params = {"objective": "binary", "learning_rate": 0.4, "num_leaves": 7}
    if strategy == "goss":
        params["data_sample_strategy"] = "goss"
    else:
        params.update(pos_bagging_fraction=0.6, neg_bagging_fraction=0.4, bagging_freq=3)
    full = _train(params, X, y, 9)
    _train(params, X, y, 4).save_model(tmp_path / "m.json")
    resumed = _train(params, X, y, 5, init_model=str(tmp_path / "m.json"))
    _same_trees(full, resumed)


# --------------------------------------------------------------------------- #
# balanced bagging
# --------------------------------------------------------------------------- #
def _balanced_cfg(**extra):
    return resolve_params(
        {
            "objective": "binary",
            "pos_bagging_fraction": 0.3,
            "neg_bagging_fraction": 0.8,
            "bagging_freq": 2,
            "seed": 1,
            **extra,
        }
    )


def test_balanced_bagging_equals_naive_twin_and_keeps_the_fractions():
    cfg = _balanced_cfg()
    n = 20000
    label = (np.random.default_rng(0).random(n) < 0.25).astype(np.float64)
    sampler = Sampler(cfg, n, 0, np.arange(2, dtype=np.int32), label=label)
    seed = (cfg["bagging_seed"] + cfg["seed"]) & 0x7FFFFFFF
    bags = []
    for it in range(4):
        sampler.start_round(it, 0)
        bags.append(sampler.bag)
        drawn_at = it - it % 2
        key = stream_key(STREAM_BAGGING, drawn_at)
        want = [
            i
            for i in range(n)
            if uniform_from_counter(seed, key, i) < (0.3 if label[i] > 0 else 0.8)
        ]
        np.testing.assert_array_equal(sampler.bag, want)
        kept = np.zeros(n, bool)
        kept[sampler.bag] = True
        pos = label > 0
        assert abs(kept[pos].mean() - 0.3) < 4 * np.sqrt(0.3 * 0.7 / pos.sum())
        assert abs(kept[~pos].mean() - 0.8) < 4 * np.sqrt(0.8 * 0.2 / (~pos).sum())
    assert bags[0] is bags[1] and bags[2] is bags[3] and bags[1] is not bags[2]


def test_balanced_bagging_is_decided_from_every_ranks_labels():
    # the first shard holds no positive row: it still bags its rows with the
    # negative fraction, as one process does
    n = 3000
    label = np.zeros(n)
    label[2000:] = 1.0
    cfg = _balanced_cfg()

    def work(comm, lo, hi):
        s = Sampler(
            cfg, hi - lo, lo, np.arange(2, dtype=np.int32), label=label[lo:hi], row_comm=comm
        )
        s.start_round(0, 0)
        return s.bag.astype(np.int64) + lo

    one = np.concatenate(on_threads(shards(n, [1.0]), work))
    two = np.concatenate(on_threads(shards(n, [0.6, 0.4]), work))
    np.testing.assert_array_equal(one, two)
    assert len(one) < 0.7 * n


def test_balanced_bagging_only_for_binary():
    X, y = _binary_data(n=600)
    balanced = {"pos_bagging_fraction": 0.5, "neg_bagging_fraction": 0.5, "bagging_freq": 1}
    with pytest.warns(UserWarning, match="'binary' only.*'regression'"):
        reg = _train({"objective": "regression", **balanced}, X, y, 3)
    _same_trees(reg, _train({"objective": "regression"}, X, y, 3))  # ignored
    with pytest.warns(UserWarning, match="'binary' only"):
        # ignored, and plain bagging_fraction still applies, as in LightGBM
        reg = _train({"objective": "regression", "bagging_fraction": 0.5, **balanced}, X, y, 3)
    _same_trees(
        reg,
        _train({"objective": "regression", "bagging_fraction": 0.5, "bagging_freq": 1}, X, y, 3),
    )
    binary = _train({"objective": "binary", **balanced, "bagging_fraction": 0.9}, X, y, 3)
    plain = _train({"objective": "binary", "bagging_fraction": 0.5, "bagging_freq": 1}, X, y, 3)
    # equal fractions: the same draws as bagging_fraction=0.5 (bagging_fraction ignored)
    _same_trees(binary, plain)


# --------------------------------------------------------------------------- #
# parameters
# --------------------------------------------------------------------------- #
def test_parameter_errors_and_warnings():
    goss = {"data_sample_strategy": "goss"}
    with pytest.raises(
        ValueError, match=r"'top_rate'=0\.7 and 'other_rate'=0\.4 must sum to at most 1"
    ):
        resolve_params({**goss, "top_rate": 0.7, "other_rate": 0.4})
    resolve_params({**goss, "top_rate": 0.7, "other_rate": 0.3})  # = 1 is allowed
    resolve_params({"top_rate": 0.7, "other_rate": 0.4})  # only GOSS reads them
    with pytest.raises(ValueError, match="'top_rate' > 0 and 'other_rate' > 0"):
        resolve_params({**goss, "other_rate": 0.0})
    with pytest.raises(ValueError, match=r"Cannot use bagging.*'bagging_fraction'=0\.5"):
        resolve_params({**goss, "bagging_fraction": 0.5, "bagging_freq": 1})
    resolve_params({**goss, "bagging_fraction": 0.5})  # bagging_freq=0: no bagging
    with pytest.raises(ValueError, match="Parameter 'data_sample_strategy' must be one of"):
        resolve_params({"data_sample_strategy": "uniform"})
    with pytest.raises(
        ValueError, match=r"Parameter 'pos_bagging_fraction' must be a number in \(0, 1\]"
    ):
        resolve_params({"pos_bagging_fraction": 0.0})
    with pytest.warns(UserWarning, match="ignored with data_sample_strategy='goss'"):
        resolve_params({**goss, "neg_bagging_fraction": 0.5})
    with pytest.warns(UserWarning, match="need 'bagging_freq' > 0"):
        resolve_params({"objective": "binary", "neg_bagging_fraction": 0.5})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resolve_params({"objective": "binary", "neg_bagging_fraction": 0.5, "bagging_freq": 1})


def test_boosting_goss_is_lightgbms_deprecated_spelling():
    with pytest.warns(UserWarning, match="boosting='goss'.*data_sample_strategy='goss'"):
        p = resolve_params({"boosting_type": " GOSS ", "data_sample_strategy": "bagging"})
    assert p["boosting"] == "gbdt" and p["data_sample_strategy"] == "goss"
    assert resolve_params(p) == p
    X, y = _binary_data(n=600)
    with pytest.warns(UserWarning, match="boosting='goss'"):
        a = _train({"objective": "binary", "boosting": "goss", "learning_rate": 0.5}, X, y, 4)
    b = _train(
        {"objective": "binary", "data_sample_strategy": "goss", "learning_rate": 0.5}, X, y, 4
    )
    _same_trees(a, b)


# --------------------------------------------------------------------------- #
# accuracy
# --------------------------------------------------------------------------- #
def test_goss_and_balanced_bagging_reach_plain_gbdts_auc():
    from dgbdt.datasets import make_higgs_like
    from sklearn.metrics import roc_auc_score

    X, y = make_higgs_like(16000, seed=3)
    X_test, y_test = X[12000:], y[12000:]
    params = {"objective": "binary", "learning_rate": 0.1, "num_leaves": 31}
    aucs = {}
    for name, extra in {
        "plain": {},
        "goss": {"data_sample_strategy": "goss"},
        "balanced": {"pos_bagging_fraction": 0.5, "neg_bagging_fraction": 0.5, "bagging_freq": 1},
    }.items():
        booster = _train({**params, **extra}, X[:12000], y[:12000], 60)
        aucs[name] = roc_auc_score(y_test, booster.predict(X_test))
    assert aucs["plain"] > 0.8
    assert aucs["goss"] > aucs["plain"] - 0.01, aucs
    assert aucs["balanced"] > aucs["plain"] - 0.01, aucs


# --------------------------------------------------------------------------- #
# distributed: mpiexec
# --------------------------------------------------------------------------- #
_spec = importlib.util.spec_from_file_location("shard_data", TESTS / "mpi" / "shard_data.py")
shard_data = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shard_data)

MPI_BASE = {
    "objective": "binary",
    "num_leaves": 15,
    "learning_rate": 0.5,  # GOSS samples from round int(1 / 0.5) = 2
    "min_data_in_leaf": 10,
    "tree_learner": "data",
    **QUIET,
}
MPI_CASES = {
    "goss": {"data_sample_strategy": "goss", "top_rate": 0.25, "other_rate": 0.15},
    "balanced": {"pos_bagging_fraction": 0.4, "neg_bagging_fraction": 0.7, "bagging_freq": 2},
}


def _serial_records(monkeypatch, params, n_rounds):
    records = []
    start_round = Sampler.start_round

    def recording(self, it, first_iter, g=None, h=None):
        start_round(self, it, first_iter, g, h)
        records.append(
            (self.bag.astype(np.int64), g[:, self.bag].T.ravel(), h[:, self.bag].T.ravel())
        )

    monkeypatch.setattr(Sampler, "start_round", recording)
    X, y, _, _ = shard_data.make_data()
    booster = _train({**params, "tree_learner": "serial"}, X, y, n_rounds)
    return booster, records


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("case", list(MPI_CASES))
def test_data_parallel_sampling_equals_one_process(tmp_path, monkeypatch, k, case):
    params, n_rounds = {**MPI_BASE, **MPI_CASES[case]}, 6
    result = run_mpi(k, "train_goss.py", tmp_path, json.dumps(params), n_rounds)
    assert result.returncode == 0, result.stderr[-3000:]
    serial, records = _serial_records(monkeypatch, params, n_rounds)
    bags = np.load(tmp_path / "bags.npz")
    for i, (rows, g, h) in enumerate(records):
        np.testing.assert_array_equal(bags[f"rows{i}"], rows, err_msg=f"round {i}")
        assert bags[f"grad{i}"].tobytes() == g.tobytes(), f"round {i}"
        assert bags[f"hess{i}"].tobytes() == h.tobytes(), f"round {i}"
    assert len(records[-1][0]) < 0.8 * 3000  # rows were left out
    distributed = dgbdt.Booster(model_file=tmp_path / "model.json")
    assert distributed.num_trees() == serial.num_trees()
    for i, (ta, tb) in enumerate(zip(distributed.trees, serial.trees, strict=True)):
        np.testing.assert_array_equal(ta.split_feature, tb.split_feature, err_msg=f"tree {i}")
        np.testing.assert_array_equal(ta.threshold, tb.threshold, err_msg=f"tree {i}")
    _, _, X_valid, _ = shard_data.make_data()
    np.testing.assert_allclose(
        distributed.predict(X_valid, raw_score=True),
        serial.predict(X_valid, raw_score=True),
        rtol=0,
        atol=1e-6,
    )
