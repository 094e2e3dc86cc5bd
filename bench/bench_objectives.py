#!/usr/bin/env python
"""The regression objectives beside LightGBM on positive, skewed data.

Data (generated, ``--rows`` 100,000 train + ``--test-rows`` 20,000 test, 10
features, seed 7): a log-normal target with heteroscedastic noise,

    mu = 1 + 0.6 x0 + 0.4 sin(2 x1) + 0.3 x2 x3 - 0.2 x4^2,
    y  = exp(mu + (0.3 + 0.3 |x5|) e)                 (e standard normal),

for quantile, mape, huber, fair, gamma; and y = Poisson(exp(mu - 1)) counts
(many zeros) for poisson and tweedie.  ``regression.*`` of LightGBM's examples
has 0/1 labels and cannot tell these losses apart.

Both libraries: 63 leaves, learning rate 0.05, 300 rounds (``--rounds``),
min_data_in_leaf 20, the objective's own parameters at LightGBM's defaults
(quantile alpha 0.9, huber alpha 0.9, fair_c 1, tweedie power 1.5,
poisson_max_delta_step 0.7), num_threads 2, seed 0.  Each pair is fitted in
this process, one after the other, after a warm-up fit of dgbdt (its kernels
compile there).  The test metric is each objective's own (LightGBM's metric
of that name, computed here by dgbdt.objective.metrics on both models' predictions:
pinball loss for quantile, MAPE, huber loss, fair loss, poisson / gamma /
tweedie negative log-likelihoods), and the ratio dgbdt / LightGBM, which the
issue wants within 1% (0.99-1.01).  Fit times are printed for reference only
(single runs, not medians).

    python bench/bench_objectives.py              # full size (about 2 minutes)
    python bench/bench_objectives.py --rows 20000 --rounds 50   # quick
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

CASES = [
    ("quantile", "lognormal", {"alpha": 0.9}),
    ("mape", "lognormal", {}),
    ("huber", "lognormal", {"alpha": 0.9}),
    ("fair", "lognormal", {"fair_c": 1.0}),
    ("gamma", "lognormal", {}),
    ("poisson", "counts", {}),
    ("tweedie", "counts", {"tweedie_variance_power": 1.5}),
]


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 10))
    mu = (
        1 + 0.6 * X[:, 0] + 0.4 * np.sin(2 * X[:, 1]) + 0.3 * X[:, 2] * X[:, 3] - 0.2 * X[:, 4] ** 2
    )
    lognormal = np.exp(mu + (0.3 + 0.3 * np.abs(X[:, 5])) * rng.normal(size=n))
    counts = rng.poisson(np.exp(mu - 1.0)).astype(np.float64)
    return X, {"lognormal": lognormal, "counts": counts}


def fit_lightgbm(params, X, y, rounds):
    import lightgbm as lgb

    t = time.perf_counter()
    model = lgb.train({**params, "verbosity": -1}, lgb.Dataset(X, y), rounds)
    return model, time.perf_counter() - t


def fit_dgbdt(params, X, y, rounds):
    import dgbdt

    t = time.perf_counter()
    model = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y), rounds)
    return model, time.perf_counter() - t


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--test-rows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    from dgbdt.objective.metrics import get_metric

    load = os.getloadavg()[0]
    print(f"load average {load:.2f} on {os.cpu_count()} CPUs (fit times are single runs)")
    X, ys = make_data(args.rows + args.test_rows, seed=7)
    tr, te = slice(0, args.rows), slice(args.rows, None)
    base = {"num_leaves": 63, "learning_rate": 0.05, "min_data_in_leaf": 20}
    base.update(num_threads=2, seed=0)
    fit_dgbdt({**base, "objective": "regression"}, X[:2000], ys["lognormal"][:2000], 2)
    print(f"{'objective':10s} {'dgbdt':>12s} {'LightGBM':>12s} {'ratio':>8s} {'fit s':>13s}")
    worst = 0.0
    for objective, kind, extra in CASES:
        params = {**base, **extra, "objective": objective}
        y = ys[kind]
        ours, t_ours = fit_dgbdt(params, X[tr], y[tr], args.rounds)
        theirs, t_theirs = fit_lightgbm(params, X[tr], y[tr], args.rounds)
        metric = get_metric(objective)
        cfg_kw = metric.options_from({**_defaults(), **extra})
        m_ours = metric.compute(y[te], ours.predict(X[te]), None, **cfg_kw)
        m_theirs = metric.compute(y[te], theirs.predict(X[te]), None, **cfg_kw)
        ratio = m_ours / m_theirs
        worst = max(worst, abs(ratio - 1))
        print(
            f"{objective:10s} {m_ours:12.8g} {m_theirs:12.8g} {ratio:10.7f} "
            f"{t_ours:6.1f}/{t_theirs:<6.1f}"
        )
    print(f"largest |ratio - 1|: {worst:.2e} (target <= 0.01)")


def _defaults():
    from dgbdt.params.table import resolve_params

    return resolve_params({})


if __name__ == "__main__":
    main()
