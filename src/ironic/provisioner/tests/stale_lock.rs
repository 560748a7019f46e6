//! A node whose lock is held by a conductor that is gone: the host says so (an event, and the
//! "waiting for the provisioner" message of a provisioner that cannot be created), retries
//! with a growing delay instead of every 3 s, and carries on once the lock is gone.

use super::*;

const DEAD: &str = "127.0.0.2";

fn locked_by_dead_conductor(fake: &FakeIronic) {
    fake.node_in(
        "manageable",
        json!({"reservation": DEAD, "provision_updated_at": stamp(1)}),
    );
    fake.state.lock().unwrap().conductors = vec![
        json!({"hostname": DEAD, "alive": false}),
        json!({"hostname": "127.0.0.3:8089", "alive": true}),
    ];
    fake.fail(
        "PUT",
        "nodes/*",
        409,
        &format!(
            "Node {UUID} is locked by host {DEAD}, please retry after the current operation is \
             completed."
        ),
    );
}

fn count(sent: &[String], what: &str) -> usize {
    sent.iter().filter(|r| r.starts_with(what)).count()
}

/// A provisioner for the test host from the factory, as the runner makes one per pass.
fn create(shared: &Arc<Shared>) -> Result<Box<dyn Provisioner>, ProvisionerError> {
    let factory = IronicFactory {
        shared: shared.clone(),
    };
    factory.new_provisioner(host_data(UUID, true), Arc::new(|_| {}))
}

#[test]
fn a_lock_held_by_an_offline_conductor_is_reported_backed_off_and_outlived() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    locked_by_dead_conductor(&fake);
    let want = format!("node {NAME} locked by conductor {DEAD}, which is offline");

    // The pass that meets the lock: one conductor listing, one event, a 5 s retry.
    let m = fake.mark();
    let (mut p, events) = prov_for(&shared, host_data(UUID, true));
    let reg = p
        .register(&ManagementAccessData::default(), RegisterOptions::default())
        .unwrap();
    assert_done(&reg.result);
    let r = p
        .provision(&provision_data(image()), ProvisionOptions::default())
        .unwrap();
    drop(p);
    assert_requeue(&r, 5);
    assert_eq!(count(&fake.since(m), "GET /v1/conductors"), 1);
    let events = events.lock().unwrap().clone();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].reason, "NodeLockedByOfflineConductor");
    assert!(
        events[0].message.starts_with(&want),
        "{}",
        events[0].message
    );
    assert!(
        events[0].message.contains("baremetal conductor list"),
        "the remedy: {}",
        events[0].message
    );

    // Until the lock is looked at again the host waits, saying why, at no cost; each look
    // that finds it still held doubles the wait, up to 30 s.
    for delay in [5, 10, 20, 30, 30] {
        let m = fake.mark();
        shared.locks.age(
            UUID,
            Duration::from_secs(delay) - Duration::from_millis(200),
        );
        match create(&shared) {
            Err(ProvisionerError::NotReady(msg)) => assert!(msg.starts_with(&want), "{msg}"),
            Ok(_) => panic!("created a provisioner for a node a dead conductor holds"),
            Err(e) => panic!("want NotReady, got {e}"),
        }
        assert_eq!(fake.since(m), Vec::<String>::new(), "within {delay} s");
        shared.locks.age(UUID, Duration::from_millis(200));
        assert!(matches!(
            create(&shared),
            Err(ProvisionerError::NotReady(_))
        ));
        assert_eq!(
            count(&fake.since(m), &format!("GET /v1/nodes/{UUID}")),
            1,
            "one look after {delay} s"
        );
    }

    // The lock goes (a conductor took the node over): the next look lets the pass run, and
    // the deploy is sent at once.
    fake.clear_faults();
    fake.set(json!({"reservation": null}));
    shared.locks.age(UUID, Duration::from_secs(30));
    let m = fake.mark();
    let p = create(&shared).expect("the lock is gone");
    drop(p);
    let r = provisioning_pass(&shared);
    assert_requeue(&r, 3);
    assert!(
        !fake.provision_targets_since(m).is_empty(),
        "{:?}",
        fake.since(m)
    );
    assert!(!shared.locks.holds(UUID));
}

#[test]
fn a_lock_held_by_a_live_conductor_is_bmos_3s_retry_without_an_event() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    locked_by_dead_conductor(&fake);
    fake.state.lock().unwrap().conductors = vec![json!({"hostname": DEAD, "alive": true})];
    let (mut p, events) = prov_for(&shared, host_data(UUID, true));
    let r = p
        .provision(&provision_data(image()), ProvisionOptions::default())
        .unwrap();
    assert_requeue(&r, 3);
    assert!(events.lock().unwrap().is_empty());
    assert!(create(&shared).is_ok());
}
