#!/usr/bin/env python
"""Communication benchmark: bytes, calls, time and accuracy of dgbdt's distributed learners.

Part 1, the byte table.  For tree_learner ``data``, ``voting`` (both voting
rules: PV-Tree's ``votes``, which elects 2*top_k features, and LightGBM's
``weighted_gain``, which elects top_k) and ``feature``, at 28, 500 and 2,000
features and K = 2 and 4 ranks (``mpiexec -n K``, the launcher beside this
Python), it prints per tree: the bytes each rank sends (median over trees;
the mean of the ranks' medians) and the bytes summed over ranks, the calls per
collective kind, the fit time and the validation AUC.  (At 28 features
``votes`` with top_k 20 elects every feature, so dgbdt holds no vote there and
sends what data-parallel sends: see dgbdt.treelearner.learners.voting.)  Then
the issue's targets, each with PASS/FAIL:

    bytes   data / voting >= 5x at 500 features and >= 15x at 2,000 (bytes per tree, summed over ranks)
    AUC     voting - data >= -0.003 on the validation rows (median over seeds of the per-seed difference)
    feature bytes per tree do not grow with the number of features (max/min over widths <= 1.10)

Part 2, the speed section: dgbdt under ``mpiexec -n 2`` against LightGBM's
own distributed training (socket mode, two local processes on 127.0.0.1,
``num_threads=1``), data- and voting-parallel, on 1,000,000 x 28 rows, 100
rounds, 255 leaves; target dgbdt fit <= 1.2 x LightGBM's.

Data
----
The first 28 columns are ``make_higgs_like`` (HIGGS-shaped, see
``datasets/__init__.py``).  Wider problems add ``width - 28`` columns built
by this script (``--extra``, default ``mix``):

* ``mix``: half of the extra columns (chosen at random) are random linear
  combinations of 2-4 standardised HIGGS columns plus Gaussian noise whose
  standard deviation is drawn from U(0.25, 2) per column, so they carry
  weak, correlated, partly redundant signal; the other half are pure N(0, 1)
  noise.  Many near-tied candidate features are what makes the local vote of
  PV-Tree hard: its guarantee weakens as the number of features grows
  (Meng et al. 2016), so a problem whose wide columns were all pure noise
  would flatter voting.  Real wide data (one-hot blocks, sparse counts,
  heavy-tailed columns, categorical interactions) is not modelled.
* ``noise``: all extra columns pure noise (``make_higgs_like``'s own wide mode);
* ``combo``: all extra columns noisy linear combinations.

Which columns are combined, with which weights and noise levels is fixed
(``PROBLEM_SEED``), as is the target function; a seed only draws a new sample.
Seed ``s`` draws its training rows with ``make_higgs_like(rows, seed=1000+s)``
and its validation rows with ``seed=5000+s``; the training rows are shuffled
(a permutation drawn from ``s``) and then cut into K contiguous shards (rank
r holds shard r) for data/voting; feature-parallel ranks all hold every row
and column (LightGBM's feature-parallel is replicated).  Extra columns draw
their noise per block of 4,096 shuffled rows, so a shard is the same on any K.
Validation rows are sharded the same way; the AUC is computed after training
from every rank's predictions gathered on rank 0 (outside dgbdt's counted
communication), so it is the exact AUC of all validation rows.

What is counted
---------------
``booster.comm_stats()``: every collective adds the size of *this rank's send
buffer*; bytes per tree are counted from the start of a tree to the start of
the next.  Training runs without validation sets, so no metric traffic is
included (dgbdt's global AUC gathers labels and predictions, 16 B per
validation row and round, which would blur the learners' own numbers).
"calls per tree" are the tree phase's calls per kind divided by the trees.
"in coll %" is the share of the tree phase's wall time spent inside
collectives (including waiting for the slowest rank), rank 0.

Times
-----
"fit s" = Dataset construction (the distributed binning) + ``dgbdt.train``,
from a barrier to the slowest rank's finish, median over seeds.  Before the
first timed fit every rank trains each learner once on a few rows (loads the
Numba cache; before any mpiexec the parent compiles every kernel in one
process with ``mpiexec -n 1``, so ranks never compile at once).  One Numba
thread per rank (``NUMBA_NUM_THREADS=1``), ``OMP_WAIT_POLICY=passive``.
K = 4 on a 2-core machine runs two ranks per core: its times are inflated,
its byte counts are not.

The JSON (``--json``) also holds, per width, a single-process profile of the
serial learner (time per tree in histograms, split scans, partitioning and
everything else, at the full and a quarter of the training rows), and per
run the per-rank compute CPU time outside collectives: the inputs of
``bench/bench_scaling.py --from-json``.

Run ``python bench/bench_comm.py --help``; see bench/README.md.  This is a
script run by hand, not a test.
"""

from __future__ import annotations

import json
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from argparse import SUPPRESS

import common
import numpy as np
from common import (
    KINDS,
    add_sized,
    apply_defaults,
    arg_parser,
    auc_of,
    fmt_bytes,
    fmt_runs,
    load_datasets_module,
    machine_info,
    mpi_world,
    mpiexec_path,
    print_machine,
    print_rows,
    progress,
    rank_env,
    run_group,
    run_worker,
    timed,
    verdict,
    warm_kernels,
    worker_cmd,
    write_json,
    write_result,
)

SCRIPT = pathlib.Path(__file__).resolve()

N_BASE = 28
PROBLEM_SEED = 20161205  # fixes which columns the extra features mix, not the sample
EXTRA_BLOCK_ROWS = 4096  # noise of extra columns is drawn per block of shuffled rows
TRAIN_SEED_BASE, VALID_SEED_BASE = 1000, 5000
SPEED_SEED = 0

#: name -> dgbdt parameters
LEARNERS = {
    "data": {"tree_learner": "data"},
    "voting-votes": {"tree_learner": "voting", "voting_rule": "votes"},
    "voting-wg": {"tree_learner": "voting", "voting_rule": "weighted_gain"},
    "feature": {"tree_learner": "feature"},
}
VOTING = ("voting-votes", "voting-wg")
KIND_SHORT = {"allreduce": "ar", "reduce_scatter": "rs", "allgather": "ag", "bcast": "bc"}

TARGETS = {
    "bytes_ratio": {
        500: 5.0,
        2000: 15.0,
    },  # data bytes / voting bytes >= (per tree, summed over ranks)
    "auc_diff": -0.003,  # median over seeds of AUC(voting) - AUC(data) >=
    "feature_growth": 1.10,  # feature bytes per tree, max / min over widths <=
    "speed": 1.2,  # dgbdt fit / LightGBM fit <=
}


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------


