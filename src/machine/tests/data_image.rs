//! The host's DataImage: every branch of BMO's `handleDataImageActions`
//! (`baremetalhost_controller.go:1826-1947`), run by `manageHostPower` when a provisioned host
//! is about to be powered on.

use super::harness::*;
use super::mock::Mock;
use crate::machine::{PassOutcome, Requeue};
use bmh_api::{DataImage, DataImageStatus, ProvisioningState as S};
use bmhctl_plugin_sdk::ProvisionerError;
use std::time::Duration;

const ISO: &str = "http://example.test/config.iso";
const ISO2: &str = "http://example.test/config-2.iso";

fn data_image(url: &str) -> DataImage {
    serde_json::from_value(serde_json::json!({
        "apiVersion": bmh_api::API_VERSION,
        "kind": bmh_api::DATA_IMAGE_KIND,
        "metadata": {"name": "host-0"},
        "spec": {"url": url},
    }))
    .unwrap()
}

/// A provisioned host that is off and should be on, with a DataImage of `url`.
fn off_host(mock: &Mock, url: Option<&str>) -> HostTest {
    let mut t = HostTest::standard("host-0")
        .mock(mock)
        .provisioned()
        .status(|st| st.powered_on = false);
    t.rec.data_image = url.map(|u| Box::new(data_image(u)));
    t
}

/// The calls of the passes since the last look, but registration's and adoption's (every pass
/// of a provisioned host makes them).
fn calls(mock: &Mock) -> Vec<String> {
    mock.take_calls()
        .into_iter()
        .filter(|c| !c.starts_with("register(") && !c.starts_with("adopt("))
        .collect()
}

fn di(t: &HostTest) -> DataImageStatus {
    t.rec.data_image.as_ref().expect("a DataImage").status()
}

fn after(o: &PassOutcome) -> Duration {
    match o.requeue {
        Requeue::After(d) => d,
        other => panic!("requeue {other:?}"),
    }
}

/// `max(dataImageUpdateDelay, calculateBackoff(count))` with the count before the pass:
/// (2^(n-1), 2^n] minutes, at least 30 s.
fn assert_retry(o: &PassOutcome, count: i64) {
    let d = after(o).as_secs_f64();
    let hi = 2f64.powi(count as i32) * 60.0;
    let lo = (hi / 2.0).max(30.0);
    assert!(
        d >= lo && d <= hi,
        "count {count}: {d} s not in [{lo}, {hi}]"
    );
}

#[test]
fn no_data_image_powers_on_without_asking() {
    let mock = Mock::new();
    let mut t = off_host(&mock, None);
    t.pass();
    assert!(!mock.called("get_data_image_status"), "{:?}", mock.calls());
    assert!(mock.called("power_on"));
}

#[test]
fn attaches_before_powering_on_then_powers_on() {
    let mock = Mock::new();
    let mut t = off_host(&mock, Some(ISO));
    let o = t.pass();
    assert_eq!(
        calls(&mock),
        [
            "get_data_image_status",
            format!("attach_data_image({ISO})").as_str()
        ]
    );
    assert_retry(&o, 0);
    assert!(o.data_image_changed && o.bookkeeping_changed);
    let st = di(&t);
    assert_eq!(st.attached_image.url, ISO);
    assert_eq!(st.error.count, 0);
    assert!(st.last_reconciled.is_some());
    // The bookkeeping keeps the DataImage for its "finalizer".
    assert_eq!(t.rec.book.data_image.as_ref().unwrap().status(), st);

    // Attached and as asked: errors cleared, and the host goes on to power on.
    let o = t.pass();
    assert_eq!(
        calls(&mock),
        ["get_data_image_status", "power_on(force=false)"]
    );
    assert!(o.data_image_changed);
    assert_eq!(di(&t).attached_image.url, ISO);
    assert_eq!(mock.0.lock().unwrap().data_image.as_deref(), Some(ISO));
}

#[test]
fn externally_provisioned_hosts_attach_too() {
    let mock = Mock::new();
    let mut t = off_host(&mock, Some(ISO)).status(|st| {
        st.provisioning.state = S::ExternallyProvisioned;
    });
    t.rec.host.spec.externally_provisioned = true;
    t.pass();
    assert!(
        mock.called(&format!("attach_data_image({ISO})")),
        "{:?}",
        mock.calls()
    );
}

