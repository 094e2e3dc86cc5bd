"""dgbdt.files: what may be read, and how outputs are written (never half-written)."""

import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

import dgbdt
import dgbdt.cli.commands
from dgbdt.cli.commands import run
from dgbdt.files import check_regular_file, check_writable_target, remove_stale_temps
from dgbdt.models.json_file import write_atomic


def test_only_regular_files_are_read(tmp_path):
    (tmp_path / "f").write_text("x")
    assert check_regular_file(tmp_path / "f", "data file") == str(tmp_path / "f")
    with pytest.raises(FileNotFoundError, match="data file not found"):
        check_regular_file(tmp_path / "missing", "data file")
    with pytest.raises(ValueError, match="is not a regular file \\(a directory\\)"):
        check_regular_file(tmp_path, "model file")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ValueError, match="\\(a FIFO\\)"):
        check_regular_file(tmp_path / "fifo", "config file")
    with pytest.raises(ValueError, match="\\(a device\\)"):
        check_regular_file("/dev/null", "data file")


def test_outputs_are_refused_before_anything_is_written(tmp_path):
    with pytest.raises(IsADirectoryError):
        check_writable_target(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        check_writable_target(tmp_path / "no" / "m.json")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match="a FIFO"):
        write_atomic(tmp_path / "fifo", "{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_the_next_write_removes_a_killed_writers_temp_files(tmp_path):
    host = socket.gethostname()
    target = tmp_path / "model.json"
    dead = tmp_path / f".tmp-model.json-{host}-{_dead_pid()}-abc12_xy"
    alive = tmp_path / f".tmp-model.json-{host}-{os.getpid()}-def45678"  # a writer at work
    elsewhere = tmp_path / ".tmp-model.json-other-host-42-ghi78901"  # another machine's
    old = tmp_path / ".tmp-model.json-other-host-43-jkl01234"
    other_target = tmp_path / f".tmp-other.json-{host}-{_dead_pid()}-mno34567"
    for path in (dead, alive, elsewhere, old, other_target):
        path.write_text("half a mod")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    write_atomic(target, '{"whole": true}')
    assert target.read_text() == '{"whole": true}'
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([target.name, alive.name, elsewhere.name, other_target.name])
    remove_stale_temps(tmp_path / "other.json")
    assert not other_target.exists()


def test_stale_temp_cleanup_keeps_files_dgbdt_did_not_create(tmp_path):
    """Only names exactly as temp_beside makes them are removed, however old or
    whoever's pid they seem to carry."""
    host, dead = socket.gethostname(), _dead_pid()
    kept = [
        f".tmp-model.json-{host}-{dead}-abc12345.bak",
        f".tmp-model.json-{host}-{dead}-ABC12345",
        f".tmp-model.json-{host}-{dead}-abc1234",
        f".tmp-model.json-{host}-{dead}x-abc12345",
        f".tmp-model.json-{host}-{dead}-abc-1234",
        ".tmp-model.json-notes",
        ".tmp-model.json-",
        f".tmp-model.json-{dead}-abc12345",
        ".tmp-model.jsonx-h-1-abc12345",
    ]
    two_days_ago = time.time() - 2 * 24 * 3600
    for name in kept:
        (tmp_path / name).write_text("mine, not dgbdt's")
        os.utime(tmp_path / name, (two_days_ago, two_days_ago))
    old_dir = tmp_path / f".tmp-model.json-{host}-{dead}-dir12345"
    old_dir.mkdir()
    write_atomic(tmp_path / "model.json", "{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept + [old_dir.name, "model.json"])


def test_writing_through_a_symbolic_link_keeps_the_link_and_the_mode(tmp_path):
    """As a plain open(): the file the link names is replaced, the link stays;
    an existing file keeps its permission bits (else the umask's)."""
    (tmp_path / "models").mkdir()
    real = tmp_path / "models" / "v3.txt"
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "latest.txt"
    link.symlink_to("models/v3.txt")
    write_atomic(link, "new")
    assert link.is_symlink() and os.readlink(link) == "models/v3.txt"
    assert real.read_text() == "new" and stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["v3.txt"]
    dangling = tmp_path / "next.txt"
    dangling.symlink_to("models/v4.txt")  # a link to a file not written yet
    old_umask = os.umask(0o027)
    try:
        write_atomic(dangling, "v4")
    finally:
        os.umask(old_umask)
    assert dangling.is_symlink() and (tmp_path / "models" / "v4.txt").read_text() == "v4"
    assert stat.S_IMODE((tmp_path / "models" / "v4.txt").stat().st_mode) == 0o640
    nowhere = tmp_path / "nowhere.txt"
    nowhere.symlink_to("no/such/folder/m.txt")
    with pytest.raises(
        FileNotFoundError, match="a link to .*folder .*no/such/folder does not exist"
    ):
        write_atomic(nowhere, "x")
    (tmp_path / "loop").symlink_to("loop")
    with pytest.raises(OSError, match="cannot write .*loop"):
        write_atomic(tmp_path / "loop", "x")


def test_empty_paths_and_folder_paths_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.txt").write_text("kept")
    for bad, why in (
        ("", "empty path"),
        ("m.txt/", "ends with '/'"),
        (str(tmp_path / "sub") + "/", "ends with '/'"),
    ):
        with pytest.raises(ValueError, match=why):
            check_writable_target(bad)
        with pytest.raises(ValueError, match=why):
            write_atomic(bad, "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.txt"]


def test_a_folder_without_write_permission_is_named_with_why(tmp_path, monkeypatch):
    """The error names the folder and the temp-file reason, not the temp file;
    access() is asked first, and a refusal it did not foresee (ACLs, a read-only
    mount) says the same."""
    target = tmp_path / "model.txt"
    target.write_text("old")
    real_access = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda p, m, **kw: False if os.fspath(p) == str(tmp_path) else real_access(p, m, **kw),
    )
    with pytest.raises(
        PermissionError,
        match=re.escape(
            f"folder {tmp_path} is not writable (dgbdt writes "
            "a temp file beside the target and renames it"
        ),
    ):
        check_writable_target(target)
    monkeypatch.setattr(os, "access", real_access)

    def refuse(*args, **kwargs):
        raise PermissionError(
            13, "Permission denied", str(tmp_path / ".tmp-model.txt-h-1-abcdefgh")
        )

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(PermissionError, match="folder .* is not writable") as info:
        write_atomic(target, "new")
    assert ".tmp-" not in str(info.value) and target.read_text() == "old"


def _as_another_user(step):
    """Run ``step()`` in a child process without root's rights (root may write into
    any folder); returns its exit status (0: step returned True)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns to pytest
        code = 2
        try:
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            code = 0 if step() else 1
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_read_only_folder_with_a_writable_file_is_refused_before_writing():
    folder = tempfile.mkdtemp(prefix="dgbdt-ro-")  # not under pytest's private tmp
    try:
        target = os.path.join(folder, "model.txt")
        with open(target, "w") as fh:
            fh.write("old")
        os.chmod(target, 0o666)
        os.chmod(folder, 0o555)

        def step():
            try:
                write_atomic(target, "new")
            except PermissionError as exc:
                return f"folder {folder} is not writable" in str(exc) and ".tmp-" not in str(exc)
            return False

        assert _as_another_user(step) == 0
        with open(target) as fh:
            assert fh.read() == "old"
        assert os.listdir(folder) == ["model.txt"]
    finally:
        os.chmod(folder, 0o755)
        shutil.rmtree(folder)


def _tiny_csv(path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    np.savetxt(path, np.column_stack([(X[:, 0] > 0) * 1.0, X]), delimiter=",")
    return path


def test_the_command_line_refuses_a_bad_output_before_any_work(tmp_path, monkeypatch, capsys):
    data = _tiny_csv(tmp_path / "d.csv")
    monkeypatch.chdir(tmp_path)

    def no_work(*args, **kwargs):
        raise AssertionError("work done before the output was checked")

    # the names the command line calls (bound when dgbdt.cli.commands is imported)
    monkeypatch.setattr(dgbdt.cli.commands, "train", no_work)
    monkeypatch.setattr(dgbdt.cli.commands, "Booster", no_work)
    for key, task in (("output_model", "train"), ("output_result", "predict")):
        for bad, why in (
            ("", "empty path"),
            ("../m.txt/", "ends with '/'"),
            ("d.csv/x", "folder .*d.csv does not exist"),
        ):
            assert run([task, f"data={data}", "input_model=m.txt", f"{key}={bad}"]) == 1
            assert re.search(why, capsys.readouterr().err)
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    (tmp_path / "latest.txt").symlink_to("models/v3.txt")  # dangling until trained
    assert (
        run(
            [
                "train",
                f"data={data}",
                "objective=binary",
                "num_trees=2",
                "verbosity=-1",
                "output_model=latest.txt",
            ]
        )
        == 0
    )
    assert (tmp_path / "latest.txt").is_symlink()
    assert dgbdt.Booster(model_file=tmp_path / "models" / "v3.txt").num_trees() == 2
