//! What a host delayed by `PROVISIONING_LIMIT` costs Ironic while it waits and once a freed
//! slot wakes it: the shared listing answers its passes, no node `GET`.

use super::node_watch::KEEP;
use super::*;

const LIMIT: usize = 1;

fn uuid(c: char) -> String {
    format!("00000000-0000-4000-8000-00000000000{}", c as u32 - 96)
}

fn key(c: char) -> ObjectKey {
    ObjectKey::new("default", format!("worker-{c}"))
}

fn pass(shared: &Arc<Shared>, c: char) -> IronicProvisioner {
    let host = HostData {
        key: key(c),
        ..host_data(&uuid(c), true)
    };
    prov_for(shared, host).0
}

/// A pass of a delayed host: `HasCapacity`, then the end-of-pass power failure and health
/// questions every pass asks.
fn delayed_pass(shared: &Arc<Shared>, c: char) -> bool {
    let mut p = pass(shared, c);
    let capacity = p.has_capacity().unwrap();
    assert!(!p.has_power_failure());
    assert_eq!(p.get_health(), "");
    capacity
}

fn node_gets(fake: &FakeIronic, mark: usize) -> Vec<String> {
    fake.since(mark)
        .into_iter()
        .filter(|r| r.starts_with("GET /v1/nodes/"))
        .collect()
}

#[test]
fn a_capacity_delayed_hosts_passes_cost_no_node_get() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, LIMIT);
    for c in ['a', 'b', 'c'] {
        fake.add_listed_node(node_of(&uuid(c), &key(c).name, "manageable"));
    }
    // B's last pass read its node and then wrote what no listing shows (as registration's
    // `PATCH` does); C's last pass only read it.
    let mut b = pass(&shared, 'b');
    b.update_hardware_state().unwrap();
    b.wrote_unlisted();
    drop(b);
    pass(&shared, 'c').update_hardware_state().unwrap();
    assert_eq!(shared.watch.records(), 2);

    // A takes the only slot; B and C wait, asked about every second and passing at BMO's timer,
    // for longer than a record is kept when nobody asks about its host.
    assert!(pass(&shared, 'a').has_capacity().unwrap());
    let delayed = [
        waiting(&key('b'), &uuid('b'), WaitOn::Capacity),
        waiting(&key('c'), &uuid('c'), WaitOn::Capacity),
    ];
    for _ in 0..3 {
        shared.watch.age_records(KEEP / 2);
        shared.watch.age_listing(Duration::from_secs(1));
        let m = fake.mark();
        assert!(shared.due_hosts(&delayed).unwrap().unwrap().due.is_empty());
        assert!(!delayed_pass(&shared, 'b'));
        assert!(!delayed_pass(&shared, 'c'));
        assert_eq!(fake.since(m), [watch_listing()], "one listing, no node GET");
    }
    assert_eq!(shared.watch.records(), 2, "the delayed hosts' records stay");

    // A's slot is freed: B is woken, its pass is served by the listing that woke it.
    shared.capacity.release(&node_name(&key('a')));
    shared.watch.age_listing(Duration::from_secs(1));
    let m = fake.mark();
    assert_eq!(shared.due_hosts(&delayed).unwrap().unwrap().due, [0]);
    assert!(delayed_pass(&shared, 'b'));
    assert_eq!(fake.since(m), [watch_listing()]);

    // Then C, whose next pass also reads its node from that listing.
    shared.capacity.release(&node_name(&key('b')));
    shared.watch.age_listing(Duration::from_secs(1));
    let m = fake.mark();
    assert_eq!(shared.due_hosts(&delayed[1..]).unwrap().unwrap().due, [0]);
    assert!(delayed_pass(&shared, 'c'));
    let hw = pass(&shared, 'c').update_hardware_state().unwrap();
    assert_eq!(hw.powered_on, Some(true));
    assert_eq!(fake.since(m), [watch_listing()]);
    assert_eq!(node_gets(&fake, 0).len(), 2, "B's and C's first reads only");
}

/// A delayed pass whose listing predates the host's last pass cannot be answered from it (that
/// pass's write may not show): its health question reads the node, as BMO's does.
#[test]
fn a_listing_older_than_the_last_pass_does_not_answer_health() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, LIMIT);
    for c in ['a', 'b'] {
        fake.add_listed_node(node_of(&uuid(c), &key(c).name, "manageable"));
    }
    assert!(pass(&shared, 'a').has_capacity().unwrap());
    let mut b = pass(&shared, 'b');
    b.update_hardware_state().unwrap();
    b.wrote_unlisted();
    drop(b);
    let m = fake.mark();
    assert!(!delayed_pass(&shared, 'b'));
    assert_eq!(
        node_gets(&fake, m),
        [format!("GET /v1/nodes/{}", uuid('b'))]
    );

    // Without the host feature every pass makes today's requests.
    let bmo = fake.shared_with(
        fake.config(),
        ProvisionerConfig {
            provisioning_limit: LIMIT,
            ..Default::default()
        },
    );
    assert!(pass(&bmo, 'a').has_capacity().unwrap());
    let m = fake.mark();
    assert!(!delayed_pass(&bmo, 'b'));
    assert_eq!(node_gets(&fake, m).len(), 1, "{:?}", fake.since(m));
}
