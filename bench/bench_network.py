#!/usr/bin/env python
"""The time table: distributed fits over an emulated cluster network.

```
python bench/bench_network.py                       # the whole table (hours)
python bench/bench_network.py --sets wide --rates 1gbit --configs pipeline,lightgbm
python bench/bench_network.py --quick               # a small smoke run (minutes)
```

Every rank (and every LightGBM socket-mode process) runs in its own network
namespace, one per host, on links shaped by ``tbf`` (bench/netcluster.py: no
added delay, so the times are bandwidth-bound; every host shares this
machine's 2 cores, so K = 4 and the 10 Gbit/s row are CPU-bound).  Each host
makes its own shard of the data (bench_comm's ``Problem``: HIGGS-like rows,
``wide`` adds bench_comm's ``mix`` extra columns), builds its Dataset, then
the fit is timed (median of ``--repeats`` in one process).  Printed per
configuration: fit seconds, seconds inside collectives (dgbdt's
``comm_stats()``; LightGBM has no such count), bytes per tree (this rank's
send buffers, summed over ranks) and test AUC (rank 0, on a held-out sample).

Configurations: dgbdt data- (default ``comm_pipeline``; also 0, off, and 4
pieces), voting- (``votes`` and ``weighted_gain``) and
feature-parallel, each float and quantized; LightGBM data- and voting-parallel.

The pipelining check (1 Gbit/s, K = 2, wide): compute = fit - time in
collectives and communication = time in collectives, both of the unpipelined
data-parallel fit (data-nopipe); hidden = (unpipelined fit - pipelined fit
(data-pipe)) / min(compute, communication), and the pipelined fit over
max(compute, communication).  bench_pipeline.py measures what a pipeline
inside a leaf's histogram can hide at most.
"""

from __future__ import annotations

import gc
import json
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
from common import (
    auc_of,
    fmt_bytes,
    load_average,
    load_datasets_module,
    print_machine,
    print_rows,
    rank_env,
)

SCRIPT = pathlib.Path(__file__).resolve()
SETS = {"narrow": (1_000_000, 28), "wide": (500_000, 500)}
TEST_ROWS = 100_000
LGB_PORT = 12400

#: name -> (library, sharding, params); sharding "rows" or "all" (feature-parallel)
CONFIGS = {
    "data": ("dgbdt", "rows", {"tree_learner": "data"}),
    "data-nopipe": ("dgbdt", "rows", {"tree_learner": "data", "comm_pipeline": 0}),
    "data-pipe": ("dgbdt", "rows", {"tree_learner": "data", "comm_pipeline": 4}),
    "data-q": ("dgbdt", "rows", {"tree_learner": "data", "use_quantized_grad": True}),
    "voting": ("dgbdt", "rows", {"tree_learner": "voting"}),
    "voting-q": ("dgbdt", "rows", {"tree_learner": "voting", "use_quantized_grad": True}),
    "voting-wg": ("dgbdt", "rows", {"tree_learner": "voting", "voting_rule": "weighted_gain"}),
    "voting-wg-q": (
        "dgbdt",
        "rows",
        {"tree_learner": "voting", "voting_rule": "weighted_gain", "use_quantized_grad": True},
    ),
    "feature": ("dgbdt", "all", {"tree_learner": "feature"}),
    "feature-q": ("dgbdt", "all", {"tree_learner": "feature", "use_quantized_grad": True}),
    "lgb-data": ("lightgbm", "rows", {"tree_learner": "data"}),
    "lgb-voting": ("lightgbm", "rows", {"tree_learner": "voting"}),
}
GROUPS = {
    "pipeline": ["data-nopipe", "data-pipe"],
    "lightgbm": ["lgb-data", "lgb-voting"],
    "dgbdt": [c for c in CONFIGS if CONFIGS[c][0] == "dgbdt"],
    "all": list(CONFIGS),
}
BASE_PARAMS = {
    "objective": "binary",
    "num_leaves": 63,
    "learning_rate": 0.1,
    "min_data_in_leaf": 100,
    "max_bin": 255,
    "verbosity": -1,
    "num_threads": 1,
    "seed": 1,
}


# ---------------------------------------------------------------------------
# the hosts' side: one process per host (an MPI rank, or a LightGBM process)
# ---------------------------------------------------------------------------


