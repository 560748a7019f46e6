//! Ironic inspection data → `HardwareDetails` (spec 3.3.1).
//!
//! The input is untyped JSON from the agent, so every field is read leniently: a missing,
//! `null` or wrongly typed value counts as empty/zero, and nothing here panics.

use bmh_api::{Bios, Cpu, Firmware, HardwareDetails, HardwareSystemVendor, Lldp, Nic, Storage};
use serde_json::Value;

/// The string at `key`, or `""` when absent or not a string.
fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_string()
}

/// A JSON integer; an integral float is accepted too (JSON encoders may write `2048.0`).
fn as_int(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    if v.is_u64() {
        return Some(i64::MAX);
    }
    v.as_f64()
        .filter(|f| f.is_finite() && f.fract() == 0.0)
        .map(|f| f as i64)
}

/// The integer at `key`, or 0.
fn int(v: &Value, key: &str) -> i64 {
    as_int(&v[key]).unwrap_or(0)
}

fn flag(v: &Value, key: &str) -> bool {
    v[key].as_bool().unwrap_or(false)
}

fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v[key].as_array().map_or(&[], Vec::as_slice)
}

/// The leading decimal number of `s`, as Go's `Sscanf("%f")` reads it ("1900.0000 MHz", "2.4GHz").
fn leading_float(s: &str) -> Option<f64> {
    let s = s.trim_start();
    // The longest prefix that parses (sign, digits, fraction, exponent; inf and NaN refused).
    (1..=s.len())
        .rev()
        .filter(|i| s.is_char_boundary(*i))
        .find_map(|i| s[..i].parse::<f64>().ok())
        .filter(|f| f.is_finite())
}

/// `cpu.frequency` in MHz, rounded to a whole number; 0 when unreadable.
fn clock_megahertz(frequency: Option<&Value>) -> f64 {
    let freq = match frequency {
        Some(Value::String(s)) => leading_float(s),
        // Ironic writes a string; a number is accepted as well.
        Some(Value::Number(n)) => n.as_f64().filter(|f| f.is_finite()),
        _ => None,
    };
    freq.map_or(0.0, f64::round)
}

fn cpu_details(cpu: &Value) -> Cpu {
    let mut flags: Vec<String> = array(cpu, "flags")
        .iter()
        .filter_map(|f| f.as_str().map(str::to_string))
        .collect();
    flags.sort();
    Cpu {
        arch: text(cpu, "architecture"),
        model: text(cpu, "model_name"),
        clock_megahertz: clock_megahertz(cpu.get("frequency")),
        flags,
        count: int(cpu, "count"),
    }
}

/// The switch seen over LLDP; `None` when none of its fields is a non-empty string.
fn lldp_details(lldp: &Value) -> Option<Lldp> {
    let details = Lldp {
        switch_id: text(lldp, "switch_chassis_id"),
        port_id: text(lldp, "switch_port_id"),
        switch_system_name: text(lldp, "switch_system_name"),
    };
    (details != Lldp::default()).then_some(details)
}

fn nic_details(interfaces: &[Value], plugin_data: &Value) -> Vec<Nic> {
    let mut nics = Vec::new();
    for intf in interfaces {
        let name = text(intf, "name");
        let pxe = flag(&plugin_data["all_interfaces"][&name], "pxe_enabled");
        let lldp = Some(&plugin_data["parsed_lldp"][&name]).filter(|l| l.is_object());
        let base = Nic {
            model: format!("{} {}", text(intf, "vendor"), text(intf, "product"))
                .trim_start_matches(' ')
                .to_string(),
            mac: text(intf, "mac_address"),
            speed_gbps: int(intf, "speed_mbps") / 1000,
            // BMO's getVLANs reads `switch_port_vlans` and `switch_port_untagged_vlan_id` with
            // Go type assertions ([]map[string]any, int) that data decoded from JSON never
            // satisfies, so BMO never fills them from Ironic (spec 8.10): neither does bmhctl
            vlans: Vec::new(),
            vlan_id: 0,
            pxe,
            lldp: lldp.and_then(lldp_details),
            pci_address: text(intf, "pci_address"),
            name,
            ip: String::new(),
        };
        let ipv4 = text(intf, "ipv4_address");
        let ipv6 = text(intf, "ipv6_address");
        // One entry per address; still one (without an address) when there is none.
        if !ipv4.is_empty() || ipv6.is_empty() {
            nics.push(Nic {
                ip: ipv4,
                ..base.clone()
            });
        }
        if !ipv6.is_empty() {
            nics.push(Nic { ip: ipv6, ..base });
        }
    }
    nics
}

