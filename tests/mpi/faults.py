"""Rank script: one rank misbehaves in a given way; every rank must end fast.

argv: K, case, out_dir.  Training uses time_out=0.1 minutes (6 s), so a rank
left waiting in a collective ends the job with a message naming it.  The
model is written to out_dir/model.json by rank 0 only when training ends.
"""

import os
import signal
import sys
import time

case, out_dir = sys.argv[2], sys.argv[3]
if case == "raise_before_dgbdt":
    from mpi4py import MPI

    import dgbdt  # installs the abort hook under mpiexec

    if MPI.COMM_WORLD.Get_rank() == 2:
        raise RuntimeError("rank script failed before any dgbdt call")
    MPI.COMM_WORLD.Barrier()  # the others wait here: the hook must abort them

if case == "raise_before_mpi":
    import dgbdt  # the abort hook, then an error before the world exists

    if os.environ.get("PMI_RANK") == "2":
        raise RuntimeError("rank script failed before starting MPI")

from shard_data import make_data, shard_bounds  # noqa: E402

import dgbdt  # noqa: E402
from dgbdt.distributed.comm import world_comm  # noqa: E402

if case == "estimator_rank_away":
    # the estimator's time_out bounds MPI_Init too: rank 2 never starts MPI
    if os.environ.get("PMI_RANK") == "2":
        sys.exit(0)
    X, y, _, _ = make_data()
    with open(os.path.join(out_dir, "train_time"), "w") as fh:
        fh.write(repr(time.time()))
    dgbdt.DGBDTClassifier(tree_learner="data", time_out=0.1, n_estimators=5, verbose=-1).fit(X, y)
    sys.exit(0)

k = int(sys.argv[1])
comm = world_comm()
assert comm.size == k
last = comm.rank == k - 1
X, y, _, _ = make_data()
lo, hi = shard_bounds(len(y), k)[comm.rank]
params = {
    "objective": "binary",
    "tree_learner": "data",
    "verbosity": -1,
    "time_out": 0.1,
    "num_leaves": 7,
}
kwargs = {}


def at_iteration_5(action):
    def callback(env):
        if env.iteration == 5 and last:
            with open(os.path.join(out_dir, "fault_time"), "w") as fh:
                fh.write(repr(time.time()))  # the test times the job's end from here
            action()

    return callback


if case == "sys_exit_in_callback":
    kwargs["callbacks"] = [at_iteration_5(lambda: sys.exit(3))]
elif case == "sigstop":
    kwargs["callbacks"] = [at_iteration_5(lambda: os.kill(os.getpid(), signal.SIGSTOP))]
elif case == "sigkill":
    kwargs["callbacks"] = [at_iteration_5(lambda: os.kill(os.getpid(), signal.SIGKILL))]
elif case == "sigterm":
    kwargs["callbacks"] = [at_iteration_5(lambda: os.kill(os.getpid(), signal.SIGTERM))]
elif case == "exception_in_callback":

    def fail():
        raise RuntimeError("callback failed on the last rank")

    kwargs["callbacks"] = [at_iteration_5(fail)]
elif case == "exit_without_train" and last:
    sys.exit(0)
elif case == "serial_on_one_rank" and last:
    params["tree_learner"] = "serial"
elif case == "feval_on_rank0" and comm.rank == 0:
    kwargs["feval"] = lambda preds, data: ("zero", 0.0, False)
elif case == "fobj_on_one_rank" and last:
    params["objective"] = lambda preds, data: (preds - data.label, preds * 0 + 1)
elif case == "dataset_params_on_one_rank" and last:
    kwargs["dataset_params"] = {"max_bin": 15}
elif case == "valid_sets_on_one_rank" and last:
    kwargs["valid_sets"] = "own"
elif case == "valid_names_differ":
    kwargs["valid_sets"] = "own"
    kwargs["valid_names"] = ["eval_b" if last else "eval_a"]
elif case == "bad_param_on_one_rank" and last:
    params["num_leaves"] = "many"  # refused before any collective
elif case == "init_model_on_one_rank":
    kwargs["init_model"] = "train_first"  # every rank trains it (same time), one passes it
elif case == "init_model_differs":
    kwargs["init_model"] = "train_own"  # the last rank's has one more tree
elif case == "feature_names_differ" and last:
    kwargs["feature_name"] = [f"f{j}" for j in reversed(range(X.shape[1]))]
elif case == "per_process_params_differ":  # legitimate: the job trains
    params.update(
        num_threads=1 + comm.rank % 2, verbosity=-1 - comm.rank, time_out=0.2 + 0.1 * comm.rank
    )

train_set = dgbdt.Dataset(
    X[lo:hi],
    y[lo:hi],
    params=kwargs.pop("dataset_params", None),
    feature_name=kwargs.pop("feature_name", "auto"),
)
if kwargs.get("valid_sets") == "own":
    kwargs["valid_sets"] = [dgbdt.Dataset(X[lo:hi], y[lo:hi], reference=train_set)]
if kwargs.get("init_model") == "train_first":
    init = dgbdt.train({**params, "tree_learner": "serial"}, dgbdt.Dataset(X, y), 2)
    kwargs["init_model"] = init if last else None
elif kwargs.get("init_model") == "train_own":
    kwargs["init_model"] = dgbdt.train(
        {**params, "tree_learner": "serial"}, dgbdt.Dataset(X, y), 3 if last else 2
    )
if comm.rank == 0:
    with open(os.path.join(out_dir, "train_time"), "w") as fh:
        fh.write(repr(time.time()))  # cases without a fault are timed from here
booster = dgbdt.train(params, train_set, 30, **kwargs)
if comm.rank == 0:
    booster.save_model(os.path.join(out_dir, "model.json"))
print(f"rank {comm.rank} finished", flush=True)
