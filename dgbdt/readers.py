"""Readers for the text data files of the command line: CSV, TSV, whitespace and LibSVM.

They read files the way LightGBM's CLI does:

* ``fmt="auto"`` tells LibSVM (data lines of ``label idx:val ...``) from delimited
  text; the delimiter of delimited text (tab, comma, else runs of whitespace) is
  taken from the first data line. ``.gz`` files (or any gzip stream) are read
  transparently.
* Delimited text: optional header line; ``label_column`` is a column index
  (``"0"``) or ``"name:colname"`` (needs the header). ``weight_column``,
  ``group_column`` and ``ignore_columns`` take the same syntax but, exactly as in
  LightGBM, an *integer index does not count the label column*: with the label in
  column 0, ``weight_column="0"`` is the file's column 1. Names always refer to the
  header. Label, weight, group and ignored columns are removed from ``X`` (their
  order is otherwise kept). Empty fields and ``NA``/``nan``/``NaN``/``null`` are
  missing values (NaN).
* LibSVM: ``label [qid:N] idx:val ...``; indices zero-based unless
  ``zero_based=False``; ``#`` starts a comment; explicit zeros are kept; ``X`` is
  a CSR matrix with ``max index + 1`` (or ``n_features``) columns, at most
  ``MAX_SPARSE_COLUMNS`` (the rows are binned dense).  An index repeated on one
  line is an error (LightGBM would sum the values).
* Side files as LightGBM: ``<path>.weight``, ``<path>.init`` (one value per line,
  or K per line for multiclass) and ``<path>.query`` (query sizes) are read when
  present and no column gives the same thing; their values must be finite
  (weights >= 0), and one that is a directory, FIFO or device is an error.
* Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (old Mac text), as in LightGBM's
  TextReader; line numbers in messages count them so.  A UTF-8 byte order mark may
  start a data or side file.
* Data files are regular files (:func:`dgbdt.files.check_regular_file`): a
  directory, FIFO or ``/dev/null`` is "not a regular file", never opened.
* ``features_only=True`` (prediction) leaves the label, weight and query columns
  unconverted and unchecked.

Fast paths are C parsers (``pandas.read_csv``, ``sklearn``'s
``load_svmlight_file``) plus Numba scans of the raw bytes
(:mod:`dgbdt.native.text`): pandas pads a short row with NaN without a word, so
every row's fields are counted; scikit-learn collects query ids in quadratic
time, so they are found by a scan instead.  Delimited text of 8 MiB or more is
cut at line ends into chunks of 2 MiB parsed on ``numba.get_num_threads()``
threads (pandas and the scans release the GIL) straight into a C-order ``X``;
smaller text, and any text where a chunk finds a problem, goes through the
serial reader, which checks the whole text.  On any problem the file is
re-scanned in Python only to raise a :class:`DataFormatError` that names the
file, the 1-based line number (counting header, blank and comment lines) and the
offending text.  Whatever the bytes, a read either returns consistent arrays or
raises :class:`DataFormatError` (or ``ValueError`` for bad column options);
``tests/test_readers_fuzz.py`` holds it to that, and the chunked reader to the
serial one.  ``bench/bench_readers.py`` times the readers against the C parsers.
"""

from __future__ import annotations

import gzip
import io
import itertools
import math
import os
import re
import zlib
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .files import check_regular_file

__all__ = [
    "DataFormatError",
    "LoadedData",
    "read_data",
    "sniff_format",
    "parse_text",
    "read_part",
    "split_parts",
    "count_lines",
    "is_gzip",
    "read_header_line",
    "read_side_files",
    "read_file_bytes",
    "read_head",
    "whole_lines",
    "first_row_width",
    "MAX_SPARSE_COLUMNS",
]

#: The most columns a LibSVM file (largest index + 1) or a scipy.sparse matrix
#: given to ``Dataset`` may have.  Sparse rows are binned into a dense
#: (n_samples, n_features) matrix (one byte per value at max_bin <= 255), and each
#: column costs ~25 us of binning and a histogram slot in every leaf: 2**20
#: columns are already 1 GiB of bins per 1,000 rows.  Without the cap an index
#: like 2000000000 asked for 15 GiB of column pointers before anything else.
MAX_SPARSE_COLUMNS = 1 << 20


def _case_variants(word):
    return {"".join(cs) for cs in itertools.product(*((c.lower(), c.upper()) for c in word))}


#: Missing values (NaN) in data and side files: what LightGBM's Common::Atof
#: (include/LightGBM/utils/common.h) reads as NaN -- na, nan and null in any case,
#: after an optional sign -- and the empty field; also N/A and None, which LightGBM
#: refuses ("Unknown token").  inf and infinity (any case, signed) are numbers.
NA_TOKENS = ("", "N/A", "None") + tuple(
    sorted(
        sign + variant
        for word in ("na", "nan", "null")
        for variant in _case_variants(word)
        for sign in ("", "+", "-")
    )
)
_NA_SET = frozenset(NA_TOKENS)
_FORMATS = ("auto", "libsvm", "csv", "tsv", "delimited")


class DataFormatError(ValueError):
    """A malformed data file; the message names the file, the line and the offending text."""


@dataclass
class LoadedData:
    X: np.ndarray | sp.csr_matrix
    label: np.ndarray | None
    weight: np.ndarray | None = None
    group: np.ndarray | None = None
    init_score: np.ndarray | None = None
    feature_names: list[str] | None = None


def _clip(text, limit=120):
    text = text.rstrip("\r\n")
    return text if len(text) <= limit else text[:limit] + "..."


def _error(path, lineno, what, text, line=None):
    shown = text if len(text) <= 200 else text[:200] + "..."
    msg = f"{path}, line {lineno}: {what} {shown!r}"
    if line is not None and line.strip() != text:
        msg += f" in {_clip(line)!r}"
    return DataFormatError(msg)


_GZIP_ERRORS = (OSError, EOFError, zlib.error)  # gzip.BadGzipFile is an OSError
_BOM = b"\xef\xbb\xbf"


def _bad_gzip(path, exc):
    return DataFormatError(f"{path}: not a valid gzip file ({exc})")


def read_file_bytes(path):
    """The whole content of a file, decompressed when gzipped."""
    path = check_regular_file(path, "data file")
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except _GZIP_ERRORS as exc:
            raise _bad_gzip(path, exc) from None
    return data


def read_head(path, n_bytes=1 << 16, whole_first_line=False):
    """The first ``n_bytes`` of a file's content (decompressed when gzipped); with
    ``whole_first_line``, more when the first line is longer."""
    path = check_regular_file(path, "data file")
    with open(path, "rb") as fh:
        start = fh.read(2)
        fh.seek(0)
        try:
            if start == b"\x1f\x8b":
                with gzip.open(fh) as gz:
                    return _read_upto(gz, n_bytes, whole_first_line)
            return _read_upto(fh, n_bytes, whole_first_line)
        except _GZIP_ERRORS as exc:
            if start != b"\x1f\x8b":
                raise
            raise _bad_gzip(path, exc) from None


