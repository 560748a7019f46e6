#!/usr/bin/env python3
"""Benchmark: `bmhctl watch` over N provisioned fake-hardware hosts at rest, beside BMO's schedule.

On a fresh Ironic (PostgreSQL; `--topology split`: one ironic-api and two conductors, the
default, or all-in-one) it provisions N hosts (`bmhctl provision` with PROVISIONING_LIMIT=N, not
measured), starts `bmhctl watch -f FILE` at its defaults and lets its first passes run
(`--warmup`, 90 s), then measures `--minutes` at rest:

  calls/min     Ironic API requests per minute (its access log), by kind
  Ironic CPU    every Ironic process (API and conductors), and PostgreSQL's, from /proc
  watch CPU     user+sys of the watch process over the same window, and its RSS (peak)

beside BMO's schedule for the same hosts, from its requeue times: a provisioned host is
reconciled every 60 s (one `GET /v1/nodes/{id}`, the node cached for the rest of the pass) and
the HostFirmwareSettings controller reads its BIOS settings every 5 minutes
(`GET /v1/nodes/{id}/bios`): N + N/5 calls a minute.

Then the out-of-band changes, each on --samples hosts (one at a time, a few seconds apart):

  power off     `PUT .../states/power {"target": "power off"}`; seen when watch powers it on
  maintenance   `PUT .../maintenance`; seen when watch takes it off (BMO's Adopt does)
  deleted       maintenance on and `DELETE /v1/nodes/{id}`; seen when a node of the host's name
                exists again (watch registers it anew)

For each, the seconds from the change to Ironic showing watch's answer (polled every 0.5 s),
against BMO's delay: its next steady pass, 60 s after the last plus up to 15 s of jitter.

Not a test and not part of .ci/run: run it by hand. `--hosts 20 --minutes 1` is the smoke run
scripts/test.sh makes (with --strict off: figures are not judged at that size).

    scripts/bench-watch-rest.py [--hosts 1000] [--minutes 10] [--topology split|all-in-one]
                                [--warmup 90] [--samples 3] [--bin PATH]
                                [--port 6545] [--pg-port 15545] [--json FILE] [--strict]

Exit code: 0 when every host was provisioned, watch ran throughout and every change was seen;
1 when not; 2 when PostgreSQL could not be started; 3 with --strict when the calls per minute
are over BMO's schedule or a change took longer than BMO's delay.
"""
import argparse
import collections
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import benchlib
from benchlib import log, read_calls, shape, start_ironic, tree_cpu

benchlib.TAG = "bench-watch-rest"
ROOT = benchlib.ROOT
# BMO's steady requeue of a provisioned host, and the jitter controller-runtime adds to it.
BMO_STEADY = 60.0
BMO_JITTER = 15.0
BMO_HFS_PERIOD = 300.0


class Ironic:
    """Just enough of the API for the out-of-band changes."""

    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}/v1"

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.base}/{path}", data=data, method=method, headers={
            "X-OpenStack-Ironic-API-Version": "latest", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                raw = r.read()
                return r.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as e:
            return e.code, None

    def node(self, ident):
        status, doc = self.call("GET", f"nodes/{ident}")
        return doc if status == 200 else None


def proc_cpu_rss(pid):
    """(user+sys seconds, VmRSS MiB, VmHWM MiB) of one process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / benchlib.CLK_TCK
    mem = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                k, v = line.split(":", 1)
                mem[k] = int(v.split()[0]) / 1024
    return cpu, mem.get("VmRSS", 0.0), mem.get("VmHWM", 0.0)


def wait_for(what, check, timeout, every=0.5):
    """Seconds until check() is true, or None after `timeout`."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if check():
            return time.monotonic() - t0
        time.sleep(every)
    log(f"{what}: not seen in {timeout:.0f} s")
    return None


