"""Rank script: each constraint case on every distributed learner; rank 0 writes
the models.  argv: K, out_dir, n_rounds.  Rows are sharded unequally (one shard
empty for K >= 3) for data and voting; feature-parallel replicates them."""

import json
import pathlib
import sys

from constraint_cases import CASES, case_params, sweep_data
from shard_data import shard_bounds

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out_dir, n_rounds = int(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
X, y = sweep_data()
lo, hi = shard_bounds(len(y), k)[comm.rank]
out = {}
for name in CASES:
    for learner in ("data", "voting", "feature"):
        rows = slice(None) if learner == "feature" else slice(lo, hi)
        params = case_params(name, learner)
        if learner == "voting":
            params["top_k"] = 3
        booster = dgbdt.train(params, dgbdt.Dataset(X[rows], y[rows]), n_rounds)
        out[f"{name}-{learner}"] = booster.model_to_string(format="json")
if comm.rank == 0:
    (out_dir / "constraints.json").write_text(json.dumps(out))
