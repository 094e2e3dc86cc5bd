#!/usr/bin/env python
"""SHAP contributions (``pred_contrib=True``): dgbdt against LightGBM on one model.

bench_core's model -- ``make_higgs_like`` data, binary objective, 1,000,000
train rows x 28 float32 features, 100 rounds, 255 leaves, learning rate 0.1,
255 bins -- is trained once by dgbdt and cached (``--cache-dir``), exported
to LightGBM's text format and loaded by ``lightgbm.Booster(model_str=...)``.
Both then compute the contributions of the next ``--explain-rows`` rows
(default 20,000) with ``--threads`` threads (``num_threads`` for both),
interleaved dgbdt, LightGBM, dgbdt, ... ``--repeats`` times; the medians and
their ratio are printed, with the largest difference between the two results
and between dgbdt's row sums and its raw scores.

    target   dgbdt time <= 1.0 x LightGBM's

Run ``python bench/bench_shap.py --help``; see bench/README.md.  A smaller
model for a quick look: ``--rows 100000``.  This is a script run by hand,
not a test.
"""

from __future__ import annotations

import os
import pathlib
import statistics
import tempfile
import time

from common import (
    arg_parser,
    fmt_runs,
    load_datasets_module,
    machine_info,
    print_machine,
    print_rows,
    verdict,
    write_json,
)

SEED = 0
TARGET = 1.0  # dgbdt contribution time / LightGBM's <=


def parse_args():
    ap = arg_parser(__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000, help="training rows (1,000,000)")
    ap.add_argument("--explain-rows", type=int, default=20_000, help="rows explained (20,000)")
    ap.add_argument("--rounds", type=int, default=100, help="boosting rounds (100)")
    ap.add_argument("--leaves", type=int, default=255, help="num_leaves (255)")
    ap.add_argument("--threads", type=int, default=2, help="threads for both libraries (2)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of each library (3)")
    ap.add_argument(
        "--cache-dir",
        default=os.path.join(tempfile.gettempdir(), "dgbdt_bench_cache"),
        help="where the trained model is kept between runs (a temp folder)",
    )
    ap.add_argument("--json", help="also write the results to this JSON file")
    return ap.parse_args()


def train_or_load(args, X, y):
    """dgbdt's model of the settings, from the cache when it holds it."""
    import dgbdt  # noqa: PLC0415

    cache = pathlib.Path(args.cache_dir)
    path = cache / f"shap_higgs_{args.rows}_{args.rounds}_{args.leaves}_{SEED}.json"
    if path.is_file():
        print(f"model: {path} (cached)")
        return dgbdt.Booster(model_file=path)
    params = {
        "objective": "binary",
        "num_leaves": args.leaves,
        "learning_rate": 0.1,
        "max_bin": 255,
        "min_data_in_leaf": 20,
        "min_sum_hessian_in_leaf": 1e-3,
        "num_threads": args.threads,
        "verbosity": -1,
        "seed": SEED,
    }
    t0 = time.perf_counter()
    booster = dgbdt.train(params, dgbdt.Dataset(X, label=y), num_boost_round=args.rounds)
    print(f"model: trained in {time.perf_counter() - t0:.1f} s, cached as {path}")
    cache.mkdir(parents=True, exist_ok=True)
    booster.save_model(path)
    return booster


def time_both(args, booster, lgb_booster, X):
    """Interleaved timed runs: (dgbdt seconds, LightGBM seconds, last results)."""
    runs = {"dgbdt": [], "lightgbm": []}
    calls = {
        "dgbdt": lambda: booster.predict(X, pred_contrib=True, num_threads=args.threads),
        "lightgbm": lambda: lgb_booster.predict(X, pred_contrib=True, num_threads=args.threads),
    }
    for f in calls.values():  # warm-up: compile / load dgbdt's kernels, page in
        f()
    results = {}
    for _ in range(args.repeats):
        for name, f in calls.items():
            t0 = time.perf_counter()
            results[name] = f()
            runs[name].append(time.perf_counter() - t0)
    return runs, results


def main():
    args = parse_args()
    load = print_machine()
    import numpy as np  # noqa: PLC0415

    data = load_datasets_module().make_higgs_like(args.rows + args.explain_rows, seed=SEED)
    X_all, y_all = data[0], data[1]
    booster = train_or_load(args, X_all[: args.rows], y_all[: args.rows])
    import lightgbm as lgb  # noqa: PLC0415

    lgb_booster = lgb.Booster(model_str=booster.model_to_string(format="lightgbm"))
    X = np.ascontiguousarray(X_all[args.rows :], dtype=np.float64)
    runs, results = time_both(args, booster, lgb_booster, X)
    ours, theirs = results["dgbdt"], results["lightgbm"]
    diff = float(np.abs(ours - theirs).max())
    sum_err = float(np.abs(ours.sum(axis=1) - booster.predict(X, raw_score=True)).max())
    med = {name: statistics.median(r) for name, r in runs.items()}
    ratio = med["dgbdt"] / med["lightgbm"]
    depth = max(t.max_depth() for t in booster.trees)
    print(
        f"\n{booster.num_trees()} trees, max depth {depth}, {X.shape[0]:,} rows x "
        f"{X.shape[1]} features, {args.threads} threads\n"
    )
    print_rows(
        ["library", "median s", "runs s", "rows/s"],
        [
            [name, f"{med[name]:.3f}", fmt_runs(r), f"{X.shape[0] / med[name]:,.0f}"]
            for name, r in runs.items()
        ],
    )
    print(f"\nlargest |dgbdt - LightGBM| {diff:.2e}; largest |row sum - raw score| {sum_err:.2e}")
    print(f"ratio dgbdt / LightGBM {ratio:.2f} (target <= {TARGET}): {verdict(ratio <= TARGET)}")
    if args.json:
        write_json(
            args.json,
            {
                "machine": machine_info(load),
                "settings": vars(args),
                "trees": booster.num_trees(),
                "max_depth": depth,
                "runs": runs,
                "median": med,
                "ratio": ratio,
                "max_abs_diff": diff,
                "max_sum_error": sum_err,
            },
        )


if __name__ == "__main__":
    main()
