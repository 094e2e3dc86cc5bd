"""An emulated cluster network on one machine: K "hosts" joined by shaped links.

```
python bench/netcluster.py check --hosts 2 --rate 100mbit   # allreduce rate over the links
python bench/netcluster.py cleanup [--all]                  # leftovers of killed runs
```

Benchmarks use it to run MPI ranks (or LightGBM socket-mode processes) one per
host over links of a given bandwidth.  Linux only, as root.

Design
------
* Host i is a network namespace ``<run>h<i>``; ``<run>`` is the prefix
  (default ``dgn``), this process's pid and a letter (several clusters per
  process), e.g. ``dgn4242ah1``.  Loopback is up in every namespace.
* One Linux bridge ``<run>br`` in the root namespace plays the switch.  It
  holds ``.254`` of a private ``10.231.X.0/24``, X chosen so that the /24
  overlaps no address or route of this machine; host i has ``.i``.
* One veth pair per host: ``<run>v<i>`` on the bridge, and ``eth0`` inside
  the namespace (the same name in every namespace, so one ``FI_TCP_IFACE``
  serves every rank).
* Each link is shaped with ``tc qdisc add dev <veth> root tbf rate R burst B
  latency 50ms`` on BOTH ends of the pair: tbf shapes egress only, so the
  in-namespace end limits what the host sends and the bridge end what it
  receives: a full-duplex NIC of rate R to a switch port.  B is
  max(32 KiB, 1 ms of R) (``BURST_SECONDS``): tbf refills its bucket while
  the link idles, and what fits goes out at memory speed.  With R/250 (4 ms)
  a 1 Gbit/s link carried a leaf's 340 KB histogram, between two builds, at
  about 4 Gbit/s; with 1 ms ``check`` still reaches 919 Mbit/s at 1gbit and
  91 at 100mbit (10gbit is CPU-bound either way).
* There is no added delay: ``netem`` is not available in this kernel
  ("Specified qdisc kind is unknown").  Figures measured here are therefore
  bandwidth-bound only; latency-bound costs (many small messages, a real
  network's ~10-100 us per hop) are underestimated.  All hosts also share
  this machine's CPUs, which caps what high rates can reach.
* The hosts' names are in ``/etc/hosts`` (one line per host, plus
  ``<run>root`` for the bridge address), every line tagged
  ``# netcluster:<run>`` so that teardown removes exactly its own lines.
  Namespaces share ``/etc/hosts`` with the root, so ranks resolve them too.

* Namespaces share the UTS namespace: every host has this machine's hostname,
  so tell hosts apart by address.

Measured here (2 cores, ``check``, 20 MB float64 Allreduce, K=2, medians):
100mbit -> ~93 Mbit/s, 1gbit -> 890-940 Mbit/s, 10gbit -> 3,700-7,000 Mbit/s
(CPU-bound: varies with the load of the machine).  At K=3 MPICH's default allreduce moves more than a ring (it
folds the odd rank in first) and shows ~35% of the rate; ``check`` therefore
asks for MPICH's ring algorithm (``--algorithm auto`` to leave it).

Teardown always runs: ``emulated_cluster`` removes everything in ``finally``,
from SIGTERM/SIGINT/SIGHUP handlers (teardown, then KeyboardInterrupt for
SIGINT or SystemExit(128 + signal) otherwise, so callers' ``finally`` blocks
run too; a signal during set-up only raises, ``finally`` then tears down) and
from ``atexit``.  It kills every process it started and every
process left in the namespaces, deletes the veths, namespaces, bridge, its
``/etc/hosts`` lines and its temporary folder.  Only SIGKILL escapes it:
``cleanup`` removes what such runs left (those whose pid is dead, or all with
``--all``).

MPI across the hosts
--------------------
``mpiexec_cmd`` uses the mpich wheel's hydra with its ssh launcher pointed at
a wrapper (written into the run's temporary folder) that drops ssh's options
and runs the proxy with ``ip netns exec <host> /bin/sh -c "..."``.  Hydra
gets ``-localhost <run>root`` (the proxies call back to the bridge address;
``-iface`` is not used: it would name a root-namespace interface), ranks get
``MPIR_CVAR_CH4_NETMOD=ofi FI_PROVIDER=tcp FI_TCP_IFACE=eth0``.  Ranks are
placed ``-ppn n_per_host`` in host order: rank r is on host r // n_per_host.

API: ``emulated_cluster(k, rate, *, prefix)`` -> ``Cluster`` (``hosts``,
``names``, ``ips``, ``root_name``, ``root_ip``, ``iface``, ``run_id``);
``mpiexec_cmd``, ``run_mpi``, ``run_on_hosts``, ``lightgbm_socket_params``,
``teardown``, ``cleanup``; ``NetworkUnavailable`` where none can be made.

LightGBM's socket mode
----------------------
Each host runs its own Python process on its own shard::

    with emulated_cluster(2, "1gbit") as cluster:
        params = {**lightgbm_socket_params(cluster, 12400), "objective": "binary"}
        argv = [sys.executable, "train_shard.py", json.dumps(params)]
        results = run_on_hosts(cluster, [[*argv, str(i)] for i in range(2)], timeout=300)

where ``train_shard.py`` loads shard i and calls ``lightgbm.train(params,
lightgbm.Dataset(X_i, y_i))``.  The parameters (``machines="ip1:port,..."``,
``local_listen_port``, ``num_machines``, ``tree_learner``,
``pre_partition=True``) are the same on every host: LightGBM finds its rank
by its own address in ``machines``.  Checked by hand: 2 hosts at 100mbit,
``tree_learner`` data and voting, 10 rounds on 5,000 random rows per host.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import dataclasses
import fcntl
import functools
import ipaddress
import itertools
import json
import math
import os
import pathlib
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import common

DEFAULT_PREFIX = "dgn"
IFACE = "eth0"  # the in-namespace veth end, the same in every namespace
HOSTS_FILE = pathlib.Path("/etc/hosts")
MARKER = "# netcluster:"
SUBNET_PREFIX = "10.231"  # 10.231.X.0/24, X picked free
TBF_LATENCY = "50ms"
MIN_BURST = 32 * 1024  # bytes
#: The bucket holds this many seconds of the rate: tbf refills it while a link is
#: idle, and a message that fits goes out at memory speed, which a real NIC never
#: does.  R/250 (a 4 ms timer tick) let 1 Gbit/s links carry a leaf's 340 KB
#: histogram at ~4 Gbit/s between builds; 1 ms still reaches the rate (tbf paces
#: with high-resolution timers).  Override: NETCLUSTER_BURST_SECONDS.
BURST_SECONDS = float(os.environ.get("NETCLUSTER_BURST_SECONDS", "0.001"))
IFNAMSIZ = 15  # longest interface name Linux takes
MAX_HOSTS = 99
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# tc's rate units (tc(8)): bits or bytes per second, decimal multiples.
RATE_UNITS = {
    "bit": 1 / 8,
    "kbit": 1e3 / 8,
    "mbit": 1e6 / 8,
    "gbit": 1e9 / 8,
    "tbit": 1e12 / 8,
    "bps": 1.0,
    "kbps": 1e3,
    "mbps": 1e6,
    "gbps": 1e9,
}
_SEQ = itertools.count()  # a letter per cluster of this process


class NetworkUnavailable(RuntimeError):
    """Namespaces, bridge, veths or tbf cannot be made here; the message says why."""


class Host(NamedTuple):
    name: str  # namespace name, and host name in /etc/hosts
    ip: str
    veth: str  # the bridge-side end of its veth pair


class HostResult(NamedTuple):
    returncode: int | None  # None: still running at the timeout (then killed)
    stdout: str
    stderr: str


@dataclasses.dataclass
class Cluster:
    """What ``emulated_cluster`` yields: the hosts and the run's names."""

    run_id: str
    rate: str
    subnet: ipaddress.IPv4Network
    hosts: list[Host]
    tmpdir: str = ""
    procs: list[subprocess.Popen[str]] = dataclasses.field(default_factory=list)
    ready: bool = False  # set-up complete
    mtu: int = 1500
    torn_down: bool = False

    @property
    def names(self) -> list[str]:
        return [h.name for h in self.hosts]

    @property
    def ips(self) -> list[str]:
        return [h.ip for h in self.hosts]

    @property
    def bridge(self) -> str:
        return f"{self.run_id}br"

    @property
    def root_name(self) -> str:
        return f"{self.run_id}root"

    @property
    def root_ip(self) -> str:
        return str(self.subnet.network_address + 254)

    @property
    def iface(self) -> str:
        return IFACE

    @property
    def marker(self) -> str:
        return MARKER + self.run_id

    @property
    def wrapper(self) -> str:
        return os.path.join(self.tmpdir, "netns-ssh")


