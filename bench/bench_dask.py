#!/usr/bin/env python
"""Dask front end against plain ``mpiexec -n 2``: the same training, both ways.

Target (dgbdt.dask's issue): on 1,000,000 x 28 rows, 100 rounds, the fit time
through ``dgbdt.dask.train`` is at most 1.10 x that of ``mpiexec -n 2``, and the
rendezvous (the ranks joining one MPI group) takes under 2 s.

Data: ``make_higgs_like(rows, seed=0)`` (``datasets/__init__.py``), binary
objective, 255 leaves, learning rate 0.1, ``--learner`` (default ``data``).
The rows are cut into two halves: rank r trains on half r on both sides.

Dask side.  ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``
on 127.0.0.1; half r (data and label) is scattered to worker r before any
timing, and the dask arrays are built on those futures (two chunks, each on
its worker).  Timed: the ``dgbdt.dask.train(client, params, X, y, ...)`` call,
end to end (the wall time the user sees: pings, placing the ranks, starting
one ``mpiexec -n 1`` process per worker, the join, the training, the result).
dgbdt.dask sets each rank's ``NUMBA_NUM_THREADS`` to its worker's threads (1).

mpiexec side.  The two halves are written once to .npy files; ``mpiexec -n 2``
(the mpich wheel's, beside this Python) runs this script, rank r loads half r
(``np.load``, timed on its own) and runs ``dgbdt.train(params,
dgbdt.Dataset(X_r, y_r, params=params), rounds)``; ``NUMBA_NUM_THREADS=1``.
Timed: the whole mpiexec run from the parent (process start, imports, loading
and training included), and inside the ranks.

Both sides carry the same callback, which records (wall clock) when boosting
begins (``begin_training``, after the Dataset is built) and when the last
round ends, per rank.  The lines printed (medians over ``--repeats``, runs in
order beside them; the sides alternate, after one untimed warm-up each):

    dask train() wall          the headline's Dask time
    mpiexec -n 2 wall          the headline's mpiexec time
    ranks' boosting            first begin_training -> last rank's last round,
                               both sides (the train-only comparison)
    mpiexec Dataset+train      in the ranks: Dataset construction + train (slowest rank)
    mpiexec np.load            in the ranks, slowest rank (not in Dataset+train)
    dask: call -> boosting     train() called -> first rank begins boosting
                               (pings, placement, rank start, join, Dataset)
    dask: boosting -> return   last round ended -> train() returned
                               (model back to the client, cleanup)

The ratios: end to end (dask train() wall / mpiexec wall; the target) and
train only (ranks' boosting / ranks' boosting).  ``--tcp`` adds a third side:
``mpiexec -n 2`` with shared memory off (``MPIR_CVAR_NOLOCAL=1``, ofi's tcp
provider on ``lo``), the transport dgbdt.dask's ranks use when their workers
are on several machines (on one machine they use libfabric's shm provider).

Rendezvous.  dgbdt.dask's rank process does not report its join time, so it
is measured apart: two ``mpiexec -n 1`` processes with dgbdt.dask's rank
environment on one machine (``MPIR_CVAR_CH4_NETMOD=ofi``, ``FI_PROVIDER=shm``)
join with ``dgbdt.distributed.rendezvous`` as
dgbdt/dask/rank.py does (rank 0 ``open_port`` and writes the port to a file,
rank 1 reads it; dgbdt.dask passes it through a Dask Variable instead, which
adds a poll of up to about 0.02 s + the Variable's round trip).  Printed:
"join" = from the later rank starting to join (before MPI_Init) to the group
formed on both (the target), and "launch -> joined" = from starting the two
mpiexec processes to the group formed (process start and ``import dgbdt``
included).

Finally the models are compared: the max abs difference of the two sides'
predicted probabilities on all rows (data-parallel models should be equal).

Run::

    python bench/bench_dask.py                    # the issue's sizes: 1,000,000 x 28, 100 rounds, 3 repeats
    python bench/bench_dask.py --rows 20000 --rounds 10 --repeats 1   # a smoke test
    python bench/bench_dask.py --tcp --json dask.json     # + the TCP side, all runs as JSON

A script run by hand on a quiet machine (the load at start is printed), not a test.
"""

from __future__ import annotations

import json
import os
import pathlib
import statistics
import sys
import tempfile
import time
from argparse import SUPPRESS

