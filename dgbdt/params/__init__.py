"""The parameters: the one table of dgbdt's parameters (table) and every
LightGBM key as data (lightgbm_keys).  The table's public names are here too,
where earlier versions had them (``dgbdt.params.PARAMS``,
``dgbdt.params.params_table_markdown()``)."""

from .table import (
    ALIASES,
    PARAMS,
    canonical_name,
    params_table_markdown,
    params_table_text,
    resolve_params,
)

__all__ = [
    "ALIASES",
    "PARAMS",
    "canonical_name",
    "params_table_markdown",
    "params_table_text",
    "resolve_params",
]
