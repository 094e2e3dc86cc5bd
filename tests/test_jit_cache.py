"""Numba's cache never breaks dgbdt (dgbdt.jit_cache): keyed, private, fault-tolerant."""

import os
import shutil
import stat
import subprocess
import sys

import pytest

from dgbdt import __version__, jit_cache

TRAIN = (
    "import numpy as np, dgbdt; X = np.random.default_rng(0).random((300, 3)); "
    "b = dgbdt.train({'verbosity': -1, 'num_leaves': 4}, dgbdt.Dataset(X, X[:, 0]), 3); "
    "print('trained', b.num_trees())"
)


def _run(code, **env):
    full = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=600
    )


def test_the_cache_folder_is_keyed_on_version_and_kernel_sources(tmp_path, monkeypatch):
    native = tmp_path / "native"
    shutil.copytree(jit_cache.native_folder(), native, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(jit_cache, "native_folder", lambda: native)
    key = jit_cache.cache_key(__version__)
    assert key.startswith(f"dgbdt-{__version__}-")
    assert jit_cache.cache_key("9.9") != key
    # an inlined callee in another module changes: a new (empty) folder
    (native / "prefetch.py").write_text((native / "prefetch.py").read_text() + "\n# changed\n")
    assert jit_cache.cache_key(__version__) != key


def test_the_configured_folder_is_private_and_keyed():
    folder = os.environ["NUMBA_CACHE_DIR"]
    assert os.path.basename(folder) == jit_cache.cache_key(__version__)
    info = os.stat(folder)
    assert info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    import numba

    assert numba.config.CACHE_DIR == folder


def test_a_folder_others_can_write_is_never_used(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # e.g. a folder in /tmp another user made
    private = tmp_path / "private"
    monkeypatch.setattr(
        jit_cache, "_candidates", lambda key: iter([(str(shared), "here"), (str(private), "there")])
    )
    folder, temporary = jit_cache.choose_folder("k")
    assert folder == str(private) and not temporary
    assert stat.S_IMODE(os.stat(private).st_mode) & 0o077 == 0


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a folder to another user")
def test_a_folder_of_another_user_is_never_used(tmp_path, monkeypatch):
    foreign = tmp_path / "foreign"
    foreign.mkdir(mode=0o700)
    os.chown(foreign, 12345, 12345)
    monkeypatch.setattr(jit_cache, "_candidates", lambda key: iter([(str(foreign), "here")]))
    folder, temporary = jit_cache.choose_folder("k")
    assert temporary and folder != str(foreign)


def test_no_usable_folder_gives_a_private_temporary_one(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setattr(jit_cache, "_candidates", lambda key: iter([(str(blocker / "x"), "here")]))
    folder, temporary = jit_cache.choose_folder("k")
    try:
        assert temporary
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    finally:
        shutil.rmtree(folder)


def test_no_writable_location_trains_with_one_warning(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    # every candidate lies under a plain file: none can be created
    code = (
        "from dgbdt import jit_cache as j, __version__ as v\n"
        f"j._candidates = lambda key: iter([({str(blocker / 'x')!r}, 'here')])\n"
        "j._FOLDER = None\n"
        "import os, numba\n"
        "folder = j.configure(v)\n"
        "assert numba.config.CACHE_DIR == folder == os.environ['NUMBA_CACHE_DIR']\n"
        "print(oct(os.stat(folder).st_mode & 0o777))\n"
    )
    result = _run(code, NUMBA_CACHE_DIR=str(blocker / "y"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "0o700"
    assert result.stderr.count("dgbdt: warning: no writable private folder") == 1


def _copy_session_cache(tmp_path):
    """A copy of this session's warm cache under a fresh base folder."""
    base = tmp_path / "cache"
    key = jit_cache.cache_key(__version__)
    shutil.copytree(os.environ["NUMBA_CACHE_DIR"], base / key)
    return base, base / key


# each damage on the files of one module (every kernel the fit calls of it is
# compiled again: damaging both modules in both cases doubled the compile time)
@pytest.mark.parametrize("damage, module", [("truncate", "split"), ("garbage", "histogram")])
def test_a_damaged_cache_file_recompiles_instead_of_failing(tmp_path, damage, module):
    base, folder = _copy_session_cache(tmp_path)
    damaged = 0
    for path in sorted(folder.rglob("*")):
        # the split scan's or the histogram kernels' files (callees too), index and data alike
        if path.suffix in (".nbi", ".nbc") and module in path.name:
            data = path.read_bytes()
            path.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"\x80garbage")
            damaged += 1
    assert damaged
    result = _run(TRAIN, NUMBA_CACHE_DIR=str(base))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "trained 3" in result.stdout
    # the damaged entries were replaced: a second run loads them
    again = _run(TRAIN, NUMBA_CACHE_DIR=str(base))
    assert again.returncode == 0 and "trained 3" in again.stdout, again.stderr[-3000:]


def test_a_child_process_shares_the_keyed_folder(tmp_path):
    result = _run("import os, dgbdt; print(os.environ['NUMBA_CACHE_DIR'])")
    assert result.stdout.strip() == os.environ["NUMBA_CACHE_DIR"]


def test_a_data_file_damaged_inside_its_machine_code_recompiles(tmp_path):
    """Bytes zeroed in the middle of a .nbc can still unpickle into machine code
    that crashes the process when run; its checksum no longer matches.  (The
    prediction kernels: without the checksum the process dies in predict, and
    they compile again in seconds, the split scan in many.)"""
    base, folder = _copy_session_cache(tmp_path)
    damaged = 0
    for path in sorted(folder.rglob("*.nbc")):
        if "predict" in path.name:
            data = bytearray(path.read_bytes())
            for at in (100, len(data) // 2):
                data[at : at + 100] = bytes(min(100, len(data) - at))
            path.write_bytes(bytes(data))
            damaged += 1
    assert damaged
    result = _run(TRAIN + "; print(b.predict(X[:2]))", NUMBA_CACHE_DIR=str(base))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "trained 3" in result.stdout


def test_a_refused_numba_cache_dir_is_warned_about(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = _run("import dgbdt", NUMBA_CACHE_DIR=str(blocker))
    assert result.returncode == 0, result.stderr
    assert "dgbdt: warning: NUMBA_CACHE_DIR:" in result.stderr


def test_a_folder_whose_parent_others_can_change_is_not_used(tmp_path, monkeypatch):
    parent = tmp_path / "open"
    parent.mkdir()
    parent.chmod(0o777)  # no sticky bit: another user could swap our folder
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)  # as /tmp: fine
    assert "another user" in jit_cache.why_not_ours(str(parent / "k"))
    assert jit_cache.why_not_ours(str(sticky / "k")) is None


def test_a_second_process_compiles_nothing(tmp_path):
    # the session's warm-up cached these kernels: a child loads every one
    code = (
        TRAIN
        + "; from dgbdt.jit_cache import kernels_compiled; print('compiled', kernels_compiled())"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "compiled 0" in result.stdout, result.stdout


SUMS = (
    "import numpy as np, dgbdt; from dgbdt.native.split import sequential_sum; "
    "from dgbdt.jit_cache import kernels_compiled; "
    "a = sequential_sum(np.arange(5.0)); b = sequential_sum(np.arange(5, dtype=np.int64)); "
    "print('sums', a, b, 'compiled', kernels_compiled())"
)


def test_a_data_file_of_another_signature_recompiles(tmp_path):
    # mpiexec ranks compiling different variants at once can each take the same
    # free data file name; the index then names, for one signature, the machine
    # code of the other.  Its checksum covers the index key: a recompile, not a crash.
    first = _run(SUMS, NUMBA_CACHE_DIR=str(tmp_path))
    assert first.returncode == 0 and "sums 10.0 10.0 compiled 2" in first.stdout, first.stdout
    folder = next(p for p in tmp_path.rglob("split.sequential_sum-*.nbi")).parent
    data = sorted(folder.glob("split.sequential_sum-*.nbc"))
    assert len(data) == 2
    for suffix in ("", ".sha256"):  # file 1 now holds file 2's code, consistently
        shutil.copyfile(str(data[1]) + suffix, str(data[0]) + suffix)
    again = _run(SUMS, NUMBA_CACHE_DIR=str(tmp_path))
    assert again.returncode == 0, again.stderr[-2000:]
    assert "sums 10.0 10.0 compiled 1" in again.stdout, again.stdout


# A fit of each histogram kind and a prediction, every warning kept: a kernel
# Numba cannot cache (one asking for the thread count, a ctypes pointer) is
# compiled again in every process, and says so each time.
EVERY_KIND = (
    "import warnings, numpy as np, dgbdt\n"
    "warnings.simplefilter('always')\n"
    "rng = np.random.default_rng(0); X = rng.random((400, 4)); X[:, 3] = rng.integers(0, 5, 400)\n"
    "with warnings.catch_warnings(record=True) as seen:\n"
    "    for q in (False, True):\n"
    "        p = {'verbosity': -1, 'num_leaves': 4, 'use_quantized_grad': q}\n"
    "        ds = dgbdt.Dataset(X, X[:, 0], categorical_feature=[3])\n"
    "        dgbdt.train(p, ds, 2).predict(X, pred_contrib=q)\n"
    "bad = [str(w.message) for w in seen if 'Cannot cache' in str(w.message)]\n"
    "print('uncached', bad)\n"
)


def test_every_kernel_of_a_fit_is_cached():
    _run(EVERY_KIND)  # fills the cache where it is cold
    out = _run(EVERY_KIND)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "uncached []" in out.stdout, out.stdout[-3000:]


def test_the_temporary_folder_is_removed_when_its_process_exits(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    # No usable location (as above): a private temporary folder, filled with a
    # file as Numba would; a forked child that exits (running the inherited
    # exit hooks) must leave it to its parent, which removes it at exit.
    code = (
        "from dgbdt import jit_cache as j, __version__ as v\n"
        f"j._candidates = lambda key: iter([({str(blocker / 'x')!r}, 'here')])\n"
        "j._FOLDER = None\n"
        "import os, sys\n"
        "folder = j.configure(v)\n"
        "open(os.path.join(folder, 'kernel.nbi'), 'wb').write(b'x')\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    sys.exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "assert os.path.isfile(os.path.join(folder, 'kernel.nbi')), 'a child removed it'\n"
        "print(folder)\n"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr[-3000:]
    folder = result.stdout.strip().splitlines()[-1]
    assert os.path.basename(folder).startswith(jit_cache.cache_key(__version__) + "-")
    assert not os.path.exists(folder)
