#!/usr/bin/env python
"""Peak memory of SHAP contributions (``pred_contrib=True``) on a very deep tree.

A chain tree ``--depth`` nodes deep (default 5,000) -- each internal node's
right child a leaf, its left child the next node, the split features cycling
over ``--features`` columns (default 4) -- is written as a LightGBM model
text.  Each library then runs in its own subprocess, one after the other:
import the library, warm up (dgbdt loads or compiles its kernels on a 3-deep
chain), reset the RSS high-water mark (``/proc/self/clear_refs``), load the
deep model and compute the contributions of ``--rows`` rows (default 1,000)
with ``--threads`` threads.  Printed per library: the process's peak RSS
(``getrusage(RUSAGE_SELF).ru_maxrss``) up to the warm-up, its peak while
loading and explaining, what that added to the RSS before it, the time of
the ``pred_contrib`` call, and the largest difference between the two
libraries' contributions.

    target   dgbdt peak while explaining <= 2 x LightGBM's

TreeSHAP's path buffer holds, per level of the tree, at most one element per
distinct feature above it (issue 27 item 13): LightGBM allocates the whole
(D + 1)(D + 2) / 2 triangle and touches only that part, dgbdt allocates only
that part.  Run ``python bench/bench_shap_memory.py --help``; this is a script
run by hand, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import tempfile
import time

from common import (
    arg_parser,
    child_env,
    machine_info,
    peak_rss_mb,
    print_machine,
    print_rows,
    reset_peak_rss,
    rss_now_mb,
    run_worker,
    verdict,
    write_json,
)

TARGET = 2.0  # dgbdt peak RSS while explaining / LightGBM's <=
LIBS = ("lightgbm", "dgbdt")
WARM_DEPTH = 3  # dgbdt's warm-up chain: loads the SHAP kernels, no deep buffers


def parse_args():
    ap = arg_parser(__doc__)
    ap.add_argument("--depth", type=int, default=5_000, help="the chain's depth (5,000)")
    ap.add_argument("--features", type=int, default=4, help="features it cycles over (4)")
    ap.add_argument("--rows", type=int, default=1_000, help="rows explained (1,000)")
    ap.add_argument("--threads", type=int, default=2, help="threads for both libraries (2)")
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds per child (1,200)")
    ap.add_argument("--json", help="also write the results to this JSON file")
    # a child's mode (run_worker), not for the command line
    ap.add_argument("--child", choices=LIBS, help=argparse.SUPPRESS)
    ap.add_argument("--config", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    return ap.parse_args()


def chain_model_text(depth, n_features, seed=0):
    """LightGBM's text of one chain tree: node k splits feature k % n_features
    at a threshold falling from 1 to -1, right child leaf k, left child node
    k + 1 (the last: leaf ``depth``); NaN goes left (decision_type 2)."""
    rng = random.Random(seed)
    feature = [k % n_features for k in range(depth)]
    threshold = [1.0 - 2.0 * k / depth + 0.01 * feature[k] for k in range(depth)]
    leaf_count = [rng.randint(1, 9) for _ in range(depth + 1)]
    internal_count = [0] * depth
    below = leaf_count[depth]
    for k in range(depth - 1, -1, -1):  # a node's count: the leaves below it
        below += leaf_count[k]
        internal_count[k] = below

    def row(values):
        return " ".join(repr(v) for v in values)

    fields = {
        "num_leaves": depth + 1,
        "num_cat": 0,
        "split_feature": row(feature),
        "split_gain": row([1.0] * depth),
        "threshold": row(threshold),
        "decision_type": row([2] * depth),
        "left_child": row([*range(1, depth), -depth - 1]),
        "right_child": row([-k - 1 for k in range(depth)]),
        "leaf_value": row([rng.gauss(0.0, 1.0) for _ in range(depth + 1)]),
        "leaf_weight": row(leaf_count),
        "leaf_count": row(leaf_count),
        "internal_value": row([0.0] * depth),
        "internal_weight": row(internal_count),
        "internal_count": row(internal_count),
        "is_linear": 0,
        "shrinkage": 1,
    }
    tree = "Tree=0\n" + "".join(f"{k}={v}\n" for k, v in fields.items()) + "\n\n"
    header = {
        "version": "v4",
        "num_class": 1,
        "num_tree_per_iteration": 1,
        "label_index": 0,
        "max_feature_idx": n_features - 1,
        "objective": "regression",
        "feature_names": " ".join(f"Column_{f}" for f in range(n_features)),
        "feature_infos": " ".join(["[-2:2]"] * n_features),
        "tree_sizes": len(tree),
    }
    head = "tree\n" + "".join(f"{k}={v}\n" for k, v in header.items()) + "\n"
    return head + tree + "end of trees\n\npandas_categorical:null\n"


# ---------------------------------------------------------------------------
# the child: one library
# ---------------------------------------------------------------------------


def loader(lib):
    """(model text -> booster) of ``lib``, its import inside the child only."""
    if lib == "lightgbm":
        import lightgbm  # noqa: PLC0415 - each child imports its own library

        return lambda text: lightgbm.Booster(model_str=text)
    import dgbdt  # noqa: PLC0415 - each child imports its own library

    return lambda text: dgbdt.Booster(model_str=text)


def child(lib, cfg, result):
    import numpy as np  # noqa: PLC0415 - the child's data

    load = loader(lib)
    X = np.load(cfg["rows_file"])
    warm = load(chain_model_text(WARM_DEPTH, cfg["features"]))
    warm.predict(X[:2], pred_contrib=True, num_threads=cfg["threads"])
    before_peak = peak_rss_mb()
    reset = reset_peak_rss()
    before = rss_now_mb()
    booster = load(pathlib.Path(cfg["model_file"]).read_text())
    t0 = time.perf_counter()
    contrib = booster.predict(X, pred_contrib=True, num_threads=cfg["threads"])
    seconds = time.perf_counter() - t0
    peak = peak_rss_mb()
    np.save(cfg["out_file"], contrib)
    row_sum_error = float(np.abs(contrib.sum(axis=1) - booster.predict(X)).max())
    payload = {
        "warm_peak_mb": before_peak,
        "peak_mb": peak,
        "added_mb": peak - before,
        "reset": reset,
        "seconds": seconds,
        "row_sum_error": row_sum_error,
    }
    pathlib.Path(result).write_text(json.dumps(payload))


# ---------------------------------------------------------------------------
# the parent
# ---------------------------------------------------------------------------


def run_both(args, tmp):
    """Each library's child result (or error) and contributions file."""
    import numpy as np  # noqa: PLC0415 - the parent's rows only

    model_file = tmp / "chain.txt"
    model_file.write_text(chain_model_text(args.depth, args.features))
    rows_file = tmp / "rows.npy"
    X = np.random.default_rng(1).uniform(-1.2, 1.2, (args.rows, args.features))
    X[:2] = [[-1.5] * args.features, [np.nan] * args.features]  # to the chain's bottom
    np.save(rows_file, X)
    results = {}
    for lib in LIBS:
        cfg = {
            "model_file": str(model_file),
            "rows_file": str(rows_file),
            "out_file": str(tmp / f"{lib}.npy"),
            "features": args.features,
            "threads": args.threads,
        }
        t0 = time.perf_counter()
        res, err = run_worker(
            __file__, ["--child", lib], cfg, args.timeout, env=child_env(args.threads)
        )
        status = "ok" if err is None else f"FAILED: {err}"
        print(f"  ran {lib}: {status} in {time.perf_counter() - t0:.0f} s", flush=True)
        results[lib] = res if err is None else {"error": err}
    return results


