#!/usr/bin/env python
"""Quantized training benchmark: dgbdt's ``use_quantized_grad=true`` next to float training.

One run checks the issue's four targets side by side, each with PASS/FAIL:

1. Accuracy A, generated data.  ``make_higgs_like`` 1,000,000 train x 28
   float32 features, 200,000 test rows, the settings of bench_core.py (binary,
   100 rounds, 255 leaves, lr 0.1, 255 bins, 2 threads, min_data_in_leaf 20,
   min_sum_hessian 1e-3, seed 0):

       test AUC(quantized) - test AUC(float) >= -0.002

2. Accuracy B, LightGBM's example ``binary.train`` (+ ``.weight``) ->
   ``binary.test`` read with ``dgbdt.io.read_data``, the settings of
   tests/test_accuracy.py (100 rounds, lr 0.1, 63 leaves, min_data_in_leaf 50,
   min_sum_hessian 5, 255 bins) plus bagging 0.8 every round so that the seed
   (``seed`` 0..4) matters for float training as well:

       median test logloss(quantized) <= 1.01 x median test logloss(float)

3. Speed, one process, 2 threads, the problem of (1): median fit time over
   ``--repeats`` fits, Dataset construction included, JIT compilation
   excluded (bench_core.py's worker: a warm-up fit first):

       dgbdt quantized / dgbdt float <= 0.75

   LightGBM's float and quantized fits are printed beside it (no target).

4. Communication, ``mpiexec -n K`` (K = 2 and 4, one Numba thread per rank)
   on a smaller problem (200,000 x 28 rows, 50,000 test rows, 20 rounds, 255
   leaves): ``booster.comm_stats()["bytes_per_tree"]``, median over trees,
   summed over ranks, for data-parallel and voting-parallel (top_k 20; both
   voting rules: ``votes``, PV-Tree's, elects 2 x top_k = 40 >= 28 features,
   i.e. all of them here, ``weighted_gain``, LightGBM's, elects 20):

       bytes per tree quantized / float <= 0.5   (each learner, each K)

   with the test AUC of every run.

Accuracy A and the speed figures come from the same runs: each
library/config (dgbdt float, dgbdt quantized, LightGBM float, LightGBM
quantized) runs bench_core.py's worker in its own subprocess with the extra
parameters added, so the timing method is exactly bench_core's.  Accuracy B
runs each library in a child as well.

Run ``python bench/bench_quantized.py --help``; see bench/README.md.  This is
a script run by hand, not a test.
"""

from __future__ import annotations

import functools
import json
import os
import pathlib
import statistics
import sys
import time
from argparse import SUPPRESS

import bench_core
import common
import numpy as np
from common import (
    add_sized,
    apply_defaults,
    arg_parser,
    binary_metrics,
    child_env,
    fmt_bytes,
    fmt_runs,
    load_datasets_module,
    machine_info,
    mpi_world,
    mpiexec_path,
    print_machine,
    print_rows,
    run_worker,
    verdict,
    warm_kernels,
    write_json,
    write_result,
)

SCRIPT = pathlib.Path(__file__).resolve()

QUANT = {"use_quantized_grad": True}

TARGETS = {
    "auc_a": -0.002,  # AUC(quantized) - AUC(float) on the generated problem >=
    "logloss_b": 1.01,  # median logloss(quantized) / median logloss(float) on binary.test <=
    "speed": 0.75,  # dgbdt fit(quantized) / dgbdt fit(float) <=
    "bytes": 0.5,  # bytes per tree quantized / float, data and voting, every K <=
}

#: name -> (library, extra parameters) of the speed / accuracy A runs
SPEED_CONFIGS = {
    "dgbdt float": ("dgbdt", {}),
    "dgbdt quantized": ("dgbdt", QUANT),
    "LightGBM float": ("lightgbm", {}),
    "LightGBM quantized": ("lightgbm", QUANT),
}

