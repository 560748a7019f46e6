#!/usr/bin/env python3
"""A minimal Ironic driver: the peer that scripts/bench-peers.py measures bmhctl against.

It does the Ironic work of `bmhctl provision` for N fake-hardware nodes and nothing else:

    POST /v1/nodes (fake-hardware, automated_clean on)
    manage -> manageable, inspect -> manageable, provide -> available (automated cleaning),
    PATCH instance_info (image_source, image_checksum), active -> active, power on

One thread per node; `--concurrency K` lets K of them work at once (0: all in flight). Every
wait is served by one shared node listing (`GET /v1/nodes?fields=...&limit=1000`, following
`next`) taken at most once per `--poll` seconds while any node waits: a node never polls on its
own. No ports, no validation, no lookups by name: what BMO needs beyond this is bmhctl's cost.

`--bmo-calls` adds the calls BMO makes beyond these, with the content bmhctl sends for a
fake-hardware host, each where bmhctl makes it:

    after manage:   PATCH /v1/nodes/{id} (the registration PATCH: automated_clean true, which
                    bmhctl's node POST leaves unset)
    after inspect:  POST /v1/ports (the boot MAC bmhctl gives a fake-hardware node: 02: and the
                    last 10 hex digits of its UUID; pxe_enabled true)
    before deploy:  GET /v1/nodes/{id}/validate (boot and deploy must be valid)

and sends two of the driver's own calls with bmhctl's content: the instance PATCH sets what
BMO sets (instance_uuid, instance_info capabilities, root_device, image_source,
image_disk_format, image_os_hash_algo and _value, driver_info force_persistent_boot_device),
and the deploy request carries BMO's config drive (meta_data only, which Ironic builds into
an ISO). BMO's lookups of the node by name before enrolling are not made: bmhctl answers them
from its node listing and sends none.

    scripts/peer_driver.py --endpoint http://127.0.0.1:6385 --nodes 50 [--concurrency 0|K]
                           [--poll 1.0] [--prefix peer] [--image-source URL]
                           [--image-checksum SUM] [--timeout SECONDS]
                           [--bmo-calls]

Prints one JSON object on stdout: nodes, concurrency, wall (s), ok, failed, errors (the first
few), listings (full listings made), list_pages, requests (by method), locked_retries,
connection_retries, and per step the p50/p90/max seconds; with --bmo-calls also
"bmo_calls": true. Exit code 0 when every node reached active and powered on, 1 otherwise, 2 on
bad arguments.

Standard library only. Client behaviour: `X-OpenStack-Ironic-API-Version: latest`; one
keep-alive connection per thread, closed when idle for more than 5 s (Ironic's embedded cheroot
server drops idle connections at 10 s); a request whose connection is refused, reset or closed
before an answer is sent again with a back-off (many clients connecting at once overflow the
server's listen backlog of 5), and a write sent again that finds its first attempt applied (409
"already exists" for a node, 400 for a state change) counts as done; other errors (a timeout)
are retried for GETs only; 409 (node locked) is retried with a short back-off.
"""
import argparse
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse
import uuid as uuid_module

API_VERSION = "latest"
IDLE_CLOSE = 5.0  # seconds: reopen a kept-alive connection idle for longer
PAGE_LIMIT = 1000  # Ironic's [api]max_limit: a listing of more nodes comes in pages
LIST_FIELDS = ("uuid,provision_state,target_provision_state,power_state,target_power_state,"
               "last_error")
NODE_BODY = {
    "driver": "fake-hardware",
    "automated_clean": True,
    "bios_interface": "fake", "boot_interface": "fake", "console_interface": "fake",
    "deploy_interface": "fake", "firmware_interface": "fake", "inspect_interface": "fake",
    "management_interface": "fake", "power_interface": "fake", "raid_interface": "fake",
    "rescue_interface": "fake", "vendor_interface": "fake",
    "network_interface": "noop", "storage_interface": "noop",
}


class Failed(Exception):
    """A node cannot go on: Ironic said no, or it ended in a failed state."""


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = {}
        self.locked_retries = 0
        self.connection_retries = 0

    def count(self, method):
        with self.lock:
            self.requests[method] = self.requests.get(method, 0) + 1

    def retried(self):
        with self.lock:
            self.connection_retries += 1

    def locked(self):
        with self.lock:
            self.locked_retries += 1


