"""Rank script: regression on labels spanning many orders of magnitude (float sums
of their gradients depend on the order of addition); rank 0 writes the model.

argv: K, out_dir, params_json, n_rounds
"""

import json
import sys

import numpy as np
from shard_data import make_data, shard_bounds

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out_dir, params, n_rounds = (
    int(sys.argv[1]),
    sys.argv[2],
    json.loads(sys.argv[3]),
    int(sys.argv[4]),
)
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
X, _, _, _ = make_data()
y = np.exp(6.0 * X[:, 0]) * np.where(X[:, 1] > 0, 1.0, -1e-3) + np.where(X[:, 2] > 0, 1e-9, 0.0)
lo, hi = shard_bounds(len(y), k)[comm.rank]
booster = dgbdt.train(params, dgbdt.Dataset(X[lo:hi], y[lo:hi]), n_rounds)
if comm.rank == 0:
    booster.save_model(f"{out_dir}/model.json")