#: name -> dgbdt parameters of the distributed runs.  Both voting rules: at 28
#: features PV-Tree's rule (2 x top_k = 40 elected) elects every feature, so
#: only LightGBM's (top_k = 20 elected) exercises a real election.
COMM_LEARNERS = {
    "data": {"tree_learner": "data"},
    "voting-votes": {"tree_learner": "voting", "voting_rule": "votes"},
    "voting-wg": {"tree_learner": "voting", "voting_rule": "weighted_gain"},
}

FULL = {
    "rows": 1_000_000,
    "test_rows": 200_000,
    "rounds": 100,
    "repeats": 3,
    "seeds": 5,
    "comm_rows": 200_000,
    "comm_test_rows": 50_000,
    "comm_rounds": 20,
}
QUICK = {
    "rows": 100_000,
    "test_rows": 20_000,
    "rounds": 20,
    "repeats": 1,
    "seeds": 1,
    "comm_rows": 50_000,
    "comm_test_rows": 10_000,
    "comm_rounds": 10,
}


# ---------------------------------------------------------------------------
# children
# ---------------------------------------------------------------------------


def speed_worker(cfg, result_path):
    """bench_core's worker (generate, warm up, timed fits and predicts, AUC) with
    ``cfg["extra_params"]`` added to the parameters of dgbdt or LightGBM.

    bench_core's runners take their parameters from its module-level
    ``lightgbm_style_params``, which is wrapped here, in this child only."""
    base = bench_core.lightgbm_style_params
    bench_core.lightgbm_style_params = lambda c: {**base(c), **cfg["extra_params"]}
    bench_core.worker_main(cfg["lib"], cfg, result_path)


def binary_example_params(seed):
    """tests/test_accuracy.py's binary.train settings, bagged so the seed matters."""
    return {
        "objective": "binary",
        "learning_rate": 0.1,
        "num_leaves": 63,
        "min_data_in_leaf": 50,
        "min_sum_hessian_in_leaf": 5,
        "max_bin": 255,
        "bagging_fraction": 0.8,
        "bagging_freq": 1,
        "seed": seed,
        "verbosity": -1,
    }


#: accuracy B's modes: (name, extra parameters); the target compares the first two
BINARY_MODES = (
    ("float", {}),
    ("quantized", QUANT),
    ("quantized + renew", {**QUANT, "quant_train_renew_leaf": True}),
)


def binary_worker(cfg, result_path):
    """Accuracy B for one library: every seed, every mode.  A run that raises is
    recorded with its error (LightGBM 4.7's quantized training fails a check on
    one of seeds 0..29 here)."""
    from dgbdt.io import read_data  # noqa: PLC0415

    train = read_data(cfg["train_path"])
    test = read_data(cfg["test_path"])
    if train.weight is None:
        raise RuntimeError(f"{cfg['train_path']}.weight was not read")
    if cfg["lib"] == "dgbdt":
        import dgbdt as lib  # noqa: PLC0415

        def fit(params):
            return lib.train(
                params, lib.Dataset(train.X, train.label, weight=train.weight), cfg["rounds"]
            )
    else:
        import lightgbm as lib  # noqa: PLC0415

        def fit(params):
            return lib.train(
                params,
                lib.Dataset(train.X, train.label, weight=train.weight),
                num_boost_round=cfg["rounds"],
            )

    runs = []
    for seed in cfg["seeds"]:
        for mode, extra in BINARY_MODES:
            params = {**binary_example_params(seed), "num_threads": cfg["threads"], **extra}
            try:
                auc, logloss = binary_metrics(test.label, fit(params).predict(test.X))
            except Exception as exc:  # noqa: BLE001 -- recorded, reported in the table
                runs.append({"seed": seed, "mode": mode, "error": str(exc)[:200]})
                continue
            runs.append({"seed": seed, "mode": mode, "auc": auc, "logloss": logloss})
    pathlib.Path(result_path).write_text(
        json.dumps(
            {
                "lib": cfg["lib"],
                "version": lib.__version__,
                "runs": runs,
                "train_shape": list(train.X.shape),
                "test_shape": list(test.X.shape),
            }
        )
    )


