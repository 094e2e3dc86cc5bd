"""``lightgbm.basic`` names mapped to dgbdt's (see the package docstring)."""

import os
import tempfile

import dgbdt
from dgbdt import Booster, Dataset

CFFI_INSTALLED = False


class _Absent(Exception):
    """Stands for a dgbdt name that does not exist: nothing raises it."""


class _AbsentWarning(UserWarning):
    """Stands for a dgbdt warning class that does not exist: nothing warns it."""


LightGBMError = getattr(dgbdt, "DGBDTError", _Absent)
LGBMDeprecationWarning = getattr(dgbdt, "DGBDTDeprecationWarning", _AbsentWarning)
if hasattr(dgbdt, "Sequence"):
    Sequence = dgbdt.Sequence
else:

    class Sequence:  # absent from dgbdt: a bare class so the test modules import
        pass


class _ConfigAliases:
    """LightGBM's private alias table, here only so test modules that read it at
    import time (in ``parametrize``) can be collected; tests using it are not counted."""

    @staticmethod
    def get(*names):
        from dgbdt.params import ALIASES

        wanted = {ALIASES.get(n, n) for n in names}
        return {alias for alias, main in ALIASES.items() if main in wanted} | wanted


class _TempFile:
    """LightGBM's test-only temporary file (its tests pickle through it)."""

    def __enter__(self):
        with tempfile.NamedTemporaryFile(prefix="lightgbm_suite_", delete=False) as f:
            self.name = f.name
            self.path = f.name
        return self

    def __exit__(self, *exc):
        if os.path.isfile(self.name):
            os.remove(self.name)


__all__ = ["Booster", "Dataset", "LGBMDeprecationWarning", "LightGBMError"]
