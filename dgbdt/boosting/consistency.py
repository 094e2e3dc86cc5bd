"""That every rank trains alike: the same call of train() (params, validation
sets, feval, objective, init model, feature names, binning), the same rows
where feature-parallel ranks replicate them, and the same model at the end.

A difference raises the same error on every rank (``agreed``): none is left
waiting in a collective.  Inputs that size a later collective are among them:
the training set's categorical columns (binning counts their bins over the
ranks) and whether it has a position (unbiased lambdarank's collectives).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..data.dataset import Dataset
from ..distributed.comm import agree_on_errors, agreed
from ..models.model import Model
from ..params.table import BINNING_KEYS
from .callbacks import scheduled_parameters

if TYPE_CHECKING:
    from ..distributed.comm import SerialComm
    from .loop import TrainingRun

    #: train()'s ``feval``: one function, a list of them, or None.
    Feval = Callable[..., Any] | Sequence[Callable[..., Any]] | None
    #: train()'s ``init_model``: a model, a model file, or None.
    InitModel = Model | str | os.PathLike | None

#: Parameters each process may set for itself (LightGBM's too: threads, logging,
#: the deadline, the local data layout): they do not change the model.
PER_PROCESS_KEYS = (
    "num_threads",
    "verbosity",
    "time_out",
    "num_machines",
    "force_col_wise",
    "force_row_wise",
)


def agree_on_inputs(
    run: TrainingRun,
    valid_sets: Sequence[Dataset] | None,
    valid_names: Sequence[str] | None,
    feval: Feval,
    init_model: InitModel,
    callbacks: Iterable[Any] | None = None,
) -> None:
    """Errors a rank finds in its own inputs, and what every rank must agree on,
    are settled before any other collective: every rank then raises the same
    error, none is left waiting."""
    error = None
    try:
        if run.train_set.label is None:
            raise ValueError("train_set has no label")
        if run.objective:
            run.objective.check_labels(run.train_set.label, run.train_set.weight)
    except (ValueError, TypeError) as exc:
        error = exc
    agree_on_errors(run.comm, error)
    if run.comm.size > 1:
        check_same_setup(
            run.comm, setup_description(run, valid_sets, valid_names, feval, init_model, callbacks)
        )


def setup_description(
    run: TrainingRun,
    valid_sets: Sequence[Dataset] | None,
    valid_names: Sequence[str] | None,
    feval: Feval,
    init_model: InitModel,
    callbacks: Iterable[Any] | None = None,
) -> dict[str, Any]:
    """What must be the same on every rank, as a JSON-able dict."""
    cfg = run.cfg
    fevals = feval if isinstance(feval, (list, tuple)) else [feval] if feval is not None else []
    sets = valid_sets or []
    names = [
        valid_names[i] if valid_names and i < len(valid_names) else f"valid_{i}"
        for i in range(len(sets))
    ]
    return {
        "the validation set names": names,
        "which validation sets are train_set": [vs is run.train_set for vs in sets],
        "the number of feval functions": len(fevals),
        "a custom objective given": run.custom_objective is not None,
        # a schedule on some ranks only would desynchronise the per-round agreement
        "reset_parameter's scheduled parameters": scheduled_parameters(callbacks),
        "init_model": _init_model_digest(init_model),
        "train_set's feature names": _feature_names(run.train_set),
        # binning counts the categorical features' bins over the ranks (sizes differ)
        "train_set's categorical_feature (its categorical columns)": _categorical(
            run.train_set, run.params
        ),
        # unbiased lambdarank's position collectives run only where a position is given
        "train_set's position given": getattr(run.train_set, "position", None) is not None,
        "the binning (train_set's Dataset params with train's)": _binning(
            run.train_set, run.params
        ),
        "the validation sets' binning": [_binning(vs, run.params) for vs in sets],
        **{
            f"params[{k!r}]": v
            for k, v in cfg.items()
            if not callable(v) and k not in PER_PROCESS_KEYS
        },
    }


def _init_model_digest(init_model: InitModel) -> str | None:
    """None, or a hash of the init model (the same model must continue on every rank)."""
    if init_model is None:
        return None
    if isinstance(init_model, Model):
        text = init_model.model_to_string(-1, format="json")
    else:
        try:
            with open(init_model, "rb") as fh:
                text = fh.read().decode("utf-8", "replace")
        except (OSError, TypeError):
            return f"unreadable {init_model!r}"  # loading it reports why, on that rank
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _feature_names(dataset: object) -> list[str] | None:
    """The names every rank must share; a block of columns (feature_indices) has
    its own, checked when the blocks are assembled."""
    if not isinstance(dataset, Dataset) or dataset.feature_indices is not None:
        return None
    return list(dataset.feature_name)


def _categorical(dataset: object, params: dict[str, Any]) -> list[int] | str | None:
    """The categorical columns every rank must bin alike; a block of columns
    (feature_indices) holds its own."""
    if not isinstance(dataset, Dataset) or dataset.feature_indices is not None:
        return None
    return dataset.categorical_indices(params)


def _binning(dataset: object, params: dict[str, Any]) -> dict[str, Any] | str | None:
    """The binning a Dataset gets (its own params overridden by train's), resolved
    so that aliases and numpy scalars compare equal."""
    if not isinstance(dataset, Dataset):
        return None
    try:
        cfg = dataset.resolved_params(params)
    except (ValueError, TypeError) as exc:  # raised on every rank when the Dataset is built
        return f"invalid: {exc}"
    return {key: cfg[key] for key in BINNING_KEYS}


def check_same_setup(comm: SerialComm, description: dict[str, Any]) -> None:
    """Every rank must call train() alike: its description (params, feval, fobj,
    validation sets, Dataset params, init_model) hashed and compared with rank
    0's; on a difference every rank raises the same error naming the first
    item that differs."""
    text = json.dumps(description, sort_keys=True, default=str)
    bad = comm.ranks_unlike_rank0(text)
    if not bad:
        return
    texts = comm.per_rank_objects(text)
    mine, theirs = json.loads(texts[0]), json.loads(texts[bad[0]])
    key = next(k for k in [*description, *theirs] if mine.get(k) != theirs.get(k))
    mine, theirs = mine.get(key), theirs.get(key)
    if isinstance(mine, dict) and isinstance(theirs, dict):  # name the entry that differs
        sub = next(k for k in [*mine, *theirs] if mine.get(k) != theirs.get(k))
        key, mine, theirs = f"{key}[{sub!r}]", mine.get(sub), theirs.get(sub)
    raise agreed(
        ValueError(
            f"Ranks {bad} called train() unlike rank 0: {key} is {_short(theirs)} on rank "
            f"{bad[0]} but {_short(mine)} on rank 0. Every rank must call train() with the "
            "same params, feval, objective, validation sets (names and Dataset params) and "
            "init_model, on data with the same feature names and categorical columns (and a "
            "position on every rank or none)"
        )
    )


def _short(value: object, width: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def check_same_rows(comm: SerialComm, dataset: Dataset, what: str = "the training set") -> None:
    """Feature-parallel ranks must hold the same rows (LightGBM's replicated mode)."""
    label = dataset.label if dataset.label is not None else np.zeros(0)
    blocks = dataset.feature_indices is not None
    mine = [dataset.n_samples, 0 if blocks else dataset.n_features, float(np.sum(label))]
    every = comm.stack(mine)
    if not np.all(every == every[0]):
        raise agreed(
            ValueError(
                f"tree_learner='feature' needs the same rows of {what} on every rank (all columns, "
                "or a block of columns with Dataset(feature_indices=...)); got (rows, columns, "
                f"label sum) = {every.tolist()}"
            )
        )


def check_same_model(comm: SerialComm, booster: Model) -> None:
    """Every rank must hold the same model (hash of the model file compared)."""
    bad = comm.ranks_unlike_rank0(booster.model_to_string(-1, format="json"))
    if bad:
        raise agreed(RuntimeError(f"check_consistency: ranks {bad} hold another model than rank 0"))
