#!/usr/bin/env python3
"""Benchmark: drive N fake-hardware hosts (default 200) from enroll to active on a local Ironic.

For each backend (SQLite, PostgreSQL) it starts a dedicated, fresh Ironic with
scripts/ironic/start-ironic.sh (SQLite on port 6415, PostgreSQL on port 6425 with the private
cluster of scripts/ironic/start-postgres.sh on 15432), runs `bmhctl provision FILE -q` on one
file of N fake-hardware hosts, checks that every host reached `provisioned`, and prints:

  wall         from the start of bmhctl to its exit
  bmhctl CPU   user+sys of the bmhctl child (os.wait4)
  Ironic CPU   utime+stime+cutime+cstime, from /proc/PID/stat, summed over Ironic's process
               tree (every process whose command line names the instance's ironic.conf, and
               their descendants), after minus before; children reaped meanwhile are included
  PG CPU       the same for the PostgreSQL cluster's process tree (PostgreSQL backend only)
  API calls    requests in Ironic's API access log (the `ironic.api` INFO lines Ironic writes
               to ironic.log for every request), counted between bmhctl's start and exit

Not a test and not part of .ci/run: run it by hand (`--hosts 5` is a quick smoke test).

    scripts/bench-ironic.py [--hosts N] [--backend sqlite|postgres|both]
                            [--concurrency C] [--provisioning-limit L[,L...]]
                            [--time-scale S] [--calls] [--json FILE] [--keep] [--no-build]

`--provisioning-limit 8,20,200` runs once per limit and backend (each on a fresh Ironic).
Exit code: 0 when every run provisioned every host; 1 when a run failed or a host did not reach
`provisioned`; 2 when PostgreSQL was asked for explicitly (`--backend postgres|both` given on
the command line) but could not be started.
"""
import argparse
import collections
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
LAB_SCRIPTS = ROOT / "scripts" / "ironic"
PORTS = {"sqlite": 6415, "postgres": 6425}
PG_PORT = 15432
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
    url: http://127.0.0.1:{img_port}/images/fedora.qcow2
    checksum: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    checksumType: sha256
    format: qcow2
"""

# 2026-11-29 12:19:38.474 346 INFO ironic.api [None req-... - - - - - -] 127.0.0.1 - GET /v1/ - 200 (1.32ms)
ACCESS = re.compile(
    r" INFO ironic\.api \[[^\]]*\] \S+ - ([A-Z]+) (\S+) - (\d{3}) \(([\d.]+)ms\)"
)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def log(msg):
    print(f"[bench-ironic] {msg}", file=sys.stderr, flush=True)


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
    """CPU seconds of every process whose command line contains `marker`, plus descendants.

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