def out_of_band(ironic, names, samples, timeout):
    """The out-of-band changes on `samples` hosts each: {kind: [seconds or None, ...]}."""
    seen = collections.defaultdict(list)
    hosts = iter(names)
    for _ in range(samples):
        name = next(hosts)
        ironic.call("PUT", f"nodes/{name}/states/power", {"target": "power off"})
        wait_for(f"{name} powered off", lambda: (ironic.node(name) or {}).get("power_state")
                 == "power off", 60)
        seen["power off"].append(wait_for(
            f"{name} powered on again",
            lambda: (ironic.node(name) or {}).get("target_power_state") == "power on"
            or (ironic.node(name) or {}).get("power_state") == "power on", timeout))
    for _ in range(samples):
        name = next(hosts)
        ironic.call("PUT", f"nodes/{name}/maintenance", {"reason": "set by hand"})
        seen["maintenance"].append(wait_for(
            f"{name} out of maintenance",
            lambda: (ironic.node(name) or {}).get("maintenance") is False, timeout))
    for _ in range(samples):
        name = next(hosts)
        old = (ironic.node(name) or {}).get("uuid")
        ironic.call("PUT", f"nodes/{name}/maintenance", {"reason": "to delete"})
        status, _ = ironic.call("DELETE", f"nodes/{name}")
        if status not in (202, 204):
            log(f"{name}: DELETE answered {status}")
            seen["deleted"].append(None)
            continue
        seen["deleted"].append(wait_for(
            f"{name} registered again",
            lambda: (ironic.node(name) or {}).get("uuid") not in (None, old), timeout))
    return seen


