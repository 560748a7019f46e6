#!/usr/bin/env python3
"""Fault trials: kill bmhctl, edit its files, fill its disk and stop its Ironic during runs, and
check that nothing the user wrote or bmhctl did is lost, that nothing hangs and that nothing is
done twice.

Scenarios (each trial uses a directory of its own under a temporary directory):

  kill-file       `provision --provisioner fixture` on a hosts file, SIGKILL at a random moment
                  of the run; then the file must parse with every byte outside `status:` as it
                  was, and a re-run must drive every host to `provisioned`.
  kill-store      the same on the local store: `apply`, then `wait --for goal` (odd trials:
                  `watch`) killed at a random moment; every host must still be in the store, and
                  `wait --for goal` must then finish.
  kill-ironic     three fake-hardware hosts against a local Ironic (port 6485 by default): the
                  first provisioned alone, then `provision` of all three killed once one of the
                  others is registering, inspecting or provisioning (the phases take turns);
                  the re-run must end with every host provisioned, exactly one Ironic node per
                  host, each node deployed once (one move to "deploying" in Ironic's log), and
                  the node that was `active` at the kill untouched (still `active`, the same
                  `provision_updated_at`).
  edit-file       an edit of the hosts file (one host's `online: true` becomes `false`, with a
                  marker comment) at a random moment of a `provision` run, written in place or
                  as editors do (new file, rename), in turns. The run must carry on with the
                  edit and exit 0, the edit's bytes in the file and acted upon by that run: the
                  host powered off (provisioned, or available when the edit came before its
                  deploy); a re-run then changes nothing of it. "Lost": the edit's bytes are
                  gone; "failed": any other exit code (the old "edit kept; re-run" exit 3
                  among them) or an edit not acted upon.
  edit-window     the edit of edit-file (append, in place, editor's rename, in turns) made in the
                  instant between bmhctl's last check of the file and the swap that replaces it:
                  the run is started under `strace`, which delays every rename(2) by 0.2 s,
                  and the edit lands once a temporary file of the host file's has existed for
                  0.08 s (written, flushed and compared: the swap is then waiting). Checked as
                  edit-file: exit 0, the edit's bytes kept and acted upon. Needs strace;
                  otherwise it is skipped, with the reason.
  full-disk       the hosts file on a 1 MiB tmpfs filled up before the first save: the run must
                  end within seconds with exit 1 and the file's name, the file as it was; with
                  the space freed a re-run must finish. Needs root, passwordless sudo or
                  unprivileged user namespaces (for `mount -t tmpfs`); otherwise it is skipped,
                  with the reason.
  kill-ironic-12  twelve fake-hardware hosts against the local Ironic, `provision` killed at a
                  random instant of 0.8 x an undisturbed run's wall time (measured first), then
                  re-run: every host provisioned, exactly one Ironic node per host, each node
                  deployed once.
  ironic-restart  the same three hosts, Ironic stopped (stop-ironic.sh) during the `provision`
                  run and started again a few seconds later: the run must end (any exit code:
                  it is reported), and a re-run must pass the checks of kill-ironic.

    scripts/fault-trials.py [--bin PATH] [--scenario NAME]... [--trials N] [--port PORT]
                            [--keep] [--seed N]

--bin: the bmhctl to test (its Ironic plugin must be in `plugins/` beside it, or in
PROVISIONER_PLUGIN_DIR); without it the script builds the release binary and stages the plugins
(scripts/stage-plugins.sh release). --trials: per scenario (defaults below). --port: the Ironic
the script starts and stops itself with scripts/ironic/start-ironic.sh / stop-ironic.sh (a fresh
database; the image server uses PORT+1). --keep: leave the trial directories.

Prints one line per scenario: trials, lost, hung, duplicates, failed (a check other than those:
a re-run that did not finish, an unexpected exit code) and seconds, then the details of every
failure. Exits 1 when anything was lost, hung, duplicated or failed; 2 on bad usage.
Not part of the test suite: it takes minutes and starts its own Ironic.
"""
import argparse
import json
import os
import pathlib
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
LAB = ROOT / "scripts" / "ironic"

DEFAULT_TRIALS = {
    "kill-file": 45,
    "kill-store": 41,
    "kill-ironic": 21,
    "edit-file": 55,
    "edit-window": 100,
    "kill-ironic-12": 30,
    "full-disk": 5,
    "ironic-restart": 3,
}
# A process still running this long after its run should have ended is counted as hung.
HANG_BOUND = {"fixture": 60, "ironic": 240}
# A full disk must end the run within this many seconds.
FULL_DISK_BOUND = 15

SECRET = """apiVersion: v1
kind: Secret
metadata:
  name: bmc-secret
type: Opaque
stringData:
  username: admin
  password: trial-bmc-password
"""

