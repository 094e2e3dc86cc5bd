"""Rank script: every objective, data-parallel on unequal row shards (one empty
for K >= 3), float and quantized; rank 0 writes each model and its metrics.

argv: K, out_dir, n_rounds.  The objectives, their labels and params come
from objective_cases.py (shared with the test, which trains the same in one
process).
"""

import json
import pathlib
import sys
import warnings

from objective_cases import CASES, case_data, case_params
from shard_data import shard_bounds

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out_dir, n_rounds = int(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
out = {}
for name in CASES:
    X, y, w, Xv, yv = case_data(name)
    lo, hi = shard_bounds(len(y), k)[comm.rank]
    for quantized in (False, True):
        params = {**case_params(name, quantized), "tree_learner": "data"}
        train = dgbdt.Dataset(X[lo:hi], y[lo:hi], weight=w[lo:hi])
        valid = dgbdt.Dataset(Xv, yv, reference=train)  # every rank: the whole set
        evals = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            booster = dgbdt.train(
                params,
                train,
                n_rounds,
                valid_sets=[valid],
                valid_names=["valid"],
                callbacks=[dgbdt.record_evaluation(evals)],
            )
        out[f"{name}-{int(quantized)}"] = {
            "model": booster.model_to_string(format="json"),
            "evals": evals,
        }
if comm.rank == 0:
    (out_dir / "objectives.json").write_text(json.dumps(out))