# ---------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------


def rate_bytes_per_s(rate: str) -> float:
    """Bytes per second of a tc rate such as ``100mbit`` or ``1gbit``."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([a-z]+)", rate.strip().lower())
    if not m or m[2] not in RATE_UNITS or float(m[1]) <= 0:
        units = ", ".join(RATE_UNITS)
        raise ValueError(f"rate {rate!r}: expected a positive number and one of {units}")
    return float(m[1]) * RATE_UNITS[m[2]]


def burst_bytes(rate: str) -> int:
    """tbf's bucket: a timer tick's worth of data at least, 32 KiB at least."""
    return max(MIN_BURST, math.ceil(rate_bytes_per_s(rate) * BURST_SECONDS))


def _run(cmd: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, check=False)


def _setup(cmd: Sequence[str]) -> None:
    """Run a set-up command; any failure means this machine cannot host the cluster."""
    proc = _run(cmd)
    if proc.returncode != 0:
        why = (proc.stderr or proc.stdout).strip()
        raise NetworkUnavailable(f"`{' '.join(cmd)}` failed: {why}")


def _check_tools() -> None:
    if not sys.platform.startswith("linux"):
        raise NetworkUnavailable(f"network namespaces need Linux, not {sys.platform}")
    if os.geteuid() != 0:
        raise NetworkUnavailable(f"network namespaces need root (euid is {os.geteuid()})")
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            raise NetworkUnavailable(f"`{tool}` (iproute2) is not on PATH")


def _used_networks() -> list[ipaddress.IPv4Network]:
    """The IPv4 networks of this machine's addresses and routes (root namespace)."""
    nets = []
    for m in re.finditer(r"\binet (\S+)", _run(["ip", "-o", "-4", "addr", "show"]).stdout):
        nets.append(ipaddress.ip_interface(m[1]).network)
    for line in _run(["ip", "-4", "route", "show", "table", "all"]).stdout.splitlines():
        words = line.split()
        dst = words[1] if words and words[0] in ("local", "broadcast", "unicast") else words[0]
        with contextlib.suppress(ValueError, IndexError):
            if dst != "default":
                nets.append(ipaddress.ip_network(dst, strict=False))
    return [n for n in nets if isinstance(n, ipaddress.IPv4Network)]


