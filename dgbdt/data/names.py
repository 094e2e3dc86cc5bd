"""Feature names made on demand."""

from collections.abc import Sequence


class ColumnNames(Sequence):
    """The default feature names ``Column_0``, ``Column_1``, ... made on access:
    a hashed-text matrix of 2**24 columns does not hold 2**24 strings."""

    #: LightGBM takes these names as they are (dgbdt.models.lightgbm_export)
    clean = True

    def __init__(self, n):
        self.n = int(n)

    def __len__(self):
        return self.n

    def __iter__(self):
        return map("Column_{}".format, range(self.n))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [f"Column_{j}" for j in range(*i.indices(self.n))]
        j = int(i) + (self.n if i < 0 else 0)
        if not 0 <= j < self.n:
            raise IndexError(f"feature {i} of {self.n}")
        return f"Column_{j}"

    def __eq__(self, other):
        if isinstance(other, ColumnNames):
            return self.n == other.n
        return isinstance(other, (list, tuple)) and list(self) == list(other)

    def __hash__(self):
        return hash(("ColumnNames", self.n))

    def __repr__(self):
        return f"ColumnNames({self.n})"
