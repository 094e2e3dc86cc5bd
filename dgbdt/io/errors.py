"""The errors of the readers and their messages: file, 1-based line, offending text."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import StrPath


class DataFormatError(ValueError):
    """A malformed data file; the message names the file, the line and the offending text."""


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