def comm_problem(cfg):
    """(X_train, y_train, X_test, y_test) of the distributed problem (the same on every rank)."""
    X, y = load_datasets_module().make_higgs_like(cfg["rows"] + cfg["test_rows"], seed=0)
    return X[: cfg["rows"]], y[: cfg["rows"]], X[cfg["rows"] :], y[cfg["rows"] :]


def comm_params(cfg):
    return {
        "objective": "binary",
        "num_leaves": cfg["leaves"],
        "learning_rate": 0.1,
        "max_bin": 255,
        "min_data_in_leaf": 20,
        "min_sum_hessian_in_leaf": 1e-3,
        "top_k": cfg["top_k"],
        "num_threads": 1,
        "verbosity": -1,
        "seed": 0,
    }


def comm_worker(cfg, result_path):
    """Under mpiexec -n K: each learner float and quantized on this rank's contiguous
    shard; rank 0 writes bytes per tree (per rank) and the test AUC."""
    _, world = mpi_world(cfg["K"])
    K, rank = world.Get_size(), world.Get_rank()
    import dgbdt  # noqa: PLC0415

    X, y, Xt, yt = comm_problem(cfg)
    lo, hi = rank * len(y) // K, (rank + 1) * len(y) // K
    X, y = np.ascontiguousarray(X[lo:hi]), y[lo:hi]
    runs = []
    for name, learner in COMM_LEARNERS.items():
        for quantized in (False, True):
            params = {**comm_params(cfg), **learner, **(QUANT if quantized else {})}
            world.Barrier()
            t0 = time.perf_counter()
            booster = dgbdt.train(params, dgbdt.Dataset(X, y), cfg["rounds"])
            fit_s = time.perf_counter() - t0
            per_tree = world.gather(list(booster.comm_stats()["bytes_per_tree"]), root=0)
            fits = world.gather(fit_s, root=0)
            if rank == 0:
                per_tree = np.array(per_tree, dtype=np.float64)  # (K, trees)
                auc, _ = binary_metrics(yt, booster.predict(Xt))
                runs.append(
                    {
                        "K": K,
                        "learner": name,
                        "quantized": quantized,
                        "auc": auc,
                        "trees": booster.num_trees(),
                        "fit_s": max(fits),
                        "bytes_per_tree_sum": float(np.median(per_tree.sum(axis=0))),
                        "bytes_per_tree_rank": [float(np.median(r)) for r in per_tree],
                    }
                )
                write_result(result_path, runs)
    world.Barrier()


def warm_worker(cfg, result_path):
    """One process (mpiexec -n 1): compile and cache every kernel the ranks will use,
    so K ranks load the Numba cache instead of compiling at once.  20,000 rows: the
    root is big enough for wide quantized words, small leaves for narrow ones."""
    common.dgbdt_world_comm()
    X, y, Xt, _ = comm_problem({"rows": 20_000, "test_rows": 100})
    param_sets = [
        {**comm_params({**cfg, "leaves": 31}), **learner, **(QUANT if quantized else {})}
        for learner in COMM_LEARNERS.values()
        for quantized in (False, True)
    ]
    warm_kernels(param_sets, X, y, Xt)
    write_result(result_path, {})


WORKERS = {"speed": speed_worker, "binary": binary_worker, "comm": comm_worker, "warm": warm_worker}


# ---------------------------------------------------------------------------
# parent: launching
# ---------------------------------------------------------------------------


def run_child(mode, cfg, timeout, threads=None, mpi_ranks=None):
    """This script in a child mode, plain (``threads`` threads, bench_core's
    environment) or under ``mpiexec -n mpi_ranks`` (bench_comm's rank environment,
    one thread per rank, own process group).  Returns (result or None, error)."""
    env = None if mpi_ranks else child_env(threads)
    return run_worker(SCRIPT, ["--worker", mode], cfg, timeout, env=env, ranks=mpi_ranks)


# Every progress line shows the load: on a shared machine it explains a slow step.
timed = functools.partial(common.timed, load=True)