fn storage_details(disks: &[Value]) -> Vec<Storage> {
    disks
        .iter()
        .map(|disk| {
            let name = text(disk, "name");
            let by_path = text(disk, "by_path");
            let rotational = flag(disk, "rotational");
            let alternate_names: Vec<String> = [&name, &by_path]
                .into_iter()
                .filter(|n| !n.is_empty())
                .cloned()
                .collect();
            Storage {
                // HDD when rotational, else NVME for an NVMe device name, else SSD.
                type_: match (rotational, name.starts_with("/dev/nvme")) {
                    (true, _) => "HDD",
                    (false, true) => "NVME",
                    (false, false) => "SSD",
                }
                .to_string(),
                name: if by_path.is_empty() { name } else { by_path },
                alternate_names,
                rotational,
                size_bytes: int(disk, "size"),
                vendor: text(disk, "vendor"),
                model: text(disk, "model"),
                serial_number: text(disk, "serial"),
                wwn: text(disk, "wwn"),
                wwn_vendor_extension: text(disk, "wwn_vendor_extension"),
                wwn_with_extension: text(disk, "wwn_with_extension"),
                hctl: text(disk, "hctl"),
            }
        })
        .collect()
}

/// Convert `GET /v1/nodes/{id}/inventory`'s `inventory` and `plugin_data`, as BMO does.
pub fn hardware_details(inventory: &Value, plugin_data: &Value) -> HardwareDetails {
    // Indexing gives `null` for a missing key or a non-object.
    let vendor = &inventory["system_vendor"];
    let firmware = &vendor["firmware"];
    HardwareDetails {
        system_vendor: Some(HardwareSystemVendor {
            manufacturer: text(vendor, "manufacturer"),
            product_name: text(vendor, "product_name"),
            serial_number: text(vendor, "serial_number"),
        }),
        firmware: Some(Firmware {
            bios: Bios {
                date: text(firmware, "build_date"),
                vendor: text(firmware, "vendor"),
                version: text(firmware, "version"),
            },
        }),
        ram_mebibytes: int(&inventory["memory"], "physical_mb"),
        nics: nic_details(array(inventory, "interfaces"), plugin_data),
        storage: storage_details(array(inventory, "disks")),
        cpu: Some(cpu_details(&inventory["cpu"])),
        hostname: text(inventory, "hostname"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nics_of(interfaces: Value, plugin_data: Value) -> Vec<Nic> {
        hardware_details(&json!({ "interfaces": interfaces }), &plugin_data).nics
    }

    fn storage_of(disks: Value) -> Vec<Storage> {
        hardware_details(&json!({ "disks": disks }), &json!({})).storage
    }

    fn cpu_of(cpu: Value) -> Cpu {
        hardware_details(&json!({ "cpu": cpu }), &json!({}))
            .cpu
            .expect("cpu is always present")
    }

    fn lldp_of(lldp: Value) -> (Vec<bmh_api::Vlan>, i64, Option<Lldp>) {
        let nics = nics_of(
            json!([{"name": "eth0"}]),
            json!({"parsed_lldp": {"eth0": lldp}}),
        );
        let nic = nics.into_iter().next().expect("one nic");
        (nic.vlans, nic.vlan_id, nic.lldp)
    }

    /// A realistic `GET /v1/nodes/{id}/inventory` body, nulls included.
    fn sample() -> (Value, Value) {
        let inventory = json!({
            "bmc_address": "192.167.2.134",
            "boot": {"current_boot_mode": "bios", "pxe_interface": "52:54:00:4e:3d:30"},
            "cpu": {
                "architecture": "x86_64",
                "count": 2,
                "flags": ["fpu", "mmx", "fxsr", "sse", "sse2"],
                "frequency": "2100.084",
                "model_name": "QEMU Virtual CPU"
            },
            "disks": [{
                "hctl": null, "model": "", "name": "/dev/vda", "rotational": true, "serial": null,
                "size": 13958643712_i64, "vendor": "0x1af4", "wwn": null,
                "wwn_vendor_extension": null, "wwn_with_extension": null
            }],
            "hostname": "myawesomehost",
            "interfaces": [
                {"client_id": null, "has_carrier": true, "ipv4_address": "172.24.42.101", "lldp": [],
                 "mac_address": "52:54:00:47:20:4d", "name": "eth1", "product": "0x0001",
                 "vendor": "0x1af4"},
                {"client_id": null, "has_carrier": true, "ipv4_address": "172.24.42.100",
                 "lldp": [[1, "04112233aabbcc"]], "mac_address": "52:54:00:4e:3d:30", "name": "eth0",
                 "product": "0x0001", "vendor": "0x1af4", "speed_mbps": 1000,
                 "pci_address": "0000:00:03.0"}
            ],
            "memory": {"physical_mb": 2048, "total": 2105864192_i64},
            "system_vendor": {
                "manufacturer": "Bochs", "product_name": "Bochs", "serial_number": "Not Specified",
                "firmware": {"vendor": "SeaBIOS", "version": "1.2.3.4", "build_date": "04/01/2014"}
            }
        });
        let plugin_data = json!({
            "all_interfaces": {
                "eth0": {"ip": "172.24.42.100", "mac": "52:54:00:4e:3d:30", "pxe_enabled": true},
                "eth1": {"ip": "172.24.42.101", "mac": "52:54:00:47:20:4d", "pxe_enabled": false}
            },
            "parsed_lldp": {
                "eth0": {
                    "switch_chassis_id": "aa:bb:cc:dd:ee:ff",
                    "switch_port_id": "Ethernet1/1",
                    "switch_system_name": "switch01.example.com",
                    "switch_port_vlans": [{"id": 100, "name": "prod"}, {"id": 4094, "name": "mgmt"}],
                    "switch_port_untagged_vlan_id": 100
                }
            }
        });
        (inventory, plugin_data)
    }

    #[test]
    fn full_sample() {
        let (inventory, plugin_data) = sample();
        let expected = HardwareDetails {
            system_vendor: Some(HardwareSystemVendor {
                manufacturer: "Bochs".into(),
                product_name: "Bochs".into(),
                serial_number: "Not Specified".into(),
            }),
            firmware: Some(Firmware {
                bios: Bios {
                    date: "04/01/2014".into(),
                    vendor: "SeaBIOS".into(),
                    version: "1.2.3.4".into(),
                },
            }),
            ram_mebibytes: 2048,
            nics: vec![
                Nic {
                    name: "eth1".into(),
                    model: "0x1af4 0x0001".into(),
                    mac: "52:54:00:47:20:4d".into(),
                    ip: "172.24.42.101".into(),
                    ..Default::default()
                },
                Nic {
                    name: "eth0".into(),
                    model: "0x1af4 0x0001".into(),
                    mac: "52:54:00:4e:3d:30".into(),
                    ip: "172.24.42.100".into(),
                    speed_gbps: 1,
                    // BMO never reads the VLANs from JSON (spec 8.10)
                    vlans: Vec::new(),
                    vlan_id: 0,
                    pxe: true,
                    lldp: Some(Lldp {
                        switch_id: "aa:bb:cc:dd:ee:ff".into(),
                        port_id: "Ethernet1/1".into(),
                        switch_system_name: "switch01.example.com".into(),
                    }),
                    pci_address: "0000:00:03.0".into(),
                },
            ],
            storage: vec![Storage {
                name: "/dev/vda".into(),
                alternate_names: vec!["/dev/vda".into()],
                rotational: true,
                type_: "HDD".into(),
                size_bytes: 13958643712,
                vendor: "0x1af4".into(),
                ..Default::default()
            }],
            cpu: Some(Cpu {
                arch: "x86_64".into(),
                model: "QEMU Virtual CPU".into(),
                clock_megahertz: 2100.0,
                flags: vec![
                    "fpu".into(),
                    "fxsr".into(),
                    "mmx".into(),
                    "sse".into(),
                    "sse2".into(),
                ],
                count: 2,
            }),
            hostname: "myawesomehost".into(),
        };
        assert_eq!(hardware_details(&inventory, &plugin_data), expected);
    }

    #[test]
    fn serialized_form_uses_bmo_keys() {
        let (inventory, plugin_data) = sample();
        let v = serde_json::to_value(hardware_details(&inventory, &plugin_data)).expect("json");
        assert_eq!(v["cpu"]["clockMegahertz"], json!(2100.0));
        // `vlanId` and `vlans` are left out when empty, as Go's `omitempty` does
        assert_eq!(v["nics"][1].get("vlanId"), None);
        assert_eq!(v["nics"][1].get("vlans"), None);
        assert_eq!(v["nics"][1]["lldp"]["switchID"], json!("aa:bb:cc:dd:ee:ff"));
        assert_eq!(v["storage"][0]["type"], json!("HDD"));
        assert_eq!(v["firmware"]["bios"]["date"], json!("04/01/2014"));
    }

    #[test]
    fn garbage_input_gives_empty_details_without_panicking() {
        let empty = HardwareDetails {
            system_vendor: Some(HardwareSystemVendor::default()),
            firmware: Some(Firmware::default()),
            cpu: Some(Cpu::default()),
            ..Default::default()
        };
        for (inventory, plugin_data) in [
            (json!({}), json!({})),
            (Value::Null, Value::Null),
            (json!([1, 2]), json!("x")),
            (
                json!({"cpu": 5, "memory": "lots", "system_vendor": [], "interfaces": {},
                       "disks": "none", "hostname": 7}),
                json!({"all_interfaces": [], "parsed_lldp": 1}),
            ),
        ] {
            assert_eq!(
                hardware_details(&inventory, &plugin_data),
                empty,
                "{inventory} {plugin_data}"
            );
        }
    }

    #[test]
    fn wrongly_typed_members_are_skipped_or_zero() {
        let details = hardware_details(
            &json!({
                "interfaces": [5, {"name": 3, "speed_mbps": "fast"}],
                "disks": [null, {"rotational": "yes", "size": "big"}],
                "cpu": {"flags": ["b", 1, "a", null], "count": "two"}
            }),
            &json!({}),
        );
        // Non-object list members still count (as empty ones), like missing fields do.
        assert_eq!(details.nics.len(), 2);
        assert!(details.nics.iter().all(|n| *n == Nic::default()));
        assert_eq!(details.storage.len(), 2);
        assert_eq!(details.storage[1].type_, "SSD");
        assert!(!details.storage[1].rotational);
        assert_eq!(details.storage[1].size_bytes, 0);
        let cpu = details.cpu.expect("cpu");
        assert_eq!(cpu.flags, ["a", "b"]);
        assert_eq!(cpu.count, 0);
    }

    #[test]
    fn integral_floats_are_accepted_as_integers() {
        let details = hardware_details(
            &json!({"memory": {"physical_mb": 2048.0}, "cpu": {"count": 8.0},
                    "disks": [{"name": "/dev/sda", "size": 1.5}]}),
            &json!({}),
        );
        assert_eq!(details.ram_mebibytes, 2048);
        assert_eq!(details.cpu.expect("cpu").count, 8);
        // A fractional size is no integer.
        assert_eq!(details.storage[0].size_bytes, 0);
    }

    // ---- CPU ----

    #[test]
    fn cpu_fields_and_sorted_flags() {
        let cpu = cpu_of(json!({
            "architecture": "x86_64",
            "model_name": "Intel(R) Core(TM) i7-8650U",
            "frequency": "1900.0000",
            "count": 8,
            "flags": ["vmx", "avx", "aes"]
        }));
        assert_eq!(
            cpu,
            Cpu {
                arch: "x86_64".into(),
                model: "Intel(R) Core(TM) i7-8650U".into(),
                clock_megahertz: 1900.0,
                flags: vec!["aes".into(), "avx".into(), "vmx".into()],
                count: 8,
            }
        );
    }

    #[test]
    fn cpu_frequency_is_parsed_and_rounded() {
        let cases = [
            (json!("2499.998"), 2500.0),
            (json!("2100.084"), 2100.0),
            (json!("1900.5"), 1901.0),
            (json!("  3000"), 3000.0),
            (json!("1900.0000 MHz"), 1900.0),
            (json!("2.4GHz"), 2.0),
            (json!("1.9e3"), 1900.0),
            (json!("1900e"), 1900.0),
            (json!("-1.5"), -2.0),
            (json!(""), 0.0),
            (json!("not-a-number"), 0.0),
            (json!("."), 0.0),
            (json!(null), 0.0),
            (json!(true), 0.0),
            (json!(1800.7), 1801.0),
        ];
        for (frequency, expected) in cases {
            let cpu = cpu_of(json!({ "frequency": frequency }));
            assert_eq!(cpu.clock_megahertz, expected, "{frequency}");
        }
        assert_eq!(cpu_of(json!({})).clock_megahertz, 0.0);
    }

    // ---- NICs ----

    /// BMO's `TestGetNICDetails`, with the LLDP VLANs as real JSON.
    #[test]
    fn nic_per_address() {
        let nics = nics_of(
            json!([
                {"name": "eth0", "ipv4_address": "192.0.2.1", "mac_address": "00:11:22:33:44:55",
                 "pci_address": "0000:00:00.0"},
                {"name": "eth1", "ipv6_address": "2001:db8::1", "mac_address": "66:77:88:99:aa:bb",
                 "speed_mbps": 1000},
                {"name": "eth46", "ipv6_address": "2001:db8::2", "ipv4_address": "192.0.2.2",
                 "mac_address": "00:11:22:33:44:66"},
                {"name": "ethNoIp", "mac_address": "00:11:22:33:44:77"}
            ]),
            json!({
                "all_interfaces": {"eth0": {"pxe_enabled": true}},
                "parsed_lldp": {"eth0": {
                    "switch_port_vlans": [{"id": 1}],
                    "switch_port_untagged_vlan_id": 1,
                    "switch_chassis_id": "aa:bb:cc:dd:ee:ff",
                    "switch_port_id": "Ethernet1/1",
                    "switch_system_name": "switch01.example.com"
                }}
            }),
        );
        let expected = vec![
            Nic {
                name: "eth0".into(),
                mac: "00:11:22:33:44:55".into(),
                ip: "192.0.2.1".into(),
                pci_address: "0000:00:00.0".into(),
                pxe: true,
                lldp: Some(Lldp {
                    switch_id: "aa:bb:cc:dd:ee:ff".into(),
                    port_id: "Ethernet1/1".into(),
                    switch_system_name: "switch01.example.com".into(),
                }),
                ..Default::default()
            },
            Nic {
                name: "eth1".into(),
                mac: "66:77:88:99:aa:bb".into(),
                ip: "2001:db8::1".into(),
                speed_gbps: 1,
                ..Default::default()
            },
            Nic {
                name: "eth46".into(),
                mac: "00:11:22:33:44:66".into(),
                ip: "192.0.2.2".into(),
                ..Default::default()
            },
            Nic {
                name: "eth46".into(),
                mac: "00:11:22:33:44:66".into(),
                ip: "2001:db8::2".into(),
                ..Default::default()
            },
            Nic {
                name: "ethNoIp".into(),
                mac: "00:11:22:33:44:77".into(),
                ..Default::default()
            },
        ];
        assert_eq!(nics, expected);
    }

    #[test]
    fn both_entries_of_a_dual_stack_nic_share_everything_but_the_address() {
        let nics = nics_of(
            json!([{"name": "eth0", "ipv4_address": "192.0.2.2", "ipv6_address": "2001:db8::2",
                    "vendor": "0x8086", "product": "0x1572", "speed_mbps": 25000}]),
            json!({
                "all_interfaces": {"eth0": {"pxe_enabled": true}},
                "parsed_lldp": {"eth0": {"switch_port_id": "Eth1", "switch_port_untagged_vlan_id": 7}}
            }),
        );
        assert_eq!(nics.len(), 2);
        assert_eq!(nics[0].ip, "192.0.2.2");
        assert_eq!(nics[1].ip, "2001:db8::2");
        assert_eq!(
            Nic {
                ip: String::new(),
                ..nics[0].clone()
            },
            Nic {
                ip: String::new(),
                ..nics[1].clone()
            }
        );
        assert_eq!(nics[0].model, "0x8086 0x1572");
        assert_eq!(nics[0].speed_gbps, 25);
        assert!(nics[0].pxe);
        assert_eq!(
            nics[0].lldp.as_ref().map(|l| l.port_id.as_str()),
            Some("Eth1")
        );
    }

    #[test]
    fn nic_model_and_speed() {
        let cases = [
            (json!({"vendor": "Intel", "product": "X710"}), "Intel X710"),
            (json!({"product": "X710"}), "X710"),
            (json!({"vendor": "Intel"}), "Intel "),
            (json!({}), ""),
        ];
        for (intf, expected) in cases {
            let nics = nics_of(json!([intf]), json!({}));
            assert_eq!(nics[0].model, expected, "{intf}");
        }
        for (mbps, gbps) in [(999, 0), (1000, 1), (2500, 2), (100000, 100), (0, 0)] {
            let nics = nics_of(json!([{"speed_mbps": mbps}]), json!({}));
            assert_eq!(nics[0].speed_gbps, gbps, "{mbps}");
        }
    }

    #[test]
    fn pxe_comes_from_the_interface_with_the_same_name() {
        let nics = nics_of(
            json!([{"name": "eth0"}, {"name": "eth1"}, {"name": "eth2"}]),
            json!({"all_interfaces": {
                "eth0": {"pxe_enabled": false},
                "eth1": {"pxe_enabled": true},
                "eth2": {"pxe_enabled": "true"}
            }}),
        );
        let pxe: Vec<bool> = nics.iter().map(|n| n.pxe).collect();
        assert_eq!(pxe, [false, true, false]);
    }

    #[test]
    fn no_interfaces_no_nics() {
        assert!(nics_of(json!([]), json!({})).is_empty());
    }

    // ---- LLDP ----

    /// BMO's `TestGetLLDPData` cases.
    #[test]
    fn lldp_switch_fields() {
        let full = Lldp {
            switch_id: "aa:bb:cc:dd:ee:ff".into(),
            port_id: "Ethernet1/1".into(),
            switch_system_name: "switch01.example.com".into(),
        };
        let only = |switch_id: &str, port_id: &str, name: &str| {
            Some(Lldp {
                switch_id: switch_id.into(),
                port_id: port_id.into(),
                switch_system_name: name.into(),
            })
        };
        let cases = [
            (
                json!({"switch_chassis_id": "aa:bb:cc:dd:ee:ff", "switch_port_id": "Ethernet1/1",
                       "switch_system_name": "switch01.example.com"}),
                Some(full.clone()),
            ),
            (
                json!({"switch_chassis_id": "aa:bb:cc:dd:ee:ff"}),
                only("aa:bb:cc:dd:ee:ff", "", ""),
            ),
            (
                json!({"switch_port_id": "Ethernet1/1"}),
                only("", "Ethernet1/1", ""),
            ),
            (
                json!({"switch_system_name": "switch01.example.com"}),
                only("", "", "switch01.example.com"),
            ),
            (
                json!({"switch_chassis_id": "aa:bb:cc:dd:ee:ff", "switch_port_id": "Ethernet1/1"}),
                only("aa:bb:cc:dd:ee:ff", "Ethernet1/1", ""),
            ),
            (json!({}), None),
            (
                json!({"switch_chassis_id": "", "switch_port_id": "", "switch_system_name": ""}),
                None,
            ),
            (
                json!({"switch_chassis_id": 123, "switch_port_id": ["port1"],
                       "switch_system_name": {"name": "switch"}}),
                None,
            ),
            (
                json!({"switch_chassis_id": "aa:bb:cc:dd:ee:ff", "switch_port_id": 123,
                       "switch_system_name": ""}),
                only("aa:bb:cc:dd:ee:ff", "", ""),
            ),
            (
                json!({"switch_chassis_id": "aa:bb:cc:dd:ee:ff", "switch_port_id": "Ethernet1/1",
                       "switch_system_name": "switch01.example.com", "unknown_field": "ignored"}),
                Some(full),
            ),
            // VLANs alone do not make a switch.
            (json!({"switch_port_vlans": [{"id": 1}]}), None),
        ];
        for (lldp, expected) in cases {
            assert_eq!(lldp_of(lldp.clone()).2, expected, "{lldp}");
        }
    }

    #[test]
    fn lldp_absent_or_not_an_object() {
        for plugin_data in [
            json!({}),
            json!({"parsed_lldp": {}}),
            json!({"parsed_lldp": {"eth0": null}}),
            json!({"parsed_lldp": {"eth0": "x"}}),
            json!({"parsed_lldp": {"eth1": {"switch_port_id": "Eth1"}}}),
        ] {
            let nics = nics_of(json!([{"name": "eth0"}]), plugin_data.clone());
            assert_eq!(nics[0].lldp, None, "{plugin_data}");
            assert!(nics[0].vlans.is_empty());
            assert_eq!(nics[0].vlan_id, 0);
        }
    }

    /// BMO's `TestGetVLANs` builds Go maps by hand; from the JSON Ironic really sends, well formed
    /// or not, BMO's getVLANs never finds a VLAN (spec 8 item 10), and neither does bmhctl.
    #[test]
    fn vlans_are_never_read_from_json_as_in_bmo() {
        for lldp in [
            json!({
                "switch_port_vlans": [{"id": 1, "name": "vlan1"}, {"id": 4094, "name": "vlan4094"}],
                "switch_port_untagged_vlan_id": 1
            }),
            json!({"switch_port_vlans": [{"foo": "bar", "name": "vlan1"}, {"name": 3, "id": 3}],
                   "switch_port_untagged_vlan_id": "1"}),
            json!({"switch_port_vlans": "foo", "switch_port_untagged_vlan_id": 1.0}),
            json!({}),
        ] {
            let (vlans, vlan_id, _) = lldp_of(lldp.clone());
            assert!(vlans.is_empty(), "{lldp}");
            assert_eq!(vlan_id, 0, "{lldp}");
        }
    }

    // ---- storage ----

    /// BMO's `TestGetDiskType` cases.
    #[test]
    fn storage_type_rule() {
        let cases = [
            (json!({"rotational": true}), "HDD"),
            (json!({"name": "/dev/nvme0n1"}), "NVME"),
            (json!({"name": "/dev/nvme0n1p1"}), "NVME"),
            (json!({"name": "/dev/sda"}), "SSD"),
            (json!({"rotational": true, "name": "/dev/nvme0n1"}), "HDD"),
            (json!({}), "SSD"),
            // The rule looks at the kernel name, not at the by-path name.
            (
                json!({"name": "/dev/sda", "by_path": "/dev/disk/by-path/pci-0000:00:1f.0-nvme-1"}),
                "SSD",
            ),
            (json!({"name": "nvme0n1"}), "SSD"),
        ];
        for (disk, expected) in cases {
            assert_eq!(storage_of(json!([disk]))[0].type_, expected, "{disk}");
        }
    }

    /// BMO's `TestGetStorageDetails` cases.
    #[test]
    fn storage_fields() {
        let storage = storage_of(json!([
            {"name": "/dev/sda", "rotational": true, "size": 500000000000_i64, "vendor": "ATA",
             "model": "VBOX HARDDISK", "serial": "VB12345678", "wwn": "0x5000c123",
             "wwn_vendor_extension": "0x1234", "wwn_with_extension": "0x5000c1231234",
             "hctl": "0:0:0:0"},
            {"name": "/dev/nvme0n1", "by_path": "/dev/disk/by-path/pci-0000:00:1f.0-nvme-1",
             "size": 256000000000_i64, "vendor": "Samsung", "model": "SSD 970 EVO"}
        ]));
        assert_eq!(
            storage,
            [
                Storage {
                    name: "/dev/sda".into(),
                    alternate_names: vec!["/dev/sda".into()],
                    rotational: true,
                    type_: "HDD".into(),
                    size_bytes: 500000000000,
                    vendor: "ATA".into(),
                    model: "VBOX HARDDISK".into(),
                    serial_number: "VB12345678".into(),
                    wwn: "0x5000c123".into(),
                    wwn_vendor_extension: "0x1234".into(),
                    wwn_with_extension: "0x5000c1231234".into(),
                    hctl: "0:0:0:0".into(),
                },
                Storage {
                    name: "/dev/disk/by-path/pci-0000:00:1f.0-nvme-1".into(),
                    alternate_names: vec![
                        "/dev/nvme0n1".into(),
                        "/dev/disk/by-path/pci-0000:00:1f.0-nvme-1".into()
                    ],
                    type_: "NVME".into(),
                    size_bytes: 256000000000,
                    vendor: "Samsung".into(),
                    model: "SSD 970 EVO".into(),
                    ..Default::default()
                },
            ]
        );
    }

    #[test]
    fn storage_names() {
        let by_path_only = storage_of(json!([
            {"name": "", "by_path": "/dev/disk/by-path/pci-0000:00:1f.0-nvme-1", "size": 1}
        ]));
        assert_eq!(
            by_path_only[0].name,
            "/dev/disk/by-path/pci-0000:00:1f.0-nvme-1"
        );
        assert_eq!(
            by_path_only[0].alternate_names,
            ["/dev/disk/by-path/pci-0000:00:1f.0-nvme-1"]
        );

        let nameless = storage_of(json!([{"size": 256000000000_i64, "by_path": null}]));
        assert_eq!(nameless[0].name, "");
        assert!(nameless[0].alternate_names.is_empty());
    }

    #[test]
    fn no_disks_no_storage() {
        assert!(storage_of(json!([])).is_empty());
        assert!(storage_of(Value::Null).is_empty());
    }

    #[test]
    fn system_vendor_and_firmware() {
        let details = hardware_details(
            &json!({"system_vendor": {
                "manufacturer": "Dell Inc.", "product_name": "PowerEdge R640",
                "serial_number": "ABC1234",
                "firmware": {"vendor": "foobar", "version": "1.2.3", "build_date": "2019-07-10"}
            }}),
            &json!({}),
        );
        assert_eq!(
            details.system_vendor,
            Some(HardwareSystemVendor {
                manufacturer: "Dell Inc.".into(),
                product_name: "PowerEdge R640".into(),
                serial_number: "ABC1234".into(),
            })
        );
        assert_eq!(
            details.firmware,
            Some(Firmware {
                bios: Bios {
                    date: "2019-07-10".into(),
                    vendor: "foobar".into(),
                    version: "1.2.3".into(),
                },
            })
        );
    }

    /// Without what Go's `omitempty` leaves out, numbers as floats: JSON compared by meaning.
    fn meaning(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), meaning(v)))
                    .filter(|(_, v)| match v {
                        Value::Null | Value::Bool(false) => false,
                        Value::Number(n) => n.as_f64() != Some(0.0),
                        Value::String(s) => !s.is_empty(),
                        Value::Array(a) => !a.is_empty(),
                        Value::Object(m) => !m.is_empty(),
                        Value::Bool(true) => true,
                    })
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(meaning).collect()),
            Value::Number(n) => json!(n.as_f64()),
            v => v.clone(),
        }
    }

    /// What a real Ironic stored from ironic-python-agent's data (tests/data/agent-inventory/:
    /// this lab machine read by the agent, and a rack server in the agent's format), converted
    /// as BMO's code does it (`*.hardware.json`, by scripts/ironic/bmo_hardware_details.py). The
    /// lab test `ipmi_lab::ipmi_hosts_inspected_by_the_agent_get_bmos_hardware_details` makes
    /// both files from a real inspection.
    #[test]
    fn agent_inventories_stored_by_ironic_convert_as_bmo_converts_them() {
        for (name, stored, bmo) in [
            (
                "lab-vm",
                include_str!("../../../tests/data/agent-inventory/lab-vm.ironic.json"),
                include_str!("../../../tests/data/agent-inventory/lab-vm.hardware.json"),
            ),
            (
                "rack-server",
                include_str!("../../../tests/data/agent-inventory/rack-server.ironic.json"),
                include_str!("../../../tests/data/agent-inventory/rack-server.hardware.json"),
            ),
        ] {
            let stored: Value = serde_json::from_str(stored).unwrap();
            let details = hardware_details(&stored["inventory"], &stored["plugin_data"]);
            let bmo: Value = serde_json::from_str(bmo).unwrap();
            assert_eq!(
                meaning(&serde_json::to_value(&details).unwrap()),
                meaning(&bmo),
                "{name}"
            );
        }
        // the rack server's switch sends two VLANs, untagged 20: as in BMO, none is kept
        let stored: Value = serde_json::from_str(include_str!(
            "../../../tests/data/agent-inventory/rack-server.ironic.json"
        ))
        .unwrap();
        assert!(stored["plugin_data"]["parsed_lldp"]["eno12399"]["switch_port_vlans"].is_array());
        let nic = &hardware_details(&stored["inventory"], &stored["plugin_data"]).nics[0];
        assert_eq!((nic.vlans.len(), nic.vlan_id), (0, 0));
        assert!(nic.lldp.is_some());
    }
}
