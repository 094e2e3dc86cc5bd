#!/usr/bin/env python
"""Core speed/accuracy benchmark: dgbdt next to LightGBM, XGBoost and scikit-learn.

Binary classification on ``make_higgs_like`` data (default 1,000,000 train
rows x 28 float32 features, 200,000 test rows), 100 rounds, 255 leaves,
learning rate 0.1, 255 bins, 2 threads, min_data_in_leaf 20 /
min_sum_hessian_in_leaf 1e-3 (or the library's nearest equivalent), no early
stopping.  Every library runs in its own subprocess, which generates the same
data from the same seed, so peak RSS is per library.  The targets checked at
the end are those of the issue:

    fit time     dgbdt <= 1.2 x LightGBM   (JIT compilation excluded, reported on its own line)
    test AUC     dgbdt >= LightGBM - 0.002
    predict time dgbdt <= LightGBM         (on the test rows)
    peak memory  dgbdt <= 1.5 x LightGBM   (peak RSS of the whole process)
    start-up     new process, import dgbdt + 100 rounds on 1,000 rows < 3 s (warm cache)

Run ``python bench/bench_core.py --help``; see bench/README.md.  This is a
script run by hand, not a test.
"""

from __future__ import annotations

import gc
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from argparse import SUPPRESS

from common import (
    arg_parser,
    binary_metrics,
    child_env,
    fmt_runs,
    load_datasets_module,
    machine_info,
    peak_rss_mb,
    print_machine,
    print_rows,
    reset_peak_rss,
    rss_now_mb,
    run_worker,
    tail_text,
    timed,
    verdict,
    write_json,
    write_result,
)

SCRIPT = pathlib.Path(__file__).resolve()
ALL_LIBS = ("dgbdt", "lightgbm", "xgboost", "sklearn")
SEED = 0

TARGETS = {
    "fit": 1.2,  # dgbdt fit / LightGBM fit <=
    "predict": 1.0,  # dgbdt predict / LightGBM predict <=
    "memory": 1.5,  # dgbdt peak RSS / LightGBM peak RSS <=
    "auc": -0.002,  # dgbdt AUC - LightGBM AUC >=
    "startup_s": 3.0,  # warm-cache start-up, seconds <
}

TIMING_NOTE = (
    "fit time includes Dataset construction (binning) for every library: "
    "dgbdt.train(p, dgbdt.Dataset(X, label=y)), lgb.train(p, lgb.Dataset(X, y)), "
    "xgb.train(p, xgb.QuantileDMatrix(X, y)), HistGradientBoostingClassifier.fit(X, y); "
    "predict = probabilities for the test rows from a numpy array "
    "(dgbdt/LightGBM predict, XGBoost inplace_predict, sklearn predict_proba)"
)


# ---------------------------------------------------------------------------
# helpers used in the children
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# the libraries: params, fit, predict
# ---------------------------------------------------------------------------


def lightgbm_style_params(cfg):
    """Parameters in LightGBM's names; dgbdt takes the same dictionary."""
    return {
        "objective": "binary",
        "num_leaves": cfg["leaves"],
        "learning_rate": cfg["learning_rate"],
        "max_bin": cfg["max_bin"],
        "num_threads": cfg["threads"],
        "min_data_in_leaf": 20,
        "min_sum_hessian_in_leaf": 1e-3,
        "verbosity": -1,
        "seed": SEED,
    }


class DgbdtRunner:
    name = "dgbdt"

    def __init__(self, cfg):
        import dgbdt  # noqa: PLC0415

        self.lib = dgbdt
        self.cfg = cfg
        self.params = lightgbm_style_params(cfg)
        self.version = getattr(dgbdt, "__version__", "?")

    def fit(self, X, y, rounds):
        return self.lib.train(self.params, self.lib.Dataset(X, label=y), num_boost_round=rounds)

    def predict(self, model, X):
        return model.predict(X)


class LightGBMRunner:
    name = "lightgbm"

    def __init__(self, cfg):
        import lightgbm  # noqa: PLC0415

        self.lib = lightgbm
        self.cfg = cfg
        self.params = lightgbm_style_params(cfg)
        self.version = lightgbm.__version__

    def fit(self, X, y, rounds):
        return self.lib.train(self.params, self.lib.Dataset(X, y), num_boost_round=rounds)

    def predict(self, model, X):
        return model.predict(X, num_threads=self.cfg["threads"])