import numpy as np
from common import (
    arg_parser,
    fmt_runs,
    load_datasets_module,
    mpi_world,
    mpiexec_path,
    print_machine,
    print_rows,
    rank_env,
    run_group,
    run_worker,
    verdict,
    warm_kernels,
    worker_cmd,
    write_json,
    write_result,
)

SCRIPT = pathlib.Path(__file__).resolve()
N_FEATURES = 28
TARGET_RATIO = 1.10  # dask train() wall / mpiexec -n 2 wall <=
TARGET_JOIN_S = 2.0  # rendezvous <
JOIN_LIMIT_S = 60.0  # a join that hangs ends its process after this
RUN_TIMEOUT_S = 3600.0


class BoostClock:
    """A training callback: writes (pid, wall clock at begin_training, at the end
    of the last round) to ``folder`` as JSON.  Defined in __main__, so
    cloudpickle sends it to dgbdt.dask's rank processes by value."""

    order = 1000  # after every other callback

    def __init__(self, folder: str) -> None:
        self.folder, self.begin = folder, 0.0

    def begin_training(self, env) -> None:
        self.begin = time.time()

    def __call__(self, env) -> None:
        if env.iteration + 1 >= env.end_iteration:
            path = os.path.join(self.folder, f"clock-{os.getpid()}.json")
            with open(path, "w") as out:
                json.dump({"begin": self.begin, "end": time.time()}, out)


def read_clocks(folder):
    """(first begin, last end) over the ranks' BoostClock files in ``folder``."""
    clocks = [json.loads(p.read_text()) for p in pathlib.Path(folder).glob("clock-*.json")]
    if not clocks:
        raise RuntimeError(f"no rank wrote its boosting clock to {folder}")
    return min(c["begin"] for c in clocks), max(c["end"] for c in clocks)


def train_params(args):
    return {
        "objective": "binary",
        "num_leaves": args.leaves,
        "learning_rate": 0.1,
        "verbose": -1,
        "tree_learner": args.learner,
    }


# ---------------------------------------------------------------------------
# children
# ---------------------------------------------------------------------------


def warm_worker(cfg, result):
    """Compile / load every kernel in one process before any group runs."""
    ds = load_datasets_module()
    X, y = ds.make_higgs_like(20_000, seed=1)
    warm_kernels([cfg["params"]], X, y, X[:1000])
    write_result(result, {"ok": True})


def mpi_worker(cfg, result):
    """One rank of ``mpiexec -n 2``: load half r, build the Dataset, train."""
    import dgbdt

    _, world = mpi_world(2)
    r, folder = world.Get_rank(), cfg["folder"]
    t0 = time.perf_counter()
    halves = [0, 1] if cfg["params"]["tree_learner"] == "feature" else [r]
    X = np.concatenate([np.load(os.path.join(folder, f"X{h}.npy")) for h in halves])
    y = np.concatenate([np.load(os.path.join(folder, f"y{h}.npy")) for h in halves])
    load_s = time.perf_counter() - t0
    world.Barrier()
    t0 = time.perf_counter()
    params = cfg["params"]
    booster = dgbdt.train(
        params,
        dgbdt.Dataset(X, y, params=params),
        cfg["rounds"],
        callbacks=[BoostClock(cfg["clocks"])],
    )
    train_s = time.perf_counter() - t0
    times = world.gather((load_s, train_s), root=0)
    if r == 0:
        booster.save_model(cfg["model"])
        write_result(
            result,
            {"load_s": max(t[0] for t in times), "train_s": max(t[1] for t in times)},
        )


def join_worker(cfg, result):
    """One rank of the rendezvous measurement, as dgbdt/dask/rank.py joins."""
    t_import = time.time()
    from dgbdt.distributed import rendezvous as rv

    r, port_file = cfg["rank"], cfg["port_file"]
    t_join = time.time()
    if r == 0:
        port = rv.open_port(JOIN_LIMIT_S)
        with open(port_file + ".tmp", "w") as out:
            out.write(port)
        os.replace(port_file + ".tmp", port_file)
        comm = rv.join_group(0, 2, JOIN_LIMIT_S, port=port)
    else:

        def rank0_port():
            return rv.wait_for_file(port_file, JOIN_LIMIT_S, "rank 0's MPI port")

        comm = rv.join_group(1, 2, JOIN_LIMIT_S, wait_for_port=rank0_port)
    t_joined = time.time()
    if comm.Get_size() != 2 or comm.Get_rank() != r:
        raise RuntimeError(f"joined as rank {comm.Get_rank()} of {comm.Get_size()}, not {r} of 2")
    comm.Barrier()
    times = {"import": t_import, "join": t_join, "joined": t_joined}
    write_result(result, times)
    sys.stdout.flush()
    for path in rv.shared_memory_files():  # as rank.py: removed, no MPI_Finalize
        os.unlink(path)
    os._exit(0)  # (MPI_Finalize is collective over the connected group)


