"""Helpers shared by the Ironic benchmarks (scripts/bench-ironic.py, scripts/bench-peers.py).

Not a script: import it from a script in this directory.

    import benchlib
    state, env = benchlib.start_ironic(6485, "sqlite")      # a fresh Ironic (IRONIC_FRESH=1)
    cpu, nprocs = benchlib.tree_cpu(str(state / "ironic.conf"))
    calls = benchlib.read_calls(state / "ironic.log", offset)

What it holds:
  * the lab: start_ironic / stop_ironic / ironic_files (scripts/ironic/start-ironic.sh or
    start-ironic-split.sh, stop-ironic.sh),
    start_postgres / stop_postgres / pg_datadir (scripts/ironic/start-postgres.sh), port_open;
  * CPU of a process tree from /proc (tree_cpu);
  * Ironic's API access log (read_calls, shape);
  * a child run with wall time and rusage (run_child);
  * the hosts file of fake-hardware hosts (hosts_yaml) and its check (bmhctl_states).
"""
import collections
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
LAB_SCRIPTS = ROOT / "scripts" / "ironic"
CLK_TCK = os.sysconf("SC_CLK_TCK")

SECRET = """---
apiVersion: v1
kind: Secret
metadata:
  name: bench-bmc
type: Opaque
stringData:
  username: admin
  password: password
"""

HOST = """---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: bench-{i}
  labels:
    bench: "yes"
spec:
  online: true
  bmc:
    address: fake-hardware://bench-{i}
    credentialsName: bench-bmc
  image:
    url: {image_url}
    checksum: {image_checksum}
    checksumType: sha256
    format: qcow2
"""

# The image every benchmark deploys (fake-hardware never downloads it): a qcow2 on the Ironic
# instance's own image server (port + 1), with a sha256 checksum.
IMAGE_CHECKSUM = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"


def image_url(ironic_port):
    return f"http://127.0.0.1:{ironic_port + 1}/images/fedora.qcow2"


# 2026-11-29 12:19:38.474 346 INFO ironic.api [None req-... - - - - - -] 127.0.0.1 - GET /v1/ - 200 (1.32ms)
ACCESS = re.compile(
    r" INFO ironic\.api \[[^\]]*\] \S+ - ([A-Z]+) (\S+) - (\d{3}) \(([\d.]+)ms\)"
)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


TAG = "bench"  # the prefix of log lines: a script sets its own name


def log(msg):
    print(f"[{TAG}] {msg}", file=sys.stderr, flush=True)


def lab_dir():
    d = os.environ.get("BMHCTL_LAB_DIR") or str(ROOT / ".state" / "ironic")
    return pathlib.Path(d).absolute()


# --- CPU of a process tree, from /proc ------------------------------------------------------


