"""Rank script: data-parallel training on this rank's row shard with GOSS or
balanced bagging, recording every round's bag (global rows) and the bag's
gradients and hessians after sampling; rank 0 writes the model and the
records of every rank, concatenated in rank order (= global row order).

argv: K, out_dir, params_json, n_rounds
"""

import json
import sys

import numpy as np
from shard_data import make_data, shard_bounds

import dgbdt
from dgbdt.boosting.sampling import Sampler
from dgbdt.distributed.comm import world_comm

k, out_dir, params, n_rounds = (
    int(sys.argv[1]),
    sys.argv[2],
    json.loads(sys.argv[3]),
    int(sys.argv[4]),
)
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
X, y, _, _ = make_data()
lo, hi = shard_bounds(len(y), k)[comm.rank]

records = []  # per round: (global bag rows, gradients of the bag, hessians of the bag)
start_round = Sampler.start_round


def recording_start_round(self, it, first_iter, gradients=None, hessians=None):
    start_round(self, it, first_iter, gradients, hessians)
    bag = self.bag
    records.append((bag.astype(np.int64) + self.row_offset, gradients[:, bag], hessians[:, bag]))


Sampler.start_round = recording_start_round
booster = dgbdt.train(params, dgbdt.Dataset(X[lo:hi], y[lo:hi]), n_rounds)
rows, grads, hess = [], [], []
for bag, g, h in records:  # every rank has the same number of rounds
    rows.append(comm.concat(bag, dtype=np.int64))
    grads.append(comm.concat(g.T, dtype=np.float32))
    hess.append(comm.concat(h.T, dtype=np.float32))
if comm.rank == 0:
    booster.save_model(f"{out_dir}/model.json")
    np.savez(
        f"{out_dir}/bags.npz",
        **{f"rows{i}": r for i, r in enumerate(rows)},
        **{f"grad{i}": g for i, g in enumerate(grads)},
        **{f"hess{i}": h for i, h in enumerate(hess)},
    )
