"""Messages and errors users see: one logger hook and dgbdt's error types.

* :class:`DGBDTError` is what dgbdt raises where LightGBM raises its
  ``LightGBMError`` (bad parameters, bad data, a misused Booster). It is a
  ``ValueError``, so callers that caught ``ValueError`` keep working.
* :class:`DGBDTDeprecationWarning` is LightGBM's ``LGBMDeprecationWarning``.
* :func:`register_logger` is LightGBM's hook: every message dgbdt prints goes
  through :func:`log_info` or :func:`log_warning`, so a registered logger
  receives them all. Without one, info is printed and a warning is a Python
  ``UserWarning``, as in LightGBM.

Only one rank speaks in distributed training: the engine sets it with
:func:`set_logging_rank`.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = [
    "DGBDTDeprecationWarning",
    "DGBDTError",
    "log_info",
    "log_lightgbm_info",
    "log_lightgbm_warning",
    "log_warning",
    "logging_rank",
    "register_logger",
    "set_logging_rank",
]


class DGBDTError(ValueError):
    """Raised where LightGBM raises ``LightGBMError``; a ``ValueError``."""


class DGBDTDeprecationWarning(FutureWarning):
    """A dgbdt (LightGBM) behaviour that will change; LightGBM's ``LGBMDeprecationWarning``."""


class _DefaultLogger:
    def info(self, msg: str) -> None:
        print(msg, flush=True)

    def warning(self, msg: str) -> None:
        # stacklevel: log_warning's caller's caller, the user's line.
        warnings.warn(msg, UserWarning, stacklevel=4)


_LOGGER: Any = _DefaultLogger()
_INFO_METHOD = "info"
_WARNING_METHOD = "warning"
_LOGGING_RANK = 0


def register_logger(
    logger: Any, info_method_name: str = "info", warning_method_name: str = "warning"
) -> None:
    """Send every message dgbdt prints to ``logger`` (LightGBM's ``register_logger``).

    Parameters
    ----------
    logger : object
        Has callable ``info_method_name`` and ``warning_method_name`` methods
        taking one string (a ``logging.Logger`` has ``info`` and ``warning``).
    info_method_name : str, default="info"
    warning_method_name : str, default="warning"
    """
    if not all(
        callable(getattr(logger, name, None)) for name in (info_method_name, warning_method_name)
    ):
        raise TypeError(
            f"Logger must provide '{info_method_name}' and '{warning_method_name}' method"
        )
    global _LOGGER, _INFO_METHOD, _WARNING_METHOD
    _LOGGER, _INFO_METHOD, _WARNING_METHOD = logger, info_method_name, warning_method_name


def set_logging_rank(rank: int) -> None:
    """In distributed training only rank 0 prints (the engine sets this)."""
    global _LOGGING_RANK
    _LOGGING_RANK = rank


def logging_rank() -> int:
    """The rank set by :func:`set_logging_rank`; 0 means this process speaks."""
    return _LOGGING_RANK


def log_info(msg: str) -> None:
    """One informational message (printed by default), from rank 0 only."""
    if _LOGGING_RANK == 0:
        getattr(_LOGGER, _INFO_METHOD)(msg)


def log_warning(msg: str) -> None:
    """One warning (a ``UserWarning`` by default), from rank 0 only."""
    if _LOGGING_RANK == 0:
        getattr(_LOGGER, _WARNING_METHOD)(msg)


def log_lightgbm_warning(msg: str, verbosity: int) -> None:
    """A warning of LightGBM's C++ log, in its form (``[LightGBM] [Warning] msg``,
    printed through :func:`log_info` as LightGBM prints it), when ``verbosity``
    (the training's) is 0 or more, as LightGBM."""
    if verbosity >= 0:
        log_info(f"[LightGBM] [Warning] {msg}")


def log_lightgbm_info(msg: str, verbosity: int) -> None:
    """An info line of LightGBM's C++ log (``[LightGBM] [Info] msg``) when
    ``verbosity`` is 1 or more, as LightGBM."""
    if verbosity >= 1:
        log_info(f"[LightGBM] [Info] {msg}")