class Problem:
    """The fixed definition of the extra columns (the same on every rank and seed)."""

    def __init__(self, datasets, width, extra):
        self.datasets = datasets
        self.width = width
        self.n_extra = max(0, width - N_BASE)
        ref, _ = datasets.make_higgs_like(20_000, seed=PROBLEM_SEED)
        ref = ref.astype(np.float64)
        self.mean = ref.mean(axis=0)
        self.std = ref.std(axis=0) + 1e-12
        rng = np.random.default_rng(PROBLEM_SEED)
        n = self.n_extra
        if extra == "noise":
            combo = np.zeros(n, bool)
        elif extra == "combo":
            combo = np.ones(n, bool)
        elif extra == "mix":
            combo = rng.random(n) < 0.5
        else:
            raise ValueError(f"--extra must be mix, noise or combo, got {extra!r}")
        self.weights = np.zeros((N_BASE, n))
        self.noise_sd = np.ones(n)
        for j in np.flatnonzero(combo):
            cols = rng.choice(N_BASE, size=int(rng.integers(2, 5)), replace=False)
            w = rng.standard_normal(len(cols))
            self.weights[cols, j] = w / np.linalg.norm(w)
            self.noise_sd[j] = rng.uniform(0.25, 2.0)
        self.n_combo = int(combo.sum())

    def extra_columns(self, base, seed, stream, lo, hi):
        """Extra columns of the shuffled rows lo..hi (``base`` holds their 28 columns)."""
        n = self.n_extra
        z = ((base - self.mean) / self.std).astype(np.float32)
        out = z @ self.weights.astype(np.float32)
        b0, b1 = lo // EXTRA_BLOCK_ROWS, (hi - 1) // EXTRA_BLOCK_ROWS
        at = 0
        for b in range(b0, b1 + 1):
            rng = np.random.default_rng([seed, stream, b, n])
            noise = rng.standard_normal((EXTRA_BLOCK_ROWS, n), dtype=np.float32)
            s = max(lo, b * EXTRA_BLOCK_ROWS) - b * EXTRA_BLOCK_ROWS
            e = min(hi, (b + 1) * EXTRA_BLOCK_ROWS) - b * EXTRA_BLOCK_ROWS
            out[at : at + e - s] += noise[s:e] * self.noise_sd.astype(np.float32)
            at += e - s
        return out

    def rows(self, seed, stream, n_rows, lo, hi, shuffle):
        """Rows lo..hi of a (shuffled) sample of n_rows: X float32 (hi-lo, width), y."""
        gen_seed = (TRAIN_SEED_BASE if stream == 0 else VALID_SEED_BASE) + seed
        X, y = self.datasets.make_higgs_like(n_rows, seed=gen_seed)
        if shuffle:
            order = np.random.default_rng([seed, 77]).permutation(n_rows)[lo:hi]
            X, y = X[order], y[order]
        else:
            X, y = X[lo:hi], y[lo:hi]
        if self.n_extra:
            X = np.hstack([X, self.extra_columns(X, seed, stream, lo, hi)])
        return np.ascontiguousarray(X), y


def shard(n, k, rank):
    return rank * n // k, (rank + 1) * n // k


# ---------------------------------------------------------------------------
# rank side: timing of collectives, per-tree snapshots
# ---------------------------------------------------------------------------


class CollectiveTimer:
    """Wall and CPU time spent inside dgbdt's collectives (outermost calls only)."""

    def __init__(self, comm):
        self.wall = 0.0
        self.cpu = 0.0
        self._depth = 0
        for name in ("allreduce", "reduce_scatter", "allgather", "allgatherv", "bcast"):
            setattr(comm, name, self._wrap(getattr(comm, name)))

    def _wrap(self, fn):
        def timed(*args, **kwargs):
            if self._depth:  # allgatherv calls allgather
                return fn(*args, **kwargs)
            self._depth += 1
            w0, c0 = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.wall += time.perf_counter() - w0
                self.cpu += time.process_time() - c0
                self._depth -= 1

        return timed

    def snapshot(self):
        return {
            "wall": self.wall,
            "cpu": self.cpu,
            "t_wall": time.perf_counter(),
            "t_cpu": time.process_time(),
        }


class TreePhase:
    """Callbacks that bracket the tree phase (first tree to last score update)."""

    def __init__(self, timer):
        self.timer = timer
        self.start = self.end = None
        self.stats_start = self.stats_end = None
        outer = self

        class Before:
            before_iteration = True

            def __call__(self, env):
                if env.iteration == env.begin_iteration:
                    outer.start = outer.timer.snapshot()
                    outer.stats_start = env.model.comm_stats()

        class After:
            before_iteration = False
            order = 1000

            def __call__(self, env):
                outer.end = outer.timer.snapshot()
                outer.stats_end = env.model.comm_stats()

        self.callbacks = [Before(), After()]

    def summary(self, n_trees):
        s, e = self.start, self.end
        per_kind = {}
        for kind in KINDS:
            calls = e and self.stats_end["calls"][kind] - self.stats_start["calls"][kind]
            nbytes = e and self.stats_end["bytes"][kind] - self.stats_start["bytes"][kind]
            per_kind[kind] = {
                "calls_per_tree": calls / max(n_trees, 1),
                "bytes_per_tree": nbytes / max(n_trees, 1),
                "bytes_per_call": nbytes / calls if calls else 0.0,
            }
        return {
            "tree_wall_s": e["t_wall"] - s["t_wall"],
            "tree_cpu_s": e["t_cpu"] - s["t_cpu"],
            "coll_wall_s": e["wall"] - s["wall"],
            "coll_cpu_s": e["cpu"] - s["cpu"],
            "per_kind": per_kind,
        }


def base_params(cfg):
    return {
        "objective": "binary",
        "num_leaves": cfg["leaves"],
        "learning_rate": cfg["learning_rate"],
        "max_bin": cfg["max_bin"],
        "min_data_in_leaf": 20,
        "min_sum_hessian_in_leaf": 1e-3,
        "top_k": cfg["top_k"],
        "num_threads": 1,
        "verbosity": -1,
        "seed": 0,
    }


