"""Rank script: weights on rank 0's shard only (the other ranks pass none), L1
objective (whose starting score and leaf values gather weights from every rank).

argv: K, out_dir
"""

import sys

import numpy as np
from shard_data import make_data, shard_bounds

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out_dir = int(sys.argv[1]), sys.argv[2]
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
X, y, _, _ = make_data()
lo, hi = shard_bounds(len(y), k)[comm.rank]
weight = np.linspace(0.5, 2.0, hi - lo) if comm.rank == 0 else None
params = {"objective": "regression_l1", "num_leaves": 15, "verbosity": -1, "tree_learner": "data"}
booster = dgbdt.train(params, dgbdt.Dataset(X[lo:hi], y[lo:hi], weight=weight), 5)
if comm.rank == 0:
    booster.save_model(f"{out_dir}/model.json")
