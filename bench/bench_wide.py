"""Data as wide as hashed text: dgbdt at 2**20 and 2**24 columns next to LightGBM
(issue 25's "data as wide as hashed text").

Generated CSR data (fixed seed): ``--rows`` (100,000) rows with ``--nnz``
(1,000,000) non-zeros in ``--used`` (20,000) columns scattered (as a hash would
scatter them) over 2**``--bits`` columns; column frequencies follow a power
law, values are uniform in (0, 1], and a planted signal on a dozen columns of
several frequencies gives binary labels.  The used columns and the non-zeros
are the same at every width: only the column numbers change.  Each run is one
library at one width in its own process (63 leaves, learning rate 0.1,
``--rounds`` 20, 2 threads): Dataset construction plus training timed (median
of ``--repeats``), peak RSS (getrusage), and test AUC on ``--rows // 5`` rows
of the same generator predicted at full width.

Targets (the issue): at 2**20 columns dgbdt's time and peak memory <= LightGBM's;
at 2**24 columns dgbdt's peak memory at most 200 MB above its 2**20 run, and its
time <= 1.2x its 2**20 run.  LightGBM at 2**24 (``--lightgbm-wide``) builds a
bin mapper for every column (measured by the issue: 25.5 s / 3.4 GB at 2**22 on
10k rows), so it is off by default.

    python bench/bench_wide.py                 # full size
    python bench/bench_wide.py --quick         # 20,000 rows, 200,000 non-zeros, 5,000 used
    python bench/bench_wide.py --libsvm        # also dgbdt's command line on LibSVM files

``--libsvm`` writes the 2**24-wide data as LibSVM text (indices up to 2**24 - 1)
and runs ``dgbdt train data=file.svm`` and ``dgbdt predict`` on it.
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
PLANTED = [0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 1023, 2047]


def used_columns(n_used, bits):
    """The ``n_used`` columns of the data among 2**bits: the same ranks (by
    frequency) at every width, their numbers hashed over the width."""
    rng = np.random.default_rng(777)
    return rng.choice(1 << bits, size=n_used, replace=False).astype(np.int64)


def make_wide(n_rows, bits, nnz, n_used, seed):
    """(X csr float64 of 2**bits columns, y float64): power-law frequencies over
    the used columns (column of rank r at used_columns(...)[r]), planted signal."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, n_used + 1) ** 1.1
    rank = rng.choice(n_used, size=nnz, p=weights / weights.sum())
    rows = rng.integers(0, n_rows, size=nnz)
    vals = rng.random(nnz) + 1e-3
    X = sp.csr_matrix((vals, (rows, rank)), shape=(n_rows, n_used))
    X.sum_duplicates()
    planted = [c for c in PLANTED if c < n_used]
    coef = np.random.default_rng(12345).normal(size=len(planted)) * 2.0  # the same for test data
    signal = (
        np.asarray(X[:, planted] @ coef).ravel() + 0.5 * (X[:, planted[0]] > 0.5).toarray().ravel()
    )
    y = (signal + 0.3 * rng.normal(size=n_rows) > np.median(signal)).astype(np.float64)
    columns = used_columns(n_used, bits)
    wide = sp.csr_matrix((X.data, columns[X.indices], X.indptr), shape=(n_rows, 1 << bits))
    wide.sort_indices()
    return wide, y


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def rss_mb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