def _free_subnet() -> ipaddress.IPv4Network:
    used = _used_networks()
    start = os.getpid() % 256  # runs of different processes start apart
    for off in range(256):
        net = ipaddress.IPv4Network(f"{SUBNET_PREFIX}.{(start + off) % 256}.0/24")
        if not any(net.overlaps(u) for u in used):
            return net
    raise NetworkUnavailable(f"no free /24 in {SUBNET_PREFIX}.0.0/16 on this machine")


def _new_cluster(k: int, rate: str, prefix: str) -> Cluster:
    """Names and addresses of a new run (nothing is made yet)."""
    if not re.fullmatch(r"[a-z]{1,4}", prefix):
        raise ValueError(f"prefix {prefix!r}: expected 1 to 4 lower-case letters")
    if not 1 <= k <= MAX_HOSTS:
        raise ValueError(f"k={k}: expected 1 to {MAX_HOSTS} hosts")
    burst_bytes(rate)  # a bad rate fails here, before anything is made
    letter = "abcdefghijklmnopqrstuvwxyz"[next(_SEQ) % 26]
    run_id = f"{prefix}{os.getpid()}{letter}"
    if len(f"{run_id}v{k}") > IFNAMSIZ:
        raise ValueError(f"prefix {prefix!r}: interface names would exceed {IFNAMSIZ} chars")
    subnet = _free_subnet()
    hosts = [
        Host(f"{run_id}h{i}", str(subnet.network_address + i), f"{run_id}v{i}")
        for i in range(1, k + 1)
    ]
    return Cluster(run_id, rate, subnet, hosts, mtu=int(os.environ.get("NETCLUSTER_MTU", "1500")))