# ---------------------------------------------------------------------------
# the parent: the two sides
# ---------------------------------------------------------------------------


#: ``--tcp``: mpiexec -n 2 with shared memory off, the ranks talking over TCP on
#: the loopback as dgbdt.dask's ranks do when their workers are on several machines.
TCP_ENV = {
    "MPIR_CVAR_NOLOCAL": "1",
    "MPIR_CVAR_CH4_NETMOD": "ofi",
    "FI_PROVIDER": "tcp",
    "FI_TCP_IFACE": "lo",
}


def run_mpiexec(args, folder, rounds, env=None):
    """One ``mpiexec -n 2`` training: (wall s, load s, Dataset+train s, boosting s)."""
    clocks = tempfile.mkdtemp(dir=folder, prefix="clocks-")
    cfg = {
        "params": train_params(args),
        "rounds": rounds,
        "folder": folder,
        "clocks": clocks,
        "model": os.path.join(folder, "mpiexec_model.txt"),
    }
    t0 = time.perf_counter()
    data, err = run_worker(SCRIPT, ["--worker", "mpi"], cfg, RUN_TIMEOUT_S, env=env, ranks=2)
    wall = time.perf_counter() - t0
    if err is not None:
        raise RuntimeError(f"mpiexec -n 2 training failed: {err}")
    begin, end = read_clocks(clocks)
    return {"wall": wall, "load": data["load_s"], "train": data["train_s"], "boost": end - begin}


def run_dask(args, client, X, y, folder, rounds):
    """One ``dgbdt.dask.train``: (wall s, boosting s, call -> boosting, boosting -> return)."""
    import dgbdt.dask

    clocks = tempfile.mkdtemp(dir=folder, prefix="clocks-")
    t_call = time.time()
    t0 = time.perf_counter()
    booster = dgbdt.dask.train(
        client, train_params(args), X, y, num_boost_round=rounds, callbacks=[BoostClock(clocks)]
    )
    wall = time.perf_counter() - t0
    t_return = time.time()
    begin, end = read_clocks(clocks)
    times = {"wall": wall, "boost": end - begin, "start": begin - t_call, "tail": t_return - end}
    return times, booster


def place_halves(client, halves):
    """Dask arrays of the two halves, half r held by worker r before any timing."""
    import dask.array as da
    from distributed import wait

    workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
    if len(workers) != 2:
        raise RuntimeError(f"expected 2 Dask workers, got {len(workers)}")
    xs, ys = [], []
    for w, (Xh, yh) in zip(workers, halves, strict=True):
        fx, fy = client.scatter([Xh, yh], workers=[w], broadcast=False)
        wait([fx, fy])
        xs.append(da.from_delayed(fx, shape=Xh.shape, dtype=Xh.dtype))
        ys.append(da.from_delayed(fy, shape=yh.shape, dtype=yh.dtype))
        who = client.who_has([fx, fy])
        if any(tuple(holders) != (w,) for holders in who.values()):
            raise RuntimeError(f"half meant for {w} is on {who}")
    return da.concatenate(xs, axis=0), da.concatenate(ys, axis=0), workers


def join_env():
    """The environment dgbdt.dask's worker gives a rank (dgbdt/dask/worker.py)."""
    env = rank_env()
    env = {k: v for k, v in env.items() if not k.startswith(("PMI_", "PMIX_", "HYDRA_"))}
    env.update(MPIR_CVAR_CH4_NETMOD="ofi", FI_PROVIDER="shm", FI_TCP_IFACE="lo")
    env.update(DGBDT_NO_ABORT_HOOK="1")
    return env


def run_join(folder):
    """Two ``mpiexec -n 1`` processes joining one group: (join s, launch -> joined s)."""
    work = tempfile.mkdtemp(dir=folder, prefix="join-")
    port_file = os.path.join(work, "port")
    cmds, results = [], []
    for r in (0, 1):
        results.append(os.path.join(work, f"result{r}.json"))
        cfg = {"rank": r, "port_file": port_file}
        cmds.append(
            [
                str(mpiexec_path()),
                "-n",
                "1",
                *worker_cmd(SCRIPT, ["--worker", "join"], cfg, results[-1]),
            ]
        )
    t_launch = time.time()
    rcs, tails, timed_out = run_group(cmds, JOIN_LIMIT_S + 30, join_env())
    if timed_out or any(rc != 0 for rc in rcs):
        raise RuntimeError(f"rendezvous failed (exit codes {rcs}, timed out {timed_out}): {tails}")
    times = [json.loads(pathlib.Path(p).read_text()) for p in results]
    joined = max(t["joined"] for t in times)
    return {
        "join": joined - max(t["join"] for t in times),
        "launch": joined - t_launch,
        "import": max(t["join"] - t["import"] for t in times),
    }


