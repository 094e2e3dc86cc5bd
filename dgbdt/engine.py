"""``dgbdt.train``: one training from start to end (the setup and teardown
are dgbdt.boosting.training's): the run started, every rank checked to call train()
alike (dgbdt.boosting.consistency), the boosting loop set up and run, the model
checked to be the same on every rank."""

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .booster import Booster, training_params
from .boosting.consistency import agree_on_inputs, check_same_model
from .boosting.training import (
    call_params,
    check_rounds,
    from_lightgbm_object,
    setup_loop,
    start_run,
    training_context,
)
from .data.dataset import Dataset


def train(
    params: Mapping[str, Any],
    train_set: Dataset,
    num_boost_round: int = 100,
    valid_sets: Dataset | Sequence[Dataset] | None = None,
    valid_names: str | Sequence[str] | None = None,
    feval: Callable | Sequence[Callable] | None = None,
    init_model: str | os.PathLike | Booster | None = None,
    keep_training_booster: bool = False,
    callbacks: Sequence[Callable] | None = None,
) -> Booster:
    """Train a gradient-boosted tree model (LightGBM's ``train`` signature and order).

    ``num_iterations`` (or an alias) in ``params`` overrides ``num_boost_round``.
    ``params["objective"]`` may be a callable ``fobj(preds, train_data) -> (grad, hess)``;
    ``feval(preds, eval_data) -> (name, value, is_higher_better)`` or a list of them.
    ``keep_training_booster=True`` returns a Booster that keeps its training
    state, as LightGBM's: :meth:`Booster.update` continues it,
    :meth:`Booster.rollback_one_iter` takes iterations off its scores, and
    :meth:`Booster.eval_valid` evaluates ``valid_sets``; otherwise a plain model.
    """
    _check_sets(train_set, valid_sets)
    params = call_params(params, num_boost_round)
    check_rounds(params)
    params, cfg = training_params(params, num_boost_round)
    run = start_run(params, cfg, train_set)
    valid_sets, valid_names = _as_lists(valid_sets, valid_names)
    init_model = from_lightgbm_object(init_model)
    with training_context(run.cfg, run.comm):
        agree_on_inputs(run, valid_sets, valid_names, feval, init_model, callbacks)
        loop = setup_loop(run, valid_sets, valid_names, feval, init_model, callbacks, Booster)
        booster: Booster = loop.run()  # type: ignore[assignment]  # a model_class (Booster)
        if run.cfg["check_consistency"] and run.comm.size > 1:
            check_same_model(run.comm, booster)
    if keep_training_booster:
        booster._loop = loop
    else:
        _cut_at_best_iteration(booster)
    return booster


def _cut_at_best_iteration(booster: Booster) -> None:
    """LightGBM's train() returns the model saved and reloaded at its best
    iteration (early stopping's): the later trees are dropped, so prediction
    windows add up to the whole model's prediction."""
    keep = booster.best_iteration * booster.num_tree_per_iteration
    if 0 < keep < booster.num_trees():
        del booster.trees[keep:]
        booster.add_trees([])  # forgets the flattened trees


def _check_sets(train_set: object, valid_sets: object) -> None:
    """LightGBM's TypeErrors (its words) for a training or validation set that
    is not a Dataset."""
    if not isinstance(train_set, Dataset):
        raise TypeError(
            f"train() only accepts Dataset object, train_set has type '{type(train_set).__name__}'."
        )
    if isinstance(valid_sets, (list, tuple)):
        for i, item in enumerate(valid_sets):
            if not isinstance(item, Dataset):
                raise TypeError(
                    "Every item in valid_sets must be a Dataset object. "
                    f"Item {i} has type '{type(item).__name__}'."
                )


def _as_lists(
    valid_sets: Dataset | Sequence[Dataset] | None, valid_names: str | Sequence[str] | None
) -> tuple[list[Dataset] | None, list[str] | None]:
    """LightGBM takes one Dataset (one name) where it takes lists of them."""
    if isinstance(valid_sets, Dataset):
        valid_sets = [valid_sets]
    if isinstance(valid_names, str):
        valid_names = [valid_names]
    return (
        None if valid_sets is None else list(valid_sets),
        None if valid_names is None else list(valid_names),
    )
