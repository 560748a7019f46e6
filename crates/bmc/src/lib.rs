//! BMC addresses as BMO reads them: parsing, the Ironic hardware type and interfaces of each
//! scheme, its `driver_info`, and BMO's capability checks; plus `fake-hardware://<id>`.
//!
//! ```
//! let bmc = bmh_bmc::parse("redfish-virtualmedia+http://[fe80::1]:8000/redfish/v1/Systems/1")?;
//! assert_eq!(bmc.driver(), "redfish");
//! assert_eq!(bmc.boot_interface(), "redfish-virtual-media");
//! let creds = bmh_bmc::Credentials::new("admin", "secret");
//! let info = bmc.driver_info(&creds, false);
//! assert_eq!(info["redfish_address"], "http://[fe80::1]:8000");
//! assert_eq!(info["redfish_system_id"], "/redfish/v1/Systems/1");
//! assert_eq!(bmh_bmc::redact_driver_info(&info)["redfish_password"], "<redacted>");
//! # Ok::<(), bmh_bmc::BmcError>(())
//! ```

mod error;
mod parse;
mod scheme;

use std::fmt;

use serde_json::{Map, Value};

pub use error::{BmcError, UrlError, UrlErrorKind, go_quote};
pub use parse::{
    ParsedAddress, RequestUriError, RequestUriErrorKind, parse_address, parse_request_uri,
    valid_hostname,
};
pub use scheme::{
    DriverInfoStyle, PROFILES, Scheme, SchemeProfile, Transport, boot_interface_counts_as_busy,
    lookup, missing_scheme_separator, registered_types,
};

/// `ipmi_port` when the address has none.
pub const DEFAULT_IPMI_PORT: &str = "623";
/// `ipmi_priv_level` when the query has no `privilegelevel`.
pub const DEFAULT_IPMI_PRIV_LEVEL: &str = "ADMINISTRATOR";
/// What [`redact_driver_info`] puts in place of passwords.
pub const REDACTED: &str = "<redacted>";

/// The contents of the credentials Secret (`username`, `password` keys).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}

impl Credentials {
    pub fn new(username: impl Into<String>, password: impl Into<String>) -> Self {
        Credentials {
            username: username.into(),
            password: password.into(),
        }
    }

    /// BMO's check: both must be non-empty (username first).
    pub fn validate(&self) -> Result<(), BmcError> {
        if self.username.is_empty() {
            return Err(BmcError::MissingUsername);
        }
        if self.password.is_empty() {
            return Err(BmcError::MissingPassword);
        }
        Ok(())
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &REDACTED)
            .finish()
    }
}

/// The interface fields of an Ironic node create body. `None` = leave the field out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Interfaces {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bios_interface: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_interface: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deploy_interface: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firmware_interface: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inspect_interface: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub management_interface: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_interface: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raid_interface: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vendor_interface: Option<&'static str>,
}

impl Interfaces {
    /// `(ironic_field, value)` for every interface that is set, in field order.
    pub fn set_fields(&self) -> Vec<(&'static str, &'static str)> {
        [
            ("bios_interface", self.bios_interface),
            ("boot_interface", self.boot_interface),
            ("deploy_interface", self.deploy_interface),
            ("firmware_interface", self.firmware_interface),
            ("inspect_interface", self.inspect_interface),
            ("management_interface", self.management_interface),
            ("power_interface", self.power_interface),
            ("raid_interface", self.raid_interface),
            ("vendor_interface", self.vendor_interface),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
    }
}

/// A parsed BMC address of a registered type: what BMO calls `AccessDetails`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessDetails {
    address: String,
    bmc_type: String,
    scheme: Scheme,
    transport: Transport,
    parsed: ParsedAddress,
}

/// BMO's `NewAccessDetails`: refuse an empty address, parse it, look its type up.
pub fn parse(address: &str) -> Result<AccessDetails, BmcError> {
    if address.is_empty() {
        return Err(BmcError::MissingAddress);
    }
    let parsed = parse_address(address)?;
    let Some((scheme, transport)) = lookup(&parsed.scheme) else {
        return Err(BmcError::UnknownType {
            bmc_type: parsed.scheme,
            address: address.to_owned(),
        });
    };
    if scheme == Scheme::FakeHardware {
        check_fake_hardware(address, &parsed)?;
    }
    Ok(AccessDetails {
        address: address.to_owned(),
        bmc_type: parsed.scheme.clone(),
        scheme,
        transport,
        parsed,
    })
}