def rank_warm_up(dgbdt, cfg, params0, rank):
    """Load every learner's kernels from the cache (tiny, untimed)."""
    rng = np.random.default_rng(rank)
    Xw = rng.standard_normal((400, cfg["width"])).astype(np.float32)
    yw = (Xw[:, 0] > 0).astype(np.float64)
    Xall = np.random.default_rng(99).standard_normal((400, cfg["width"])).astype(np.float32)
    yall = (Xall[:, 0] > 0).astype(np.float64)
    for name in cfg["learners"]:
        rep = name == "feature"
        dgbdt.train(
            {**params0, **LEARNERS[name], "num_leaves": 7},
            dgbdt.Dataset(Xall if rep else Xw, yall if rep else yw),
            2,
        ).predict(Xw[:10])


def rank_data(problem, cfg, seed, replicated, world):
    """This rank's (X, y, X_valid, y_valid, seconds to generate) for one seed:
    its shard of the shuffled rows, or every row for a replicated learner."""
    K, rank = world.Get_size(), world.Get_rank()
    lo, hi = (0, cfg["rows"]) if replicated else shard(cfg["rows"], K, rank)
    vlo, vhi = (0, cfg["valid_rows"]) if replicated else shard(cfg["valid_rows"], K, rank)
    t0 = time.perf_counter()
    X, y = problem.rows(seed, 0, cfg["rows"], lo, hi, shuffle=True)
    Xv, yv = problem.rows(seed, 1, cfg["valid_rows"], vlo, vhi, shuffle=False)
    return X, y, Xv, yv, time.perf_counter() - t0


def rank_fit(dgbdt, world, timer, params, data, rounds):
    """One timed fit from a barrier: (this rank's figures, its validation predictions, trees)."""
    X, y, Xv, _, gen_s = data
    phase = TreePhase(timer)
    world.Barrier()
    t0 = time.perf_counter()
    booster = dgbdt.train(params, dgbdt.Dataset(X, y), rounds, callbacks=phase.callbacks)
    fit_s = time.perf_counter() - t0
    stats = booster.comm_stats()
    n_trees = booster.num_trees()
    mine = {
        "fit_s": fit_s,
        "bytes_per_tree": stats["bytes_per_tree"],
        "calls": stats["calls"],
        "bytes": stats["bytes"],
        "phase": phase.summary(n_trees),
        "rows": len(y),
        "gen_s": gen_s,
        "n_leaves": [int(t.n_leaves) for t in booster.trees] if hasattr(booster, "trees") else None,
    }
    return mine, booster.predict(Xv), n_trees


def run_record(run, gathered, auc):
    """Rank 0's record of one run: ``run`` (K, width, learner, seed, repeat, trees)
    plus what every rank measured."""
    per_tree = np.array([r["bytes_per_tree"] for r in gathered], dtype=np.float64)  # (K, trees)
    return {
        **run,
        "fit_s": max(r["fit_s"] for r in gathered),
        "fit_s_per_rank": [r["fit_s"] for r in gathered],
        "auc": auc,
        "bytes_per_tree_rank_median": [float(np.median(r)) for r in per_tree],
        "bytes_per_tree_sum_median": float(np.median(per_tree.sum(axis=0))),
        "bytes_per_tree_sum": per_tree.sum(axis=0).tolist(),
        "calls_total": [r["calls"] for r in gathered],
        "bytes_total": [r["bytes"] for r in gathered],
        "phase": [r["phase"] for r in gathered],
        "rows_per_rank": [r["rows"] for r in gathered],
        "n_leaves": gathered[0]["n_leaves"],
        "datagen_s": max(r["gen_s"] for r in gathered),
    }


def comm_worker(cfg, result_path):
    """Under mpiexec -n K: every (seed, learner) of one width; rank 0 writes the results."""
    comm, world = mpi_world(cfg["K"])
    K, rank = world.Get_size(), world.Get_rank()
    import dgbdt  # noqa: PLC0415

    timer = CollectiveTimer(comm)
    problem = Problem(load_datasets_module(), cfg["width"], cfg["extra"])
    params0 = base_params(cfg)
    rank_warm_up(dgbdt, cfg, params0, rank)

    runs = []
    for si, seed in enumerate(cfg["seeds"]):
        cache = {}
        for name in cfg["learners"]:
            if name == "feature" and si >= cfg["feature_seeds"]:
                continue
            replicated = name == "feature"
            if replicated not in cache:
                cache.clear()
                cache[replicated] = rank_data(problem, cfg, seed, replicated, world)
            data = cache[replicated]
            yv = data[3]
            for rep in range(cfg["repeats"]):
                mine, pred, n_trees = rank_fit(
                    dgbdt, world, timer, {**params0, **LEARNERS[name]}, data, cfg["rounds"]
                )
                gathered = world.gather(mine, root=0)
                preds = world.gather(None if replicated else (pred, yv), root=0)
                if rank != 0:
                    continue
                if replicated:
                    auc = auc_of(yv, pred)
                else:
                    auc = auc_of(
                        np.concatenate([p[1] for p in preds]), np.concatenate([p[0] for p in preds])
                    )
                run = {"K": K, "width": cfg["width"], "learner": name, "seed": seed}
                runs.append(run_record({**run, "repeat": rep, "trees": n_trees}, gathered, auc))
                write_result(result_path, runs)
    world.Barrier()


def warm_worker():
    """One process (mpiexec -n 1): run every learner and layout once so Numba compiles
    and caches every kernel before K ranks load them."""
    common.dgbdt_world_comm()
    rng = np.random.default_rng(0)
    for width in (8, 300):
        X = rng.standard_normal((600, width)).astype(np.float32)
        y = (X[:, 0] + 0.3 * rng.standard_normal(600) > 0).astype(np.float64)
        param_sets = [
            {
                "objective": "binary",
                "num_leaves": 7,
                "verbosity": -1,
                "num_threads": 1,
                **lp,
                **layout,
            }
            for lp in [{"tree_learner": "serial"}, *LEARNERS.values()]
            for layout in ({"force_row_wise": True}, {"force_col_wise": True})
        ]
        warm_kernels(param_sets, X, y, X)


# ---------------------------------------------------------------------------
# single-process profile of the serial learner (input of bench_scaling.py)
# ---------------------------------------------------------------------------


def instrument_serial_learner():
    """Wrap the serial learner's histogram, split-scan and partition methods with
    timers; returns the dictionary of their seconds and calls."""
    from dgbdt.treelearner.learners.serial import SerialLearner  # noqa: PLC0415

    acc = {
        "hist": 0.0,
        "scan": 0.0,
        "partition": 0.0,
        "hist_calls": 0,
        "scan_calls": 0,
        "partition_calls": 0,
    }

    def wrap(fn, key):
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                acc[key] += time.perf_counter() - t0
                acc[key + "_calls"] += 1

        return timed

    SerialLearner.leaf_histogram = wrap(SerialLearner.leaf_histogram, "hist")
    SerialLearner.best_split = wrap(SerialLearner.best_split, "scan")
    SerialLearner.partition = wrap(SerialLearner.partition, "partition")
    return acc


