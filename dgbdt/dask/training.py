"""``dgbdt.dask.train``: ``dgbdt.train`` on a Dask collection."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from distributed import default_client

from ..booster import Booster
from .driver import plan_training, run
from .jobs import train_job


def train(
    client: Any,
    params: dict[str, Any],
    data: Any,
    label: Any = None,
    *,
    weight: Any = None,
    group: Any = None,
    init_score: Any = None,
    valid_sets: Sequence[tuple[Any, ...]] | None = None,
    valid_names: Sequence[str] | None = None,
    num_boost_round: int = 100,
    feval: Any = None,
    init_model: Any = None,
    callbacks: Sequence[Callable] | None = None,
    max_restarts: int = 2,
) -> Booster:
    """``dgbdt.train`` on a Dask collection, each worker training on the partitions
    it holds (``client=None``: the default client).

    ``data`` is a dask Array or DataFrame; ``label``, ``weight``, ``init_score``
    dask collections with the same partitions; ``group`` (ranking) a dask
    array with one chunk of query sizes per partition.  ``valid_sets``: tuples
    ``(data, label[, weight[, group[, init_score]]])`` of dask collections.
    ``params["snapshot_freq"] = k`` keeps a snapshot every k rounds on every
    worker: a lost worker then costs a restart from the newest one, at most
    ``max_restarts`` times, and the model is the uninterrupted one's.
    """
    client = client if client is not None else default_client()
    evals = [tuple(v) + (None,) * (5 - len(v)) for v in (valid_sets or [])]
    eval_fields = [(v[0], v[1], v[2], v[3], v[4]) for v in evals]
    plan, rank_params = plan_training(
        client,
        train_job,
        params,
        (data, label, weight, group, init_score),
        eval_fields,
        max_restarts,
    )
    names = list(valid_names) if valid_names is not None else None
    plan.job = functools.partial(
        train_job,
        training=plan.training,
        params=rank_params,
        num_boost_round=num_boost_round,
        valid_names=names,
        feval=feval,
        init_model=init_model,
        callbacks=list(callbacks or []),
        snapshot_freq=plan.snapshot_freq,
        training_at=plan.training_at,
    )
    booster: Booster = run(client, plan)
    return booster
