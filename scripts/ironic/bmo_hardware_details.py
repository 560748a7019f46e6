#!/usr/bin/env python3
"""BMO's conversion of Ironic inspection data to a BareMetalHost's status.hardware, in Python.

usage: bmo_hardware_details.py [FILE]     (FILE, or stdin: the body of GET /v1/nodes/{id}/inventory)

Prints the HardwareDetails JSON that the baremetal-operator (BMO) stores in status.hardware for
that inspection data, with BMO's JSON field names and its `omitempty` rules. It is the oracle the
agent-inspection lab test compares bmhctl against, so it follows BMO's Go code step by step and
shares nothing with bmhctl's own conversion (src/ironic/convert/inventory.rs):

  pkg/provisioner/ironic/hardwaredetails/hardwaredetails.go   GetHardwareDetails and its helpers
  apis/metal3.io/v1alpha1/hardwaredata_types.go               the JSON names and omitempty
  gophercloud openstack/baremetal/inventory/{types,plugindata}.go   how the JSON is decoded

Go's decoding is part of the behaviour, and two of its effects are kept on purpose:
  * plugin_data is decoded as a whole into gophercloud's StandardPluginData; when any part of it
    does not fit (AsStandardData fails), BMO logs it and converts with empty plugin data: no PXE
    flag and no LLDP on any NIC.
  * the VLANs of a NIC are read with Go type assertions that JSON-decoded data never satisfies
    ([]map[string]any, int), so `vlans` and `vlanId` are never set.
Standard library only: it runs with any python3.
"""

import json
import math
import re
import sys


class DecodeError(Exception):
    """A value Go's encoding/json would refuse for the field's type."""


# --- gophercloud's decoding: a JSON null leaves Go's zero value; a wrong type is an error --------


def go_string(v):
    if v is None:
        return ""
    if not isinstance(v, str):
        raise DecodeError(f"cannot unmarshal {v!r} into string")
    return v


def go_int(v):
    if v is None:
        return 0
    # a JSON number with a fraction or exponent does not decode into a Go int
    if isinstance(v, bool) or not isinstance(v, int):
        raise DecodeError(f"cannot unmarshal {v!r} into int")
    return v


def go_bool(v):
    if v is None:
        return False
    if not isinstance(v, bool):
        raise DecodeError(f"cannot unmarshal {v!r} into bool")
    return v


def go_object(v):
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise DecodeError(f"cannot unmarshal {v!r} into a struct or map")
    return v


def go_list(v):
    if v is None:
        return []
    if not isinstance(v, list):
        raise DecodeError(f"cannot unmarshal {v!r} into a slice")
    return v


def interface_type(v):
    v = go_object(v)
    return {
        "name": go_string(v.get("name")),
        "mac_address": go_string(v.get("mac_address")),
        "ipv4_address": go_string(v.get("ipv4_address")),
        "ipv6_address": go_string(v.get("ipv6_address")),
        "vendor": go_string(v.get("vendor")),
        "product": go_string(v.get("product")),
        "speed_mbps": go_int(v.get("speed_mbps")),
        "pci_address": go_string(v.get("pci_address")),
        "biosdevname": go_string(v.get("biosdevname")),
        "client_id": go_string(v.get("client_id")),
        "has_carrier": go_bool(v.get("has_carrier")),
    }


def root_disk_type(v):
    v = go_object(v)
    fields = ["hctl", "model", "name", "by_path", "serial", "vendor", "wwn",
              "wwn_vendor_extension", "wwn_with_extension"]
    disk = {f: go_string(v.get(f)) for f in fields}
    disk["rotational"] = go_bool(v.get("rotational"))
    disk["size"] = go_int(v.get("size"))
    return disk


def inventory_type(v):
    """inventory.InventoryType: the fields GetHardwareDetails reads."""
    v = go_object(v)
    cpu = go_object(v.get("cpu"))
    vendor = go_object(v.get("system_vendor"))
    firmware = go_object(vendor.get("firmware"))
    return {
        "cpu": {
            "architecture": go_string(cpu.get("architecture")),
            "count": go_int(cpu.get("count")),
            "flags": [go_string(f) for f in go_list(cpu.get("flags"))],
            "frequency": go_string(cpu.get("frequency")),
            "model_name": go_string(cpu.get("model_name")),
        },
        "disks": [root_disk_type(d) for d in go_list(v.get("disks"))],
        "interfaces": [interface_type(i) for i in go_list(v.get("interfaces"))],
        "memory": {"physical_mb": go_int(go_object(v.get("memory")).get("physical_mb"))},
        "system_vendor": {
            "manufacturer": go_string(vendor.get("manufacturer")),
            "product_name": go_string(vendor.get("product_name")),
            "serial_number": go_string(vendor.get("serial_number")),
            "firmware": {
                "version": go_string(firmware.get("version")),
                "build_date": go_string(firmware.get("build_date")),
                "vendor": go_string(firmware.get("vendor")),
            },
        },
        "hostname": go_string(v.get("hostname")),
    }


