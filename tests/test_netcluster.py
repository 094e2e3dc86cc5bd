"""bench/netcluster.py: the emulated cluster is made, used and always removed.

Needs root and iproute2 (network namespaces, a bridge, veths, tbf); skipped
with the reason where they cannot be made.  No bandwidth is measured here.
"""

import contextlib
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))  # bench/ is not a package

import netcluster  # noqa: E402
from mpi_launch import mpiexec_path  # noqa: E402

PREFIX = "dgt"  # apart from benchmark runs (dgn), so cleanup() here touches only tests' runs
RATE = "200mbit"


@pytest.fixture(scope="module")
def network():
    """Skip the module's network tests where namespaces cannot be made."""
    try:
        with netcluster.emulated_cluster(1, RATE, prefix=PREFIX):
            pass
    except netcluster.NetworkUnavailable as e:
        pytest.skip(f"no emulated network here: {e}")


def leftovers(cl_or_run_id):
    """Namespaces, links, /etc/hosts lines and folders of a run still present."""
    run_id = getattr(cl_or_run_id, "run_id", cl_or_run_id)
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    listed += subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    listed += netcluster.HOSTS_FILE.read_text()
    found = [word for word in listed.split() if run_id in word]
    tmp = pathlib.Path(netcluster.tempfile.gettempdir())
    return found + [str(p) for p in tmp.glob(f"netcluster-{run_id}-*")]


RANK_SCRIPT = """
import socket, sys
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
assert comm.size == 2, comm.size
root_ip, ips = sys.argv[1], sys.argv[2:]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((root_ip, 9))  # no packet is sent: this only picks the source address
assert s.getsockname()[0] == ips[comm.rank], (comm.rank, s.getsockname())
out = np.empty(1000)
comm.Allreduce(np.full(1000, comm.rank + 1.0), out)
assert (out == 3.0).all(), out[:3]
seen = comm.gather(s.getsockname()[0])  # one writer: hydra interleaves ranks' output
if comm.rank == 0:
    print("OK", *seen, flush=True)
"""


def test_mpi_one_rank_per_host(network, tmp_path):
    pytest.importorskip("mpi4py")
    mpiexec_path()  # skips without the mpich wheel
    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT)
    with netcluster.emulated_cluster(2, RATE, prefix=PREFIX) as cl:
        argv = [sys.executable, "-W", "ignore", str(script), cl.root_ip, *cl.ips]
        res = netcluster.run_mpi(cl, 1, argv, timeout=60)
        assert res.returncode == 0, res.stderr[-3000:]
        assert f"OK {' '.join(cl.ips)}" in res.stdout.splitlines(), res.stdout
    assert leftovers(cl) == []


def test_run_on_hosts_sees_only_its_own_address(network):
    with netcluster.emulated_cluster(2, RATE, prefix=PREFIX) as cl:
        cmd = ["ip", "-o", "-4", "addr", "show"]
        results = netcluster.run_on_hosts(cl, [cmd, cmd], timeout=20)
        for host, (rc, out, err) in zip(cl.hosts, results, strict=True):
            assert rc == 0, err
            addrs = sorted(line.split()[3] for line in out.splitlines())
            assert addrs == sorted(["127.0.0.1/8", f"{host.ip}/24"])
    assert leftovers(cl) == []


def test_run_on_hosts_kills_at_timeout(network):
    with netcluster.emulated_cluster(2, RATE, prefix=PREFIX) as cl:
        t0 = time.monotonic()
        results = netcluster.run_on_hosts(cl, [["sleep", "30"], ["true"]], timeout=0.5)
        assert time.monotonic() - t0 < 10
        assert [r.returncode for r in results] == [None, 0]
        pids = subprocess.run(["ip", "netns", "pids", cl.names[0]], capture_output=True, text=True)
        assert pids.stdout.strip() == ""
    assert leftovers(cl) == []


@pytest.mark.parametrize("exc", [KeyboardInterrupt, RuntimeError])
def test_exception_inside_with_tears_down(network, exc):
    with pytest.raises(exc), netcluster.emulated_cluster(2, RATE, prefix=PREFIX) as cl:
        assert len(leftovers(cl)) > 5  # made: namespaces, links, hosts lines, folder
        raise exc("inside the with")
    assert leftovers(cl) == []


CHILD = """
import sys
sys.path.insert(0, {bench!r})
import netcluster
with netcluster.emulated_cluster(2, {rate!r}, prefix={prefix!r}) as cl:
    print(cl.run_id, *cl.names, flush=True)
    netcluster.run_on_hosts(cl, [["sleep", "60"]] * 2, timeout=120)
"""


def netns_pids(names):
    got = [
        subprocess.run(["ip", "netns", "pids", n], capture_output=True, text=True) for n in names
    ]
    return [int(pid) for proc in got for pid in proc.stdout.split()]


def alive(pids):
    """Those of ``pids`` still running.  A killed orphan stays a zombie until the
    machine's init reaps it (seconds here): that counts as gone."""
    running = []
    for pid in pids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
            if stat.rpartition(")")[2].split()[0] != "Z":
                running.append(pid)
    return running


@contextlib.contextmanager
def child_cluster(tmp_path):
    """A child process holding a cluster with a process asleep in each namespace;
    yields (process, run_id, pids of the sleeps), killed at the end whatever happened."""
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(bench=str(BENCH), rate=RATE, prefix=PREFIX))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    pids = []
    try:
        run_id, *names = proc.stdout.readline().split()
        for _ in range(500):  # until both sleeps run
            if len(netns_pids(names)) == 2:
                break
            time.sleep(0.01)
        pids = netns_pids(names)
        yield proc, run_id, pids
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pid in alive(pids):  # never leave the sleeps behind, whatever failed
            os.kill(pid, signal.SIGKILL)


def wait_gone(pids):
    """The pids still alive after a grace second (init reaps orphans in its own time)."""
    for _ in range(100):
        if not alive(pids):
            break
        time.sleep(0.01)
    return alive(pids)


@pytest.mark.parametrize(
    "sig, code", [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, -signal.SIGINT)]
)
def test_signal_tears_down(network, tmp_path, sig, code):
    with child_cluster(tmp_path) as (proc, run_id, pids):
        assert len(leftovers(run_id)) > 5
        assert len(pids) == 2
        os.kill(proc.pid, sig)
        assert proc.wait(timeout=20) == code
        assert wait_gone(pids) == []
    assert leftovers(run_id) == []


def test_cleanup_removes_a_killed_run(network, tmp_path):
    with child_cluster(tmp_path) as (proc, run_id, pids):
        proc.kill()  # SIGKILL: no teardown runs, the sleeps are orphaned
        proc.wait()
        assert len(leftovers(run_id)) > 5
        assert len(alive(pids)) == 2
        removed = netcluster.cleanup(PREFIX)
        assert wait_gone(pids) == []
        assert f"{run_id}h1" in removed
    assert leftovers(run_id) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="namespaces are Linux's")
def test_not_root_is_network_unavailable(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(netcluster.NetworkUnavailable, match="root"):
        with netcluster.emulated_cluster(2, RATE, prefix=PREFIX):
            pass


def test_bad_rate_names_the_rate():
    with pytest.raises(ValueError, match="rate '100 megabit'"):
        netcluster.burst_bytes("100 megabit")
    assert netcluster.burst_bytes("10mbit") == 32 * 1024
    assert netcluster.burst_bytes("10gbit") == 1_250_000  # 1 ms of 1.25e9 B/s
