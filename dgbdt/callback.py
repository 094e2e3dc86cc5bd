"""LightGBM's training callbacks, where LightGBM's users import them
(``dgbdt.callback``); the boosting loop runs them (dgbdt.boosting.callbacks
holds them with the rules the loop shares)."""

from .boosting.callbacks import (
    CallbackEnv,
    EarlyStopException,
    checkpoint,
    early_stopping,
    log_evaluation,
    log_progress,
    record_evaluation,
    reset_parameter,
)

__all__ = [
    "CallbackEnv",
    "EarlyStopException",
    "log_evaluation",
    "record_evaluation",
    "early_stopping",
    "checkpoint",
    "log_progress",
    "reset_parameter",
]