def _read_upto(fh, n_bytes, whole_first_line):
    head = fh.read(n_bytes)
    if whole_first_line and len(head) == n_bytes:
        chunks = [head]
        while b"\n" not in chunks[-1] and b"\r" not in chunks[-1]:
            chunk = fh.read(n_bytes)
            if not chunk:
                break
            chunks.append(chunk)
        head = b"".join(chunks)
    return head


# A line ends at '\n', '\r\n' or a '\r' of its own (old Mac text), as in LightGBM's
# TextReader (include/LightGBM/utils/text_reader.h) and pandas.  The parsers below
# see '\n' only: parse_text turns every lone '\r' into '\n' first.
_LINE_END = re.compile(rb"\n|\r(?!\n)")


def _lone_cr_count(data):
    if b"\r" not in data:  # a memchr: most files have no '\r'
        return 0
    from .native.text import lone_cr_count

    return int(lone_cr_count(np.frombuffer(data, np.uint8)))


def _normalize_line_ends(data):
    """``data`` with each lone ``\\r`` as ``\\n`` (and ``\\r\\n`` then too): the same
    lines, counted alike by :func:`count_lines` before and after.  A copy only for
    text that has a lone ``\\r``."""
    if not _lone_cr_count(data):
        return data
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def whole_lines(head):
    """The start ``head`` of a file cut after its last whole line (b"" if none); a
    last ``\\r`` may be half of a ``\\r\\n`` and is left out."""
    body = head[:-1] if head.endswith(b"\r") else head
    return head[: max(body.rfind(b"\n"), body.rfind(b"\r")) + 1]


def _lines(data):
    """Decoded lines (without newline) of the whole file, for the slow paths."""
    return data.decode("utf-8", errors="replace").split("\n")


def _line_at(data, lineno):
    """Decoded line ``lineno`` (1-based, lines end at ``\\n``) of ``data``, without
    splitting the whole text (error messages of large files)."""
    start = 0
    if lineno > 1:
        ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
        if lineno - 2 >= len(ends):
            return ""
        start = int(ends[lineno - 2]) + 1
    end = data.find(b"\n", start)
    return data[start : None if end < 0 else end].decode("utf-8", errors="replace")


# --------------------------------------------------------------------------------------
# entry point


def read_data(
    path,
    *,
    header=False,
    label_column="0",
    weight_column=None,
    group_column=None,
    ignore_columns=(),
    zero_based=True,
    n_features=None,
    fmt="auto",
    keep_features=None,
    side_files=True,
    features_only=False,
) -> LoadedData:
    """Read a CSV/TSV/whitespace or LibSVM text file (optionally gzipped).

    Parameters
    ----------
    path : str or os.PathLike
    header : bool
        Delimited text only: the first line holds the column names.
    label_column : int or str or None
        Column index or ``"name:col"``; ``None`` for no label (delimited text).
    weight_column, group_column : int or str or None
        Index *not counting the label column* (as LightGBM) or ``"name:col"``.
        The group column holds query ids; rows of a query must be contiguous.
    ignore_columns : sequence of int, or str
        Indices (not counting the label column), ``"1,2"`` or ``"name:a,b"``.
    zero_based : bool
        LibSVM only: whether feature indices start at 0.
    n_features : int or None
        LibSVM only: number of columns (default: max index + 1).
    fmt : {"auto", "libsvm", "csv", "tsv", "delimited"}
    keep_features : sequence of int, optional
        Keep only these columns of ``X`` (feature-parallel training reads its own block).
    side_files : bool
        Read ``<path>.weight``, ``.init`` and ``.query`` when they exist (not for
        prediction, which uses none of them).  One that exists but is not a regular
        file (a directory, a FIFO) is an error, not skipped.
    features_only : bool
        Prediction: only ``X`` is used.  The label, weight and query columns are left
        out of ``X`` unconverted and unchecked (a label ``abc``, ``inf`` or empty
        does not stop prediction); LibSVM labels and ``qid:`` tokens are skipped, and
        a line may lack its label.  ``label``, ``weight``, ``group`` are None.

    Returns
    -------
    LoadedData

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    ValueError
        The file (or a side file) is not a regular file: a directory, FIFO or device.
    DataFormatError
        Malformed content (file, 1-based line number and offending text in the message),
        including a LibSVM index of ``MAX_SPARSE_COLUMNS`` or more, a feature index
        repeated on one line, and NaN/inf in a side file.
    """
    path = os.fspath(path)
    fmt, sep = sniff_format(path, fmt, header)
    out = parse_text(
        path,
        read_file_bytes(path),
        fmt=fmt,
        sep=sep,
        header=header,
        label_column=label_column,
        weight_column=weight_column,
        group_column=group_column,
        ignore_columns=ignore_columns,
        zero_based=zero_based,
        n_features=n_features,
        keep_features=keep_features,
        features_only=features_only,
    )
    if side_files:
        read_side_files(path, out)
    return out


def sniff_format(path, fmt="auto", header=False):
    """``(fmt, sep)`` of a file from its first 64 KiB: ``"libsvm"`` or ``"delimited"``
    with the delimiter (``None``: runs of whitespace).  Every rank of a sharded read
    decides from the same bytes, so all parse their parts alike."""
    if fmt not in _FORMATS:
        raise ValueError(f"fmt must be one of {_FORMATS}, got {fmt!r}")
    head = _normalize_line_ends(read_head(path))
    if fmt == "auto":
        fmt = "libsvm" if _looks_like_libsvm(head) else "delimited"
    if fmt == "libsvm":
        return "libsvm", None
    sep = {"csv": ",", "tsv": "\t"}.get(fmt)
    if sep is None:
        lines = head.decode("utf-8", errors="replace").split("\n")
        first_data = next((ln for ln in lines[1 if header else 0 :] if ln.strip()), None)
        sep = _detect_sep(first_data if first_data is not None else (lines[0] if lines else ""))
    return "delimited", sep


def first_row_width(path, header=False):
    """The number of fields of a delimited file's first data line (within its
    first 64 KiB), or None for LibSVM text or a file without data lines."""
    fmt, sep = sniff_format(path, "auto", header)
    if fmt == "libsvm":
        return None
    lines = _normalize_line_ends(read_head(path)).decode("utf-8", errors="replace").split("\n")
    first = next((ln for ln in lines[1 if header else 0 : -1] if ln.strip()), None)
    if first is None:
        return None
    return len(first.split() if sep is None else first.split(sep))


