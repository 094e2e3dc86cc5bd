"""The one rule for files dgbdt reads: a regular file, or a clear error.

``open()`` on a FIFO blocks until a writer appears, and ``/dev/zero`` reads
without end; a directory fails with a confusing ``IsADirectoryError``.  Every
reader (data, side files, model, config) checks here first, so each of those
is "not a regular file", and a missing one is "not found".
"""
import os
import stat
import tempfile


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
        raise ValueError(f"{what} {path} is not a regular file ({_kind(mode)})")
    return path


# -- writing: a temp file beside the target, renamed over it ----------------------
#: A temp file of a writer on another machine (shared folder) counts as stale
#: after this long; one of a dead process on this machine at once.
STALE_SECONDS = 24 * 3600.0


def _kind(mode):
    return ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket"
            if stat.S_ISSOCK(mode) else "not a plain file")


def check_writable_target(path):
    """Refuse, before anything is written, a directory, FIFO or device at ``path``
    and a missing folder; returns the folder."""
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(f"cannot write {path}: it is a directory")
        raise OSError(f"cannot write {path}: it is not a regular file ({_kind(mode)})")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot write {path}: folder {folder} does not exist")
    return folder


def _temp_prefix(path):
    return f".tmp-{os.path.basename(path)}-"


def _is_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def remove_stale_temps(path):
    """Remove temp files of ``path`` left by writers that were killed: those of a
    dead process on this machine, and any older than STALE_SECONDS."""
    import socket
    import time
    folder, prefix = os.path.dirname(os.path.abspath(path)), _temp_prefix(path)
    host = socket.gethostname()
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(prefix)]
    except OSError:
        return
    for entry in entries:
        parts = entry.name[len(prefix):].rsplit("-", 2)
        try:
            mine = len(parts) == 3 and parts[0] == host and not _is_alive(int(parts[1]))
            old = time.time() - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS
            if (mine or old) and entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
        except (OSError, ValueError):
            continue


def temp_beside(path):
    """(fd, temp path) of a new private (0600) file beside ``path``, named
    ``.tmp-<name>-<host>-<pid>-<random>`` so that a later write can tell a
    killed writer's leftovers (removed here first)."""
    import socket
    folder = check_writable_target(path)
    remove_stale_temps(path)
    prefix = f"{_temp_prefix(path)}{socket.gethostname()}-{os.getpid()}-"
    return tempfile.mkstemp(prefix=prefix, dir=folder)


def publish(tmp, path):
    """Give ``tmp`` the permissions a plain open() would (mkstemp made it 0600)
    and rename it over ``path``."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    os.replace(tmp, path)
