//! Table-driven tests over `tests/cases.json` (BMO's own test cases restated as data, plus
//! cases for the parsing rules and for bmhctl's fake-hardware extension).

use std::collections::{BTreeMap, BTreeSet};

use bmh_bmc::{BmcError, Credentials, Scheme, UrlErrorKind};
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Deserialize)]
struct Cases {
    parse_cases: Vec<Case<ParseExpect>>,
    address_cases: Vec<Case<AddressExpect>>,
    access_cases: Vec<Case<AccessExpect>>,
    driver_info_cases: Vec<DriverInfoCase>,
    credentials_cases: Vec<CredentialsCase>,
    registry: Vec<RegistryRow>,
}

#[derive(Deserialize)]
struct Case<E> {
    name: String,
    input: String,
    expect: E,
}

#[derive(Deserialize)]
struct ErrorExpect {
    error: Option<String>,
    error_contains: Option<String>,
    error_kind: String,
}

#[derive(Deserialize)]
struct ParseExpect {
    ok: bool,
    scheme: Option<String>,
    host: Option<String>,
    authority: Option<String>,
    port: Option<String>,
    path: Option<String>,
    query: Option<BTreeMap<String, Vec<String>>>,
    #[serde(flatten)]
    error: Option<ErrorExpect>,
}

#[derive(Deserialize)]
struct AddressExpect {
    ok: bool,
    #[serde(rename = "type")]
    bmc_type: Option<String>,
    extension: Option<bool>,
    #[serde(flatten)]
    error: Option<ErrorExpect>,
}

#[derive(Deserialize)]
struct AccessExpect {
    #[serde(rename = "type")]
    bmc_type: String,
    needs_mac: bool,
    driver: String,
    boot: String,
    bios: String,
    inspect: String,
    firmware: String,
    management: String,
    power: String,
    vendor: String,
    raid: String,
    #[serde(default)]
    deploy: String,
}

#[derive(Deserialize)]
struct DriverInfoCase {
    name: String,
    input: String,
    disable_certificate_verification: bool,
    credentials: CredentialsInput,
    expect_driver_info: Map<String, Value>,
}

#[derive(Deserialize)]
struct CredentialsInput {
    username: String,
    password: String,
}

#[derive(Deserialize)]
struct CredentialsCase {
    name: String,
    input: CredentialsInput,
    expect: CredentialsExpect,
}

#[derive(Deserialize)]
struct CredentialsExpect {
    ok: bool,
    #[serde(flatten)]
    error: Option<ErrorExpect>,
}

#[derive(Deserialize)]
struct RegistryRow {
    scheme: String,
    suffix_variants: bool,
    extension: bool,
    driver: String,
    boot: String,
    bios: Option<String>,
    deploy: Option<String>,
    management: Option<String>,
    power: Option<String>,
    raid: String,
    vendor: Option<String>,
    firmware: Option<String>,
    oob_inspect: Option<String>,
    default_inspect: String,
    needs_mac: bool,
    secure_boot: bool,
    iso_preprovisioning_image: bool,
    requires_provisioning_network: bool,
}

fn cases() -> Cases {
    serde_json::from_str(include_str!("cases.json")).expect("tests/cases.json")
}

fn kind_name(err: &BmcError) -> &'static str {
    match err {
        BmcError::MissingAddress => "missing_address",
        BmcError::Parse(e) => match e.kind {
            UrlErrorKind::MissingScheme => "missing_scheme",
            UrlErrorKind::ControlCharacter => "control_character",
            UrlErrorKind::ColonInFirstPathSegment => "colon_in_first_path_segment",
            UrlErrorKind::InvalidUserinfo => "invalid_userinfo",
            UrlErrorKind::MissingBracket => "missing_bracket",
            UrlErrorKind::InvalidPort(_) => "invalid_port",
            UrlErrorKind::InvalidIpv6(_) => "invalid_ipv6",
            UrlErrorKind::InvalidEscape(_) => "invalid_escape",
            UrlErrorKind::InvalidHostCharacter(_) => "invalid_host_character",
        },
        BmcError::InvalidHostname { .. } => "invalid_hostname",
        BmcError::UnknownType { .. } => "unknown_type",
        BmcError::FakeHardware { .. } => "fake_hardware",
        BmcError::MissingUsername => "missing_username",
        BmcError::MissingPassword => "missing_password",
        BmcError::SecureBootUnsupported { .. } => "secure_boot_unsupported",
        BmcError::RaidUnsupported { .. } => "raid_unsupported",
        BmcError::BootMacRequired { .. } => "boot_mac_required",
        BmcError::FastInspectionUnsupported { .. } => "fast_inspection_unsupported",
        BmcError::ProvisioningNetworkRequired { .. } => "provisioning_network_required",
    }
}

