"""IPMI 2.0 (RMCP+, lanplus) BMC emulator for the lab, on pyghmi's BMC server.

Run by start-ipmi.sh with the ipmi venv's Python: ``ipmi_bmc.py --config FILE``. FILE is a JSON
object written by start-ipmi.sh::

    {"address": "127.0.0.1", "user": "admin", "password": "password",
     "state_dir": "/path/ipmi-6623",
     "bmcs": [{"name": "ipmi-0", "port": 6623}, ...]}

Every BMC listens on its own UDP port (one port per host, as Ironic's ``ipmi_port``) and emulates
one machine: chassis power (status, on, off, soft off, cycle, reset) and the boot device. There
is no machine behind it: a power change is visible at the next status read. Each BMC's state is
in ``state_dir/bmc-PORT.json`` (``{"name", "port", "power": "on"|"off", "boot_device"}``),
rewritten atomically on every change and read back at start, so a restart of the emulator does
not power the machines off. Every power or boot command is logged on stdout as one line::

    2026-12-07T10:00:00.123Z ipmi-0 port 6623: power on (was off)

pyghmi speaks IPMI 2.0 only, with cipher suite 3; ipmitool's ``-I lanplus`` (Ironic's default)
negotiates it.
"""

import argparse
import datetime
import json
import os
import signal
import sys

import pyghmi.ipmi.bmc as bmc


def log(text):
    now = datetime.datetime.now(datetime.timezone.utc)
    print(f"{now.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z {text}", flush=True)


class LabBmc(bmc.Bmc):
    def __init__(self, name, port, address, authdata, state_dir):
        super().__init__(authdata, port=port, address=address)
        self.name = name
        self.state_file = os.path.join(state_dir, f"bmc-{port}.json")
        state = {}
        try:
            with open(self.state_file) as f:
                state = json.load(f)
        except FileNotFoundError:
            pass
        self.power = state.get("power", "off")
        self.boot_device = state.get("boot_device", "default")
        self.save()

    def save(self):
        tmp = f"{self.state_file}.tmp"
        with open(tmp, "w") as f:
            json.dump({"name": self.name, "port": self.port, "power": self.power,
                       "boot_device": self.boot_device}, f)
            f.write("\n")
        os.replace(tmp, self.state_file)

    def _power(self, command, new):
        old = self.power
        self.power = new
        self.save()
        log(f"{self.name} port {self.port}: {command} (was {old})")

    def get_power_state(self):
        return self.power

    def is_active(self):
        return self.power == "on"

    def power_on(self):
        self._power("power on", "on")

    def power_off(self):
        self._power("power off", "off")

    def power_shutdown(self):
        # a soft (ACPI) off: no OS to ask, so the machine goes off at once
        self._power("power soft", "off")

    def power_cycle(self):
        # IPMI: a cycle of a machine that is off has no effect (ipmitool says so too)
        if self.power == "off":
            log(f"{self.name} port {self.port}: power cycle refused (was off)")
            return 0xD5  # command not supported in present state
        self._power("power cycle", "on")

    def power_reset(self):
        self._power("power reset", "on")

    def get_boot_device(self):
        return self.boot_device

    def set_boot_device(self, bootdevice):
        old = self.boot_device
        self.boot_device = bootdevice
        self.save()
        log(f"{self.name} port {self.port}: boot device {bootdevice} (was {old})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    args = parser.parse_args()
    with open(args.config) as f:
        conf = json.load(f)
    auth = {conf["user"]: conf["password"]}
    for b in conf["bmcs"]:
        try:
            LabBmc(b["name"], b["port"], conf["address"], auth, conf["state_dir"])
        except OSError as e:
            sys.exit(f"cannot listen on {conf['address']}:{b['port']}/udp: {e}")
    first, last = conf["bmcs"][0]["port"], conf["bmcs"][-1]["port"]
    log(f"listening: {len(conf['bmcs'])} BMCs on {conf['address']} UDP ports {first}-{last}")
    # start-ipmi.sh waits for this file: every socket is bound
    with open(os.path.join(conf["state_dir"], "ready"), "w") as f:
        f.write(f"{os.getpid()}\n")

    def stop(_sig, _frame):
        log("stopping")
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    bmc.Bmc.listen(timeout=30)


if __name__ == "__main__":
    main()