def max_prediction_diff(dask_booster, model_path, X):
    import dgbdt

    other = dgbdt.Booster(model_file=model_path)
    a, b = dask_booster.predict(X), other.predict(X)
    return float(np.max(np.abs(a - b))), dask_booster.num_trees(), other.num_trees()


# ---------------------------------------------------------------------------
# the parent: running and printing
# ---------------------------------------------------------------------------


def warm_kernels_once(args):
    """Every kernel compiled (or loaded from Numba's cache) in one process, so the
    ranks of the timed runs never compile at once."""
    t0 = time.perf_counter()
    cfg = {"params": train_params(args)}
    _, err = run_worker(SCRIPT, ["--worker", "warm"], cfg, RUN_TIMEOUT_S, ranks=1)
    if err is not None:
        raise RuntimeError(f"warming the kernels failed: {err}")
    print(f"  kernels compiled / loaded in {time.perf_counter() - t0:.0f} s", flush=True)


def measure(args, client, X, y, folder):
    """The repeats, sides alternating, after one untimed warm-up run of each."""
    rounds_warm = min(args.rounds, 2)
    run_dask(args, client, X, y, folder, rounds_warm)
    run_mpiexec(args, folder, rounds_warm)
    print("  warm-up runs done", flush=True)
    runs = {"dask": [], "mpiexec": [], "join": [], "tcp": []}
    booster = None
    for i in range(args.repeats):
        d, booster = run_dask(args, client, X, y, folder, args.rounds)
        runs["dask"].append(d)
        runs["mpiexec"].append(run_mpiexec(args, folder, args.rounds))
        if args.tcp:
            runs["tcp"].append(run_mpiexec(args, folder, args.rounds, rank_env(TCP_ENV)))
        runs["join"].append(run_join(folder))
        print(
            f"  repeat {i + 1}/{args.repeats}: dask {d['wall']:.2f} s, "
            f"mpiexec {runs['mpiexec'][-1]['wall']:.2f} s, join {runs['join'][-1]['join']:.2f} s"
            f"  (load {os.getloadavg()[0]:.2f})",
            flush=True,
        )
    return {k: v for k, v in runs.items() if v}, booster


def _row(label, runs, key, note=""):
    values = [r[key] for r in runs]
    return [label, note, f"{statistics.median(values):.3f}", fmt_runs(values)]


def report_table(runs):
    d, m, j = runs["dask"], runs["mpiexec"], runs["join"]
    rows = [
        _row("dask train() wall", d, "wall", "end to end, as the user sees it"),
        _row("mpiexec -n 2 wall", m, "wall", "process start + load + train"),
        _row("dask ranks' boosting", d, "boost", "first begin_training -> last round"),
        _row("mpiexec ranks' boosting", m, "boost", "the same callback"),
        _row("mpiexec Dataset+train", m, "train", "in the ranks, slowest"),
        _row("mpiexec np.load", m, "load", "in the ranks, slowest"),
        _row("dask: call -> boosting", d, "start", "pings, ranks start, join, Dataset"),
        _row("dask: boosting -> return", d, "tail", "model back, cleanup"),
        _row("rendezvous join", j, "join", "later rank starts joining -> group"),
        _row("rendezvous launch->joined", j, "launch", "mpiexec -n 1 x2 started -> group"),
        _row("rendezvous import dgbdt", j, "import", "in the join processes, slowest"),
    ]
    if "tcp" in runs:
        rows[4:4] = [
            _row("mpiexec --tcp wall", runs["tcp"], "wall", "shared memory off, ofi tcp on lo"),
            _row("mpiexec --tcp boosting", runs["tcp"], "boost", "the same callback"),
        ]
    print()
    print_rows(["", "what", "median s", "runs s"], rows, left=2)


