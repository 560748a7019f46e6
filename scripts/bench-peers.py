#!/usr/bin/env python3
"""Benchmark: bmhctl against a minimal hand-written driver, each on a fresh Ironic.

For each backend (SQLite, PostgreSQL), each topology, each number of hosts and each contender,
it starts a fresh Ironic with the same configuration (IRONIC_FRESH=1, noauth, automated cleaning
on; port 6485, PostgreSQL in a private cluster of scripts/ironic/start-postgres.sh on 15485),
takes N fake-hardware hosts from nothing to active and powered on, and measures the run. The
topologies (--topology):

  all-in-one   one `ironic` process (scripts/ironic/start-ironic.sh), the default
  split        one ironic-api and two ironic-conductor processes
               (scripts/ironic/start-ironic-split.sh --conductors 2); PostgreSQL only, so
               SQLite runs are all-in-one whatever is asked

The contenders:

  driver-all   scripts/peer_driver.py --concurrency 0   (every node in flight)
  driver-8     scripts/peer_driver.py --concurrency 8
  driver-bmo   scripts/peer_driver.py --bmo-calls --concurrency 0: the driver plus the calls BMO
               makes beyond it (registration PATCH, port POST, validate), its instance PATCH
               and deploy request with bmhctl's content (config drive included): BMO's floor
               (driver-bmo-K: K in flight); not by default
  bmhctl       `bmhctl provision --provisioner ironic` at its defaults, on one file of N hosts
               (the binary given by --bin; its plugins staged beside it in plugins/, as
               scripts/stage-plugins.sh does)
  bmhctl-K     the same with --concurrency K (not by default: for a sweep of passes in flight)
  bmhctl-bmo   the same with --timing bmo (not by default: BMO's requeue times, for reference)
  bmhctl-limit-N  bmhctl at its defaults with PROVISIONING_LIMIT=N instead of BMO's 20 (not
               by default: what the limit costs)

For every run it prints: wall (from the child's start to its exit), client CPU (user+sys of the
child, os.wait4), Ironic CPU (every Ironic process: API and conductors when split) and
PostgreSQL CPU (from /proc, as scripts/bench-ironic.py measures them), API calls and calls per host (Ironic's access log), and whether the outcome is
right (the driver exited 0; bmhctl exited 0 and `bmhctl get` shows every host provisioned).
Then the ratios of bmhctl to the driver's best run (the smaller wall of driver-all and
driver-8) against the bounds bmhctl aims for: wall <= 1.0x at 200 hosts and more, <= 1.25x below;
calls per host <= 1.5x; Ironic CPU per host <= 1.2x. When driver-bmo or bmhctl-limit-N ran,
also (no bounds): driver-bmo / the driver's best (what BMO's own calls cost), bmhctl /
driver-bmo (what is bmhctl's own), and bmhctl-limit-N against both.
--calls adds, per run, the API calls by kind with Ironic's time for them: the count, the sum
and the median of the durations Ironic's access log gives each request (the "(5.9ms)" at the
end of the line: the time the API took to answer, waits on the database and on locks
included), the kinds that cost Ironic most first.

Not a test and not part of .ci/run: run it by hand.

    scripts/bench-peers.py [--hosts 50,200] [--backend sqlite|postgres|both]
                           [--topology all-in-one|split|both]
                           [--contenders driver-all,driver-8,driver-bmo,bmhctl,...]
                           [--bin PATH]
                           [--port 6485] [--pg-port 15485] [--poll 1.0]
                           [--calls] [--json FILE] [--strict]

    scripts/bench-peers.py --hosts 10 --backend sqlite      # a quick check, about 1.5 minutes
    scripts/bench-peers.py --hosts 50 --backend postgres --topology both   # side by side
    scripts/bench-peers.py --hosts 200 --backend postgres --calls \
        --contenders driver-all,driver-bmo,bmhctl,bmhctl-limit-200      # BMO's floor, the limit

`driver-K` runs the driver with K nodes in flight, for any K. Exit code: 0 when every run had
the right outcome; 1 when one did not; 2 when PostgreSQL was asked for explicitly and could
not be started; 3 with --strict when every run was right but a ratio is over its bound.
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
from benchlib import log, port_open, read_calls, run_child, shape, start_ironic, tree_cpu

benchlib.TAG = "bench-peers"
ROOT = benchlib.ROOT
DRIVER = ROOT / "scripts" / "peer_driver.py"
BOUNDS = {"calls": 1.5, "ironic_cpu": 1.2}


def wall_bound(hosts):
    return 1.0 if hosts >= 200 else 1.25


Contender = collections.namedtuple("Contender", "kind in_flight timing limit")


def _positive(text):
    return int(text) if text.isdigit() and int(text) > 0 else None


def parse_contender(name):
    """A contender's name -> Contender(kind, in_flight, timing, limit). kind is 'driver',
    'driver-bmo' (the driver with --bmo-calls) or 'bmhctl'; in_flight is the driver's
    --concurrency (0: all) or bmhctl's (None: its default); timing 'bmo' for bmhctl-bmo;
    limit the PROVISIONING_LIMIT of bmhctl-limit-N."""
    if name == "bmhctl":
        return Contender("bmhctl", None, None, None)
    if name == "bmhctl-bmo":
        return Contender("bmhctl", None, "bmo", None)
    if name.startswith("bmhctl-limit-") and _positive(name[13:]):
        return Contender("bmhctl", None, None, int(name[13:]))
    if name.startswith("bmhctl-") and _positive(name[7:]):
        return Contender("bmhctl", int(name[7:]), None, None)
    if name == "driver-bmo":
        return Contender("driver-bmo", 0, None, None)
    if name.startswith("driver-bmo-") and _positive(name[11:]):
        return Contender("driver-bmo", int(name[11:]), None, None)
    if name == "driver-all":
        return Contender("driver", 0, None, None)
    if name.startswith("driver-") and _positive(name[7:]):
        return Contender("driver", int(name[7:]), None, None)
    raise ValueError(name)


# --- one run -----------------------------------------------------------------------------------


def run_once(args, backend, topology, hosts, contender, workdir, pg_url):
    who = parse_contender(contender)
    state, benv = start_ironic(args.port, pg_url or "sqlite", topology)
    endpoint = f"http://127.0.0.1:{args.port}"
    rundir = workdir / f"{backend}-{topology}-{hosts}-{contender}"
    shutil.rmtree(rundir, ignore_errors=True)
    rundir.mkdir(parents=True)

    driver = who.kind != "bmhctl"
    if driver:
        env = benchlib.bmhctl_env({})
        cmd = [sys.executable, str(DRIVER), "--endpoint", endpoint, "--nodes", str(hosts),
               "--concurrency", str(who.in_flight), "--poll", str(args.poll), "--prefix", "bench",
               "--image-source", benchlib.image_url(args.port),
               "--image-checksum", benchlib.IMAGE_CHECKSUM]
        if who.kind == "driver-bmo":
            cmd.append("--bmo-calls")
        hosts_file = None
    else:
        env = benchlib.bmhctl_env(benv, defaults=True)
        if who.limit is not None:
            env["PROVISIONING_LIMIT"] = str(who.limit)
        hosts_file = rundir / "hosts.yaml"
        hosts_file.write_text(benchlib.hosts_yaml(hosts, args.port))
        cmd = [str(args.bin), "provision", "--provisioner", "ironic", "-q", "-o", "json"]
        if who.timing is not None:
            cmd += ["--timing", who.timing]
        if who.in_flight is not None:
            cmd += ["--concurrency", str(who.in_flight)]
        cmd.append(str(hosts_file))

    ironic_marker, logfile = benchlib.ironic_files(state, topology)
    pg_marker = benchlib.pg_datadir(args.pg_port) if pg_url else None

    time.sleep(2)  # let Ironic's start-up work settle before the first reading
    offset = logfile.stat().st_size
    ironic0, nprocs = tree_cpu(ironic_marker)
    if nprocs < 2:
        log(f"warning: Ironic's process tree has {nprocs} process(es); expected master + worker")
    pg0 = tree_cpu(pg_marker)[0] if pg_marker else 0.0

    limit = f"PROVISIONING_LIMIT={who.limit} " if who.limit is not None else ""
    log(f"{backend}, {topology}, {hosts} hosts, {contender}: {limit}{' '.join(cmd)}")
    code, wall, ru = run_child(cmd, env, rundir, rundir / "stdout", rundir / "stderr")
    time.sleep(0.5)  # the access-log line of the last request is written after its answer
    ironic1, _ = tree_cpu(ironic_marker)
    pg1 = tree_cpu(pg_marker)[0] if pg_marker else 0.0
    calls = read_calls(logfile, offset)

    r = {
        "backend": backend, "topology": topology, "hosts": hosts, "contender": contender,
        "exit": code,
        "wall": wall, "client_cpu": ru.ru_utime + ru.ru_stime, "client_rss": ru.ru_maxrss / 1024,
        "ironic_cpu": ironic1 - ironic0, "pg_cpu": (pg1 - pg0) if pg_marker else None,
        "calls": calls, "state_dir": str(state),
    }
    if driver:
        try:
            summary = json.loads((rundir / "stdout").read_text())
        except ValueError:
            summary = {}
        r["driver"] = summary
        r["ok"] = code == 0 and summary.get("ok") == hosts
        r["outcome"] = f"{summary.get('ok', '?')}/{hosts} active"
    else:
        states = benchlib.bmhctl_states(args.bin, hosts_file, env)
        r["states"] = dict(states)
        r["ok"] = code == 0 and states.get("provisioned", 0) == hosts
        r["outcome"] = f"{states.get('provisioned', 0)}/{hosts} provisioned"
    if not r["ok"]:
        log(f"{backend}, {topology}, {hosts} hosts, {contender}: exit {code}, {r['outcome']}")
        sys.stderr.write((rundir / "stderr").read_text(errors="replace")[-3000:])
        if driver:
            sys.stderr.write(json.dumps(r["driver"].get("errors", []), indent=1) + "\n")
    return r


# --- report ------------------------------------------------------------------------------------


def best_of(group, kind):
    """The run of `kind` (a Contender kind) with the smallest wall among the right ones, or
    None."""
    runs = [r for r in group if parse_contender(r["contender"]).kind == kind and r.get("ok")]
    return min(runs, key=lambda r: r["wall"]) if runs else None


def best_driver(group):
    """The minimal driver's best run (driver-bmo does not count: it makes BMO's calls)."""
    return best_of(group, "driver")


def figures(a, b):
    """a / b for wall, calls per host and Ironic CPU per host (the same hosts on each side)."""
    return {
        "wall": a["wall"] / max(1e-9, b["wall"]),
        "calls_per_host": len(a["calls"]) / max(1, len(b["calls"])),
        "ironic_cpu_per_host": a["ironic_cpu"] / max(1e-9, b["ironic_cpu"]),
    }


def floor_ratios(group):
    """The unbounded ratios that split bmhctl's gap: [(numerator, denominator, figures)] for
    driver-bmo / the driver's best, bmhctl / driver-bmo, and each bmhctl-limit-N / both."""
    driver, bmo = best_driver(group), best_of(group, "driver-bmo")
    right = {r["contender"]: r for r in group if r.get("ok")}
    pairs = [(bmo, driver), (right.get("bmhctl"), bmo)]
    for name, r in right.items():
        if parse_contender(name).limit is not None:
            pairs += [(r, driver), (r, bmo)]
    return [(a["contender"], b["contender"], figures(a, b)) for a, b in pairs if a and b]