def profile_point(dgbdt, params, X, y, rounds, acc):
    """Train on (X, y) with the timers of ``acc`` reset; the per-tree figures."""
    for key in acc:
        acc[key] = 0 if key.endswith("_calls") else 0.0
    starts = []
    ends = []

    class Before:
        before_iteration = True

        def __call__(self, env):
            if env.iteration == env.begin_iteration:
                starts.append(time.perf_counter())

    class After:
        before_iteration = False

        def __call__(self, env):
            ends.append(time.perf_counter())

    booster = dgbdt.train(params, dgbdt.Dataset(X, y), rounds, callbacks=[Before(), After()])
    trees = booster.num_trees()
    tree_s = (ends[-1] - starts[0]) / trees
    row = {
        "rows": len(y),
        "trees": trees,
        "tree_s": tree_s,
        "hist_s": acc["hist"] / trees,
        "scan_s": acc["scan"] / trees,
        "partition_s": acc["partition"] / trees,
        "splits_per_tree": acc["partition_calls"] / trees,
        "hist_calls_per_tree": acc["hist_calls"] / trees,
        "scan_calls_per_tree": acc["scan_calls"] / trees,
    }
    row["other_s"] = tree_s - row["hist_s"] - row["scan_s"] - row["partition_s"]
    return row


def profile_worker(cfg, result_path):
    """Time per tree in histograms, split scans, partitioning and the rest, one process."""
    import dgbdt  # noqa: PLC0415

    acc = instrument_serial_learner()
    problem = Problem(load_datasets_module(), cfg["width"], cfg["extra"])
    params = {**base_params(cfg), "tree_learner": "serial"}
    X, y = problem.rows(0, 0, cfg["rows"], 0, cfg["rows"], shuffle=True)
    dgbdt.train({**params, "num_leaves": 7}, dgbdt.Dataset(X[:2000], y[:2000]), 2)  # warm
    points = []
    for frac in (1, 4):
        n = cfg["rows"] // frac
        layouts = [("default", {})]
        if cfg["width"] * cfg["max_bin"] <= 65536:
            # The feature-parallel learner builds column-wise; the serial default here is row-wise.
            layouts.append(("col", {"force_col_wise": True}))
        for lname, extra in layouts:
            row = profile_point(dgbdt, {**params, **extra}, X[:n], y[:n], cfg["rounds"], acc)
            points.append({"rows": row.pop("rows"), "layout": lname, **row})
    write_result(
        result_path,
        {
            "width": cfg["width"],
            "points": points,
            "threads": 1,
            "leaves": cfg["leaves"],
            "max_bin": cfg["max_bin"],
        },
    )


# ---------------------------------------------------------------------------
# LightGBM socket workers (speed section)
# ---------------------------------------------------------------------------


def lgb_worker(cfg, result_path):
    """One of LightGBM's two socket-mode processes: its half of the rows, 1 thread."""
    rank = cfg["rank"]
    problem = Problem(load_datasets_module(), N_BASE, "mix")
    lo, hi = shard(cfg["rows"], 2, rank)
    X, y = problem.rows(SPEED_SEED, 0, cfg["rows"], lo, hi, shuffle=True)
    import lightgbm as lgb  # noqa: PLC0415

    params = {
        **base_params(cfg),  # the settings of dgbdt's runs
        "tree_learner": cfg["learner"],
        "num_machines": 2,
        "pre_partition": True,
        "machines": ",".join(f"127.0.0.1:{p}" for p in cfg["ports"]),
        "local_listen_port": cfg["ports"][rank],
        "time_out": 3,
    }
    # File barrier: both processes have their data before either starts the clock.
    ready = pathlib.Path(cfg["barrier_dir"])
    (ready / f"ready{rank}").touch()
    deadline = time.time() + 600
    while not all((ready / f"ready{r}").exists() for r in range(2)):
        if time.time() > deadline:
            raise RuntimeError("the other LightGBM process never became ready")
        time.sleep(0.005)
    t0 = time.perf_counter()
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=cfg["rounds"])
    fit_s = time.perf_counter() - t0
    out = {"rank": rank, "fit_s": fit_s, "version": lgb.__version__, "trees": booster.num_trees()}
    if rank == 0:
        Xt, yt = problem.rows(SPEED_SEED, 1, cfg["test_rows"], 0, cfg["test_rows"], shuffle=False)
        out["auc"] = auc_of(yt, booster.predict(Xt, num_threads=1))
    write_result(result_path, out)


def free_ports(n):
    """n distinct free TCP ports on 127.0.0.1 (bound and released; a race is possible, so callers retry)."""
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


# ---------------------------------------------------------------------------
# parent: launching
# ---------------------------------------------------------------------------


def run_mpi(k, mode, cfg, timeout, env_extra=None):
    """``mpiexec -n k python bench_comm.py --worker mode``; returns (result or None, error)."""
    return run_worker(
        SCRIPT,
        ["--worker", mode],
        cfg,
        timeout,
        env=rank_env(env_extra),
        ranks=k,
        timeout_msg="timed out after {:.0f} s (kept the runs finished before)",
    )


def run_plain(mode, cfg, timeout):
    """One process in its own group, with a rank's environment (one thread)."""
    return run_worker(SCRIPT, ["--worker", mode], cfg, timeout, group=True)


def warm_up(timeout, env_extra=None):
    """``mpiexec -n 1 ... --worker warm``: (return code, output tail, timed_out)."""
    rcs, tails, timed_out = run_group(
        [[str(mpiexec_path()), "-n", "1", sys.executable, str(SCRIPT), "--worker", "warm"]],
        timeout,
        rank_env(env_extra),
    )
    return rcs[0], tails[0], timed_out


