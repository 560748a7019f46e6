"""sushy-tools' Redfish emulator with a more useful fake systems driver.

Run by start-sushy.sh with the sushy venv's Python and the same arguments as
``sushy-emulator`` (``--config FILE``). Two changes to the stock fake driver:

* Power changes: the stock driver applies each one 1 to 11 s (at random)
  after the request. ``SUSHY_FAKE_POWER_DELAY`` sets a fixed delay in
  seconds instead (default 0: visible at the next read); ``random`` keeps
  the stock behaviour.
* Hardware facts: the stock driver reports no processors, memory or disks,
  and Ironic's out-of-band (``redfish``) inspection then fails with "The
  attribute Processors is missing". Each entry of
  SUSHY_EMULATOR_FAKE_SYSTEMS may carry ``cpus``, ``memory_gib`` and
  ``disk_gib`` (defaults 2, 8, 40), served as Processors, MemorySummary
  and SimpleStorage. Each system also gets BIOS settings and a BIOS
  version (the stock fake driver has none, so Ironic's BIOS and firmware
  views of a node stay empty); changes apply at once, unlike a real BIOS,
  and none stays pending.
"""
import os
import sys
import types

from sushy_tools.emulator import main
from sushy_tools.emulator.resources.systems import fakedriver

delay = os.environ.get("SUSHY_FAKE_POWER_DELAY", "0")
if delay != "random":
    # the stock driver computes: int(time.time()) + random.randint(1, 11)
    fakedriver.random = types.SimpleNamespace(randint=lambda _a, _b: int(delay))


def _fact(driver, identity, key, default):
    return int(driver._get(identity).get(key, default))


def total_memory(self, identity):  # GiB
    return _fact(self, identity, "memory_gib", 8)


def total_cpus(self, identity):
    return _fact(self, identity, "cpus", 2)


def processors(self, identity):
    return [
        {"id": f"CPU{i}", "socket": f"CPU {i}", "model": "Fake x86-64 CPU",
         "vendor": "FakeVendor", "cores": "1", "threads": "1"}
        for i in range(total_cpus(self, identity))
    ]


def simple_storage(self, identity):
    size = _fact(self, identity, "disk_gib", 40) * 1024 ** 3
    return {"sata": {"Id": "sata", "Name": "sata",
                     "DeviceList": [{"Name": "disk0", "CapacityBytes": size}]}}


# the same defaults as sushy-tools' libvirt driver
DEFAULT_BIOS = {"BootMode": "Uefi", "EmbeddedSata": "Raid", "L2Cache": "10x256 KB",
                "NicBoot1": "NetworkBoot", "NumCores": "10", "QuietBoot": "true",
                "ProcTurboMode": "Enabled", "SecureBootStatus": "Enabled",
                "SerialNumber": "QPX12345", "SysPassword": ""}
DEFAULT_VERSIONS = {"BiosVersion": "1.0.0"}


def _stored(key, default):
    def get(self, identity):
        return dict(self._get(identity).get(key) or default)

    def update(self, identity, values):
        merged = get(self, identity)
        merged.update(values)
        self._update(identity, **{key: merged})

    def reset(self, identity):
        self._update(identity, **{key: dict(default)})

    return get, update, reset


for name, key, default in (("bios", "bios", DEFAULT_BIOS),
                           ("versions", "versions", DEFAULT_VERSIONS)):
    get, update, reset = _stored(key, default)
    setattr(fakedriver.FakeDriver, f"get_{name}", get)
    setattr(fakedriver.FakeDriver, f"set_{name}", update)
    setattr(fakedriver.FakeDriver, f"reset_{name}", reset)

# The BIOS applies a change at once, so nothing is ever pending: the stock emulator serves every
# current attribute as pending too (BIOS/Settings), and an Ironic before 2026.2 then waits for
# them forever after it applied BIOS settings (a real BMC empties them at the reboot that applies
# them).
_render_template = main.app.render_template


def render_template(template, *args, **kwargs):
    if template == "bios_settings.json":
        kwargs["bios_pending_attributes"] = "{}"
    return _render_template(template, *args, **kwargs)


main.app.render_template = render_template

fakedriver.FakeDriver.get_total_memory = total_memory
fakedriver.FakeDriver.get_total_cpus = total_cpus
fakedriver.FakeDriver.get_processors = processors
fakedriver.FakeDriver.get_simple_storage_collection = simple_storage

if __name__ == "__main__":
    sys.argv[0] = "sushy-emulator"
    sys.exit(main.main())
