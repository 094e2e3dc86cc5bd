"""Where Numba caches dgbdt's compiled kernels, and why a broken cache never breaks dgbdt.

Run once at ``import dgbdt``, before ``dgbdt.native`` is imported (Numba picks
a kernel's cache folder when the kernel is defined):

* **The folder is keyed** on dgbdt's version and a hash of ``native/``:
  Numba's staleness check sees only the file that defines a kernel, so after
  an upgrade that changes an inlined callee in another module it would load
  stale machine code.  A new key is a new, empty folder.
* **The base** is ``$NUMBA_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/dgbdt``
  (``~/.cache/dgbdt``), else the installed ``native/__pycache__``.  A folder
  is used only when it is ours: owned by this user, not writable by group or
  others, and writable.  The cache is pickle: a folder another local user can
  write to would let them plant code.
* **When none is usable**, a private folder (``mkdtemp``, mode 0700) serves
  this process, with one warning: kernels then compile in every process.  The
  process that made it removes it at exit (a forked child, which inherits
  the exit hook, and a child that shares the folder leave it alone).
* **A truncated or corrupted cache file** (``.nbi`` index, ``.nbc`` data) makes
  the kernel compile again (the bad index is removed and rewritten), and a
  failed cache write is skipped: neither ever fails a dgbdt call.

The chosen folder is also put in ``NUMBA_CACHE_DIR``, so processes started
from this one (``mpiexec`` ranks of the tests) share it; a base already keyed
is not keyed twice.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import pathlib
import pickle
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

from .distributed.comm import launched_rank

NATIVE = pathlib.Path(__file__).resolve().parent.parent / "native"
_FOLDER: str | None = None


def native_folder() -> pathlib.Path:
    """The installed kernels' folder (``dgbdt.native``), found without importing it."""
    spec = importlib.util.find_spec("dgbdt.native")
    if spec is not None and spec.submodule_search_locations:
        return pathlib.Path(list(spec.submodule_search_locations)[0])
    return NATIVE


#: Bumped when what dgbdt keeps in the folder changes (2: checksums of the data
#: files; 3: the checksums cover each entry's index key).
CACHE_FORMAT = 3


