"""Ranking objectives (lambdarank, rank_xendcg): the kernels against naive
per-query twins written from LightGBM's rank_objective.hpp, LightGBM 4.7
agreement on pre-binned ranking data, and the errors of bad ranking input."""

import math

import numpy as np
import pytest
from dgbdt.native import rank as rk
from prebinned import BASE, LGB_ONLY, prebinned

import dgbdt
from dgbdt.objective.ranking import default_label_gain, discounts, query_boundaries

F32 = np.float32


def _sig_table(sigmoid):
    table = np.empty(rk.SIGMOID_BINS)
    return table, np.array(rk.sigmoid_table(sigmoid, table))


def _naive_lambdarank(s, lab, gain, trunc=30, norm=True, sigmoid=1.0, w=None):
    """LightGBM's GetGradientsForOneQuery, one pair at a time, in float32 sums."""
    cnt = len(s)
    if cnt == 0:
        return np.zeros(0, F32), np.zeros(0, F32)
    disc = discounts()
    order = sorted(range(cnt), key=lambda i: -s[i])  # stable
    counts = sorted(lab, reverse=True)
    max_dcg = sum(disc[j] * gain[int(counts[j])] for j in range(min(trunc, cnt)))
    inv = 1.0 / max_dcg if max_dcg > 0 else max_dcg
    table, (lo, hi, factor) = _sig_table(sigmoid)
    lam, hes = [F32(0)] * cnt, [F32(0)] * cnt
    spread = s[order[0]] != s[order[-1]]
    total = 0.0
    for i in range(min(cnt - 1, trunc)):
        for j in range(i + 1, cnt):
            a, b = order[i], order[j]
            if lab[a] == lab[b]:
                continue
            (hr, high), (lr, low) = ((i, a), (j, b)) if lab[a] > lab[b] else ((j, b), (i, a))
            delta = s[high] - s[low]
            dn = (gain[int(lab[high])] - gain[int(lab[low])]) * abs(disc[hr] - disc[lr]) * inv
            if norm and spread:
                dn /= float(F32(0.01)) + abs(delta)
            x = delta
            p = table[0] if x <= lo else table[-1] if x >= hi else table[int((x - lo) * factor)]
            ph = p * (1 - p) * sigmoid * sigmoid * dn
            p = p * -sigmoid * dn
            lam[low], lam[high] = F32(lam[low] - F32(p)), F32(lam[high] + F32(p))
            hes[low], hes[high] = F32(hes[low] + F32(ph)), F32(hes[high] + F32(ph))
            total -= 2 * p
    lam, hes = np.array(lam, F32), np.array(hes, F32)
    if norm and total > 0:
        f = math.log2(1 + total) / total
        lam, hes = (lam * f).astype(F32), (hes * f).astype(F32)
    if w is not None:
        lam, hes = (lam * F32(w)).astype(F32), (hes * F32(w)).astype(F32)
    return lam, hes


def _lcg_draws(seed, n):
    """LightGBM's Random(seed).NextFloat() n times."""
    x, out = seed & 0xFFFFFFFF, []
    for _ in range(n):
        x = (214013 * x + 2531011) & 0xFFFFFFFF
        out.append(F32((x >> 16) & 0x7FFF) / F32(32768.0))
    return out


def _naive_xendcg(s, lab, draws):
    cnt = len(s)
    if cnt <= 1:
        return np.zeros(cnt, F32), np.zeros(cnt, F32)
    rho = np.exp(np.asarray(s) - max(s))
    rho = rho / rho.sum()
    phi = [2.0 ** int(lab[i]) - float(draws[i]) for i in range(cnt)]
    inv = 1.0 / max(float(F32(1e-15)), sum(phi))
    lam = np.array([-p * inv + r for p, r in zip(phi, rho, strict=True)])
    p1 = lam / (1 - rho)
    t2 = rho * (p1.sum() - p1)
    p2 = t2 / (1 - rho)
    t3 = rho * (p2.sum() - p2)
    out = (lam.astype(F32) + t2.astype(F32)).astype(F32) + t3.astype(F32)
    return out.astype(F32), (rho * (1 - rho)).astype(F32)


