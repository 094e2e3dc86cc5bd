#!/usr/bin/env python
"""LambdaRank beside LightGBM on a generated LETOR-like set.

Data (generated, seed 11): ``--queries`` 10,000 training queries and
``--test-queries`` 2,000 test queries of ``--docs`` 100 documents each, 136
float32 features (as MSLR-WEB30K), graded labels 0-4.  Each query has its
own offset and scale on the features; a document's relevance is a nonlinear
function of 20 of the features relative to its query's mean, plus noise,
cut into grades by fixed quantiles (about 45/30/15/7/3 %).

Both libraries: objective lambdarank (LightGBM's defaults: truncation 30,
norm on, sigmoid 1), 255 leaves, learning rate 0.1, ``--rounds`` 100,
min_data_in_leaf 20, num_threads 2, seed 0.  dgbdt is warmed first on a
small set (its kernels compile there: reported apart).  The fits alternate
(dgbdt, LightGBM) ``--repeats`` times; the medians are compared.  Test
NDCG@10 of both models is computed by dgbdt.objective.metrics (LightGBM's definition,
tested against LightGBM in tests/test_metrics_rank.py).

Targets (issue 16): fit time <= 1.2x LightGBM's; NDCG@10 >= LightGBM's - 0.002.

    python bench/bench_rank.py                         # full size (several minutes)
    python bench/bench_rank.py --queries 1000 --rounds 20   # quick
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from common import print_machine, verdict


def make_data(n_queries, docs, n_features, seed):
    """(X float32 (n, f), labels (n,), group sizes)."""
    rng = np.random.default_rng(seed)
    n = n_queries * docs
    offset = rng.normal(0, 1, (n_queries, n_features)).astype(np.float32)
    scale = rng.uniform(0.5, 2, (n_queries, 1)).astype(np.float32)
    X = rng.normal(size=(n, n_features)).astype(np.float32)
    X *= np.repeat(scale, docs, axis=0)
    X += np.repeat(offset, docs, axis=0)
    Z = X - np.repeat(X.reshape(n_queries, docs, n_features).mean(axis=1), docs, axis=0)
    w = rng.normal(size=20)
    rel = Z[:, :20] @ w / np.sqrt(20)
    rel += 0.5 * np.sin(2 * Z[:, 20]) + 0.3 * Z[:, 21] * Z[:, 22] + 0.4 * np.abs(Z[:, 23])
    rel += rng.normal(0, 0.8, n)
    labels = np.digitize(rel, np.quantile(rel, [0.45, 0.75, 0.90, 0.97])).astype(np.float64)
    return X, labels, np.full(n_queries, docs, np.int64)


def fit(lib, params, X, y, group, rounds):
    if lib == "dgbdt":
        import dgbdt as m
    else:
        import lightgbm as m
    t = time.perf_counter()
    model = m.train({**params, "verbosity": -1}, m.Dataset(X, y, group=group), rounds)
    return model, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--test-queries", type=int, default=2_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--features", type=int, default=136)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    from dgbdt.objective.metrics import get_metric

    print_machine()
    X, y, group = make_data(args.queries + args.test_queries, args.docs, args.features, 11)
    cut = args.queries * args.docs
    Xtr, ytr, Xte, yte = X[:cut], y[:cut], X[cut:], y[cut:]
    gtr = group[: args.queries]
    test_bounds = np.arange(0, len(yte) + 1, args.docs)
    params = {"objective": "lambdarank", "num_leaves": 255, "learning_rate": 0.1}
    params.update(min_data_in_leaf=20, num_threads=2, seed=0, metric="None")
    _, warm = fit("dgbdt", params, Xtr[: 50 * args.docs], ytr[: 50 * args.docs], gtr[:50], 2)
    print(f"dgbdt warm-up (JIT compile) {warm:.1f} s")
    times, models = {"dgbdt": [], "lightgbm": []}, {}
    for _ in range(args.repeats):
        for lib in ("dgbdt", "lightgbm"):
            models[lib], t = fit(lib, params, Xtr, ytr, gtr, args.rounds)
            times[lib].append(t)
            print(f"  {lib:8s} fit {t:.1f} s")
    ndcg = get_metric("ndcg")
    scores = {
        lib: ndcg.compute(yte, m.predict(Xte, raw_score=True), queries=test_bounds, eval_at=[10])[0]
        for lib, m in models.items()
    }
    med = {lib: statistics.median(ts) for lib, ts in times.items()}
    ratio = med["dgbdt"] / med["lightgbm"]
    gap = scores["dgbdt"] - scores["lightgbm"]
    print(f"\n{len(ytr):,} training rows ({args.queries:,} queries), {args.features} features")
    print(f"{'':10s} {'fit s (median)':>15s} {'test NDCG@10':>13s}")
    for lib in ("dgbdt", "lightgbm"):
        print(f"{lib:10s} {med[lib]:15.2f} {scores[lib]:13.5f}")
    print(f"fit ratio dgbdt / LightGBM {ratio:.3f} (target <= 1.2: {verdict(ratio <= 1.2)})")
    print(f"NDCG@10 difference {gap:+.5f} (target >= -0.002: {verdict(gap >= -0.002)})")


if __name__ == "__main__":
    main()