# A host for BMO's fixture provisioner (no BMC is contacted).
FIXTURE_HOST = """---
# host {name}: a comment that must survive every trial
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: {name}
  labels:
    trial: "yes"
spec:
  online: true
  bmc:
    address: ipmi://192.168.122.1:6233
    credentialsName: bmc-secret
  image:
    url: http://images.example/os.qcow2
    checksum: abc123
"""

# A host for Ironic's fake-hardware type, with an image on the lab's own image server.
IRONIC_HOST = """---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: {name}
spec:
  online: true
  bmc:
    address: fake-hardware://{name}
    credentialsName: bmc-secret
  image:
    url: http://127.0.0.1:{image_port}/images/os.qcow2
    checksum: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    checksumType: sha256
    format: qcow2
"""


def log(msg):
    print(f"[fault-trials] {msg}", file=sys.stderr, flush=True)


def without_status(text):
    """The text with every top-level `status:` block removed: what the user wrote."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("status:"):
            skipping = True
            continue
        if skipping and line.startswith(" "):
            continue
        skipping = False
        out.append(line)
    return "".join(out)


class Result:
    def __init__(self, name):
        self.name = name
        self.trials = self.lost = self.hung = self.duplicates = self.failed = 0
        self.seconds = 0.0
        # kills that came after the run had ended on its own (not counted as kill trials)
        self.missed = 0
        self.notes = []
        self.skipped = None

    def bad(self, kind, trial, msg):
        setattr(self, kind, getattr(self, kind) + 1)
        self.notes.append(f"{self.name} #{trial}: {kind}: {msg}")


class Bmhctl:
    """Runs the binary under test with a fixed environment."""

    def __init__(self, binary, env):
        self.binary = str(binary)
        self.env = env

    def spawn(self, args, cwd, env=None, preexec=None):
        return subprocess.Popen(
            [self.binary, *args],
            cwd=cwd,
            env={**self.env, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=preexec,
        )

    def run(self, args, cwd, bound, env=None):
        """(exit code or None when it hung, stdout, stderr)."""
        return finish(self.spawn(args, cwd, env), bound)


def finish(proc, bound):
    """Waits up to `bound` seconds; a process still running then is killed and reported as
    hung (exit code None)."""
    try:
        out, err = proc.communicate(timeout=bound)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return None, out, err


def sigkill(proc):
    """SIGKILL, then reap (the pipes are drained, so a child blocked on a full pipe still
    dies)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.communicate()


def hosts_of(get_json):
    doc = json.loads(get_json)
    items = doc if isinstance(doc, list) else doc.get("hosts", doc.get("items", []))
    out = []
    for h in items:
        name = h.get("name") or h.get("metadata", {}).get("name")
        state = h.get("state") or h.get("status", {}).get("provisioning", {}).get("state")
        powered = h.get("poweredOn")
        if powered is None:
            powered = h.get("status", {}).get("poweredOn")
        out.append((name, state, powered))
    return out


def check_hosts(res, trial, listing, names, also=None):
    """Every host of `names` listed exactly once, `provisioned` (or in a state `also` allows
    it: name -> states); returns the (name, state, powered) rows."""
    rows = hosts_of(listing)
    seen = [r[0] for r in rows]
    for n in names:
        if seen.count(n) == 0:
            res.bad("lost", trial, f"host {n} is gone")
        elif seen.count(n) > 1:
            res.bad("duplicates", trial, f"host {n} listed {seen.count(n)} times")
    states = {r[0]: r[1] for r in rows}
    also = also or {}
    wrong = {n: states.get(n) for n in names
             if states.get(n) != "provisioned" and states.get(n) not in also.get(n, ())}
    if wrong:
        res.bad("failed", trial, f"hosts not at their goal after the re-run: {wrong}")
    return rows


def leftovers(directory, allowed):
    """Files under `directory` whose names match none of the `allowed` patterns (temporary
    files a killed writer left and the next run did not remove)."""
    out = []
    for p in pathlib.Path(directory).rglob("*"):
        if p.is_file() and not any(re.fullmatch(a, p.name) for a in allowed):
            out.append(str(p.relative_to(directory)))
    return out


# --- file mode ---------------------------------------------------------------------------------


def fixture_file(n):
    return SECRET + "".join(FIXTURE_HOST.format(name=f"worker-{i}") for i in range(n))


FILE_ALLOWED = [r"hosts\.yaml", r"hosts\.yaml\.state\.json", r"hosts\.yaml\.lock"]


def calibrate(bm, work, scenario, scale, n):
    """The wall time of one undisturbed fixture run at this scale (kills are spread over it)."""
    d = work / f"{scenario}-undisturbed"
    d.mkdir()
    (d / "hosts.yaml").write_text(fixture_file(n))
    t0 = time.monotonic()
    code, _, err = bm.run(["provision", "--provisioner", "fixture", "-q", "hosts.yaml"], d,
                          HANG_BOUND["fixture"], {"BMHCTL_TIME_SCALE": scale})
    wall = time.monotonic() - t0
    if code != 0:
        raise SystemExit(f"the undisturbed run failed (exit {code}):\n{err}")
    return wall


