#!/usr/bin/env python3
"""Benchmark: drive N fixture hosts (default 10,000) with zero delays from none to provisioned.

Prints wall time, CPU time (user+sys) and peak RSS of the bmhctl process, and the number of
times the hosts file was rewritten. With --watch-idle S, then runs `bmhctl watch` on the
provisioned files (real time) and prints its CPU over S seconds once its start-up passes are
done: every host is steady, so that is BMO's 60 s power poll and the file scanner. With
--keep DIR, the files are provisioned in DIR (which must not exist) and left there, to compare
what two builds wrote. Not a test: run it by hand.

    scripts/bench-fixture.py [--hosts N] [--files F] [--concurrency C] [--bin PATH]
                             [--watch-idle S] [--keep DIR]
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from benchlib import run_child

HOST = """---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: host-{i}
  labels:
    bench: "yes"
spec:
  online: true
  bootMACAddress: "52:54:{a:02x}:{b:02x}:{c:02x}:{d:02x}"
  bmc:
    address: ipmi://192.168.{b}.{c}:623
    credentialsName: bench-bmc
  image:
    url: http://images.example/os.qcow2
    checksum: 0123456789abcdef
"""

SECRET = """---
apiVersion: v1
kind: Secret
metadata:
  name: bench-bmc
stringData:
  username: admin
  password: secret
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=10000)
    ap.add_argument("--files", type=int, default=1, help="spread the hosts over this many files")
    ap.add_argument("--concurrency", type=int, default=None)
    ap.add_argument("--bin", default=None)
    ap.add_argument("--watch-idle", type=float, default=0, help="seconds of idle watch measured")
    ap.add_argument("--keep", default=None, help="provision in this new directory and keep it")
    args = ap.parse_args()

    root = pathlib.Path(__file__).resolve().parent.parent
    binary = args.bin or str(root / "target" / "release" / "bmhctl")
    if args.bin is None:
        subprocess.run(["cargo", "build", "--release", "--locked", "-q"], cwd=root, check=True)

    with tempfile.TemporaryDirectory(prefix="bmhctl-bench-") as tmp:
        tmp = pathlib.Path(tmp)
        if args.keep:
            tmp = pathlib.Path(args.keep)
            tmp.mkdir(parents=True)
        per_file = [[] for _ in range(args.files)]
        for i in range(args.hosts):
            a, b, c, d = (i >> 24) & 255, (i >> 16) & 255, (i >> 8) & 255, i & 255
            per_file[i % args.files].append(HOST.format(i=i, a=a, b=b, c=c, d=d))
        (tmp / "secret.yaml").write_text(SECRET)
        for n, hosts in enumerate(per_file):
            (tmp / f"hosts-{n}.yaml").write_text("".join(hosts))
        size = sum(p.stat().st_size for p in tmp.glob("hosts-*.yaml"))

        cmd = [binary, "provision", "--provisioner", "fixture", "-q", "-o", "json"]
        if args.concurrency:
            cmd += ["--concurrency", str(args.concurrency)]
        cmd.append(str(tmp))
        # The source logs each rewrite of a hosts file at debug level: counted below.
        env = dict(os.environ, BMHCTL_TIME_SCALE="0", BMHCTL_SEED="1",
                   BMHCTL_LOG="error,bmhctl::persist::files::file_source=debug")
        # The child's own figures (os.wait4), not this process's children's totals, which
        # would also count the `cargo build` above.
        with tempfile.TemporaryDirectory(prefix="bmhctl-bench-out-") as logs:
            logs = pathlib.Path(logs)
            status, wall, ru = run_child(cmd, env, None, logs / "out.json", logs / "err.log")
            out, err = (logs / "out.json").read_bytes(), (logs / "err.log").read_bytes()
        provisioned = out.decode().count('"state": "provisioned"')
        print(f"hosts               {args.hosts} in {args.files} file(s), {size / 1e6:.1f} MB of YAML")
        print(f"exit code           {status}")
        print(f"provisioned         {provisioned}")
        print(f"wall time           {wall:.2f} s")
        print(f"CPU time            {ru.ru_utime + ru.ru_stime:.2f} s (user {ru.ru_utime:.2f}, sys {ru.ru_stime:.2f})")
        print(f"peak RSS            {ru.ru_maxrss / 1024:.0f} MiB")
        print(f"hosts per second    {args.hosts / wall:.0f}")
        rewrites = sum(1 for line in err.decode().splitlines() if ": written" in line)
        print(f"hosts file rewrites {rewrites}")
        if status != 0:
            sys.stderr.write(err.decode()[-2000:])
            return 1
        if args.watch_idle > 0:
            watch_idle(binary, tmp, args.watch_idle)
    return 0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0


def watch_idle(binary, tmp, seconds):
    env = dict(os.environ, BMHCTL_TIME_SCALE="1", BMHCTL_SEED="1")
    cmd = [binary, "watch", "--provisioner", "fixture", "-q", "-f", str(tmp)]
    w = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # Start-up: every host gets a first pass; wait until the CPU settles.
        t = time.monotonic()
        time.sleep(1)
        warm = cpu_seconds(w.pid)
        while time.monotonic() - t < 300:
            time.sleep(1)
            c = cpu_seconds(w.pid)
            if c - warm < 0.05:
                break
            warm = c
        print(f"watch start-up      {time.monotonic() - t:.1f} s, {cpu_seconds(w.pid):.2f} s CPU")
        c0, t0 = cpu_seconds(w.pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = cpu_seconds(w.pid), time.monotonic()
        print(f"watch idle CPU      {100 * (c1 - c0) / (t1 - t0):.2f} % of a core over {t1 - t0:.0f} s"
              f" (RSS {rss_mib(w.pid):.0f} MiB)")
    finally:
        w.terminate()
        w.wait(timeout=60)


if __name__ == "__main__":
    sys.exit(main())