def parse_text(
    path,
    data,
    *,
    fmt,
    sep,
    header=False,
    header_text=None,
    first_line=1,
    label_column="0",
    weight_column=None,
    group_column=None,
    ignore_columns=(),
    zero_based=True,
    n_features=None,
    keep_features=None,
    features_only=False,
) -> LoadedData:
    """Parse the bytes ``data`` of (part of) ``path``; no side files.

    ``first_line`` is the file line number of the first line of ``data`` (a part of a
    file read by one rank starts anywhere); ``header_text`` is the header line when the
    part does not hold it.  Other options as :func:`read_data`.
    """
    data = _normalize_line_ends(data)
    if data.startswith(_BOM):
        if first_line == 1:
            data = data[len(_BOM) :]  # a UTF-8 byte order mark starts the file
        elif fmt != "libsvm":
            # pandas would drop it as if it started the file; a blank line before it
            # keeps it in the text, as when the whole file is read
            data, first_line = b"\n" + data, first_line - 1
    if fmt == "libsvm":
        out = _read_libsvm(
            path,
            data,
            zero_based=zero_based,
            n_features=n_features,
            first_line=first_line,
            features_only=features_only,
        )
        if keep_features is not None:
            cols = np.asarray(keep_features, np.int64).reshape(-1)
            if np.any((cols < 0) | (cols >= out.X.shape[1])):
                raise ValueError(
                    f"keep_features: indices must be in [0, {out.X.shape[1]}), "
                    f"{path} has {out.X.shape[1]} columns, got {list(keep_features)}"
                )
            out.X = out.X[:, cols].tocsr()
        return out
    return _read_delimited(
        path,
        data,
        sep=sep,
        header=header,
        header_text=header_text,
        first_line=first_line,
        label_column=label_column,
        weight_column=weight_column,
        group_column=group_column,
        ignore_columns=ignore_columns,
        keep_features=keep_features,
        features_only=features_only,
    )


# --------------------------------------------------------------------------------------
# parts of a file: every line belongs to exactly one part


