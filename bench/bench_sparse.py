"""Sparse, wide data: dgbdt next to LightGBM (issue 13's measuring stick).

Generated CSR data (fixed seed): ``--rows`` (100,000) x ``--cols`` (20,000)
with ``--nnz`` (1,000,000) non-zeros, column frequencies following a power
law (a few columns dense, most very rare), values uniform in (0, 1], and a
planted signal on a dozen columns of several frequencies; binary labels.
Each library trains in its own process on the same matrix (63 leaves,
learning rate 0.1, ``--rounds`` 20, 2 threads) and predicts a test matrix
of ``--rows // 5`` rows from the same generator.  Printed: fit time (median
of ``--repeats``), test AUC, peak RSS whole and minus the process's baseline
after imports and data generation, and the ratios dgbdt / LightGBM against
the issue's targets (fit <= 1.5x, peak RSS <= 1.5x, AUC >= LightGBM's - 0.005).

    python bench/bench_sparse.py                 # full size (dgbdt may take minutes today)
    python bench/bench_sparse.py --quick         # 20,000 x 5,000, 200,000 non-zeros

A script run by hand, not a test.  Later parts of the issue (the dense wide
case, mpiexec runs, the LibSVM command line) extend it.
"""

import os
import resource
import statistics
import sys
import time

import numpy as np
from common import (
    arg_parser,
    auc_of,
    child_env,
    machine_info,
    print_machine,
    print_rows,
    run_worker,
    verdict,
    write_json,
)

SEED = 0
SCRIPT = __file__
TARGETS = {"fit": 1.5, "rss": 1.5, "auc": -0.005}


