"""Where a row-sharded read cuts a file so that every query lands whole on one rank.

:func:`dgbdt.io.read_row_part` first cuts a file into K byte ranges at line ends
(part p holds the lines that start in bytes ``[size*p//K, size*(p+1)//K)``).  When
the file has queries those cuts move to query boundaries, decided from a few
numbers gathered from every part (so every rank computes the same cuts):

* A ``.query`` file gives the queries' row boundaries up front.  Each part counts
  its rows, so the row at each even cut is known; cut r moves to the query
  boundary nearest that row (a tie: the earlier one), and the part that holds the
  boundary's row gives its byte offset.  Rows are the lines the parsers read as
  rows: not blank, not a LibSVM comment, not the header.
* A group column or LibSVM ``qid:`` fields name each row's query.  Each part gives
  its first and last row's id and where its first query ends; cut r moves
  forward past the rows that continue the query of the last row before it, so
  the rank before reads on until that query ends (past several parts, for a
  query bigger than a rank's share)::

      bytes     |----- part 0 -----|----- part 1 -----|----- part 2 -----|
      queries   | a  |  b  |   c      | d |   e                | f  | g  |
      even cuts                    ^                  ^
      moved                           ^                        ^
      ranks     |----- rank 0 --------|----- rank 1 -----------|-- rank 2 --|

  A query's rows are contiguous: within a part the parser checks it, across
  parts :func:`check_queries_contiguous` does (one id per query from each rank).

Zero-size queries of a ``.query`` file at a cut go to the later rank (trailing
ones to the last).  A rank may end up with no rows (more ranks than queries).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..distributed.comm import agreed
from ..native import text
from ..native.text import libsvm_qids
from .columns import ColumnSpec, plan_columns
from .errors import DataFormatError
from .fields import field_counts_of, header_names, split_fields
from .filebytes import count_lines, normalize_line_ends, read_header_line
from .sidefiles import check_query_sum
from .values import to_float

if TYPE_CHECKING:
    from _typeshed import StrPath

    from ..distributed.comm import SerialComm

#: the id of a row whose query id cannot be read (the parse then names its line)
_UNREADABLE = np.int64(-(2**62) - 12345)


@dataclass(frozen=True)
class Layout:
    """How a file's lines are read: ``fmt`` and ``sep`` (:func:`dgbdt.io.sniff_format`)
    and the column ``options`` of :func:`dgbdt.io.read_data`."""

    path: str
    fmt: str
    sep: str | None
    options: dict[str, Any]

    @property
    def header(self) -> bool:
        return bool(self.options.get("header", False))


def query_mode(
    layout: Layout, qid_rows: bool, side_files: bool, any_rank: Callable[[object], bool]
) -> str | None:
    """How the queries of a sharded read are known: ``"ids"`` (a group column, or
    LibSVM ``qid:`` rows on some part: ``qid_rows`` is this rank's answer),
    ``"file"`` (a ``.query`` file) or None (no queries, or prediction).
    ``any_rank(flag)`` is the collective that makes every rank decide alike."""
    opts = layout.options
    if opts.get("features_only"):
        return None
    if layout.fmt == "libsvm":
        if any_rank(qid_rows):
            return "ids"
    elif str(opts.get("group_column") or "").strip():
        return "ids"
    if side_files and any_rank(os.path.lexists(layout.path + ".query")):
        return "file"
    return None


#: bytes scanned at a time for line ends (bounds the scan's temporary arrays)
_SCAN_BLOCK = 1 << 24


def _line_starts(data: bytes) -> np.ndarray:
    """Byte offset of every line of ``data`` (lines end at ``\\n``, ``\\r\\n`` or a
    lone ``\\r``): as many as :func:`count_lines` counts."""
    if not data:
        return np.zeros(0, np.int64)
    buf = np.frombuffer(data, np.uint8)
    has_cr = b"\r" in data
    found = [np.zeros(1, np.int64)]
    for at in range(0, len(buf), _SCAN_BLOCK):
        block = buf[at : at + _SCAN_BLOCK + 1]  # a byte more: is a last '\r' one of '\r\n'?
        core = block[:_SCAN_BLOCK]
        ends = core == 10
        if has_cr:
            lone_cr = core == 13
            after = block[1 : len(core) + 1] == 10
            lone_cr[: len(after)] &= ~after
            ends |= lone_cr
        found.append(np.flatnonzero(ends).astype(np.int64) + (at + 1))
    starts = np.concatenate(found)
    return starts[:-1] if starts[-1] == len(data) else starts


class Part:
    """One byte range of a file: its bytes ``data``, the file offset ``start`` where
    they begin and its number ``index`` among the parts; its rows found lazily."""

    def __init__(self, layout: Layout, data: bytes, start: int, index: int) -> None:
        self.layout, self.data, self.start, self.index = layout, data, int(start), index
        self._rows: _FoundRows | None = None

    @property
    def holds_header(self) -> bool:
        return self.layout.header and self.start == 0 and bool(self.data)

    def rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``(row_starts, row_ends, qids)``: the offsets in ``data`` where each row's
        line starts and ends, and (LibSVM) each row's query id or ``_UNREADABLE``."""
        if self._rows is None:
            self._rows = self._find_rows()
        return self._rows[:3]

    def _find_rows(self) -> _FoundRows:
        text = normalize_line_ends(self.data)  # the same lines, as the parsers see them
        starts = _line_starts(self.data)
        ends = np.append(starts[1:], len(self.data))
        qids = kinds = None
        if self.layout.fmt == "libsvm":
            kinds, all_qids = _libsvm_lines(text)
            is_row = kinds != _libsvm_kind("LINE_BLANK")
            kinds = kinds[is_row]
            qids = np.where(kinds == _libsvm_kind("LINE_QID"), all_qids[is_row], _UNREADABLE)
        else:
            is_row = field_counts_of(text, self.layout.sep)[0] > 0
            if self.holds_header and len(is_row):
                is_row[0] = False
        return starts[is_row], ends[is_row], qids, kinds, starts

    @property
    def n_rows(self) -> int:
        return len(self.rows()[0])

    def has_qid_rows(self) -> bool:
        """Whether a LibSVM row of this part has a ``qid`` token (well formed or not)."""
        if self.layout.fmt != "libsvm" or b"qid" not in self.data:
            return False
        self.rows()
        assert self._rows is not None  # found by rows()
        kinds = self._rows[3]
        return bool(np.any(kinds != _libsvm_kind("LINE_NO_QID")))

    def id_summary(self) -> list[int]:
        """``[n_rows, first id, last id, offset of the first row of the second query
        (-1: one query)]``, ids as int64 (the bits of float ids)."""
        n = self.n_rows
        if n == 0:
            return [0, 0, 0, -1]
        id_of = self._id_function()
        first, last = id_of(0), id_of(n - 1)
        if first == last:
            return [n, first, last, -1]
        lo, hi = 0, n - 1  # id_of(lo) == first != id_of(hi); a query's rows are contiguous
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if id_of(mid) == first else (lo, mid)
        return [n, first, last, self.start + int(self.rows()[0][hi])]

    def _id_function(self) -> Callable[[int], int]:
        """Row number -> the int64 id of its query."""
        starts, ends, qids = self.rows()
        if qids is not None:
            return lambda i: int(qids[i])
        sep = self.layout.sep
        group = self._group_column()
        assert group is not None  # delimited text with queries has a group column

        def id_of(i: int) -> int:
            line = self.data[starts[i] : ends[i]].decode("utf-8", errors="replace")
            fields = split_fields(line.rstrip("\r\n"), sep)
            try:
                value = to_float(fields[group].strip())
            except (ValueError, IndexError):
                return int(_UNREADABLE)
            return int(np.float64(value + 0.0).view(np.int64))  # -0.0 is 0.0

        return id_of

    def _group_column(self) -> int | None:
        """The file column of ``group_column`` (as the delimited reader plans it)."""
        opts, sep = self.layout.options, self.layout.sep
        starts, ends, _ = self.rows()
        names = None
        if self.holds_header:
            assert self._rows is not None  # found by rows()
            lines = self._rows[4]
            first = self.data[: lines[1] if len(lines) > 1 else len(self.data)]
            names = header_names(first.decode("utf-8", errors="replace").rstrip("\r\n"), sep)
        elif self.layout.header:
            names = header_names(read_header_line(self.layout.path), sep)
        row = self.data[starts[0] : ends[0]].decode("utf-8", errors="replace").rstrip("\r\n")
        spec = ColumnSpec(
            opts.get("label_column", "0"),
            opts.get("weight_column"),
            opts.get("group_column"),
            opts.get("ignore_columns", ()),
        )
        n_cols = len(names) if names is not None else len(split_fields(row, sep))
        return plan_columns(self.layout.path, names, n_cols, spec).group


#: What a Part's rows are: row starts and ends, LibSVM query ids and line kinds
#: (None for delimited text), and every line's start.
_FoundRows = tuple[np.ndarray, np.ndarray, "np.ndarray | None", "np.ndarray | None", np.ndarray]
#: ``gather(fn)``: the (K, m) int64 array of ``fn(part)`` of every part.
_Gather = Callable[[Callable[[Part], Any]], np.ndarray]


def _libsvm_kind(name: str) -> int:
    return getattr(text, name)


def _libsvm_lines(text: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(kind, qid) of every line of LibSVM ``text`` (lines end at ``\\n``)."""
    n_lines = count_lines(text)
    qids = np.zeros(n_lines, np.int64)
    kinds = np.zeros(n_lines, np.int8)
    libsvm_qids(np.frombuffer(text, np.uint8), qids, kinds)
    return kinds, qids


def query_cuts(
    gather: _Gather, mode: str | None, size: int, path: str, sizes: np.ndarray | None = None
) -> np.ndarray:
    """The (K + 1,) byte offsets where K ranks' ranges of a ``size``-byte file
    start (and the last ends), at query boundaries.  ``gather(fn)`` is the (K, m)
    int64 array of ``fn(part)`` of every part (a collective, or a loop over the
    parts in one process); ``sizes`` the ``.query`` file's query sizes (mode
    ``"file"``)."""
    if mode == "file":
        assert sizes is not None  # mode "file" comes with the .query file's sizes
        cuts = _cuts_at_query_sizes(gather, size, path, sizes)
    else:
        cuts = _cuts_after_queries(gather, size)
    return np.maximum.accumulate(np.asarray(cuts, np.int64))


def _nearest_boundary(bounds: np.ndarray, row: int) -> int:
    """The query whose first row is the boundary nearest ``row`` (a tie: the earlier
    boundary; of zero-size queries there, the first)."""
    hi = int(np.searchsorted(bounds, row, "left"))
    if hi == len(bounds):
        return hi - 1
    if hi == 0 or bounds[hi] == row:
        return hi
    lower = bounds[hi - 1]
    if row - lower <= bounds[hi] - row:
        return int(np.searchsorted(bounds, lower, "left"))
    return hi


def _cuts_at_query_sizes(gather: _Gather, size: int, path: str, sizes: np.ndarray) -> list[int]:
    counts = gather(lambda part: [part.n_rows])[:, 0]
    before = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    n_total = int(before[-1])
    check_query_sum(path, sizes, n_total)
    bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    targets = bounds[[_nearest_boundary(bounds, before[r]) for r in range(1, len(counts))]]

    def offsets(part: Part) -> np.ndarray:
        lo, n = before[part.index], part.n_rows
        found = np.full(len(targets), -1, np.int64)
        mine = (targets >= lo) & (targets < lo + n)
        found[mine] = part.start + part.rows()[0][targets[mine] - lo]
        return found

    found = gather(offsets).max(axis=0)
    found[targets == n_total] = size
    return [0, *found, size]


def _cuts_after_queries(gather: _Gather, size: int) -> list[int]:
    summary = gather(lambda part: [part.start, *part.id_summary()])
    return [0, *(_cut_after_query(summary, r, size) for r in range(1, len(summary))), size]


def _cut_after_query(summary: np.ndarray, r: int, size: int) -> int:
    """Cut r: the first row at or after part r whose query is not the query of the
    last row before part r.  ``summary[p]``: part p's start, rows, first id, last
    id and where its second query starts (-1: none)."""
    start, n_rows, first, last, change = (summary[:, j] for j in range(5))
    before = [p for p in range(r) if n_rows[p] > 0]
    if not before:
        return int(start[r])
    query = last[before[-1]]
    for q in range(r, len(summary)):
        if n_rows[q] == 0:
            continue
        if first[q] != query:
            return int(start[q])
        if change[q] >= 0:
            return int(change[q])
    return size


def check_queries_contiguous(comm: SerialComm, ids: npt.ArrayLike, path: StrPath) -> None:
    """Every rank's query ids (one per query, in order): an id on two ranks is a
    query whose rows are not contiguous: a DataFormatError on every rank."""
    every, counts = comm.allgatherv(np.asarray(ids))
    unique, first_at = np.unique(every, return_index=True)
    if len(unique) == len(every):
        return
    repeated = np.ones(len(every), bool)
    repeated[first_at] = False
    again = int(np.flatnonzero(repeated)[0])
    first = int(np.flatnonzero(every == every[again])[0])
    ends = np.cumsum(counts)
    ranks = [int(np.searchsorted(ends, i, "right")) for i in (first, again)]
    value = float(every[again])
    shown = str(int(value)) if value.is_integer() else str(value)
    raise agreed(
        DataFormatError(
            f"{path}: query id {shown!r} appears again after other queries (rows read "
            f"by rank {ranks[0]} and by rank {ranks[1]}): rows of a query must be "
            "contiguous"
        )
    )
