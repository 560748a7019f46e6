use super::Metrics;
use crate::machine::PassOutcome;
use crate::record::HostRecord;
use bmh_api::{ObjectKey, OperationalStatus, ProvisioningState};
use bmhctl_plugin_sdk::WaitOn;

fn host(state: ProvisioningState, op: OperationalStatus) -> HostRecord {
    let mut rec = HostRecord::default();
    let status = rec.host.status.get_or_insert_with(Default::default);
    status.provisioning.state = state;
    status.operational_status = op;
    rec
}

fn outcome() -> PassOutcome {
    PassOutcome::new(crate::machine::Requeue::Never)
}

#[test]
fn passes_are_counted_under_bmo_names_and_hosts_by_state() {
    let m = Metrics::default();
    let a = ObjectKey::new("default", "a");
    let b = ObjectKey::new("lab", "b");
    m.observe_pass(
        &a,
        &host(ProvisioningState::Registering, OperationalStatus::Ok),
        &outcome(),
    );
    m.observe_pass(
        &a,
        &host(ProvisioningState::Inspecting, OperationalStatus::Ok),
        &outcome(),
    );
    let mut failed = outcome();
    failed.error = Some("boom".into());
    failed.wait = Some(WaitOn::Capacity);
    m.observe_pass(
        &b,
        &host(ProvisioningState::Provisioning, OperationalStatus::Delayed),
        &failed,
    );
    let text = m.encode();
    for want in [
        r#"metal3_reconcile_total{namespace="default",host="a"} 2"#,
        r#"metal3_reconcile_total{namespace="lab",host="b"} 1"#,
        "metal3_reconcile_error_total 1",
        r#"metal3_provisioning_state_change_total{prev_state="registering",new_state="inspecting"} 1"#,
        r#"metal3_delayed__provisioning_total{namespace="lab",host="b"} 1"#,
        r#"bmhctl_hosts{provisioning_state="inspecting",operational_status="OK"} 1"#,
        r#"bmhctl_hosts{provisioning_state="provisioning",operational_status="delayed"} 1"#,
        "# TYPE bmhctl_store_write_duration_seconds histogram",
    ] {
        assert!(text.contains(want), "{want} not in:\n{text}");
    }
    assert!(!text.contains("registering\",operational"), "{text}");
}

#[test]
fn a_deleted_host_leaves_the_hosts_gauge() {
    let m = Metrics::default();
    let a = ObjectKey::new("default", "a");
    let rec = host(ProvisioningState::Deleting, OperationalStatus::Ok);
    m.observe_pass(&a, &rec, &outcome());
    assert!(m.encode().contains("bmhctl_hosts{"));
    let mut gone = outcome();
    gone.end = crate::machine::PassEnd::Deleted;
    m.observe_pass(&a, &rec, &gone);
    assert!(!m.encode().contains("bmhctl_hosts{"), "{}", m.encode());
}

#[test]
fn provisioner_calls_are_timed_by_call() {
    let m = Metrics::default();
    m.observe_provisioner_call("register", std::time::Duration::from_millis(3));
    m.observe_provisioner_call("register", std::time::Duration::from_millis(1));
    m.passes_in_flight.inc();
    let text = m.encode();
    for want in [
        r#"bmhctl_provisioner_call_duration_seconds_count{call="register"} 2"#,
        r#"bmhctl_provisioner_call_duration_seconds_bucket{le="0.0016",call="register"} 1"#,
        "bmhctl_passes_in_flight 1",
    ] {
        assert!(text.contains(want), "{want} not in:\n{text}");
    }
}