def run_lightgbm(cfg, learner, timeout, attempts=3):
    """Two LightGBM socket processes on 127.0.0.1; returns (result or None, error)."""
    err = None
    for _ in range(attempts):
        with tempfile.TemporaryDirectory(prefix="dgbdt-bench-lgb-") as tmp:
            ports = free_ports(2)
            cmds, paths = [], []
            for r in range(2):
                path = pathlib.Path(tmp) / f"r{r}.json"
                c = {**cfg, "rank": r, "learner": learner, "ports": ports, "barrier_dir": tmp}
                cmds.append(worker_cmd(SCRIPT, ["--worker", "lgb"], c, path))
                paths.append(path)
            rcs, tails, timed_out = run_group(cmds, timeout)
            if not timed_out and all(rc == 0 for rc in rcs) and all(p.is_file() for p in paths):
                res = [json.loads(p.read_text()) for p in paths]
                return {
                    "fit_s": max(r["fit_s"] for r in res),
                    "fit_s_per_process": [r["fit_s"] for r in res],
                    "auc": res[0].get("auc"),
                    "version": res[0]["version"],
                    "trees": res[0]["trees"],
                    "ports": ports,
                }, None
            err = ("timed out" if timed_out else f"exit codes {rcs}") + ": " + " || ".join(tails)
    return None, err


# ---------------------------------------------------------------------------
# parent: summaries and tables
# ---------------------------------------------------------------------------


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarise(runs):
    """Per (K, width, learner): medians over seeds (and repeats)."""
    cells = {}
    for r in runs:
        cells.setdefault((r["K"], r["width"], r["learner"]), []).append(r)
    out = {}
    for key, rs in cells.items():
        phase = [p for r in rs for p in r["phase"]]
        calls = {
            kind: median([p["per_kind"][kind]["calls_per_tree"] for p in phase]) for kind in KINDS
        }
        kind_bytes = {
            kind: median([p["per_kind"][kind]["bytes_per_tree"] for p in phase]) for kind in KINDS
        }
        kind_call_bytes = {
            kind: median([p["per_kind"][kind]["bytes_per_call"] for p in phase]) for kind in KINDS
        }
        rank0 = [r["phase"][0] for r in rs]
        trees = [r["trees"] for r in rs]
        out[key] = {
            "K": key[0],
            "width": key[1],
            "learner": key[2],
            "n_runs": len(rs),
            "seeds": sorted({r["seed"] for r in rs}),
            "bytes_per_tree_rank": median(
                [statistics.fmean(r["bytes_per_tree_rank_median"]) for r in rs]
            ),
            "bytes_per_tree_sum": median([r["bytes_per_tree_sum_median"] for r in rs]),
            "calls_per_tree": calls,
            "bytes_per_tree_by_kind": kind_bytes,
            "bytes_per_call_by_kind": kind_call_bytes,
            "fit_s": median([r["fit_s"] for r in rs]),
            "fit_runs_s": [r["fit_s"] for r in rs],
            "auc": median([r["auc"] for r in rs]),
            "auc_by_seed": {r["seed"]: r["auc"] for r in rs},
            "coll_share": median(
                [p["coll_wall_s"] / p["tree_wall_s"] for p in rank0 if p["tree_wall_s"] > 0]
            ),
            # per-rank compute per tree: CPU time of the tree phase outside collectives
            "compute_cpu_per_tree_s": median(
                [
                    (p["tree_cpu_s"] - p["coll_cpu_s"]) / t
                    for r, t in zip(rs, trees, strict=True)
                    for p in r["phase"]
                ]
            ),
            "tree_wall_per_tree_s": median(
                [p["tree_wall_s"] / t for r, t in zip(rs, trees, strict=True) for p in r["phase"]]
            ),
            "leaves_per_tree": median(
                [statistics.fmean(r["n_leaves"]) for r in rs if r.get("n_leaves")]
            ),
            "rows_per_rank": rs[0]["rows_per_rank"],
        }
    add_auc_diffs(out)
    return out


def add_auc_diffs(out):
    """AUC difference to data-parallel, per seed, then the median, in every cell."""
    for (k, w, name), cell in out.items():
        base = out.get((k, w, "data"))
        if name == "data" or base is None:
            cell["auc_diff_median"] = None
            continue
        diffs = [
            cell["auc_by_seed"][s] - base["auc_by_seed"][s]
            for s in cell["auc_by_seed"]
            if s in base["auc_by_seed"]
        ]
        cell["auc_diffs"] = diffs
        cell["auc_diff_median"] = median(diffs)


def calls_text(calls):
    return " ".join(f"{KIND_SHORT[k]} {calls[k]:.0f}" for k in KINDS if calls.get(k))


def print_byte_table(cells, ks, widths, learners):
    header = [
        "K",
        "features",
        "learner",
        "bytes/tree/rank",
        "bytes/tree sum",
        "calls/tree/rank",
        "in coll %",
        "fit s",
        "valid AUC",
        "dAUC vs data",
        "runs",
    ]
    rows = []
    for k in ks:
        for w in widths:
            for name in learners:
                c = cells.get((k, w, name))
                if c is None:
                    continue
                rows.append(
                    [
                        k,
                        w,
                        name,
                        fmt_bytes(c["bytes_per_tree_rank"]),
                        fmt_bytes(c["bytes_per_tree_sum"]),
                        calls_text(c["calls_per_tree"]),
                        "-" if c["coll_share"] is None else f"{100 * c['coll_share']:.0f}",
                        f"{c['fit_s']:.2f}",
                        f"{c['auc']:.4f}",
                        "" if c.get("auc_diff_median") is None else f"{c['auc_diff_median']:+.4f}",
                        c["n_runs"],
                    ]
                )
    print_rows(header, rows, left=3)


def compute_checks(cells, ks, widths):
    checks = {"ratios": [], "auc": [], "feature": []}
    for k in ks:
        for w in widths:
            d = cells.get((k, w, "data"))
            for name in VOTING:
                v = cells.get((k, w, name))
                if d is None or v is None:
                    continue
                ratio = (
                    d["bytes_per_tree_sum"] / v["bytes_per_tree_sum"]
                    if v["bytes_per_tree_sum"]
                    else None
                )
                target = TARGETS["bytes_ratio"].get(w)
                checks["ratios"].append(
                    {
                        "K": k,
                        "width": w,
                        "learner": name,
                        "ratio": ratio,
                        "target": target,
                        "pass": None if target is None or ratio is None else ratio >= target,
                    }
                )
                diff = v.get("auc_diff_median")
                checks["auc"].append(
                    {
                        "K": k,
                        "width": w,
                        "learner": name,
                        "diff": diff,
                        "diffs": v.get("auc_diffs"),
                        "n_seeds": len(v.get("auc_diffs") or []),
                        "pass": None if diff is None else diff >= TARGETS["auc_diff"],
                    }
                )
        fb = {
            w: cells[(k, w, "feature")]["bytes_per_tree_sum"]
            for w in widths
            if (k, w, "feature") in cells
        }
        if len(fb) >= 2:
            growth = max(fb.values()) / min(fb.values())
            leaves = {w: cells[(k, w, "feature")]["leaves_per_tree"] for w in fb}
            checks["feature"].append(
                {
                    "K": k,
                    "bytes_per_tree_sum": fb,
                    "leaves_per_tree": leaves,
                    "growth": growth,
                    "pass": growth <= TARGETS["feature_growth"],
                }
            )
    return checks