class XGBoostRunner:
    name = "xgboost"

    def __init__(self, cfg):
        import xgboost  # noqa: PLC0415

        self.lib = xgboost
        self.cfg = cfg
        # lossguide + max_leaves is XGBoost's leaf-wise (best-first) growth.
        # XGBoost has no minimum row count per leaf; min_child_weight is the
        # minimum hessian sum.  reg_lambda 0 matches LightGBM's lambda_l2 = 0.
        self.params = {
            "objective": "binary:logistic",
            "tree_method": "hist",
            "grow_policy": "lossguide",
            "max_leaves": cfg["leaves"],
            "max_depth": 0,
            "eta": cfg["learning_rate"],
            "max_bin": cfg["max_bin"],
            "nthread": cfg["threads"],
            "min_child_weight": 1e-3,
            "reg_lambda": 0.0,
            "seed": SEED,
            "verbosity": 0,
        }
        self.version = xgboost.__version__

    def fit(self, X, y, rounds):
        dtrain = self.lib.QuantileDMatrix(
            X, y, max_bin=self.cfg["max_bin"], nthread=self.cfg["threads"]
        )
        return self.lib.train(self.params, dtrain, num_boost_round=rounds)

    def predict(self, model, X):
        return model.inplace_predict(X)


class SklearnRunner:
    name = "sklearn"

    def __init__(self, cfg):
        import sklearn  # noqa: PLC0415
        from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: PLC0415

        self.cfg = cfg
        # HistGradientBoosting has no minimum hessian; its threads follow
        # OpenMP (OMP_NUM_THREADS is set for the child).
        self.params = {
            "max_iter": None,  # set per fit
            "learning_rate": cfg["learning_rate"],
            "max_leaf_nodes": cfg["leaves"],
            "max_bins": min(cfg["max_bin"], 255),
            "min_samples_leaf": 20,
            "l2_regularization": 0.0,
            "early_stopping": False,
            "random_state": SEED,
        }
        self.cls = HistGradientBoostingClassifier
        self.version = sklearn.__version__

    def fit(self, X, y, rounds):
        return self.cls(**{**self.params, "max_iter": rounds}).fit(X, y)

    def predict(self, model, X):
        return model.predict_proba(X)[:, 1]


RUNNERS = {
    "dgbdt": DgbdtRunner,
    "lightgbm": LightGBMRunner,
    "xgboost": XGBoostRunner,
    "sklearn": SklearnRunner,
}


def timed_runs(runner, cfg, X_train, y_train, X_test):
    """``cfg["repeats"]`` timed fits, then as many predicts of the last model:
    (fit seconds, predict seconds, the last probabilities)."""
    fit_times = []
    model = None
    for _ in range(cfg["repeats"]):
        model = None  # free the previous model before the next fit
        gc.collect()
        t0 = time.perf_counter()
        model = runner.fit(X_train, y_train, cfg["rounds"])
        fit_times.append(time.perf_counter() - t0)
    predict_times = []
    for _ in range(cfg["repeats"]):
        t0 = time.perf_counter()
        proba = runner.predict(model, X_test)
        predict_times.append(time.perf_counter() - t0)
    return fit_times, predict_times, proba


def worker_main(lib, cfg, result_path):
    """One library, in its own process: generate, warm up, fit, predict, measure."""
    t0 = time.perf_counter()
    datasets = load_datasets_module()
    X, y = datasets.make_higgs_like(
        cfg["rows"] + cfg["test_rows"], n_features=cfg["features"], seed=SEED
    )
    X_train, y_train = X[: cfg["rows"]], y[: cfg["rows"]]
    X_test, y_test = X[cfg["rows"] :], y[cfg["rows"] :]
    gen_s = time.perf_counter() - t0
    data_rss = rss_now_mb()

    runner = RUNNERS[lib](cfg)
    import_rss = rss_now_mb()
    # Warm-up on a slice: loads (or compiles) dgbdt's kernels and touches
    # every library's code paths, so the timed fits measure steady state.
    n_warm = min(20_000, cfg["rows"])
    t0 = time.perf_counter()
    warm = runner.fit(X_train[:n_warm], y_train[:n_warm], 2)
    runner.predict(warm, X_test[:1000])
    warmup_s = time.perf_counter() - t0
    del warm
    gc.collect()

    hwm_reset = reset_peak_rss()
    baseline = rss_now_mb()
    fit_times, predict_times, proba = timed_runs(runner, cfg, X_train, y_train, X_test)
    peak = peak_rss_mb()  # before the metrics import anything
    auc, logloss = binary_metrics(y_test, proba)

    result = {
        "library": lib,
        "version": runner.version,
        "params": {k: v for k, v in runner.params.items() if v is not None},
        "fit_s": statistics.median(fit_times),
        "fit_runs_s": fit_times,
        "predict_s": statistics.median(predict_times),
        "predict_runs_s": predict_times,
        "auc": auc,
        "logloss": logloss,
        "peak_rss_mb": peak,
        "baseline_rss_mb": baseline,
        "peak_minus_baseline_mb": peak - baseline,
        "data_rss_mb": data_rss,
        "import_rss_mb": import_rss,
        "hwm_reset": hwm_reset,
        "datagen_s": gen_s,
        "warmup_s": warmup_s,
        "mean_label_test": float(y_test.mean()),
    }
    pathlib.Path(result_path).write_text(json.dumps(result, indent=2))