def rerun_file(bm, res, trial, d, names, original, extra_check=None, also=None):
    """After a disturbed run: the file keeps the user's bytes, a re-run finishes, every host is
    provisioned once."""
    path = d / "hosts.yaml"
    text = path.read_text() if path.exists() else None
    if text is None:
        res.bad("lost", trial, "hosts.yaml is gone")
        return
    if without_status(text) != without_status(original):
        res.bad("lost", trial, "bytes outside status: changed")
        return
    code, _, err = bm.run(["provision", "--provisioner", "fixture", "-q", "hosts.yaml"], d,
                          HANG_BOUND["fixture"], {"BMHCTL_TIME_SCALE": "0"})
    if code is None:
        res.bad("hung", trial, "the re-run did not end")
        return
    if code != 0:
        res.bad("failed", trial, f"the re-run exited {code}: {err.strip()[-300:]}")
        return
    code, out, err = bm.run(["get", "-f", "hosts.yaml", "-o", "json"], d, 30)
    if code != 0:
        res.bad("failed", trial, f"get exited {code}: {err.strip()[-300:]}")
        return
    rows = check_hosts(res, trial, out, names, also)
    if extra_check:
        extra_check(rows, path.read_text())
    left = leftovers(d, FILE_ALLOWED)
    if left:
        res.bad("failed", trial, f"files left behind after the re-run: {left}")


def kill_file(bm, args, res, work, rng):
    n, scale = 4, "0.1"
    wall = calibrate(bm, work, "kill-file", scale, n)
    log(f"kill-file: an undisturbed run of {n} hosts at time scale {scale}: {wall:.2f} s")
    names = [f"worker-{i}" for i in range(n)]
    for t in range(args.trials_of("kill-file")):
        d = work / f"kill-file-{t}"
        d.mkdir()
        original = fixture_file(n)
        (d / "hosts.yaml").write_text(original)
        t0 = time.monotonic()
        proc = bm.spawn(["provision", "--provisioner", "fixture", "-q", "hosts.yaml"], d,
                        {"BMHCTL_TIME_SCALE": scale})
        time.sleep(rng.uniform(0.0, wall * 0.9))
        if proc.poll() is not None:
            res.missed += 1
        sigkill(proc)
        rerun_file(bm, res, t, d, names, original)
        res.trials += 1
        res.seconds += time.monotonic() - t0
    res.notes.append(f"kill-file: {res.trials - res.missed} of {res.trials} kills came while "
                     "the run was going on (the others after it had ended)")


# --- the store ---------------------------------------------------------------------------------


STORE_ALLOWED = [r".+\.yaml", r".+\.jsonl", r"\.lease", r".+\.lock", r"hosts\.yaml"]


def kill_store(bm, args, res, work, rng):
    n, scale = 4, "0.1"
    names = [f"worker-{i}" for i in range(n)]
    wall = None
    for t in range(args.trials_of("kill-store")):
        d = work / f"kill-store-{t}"
        d.mkdir()
        (d / "hosts.yaml").write_text(fixture_file(n))
        store = ["--store", str(d / "store")]
        env = {"BMHCTL_TIME_SCALE": scale}
        t0 = time.monotonic()
        code, _, err = bm.run(["apply", *store, "-f", "hosts.yaml"], d, 30, env)
        if code != 0:
            res.bad("failed", t, f"apply exited {code}: {err.strip()[-300:]}")
            res.trials += 1
            continue
        drive = ["wait", "--for", "goal", "--timeout", "120s"]
        if t % 2:
            drive = ["watch"]
        proc = bm.spawn([*drive, *store, "--provisioner", "fixture", "-q"], d, env)
        if wall is None:
            # the first trial runs undisturbed: its wall time spreads the later kills
            code, _, err = finish(proc, HANG_BOUND["fixture"])
            wall = time.monotonic() - t0
            log(f"kill-store: an undisturbed run of {n} hosts at time scale {scale}: "
                f"{wall:.2f} s")
            if code != 0:
                raise SystemExit(f"the undisturbed store run failed (exit {code}):\n{err}")
        else:
            time.sleep(rng.uniform(0.0, wall * 0.9))
            if proc.poll() is not None and not t % 2:
                res.missed += 1
            sigkill(proc)
        code, _, err = bm.run(["wait", "--for", "goal", "--timeout", "120s", *store,
                               "--provisioner", "fixture", "-q"], d, HANG_BOUND["fixture"],
                              {"BMHCTL_TIME_SCALE": "0"})
        if code is None:
            res.bad("hung", t, "the re-run did not end")
        elif code != 0:
            res.bad("failed", t, f"the re-run exited {code}: {err.strip()[-300:]}")
        else:
            code, out, err = bm.run(["get", *store, "-o", "json"], d, 30)
            if code != 0:
                res.bad("lost", t, f"get on the store exited {code}: {err.strip()[-300:]}")
            else:
                check_hosts(res, t, out, names)
            left = leftovers(d / "store", STORE_ALLOWED)
            if left:
                res.bad("failed", t, f"files left in the store after the re-run: {left}")
        res.trials += 1
        res.seconds += time.monotonic() - t0
    res.notes.append(f"kill-store: trial 0 undisturbed; {res.trials - 1 - res.missed} of "
                     f"{res.trials - 1} kills came while the run was going on (odd trials kill "
                     "`watch`, which never ends on its own)")


