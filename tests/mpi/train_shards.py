"""Rank script: train on this rank's row shard; rank 0 writes the model and metrics.

argv: K, out_dir, params_json, n_rounds
"""

import hashlib
import json
import os
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
if os.environ.get("DGBDT_TEST_PAIRS_ABOVE"):  # quantized leaves held as pairs
    from force_pairs import force_pairs

    force_pairs(int(os.environ["DGBDT_TEST_PAIRS_ABOVE"]))
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
X, y, X_valid, y_valid = make_data()
lo, hi = shard_bounds(len(y), k)[comm.rank]
vlo, vhi = shard_bounds(len(y_valid), k)[comm.rank]
if params["tree_learner"] == "feature":  # replicated data: every rank holds everything
    lo, hi, vlo, vhi = 0, len(y), 0, len(y_valid)
train_set = dgbdt.Dataset(X[lo:hi], y[lo:hi])
valid_set = dgbdt.Dataset(X_valid[vlo:vhi], y_valid[vlo:vhi], reference=train_set)
evals = {}
booster = dgbdt.train(
    params,
    train_set,
    n_rounds,
    valid_sets=[valid_set],
    valid_names=["valid"],
    callbacks=[dgbdt.record_evaluation(evals), dgbdt.log_evaluation(1)],
)
digest = hashlib.sha256(booster.model_to_string().encode()).digest()
digests = comm.allgather(np.frombuffer(digest, dtype=np.uint8))
if comm.rank == 0:
    booster.save_model(f"{out_dir}/model.json")
    with open(f"{out_dir}/result.json", "w") as fh:
        json.dump(
            {
                "evals": evals,
                "same_model_on_all_ranks": bool(np.all(digests == digests[0])),
                "comm": booster.comm_stats(),
            },
            fh,
        )
