"""dgbdt.files: what may be read, and how outputs are written (never half-written)."""
import os
import socket
import subprocess
import sys
import time

import pytest

from dgbdt.files import check_regular_file, check_writable_target, remove_stale_temps
from dgbdt.model_io import write_atomic


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
    dead = tmp_path / f".tmp-model.json-{host}-{_dead_pid()}-abc123"
    alive = tmp_path / f".tmp-model.json-{host}-{os.getpid()}-def456"   # a writer at work
    elsewhere = tmp_path / ".tmp-model.json-otherhost-42-ghi789"       # another machine's
    old = tmp_path / ".tmp-model.json-otherhost-43-jkl012"
    other_target = tmp_path / f".tmp-other.json-{host}-{_dead_pid()}-mno345"
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
