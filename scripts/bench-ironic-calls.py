#!/usr/bin/env python3
"""Benchmark: what each kind of API call costs Ironic's CPU, one call at a time.

scripts/bench-peers.py compares whole runs; this script prices their parts. On a fresh Ironic
(the same configuration as bench-peers: IRONIC_FRESH=1, noauth, automated cleaning on, port
6525) it takes N fake-hardware nodes from nothing to active and powered on, one request at a
time with nothing else in flight, and measures Ironic's CPU (every Ironic process, from /proc)
around each kind of request, then divides by the number sent. A request that starts work in
the conductor (a state change) is measured until every node has settled, so the conductor's
work counts; the node listings made to see them settle are priced separately and taken off.

The kinds are those of scripts/peer_driver.py (the minimal driver) and of its --bmo-calls
(BMO's calls beyond it, with bmhctl's content): the registration PATCH, the port POST,
validate, BMO's eight-op instance PATCH against the driver's two, and the deploy with BMO's
config drive against the deploy without (half the nodes each). Then the reads: a node GET,
validate, a port listing, and a node listing with each field set in use (bmhctl's shared
listing, the driver's, BMO's capacity check).

It prints, per kind, the calls sent, Ironic CPU per call and wall per call, and the sum of
what BMO's calls add per host. Not a test and not part of .ci/run: run it by hand.

    scripts/bench-ironic-calls.py [--nodes 200] [--backend sqlite|postgres]
                                  [--port 6525] [--pg-port 15525] [--json FILE]

Exit code 0 when every node reached active and powered on, 1 when one did not, 2 when
PostgreSQL could not be started.
"""
import argparse
import json
import re
import sys
import time
import uuid as uuid_module

import benchlib
import peer_driver
from benchlib import log, start_ironic, stop_ironic, tree_cpu
from peer_driver import Client, Stats

benchlib.TAG = "bench-ironic-calls"
ROOT = benchlib.ROOT


def rust_fields(name):
    """The field list of `pub const NAME: &[&str] = &[...]` in src/ironic/api.rs: the fields
    bmhctl lists nodes with, read from the source so this script cannot drift from it."""
    text = (ROOT / "src" / "ironic" / "api.rs").read_text()
    m = re.search(rf"pub const {name}: &\[&str\] = &\[(.*?)\];", text, re.S)
    if not m:
        raise SystemExit(f"bench-ironic-calls: {name} not found in src/ironic/api.rs")
    return ",".join(re.findall(r'"([^"]+)"', m.group(1)))


class Pricer:
    """Ironic's CPU and the wall time around a batch of requests."""

    def __init__(self, marker, client):
        self.marker, self.c = marker, client
        self.rows = []
        self.listing_cpu = None  # Ironic CPU of one settle listing, once measured

    def cpu(self):
        return tree_cpu(self.marker)[0]

    def price(self, kind, calls, settle=None, nodes=None):
        """Send `calls` (callables, one request each); with `settle`, wait until every node
        (of `nodes`, a set of UUIDs, when given) satisfies it, taking off the settle listings'
        CPU. Returns the row."""
        c0, w0 = self.cpu(), time.monotonic()
        for call in calls:
            call()
        listings = self.wait(settle, nodes) if settle else 0
        c1, w1 = self.cpu(), time.monotonic()
        spent = c1 - c0 - listings * (self.listing_cpu or 0.0)
        row = {"kind": kind, "calls": len(calls), "cpu_ms": 1000 * spent / len(calls),
               "wall_ms": 1000 * (w1 - w0) / len(calls), "settle_listings": listings}
        self.rows.append(row)
        log(f"{kind}: {row['cpu_ms']:.1f} ms Ironic CPU per call ({len(calls)} calls"
            f"{f', {listings} settle listings taken off' if listings else ''})")
        return row

    def listing(self):
        path = f"/v1/nodes?fields={peer_driver.LIST_FIELDS}&limit={peer_driver.PAGE_LIMIT}"
        return self.c.call("GET", path)["nodes"]

    def wait(self, settle, only=None, timeout=600.0):
        """List nodes every second until `settle(node)` holds for all (of `only`, when given);
        the listings made."""
        deadline, made = time.monotonic() + timeout, 0
        while True:
            time.sleep(1.0)
            nodes = [n for n in self.listing() if only is None or n["uuid"] in only]
            made += 1
            if all(settle(n) for n in nodes):
                return made
            failed = [n for n in nodes if n.get("last_error") and peer_driver.settled(n)
                      and not settle(n)]
            if failed:
                raise peer_driver.Failed(f"{failed[0]['uuid']}: {failed[0]['last_error']}")
            if time.monotonic() > deadline:
                raise peer_driver.Failed("timed out waiting for the nodes to settle")