# --- edits during a run ------------------------------------------------------------------------


def edit_file(bm, args, res, work, rng):
    n, scale = 4, "0.1"
    wall = calibrate(bm, work, "edit-file", scale, n)
    log(f"edit-file: an undisturbed run of {n} hosts at time scale {scale}: {wall:.2f} s")
    names = [f"worker-{i}" for i in range(n)]
    outcomes = {}
    for t in range(args.trials_of("edit-file")):
        d = work / f"edit-file-{t}"
        d.mkdir()
        path = d / "hosts.yaml"
        original = fixture_file(n)
        path.write_text(original)
        target = names[t % n]
        marker = f"online: false  # edit {t} during the run"
        t0 = time.monotonic()
        proc = bm.spawn(["provision", "--provisioner", "fixture", "-q", "hosts.yaml"], d,
                        {"BMHCTL_TIME_SCALE": scale})
        time.sleep(rng.uniform(0.0, wall * 0.7))
        running = proc.poll() is None
        text = path.read_text()
        head = f"  name: {target}\n"
        at = text.index(head)
        edited = text[:at] + text[at:].replace("online: true", marker, 1)
        if t % 2:
            # as editors save: a new file renamed over the old one
            tmp = d / ".hosts.yaml.swp"
            tmp.write_text(edited)
            os.replace(tmp, path)
        else:
            with open(path, "r+") as f:
                f.write(edited)
                f.truncate()
        code, _, err = finish(proc, HANG_BOUND["fixture"])
        if code is None:
            res.bad("hung", t, "the run did not end after the edit")
        else:
            key = f"exit {code}" + ("" if running else " (ended before the edit)")
            outcomes[key] = outcomes.get(key, 0) + 1
            if code != 0:
                res.bad("failed", t, f"the run exited {code}: {err.strip()[-300:]}")
        now = path.read_text()
        if marker not in now:
            res.bad("lost", t, f"the edit ({marker!r}) is gone from the file")
        else:
            def powered_off(rows, text, t=t, target=target, when="after the re-run"):
                powered = {r[0]: r[2] for r in rows}
                if powered.get(target) is not False:
                    res.bad("failed", t, f"{target} is not powered off {when} "
                            f"(poweredOn {powered.get(target)}): the edit was not acted upon")
                if marker not in text:
                    res.bad("lost", t, "the edit is gone after the re-run")

            if code == 0 and running:
                # acted upon by the run it was made during, before any re-run
                got, out, gerr = bm.run(["get", "-f", "hosts.yaml", "-o", "json"], d, 30)
                if got != 0:
                    res.bad("failed", t, f"get exited {got}: {gerr.strip()[-300:]}")
                else:
                    powered_off(hosts_of(out), now, when="at the end of the run")
            # BMO's goal for a host turned off: it stays provisioned if it already was,
            # else it stops at available
            rerun_file(bm, res, t, d, names, edited, powered_off, {target: ("available",)})
        res.trials += 1
        res.seconds += time.monotonic() - t0
    res.notes.append("edit-file outcomes: " + ", ".join(
        f"{k}: {v}" for k, v in sorted(outcomes.items())))


