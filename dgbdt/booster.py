"""``dgbdt.Booster``: a trained model (dgbdt.models.model.Model) that can also keep
its training state, as LightGBM's: ``Booster(params, train_set)`` or
``train(..., keep_training_booster=True)``, then :meth:`Booster.update`,
:meth:`Booster.rollback_one_iter`, :meth:`Booster.add_valid`, the evaluations
and :meth:`Booster.refit`."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from .boosting.callbacks import resolve_reset
from .boosting.evaluation import EvalSet
from .boosting.loop import Boosting, refit_leaf_values, refit_params
from .boosting.training import (
    call_params,
    ending_every_rank_on_error,
    training_booster,
    training_step,
)
from .data.dataset import Dataset
from .log import log_warning
from .models.model import Model
from .params.table import ALIASES, resolve_params


def training_params(
    params: Mapping[str, Any] | None, num_boost_round: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(params, cfg) of a training call (``train``, ``Booster(params,
    train_set)``): the call's params, ``num_iterations`` set, and the same
    resolved, once; an error ends a distributed job's every rank."""
    params = call_params(params, num_boost_round)
    with ending_every_rank_on_error(params):
        return params, resolve_params(params)


class Booster(Model):
    """A gradient-boosted tree model.

    Create it with :func:`dgbdt.train`, or load one with
    ``Booster(model_file=path)`` / ``Booster(model_str=text)``.
    ``Booster(params, train_set)`` is a training Booster without trees, as
    LightGBM's: :meth:`update` trains one iteration at a time.
    """

    def __init__(
        self,
        params: dict[str, Any] | None = None,
        train_set: Dataset | None = None,
        model_file: str | os.PathLike | None = None,
        model_str: str | None = None,
    ) -> None:
        # A training Booster keeps its boosting loop (dgbdt.boosting.loop.Boosting)
        # in ``_loop``; any other Booster is a plain model.
        self._loop: Boosting | None = None
        if train_set is None:
            if params and (model_file is not None or model_str is not None):
                source = "file" if model_file is not None else "string"
                log_warning(f"Ignoring params argument, using parameters from model {source}.")
            super().__init__(params, model_file=model_file, model_str=model_str)
            return
        # LightGBM's training Booster: no trees yet, update() adds iterations
        # built as a plain Model and taken over (a subclass's __init__ may need more)
        given = dict(params or {})
        params, cfg = training_params(params, 100)
        trained = training_booster(params, cfg, train_set, model_class=Model)
        vars(self).update(vars(trained))
        assert self._loop is not None  # training_booster's model keeps its loop
        self._loop.booster = self
        # LightGBM's params: the ones given, the Dataset's params over them
        self.params = {**given, **train_set.get_params()}

    def __copy__(self) -> Booster:
        return Booster(model_str=self.model_to_string(-1, format="json"))

    def model_from_string(self, model_str: str | bytes | bytearray) -> Booster:
        """Replace this Booster by the model in ``model_str`` (LightGBM's
        ``model_from_string``; either format): a training Booster gives up its
        training state.  Returns self."""
        self._loop = None
        return super().model_from_string(model_str)

    def reset_parameter(self, params: dict[str, Any]) -> Booster:
        """Change parameters (LightGBM's ``reset_parameter``): ``params`` go into
        :attr:`params` as given and, resolved, into :attr:`config`.  A training
        Booster trains its following iterations with them (as the
        reset_parameter callback: what can change is listed there; another
        change is a ValueError naming the parameter).  Returns self."""
        if not isinstance(params, Mapping):
            raise TypeError(f"params must be a dict, got {type(params).__name__}")
        if self._loop is not None:
            loop = self._loop
            changed, _ = training_step(
                loop, lambda: resolve_reset(loop.cfg, dict(params), loop.objective)
            )
            if changed:
                training_step(loop, lambda: loop.apply_reset(self.current_iteration(), changed))
        elif params:
            # a trained model: its record only (the resolved values of the keys dgbdt knows)
            given = {k: v for k, v in params.items() if k in ALIASES}
            names = {ALIASES[k] for k in given}
            known = {k: v for k, v in self.config.items() if k in ALIASES and k not in names}
            resolved = resolve_params({**known, **given})
            self.config.update({ALIASES[k]: resolved[ALIASES[k]] for k in given})
        self.params.update(params)
        return self

    # -- training: LightGBM's Booster(params, train_set) workflow ---------------
    # A Booster made by ``Booster(params, train_set)`` or returned by
    # ``train(..., keep_training_booster=True)`` keeps its boosting loop
    # (dgbdt.boosting.loop.Boosting) in ``_loop``; any other Booster is a plain model.
    def _training_loop(self, what: str) -> Boosting:
        """The boosting loop of a training Booster, or a ValueError naming ``what``."""
        if self._loop is None:
            raise ValueError(
                f"Booster.{what} needs a Booster that keeps its training state: "
                "dgbdt.Booster(params, train_set) or dgbdt.train(..., "
                "keep_training_booster=True); this one is a trained model (loaded from "
                "a file, or returned by train() without keep_training_booster)"
            )
        return self._loop

    def update(self, train_set: Dataset | None = None, fobj: Callable | None = None) -> bool:
        """Train one more iteration (LightGBM's ``Booster.update``).

        ``fobj(preds, train_data) -> (grad, hess)``: this iteration's gradients
        (raw scores in, LightGBM's layout out), else the objective's.  Returns
        True when the iteration's trees could not split (they are then not
        added, unless the model has no trees yet): training is finished.
        ``train_set`` may only be the Booster's own training Dataset (LightGBM
        replaces the training data; dgbdt refuses other data: continue a model
        on new data with ``dgbdt.train(params, new_set, init_model=booster)``).
        """
        loop = self._training_loop("update()")
        if train_set is not None and train_set is not loop.train_set:
            if not isinstance(train_set, Dataset):
                raise TypeError(
                    f"Training data should be Dataset instance, met {type(train_set).__name__}"
                )
            raise ValueError(
                "Booster.update(train_set=...) got another Dataset than the Booster's "
                "training set: dgbdt does not replace the training data (LightGBM's "
                "ResetTrainingData); continue the model on other data with "
                "dgbdt.train(params, new_set, init_model=booster)"
            )
        return bool(training_step(loop, lambda: loop.update(fobj)))

    def rollback_one_iter(self) -> Booster:
        """Remove the last iteration (its ``num_model_per_iteration()`` trees).

        A training Booster also takes them off its training and validation
        scores (LightGBM's GBDT::RollbackOneIter) and keeps an init model's
        iterations, as LightGBM.  A plain model just loses its last trees
        (LightGBM leaves a model that is not training unchanged)."""
        if self._loop is not None:
            training_step(self._loop, self._loop.rollback)
        elif self.trees:
            del self.trees[-self.num_tree_per_iteration :]
            self._flat = None
        return self

    def add_valid(self, data: Dataset, name: str) -> Booster:
        """Evaluate ``data`` as the validation set ``name`` from now on (binned with
        the training bins; its scores those of the model so far).  Returns self."""
        if not isinstance(data, Dataset):
            raise TypeError(
                f"Validation data should be Dataset instance, met {type(data).__name__}"
            )
        loop = self._training_loop("add_valid()")
        training_step(loop, lambda: loop.add_valid(data, name))
        return self

    def eval(
        self,
        data: Dataset,
        name: str,
        feval: Callable | list[Callable] | None = None,
    ) -> list[tuple]:
        """The metrics (and ``feval``) on ``data``, named ``name``: the training
        set, a validation set, or new data (added with :meth:`add_valid`).
        ``(data name, metric name, value, is_higher_better)`` tuples."""
        if not isinstance(data, Dataset):
            raise TypeError("Can only eval for Dataset instance")
        loop = self._training_loop("eval()")
        if data is loop.train_set:
            sets = [loop.training_eval_set(name)]
        else:
            found = [es for es in loop.valid_list if es.dataset is data]
            if not found:
                self.add_valid(data, name)
                found = loop.valid_list[-1:]
            es = found[0]
            sets = [type(es)(name, es.dataset, es.scores, es.label, es.weight, es.queries)]
        return self._evaluate(loop, sets, feval)

    def eval_train(self, feval: Callable | list[Callable] | None = None) -> list[tuple]:
        """The metrics (and ``feval``) on the training data (LightGBM's)."""
        loop = self._training_loop("eval_train()")
        return self._evaluate(loop, [loop.training_eval_set(self._train_data_name)], feval)

    def eval_valid(self, feval: Callable | list[Callable] | None = None) -> list[tuple]:
        """The metrics (and ``feval``) on every validation set, in order (LightGBM's)."""
        loop = self._training_loop("eval_valid()")
        return self._evaluate(loop, list(loop.valid_list), feval)

    @staticmethod
    def _evaluate(
        loop: Boosting, eval_sets: list[EvalSet], feval: Callable | list[Callable] | None
    ) -> list[tuple]:
        return training_step(loop, lambda: loop.evaluate(eval_sets, feval))

    def refit(
        self,
        data: Any,
        label: Any,
        decay_rate: float = 0.9,
        reference: Dataset | None = None,
        weight: Any = None,
        group: Any = None,
        init_score: Any = None,
        feature_name: list[str] | str = "auto",
        categorical_feature: list[int | str] | str = "auto",
        dataset_params: dict | None = None,
        free_raw_data: bool = True,
        validate_features: bool = False,
        **kwargs: Any,
    ) -> Booster:
        """A new Booster with this one's trees, their leaf values refitted on
        ``data`` (LightGBM's ``refit``, GBDT::RefitTree).

        Rows fall in the trees' leaves (``predict(pred_leaf=True)``; ``kwargs``
        go to predict); iteration by iteration, the objective's gradients at the
        current scores give each leaf its output ``-G / (H + lambda_l2)`` (L1
        soft-thresholded, capped at max_delta_step, path-smoothed as LightGBM's
        refit does), and ``new = decay_rate * old + (1 - decay_rate) * output *
        shrinkage``.  The scores start at ``init_score`` (else 0) and the model's
        starting score is refitted with its first trees, as LightGBM's, whose
        first trees hold it.  Parameters (lambda_l1, lambda_l2, ...) are the
        model's, updated by ``dataset_params``.  The result is a plain model
        (LightGBM's keeps training on ``data``).
        """
        if not 0.0 <= float(decay_rate) <= 1.0:
            raise ValueError(f"decay_rate must be in [0, 1], got {decay_rate!r}")
        leaf_preds = self.predict(
            data, num_iteration=-1, pred_leaf=True, validate_features=validate_features, **kwargs
        )
        train_set = Dataset(
            data,
            label=label,
            weight=weight,
            init_score=init_score,
            feature_name=feature_name,
            reference=reference,
            categorical_feature=categorical_feature,
            params=dataset_params,
            free_raw_data=free_raw_data,
            group=group,
        )
        cfg = resolve_params(refit_params(self, dataset_params))
        cfg["refit_decay_rate"] = float(decay_rate)
        values = refit_leaf_values(self, train_set, leaf_preds, cfg)
        new = self.__copy__()
        for tree, leaf_value in zip(new.trees, values, strict=True):
            tree.leaf_value = leaf_value
        new.best_iteration = 0
        new._flat = None
        return new