class Client:
    """One keep-alive HTTP connection to Ironic; not shared between threads."""

    def __init__(self, endpoint, stats, timeout=120.0):
        u = urllib.parse.urlsplit(endpoint)
        self.host, self.port = u.hostname, u.port or 80
        self.base = u.path.rstrip("/")
        if self.base.endswith("/v1"):  # an endpoint given as http://host:port/v1/ works too
            self.base = self.base[:-3]
        self.stats = stats
        self.timeout = timeout
        self.conn = None
        self.last_used = 0.0

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _once(self, method, path, body):
        if self.conn is not None and time.monotonic() - self.last_used > IDLE_CLOSE:
            self.close()
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        headers = {"X-OpenStack-Ironic-API-Version": API_VERSION, "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            self.conn.request(method, self.base + path, body=data, headers=headers)
            resp = self.conn.getresponse()
            raw = resp.read()
        except (ConnectionRefusedError, http.client.RemoteDisconnected, ConnectionResetError,
                BrokenPipeError) as e:
            # Refused, reset or closed without an answer: seen when many clients connect at
            # once (cheroot's listen backlog is 5) or on a kept-alive connection the server
            # dropped. Ironic had not read the request, so sending it again is safe; `call`
            # still copes with a replay that finds the first attempt applied.
            self.close()
            raise _Transient(str(e) or type(e).__name__, True) from e
        except (OSError, http.client.HTTPException) as e:
            self.close()
            raise _Transient(str(e) or type(e).__name__, False) from e
        finally:
            self.last_used = time.monotonic()
        if resp.will_close:
            self.close()
        self.stats.count(method)
        try:
            doc = json.loads(raw) if raw else None
        except ValueError:
            doc = None
        return resp.status, doc

    def call(self, method, path, body=None, ok=(200, 201, 202, 204), replayed_ok=None):
        """Send a request; returns the decoded answer. Raises Failed on an error answer.

        `replayed_ok(status, doc)`: for a write sent again after a dropped connection, turns an
        error answer that means "the first attempt was applied" into a result (None: fail)."""
        attempts, locked, replayed = 0, 0, False
        while True:
            try:
                status, doc = self._once(method, path, body)
            except _Transient as e:
                attempts += 1
                if attempts > 8 or (method != "GET" and not e.retry_write):
                    raise Failed(f"{method} {path}: {e}") from None
                replayed = replayed or method != "GET"
                self.stats.retried()
                time.sleep(min(0.1 * 2 ** attempts, 2.0) * random.uniform(0.5, 1.0))
                continue
            if status in ok:
                return doc
            if status == 409 and locked < 400 and "locked" in _error_text(doc).lower():
                # NodeLocked: a conductor task still holds the node
                locked += 1
                self.stats.locked()
                time.sleep(min(0.05 * locked, 0.5))
                continue
            if replayed and replayed_ok is not None:
                result = replayed_ok(status, doc)
                if result is not None:
                    return result
            raise Failed(f"{method} {path}: HTTP {status}: {_error_text(doc)}")


class _Transient(Exception):
    def __init__(self, msg, retry_write):
        super().__init__(msg)
        self.retry_write = retry_write


def _error_text(doc):
    try:
        return json.loads(doc["error_message"])["faultstring"]
    except (TypeError, KeyError, ValueError):
        return str(doc)[:300]


class Lister:
    """One thread that lists every node, at most once per `poll` seconds, while anyone waits.

    Each listing is published with the monotonic time its first page was requested: a waiter
    that sent a request at time t trusts only listings started after t."""

    def __init__(self, endpoint, stats, poll):
        self.client = Client(endpoint, stats)
        self.poll = poll
        self.cond = threading.Condition()
        self.nodes = {}
        self.started_at = float("-inf")
        self.seq = 0
        self.waiting = 0
        self.stopping = False
        self.listings = 0
        self.pages = 0
        self.error = None
        self.thread = threading.Thread(target=self._run, name="lister", daemon=True)
        self.thread.start()

    def _list(self):
        nodes = {}
        path = f"/v1/nodes?fields={LIST_FIELDS}&limit={PAGE_LIMIT}"
        while path:
            doc = self.client.call("GET", path)
            self.pages += 1
            page = doc.get("nodes") or []
            for n in page:
                nodes[n["uuid"]] = n
            nxt = doc.get("next")
            if not nxt or not page:
                break
            u = urllib.parse.urlsplit(nxt)  # keep our own endpoint: use path and query only
            path = u.path[len(self.client.base):] + "?" + u.query
        return nodes

    def _run(self):
        last = float("-inf")
        while True:
            with self.cond:
                while not self.stopping and self.waiting == 0:
                    self.cond.wait()
                if self.stopping:
                    return
            delay = last + self.poll - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            last = time.monotonic()
            try:
                nodes = self._list()
            except Failed as e:
                with self.cond:
                    self.error = str(e)
                continue
            with self.cond:
                self.nodes, self.started_at = nodes, last
                self.seq += 1
                self.listings += 1
                self.cond.notify_all()

    def wait(self, uuid, since, done, deadline):
        """Block until a listing started after `since` shows `uuid` settled; return its fields.
        `done(fields)` says whether the node has settled."""
        seen = 0
        with self.cond:
            self.waiting += 1
            self.cond.notify_all()
            try:
                while True:
                    if self.seq != seen and self.started_at > since:
                        seen = self.seq
                        node = self.nodes.get(uuid)
                        if node is not None and done(node):
                            return node
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise Failed(f"timed out; last listed: {self.nodes.get(uuid)}"
                                     f"{'; listing error: ' + self.error if self.error else ''}")
                    self.cond.wait(left)
            finally:
                self.waiting -= 1

    def stop(self):
        with self.cond:
            self.stopping = True
            self.cond.notify_all()


def settled(node):
    """No power change pending, and no provision change pending unless it already failed."""
    if node.get("target_power_state"):
        return False
    state = node.get("provision_state") or ""
    return not node.get("target_provision_state") or state.endswith("failed") or state == "error"


# bmhctl's first configure PATCH for a fake-hardware host (BMO's configureNode): automated
# cleaning, which its node POST leaves unset; no deploy image (fake-hardware takes none).
REGISTRATION_PATCH = [{"op": "add", "path": "/automated_clean", "value": True}]


def instance_patch(args, instance_uuid):
    """bmhctl's instance PATCH before deploying (BMO's setUpForProvisioning) for a host with a
    qcow2 image and a sha256 checksum, no root device hints and fake-hardware's one disk."""
    info = [("capabilities", {}), ("root_device", {"name": "s== /dev/sda"}),
            ("image_source", args.image_source), ("image_disk_format", "qcow2"),
            ("image_os_hash_algo", "sha256"), ("image_os_hash_value", args.image_checksum)]
    return ([{"op": "add", "path": "/instance_uuid", "value": instance_uuid}]
            + [{"op": "add", "path": f"/instance_info/{k}", "value": v} for k, v in info]
            + [{"op": "add", "path": "/driver_info/force_persistent_boot_device",
                "value": "Default"}])


def config_drive(instance_uuid, name):
    """BMO's config drive for a host without user or network data: meta_data only."""
    return {"meta_data": {"uuid": instance_uuid, "metal3-namespace": "default",
                          "metal3-name": name, "local-hostname": name,
                          "local_hostname": name, "name": name}}


def boot_mac(uuid):
    """The MAC bmhctl's canned hardware details give a fake-hardware node without a boot MAC:
    locally administered (02:) with the last 10 hex digits of the node's UUID."""
    tail = uuid.replace("-", "").lower()[-10:]
    return "02:" + ":".join(tail[i:i + 2] for i in range(0, 10, 2))


def check_valid(doc):
    """BMO's validateNode before deploying: the boot and deploy interfaces must be valid."""
    for iface in ("boot", "deploy"):
        result = (doc or {}).get(iface) or {}
        if result.get("result") is False:
            raise Failed(f"validate: {iface}: {result.get('reason')}")


def drive(i, args, lister, stats, steps, deadline):
    """Walk one node from nothing to active and powered on; returns its name."""
    name = f"{args.prefix}-{i}"
    c = Client(args.endpoint, stats)
    try:
        def step(label, send, want_state=None, want_power=None):
            t0 = time.monotonic()
            send()
            # the request was accepted now: only a listing started later can show its outcome
            node = lister.wait(uuid, time.monotonic(), settled, deadline)
            if want_state and node.get("provision_state") != want_state:
                raise Failed(f"{label}: {node.get('provision_state')} (want {want_state}): "
                             f"{node.get('last_error')}")
            if want_power and node.get("power_state") != want_power:
                raise Failed(f"{label}: power {node.get('power_state')} (want {want_power}): "
                             f"{node.get('last_error')}")
            steps.add(label, time.monotonic() - t0)

        # A state change sent again after a dropped connection may find the first attempt
        # applied (400: not valid in the new state): go on, the wait checks the outcome.
        def applied(status, _doc):
            return {} if status == 400 else None

        def provision(target, **extra):
            return lambda: c.call("PUT", f"/v1/nodes/{uuid}/states/provision",
                                  dict({"target": target}, **extra), replayed_ok=applied)

        def created(status, _doc):  # 409: the first POST created it
            return c.call("GET", f"/v1/nodes/{name}") if status == 409 else None

        def port_created(status, _doc):  # 409: the first POST created the port
            return {} if status == 409 else None

        def timed(label, send):
            t0 = time.monotonic()
            send()
            steps.add(label, time.monotonic() - t0)

        t0 = time.monotonic()
        uuid = c.call("POST", "/v1/nodes", dict(NODE_BODY, name=name), replayed_ok=created)["uuid"]
        steps.add("enroll", time.monotonic() - t0)
        step("manage", provision("manage"), "manageable")
        if args.bmo_calls:
            timed("register_patch", lambda: c.call("PATCH", f"/v1/nodes/{uuid}",
                                                   REGISTRATION_PATCH))
        step("inspect", provision("inspect"), "manageable")
        if args.bmo_calls:
            timed("port", lambda: c.call("POST", "/v1/ports", {
                "node_uuid": uuid, "address": boot_mac(uuid), "pxe_enabled": True,
            }, replayed_ok=port_created))
        step("provide", provision("provide"), "available")
        t0 = time.monotonic()
        if args.bmo_calls:
            instance_uuid = str(uuid_module.uuid4())
            c.call("PATCH", f"/v1/nodes/{uuid}", instance_patch(args, instance_uuid))
        else:
            c.call("PATCH", f"/v1/nodes/{uuid}", [
                {"op": "add", "path": "/instance_info/image_source", "value": args.image_source},
                {"op": "add", "path": "/instance_info/image_checksum",
                 "value": args.image_checksum},
            ])
        steps.add("instance_info", time.monotonic() - t0)
        if args.bmo_calls:
            timed("validate", lambda: check_valid(c.call("GET", f"/v1/nodes/{uuid}/validate")))
            step("deploy", provision("active", configdrive=config_drive(instance_uuid, name)),
                 "active")
        else:
            step("deploy", provision("active"), "active")
        step("power_on", lambda: c.call("PUT", f"/v1/nodes/{uuid}/states/power",
                                        {"target": "power on"}, replayed_ok=applied),
             "active", "power on")
        return name
    except Failed as e:
        raise Failed(f"{name}: {e}") from None
    finally:
        c.close()


class Steps:
    def __init__(self):
        self.lock = threading.Lock()
        self.times = {}

    def add(self, label, seconds):
        with self.lock:
            self.times.setdefault(label, []).append(seconds)

    def summary(self):
        out = {}
        for label, ts in self.times.items():
            ts = sorted(ts)
            out[label] = {"n": len(ts), "p50": round(ts[len(ts) // 2], 3),
                          "p90": round(ts[min(len(ts) - 1, int(len(ts) * 0.9))], 3),
                          "max": round(ts[-1], 3)}
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--endpoint", default="http://127.0.0.1:6385")
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--concurrency", type=int, default=0, help="nodes in flight; 0: all")
    ap.add_argument("--poll", type=float, default=1.0, help="seconds between node listings")
    ap.add_argument("--prefix", default="peer", help="node names are PREFIX-<i>")
    ap.add_argument("--image-source", default="http://127.0.0.1:6386/images/fedora.qcow2")
    ap.add_argument("--image-checksum",
                    default="0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
    ap.add_argument("--timeout", type=float, default=1800.0,
                    help="seconds for the whole run before a waiting node gives up")
    ap.add_argument("--bmo-calls", action="store_true",
                    help="also make BMO's registration PATCH, port POST and validate, and send "
                    "the instance PATCH and the deploy request with bmhctl's content")
    args = ap.parse_args()
    if args.nodes < 1 or args.concurrency < 0 or args.poll <= 0:
        ap.error("--nodes >= 1, --concurrency >= 0 and --poll > 0 please")

    stats, steps = Stats(), Steps()
    lister = Lister(args.endpoint, stats, args.poll)
    gate = threading.Semaphore(args.concurrency or args.nodes)
    results_lock = threading.Lock()
    done, errors = [], []
    t_start = time.monotonic()
    deadline = t_start + args.timeout

    def worker(i):
        with gate:
            try:
                name = drive(i, args, lister, stats, steps, deadline)
            except Failed as e:
                with results_lock:
                    errors.append(str(e))
                return
            except Exception as e:  # a bug or an unexpected answer: count it, keep the others
                with results_lock:
                    errors.append(f"{args.prefix}-{i}: {type(e).__name__}: {e}")
                return
            with results_lock:
                done.append(name)

    threads = [threading.Thread(target=worker, args=(i,), name=f"node-{i}", daemon=True)
               for i in range(args.nodes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t_start
    lister.stop()

    extra = {"bmo_calls": True} if args.bmo_calls else {}
    print(json.dumps({
        "nodes": args.nodes,
        "concurrency": args.concurrency or args.nodes,
        "poll": args.poll,
        "wall": round(wall, 3),
        "ok": len(done),
        "failed": len(errors),
        "errors": sorted(errors)[:10],
        "listings": lister.listings,
        "list_pages": lister.pages,
        "requests": dict(sorted(stats.requests.items())),
        "locked_retries": stats.locked_retries,
        "connection_retries": stats.connection_retries,
        "steps": steps.summary(),
        **extra,
    }, indent=2))
    return 0 if not errors and len(done) == args.nodes else 1


if __name__ == "__main__":
    sys.exit(main())
