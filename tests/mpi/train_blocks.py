"""Rank script: feature-parallel "by dimension": each rank holds all rows of
its own block of columns; rank 0 writes the model and metrics.

argv: K, out_dir, params_json, n_rounds
"""

import json
import sys

import numpy as np
from shard_data import make_data

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out_dir, params, n_rounds = (
    int(sys.argv[1]),
    sys.argv[2],
    json.loads(sys.argv[3]),
    int(sys.argv[4]),
)
comm = world_comm()
assert comm.size == k
X, y, X_valid, y_valid = make_data()
columns = np.arange(X.shape[1])[np.arange(X.shape[1]) % k == comm.rank]  # interleaved blocks
train_set = dgbdt.Dataset(X[:, columns], y, feature_indices=columns)
valid_set = dgbdt.Dataset(
    X_valid[:, columns], y_valid, reference=train_set, feature_indices=columns
)
evals = {}
booster = dgbdt.train(
    params,
    train_set,
    n_rounds,
    valid_sets=[valid_set],
    valid_names=["valid"],
    callbacks=[dgbdt.record_evaluation(evals)],
)
if comm.rank == 0:
    booster.save_model(f"{out_dir}/model.json")
    with open(f"{out_dir}/result.json", "w") as fh:
        json.dump(
            {"evals": evals, "comm": booster.comm_stats(), "n_features": booster.num_feature()}, fh
        )
