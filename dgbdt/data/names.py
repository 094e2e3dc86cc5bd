"""Feature names made on demand."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload


class ColumnNames(Sequence[str]):
    """The default feature names ``Column_0``, ``Column_1``, ... made on access:
    a hashed-text matrix of 2**24 columns does not hold 2**24 strings."""

    #: LightGBM takes these names as they are (dgbdt.models.lightgbm_export)
    clean = True

    def __init__(self, n: int) -> None:
        self.n = int(n)

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[str]:
        return map("Column_{}".format, range(self.n))

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [f"Column_{j}" for j in range(*i.indices(self.n))]
        j = int(i) + (self.n if i < 0 else 0)
        if not 0 <= j < self.n:
            raise IndexError(f"feature {i} of {self.n}")
        return f"Column_{j}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ColumnNames):
            return self.n == other.n
        return isinstance(other, (list, tuple)) and list(self) == list(other)

    def __hash__(self) -> int:
        return hash(("ColumnNames", self.n))

    def __repr__(self) -> str:
        return f"ColumnNames({self.n})"


def without_spaces(names: Sequence[str]) -> tuple[list[str], bool]:
    """``names`` with each space replaced by "_", as LightGBM stores feature
    names (its model files split on spaces), and whether any had one."""
    replaced = [name.replace(" ", "_") for name in names]
    return replaced, any(" " in name for name in names)
