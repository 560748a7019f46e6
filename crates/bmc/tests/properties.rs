//! Property tests of the BMC address parser (proptest).
//!
//! * Arbitrary text, and text built from address pieces (schemes, user info, IPv4/IPv6/host
//!   names, ports, paths, queries, fragments, percent escapes), never panics, and nothing
//!   derived from a parsed address does either.
//! * A well-formed address `<type>://<host>[:<port>][/<path>]` of every registered type parses,
//!   keeps its text, and yields its scheme, host, port and path.

use bmh_bmc::{Credentials, parse, parse_address, registered_types};
use proptest::prelude::*;

/// The case count: `PROPTEST_CASES` when set (a longer search), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Everything an `AccessDetails` offers, for any flag.
fn exercise(address: &str) {
    match parse(address) {
        Ok(bmc) => {
            assert_eq!(bmc.address(), address);
            let _ = (bmc.driver(), bmc.boot_interface(), bmc.raid_interface());
            let _ = (
                bmc.bios_interface(),
                bmc.deploy_interface(),
                bmc.power_interface(),
            );
            let _ = (bmc.firmware_interface(), bmc.management_interface());
            let _ = (bmc.vendor_interface(), bmc.oob_inspect_interface());
            let _ = (
                bmc.needs_mac(),
                bmc.supports_secure_boot(),
                bmc.redfish_address(),
            );
            for flag in [false, true] {
                let _ = bmc.interfaces(flag);
                let _ = bmc.check_boot_mac(flag, !flag);
                let _ = bmc.check_fast_inspection(flag);
                let _ = bmc.check_provisioning_network(flag);
                let _ = bmc.driver_info(&Credentials::new("u", "p"), flag);
            }
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
        }
    }
}

fn scheme() -> impl Strategy<Value = String> {
    let mut types = registered_types();
    types.extend(["", "IPMI", "Redfish+HTTPS", "unknown", "http", "a+b"].map(str::to_string));
    prop::sample::select(types)
}

fn host() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9-]{1,10}(\\.[a-z0-9-]{1,10}){0,3}",
        (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>())
            .prop_map(|(a, b, c, d)| format!("{a}.{b}.{c}.{d}")),
        any::<[u16; 8]>().prop_map(|s| format!("[{}]", std::net::Ipv6Addr::from(s))),
        Just("[fe80::1%25eth0]".to_string()),
        Just("[::1".to_string()),
        "[%a-zA-Z0-9:.\\[\\]@_~-]{0,16}",
    ]
}

fn piece_address() -> impl Strategy<Value = String> {
    (
        scheme(),
        prop::sample::select(vec!["://", ":", ":/", "", "///"]),
        prop::option::of("[a-z%0-9]{0,6}(:[a-z%0-9@]{0,6})?@"),
        host(),
        prop::option::of(prop_oneof![
            (0u32..70000).prop_map(|p| p.to_string()),
            "[0-9a-z]{0,6}".prop_map(String::from),
        ]),
        "(/[a-zA-Z0-9%._~-]{0,8}){0,4}/?",
        prop::option::of("[a-z=&%0-9;+]{0,16}"),
        prop::option::of("[a-z0-9%#]{0,8}"),
    )
        .prop_map(|(s, sep, user, host, port, path, query, frag)| {
            let mut a = s;
            a.push_str(sep);
            a.push_str(user.as_deref().unwrap_or(""));
            a.push_str(&host);
            if let Some(p) = port {
                a.push(':');
                a.push_str(&p);
            }
            a.push_str(&path);
            if let Some(q) = query {
                a.push('?');
                a.push_str(&q);
            }
            if let Some(f) = frag {
                a.push('#');
                a.push_str(&f);
            }
            a
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1024), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_text_is_an_address_or_an_error(s in "\\PC{0,40}") {
        let _ = parse_address(&s);
        exercise(&s);
    }

    #[test]
    fn address_pieces_never_panic(a in piece_address()) {
        let _ = parse_address(&a);
        exercise(&a);
    }

    #[test]
    fn well_formed_addresses_parse(
        t in prop::sample::select(registered_types()),
        labels in prop::collection::vec("[a-z][a-z0-9]{0,8}", 1..4),
        port in prop::option::of(1u16..),
        path in prop::collection::vec("[a-zA-Z0-9._-]{1,8}", 0..4),
    ) {
        // fake-hardware takes an id and nothing else.
        let fake = t == "fake-hardware";
        let hostname = labels.join(".");
        let port = if fake { None } else { port };
        let path = if fake { String::new() } else {
            path.iter().map(|p| format!("/{p}")).collect()
        };
        let address = match port {
            Some(p) => format!("{t}://{hostname}:{p}{path}"),
            None => format!("{t}://{hostname}{path}"),
        };
        let bmc = parse(&address).map_err(|e| TestCaseError::fail(format!("{address}: {e}")))?;
        prop_assert_eq!(bmc.address(), address.as_str());
        prop_assert_eq!(bmc.bmc_type(), t.as_str());
        let parsed = bmc.parsed();
        prop_assert_eq!(parsed.hostname(), hostname.as_str());
        prop_assert_eq!(parsed.port(), port.map(|p| p.to_string()).unwrap_or_default());
        prop_assert_eq!(&parsed.path, &path);
        prop_assert!(parsed.raw_query.is_empty());
        exercise(&address);
    }
}
