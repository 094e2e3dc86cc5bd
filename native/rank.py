"""Ranking kernels: lambdarank and rank_xendcg gradients, per query, queries in
parallel.

They follow LightGBM's src/objective/rank_objective.hpp where it rounds:
lambdas and hessians are float32 (``score_t``) accumulated pair by pair in
the pairs' order, labels are float32, the sigmoid is read from LightGBM's
table of 2^20 entries, and rank_xendcg's uniform draws come from LightGBM's
linear congruential generator (utils/random.h), one generator per query
seeded ``objective_seed + query``; its state is jumped ahead to the draws of
the iteration, so the draws depend on (seed, iteration, global query index)
only, not on how queries are spread over ranks.
"""

import math

import numpy as np
from numba import njit, prange

#: LightGBM's sigmoid table: 1024 * 1024 bins over [-50 / sigmoid / 2, +...]
SIGMOID_BINS = 1024 * 1024
_LCG_A, _LCG_C, _MASK32 = np.uint64(214013), np.uint64(2531011), np.uint64(0xFFFFFFFF)
#: 0.01f as LightGBM's normalisation adds it (a float constant promoted to double)
_NORM_EPS = float(np.float32(0.01))
_EPSILON = float(np.float32(1e-15))


@njit(cache=True)
def sigmoid_table(sigmoid, out):
    """LightGBM's table: out[i] = 1 / (1 + exp(sigmoid * x_i)) at x_i = i / factor
    + lo; returns (lo, hi, factor).

    Parameters
    ----------
    sigmoid : float        # IN
    out : float64[SIGMOID_BINS]  # OUT
    """
    lo = -50.0 / sigmoid / 2.0
    hi = -lo
    factor = out.shape[0] / (hi - lo)
    for i in range(out.shape[0]):
        x = i / factor + lo
        out[i] = 1.0 / (1.0 + math.exp(x * sigmoid))
    return lo, hi, factor


@njit(cache=True)
def max_dcg_at(k, labels, start, cnt, label_gain, discount):
    """The largest DCG@k of a query's labels (LightGBM's CalMaxDCGAtK)."""
    counts = np.zeros(label_gain.shape[0], np.int64)
    for i in range(cnt):
        counts[int(labels[start + i])] += 1
    top = label_gain.shape[0] - 1
    k = min(k, cnt)
    total = 0.0
    for j in range(k):
        while top > 0 and counts[top] <= 0:
            top -= 1
        total += discount[j] * label_gain[top]
        counts[top] -= 1
    return total


@njit(cache=True, parallel=True)
def inverse_max_dcgs(k, labels, boundaries, label_gain, discount, out):
    """out[q] = 1 / max DCG@k of query q, or 0 where that is 0.

    Parameters
    ----------
    k : int; labels : float32[n]; boundaries : int64[q + 1]  # IN
    label_gain, discount : float64[:]                        # IN
    out : float64[q]                                          # OUT
    """
    for q in prange(boundaries.shape[0] - 1):
        start = boundaries[q]
        m = max_dcg_at(k, labels, start, boundaries[q + 1] - start, label_gain, discount)
        out[q] = 1.0 / m if m > 0.0 else m


@njit(cache=True, inline="always")
def _table_sigmoid(x, table, lo, hi, factor):
    if x <= lo:
        return table[0]
    if x >= hi:
        return table[table.shape[0] - 1]
    return table[int((x - lo) * factor)]


@njit(cache=True)
def _lambdarank_query(s, lab, inv_max, label_gain, discount, table, tparams, cfg, lam, hes):
    """One query's lambdas and hessians (LightGBM's GetGradientsForOneQuery).
    ``tparams`` = (lo, hi, factor); ``cfg`` = (sigmoid, truncation, norm)."""
    cnt = s.shape[0]
    lam[:] = 0.0
    hes[:] = 0.0
    if cnt == 0:
        return
    sigmoid, truncation, norm = cfg[0], int(cfg[1]), cfg[2] != 0.0
    order = np.argsort(-s, kind="mergesort")  # stable: ties keep row order
    best = s[order[0]]
    worst_idx = cnt - 1
    if worst_idx > 0 and s[order[worst_idx]] == -np.inf:
        worst_idx -= 1
    spread = best != s[order[worst_idx]]
    sum_lambdas = 0.0
    for i in range(min(cnt - 1, truncation)):
        if s[order[i]] == -np.inf:
            continue
        for j in range(i + 1, cnt):
            if s[order[j]] == -np.inf or lab[order[i]] == lab[order[j]]:
                continue
            hi_rank, lo_rank = (i, j) if lab[order[i]] > lab[order[j]] else (j, i)
            high, low = order[hi_rank], order[lo_rank]
            delta = s[high] - s[low]
            gap = label_gain[int(lab[high])] - label_gain[int(lab[low])]
            delta_ndcg = gap * abs(discount[hi_rank] - discount[lo_rank]) * inv_max
            if norm and spread:
                delta_ndcg /= _NORM_EPS + abs(delta)
            p = _table_sigmoid(delta, table, tparams[0], tparams[1], tparams[2])
            ph = p * (1.0 - p)
            p *= -sigmoid * delta_ndcg
            ph *= sigmoid * sigmoid * delta_ndcg
            p32, ph32 = np.float32(p), np.float32(ph)
            lam[low] = lam[low] - p32
            hes[low] = hes[low] + ph32
            lam[high] = lam[high] + p32
            hes[high] = hes[high] + ph32
            sum_lambdas -= 2.0 * p
    if norm and sum_lambdas > 0.0:
        f = math.log2(1.0 + sum_lambdas) / sum_lambdas
        for i in range(cnt):
            lam[i] = np.float32(lam[i] * f)
            hes[i] = np.float32(hes[i] * f)