def data_of(cfg):
    X, y = make_wide(cfg["rows"], cfg["bits"], cfg["nnz"], cfg["used"], SEED)
    Xt, yt = make_wide(cfg["rows"] // 5, cfg["bits"], cfg["nnz"] // 5, cfg["used"], SEED + 1)
    return X, y, Xt, yt


def params_of(cfg):
    return {
        "objective": "binary",
        "num_leaves": 63,
        "learning_rate": 0.1,
        "num_threads": cfg["threads"],
        "verbosity": -1,
        "seed": 0,
    }


def worker(cfg, result_path):
    """One library at one width in its own process: data, baseline, timed
    construct + fit, predict at full width, AUC, peak RSS."""
    from common import write_result

    X, y, Xt, yt = data_of(cfg)
    if cfg["lib"] == "lightgbm":
        import lightgbm as lib
    else:
        import dgbdt as lib
    baseline, base_peak = rss_mb(), peak_mb()
    fits = []
    for _ in range(cfg["repeats"]):
        t0 = time.perf_counter()
        ds = lib.Dataset(X, y)
        model = lib.train(params_of(cfg), ds, cfg["rounds"])
        fits.append(time.perf_counter() - t0)
    store = getattr(ds, "store", None)
    t0 = time.perf_counter()
    pred = model.predict(Xt)
    predict_s = time.perf_counter() - t0
    peak = peak_mb()
    write_result(
        result_path,
        {
            "fit_s": statistics.median(fits),
            "fit_runs_s": fits,
            "predict_s": predict_s,
            "auc": auc_of(yt, pred),
            "peak_rss_mb": peak,
            "baseline_rss_mb": baseline,
            "peak_before_fit_mb": base_peak,
            "peak_minus_baseline_mb": peak - baseline,
            "store": store.describe() if store is not None else None,
        },
    )


def warm_worker(cfg, result_path):
    """Compile (or load) dgbdt's kernels once, on a small wide matrix, so that
    the timed runs measure no JIT."""
    from common import write_result

    import dgbdt

    small = {**cfg, "rows": 2000, "nnz": 20000, "used": 500}
    X, y, Xt, _ = data_of(small)
    t0 = time.perf_counter()
    dgbdt.train(params_of(cfg), dgbdt.Dataset(X, y), 2).predict(Xt)
    write_result(result_path, {"warm_s": time.perf_counter() - t0})


def cli_worker(cfg, result_path):
    """``dgbdt train`` and ``dgbdt predict`` on LibSVM files of the data (indices
    up to 2**bits - 1), each in a child process: wall time and the child's peak
    RSS, test AUC."""
    import subprocess
    import tempfile

    from common import write_result
    from sklearn.datasets import dump_svmlight_file

    X, y, Xt, yt = data_of(cfg)
    out = {}
    with tempfile.TemporaryDirectory(prefix="dgbdt-bench-wide-svm-") as tmp:
        train, test = f"{tmp}/train.svm", f"{tmp}/test.svm"
        dump_svmlight_file(X, y, train)
        dump_svmlight_file(Xt, yt, test)
        out["train_file_mb"] = os.path.getsize(train) / 2**20
        out["largest_index"] = int(max(X.indices.max(), Xt.indices.max()))
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
                f"output_model={tmp}/model.txt",
            ],
            "predict": [
                f"data={test}",
                f"input_model={tmp}/model.txt",
                f"output_result={tmp}/pred.txt",
            ],
        }
        for task, args in commands.items():
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "dgbdt", task, *args], check=True)
            out[f"{task}_s"] = time.perf_counter() - t0
            out[f"{task}_peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        out["model_mb"] = os.path.getsize(f"{tmp}/model.txt") / 2**20
        out["auc"] = auc_of(yt, np.loadtxt(f"{tmp}/pred.txt"))
    write_result(result_path, out)


def parse_args(argv):
    ap = arg_parser(__doc__)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--nnz", type=int, default=1_000_000)
    ap.add_argument("--used", type=int, default=20_000, help="columns holding values")
    ap.add_argument("--bits", type=int, default=20, help="the narrower width, 2**bits")
    ap.add_argument("--wide-bits", type=int, default=24, help="the wider width, 2**bits")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--quick", action="store_true", help="20,000 rows, 200,000 non-zeros, 5,000 used"
    )
    ap.add_argument("--lightgbm-wide", action="store_true", help="also LightGBM at the wider width")
    ap.add_argument(
        "--libsvm", action="store_true", help="also dgbdt's command line on LibSVM files"
    )
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--worker", help="(internal)")
    ap.add_argument("--config", help="(internal)")
    ap.add_argument("--result", help="(internal)")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.nnz, args.used = 20_000, 200_000, 5_000
    return args


def run_all(args, cfg):
    """Every (library, width) run, each in its own process; returns {label: result}."""
    runs = [("dgbdt", args.bits), ("dgbdt", args.wide_bits), ("lightgbm", args.bits)]
    if args.lightgbm_wide:
        runs.append(("lightgbm", args.wide_bits))
    env = child_env(args.threads)
    res, err = run_worker(
        SCRIPT, ["--worker", "warm"], {**cfg, "bits": args.bits}, args.timeout, env=env
    )
    print(
        f"  warmed dgbdt's kernels {'in {:.0f} s'.format(res['warm_s']) if res else err}",
        flush=True,
    )
    results = {}
    for lib, bits in runs:
        label = f"{lib} 2^{bits}"
        t0 = time.perf_counter()
        res, err = run_worker(
            SCRIPT, ["--worker", lib], {**cfg, "lib": lib, "bits": bits}, args.timeout, env=env
        )
        results[label] = res if res else {"error": err}
        print(f"  ran {label} in {time.perf_counter() - t0:.0f} s {'' if res else err}", flush=True)
    return results