def _queries(seed=0, n_queries=40, ties=True):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 40, n_queries)
    sizes[:3] = [0, 1, 2]
    n = int(sizes.sum())
    scores = rng.normal(size=n).round(1 if ties else 12)
    labels = rng.integers(0, 5, n).astype(F32)
    return sizes, scores, labels, rng.uniform(0.5, 2, n).astype(F32)


def _lambdarank_kernel(sizes, scores, labels, w, gain, trunc=30, norm=True, sigmoid=1.0):
    b = query_boundaries(sizes)
    inv = np.empty(len(sizes))
    disc = discounts()
    rk.inverse_max_dcgs(trunc, labels, b, gain, disc, inv)
    table, tparams = _sig_table(sigmoid)
    g, h = np.empty(len(scores), F32), np.empty(len(scores), F32)
    cfg = np.array([sigmoid, trunc, 1.0 if norm else 0.0])
    rk.lambdarank_gradients(scores, labels, b, inv, gain, disc, table, tparams, cfg, w, g, h)
    return b, g, h


@pytest.mark.parametrize(
    "trunc, norm, sigmoid, weighted, gain",
    [
        (30, True, 1.0, False, None),
        (30, True, 1.0, True, None),
        (3, True, 1.0, False, None),
        (30, False, 1.0, False, None),
        (30, True, 2.5, True, (0.0, 1.0, 3.0, 7.0, 20.0)),
    ],
)
def test_lambdarank_kernel_equals_its_naive_twin(trunc, norm, sigmoid, weighted, gain):
    sizes, scores, labels, w = _queries()
    gain = default_label_gain(gain)
    weights = w if weighted else np.zeros(0, F32)
    b, g, h = _lambdarank_kernel(sizes, scores, labels, weights, gain, trunc, norm, sigmoid)
    for q in range(len(sizes)):
        a, e = b[q], b[q + 1]
        lam, hes = _naive_lambdarank(
            list(scores[a:e]), list(labels[a:e]), gain, trunc, norm, sigmoid,
            w[a:e] if weighted else None,
        )  # fmt: skip
        np.testing.assert_array_equal(g[a:e], lam)
        np.testing.assert_array_equal(h[a:e], hes)


def test_lambdarank_tied_scores_rank_in_row_order():
    # all scores equal: no spread, so no 1 / (0.01 + |delta|) weighting; ranks follow rows
    sizes, labels = np.array([4]), np.array([0, 2, 1, 0], F32)
    scores = np.zeros(4)
    _, g, h = _lambdarank_kernel(sizes, scores, labels, np.zeros(0, F32), default_label_gain(None))
    lam, hes = _naive_lambdarank([0.0] * 4, list(labels), default_label_gain(None))
    np.testing.assert_array_equal(g, lam)
    assert g[1] < 0 and g[0] > 0  # the best document is pushed up, the worst down


def test_lcg_jump_ahead_equals_lightgbm_sequence():
    for seed in (0, 5, 2**31 - 1, -3):
        x = seed & 0xFFFFFFFF
        for steps in range(40):
            assert rk.lcg_state(seed, steps) == x
            x = (214013 * x + 2531011) & 0xFFFFFFFF