#[test]
fn nothing_happens_while_the_host_is_on_or_should_be_off_or_is_not_provisioned() {
    // On: the steady power poll.
    let mock = Mock::new();
    mock.with(|m| m.powered_on = Some(true));
    let mut t = off_host(&mock, Some(ISO)).status(|st| st.powered_on = true);
    assert!(t.pass().steady());
    // Off and meant to stay off.
    let mock2 = Mock::new();
    let mut t2 = off_host(&mock2, Some(ISO)).online(false);
    assert!(t2.pass().steady());
    // Available: not provisioned.
    let mock3 = Mock::new();
    let mut t3 = HostTest::standard("host-0")
        .mock(&mock3)
        .registered_in(S::Available)
        .status(|st| st.powered_on = false);
    t3.rec.host.spec.image = None;
    t3.rec.data_image = Some(Box::new(data_image(ISO)));
    t3.pass();
    for m in [&mock, &mock2, &mock3] {
        assert!(!m.called("get_data_image_status"), "{:?}", m.calls());
        assert!(!m.called("attach_data_image"));
    }
    assert!(t.rec.data_image.as_ref().unwrap().status.is_none());
}

#[test]
fn a_failed_status_query_counts_an_error_and_backs_off_without_powering_on() {
    let mock = Mock::new();
    let down = || Err(ProvisionerError::Other("vmedia API down".into()));
    mock.with(|m| {
        m.script.data_image_status.extend([down(), down(), down()]);
    });
    let mut t = off_host(&mock, Some(ISO));
    for count in 0..3 {
        let o = t.pass();
        assert_retry(&o, count);
        assert!(o.data_image_changed && o.error.is_none());
        let st = di(&t);
        assert_eq!(
            (st.error.count, st.error.message.as_str()),
            (count + 1, "vmedia API down")
        );
    }
    assert!(!mock.called("attach_data_image") && !mock.called("power_on"));
    // The next good answer attaches, and the one after that clears the count.
    t.pass();
    assert_eq!(di(&t).error.count, 3, "attaching does not clear the count");
    t.pass();
    assert_eq!(di(&t).error, Default::default());
    assert!(mock.called("power_on"));
}

#[test]
fn a_busy_node_is_no_error_and_nothing_is_written() {
    let mock = Mock::new();
    mock.with(|m| {
        m.script
            .data_image_status
            .push_back(Err(ProvisionerError::NodeIsBusy))
    });
    let mut t = off_host(&mock, Some(ISO));
    let o = t.pass();
    assert_retry(&o, 0);
    assert!(!o.data_image_changed && !o.bookkeeping_changed);
    assert!(t.rec.data_image.as_ref().unwrap().status.is_none());
    assert!(!mock.called("attach_data_image") && !mock.called("power_on"));
}

#[test]
fn an_image_the_backend_lost_is_forgotten_then_attached_again() {
    let mock = Mock::new();
    let mut t = off_host(&mock, Some(ISO));
    t.rec.data_image.as_mut().unwrap().status = Some(DataImageStatus {
        attached_image: bmh_api::AttachedImageReference { url: ISO.into() },
        ..Default::default()
    });
    let o = t.pass();
    assert_eq!(after(&o), Duration::ZERO);
    assert_eq!(di(&t).attached_image.url, "");
    assert_eq!(calls(&mock), ["get_data_image_status"]);
    t.pass();
    assert_eq!(
        calls(&mock),
        [
            "get_data_image_status",
            format!("attach_data_image({ISO})").as_str()
        ]
    );
}

#[test]
fn a_new_url_detaches_the_old_image_first() {
    let mock = Mock::new();
    let mut t = off_host(&mock, Some(ISO));
    t.passes(2);
    assert!(mock.called("power_on"));
    // A new URL, and the host is off again before the pass that would see it on.
    t.rec.data_image.as_mut().unwrap().spec.url = ISO2.into();
    mock.with(|m| m.powered_on = Some(false));
    mock.take_calls();
    let o = t.pass();
    assert_eq!(calls(&mock), ["get_data_image_status", "detach_data_image"]);
    assert_retry(&o, 0);
    assert_eq!(di(&t).attached_image.url, ISO, "a detach leaves the status");
    let o = t.pass();
    assert_eq!(after(&o), Duration::ZERO);
    assert_eq!(di(&t).attached_image.url, "");
    t.pass();
    assert!(mock.called(&format!("attach_data_image({ISO2})")));
    assert_eq!(di(&t).attached_image.url, ISO2);
}

