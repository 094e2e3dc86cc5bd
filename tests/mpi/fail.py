"""Rank script: one rank fails in a given way; every rank must end quickly.

argv: K, mode   (mode: callback | bad_label | before_train | params)
"""

import sys
import time

from shard_data import make_data, shard_bounds

import dgbdt
from dgbdt.distributed.comm import world_comm

k, mode = int(sys.argv[1]), sys.argv[2]
comm = world_comm()
assert comm.size == k
X, y, _, _ = make_data()
lo, hi = shard_bounds(len(y), k)[comm.rank]
y = y[lo:hi].copy()
if mode == "bad_label" and comm.rank == k - 1:
    y[0] = 0.5
if mode == "before_train" and comm.rank == k - 1:
    raise RuntimeError("rank script failed before training")


def fail_on_last_rank(env):
    if env.iteration == 2 and comm.rank == k - 1:
        raise RuntimeError("callback failed on the last rank")


callbacks = [fail_on_last_rank] if mode == "callback" else []
params = {"objective": "binary", "tree_learner": "data", "verbosity": -1}
if mode == "params" and comm.rank == k - 1:
    params["num_leaves"] = 7
dgbdt.train(params, dgbdt.Dataset(X[lo:hi], y), 50, callbacks=callbacks)
time.sleep(60)  # a rank that got here while another failed would hang the test