@pytest.mark.parametrize("iteration", [0, 3])
def test_xendcg_kernel_equals_its_naive_twin(iteration):
    sizes, scores, labels, w = _queries(ties=False)
    b = query_boundaries(sizes)
    g, h = np.empty(len(scores), F32), np.empty(len(scores), F32)
    first = 11  # this rank's first query is global query 11
    rk.xendcg_gradients(scores, labels, b, 5, first, iteration, w, g, h)
    for q in range(len(sizes)):
        a, e = b[q], b[q + 1]
        draws = _lcg_draws(5 + first + q, (iteration + 1) * (e - a))[iteration * (e - a) :]
        lam, hes = _naive_xendcg(list(scores[a:e]), list(labels[a:e]), draws)
        np.testing.assert_allclose(g[a:e], (lam * w[a:e]).astype(F32), rtol=2e-7, atol=1e-12)
        np.testing.assert_allclose(h[a:e], (hes * w[a:e]).astype(F32), rtol=2e-7, atol=1e-12)


# -- LightGBM agreement on pre-binned ranking data ---------------------------------
def _rank_data(seed=0):
    rng = np.random.default_rng(seed)
    X, s = prebinned("regression", n=3000, seed=seed)
    sizes = rng.integers(1, 25, 150)
    sizes = sizes[np.cumsum(sizes) <= len(X)]
    n = int(sizes.sum())
    X, s = X[:n], s[:n]
    y = np.floor((s - s.min()) / (s.max() - s.min()) * 5 + rng.normal(0, 0.7, n))
    w = rng.uniform(0.5, 2, n).astype(F32).astype(np.float64)
    return X, np.clip(y, 0, 4), sizes, w


LGB_CASES = [
    ("lambdarank", {}),
    ("lambdarank", {"lambdarank_norm": False}),
    ("lambdarank", {"lambdarank_truncation_level": 3}),
    ("lambdarank", {"sigmoid": 2.0, "label_gain": "0,1,3,7,20"}),
    ("lambdarank", {"position": True}),
    ("lambdarank", {"position": True, "lambdarank_position_bias_regularization": 0.5}),
    ("rank_xendcg", {"objective_seed": 77}),
    ("rank_xendcg", {"seed": 3}),  # objective_seed derived from seed, as LightGBM
]


