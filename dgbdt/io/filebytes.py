"""The bytes of a data file: regular-file checks, gzip, the head of a file, line
ends (``\\n``, ``\\r\\n`` or a lone ``\\r``) and byte-range parts cut at line ends."""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from typing import TYPE_CHECKING

import numpy as np

from ..files import check_regular_file
from ..native.text import lone_cr_count
from .errors import bad_gzip

if TYPE_CHECKING:
    from _typeshed import StrPath

_GZIP_ERRORS = (OSError, EOFError, zlib.error)  # gzip.BadGzipFile is an OSError


BOM = b"\xef\xbb\xbf"


def read_file_bytes(path: StrPath) -> bytes:
    """The whole content of a file, decompressed when gzipped."""
    path = check_regular_file(path, "data file")
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except _GZIP_ERRORS as exc:
            raise bad_gzip(path, exc) from None
    return data


def read_head(path: StrPath, n_bytes: int = 1 << 16, whole_first_line: bool = False) -> bytes:
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
            raise bad_gzip(path, exc) from None


def _read_upto(fh: io.BufferedIOBase, n_bytes: int, whole_first_line: bool) -> bytes:
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


def _lone_cr_count(data: bytes) -> int:
    if b"\r" not in data:  # a memchr: most files have no '\r'
        return 0

    return int(lone_cr_count(np.frombuffer(data, np.uint8)))


def normalize_line_ends(data: bytes) -> bytes:
    """``data`` with each lone ``\\r`` as ``\\n`` (and ``\\r\\n`` then too): the same
    lines, counted alike by :func:`count_lines` before and after.  A copy only for
    text that has a lone ``\\r``."""
    if not _lone_cr_count(data):
        return data
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def whole_lines(head: bytes) -> bytes:
    """The start ``head`` of a file cut after its last whole line (b"" if none); a
    last ``\\r`` may be half of a ``\\r\\n`` and is left out."""
    body = head[:-1] if head.endswith(b"\r") else head
    return head[: max(body.rfind(b"\n"), body.rfind(b"\r")) + 1]


def file_lines(data: bytes) -> list[str]:
    """Decoded lines (without newline) of the whole file, for the slow paths."""
    return data.decode("utf-8", errors="replace").split("\n")


def line_at(data: bytes, lineno: int) -> str:
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


def part_bounds(path: StrPath, part: int, n_parts: int) -> tuple[int, int]:
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


def _line_start_at_or_after(
    fh: io.BufferedIOBase, pos: int, size: int, block: int = 1 << 16
) -> int:
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


def read_part(path: StrPath, part: int, n_parts: int) -> bytes:
    """The bytes of part ``part`` of ``n_parts`` of a plain (not gzipped) file."""
    start, end = part_bounds(path, part, n_parts)
    with open(path, "rb") as fh:
        fh.seek(start)
        return fh.read(end - start)


def line_start_in(data: bytes, pos: int) -> int:
    """The first line start at or after ``pos`` in the bytes ``data`` (``len(data)``
    if none): the rule of :func:`_line_start_at_or_after`, in memory."""
    size = len(data)
    if pos <= 0 or pos >= size:
        return min(max(pos, 0), size)
    found = _LINE_END.search(data, pos - 1)
    return size if found is None else found.end()


def split_parts(data: bytes, n_parts: int) -> list[bytes]:
    """``data`` cut into ``n_parts`` by the rule of :func:`part_bounds` (for gzip input,
    which one rank decompresses and scatters)."""
    cuts = [line_start_in(data, len(data) * p // n_parts) for p in range(n_parts + 1)]
    return [data[cuts[p] : cuts[p + 1]] for p in range(n_parts)]


def count_lines(data: bytes) -> int:
    """Number of lines in ``data`` (a last line without a line end counts); a lone
    ``\\r`` ends a line, as :func:`parse_text` reads it."""
    ends = data.count(b"\n") + _lone_cr_count(data)
    return ends + (1 if data and not data.endswith((b"\n", b"\r")) else 0)


def is_gzip(path: StrPath) -> bool:
    with open(check_regular_file(path, "data file"), "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def read_header_line(path: StrPath) -> str:
    """The first line of a file (gzip or not), for the column names of a part."""
    head = normalize_line_ends(read_head(path, whole_first_line=True))
    return head.split(b"\n", 1)[0].decode("utf-8", errors="replace")
