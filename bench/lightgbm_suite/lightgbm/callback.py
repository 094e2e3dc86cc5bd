"""``lightgbm.callback`` names mapped to dgbdt's."""

from dgbdt.boosting.callbacks import CallbackEnv
from dgbdt.callback import (
    EarlyStopException,
    early_stopping,
    log_evaluation,
    record_evaluation,
    reset_parameter,
)

__all__ = [
    "CallbackEnv",
    "EarlyStopException",
    "early_stopping",
    "log_evaluation",
    "record_evaluation",
    "reset_parameter",
]
