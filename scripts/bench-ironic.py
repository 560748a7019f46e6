#!/usr/bin/env python3
"""Benchmark: a fleet through one Ironic, bmhctl beside BMO's floor, at BMO's limit and without.

It runs scripts/bench-peers.py (a fresh Ironic on PostgreSQL per run, fake-hardware hosts from
nothing to active and powered on) with four contenders on one topology:

  driver-bmo-L   the repo's driver sending BMO's requests, L nodes in flight (L = the limit)
  bmhctl         `bmhctl provision` at its defaults (PROVISIONING_LIMIT L, BMO's 20)
  driver-bmo     the same driver with every node in flight
  bmhctl-limit-N bmhctl with PROVISIONING_LIMIT lifted to the number of hosts

and prints, beside bench-peers' table (wall, client CPU and peak RSS, Ironic and PostgreSQL CPU,
API calls), what bmhctl aims for:

  Ironic CPU/host   bmhctl / driver-bmo          <= 1.05x
  calls/host        bmhctl / driver-bmo          <= 1.00x
  wall              bmhctl / driver-bmo-L        <= 1.05x  (the same limit)
  wall              bmhctl-limit-N / driver-bmo  <= 1.05x  (the limit lifted)
  own CPU           bmhctl CPU / Ironic CPU      <  2 %

and where Ironic's time goes: each run's calls by kind, with the time Ironic's access log gives
them (bench-peers --calls); scripts/bench-ironic-calls.py prices each kind alone.

Not a test and not part of .ci/run: run it by hand; scripts/test.sh makes a 20-host smoke run.

    scripts/bench-ironic.py [--hosts 1000] [--topology split|all-in-one] [--limit 20]
                            [--contenders LIST] [--bin PATH]
                            [--port 6485] [--pg-port 15485] [--json FILE] [--strict]

    scripts/bench-ironic.py --hosts 1000 --topology split     # about 45 minutes on 2 cores
    scripts/bench-ironic.py --hosts 20 --contenders driver-bmo,bmhctl    # the smoke run

Exit code: bench-peers' (0 every run right, 1 a run wrong, 2 no PostgreSQL); 3 with --strict
when every run was right but a figure misses its aim.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import benchlib
from benchlib import log

benchlib.TAG = "bench-ironic"
ROOT = benchlib.ROOT
PEERS = ROOT / "scripts" / "bench-peers.py"
AIMS = {"cpu": 1.05, "calls": 1.0, "wall": 1.05, "own_cpu": 0.02}


def by_name(runs):
    return {r["contender"]: r for r in runs if r.get("ok")}


def judge(runs, hosts, limit):
    """[(label, value, aim)] for the figures bmhctl aims for; a missing run leaves its line out."""
    right = by_name(runs)
    bm, bmo = right.get("bmhctl"), right.get("driver-bmo")
    bmo_l, lifted = right.get(f"driver-bmo-{limit}"), right.get(f"bmhctl-limit-{hosts}")
    out = []
    if bm and bmo:
        out.append(("Ironic CPU/host, bmhctl / driver-bmo",
                    bm["ironic_cpu"] / bmo["ironic_cpu"], AIMS["cpu"]))
        out.append(("calls/host, bmhctl / driver-bmo",
                    bm["api_calls"] / bmo["api_calls"], AIMS["calls"]))
    if bm and bmo_l:
        out.append((f"wall, bmhctl / driver-bmo-{limit}", bm["wall"] / bmo_l["wall"],
                    AIMS["wall"]))
    if lifted and bmo:
        out.append((f"wall, bmhctl-limit-{hosts} / driver-bmo", lifted["wall"] / bmo["wall"],
                    AIMS["wall"]))
    for name in ("bmhctl", f"bmhctl-limit-{hosts}"):
        r = right.get(name)
        if r:
            out.append((f"own CPU, {name} / its Ironic CPU", r["client_cpu"] / r["ironic_cpu"],
                        AIMS["own_cpu"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--topology", choices=list(benchlib.TOPOLOGIES), default="split")
    ap.add_argument("--limit", type=int, default=20, help="BMO's PROVISIONING_LIMIT (bmhctl's default)")
    ap.add_argument("--contenders", default=None,
                    help="default: driver-bmo-LIMIT,bmhctl,driver-bmo,bmhctl-limit-HOSTS")
    ap.add_argument("--bin", type=pathlib.Path, default=ROOT / "target" / "release" / "bmhctl")
    ap.add_argument("--port", type=int, default=6485)
    ap.add_argument("--pg-port", type=int, default=15485)
    ap.add_argument("--json", metavar="FILE", help="also write bench-peers' figures to FILE")
    ap.add_argument("--strict", action="store_true", help="exit 3 when a figure misses its aim")
    args = ap.parse_args()
    contenders = args.contenders or (f"driver-bmo-{args.limit},bmhctl,driver-bmo,"
                                     f"bmhctl-limit-{args.hosts}")
    out = args.json or tempfile.mktemp(prefix="bmhctl-bench-ironic-", suffix=".json")
    cmd = [sys.executable, str(PEERS), "--hosts", str(args.hosts), "--backend", "postgres",
           "--topology", args.topology, "--contenders", contenders, "--calls",
           "--bin", str(args.bin), "--port", str(args.port), "--pg-port", str(args.pg_port),
           "--json", out]
    log(" ".join(cmd))
    code = subprocess.run(cmd).returncode
    if code not in (0, 1) or not pathlib.Path(out).exists():
        return code
    runs = json.loads(pathlib.Path(out).read_text())["runs"]
    if not args.json:
        pathlib.Path(out).unlink()
    print(f"\nWhat bmhctl aims for, {args.hosts} hosts, {args.topology}, limit {args.limit}:")
    missed = False
    for label, value, aim in judge(runs, args.hosts, args.limit):
        ok = value <= aim if not label.startswith("own") else value < aim
        missed |= not ok
        shown = f"{100 * value:.2f} %" if label.startswith("own") else f"{value:.2f}x"
        bound = f"{100 * aim:.0f} %" if label.startswith("own") else f"{aim:.2f}x"
        print(f"  {label:48s} {shown:>8}  (aim {bound}: {'ok' if ok else 'MISSED'})")
    for r in runs:
        if r.get("ok"):
            print(f"  {r['contender']}: client peak RSS {r['client_rss']:.0f} MiB")
    if code == 0 and missed and args.strict:
        return 3
    return code


if __name__ == "__main__":
    sys.exit(main())