def run_speed(args):
    """The four speed/accuracy-A children, one after the other."""
    cfg = {
        "rows": args.rows,
        "test_rows": args.test_rows,
        "features": 28,
        "rounds": args.rounds,
        "leaves": 255,
        "learning_rate": 0.1,
        "max_bin": 255,
        "threads": args.threads,
        "repeats": args.repeats,
    }
    out = {"config": cfg, "results": {}}
    for name, (lib, extra) in SPEED_CONFIGS.items():
        res, err = timed(
            name,
            run_child,
            "speed",
            {**cfg, "lib": lib, "extra_params": extra},
            args.timeout,
            threads=args.threads,
        )
        if (
            res is not None
            and extra
            and not all(res["params"].get(k) == v for k, v in extra.items())
        ):
            res, err = None, f"the child did not train with {extra}"
        out["results"][name] = res if err is None else {"error": err}
    return out


def run_binary(args):
    shared = (
        load_datasets_module().find_shared_datasets()
    )  # $DGBDT_SHARED_DATASETS or ../shared/datasets
    folder = (shared or pathlib.Path("shared/datasets")) / "lightgbm"
    cfg = {
        "train_path": str(folder / "binary.train"),
        "test_path": str(folder / "binary.test"),
        "rounds": 100,
        "threads": args.threads,
        "seeds": list(range(args.seeds)),
    }
    out = {"config": cfg, "results": {}}
    if not pathlib.Path(cfg["train_path"]).is_file():
        out["error"] = f"{cfg['train_path']} is missing"
        return out
    for lib in ("dgbdt", "lightgbm"):
        res, err = timed(
            f"binary.train {lib}",
            run_child,
            "binary",
            {**cfg, "lib": lib},
            args.timeout,
            threads=args.threads,
        )
        out["results"][lib] = res if err is None else {"error": err}
    return out


def run_comm(args):
    cfg = {
        "rows": args.comm_rows,
        "test_rows": args.comm_test_rows,
        "rounds": args.comm_rounds,
        "leaves": 255,
        "top_k": args.top_k,
    }
    out = {"config": {**cfg, "ks": args.ks}, "runs": [], "errors": []}
    if not mpiexec_path().exists():
        out["errors"].append(f"no mpiexec beside {sys.executable}: pip install 'dgbdt[mpi]'")
        return out
    _, err = timed("warm-up (mpiexec -n 1)", run_child, "warm", cfg, args.timeout, mpi_ranks=1)
    if err:
        out["errors"].append(f"warm-up: {err}")
        return out
    for k in args.ks:
        runs, err = timed(
            f"mpiexec -n {k}", run_child, "comm", {**cfg, "K": k}, args.timeout, mpi_ranks=k
        )
        out["runs"].extend(runs or [])
        if err:
            out["errors"].append(f"K={k}: {err}")
    return out


# ---------------------------------------------------------------------------
# parent: summaries and tables
# ---------------------------------------------------------------------------


def ok(result):
    return result is not None and "error" not in result


def check(name, value, target, passed, text):
    return {"name": name, "value": value, "target": target, "pass": passed, "text": text}


def speed_checks(speed):
    r = speed["results"]
    f, q = r.get("dgbdt float"), r.get("dgbdt quantized")
    if not (ok(f) and ok(q)):
        return [
            check("accuracy A", None, TARGETS["auc_a"], None, "not available"),
            check("speed", None, TARGETS["speed"], None, "not available"),
        ]
    diff = q["auc"] - f["auc"]
    ratio = q["fit_s"] / f["fit_s"]
    return [
        check(
            "accuracy A: AUC quantized - float (generated)",
            diff,
            TARGETS["auc_a"],
            diff >= TARGETS["auc_a"],
            f"{q['auc']:.4f} - {f['auc']:.4f} = {diff:+.4f}",
        ),
        check(
            "speed: dgbdt fit quantized / float",
            ratio,
            TARGETS["speed"],
            ratio <= TARGETS["speed"],
            f"{q['fit_s']:.2f} s / {f['fit_s']:.2f} s = {ratio:.3f}x",
        ),
    ]