# ---------------------------------------------------------------------------
# set-up
# ---------------------------------------------------------------------------


def _tbf(ns: Sequence[str], dev: str, rate: str) -> list[str]:
    burst = str(burst_bytes(rate))  # a bare number is bytes to tc
    qdisc = ["qdisc", "add", "dev", dev, "root", "tbf"]
    return ["tc", *ns, *qdisc, "rate", rate, "burst", burst, "latency", TBF_LATENCY]


def _make_network(cl: Cluster) -> None:
    """Bridge, namespaces, veth pairs, addresses and tbf on both ends."""
    _setup(["ip", "link", "add", cl.bridge, "type", "bridge"])
    _setup(["ip", "addr", "add", f"{cl.root_ip}/24", "dev", cl.bridge])
    _setup(["ip", "link", "set", cl.bridge, "up"])
    for h in cl.hosts:
        _setup(["ip", "netns", "add", h.name])
        ns = ["-n", h.name]  # ip/tc run in the namespace, without a new process there
        _setup(["ip", *ns, "link", "set", "lo", "up"])
        # The peer is born in the namespace: the root may have an eth0 of its own.
        _setup(
            ["ip", "link", "add", h.veth, "type", "veth", "peer", "name", IFACE, "netns", h.name]
        )
        _setup(["ip", "link", "set", h.veth, "mtu", str(cl.mtu), "master", cl.bridge, "up"])
        _setup(["ip", *ns, "addr", "add", f"{h.ip}/24", "dev", IFACE])
        _setup(["ip", *ns, "link", "set", IFACE, "mtu", str(cl.mtu), "up"])
        _setup(_tbf([], h.veth, cl.rate))
        _setup(_tbf(ns, IFACE, cl.rate))


def _edit_hosts(edit: Callable[[list[str]], list[str]]) -> None:
    """Rewrite /etc/hosts in place (it may be a bind mount), locked against other runs."""
    with open(HOSTS_FILE, "r+", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        lines = f.read().splitlines(keepends=True)
        new = edit(lines)
        if new != lines:
            f.seek(0)
            f.write("".join(new))
            f.truncate()


def _add_hosts_lines(cl: Cluster) -> None:
    pairs = [(cl.root_ip, cl.root_name), *((h.ip, h.name) for h in cl.hosts)]
    added = [f"{ip}\t{name}\t{cl.marker}\n" for ip, name in pairs]

    def edit(lines: list[str]) -> list[str]:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        return lines + added

    try:
        _edit_hosts(edit)
    except OSError as e:
        raise NetworkUnavailable(f"cannot write {HOSTS_FILE}: {e}") from e


def _remove_hosts_lines(is_ours: Callable[[str], bool]) -> list[str]:
    """Drop the /etc/hosts lines whose marker ``is_ours``; returns them."""
    removed: list[str] = []

    def edit(lines: list[str]) -> list[str]:
        kept = []
        for line in lines:
            _, sep, tag = line.rstrip("\n").partition(MARKER)
            (removed if sep and is_ours(tag) else kept).append(line)
        return kept

    with contextlib.suppress(OSError):
        _edit_hosts(edit)
    return removed


# hydra's ssh launcher runs: <wrapper> [ssh options] HOST COMMAND...  (measured:
# the only option is -x).  COMMAND runs in HOST's namespace; other hosts are refused.
WRAPPER = """#!/bin/sh
while [ "${1#-}" != "$1" ]; do shift; done
host=$1; shift
case "$host" in
  RUN_IDh[0-9]*) ;;
  *) echo "netcluster: $host is not a host of RUN_ID" >&2; exit 255 ;;
esac
exec ip netns exec "$host" /bin/sh -c "$*"
"""


def _write_wrapper(cl: Cluster) -> None:
    cl.tmpdir = tempfile.mkdtemp(prefix=f"netcluster-{cl.run_id}-")
    path = pathlib.Path(cl.wrapper)
    path.write_text(WRAPPER.replace("RUN_ID", cl.run_id))
    path.chmod(0o755)


# ---------------------------------------------------------------------------
# teardown
# ---------------------------------------------------------------------------


def _kill_procs(procs: Sequence[subprocess.Popen[str]]) -> None:
    """SIGKILL each process's group (they run in sessions of their own), then reap."""
    for p in procs:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)
    for p in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=5)