# ---------------------------------------------------------------------------
# dgbdt's JIT cost and start-up
# ---------------------------------------------------------------------------

JIT_ROWS, JIT_ROUNDS = 10_000, 5
STARTUP_ROWS, STARTUP_ROUNDS = 1_000, 100


def jit_worker_main(cfg, result_path):
    """Time import, a first fit+predict and the same fit+predict again.

    Run with NUMBA_CACHE_DIR pointing at an empty folder, the difference
    first - repeat is what compiling every kernel costs a first-ever user;
    run again with the now-filled folder, it is the cost of loading the cache.
    """
    datasets = load_datasets_module()
    X, y = datasets.make_higgs_like(JIT_ROWS, seed=SEED)
    t0 = time.perf_counter()
    import dgbdt  # noqa: PLC0415

    import_s = time.perf_counter() - t0
    params = lightgbm_style_params(cfg)
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        booster = dgbdt.train(params, dgbdt.Dataset(X, label=y), num_boost_round=JIT_ROUNDS)
        booster.predict(X)
        times.append(time.perf_counter() - t0)
    cache = pathlib.Path(os.environ.get("NUMBA_CACHE_DIR", "."))
    files = [p for p in cache.rglob("*") if p.is_file()] if cache.is_dir() else []
    write_result(
        result_path,
        {
            "import_s": import_s,
            "first_s": times[0],
            "repeat_s": times[1],
            "cache_files": len(files),
            "cache_mb": sum(p.stat().st_size for p in files) / 2**20,
        },
    )


STARTUP_SCRIPT = f"""
import numpy as np
import dgbdt
rng = np.random.default_rng(0)
X = rng.standard_normal(({STARTUP_ROWS}, 28)).astype(np.float32)
y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(np.float64)
params = dict(objective="binary", num_leaves=31, learning_rate=0.1, num_threads=THREADS, verbosity=-1)
booster = dgbdt.train(params, dgbdt.Dataset(X, label=y), num_boost_round={STARTUP_ROUNDS})
booster.predict(X)
"""


# ---------------------------------------------------------------------------
# the parent: run children, print the table
# ---------------------------------------------------------------------------


def run_child(args, cfg, timeout, env_extra=None):
    """This script in a child mode with ``cfg["threads"]`` threads; returns (result or None, error)."""
    return run_worker(
        SCRIPT,
        args,
        cfg,
        timeout,
        env=child_env(cfg["threads"], env_extra),
        timeout_msg="timed out after {} s",
    )


def measure_jit(cfg, timeout):
    """Cold compile, cache load and warm start-up of dgbdt, in fresh processes."""
    out = {}
    cache = tempfile.mkdtemp(prefix="dgbdt-bench-numba-cache-")
    try:
        env = {"NUMBA_CACHE_DIR": cache}
        cold, err = run_child(["--jit-worker"], cfg, timeout, env)
        if err:
            return {"error": err}
        warm, err = run_child(["--jit-worker"], cfg, timeout, env)
        if err:
            return {"error": err}
        # Compile cost: what the first fit+predict pays beyond a repeat, plus
        # whatever import did beyond a warm import (eagerly compiled kernels).
        out["cold"], out["warm"] = cold, warm
        out["compile_s"] = (cold["first_s"] - cold["repeat_s"]) + max(
            0.0, cold["import_s"] - warm["import_s"]
        )
        out["cache_load_s"] = warm["first_s"] - warm["repeat_s"]
        script = STARTUP_SCRIPT.replace("THREADS", str(cfg["threads"]))
        runs = []
        for _ in range(cfg["repeats"]):
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-c", script],
                env=child_env(cfg["threads"], env),
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            elapsed = time.perf_counter() - t0
            if proc.returncode != 0:
                out["startup_error"] = tail_text(proc.stderr)
                break
            runs.append(elapsed)
        if runs:
            out["startup_runs_s"] = runs
            out["startup_s"] = statistics.median(runs)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return out


