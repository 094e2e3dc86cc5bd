"""Reading a whole file or the bytes of a part: the format, then its reader."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .columns import ColumnSpec
from .delimited import read_delimited
from .errors import no_rows_error
from .fields import detect_sep
from .filebytes import BOM, normalize_line_ends, read_file_bytes, read_head
from .libsvm import looks_like_libsvm, read_libsvm
from .sidefiles import read_side_files
from .values import LoadedData

if TYPE_CHECKING:
    from _typeshed import StrPath

    #: A column option: an index (as text or an int) or "name:colname".
    _Column = int | str | None

_FORMATS = ("auto", "libsvm", "csv", "tsv", "delimited")


def read_data(
    path: StrPath,
    *,
    header: bool = False,
    label_column: _Column = "0",
    weight_column: _Column = None,
    group_column: _Column = None,
    ignore_columns: str | Sequence[int | str] | None = (),
    zero_based: bool = True,
    n_features: int | None = None,
    fmt: str = "auto",
    keep_features: Sequence[int] | np.ndarray | None = None,
    side_files: bool = True,
    features_only: bool = False,
    need_rows: bool = False,
) -> LoadedData:
    """Read a CSV/TSV/whitespace or LibSVM text file (optionally gzipped).

    Parameters: ``header`` (delimited text: the first line holds the column names);
    ``label_column`` (column index or ``"name:col"``; None for no label, delimited
    text); ``weight_column``, ``group_column`` (index *not counting the label column*,
    as LightGBM, or ``"name:col"``; the group column holds query ids, and rows of a
    query must be contiguous); ``ignore_columns`` (indices not counting the label
    column, ``"1,2"`` or ``"name:a,b"``); ``zero_based`` (LibSVM: whether feature
    indices start at 0); ``n_features`` (LibSVM: number of columns, default max index
    + 1); ``fmt`` (``"auto"``, ``"libsvm"``, ``"csv"``, ``"tsv"`` or ``"delimited"``);
    ``keep_features`` (keep only these columns of ``X``: feature-parallel training
    reads its own block); ``side_files`` (read ``<path>.weight``, ``.init``,
    ``.query`` and ``.position`` when they exist; not for prediction, which uses none of them; one that
    exists but is not a regular file, a directory or a FIFO, is an error, not
    skipped); ``features_only`` (prediction: only ``X`` is used; the label, weight and
    query columns are left out of ``X`` unconverted and unchecked, so a label ``abc``,
    ``inf`` or empty does not stop prediction; LibSVM labels and ``qid:`` tokens are
    skipped, and a line may lack its label; ``label``, ``weight``, ``group`` are None);
    ``need_rows`` (the whole file is training or validation data: no data rows is an
    error naming the file, as in LightGBM; prediction and a rank's share may be empty).
    A group column or ``qid:`` fields also give ``query_ids`` (one per query).

    Returns a :class:`LoadedData`.  Raises ``FileNotFoundError`` when the file does
    not exist; ``ValueError`` when the file (or a side file) is not a regular file
    (a directory, FIFO or device); :class:`DataFormatError` for malformed content
    (file, 1-based line number and offending text in the message), including a
    LibSVM index of ``MAX_SPARSE_COLUMNS`` or more, a feature index repeated on one
    line, and NaN/inf in a side file.
    """
    path = os.fspath(path)
    fmt, sep = sniff_format(path, fmt, header)
    spec = ColumnSpec(
        label_column, weight_column, group_column, ignore_columns, keep_features, features_only
    )
    data = read_file_bytes(path)
    out = _parse(
        path, data, fmt=fmt, sep=sep, header=header, spec=spec, libsvm=(zero_based, n_features)
    )
    if need_rows and out.X.shape[0] == 0:
        raise no_rows_error(path, data, header)
    if side_files:
        read_side_files(path, out)
    return out


def sniff_format(path: StrPath, fmt: str = "auto", header: bool = False) -> tuple[str, str | None]:
    """``(fmt, sep)`` of a file from its first 64 KiB: ``"libsvm"`` or ``"delimited"``
    with the delimiter (``None``: runs of whitespace).  Every rank of a sharded read
    decides from the same bytes, so all parse their parts alike."""
    if fmt not in _FORMATS:
        raise ValueError(f"fmt must be one of {_FORMATS}, got {fmt!r}")
    head = normalize_line_ends(read_head(path))
    if fmt == "auto":
        fmt = "libsvm" if looks_like_libsvm(head) else "delimited"
    if fmt == "libsvm":
        return "libsvm", None
    sep = {"csv": ",", "tsv": "\t"}.get(fmt)
    if sep is None:
        lines = head.decode("utf-8", errors="replace").split("\n")
        first_data = next((ln for ln in lines[1 if header else 0 :] if ln.strip()), None)
        sep = detect_sep(first_data if first_data is not None else (lines[0] if lines else ""))
    return "delimited", sep


def first_row_width(path: StrPath, header: bool = False) -> int | None:
    """The number of fields of a delimited file's first data line (within its
    first 64 KiB), or None for LibSVM text or a file without data lines."""
    fmt, sep = sniff_format(path, "auto", header)
    if fmt == "libsvm":
        return None
    lines = normalize_line_ends(read_head(path)).decode("utf-8", errors="replace").split("\n")
    first = next((ln for ln in lines[1 if header else 0 : -1] if ln.strip()), None)
    if first is None:
        return None
    return len(first.split() if sep is None else first.split(sep))


def parse_text(
    path: StrPath,
    data: bytes,
    *,
    fmt: str,
    sep: str | None,
    header: bool = False,
    header_text: str | None = None,
    first_line: int = 1,
    label_column: _Column = "0",
    weight_column: _Column = None,
    group_column: _Column = None,
    ignore_columns: str | Sequence[int | str] | None = (),
    zero_based: bool = True,
    n_features: int | None = None,
    keep_features: Sequence[int] | np.ndarray | None = None,
    features_only: bool = False,
) -> LoadedData:
    """Parse the bytes ``data`` of (part of) ``path``; no side files.

    ``first_line`` is the file line number of the first line of ``data`` (a part of a
    file read by one rank starts anywhere); ``header_text`` is the header line when the
    part does not hold it.  Other options as :func:`read_data`.
    """
    spec = ColumnSpec(
        label_column, weight_column, group_column, ignore_columns, keep_features, features_only
    )
    return _parse(
        path,
        data,
        fmt=fmt,
        sep=sep,
        header=header,
        spec=spec,
        libsvm=(zero_based, n_features),
        header_text=header_text,
        first_line=first_line,
    )


def _parse(
    path: StrPath,
    data: bytes,
    *,
    fmt: str,
    sep: str | None,
    header: bool,
    spec: ColumnSpec,
    libsvm: tuple[bool, int | None],
    header_text: str | None = None,
    first_line: int = 1,
) -> LoadedData:
    """:func:`parse_text` with the column options in ``spec`` (a :class:`ColumnSpec`)
    and ``libsvm`` the LibSVM options ``(zero_based, n_features)``."""
    data = normalize_line_ends(data)
    if data.startswith(BOM):
        if first_line == 1:
            data = data[len(BOM) :]  # a UTF-8 byte order mark starts the file
        elif fmt != "libsvm":
            # pandas would drop it as if it started the file; a blank line before it
            # keeps it in the text, as when the whole file is read
            data, first_line = b"\n" + data, first_line - 1
    if fmt == "libsvm":
        return _parse_libsvm(path, data, spec=spec, libsvm=libsvm, first_line=first_line)
    return read_delimited(
        path,
        data,
        sep=sep,
        header=header,
        spec=spec,
        header_text=header_text,
        first_line=first_line,
    )


def _parse_libsvm(
    path: StrPath,
    data: bytes,
    *,
    spec: ColumnSpec,
    libsvm: tuple[bool, int | None],
    first_line: int,
) -> LoadedData:
    """LibSVM ``data``, with only the columns ``spec.keep_features`` when given."""
    zero_based, n_features = libsvm
    out = read_libsvm(
        path,
        data,
        zero_based=zero_based,
        n_features=n_features,
        first_line=first_line,
        features_only=spec.features_only,
    )
    keep_features = spec.keep_features
    if keep_features is not None:
        cols = np.asarray(keep_features, np.int64).reshape(-1)
        if np.any((cols < 0) | (cols >= out.X.shape[1])):
            raise ValueError(
                f"keep_features: indices must be in [0, {out.X.shape[1]}), "
                f"{path} has {out.X.shape[1]} columns, got {list(keep_features)}"
            )
        assert not isinstance(out.X, np.ndarray)  # LibSVM's X is a CSR matrix
        out.X = out.X[:, cols].tocsr()
    return out
