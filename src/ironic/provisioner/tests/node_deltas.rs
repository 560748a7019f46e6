//! A large fleet's listings: between full listings only the nodes saved since are read
//! (`GET /v1/nodes/detail` sorted by `updated_at`), and the ports created since (sorted by
//! `created_at`), merged over the last listing.

use super::delta::{DELTA_MIN_PAGE, FULL_LISTING_EVERY};
use super::*;

fn uuid(i: u32) -> String {
    format!("00000000-0000-4000-8000-{i:012}")
}

fn saved(second: u32) -> Value {
    json!(format!("2026-12-01T02:00:{second:02}.250000+00:00"))
}

/// A shared watch for which every fleet is large (deltas from 0 nodes).
fn deltas(fake: &FakeIronic) -> Arc<Shared> {
    let prov = ProvisionerConfig {
        answer_due_hosts: true,
        delta_from: 0,
        ..Default::default()
    };
    fake.shared_with(fake.config(), prov)
}

fn listings(fake: &FakeIronic, mark: usize) -> Vec<String> {
    fake.since(mark)
        .into_iter()
        .map(|r| {
            if r.starts_with("GET /v1/nodes?fields=") {
                "full".to_string()
            } else {
                r
            }
        })
        .collect()
}

fn detail(limit: u32) -> String {
    format!("GET /v1/nodes/detail?sort_key=updated_at&sort_dir=desc&limit={limit}")
}

fn list(shared: &Arc<Shared>) -> Arc<node_watch::Listing> {
    shared.watch.age_listing(Duration::from_secs(60));
    shared
        .watch
        .listing(&shared.client, node_watch::LISTING_TTL)
        .unwrap()
}

#[test]
fn saved_nodes_are_merged_over_the_last_listing_and_a_full_one_comes_back() {
    let fake = FakeIronic::start();
    for i in 0..3 {
        let mut n = node_of(&uuid(i), &format!("w{i}"), "manageable");
        n["updated_at"] = saved(i);
        fake.add_listed_node(n);
    }
    let shared = deltas(&fake);

    // The first listing is full; the next finds Ironic's newest save before listing in full.
    let m = fake.mark();
    assert_eq!(list(&shared).len(), 3);
    assert_eq!(listings(&fake, m), ["full"]);
    let m = fake.mark();
    list(&shared);
    assert_eq!(listings(&fake, m), [detail(DELTA_MIN_PAGE), "full".into()]);

    // Then only what was saved since: one node moved, one was created (never saved).
    set_node(
        &fake,
        &uuid(1),
        json!({"provision_state": "available", "updated_at": saved(9)}),
    );
    fake.add_listed_node(node_of(&uuid(7), "w7", "enroll"));
    let m = fake.mark();
    let l = list(&shared);
    assert_eq!(listings(&fake, m), [detail(DELTA_MIN_PAGE)]);
    assert_eq!(l.len(), 4);
    assert_eq!(l.by_uuid(&uuid(1)).unwrap().provision_state, "available");
    assert_eq!(l.by_uuid(&uuid(0)).unwrap().provision_state, "manageable");
    assert_eq!(l.by_name("default~w7").unwrap().provision_state, "enroll");

    // A deleted node shows only in a full listing, made at least every FULL_LISTING_EVERY.
    fake.state
        .lock()
        .unwrap()
        .nodes
        .retain(|n| n["uuid"] != uuid(0));
    assert!(list(&shared).by_uuid(&uuid(0)).is_some());
    shared.watch.age_full_listing(FULL_LISTING_EVERY);
    let m = fake.mark();
    let l = list(&shared);
    assert_eq!(listings(&fake, m), ["full"]);
    assert!(l.by_uuid(&uuid(0)).is_none());
}

#[test]
fn a_page_that_does_not_reach_back_to_the_last_save_seen_gives_a_full_listing() {
    let fake = FakeIronic::start();
    let n = DELTA_MIN_PAGE + 8;
    for i in 0..n {
        let mut node = node_of(&uuid(i), &format!("w{i}"), "manageable");
        node["updated_at"] = saved(1);
        fake.add_listed_node(node);
    }
    let shared = deltas(&fake);
    list(&shared);
    list(&shared);
    // Every node saved 20 s after the newest seen: more than a page, none older on it.
    for i in 0..n {
        set_node(&fake, &uuid(i), json!({"updated_at": saved(21)}));
    }
    let m = fake.mark();
    list(&shared);
    assert_eq!(listings(&fake, m), [detail(DELTA_MIN_PAGE), "full".into()]);
    // The next delta asks for a page four times larger.
    set_node(&fake, &uuid(0), json!({"updated_at": saved(22)}));
    let m = fake.mark();
    let l = list(&shared);
    assert_eq!(listings(&fake, m), [detail(4 * DELTA_MIN_PAGE)]);
    assert_eq!(l.len(), n as usize);
}

#[test]
fn a_small_fleet_is_always_listed_in_full() {
    let fake = FakeIronic::start();
    fake.add_listed_node(node_of(&uuid(0), "w0", "manageable"));
    let shared = watched(&fake, 20);
    for _ in 0..3 {
        let m = fake.mark();
        list(&shared);
        assert_eq!(listings(&fake, m), ["full"]);
    }
}

fn port(uuid: &str, node: &str, mac: &str, minute: u32) -> Value {
    json!({"uuid": uuid, "node_uuid": node, "address": mac,
           "created_at": format!("2026-12-01T03:{minute:02}:00+00:00")})
}

fn port_page(limit: u32) -> String {
    format!(
        "GET /v1/ports?fields=node_uuid%2Cuuid%2Caddress%2Ccreated_at&sort_key=created_at\
         &sort_dir=desc&limit={limit}"
    )
}

#[test]
fn ports_created_since_are_merged_over_the_last_port_listing() {
    let fake = FakeIronic::start();
    fake.state.lock().unwrap().ports = vec![
        port("p0", "n0", "52:54:00:00:00:01", 1),
        port("p1", "n1", "52:54:00:00:00:02", 2),
    ];
    let shared = deltas(&fake);
    let answer = || {
        shared.ports.age_listing(Duration::from_secs(60));
        shared.ports.answering(&shared.client, "n2").unwrap()
    };
    let m = fake.mark();
    answer();
    answer();
    let full = "GET /v1/ports?fields=node_uuid%2Cuuid%2Caddress&limit=1000";
    assert_eq!(fake.since(m), [full, &port_page(DELTA_MIN_PAGE), full]);

    // A port created since shows from one page; one deleted only in the next full listing.
    {
        let mut st = fake.state.lock().unwrap();
        st.ports.push(port("p2", "n2", "52:54:00:00:00:03", 9));
        st.ports.retain(|p| p["uuid"] != "p0");
    }
    let m = fake.mark();
    let l = answer();
    assert_eq!(fake.since(m), [port_page(DELTA_MIN_PAGE)]);
    assert_eq!(l.of_node("n2")[0].address, "52:54:00:00:00:03");
    assert_eq!(l.with_address("52:54:00:00:00:01").len(), 1);
    shared.ports.age_full_listing(FULL_LISTING_EVERY);
    let m = fake.mark();
    let l = answer();
    assert_eq!(fake.since(m), [full]);
    assert!(l.with_address("52:54:00:00:00:01").is_empty());
    assert_eq!(l.of_node("n2").len(), 1);
}
