"""Rank script: the training a Dask test ran, under mpiexec on the same shards.

argv: K, folder   (folder: X.npy, y.npy, runs.json (rank r's rows: [start, end)),
                   params.json, rounds.txt; rank 0 writes model.txt)
"""

import json
import os
import sys

import numpy as np

import dgbdt
from dgbdt.distributed.comm import world_comm

k, folder = int(sys.argv[1]), sys.argv[2]
comm = world_comm()
assert comm.size == k
start, end = json.load(open(os.path.join(folder, "runs.json")))[comm.rank]
X = np.load(os.path.join(folder, "X.npy"))[start:end]
y = np.load(os.path.join(folder, "y.npy"))[start:end]
params = json.load(open(os.path.join(folder, "params.json")))
rounds = int(open(os.path.join(folder, "rounds.txt")).read())
booster = dgbdt.train(params, dgbdt.Dataset(X, y), rounds)
if comm.rank == 0:
    booster.save_model(os.path.join(folder, "model.txt"))
print("finished", flush=True)