def call_kinds(calls):
    """{kind: (count, sum of Ironic's logged ms, median ms)} of a run's calls, the costliest
    kind (largest sum) first."""
    by_kind = collections.defaultdict(list)
    for method, path, _status, ms in calls:
        by_kind[shape(method, path)].append(ms)
    out = {}
    for kind, ms in sorted(by_kind.items(), key=lambda kv: -sum(kv[1])):
        ms = sorted(ms)
        mid = len(ms) // 2
        median = ms[mid] if len(ms) % 2 else (ms[mid - 1] + ms[mid]) / 2
        out[kind] = (len(ms), sum(ms), median)
    return out


def ratios(group):
    """bmhctl / the driver's best, per figure: {figure: (ratio, bound)}; None when either
    side is missing."""
    best = best_driver(group)
    bm = next((r for r in group if r["contender"] == "bmhctl" and r.get("ok")), None)
    if best is None or bm is None:
        return None
    f = figures(bm, best)
    return {
        "driver_best": best["contender"],
        "wall": (f["wall"], wall_bound(bm["hosts"])),
        "calls_per_host": (f["calls_per_host"], BOUNDS["calls"]),
        "ironic_cpu_per_host": (f["ironic_cpu_per_host"], BOUNDS["ironic_cpu"]),
    }