def lldp_tlv(v):
    """LLDPTLVType.UnmarshalJSON: exactly [number, string]."""
    if not (isinstance(v, list) and len(v) == 2):
        raise DecodeError("invalid LLDP TLV key-value pair")
    if isinstance(v[0], bool) or not isinstance(v[0], (int, float)):
        raise DecodeError("LLDP TLV key is not number")
    if not isinstance(v[1], str):
        raise DecodeError("LLDP TLV value is not string")


def as_standard_data(plugin_data):
    """PluginData.AsStandardData: the two fields the conversion reads, after checking that every
    field of StandardPluginData the data has decodes. Raises DecodeError as Go's would fail."""
    p = go_object(plugin_data)
    all_interfaces = {}
    for name, iface in go_object(p.get("all_interfaces")).items():
        all_interfaces[name] = dict(interface_type(iface),
                                    pxe_enabled=go_bool(go_object(iface).get("pxe_enabled")))
    for iface in go_object(p.get("valid_interfaces")).values():
        interface_type(iface)
        go_bool(go_object(iface).get("pxe_enabled"))
    go_string(p.get("boot_interface"))
    go_string(p.get("error"))
    for mac in go_list(p.get("macs")):
        go_string(mac)
    root_disk_type(p.get("root_disk"))
    configuration = go_object(p.get("configuration"))
    for c in go_list(configuration.get("collectors")):
        go_string(c)
    for m in go_list(configuration.get("managers")):
        m = go_object(m)
        go_string(m.get("name"))
        go_string(m.get("version"))
    for tlvs in go_object(p.get("lldp_raw")).values():
        for tlv in go_list(tlvs):
            lldp_tlv(tlv)
    extra = go_object(p.get("extra"))
    for section in ("cpu", "disk", "firmware", "ipmi", "memory", "network", "system"):
        for item in go_object(extra.get(section)).values():
            go_object(item)
    numa = go_object(p.get("numa_topology"))
    for cpu in go_list(numa.get("cpus")):
        cpu = go_object(cpu)
        go_int(cpu.get("cpu"))
        go_int(cpu.get("numa_node"))
        for t in go_list(cpu.get("thread_siblings")):
            go_int(t)
    for nic in go_list(numa.get("nics")):
        nic = go_object(nic)
        go_string(nic.get("name"))
        go_int(nic.get("numa_node"))
    for ram in go_list(numa.get("ram")):
        ram = go_object(ram)
        go_int(ram.get("numa_node"))
        go_int(ram.get("size_kb"))
    parsed_lldp = {}
    for name, lldp in go_object(p.get("parsed_lldp")).items():
        # map[string]any: null stays a nil map
        parsed_lldp[name] = go_object(lldp) if lldp is not None else None
    return {"all_interfaces": all_interfaces, "parsed_lldp": parsed_lldp}


# --- hardwaredetails.go ----------------------------------------------------------------------


def get_vlans(lldp):
    """getVLANs: `spvs.([]map[string]any)` and `.(int)` never hold for decoded JSON ([]any,
    float64), so nothing is ever returned from real data."""
    return [], 0


def get_lldp_data(lldp):
    if lldp is None:
        return None
    data = {}
    for key, field in (("switch_chassis_id", "switchID"), ("switch_port_id", "portID"),
                       ("switch_system_name", "switchSystemName")):
        val = lldp.get(key)
        if isinstance(val, str) and val != "":
            data[field] = val
    return data or None


