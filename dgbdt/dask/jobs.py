"""What a rank's process runs: one training on its partitions, the group
installed as its MPI world (pure of Dask: it runs in the rank's own process).

A partition is a tuple (data, label, weight, group, init score); a rank's
partitions are stacked in partition order.  With ``snapshot_freq`` every rank
writes the model to its own machine's disk every ``snapshot_freq`` rounds, so
a snapshot survives the loss of any worker; the front end resumes from the
newest one it can still reach.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..data.dataset import Dataset
from ..engine import train

#: A partition: (data, label, weight, group sizes, init score); None where absent.
Part = tuple[Any, Any, Any, Any, Any]


def stack(pieces: Sequence[Any]) -> Any:
    """The pieces of one field, stacked in order (None when absent)."""
    if not pieces or pieces[0] is None:
        return None
    first = pieces[0]
    if len(pieces) == 1:
        return first
    if hasattr(first, "iloc"):
        import pandas as pd  # noqa: PLC0415 - only for DataFrame partitions (a rank's start)

        return pd.concat(list(pieces), axis=0)
    if hasattr(first, "tocsr"):
        import scipy.sparse as sp  # noqa: PLC0415 - only for sparse partitions

        return sp.vstack(list(pieces), format="csr")
    return np.concatenate([np.asarray(p) for p in pieces], axis=0)


def stack_parts(parts: Sequence[Part]) -> list[Any]:
    """[data, label, weight, group, init score] of ``parts`` stacked."""
    return [stack([p[field] for p in parts]) for field in range(5)]


def snapshot_folder(training: str, rank: int) -> str:
    """Where rank ``rank`` of ``training`` keeps its snapshots on its machine."""
    return os.path.join(tempfile.gettempdir(), f"dgbdt-snapshots-{training}", f"rank{rank}")


class RankSnapshots:
    """Every rank writes the model every ``freq`` rounds of this training to
    ``folder/round_<done>`` (atomically): rounds count from the training's
    start, resumed attempts included (``base``: the init model's iterations)."""

    def __init__(self, folder: str, freq: int, base: int | None) -> None:
        self.order, self.before_iteration = 26, False  # after dgbdt.checkpoint
        self.folder, self.freq, self.base = folder, freq, base

    def begin_training(self, env: Any) -> None:
        if self.base is None:  # the first attempt: the init model's iterations
            self.base = env.begin_iteration

    def __call__(self, env: Any) -> None:
        assert self.base is not None
        done = env.iteration + 1 - self.base
        if self.freq > 0 and done % self.freq == 0:
            os.makedirs(os.path.dirname(self.folder), mode=0o700, exist_ok=True)
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            path = os.path.join(self.folder, f"round_{done:09d}")
            with open(path + ".tmp", "w", encoding="utf-8") as out:
                out.write(f"{self.base}\n" + env.model.model_to_string(num_iteration=-1))
            os.replace(path + ".tmp", path)


def latest_snapshot(training: str) -> tuple[int, int, str] | None:
    """(rounds done, init model iterations, model text) of the newest snapshot
    of ``training`` on this machine, or None (run on the workers by the front end)."""
    root = os.path.dirname(snapshot_folder(training, 0))
    best: tuple[int, str] | None = None
    for folder, _, files in os.walk(root):
        for name in files:
            if name.startswith("round_") and not name.endswith(".tmp"):
                done = int(name.removeprefix("round_"))
                if best is None or done > best[0]:
                    best = (done, os.path.join(folder, name))
    if best is None:
        return None
    with open(best[1], encoding="utf-8") as source:
        base, text = source.read().split("\n", 1)
    return best[0], int(base), text


def remove_snapshots(training: str) -> None:
    shutil.rmtree(os.path.dirname(snapshot_folder(training, 0)), ignore_errors=True)


def _init_model(resume: tuple[str, int, int] | None, given: Any, folder: str) -> Any:
    """The model to go on from: the snapshot (written to a file) or the user's."""
    if resume is None:
        return given
    path = os.path.join(folder, "resume.txt")
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write(resume[0])
    return path


def _callbacks(
    callbacks: Sequence[Callable] | None,
    training: str,
    rank: int,
    freq: int,
    resume: tuple[str, int, int] | None,
) -> list[Callable]:
    out = list(callbacks or [])
    if freq > 0:
        base = None if resume is None else resume[2]
        out.append(RankSnapshots(snapshot_folder(training, rank), freq, base))
    return out


def with_training(
    evals: Sequence[Sequence[Part]], training_at: Sequence[int], training: Any
) -> list[Any]:
    """Each validation set's stacked fields, with ``training`` (the training set
    itself) at the positions where the user gave the training collections."""
    out: list[Any] = []
    others = iter(evals)
    for i in range(len(evals) + len(training_at)):
        out.append(training if i in training_at else stack_parts(next(others)))
    return out


def train_job(
    parts: Sequence[Part],
    evals: Sequence[Sequence[Part]],
    comm: Any,
    resume: tuple[str, int, int] | None,
    *,
    training: str,
    params: dict[str, Any],
    num_boost_round: int,
    valid_names: Sequence[str] | None,
    feval: Any,
    init_model: Any,
    callbacks: Sequence[Callable] | None,
    snapshot_freq: int,
    training_at: Sequence[int] = (),
) -> Any:
    """``dgbdt.train`` on this rank's rows (and its share of each validation set;
    the training set itself where ``training_at`` says)."""
    X, y, w, g, s = stack_parts(parts)
    train_set = Dataset(X, y, weight=w, group=g, init_score=s, params=params)
    valid = [
        v
        if v is train_set
        else Dataset(
            v[0], v[1], weight=v[2], group=v[3], init_score=v[4], reference=train_set, params=params
        )
        for v in with_training(evals, training_at, train_set)
    ]
    done = 0 if resume is None else resume[1]
    folder = snapshot_folder(training, comm.rank)
    return train(
        params,
        train_set,
        num_boost_round=num_boost_round - done,
        valid_sets=valid or None,
        valid_names=valid_names,
        feval=feval,
        init_model=_init_model(resume, init_model, folder),
        callbacks=_callbacks(callbacks, training, comm.rank, snapshot_freq, resume),
    )


def fit_job(
    parts: Sequence[Part],
    evals: Sequence[Sequence[Part]],
    comm: Any,
    resume: tuple[str, int, int] | None,
    *,
    training: str,
    estimator: Any,
    fit_kwargs: dict[str, Any],
    snapshot_freq: int,
    training_at: Sequence[int] = (),
) -> Any:
    """A scikit-learn estimator's ``fit`` on this rank's rows (rank 0's fitted
    estimator is the result); the eval sets at ``training_at`` are (X, y) itself."""
    X, y, w, g, s = stack_parts(parts)
    kwargs = dict(fit_kwargs)
    if g is not None:
        kwargs["group"] = g
    stacked = with_training(evals, training_at, [X, y, None, g, None])
    if stacked:
        kwargs["eval_X"] = tuple(e[0] for e in stacked)
        kwargs["eval_y"] = tuple(e[1] for e in stacked)
        kwargs["eval_sample_weight"] = [e[2] for e in stacked]
        kwargs["eval_init_score"] = [e[4] for e in stacked]
        if g is not None:
            kwargs["eval_group"] = [e[3] for e in stacked]
    done = 0 if resume is None else resume[1]
    folder = snapshot_folder(training, comm.rank)
    if resume is not None:
        estimator.set_params(n_estimators=estimator.n_estimators - done)
    kwargs["init_model"] = _init_model(resume, kwargs.get("init_model"), folder)
    kwargs["callbacks"] = _callbacks(
        kwargs.get("callbacks"), training, comm.rank, snapshot_freq, resume
    )
    return estimator.fit(X, y, sample_weight=w, init_score=s, **kwargs)