def schedule(hosts):
    """BMO's Ironic calls a minute for `hosts` provisioned hosts at rest."""
    return hosts * 60.0 / BMO_STEADY + hosts * 60.0 / BMO_HFS_PERIOD


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--minutes", type=float, default=10.0, help="the window at rest")
    ap.add_argument("--topology", choices=list(benchlib.TOPOLOGIES), default="split")
    ap.add_argument("--warmup", type=float, default=90.0,
                    help="seconds of watch before the window (its first passes)")
    ap.add_argument("--samples", type=int, default=3, help="hosts per out-of-band change")
    ap.add_argument("--bin", type=pathlib.Path, default=ROOT / "target" / "release" / "bmhctl",
                    help="bmhctl, its plugins staged beside it (scripts/stage-plugins.sh)")
    ap.add_argument("--port", type=int, default=6545)
    ap.add_argument("--pg-port", type=int, default=15545)
    ap.add_argument("--json", metavar="FILE", help="also write the figures to FILE")
    ap.add_argument("--strict", action="store_true",
                    help="exit 3 when a figure is over BMO's schedule or delay")
    args = ap.parse_args()
    args.bin = args.bin.absolute()  # the children run in a work directory of their own
    if not args.bin.exists():
        log(f"{args.bin} not found: build it and stage its plugins (scripts/stage-plugins.sh "
            "release)")
        return 1
    pg_was_up = benchlib.port_open(args.pg_port)
    try:
        pg_url = benchlib.start_postgres(args.pg_port, f"ironic_rest_{args.port}")
    except (RuntimeError, subprocess.CalledProcessError) as e:
        log(f"PostgreSQL: {e}")
        return 2
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="bmhctl-bench-watch-rest-"))
    watch = None
    try:
        state, benv = start_ironic(args.port, pg_url, args.topology)
        marker, logfile = benchlib.ironic_files(state, args.topology)
        pg_marker = benchlib.pg_datadir(args.pg_port)
        hosts_file = workdir / "hosts.yaml"
        hosts_file.write_text(benchlib.hosts_yaml(args.hosts, args.port))

        env = benchlib.bmhctl_env(benv, defaults=True)
        setup = dict(env, PROVISIONING_LIMIT=str(args.hosts))
        log(f"provisioning {args.hosts} hosts (PROVISIONING_LIMIT={args.hosts}, not measured)")
        code, wall, _ = benchlib.run_child(
            [str(args.bin), "provision", "--provisioner", "ironic", "-q", str(hosts_file)],
            setup, workdir, workdir / "provision.out", workdir / "provision.err")
        states = benchlib.bmhctl_states(args.bin, hosts_file, env)
        log(f"provisioned in {wall:.0f} s (exit {code}): {dict(states)}")
        if code != 0 or states.get("provisioned", 0) != args.hosts:
            return 1

        watch = subprocess.Popen(
            [str(args.bin), "watch", "--provisioner", "ironic", "-f", str(hosts_file)],
            env=env, cwd=workdir, stdout=open(workdir / "watch.out", "wb"),
            stderr=open(workdir / "watch.err", "wb"))
        log(f"watch started (pid {watch.pid}); {args.warmup:.0f} s before the window")
        offset0 = logfile.stat().st_size
        time.sleep(args.warmup)
        warm_calls = len(read_calls(logfile, offset0))

        offset = logfile.stat().st_size
        ironic0, pg0 = tree_cpu(marker)[0], tree_cpu(pg_marker)[0]
        watch0 = proc_cpu_rss(watch.pid)
        window = args.minutes * 60
        time.sleep(window)
        if watch.poll() is not None:
            log(f"watch exited ({watch.returncode}) during the window: see {workdir}/watch.err")
            return 1
        ironic1, pg1 = tree_cpu(marker)[0], tree_cpu(pg_marker)[0]
        watch1 = proc_cpu_rss(watch.pid)
        calls = read_calls(logfile, offset)
        by_kind = collections.Counter(shape(m, p) for m, p, _, _ in calls)

        per_min = len(calls) / args.minutes
        bmo = schedule(args.hosts)
        ironic_cpu = ironic1 - ironic0
        watch_cpu = watch1[0] - watch0[0]
        print(f"{args.hosts} provisioned hosts, {args.topology}, PostgreSQL: watch at rest for "
              f"{args.minutes:g} min (after {args.warmup:.0f} s: {warm_calls} calls)")
        print(f"  Ironic calls/min   {per_min:8.1f}   BMO's schedule {bmo:.0f} "
              f"({args.hosts} node GETs + {args.hosts / 5:.0f} BIOS reads)")
        print(f"  Ironic CPU         {ironic_cpu:8.1f} s  ({100 * ironic_cpu / window:.1f} % of a "
              f"core); PostgreSQL {pg1 - pg0:.1f} s")
        print(f"  watch CPU          {watch_cpu:8.2f} s  ({100 * watch_cpu / window:.2f} % of a "
              f"core); RSS {watch1[1]:.0f} MiB, peak {watch1[2]:.0f} MiB")
        for kind, n in by_kind.most_common():
            print(f"    {n:6d}  {kind}")

        names = [f"default~bench-{i}" for i in range(args.hosts)]
        timeout = 3 * (BMO_STEADY + BMO_JITTER)
        seen = out_of_band(Ironic(args.port), names, args.samples, timeout)
        print(f"  out-of-band change → seen by watch (s), BMO: {BMO_STEADY:.0f} s "
              f"(+ up to {BMO_JITTER:.0f} s jitter) at most")
        ok, within = True, True
        for kind, times in seen.items():
            got = [t for t in times if t is not None]
            ok &= len(got) == len(times)
            within &= all(t <= BMO_STEADY + BMO_JITTER for t in got)
            shown = ", ".join("not seen" if t is None else f"{t:.1f}" for t in times)
            print(f"    {kind:12s} {shown}")
        if watch.poll() is not None:
            log(f"watch exited ({watch.returncode}): see {workdir}/watch.err")
            ok = False
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps({
                "hosts": args.hosts, "topology": args.topology, "minutes": args.minutes,
                "calls_per_min": per_min, "bmo_calls_per_min": bmo,
                "ironic_cpu": ironic_cpu, "pg_cpu": pg1 - pg0, "watch_cpu": watch_cpu,
                "watch_rss_mib": watch1[1], "watch_peak_rss_mib": watch1[2],
                "calls_by_kind": dict(by_kind), "seen": seen,
            }, indent=2) + "\n")
        if not ok:
            return 1
        if args.strict and (per_min > bmo or not within):
            return 3
        return 0
    except RuntimeError as e:
        log(str(e))
        return 1
    finally:
        if watch is not None and watch.poll() is None:
            watch.send_signal(signal.SIGTERM)
            try:
                watch.wait(timeout=60)
            except subprocess.TimeoutExpired:
                watch.kill()
        benchlib.stop_ironic(args.port)
        if not pg_was_up:
            benchlib.stop_postgres(args.pg_port)
        if os.environ.get("BENCH_KEEP_WORKDIR"):
            log(f"kept {workdir}")
        else:
            subprocess.run(["rm", "-rf", str(workdir)], check=False)


if __name__ == "__main__":
    sys.exit(main())