/// A provisioner whose request counts the test sets.
struct Counting(std::sync::Mutex<Vec<(&'static str, u64)>>);

impl bmhctl_plugin_sdk::ProvisionerFactory for Counting {
    fn new_provisioner(
        &self,
        _: bmhctl_plugin_sdk::HostData,
        _: bmhctl_plugin_sdk::EventSink,
    ) -> Result<Box<dyn bmhctl_plugin_sdk::Provisioner>, bmhctl_plugin_sdk::ProvisionerError> {
        Err(bmhctl_plugin_sdk::ProvisionerError::Other("unused".into()))
    }

    fn api_calls(
        &self,
    ) -> Result<Option<Vec<bmhctl_plugin_sdk::ApiCallCount>>, bmhctl_plugin_sdk::ProvisionerError>
    {
        let rows = self.0.lock().unwrap();
        Ok(Some(
            rows.iter()
                .map(|(kind, count)| bmhctl_plugin_sdk::ApiCallCount {
                    kind: kind.to_string(),
                    count: *count,
                })
                .collect(),
        ))
    }
}

#[test]
fn api_calls_are_read_from_the_provisioner_at_each_scrape() {
    let m = Metrics::default();
    // Without a provisioner that counts, the family has no series.
    assert!(!m.encode().contains("bmhctl_ironic_api_calls_total{"));
    let counting = std::sync::Arc::new(Counting(std::sync::Mutex::new(vec![
        ("GET /v1/nodes", 4),
        ("POST /v1/nodes", 2),
    ])));
    m.read_api_calls_from(counting.clone());
    let text = m.encode();
    assert!(
        text.contains("# TYPE bmhctl_ironic_api_calls counter"),
        "{text}"
    );
    assert!(
        text.contains(r#"bmhctl_ironic_api_calls_total{kind="GET /v1/nodes"} 4"#),
        "{text}"
    );
    assert!(
        text.contains(r#"bmhctl_ironic_api_calls_total{kind="POST /v1/nodes"} 2"#),
        "{text}"
    );
    // Counts grow between scrapes; a count lower than served (a plugin started again) is not
    // served as a counter going down.
    *counting.0.lock().unwrap() = vec![("GET /v1/nodes", 9), ("POST /v1/nodes", 1)];
    let text = m.encode();
    assert!(
        text.contains(r#"bmhctl_ironic_api_calls_total{kind="GET /v1/nodes"} 9"#),
        "{text}"
    );
    assert!(
        text.contains(r#"bmhctl_ironic_api_calls_total{kind="POST /v1/nodes"} 2"#),
        "{text}"
    );
}

/// `watch --metrics` wraps its source: the subscriptions must still be seen and their status
/// written through it (the trait's defaults would answer none and write nothing).
#[test]
fn the_timed_source_passes_subscriptions_through() {
    use crate::persist::files::file_source::FileSource;
    use crate::persist::files::inventory::{LoadMode, load_with};
    use crate::persist::{HostSource, LoadOptions};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hosts.yaml");
    std::fs::write(
        &path,
        "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: host-0\nspec:\n  online: true\n---\napiVersion: metal3.io/v1alpha1\nkind: BMCEventSubscription\nmetadata:\n  name: sub\nspec:\n  hostName: host-0\n  destination: https://events.example/\n",
    )
    .unwrap();
    let paths = vec![path.clone()];
    let inv = load_with(&paths, LoadMode::Write, &LoadOptions::default()).unwrap();
    let timed = super::TimedSource {
        inner: std::sync::Arc::new(FileSource::new(inv, &LoadOptions::default())),
        metrics: std::sync::Arc::new(Metrics::default()),
    };
    let subs = timed.event_subscriptions().unwrap();
    assert_eq!(subs.len(), 1);
    assert_eq!(subs[0].metadata.name, "sub");
    let status = bmh_api::BmcEventSubscriptionStatus {
        subscription_id: "id-1".into(),
        ..Default::default()
    };
    assert!(
        timed
            .write_event_subscription_status(&ObjectKey::new("default", "sub"), &status)
            .unwrap()
    );
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(
        written.ends_with("status:\n  subscriptionID: id-1\n"),
        "{written}"
    );
}

/// The subscription controller's calls go through the same timed provisioner as the hosts'.
#[test]
fn subscription_calls_are_timed_and_reach_the_provisioner() {
    use bmhctl_plugin_sdk::{HostData, ProvisionerFactory};
    let fixture = crate::provisioners::fixture::Fixture::new();
    let metrics = std::sync::Arc::new(Metrics::default());
    let factory = super::ObservedFactory {
        inner: std::sync::Arc::new(fixture.clone()),
        metrics: metrics.clone(),
    };
    let host = HostData {
        key: ObjectKey::new("default", "host-0"),
        ..HostData::default()
    };
    let mut p = factory
        .new_provisioner(host, std::sync::Arc::new(|_| {}))
        .unwrap();
    let mut sub = bmh_api::BmcEventSubscription::default();
    sub.metadata.name = "sub".into();
    sub.spec.destination = "https://events.example/".into();
    let id = p.create_bmc_event_subscription(&sub, &[]).unwrap();
    assert_eq!(id.as_deref(), Some("fixture-default-sub"));
    sub.status = Some(bmh_api::BmcEventSubscriptionStatus {
        subscription_id: id.unwrap(),
        ..Default::default()
    });
    assert!(p.delete_bmc_event_subscription(&sub).unwrap());
    assert!(
        fixture
            .subscriptions()
            .of(&ObjectKey::new("default", "host-0"))
            .is_empty()
    );
    let text = metrics.encode();
    for call in [
        "create_bmc_event_subscription",
        "delete_bmc_event_subscription",
    ] {
        let want = format!(r#"bmhctl_provisioner_call_duration_seconds_count{{call="{call}"}} 1"#);
        assert!(text.contains(&want), "{want} not in:\n{text}");
    }
}

/// A factory that tells its two ways of making a provisioner apart, as the fixture does when it
/// shares the saved states of its hosts.
struct SharingState {
    fixture: crate::provisioners::fixture::Fixture,
    with_state: std::sync::atomic::AtomicUsize,
}

impl bmhctl_plugin_sdk::ProvisionerFactory for SharingState {
    fn new_provisioner(
        &self,
        _: bmhctl_plugin_sdk::HostData,
        _: bmhctl_plugin_sdk::EventSink,
    ) -> Result<Box<dyn bmhctl_plugin_sdk::Provisioner>, bmhctl_plugin_sdk::ProvisionerError> {
        Err(bmhctl_plugin_sdk::ProvisionerError::Other(
            "the shared state was copied".into(),
        ))
    }

    fn new_provisioner_with_state(
        &self,
        host: bmhctl_plugin_sdk::HostData,
        state: Option<std::sync::Arc<serde_json::Value>>,
        events: bmhctl_plugin_sdk::EventSink,
    ) -> Result<Box<dyn bmhctl_plugin_sdk::Provisioner>, bmhctl_plugin_sdk::ProvisionerError> {
        self.with_state
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.fixture.new_provisioner_with_state(host, state, events)
    }
}

/// `watch --metrics-addr` hands the saved state to the provisioner it wraps as it came, shared:
/// the provisioner made is timed and counted in flight all the same.
#[test]
fn a_provisioner_made_with_its_state_is_made_by_the_inner_factory_and_observed() {
    use bmhctl_plugin_sdk::{HostData, ProvisionerFactory};
    let inner = std::sync::Arc::new(SharingState {
        fixture: crate::provisioners::fixture::Fixture::new(),
        with_state: Default::default(),
    });
    let metrics = std::sync::Arc::new(Metrics::default());
    let factory = super::ObservedFactory {
        inner: inner.clone(),
        metrics: metrics.clone(),
    };
    let host = HostData {
        key: ObjectKey::new("default", "host-0"),
        ..HostData::default()
    };
    let p = factory
        .new_provisioner_with_state(host, None, std::sync::Arc::new(|_| {}))
        .unwrap();
    assert_eq!(
        inner.with_state.load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    let text = metrics.encode();
    for want in [
        r#"bmhctl_provisioner_call_duration_seconds_count{call="new_provisioner"} 1"#,
        "bmhctl_passes_in_flight 1",
    ] {
        assert!(text.contains(want), "{want} not in:\n{text}");
    }
    drop(p);
    assert!(metrics.encode().contains("bmhctl_passes_in_flight 0"));
}