#[test]
fn an_empty_url_attaches_nothing_and_powers_on() {
    let mock = Mock::new();
    let mut t = off_host(&mock, Some(""));
    let o = t.pass();
    assert!(o.data_image_changed);
    assert_eq!(
        calls(&mock),
        ["get_data_image_status", "power_on(force=false)"]
    );
    assert!(di(&t).last_reconciled.is_some());
}

#[test]
fn a_failed_attach_is_a_pass_error_and_counts() {
    let mock = Mock::new();
    mock.with(|m| {
        m.script
            .attach_data_image
            .push_back(Err(ProvisionerError::Other("no CD drive".into())))
    });
    let mut t = off_host(&mock, Some(ISO));
    let o = t.pass();
    assert_eq!(o.requeue, Requeue::ErrorBackoff);
    assert_eq!(
        o.error.as_deref(),
        Some(
            "action \"provisioned\" failed: failed to attach, failed to attach dataImage, no CD drive"
        )
    );
    assert!(
        o.data_image_changed,
        "BMO writes the count before failing the pass"
    );
    let st = di(&t);
    assert_eq!(
        (st.error.count, st.error.message.as_str()),
        (1, "no CD drive")
    );
    assert_eq!(st.attached_image.url, "");
    // The host's own status is untouched.
    assert_eq!(t.st().error_count, 0);
}

#[test]
fn a_failed_detach_is_a_pass_error_and_counts() {
    let mock = Mock::new();
    mock.with(|m| {
        m.data_image = Some(ISO.into());
        m.script
            .detach_data_image
            .push_back(Err(ProvisionerError::Other("eject refused".into())));
    });
    let mut t = off_host(&mock, Some(ISO2));
    t.rec.data_image.as_mut().unwrap().status = Some(DataImageStatus {
        attached_image: bmh_api::AttachedImageReference { url: ISO.into() },
        ..Default::default()
    });
    let o = t.pass();
    assert_eq!(
        o.error.as_deref(),
        Some(
            "action \"provisioned\" failed: failed to detach, failed to detach dataImage, eject refused"
        )
    );
    assert_eq!(di(&t).error.count, 1);
    assert!(!mock.called("power_on"));
}

#[test]
fn a_removed_document_is_detached_then_released() {
    let mock = Mock::new();
    let mut t = off_host(&mock, Some(ISO));
    t.passes(2);
    // The document goes, and the host is off again.
    t.rec.data_image = None;
    mock.with(|m| m.powered_on = Some(false));
    mock.take_calls();
    let o = t.pass();
    assert_eq!(calls(&mock), ["get_data_image_status", "detach_data_image"]);
    assert_retry(&o, 0);
    assert!(!o.data_image_changed, "no document to write to");
    assert!(t.rec.book.data_image.is_some(), "held until detached");
    let o = t.pass();
    assert_eq!(after(&o), Duration::ZERO);
    assert!(o.bookkeeping_changed);
    assert_eq!(
        t.rec
            .book
            .data_image
            .as_ref()
            .unwrap()
            .status()
            .attached_image
            .url,
        ""
    );
    // Nothing attached: the "finalizer" goes and the host powers on.
    let o = t.pass();
    assert!(o.bookkeeping_changed);
    assert!(t.rec.book.data_image.is_none());
    assert_eq!(
        calls(&mock),
        [
            "get_data_image_status",
            "get_data_image_status",
            "power_on(force=false)"
        ]
    );
}

#[test]
fn a_removed_document_with_nothing_attached_is_released_at_once() {
    let mock = Mock::new();
    let mut t = off_host(&mock, None);
    t.rec.book.data_image = Some(Box::new(data_image(ISO)));
    let o = t.pass();
    assert!(o.bookkeeping_changed);
    assert!(t.rec.book.data_image.is_none());
    assert_eq!(
        calls(&mock),
        ["get_data_image_status", "power_on(force=false)"]
    );
}