@njit(cache=True, parallel=True)
def lambdarank_gradients(
    scores, labels, boundaries, inv_max, label_gain, discount, table, tparams, cfg, weights, g, h
):
    """LambdaRank (NDCG) gradients of every query.

    Parameters
    ----------
    scores : float64[n]; labels : float32[n]; boundaries : int64[q + 1]  # IN
    inv_max : float64[q] (inverse_max_dcgs at the truncation level)       # IN
    label_gain, discount, table : float64[:]; tparams : float64[3]        # IN
    cfg : float64[3] (sigmoid, truncation level, norm 0/1)                # IN
    weights : float32[n] or float32[0] (none)                             # IN
    g, h : float32[n]                                                     # OUT
    """
    for q in prange(boundaries.shape[0] - 1):
        a, b = boundaries[q], boundaries[q + 1]
        _lambdarank_query(
            scores[a:b], labels[a:b], inv_max[q], label_gain, discount, table, tparams, cfg,
            g[a:b], h[a:b],
        )  # fmt: skip
        if weights.shape[0] > 0:
            for i in range(a, b):
                g[i] = np.float32(g[i] * weights[i])
                h[i] = np.float32(h[i] * weights[i])


@njit(cache=True)
def lcg_state(seed, steps):
    """LightGBM's Random(seed) state after ``steps`` draws: x -> 214013 x + 2531011
    mod 2^32, jumped ahead by squaring the affine map."""
    mul, add = np.uint64(1), np.uint64(0)
    base_mul, base_add = _LCG_A, _LCG_C
    n = np.uint64(steps)
    while n > np.uint64(0):
        if n & np.uint64(1):
            mul, add = (mul * base_mul) & _MASK32, (add * base_mul + base_add) & _MASK32
        base_mul, base_add = (
            (base_mul * base_mul) & _MASK32,
            (base_add * base_mul + base_add) & _MASK32,
        )
        n >>= np.uint64(1)
    return (mul * (np.uint64(seed) & _MASK32) + add) & _MASK32


# error_model="numpy": a softmax probability of 1 divides by zero as in LightGBM's
# C++ (inf / NaN gradients), not a Python ZeroDivisionError
@njit(cache=True, error_model="numpy")
def _xendcg_query(s, lab, state, lam, hes):
    """One query's rank_xendcg gradients (LightGBM's RankXENDCG::GetGradientsForOneQuery),
    its uniform draws from the LCG at ``state``."""
    cnt = s.shape[0]
    if cnt <= 1:
        lam[:] = 0.0
        hes[:] = 0.0
        return
    rho = np.exp(s - s.max())
    rho /= rho.sum()
    params = np.empty(cnt)
    total = 0.0
    for i in range(cnt):
        state = (_LCG_A * state + _LCG_C) & _MASK32
        u = np.float32((state >> np.uint64(16)) & np.uint64(0x7FFF)) / np.float32(32768.0)
        params[i] = 2.0 ** int(lab[i]) - np.float64(u)
        total += params[i]
    inv = 1.0 / max(_EPSILON, total)
    sum_l1 = 0.0
    for i in range(cnt):
        term = -params[i] * inv + rho[i]
        lam[i] = np.float32(term)
        params[i] = term / (1.0 - rho[i])
        sum_l1 += params[i]
    sum_l2 = 0.0
    for i in range(cnt):
        term = rho[i] * (sum_l1 - params[i])
        lam[i] = lam[i] + np.float32(term)
        params[i] = term / (1.0 - rho[i])
        sum_l2 += params[i]
    for i in range(cnt):
        lam[i] = lam[i] + np.float32(rho[i] * (sum_l2 - params[i]))
        hes[i] = np.float32(rho[i] * (1.0 - rho[i]))


@njit(cache=True, parallel=True, error_model="numpy")
def xendcg_gradients(scores, labels, boundaries, seed, first_query, iteration, weights, g, h):
    """rank_xendcg gradients of every query: query q (global index first_query + q)
    draws from LightGBM's generator seeded ``seed + global index``, after the
    ``iteration * size`` draws of the iterations before.

    Parameters
    ----------
    scores : float64[n]; labels : float32[n]; boundaries : int64[q + 1]  # IN
    seed, first_query, iteration : int                                    # IN
    weights : float32[n] or float32[0] (none)                             # IN
    g, h : float32[n]                                                     # OUT
    """
    for q in prange(boundaries.shape[0] - 1):
        a, b = boundaries[q], boundaries[q + 1]
        state = lcg_state(np.int64(seed) + np.int64(first_query) + q, iteration * (b - a))
        _xendcg_query(scores[a:b], labels[a:b], state, g[a:b], h[a:b])
        if weights.shape[0] > 0:
            for i in range(a, b):
                g[i] = np.float32(g[i] * weights[i])
                h[i] = np.float32(h[i] * weights[i])