def print_table(results):
    rows = []
    for label, r in results.items():
        if "error" in r:
            rows.append([label, r["error"]])
            continue
        rows.append(
            [
                label,
                f"{r['fit_s']:.2f}",
                "/".join(f"{t:.2f}" for t in r["fit_runs_s"]),
                f"{r['predict_s']:.2f}",
                f"{r['auc']:.4f}",
                f"{r['peak_rss_mb']:.0f}",
                f"{r['peak_minus_baseline_mb']:.0f}",
            ]
        )
    print()
    print_rows(
        ["run", "fit s", "fit runs s", "predict s", "test AUC", "peak RSS MB", "peak-base MB"],
        rows,
    )
    for label, r in results.items():
        if r.get("store"):
            print(f"{label} bin store: {r['store']}")


def print_targets(results, args):
    """PASS/FAIL of the issue's targets; returns the ratios."""
    narrow, wide = f"dgbdt 2^{args.bits}", f"dgbdt 2^{args.wide_bits}"
    d, w, lg = (
        results.get(narrow, {}),
        results.get(wide, {}),
        results.get(f"lightgbm 2^{args.bits}", {}),
    )
    out = {}
    print()
    if "fit_s" in d and "fit_s" in lg:
        out["fit"] = d["fit_s"] / lg["fit_s"]
        out["rss"] = d["peak_rss_mb"] / lg["peak_rss_mb"]
        print(
            f"2^{args.bits}: fit      dgbdt / LightGBM {out['fit']:.2f}x (<= 1.0)   {verdict(out['fit'] <= 1.0)}"
        )
        print(
            f"2^{args.bits}: peak RSS dgbdt / LightGBM {out['rss']:.2f}x (<= 1.0)   {verdict(out['rss'] <= 1.0)}"
        )
    if "fit_s" in d and "fit_s" in w:
        out["wide_fit"] = w["fit_s"] / d["fit_s"]
        out["wide_rss_mb"] = w["peak_rss_mb"] - d["peak_rss_mb"]
        print(
            f"2^{args.wide_bits} vs 2^{args.bits}: fit {out['wide_fit']:.2f}x (<= 1.2)   "
            f"{verdict(out['wide_fit'] <= 1.2)}"
        )
        print(
            f"2^{args.wide_bits} vs 2^{args.bits}: peak RSS {out['wide_rss_mb']:+.0f} MB (<= +200)   "
            f"{verdict(out['wide_rss_mb'] <= 200)}"
        )
    return out


def main(argv=None):
    import json

    args = parse_args(argv)
    if args.worker:
        workers = {"cli": cli_worker, "warm": warm_worker}
        workers.get(args.worker, worker)(json.loads(args.config), args.result)
        return 0
    load = print_machine()
    import llvmlite.binding as llvm

    print(f"CPU {llvm.get_host_cpu_name()}, load average {os.getloadavg()[0]:.2f} at start")
    cfg = {k: getattr(args, k) for k in ("rows", "nnz", "used", "rounds", "repeats", "threads")}
    print(
        f"CSR {args.rows:,} rows, {args.nnz:,} non-zeros in {args.used:,} used columns of "
        f"2^{args.bits} and 2^{args.wide_bits}; {args.rounds} rounds, {args.threads} threads",
        flush=True,
    )
    results = run_all(args, cfg)
    print_table(results)
    results["targets"] = print_targets(results, args)
    if args.libsvm:
        res, err = run_worker(
            SCRIPT,
            ["--worker", "cli"],
            {**cfg, "bits": args.wide_bits},
            args.timeout,
            env=child_env(args.threads),
        )
        if err:
            print("command line:", err)
        else:
            print(
                f"\ndgbdt command line on LibSVM files ({res['train_file_mb']:.0f} MB of training "
                f"text, largest index {res['largest_index']:,}): train {res['train_s']:.1f} s, "
                f"peak RSS {res['train_peak_mb']:.0f} MB (model file {res['model_mb']:.0f} MB); "
                f"predict {res['predict_s']:.1f} s, peak RSS (either) "
                f"{res['predict_peak_mb']:.0f} MB; test AUC {res['auc']:.4f}"
            )
        results["cli"] = res
    if args.json:
        write_json(args.json, {"config": cfg, **machine_info(load), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
