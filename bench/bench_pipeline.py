#!/usr/bin/env python
"""What the data-parallel pipeline (``comm_pipeline``) can hide, measured.

```
python bench/bench_pipeline.py --rate 1gbit --rows 250000 --features 500 --leaves 63
```

Two ranks, one per emulated host (bench/netcluster.py), train data-parallel
on their own random rows.  Three measurements, each printed with its command's
figures:

1. per histogram, unpipelined: the build ``b_i`` and the reduce-scatter
   ``c_i``.  A pipeline inside one leaf's histogram can hide at most
   ``sum(min(b_i, c_i))`` (a leaf's exchange cannot overlap the next leaf's
   work, which waits for this leaf's split): printed as a share of
   ``min(sum b, sum c)``;
2. the CPU one rank spends moving histograms over the emulated link with no
   computation (the communication thread's non-blocking exchange, polled with
   sleeps): on a real network a NIC moves the bytes; here the kernel's veth,
   bridge and tbf code does, on the cores the builds need;
3. fits with the pipeline off and on (4 pieces), build and wait seconds of the
   pipelined histograms.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import numpy as np

SCRIPT = os.path.abspath(__file__)


def _data(rows, features, rank):
    rng = np.random.default_rng(rank)
    X = rng.normal(size=(rows, features)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] + rng.normal(size=rows) > 0).astype(float)
    return X, y


def _per_leaf(dgbdt, data_module, histograms, ds, params):
    """(builds, exchanges) per histogram of an unpipelined fit."""
    rec = []
    reduce_scatter, build = data_module.reduce_scatter_bins, histograms.FloatHistograms.build_local

    def timed_exchange(*a, **k):
        t = time.perf_counter()
        out = reduce_scatter(*a, **k)
        rec[-1][1] = time.perf_counter() - t
        return out

    def timed_build(self, *a, **k):
        t = time.perf_counter()
        out = build(self, *a, **k)
        rec.append([time.perf_counter() - t, 0.0])
        return out

    data_module.reduce_scatter_bins = timed_exchange
    histograms.FloatHistograms.build_local = timed_build
    try:
        dgbdt.train({**params, "comm_pipeline": 0}, ds, params["rounds"])
    finally:
        data_module.reduce_scatter_bins = reduce_scatter
        histograms.FloatHistograms.build_local = build
    return np.array(rec)


def _network_cpu(comm, nbytes, count):
    """(wall, CPU) seconds of ``count`` reduce-scatters of ``nbytes`` each, on
    the communication thread, this thread sleeping."""
    buf = np.ones(nbytes // 8)
    half = len(buf) // 2
    comm.allreduce(np.zeros(1))
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(count):
        pending = comm.reduce_scatter_start(buf, [half, len(buf) - half])
        while not pending.done.is_set():
            time.sleep(0.001)
        pending.wait()
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def rank_main(args):
    import dgbdt  # noqa: PLC0415 - in the ranks only
    from dgbdt.distributed.comm import world_comm  # noqa: PLC0415
    from dgbdt.treelearner import histograms  # noqa: PLC0415
    from dgbdt.treelearner.learners import data as data_module  # noqa: PLC0415

    comm = world_comm()
    assert comm.size == 2, comm.size
    X, y = _data(args.rows, args.features, comm.rank)
    ds = dgbdt.Dataset(X, y)
    params = {"objective": "binary", "tree_learner": "data", "num_leaves": args.leaves,
              "verbosity": -1, "min_data_in_leaf": 100, "rounds": args.rounds}  # fmt: skip
    dgbdt.train({**params, "comm_pipeline": 0}, ds, 1)  # construct, warm
    rec = _per_leaf(dgbdt, data_module, histograms, ds, params)
    hist_bytes = int(ds.num_feature() * 255 * 16)
    wall, cpu = _network_cpu(comm, hist_bytes, 200)
    fits = {}
    for pieces in (0, 4, 0, 4):
        start = time.perf_counter()
        booster = dgbdt.train({**params, "comm_pipeline": pieces}, ds, args.rounds)
        fits.setdefault(pieces, []).append(time.perf_counter() - start)
        fits[f"comm{pieces}"] = sum(booster.comm_stats()["seconds_per_tree"])
    if comm.rank == 0:
        _report(rec, wall, cpu, hist_bytes, fits)


def _report(rec, wall, cpu, hist_bytes, fits):
    builds, exchanges = rec[:, 0].sum(), rec[:, 1].sum()
    bound = np.minimum(rec[:, 0], rec[:, 1]).sum()
    print(
        f"1. {len(rec)} histograms: builds {builds:.2f} s, exchanges {exchanges:.2f} s; "
        f"sum(min(b, c)) = {bound:.2f} s = {bound / min(builds, exchanges):.0%} of the smaller"
    )
    print(
        f"2. 200 exchanges of {hist_bytes / 1e6:.2f} MB alone: {wall:.2f} s wall, "
        f"{cpu:.2f} s CPU on this rank ({cpu / wall:.0%} of a core)"
    )
    off, on = min(fits[0]), min(fits[4])
    print(f"3. fit without the pipeline {off:.2f} s (collectives {fits['comm0']:.2f} s), with "
          f"4 pieces {on:.2f} s (collectives {fits['comm4']:.2f} s): "
          f"{(off - on) / min(fits['comm0'], off - fits['comm0']):.0%} of min(compute, "
          f"communication) hidden")  # fmt: skip


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rate", default="1gbit")
    ap.add_argument("--rows", type=int, default=250_000, help="rows per rank")
    ap.add_argument("--features", type=int, default=500)
    ap.add_argument("--leaves", type=int, default=63)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rank", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rank:
        rank_main(args)
        return
    import common  # noqa: PLC0415 - this folder is first on sys.path
    import llvmlite.binding  # noqa: PLC0415
    import netcluster  # noqa: PLC0415

    print(f"CPU {llvmlite.binding.get_host_cpu_name()}, load {os.getloadavg()} at start; "
          f"K = 2, links {args.rate}, {args.rows} rows x {args.features} features per rank, "
          f"{args.leaves} leaves, {args.rounds} trees")  # fmt: skip
    argv = [sys.executable, SCRIPT, "--rank", *sys.argv[1:]]
    with netcluster.emulated_cluster(2, args.rate) as cluster:
        result = netcluster.run_mpi(cluster, 1, argv, 1800, env=common.rank_env())
    print(result.stdout.strip())
    if result.returncode != 0:
        print(result.stderr[-3000:])


if __name__ == "__main__":
    main()
