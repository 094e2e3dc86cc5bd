"""Rank script: a Dataset the user binned (ds.construct()) before row-sharded training.

Its bins were found on this rank's rows alone and its rows do not know their
global index: freed raw data must be refused on every rank; kept raw data is
re-binned over all ranks and trains the model of a fresh Dataset.

argv: K, out_dir, freed|kept
"""

import json
import sys

from shard_data import make_data, shard_bounds

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out_dir, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
X, y, _, _ = make_data()
lo, hi = shard_bounds(len(y), k)[comm.rank]
params = {
    "objective": "binary",
    "num_leaves": 15,
    "verbosity": -1,
    "tree_learner": "data",
    "use_quantized_grad": True,
    "bagging_fraction": 0.7,
    "bagging_freq": 1,
}
binned = dgbdt.Dataset(X[lo:hi], y[lo:hi], free_raw_data=mode == "freed")
binned.construct(params)
model = dgbdt.train(params, binned, 3).model_to_string()  # "freed": every rank fails here
fresh = dgbdt.train(params, dgbdt.Dataset(X[lo:hi], y[lo:hi]), 3).model_to_string()
if comm.rank == 0:
    with open(f"{out_dir}/result.json", "w") as fh:
        json.dump({"same_model": model == fresh}, fh)
