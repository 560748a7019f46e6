//! The BMC address parser on arbitrary text, and everything derived from a parsed address
//! (interfaces, capability checks, `driver_info`). Nothing may panic; a parsed address keeps
//! the text it was parsed from.

#![no_main]

use bmh_bmc::{Credentials, parse, parse_address, parse_request_uri, valid_hostname};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(address) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_address(address);
    let _ = parse_request_uri(address);
    let _ = valid_hostname(address);
    match parse(address) {
        Ok(bmc) => {
            assert_eq!(bmc.address(), address);
            let _ = (bmc.bmc_type(), bmc.scheme(), bmc.profile(), bmc.transport());
            let _ = (bmc.parsed().hostname(), bmc.parsed().port());
            let _ = (bmc.is_extension(), bmc.driver(), bmc.boot_interface());
            let _ = (bmc.bios_interface(), bmc.deploy_interface());
            let _ = (bmc.firmware_interface(), bmc.management_interface());
            let _ = (bmc.power_interface(), bmc.raid_interface());
            let _ = (bmc.vendor_interface(), bmc.oob_inspect_interface());
            for flag in [false, true] {
                let _ = bmc.inspect_interface(flag);
                let _ = bmc.interfaces(flag);
                let _ = bmc.requires_boot_mac(flag);
                let _ = bmc.check_secure_boot(flag);
                let _ = bmc.check_hardware_raid(flag);
                let _ = bmc.check_boot_mac(flag, !flag);
                let _ = bmc.check_fast_inspection(flag);
                let _ = bmc.check_provisioning_network(flag);
                let info = bmc.driver_info(&Credentials::new("user", "secret"), flag);
                let _ = bmh_bmc::redact_driver_info(&info);
            }
            let _ = (bmc.needs_mac(), bmc.supports_secure_boot());
            let _ = bmc.supports_iso_preprovisioning_image();
            let _ = bmc.exempt_from_provisioning_limit();
            let _ = bmc.requires_provisioning_network();
            let _ = bmc.supports_hardware_raid();
            let _ = bmc.redfish_address();
        }
        Err(e) => {
            let _ = (e.to_string(), e.is_address_error());
        }
    }
});
