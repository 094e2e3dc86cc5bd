#!/usr/bin/env python
"""GOSS, balanced bagging and extra_trees: dgbdt next to LightGBM, seed by seed.

Both libraries sample rows at random, and they draw differently: dgbdt from a
keyed hash of (seed, iteration, global row), the same on any number of ranks,
and with GOSS's large rows chosen over all rows; LightGBM from per-block
generators, with GOSS's large rows chosen per block of rows (see
dgbdt/boosting/sampling.py).  Their models cannot be equal, so this compares what can
be: the test AUC over several seeds, its mean and its seed-to-seed spread.

Data: ``make_higgs_like(rows + test_rows, seed=0)`` (28 float32 features),
the first ``--rows`` (default 1,000,000) for training and the next
``--test-rows`` (default 200,000) for testing.  Settings of bench_core.py:
binary, ``--rounds`` 100, 255 leaves, learning rate 0.1, 255 bins,
min_data_in_leaf 20, min_sum_hessian_in_leaf 1e-3, ``--threads`` 2; then

* ``plain``: no sampling (one seed: nothing is random),
* ``goss``: ``data_sample_strategy=goss`` (top_rate 0.2, other_rate 0.1),
* ``balanced``: ``pos_bagging_fraction=0.8, neg_bagging_fraction=0.4,
  bagging_freq=1``,
* ``extra_trees``: ``extra_trees=true`` (one random threshold per feature and
  node: dgbdt's keyed on (seed, tree, leaf, feature), LightGBM's from its
  per-feature generators),

each with ``seed`` = 0 .. ``--seeds`` - 1 (default 5) for both libraries.
Every fit runs in this process, one after the other; the fit time (Dataset
construction included, dgbdt's first fit includes JIT compilation on a cold
cache) is printed for orientation only: bench_core.py measures speed.

    python bench/bench_goss.py --rows 20000 --test-rows 5000 --rounds 20 --seeds 2
"""

from __future__ import annotations

import statistics
import time

from common import arg_parser, auc_of, load_datasets_module, print_machine, print_rows

CONFIGS = {
    "plain": {},
    "goss": {"data_sample_strategy": "goss", "top_rate": 0.2, "other_rate": 0.1},
    "balanced": {"pos_bagging_fraction": 0.8, "neg_bagging_fraction": 0.4, "bagging_freq": 1},
    "extra_trees": {"extra_trees": True},
}


def parse_args(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000, help="training rows")
    ap.add_argument("--test-rows", type=int, default=200_000, help="test rows")
    ap.add_argument("--rounds", type=int, default=100, help="boosting rounds")
    ap.add_argument("--seeds", type=int, default=5, help="seeds per sampling configuration")
    ap.add_argument("--threads", type=int, default=2, help="threads of each library")
    ap.add_argument("--libs", default="dgbdt,lightgbm", help="comma-separated libraries")
    return ap.parse_args(argv)


def base_params(args, seed):
    return {
        "objective": "binary",
        "num_leaves": 255,
        "learning_rate": 0.1,
        "max_bin": 255,
        "num_threads": args.threads,
        "min_data_in_leaf": 20,
        "min_sum_hessian_in_leaf": 1e-3,
        "verbosity": -1,
        "seed": seed,
    }


def fit_predict(lib, params, data, rounds):
    """(test AUC, seconds) of one fit."""
    X, y, X_test, y_test = data
    t0 = time.perf_counter()
    if lib == "dgbdt":
        import dgbdt  # noqa: PLC0415

        model = dgbdt.train(params, dgbdt.Dataset(X, label=y), num_boost_round=rounds)
    else:
        import lightgbm  # noqa: PLC0415

        model = lightgbm.train(params, lightgbm.Dataset(X, y), num_boost_round=rounds)
    seconds = time.perf_counter() - t0
    return auc_of(y_test, model.predict(X_test)), seconds


def run(args, data):
    """{(config, lib): [(auc, seconds) per seed]}, printing progress."""
    results = {}
    for name, extra in CONFIGS.items():
        seeds = range(1 if name == "plain" else args.seeds)
        for lib in args.libs.split(","):
            runs = []
            for seed in seeds:
                runs.append(
                    fit_predict(lib, {**base_params(args, seed), **extra}, data, args.rounds)
                )
                print(
                    f"  {name:9s} {lib:9s} seed {seed}: AUC {runs[-1][0]:.5f} "
                    f"({runs[-1][1]:.1f} s)",
                    flush=True,
                )
            results[name, lib] = runs
    return results


def print_results(results):
    rows = []
    for (name, lib), runs in results.items():
        aucs = [a for a, _ in runs]
        std = statistics.stdev(aucs) if len(aucs) > 1 else 0.0
        rows.append(
            [
                name,
                lib,
                len(aucs),
                f"{statistics.mean(aucs):.5f}",
                f"{std:.5f}",
                f"{min(aucs):.5f}",
                f"{max(aucs):.5f}",
                f"{statistics.mean(t for _, t in runs):.1f}",
            ]
        )
    print()
    print_rows(
        ["config", "library", "seeds", "AUC mean", "AUC std", "min", "max", "fit s"], rows, 2
    )
    for name in CONFIGS:
        d, lg = results.get((name, "dgbdt")), results.get((name, "lightgbm"))
        if d and lg:
            diff = statistics.mean(a for a, _ in d) - statistics.mean(a for a, _ in lg)
            print(f"{name}: mean AUC dgbdt - LightGBM = {diff:+.5f}")


def main(argv=None):
    args = parse_args(argv)
    print_machine()
    datasets = load_datasets_module()
    X, y = datasets.make_higgs_like(args.rows + args.test_rows, seed=0)
    data = (X[: args.rows], y[: args.rows], X[args.rows :], y[args.rows :])
    print(
        f"make_higgs_like: {args.rows:,} train x {X.shape[1]}, {args.test_rows:,} test rows, "
        f"{args.rounds} rounds, {args.seeds} seeds, {args.threads} threads"
    )
    print_results(run(args, data))


if __name__ == "__main__":
    main()