def print_speed(speed):
    cfg = speed["config"]
    print(
        f"speed and accuracy A: make_higgs_like seed 0, {cfg['rows']:,} train x 28 + {cfg['test_rows']:,} test "
        f"rows, {cfg['rounds']} rounds, 255 leaves, lr 0.1, 255 bins, {cfg['threads']} threads, each config in "
        f"its own process; fit = Dataset construction + train, median of {cfg['repeats']}, JIT warm-up excluded"
    )
    rows = []
    for name, r in speed["results"].items():
        if not ok(r):
            rows.append([name, "-", "error: " + (r or {}).get("error", "?")[:100]] + [""] * 6)
            continue
        rows.append(
            [
                name,
                r["version"],
                f"{r['fit_s']:.2f}",
                f"{min(r['fit_runs_s']):.2f}",
                fmt_runs(r["fit_runs_s"]),
                f"{r['predict_s']:.3f}",
                f"{r['auc']:.4f}",
                f"{r['logloss']:.4f}",
                f"{r['peak_rss_mb']:.0f}",
            ]
        )
    print_rows(
        [
            "config",
            "version",
            "fit s",
            "min fit s",
            "fit runs s",
            "predict s",
            "test AUC",
            "logloss",
            "peak RSS MB",
        ],
        rows,
        left=2,
    )
    res = speed["results"]
    for lib in ("dgbdt", "LightGBM"):
        f, q = res.get(f"{lib} float"), res.get(f"{lib} quantized")
        if ok(f) and ok(q):
            print(
                f"  {lib}: quantized / float fit {q['fit_s'] / f['fit_s']:.3f}x (fastest runs: "
                f"{min(q['fit_runs_s']) / min(f['fit_runs_s']):.3f}x), AUC {q['auc'] - f['auc']:+.4f}"
            )
    d, lg = res.get("dgbdt quantized"), res.get("LightGBM quantized")
    if ok(d) and ok(lg):
        print(
            f"  quantized: dgbdt / LightGBM fit {d['fit_s'] / lg['fit_s']:.3f}x, AUC {d['auc'] - lg['auc']:+.4f}"
        )


def binary_summary(res):
    """Per mode: median logloss and AUC over the seeds that ran, per-seed values
    (None where the run failed), and the failures."""
    out = {}
    for mode, _ in BINARY_MODES:
        runs = [r for r in res["runs"] if r["mode"] == mode]
        good = [r for r in runs if "error" not in r]
        out[mode] = {
            "logloss": statistics.median(r["logloss"] for r in good) if good else float("nan"),
            "auc": statistics.median(r["auc"] for r in good) if good else float("nan"),
            "logloss_by_seed": [r.get("logloss") for r in runs],
            "errors": [f"seed {r['seed']}: {r['error']}" for r in runs if "error" in r],
        }
        out[mode]["ratio"] = out[mode]["logloss"] / out["float"]["logloss"]
    return out


def binary_checks(binary):
    d = binary["results"].get("dgbdt")
    if not ok(d):
        return [check("accuracy B", None, TARGETS["logloss_b"], None, "not available")]
    s = binary_summary(d)
    q, f = s["quantized"], s["float"]
    return [
        check(
            "accuracy B: logloss quantized / float (binary.test)",
            q["ratio"],
            TARGETS["logloss_b"],
            q["ratio"] <= TARGETS["logloss_b"],
            f"{q['logloss']:.4f} / {f['logloss']:.4f} = {q['ratio']:.4f}x",
        )
    ]