def largest_difference(tmp):
    import numpy as np  # noqa: PLC0415 - the parent compares the results

    files = [tmp / f"{lib}.npy" for lib in LIBS]
    if not all(f.is_file() for f in files):
        return None
    a, b = (np.load(f) for f in files)
    return float(np.abs(a - b).max())


def report(args, results, diff):
    rows = []
    for lib in LIBS:
        r = results[lib]
        if "error" in r:
            rows.append([lib, r["error"]])
            continue
        rows.append(
            [
                lib,
                f"{r['warm_peak_mb']:.0f}",
                f"{r['peak_mb']:.0f}",
                f"{r['added_mb']:.1f}",
                f"{r['seconds']:.2f}",
                f"{r['row_sum_error']:.1e}",
            ]
        )
    header = ["library", "import+warm MiB", "peak MiB", "added MiB", "pred_contrib s", "sum err"]
    print_rows(header, rows)
    if diff is not None:
        print(f"\nlargest |dgbdt - LightGBM| contribution: {diff:.2e}")
    if all("error" not in results[lib] for lib in LIBS):
        ratio = results["dgbdt"]["peak_mb"] / results["lightgbm"]["peak_mb"]
        print(
            f"peak ratio dgbdt / LightGBM {ratio:.2f} (target <= {TARGET}): {verdict(ratio <= TARGET)}"
        )
        return ratio
    return None


def main():
    args = parse_args()
    if args.child:
        child(args.child, json.loads(args.config), args.result)
        return
    import llvmlite.binding as llvm  # noqa: PLC0415 - the parent only prints the CPU name

    print(f"bench_shap_memory: pred_contrib on a chain tree {args.depth:,} deep")
    print(f"CPU {llvm.get_host_cpu_name()}")
    load = print_machine()
    print(
        f"{args.features} features, {args.rows:,} rows, {args.threads} threads, "
        f"each library in its own process\n"
    )
    with tempfile.TemporaryDirectory(prefix="dgbdt-shap-memory-") as name:
        tmp = pathlib.Path(name)
        results = run_both(args, tmp)
        print()
        ratio = report(args, results, largest_difference(tmp))
    if args.json:
        write_json(
            args.json,
            {
                "machine": {**machine_info(load), "cpu": llvm.get_host_cpu_name()},
                "settings": {
                    k: v for k, v in vars(args).items() if k not in ("child", "config", "result")
                },
                "results": results,
                "ratio": ratio,
            },
        )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
