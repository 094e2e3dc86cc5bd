"""Rank script: voting-parallel on a 40-category column (every feature fits
the election) over unequal row shards; rank 0 writes each case's model.

argv: K, out_json, cases_json ({name: params}), n_rounds
"""

import json
import sys

from categorical_data import CATEGORICAL, make_categorical_data

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out, cases, n_rounds = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
X, y = make_categorical_data(1500)
# uneven shards: 900/600 on 2 ranks, 600/500/400 on 3
cuts = {2: [0, 900, 1500], 3: [0, 600, 1100, 1500]}[k]
lo, hi = cuts[comm.rank], cuts[comm.rank + 1]
models = {}
for name, params in cases.items():
    train_set = dgbdt.Dataset(X[lo:hi], y[lo:hi], categorical_feature=CATEGORICAL)
    models[name] = dgbdt.train(params, train_set, n_rounds).model_to_string()
if comm.rank == 0:
    with open(out, "w") as fh:
        json.dump(models, fh)