def print_binary(binary):
    cfg = binary["config"]
    print(
        f"accuracy B: binary.train (+ .weight) -> binary.test (unweighted metrics), 100 rounds, lr 0.1, "
        f"63 leaves, min_data_in_leaf 50, min_sum_hessian 5, bagging 0.8 every round, {cfg['threads']} threads; "
        f"seeds {cfg['seeds'][0]}..{cfg['seeds'][-1]}; medians over seeds; 'renew' adds quant_train_renew_leaf "
        f"(no target)"
    )
    if "error" in binary:
        print(f"  skipped: {binary['error']}")
        return
    rows = []
    for lib, res in binary["results"].items():
        if not ok(res):
            rows.append([lib, "error: " + (res or {}).get("error", "?")[:100]] + [""] * 5)
            continue
        s = binary_summary(res)
        for mode, _ in BINARY_MODES:
            m = s[mode]
            per_seed = "/".join("fail" if x is None else f"{x:.4f}" for x in m["logloss_by_seed"])
            rows.append(
                [
                    lib,
                    mode,
                    f"{m['logloss']:.4f}",
                    f"{m['ratio']:.4f}x",
                    f"{m['auc']:.4f}",
                    per_seed if len(per_seed) <= 60 else per_seed[:57] + "...",
                ]
            )
        for mode, _ in BINARY_MODES:
            for err in s[mode]["errors"]:
                print(f"  {lib} {mode} failed on {err}")
    print_rows(["library", "mode", "logloss", "/ float", "AUC", "logloss per seed"], rows)


def comm_cells(comm):
    """(K, learner) -> {False: float run, True: quantized run}."""
    cells = {}
    for r in comm["runs"]:
        cells.setdefault((r["K"], r["learner"]), {})[r["quantized"]] = r
    return cells


def comm_checks(comm):
    checks = []
    cells = comm_cells(comm)
    for k in comm["config"]["ks"]:
        for name in COMM_LEARNERS:
            c = cells.get((k, name), {})
            label = f"bytes/tree quantized / float, {name}, K={k}"
            if False not in c or True not in c:
                checks.append(check(label, None, TARGETS["bytes"], None, "not available"))
                continue
            f, q = c[False]["bytes_per_tree_sum"], c[True]["bytes_per_tree_sum"]
            ratio = q / f if f else float("nan")
            checks.append(
                check(
                    label,
                    ratio,
                    TARGETS["bytes"],
                    ratio <= TARGETS["bytes"],
                    f"{fmt_bytes(q)} / {fmt_bytes(f)} = {ratio:.3f}x",
                )
            )
    return checks


def print_comm(comm):
    cfg = comm["config"]
    print(
        f"communication: mpiexec -n K, 1 Numba thread per rank, make_higgs_like seed 0, {cfg['rows']:,} train x 28 "
        f"(contiguous shards) + {cfg['test_rows']:,} test rows, {cfg['rounds']} rounds, {cfg['leaves']} leaves, "
        f"top_k {cfg['top_k']} (voting-votes: PV-Tree's rule, 2 x top_k elected; voting-wg: weighted_gain, "
        f"top_k elected), no validation sets; bytes = comm_stats "
        f"bytes_per_tree, median over trees, summed over ranks (per rank: mean of the ranks' medians)"
    )
    rows = []
    for (k, name), c in sorted(comm_cells(comm).items()):
        f, q = c.get(False), c.get(True)
        if not (f and q):
            continue
        rows.append(
            [
                k,
                name,
                fmt_bytes(f["bytes_per_tree_sum"]),
                fmt_bytes(q["bytes_per_tree_sum"]),
                fmt_bytes(statistics.fmean(f["bytes_per_tree_rank"])),
                fmt_bytes(statistics.fmean(q["bytes_per_tree_rank"])),
                f"{q['bytes_per_tree_sum'] / f['bytes_per_tree_sum']:.3f}x",
                f"{f['auc']:.4f}",
                f"{q['auc']:.4f}",
                f"{q['auc'] - f['auc']:+.4f}",
                f"{f['fit_s']:.1f}",
                f"{q['fit_s']:.1f}",
            ]
        )
    print_rows(
        [
            "K",
            "learner",
            "bytes/tree float",
            "quant",
            "per rank float",
            "quant",
            "quant/float",
            "AUC float",
            "AUC quant",
            "dAUC",
            "fit s float",
            "quant",
        ],
        rows,
        left=2,
    )
    for e in comm["errors"]:
        print(f"  error: {e}")