def get_nic_details(interfaces, standard):
    nics = []
    for intf in interfaces:
        # a missing map entry is Go's zero value
        pxe = standard["all_interfaces"].get(intf["name"], {}).get("pxe_enabled", False)
        lldp = standard["parsed_lldp"].get(intf["name"])
        vlans, vlan_id = get_vlans(lldp)
        lldp_data = get_lldp_data(lldp)
        # strings.TrimLeft(fmt.Sprintf("%s %s", vendor, product), " ")
        model = f"{intf['vendor']} {intf['product']}".lstrip(" ")
        # Go's integer division truncates toward zero
        speed = int(intf["speed_mbps"] / 1000)
        ips = []
        if intf["ipv4_address"] != "" or intf["ipv6_address"] == "":
            ips.append(intf["ipv4_address"])
        if intf["ipv6_address"] != "":
            ips.append(intf["ipv6_address"])
        for ip in ips:
            nics.append({
                "name": intf["name"], "model": model, "mac": intf["mac_address"], "ip": ip,
                "vlans": vlans, "vlanId": vlan_id, "speedGbps": speed, "pxe": pxe,
                "lldp": lldp_data, "pciAddress": intf["pci_address"],
            })
    return nics


def get_disk_type(disk):
    if disk["rotational"]:
        return "HDD"
    if disk["name"].startswith("/dev/nvme"):
        return "NVME"
    return "SSD"


def get_storage_details(disks):
    storage = []
    for disk in disks:
        name = disk["name"]
        all_names = []
        if name != "":
            all_names.append(name)
        if disk["by_path"] != "":
            name = disk["by_path"]
            all_names.append(name)
        storage.append({
            "name": name, "alternateNames": all_names, "rotational": disk["rotational"],
            "type": get_disk_type(disk), "sizeBytes": disk["size"], "vendor": disk["vendor"],
            "model": disk["model"], "serialNumber": disk["serial"], "wwn": disk["wwn"],
            "wwnVendorExtension": disk["wwn_vendor_extension"],
            "wwnWithExtension": disk["wwn_with_extension"], "hctl": disk["hctl"],
        })
    return storage


# fmt.Sscanf(s, "%f", &f): optional spaces, then the longest float Go accepts; 0 when none
SCAN_FLOAT = re.compile(r"\s*([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)")


def get_cpu_details(cpu):
    match = SCAN_FLOAT.match(cpu["frequency"])
    freq = float(match.group(1)) if match else 0.0
    # math.Round: half away from zero (Python's round() rounds half to even)
    freq = math.copysign(math.floor(abs(freq) + 0.5), freq)
    return {
        "arch": cpu["architecture"], "model": cpu["model_name"], "clockMegahertz": freq,
        "count": cpu["count"], "flags": sorted(cpu["flags"]),
    }


def get_hardware_details(data):
    inventory = inventory_type(go_object(data).get("inventory"))
    try:
        standard = as_standard_data(data.get("plugin_data"))
    except DecodeError as e:
        print(f"cannot get plugin data from inventory, some fields will not be available: {e}",
              file=sys.stderr)
        standard = {"all_interfaces": {}, "parsed_lldp": {}}
    vendor = inventory["system_vendor"]
    return {
        "firmware": {"bios": {"vendor": vendor["firmware"]["vendor"],
                              "version": vendor["firmware"]["version"],
                              "date": vendor["firmware"]["build_date"]}},
        "systemVendor": {"manufacturer": vendor["manufacturer"],
                         "productName": vendor["product_name"],
                         "serialNumber": vendor["serial_number"]},
        "ramMebibytes": inventory["memory"]["physical_mb"],
        "nics": get_nic_details(inventory["interfaces"], standard),
        "storage": get_storage_details(inventory["disks"]),
        "cpu": get_cpu_details(inventory["cpu"]),
        "hostname": inventory["hostname"],
    }


# --- encoding/json with hardwaredata_types.go's tags ---------------------------------------


def is_empty(x):
    if x is None or x is False or x == "" or x == []:
        return True
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == 0


def omit_empty(v):
    """`omitempty` drops false, 0, "" and empty slices, and a nil *LLDP; a struct is never dropped,
    even an all-empty one like systemVendor."""
    if isinstance(v, dict):
        return {k: omit_empty(x) for k, x in v.items() if isinstance(x, dict) or not is_empty(x)}
    if isinstance(v, list):
        return [omit_empty(x) for x in v]
    return v


def main():
    src = open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin
    details = omit_empty(get_hardware_details(json.load(src)))
    # Go writes ClockSpeed (a float64) without a fraction when it is whole
    cpu = details.get("cpu", {})
    if isinstance(cpu.get("clockMegahertz"), float) and cpu["clockMegahertz"].is_integer():
        cpu["clockMegahertz"] = int(cpu["clockMegahertz"])
    json.dump(details, sys.stdout, indent=2, sort_keys=False)
    print()


if __name__ == "__main__":
    main()