def make_sparse(n_rows, n_cols, nnz, seed):
    """(X csr float64, y float64): power-law column frequencies, planted signal."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, n_cols + 1) ** 1.1
    cols = rng.choice(n_cols, size=nnz, p=weights / weights.sum())
    rows = rng.integers(0, n_rows, size=nnz)
    vals = rng.random(nnz) + 1e-3
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, n_cols))
    X.sum_duplicates()
    planted = [0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 1023, 2047]
    planted = [c for c in planted if c < n_cols]
    coef = np.random.default_rng(12345).normal(size=len(planted)) * 2.0  # the same for test data
    signal = (
        np.asarray(X[:, planted] @ coef).ravel() + 0.5 * (X[:, planted[0]] > 0.5).toarray().ravel()
    )
    y = (signal + 0.3 * rng.normal(size=n_rows) > np.median(signal)).astype(np.float64)
    return X, y


def rss_mb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def worker(cfg, result_path):
    """One library in its own process: data, baseline, timed fits, predict, AUC."""
    from common import write_result

    X, y = make_sparse(cfg["rows"], cfg["cols"], cfg["nnz"], SEED)
    Xt, yt = make_sparse(cfg["rows"] // 5, cfg["cols"], cfg["nnz"] // 5, SEED + 1)
    params = {
        "objective": "binary",
        "num_leaves": 63,
        "learning_rate": 0.1,
        "num_threads": cfg["threads"],
        "verbosity": -1,
        "seed": 0,
    }
    if cfg["lib"] == "lightgbm":
        import lightgbm as lib
    else:
        import dgbdt as lib
    baseline = rss_mb()
    fits = []
    for _ in range(cfg["repeats"]):
        t0 = time.perf_counter()
        ds = lib.Dataset(X, y)
        model = lib.train(params, ds, cfg["rounds"])
        fits.append(time.perf_counter() - t0)
    store = getattr(ds, "store", None)  # dgbdt: how the bins were kept
    pred = model.predict(Xt)
    peak = peak_mb()
    write_result(
        result_path,
        {
            "fit_s": statistics.median(fits),
            "fit_runs_s": fits,
            "auc": auc_of(yt, pred),
            "peak_rss_mb": peak,
            "baseline_rss_mb": baseline,
            "peak_minus_baseline_mb": peak - baseline,
            "store": store.describe() if store is not None else None,
        },
    )


def cli_worker(cfg, result_path):
    """``dgbdt train`` and ``dgbdt predict`` on LibSVM files of the data, each in a
    child process: wall time and the child's peak RSS (this process's
    RUSAGE_CHILDREN maximum after each), test AUC of the predictions."""
    import subprocess
    import tempfile

    from common import write_result
    from sklearn.datasets import dump_svmlight_file

    X, y = make_sparse(cfg["rows"], cfg["cols"], cfg["nnz"], SEED)
    Xt, yt = make_sparse(cfg["rows"] // 5, cfg["cols"], cfg["nnz"] // 5, SEED + 1)
    out = {}
    with tempfile.TemporaryDirectory(prefix="dgbdt-bench-svm-") as tmp:
        train, test = f"{tmp}/train.svm", f"{tmp}/test.svm"
        dump_svmlight_file(X, y, train)
        dump_svmlight_file(Xt, yt, test)
        out["train_file_mb"] = os.path.getsize(train) / 2**20
        del X, Xt
        commands = {
            "train": [
                f"data={train}",
                "objective=binary",
                "num_leaves=63",
                "learning_rate=0.1",
                f"num_iterations={cfg['rounds']}",
                f"num_threads={cfg['threads']}",
                "verbosity=-1",
                f"output_model={tmp}/model.json",
            ],
            "predict": [
                f"data={test}",
                f"input_model={tmp}/model.json",
                f"output_result={tmp}/pred.txt",
            ],
        }
        for task, args in commands.items():
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "dgbdt", task, *args], check=True)
            out[f"{task}_s"] = time.perf_counter() - t0
            out[f"{task}_peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        out["auc"] = auc_of(yt, np.loadtxt(f"{tmp}/pred.txt"))
    write_result(result_path, out)


def parse_args(argv):
    ap = arg_parser(__doc__)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--cols", type=int, default=20_000)
    ap.add_argument("--nnz", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="20,000 x 5,000, 200,000 non-zeros")
    ap.add_argument(
        "--libsvm",
        action="store_true",
        help="also write the data as LibSVM files and run dgbdt's command line on them",
    )
    ap.add_argument(
        "--big",
        action="store_true",
        help="1,000,000 x 100,000, 5,000,000 non-zeros, 5 rounds, 1 repeat (issue 13: "
        "within 4 GiB peak RSS)",
    )
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--worker", help="(internal)")
    ap.add_argument("--config", help="(internal)")
    ap.add_argument("--result", help="(internal)")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.cols, args.nnz = 20_000, 5_000, 200_000
    if args.big:
        args.rows, args.cols, args.nnz, args.rounds, args.repeats = (
            1_000_000,
            100_000,
            5_000_000,
            5,
            1,
        )
    return args


def main(argv=None):
    import json

    args = parse_args(argv)
    if args.worker:
        (cli_worker if args.worker == "cli" else worker)(json.loads(args.config), args.result)
        return 0
    load = print_machine()
    cfg = {k: getattr(args, k) for k in ("rows", "cols", "nnz", "rounds", "repeats", "threads")}
    print(
        f"CSR {args.rows:,} x {args.cols:,}, {args.nnz:,} non-zeros; {args.rounds} rounds",
        flush=True,
    )
    results = {}
    for lib in ("lightgbm", "dgbdt"):
        t0 = time.perf_counter()
        res, err = run_worker(
            SCRIPT,
            ["--worker", lib],
            {**cfg, "lib": lib},
            args.timeout,
            env=child_env(args.threads),
        )
        results[lib] = res if res else {"error": err}
        print(f"  ran {lib} in {time.perf_counter() - t0:.0f} s {'' if res else err}", flush=True)
    rows = []
    for lib, r in results.items():
        if "error" in r:
            rows.append([lib, r["error"]])
            continue
        rows.append(
            [
                lib,
                f"{r['fit_s']:.2f}",
                "/".join(f"{t:.2f}" for t in r["fit_runs_s"]),
                f"{r['auc']:.4f}",
                f"{r['peak_rss_mb']:.0f}",
                f"{r['peak_minus_baseline_mb']:.0f}",
            ]
        )
    print()
    print_rows(["library", "fit s", "fit runs s", "test AUC", "peak RSS MB", "peak-base MB"], rows)
    if results.get("dgbdt", {}).get("store"):
        print(f"dgbdt's bin store: {results['dgbdt']['store']}")
    d, lg = results.get("dgbdt", {}), results.get("lightgbm", {})
    if "fit_s" in d and "fit_s" in lg:
        ratios = {
            "fit": d["fit_s"] / lg["fit_s"],
            "rss": d["peak_rss_mb"] / lg["peak_rss_mb"],
            "auc": d["auc"] - lg["auc"],
        }
        print()
        print(
            f"fit      dgbdt / LightGBM {ratios['fit']:.2f}x  (<= 1.5)   {verdict(ratios['fit'] <= 1.5)}"
        )
        print(
            f"peak RSS dgbdt / LightGBM {ratios['rss']:.2f}x  (<= 1.5)   {verdict(ratios['rss'] <= 1.5)}"
        )
        print(
            f"AUC      dgbdt - LightGBM {ratios['auc']:+.4f} (>= -0.005) {verdict(ratios['auc'] >= -0.005)}"
        )
        if args.big:
            rss = d["peak_rss_mb"] / 1024
            print(f"peak RSS dgbdt {rss:.2f} GiB  (<= 4 GiB)   {verdict(rss <= 4)}")
        results["ratios"] = ratios
    if args.libsvm:
        res, err = run_worker(
            SCRIPT, ["--worker", "cli"], cfg, args.timeout, env=child_env(args.threads)
        )
        if err:
            print("command line:", err)
        else:
            print(
                f"\ndgbdt command line on LibSVM files ({res['train_file_mb']:.0f} MB of training "
                f"text): train {res['train_s']:.1f} s, peak RSS {res['train_peak_mb']:.0f} MB; "
                f"predict {res['predict_s']:.1f} s, peak RSS (either) {res['predict_peak_mb']:.0f} MB; "
                f"test AUC {res['auc']:.4f}"
            )
        results["cli"] = res
    if args.json:
        write_json(args.json, {"config": cfg, **machine_info(load), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
