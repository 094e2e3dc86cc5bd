"""The errors of the readers and their messages: file, 1-based line, offending text."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..log import DGBDTError

if TYPE_CHECKING:
    from _typeshed import StrPath


class DataFormatError(DGBDTError):
    """A malformed data file; the message names the file, the line and the offending text.

    A ``DGBDTError`` (LightGBM raises its ``LightGBMError`` for these), so a ``ValueError``."""


def clip_text(text: str, limit: int = 120) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= limit else text[:limit] + "..."


def data_error(
    path: StrPath, lineno: int, what: str, text: str, line: str | None = None
) -> DataFormatError:
    shown = text if len(text) <= 200 else text[:200] + "..."
    msg = f"{path}, line {lineno}: {what} {shown!r}"
    if line is not None and line.strip() != text:
        msg += f" in {clip_text(line)!r}"
    return DataFormatError(msg)


def bad_gzip(path: StrPath, exc: BaseException) -> DataFormatError:
    return DataFormatError(f"{path}: not a valid gzip file ({exc})")


def no_rows_error(path: StrPath, text: bytes, header: bool) -> DataFormatError:
    """A data file read for training or validation that has no data rows
    (``text``: its content, decompressed), as LightGBM refuses one."""
    if os.path.getsize(path) == 0:
        why = "is empty (0 bytes): neither a data file with rows nor a dgbdt Dataset file"
    elif header and text.strip():
        why = "has no data rows below its header line"
    else:
        why = "has no data rows" + (" (only blank or comment lines)" if text.strip() else "")
    return DataFormatError(f"{path} {why}")
