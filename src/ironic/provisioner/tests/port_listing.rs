//! The shared port listing (`port_watch.rs`): one `GET /v1/ports?fields=…&limit=1000` answers
//! the port reads of many registering hosts, and a host whose last port write is newer than the
//! listing asks Ironic directly, so no port is ever created twice.

use super::*;
use bmh_api::{HardwareData, HardwareDataSpec, HardwareDetails, Nic};

/// The shared port listing, as sent.
fn port_listing() -> String {
    "GET /v1/ports?fields=node_uuid%2Cuuid%2Caddress&limit=1000".to_string()
}

fn node_ports(uuid: &str) -> String {
    format!("GET /v1/ports?node_uuid={uuid}&fields=node_uuid%2Cuuid%2Caddress")
}

fn mac_owners(mac: &str) -> String {
    format!("GET /v1/ports?address={mac}&fields=node_uuid%2Cuuid%2Caddress").replace(':', "%3A")
}

/// Registration data of a host inspection found one NIC with `mac` on.
fn inspected(mac: &str) -> ManagementAccessData {
    ManagementAccessData {
        hardware_data: Some(HardwareData {
            spec: HardwareDataSpec {
                hardware: Some(
                    HardwareDetails {
                        nics: vec![Nic {
                            name: "eth0".into(),
                            mac: mac.into(),
                            pxe: true,
                            ..Default::default()
                        }],
                        ..Default::default()
                    }
                    .into(),
                ),
            },
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Host `default/worker-<i>`, registered as node `uuid(i)`, no boot MAC, no ports remembered.
fn nth_host(i: usize) -> HostData {
    HostData {
        key: ObjectKey::new("default", format!("worker-{i}")),
        provisioner_id: nth_uuid(i),
        boot_mac_address: String::new(),
        ..host_data("", false)
    }
}

fn nth_uuid(i: usize) -> String {
    format!("00000000-0000-4000-8000-{i:012}")
}

fn nth_mac(i: usize) -> String {
    format!("52:54:00:00:00:{i:02x}")
}

/// `n` manageable nodes; each host's registration pass after inspection: the requests sent.
fn register_inspected(fake: &FakeIronic, shared: &Arc<Shared>, n: usize) -> Vec<String> {
    for i in 0..n {
        fake.add_listed_node(node_of(&nth_uuid(i), &format!("worker-{i}"), "manageable"));
    }
    let m = fake.mark();
    for i in 0..n {
        let (mut p, _) = prov_for(shared, nth_host(i));
        let r = p
            .register(&inspected(&nth_mac(i)), RegisterOptions::default())
            .unwrap();
        assert!(r.result.error_message.is_empty(), "{r:?}");
        assert_eq!(
            p.persistent_state(),
            Some(json!({"node": nth_uuid(i), "ports": [nth_mac(i)]}))
        );
    }
    fake.since(m)
}

fn count(sent: &[String], what: &str) -> usize {
    sent.iter().filter(|r| r.starts_with(what)).count()
}

#[test]
fn one_port_listing_serves_every_registering_host() {
    const N: usize = 5;
    // BMO's reads: the node's ports and the MAC's owners, per host.
    let fake = FakeIronic::start();
    let bmo = register_inspected(&fake, &fake.shared(), N);
    assert_eq!(count(&bmo, "GET /v1/ports?node_uuid="), N, "{bmo:?}");
    assert_eq!(count(&bmo, "GET /v1/ports?address="), N, "{bmo:?}");
    assert_eq!(count(&bmo, "POST /v1/ports"), N);

    // With the feature: one listing for all of them, the same writes.
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    let sent = register_inspected(&fake, &shared, N);
    assert_eq!(count(&sent, "GET /v1/ports"), 1, "{sent:?}");
    assert!(sent.contains(&port_listing()), "{sent:?}");
    assert_eq!(count(&sent, "POST /v1/ports"), N);
    let writes = |s: &[String]| -> Vec<String> {
        s.iter()
            .filter(|r| !r.starts_with("GET "))
            .cloned()
            .collect()
    };
    assert_eq!(writes(&sent), writes(&bmo));
    assert_eq!(fake.state.lock().unwrap().ports.len(), N);
}

#[test]
fn a_port_listing_older_than_our_own_port_write_is_not_trusted() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    fake.add_listed_node(node_of(&nth_uuid(0), "worker-0", "manageable"));
    // The first pass lists the ports (none) and creates the NIC's port.
    let (mut p, _) = prov_for(&shared, nth_host(0));
    p.register(&inspected(&nth_mac(0)), RegisterOptions::default())
        .unwrap();
    drop(p);
    assert_eq!(fake.state.lock().unwrap().ports.len(), 1);
    assert_eq!(shared.ports.writes(), 1);

    // The port is not remembered (a crash before the status was saved), and the listing, still
    // within its second, predates the POST: BMO's direct lookups answer, and find the port.
    let m = fake.mark();
    let (mut p, _) = prov_for(&shared, nth_host(0));
    p.register(&inspected(&nth_mac(0)), RegisterOptions::default())
        .unwrap();
    drop(p);
    let sent = fake.since(m);
    assert!(sent.contains(&node_ports(&nth_uuid(0))), "{sent:?}");
    assert!(!sent.contains(&port_listing()), "{sent:?}");
    assert_eq!(count(&sent, "POST /v1/ports"), 0, "{sent:?}");

    // A listing made after the write answers again, and shows the port.
    shared.ports.age_listing(Duration::from_secs(2));
    let m = fake.mark();
    let (mut p, _) = prov_for(&shared, nth_host(0));
    p.register(&inspected(&nth_mac(0)), RegisterOptions::default())
        .unwrap();
    let sent = fake.since(m);
    assert!(sent.contains(&port_listing()), "{sent:?}");
    assert_eq!(count(&sent, "GET /v1/ports?"), 1, "{sent:?}");
    assert_eq!(count(&sent, "POST /v1/ports"), 0, "{sent:?}");
    assert_eq!(fake.state.lock().unwrap().ports.len(), 1);
    // That listing shows the write: it is forgotten.
    assert_eq!(shared.ports.writes(), 0);
}

#[test]
fn a_port_an_earlier_run_created_is_found_in_the_listing_not_created_again() {
    let fake = FakeIronic::start();
    fake.add_listed_node(node_of(&nth_uuid(0), "worker-0", "manageable"));
    // An earlier run created the port and was killed before it saved that.
    fake.state
        .lock()
        .unwrap()
        .ports
        .push(json!({"uuid": "p-old", "node_uuid": nth_uuid(0), "address": nth_mac(0)}));
    let shared = watched(&fake, 20);
    let m = fake.mark();
    let (mut p, _) = prov_for(&shared, nth_host(0));
    p.register(&inspected(&nth_mac(0)), RegisterOptions::default())
        .unwrap();
    let sent = fake.since(m);
    assert_eq!(count(&sent, "POST /v1/ports"), 0, "{sent:?}");
    assert_eq!(count(&sent, "GET /v1/ports?"), 1, "{sent:?}");
    assert_eq!(
        p.persistent_state(),
        Some(json!({"node": nth_uuid(0), "ports": [nth_mac(0)]}))
    );
    // Another node's port on the MAC is BMO's error, read from the listing as well.
    fake.add_listed_node(node_of(&nth_uuid(1), "worker-1", "manageable"));
    let (mut p, _) = prov_for(&shared, nth_host(1));
    let r = p.register(&inspected(&nth_mac(0)), RegisterOptions::default());
    assert_eq!(
        transient_message(r),
        format!(
            "port belongs to another node {}, MAC: {} can't register for node {}",
            nth_uuid(0),
            nth_mac(0),
            nth_uuid(1)
        )
    );
    assert_eq!(fake.state.lock().unwrap().ports.len(), 1);
    assert!(!fake.since(m).contains(&mac_owners(&nth_mac(0))));
}

#[test]
fn without_due_hosts_the_port_reads_are_bmos() {
    let fake = FakeIronic::start();
    let sent = register_inspected(&fake, &fake.shared(), 1);
    assert!(!sent.contains(&port_listing()), "{sent:?}");
    assert!(sent.contains(&node_ports(&nth_uuid(0))), "{sent:?}");
    assert!(sent.contains(&mac_owners(&nth_mac(0))), "{sent:?}");
}
