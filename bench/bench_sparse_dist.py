"""Sparse, wide data distributed: dgbdt under ``mpiexec -n 2`` (data- and
voting-parallel) next to LightGBM's own distributed training (two socket
processes on 127.0.0.1), on bench_sparse's generated CSR data (100,000 x
20,000, 1,000,000 non-zeros; binary, 63 leaves, lr 0.1, 20 rounds).

Each rank (process) holds one contiguous half of the rows, one thread.
Printed per run: fit time (the slower rank), test AUC, the bytes each rank
sends per tree (median over trees, mean over ranks) and peak RSS (the larger
rank).  dgbdt runs twice per learner: with its bin store (bundles, sparse part,
feature_pre_filter: the defaults) and "dense-binned" (enable_bundle=false,
is_enable_sparse=false, feature_pre_filter=false: every feature's bins as
before issue 13), whose bytes per tree are the reference the store's are
compared with.

    python bench/bench_sparse_dist.py            # full size
    python bench/bench_sparse_dist.py --quick    # 20,000 x 5,000, 200,000 non-zeros
"""

import json
import pathlib
import statistics
import sys
import tempfile
import time

from bench_comm import free_ports
from bench_sparse import make_sparse, peak_mb
from common import (
    arg_parser,
    auc_of,
    mpi_world,
    mpiexec_path,
    print_machine,
    print_rows,
    rank_env,
    run_group,
    run_worker,
    worker_cmd,
    write_result,
)

SCRIPT = pathlib.Path(__file__).resolve()
SEED = 0
DENSE_BINNED = {"enable_bundle": False, "is_enable_sparse": False, "feature_pre_filter": False}


def params_of(cfg):
    return {
        "objective": "binary",
        "num_leaves": 63,
        "learning_rate": 0.1,
        "num_threads": 1,
        "verbosity": -1,
        "seed": 0,
        "tree_learner": cfg["learner"],
    }


def shard_of(cfg, rank):
    X, y = make_sparse(cfg["rows"], cfg["cols"], cfg["nnz"], SEED)
    half = cfg["rows"] // 2
    lo, hi = (0, half) if rank == 0 else (half, cfg["rows"])
    return X[lo:hi], y[lo:hi]


def test_auc(model, cfg):
    Xt, yt = make_sparse(cfg["rows"] // 5, cfg["cols"], cfg["nnz"] // 5, SEED + 1)
    return auc_of(yt, model.predict(Xt))


def dgbdt_worker(cfg, result_path):
    """One of the ``mpiexec -n 2`` ranks."""
    import numpy as np

    import dgbdt

    comm, world = mpi_world(2)
    X, y = shard_of(cfg, world.Get_rank())
    params = {**params_of(cfg), **(DENSE_BINNED if cfg["storage"] == "dense" else {})}
    world.Barrier()
    t0 = time.perf_counter()
    model = dgbdt.train(params, dgbdt.Dataset(X, y), cfg["rounds"])
    fit = comm.greatest([time.perf_counter() - t0])[0]
    stats = model.comm_stats()
    per_tree = float(np.median(stats["bytes_per_tree"]))
    sent = comm.total([per_tree])[0] / 2
    peak = comm.greatest([peak_mb()])[0]
    if world.Get_rank() == 0:
        out = {"fit_s": fit, "bytes_per_tree": sent, "peak_rss_mb": peak}
        out["auc"] = test_auc(model, cfg)
        write_result(result_path, out)


def lgb_worker(cfg, result_path):
    """One of LightGBM's two socket processes: its half of the rows, 1 thread."""
    import lightgbm as lgb

    rank = cfg["rank"]
    X, y = shard_of(cfg, rank)
    params = {
        **params_of(cfg),
        "num_machines": 2,
        "pre_partition": True,
        "machines": ",".join(f"127.0.0.1:{p}" for p in cfg["ports"]),
        "local_listen_port": cfg["ports"][rank],
        "time_out": 3,
    }
    ready = pathlib.Path(cfg["barrier_dir"])
    (ready / f"ready{rank}").touch()
    while not all((ready / f"ready{r}").exists() for r in range(2)):
        time.sleep(0.005)
    t0 = time.perf_counter()
    model = lgb.train(params, lgb.Dataset(X, y), cfg["rounds"])
    out = {"fit_s": time.perf_counter() - t0, "peak_rss_mb": peak_mb()}
    if rank == 0:
        out["auc"] = test_auc(model, cfg)
    write_result(result_path, out)


def warm_worker(cfg, result_path):
    """Compile (or load) every kernel once before two ranks start."""
    import dgbdt

    X, y = make_sparse(2000, 500, 10_000, SEED)
    for storage in ({}, DENSE_BINNED):
        dgbdt.train({**params_of({"learner": "serial"}), **storage}, dgbdt.Dataset(X, y), 2)
    write_result(result_path, {})


def run_lightgbm(cfg, timeout):
    with tempfile.TemporaryDirectory(prefix="dgbdt-bench-lgb-") as tmp:
        ports = free_ports(2)
        cmds, paths = [], []
        for r in range(2):
            path = pathlib.Path(tmp) / f"r{r}.json"
            c = {**cfg, "rank": r, "ports": ports, "barrier_dir": tmp}
            cmds.append(worker_cmd(SCRIPT, ["--worker", "lgb"], c, path))
            paths.append(path)
        rcs, tails, timed_out = run_group(cmds, timeout, rank_env())
        if timed_out or any(rcs) or not all(p.is_file() for p in paths):
            return None, f"exit codes {rcs}: {' || '.join(tails)}"
        res = [json.loads(p.read_text()) for p in paths]
        return {
            "fit_s": max(r["fit_s"] for r in res),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in res),
            "auc": res[0]["auc"],
        }, None