def in_state(state, power=None):
    return lambda n: (peer_driver.settled(n) and n.get("provision_state") == state
                      and (power is None or n.get("power_state") == power))


def run(args):
    pg_url = None
    if args.backend == "postgres":
        try:
            pg_url = benchlib.start_postgres(args.pg_port, f"ironic_calls_{args.port}")
        except RuntimeError as e:
            log(f"PostgreSQL could not be started: {e}")
            return 2
    state, _ = start_ironic(args.port, pg_url or "sqlite")
    marker, _ = benchlib.ironic_files(state, "all-in-one")
    c = Client(f"http://127.0.0.1:{args.port}", Stats())
    p = Pricer(marker, c)
    n = args.nodes
    try:
        time.sleep(3)  # let the conductor's start-up work end before measuring
        idle0 = p.cpu()
        time.sleep(10)
        idle_per_s = (p.cpu() - idle0) / 10
        log(f"idle: {1000 * idle_per_s:.1f} ms Ironic CPU per second")
        uuids = []
        p.price("POST /v1/nodes", [
            lambda i=i: uuids.append(c.call("POST", "/v1/nodes", dict(
                peer_driver.NODE_BODY, name=f"calls-{i}"))["uuid"]) for i in range(n)])
        p.listing_cpu = p.price("GET /v1/nodes?fields= (settle listing)",
                                [p.listing for _ in range(20)])["cpu_ms"] / 1000

        def provision(u, target, **extra):
            return lambda: c.call("PUT", f"/v1/nodes/{u}/states/provision",
                                  dict({"target": target}, **extra))

        p.price("PUT provision manage (+ verifying)", [provision(u, "manage") for u in uuids],
                in_state("manageable"))
        p.price("PATCH registration (BMO)", [
            lambda u=u: c.call("PATCH", f"/v1/nodes/{u}", peer_driver.REGISTRATION_PATCH)
            for u in uuids])
        p.price("PUT provision inspect (+ inspecting)", [provision(u, "inspect") for u in uuids],
                in_state("manageable"))
        p.price("POST /v1/ports (BMO)", [
            lambda u=u: c.call("POST", "/v1/ports", {"node_uuid": u, "address":
                                                     peer_driver.boot_mac(u), "pxe_enabled": True})
            for u in uuids])
        p.price("PUT provision provide (+ cleaning)", [provision(u, "provide") for u in uuids],
                in_state("available"))
        image = argparse.Namespace(image_source=benchlib.image_url(args.port),
                                   image_checksum=benchlib.IMAGE_CHECKSUM)
        p.price("PATCH instance_info, the driver's 2 ops", [
            lambda u=u: c.call("PATCH", f"/v1/nodes/{u}", [
                {"op": "add", "path": "/instance_info/image_source",
                 "value": image.image_source},
                {"op": "add", "path": "/instance_info/image_checksum",
                 "value": image.image_checksum}]) for u in uuids])
        instance = {u: str(uuid_module.uuid4()) for u in uuids}
        p.price("PATCH instance_info, BMO's 8 ops", [
            lambda u=u: c.call("PATCH", f"/v1/nodes/{u}", peer_driver.instance_patch(
                image, instance[u])) for u in uuids])
        p.price("GET /v1/nodes/{id}/validate (BMO)", [
            lambda u=u: c.call("GET", f"/v1/nodes/{u}/validate") for u in uuids])
        half = n // 2
        with_cd, without_cd = uuids[:half], uuids[half:]
        p.price("PUT provision active, BMO's config drive (+ deploying)", [
            provision(u, "active", configdrive=peer_driver.config_drive(instance[u], f"calls-{i}"))
            for i, u in enumerate(with_cd)], in_state("active"), set(with_cd))
        p.price("PUT provision active (+ deploying)", [provision(u, "active") for u in without_cd],
                in_state("active"), set(without_cd))
        p.price("PUT power on (+ powering on)", [
            lambda u=u: c.call("PUT", f"/v1/nodes/{u}/states/power", {"target": "power on"})
            for u in uuids], in_state("active", "power on"))
        k = max(20, n // 10)
        p.price("GET /v1/nodes/{id}", [lambda u=u: c.call("GET", f"/v1/nodes/{u}")
                                        for u in uuids])
        for label, fields in (("bmhctl's shared listing", rust_fields("WATCH_FIELDS")),
                              ("the driver's listing", peer_driver.LIST_FIELDS),
                              ("BMO's capacity listing", rust_fields("CAPACITY_FIELDS"))):
            path = f"/v1/nodes?fields={fields}&limit={peer_driver.PAGE_LIMIT}"
            p.price(f"GET /v1/nodes?fields=…, {label} ({n} nodes)",
                    [lambda path=path: c.call("GET", path) for _ in range(k)])
        path = f"/v1/ports?fields={rust_fields('PORT_FIELDS')}&limit={peer_driver.PAGE_LIMIT}"
        p.price(f"GET /v1/ports?fields=… ({n} ports)", [lambda: c.call("GET", path)
                                                        for _ in range(k)])
    except peer_driver.Failed as e:
        log(f"failed: {e}")
        return 1
    finally:
        c.close()
        stop_ironic(args.port)
        if pg_url:
            benchlib.stop_postgres(args.pg_port)
    report(args, p.rows, idle_per_s)
    return 0


def report(args, rows, idle_per_s):
    by = {r["kind"]: r["cpu_ms"] for r in rows}
    print(f"\n{time.strftime('%Y-%m-%d %H:%M')}: {args.nodes} fake-hardware nodes, "
          f"{args.backend}, one request at a time; Ironic idle {1000 * idle_per_s:.1f} ms CPU/s")
    print(f"{'calls':>6} {'CPU ms/call':>12} {'wall ms/call':>13}  kind")
    for r in rows:
        print(f"{r['calls']:>6} {r['cpu_ms']:>12.1f} {r['wall_ms']:>13.1f}  {r['kind']}")
    extra = {
        "registration PATCH": by["PATCH registration (BMO)"],
        "port POST": by["POST /v1/ports (BMO)"],
        "validate": by["GET /v1/nodes/{id}/validate (BMO)"],
        "8-op instance PATCH instead of 2": by["PATCH instance_info, BMO's 8 ops"]
        - by["PATCH instance_info, the driver's 2 ops"],
        "deploy with the config drive": by["PUT provision active, BMO's config drive (+ deploying)"]
        - by["PUT provision active (+ deploying)"],
    }
    driver = sum(v for k, v in by.items() if not k.endswith("(BMO)") and "BMO's" not in k
                 and k.startswith(("POST /v1/nodes", "PUT", "PATCH instance_info, the driver")))
    print(f"\nthe driver's writes, per host: {driver:.1f} ms Ironic CPU")
    print("BMO's calls beyond them, per host:")
    for k, v in extra.items():
        print(f"  {v:7.1f} ms  {k}")
    total = sum(extra.values())
    print(f"  {total:7.1f} ms  in all: {total / driver:.2f}x the driver's writes' CPU on top")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"nodes": args.nodes, "backend": args.backend, "rows": rows,
                       "idle_ms_per_s": 1000 * idle_per_s, "driver_writes_ms": driver,
                       "bmo_extra_ms": extra}, f, indent=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    ap.add_argument("--port", type=int, default=6525)
    ap.add_argument("--pg-port", type=int, default=15525)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    if args.nodes < 2:
        ap.error("--nodes must be at least 2")
    sys.exit(run(args))


if __name__ == "__main__":
    main()
