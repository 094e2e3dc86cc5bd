"""The roles of the columns of delimited text: label, weight, query and ignored
columns resolved to file column indices (:class:`ColumnPlan`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from _typeshed import StrPath

#: I/O keys that say how a data file's columns map to features (which are not
#: features; LibSVM's first index); training records them in the model, and
#: predict reads files the same way by default.
COLUMN_KEYS = (
    "header",
    "label_column",
    "weight_column",
    "group_column",
    "ignore_column",
    "zero_based",
)


def _resolve_column(
    spec: Any, names: Sequence[str] | None, what: str, label_idx: int | None, path: StrPath
) -> int | None:
    """File column index of a column spec, or None."""
    if spec is None or (isinstance(spec, str) and spec.strip() == ""):
        return None
    if isinstance(spec, str) and spec.startswith("name:"):
        name = spec[5:]
        if names is None:
            raise ValueError(f"{what}={spec!r} needs header=True ({path})")
        if name not in names:
            raise ValueError(
                f"{what}={spec!r}: no column {name!r} in the header of {path}; columns are {names}"
            )
        return names.index(name)
    try:
        idx = int(spec)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be an index or 'name:colname', got {spec!r}") from None
    if idx < 0:
        raise ValueError(f"{what} must be >= 0, got {spec!r}")
    if label_idx is not None and idx >= label_idx:
        idx += 1  # LightGBM: integer indices do not count the label column
    return idx


def _resolve_ignore(
    spec: Any, names: Sequence[str] | None, label_idx: int | None, path: StrPath
) -> list[int | None]:
    if spec is None:
        return []
    if isinstance(spec, str):
        if not spec.strip():
            return []
        if spec.startswith("name:"):
            return [
                _resolve_column("name:" + s.strip(), names, "ignore_columns", label_idx, path)
                for s in spec[5:].split(",")
                if s.strip()
            ]
        spec = [s for s in spec.split(",") if s.strip()]
    return [_resolve_column(s, names, "ignore_columns", label_idx, path) for s in spec]


@dataclass(frozen=True)
class ColumnSpec:
    """The column options of :func:`dgbdt.io.read_data`, as the user gave them."""

    label_column: object = "0"
    weight_column: object = None
    group_column: object = None
    ignore_columns: object = ()
    keep_features: Sequence[int] | np.ndarray | None = None
    features_only: bool = False


@dataclass(frozen=True)
class ColumnPlan:
    """File column indices of the roles: ``label``, ``weight``, ``group`` (None where
    there is no such column, or with ``features_only``, where they are left out of
    ``X`` but not converted), ``keep`` the columns of ``X`` and ``used`` every column
    to convert, in file order (the others are parsed but never stored)."""

    label: int | None
    weight: int | None
    group: int | None
    keep: list[int]
    used: list[int]

    @property
    def position(self) -> dict[int, int]:
        """Column index within the converted values of each used file column."""
        return {c: i for i, c in enumerate(self.used)}


def plan_columns(
    path: StrPath, names: Sequence[str] | None, n_cols: int, spec: ColumnSpec
) -> ColumnPlan:
    """The :class:`ColumnPlan` of ``spec`` for a file of ``n_cols`` columns named
    ``names`` (None without a header).  ValueError for bad options."""
    label_idx = _resolve_column(spec.label_column, names, "label_column", None, path)
    weight_idx = _resolve_column(spec.weight_column, names, "weight_column", label_idx, path)
    group_idx = _resolve_column(spec.group_column, names, "group_column", label_idx, path)
    ignore = _resolve_ignore(spec.ignore_columns, names, label_idx, path)
    for what, idx in (
        ("label_column", label_idx),
        ("weight_column", weight_idx),
        ("group_column", group_idx),
        # an item is None only for a blank item of a list spec
        ("ignore_columns", max(ignore, default=None)),  # type: ignore[type-var]
    ):
        if idx is not None and n_cols and idx >= n_cols:
            raise ValueError(_out_of_range(what, idx, n_cols, label_idx, path))
    roles = ColumnPlan(label_idx, weight_idx, group_idx, keep=[], used=[])
    _check_distinct(path, names, spec, roles, ignore)
    drop = {i for i in (label_idx, weight_idx, group_idx, *ignore) if i is not None}
    keep = _kept(path, [i for i in range(n_cols) if i not in drop], spec.keep_features)
    if spec.features_only:
        label_idx = weight_idx = group_idx = None
    used = sorted({*keep, *(i for i in (label_idx, weight_idx, group_idx) if i is not None)})
    return ColumnPlan(label_idx, weight_idx, group_idx, keep=keep, used=used)


def _kept(
    path: StrPath, keep: list[int], keep_features: Sequence[int] | np.ndarray | None
) -> list[int]:
    """The file columns of ``X``: ``keep``, or those of it that ``keep_features`` picks."""
    if keep_features is None:
        return keep
    wanted = [int(i) for i in keep_features]
    if any(i < 0 or i >= len(keep) for i in wanted):
        raise ValueError(
            f"keep_features: indices must be in [0, {len(keep)}), {path} has "
            f"{len(keep)} feature columns, got {list(keep_features)}"
        )
    return [keep[i] for i in wanted]


def _out_of_range(what: str, idx: int, n_cols: int, label_idx: int | None, path: StrPath) -> str:
    """The message for a column index beyond the file, counted as the key counts:
    indices of weight/group/ignore columns skip the label column."""
    if what == "label_column" or label_idx is None:
        return (
            f"{what}: column {idx} does not exist, {path} has {n_cols} columns "
            f"(indices 0 to {n_cols - 1})"
        )
    shown = idx - (idx > label_idx)  # back to the index the user wrote
    return (
        f"{what}: column {shown} does not exist, {path} has {n_cols - 1} columns besides "
        f"the label column (indices 0 to {n_cols - 2}; {what} does not count the label)"
    )


def _check_distinct(
    path: StrPath,
    names: Sequence[str] | None,
    spec: ColumnSpec,
    roles: ColumnPlan,
    ignore: Sequence[int | None],
) -> None:
    """A weight, query or ignored column may not be the label column, nor the weight
    column the query column: one would silently train on the other (LightGBM finds no
    label name among the other columns: "Could not find weight column y").  ``roles``
    holds the resolved label, weight and group indices, ``ignore`` the ignored ones."""

    def shown(key: str, given: object, idx: int) -> str:
        by_name = isinstance(given, str) and given.startswith("name:")
        name = f" ({names[idx]!r})" if names and idx < len(names) and not by_name else ""
        return f"{key}={given!r}{name}"

    pairs = [
        ("weight_column", spec.weight_column, roles.weight),
        ("group_column", spec.group_column, roles.group),
    ]
    pairs += [("ignore_columns", spec.ignore_columns, i) for i in ignore]
    for key, given, idx in pairs:
        if idx is not None and idx == roles.label:
            raise ValueError(
                f"{shown(key, given, idx)} is the label column "
                f"{shown('label_column', spec.label_column, idx)} of {path}"
            )
    if roles.weight is not None and roles.weight == roles.group:
        raise ValueError(
            f"{shown('group_column', spec.group_column, roles.group)} is the weight column "
            f"{shown('weight_column', spec.weight_column, roles.weight)} of {path}"
        )
