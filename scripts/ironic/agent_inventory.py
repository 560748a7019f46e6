#!/usr/bin/env python3
"""The lab's stand-in for the inspection ramdisk: ironic-python-agent's inspection data, sent to
Ironic's real inspection endpoint when Ironic boots a host to inspect it.

usage:
  agent_inventory.py answer --ironic URL --data FILE [--node NAME_OR_UUID ...] [--count N]
                            [--timeout SECONDS] [--auth-dir DIR]
  agent_inventory.py collect [--pxe-mac MAC]       (with the agent venv: install.sh agent)

answer   Waits for nodes in `inspect wait` with the `agent` inspect interface (all of them, or the
         ones named), and for each sends FILE, the data the agent's inspection collectors gather
         (`inventory`, `root_disk`, `boot_interface`, `configuration`), to POST
         /v1/continue_inspection, as the ramdisk does once booted. The interface the saved data
         booted from (its inventory.boot.pxe_interface, else the first with a MAC) gets the MAC of
         the node's boot port (its bootMACAddress): Ironic finds the node by it, and its
         validate-interfaces hook marks that interface as the PXE one. Everything else is sent
         as saved. Prints one line per node answered; exits 0 after --count nodes (default: the
         number of --node given, else 1), 1 at --timeout (default 300 s). Credentials, if the
         lab has them, come from --auth-dir or $METAL3_AUTH_ROOT_DIR (<dir>/ironic/username and
         password); the agent's token Ironic returns is never printed.
         Standard library only: it runs with any python3.

collect  Prints the inspection data of THIS machine as ironic-python-agent's default collector
         gathers it (the real package, its GenericHardwareManager reading /sys, lsblk, lshw,
         dmidecode, udevadm, ip), in the JSON the agent sends. --pxe-mac names the interface it
         booted from, as the kernel's BOOTIF argument does for a real ramdisk. Run it with the
         agent venv's python and its tools on PATH: scripts/ironic/collect-inventory.sh.
"""

import argparse
import base64
import copy
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

# continue_inspection exists from 1.84; BMO's minimum is 1.89
API_VERSION = "1.89"


def auth_header(auth_dir):
    if not auth_dir:
        return None
    try:
        with open(os.path.join(auth_dir, "ironic", "username")) as f:
            user = f.read().strip()
        with open(os.path.join(auth_dir, "ironic", "password")) as f:
            password = f.read().strip()
    except FileNotFoundError:
        return None  # BMO's rule: no <dir>/ironic means noauth
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return f"Basic {token}"


class Ironic:
    def __init__(self, url, auth):
        self.root = url.rstrip("/").removesuffix("/v1")
        self.auth = auth

    def call(self, method, path, body=None, auth=True):
        headers = {"X-OpenStack-Ironic-API-Version": API_VERSION}
        if auth and self.auth:
            headers["Authorization"] = self.auth
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.root + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def get(self, path):
        code, text = self.call("GET", path)
        if code != 200:
            raise SystemExit(f"agent_inventory: GET {path}: HTTP {code}: {text[:300]}")
        return json.loads(text)


def pxe_interface(inventory):
    """The index of the interface the saved data booted from."""
    interfaces = inventory.get("interfaces") or []
    pxe = ((inventory.get("boot") or {}).get("pxe_interface") or "").lower()
    if pxe.startswith("01-"):  # pxelinux form
        pxe = pxe[3:].replace("-", ":")
    for i, iface in enumerate(interfaces):
        if pxe and (iface.get("mac_address") or "").lower() == pxe:
            return i
    for i, iface in enumerate(interfaces):
        if iface.get("mac_address"):
            return i
    raise SystemExit("agent_inventory: the saved data has no interface with a MAC address")


def for_node(saved, mac):
    """The saved data, booted from `mac`."""
    data = copy.deepcopy(saved)
    inventory = data["inventory"]
    inventory["interfaces"][pxe_interface(inventory)]["mac_address"] = mac
    inventory.setdefault("boot", {})["pxe_interface"] = mac
    data["boot_interface"] = "01-" + mac.replace(":", "-")
    return data


