"""Rank script: regression on labels spanning many orders of magnitude (float sums
of their gradients depend on the order of addition); rank 0 writes each model.

argv: K, out_dir, runs_json ({name: params}), n_rounds.  Every run in one launch
(K ranks start once); run ``name``'s model goes to out_dir/name.json.
"""

import json
import sys

import numpy as np
from shard_data import make_data, shard_bounds

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out_dir, runs, n_rounds = (
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
for name, params in runs.items():
    booster = dgbdt.train(params, dgbdt.Dataset(X[lo:hi], y[lo:hi]), n_rounds)
    if comm.rank == 0:
        booster.save_model(f"{out_dir}/{name}.json")