@pytest.mark.parametrize("rounds, lr", [(1, 1.0), (5, 0.1)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("objective, extra", LGB_CASES)
def test_ranking_equals_lightgbm(objective, extra, weighted, rounds, lr):
    lgb = pytest.importorskip("lightgbm")
    X, y, sizes, w = _rank_data()
    extra = dict(extra)
    kw = {"group": sizes, "weight": w if weighted else None}
    if extra.pop("position", False):
        kw["position"] = np.concatenate([np.arange(k) for k in sizes]) % 7
    params = {**BASE, "objective": objective, "learning_rate": lr, "metric": "None", **extra}
    lgb_params = {**params, **LGB_ONLY}
    if "seed" in extra:
        lgb_params["seed"] = extra["seed"]
    want = lgb.train(lgb_params, lgb.Dataset(X, y, **kw), rounds).predict(X, raw_score=True)
    got = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y, **kw), rounds)
    got = got.predict(X, raw_score=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_lightgbm_predicts_an_exported_ranking_model():
    lgb = pytest.importorskip("lightgbm")
    X, y, sizes, _ = _rank_data(1)
    booster = dgbdt.train(
        {"objective": "lambdarank", "verbosity": -1, "num_leaves": 7},
        dgbdt.Dataset(X, y, group=sizes),
        5,
    )
    text = booster.model_to_string(format="lightgbm")
    assert "objective=lambdarank" in text
    theirs = lgb.Booster(model_str=text).predict(X, raw_score=True)
    np.testing.assert_array_equal(theirs, booster.predict(X, raw_score=True))
    back = dgbdt.Booster(model_str=text)
    np.testing.assert_array_equal(back.predict(X), booster.predict(X))


# -- errors -----------------------------------------------------------------------
def _tiny(labels=(0, 1, 2, 0), group=(2, 2)):
    X = np.arange(len(labels) * 2, dtype=float).reshape(-1, 2)
    return dgbdt.Dataset(X, np.asarray(labels, float), group=group)


@pytest.mark.parametrize("objective", ["lambdarank", "rank_xendcg"])
def test_ranking_without_groups_is_an_error(objective):
    data = dgbdt.Dataset(np.zeros((4, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="no query groups"):
        dgbdt.train({"objective": objective, "verbosity": -1}, data, 1)


@pytest.mark.parametrize(
    "labels, params, message",
    [
        ((0, 1.5, 2, 0), {}, "label 1.5 at row 1: ranking labels must be non-negative integers"),
        ((0, -1, 2, 0), {}, "label -1 at row 1"),
        ((0, 1, 5, 0), {"label_gain": "0,1,3"}, "label 5 at row 2: it has no gain"),
        ((0, 1, 31, 0), {}, "label 31 at row 2: it has no gain: label_gain has 31"),
    ],
)
def test_bad_ranking_labels_are_named(labels, params, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        dgbdt.train({"objective": "lambdarank", "verbosity": -1, **params}, _tiny(labels), 1)


@pytest.mark.parametrize(
    "group, message",
    [
        ((2, 1), "group sizes sum to 3 but data has 4 rows"),
        ((2, -1, 3), r"group\[1\] is -1"),
        ((1.5, 2.5), "integer query sizes"),
        ([[2, 2]], "group must be 1-D"),
    ],
)
def test_bad_groups_are_named(group, message):
    with pytest.raises(ValueError, match=message):
        _tiny(group=group)


def test_a_query_over_lightgbm_row_limit_is_an_error():
    n = 10001
    data = dgbdt.Dataset(np.zeros((n, 1)), np.zeros(n), group=[n])
    with pytest.raises(ValueError, match="query 0 has 10001 rows"):
        dgbdt.train({"objective": "lambdarank", "verbosity": -1}, data, 1)


def test_set_group_and_get_group():
    data = _tiny()
    np.testing.assert_array_equal(data.get_group(), [2, 2])
    data.set_group([1, 3])
    np.testing.assert_array_equal(data.get_group(), [1, 3])
    data.set_position([0, 0, 1, 2])
    np.testing.assert_array_equal(data.get_position(), [0, 0, 1, 2])
    valid = data.create_valid(np.zeros((3, 2)), label=[0, 1, 0], group=[3])
    np.testing.assert_array_equal(valid.get_group(), [3])


def test_bagging_by_query_keeps_whole_queries():
    from dgbdt.boosting.sampling import bagged_query_rows
    from dgbdt.objective.ranking import Queries

    sizes = np.array([3, 0, 5, 2, 4, 1])
    q = Queries(query_boundaries(sizes), first=0)
    rows = bagged_query_rows(q, 0.5, 7, 0)
    kept = np.isin(np.arange(sizes.sum()), rows)
    starts = query_boundaries(sizes)
    for a, b in zip(starts[:-1], starts[1:], strict=True):
        assert kept[a:b].all() or not kept[a:b].any()
    # the same queries from a rank that holds queries 2.. (global index kept)
    q2 = Queries(query_boundaries(sizes[2:]), first=2)
    np.testing.assert_array_equal(
        bagged_query_rows(q2, 0.5, 7, 0) + starts[2], rows[rows >= starts[2]]
    )


def test_xendcg_with_a_certain_document_trains_on_as_lightgbm():
    # a softmax probability of 1 divides by zero: inf / NaN as in LightGBM, no error
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0) * 3.0
    p = {"objective": "rank_xendcg", "num_leaves": 4, "min_data_in_leaf": 1}
    p.update(min_sum_hessian_in_leaf=0, learning_rate=1.0, verbose=-1, seed=0)
    ours = dgbdt.train(p, dgbdt.Dataset(X, y, group=[2] * 20), 20)
    theirs = lgb.train({**p, **LGB_ONLY}, lgb.Dataset(X, y, group=[2] * 20), 20)
    assert ours.num_trees() == theirs.num_trees()
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
