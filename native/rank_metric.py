"""Ranking metric kernels: NDCG@k and MAP@k of every query, as LightGBM's
NDCGMetric (src/metric/rank_metric.hpp, dcg_calculator.cpp) and MapMetric
(src/metric/map_metric.hpp).

Query ``q`` is rows ``boundaries[q]:boundaries[q + 1]``; its documents are
ranked by score, highest first, ties in row order (LightGBM's stable sort).
Labels are float32 (LightGBM's ``label_t``), scores float64 raw scores.  The
positions ``ks`` are walked in the given order, each from where the previous
one ended, as LightGBM does (so an unsorted ``ks`` gives LightGBM's numbers
too; LightGBM sorts eval_at first).  The queries run in parallel; each writes
its own row of ``out`` (n_queries, len(ks)) float64.
"""

import numpy as np
from numba import njit, prange


@njit(cache=True)
def _ranked(score, lo, hi):
    """Rows lo..hi-1 (offsets from lo) by score descending, ties in row order."""
    return np.argsort(-score[lo:hi], kind="mergesort")


@njit(cache=True)
def _max_dcgs(label, lo, hi, ks, label_gain, discount, out):
    """DCGCalculator::CalMaxDCG: the best DCG at each k from the label counts
    (the highest label first), into ``out`` (len(ks),)."""
    counts = np.zeros(label_gain.shape[0], np.int64)
    for i in range(lo, hi):
        counts[int(label[i])] += 1
    n = hi - lo
    top = label_gain.shape[0] - 1
    cur, left = 0.0, 0
    for j in range(ks.shape[0]):
        k = min(ks[j], n)
        for p in range(left, k):
            while top > 0 and counts[top] <= 0:
                top -= 1
            cur += discount[p] * label_gain[top]
            counts[top] -= 1
        out[j] = cur
        left = k


@njit(cache=True, parallel=True)
def ndcg_at(label, score, boundaries, ks, label_gain, discount, out, trivial):
    """NDCG at each k of ``ks`` of every query, into ``out`` (n_queries, len(ks)).

    DCG@k sums ``label_gain[int(label)] * discount[position]`` over the first
    ``min(k, n)`` ranked documents and is multiplied by ``1 / maxDCG@k``
    (``-1`` where maxDCG@k <= 0, as LightGBM).  A query whose maxDCG at the
    first k is <= 0 (no relevant document) scores 1 at every k and is marked
    in ``trivial`` (n_queries,) uint8: LightGBM adds its 1 unweighted.
    Labels must be integers in [0, len(label_gain)) and queries at most
    len(discount) rows (the caller checks both).
    """
    nk = ks.shape[0]
    for q in prange(boundaries.shape[0] - 1):
        lo, hi = boundaries[q], boundaries[q + 1]
        inverse = np.empty(nk, np.float64)
        _max_dcgs(label, lo, hi, ks, label_gain, discount, inverse)
        for j in range(nk):
            inverse[j] = 1.0 / inverse[j] if inverse[j] > 0.0 else -1.0
        if inverse[0] <= 0.0:
            trivial[q] = 1
            for j in range(nk):
                out[q, j] = 1.0
            continue
        trivial[q] = 0
        order = _ranked(score, lo, hi)
        n = hi - lo
        dcg, left = 0.0, 0
        for j in range(nk):
            k = min(ks[j], n)
            for p in range(left, k):
                dcg += label_gain[int(label[lo + order[p]])] * discount[p]
            out[q, j] = dcg * inverse[j]
            left = k


@njit(cache=True, parallel=True)
def map_at(label, score, boundaries, ks, out):
    """Average precision at each k of ``ks`` of every query, into ``out``
    (n_queries, len(ks)).

    A document is relevant when ``label > 0.5``; AP@k sums ``hits / position``
    over the relevant documents among the first ``min(k, n)`` ranked ones and
    divides by ``min(npos, k)``, ``npos`` the query's relevant documents in
    all.  A query without relevant documents scores 1.  (LightGBM divides by
    the float ``position + 1.0f``, the same number below 2^24 rows.)
    """
    nk = ks.shape[0]
    for q in prange(boundaries.shape[0] - 1):
        lo, hi = boundaries[q], boundaries[q + 1]
        npos = 0
        for i in range(lo, hi):
            if label[i] > 0.5:
                npos += 1
        order = _ranked(score, lo, hi)
        n = hi - lo
        hits, sum_ap, left = 0, 0.0, 0
        for j in range(nk):
            k = min(ks[j], n)
            for p in range(left, k):
                if label[lo + order[p]] > 0.5:
                    hits += 1
                    sum_ap += hits / (p + 1.0)
            out[q, j] = sum_ap / min(npos, k) if npos > 0 else 1.0
            left = k


@njit(cache=True)
def query_weights(weight, boundaries, out):
    """Each query's mean row weight into ``out`` (n_queries,) float32, as
    LightGBM's Metadata::CalculateQueryWeights: the float32 weights summed in
    float32 in row order, then divided by the row count (a query without rows
    weighs 0 here; LightGBM's 0 / 0 would be NaN).  Row order matters: a
    pairwise or vectorised float32 sum differs in the last bit."""
    for q in range(boundaries.shape[0] - 1):
        lo, hi = boundaries[q], boundaries[q + 1]
        total = np.float32(0.0)
        for i in range(lo, hi):
            total += weight[i]
        out[q] = total / np.float32(hi - lo) if hi > lo else np.float32(0.0)