def _procs():
    """pid -> (ppid, cmdline, cpu ticks incl. reaped children) for every readable process."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        # the command name (field 2) may hold spaces and parentheses: split after the last ')'
        fields = stat[stat.rindex(")") + 2 :].split()
        ppid = int(fields[1])
        utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
        out[int(entry)] = (ppid, cmd, utime + stime + cutime + cstime)
    return out


def tree_cpu(marker):
    """CPU seconds of every process whose command line contains `marker`, plus descendants,
    and the number of processes counted.

    Each process counts its own time and that of its children it has reaped, so a worker that
    exits between two readings is still counted (in its parent) and nothing counts twice."""
    procs = _procs()
    kids = collections.defaultdict(list)
    for pid, (ppid, _, _) in procs.items():
        kids[ppid].append(pid)
    roots = [pid for pid, (_, cmd, _) in procs.items() if marker in cmd]
    seen, stack = set(), list(roots)
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        stack.extend(kids.get(pid, ()))
    # a root that is a descendant of another root is fine: `seen` counts each once
    ticks = sum(procs[p][2] for p in seen if p in procs)
    return ticks / CLK_TCK, len(seen)


# --- the lab -----------------------------------------------------------------------------------


def port_open(port):
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _pg_bin():
    return sorted(pathlib.Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: [
        int(x) if x.isdigit() else 0 for x in p.parent.name.split(".")])[-1]


def start_postgres(pg_port, db_name):
    """Start the private cluster on `pg_port` (if needed) and a database of our own in it;
    return its URL."""
    r = subprocess.run(
        [str(LAB_SCRIPTS / "start-postgres.sh"), str(pg_port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    if r.returncode != 0 or not r.stdout.strip():
        raise RuntimeError("scripts/ironic/start-postgres.sh failed (see its messages above)")
    url = r.stdout.strip().splitlines()[-1]
    # a database of our own in the cluster: IRONIC_FRESH=1 drops every table of the
    # database it is given, and other labs may use the default `ironic` one
    psql = [str(_pg_bin() / "psql"), "-h", "127.0.0.1", "-p", str(pg_port), "-U", "postgres",
            "-v", "ON_ERROR_STOP=1", "-qAt"]
    exists = subprocess.run(
        psql + ["-c", f"select 1 from pg_database where datname = '{db_name}'"],
        stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    if not exists:
        subprocess.run(psql + ["-c", f"create database {db_name} owner ironic"], check=True)
    return url.rsplit("/", 1)[0] + "/" + db_name


def stop_postgres(pg_port):
    subprocess.run([str(LAB_SCRIPTS / "stop-postgres.sh"), str(pg_port)], check=False)


def pg_datadir(pg_port):
    f = lab_dir() / f"pg-{pg_port}" / "datadir"
    return f.read_text().strip() if f.exists() else str(lab_dir() / f"pg-{pg_port}" / "data")


# How Ironic runs: one process (start-ironic.sh), or one ironic-api and two ironic-conductor
# processes on a server database (start-ironic-split.sh, conductors on 127.0.0.2 and .3:8089).
TOPOLOGIES = ("all-in-one", "split")


def start_ironic(port, db_url, topology="all-in-one"):
    """A fresh Ironic (IRONIC_FRESH=1: database and logs wiped) on 127.0.0.1:port, noauth,
    the lab's default configuration otherwise, in `topology` (split needs PostgreSQL).
    Returns (state dir, bmhctl.env as a dict)."""
    env = dict(os.environ, IRONIC_FRESH="1", IRONIC_DB=db_url, IRONIC_AUTH="noauth")
    for k in ("IRONIC_EXTRA_CONF", "IRONIC_AUTOMATED_CLEAN", "IRONIC_DEBUG"):
        env.pop(k, None)
    if topology == "split":
        cmd = [str(LAB_SCRIPTS / "start-ironic-split.sh"), str(port), "--conductors", "2"]
    else:
        cmd = [str(LAB_SCRIPTS / "start-ironic.sh"), str(port)]
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed")
    log(f"Ironic ({topology}) on port {port} ready in {time.monotonic() - t0:.1f} s ({db_url})")
    state = lab_dir() / f"ironic-{port}"
    benv = {}
    for line in (state / "bmhctl.env").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            benv[k] = v
    return state, benv


def ironic_files(state, topology):
    """(marker, access log) of an Ironic started by start_ironic: the marker is in the command
    line of each of its processes (for tree_cpu), the log is where the API logs requests."""
    if topology == "split":
        return f"{state}/split/", state / "split" / "api.log"
    return str(state / "ironic.conf"), state / "ironic.log"


def stop_ironic(port):
    subprocess.run([str(LAB_SCRIPTS / "stop-ironic.sh"), str(port)], check=False)


def bmhctl_env(benv, defaults=False):
    """The environment for a bmhctl child: ours without any Ironic setting, plus the instance's
    bmhctl.env. `defaults`: also without the settings that change bmhctl's defaults
    (BMO_CONCURRENCY and the like, BMHCTL_TIME_SCALE, BMHCTL_TIMING)."""
    drop = ("IRONIC_", "DEPLOY_", "METAL3_", "PROVISIONING_LIMIT", "BMHCTL_PROVISIONER",
            "PROVISIONER_PLUGIN_DIR")
    if defaults:
        drop += ("BMO_", "BMHCTL_TIME")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(benv)
    return env


# --- API calls from the access log -------------------------------------------------------------


def read_calls(logfile, offset):
    """(method, path, status, ms) of every API request logged after byte `offset`."""
    calls = []
    with open(logfile, "rb") as f:
        f.seek(offset)
        for raw in f:
            m = ACCESS.search(raw.decode(errors="replace"))
            if m:
                calls.append((m.group(1), m.group(2), int(m.group(3)), float(m.group(4))))
    return calls


def shape(method, path):
    """A call with its node, name and query values blanked: GET /v1/nodes/{id}."""
    path = UUID.sub("{id}", path)
    path = re.sub(r"/v1/nodes/[^/?]*~[^/?]*", "/v1/nodes/{ns~name}", path)
    path = re.sub(r"/v1/nodes/(?!\{|detail\b)[^/?]+", "/v1/nodes/{name}", path)
    path = re.sub(r"=[^&]*", "=…", path)
    return f"{method} {path}"


# --- a measured child ------------------------------------------------------------------------


def run_child(cmd, env, cwd, stdout_path, stderr_path):
    """Run `cmd` to its end. Returns (exit code, wall seconds, resource usage from os.wait4).
    Ctrl-C is passed on to the child (SIGINT) and re-raised once it has exited."""
    t0 = time.monotonic()
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        child = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, cwd=cwd)
        try:
            _, status, ru = os.wait4(child.pid, 0)
        except BaseException:
            child.send_signal(signal.SIGINT)
            child.wait()
            raise
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, ru


# --- hosts -------------------------------------------------------------------------------------


def hosts_yaml(n, ironic_port):
    """A Secret and `n` BareMetalHosts bench-<i> (fake-hardware, online, an image on the
    instance's image server)."""
    url = image_url(ironic_port)
    return SECRET + "".join(
        HOST.format(i=i, image_url=url, image_checksum=IMAGE_CHECKSUM) for i in range(n))


def bmhctl_states(binary, hosts_file, env):
    """Count of hosts per provisioning state, read back with `bmhctl get -o json`."""
    got = subprocess.run([str(binary), "get", "-f", str(hosts_file), "-o", "json"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    states = collections.Counter()
    try:
        doc = json.loads(got.stdout)
        items = doc if isinstance(doc, list) else doc.get("hosts", doc.get("items", []))
        for h in items:
            st = h.get("state") or h.get("status", {}).get("provisioning", {}).get("state") or ""
            states[st] += 1
    except (json.JSONDecodeError, AttributeError):
        states["<unreadable `bmhctl get` output>"] += 1
    return states
