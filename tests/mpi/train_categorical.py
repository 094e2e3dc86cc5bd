"""Rank script: train on categorical data (tests/mpi/categorical_data.py)
sharded by rows, by columns ("blocks"), or as DataFrames whose category lists
are ordered differently on every rank ("frame"); rank 0 writes the model.

argv: K, out_dir, params_json, n_rounds, mode ("rows", "blocks", "frame")
"""

import json
import sys

import numpy as np
from categorical_data import CATEGORICAL, as_frame, make_categorical_data
from shard_data import shard_bounds

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out_dir, params, n_rounds, mode = (
    int(sys.argv[1]),
    sys.argv[2],
    json.loads(sys.argv[3]),
    int(sys.argv[4]),
    sys.argv[5],
)
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
X, y = make_categorical_data()
if mode == "blocks":
    columns = np.arange(X.shape[1])[np.arange(X.shape[1]) % k == comm.rank]
    train_set = dgbdt.Dataset(
        X[:, columns], y, feature_indices=columns, categorical_feature=CATEGORICAL
    )
elif params["tree_learner"] == "feature":
    train_set = dgbdt.Dataset(X, y, categorical_feature=CATEGORICAL)
else:
    lo, hi = shard_bounds(X.shape[0], k)[comm.rank]
    if mode == "frame":  # each rank lists its categories in its own order
        train_set = dgbdt.Dataset(as_frame(X[lo:hi], order_seed=comm.rank), y[lo:hi])
    else:
        train_set = dgbdt.Dataset(X[lo:hi], y[lo:hi], categorical_feature=CATEGORICAL)
booster = dgbdt.train(params, train_set, n_rounds)
if comm.rank == 0:
    booster.save_model(f"{out_dir}/model.json")