def print_table(cfg, results):
    header = [
        "library",
        "version",
        "fit s",
        "fit runs s",
        "predict s",
        "test AUC",
        "logloss",
        "peak RSS MB",
        "baseline MB",
        "peak-base MB",
    ]
    rows = []
    for lib, r in results.items():
        if "error" in r:
            rows.append([lib, "error: " + r["error"][:90]])  # a short row: a note
            continue
        rows.append(
            [
                lib,
                r["version"],
                f"{r['fit_s']:.2f}",
                fmt_runs(r["fit_runs_s"]),
                f"{r['predict_s']:.3f}",
                f"{r['auc']:.4f}",
                f"{r['logloss']:.4f}",
                f"{r['peak_rss_mb']:.0f}",
                f"{r['baseline_rss_mb']:.0f}",
                f"{r['peak_minus_baseline_mb']:.0f}",
            ]
        )
    print_rows(header, rows, left=2)


def print_jit(jit):
    if not jit:
        return
    if "error" in jit:
        print(f"dgbdt JIT: error: {jit['error']}")
        return
    c, w = jit["cold"], jit["warm"]
    print(
        f"dgbdt JIT compile (first-ever, empty NUMBA_CACHE_DIR): {jit['compile_s']:.2f} s  "
        f"[first fit+predict {c['first_s']:.2f} s - repeat {c['repeat_s']:.2f} s on {JIT_ROWS:,} rows x "
        f"{JIT_ROUNDS} rounds; import {c['import_s']:.2f} s cold / {w['import_s']:.2f} s warm; "
        f"cache {c['cache_files']} files, {c['cache_mb']:.1f} MB]"
    )
    print(
        f"dgbdt cache load (new process, warm cache): {jit['cache_load_s']:.2f} s  "
        f"[first {w['first_s']:.2f} s - repeat {w['repeat_s']:.2f} s]"
    )
    if "startup_s" in jit:
        print(
            f"dgbdt warm-cache start-up (new process: import + {STARTUP_ROUNDS} rounds on {STARTUP_ROWS:,} rows, "
            f"whole process): {jit['startup_s']:.2f} s  [runs {fmt_runs(jit['startup_runs_s'])}]  "
            f"target < {TARGETS['startup_s']:.0f} s  {verdict(jit['startup_s'] < TARGETS['startup_s'])}"
        )
    elif "startup_error" in jit:
        print(f"dgbdt warm-cache start-up: error: {jit['startup_error']}")


def compute_ratios(results, jit):
    d, lg = results.get("dgbdt"), results.get("lightgbm")
    if not d or not lg or "error" in d or "error" in lg:
        return None
    ratios = {
        "fit": d["fit_s"] / lg["fit_s"],
        "predict": d["predict_s"] / lg["predict_s"],
        "memory": d["peak_rss_mb"] / lg["peak_rss_mb"],
        "memory_above_baseline": d["peak_minus_baseline_mb"]
        / max(lg["peak_minus_baseline_mb"], 1e-9),
        "auc_diff": d["auc"] - lg["auc"],
    }
    ratios["pass"] = {
        "fit": ratios["fit"] <= TARGETS["fit"],
        "predict": ratios["predict"] <= TARGETS["predict"],
        "memory": ratios["memory"] <= TARGETS["memory"],
        "auc": ratios["auc_diff"] >= TARGETS["auc"],
    }
    if jit and "startup_s" in jit:
        ratios["pass"]["startup"] = jit["startup_s"] < TARGETS["startup_s"]
    return ratios


def print_ratios(ratios):
    if ratios is None:
        print("dgbdt / LightGBM: not available (both libraries must run)")
        return
    p = ratios["pass"]
    print("dgbdt / LightGBM:")
    print(
        f"  fit time     {ratios['fit']:6.3f} x   target <= {TARGETS['fit']:.1f} x   {verdict(p['fit'])}"
    )
    print(
        f"  predict time {ratios['predict']:6.3f} x   target <= {TARGETS['predict']:.1f} x   {verdict(p['predict'])}"
    )
    print(
        f"  peak RSS     {ratios['memory']:6.3f} x   target <= {TARGETS['memory']:.1f} x   {verdict(p['memory'])}"
        f"   (peak above baseline: {ratios['memory_above_baseline']:.2f} x, for information)"
    )
    print(
        f"  test AUC     {ratios['auc_diff']:+.4f}    target >= {TARGETS['auc']:+.3f}    {verdict(p['auc'])}"
    )


