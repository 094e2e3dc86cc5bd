"""Rank script: unbiased lambdarank with Dataset(position=...) on the last rank
only; every rank must refuse at once, naming the position and the ranks (the
position's collectives ran on that rank only: the job waited for its deadline).

argv: K
"""

import sys

import numpy as np

import dgbdt
from dgbdt.distributed.comm import world_comm

k = int(sys.argv[1])
comm = world_comm()
assert comm.size == k
rng = np.random.default_rng(comm.rank)
n, size = 120, 10  # 12 queries of 10 rows on each rank
X = rng.normal(size=(n, 3))
y = rng.integers(0, 3, n).astype(float)
position = np.tile(np.arange(size), n // size) if comm.rank == k - 1 else None
params = {"objective": "lambdarank", "tree_learner": "data", "verbosity": -1}
data = dgbdt.Dataset(X, label=y, group=[size] * (n // size), position=position)
dgbdt.train(params, data, 3)
print("finished", flush=True)
