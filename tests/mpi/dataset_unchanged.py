"""Rank script: train on 2 ranks where only rank 0 has weights and only rank 1 an
init score; each rank writes whether its Dataset's label, weight, init_score and
params (and train's params) are what they were before training.

argv: K, out_dir
"""

import copy
import json
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
init_score = np.full(hi - lo, 0.25) if comm.rank == 1 else None
ds = dgbdt.Dataset(X[lo:hi], y[lo:hi], weight=weight, init_score=init_score, params={"max_bin": 63})
before = {
    "label": ds.label.copy(),
    "weight": None if ds.weight is None else ds.weight.copy(),
    "init_score": None if ds.init_score is None else ds.init_score.copy(),
}
ds_params = copy.deepcopy(ds.params)
params = {"objective": "regression_l1", "num_leaves": 7, "verbosity": -1, "tree_learner": "data"}
train_params = copy.deepcopy(params)
dgbdt.train(params, ds, 3)


def same(a, b):
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


result = {
    "label": same(ds.label, before["label"]),
    "weight": same(ds.weight, before["weight"]),
    "init_score": same(ds.init_score, before["init_score"]),
    "dataset_params": ds.params == ds_params,
    "train_params": params == train_params,
}
with open(f"{out_dir}/unchanged_{comm.rank}.json", "w") as fh:
    json.dump(result, fh)