def print_checks(checks):
    print("data / voting bytes per tree (summed over ranks):")
    rows = []
    for c in checks["ratios"]:
        tgt = "(info)" if c["target"] is None else f">= {c['target']:.0f}x"
        ok = "" if c["pass"] is None else verdict(c["pass"])
        rows.append(
            [
                c["K"],
                c["width"],
                c["learner"],
                "-" if c["ratio"] is None else f"{c['ratio']:.1f}x",
                tgt,
                ok,
            ]
        )
    print_rows(["K", "features", "voting rule", "data/voting", "target", ""], rows, left=3)
    print()
    print(
        f"voting AUC - data AUC on the validation rows (median over seeds of the per-seed difference; "
        f"target >= {TARGETS['auc_diff']:+.3f}):"
    )
    rows = []
    for c in checks["auc"]:
        diffs = "/".join(f"{d:+.4f}" for d in (c["diffs"] or []))
        rows.append(
            [
                c["K"],
                c["width"],
                c["learner"],
                "-" if c["diff"] is None else f"{c['diff']:+.4f}",
                c["n_seeds"],
                diffs,
                "" if c["pass"] is None else verdict(c["pass"]),
            ]
        )
    print_rows(
        ["K", "features", "voting rule", "median dAUC", "seeds", "per seed", ""], rows, left=3
    )
    print()
    print(
        f"feature-parallel bytes per tree (summed over ranks) by width; target: max/min <= "
        f"{TARGETS['feature_growth']:.2f}:"
    )
    rows = []
    for c in checks["feature"]:
        by_w = "  ".join(
            f"{w}: {fmt_bytes(b)} ({c['leaves_per_tree'][w]:.0f} leaves)"
            for w, b in c["bytes_per_tree_sum"].items()
        )
        rows.append([c["K"], by_w, f"{c['growth']:.3f}", verdict(c["pass"])])
    print_rows(["K", "bytes/tree sum by features", "max/min", ""], rows, left=2)


def speed_dgbdt(cfg, repeats, timeout, out):
    """dgbdt's speed runs: the comm worker on 28 columns under mpiexec -n 2, voting
    with LightGBM's own election rule; medians into ``out["dgbdt"]``."""
    dcfg = {
        **cfg,
        "K": 2,
        "width": N_BASE,
        "extra": "mix",
        "valid_rows": cfg["test_rows"],
        "learners": ["data", "voting-wg"],
        "seeds": [SPEED_SEED],
        "feature_seeds": 0,
        "repeats": repeats,
    }
    runs, err = timed("dgbdt speed runs (mpiexec -n 2)", run_mpi, 2, "comm", dcfg, timeout)
    if err:
        out["errors"].append(f"dgbdt: {err}")
    for name in ("data", "voting-wg"):
        rs = [r for r in runs or [] if r["learner"] == name]
        if rs:
            out["dgbdt"][name] = {
                "fit_s": median([r["fit_s"] for r in rs]),
                "fit_runs_s": [r["fit_s"] for r in rs],
                "auc": rs[-1]["auc"],
            }


def speed_lightgbm(cfg, repeats, timeout, out):
    """LightGBM's socket-mode fits, data and voting; medians into ``out["lightgbm"]``."""
    for lname, name in (("data", "data"), ("voting", "voting-wg")):
        t0 = time.perf_counter()
        res = []
        for _ in range(repeats):
            r, err = run_lightgbm(cfg, lname, timeout)
            if r is None:
                out["errors"].append(f"lightgbm {lname}: {err}")
                break
            res.append(r)
        progress(f"ran LightGBM socket {lname}", None if res else err, t0)
        if res:
            out["lightgbm"][name] = {
                "fit_s": median([r["fit_s"] for r in res]),
                "fit_runs_s": [r["fit_s"] for r in res],
                "auc": res[-1]["auc"],
                "version": res[-1]["version"],
            }


def speed_config(args):
    """The speed section's problem and settings (``--baseline`` runs in them too)."""
    return {
        "rows": args.speed_rows,
        "test_rows": args.speed_test_rows,
        "rounds": args.speed_rounds,
        "leaves": args.speed_leaves,
        "learning_rate": 0.1,
        "max_bin": args.max_bin,
        "top_k": args.top_k,
    }


def speed_section(args, timeout):
    """dgbdt (mpiexec -n 2) vs LightGBM socket mode (2 processes), data and voting."""
    cfg = speed_config(args)
    out = {"config": cfg, "dgbdt": {}, "lightgbm": {}, "errors": []}
    speed_dgbdt(cfg, args.speed_repeats, timeout, out)
    speed_lightgbm(cfg, args.speed_repeats, timeout, out)
    out["ratios"] = {}
    for name in ("data", "voting-wg"):
        d, lg = out["dgbdt"].get(name), out["lightgbm"].get(name)
        if d and lg:
            ratio = d["fit_s"] / lg["fit_s"]
            out["ratios"][name] = {"ratio": ratio, "pass": ratio <= TARGETS["speed"]}
    return out


def baseline_checkout(rev):
    """A detached worktree of ``rev`` in a temporary folder, importable with
    PYTHONPATH (its dgbdt/native links to its native/); returns its path."""
    repo = SCRIPT.resolve().parents[1]
    folder = tempfile.mkdtemp(prefix="dgbdt-baseline-")
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "--detach", folder, rev],
        check=True,
        capture_output=True,
    )
    os.symlink(os.path.join(folder, "native"), os.path.join(folder, "dgbdt", "native"))
    return folder


