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
  a CSR matrix with ``max index + 1`` (or ``n_features``) columns.
* Side files as LightGBM: ``<path>.weight``, ``<path>.init`` (one value per line,
  or K per line for multiclass) and ``<path>.query`` (query sizes) are read when
  present and no column gives the same thing.

Fast paths are C parsers (``pandas.read_csv``, ``sklearn``'s
``load_svmlight_file``); on any problem the file is re-scanned in Python only to
raise a :class:`DataFormatError` that names the file, the 1-based line number
(counting header, blank and comment lines) and the offending text.
"""
from __future__ import annotations

import gzip
import io
import os
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["DataFormatError", "LoadedData", "read_data", "sniff_format", "parse_text",
           "read_part", "split_parts", "count_lines", "is_gzip", "read_header_line",
           "read_side_files"]

NA_TOKENS = ("", "NA", "N/A", "na", "nan", "NaN", "NAN", "-nan", "null", "NULL", "None")
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
    msg = f"{path}, line {lineno}: {what} {text!r}"
    if line is not None and line.strip() != text:
        msg += f" in {_clip(line)!r}"
    return DataFormatError(msg)


def _read_bytes(path):
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"data file not found: {path!r}")
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def _read_head(path, n_bytes=1 << 16):
    """The first ``n_bytes`` of a file's content (decompressed when gzipped)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"data file not found: {path!r}")
    with open(path, "rb") as fh:
        start = fh.read(2)
        fh.seek(0)
        if start == b"\x1f\x8b":
            with gzip.open(fh) as gz:
                return gz.read(n_bytes)
        return fh.read(n_bytes)


def _lines(data):
    """Decoded lines (without newline) of the whole file, for the slow paths."""
    return data.decode("utf-8", errors="replace").split("\n")


# --------------------------------------------------------------------------------------
# entry point