def parse_args(argv):
    ap = arg_parser(__doc__)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--cols", type=int, default=20_000)
    ap.add_argument("--nnz", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--worker", help="(internal)")
    ap.add_argument("--config", help="(internal)")
    ap.add_argument("--result", help="(internal)")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.cols, args.nnz = 20_000, 5_000, 200_000
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        worker = {"dgbdt": dgbdt_worker, "lgb": lgb_worker, "warm": warm_worker}[args.worker]
        worker(json.loads(args.config), args.result)
        return 0
    print_machine()
    cfg = {k: getattr(args, k) for k in ("rows", "cols", "nnz", "rounds")}
    print(
        f"CSR {args.rows:,} x {args.cols:,}, {args.nnz:,} non-zeros; {args.rounds} rounds, 2 ranks"
    )
    _, err = run_worker(SCRIPT, ["--worker", "warm"], cfg, args.timeout, ranks=1)
    if err:
        print("warm-up failed:", err)
    print("mpiexec:", mpiexec_path())
    rows = []
    for learner in ("data", "voting"):
        found = {}
        for who in ("store", "dense", "lightgbm"):
            runs = []
            for _ in range(args.repeats):
                c = {**cfg, "learner": learner, "storage": who}
                if who == "lightgbm":
                    res, err = run_lightgbm(c, args.timeout)
                else:
                    res, err = run_worker(SCRIPT, ["--worker", "dgbdt"], c, args.timeout, ranks=2)
                if err:
                    print(f"  {learner} {who}: {err}")
                    break
                runs.append(res)
            if runs:
                found[who] = {
                    k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "bytes"
                }
        for who, r in found.items():
            ratio = ""
            if who != "lightgbm" and "lightgbm" in found:
                ratio = f"{r['fit_s'] / found['lightgbm']['fit_s']:.2f}"
            b = r.get("bytes_per_tree")
            rows.append(
                [
                    learner,
                    "dgbdt" if who != "lightgbm" else "lightgbm",
                    {"store": "bin store", "dense": "dense-binned", "lightgbm": ""}[who],
                    f"{r['fit_s']:.2f}",
                    ratio,
                    f"{r['auc']:.4f}",
                    "" if b is None else f"{b / 1e6:.2f}",
                    f"{r['peak_rss_mb']:.0f}",
                ]
            )
        if "store" in found and "dense" in found:
            fall = found["dense"]["bytes_per_tree"] / max(found["store"]["bytes_per_tree"], 1)
            print(f"  {learner}: bytes per tree, dense-binned / bin store = {fall:.2f}x")
    print()
    print_rows(
        [
            "learner",
            "library",
            "storage",
            "fit s",
            "/ LightGBM",
            "test AUC",
            "MB/tree/rank",
            "peak RSS MB",
        ],
        rows,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
