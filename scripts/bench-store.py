#!/usr/bin/env python3
"""Benchmark of the local store and `bmhctl watch` (not a test: prints figures).

Applies N fixture hosts (half with an image, half without) to a temporary store, drives them to
their goal, then measures:

* `bmhctl get` (table and -o json) over the whole store;
* `bmhctl watch`'s CPU while the hosts are steady (BMO's 60 s power poll, real time);
* the delay from a verb (`power off`, `power on`) to watch having acted on it (the host's
  `status.poweredOn` in the store).

Usage: scripts/bench-store.py [--hosts 1000] [--idle 30] [--bin target/release/bmhctl]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hosts_yaml(n):
    docs = [
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc-secret\n"
        "stringData:\n  username: admin\n  password: pw\n"
    ]
    for i in range(n):
        image = (
            "  image:\n    url: http://images.example/os.qcow2\n    checksum: abc123\n"
            if i % 2 == 0
            else ""
        )
        docs.append(
            f"apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n"
            f"  name: h-{i:05d}\n  labels:\n    rack: r{i % 10}\nspec:\n  online: true\n"
            f"  bootMACAddress: 02:00:00:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:{i & 255:02x}\n"
            f"  bmc:\n    address: ipmi://10.0.{i >> 8 & 255}.{i & 255}:623\n"
            f"    credentialsName: bmc-secret\n{image}"
        )
    return "---\n".join(docs)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def powered_on(store, name):
    path = os.path.join(store, "baremetalhosts", "default", f"{name}.yaml")
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    for line in text.splitlines():
        if line.strip().startswith("poweredOn:"):
            return line.split(":", 1)[1].strip() == "true"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--idle", type=float, default=30.0, help="seconds of idle CPU measured")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "bmhctl"))
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        print("building bmhctl (release)...", file=sys.stderr)
        subprocess.run(["cargo", "build", "--release", "--bin", "bmhctl"], cwd=ROOT, check=True)
    env = dict(os.environ, BMHCTL_PROVISIONER="fixture", BMHCTL_SEED="1")
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        hosts = os.path.join(tmp, "hosts.yaml")
        with open(hosts, "w") as f:
            f.write(hosts_yaml(args.hosts))

        def bmhctl(*a, scale="0", check=True, out=subprocess.DEVNULL):
            e = dict(env, BMHCTL_TIME_SCALE=scale)
            return subprocess.run([args.bin, *a, "--store", store], env=e, check=check, stdout=out)

        t = time.monotonic()
        bmhctl("apply", "-f", hosts)
        print(f"apply {args.hosts} hosts:        {time.monotonic() - t:7.2f} s")
        t = time.monotonic()
        bmhctl("wait", "--for", "goal", "--timeout", "30m", scale="0.001")
        print(f"drive to goal (in-process):  {time.monotonic() - t:7.2f} s")

        for label, extra in [("get (table)", []), ("get -o json", ["-o", "json"])]:
            times = []
            for _ in range(5):
                t = time.monotonic()
                bmhctl("get", *extra)
                times.append(time.monotonic() - t)
            print(f"{label:<28} {statistics.median(times):7.3f} s median of 5"
                  f" (min {min(times):.3f})")

        w = subprocess.Popen(
            [args.bin, "watch", "-q", "--store", store],
            env=dict(env, BMHCTL_TIME_SCALE="1"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            # The first pass of every host (watch starts by reconciling them all).
            t = time.monotonic()
            time.sleep(1)
            warm = cpu_seconds(w.pid)
            while True:
                time.sleep(1)
                c = cpu_seconds(w.pid)
                if c - warm < 0.05 or time.monotonic() - t > 120:
                    break
                warm = c
            print(f"watch start-up (all hosts):  {time.monotonic() - t:7.2f} s,"
                  f" {cpu_seconds(w.pid):.2f} s CPU")
            c0, t0 = cpu_seconds(w.pid), time.monotonic()
            time.sleep(args.idle)
            c1, t1 = cpu_seconds(w.pid), time.monotonic()
            print(f"watch idle CPU:              {100 * (c1 - c0) / (t1 - t0):7.2f} %"
                  f" of one core over {t1 - t0:.0f} s (steady hosts poll power every 60 s)")

            delays = []
            for i, (verb, want) in enumerate([("off", False), ("on", True)] * 3):
                name = f"h-{(i // 2) * 2:05d}"
                t = time.monotonic()
                bmhctl("power", verb, name, scale="1")
                while powered_on(store, name) != want:
                    if time.monotonic() - t > 30:
                        print(f"  {name}: power {verb} not acted on in 30 s", file=sys.stderr)
                        break
                    time.sleep(0.005)
                delays.append(time.monotonic() - t)
            print(f"verb -> watch acted (power): {statistics.median(delays):7.3f} s median of"
                  f" {len(delays)} (max {max(delays):.3f}; includes the verb's own run)")
        finally:
            w.terminate()
            w.wait(timeout=60)
        print(f"watch exit code after SIGTERM: {w.returncode}")


if __name__ == "__main__":
    main()