def read_data(path, *, header=False, label_column="0", weight_column=None, group_column=None,
              ignore_columns=(), zero_based=True, n_features=None, fmt="auto",
              keep_features=None) -> LoadedData:
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

    Returns
    -------
    LoadedData

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    DataFormatError
        Malformed content (file, 1-based line number and offending text in the message).
    """
    path = os.fspath(path)
    fmt, sep = sniff_format(path, fmt, header)
    out = parse_text(path, _read_bytes(path), fmt=fmt, sep=sep, header=header,
                     label_column=label_column, weight_column=weight_column,
                     group_column=group_column, ignore_columns=ignore_columns,
                     zero_based=zero_based, n_features=n_features, keep_features=keep_features)
    read_side_files(path, out)
    return out


def sniff_format(path, fmt="auto", header=False):
    """``(fmt, sep)`` of a file from its first 64 KiB: ``"libsvm"`` or ``"delimited"``
    with the delimiter (``None``: runs of whitespace).  Every rank of a sharded read
    decides from the same bytes, so all parse their parts alike."""
    if fmt not in _FORMATS:
        raise ValueError(f"fmt must be one of {_FORMATS}, got {fmt!r}")
    head = _read_head(path)
    if fmt == "auto":
        fmt = "libsvm" if _looks_like_libsvm(head) else "delimited"
    if fmt == "libsvm":
        return "libsvm", None
    sep = {"csv": ",", "tsv": "\t"}.get(fmt)
    if sep is None:
        lines = head.decode("utf-8", errors="replace").split("\n")
        first_data = next((ln for ln in lines[1 if header else 0:] if ln.strip()), None)
        sep = _detect_sep(first_data if first_data is not None else (lines[0] if lines else ""))
    return "delimited", sep


def parse_text(path, data, *, fmt, sep, header=False, header_text=None, first_line=1,
               label_column="0", weight_column=None, group_column=None, ignore_columns=(),
               zero_based=True, n_features=None, keep_features=None) -> LoadedData:
    """Parse the bytes ``data`` of (part of) ``path``; no side files.

    ``first_line`` is the file line number of the first line of ``data`` (a part of a
    file read by one rank starts anywhere); ``header_text`` is the header line when the
    part does not hold it.
    """
    if fmt == "libsvm":
        out = _read_libsvm(path, data, zero_based=zero_based, n_features=n_features,
                           first_line=first_line)
        if keep_features is not None:
            out.X = out.X[:, np.asarray(keep_features, np.int64)].tocsr()
        return out
    return _read_delimited(path, data, sep=sep, header=header, header_text=header_text,
                           first_line=first_line, label_column=label_column,
                           weight_column=weight_column, group_column=group_column,
                           ignore_columns=ignore_columns, keep_features=keep_features)


# --------------------------------------------------------------------------------------
# parts of a file: every line belongs to exactly one part


def part_bounds(path, part, n_parts):
    """Byte range ``[start, end)`` of part ``part`` of ``n_parts`` of a file, cut at line
    boundaries: the part holds the lines that *start* in its share of the bytes
    ``[size * part // n_parts, size * (part + 1) // n_parts)``.  Reads only a few
    bytes around the two cut points."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        return (_line_start_at_or_after(fh, size * part // n_parts, size),
                _line_start_at_or_after(fh, size * (part + 1) // n_parts, size))


def _line_start_at_or_after(fh, pos, size, block=1 << 16):
    if pos <= 0 or pos >= size:
        return min(max(pos, 0), size)
    fh.seek(pos - 1)      # pos starts a line exactly when the byte before it is a newline
    where = pos - 1
    while True:
        chunk = fh.read(block)
        if not chunk:
            return size
        i = chunk.find(b"\n")
        if i >= 0:
            return where + i + 1
        where += len(chunk)


def read_part(path, part, n_parts):
    """The bytes of part ``part`` of ``n_parts`` of a plain (not gzipped) file."""
    start, end = part_bounds(path, part, n_parts)
    with open(path, "rb") as fh:
        fh.seek(start)
        return fh.read(end - start)


def split_parts(data, n_parts):
    """``data`` cut into ``n_parts`` by the rule of :func:`part_bounds` (for gzip input,
    which one rank decompresses and scatters)."""
    size = len(data)

    def line_start(pos):
        if pos <= 0 or pos >= size:
            return min(max(pos, 0), size)
        i = data.find(b"\n", pos - 1)
        return size if i < 0 else i + 1

    cuts = [line_start(size * p // n_parts) for p in range(n_parts + 1)]
    return [data[cuts[p]:cuts[p + 1]] for p in range(n_parts)]


def count_lines(data):
    """Number of lines in ``data`` (a last line without a newline counts)."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def is_gzip(path):
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def read_header_line(path):
    """The first line of a file (gzip or not), for the column names of a part."""
    head = _read_head(path)
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


def _split(line, sep):
    line = line.rstrip("\r")
    return line.split() if sep is None else line.split(sep)


def _field_counts(data, sep):
    """Per line of ``data``: number of fields (0 for a blank line). Vectorised."""
    buf = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(buf == 10)
    if len(buf) and buf[-1] != 10:
        ends = np.append(ends, len(buf))
    n_lines = len(ends)
    space = (buf == 32) | (buf == 9) | (buf == 13) | (buf == 10)
    if sep is None:
        prev = np.empty_like(space)
        prev[0:1] = True
        prev[1:] = space[:-1]
        starts = np.flatnonzero(~space & prev)
        return np.bincount(np.searchsorted(ends, starts), minlength=n_lines)[:n_lines]
    seps = np.flatnonzero(buf == ord(sep))
    counts = np.bincount(np.searchsorted(ends, seps), minlength=n_lines)[:n_lines] + 1
    # blank: the line holds nothing but an optional '\r'
    line_starts = np.concatenate(([0], ends[:-1] + 1)) if n_lines else ends
    length = ends - line_starts
    cr_end = np.zeros(n_lines, bool)
    nonempty = length > 0
    cr_end[nonempty] = buf[ends[nonempty] - 1] == 13
    blank = (length - cr_end) == 0
    counts[blank] = 0
    return counts


def _resolve_column(spec, names, what, label_idx, path):
    """File column index of a column spec, or None."""
    if spec is None or (isinstance(spec, str) and spec.strip() == ""):
        return None
    if isinstance(spec, str) and spec.startswith("name:"):
        name = spec[5:]
        if names is None:
            raise ValueError(f"{what}={spec!r} needs header=True ({path})")
        if name not in names:
            raise ValueError(f"{what}={spec!r}: no column {name!r} in the header of {path}; "
                             f"columns are {names}")
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
            return [_resolve_column("name:" + s.strip(), names, "ignore_columns", label_idx, path)
                    for s in spec[5:].split(",") if s.strip()]
        spec = [s for s in spec.split(",") if s.strip()]
    return [_resolve_column(s, names, "ignore_columns", label_idx, path) for s in spec]


def _read_delimited(path, data, *, sep, header, label_column, weight_column, group_column,
                    ignore_columns, header_text=None, first_line=1, keep_features=None):
    import pandas as pd

    base = first_line - 1          # line numbers in messages count from the file's start
    counts = _field_counts(data, sep)
    line_no = np.flatnonzero(counts > 0) + 1  # 1-based line of each row within ``data``
    names = None
    header_in_data = header and header_text is None
    if header_in_data:
        first = data[:1 << 16].split(b"\n", 1)[0].decode("utf-8", errors="replace")
        if len(line_no) == 0 or line_no[0] != 1:
            raise _error(path, first_line, "expected a header line, got", first)
        names = [s.strip() for s in _split(first, sep)]
        line_no = line_no[1:]
    elif header:
        names = [s.strip() for s in _split(header_text, sep)]
    if names is not None:
        n_cols = len(names)
    elif len(line_no):
        n_cols = int(counts[line_no[0] - 1])
    else:
        n_cols = 0
    row_counts = counts[line_no - 1]
    bad = np.flatnonzero(row_counts != n_cols)
    if len(bad):
        ln = int(line_no[bad[0]])
        text = _lines(data)[ln - 1]
        raise _error(path, ln + base, f"expected {n_cols} fields, got {int(row_counts[bad[0]])}:",
                     _clip(text))

    label_idx = _resolve_column(label_column, names, "label_column", None, path)
    weight_idx = _resolve_column(weight_column, names, "weight_column", label_idx, path)
    group_idx = _resolve_column(group_column, names, "group_column", label_idx, path)
    ignore = _resolve_ignore(ignore_columns, names, label_idx, path)
    for what, idx in (("label_column", label_idx), ("weight_column", weight_idx),
                      ("group_column", group_idx), ("ignore_columns", max(ignore, default=None))):
        if idx is not None and n_cols and idx >= n_cols:
            raise ValueError(f"{what}: column {idx} does not exist, {path} has {n_cols} columns")
    drop = {i for i in (label_idx, weight_idx, group_idx, *ignore) if i is not None}
    keep = [i for i in range(n_cols) if i not in drop]
    if keep_features is not None:
        keep = [keep[i] for i in keep_features]
    # Columns to convert, in file order; the others are parsed but never stored.
    used = sorted({*keep, *(i for i in (label_idx, weight_idx, group_idx) if i is not None)})
    position = {c: i for i, c in enumerate(used)}

    if len(line_no) == 0:
        values = np.zeros((0, len(used)))
    else:
        try:
            frame = pd.read_csv(
                io.BytesIO(data), sep=r"\s+" if sep is None else sep, header=None,
                skiprows=1 if header_in_data else 0, dtype=np.float64, engine="c",
                na_values=list(NA_TOKENS), keep_default_na=False, skip_blank_lines=True,
                quoting=3, comment=None, usecols=used if len(used) < n_cols else None)
        except (ValueError, pd.errors.ParserError) as exc:
            raise _rescan_delimited(path, data, sep, line_no, exc, base) from None
        values = frame.to_numpy(dtype=np.float64)
        if values.shape != (len(line_no), len(used)):
            raise DataFormatError(f"{path}: read {values.shape} values, expected "
                                  f"{(len(line_no), len(used))}")

    def column(idx):
        return None if idx is None else np.ascontiguousarray(values[:, position[idx]])

    label = column(label_idx)
    if label is not None:
        _check_finite(path, data, label, line_no, "label", sep, label_idx, base)
    weight = column(weight_idx)
    if weight is not None:
        _check_finite(path, data, weight, line_no, "weight", sep, weight_idx, base)
    group = None
    if group_idx is not None:
        qid = column(group_idx)
        _check_finite(path, data, qid, line_no, "query id", sep, group_idx, base)
        group = _group_sizes(path, qid, line_no, data, base)
    X = np.ascontiguousarray(values[:, [position[c] for c in keep]])
    feature_names = None if names is None else [names[i] for i in keep]
    return LoadedData(X=X, label=label, weight=weight, group=group, feature_names=feature_names)


def _check_finite(path, data, arr, line_no, what, sep, col, base=0):
    bad = np.flatnonzero(~np.isfinite(arr))
    if len(bad):
        ln = int(line_no[bad[0]])
        text = _lines(data)[ln - 1]
        field = _split(text, sep)[col].strip()
        raise _error(path, ln + base, f"missing or non-finite {what}", field, text)


def _rescan_delimited(path, data, sep, line_no, exc, base=0):
    lines = _lines(data)
    for ln in line_no:
        text = lines[ln - 1]
        for field in _split(text, sep):
            tok = field.strip()
            if tok in _NA_SET:
                continue
            try:
                float(tok)
            except ValueError:
                return _error(path, int(ln) + base, "cannot parse number", tok, text)
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
                where = "" if data is None else f" in {_clip(_lines(data)[ln - 1])!r}"
                raise DataFormatError(f"{path}, line {ln + base}: query id {_fmt_id(q)!r} appears again "
                                      f"after other queries (rows of a query must be "
                                      f"contiguous){where}")
            seen.add(q)
    return np.diff(np.append(starts, len(qid))).astype(np.int64)


def _fmt_id(q):
    q = float(q)
    return str(int(q)) if q.is_integer() else str(q)


# --------------------------------------------------------------------------------------
# LibSVM


def _read_libsvm(path, data, *, zero_based, n_features, first_line=1):
    from sklearn.datasets import load_svmlight_file

    has_qid = b"qid:" in data
    try:
        X, y, qid = load_svmlight_file(io.BytesIO(data), n_features=n_features,
                                       zero_based=bool(zero_based), query_id=True,
                                       dtype=np.float64)
    except Exception:  # noqa: BLE001 - the Python scan names the line, or parses it
        return _parse_libsvm_python(path, data, zero_based, n_features, first_line)
    if not np.all(np.isfinite(y)) or (has_qid and len(qid) != len(y)):
        return _parse_libsvm_python(path, data, zero_based, n_features, first_line)
    group = None
    if has_qid:
        try:
            group = _group_sizes(path, qid, np.arange(len(qid)))
        except DataFormatError:
            return _parse_libsvm_python(path, data, zero_based, n_features, first_line)
    X = sp.csr_matrix(X, dtype=np.float64)
    return LoadedData(X=X, label=np.asarray(y, np.float64), group=group)


def _parse_libsvm_python(path, data, zero_based, n_features, first_line=1):
    """Slow exact parser: raises DataFormatError at the first bad line, else parses.
    ``first_line`` is the file line number of the first line of ``data``."""
    offset = 0 if zero_based else 1
    labels, indptr, indices, values, qids, qid_lines = [], [0], [], [], [], []
    for lineno, raw in enumerate(_lines(data), start=first_line):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        tokens = text.split()
        first = tokens[0]
        if ":" in first:
            raise _error(path, lineno, "missing label before", first, raw)
        try:
            label = float(first)
        except ValueError:
            raise _error(path, lineno, "cannot parse label", first, raw) from None
        if not np.isfinite(label):
            raise _error(path, lineno, "non-finite label", first, raw)
        rest = tokens[1:]
        if rest and rest[0].startswith("qid:"):
            try:
                qids.append(int(rest[0][4:]))
            except ValueError:
                raise _error(path, lineno, "cannot parse query id", rest[0], raw) from None
            qid_lines.append(lineno)
            rest = rest[1:]
        elif qids:
            raise _error(path, lineno, "missing qid: (earlier rows have one) in", _clip(raw))
        for tok in rest:
            idx_s, colon, val_s = tok.partition(":")
            try:
                if not colon:
                    raise ValueError
                idx = int(idx_s)
                val = float(val_s)
            except ValueError:
                raise _error(path, lineno, "cannot parse index:value pair", tok, raw) from None
            col = idx - offset
            if col < 0:
                what = "negative feature index" if idx < 0 else "feature index 0 in a one-based file"
                raise _error(path, lineno, what, tok, raw)
            if n_features is not None and col >= n_features:
                raise _error(path, lineno, f"feature index beyond n_features={n_features}", tok,
                             raw)
            indices.append(col)
            values.append(val)
        labels.append(label)
        indptr.append(len(indices))
    if qids and len(qids) != len(labels):
        # a row without qid came before the first row with one
        raise DataFormatError(f"{path}, line {qid_lines[0]}: qid: appears after rows without "
                              f"one in {'qid:' + str(qids[0])!r}")
    ncol = n_features if n_features is not None else (max(indices) + 1 if indices else 0)
    X = sp.csr_matrix((np.asarray(values, np.float64), np.asarray(indices, np.int64),
                       np.asarray(indptr, np.int64)), shape=(len(labels), ncol))
    X.sum_duplicates()  # sorts indices; keeps explicit zeros
    group = None
    if qids:
        base = first_line - 1
        group = _group_sizes(path, np.asarray(qids, np.float64), np.asarray(qid_lines) - base,
                             data, base)
    return LoadedData(X=X, label=np.asarray(labels, np.float64), group=group)


# --------------------------------------------------------------------------------------
# side files


def _read_side_values(side):
    """Rows of floats of a side file, with their 1-based line numbers."""
    rows, line_nos = [], []
    with open(side, encoding="utf-8", errors="replace") as fh:
        for lineno, raw in enumerate(fh, start=1):
            tokens = raw.replace(",", " ").split()
            if not tokens:
                continue
            row = []
            for tok in tokens:
                try:
                    row.append(float(tok))
                except ValueError:
                    raise _error(side, lineno, "cannot parse number", tok, raw) from None
            rows.append(row)
            line_nos.append(lineno)
    return rows, line_nos


def _per_row_values(side, path, n, width=None):
    """(n, k) values of a side file with one line per data row of ``path``;
    every line holds ``width`` values (or as many as the first line)."""
    rows, lines = _read_side_values(side)
    if len(rows) != n:
        raise DataFormatError(f"{side}: has {len(rows)} lines, expected one per row of "
                              f"{path} ({n} rows)")
    k = width or (len(rows[0]) if rows else 1)
    for r, ln in zip(rows, lines):
        if len(r) != k:
            raise _error(side, ln, f"expected {k} value(s) per line, got", " ".join(map(str, r)))
    return np.array(rows, np.float64).reshape(n, k)


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
    side = path + ".weight"
    if out.weight is None and os.path.isfile(side):
        out.weight = _per_row_values(side, path, n_total, width=1)[rows, 0].copy()
    side = path + ".init"
    if out.init_score is None and os.path.isfile(side):
        init = _per_row_values(side, path, n_total)[rows]
        out.init_score = init[:, 0].copy() if init.shape[1] == 1 else init
    side = path + ".query"
    if out.group is None and os.path.isfile(side):
        rows, lines = _read_side_values(side)
        sizes = []
        for r, ln in zip(rows, lines):
            if len(r) != 1 or not float(r[0]).is_integer() or r[0] < 0:
                raise _error(side, ln, "expected one non-negative integer query size per line, got",
                             " ".join(map(str, r)))
            sizes.append(int(r[0]))
        if sum(sizes) != n_total:
            raise DataFormatError(f"{side}: query sizes ({len(sizes)} lines) sum to {sum(sizes)}, "
                                  f"expected the {n_total} rows of {path}")
        if n == n_total:
            out.group = np.array(sizes, np.int64)
