"""The one rule for files dgbdt reads: a regular file, or a clear error.

``open()`` on a FIFO blocks until a writer appears, and ``/dev/zero`` reads
without end; a directory fails with a confusing ``IsADirectoryError``.  Every
reader (data, side files, model, config) checks here first, so each of those
is "not a regular file", and a missing one is "not found".
"""
import os
import stat


def check_regular_file(path, what):
    """Raise FileNotFoundError when ``path`` does not exist, ValueError when it is
    not a regular file (a directory, FIFO, device); ``what`` names it ("data file",
    "model file", ...).  Symbolic links are followed."""
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} not found: {path}") from None
    except OSError as exc:
        raise OSError(f"cannot read {what} {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket"
                if stat.S_ISSOCK(mode) else "not a plain file")
        raise ValueError(f"{what} {path} is not a regular file ({kind})")
    return path
