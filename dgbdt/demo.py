"""The demo job: train on generated HIGGS-like data and report what it did.

``python -m dgbdt demo`` (the README's first command).  Single-process for
now; it runs distributed under ``mpiexec -n 2`` once the MPI learners exist.
"""
import argparse
import os
import tempfile
import time

import numpy as np

from . import Booster, Dataset, log_evaluation, train
from .datasets import make_higgs_like
from .metrics import get_metric


def run_demo(argv=None):
    parser = argparse.ArgumentParser(prog="dgbdt demo", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="training rows (default 200000)")
    parser.add_argument("--rounds", type=int, default=100, help="boosting rounds (default 100)")
    parser.add_argument("--leaves", type=int, default=63, help="num_leaves (default 63)")
    args = parser.parse_args(argv)

    X, y = make_higgs_like(args.rows, seed=1)
    X_test, y_test = make_higgs_like(args.rows // 4, seed=2)
    params = {"objective": "binary", "num_leaves": args.leaves, "learning_rate": 0.1,
              "metric": ["binary_logloss", "auc"], "verbosity": -1}
    print(f"dgbdt demo: {args.rows} x {X.shape[1]} training rows (HIGGS-like), "
          f"{len(y_test)} test rows, {args.rounds} rounds, {args.leaves} leaves")
    t0 = time.perf_counter()
    train_set = Dataset(X, y)
    booster = train(params, train_set, args.rounds,
                    valid_sets=[Dataset(X_test, y_test, reference=train_set)], valid_names=["test"],
                    callbacks=[log_evaluation(max(1, args.rounds // 10))])
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    proba = booster.predict(X_test)
    predict_s = time.perf_counter() - t0
    auc = get_metric("auc").compute(y_test, proba)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.json")
        booster.save_model(path)
        size = os.path.getsize(path)
        same = np.array_equal(Booster(model_file=path).predict(X_test), proba)
    print(f"fit {fit_s:.2f} s (first run includes JIT compilation), predict {predict_s:.2f} s")
    print(f"test AUC {auc:.4f}; model file {size / 1e6:.2f} MB, reloaded model predicts "
          f"{'identically' if same else 'DIFFERENTLY'}")
    return 0 if same else 1