def report(args, results):
    print()
    print(f"{time.strftime('%Y-%m-%d %H:%M')}: fake-hardware hosts, nothing -> active and "
          f"powered on, automated cleaning on, a fresh Ironic per run, {os.cpu_count()} CPUs")
    over = False
    groups = collections.defaultdict(list)
    for r in results:
        groups[(r["backend"], r["hosts"])].append(r)
    for (backend, n), group in groups.items():
        print(f"\n{backend}, {n} hosts")
        head = (f"{'topology':<10} {'contender':<16} {'result':>22} {'wall s':>7} {'client CPU s':>12} "
                f"{'Ironic CPU s':>12} {'PG CPU s':>8} {'API calls':>9} {'calls/host':>10} "
                f"{'Ironic CPU/host':>15}")
        print(head)
        print("-" * len(head))
        for r in group:
            topology = r.get("topology", "-")
            if "error" in r:
                print(f"{topology:<10} {r['contender']:<16} {'not run':>22}  {r['error']}")
                continue
            ncalls = len(r["calls"])
            result = ("ok " if r["ok"] else "FAILED ") + r["outcome"]
            pg = f"{r['pg_cpu']:.1f}" if r["pg_cpu"] is not None else "-"
            print(f"{topology:<10} {r['contender']:<16} {result:>22} {r['wall']:>7.1f} {r['client_cpu']:>12.2f} "
                  f"{r['ironic_cpu']:>12.1f} {pg:>8} {ncalls:>9} {ncalls / n:>10.1f} "
                  f"{r['ironic_cpu'] / n:>15.2f}")
        for r in group:
            d = r.get("driver")
            if d:
                print(f"  {r['topology']} {r['contender']}: {d.get('listings')} listings, "
                      f"{d.get('locked_retries')} retries on 409 locked, "
                      f"{d.get('connection_retries')} on a dropped connection")
        for topology in benchlib.TOPOLOGIES:
            runs = [r for r in group if "error" not in r and r["topology"] == topology]
            if not runs:
                continue
            rat = ratios(runs)
            if rat is None:
                print(f"{topology}: ratios not computed (bmhctl or every driver run missing or "
                      "wrong)")
            else:
                parts = []
                for key, label in (("wall", "wall"), ("calls_per_host", "calls/host"),
                                   ("ironic_cpu_per_host", "Ironic CPU/host")):
                    value, bound = rat[key]
                    mark = "ok" if value <= bound else "OVER"
                    over |= value > bound
                    parts.append(f"{label} {value:.2f}x (<= {bound}x: {mark})")
                print(f"{topology}: bmhctl / {rat['driver_best']}: " + "; ".join(parts))
            for a, b, f in floor_ratios(runs):
                print(f"{topology}: {a} / {b}: wall {f['wall']:.2f}x; calls/host "
                      f"{f['calls_per_host']:.2f}x; Ironic CPU/host "
                      f"{f['ironic_cpu_per_host']:.2f}x")
        if args.calls:
            for r in group:
                if "error" in r:
                    continue
                kinds = call_kinds(r["calls"])
                total = sum(k[1] for k in kinds.values()) / 1000
                print(f"  {r['topology']} {r['contender']}: {len(r['calls'])} calls, Ironic's "
                      f"logged time {total:.1f} s ({total / n:.3f} s/host)")
                print(f"    {'calls':>7} {'per host':>8} {'sum s':>7} {'median ms':>9}  kind")
                for kind, (c, ms, median) in kinds.items():
                    print(f"    {c:>7} {c / n:>8.2f} {ms / 1000:>7.2f} {median:>9.1f}  {kind}")
    return over


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", default="50,200",
                    help="comma-separated numbers of hosts (default 50,200)")
    ap.add_argument("--backend", choices=["sqlite", "postgres", "both"], default=None,
                    help="default both (PostgreSQL is skipped with a warning if unavailable)")
    ap.add_argument("--topology", choices=["all-in-one", "split", "both"], default="all-in-one",
                    help="how Ironic runs (default all-in-one; split: an API and two "
                    "conductors, PostgreSQL only; both: each run in each, side by side)")
    ap.add_argument("--contenders", default="driver-all,driver-8,bmhctl",
                    help="comma-separated: driver-all, driver-K, driver-bmo, driver-bmo-K "
                    "(the driver with BMO's extra calls), bmhctl, bmhctl-K (--concurrency K), "
                    "bmhctl-bmo (--timing bmo), bmhctl-limit-N (PROVISIONING_LIMIT=N)")
    ap.add_argument("--bin", type=pathlib.Path, default=ROOT / "target" / "release" / "bmhctl",
                    help="the bmhctl binary (default target/release/bmhctl)")
    ap.add_argument("--port", type=int, default=6485,
                    help="Ironic's port (its image server uses the next one)")
    ap.add_argument("--pg-port", type=int, default=15485,
                    help="the private PostgreSQL cluster's port")
    ap.add_argument("--poll", type=float, default=1.0, help="the driver's listing period (s)")
    ap.add_argument("--calls", action="store_true",
                    help="print the API calls by kind, with Ironic's logged time for them")
    ap.add_argument("--json", metavar="FILE", help="also write the raw figures to FILE")
    ap.add_argument("--strict", action="store_true", help="exit 3 when a ratio is over its bound")
    args = ap.parse_args()
    try:
        host_counts = [int(x) for x in args.hosts.split(",") if x.strip()]
        contenders = [c.strip() for c in args.contenders.split(",") if c.strip()]
        for c in contenders:
            parse_contender(c)
    except ValueError as e:
        ap.error(f"bad --hosts or --contenders: {e}")
    if not host_counts or min(host_counts) < 1:
        ap.error("--hosts takes positive integers, e.g. 50 or 50,200")
    backends = ["sqlite", "postgres"] if args.backend in (None, "both") else [args.backend]
    topologies = list(benchlib.TOPOLOGIES) if args.topology == "both" else [args.topology]
    if topologies == ["split"] and backends == ["sqlite"]:
        ap.error("--topology split needs PostgreSQL: --backend postgres")
    pg_required = args.backend in ("postgres", "both")
    args.bin = args.bin.absolute()
    if any(c.startswith("bmhctl") for c in contenders):
        if not args.bin.exists():
            sys.exit(f"{args.bin} missing: build it (scripts/stage-plugins.sh release) or give "
                     "--bin")
        if not (args.bin.parent / "plugins" / "ironic-provisioner.so").exists():
            sys.exit(f"{args.bin.parent}/plugins/ironic-provisioner.so missing: run "
                     "scripts/stage-plugins.sh release (or stage the plugins beside --bin)")
    state = benchlib.lab_dir() / f"ironic-{args.port}"
    ours = (state / "ironic.pid").exists() or (state / "split" / "api.pid").exists()
    for p in (args.port, args.port + 1):
        if port_open(p) and not ours:
            sys.exit(f"127.0.0.1:{p} already answers, not this lab's Ironic: pick another "
                     "--port (it and the next one must be free)")

    pg_was_up = port_open(args.pg_port)
    pg_started = False
    ironic_started = False
    results = []
    status = 0
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="bmhctl-bench-peers-"))
    try:
        for backend in backends:
            pg_url = None
            if backend == "postgres":
                try:
                    pg_started = not pg_was_up
                    pg_url = benchlib.start_postgres(args.pg_port, f"ironic_peers_{args.port}")
                except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
                    log(f"PostgreSQL backend NOT measured: {e}. PostgreSQL needs Debian's "
                        "postgresql package (start-postgres.sh installs it with apt-get when "
                        "run as root).")
                    if pg_required:
                        status = max(status, 2)
                    results.append({"backend": backend, "hosts": 0, "contender": "-",
                                    "error": str(e)})
                    continue
            # several Ironic processes need a server database
            kinds = topologies if backend == "postgres" else ["all-in-one"]
            for hosts in host_counts:
                for topology in kinds:
                    for contender in contenders:
                        try:
                            ironic_started = True
                            r = run_once(args, backend, topology, hosts, contender, workdir,
                                         pg_url)
                        except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
                            log(f"{backend}, {topology}, {hosts} hosts, {contender}: run "
                                f"failed: {e}")
                            status = max(status, 1)
                            results.append({"backend": backend, "topology": topology,
                                            "hosts": hosts, "contender": contender,
                                            "error": str(e)})
                            continue
                        results.append(r)
                        if not r["ok"]:
                            status = max(status, 1)
    except KeyboardInterrupt:
        log("interrupted")
        status = 130
    finally:
        if ironic_started:
            benchlib.stop_ironic(args.port)
        if pg_started:
            benchlib.stop_postgres(args.pg_port)
        shutil.rmtree(workdir, ignore_errors=True)
    over = report(args, [r for r in results if r.get("hosts")])
    if args.json:
        out = []
        for r in results:
            raw = {k: v for k, v in r.items() if k != "calls"}
            if "calls" in r:
                raw["api_calls"] = len(r["calls"])
                raw["call_kinds"] = {k: {"n": c, "sum_ms": round(ms, 1), "median_ms": median}
                                     for k, (c, ms, median) in call_kinds(r["calls"]).items()}
            out.append(raw)
        groups = collections.defaultdict(list)
        for r in results:
            if "error" not in r:
                groups[(r["backend"], r["topology"], r["hosts"])].append(r)
        summary, floor = [], []
        for (backend, topology, n), group in groups.items():
            rat = ratios(group)
            if rat:
                summary.append({"backend": backend, "topology": topology, "hosts": n,
                                "driver_best": rat["driver_best"],
                                **{k: {"ratio": v[0], "bound": v[1]}
                                   for k, v in rat.items() if k != "driver_best"}})
            floor += [{"backend": backend, "topology": topology, "hosts": n, "numerator": a,
                       "denominator": b, **f} for a, b, f in floor_ratios(group)]
        with open(args.json, "w") as f:
            json.dump({"runs": out, "ratios": summary, "floor": floor}, f, indent=2)
    if status == 0 and over and args.strict:
        status = 3
    return status


if __name__ == "__main__":
    sys.exit(main())