def start_postgres(db_name):
    """Start the private cluster (if needed) and a database of our own in it; its URL."""
    r = subprocess.run(
        [str(LAB_SCRIPTS / "start-postgres.sh"), str(PG_PORT)],
        stdout=subprocess.PIPE,
        text=True,
    )
    if r.returncode != 0 or not r.stdout.strip():
        raise RuntimeError("scripts/ironic/start-postgres.sh failed (see its messages above)")
    url = r.stdout.strip().splitlines()[-1]
    # a database of our own in the shared cluster: IRONIC_FRESH=1 drops every table of the
    # database it is given, and other labs may use the default `ironic` one
    pgbin = sorted(pathlib.Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: [
        int(x) if x.isdigit() else 0 for x in p.parent.name.split(".")])[-1]
    psql = [str(pgbin / "psql"), "-h", "127.0.0.1", "-p", str(PG_PORT), "-U", "postgres",
            "-v", "ON_ERROR_STOP=1", "-qAt"]
    exists = subprocess.run(
        psql + ["-c", f"select 1 from pg_database where datname = '{db_name}'"],
        stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    if not exists:
        subprocess.run(psql + ["-c", f"create database {db_name} owner ironic"], check=True)
    return url.rsplit("/", 1)[0] + "/" + db_name


def pg_datadir():
    f = lab_dir() / f"pg-{PG_PORT}" / "datadir"
    return f.read_text().strip() if f.exists() else str(lab_dir() / f"pg-{PG_PORT}" / "data")


def start_ironic(port, db_url):
    env = dict(os.environ, IRONIC_FRESH="1", IRONIC_DB=db_url, IRONIC_AUTH="noauth")
    env.pop("IRONIC_EXTRA_CONF", None)
    t0 = time.monotonic()
    r = subprocess.run([str(LAB_SCRIPTS / "start-ironic.sh"), str(port)], env=env,
                       stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"scripts/ironic/start-ironic.sh {port} failed")
    log(f"Ironic on port {port} ready in {time.monotonic() - t0:.1f} s ({db_url})")
    state = lab_dir() / f"ironic-{port}"
    benv = {}
    for line in (state / "bmhctl.env").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            benv[k] = v
    return state, benv


def stop_ironic(port):
    subprocess.run([str(LAB_SCRIPTS / "stop-ironic.sh"), str(port)], check=False)


# --- API calls from the access log -------------------------------------------------------------


def read_calls(logfile, offset):
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
    path = re.sub(r"/v1/nodes/(?!\{)[^/?]+", "/v1/nodes/{name}", path)
    path = re.sub(r"=[^&]*", "=…", path)
    return f"{method} {path}"


# --- one run -----------------------------------------------------------------------------------


def run_once(args, backend, limit, binary, workdir):
    port = PORTS[backend]
    if backend == "postgres":
        db_url = start_postgres(f"ironic_bench_{port}")
    else:
        db_url = "sqlite"
    state, benv = start_ironic(port, db_url)
    img_port = port + 1

    hosts_file = workdir / f"hosts-{backend}-{limit or 'default'}.yaml"
    hosts_file.write_text(
        SECRET + "".join(HOST.format(i=i, img_port=img_port) for i in range(args.hosts)))
    shutil.rmtree(workdir / ".bmhctl", ignore_errors=True)

    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("IRONIC_", "DEPLOY_", "METAL3_", "PROVISIONING_LIMIT",
                                "BMHCTL_PROVISIONER", "PROVISIONER_PLUGIN_DIR"))}
    env.update(benv)
    if limit is not None:
        env["PROVISIONING_LIMIT"] = str(limit)
    if args.time_scale is not None:
        env["BMHCTL_TIME_SCALE"] = args.time_scale
    cmd = [str(binary), "provision", "--provisioner", "ironic", "-q", "-o", "json"]
    if args.concurrency:
        cmd += ["--concurrency", str(args.concurrency)]
    cmd.append(str(hosts_file))

    ironic_marker = str(state / "ironic.conf")
    image_marker = str(state / "httpboot")
    pg_marker = pg_datadir() if backend == "postgres" else None
    logfile = state / "ironic.log"

    time.sleep(2)  # let Ironic's start-up work settle before the first reading
    offset = logfile.stat().st_size
    ironic0, nprocs = tree_cpu(ironic_marker)
    if nprocs < 2:
        log(f"warning: Ironic's process tree has {nprocs} process(es); expected master + worker")
    image0, _ = tree_cpu(image_marker)
    pg0 = tree_cpu(pg_marker)[0] if pg_marker else 0.0

    log(f"{backend}: provisioning {args.hosts} hosts (PROVISIONING_LIMIT="
        f"{limit if limit is not None else 'default 20'}, concurrency="
        f"{args.concurrency or 'default'}): {' '.join(cmd)}")
    t0 = time.monotonic()
    with open(workdir / "stdout.json", "wb") as out, open(workdir / "stderr.log", "wb") as err:
        child = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, cwd=workdir)
        try:
            _, status, ru = os.wait4(child.pid, 0)
        except BaseException:
            child.send_signal(signal.SIGINT)
            child.wait()
            raise
        child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    time.sleep(0.5)  # the access-log line of the last request is written after its answer
    ironic1, _ = tree_cpu(ironic_marker)
    image1, _ = tree_cpu(image_marker)
    pg1 = tree_cpu(pg_marker)[0] if pg_marker else 0.0
    calls = read_calls(logfile, offset)

    # verify: every host provisioned, read back from the file
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
        states["<unreadable `bmhctl get` output>"] = args.hosts
    ok = child.returncode == 0 and states.get("provisioned", 0) == args.hosts
    if not ok:
        log(f"{backend}: bmhctl exit {child.returncode}; states {dict(states)}")
        sys.stderr.write((workdir / "stderr.log").read_text(errors="replace")[-3000:])

    return {
        "backend": backend,
        "limit": limit,
        "exit": child.returncode,
        "ok": ok,
        "states": dict(states),
        "wall": wall,
        "bmhctl_cpu": ru.ru_utime + ru.ru_stime,
        "bmhctl_user": ru.ru_utime,
        "bmhctl_sys": ru.ru_stime,
        "bmhctl_rss": ru.ru_maxrss / 1024,
        "ironic_cpu": ironic1 - ironic0,
        "image_cpu": image1 - image0,
        "pg_cpu": (pg1 - pg0) if pg_marker else None,
        "calls": calls,
        "state_dir": str(state),
    }


