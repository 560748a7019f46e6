//! The registry: every BMC type BMO knows at HEAD (spec §4.2), plus bmhctl's `fake-hardware`.

/// A registered BMC scheme family (the name without a `+http`/`+https` suffix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scheme {
    Ipmi,
    Libvirt,
    Redfish,
    Ilo5Redfish,
    IdracRedfish,
    RedfishVirtualMedia,
    Ilo5VirtualMedia,
    IdracVirtualMedia,
    RedfishUefiHttp,
    /// bmhctl's extension, not BMO's: Ironic's `fake-hardware` type.
    FakeHardware,
}

/// Which `driver_info` keys a scheme fills in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverInfoStyle {
    /// `ipmi_address`, `ipmi_port`, `ipmi_username`, `ipmi_password`, `ipmi_priv_level`.
    Ipmi,
    /// `redfish_*` info; `always_system_id`: send the system ID even when the path has none.
    Redfish { always_system_id: bool },
    /// Nothing: Ironic's fake interfaces need no access details.
    None,
}

/// Everything that follows from the scheme alone (`None` interfaces: Ironic's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemeProfile {
    pub scheme: Scheme,
    /// The registered name (lower case).
    pub name: &'static str,
    /// Whether `<name>+http` and `<name>+https` are registered too.
    pub suffix_variants: bool,
    /// Not a BMO scheme: bmhctl's own extension (an export for a metal3 cluster refuses it).
    pub extension: bool,
    /// Ironic hardware type (`driver` field).
    pub driver: &'static str,
    pub boot_interface: &'static str,
    pub bios_interface: Option<&'static str>,
    /// `Some`: the scheme fixes the deploy interface (else the provisioner chooses).
    pub deploy_interface: Option<&'static str>,
    pub firmware_interface: Option<&'static str>,
    pub management_interface: Option<&'static str>,
    pub power_interface: Option<&'static str>,
    /// Always set; `no-raid` means no hardware RAID.
    pub raid_interface: &'static str,
    pub vendor_interface: Option<&'static str>,
    /// The inspect interface for `inspectionMode: fast`; `None` = no out-of-band inspection.
    pub oob_inspect_interface: Option<&'static str>,
    /// Inspect interface otherwise (BMO: always `agent`).
    pub default_inspect_interface: &'static str,
    /// The driver itself needs a boot MAC (independently of inspection being disabled).
    pub needs_mac: bool,
    pub supports_secure_boot: bool,
    /// Boots an ISO preprovisioning image; such hosts are exempt from `PROVISIONING_LIMIT`.
    pub supports_iso_preprovisioning_image: bool,
    pub requires_provisioning_network: bool,
    pub driver_info: DriverInfoStyle,
}

const IPXE: &str = "ipxe";
const NO_RAID: &str = "no-raid";
const REDFISH: &str = "redfish";
const IDRAC: &str = "idrac";
const IDRAC_REDFISH: &str = "idrac-redfish";
const AGENT: &str = "agent";
const FAKE: &str = "fake";

const IPMI_BASE: SchemeProfile = SchemeProfile {
    scheme: Scheme::Ipmi,
    name: "ipmi",
    suffix_variants: false,
    extension: false,
    driver: "ipmi",
    boot_interface: IPXE,
    bios_interface: None,
    deploy_interface: None,
    firmware_interface: None,
    management_interface: None,
    power_interface: None,
    raid_interface: NO_RAID,
    vendor_interface: None,
    oob_inspect_interface: None,
    default_inspect_interface: AGENT,
    needs_mac: false,
    supports_secure_boot: false,
    supports_iso_preprovisioning_image: false,
    requires_provisioning_network: true,
    driver_info: DriverInfoStyle::Ipmi,
};

const REDFISH_BASE: SchemeProfile = SchemeProfile {
    scheme: Scheme::Redfish,
    name: "redfish",
    suffix_variants: true,
    extension: false,
    driver: REDFISH,
    boot_interface: IPXE,
    bios_interface: None,
    deploy_interface: None,
    firmware_interface: Some(REDFISH),
    management_interface: None,
    power_interface: None,
    raid_interface: REDFISH,
    vendor_interface: None,
    oob_inspect_interface: Some(REDFISH),
    default_inspect_interface: AGENT,
    needs_mac: false,
    supports_secure_boot: true,
    supports_iso_preprovisioning_image: false,
    requires_provisioning_network: true,
    driver_info: DriverInfoStyle::Redfish {
        always_system_id: false,
    },
};

const IDRAC_BASE: SchemeProfile = SchemeProfile {
    scheme: Scheme::IdracRedfish,
    name: "idrac-redfish",
    driver: IDRAC,
    bios_interface: Some(IDRAC_REDFISH),
    management_interface: Some(IDRAC_REDFISH),
    power_interface: Some(IDRAC_REDFISH),
    raid_interface: IDRAC_REDFISH,
    vendor_interface: Some(IDRAC_REDFISH),
    ..REDFISH_BASE
};

const REDFISH_VIRTUAL_MEDIA: SchemeProfile = SchemeProfile {
    scheme: Scheme::RedfishVirtualMedia,
    name: "redfish-virtualmedia",
    boot_interface: "redfish-virtual-media",
    supports_iso_preprovisioning_image: true,
    requires_provisioning_network: false,
    ..REDFISH_BASE
};

