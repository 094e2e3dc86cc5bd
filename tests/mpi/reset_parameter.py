"""Rank script: data-parallel training with a reset_parameter schedule (rank 0
writes the model, and the collectives' counts with and without a schedule),
then with a schedule that depends on the rank: every rank must raise the same
error, which each rank writes to ``error_<rank>.txt``.

argv: K, out_dir, params_json, n_rounds
"""

import json
import sys
import time

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
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
X, y, _, _ = make_data()
lo, hi = shard_bounds(len(y), k)[comm.rank]
if params["tree_learner"] == "feature":  # replicated rows: every rank holds them all
    lo, hi = 0, len(y)


def shard():
    return dgbdt.Dataset(X[lo:hi], y[lo:hi])


def schedule():
    return dgbdt.reset_parameter(
        learning_rate=[0.3 * 0.8**i for i in range(n_rounds)],
        lambda_l2=lambda i: float(i % 3),
        num_leaves=lambda i: 15 if i < 2 else 7,
        bagging_fraction=lambda i: 1.0 - 0.05 * i,
    )


booster = dgbdt.train(params, shard(), n_rounds, callbacks=[schedule()])
# the same params without and with a schedule that changes nothing: the
# difference is the agreement's collectives alone
plain = dgbdt.train(params, shard(), n_rounds).comm_stats()
constant = dgbdt.train(
    params, shard(), n_rounds, callbacks=[dgbdt.reset_parameter(lambda_l2=[0.0] * n_rounds)]
).comm_stats()
if comm.rank == 0:
    booster.save_model(f"{out_dir}/model.json")
    with open(f"{out_dir}/stats.json", "w") as fh:
        json.dump({"plain": plain, "constant": constant}, fh)

rank_dependent = dgbdt.reset_parameter(
    learning_rate=lambda i: 0.1 if i < 2 else 0.1 * (1 + comm.rank)
)
start = time.monotonic()
try:
    dgbdt.train(params, shard(), n_rounds, callbacks=[rank_dependent])
    message = "no error"
except ValueError as exc:
    message = str(exc)
with open(f"{out_dir}/error_{comm.rank}.txt", "w") as fh:
    fh.write(f"{time.monotonic() - start:.3f}\n{message}")

# a schedule on rank 0 only: refused by every rank at the start, not a hang
start = time.monotonic()
try:
    only0 = [dgbdt.reset_parameter(learning_rate=[0.1] * n_rounds)] if comm.rank == 0 else []
    dgbdt.train(params, shard(), n_rounds, callbacks=only0)
    message = "no error"
except ValueError as exc:
    message = str(exc)
with open(f"{out_dir}/only0_{comm.rank}.txt", "w") as fh:
    fh.write(f"{time.monotonic() - start:.3f}\n{message}")