def edit_window(bm, args, res, work, rng):
    strace = shutil.which("strace")
    if not strace:
        res.skipped = "strace is not installed (it widens the window under test)"
        return
    n, scale, delay_us = 4, "0.1", 200_000
    # every way to rename: a bmhctl that replaces the file with a plain rename is held as well
    renames = "rename,renameat,renameat2"
    names = [f"worker-{i}" for i in range(n)]
    in_window = 0
    kinds = ["append", "in place", "rename"]
    for t in range(args.trials_of("edit-window")):
        d = work / f"edit-window-{t}"
        d.mkdir()
        path = d / "hosts.yaml"
        original = fixture_file(n)
        path.write_text(original)
        target = names[t % n]
        kind = kinds[t % len(kinds)]
        marker = f"online: false  # edit {t} in the window"
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [strace, "-f", "-qq", "-o", "/dev/null", "-e", f"trace={renames}",
             "-e", f"inject={renames}:delay_enter={delay_us}", bm.binary,
             "provision", "--provisioner", "fixture", "-q", "hosts.yaml"],
            cwd=d, env={**bm.env, "BMHCTL_TIME_SCALE": scale},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # the first temporary file of the host file that lives 0.08 s: written, flushed and
        # checked, its swap is waiting
        tmp, since, deadline = None, None, time.monotonic() + HANG_BOUND["fixture"]
        while proc.poll() is None and time.monotonic() < deadline:
            found = [p for p in d.glob(".hosts.yaml.*.tmp")]
            if found and found[0] == tmp:
                if time.monotonic() - since >= 0.08:
                    break
            else:
                tmp, since = (found[0], time.monotonic()) if found else (None, None)
            time.sleep(0.005)
        text = path.read_text()
        at = text.index(f"  name: {target}\n")
        if kind == "append":
            with open(path, "a") as f:
                f.write(f"# {marker}\n")
        else:
            edited = text[:at] + text[at:].replace("online: true", marker, 1)
            if kind == "rename":
                side = d / ".hosts.yaml.swp"
                side.write_text(edited)
                os.replace(side, path)
            else:
                with open(path, "r+") as f:
                    f.write(edited)
                    f.truncate()
        if tmp is not None and tmp.exists():
            in_window += 1
        code, _, err = finish(proc, HANG_BOUND["fixture"])
        if code is None:
            res.bad("hung", t, "the run did not end after the edit")
        elif code != 0:
            res.bad("failed", t, f"the run exited {code}: {err.strip()[-300:]}")
        now = path.read_text()
        if marker not in now:
            res.bad("lost", t, f"the {kind} edit ({marker!r}) is gone from the file")
        elif kind != "append" and code == 0:
            got, out, gerr = bm.run(["get", "-f", "hosts.yaml", "-o", "json"], d, 30)
            powered = {r[0]: r[2] for r in hosts_of(out)} if got == 0 else {}
            if powered.get(target) is not False:
                res.bad("failed", t, f"{target} is not powered off at the end of the run: the "
                        "edit was not acted upon")
        left = [p.name for p in d.glob(".hosts.yaml.*")] + [p.name for p in d.glob("*.edit-*")]
        if left:
            res.bad("failed", t, f"files left beside hosts.yaml: {left}")
        res.trials += 1
        res.seconds += time.monotonic() - t0
    res.notes.append(f"edit-window: {in_window} of {res.trials} edits landed while bmhctl's "
                     f"swap was held back (renames delayed {delay_us // 1000} ms)")


# --- a full disk -------------------------------------------------------------------------------


def mount_tmpfs(mnt):
    """Mounts a 1 MiB tmpfs on `mnt`; returns the command prefix that runs a program where the
    mount is seen, or raises RuntimeError with the reason none works."""
    base = ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)]
    if os.geteuid() == 0:
        subprocess.run(base, check=True)
        return []
    if shutil.which("sudo") and subprocess.run(["sudo", "-n", *base]).returncode == 0:
        return []
    raise RuntimeError("mounting a tmpfs needs root or passwordless sudo")


def umount(mnt):
    cmd = ["umount", str(mnt)] if os.geteuid() == 0 else ["sudo", "-n", "umount", str(mnt)]
    subprocess.run(cmd, check=False)


def full_disk(bm, args, res, work, rng):
    n = 4
    names = [f"worker-{i}" for i in range(n)]
    for t in range(args.trials_of("full-disk")):
        d = work / f"full-disk-{t}"
        d.mkdir()
        try:
            mount_tmpfs(d)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            res.skipped = str(e)
            return
        try:
            original = fixture_file(n)
            (d / "hosts.yaml").write_text(original)
            # fill the disk but for a little room: the lock and sidecar may fit (in turns more
            # or less), the rewritten hosts file with its status does not
            room = [0, 2048, 8192, 12288, 16384][t % 5]
            filler = d / "filler"
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                while os.write(fd, b"\0" * 4096):
                    pass
            except OSError:
                pass
            finally:
                os.close(fd)
            with open(filler, "r+b") as f:
                size = os.fstat(f.fileno()).st_size
                f.truncate(max(0, size - room))
            t0 = time.monotonic()
            code, _, err = bm.run(["provision", "--provisioner", "fixture", "-q", "hosts.yaml"],
                                  d, FULL_DISK_BOUND, {"BMHCTL_TIME_SCALE": "0"})
            took = time.monotonic() - t0
            if code is None:
                res.bad("hung", t, f"still running after {FULL_DISK_BOUND} s on a full disk")
            elif code != 1 or "hosts.yaml" not in err:
                res.bad("failed", t, f"exit {code} in {took:.1f} s (want 1 naming hosts.yaml): "
                        f"{err.strip()[-300:]}")
            else:
                res.notes.append(f"full-disk #{t} (room {room} B): exit 1 in {took:.2f} s: "
                                 f"{err.strip().splitlines()[-1]}")
            text = (d / "hosts.yaml").read_text()
            if without_status(text) != without_status(original):
                res.bad("lost", t, "bytes outside status: changed on the full disk")
            filler.unlink()
            rerun_file(bm, res, t, d, names, original)
            res.trials += 1
            res.seconds += time.monotonic() - t0
        finally:
            umount(d)


# --- Ironic ------------------------------------------------------------------------------------


