"""Rank script: train on sparse data (tests/mpi/sparse_data.py) sharded by rows
(CSR slices) or, with mode "blocks", by columns; rank 0 writes the model, the
store's summary and the bytes sent.

argv: K, out_dir, params_json, n_rounds, mode ("rows", "blocks", or "constant":
rows, with feature 0 constant on rank 1)
"""

import json
import sys

import numpy as np
from shard_data import shard_bounds
from sparse_data import make_sparse_data, store_summary

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
X, y = make_sparse_data()
if mode == "blocks":
    columns = np.arange(X.shape[1])[np.arange(X.shape[1]) % k == comm.rank]
    train_set = dgbdt.Dataset(X[:, columns], y, feature_indices=columns)
elif params["tree_learner"] == "feature":
    train_set = dgbdt.Dataset(X, y)
else:
    lo, hi = shard_bounds(X.shape[0], k)[comm.rank]
    X = X[lo:hi]
    if mode == "constant" and comm.rank == 1:  # feature 0 cannot split on this rank
        X = X.toarray()
        X[:, 0] = 0.5
    train_set = dgbdt.Dataset(X, y[lo:hi])
booster = dgbdt.train(params, train_set, n_rounds)
summaries = comm.gather_bytes(json.dumps(store_summary(train_set.store)).encode())
if comm.rank == 0:
    booster.save_model(f"{out_dir}/model.json")
    with open(f"{out_dir}/result.json", "w") as fh:
        json.dump(
            {
                "stores": [json.loads(s) for s in summaries],
                "comm": booster.comm_stats(),
            },
            fh,
        )