def print_checks(checks):
    print("targets:")
    rows = []
    for c in checks:
        op = ">=" if c["name"].startswith("accuracy A") else "<="
        unit = "" if c["name"].startswith("accuracy A") else "x"
        rows.append(
            [
                c["name"],
                c["text"],
                f"{op} {c['target']:+.3f}" if not unit else f"{op} {c['target']}{unit}",
                "not available" if c["pass"] is None else verdict(c["pass"]),
            ]
        )
    print_rows(["target", "measured", "target", ""], rows)


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def add_comm_args(ap):
    """The options of the distributed section."""
    f = FULL
    add_sized(ap, "--comm-rows", "distributed train rows over all ranks", f)
    add_sized(ap, "--comm-test-rows", "distributed test rows", f)
    add_sized(ap, "--comm-rounds", "distributed rounds", f)
    ap.add_argument("--ks", default="2,4", help="rank counts (default 2,4)")
    ap.add_argument("--top-k", type=int, default=20, help="voting top_k (default 20)")


def parse_args(argv=None):
    ap = arg_parser(__doc__)
    f, q = FULL, QUICK
    add_sized(ap, "--rows", "speed / accuracy A train rows", f, q)
    add_sized(ap, "--test-rows", "test rows", f, q)
    add_sized(ap, "--rounds", "speed / accuracy A rounds", f, q)
    ap.add_argument(
        "--threads", type=int, default=2, help="threads of the single-process runs (default 2)"
    )
    add_sized(ap, "--repeats", "timed fits per config, median reported", f, q)
    add_sized(ap, "--seeds", "accuracy B seeds 0..N-1", f, q)
    add_comm_args(ap)
    ap.add_argument("--no-speed", action="store_true", help="skip speed / accuracy A")
    ap.add_argument("--no-binary", action="store_true", help="skip accuracy B")
    ap.add_argument("--no-comm", action="store_true", help="skip the distributed byte counts")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 100,000 rows, 20 rounds, 1 repeat, 1 seed; distributed 50,000 rows, 10 rounds",
    )
    ap.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds allowed per child / mpiexec"
    )
    ap.add_argument("--json", metavar="PATH", help="also write all results to PATH")
    ap.add_argument("--worker", choices=tuple(WORKERS), help=SUPPRESS)
    ap.add_argument("--config", help=SUPPRESS)
    ap.add_argument("--result", help=SUPPRESS)
    args = ap.parse_args(argv)
    apply_defaults(args, FULL, QUICK)
    args.ks = [int(s) for s in args.ks.split(",") if s.strip()]
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        WORKERS[args.worker](json.loads(args.config), args.result)
        return 0
    print(
        "bench_quantized: use_quantized_grad=true (num_grad_quant_bins 4, stochastic rounding, no leaf renewal: "
        "the defaults of dgbdt and LightGBM) against float training"
    )
    load_before = print_machine()
    print(flush=True)

    payload = {
        "targets": TARGETS,
        **machine_info(load_before),
    }
    checks = []
    sections = []
    if not args.no_speed:
        payload["speed"] = run_speed(args)
        checks += speed_checks(payload["speed"])
        sections.append(lambda: print_speed(payload["speed"]))
    if not args.no_binary:
        payload["binary"] = run_binary(args)
        checks += binary_checks(payload["binary"])
        sections.append(lambda: print_binary(payload["binary"]))
    if not args.no_comm:
        payload["comm"] = run_comm(args)
        checks += comm_checks(payload["comm"])
        sections.append(lambda: print_comm(payload["comm"]))
    payload["load_average_after"] = os.getloadavg()[0]
    for show in sections:
        print()
        show()
    print()
    print_checks(checks)
    print(f"\nload average {load_before:.2f} before, {payload['load_average_after']:.2f} after")
    payload["checks"] = checks
    if args.json:
        write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