class Ironic:
    def __init__(self, port):
        self.port = port
        self.env = {}

    def start(self, fresh):
        env = dict(os.environ, IRONIC_AUTH="noauth", IRONIC_DB="sqlite",
                   IRONIC_FRESH="1" if fresh else "0")
        for k in ("IRONIC_EXTRA_CONF", "IRONIC_AUTOMATED_CLEAN", "IRONIC_DEBUG"):
            env.pop(k, None)
        r = subprocess.run([str(LAB / "start-ironic.sh"), str(self.port)], env=env,
                           stdout=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"scripts/ironic/start-ironic.sh {self.port} failed")
        state = lab_dir() / f"ironic-{self.port}"
        self.env = {}
        for line in (state / "bmhctl.env").read_text().splitlines():
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                self.env[k] = v

    def stop(self):
        subprocess.run([str(LAB / "stop-ironic.sh"), str(self.port)], check=False,
                       stdout=subprocess.DEVNULL)

    def api(self, method, path, body=None):
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/v1{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"X-OpenStack-Ironic-API-Version": "1.81",
                     "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            data = r.read()
        return json.loads(data) if data else None

    def nodes(self):
        fields = "uuid,name,provision_state,provision_updated_at"
        return self.api("GET", f"/nodes?fields={fields}")["nodes"]

    def remove(self, uuids):
        """Deletes nodes (maintenance first: a node in any state can then be deleted)."""
        for u in uuids:
            try:
                self.api("PUT", f"/nodes/{u}/maintenance", {"reason": "fault trial done"})
                self.api("DELETE", f"/nodes/{u}")
            except OSError as e:
                log(f"could not delete node {u}: {e}")


def host_of(node):
    """The host a node was registered for: BMO names it `<namespace>~<name>`."""
    return (node.get("name") or "").split("~")[-1]


def lab_dir():
    d = os.environ.get("BMHCTL_LAB_DIR") or str(ROOT / ".state" / "ironic")
    return pathlib.Path(d).absolute()


def ironic_file(names, port):
    return SECRET + "".join(IRONIC_HOST.format(name=n, image_port=port + 1) for n in names)


def states_in(path):
    try:
        return re.findall(r"^    state: (\S+)$", path.read_text(), re.M)
    except OSError:
        return []


def ironic_rerun(bm, res, t, d, ironic, names, active_before):
    """The re-run after a disturbed Ironic run: every host provisioned, one node each, no node
    that was active deployed again."""
    code, _, err = bm.run(["provision", "-q", "hosts.yaml"], d, HANG_BOUND["ironic"],
                          {**ironic.env, "BMHCTL_TIME_SCALE": "0.2"})
    if code is None:
        res.bad("hung", t, "the re-run did not end")
    elif code != 0:
        res.bad("failed", t, f"the re-run exited {code}: {err.strip()[-300:]}")
    else:
        code, out, err = bm.run(["get", "-f", "hosts.yaml", "-o", "json"], d, 30)
        if code != 0:
            res.bad("failed", t, f"get exited {code}: {err.strip()[-300:]}")
        else:
            check_hosts(res, t, out, names)
    nodes = ironic.nodes()
    mine = [nd for nd in nodes if host_of(nd) in names]
    for n in names:
        same = [nd for nd in mine if host_of(nd) == n]
        if len(same) != 1:
            res.bad("duplicates", t, f"{len(same)} Ironic nodes for host {n}")
    # Ironic logs every provision state change: a node deployed twice went to "deploying" twice
    log_text = (lab_dir() / f"ironic-{ironic.port}" / "ironic.log").read_text(errors="replace")
    for nd in mine:
        deploys = log_text.count(f'Node {nd["uuid"]} moved to provision state "deploying"')
        if deploys != 1:
            res.bad("duplicates", t, f"node {nd['name']} deployed {deploys} times")
    for nd in mine:
        before = active_before.get(nd["uuid"])
        if before is not None and (nd["provision_state"] != "active"
                                   or nd["provision_updated_at"] != before):
            res.bad("duplicates", t, f"node {nd['name']} was active and was touched again: "
                    f"{nd['provision_state']} at {nd['provision_updated_at']} (was {before})")
    ironic.remove([nd["uuid"] for nd in mine])


def provision_first(bm, res, t, d, ironic, name):
    """Provisions one host of the file alone, so that it is active when the trial's run
    starts: the trial then checks it is not deployed again."""
    code, _, err = bm.run(["provision", "-q", "--host", name, "hosts.yaml"], d,
                          HANG_BOUND["ironic"], {**ironic.env, "BMHCTL_TIME_SCALE": "0.2"})
    if code != 0:
        res.bad("failed", t, f"provisioning {name} alone exited {code}: {err.strip()[-300:]}")


def kill_ironic(bm, args, res, work, rng, ironic):
    phases = ["registering", "inspecting", "provisioning"]
    per_phase = {p: 0 for p in phases}
    checked_active = 0  # nodes already active at the kill, checked not to be deployed again
    for t in range(args.trials_of("kill-ironic")):
        phase = phases[t % len(phases)]
        d = work / f"kill-ironic-{t}"
        d.mkdir()
        names = [f"t{t}-host-{i}" for i in range(3)]
        (d / "hosts.yaml").write_text(ironic_file(names, ironic.port))
        t0 = time.monotonic()
        provision_first(bm, res, t, d, ironic, names[0])
        proc = bm.spawn(["provision", "-q", "hosts.yaml"], d,
                        {**ironic.env, "BMHCTL_TIME_SCALE": "0.2"})
        # kill once a host is in the phase (the file shows each step), a little later at random
        deadline = time.monotonic() + HANG_BOUND["ironic"]
        seen = False
        while proc.poll() is None and time.monotonic() < deadline:
            if phase in states_in(d / "hosts.yaml"):
                seen = True
                time.sleep(rng.uniform(0.0, 0.5))
                break
            time.sleep(0.02)
        if proc.poll() is not None:
            res.bad("failed", t, f"the run ended (exit {proc.returncode}) before it was killed")
            proc.communicate()
        elif not seen:
            res.bad("hung", t, f"no host reached {phase} within {HANG_BOUND['ironic']} s")
            sigkill(proc)
        else:
            sigkill(proc)
            per_phase[phase] += 1
        active = {nd["uuid"]: nd["provision_updated_at"] for nd in ironic.nodes()
                  if nd["provision_state"] == "active"
                  and host_of(nd) in names}
        checked_active += len(active)
        ironic_rerun(bm, res, t, d, ironic, names, active)
        res.trials += 1
        res.seconds += time.monotonic() - t0
    res.notes.append("kill-ironic: killed while a host was " + ", ".join(
        f"{p}: {c}" for p, c in per_phase.items()) + f"; {checked_active} nodes were already "
        "active at the kill (each checked: still active, provision_updated_at unchanged)")


def kill_ironic_12(bm, args, res, work, rng, ironic):
    n = 12
    env = {**ironic.env, "BMHCTL_TIME_SCALE": "0.2"}
    d = work / "kill-ironic-12-undisturbed"
    d.mkdir()
    names = [f"u-host-{i}" for i in range(n)]
    (d / "hosts.yaml").write_text(ironic_file(names, ironic.port))
    t0 = time.monotonic()
    code, _, err = bm.run(["provision", "-q", "hosts.yaml"], d, HANG_BOUND["ironic"], env)
    wall = time.monotonic() - t0
    if code != 0:
        raise SystemExit(f"the undisturbed run of {n} Ironic hosts failed (exit {code}):\n{err}")
    ironic.remove([nd["uuid"] for nd in ironic.nodes() if host_of(nd) in names])
    log(f"kill-ironic-12: an undisturbed run of {n} hosts: {wall:.1f} s")
    states_at_kill = {}
    for t in range(args.trials_of("kill-ironic-12")):
        d = work / f"kill-ironic-12-{t}"
        d.mkdir()
        names = [f"k{t}-host-{i}" for i in range(n)]
        (d / "hosts.yaml").write_text(ironic_file(names, ironic.port))
        t0 = time.monotonic()
        proc = bm.spawn(["provision", "-q", "hosts.yaml"], d, env)
        # (runs after the first are a little faster: 0.8 of it keeps the kills inside them)
        time.sleep(rng.uniform(0.0, wall * 0.8))
        if proc.poll() is not None:
            res.missed += 1
        sigkill(proc)
        for st in states_in(d / "hosts.yaml"):
            states_at_kill[st] = states_at_kill.get(st, 0) + 1
        active = {nd["uuid"]: nd["provision_updated_at"] for nd in ironic.nodes()
                  if nd["provision_state"] == "active" and host_of(nd) in names}
        ironic_rerun(bm, res, t, d, ironic, names, active)
        res.trials += 1
        res.seconds += time.monotonic() - t0
    res.notes.append(
        f"kill-ironic-12: {res.trials - res.missed} of {res.trials} kills came while the run was "
        "going on; host states in the file at the kills: " + ", ".join(
            f"{k}: {v}" for k, v in sorted(states_at_kill.items())))


def ironic_restart(bm, args, res, work, rng, ironic):
    for t in range(args.trials_of("ironic-restart")):
        d = work / f"ironic-restart-{t}"
        d.mkdir()
        names = [f"r{t}-host-{i}" for i in range(3)]
        (d / "hosts.yaml").write_text(ironic_file(names, ironic.port))
        t0 = time.monotonic()
        provision_first(bm, res, t, d, ironic, names[0])
        active = {nd["uuid"]: nd["provision_updated_at"] for nd in ironic.nodes()
                  if nd["provision_state"] == "active" and host_of(nd) in names}
        proc = bm.spawn(["provision", "-q", "hosts.yaml"], d,
                        {**ironic.env, "BMHCTL_TIME_SCALE": "0.2"})
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if set(states_in(d / "hosts.yaml")) - {"registering", "provisioned"}:
                break
            time.sleep(0.05)
        down = time.monotonic()
        ironic.stop()
        time.sleep(rng.uniform(2, 6))
        ironic.start(fresh=False)
        down = time.monotonic() - down
        code, _, err = finish(proc, HANG_BOUND["ironic"])
        if code is None:
            res.bad("hung", t, "the run did not end after Ironic came back")
        else:
            last = err.strip().splitlines()[-1] if err.strip() else ""
            res.notes.append(f"ironic-restart #{t}: Ironic away {down:.1f} s (stop, wait, "
                             f"start); the run ended with exit {code} after "
                             f"{time.monotonic() - t0:.1f} s {last}".rstrip())
        ironic_rerun(bm, res, t, d, ironic, names, active)
        res.trials += 1
        res.seconds += time.monotonic() - t0


# --- main --------------------------------------------------------------------------------------


def build(args):
    if args.bin:
        binary = pathlib.Path(args.bin).absolute()
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"--bin {binary}: not an executable file")
        return binary
    log("building: scripts/stage-plugins.sh release")
    subprocess.run([str(ROOT / "scripts" / "stage-plugins.sh"), "release"], cwd=ROOT,
                   check=True, stdout=subprocess.DEVNULL)
    return ROOT / "target" / "release" / "bmhctl"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", help="the bmhctl binary (default: build target/release/bmhctl)")
    ap.add_argument("--scenario", action="append", choices=sorted(DEFAULT_TRIALS),
                    help="run this scenario (repeatable; default: all)")
    ap.add_argument("--trials", type=int, help="trials per scenario (default: per scenario)")
    ap.add_argument("--port", type=int, default=6485, help="the Ironic's port (default 6485)")
    ap.add_argument("--seed", type=int, default=None, help="seed of the random kill times")
    ap.add_argument("--keep", action="store_true", help="keep the trial directories")
    args = ap.parse_args()
    if args.trials is not None and args.trials < 1:
        ap.error("--trials must be at least 1")
    scenarios = args.scenario or list(DEFAULT_TRIALS)
    args.trials_of = lambda s: args.trials or DEFAULT_TRIALS[s]
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)

    binary = build(args)
    # ours, without the settings that would pick another provisioner or Ironic
    drop = ("IRONIC_", "DEPLOY_", "METAL3_", "PROVISIONING_LIMIT", "BMHCTL_", "BMO_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["BMHCTL_SEED"] = "1"
    bm = Bmhctl(binary, env)
    work = pathlib.Path(tempfile.mkdtemp(prefix="bmhctl-fault-trials-"))
    log(f"binary {binary}, seed {seed}, trial directories in {work}")

    needs_ironic = {"kill-ironic", "kill-ironic-12", "ironic-restart"} & set(scenarios)
    plugin_dir = pathlib.Path(os.environ.get("PROVISIONER_PLUGIN_DIR") or binary.parent / "plugins")
    if needs_ironic and not (plugin_dir / "ironic-provisioner.so").is_file():
        raise SystemExit(f"{plugin_dir}/ironic-provisioner.so missing (the Ironic scenarios need "
                         "it): run scripts/stage-plugins.sh release, or set "
                         "PROVISIONER_PLUGIN_DIR")
    ironic = Ironic(args.port) if needs_ironic else None
    results = []
    started = time.monotonic()
    try:
        if ironic:
            log(f"starting a fresh Ironic on port {args.port}")
            ironic.start(fresh=True)
        runners = {"kill-file": kill_file, "kill-store": kill_store, "edit-file": edit_file,
                   "edit-window": edit_window, "full-disk": full_disk}
        for s in scenarios:
            res = Result(s)
            results.append(res)
            log(f"{s}: {args.trials_of(s)} trials")
            if s in runners:
                runners[s](bm, args, res, work, rng)
            elif s == "kill-ironic":
                kill_ironic(bm, args, res, work, rng, ironic)
            elif s == "kill-ironic-12":
                kill_ironic_12(bm, args, res, work, rng, ironic)
            else:
                ironic_restart(bm, args, res, work, rng, ironic)
    finally:
        if ironic:
            ironic.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
          f"seed {seed}, {time.monotonic() - started:.0f} s in all")
    head = (f"{'scenario':<15} {'trials':>6} {'lost':>5} {'hung':>5} {'duplicates':>10} "
            f"{'failed':>6} {'seconds':>8}")
    print(head)
    print("-" * len(head))
    bad = False
    for r in results:
        if r.skipped:
            print(f"{r.name:<15} skipped: {r.skipped}")
            continue
        print(f"{r.name:<15} {r.trials:>6} {r.lost:>5} {r.hung:>5} {r.duplicates:>10} "
              f"{r.failed:>6} {r.seconds:>8.1f}")
        bad |= bool(r.lost or r.hung or r.duplicates or r.failed)
    for r in results:
        for note in r.notes:
            print(note)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
