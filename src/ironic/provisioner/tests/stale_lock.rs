//! A node whose lock is held by a conductor that is gone: the host says so (an event, and the
//! "waiting for the provisioner" message of a provisioner that cannot be created), retries
//! with a growing delay instead of every 3 s, and carries on once the lock is gone.

use super::*;
use crate::provisioner::lock_watch::SUSPECT_AFTER;

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

/// The dead conductor is restarted under its JSON-RPC `HOST:PORT` name while Ironic keeps the
/// lock it took as `HOST`: the lock is still stale (known, and the node untouched since), the
/// host keeps saying why, and no request that can only be refused is sent.
#[test]
fn a_lock_kept_across_its_conductors_restart_stays_reported_and_unasked() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    locked_by_dead_conductor(&fake);
    fake.set(json!({"updated_at": stamp(2)}));
    fake.state.lock().unwrap().conductors = vec![
        json!({"hostname": format!("{DEAD}:17612"), "alive": false}),
        json!({"hostname": "127.0.0.3:17613", "alive": true}),
    ];
    // Found stale through a 409, then looked at again once (the node read, untouched).
    assert_requeue(&provisioning_pass(&shared), 5);
    shared.locks.age(UUID, Duration::from_secs(5));
    assert!(matches!(
        create(&shared),
        Err(ProvisionerError::NotReady(_))
    ));

    // The conductor comes back as 127.0.0.2:17612, alive; the lock stays.
    fake.state.lock().unwrap().conductors = vec![
        json!({"hostname": format!("{DEAD}:17612"), "alive": true}),
        json!({"hostname": "127.0.0.3:17613", "alive": true}),
    ];
    let m = fake.mark();
    for _ in 0..4 {
        shared.locks.age(UUID, Duration::from_secs(31));
        match create(&shared) {
            Err(ProvisionerError::NotReady(msg)) => assert!(
                msg.starts_with(&format!("node {NAME} locked by conductor {DEAD} since "))
                    && msg.contains("does not release")
                    && msg.contains("[json_rpc]port"),
                "{msg}"
            ),
            other => panic!("want NotReady, got {:?}", other.err()),
        }
    }
    let sent = fake.since(m);
    assert!(sent.iter().all(|r| r.starts_with("GET ")), "{sent:?}");
    assert_eq!(
        count(&sent, &format!("GET /v1/nodes/{UUID}")),
        4,
        "{sent:?}"
    );

    // Anything that touches the node (its lock freed) ends it.
    fake.set(json!({"reservation": null, "updated_at": stamp(9)}));
    shared.locks.age(UUID, Duration::from_secs(31));
    assert!(create(&shared).is_ok());
    assert!(!shared.locks.holds(UUID));
}

/// A new process meets such a lock (no memory of the conductor's death): the holder is listed
/// alive, so 409s are BMO's 3 s retries (each pass's read of the node tells it unchanged, no
/// read more); held unchanged for two minutes, the lock is named and the requests stop.
#[test]
fn a_lock_under_a_live_name_held_unchanged_for_two_minutes_is_named() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    locked_by_dead_conductor(&fake);
    fake.set(json!({"updated_at": stamp(2)}));
    fake.state.lock().unwrap().conductors =
        vec![json!({"hostname": format!("{DEAD}:17612"), "alive": true})];
    let mut reads = 0;
    for second in (0..120).step_by(15) {
        let m = fake.mark();
        assert_requeue(&provisioning_pass(&shared), 3);
        reads += count(&fake.since(m), &format!("GET /v1/nodes/{UUID}")) - 1;
        assert!(create(&shared).is_ok(), "at {second} s");
        shared.locks.age(UUID, Duration::from_secs(15));
    }
    assert_eq!(reads, 0, "no read but the pass's own");
    let r = provisioning_pass(&shared);
    assert_requeue(&r, 5);
    match create(&shared) {
        Err(ProvisionerError::NotReady(msg)) => {
            assert!(
                msg.contains(&format!("locked by conductor {DEAD} since "))
                    && msg.contains("with no change of the node"),
                "{msg}"
            )
        }
        other => panic!("want NotReady, got {:?}", other.err()),
    }
}

/// A node locked while `deploying` gets no 409 (its host only waits and reads): the shared
/// listing shows the reservation, and once it has lasted, the conductors tell it is stale;
/// the host is reported due once, and its next pass says why.
#[test]
fn a_deploying_node_locked_by_a_dead_conductor_is_found_from_the_listing() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    locked_by_dead_conductor(&fake);
    fake.set(json!({"provision_state": "deploying", "target_provision_state": "active"}));
    let key = ObjectKey::new("default", "worker-0");
    let asked = [waiting(&key, UUID, WaitOn::Progress)];
    assert_requeue(&provisioning_pass(&shared), 10);

    // A reservation seen for less than 30 s is not asked about.
    let m = fake.mark();
    assert!(shared.due_hosts(&asked).unwrap().unwrap().due.is_empty());
    assert_eq!(fake.since(m), [watch_listing()]);
    // Lasted: the node and the conductors are read, the host is due once.
    shared.locks.age(UUID, SUSPECT_AFTER);
    shared.watch.age_listing(Duration::from_secs(1));
    let m = fake.mark();
    assert_eq!(shared.due_hosts(&asked).unwrap().unwrap().due, [0]);
    let sent = fake.since(m);
    assert_eq!(count(&sent, "GET /v1/conductors"), 1, "{sent:?}");
    match create(&shared) {
        Err(ProvisionerError::NotReady(msg)) => assert!(
            msg.starts_with(&format!(
                "node {NAME} locked by conductor {DEAD}, which is offline"
            )),
            "{msg}"
        ),
        other => panic!("want NotReady, got {:?}", other.err()),
    }
    shared.watch.age_listing(Duration::from_secs(1));
    assert!(
        shared.due_hosts(&asked).unwrap().unwrap().due.is_empty(),
        "once"
    );
}
