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
import shutil
import subprocess
import sys
import tempfile
import time

import benchlib
from benchlib import (log, port_open, read_calls, run_child, shape, start_ironic, stop_ironic,
                      tree_cpu)

ROOT = benchlib.ROOT
LAB_SCRIPTS = benchlib.LAB_SCRIPTS
PORTS = {"sqlite": 6415, "postgres": 6425}
PG_PORT = 15432
benchlib.TAG = "bench-ironic"


# --- one run -----------------------------------------------------------------------------------


def run_once(args, backend, limit, binary, workdir):
    port = PORTS[backend]
    if backend == "postgres":
        db_url = benchlib.start_postgres(PG_PORT, f"ironic_bench_{port}")
    else:
        db_url = "sqlite"
    state, benv = start_ironic(port, db_url)

    hosts_file = workdir / f"hosts-{backend}-{limit or 'default'}.yaml"
    hosts_file.write_text(benchlib.hosts_yaml(args.hosts, port))
    shutil.rmtree(workdir / ".bmhctl", ignore_errors=True)

    env = benchlib.bmhctl_env(benv)
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
    pg_marker = benchlib.pg_datadir(PG_PORT) if backend == "postgres" else None
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
    code, wall, ru = run_child(cmd, env, workdir, workdir / "stdout.json",
                               workdir / "stderr.log")
    time.sleep(0.5)  # the access-log line of the last request is written after its answer
    ironic1, _ = tree_cpu(ironic_marker)
    image1, _ = tree_cpu(image_marker)
    pg1 = tree_cpu(pg_marker)[0] if pg_marker else 0.0
    calls = read_calls(logfile, offset)

    # verify: every host provisioned, read back from the file
    states = benchlib.bmhctl_states(binary, hosts_file, env)
    ok = code == 0 and states.get("provisioned", 0) == args.hosts
    if not ok:
        log(f"{backend}: bmhctl exit {code}; states {dict(states)}")
        sys.stderr.write((workdir / "stderr.log").read_text(errors="replace")[-3000:])

    return {
        "backend": backend,
        "limit": limit,
        "exit": code,
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