def parse_args(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000, help="training rows (default 1,000,000)")
    ap.add_argument("--test-rows", type=int, default=200_000, help="test rows (default 200,000)")
    ap.add_argument("--features", type=int, default=28, help="features (default 28)")
    ap.add_argument("--rounds", type=int, default=100, help="boosting rounds (default 100)")
    ap.add_argument("--leaves", type=int, default=255, help="leaves per tree (default 255)")
    ap.add_argument("--learning-rate", type=float, default=0.1)
    ap.add_argument("--max-bin", type=int, default=255)
    ap.add_argument("--threads", type=int, default=2, help="threads per library (default 2)")
    ap.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="timed fits/predicts per library; the median is reported",
    )
    ap.add_argument(
        "--libs", default=",".join(ALL_LIBS), help=f"comma list from {','.join(ALL_LIBS)}"
    )
    ap.add_argument(
        "--quick", action="store_true", help="100,000 train rows (20,000 test rows), 20 rounds"
    )
    ap.add_argument(
        "--no-jit", action="store_true", help="skip dgbdt's JIT compile and start-up lines"
    )
    ap.add_argument(
        "--timeout", type=float, default=3600.0, help="seconds allowed per child process"
    )
    ap.add_argument("--json", metavar="PATH", help="also write all results to PATH")
    # child modes (internal)
    ap.add_argument("--worker", choices=ALL_LIBS, help=SUPPRESS)
    ap.add_argument("--jit-worker", action="store_true", help=SUPPRESS)
    ap.add_argument("--config", help=SUPPRESS)
    ap.add_argument("--result", help=SUPPRESS)
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.rounds = 100_000, 20
        if args.test_rows == 200_000:
            args.test_rows = 20_000
    return args


def print_header(args):
    """The configuration, the machine and the timing note; returns the load average at start."""
    print(
        f"bench_core: make_higgs_like seed {SEED}, {args.rows:,} train x {args.features} float32 + "
        f"{args.test_rows:,} test rows; binary, {args.rounds} rounds, {args.leaves} leaves, "
        f"lr {args.learning_rate}, max_bin {args.max_bin}, {args.threads} threads, min_data_in_leaf 20, "
        f"min_sum_hessian 1e-3, no early stopping; median of {args.repeats} runs"
    )
    load_before = print_machine()
    print(f"note: {TIMING_NOTE}")
    print(flush=True)
    return load_before


def run_all(libs, cfg, args):
    """Every library's child, then dgbdt's JIT children: (results by library, JIT or None)."""
    results = {}
    for lib in libs:
        r, err = timed(lib, run_child, ["--worker", lib], cfg, args.timeout, failed="FAILED ({})")
        results[lib] = r if r is not None else {"error": err}
    jit = None
    if "dgbdt" in libs and not args.no_jit:
        t0 = time.perf_counter()
        jit = measure_jit(cfg, args.timeout)
        print(f"  ran dgbdt JIT/start-up checks in {time.perf_counter() - t0:.0f} s", flush=True)
    return results, jit


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        worker_main(args.worker, json.loads(args.config), args.result)
        return 0
    if args.jit_worker:
        jit_worker_main(json.loads(args.config), args.result)
        return 0

    libs = [s.strip() for s in args.libs.split(",") if s.strip()]
    unknown = [lib for lib in libs if lib not in ALL_LIBS]
    if unknown:
        raise SystemExit(f"--libs: unknown {unknown}; choose from {ALL_LIBS}")
    cfg = {
        "rows": args.rows,
        "test_rows": args.test_rows,
        "features": args.features,
        "rounds": args.rounds,
        "leaves": args.leaves,
        "learning_rate": args.learning_rate,
        "max_bin": args.max_bin,
        "threads": args.threads,
        "repeats": args.repeats,
    }
    load_before = print_header(args)
    results, jit = run_all(libs, cfg, args)
    print()
    print_table(cfg, results)
    print()
    print_jit(jit)
    ratios = compute_ratios(results, jit)
    if "dgbdt" in libs and "lightgbm" in libs:
        print()
        print_ratios(ratios)
    if args.json:
        payload = {
            "config": cfg,
            "seed": SEED,
            "note": TIMING_NOTE,
            "targets": TARGETS,
            **machine_info(load_before),
            "results": results,
            "jit": jit,
            "ratios": ratios,
        }
        write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