def report(args, results):
    n = args.hosts
    print()
    print(f"{time.strftime('%Y-%m-%d %H:%M')}: {n} fake-hardware hosts, enroll -> active, "
          f"bmhctl provision -q "
          f"(concurrency {args.concurrency or 'default'}, BMHCTL_TIME_SCALE "
          f"{args.time_scale or 'default 1'}), {os.cpu_count()} CPUs")
    head = (f"{'backend':<9} {'limit':>5} {'result':>12} {'wall s':>7} {'hosts/s':>7} "
            f"{'bmhctl CPU s':>12} {'Ironic CPU s':>12} {'PG CPU s':>8} {'API calls':>9} "
            f"{'calls/host':>10} {'Ironic CPU/host':>15}")
    print(head)
    print("-" * len(head))
    for r in results:
        if "error" in r:
            print(f"{r['backend']:<9} {str(r['limit'] or '20'):>5} {'not run':>12}  {r['error']}")
            continue
        ncalls = len(r["calls"])
        result = "ok" if r["ok"] else f"FAILED {r['states'].get('provisioned', 0)}/{n}"
        pg = f"{r['pg_cpu']:.1f}" if r["pg_cpu"] is not None else "-"
        print(f"{r['backend']:<9} {str(r['limit'] or '20'):>5} {result:>12} {r['wall']:>7.1f} "
              f"{n / r['wall']:>7.2f} {r['bmhctl_cpu']:>12.2f} {r['ironic_cpu']:>12.1f} "
              f"{pg:>8} {ncalls:>9} {ncalls / n:>10.1f} {r['ironic_cpu'] / n:>15.2f}")
    for r in results:
        if "error" in r:
            continue
        statuses = collections.Counter(c[2] for c in r["calls"])
        ms = sum(c[3] for c in r["calls"])
        print(f"\n{r['backend']} (limit {r['limit'] or 'default 20'}): bmhctl user "
              f"{r['bmhctl_user']:.2f} s, sys {r['bmhctl_sys']:.2f} s, peak RSS "
              f"{r['bmhctl_rss']:.0f} MiB; image server CPU {r['image_cpu']:.2f} s; "
              f"answers {dict(sorted(statuses.items()))}; time in the API "
              f"{ms / 1000:.1f} s (on average {ms / 1000 / r['wall']:.2f} requests in flight); "
              f"state {r['state_dir']}")
        if args.calls:
            shapes = collections.Counter(shape(c[0], c[1]) for c in r["calls"])
            for s, c in shapes.most_common():
                print(f"  {c:>7} {c / n:>7.2f}/host  {s}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=200)
    ap.add_argument("--backend", choices=["sqlite", "postgres", "both"], default=None,
                    help="default both (PostgreSQL is skipped with a warning if unavailable)")
    ap.add_argument("--concurrency", type=int, default=None, help="bmhctl's --concurrency")
    ap.add_argument("--provisioning-limit", default=None,
                    help="PROVISIONING_LIMIT; a comma-separated list runs once per value")
    ap.add_argument("--time-scale", default=None, help="BMHCTL_TIME_SCALE (default 1)")
    ap.add_argument("--keep", action="store_true",
                    help="leave Ironic (and PostgreSQL) running and the hosts files in place")
    ap.add_argument("--no-build", action="store_true", help="use target/release as it is")
    ap.add_argument("--calls", action="store_true", help="print the API calls by kind")
    ap.add_argument("--json", metavar="FILE", help="also write the figures to FILE")
    args = ap.parse_args()
    if args.hosts < 1:
        ap.error("--hosts must be at least 1")
    backends = ["sqlite", "postgres"] if args.backend in (None, "both") else [args.backend]
    pg_required = args.backend in ("postgres", "both")
    limits = [None]
    if args.provisioning_limit:
        try:
            limits = [int(x) for x in args.provisioning_limit.split(",") if x.strip()]
        except ValueError:
            ap.error("--provisioning-limit takes integers, e.g. 8 or 8,20,200")

    binary = ROOT / "target" / "release" / "bmhctl"
    if not args.no_build:
        subprocess.run([str(ROOT / "scripts" / "stage-plugins.sh"), "release"], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
    if not (binary.parent / "plugins" / "ironic-provisioner.so").exists():
        sys.exit("target/release/plugins/ironic-provisioner.so missing: "
                 "run scripts/stage-plugins.sh release")

    pg_was_up = port_open(PG_PORT)
    started = []  # Ironic ports to stop
    pg_started = False
    results = []
    status = 0
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="bmhctl-bench-ironic-"))
    try:
        for backend in backends:
            for limit in limits:
                try:
                    started.append(PORTS[backend])
                    if backend == "postgres" and not pg_was_up:
                        pg_started = True
                    r = run_once(args, backend, limit, binary, workdir)
                except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
                    if backend == "postgres":
                        log(f"PostgreSQL backend NOT measured: {e}. PostgreSQL needs Debian's "
                            "postgresql package (start-postgres.sh installs it with apt-get "
                            "when run as root).")
                        if pg_required:
                            status = max(status, 2)
                    else:
                        log(f"{backend} run failed: {e}")
                        status = max(status, 1)
                    results.append({"backend": backend, "limit": limit, "error": str(e)})
                    break
                results.append(r)
                if not r["ok"]:
                    status = max(status, 1)
    except KeyboardInterrupt:
        log("interrupted")
        status = 130
    finally:
        if args.keep:
            log(f"--keep: left running: Ironic on {sorted(set(started))}"
                f"{', PostgreSQL on %d' % PG_PORT if pg_started else ''}; hosts files in "
                f"{workdir}")
        else:
            for port in sorted(set(started)):
                stop_ironic(port)
            if pg_started:
                subprocess.run([str(LAB_SCRIPTS / "stop-postgres.sh"), str(PG_PORT)],
                               check=False)
            shutil.rmtree(workdir, ignore_errors=True)
    report(args, results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{k: v for k, v in r.items() if k != "calls"} |
                       ({"api_calls": len(r["calls"])} if "calls" in r else {})
                       for r in results], f, indent=2)
    return status


if __name__ == "__main__":
    sys.exit(main())