def _problem_module():
    sys.path.insert(0, str(SCRIPT.parent))
    import bench_comm  # noqa: PLC0415 - bench_comm's data definition, in the hosts only

    return bench_comm


def _shard(job, rank, size):
    """This host's rows (all of them for feature-parallel), and the test rows."""
    bench_comm = _problem_module()
    n, width = SETS[job["set"]]
    n = job.get("rows") or n
    problem = bench_comm.Problem(load_datasets_module(), width, "mix")
    lo, hi = (0, n) if job["sharding"] == "all" else (rank * n // size, (rank + 1) * n // size)
    X, y = problem.rows(0, 0, n, lo, hi, shuffle=True)
    test = problem.rows(0, 1, TEST_ROWS, 0, TEST_ROWS, shuffle=False) if rank == 0 else None
    return X, y, test


class _Start:
    """A callback noting when the first iteration starts: fits are timed from
    there (the Dataset's construction, binning included, is not counted)."""

    order, before_iteration = 0, True

    def __init__(self):
        self.at = None

    def __call__(self, env):
        if self.at is None:
            self.at = time.perf_counter()


def _kinds(stats):
    """Calls and bytes per call of each collective kind per tree, inside trees
    only (the inputs of bench_scaling's communication model)."""
    trees = max(len(stats["bytes_per_tree"]), 1)
    return {
        kind: {"calls": calls / trees, "bytes_per_call": stats["tree_bytes"][kind] / calls}
        for kind, calls in stats["tree_calls"].items()
        if calls
    }


def _dgbdt_fits(job, X, y, test, rank):
    import dgbdt  # noqa: PLC0415 - in the ranks only

    params = {**BASE_PARAMS, **job["params"]}
    dataset = dgbdt.Dataset(X, y, params=params)
    runs = []
    for _ in range(job["repeats"]):
        start = _Start()
        booster = dgbdt.train(params, dataset, job["rounds"], callbacks=[start])
        fit = time.perf_counter() - start.at
        stats = booster.comm_stats()
        comm = float(sum(stats["seconds_per_tree"]))
        per_tree = float(np.median(stats["bytes_per_tree"]))
        runs.append({"fit": fit, "comm": comm, "bytes": per_tree, "kinds": _kinds(stats)})
    auc = auc_of(test[1], booster.predict(test[0])) if rank == 0 else None
    return runs, auc


def _lightgbm_fits(job, X, y, test, rank):
    import lightgbm as lgb  # noqa: PLC0415 - in the hosts only

    runs = []
    for r in range(job["repeats"]):
        params = {**BASE_PARAMS, **job["params"], **job["socket"]}
        params["local_listen_port"] = port = params["local_listen_port"] + r  # a fresh port
        hosts = [m.rsplit(":", 1)[0] for m in params["machines"].split(",")]
        params["machines"] = ",".join(f"{h}:{port}" for h in hosts)
        start = _Start()
        booster = lgb.train(
            params, lgb.Dataset(X, y, params=params), job["rounds"], callbacks=[start]
        )
        fit = time.perf_counter() - start.at
        auc = auc_of(test[1], booster.predict(test[0])) if rank == 0 else None
        booster.free_network()
        del booster
        gc.collect()
        runs.append({"fit": fit, "comm": None, "bytes": None})
    return runs, auc


def host_main(job_path, rank=None, size=None):
    job = json.loads(pathlib.Path(job_path).read_text())
    if job["library"] == "dgbdt":
        from mpi4py import MPI  # noqa: PLC0415 - the ranks' world

        rank, size = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
        assert size == job["k"], (size, job["k"])
    X, y, test = _shard(job, rank, size)
    fits = _dgbdt_fits if job["library"] == "dgbdt" else _lightgbm_fits
    runs, auc = fits(job, X, y, test, rank)
    out = pathlib.Path(job["out"]) / f"rank{rank}.json"
    out.write_text(json.dumps({"runs": runs, "auc": auc, "trees": job["rounds"]}))


# ---------------------------------------------------------------------------
# the driver: clusters, jobs, the table
# ---------------------------------------------------------------------------


_runs: dict[str, int] = {}


def _job(cluster, name, set_name, k, args, folder):
    library, sharding, params = CONFIGS[name]
    job = {
        "library": library,
        "sharding": sharding,
        "params": params,
        "set": set_name,
        "rows": args.rows,
        "k": k,
        "rounds": args.rounds,
        "repeats": args.repeats,
        "out": str(folder),
    }
    if library == "lightgbm":
        import netcluster  # noqa: PLC0415 - needs root; imported when a table is made

        # a port of its own per configuration and repeat (a closed one lingers in TIME_WAIT)
        port = LGB_PORT + 10 * list(CONFIGS).index(name) + 100 * (_runs.setdefault(name, 0))
        _runs[name] += 1
        job["socket"] = netcluster.lightgbm_socket_params(
            cluster, port, tree_learner=params["tree_learner"]
        )
    return job


def run_config(cluster, name, set_name, k, args):
    import netcluster  # noqa: PLC0415 - needs root; imported when a table is made

    folder = pathlib.Path(tempfile.mkdtemp(prefix="dgbdt-net-"))
    job = _job(cluster, name, set_name, k, args, folder)
    path = folder / "job.json"
    path.write_text(json.dumps(job))
    argv = [sys.executable, str(SCRIPT), "--host-job", str(path)]
    if job["library"] == "dgbdt":
        results = [netcluster.run_mpi(cluster, 1, argv, args.timeout, env=rank_env())]
    else:
        argvs = [argv + ["--rank", str(r), "--size", str(k)] for r in range(k)]
        results = netcluster.run_on_hosts(cluster, argvs, env=rank_env(), timeout=args.timeout)
    ranks = [folder / f"rank{r}.json" for r in range(k)]
    if not all(p.exists() for p in ranks):
        tail = "\n".join(r.stderr[-1500:] for r in results)
        return {"error": f"{name}: failed ({[r.returncode for r in results]})\n{tail}"}
    found = [json.loads(p.read_text()) for p in ranks]
    shutil.rmtree(folder, ignore_errors=True)
    return _summary(found)


def _summary(found):
    fits = [max(f["runs"][i]["fit"] for f in found) for i in range(len(found[0]["runs"]))]
    row = {"fit": statistics.median(fits), "fits": fits, "auc": found[0]["auc"]}
    if found[0]["runs"][0]["comm"] is not None:
        row["comm"] = statistics.median(
            f["runs"][i]["comm"] for f in found for i in range(len(fits))
        )
        row["bytes"] = sum(statistics.median(r["bytes"] for r in f["runs"]) for f in found)
        row["kinds"] = found[0]["runs"][-1].get("kinds")
        row["trees"] = found[0].get("trees")
    return row


def projection(row, k, rate, alpha):
    """bench_scaling's communication model for this row's collectives (calls and
    bytes per call per tree, as measured) on k ranks over links of ``rate``:
    (projected seconds in collectives, projected fit), for the whole fit."""
    import bench_scaling  # noqa: PLC0415 - the model under test
    import netcluster  # noqa: PLC0415

    beta = netcluster.rate_bytes_per_s(rate)
    per_tree = 0.0
    for kind, cell in (row.get("kinds") or {}).items():
        seconds, _ = bench_scaling.collective_cost(
            kind, cell["bytes_per_call"], k, alpha, beta, "auto"
        )
        per_tree += cell["calls"] * seconds
    comm = per_tree * row["trees"]
    return comm, row["fit"] - row["comm"] + comm


def _cells(name, row):
    if "error" in row:
        return [name, "failed", "", "", ""]
    comm = f"{row['comm']:.2f}" if "comm" in row else "-"
    sent = fmt_bytes(row["bytes"]) if "bytes" in row else "-"
    return [name, f"{row['fit']:.2f}", comm, sent, f"{row['auc']:.4f}"]


def pipeline_check(rows):
    """The pipelining target's figures from the data-pipe and data-nopipe rows."""
    on, off = rows.get("data-pipe"), rows.get("data-nopipe")
    if not on or not off or "error" in on or "error" in off:
        return None
    comm = off["comm"]
    compute = off["fit"] - comm
    hidden = (off["fit"] - on["fit"]) / max(min(compute, comm), 1e-9)
    return {
        "compute": compute,
        "communication": comm,
        "hidden": hidden,
        "fit_over_max": on["fit"] / max(compute, comm),
    }


def _print_table(set_name, rate, k, rows):
    print(f"\n{set_name}, K = {k}, links {rate} (medians of the fits)")
    header = ["config", "fit s", "in collectives s", "bytes/tree", "test AUC"]
    print_rows(header, [_cells(n, r) for n, r in rows.items()])
    for row in rows.values():
        if "error" in row:
            print(row["error"])
    _print_projection(rate, k, rows)
    check = pipeline_check(rows)
    if check:
        print(
            f"pipelining: compute {check['compute']:.2f} s, communication "
            f"{check['communication']:.2f} s, hidden {check['hidden']:.0%} of the smaller, "
            f"pipelined fit = {check['fit_over_max']:.2f} x max(compute, communication)"
        )


#: The model's per-message cost on the emulated links (no delay is added: this is
#: the software path, veth + bridge + MPICH's tcp provider, measured by
#: ``netcluster.py check`` with small messages).
ALPHA_SECONDS = 30e-6


def _print_projection(rate, k, rows):
    """bench_scaling's projection of each dgbdt row against its measurement."""
    lines = []
    for name, row in rows.items():
        if "error" in row or not row.get("kinds") or not row.get("trees"):
            continue
        comm, fit = projection(row, k, rate, ALPHA_SECONDS)
        lines.append(
            [name, f"{row['comm']:.2f}", f"{comm:.2f}", f"{comm / max(row['comm'], 1e-9) - 1:+.0%}",
             f"{row['fit']:.2f}", f"{fit:.2f}", f"{fit / row['fit'] - 1:+.0%}"]
        )  # fmt: skip
    if lines:
        print(f"bench_scaling's model (alpha {ALPHA_SECONDS * 1e6:.0f} us, beta = {rate}):")
        header = ["config", "collectives s", "model", "error", "fit s", "model", "error"]
        print_rows(header, lines)


def make_table(args):
    import netcluster  # noqa: PLC0415 - needs root; imported when a table is made

    names = [n for g in args.configs.split(",") for n in GROUPS.get(g, [g])]
    table = {}
    for k in args.ks:
        for rate in args.rates.split(","):
            with netcluster.emulated_cluster(k, rate) as cluster:
                for set_name in args.sets.split(","):
                    rows = {n: run_config(cluster, n, set_name, k, args) for n in names}
                    _print_table(set_name, rate, k, rows)
                    table[f"{set_name}/{rate}/{k}"] = rows
    return table


def print_saved(path):
    """The tables of a JSON written by --json."""
    payload = json.loads(pathlib.Path(path).read_text())
    print(f"from {path}: load at start {payload.get('load_at_start')}")
    for key, rows in payload["table"].items():
        set_name, rate, k = key.split("/")
        _print_table(set_name, rate, int(k), rows)


def _args():
    import argparse  # noqa: PLC0415

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host-job", help=argparse.SUPPRESS)
    ap.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--sets", default="narrow,wide")
    ap.add_argument("--rates", default="10gbit,1gbit,100mbit")
    ap.add_argument("--ks", type=lambda s: [int(x) for x in s.split(",")], default=[2])
    ap.add_argument("--configs", default="all", help="names or groups: " + ", ".join(GROUPS))
    ap.add_argument("--rows", type=int, default=0, help="rows of each set (0: its own)")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--json", help="write the table here")
    ap.add_argument("--from-json", help="print the tables of a JSON written by --json")
    ap.add_argument("--quick", action="store_true", help="20,000 rows, 5 rounds, 1 repeat")
    return ap.parse_args()


def main():
    args = _args()
    if args.host_job:
        host_main(args.host_job, args.rank, args.size)
        return
    if args.from_json:
        print_saved(args.from_json)
        return
    if args.quick:
        args.rows, args.rounds, args.repeats = 20_000, 5, 1
    import llvmlite.binding  # noqa: PLC0415

    load = print_machine()
    print(f"CPU {llvmlite.binding.get_host_cpu_name()}, load {os.getloadavg()} at start")
    table = make_table(args)
    if args.json:
        payload = {"load_at_start": load, "args": vars(args), "table": table}
        pathlib.Path(args.json).write_text(json.dumps(payload, indent=1))
    print(f"load at end {load_average()}")


if __name__ == "__main__":
    main()