def _kill_netns_pids(ns: str) -> None:
    """Kill what still runs in ``ns`` (hydra's proxies and ranks are not our children)."""
    for _ in range(100):
        pids = _run(["ip", "netns", "pids", ns]).stdout.split()
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        time.sleep(0.02)


def _remove_network(namespaces: Sequence[str], links: Sequence[str]) -> None:
    """Kill, then delete: links first (a veth's deletion takes its peer along at
    once, whereas a namespace's interfaces go when the kernel gets round to it)."""
    for ns in namespaces:
        _kill_netns_pids(ns)
    for link in links:
        _run(["ip", "link", "del", link])
    for ns in namespaces:
        _run(["ip", "netns", "del", ns])


@contextlib.contextmanager
def _signals_blocked() -> Iterator[None]:
    """A second Ctrl-C must not cut a teardown short (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def teardown(cl: Cluster) -> None:
    """Remove everything of ``cl``; safe to call again (later calls do nothing)."""
    if cl.torn_down:
        return
    cl.torn_down = True
    with _signals_blocked():
        _kill_procs(list(cl.procs))
        veths = [h.veth for h in cl.hosts]
        _remove_network(cl.names, [*veths, cl.bridge])
        _remove_hosts_lines(lambda tag: tag == cl.run_id)
        if cl.tmpdir:
            shutil.rmtree(cl.tmpdir, ignore_errors=True)


Handlers = dict[int, Any]


def _install_handlers(cl: Cluster) -> Handlers:
    """Tear down on SIGINT/SIGTERM/SIGHUP, then raise so that callers unwind too."""
    if threading.current_thread() is not threading.main_thread():
        return {}  # signal handlers can only be set there; finally and atexit remain
    old: Handlers = {}

    def on_signal(signum: int, frame: object) -> None:
        if cl.ready:
            teardown(cl)
        # else a set-up command may be half done: the raise below kills it, and
        # emulated_cluster's finally tears down after it.
        _restore_handlers(old)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    for sig in SIGNALS:
        old[sig] = signal.signal(sig, on_signal)
    return old


def _restore_handlers(old: Handlers) -> None:
    for sig, handler in old.items():
        signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


@contextlib.contextmanager
def emulated_cluster(k: int, rate: str, *, prefix: str = DEFAULT_PREFIX) -> Iterator[Cluster]:
    """K hosts (network namespaces) on a bridge, each link shaped to ``rate``.

    ``rate`` is a tc rate (``100mbit``, ``1gbit``).  Raises NetworkUnavailable
    (with the reason) where namespaces, the bridge or tbf cannot be made.
    Everything is removed on exit, on exceptions and on SIGINT/SIGTERM/SIGHUP.
    """
    _check_tools()
    cl = _new_cluster(k, rate, prefix)
    hook = functools.partial(teardown, cl)
    atexit.register(hook)  # a run that never returns here (sys.exit in a thread...)
    old = _install_handlers(cl)
    try:
        _make_network(cl)
        _add_hosts_lines(cl)
        _write_wrapper(cl)
        cl.ready = True
        yield cl
    finally:
        teardown(cl)
        _restore_handlers(old)
        atexit.unregister(hook)


# ---------------------------------------------------------------------------
# running processes on the hosts
# ---------------------------------------------------------------------------


def _wait(procs: Sequence[subprocess.Popen[str]], deadline: float) -> bool:
    """Wait until all exit, one fails (its peers would wait for it forever) or the
    deadline passes; True on the deadline."""
    while True:
        codes = [p.poll() for p in procs]
        if all(c is not None for c in codes) or any(c not in (None, 0) for c in codes):
            return False
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.02)


def _run_tracked(
    cl: Cluster, cmds: Sequence[Sequence[str]], env: Mapping[str, str] | None, timeout: float
) -> list[HostResult]:
    """Run ``cmds`` at once, each in its own session; all are killed on timeout,
    on a failure of one, on an exception here and at the cluster's teardown."""
    if cl.torn_down:
        raise RuntimeError(f"cluster {cl.run_id} is torn down")
    env = dict(common.rank_env() if env is None else env)
    files = [(tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")) for _ in cmds]
    procs: list[subprocess.Popen[str]] = []
    running: list[bool] = []
    try:
        for cmd, (out, err) in zip(cmds, files, strict=True):
            procs.append(
                subprocess.Popen(
                    list(cmd), stdout=out, stderr=err, text=True, env=env, start_new_session=True
                )
            )
            cl.procs.append(procs[-1])
        timed_out = _wait(procs, time.monotonic() + timeout)
        running = [timed_out and p.poll() is None for p in procs]
    finally:
        _kill_procs(procs)
        for p in procs:
            cl.procs.remove(p)
    results = []
    for p, late, (out, err) in zip(procs, running, files, strict=True):
        out.seek(0)
        err.seek(0)
        results.append(HostResult(None if late else p.returncode, out.read(), err.read()))
        out.close()
        err.close()
    return results


def run_on_hosts(
    cluster: Cluster,
    argvs: Sequence[Sequence[str]],
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> list[HostResult]:
    """Run ``argvs[i]`` in host i's namespace, all at once; (returncode, stdout,
    stderr) per host, returncode None for a process killed at the timeout.

    ``env`` is the whole environment (default ``common.rank_env()``: one thread).
    When one exits non-zero the others are killed (-9): peers would wait for it.
    """
    if len(argvs) != len(cluster.hosts):
        raise ValueError(f"argvs: {len(argvs)} commands for {len(cluster.hosts)} hosts")
    cmds = [
        ["ip", "netns", "exec", h.name, *map(str, argv)]
        for h, argv in zip(cluster.hosts, argvs, strict=True)
    ]
    return _run_tracked(cluster, cmds, env, timeout)


def mpiexec_cmd(
    cluster: Cluster,
    n_per_host: int,
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """An ``mpiexec`` command running ``argv`` on ``n_per_host`` ranks per host
    (rank r on host r // n_per_host); ``env`` holds extra variables for every
    rank (``-genv``), on top of mpiexec's own environment, which hydra passes on."""
    if n_per_host < 1:
        raise ValueError(f"n_per_host={n_per_host}: expected at least 1")
    genv = {
        "MPIR_CVAR_CH4_NETMOD": "ofi",
        "FI_PROVIDER": "tcp",
        "FI_TCP_IFACE": cluster.iface,
        **(env or {}),
    }
    cmd = [str(common.mpiexec_path()), "-localhost", cluster.root_name]
    cmd += ["-hosts", ",".join(cluster.names), "-ppn", str(n_per_host)]
    cmd += ["-n", str(n_per_host * len(cluster.hosts))]
    cmd += ["-launcher", "ssh", "-launcher-exec", cluster.wrapper]
    for key, value in genv.items():
        cmd += ["-genv", key, str(value)]
    return cmd + [str(a) for a in argv]


def run_mpi(
    cluster: Cluster,
    n_per_host: int,
    argv: Sequence[str],
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> HostResult:
    """Run ``mpiexec_cmd(cluster, n_per_host, argv)`` under ``env`` (the whole
    environment, default ``common.rank_env()``); killed at the timeout."""
    return _run_tracked(cluster, [mpiexec_cmd(cluster, n_per_host, argv)], env, timeout)[0]


def lightgbm_socket_params(
    cluster: Cluster, port: int, *, tree_learner: str = "data"
) -> dict[str, Any]:
    """LightGBM's socket-mode parameters, the same for every host (each finds its
    rank by its own address in ``machines``); each host trains its own shard."""
    return {
        "machines": ",".join(f"{ip}:{port}" for ip in cluster.ips),
        "local_listen_port": port,
        "num_machines": len(cluster.hosts),
        "tree_learner": tree_learner,
        "pre_partition": True,
    }


# ---------------------------------------------------------------------------
# cleanup of killed runs
# ---------------------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cleanup(prefix: str = DEFAULT_PREFIX, *, everything: bool = False) -> list[str]:
    """Remove the namespaces, links, /etc/hosts lines and temporary folders of
    runs with ``prefix`` whose process is dead (all of them with ``everything``);
    returns what was removed."""
    if not re.fullmatch(r"[a-z]{1,4}", prefix):
        raise ValueError(f"prefix {prefix!r}: expected 1 to 4 lower-case letters")
    run_re = re.compile(rf"{prefix}(\d+)[a-z]")

    def stale(name: str, tail: str) -> bool:
        m = re.fullmatch(rf"({run_re.pattern}){tail}", name)
        return bool(m) and (everything or not _pid_alive(int(m[2])))

    ns_out = _run(["ip", "netns", "list"]).stdout.split("\n")
    namespaces = [w[0] for w in map(str.split, ns_out) if w and stale(w[0], r"h\d+")]
    link_out = _run(["ip", "-o", "link", "show"]).stdout.splitlines()
    names = [line.split(":")[1].strip().split("@")[0] for line in link_out if ":" in line]
    links = [n for n in names if stale(n, r"(v\d+|br)")]
    links.sort(key=lambda n: n.endswith("br"))  # veths before their bridge
    _remove_network(namespaces, links)
    lines = _remove_hosts_lines(lambda tag: stale(tag, ""))
    folders = [
        str(p)
        for p in pathlib.Path(tempfile.gettempdir()).glob(f"netcluster-{prefix}*")
        if stale(p.name.split("-")[1], "")
    ]
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return [*namespaces, *links, *(line.strip() for line in lines), *folders]


# ---------------------------------------------------------------------------
# check: allreduce rate over the links
# ---------------------------------------------------------------------------

RANK_SCRIPT = """
import json, sys, time
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
n, repeats, k = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
assert comm.size == k, f"world size {comm.size}, expected {k}"
send = np.full(n, comm.rank + 1.0)
recv = np.empty_like(send)
comm.Allreduce(send, recv)  # warm-up: the connections open here
times = []
for _ in range(repeats):
    comm.Barrier()
    t0 = time.perf_counter()
    comm.Allreduce(send, recv)
    times.append(time.perf_counter() - t0)
assert recv[0] == recv[-1] == k * (k + 1) / 2, recv[0]
slowest = np.empty(repeats)
comm.Allreduce(np.array(times), slowest, op=MPI.MAX)  # a run lasts until its last rank ends
if comm.rank == 0:
    print("RESULT " + json.dumps(slowest.tolist()))
"""


def allreduce_mbit_s(nbytes: int, k: int, seconds: float) -> float:
    """Ring allreduce algorithm bandwidth: each rank sends and receives
    2 (K-1)/K of the buffer, so Mbit/s = bytes * 2 (K-1)/K * 8 / s / 1e6."""
    return nbytes * 2 * (k - 1) / k * 8 / seconds / 1e6


def _cpu_name() -> str:
    try:
        import llvmlite.binding as llvm  # Numba's; only for the machine line
    except ImportError:
        return "unknown"
    return str(llvm.get_host_cpu_name())


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def check(k: int, rate: str, mb: float, repeats: int, timeout: float, algorithm: str) -> int:
    """Set up, time an MPI Allreduce of ``mb`` MB of float64 over the links, print
    the achieved rate beside the configured one; 0 on success.  ``algorithm``
    is MPICH's (``ring`` moves exactly what the formula counts; ``auto`` lets
    MPICH choose: at K=3 its choice moves more and shows ~35% of the rate)."""
    n = int(mb * 1e6) // 8
    print(f"cpu {_cpu_name()}, {os.cpu_count()} CPUs, load {_load()}")
    with emulated_cluster(k, rate) as cl:
        script = pathlib.Path(cl.tmpdir) / "allreduce.py"
        script.write_text(RANK_SCRIPT)
        argv = [sys.executable, "-W", "ignore", str(script), str(n), str(repeats), str(k)]
        algo = {} if algorithm == "auto" else {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": algorithm}
        res = run_mpi(cl, 1, argv, timeout, common.rank_env(algo))
        print(f"hosts {', '.join(f'{h.name}={h.ip}' for h in cl.hosts)} on {cl.bridge}")
    line = next((x for x in res.stdout.splitlines() if x.startswith("RESULT ")), None)
    if res.returncode != 0 or line is None:
        why = "timed out" if res.returncode is None else f"exit code {res.returncode}"
        print(f"FAILED ({why}):\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}")
        return 1
    times = json.loads(line.split(" ", 1)[1])
    rates = [allreduce_mbit_s(n * 8, k, t) for t in times]
    conf = rate_bytes_per_s(rate) * 8 / 1e6
    med = statistics.median(rates)
    print(f"configured {rate} = {conf:.0f} Mbit/s per link (tbf both ways, no added delay)")
    print(f"Allreduce ({algorithm}) of {n * 8 / 1e6:.1f} MB float64 on {k} ranks, {repeats}x:")
    print("  rate = buffer bytes * 2 (K-1)/K * 8 / seconds (ring algorithm bandwidth)")
    print(f"  median {med:.1f} Mbit/s ({med / conf:.0%} of configured), best {max(rates):.1f}")
    print(f"  runs Mbit/s: {' '.join(f'{r:.1f}' for r in rates)}")
    print(f"load after {_load()}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    ch = sub.add_parser("check", help="allreduce rate over an emulated cluster")
    ch.add_argument("--hosts", type=int, default=2, help="K hosts, one rank each")
    ch.add_argument("--rate", default="100mbit", help="tc rate of every link")
    ch.add_argument("--mb", type=float, default=20.0, help="allreduce buffer, MB")
    ch.add_argument("--repeats", type=int, default=5)
    ch.add_argument("--timeout", type=float, default=300.0, help="seconds for mpiexec")
    ch.add_argument("--algorithm", default="ring", help="MPICH allreduce algorithm, or auto")
    cu = sub.add_parser("cleanup", help="remove what killed runs left behind")
    cu.add_argument("--prefix", default=DEFAULT_PREFIX)
    cu.add_argument("--all", action="store_true", help="also runs whose pid is alive")
    args = ap.parse_args(argv)
    if args.command == "cleanup":
        removed = cleanup(args.prefix, everything=args.all)
        print("\n".join(f"removed {r}" for r in removed) or "nothing to remove")
        return 0
    if args.hosts < 2:
        ap.error(f"--hosts {args.hosts}: an allreduce needs at least 2")
    try:
        return check(args.hosts, args.rate, args.mb, args.repeats, args.timeout, args.algorithm)
    except NetworkUnavailable as e:
        print(f"cannot emulate the network here: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