/// Checks one error against its expectation; returns a failure description.
fn check_error(name: &str, err: &BmcError, expect: &ErrorExpect) -> Option<String> {
    let text = err.to_string();
    let mut problems = Vec::new();
    if kind_name(err) != expect.error_kind {
        problems.push(format!("kind {} != {}", kind_name(err), expect.error_kind));
    }
    if let Some(want) = &expect.error
        && &text != want
    {
        problems.push(format!("text {text:?} != {want:?}"));
    }
    if let Some(want) = &expect.error_contains
        && !text.contains(want.as_str())
    {
        problems.push(format!("text {text:?} lacks {want:?}"));
    }
    (!problems.is_empty()).then(|| format!("{name}: {}", problems.join("; ")))
}

fn report(failures: Vec<String>, what: &str, total: usize) {
    assert!(
        failures.is_empty(),
        "{} of {total} {what} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(total > 0, "no {what}");
}

#[test]
fn parse_cases() {
    let cases = cases().parse_cases;
    let mut failures = Vec::new();
    for c in &cases {
        let got = bmh_bmc::parse_address(&c.input);
        match (&got, c.expect.ok) {
            (Ok(p), true) => {
                let e = &c.expect;
                let want = (
                    e.scheme.as_deref().unwrap(),
                    e.host.as_deref().unwrap(),
                    e.authority.as_deref().unwrap(),
                    e.port.as_deref().unwrap(),
                    e.path.as_deref().unwrap(),
                    e.query.clone().unwrap(),
                );
                let have = (
                    p.scheme.as_str(),
                    p.hostname(),
                    p.authority.as_str(),
                    p.port(),
                    p.path.as_str(),
                    p.query(),
                );
                if have != want {
                    failures.push(format!("{}: got {have:?}, want {want:?}", c.name));
                }
            }
            (Err(err), false) => {
                failures.extend(check_error(&c.name, err, c.expect.error.as_ref().unwrap()));
            }
            (got, _) => failures.push(format!("{} ({:?}): unexpected {got:?}", c.name, c.input)),
        }
    }
    report(failures, "parse cases", cases.len());
}

#[test]
fn address_cases() {
    let cases = cases().address_cases;
    let mut failures = Vec::new();
    for c in &cases {
        match (bmh_bmc::parse(&c.input), c.expect.ok) {
            (Ok(a), true) => {
                if Some(a.bmc_type()) != c.expect.bmc_type.as_deref() {
                    failures.push(format!("{}: type {}", c.name, a.bmc_type()));
                }
                if let Some(ext) = c.expect.extension
                    && a.is_extension() != ext
                {
                    failures.push(format!("{}: is_extension {}", c.name, a.is_extension()));
                }
            }
            (Err(err), false) => {
                failures.extend(check_error(&c.name, &err, c.expect.error.as_ref().unwrap()));
                if !err.is_address_error() {
                    failures.push(format!("{}: not an address error", c.name));
                }
            }
            (got, _) => failures.push(format!("{} ({:?}): unexpected {got:?}", c.name, c.input)),
        }
    }
    report(failures, "address cases", cases.len());
}

/// Every parse case that parses also goes through the full `parse` (registered schemes only).
#[test]
fn parse_and_address_agree() {
    for c in cases().parse_cases {
        if let Ok(p) = bmh_bmc::parse_address(&c.input)
            && bmh_bmc::lookup(&p.scheme).is_some()
        {
            let a = bmh_bmc::parse(&c.input).unwrap_or_else(|e| panic!("{}: {e}", c.name));
            assert_eq!(a.parsed(), &p, "{}", c.name);
            assert_eq!(a.bmc_type(), p.scheme, "{}", c.name);
        }
    }
}

#[test]
fn access_cases() {
    let cases = cases().access_cases;
    let mut failures = Vec::new();
    let s = |o: Option<&str>| o.unwrap_or_default().to_owned();
    for c in &cases {
        let a = bmh_bmc::parse(&c.input).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        // BMO's test reads InspectInterface(): the out-of-band one.
        let have = (
            a.bmc_type().to_owned(),
            a.needs_mac(),
            a.driver().to_owned(),
            a.boot_interface().to_owned(),
            s(a.bios_interface()),
            s(a.oob_inspect_interface()),
            s(a.firmware_interface()),
            s(a.management_interface()),
            s(a.power_interface()),
            s(a.vendor_interface()),
            a.raid_interface().to_owned(),
            s(a.deploy_interface()),
        );
        let e = &c.expect;
        let want = (
            e.bmc_type.clone(),
            e.needs_mac,
            e.driver.clone(),
            e.boot.clone(),
            e.bios.clone(),
            e.inspect.clone(),
            e.firmware.clone(),
            e.management.clone(),
            e.power.clone(),
            e.vendor.clone(),
            e.raid.clone(),
            e.deploy.clone(),
        );
        if have != want {
            failures.push(format!("{}:\n  got  {have:?}\n  want {want:?}", c.name));
        }
    }
    report(failures, "access cases", cases.len());
}

#[test]
fn driver_info_cases() {
    let cases = cases().driver_info_cases;
    let mut failures = Vec::new();
    for c in &cases {
        let a = bmh_bmc::parse(&c.input).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let creds = Credentials::new(&c.credentials.username, &c.credentials.password);
        let info = a.driver_info(&creds, c.disable_certificate_verification);
        // Compare as sorted maps: the complete key set, values typed (port is a string).
        let have: BTreeMap<_, _> = info.iter().collect();
        let want: BTreeMap<_, _> = c.expect_driver_info.iter().collect();
        if have != want {
            failures.push(format!("{}:\n  got  {have:?}\n  want {want:?}", c.name));
        }
        let redacted = bmh_bmc::redact_driver_info(&info);
        for (k, v) in &redacted {
            let expected = if k.ends_with("_password") {
                Value::from("<redacted>")
            } else {
                info[k].clone()
            };
            if v != &expected {
                failures.push(format!("{}: redacted {k} = {v}", c.name));
            }
        }
        if redacted.len() != info.len() {
            failures.push(format!("{}: redaction changed the key set", c.name));
        }
    }
    report(failures, "driver_info cases", cases.len());
}

#[test]
fn credentials_cases() {
    let cases = cases().credentials_cases;
    let mut failures = Vec::new();
    for c in &cases {
        let creds = Credentials::new(&c.input.username, &c.input.password);
        match (creds.validate(), c.expect.ok) {
            (Ok(()), true) => {}
            (Err(err), false) => {
                failures.extend(check_error(&c.name, &err, c.expect.error.as_ref().unwrap()));
            }
            (got, _) => failures.push(format!("{}: unexpected {got:?}", c.name)),
        }
    }
    report(failures, "credentials cases", cases.len());
}

/// Every registered type name (each family, each suffix variant, in upper case too) against
/// the registry table: driver, every interface, every capability flag.
#[test]
fn registry_every_scheme() {
    let rows = cases().registry;
    let mut failures = Vec::new();
    let mut expected_types = Vec::new();
    let o = |v: &Option<String>| v.as_deref().map(str::to_owned);
    let s = |v: Option<&str>| v.map(str::to_owned);
    for row in &rows {
        let mut names = vec![row.scheme.clone()];
        if row.suffix_variants {
            names.push(format!("{}+http", row.scheme));
            names.push(format!("{}+https", row.scheme));
        } else {
            for suffix in ["+http", "+https"] {
                let addr = format!("{}{suffix}://10.0.0.1", row.scheme);
                if !matches!(bmh_bmc::parse(&addr), Err(BmcError::UnknownType { .. })) {
                    failures.push(format!("{addr}: suffix variant accepted"));
                }
            }
        }
        for name in names {
            expected_types.push(name.clone());
            for written in [name.clone(), name.to_uppercase()] {
                let addr = format!("{written}://10.0.0.1");
                let a = match bmh_bmc::parse(&addr) {
                    Ok(a) => a,
                    Err(e) => {
                        failures.push(format!("{addr}: {e}"));
                        continue;
                    }
                };
                let have = (
                    (
                        a.bmc_type().to_owned(),
                        a.is_extension(),
                        a.driver().to_owned(),
                    ),
                    a.boot_interface().to_owned(),
                    s(a.bios_interface()),
                    s(a.deploy_interface()),
                    s(a.management_interface()),
                    s(a.power_interface()),
                    a.raid_interface().to_owned(),
                    s(a.vendor_interface()),
                    s(a.firmware_interface()),
                    s(a.oob_inspect_interface()),
                    a.inspect_interface(false).unwrap().to_owned(),
                    (
                        a.needs_mac(),
                        a.supports_secure_boot(),
                        a.supports_iso_preprovisioning_image(),
                        a.requires_provisioning_network(),
                    ),
                );
                let want = (
                    (name.clone(), row.extension, row.driver.clone()),
                    row.boot.clone(),
                    o(&row.bios),
                    o(&row.deploy),
                    o(&row.management),
                    o(&row.power),
                    row.raid.clone(),
                    o(&row.vendor),
                    o(&row.firmware),
                    o(&row.oob_inspect),
                    row.default_inspect.clone(),
                    (
                        row.needs_mac,
                        row.secure_boot,
                        row.iso_preprovisioning_image,
                        row.requires_provisioning_network,
                    ),
                );
                if have != want {
                    failures.push(format!("{addr}:\n  got  {have:?}\n  want {want:?}"));
                }
                failures.extend(check_capabilities(&a));
            }
        }
    }
    let registered: BTreeSet<String> = bmh_bmc::registered_types().into_iter().collect();
    let expected: BTreeSet<String> = expected_types.into_iter().collect();
    if registered != expected {
        failures.push(format!("registered_types {registered:?} != {expected:?}"));
    }
    assert_eq!(registered.len(), 24, "23 BMO types + fake-hardware");
    report(failures, "registry rows", rows.len());
}

/// The capability checks agree with the flags and use BMO's messages.
fn check_capabilities(a: &bmh_bmc::AccessDetails) -> Vec<String> {
    let t = a.bmc_type();
    let mut failures = Vec::new();
    let mut expect =
        |what: &str, got: Result<(), BmcError>, fails: bool, msg: String| match (got, fails) {
            (Ok(()), false) => {}
            (Err(e), true) if e.to_string() == msg => {}
            (got, _) => failures.push(format!("{t} {what}: {got:?}")),
        };
    expect(
        "secure boot",
        a.check_secure_boot(true),
        !a.supports_secure_boot(),
        format!("BMC driver {t} does not support secure boot"),
    );
    expect(
        "secure boot off",
        a.check_secure_boot(false),
        false,
        String::new(),
    );
    expect(
        "raid",
        a.check_hardware_raid(true),
        a.raid_interface() == "no-raid",
        format!("BMC driver {t} does not support configuring RAID"),
    );
    expect(
        "mac",
        a.check_boot_mac(false, false),
        a.needs_mac(),
        format!("BMC driver {t} requires a BootMACAddress value"),
    );
    expect(
        "mac, inspection disabled",
        a.check_boot_mac(false, true),
        true,
        format!("BMC driver {t} requires a BootMACAddress value"),
    );
    expect(
        "mac given",
        a.check_boot_mac(true, true),
        false,
        String::new(),
    );
    expect(
        "fast inspection",
        a.check_fast_inspection(true),
        a.oob_inspect_interface().is_none(),
        format!("BMC driver {t} does not support fast (out-of-band) inspection"),
    );
    expect(
        "provisioning network",
        a.check_provisioning_network(true),
        a.requires_provisioning_network(),
        format!("BMC driver {t} requires a provisioning network"),
    );
    expect(
        "provisioning network present",
        a.check_provisioning_network(false),
        false,
        String::new(),
    );
    if a.exempt_from_provisioning_limit() != a.supports_iso_preprovisioning_image() {
        failures.push(format!("{t}: limit exemption"));
    }
    failures
}

#[test]
fn node_interfaces_body() {
    let a = bmh_bmc::parse("idrac-virtualmedia+https://10.0.0.1/redfish/v1/Systems/1").unwrap();
    let agent = serde_json::to_value(a.interfaces(false).unwrap()).unwrap();
    assert_eq!(
        agent,
        serde_json::json!({
            "bios_interface": "idrac-redfish",
            "boot_interface": "idrac-redfish-virtual-media",
            "firmware_interface": "redfish",
            "inspect_interface": "agent",
            "management_interface": "idrac-redfish",
            "power_interface": "idrac-redfish",
            "raid_interface": "idrac-redfish",
            "vendor_interface": "idrac-redfish",
        })
    );
    assert_eq!(
        a.interfaces(true).unwrap().inspect_interface,
        Some("redfish")
    );

    let ipmi = bmh_bmc::parse("10.0.0.1:623").unwrap();
    assert_eq!(
        ipmi.interfaces(false).unwrap().set_fields(),
        [
            ("boot_interface", "ipxe"),
            ("inspect_interface", "agent"),
            ("raid_interface", "no-raid"),
        ]
    );
    assert_eq!(
        ipmi.interfaces(true).unwrap_err().to_string(),
        "BMC driver ipmi does not support fast (out-of-band) inspection"
    );

    let fake = bmh_bmc::parse("fake-hardware://n1").unwrap();
    let fields = fake.interfaces(false).unwrap().set_fields();
    assert_eq!(fields.len(), 9);
    assert!(fields.iter().all(|(_, v)| *v == "fake"), "{fields:?}");
    assert_eq!(
        fake.interfaces(true).unwrap(),
        fake.interfaces(false).unwrap()
    );
}

#[test]
fn transport_and_redfish_address() {
    let a = bmh_bmc::parse("redfish-uefihttp+http://[fe80::1]:8000/x").unwrap();
    assert_eq!(a.scheme(), Scheme::RedfishUefiHttp);
    assert_eq!(a.transport(), bmh_bmc::Transport::Http);
    assert_eq!(
        a.redfish_address().as_deref(),
        Some("http://[fe80::1]:8000")
    );
    assert_eq!(bmh_bmc::parse("ipmi://h").unwrap().redfish_address(), None);
    assert_eq!(
        bmh_bmc::parse("fake-hardware://h")
            .unwrap()
            .redfish_address(),
        None
    );
}

#[test]
fn busy_set_rule() {
    assert!(!bmh_bmc::boot_interface_counts_as_busy(
        "redfish-virtual-media"
    ));
    assert!(!bmh_bmc::boot_interface_counts_as_busy(
        "idrac-redfish-virtual-media"
    ));
    for counted in ["redfish-https", "ipxe", "fake"] {
        assert!(bmh_bmc::boot_interface_counts_as_busy(counted), "{counted}");
    }
}

#[test]
fn credentials_debug_hides_password() {
    let shown = format!("{:?}", Credentials::new("admin", "hunter2"));
    assert!(
        shown.contains("admin") && !shown.contains("hunter2"),
        "{shown}"
    );
}

#[test]
fn profiles_indexed_by_scheme() {
    // Every scheme family, BMO's first, then the extension.
    let all = [
        Scheme::Ipmi,
        Scheme::Libvirt,
        Scheme::Redfish,
        Scheme::Ilo5Redfish,
        Scheme::IdracRedfish,
        Scheme::RedfishVirtualMedia,
        Scheme::Ilo5VirtualMedia,
        Scheme::IdracVirtualMedia,
        Scheme::RedfishUefiHttp,
        Scheme::FakeHardware,
    ];
    for s in all {
        assert_eq!(s.profile().scheme, s);
        assert_eq!(
            bmh_bmc::lookup(s.name()),
            Some((s, bmh_bmc::Transport::Default))
        );
    }
}
