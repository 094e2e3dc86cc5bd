"""Rank script: data-parallel training N rounds, and M rounds with a checkpoint
callback, then resumed from rank 0's snapshot file; rank 0 writes both models.

argv: K, out_dir, params_json, N, M
"""

import json
import sys

from mpi4py import MPI
from shard_data import make_data, shard_bounds

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out_dir, params = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
n_rounds, resume_at = int(sys.argv[4]), int(sys.argv[5])
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
X, y, _, _ = make_data()
lo, hi = shard_bounds(len(y), k)[comm.rank]


def shard():
    return dgbdt.Dataset(X[lo:hi], y[lo:hi])  # a fresh Dataset each run, as a new job would


full = dgbdt.train(params, shard(), n_rounds)
dgbdt.train(params, shard(), resume_at, callbacks=[dgbdt.checkpoint(f"{out_dir}/ckpt", resume_at)])
MPI.COMM_WORLD.Barrier()  # rank 0's snapshot is on disk
resumed = dgbdt.train(
    params,
    shard(),
    n_rounds - resume_at,
    init_model=f"{out_dir}/ckpt.snapshot_iter_{resume_at}",
    callbacks=[dgbdt.log_progress(1)],
)
if comm.rank == 0:
    full.save_model(f"{out_dir}/full.json")
    resumed.save_model(f"{out_dir}/resumed.json")