def report(runs):
    """The table, the ratios and the verdicts; returns the summary dict."""
    report_table(runs)
    med = {
        side: {k: statistics.median(r[k] for r in side_runs) for k in side_runs[0]}
        for side, side_runs in runs.items()
    }
    e2e = med["dask"]["wall"] / med["mpiexec"]["wall"]
    boost = med["dask"]["boost"] / med["mpiexec"]["boost"]
    overhead = med["dask"]["wall"] - med["dask"]["boost"]
    print()
    print(f"dask overhead (train() wall - ranks' boosting): {overhead:.2f} s")
    print(
        f"ratio end to end  dask train() / mpiexec wall:       {e2e:.3f}  "
        f"(target <= {TARGET_RATIO:.2f}: {verdict(e2e <= TARGET_RATIO)})"
    )
    print(f"ratio train only  dask boosting / mpiexec boosting: {boost:.3f}")
    summary = {"medians": med, "ratio_end_to_end": e2e, "ratio_boosting": boost}
    if "tcp" in med:
        summary["ratio_boosting_tcp"] = med["dask"]["boost"] / med["tcp"]["boost"]
        print(
            "ratio train only  dask boosting / mpiexec --tcp boosting: "
            f"{summary['ratio_boosting_tcp']:.3f}  (TCP: dask's ranks' transport when their workers are on several machines)"
        )
    join = med["join"]["join"]
    print(
        f"rendezvous join {join:.3f} s (target < {TARGET_JOIN_S:.0f} s: "
        f"{verdict(join < TARGET_JOIN_S)}); launch -> joined {med['join']['launch']:.2f} s"
    )
    return summary


def write_halves(X, y, folder):
    half = len(X) // 2
    halves = [(X[:half], y[:half]), (X[half:], y[half:])]
    for r, (Xh, yh) in enumerate(halves):
        np.save(os.path.join(folder, f"X{r}.npy"), Xh)
        np.save(os.path.join(folder, f"y{r}.npy"), yh)
    return halves


def main_parent(args):
    import llvmlite.binding as llvm
    from distributed import Client, LocalCluster

    load = print_machine()
    print(f"CPU {llvm.get_host_cpu_name()}, load average {os.getloadavg()[0]:.2f} at start")
    print(
        f"{args.rows:,} x {N_FEATURES} (make_higgs_like), two halves; binary, {args.rounds} rounds, "
        f"{args.leaves} leaves, tree_learner {args.learner}; {args.repeats} repeats (medians)",
        flush=True,
    )
    X, y = load_datasets_module().make_higgs_like(args.rows, seed=0)
    with tempfile.TemporaryDirectory(prefix="dgbdt-bench-dask-") as folder:
        halves = write_halves(X, y, folder)
        warm_kernels_once(args)
        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
            ) as cluster,
            Client(cluster) as client,
        ):
            dX, dy, workers = place_halves(client, halves)
            print(f"  Dask workers {', '.join(workers)}: one half each", flush=True)
            runs, booster = measure(args, client, dX, dy, folder)
        summary = report(runs)
        diff, n_dask, n_mpi = max_prediction_diff(
            booster, os.path.join(folder, "mpiexec_model.txt"), X
        )
    print(
        f"model: {n_dask} / {n_mpi} trees (dask / mpiexec), max |p_dask - p_mpiexec| = {diff:.3g}"
    )
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    if args.json:
        write_json(
            args.json,
            {
                "args": vars(args),
                "load_before": load,
                "runs": runs,
                **summary,
                "max_prediction_diff": diff,
            },
        )
    return 0


def parse_args(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000, help="training rows (default 1,000,000)")
    ap.add_argument("--rounds", type=int, default=100, help="boosting rounds (default 100)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per side (default 3)")
    ap.add_argument("--leaves", type=int, default=255, help="num_leaves (default 255)")
    ap.add_argument(
        "--learner",
        default="data",
        choices=("data", "voting", "feature"),
        help="tree_learner (default data)",
    )
    ap.add_argument(
        "--tcp",
        action="store_true",
        help="also time mpiexec -n 2 with shared memory off (TCP on lo, as dgbdt.dask's ranks)",
    )
    ap.add_argument("--json", metavar="PATH", help="also write all results to PATH")
    ap.add_argument("--worker", choices=("warm", "mpi", "join"), help=SUPPRESS)
    ap.add_argument("--config", help=SUPPRESS)
    ap.add_argument("--result", help=SUPPRESS)
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        workers = {"warm": warm_worker, "mpi": mpi_worker, "join": join_worker}
        workers[args.worker](json.loads(args.config), args.result)
        return 0
    return main_parent(args)


if __name__ == "__main__":
    sys.exit(main())