def baseline_section(args, timeout):
    """dgbdt (mpiexec -n 2) of this tree and of ``--baseline REV``, data and voting,
    alternating run by run (so both see the same load); medians and ratios."""
    folder = baseline_checkout(args.baseline)
    cfg = {
        **speed_config(args),
        "K": 2,
        "width": N_BASE,
        "extra": "mix",
        "valid_rows": args.speed_test_rows,
        "learners": ["data", "voting-wg"],
        "seeds": [SPEED_SEED],
        "feature_seeds": 0,
        "repeats": 1,
    }
    trees = {"this tree": None, f"baseline {args.baseline}": {"PYTHONPATH": folder}}
    runs = {name: [] for name in trees}
    try:
        warm_up(timeout, trees[f"baseline {args.baseline}"])
        for _ in range(args.speed_repeats):
            for name, env in trees.items():
                result, err = run_mpi(2, "comm", cfg, timeout, env)
                if err:
                    raise RuntimeError(f"{name}: {err}")
                runs[name] += result
    finally:
        subprocess.run(
            [
                "git",
                "-C",
                str(SCRIPT.resolve().parents[1]),
                "worktree",
                "remove",
                "--force",
                folder,
            ],
            capture_output=True,
        )
    out = {"rev": args.baseline, "fit_s": {}, "ratio": {}}
    for name in trees:
        for learner in ("data", "voting-wg"):
            fits = [r["fit_s"] for r in runs[name] if r["learner"] == learner]
            out["fit_s"].setdefault(name, {})[learner] = {"median": median(fits), "runs": fits}
    for learner in ("data", "voting-wg"):
        new, old = (out["fit_s"][name][learner]["median"] for name in trees)
        out["ratio"][learner] = new / old
    return out


def print_baseline(base):
    print(
        f"\nthis tree vs baseline {base['rev']} (dgbdt, mpiexec -n 2, alternating runs, medians):"
    )
    for learner, ratio in base["ratio"].items():
        cells = [
            f"{name}: {v[learner]['median']:.2f} s {[round(x, 2) for x in v[learner]['runs']]}"
            for name, v in base["fit_s"].items()
        ]
        print(f"  {learner:<10} " + "; ".join(cells) + f"; ratio {ratio:.3f}")


def print_speed(speed):
    cfg = speed["config"]
    print(
        f"speed: {cfg['rows']:,} x {N_BASE} rows (each process/rank its half, shuffled), {cfg['rounds']} rounds, "
        f"{cfg['leaves']} leaves, lr 0.1, {cfg['max_bin']} bins, 1 thread per process, top_k {cfg['top_k']}; "
        f"dgbdt under mpiexec -n 2, LightGBM socket mode (2 local processes on 127.0.0.1); "
        f"test AUC on {cfg['test_rows']:,} rows"
    )
    rows = []
    for name, label in (("data", "data"), ("voting-wg", "voting (weighted_gain)")):
        d, lg, r = speed["dgbdt"].get(name), speed["lightgbm"].get(name), speed["ratios"].get(name)
        rows.append(
            [
                label,
                "-" if not d else f"{d['fit_s']:.2f}",
                "-" if not d else fmt_runs(d["fit_runs_s"]),
                "-" if not lg else f"{lg['fit_s']:.2f}",
                "-" if not lg else fmt_runs(lg["fit_runs_s"]),
                "-" if not r else f"{r['ratio']:.2f}x",
                f"<= {TARGETS['speed']}x",
                "not available" if not r else verdict(r["pass"]),
                "-" if not d else f"{d['auc']:.4f}",
                "-" if not lg or lg["auc"] is None else f"{lg['auc']:.4f}",
            ]
        )
    print_rows(
        [
            "learner",
            "dgbdt fit s",
            "runs",
            "LightGBM fit s",
            "runs",
            "dgbdt/LightGBM",
            "target",
            "",
            "dgbdt AUC",
            "LightGBM AUC",
        ],
        rows,
    )
    for e in speed["errors"]:
        print(f"  error: {e}")
    if not speed["lightgbm"]:
        print(
            "  LightGBM's socket mode did not run here: no LightGBM figures (see the errors above)."
        )


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

# Sizes: full defaults (~15 min with the speed section on 2 cores) and --quick (~2 min).
FULL = {
    "rows": 40_000,
    "valid_rows": 20_000,
    "rounds": 15,
    "leaves": 63,
    "seeds": 5,
    "ks": "2,4",
    "speed_rows": 1_000_000,
    "speed_test_rows": 100_000,
    "speed_rounds": 100,
    "speed_leaves": 255,
    "speed_repeats": 3,
}
QUICK = {
    "rows": 20_000,
    "valid_rows": 10_000,
    "rounds": 5,
    "leaves": 31,
    "seeds": 2,
    "ks": "2,4",
    "speed_rows": 100_000,
    "speed_test_rows": 20_000,
    "speed_rounds": 20,
    "speed_leaves": 255,
    "speed_repeats": 1,
}


def add_speed_args(ap):
    """The options of the speed section (and of --baseline, which runs in its setting)."""
    f, q = FULL, QUICK
    ap.add_argument(
        "--baseline",
        metavar="REV",
        help="also time dgbdt of git revision REV (a temporary worktree) in the speed "
        "section's setting, alternating with this tree, and print the ratios",
    )
    add_sized(ap, "--speed-rows", "speed section rows", f, q)
    add_sized(ap, "--speed-test-rows", "speed section test rows", f)
    add_sized(ap, "--speed-rounds", "speed section rounds", f, q)
    add_sized(ap, "--speed-leaves", "speed section leaves", f)
    add_sized(ap, "--speed-repeats", "timed fits per library and learner, median reported", f, q)


def add_problem_args(ap):
    """The options of the byte table's problem and training settings."""
    f, q = FULL, QUICK
    add_sized(ap, "--rows", "training rows over all ranks", f, q)
    add_sized(ap, "--valid-rows", "validation rows", f, q)
    ap.add_argument("--widths", default="28,500,2000", help="feature counts (default 28,500,2000)")
    ap.add_argument("--ks", help=f"rank counts (default {f['ks']})")
    add_sized(ap, "--rounds", "boosting rounds", f, q)
    add_sized(ap, "--leaves", "num_leaves", f, q)
    ap.add_argument("--learning-rate", type=float, default=0.1)
    ap.add_argument("--max-bin", type=int, default=255)
    ap.add_argument("--top-k", type=int, default=20, help="voting top_k (default 20)")
    add_sized(ap, "--seeds", "data seeds for data/voting", f, q)
    ap.add_argument(
        "--feature-seeds",
        type=int,
        default=1,
        help="seeds for feature-parallel (default 1: it equals serial training, so its AUC "
        "needs no spread, and its bytes do not depend on the seed)",
    )
    ap.add_argument(
        "--learners", default=",".join(LEARNERS), help=f"comma list from {','.join(LEARNERS)}"
    )
    ap.add_argument(
        "--extra",
        default="mix",
        choices=("mix", "noise", "combo"),
        help="what the columns beyond 28 are (default mix; see the docstring)",
    )