def cache_key(version: str) -> str:
    """'dgbdt-<version>-<12 hex digits of the hash of native/*.py and the format>'."""
    digest = hashlib.sha256(f"format {CACHE_FORMAT}".encode())
    for path in sorted(native_folder().glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return f"dgbdt-{version}-{digest.hexdigest()[:12]}"


def why_not_ours(path: str) -> str | None:
    """Create ``path`` (0700) if needed; None when it is a folder owned by this
    user, not writable by group or others, writable, in a parent folder that no
    other user can change (owned by this user or root, not writable by others
    unless sticky, as /tmp); else why not."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info, parent = os.lstat(path), os.stat(os.path.dirname(os.path.abspath(path)))
    except OSError as exc:
        return exc.strerror or str(exc)
    if not stat.S_ISDIR(info.st_mode):
        return "not a folder"
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "owned or writable by another user"
    if parent.st_uid not in (os.getuid(), 0) or (
        parent.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not parent.st_mode & stat.S_ISVTX
    ):
        return "its folder can be changed by another user"
    try:
        tempfile.TemporaryFile(dir=path).close()
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _candidates(key: str) -> Iterator[tuple[str, str]]:
    """(folder, where it comes from) in order of preference."""
    given = os.environ.get("NUMBA_CACHE_DIR", "")
    if given:
        # A base that is already keyed (a child of a configured process) is kept.
        yield (
            (
                given
                if os.path.basename(os.path.normpath(given)) == key
                else os.path.join(given, key)
            ),
            "NUMBA_CACHE_DIR",
        )
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(xdg):  # the XDG spec: a relative path is ignored
        xdg = os.path.join(os.path.expanduser("~"), ".cache")
    yield os.path.join(xdg, "dgbdt", key), "the user cache folder"
    yield os.path.join(native_folder(), "__pycache__", key), "the installed package"


def choose_folder(key: str) -> tuple[str, bool]:
    """(folder, temporary?): the first usable candidate, else a private temporary
    folder; a rejected NUMBA_CACHE_DIR is warned about (the user asked for it)."""
    for path, source in _candidates(key):
        why = why_not_ours(path)
        if why is None:
            return path, False
        if source == "NUMBA_CACHE_DIR":
            _warn(
                f"NUMBA_CACHE_DIR: {path} is not usable for dgbdt's kernel cache ({why}); "
                "trying the next place"
            )
    folder = tempfile.mkdtemp(prefix=f"{key}-")
    atexit.register(_remove_temporary, folder, os.getpid())
    return folder, True


def _remove_temporary(folder: str, creator: int) -> None:
    """Remove the private temporary cache folder at exit (2 MB of kernels a
    process), in the process that made it only: a forked child runs the
    parent's exit hooks too, and must not delete a folder its parent uses.
    Errors are ignored: another process may be removing or using it."""
    if os.getpid() == creator:
        shutil.rmtree(folder, ignore_errors=True)


def _warn(text: str) -> None:
    if launched_rank() == 0:
        sys.stderr.write(f"dgbdt: warning: {text}\n")
        sys.stderr.flush()


def configure(version: str) -> str:
    """Point Numba's cache at dgbdt's folder and make cache faults harmless."""
    global _FOLDER
    if _FOLDER is not None:
        return _FOLDER
    folder, temporary = choose_folder(cache_key(version))
    if temporary:
        _warn(
            f"no writable private folder for the Numba cache (tried NUMBA_CACHE_DIR, "
            f"~/.cache/dgbdt, the installed package); using {folder} for this process only, "
            "so kernels compile again in every process"
        )
    os.environ["NUMBA_CACHE_DIR"] = folder
    from numba.core import config  # noqa: PLC0415 - numba is imported once NUMBA_CACHE_DIR is set

    config.CACHE_DIR = folder
    _guard_cache(folder)
    _FOLDER = folder
    return folder


def _guard_cache(folder: str) -> None:
    """Numba's cache, for kernels cached under ``folder``: a load that fails for
    any reason compiles instead (removing the bad index), a save that fails is
    skipped, and every data file carries a SHA-256 checked before it is loaded
    (a corrupted file can unpickle into machine code that crashes the process).
    Other libraries' Numba caches are left to Numba."""
    from numba.core import caching  # noqa: PLC0415 - numba is imported once NUMBA_CACHE_DIR is set

    cls = caching.Cache
    if getattr(cls, "_dgbdt_guarded", None) is not None:
        cls._dgbdt_guarded.add(folder)
        return
    load, save = cls._load_overload, cls._save_overload
    cls._dgbdt_guarded = guarded = {folder}

    def ours(path: object) -> bool:
        return any(str(path).startswith(f) for f in guarded)

    def guarded_load(self: Any, sig: Any, target_context: Any) -> Any:
        try:
            return load(self, sig, target_context)
        except Exception:  # noqa: BLE001 -- truncated/corrupted pickle, bad data
            if not ours(getattr(self, "_cache_path", "")):
                raise
            _remove(getattr(self._cache_file, "_index_path", None))
            return None

    def guarded_save(self: Any, sig: Any, data: Any) -> None:
        try:
            save(self, sig, data)
        except Exception:  # noqa: BLE001 -- a full disk or a broken index: skip caching
            if not ours(getattr(self, "_cache_path", "")):
                raise
            _remove(getattr(self._cache_file, "_index_path", None))

    cls._load_overload, cls._save_overload = guarded_load, guarded_save
    _checksum_data_files(caching.IndexDataCacheFile, ours)


def _checksum_data_files(files: Any, ours: Callable[[object], bool]) -> None:
    """Data files under our folders get a SHA-256 of their index key and bytes,
    checked before loading.  The key is in it because processes compiling
    different variants at once (mpiexec ranks on a cold cache) can each take the
    same free data file name: the index may then name, for one signature, the
    machine code of another, which crashes the process when called."""
    load_data, save_data = files._load_data, files._save_data
    file_load, file_save = files.load, files.save
    current = {"key": b""}  # the index key of the entry being read or written

    def keyed(method: Callable[..., Any]) -> Callable[..., Any]:
        def call(self: Any, key: Any, *args: Any) -> Any:
            # repr, not pickle: a pickled Numba type carries its per-process id
            current["key"] = repr(key).encode()
            try:
                return method(self, key, *args)
            finally:
                current["key"] = b""

        return call

    def checked_load_data(self: Any, name: str) -> Any:
        path = self._data_path(name)
        if not ours(path):
            return load_data(self, name)
        with open(path, "rb") as fh:
            data = fh.read()
        if _digest_of(current["key"], data) != _read(path + ".sha256"):
            raise OSError(f"{path}: checksum mismatch")  # Numba's load: "no entry"
        return pickle.loads(data)  # as Numba's _load_data

    def checked_save_data(self: Any, name: str, data: Any) -> None:
        save_data(self, name, data)
        path = self._data_path(name)
        if ours(path):
            with open(path, "rb") as fh:
                _write_atomically(path + ".sha256", _digest_of(current["key"], fh.read()))

    files._load_data, files._save_data = checked_load_data, checked_save_data
    files.load, files.save = keyed(file_load), keyed(file_save)


def _digest_of(key: bytes, data: bytes) -> str:
    """SHA-256 of a cache entry: its index key (repr) and its data file's bytes."""
    return hashlib.sha256(len(key).to_bytes(8, "little") + key + data).hexdigest()


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _write_atomically(path: str, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".sha256-")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def _remove(path: str | None) -> None:
    if path:
        try:
            os.remove(path)
        except OSError:
            pass


def kernels_compiled() -> int:
    """How many kernel variants this process compiled (Numba cache misses of
    dgbdt.native's kernels); 0 when every kernel came from the cache."""
    from numba.core.registry import CPUDispatcher  # noqa: PLC0415 - numba is imported once NUMBA_CACHE_DIR is set

    count = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("dgbdt.native.") or module is None:
            continue
        for obj in vars(module).values():
            if isinstance(obj, CPUDispatcher) and getattr(obj, "_cache", None) is not None:
                count += sum(obj.stats.cache_misses.values())
    return count