def answer(args):
    with open(args.data) as f:
        saved = json.load(f)
    if "inventory" not in saved:
        raise SystemExit(f"agent_inventory: {args.data} has no `inventory`: not the agent's data")
    ironic = Ironic(args.ironic, auth_header(args.auth_dir))
    wanted = set(args.node or [])
    count = args.count or len(wanted) or 1
    answered = set()
    deadline = time.monotonic() + args.timeout
    query = urllib.parse.urlencode({
        "provision_state": "inspect wait",
        "fields": "uuid,name,inspect_interface",
    })
    while len(answered) < count:
        if time.monotonic() > deadline:
            print(f"agent_inventory: {len(answered)} of {count} nodes answered in "
                  f"{args.timeout:g}s", file=sys.stderr)
            return 1
        for node in ironic.get(f"/v1/nodes?{query}")["nodes"]:
            uuid, name = node["uuid"], node.get("name")
            if uuid in answered or node.get("inspect_interface") != "agent":
                continue
            if wanted and uuid not in wanted and name not in wanted:
                continue
            ports = ironic.get(
                f"/v1/ports?node_uuid={uuid}&fields=address,pxe_enabled,created_at")["ports"]
            # the boot MAC's port: PXE-enabled, and the first made (a host whose NICs were
            # inspected before gets a port for each of them, PXE-enabled as they were found)
            ports.sort(key=lambda p: (not p.get("pxe_enabled"), p.get("created_at") or ""))
            if not ports:
                continue  # no MAC to be found by yet
            mac = ports[0]["address"]
            # unauthenticated, as the ramdisk calls it
            code, text = ironic.call("POST", "/v1/continue_inspection", for_node(saved, mac),
                                     auth=False)
            if code in (409, 503):
                continue  # the node is locked for a moment: the next round sends again
            if code not in (200, 202):
                raise SystemExit(f"agent_inventory: continue_inspection for {name or uuid}: "
                                 f"HTTP {code}: {text[:300]}")
            answered.add(uuid)
            print(f"answered {name or uuid} ({uuid}) from {mac} with {args.data}: HTTP {code}",
                  flush=True)
        time.sleep(0.5)
    return 0


def collect(args):
    # ironic-python-agent reads its options at import; an empty command line gives the defaults
    from oslo_config import cfg
    from ironic_python_agent import config  # noqa: F401  (registers the options)
    cfg.CONF([], project="ironic-python-agent")
    from ironic_python_agent import encoding, inspector, utils

    data = {}
    failures = utils.AccumulatedFailures()
    inspector.collect_default(data, failures)
    if failures.get_error():
        print(f"agent_inventory: collection failures: {failures.get_error()}", file=sys.stderr)
    data = json.loads(json.dumps(data, cls=encoding.RESTJSONEncoder))
    if args.pxe_mac:
        mac = args.pxe_mac.lower()
        data["inventory"].setdefault("boot", {})["pxe_interface"] = mac
        data["boot_interface"] = "01-" + mac.replace(":", "-")
    json.dump(data, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("answer", help="answer Ironic's inspections with saved agent data")
    a.add_argument("--ironic", required=True, help="Ironic's URL, e.g. http://127.0.0.1:6385")
    a.add_argument("--data", required=True, help="the agent's inspection data (JSON)")
    a.add_argument("--node", action="append", help="only this node (name or UUID); repeatable")
    a.add_argument("--count", type=int, help="nodes to answer before exiting")
    a.add_argument("--timeout", type=float, default=300.0)
    a.add_argument("--auth-dir", default=os.environ.get("METAL3_AUTH_ROOT_DIR"))
    c = sub.add_parser("collect", help="this machine's inspection data, by ironic-python-agent")
    c.add_argument("--pxe-mac", help="the MAC of the interface it booted from")
    args = parser.parse_args()
    return answer(args) if args.command == "answer" else collect(args)


if __name__ == "__main__":
    sys.exit(main())