/// The registry, in the order the spec lists it.
pub const PROFILES: [SchemeProfile; 10] = [
    IPMI_BASE,
    SchemeProfile {
        scheme: Scheme::Libvirt,
        name: "libvirt",
        needs_mac: true,
        ..IPMI_BASE
    },
    REDFISH_BASE,
    SchemeProfile {
        scheme: Scheme::Ilo5Redfish,
        name: "ilo5-redfish",
        ..REDFISH_BASE
    },
    IDRAC_BASE,
    REDFISH_VIRTUAL_MEDIA,
    SchemeProfile {
        scheme: Scheme::Ilo5VirtualMedia,
        name: "ilo5-virtualmedia",
        ..REDFISH_VIRTUAL_MEDIA
    },
    SchemeProfile {
        scheme: Scheme::IdracVirtualMedia,
        name: "idrac-virtualmedia",
        boot_interface: "idrac-redfish-virtual-media",
        supports_iso_preprovisioning_image: true,
        requires_provisioning_network: false,
        ..IDRAC_BASE
    },
    SchemeProfile {
        scheme: Scheme::RedfishUefiHttp,
        name: "redfish-uefihttp",
        boot_interface: "redfish-https",
        supports_iso_preprovisioning_image: true,
        requires_provisioning_network: false,
        driver_info: DriverInfoStyle::Redfish {
            always_system_id: true,
        },
        ..REDFISH_BASE
    },
    SchemeProfile {
        scheme: Scheme::FakeHardware,
        name: "fake-hardware",
        suffix_variants: false,
        extension: true,
        driver: "fake-hardware",
        boot_interface: FAKE,
        bios_interface: Some(FAKE),
        deploy_interface: Some(FAKE),
        firmware_interface: Some(FAKE),
        management_interface: Some(FAKE),
        power_interface: Some(FAKE),
        raid_interface: FAKE,
        vendor_interface: Some(FAKE),
        oob_inspect_interface: Some(FAKE),
        default_inspect_interface: FAKE,
        needs_mac: false,
        // Ironic accepts the secure-boot capability; the fake interfaces simply do nothing.
        supports_secure_boot: true,
        // Counted against PROVISIONING_LIMIT like any non-ISO driver.
        supports_iso_preprovisioning_image: false,
        requires_provisioning_network: false,
        driver_info: DriverInfoStyle::None,
    },
];

impl Scheme {
    pub fn profile(self) -> &'static SchemeProfile {
        &PROFILES[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.profile().name
    }
}

/// The `+http`/`+https` suffix of a Redfish-family scheme: the URL scheme of `redfish_address`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// No suffix: `https`.
    Default,
    Http,
    Https,
}

impl Transport {
    pub fn url_scheme(self) -> &'static str {
        match self {
            Transport::Http => "http",
            Transport::Default | Transport::Https => "https",
        }
    }
}

/// Look a (lower-cased) BMC type up in the registry.
pub fn lookup(bmc_type: &str) -> Option<(Scheme, Transport)> {
    PROFILES.iter().find_map(|p| {
        let rest = bmc_type.strip_prefix(p.name)?;
        match rest {
            "" => Some((p.scheme, Transport::Default)),
            "+http" if p.suffix_variants => Some((p.scheme, Transport::Http)),
            "+https" if p.suffix_variants => Some((p.scheme, Transport::Https)),
            _ => None,
        }
    })
}

/// Every registered type name, suffix variants included (BMO's 23, then `fake-hardware`).
pub fn registered_types() -> Vec<String> {
    let suffixes = |p: &SchemeProfile| if p.suffix_variants { 3 } else { 1 };
    (PROFILES.iter())
        .flat_map(|p| {
            ["", "+http", "+https"][..suffixes(p)]
                .iter()
                .map(|s| format!("{}{s}", p.name))
        })
        .collect()
}

/// BMO's capacity rule: a busy node counts against the limit unless it boots virtual media.
pub fn boot_interface_counts_as_busy(boot_interface: &str) -> bool {
    !boot_interface.contains("virtual-media")
}

/// `address` with the `://` it lacks after a registered type (`ipmi//10.0.0.1`,
/// `redfish:/host/...`): BMO reads such an address as one with no scheme, an IPMI address whose
/// host is the type's name. `None` when the address has `://` or starts with no registered type.
pub fn missing_scheme_separator(address: &str) -> Option<String> {
    if address.contains("://") {
        return None;
    }
    let end = address.find([':', '/'])?;
    let (bmc_type, rest) = address.split_at(end);
    lookup(&bmc_type.to_ascii_lowercase())?;
    let rest = rest
        .strip_prefix("//")
        .or_else(|| rest.strip_prefix(":/"))?;
    Some(format!("{bmc_type}://{rest}"))
}

#[cfg(test)]
mod separator_tests {
    use super::missing_scheme_separator as fix;

    #[test]
    fn a_type_without_its_separator_is_fixed_and_good_addresses_are_left() {
        assert_eq!(fix("ipmi//10.0.0.1").as_deref(), Some("ipmi://10.0.0.1"));
        assert_eq!(
            fix("redfish:/10.0.0.1/redfish/v1").as_deref(),
            Some("redfish://10.0.0.1/redfish/v1")
        );
        assert_eq!(fix("ipmi://10.0.0.1"), None);
        // BMO's `scheme:host` and bare hosts are fine as they are.
        assert_eq!(fix("ipmi:10.0.0.1"), None);
        assert_eq!(fix("10.0.0.1:623"), None);
        assert_eq!(fix("bmc-host//x"), None);
    }
}