def part_bounds(path, part, n_parts):
    """Byte range ``[start, end)`` of part ``part`` of ``n_parts`` of a file, cut at line
    boundaries: the part holds the lines that *start* in its share of the bytes
    ``[size * part // n_parts, size * (part + 1) // n_parts)``.  Reads only a few
    bytes around the two cut points."""
    size = os.path.getsize(check_regular_file(path, "data file"))
    with open(path, "rb") as fh:
        return (
            _line_start_at_or_after(fh, size * part // n_parts, size),
            _line_start_at_or_after(fh, size * (part + 1) // n_parts, size),
        )


def _line_start_at_or_after(fh, pos, size, block=1 << 16):
    if pos <= 0 or pos >= size:
        return min(max(pos, 0), size)
    # pos starts a line exactly when the byte before it ends one (_LINE_END)
    where = pos - 1
    while True:
        fh.seek(where)
        chunk = fh.read(block + 1)  # one byte more: is a last '\r' one of '\r\n'?
        found = _LINE_END.search(chunk)
        if found is not None and (found.start() < block or len(chunk) <= block):
            return where + found.end()
        if len(chunk) <= block:
            return size
        where += block


def read_part(path, part, n_parts):
    """The bytes of part ``part`` of ``n_parts`` of a plain (not gzipped) file."""
    start, end = part_bounds(path, part, n_parts)
    with open(path, "rb") as fh:
        fh.seek(start)
        return fh.read(end - start)


def _line_start_in(data, pos):
    """The first line start at or after ``pos`` in the bytes ``data`` (``len(data)``
    if none): the rule of :func:`_line_start_at_or_after`, in memory."""
    size = len(data)
    if pos <= 0 or pos >= size:
        return min(max(pos, 0), size)
    found = _LINE_END.search(data, pos - 1)
    return size if found is None else found.end()


def split_parts(data, n_parts):
    """``data`` cut into ``n_parts`` by the rule of :func:`part_bounds` (for gzip input,
    which one rank decompresses and scatters)."""
    cuts = [_line_start_in(data, len(data) * p // n_parts) for p in range(n_parts + 1)]
    return [data[cuts[p] : cuts[p + 1]] for p in range(n_parts)]


def count_lines(data):
    """Number of lines in ``data`` (a last line without a line end counts); a lone
    ``\\r`` ends a line, as :func:`parse_text` reads it."""
    ends = data.count(b"\n") + _lone_cr_count(data)
    return ends + (1 if data and not data.endswith((b"\n", b"\r")) else 0)


def is_gzip(path):
    with open(check_regular_file(path, "data file"), "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def read_header_line(path):
    """The first line of a file (gzip or not), for the column names of a part."""
    head = _normalize_line_ends(read_head(path, whole_first_line=True))
    return head.split(b"\n", 1)[0].decode("utf-8", errors="replace")


def _looks_like_libsvm(data, max_lines=50):
    seen = 0
    for line in io.BytesIO(data):
        line = line.split(b"#", 1)[0].strip()
        if not line:
            continue
        tokens = line.split()
        if any(b":" in tok for tok in tokens[1:]):
            return True
        seen += 1
        if seen >= max_lines:
            break
    return False


# --------------------------------------------------------------------------------------
# delimited text


def _detect_sep(line):
    if "\t" in line:
        return "\t"
    if "," in line:
        return ","
    return None  # runs of whitespace


_BLANK_RUN = re.compile("[ \t\r]+")  # what separates fields of whitespace-delimited text


def _split(line, sep):
    """Fields of a decoded line, split as :func:`native.text.field_counts` counts them."""
    line = line.rstrip("\r")
    if sep is None:
        return [t for t in _BLANK_RUN.split(line) if t]
    return line.split(sep)


def _field_counts(data, sep):
    """``(counts, stray)``: fields per line of ``data`` (0 for a blank line) and the
    0-based line of the first stray ``\\r`` inside a line (-1: none).  One pass in
    Numba over the bytes."""
    from .native.text import WHITESPACE_SEP, field_counts

    counts = np.empty(count_lines(data), np.int64)
    stray = field_counts(
        np.frombuffer(data, np.uint8), WHITESPACE_SEP if sep is None else ord(sep), counts
    )
    return counts, int(stray)


def _resolve_column(spec, names, what, label_idx, path):
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


def _resolve_ignore(spec, names, label_idx, path):
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


# Text of at least this many bytes is parsed in chunks of about _CHUNK_BYTES, on
# up to numba.get_num_threads() threads (pandas' C parser and the Numba scan both
# release the GIL); smaller text, or any problem, takes the serial path, whose
# checks name the offending line.  pandas >= 3 parses a *file path* on several
# threads itself, which is what the benchmark's plain read_csv gets.  Chunks of
# 1-2 MiB parsed fastest on 1M x 28 (pandas' buffers stay in cache): 0.85-0.9 s CPU
# against 1.05-1.15 s at 4 MiB and 1.3 s at 256 KiB (per-call overhead).
_PARALLEL_MIN_BYTES = 8 << 20
_CHUNK_BYTES = 2 << 20


def _read_delimited(
    path,
    data,
    *,
    sep,
    header,
    label_column,
    weight_column,
    group_column,
    ignore_columns,
    header_text=None,
    first_line=1,
    keep_features=None,
    features_only=False,
):
    options = dict(
        label_column=label_column,
        weight_column=weight_column,
        group_column=group_column,
        ignore_columns=ignore_columns,
        keep_features=keep_features,
        features_only=features_only,
    )
    if sep is not None and (len(sep) != 1 or ord(sep) > 127):
        raise ValueError(f"sep must be one ASCII character or None, got {sep!r}")
    if len(data) >= _PARALLEL_MIN_BYTES:
        out = _read_delimited_chunked(
            path, data, sep=sep, header=header, header_text=header_text, **options
        )
        if out is not None:
            return out
    return _read_delimited_serial(
        path,
        data,
        sep=sep,
        header=header,
        header_text=header_text,
        first_line=first_line,
        **options,
    )


def _columns(
    path,
    names,
    n_cols,
    label_column,
    weight_column,
    group_column,
    ignore_columns,
    keep_features,
    features_only=False,
):
    """File column indices ``(label, weight, group, keep, used)``: ``keep`` the columns of
    ``X``, ``used`` every column to convert, in file order.  ValueError for bad options.
    With ``features_only`` the label, weight and group columns are left out of ``X``
    but not converted (their indices come back None)."""
    label_idx = _resolve_column(label_column, names, "label_column", None, path)
    weight_idx = _resolve_column(weight_column, names, "weight_column", label_idx, path)
    group_idx = _resolve_column(group_column, names, "group_column", label_idx, path)
    ignore = _resolve_ignore(ignore_columns, names, label_idx, path)
    for what, idx in (
        ("label_column", label_idx),
        ("weight_column", weight_idx),
        ("group_column", group_idx),
        ("ignore_columns", max(ignore, default=None)),
    ):
        if idx is not None and n_cols and idx >= n_cols:
            raise ValueError(_out_of_range(what, idx, n_cols, label_idx, path))
    _check_distinct(
        path,
        names,
        label_column,
        label_idx,
        weight_column,
        weight_idx,
        group_column,
        group_idx,
        ignore_columns,
        ignore,
    )
    drop = {i for i in (label_idx, weight_idx, group_idx, *ignore) if i is not None}
    keep = [i for i in range(n_cols) if i not in drop]
    if keep_features is not None:
        wanted = [int(i) for i in keep_features]
        if any(i < 0 or i >= len(keep) for i in wanted):
            raise ValueError(
                f"keep_features: indices must be in [0, {len(keep)}), {path} has "
                f"{len(keep)} feature columns, got {list(keep_features)}"
            )
        keep = [keep[i] for i in wanted]
    if features_only:
        label_idx = weight_idx = group_idx = None
    # Columns to convert, in file order; the others are parsed but never stored.
    used = sorted({*keep, *(i for i in (label_idx, weight_idx, group_idx) if i is not None)})
    return label_idx, weight_idx, group_idx, keep, used


def _out_of_range(what, idx, n_cols, label_idx, path):
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
    path,
    names,
    label_column,
    label_idx,
    weight_column,
    weight_idx,
    group_column,
    group_idx,
    ignore_columns,
    ignore,
):
    """A weight, query or ignored column may not be the label column, nor the weight
    column the query column: one would silently train on the other (LightGBM finds no
    label name among the other columns: "Could not find weight column y")."""

    def shown(key, spec, idx):
        by_name = isinstance(spec, str) and spec.startswith("name:")
        name = f" ({names[idx]!r})" if names and idx < len(names) and not by_name else ""
        return f"{key}={spec!r}{name}"

    pairs = [
        ("weight_column", weight_column, weight_idx),
        ("group_column", group_column, group_idx),
    ]
    pairs += [("ignore_columns", ignore_columns, i) for i in ignore]
    for key, spec, idx in pairs:
        if idx is not None and idx == label_idx:
            raise ValueError(
                f"{shown(key, spec, idx)} is the label column "
                f"{shown('label_column', label_column, idx)} of {path}"
            )
    if weight_idx is not None and weight_idx == group_idx:
        raise ValueError(
            f"{shown('group_column', group_column, group_idx)} is the weight column "
            f"{shown('weight_column', weight_column, weight_idx)} of {path}"
        )


def _read_csv_kwargs(sep, used, n_cols):
    return dict(
        sep=r"\s+" if sep is None else sep,
        header=None,
        dtype=np.float64,
        engine="c",
        na_values=list(NA_TOKENS),
        keep_default_na=False,
        skip_blank_lines=True,
        quoting=3,
        comment=None,
        usecols=used if len(used) < n_cols else None,
    )


def _read_delimited_serial(
    path,
    data,
    *,
    sep,
    header,
    label_column,
    weight_column,
    group_column,
    ignore_columns,
    header_text=None,
    first_line=1,
    keep_features=None,
    features_only=False,
):
    """The reference reader: checks everything on the whole text and names the first
    offending line of any problem."""
    import pandas as pd

    base = first_line - 1  # line numbers in messages count from the file's start
    counts, stray = _field_counts(data, sep)
    if stray >= 0:
        # pandas ends a line at a lone '\r'; we count lines at '\n' only
        raise _error(
            path,
            stray + 1 + base,
            "carriage return (\\r) inside the line",
            _clip(_line_at(data, stray + 1)),
        )
    header_in_data = header and header_text is None
    line_no, names, n_cols = _rows_and_names(
        path, data, counts, sep, header_in_data, header_text if header else None, first_line
    )
    row_counts = counts[line_no - 1]
    bad = np.flatnonzero(row_counts != n_cols)
    if len(bad):
        ln = int(line_no[bad[0]])
        text = _line_at(data, ln)
        raise _error(
            path,
            ln + base,
            f"expected {n_cols} fields, got {int(row_counts[bad[0]])}:",
            _clip(text),
        )

    label_idx, weight_idx, group_idx, keep, used = _columns(
        path,
        names,
        n_cols,
        label_column,
        weight_column,
        group_column,
        ignore_columns,
        keep_features,
        features_only,
    )
    position = {c: i for i, c in enumerate(used)}

    if len(line_no) == 0 or not used:
        values = np.zeros((len(line_no), len(used)))
    else:
        try:
            frame = pd.read_csv(
                io.BytesIO(data),
                skiprows=1 if header_in_data else 0,
                **_read_csv_kwargs(sep, used, n_cols),
            )
        except Exception as exc:  # noqa: BLE001 - ParserError, UnicodeDecodeError, ...
            raise _rescan_delimited(path, data, sep, line_no, exc, base, used) from None
        # pandas keeps one float64 block, (columns, rows) in memory: ``values`` is a
        # Fortran-order view of it, so a column is contiguous.
        values = frame.to_numpy(dtype=np.float64)
        del frame
        if values.shape != (len(line_no), len(used)):
            raise DataFormatError(
                f"{path}: read {values.shape} values, expected {(len(line_no), len(used))}"
            )

    label, weight, group = _checked_roles(
        path, data, values, position, line_no, sep, base, label_idx, weight_idx, group_idx
    )
    X = _take_columns(values, [position[c] for c in keep])
    feature_names = None if names is None else [names[i] for i in keep]
    return LoadedData(X=X, label=label, weight=weight, group=group, feature_names=feature_names)


def _checked_roles(
    path, data, values, position, line_no, sep, base, label_idx, weight_idx, group_idx
):
    """``(label, weight, group sizes)`` from the converted ``values`` (None where there is
    no such column), each checked: finite, weights >= 0, queries contiguous."""

    def column(idx):
        # a copy, so that the label does not keep pandas' whole block alive
        return None if idx is None else np.array(values[:, position[idx]], np.float64)

    label = column(label_idx)
    if label is not None:
        _check_finite(path, data, label, line_no, "label", sep, label_idx, base)
    weight = column(weight_idx)
    if weight is not None:
        _check_finite(
            path, data, weight, line_no, "weight", sep, weight_idx, base, nonnegative=True
        )
    group = None
    if group_idx is not None:
        qid = column(group_idx)
        _check_finite(path, data, qid, line_no, "query id", sep, group_idx, base)
        group = _group_sizes(path, qid, line_no, data, base)
    return label, weight, group


def _rows_and_names(path, data, counts, sep, header_in_data, header_text, first_line):
    """``(line_no, names, n_cols)``: the 1-based line (within ``data``) of every row,
    the column names (None without a header) and the number of columns."""
    line_no = np.flatnonzero(counts > 0) + 1
    names = None
    if header_in_data:
        end = data.find(b"\n")
        first = data[: None if end < 0 else end].decode("utf-8", errors="replace")
        if len(line_no) == 0 or line_no[0] != 1:
            raise _error(path, first_line, "expected a header line, got", first[: 1 << 16])
        names = _header_names(first, sep)
        line_no = line_no[1:]
    elif header_text is not None:
        names = _header_names(header_text, sep)
    if names is not None:
        return line_no, names, len(names)
    return line_no, None, int(counts[line_no[0] - 1]) if len(line_no) else 0


def _n_threads():
    try:
        import numba

        return max(1, int(numba.get_num_threads()))
    except Exception:  # noqa: BLE001 - no threading layer: one thread
        return 1


def _chunk_bounds(data, start, size):
    """``[(lo, hi), ...]`` covering ``data[start:]``, cut after a newline every ~``size`` bytes."""
    bounds, lo = [], start
    while lo < len(data):
        hi = _line_start_in(data, lo + size)
        bounds.append((lo, hi))
        lo = hi
    return bounds


def _read_delimited_chunked(
    path,
    data,
    *,
    sep,
    header,
    header_text,
    label_column,
    weight_column,
    group_column,
    ignore_columns,
    keep_features,
    features_only=False,
):
    """The serial reader's result, from chunks parsed in parallel, or None whenever a
    check fails (the serial reader then names the problem).  Same result because
    chunks are cut at line ends and pandas, with quoting off, reads every line on
    its own."""
    from concurrent.futures import ThreadPoolExecutor

    from .native.text import WHITESPACE_SEP, field_counts

    sep_code = WHITESPACE_SEP if sep is None else ord(sep)
    buf = np.frombuffer(data, np.uint8)

    def line_fields(lo, hi):
        one = np.zeros(1, np.int64)
        stray = field_counts(buf[lo:hi], sep_code, one)
        return -1 if stray >= 0 else int(one[0])

    start, names = 0, None
    if header and header_text is None:
        end = data.find(b"\n")
        if end < 0 or line_fields(0, end) <= 0:
            return None
        names = _header_names(data[:end].decode("utf-8", errors="replace"), sep)
        start = end + 1
    elif header:
        names = _header_names(header_text, sep)
    if names is not None:
        n_cols = len(names)
    else:  # the first non-blank line's fields
        n_cols, lo = 0, start
        while lo < len(data) and n_cols == 0:
            hi = data.find(b"\n", lo)
            hi = len(data) if hi < 0 else hi
            n_cols = line_fields(lo, hi)
            lo = hi + 1
        if n_cols <= 0:
            return None
    try:
        label_idx, weight_idx, group_idx, keep, used = _columns(
            path,
            names,
            n_cols,
            label_column,
            weight_column,
            group_column,
            ignore_columns,
            keep_features,
            features_only,
        )
    except ValueError:
        return None  # the serial reader checks the data first, then the options
    if not used:
        return None
    bounds = _chunk_bounds(data, start, _CHUNK_BYTES)
    if not bounds:
        return None
    # pandas drops a byte order mark at the start of what it reads: only the file's may go
    if any(data.startswith(_BOM, lo) for lo, _ in bounds[1:]):
        return None
    with ThreadPoolExecutor(min(_n_threads(), len(bounds))) as pool:
        return _parse_chunks(
            pool,
            path,
            data,
            buf,
            bounds,
            sep,
            sep_code,
            n_cols,
            names,
            label_idx,
            weight_idx,
            group_idx,
            keep,
            used,
        )


def _parse_chunks(
    pool,
    path,
    data,
    buf,
    bounds,
    sep,
    sep_code,
    n_cols,
    names,
    label_idx,
    weight_idx,
    group_idx,
    keep,
    used,
):
    import pandas as pd

    from .native.text import count_rows

    position = {c: i for i, c in enumerate(used)}
    tallies, lines, line_offsets = _chunk_lines(pool, data, buf, bounds, sep, sep_code)
    n_lines = int(line_offsets[-1])
    X = np.empty((n_lines, len(keep)), np.float64)
    roles = {
        role: idx
        for role, idx in (("label", label_idx), ("weight", weight_idx), ("group", group_idx))
        if idx is not None
    }
    extra = {role: np.empty(n_lines, np.float64) for role in roles}
    x_cols = _as_slice([position[c] for c in keep])
    kwargs = _read_csv_kwargs(sep, used, n_cols)
    # Every row has n_cols fields: with all columns read, pandas fails on a longer row
    # and pads a shorter one, so (separators == (n_cols - 1) * rows) proves it from
    # the tallies; a '\r' (pandas ends lines there) or usecols (pandas then ignores
    # extra fields) needs the field scan.
    cheap_check = sep is not None and kwargs["usecols"] is None
    rows, failed = [0] * len(bounds), []

    def parse(k):
        lo, hi = bounds[k]
        if failed:
            return
        if not cheap_check or tallies[k][2]:
            m = int(count_rows(buf[lo:hi], sep_code, n_cols))
            if m < 0:
                failed.append(k)
                return
        else:
            m = -1
        try:
            values = (
                pd.read_csv(io.BytesIO(data[lo:hi]), **kwargs).to_numpy(dtype=np.float64)
                if m != 0
                else np.empty((0, len(used)))
            )
        except pd.errors.EmptyDataError:
            values = np.empty((0, len(used)))  # only blank lines (the check below decides)
        except Exception:  # noqa: BLE001 - the serial reader names the line
            failed.append(k)
            return
        if m < 0:
            m = values.shape[0]
            if tallies[k][1] != (n_cols - 1) * m:
                failed.append(k)
                return
        if values.shape != (m, len(used)) or m > lines[k]:
            failed.append(k)
            return
        at = int(line_offsets[k])
        if len(keep):
            X[at : at + m] = values[:, x_cols]
        for role, arr in extra.items():
            arr[at : at + m] = values[:, position[roles[role]]]
        rows[k] = m

    list(pool.map(parse, range(len(bounds))))
    if failed:
        return None
    return _join_chunks(path, X, extra, rows, line_offsets, names, keep, group_idx)


def _as_slice(cols):
    """Consecutive column positions as a slice (numpy then copies a block, not a gather)."""
    if cols and cols == list(range(cols[0], cols[0] + len(cols))):
        return slice(cols[0], cols[0] + len(cols))
    return cols


def _chunk_lines(pool, data, buf, bounds, sep, sep_code):
    """``(tallies, lines, line_offsets)`` of the chunks: (newlines, separators, '\r')
    counts, lines, and the line each chunk starts at.  Rows are written at the chunk's
    first *line*: exact unless there are blank lines, whose gaps are closed at the end."""
    from .native.text import CR, NEWLINE, byte_counts

    # 256 matches no byte: whitespace text has no separator byte
    tallies = list(
        pool.map(
            lambda b: byte_counts(buf[b[0] : b[1]], NEWLINE, 256 if sep is None else sep_code, CR),
            bounds,
        )
    )
    lines = [int(t[0]) for t in tallies]
    if not data.endswith(b"\n"):
        lines[-1] += 1
    return tallies, lines, np.concatenate(([0], np.cumsum(lines))).astype(np.int64)


def _join_chunks(path, X, extra, rows, line_offsets, names, keep, group_idx):
    """The LoadedData of the parsed chunks (``rows[k]`` rows written at line
    ``line_offsets[k]``), or None when a check fails (the serial reader names it)."""
    n, n_lines = sum(rows), int(line_offsets[-1])
    if n == 0:
        return None
    if n < n_lines:  # blank lines: close the gaps, in order
        at = 0
        for k, m in enumerate(rows):
            src = int(line_offsets[k])
            if m and src != at:
                X[at : at + m] = X[src : src + m]
                for arr in extra.values():
                    arr[at : at + m] = arr[src : src + m]
            at += m
        X = X[:n].copy()
        extra = {role: arr[:n].copy() for role, arr in extra.items()}
    if not all(np.isfinite(arr).all() for arr in extra.values()):
        return None
    if "weight" in extra and np.any(extra["weight"] < 0):
        return None  # the serial reader names the negative weight's line
    group = None
    if group_idx is not None:
        try:
            group = _group_sizes(path, extra["group"], np.arange(n))
        except DataFormatError:
            return None
    feature_names = None if names is None else [names[i] for i in keep]
    return LoadedData(
        X=X,
        label=extra.get("label"),
        weight=extra.get("weight"),
        group=group,
        feature_names=feature_names,
    )


def _header_names(first, sep):
    names = [s.strip() for s in _split(first, sep)]
    if names:
        names[0] = names[0].lstrip("\ufeff")  # read_header_line keeps the file's mark
    return names


def _take_columns(values, cols, block=1 << 13):
    """``values[:, cols]`` as a C-order array, copied in blocks of rows: ``values`` is
    Fortran-order, and a block of every column stays in cache while it is
    transposed (one fancy-indexing copy of the whole array reads each column
    once per output cache line)."""
    n = values.shape[0]
    out = np.empty((n, len(cols)), np.float64)
    if n == 0 or not cols:
        return out
    if cols == list(range(cols[0], cols[0] + len(cols))):
        src, cols = values[:, cols[0] : cols[0] + len(cols)], slice(None)
    else:
        src = values
    for lo in range(0, n, block):
        out[lo : lo + block] = src[lo : lo + block, cols]
    return out


def _check_finite(path, data, arr, line_no, what, sep, col, base=0, nonnegative=False):
    """The first missing or non-finite value of ``arr`` (or negative one, with
    ``nonnegative``: weights, as the Dataset wants them) raises, naming its line."""
    ok = np.isfinite(arr)
    if nonnegative:
        ok &= ~(arr < 0)
    bad = np.flatnonzero(~ok)
    if len(bad):
        ln = int(line_no[bad[0]])
        text = _line_at(data, ln)
        fields = _split(text, sep)
        field = fields[col].strip() if col < len(fields) else text.strip()
        problem = "negative" if np.isfinite(arr[bad[0]]) else "missing or non-finite"
        raise _error(path, ln + base, f"{problem} {what}", field, text)


# What pandas' C parser takes for a number: ASCII digits, an optional exponent,
# blanks around it; or, with no blanks, inf/infinity in any case and a sign, or a
# missing-value token (NA_TOKENS).  (Python's float() also takes '1_000', other
# digits and other spaces, which pandas rejects.)  Every part is unambiguous (no two ways to match the same text), so a line that
# does not match fails in linear time.
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
# inf and the missing-value tokens: pandas takes no blanks around these
_WORDS = r"[+-]?(?i:infinity|inf|nan|null|na)|N/A|None"


def _field_regex(sep):
    """A regex of one valid field; the padding never holds the separator, so a
    line regex built from it cannot backtrack between fields."""
    if sep is None:
        pad = "[\\n\\x0b\\x0c]"  # blanks separate the fields of whitespace text
    else:
        pad = "[" + "".join(re.escape(c) for c in "\t\n\x0b\x0c\r " if c != sep) + "]"
    empty = "" if sep is None else "|"  # an empty field exists only between separators
    return f"(?:{_WORDS}|{pad}*{_NUMBER}{pad}*{empty})"


def _rescan_delimited(path, data, sep, line_no, exc, base=0, columns=None):
    """The DataFormatError for a file pandas rejected: the first row with a field that
    is neither a number nor a missing-value token (in pandas' terms), else ``exc``.
    Only the fields of ``columns`` (file column indices; None: all) count: pandas
    converts no other (ignored columns, and the label when predicting)."""
    one = _field_regex(sep)
    field_re = re.compile(one)
    if sep is None:
        line_re = re.compile(f"[ \\t\\r]*{one}(?:[ \\t\\r]+{one})*[ \\t\\r]*")
    else:
        line_re = re.compile(f"{one}(?:{re.escape(sep)}{one})*")
    lines = _lines(data)
    for ln in line_no:
        text = lines[ln - 1]
        if line_re.fullmatch(text.rstrip("\r")):
            continue
        fields = _split(text, sep)
        for i in range(len(fields)) if columns is None else columns:
            field = fields[i] if i < len(fields) else ""
            if not field_re.fullmatch(field):
                error = _error(
                    path, int(ln) + base, "cannot parse number", field.strip() or field, text
                )
                if int(ln) + base == 1:  # column names? (LightGBM: header=true)
                    error = DataFormatError(f"{error} (a header line? give header=true)")
                return error
        if columns is None:
            break  # fields fine one by one: should not happen; the generic message then
    return DataFormatError(f"{path}: {exc}")


def _group_sizes(path, qid, line_no, data=None, base=0):
    """Run lengths of contiguous query ids; a query id seen again later is an error.

    ``line_no[i]`` is the 1-based line of row ``i`` in ``data`` (the file's bytes from
    line ``base + 1`` on), which, when given, lets the message quote that line.
    """
    if len(qid) == 0:
        return np.zeros(0, np.int64)
    change = np.flatnonzero(qid[1:] != qid[:-1]) + 1
    starts = np.concatenate(([0], change))
    ids = qid[starts]
    if len(np.unique(ids)) != len(ids):
        seen = set()
        for s, q in zip(starts, ids):
            if q in seen:
                ln = int(line_no[s])
                where = "" if data is None else f" in {_clip(_line_at(data, ln))!r}"
                raise DataFormatError(
                    f"{path}, line {ln + base}: query id {_fmt_id(q)!r} appears again "
                    f"after other queries (rows of a query must be "
                    f"contiguous){where}"
                )
            seen.add(q)
    return np.diff(np.append(starts, len(qid))).astype(np.int64)


def _fmt_id(q):
    q = float(q)
    return str(int(q)) if q.is_integer() else str(q)


# --------------------------------------------------------------------------------------
# LibSVM


_INT64_MAX = 2**63 - 1
_CAP_NOTE = (
    f"above the limit of {MAX_SPARSE_COLUMNS} columns (LibSVM rows are binned "
    "as a dense matrix: dgbdt.readers.MAX_SPARSE_COLUMNS)"
)


def _read_libsvm(path, data, *, zero_based, n_features, first_line=1, features_only=False):
    from sklearn.datasets import load_svmlight_file

    if n_features is not None and int(n_features) > MAX_SPARSE_COLUMNS:
        raise ValueError(f"n_features={n_features} for {path} is {_CAP_NOTE}")

    def exact():
        return _parse_libsvm_python(path, data, zero_based, n_features, first_line, features_only)

    try:
        # query_id=False: scikit-learn still skips a leading 'qid:' token, but does
        # not collect the ids with one np.append per row (quadratic in the rows).
        X, y = load_svmlight_file(
            io.BytesIO(data),
            n_features=n_features,
            zero_based=bool(zero_based),
            query_id=False,
            dtype=np.float64,
        )
    except Exception:  # noqa: BLE001 - the Python scan names the line, or parses it
        return exact()
    # Beyond the cap, or an index repeated on a line (scikit-learn refuses those
    # today; not every version did): the exact parser names the line.
    if X.shape[1] > MAX_SPARSE_COLUMNS or not X.has_canonical_format:
        return exact()
    if not features_only and not np.all(np.isfinite(y)):
        return exact()
    group = None
    # scikit-learn skips any second token starting with 'qid'; rows with one are found
    # by the scan below.  (b"q" in data is a memchr, 30x faster than b"qid" in data.)
    if b"q" in data:
        found = _libsvm_groups(path, data, len(y), features_only)
        if found is False:
            return exact()
        group = found
    X = sp.csr_matrix(X, dtype=np.float64)
    if n_features is None and X.nnz == 0:
        X = sp.csr_matrix((X.shape[0], 0))  # no pairs: no columns (scikit-learn says 1)
    label = None if features_only else np.asarray(y, np.float64)
    return LoadedData(X=X, label=label, group=group)


def _libsvm_groups(path, data, n_rows, features_only):
    """Query sizes from the ``qid:`` tokens of LibSVM ``data`` (None: no qids), or
    False where the exact parser must decide (a bad or missing qid, a query seen
    again).  ``features_only``: qids are not used, only checked to be tokens the
    exact parser skips too."""
    from .native.text import LINE_BAD_QID, LINE_BLANK, LINE_QID, libsvm_qids

    n_lines = count_lines(data)
    qids = np.zeros(n_lines, np.int64)
    kinds = np.zeros(n_lines, np.int8)
    libsvm_qids(np.frombuffer(data, np.uint8), qids, kinds)
    rows = kinds != LINE_BLANK
    row_kinds = kinds[rows]
    if len(row_kinds) != n_rows or np.any(row_kinds == LINE_BAD_QID):
        return False
    if features_only:
        return None
    with_qid = row_kinds == LINE_QID
    if with_qid.all() and n_rows:
        try:
            return _group_sizes(path, qids[rows], np.arange(n_rows))
        except DataFormatError:
            return False
    if with_qid.any():
        return False  # rows with and without qid: the exact parser names the line
    return None


def _parse_libsvm_python(path, data, zero_based, n_features, first_line=1, features_only=False):
    """Slow exact parser: raises DataFormatError at the first bad line, else parses.
    ``first_line`` is the file line number of the first line of ``data``."""
    offset = 0 if zero_based else 1
    labels, indptr, indices, values, qids, qid_lines = [], [0], [], [], [], []
    for lineno, raw in enumerate(_lines(data), start=first_line):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        rest = text.split()
        if not features_only:
            labels.append(_libsvm_label(path, lineno, rest[0], raw))
            rest = rest[1:]
        elif ":" not in rest[0]:
            rest = rest[1:]  # the label, unread (a line may also have none)
        if rest and rest[0].startswith("qid:"):
            if not features_only:  # predict uses no queries: skipped unread
                qids.append(_libsvm_qid(path, lineno, rest[0], raw))
                qid_lines.append(lineno)
            rest = rest[1:]
        elif qids:
            raise _error(path, lineno, "missing qid: (earlier rows have one) in", _clip(raw))
        _libsvm_pairs(path, lineno, rest, raw, offset, n_features, indices, values)
        indptr.append(len(indices))
    if qids and len(qids) != len(labels):
        # a row without qid came before the first row with one
        raise DataFormatError(
            f"{path}, line {qid_lines[0]}: qid: appears after rows without "
            f"one in {'qid:' + str(qids[0])!r}"
        )
    ncol = n_features if n_features is not None else (max(indices) + 1 if indices else 0)
    X = sp.csr_matrix(
        (
            np.asarray(values, np.float64),
            np.asarray(indices, np.int64),
            np.asarray(indptr, np.int64),
        ),
        shape=(len(indptr) - 1, ncol),
    )
    X.sort_indices()  # no index repeats on a line (checked); explicit zeros are kept
    group = None
    if qids:
        base = first_line - 1
        group = _group_sizes(
            path, np.asarray(qids, np.int64), np.asarray(qid_lines) - base, data, base
        )
    label = None if features_only else np.asarray(labels, np.float64)
    return LoadedData(X=X, label=label, group=group)


def _libsvm_label(path, lineno, first, raw):
    if ":" in first:
        raise _error(path, lineno, "missing label before", first, raw)
    try:
        label = _to_float(first)
    except ValueError:
        raise _error(path, lineno, "cannot parse label", first, raw) from None
    if not np.isfinite(label):
        raise _error(path, lineno, "non-finite label", first, raw)
    return label


def _libsvm_qid(path, lineno, token, raw):
    try:
        qid = int(token[4:])
        if abs(qid) > _INT64_MAX:
            raise ValueError
    except ValueError:
        raise _error(path, lineno, "cannot parse query id", token, raw) from None
    return qid


def _libsvm_pairs(path, lineno, tokens, raw, offset, n_features, indices, values):
    """Append the columns and values of one line's ``idx:val`` tokens to ``indices``
    and ``values``; the first bad token (unparsable, out of range, repeated) raises."""
    start = len(indices)
    for tok in tokens:
        idx_s, colon, val_s = tok.partition(":")
        try:
            if not colon:
                raise ValueError
            idx = int(idx_s)
            val = _to_float(val_s)
        except ValueError:
            raise _error(path, lineno, "cannot parse index:value pair", tok, raw) from None
        col = idx - offset
        if col < 0:
            what = "negative feature index" if idx < 0 else "feature index 0 in a one-based file"
            raise _error(path, lineno, what, tok, raw)
        if n_features is not None and col >= n_features:
            raise _error(path, lineno, f"feature index beyond n_features={n_features}", tok, raw)
        if col >= MAX_SPARSE_COLUMNS:
            raise _error(path, lineno, f"feature index {idx} {_CAP_NOTE}:", tok, raw)
        indices.append(col)
        values.append(val)
    if len(indices) - start > 1:
        seen = set()
        for k in range(start, len(indices)):
            if indices[k] in seen:  # LightGBM would sum them, scikit-learn refuses
                raise _error(
                    path,
                    lineno,
                    f"feature index {indices[k] + offset} repeated on the line:",
                    tokens[k - start],
                    raw,
                )
            seen.add(indices[k])


# --------------------------------------------------------------------------------------
# side files


def _to_float(token):
    """A number of a side file or LibSVM text: Python's float(), and the missing-value
    tokens of delimited text (NaN), so that ``NA`` reads alike everywhere."""
    return math.nan if token in _NA_SET else float(token)


def _read_side_values(side, what):
    """Rows of floats of a side file, with their 1-based line numbers.  Every value
    must be finite: a NaN init score, say, would train and then fail to save.  A
    byte order mark may start the file (as a data or config file); lines end at
    ``\n``, ``\r\n`` or ``\r`` (Python's universal newlines)."""
    rows, line_nos = [], []
    with open(side, encoding="utf-8-sig", errors="replace") as fh:
        for lineno, raw in enumerate(fh, start=1):
            tokens = raw.replace(",", " ").split()
            if not tokens:
                continue
            row = []
            for tok in tokens:
                try:
                    value = _to_float(tok)
                except ValueError:
                    raise _error(side, lineno, "cannot parse number", tok, raw) from None
                if not math.isfinite(value):  # nan, inf, 1e999
                    raise _error(side, lineno, f"non-finite {what}", tok, raw)
                row.append(value)
            rows.append(row)
            line_nos.append(lineno)
    return rows, line_nos


def _per_row_values(side, path, n, what, width=None):
    """(n, k) values of a side file with one line per data row of ``path``;
    every line holds ``width`` values (or as many as the first line)."""
    rows, lines = _read_side_values(side, what)
    if len(rows) != n:
        raise DataFormatError(
            f"{side}: has {len(rows)} lines, expected one per row of {path} ({n} rows)"
        )
    k = width or (len(rows[0]) if rows else 1)
    for r, ln in zip(rows, lines):
        if len(r) != k:
            raise _error(side, ln, f"expected {k} value(s) per line, got", " ".join(map(str, r)))
    return np.array(rows, np.float64).reshape(n, k)


def _side_file(path, suffix, what):
    """``path + suffix`` when it exists, None when not; a directory, FIFO or device
    there is an error (never opened: a FIFO would block), as is a broken link."""
    side = path + suffix
    if not os.path.lexists(side):
        return None
    return check_regular_file(side, what)


def _weights(side, path, n_total):
    weight = _per_row_values(side, path, n_total, "weight", width=1)[:, 0]
    negative = np.flatnonzero(weight < 0)
    if len(negative):
        _, lines = _read_side_values(side, "weight")
        raise _error(side, lines[int(negative[0])], "negative weight", _fmt_id(weight[negative[0]]))
    return weight


def read_side_files(path, out, row_offset=0, n_total=None):
    """Fill ``out``'s weight / init score / groups from ``<path>.weight|.init|.query``.

    ``out`` may hold rows ``row_offset ...`` of the ``n_total`` rows of ``path`` (one
    rank's part): side files describe the whole file and are sliced.  Query groups
    are kept only when ``out`` holds the whole file (a part may cut a query).
    """
    path = os.fspath(path)
    n = out.X.shape[0]
    n_total = n if n_total is None else n_total
    rows = slice(row_offset, row_offset + n)
    side = None if out.weight is not None else _side_file(path, ".weight", "weight file")
    if side is not None:
        out.weight = _weights(side, path, n_total)[rows].copy()
    side = None if out.init_score is not None else _side_file(path, ".init", "init score file")
    if side is not None:
        init = _per_row_values(side, path, n_total, "init score")[rows]
        out.init_score = init[:, 0].copy() if init.shape[1] == 1 else init
    side = None if out.group is not None else _side_file(path, ".query", "query file")
    if side is not None:
        rows, lines = _read_side_values(side, "query size")
        sizes = []
        for r, ln in zip(rows, lines):
            if len(r) != 1 or not float(r[0]).is_integer() or r[0] < 0:
                raise _error(
                    side,
                    ln,
                    "expected one non-negative integer query size per line, got",
                    " ".join(map(str, r)),
                )
            sizes.append(int(r[0]))
        if sum(sizes) != n_total:
            raise DataFormatError(
                f"{side}: query sizes ({len(sizes)} lines) sum to {sum(sizes)}, "
                f"expected the {n_total} rows of {path}"
            )
        if n == n_total:
            out.group = np.array(sizes, np.int64)