fn check_fake_hardware(address: &str, parsed: &ParsedAddress) -> Result<(), BmcError> {
    let problem = if parsed.hostname().is_empty() {
        "the id is missing"
    } else if parsed.authority != parsed.hostname() {
        "a port is not allowed"
    } else if !(parsed.path.is_empty() || parsed.path == "/") {
        "a path is not allowed"
    } else if !parsed.raw_query.is_empty() {
        "a query is not allowed"
    } else {
        return Ok(());
    };
    Err(BmcError::FakeHardware {
        address: address.to_owned(),
        problem: problem.to_owned(),
    })
}

/// Accessors of the scheme's [`SchemeProfile`] fields, under their own names.
macro_rules! profile_fields {
    ($($(#[$doc:meta])* $name:ident: $ty:ty,)*) => {
        $($(#[$doc])* pub fn $name(&self) -> $ty {
            self.profile().$name
        })*
    };
}

impl AccessDetails {
    profile_fields! {
        /// Ironic hardware type (`driver`).
        driver: &'static str,
        boot_interface: &'static str,
        bios_interface: Option<&'static str>,
        /// `Some` only when the scheme fixes the deploy interface (`fake-hardware`).
        deploy_interface: Option<&'static str>,
        firmware_interface: Option<&'static str>,
        management_interface: Option<&'static str>,
        power_interface: Option<&'static str>,
        /// Always set; `no-raid` for the IPMI family.
        raid_interface: &'static str,
        vendor_interface: Option<&'static str>,
        /// BMO's `InspectInterface()`: the out-of-band inspect interface, if any.
        oob_inspect_interface: Option<&'static str>,
        /// BMO's `NeedsMAC()`: the driver needs a boot MAC whatever the inspection mode.
        needs_mac: bool,
        supports_secure_boot: bool,
        /// Boots an ISO preprovisioning image (virtual media, UEFI HTTP boot).
        supports_iso_preprovisioning_image: bool,
        requires_provisioning_network: bool,
    }

    pub fn address(&self) -> &str {
        &self.address
    }

    /// BMO's `Type()`: the scheme as written, lower-cased, suffix included.
    pub fn bmc_type(&self) -> &str {
        &self.bmc_type
    }

    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    pub fn profile(&self) -> &'static SchemeProfile {
        self.scheme.profile()
    }

    pub fn transport(&self) -> Transport {
        self.transport
    }

    pub fn parsed(&self) -> &ParsedAddress {
        &self.parsed
    }

    /// bmhctl's own scheme (`fake-hardware`), not BMO's.
    pub fn is_extension(&self) -> bool {
        self.profile().extension
    }

    /// The inspect interface: the out-of-band one for fast inspection, `agent` otherwise.
    pub fn inspect_interface(&self, fast_inspection: bool) -> Result<&'static str, BmcError> {
        if fast_inspection {
            self.oob_inspect_interface()
                .ok_or_else(|| BmcError::FastInspectionUnsupported {
                    bmc_type: self.bmc_type.clone(),
                })
        } else {
            Ok(self.profile().default_inspect_interface)
        }
    }

    /// All interface fields for the node create body.
    pub fn interfaces(&self, fast_inspection: bool) -> Result<Interfaces, BmcError> {
        Ok(Interfaces {
            bios_interface: self.bios_interface(),
            boot_interface: Some(self.boot_interface()),
            deploy_interface: self.deploy_interface(),
            firmware_interface: self.firmware_interface(),
            inspect_interface: Some(self.inspect_interface(fast_inspection)?),
            management_interface: self.management_interface(),
            power_interface: self.power_interface(),
            raid_interface: Some(self.raid_interface()),
            vendor_interface: self.vendor_interface(),
        })
    }

    /// Whether a boot MAC is required: the driver needs one, or inspection is disabled.
    pub fn requires_boot_mac(&self, inspection_disabled: bool) -> bool {
        self.needs_mac() || inspection_disabled
    }

    /// BMO never delays these hosts for capacity (`PROVISIONING_LIMIT`).
    pub fn exempt_from_provisioning_limit(&self) -> bool {
        self.supports_iso_preprovisioning_image()
    }

    /// Whether hardware RAID volumes can be configured (`raid_interface` is not `no-raid`).
    pub fn supports_hardware_raid(&self) -> bool {
        self.raid_interface() != "no-raid"
    }

    /// `redfish_address` for the Redfish family: `<suffix or https>://<host[:port]>`.
    pub fn redfish_address(&self) -> Option<String> {
        matches!(self.profile().driver_info, DriverInfoStyle::Redfish { .. }).then(|| {
            format!(
                "{}://{}",
                self.transport.url_scheme(),
                self.parsed.authority
            )
        })
    }

    /// The `driver_info` BMO sends, from the address and the credentials.
    pub fn driver_info(
        &self,
        credentials: &Credentials,
        disable_certificate_verification: bool,
    ) -> Map<String, Value> {
        let mut info = Map::new();
        let prefix = match self.profile().driver_info {
            DriverInfoStyle::Ipmi => {
                let port = match self.parsed.port() {
                    "" => DEFAULT_IPMI_PORT,
                    port => port,
                };
                info.insert("ipmi_address".into(), self.parsed.hostname().into());
                info.insert("ipmi_port".into(), port.into());
                "ipmi"
            }
            DriverInfoStyle::Redfish { always_system_id } => {
                info.insert(
                    "redfish_address".into(),
                    self.redfish_address().unwrap_or_default().into(),
                );
                let path = &self.parsed.path;
                let trimmed = path.trim_matches('/');
                if always_system_id || (!trimmed.is_empty() && trimmed != "redfish/v1") {
                    info.insert("redfish_system_id".into(), path.clone().into());
                }
                "redfish"
            }
            DriverInfoStyle::None => return info,
        };
        for (field, value) in [
            ("username", &credentials.username),
            ("password", &credentials.password),
        ] {
            info.insert(format!("{prefix}_{field}"), value.clone().into());
        }
        if prefix == "ipmi" {
            info.insert("ipmi_priv_level".into(), self.ipmi_priv_level().into());
        }
        if disable_certificate_verification {
            info.insert(format!("{prefix}_verify_ca"), false.into());
        }
        info
    }

    /// `ipmi_priv_level`: the first `privilegelevel`; the default when absent or undecodable.
    fn ipmi_priv_level(&self) -> String {
        let (query, all_ok) = parse::parse_query(&self.parsed.raw_query);
        if !all_ok {
            return DEFAULT_IPMI_PRIV_LEVEL.to_owned();
        }
        query
            .get("privilegelevel")
            .and_then(|v| v.first().cloned())
            .unwrap_or_else(|| DEFAULT_IPMI_PRIV_LEVEL.to_owned())
    }

    /// BMO (webhook and Register): `UEFISecureBoot` needs driver support.
    pub fn check_secure_boot(&self, secure_boot_requested: bool) -> Result<(), BmcError> {
        let refused = secure_boot_requested && !self.supports_secure_boot();
        self.refuse(refused, |bmc_type| BmcError::SecureBootUnsupported {
            bmc_type,
        })
    }

    /// BMO (webhook): hardware RAID volumes need a RAID interface other than `no-raid`.
    pub fn check_hardware_raid(&self, hardware_volumes_requested: bool) -> Result<(), BmcError> {
        let refused = hardware_volumes_requested && !self.supports_hardware_raid();
        self.refuse(refused, |bmc_type| BmcError::RaidUnsupported { bmc_type })
    }

    /// BMO (webhook and Register): a boot MAC when the driver needs one or inspection is off.
    pub fn check_boot_mac(
        &self,
        has_boot_mac: bool,
        inspection_disabled: bool,
    ) -> Result<(), BmcError> {
        let refused = self.requires_boot_mac(inspection_disabled) && !has_boot_mac;
        self.refuse(refused, |bmc_type| BmcError::BootMacRequired { bmc_type })
    }

    /// BMO (webhook, Register, inspection): `inspectionMode: fast` needs out-of-band inspection.
    pub fn check_fast_inspection(&self, fast_inspection: bool) -> Result<(), BmcError> {
        self.inspect_interface(fast_inspection).map(|_| ())
    }

    /// BMO (Register only): with the provisioning network disabled, refuse drivers needing it.
    pub fn check_provisioning_network(
        &self,
        provisioning_network_disabled: bool,
    ) -> Result<(), BmcError> {
        let refused = provisioning_network_disabled && self.requires_provisioning_network();
        self.refuse(refused, |bmc_type| BmcError::ProvisioningNetworkRequired {
            bmc_type,
        })
    }

    /// `Err` of `refusal` for this BMC type when `refused`.
    fn refuse(&self, refused: bool, refusal: fn(String) -> BmcError) -> Result<(), BmcError> {
        match refused {
            true => Err(refusal(self.bmc_type.clone())),
            false => Ok(()),
        }
    }
}

/// A copy of `driver_info` fit for display: every `*_password` value becomes `<redacted>`.
pub fn redact_driver_info(driver_info: &Map<String, Value>) -> Map<String, Value> {
    driver_info
        .iter()
        .map(|(k, v)| match k.ends_with("_password") {
            true => (k.clone(), Value::from(REDACTED)),
            false => (k.clone(), v.clone()),
        })
        .collect()
}
