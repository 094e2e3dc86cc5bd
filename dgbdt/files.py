"""The one rule for files dgbdt reads: a regular file, or a clear error.

``open()`` on a FIFO blocks until a writer appears, and ``/dev/zero`` reads
without end; a directory fails with a confusing ``IsADirectoryError``.  Every
reader (data, side files, model, config) checks here first, so each of those
is "not a regular file", and a missing one is "not found".

Outputs are written to a temp file beside the target and renamed over it
(never half-written), through symbolic links as a plain open() would; see
check_writable_target, temp_beside and publish.
"""

from __future__ import annotations

import errno
import os
import re
import socket
import stat
import tempfile
import time


def check_regular_file(path: str | os.PathLike[str], what: str) -> str:
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
        raise ValueError(f"{what} {path} is not a regular file ({_kind(mode)})")
    return path


# -- writing: a temp file beside the target, renamed over it ----------------------
#: A temp file of a writer on another machine (shared folder) counts as stale
#: after this long; one of a dead process on this machine at once.
STALE_SECONDS = 24 * 3600.0

#: Why outputs need a writable folder (said in the errors that refuse one).
_WHY_TEMP = (
    "dgbdt writes a temp file beside the target and renames it over the target, "
    "so that an output is never half-written"
)


def _kind(mode: int) -> str:
    return (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a plain file"
    )


def resolve_target(path: str | os.PathLike[str]) -> str:
    """The file a write to ``path`` lands in: symbolic links followed, a
    dangling one to the file it names (LightGBM's open() writes through them)."""
    return os.path.realpath(os.fspath(path))


def _check_output_name(path: str) -> None:
    if path == "":
        raise ValueError("cannot write an output to an empty path: give a file name")
    if path.endswith(("/", os.sep)) or (os.altsep and path.endswith(os.altsep)):
        raise ValueError(f"cannot write {path}: it ends with '/', so it names a folder, not a file")


def check_writable_target(path: str | os.PathLike[str]) -> str:
    """Refuse, before anything is written (or computed), an empty path or one
    ending in '/', a directory, FIFO or device at ``path`` (symbolic links
    followed), a missing folder and one this process cannot create files in;
    returns the folder of the resolved target."""
    path = os.fspath(path)
    _check_output_name(path)
    target = resolve_target(path)
    shown = f"{path} (a link to {target})" if os.path.islink(path) else path
    try:
        mode = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as exc:  # e.g. a loop of symbolic links
        raise OSError(exc.errno, f"cannot write {shown}: {exc.strerror}") from None
    if mode is not None and not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(f"cannot write {shown}: it is a directory")
        raise OSError(f"cannot write {shown}: it is not a regular file ({_kind(mode)})")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot write {shown}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(_not_writable(shown, folder))
    return folder


def _not_writable(shown: str, folder: str) -> str:
    return f"cannot write {shown}: folder {folder} is not writable ({_WHY_TEMP})"


def _temp_prefix(path: str) -> str:
    return f".tmp-{os.path.basename(path)}-"


def _temp_pattern(target: str) -> re.Pattern[str]:
    """The names temp_beside gives temp files of ``target``: prefix, host, pid
    and mkstemp's 8 random characters (tempfile._RandomNameSequence)."""
    return re.compile(
        re.escape(_temp_prefix(target)) + r"(?P<host>[^/]+)-(?P<pid>[0-9]+)-"
        r"[a-z0-9_]{8}"
    )


def _is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def remove_stale_temps(path: str | os.PathLike[str]) -> None:
    """Remove temp files of ``path`` left by writers that were killed: those of a
    dead process on this machine, and any older than STALE_SECONDS.  Only names
    that fully match what temp_beside creates are touched."""
    target = resolve_target(path)
    folder, pattern = os.path.dirname(target), _temp_pattern(target)
    host = socket.gethostname()
    try:
        entries = [(e, m) for e in os.scandir(folder) if (m := pattern.fullmatch(e.name))]
    except OSError:
        return
    for entry, match in entries:
        try:
            mine = match["host"] == host and not _is_alive(int(match["pid"]))
            old = time.time() - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS
            if (mine or old) and entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
        except (OSError, ValueError):
            continue


def temp_beside(path: str | os.PathLike[str]) -> tuple[int, str]:
    """(fd, temp path) of a new private (0600) file beside the file ``path``
    resolves to, named ``.tmp-<name>-<host>-<pid>-<random>`` so that a later
    write can tell a killed writer's leftovers (removed here first)."""
    folder = check_writable_target(path)
    target = resolve_target(path)
    remove_stale_temps(target)
    prefix = f"{_temp_prefix(target)}{socket.gethostname()}-{os.getpid()}-"
    try:
        return tempfile.mkstemp(prefix=prefix, dir=folder)
    except PermissionError:  # access() said yes: ACLs, a read-only mount, ...
        raise PermissionError(_not_writable(os.fspath(path), folder)) from None
    except OSError as exc:
        if exc.errno != errno.EROFS:
            raise
        raise OSError(exc.errno, _not_writable(os.fspath(path), folder)) from None


def publish(tmp: str, path: str | os.PathLike[str]) -> None:
    """Rename ``tmp`` over the file ``path`` resolves to (through symbolic
    links), giving it an existing file's permission bits (and, where allowed,
    owner and group), else those a plain open() would (mkstemp made it 0600)."""
    target = resolve_target(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is None:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
    else:
        try:
            os.chown(tmp, st.st_uid, st.st_gid)
        except OSError:  # not ours to give: the file becomes this user's
            pass
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
    os.replace(tmp, target)