def parse_args(argv=None):
    ap = arg_parser(__doc__)
    add_problem_args(ap)
    ap.add_argument(
        "--no-profile",
        action="store_true",
        help="skip the single-process profile (bench_scaling input)",
    )
    ap.add_argument(
        "--no-bytes", action="store_true", help="skip the byte table (speed section only)"
    )
    ap.add_argument(
        "--no-speed", action="store_true", help="skip the dgbdt vs LightGBM speed section"
    )
    add_speed_args(ap)
    ap.add_argument(
        "--quick",
        action="store_true",
        help="smoke run (~2 min): 20,000 rows, 5 rounds, 31 leaves, 2 seeds; speed section "
        "100,000 rows, 20 rounds, 1 repeat",
    )
    ap.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds allowed per mpiexec / process pair"
    )
    ap.add_argument("--json", metavar="PATH", help="also write all results to PATH")
    ap.add_argument("--worker", choices=("comm", "warm", "profile", "lgb"), help=SUPPRESS)
    ap.add_argument("--config", help=SUPPRESS)
    ap.add_argument("--result", help=SUPPRESS)
    args = ap.parse_args(argv)
    apply_defaults(args, FULL, QUICK)
    return args


def warm_or_exit(timeout):
    """Compile every kernel in one process before any mpiexec -n K, or stop."""
    t0 = time.perf_counter()
    rc, tail, timed_out = warm_up(timeout)
    if timed_out or rc != 0:
        raise SystemExit(f"warm-up (mpiexec -n 1) failed: {tail}")
    print(
        f"  warmed every learner's kernels in one process: {time.perf_counter() - t0:.0f} s",
        flush=True,
    )


def print_header(args, seeds):
    """The configuration and the machine; returns the load average at start."""
    print(
        f"bench_comm: binary, {args.rows:,} training rows (sharded over K ranks after a shuffle), "
        f"{args.valid_rows:,} validation rows, {args.rounds} rounds, {args.leaves} leaves, lr {args.learning_rate}, "
        f"{args.max_bin} bins, top_k {args.top_k}, min_data_in_leaf 20; features: 28 HIGGS-like + "
        f"extra '{args.extra}' columns; seeds {seeds} (feature-parallel: first {args.feature_seeds}); "
        f"1 Numba thread per rank"
    )
    load_before = print_machine("times are inflated and noisy")
    print(flush=True)
    return load_before


def run_profiles(common, widths, timeout, payload):
    """The serial learner's single-process profile at every width (bench_scaling's input)."""
    for w in widths:
        t0 = time.perf_counter()
        prof, err = run_plain("profile", {**common, "width": w}, timeout)
        if prof:
            payload["profiles"][str(w)] = prof
        else:
            payload["errors"].append(f"profile width {w}: {err}")
        progress(f"profiled the serial learner at {w} features", None if prof else err, t0)


def byte_section(args, common, payload):
    """Part 1: one mpiexec per (K, width), then the byte table and the checks."""
    cfg0 = payload["config"]
    ks, widths = cfg0["ks"], cfg0["widths"]
    if not args.no_profile:
        run_profiles(common, widths, args.timeout, payload)
    for k in ks:
        for w in widths:
            cfg = {
                **common,
                "K": k,
                "width": w,
                "learners": cfg0["learners"],
                "seeds": cfg0["seeds"],
                "feature_seeds": args.feature_seeds,
                "repeats": 1,
            }
            t0 = time.perf_counter()
            runs, err = run_mpi(k, "comm", cfg, args.timeout)
            payload["runs"].extend(runs or [])
            if err:
                payload["errors"].append(f"K={k} width={w}: {err}")
            print(
                f"  K={k} features={w}: {len(runs or [])} runs in {time.perf_counter() - t0:.0f} s"
                + ("" if err is None else f"  FAILED: {err}"),
                flush=True,
            )
    cells = summarise(payload["runs"])
    payload["cells"] = list(cells.values())
    checks = compute_checks(cells, ks, widths)
    payload["checks"] = checks
    print()
    print(
        "bytes = this rank's send buffers per collective (comm_stats), per tree, median over trees; "
        "'rank' = mean of the ranks' medians, 'sum' = over ranks; MB = 1e6 bytes; calls: ar allreduce, "
        "rs reduce_scatter, ag allgather, bc bcast; fit and AUC: median over seeds"
    )
    print_byte_table(cells, ks, widths, cfg0["learners"])
    print()
    print_checks(checks)


def new_payload(args, common, load_before, lists):
    """The JSON's skeleton: the configuration (``lists``: ks, widths, learners, seeds)."""
    return {
        "config": {**common, **lists, "feature_seeds": args.feature_seeds},
        "targets": {
            k: ({str(w): t for w, t in v.items()} if isinstance(v, dict) else v)
            for k, v in TARGETS.items()
        },
        **machine_info(load_before),
        "runs": [],
        "errors": [],
        "profiles": {},
    }


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        cfg = json.loads(args.config) if args.config else {}
        {"comm": comm_worker, "profile": profile_worker, "lgb": lgb_worker}.get(
            args.worker, lambda c, r: warm_worker()
        )(cfg, args.result)
        return 0

    ks = [int(s) for s in args.ks.split(",") if s.strip()]
    widths = [int(s) for s in args.widths.split(",") if s.strip()]
    learners = [s.strip() for s in args.learners.split(",") if s.strip()]
    bad = [name for name in learners if name not in LEARNERS]
    if bad:
        raise SystemExit(f"--learners: unknown {bad}; choose from {list(LEARNERS)}")
    if not mpiexec_path().exists():
        raise SystemExit(
            f"no mpiexec beside {sys.executable}: pip install 'dgbdt[mpi]' (mpi4py + mpich)"
        )
    seeds = list(range(args.seeds))
    load_before = print_header(args, seeds)

    warm_or_exit(args.timeout)

    common = {
        "rows": args.rows,
        "valid_rows": args.valid_rows,
        "rounds": args.rounds,
        "leaves": args.leaves,
        "learning_rate": args.learning_rate,
        "max_bin": args.max_bin,
        "top_k": args.top_k,
        "extra": args.extra,
    }
    lists = {"ks": ks, "widths": widths, "learners": learners, "seeds": seeds}
    payload = new_payload(args, common, load_before, lists)
    if not args.no_bytes:
        byte_section(args, common, payload)
    if not args.no_speed:
        print()
        speed = speed_section(args, args.timeout)
        payload["speed"] = speed
        print()
        print_speed(speed)
        if args.baseline:
            base = baseline_section(args, args.timeout)
            payload["baseline"] = base
            print_baseline(base)
    if payload["errors"]:
        print()
        for e in payload["errors"]:
            print(f"error: {e}")
    if args.json:
        write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
