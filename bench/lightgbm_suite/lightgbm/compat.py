"""``lightgbm.compat``: which optional libraries this environment has.

These are facts about the environment, not about dgbdt.
"""

import importlib.util

import sklearn
from sklearn.exceptions import NotFittedError as LGBMNotFittedError


def _has(name):
    return importlib.util.find_spec(name) is not None


PANDAS_INSTALLED = _has("pandas")
PYARROW_INSTALLED = _has("pyarrow")
MATPLOTLIB_INSTALLED = _has("matplotlib")
GRAPHVIZ_INSTALLED = _has("graphviz")
DASK_INSTALLED = _has("dask") and _has("distributed")
DATATABLE_INSTALLED = _has("datatable")
CFFI_INSTALLED = False
_sklearn_version = sklearn.__version__

if PANDAS_INSTALLED:
    from pandas import DataFrame as pd_DataFrame
    from pandas import Series as pd_Series
else:

    class pd_DataFrame:  # noqa: N801 - LightGBM's name
        pass

    class pd_Series:  # noqa: N801 - LightGBM's name
        pass


if PYARROW_INSTALLED:
    from pyarrow import Array as pa_Array
    from pyarrow import ChunkedArray as pa_ChunkedArray
    from pyarrow import Table as pa_Table
    from pyarrow import array as pa_array
    from pyarrow import chunked_array as pa_chunked_array
else:
    pa_Array = pa_ChunkedArray = pa_Table = pa_array = pa_chunked_array = None

__all__ = ["LGBMNotFittedError"]
