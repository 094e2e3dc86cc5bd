"""Rank script: the ranking cases of rank_cases.py on K ranks, each rank with
whole queries of the training and the validation set (unequal shards, one
empty for K >= 3); rank 0 writes each model and its metrics.

argv: K, out_dir, n_rounds.
"""

import json
import pathlib
import sys
import warnings

from rank_cases import CASES, case_datasets, case_params, queries_seen

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out_dir, n_rounds = int(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
out = {}
for name in CASES:
    params = case_params(name)
    # feature-parallel: every rank holds every row
    train, valid = case_datasets(name, *((0, 1) if name == "feature" else (comm.rank, k)))
    params.setdefault("tree_learner", "data")
    evals = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        booster = dgbdt.train(
            params, train, n_rounds, valid_sets=[valid], valid_names=["valid"], feval=queries_seen,
            callbacks=[dgbdt.record_evaluation(evals)],
        )  # fmt: skip
    out[name] = {"model": booster.model_to_string(format="json"), "evals": evals}
if comm.rank == 0:
    (out_dir / "ranking.json").write_text(json.dumps(out))
