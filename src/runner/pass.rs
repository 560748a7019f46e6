//! One pass of one host, as a worker runs it.

use super::Services;
use crate::error::{Error, Result};
use crate::machine::{Machine, MachineConfig, PassOutcome};
use crate::persist::{Change, RETRY_ANNOTATION, Staged};
use crate::record::HostRecord;
use bmh_api::ObjectKey;

pub(super) struct Job {
    pub(super) host: usize,
    /// `None`: read the host from the store first.
    pub(super) record: Option<Box<HostRecord>>,
    /// With a host read afresh: the record of its last accepted spec.
    pub(super) accepted: Option<Box<HostRecord>>,
    pub(super) key: Option<ObjectKey>,
    pub(super) seed: u64,
}

pub(super) enum Done {
    Pass {
        host: usize,
        record: Box<HostRecord>,
        outcome: PassOutcome,
        staged_ticket: Option<u64>,
        stage_error: Option<Error>,
    },
    Gone {
        host: usize,
    },
    Unreadable {
        host: usize,
        error: Error,
        /// Kept, so that the next edit is compared with it too.
        accepted: Option<Box<HostRecord>>,
    },
}

/// What every pass works with, shared by the workers.
pub(super) struct PassContext {
    pub(super) services: Services,
    pub(super) machine: MachineConfig,
    /// The retry annotation is consumed (a controller retries a host on it).
    pub(super) takes_retry: bool,
    /// The scheduler reads a pass's events; if not, they are freed on the pass's thread.
    pub(super) events_read: bool,
}

pub(super) fn run_pass(cx: &PassContext, job: Job) -> Done {
    let Job {
        host,
        record,
        accepted,
        key,
        seed,
    } = job;
    let Services {
        factory,
        objects,
        clock,
        source,
    } = &cx.services;
    let mut record = match record {
        Some(r) => r,
        None => {
            let loaded = source.load(&key.expect("a host read afresh has a key"));
            let old = accepted.as_ref().map(|a| &*a.host);
            let admitted =
                loaded.and_then(|r| r.map(|r| admit(&r.host, old).map(|()| r)).transpose());
            match admitted {
                Ok(Some(r)) => Box::new(r),
                Ok(None) => return Done::Gone { host },
                Err(error) => {
                    return Done::Unreadable {
                        host,
                        error,
                        accepted,
                    };
                }
            }
        }
    };
    let retry = cx.takes_retry
        && record
            .host
            .metadata
            .annotations
            .remove(RETRY_ANNOTATION)
            .is_some();
    let machine = Machine {
        factory: factory.as_ref(),
        objects: objects.as_ref(),
        clock: clock.as_ref(),
        config: &cx.machine,
    };
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut outcome = machine.reconcile(&mut record, &mut rng);
    if retry {
        outcome
            .removed_annotations
            .push(RETRY_ANNOTATION.to_string());
    }
    if !outcome.events.is_empty() && source.events_in_bookkeeping() {
        record
            .book
            .remember_events(&crate::clock::format_time(clock.now()), &outcome.events);
        outcome.bookkeeping_changed = true;
    } else if !outcome.events.is_empty()
        && let Err(e) = source.record_events(host, &outcome.events)
    {
        tracing::warn!("cannot record events: {}", e.chain());
    }
    let staged = staged(&outcome, &record).map(|s| source.stage(host, &s));
    let (stage_error, staged_ticket) = match staged.transpose() {
        Ok(t) => (None, t),
        Err(e) => (Some(e), None),
    };
    // Recorded and staged: events nobody reads further are freed here.
    if !cx.events_read {
        outcome.events = Vec::new();
    }
    Done::Pass {
        host,
        record,
        outcome,
        staged_ticket,
        stage_error,
    }
}

/// Checks a host read afresh with BMO's admission rules (not when being deleted).
fn admit(host: &bmh_api::BareMetalHost, accepted: Option<&bmh_api::BareMetalHost>) -> Result<()> {
    match refusal(host, accepted) {
        None => Ok(()),
        Some(why) => Err(Error::invalid(format!(
            "refused by BMO's admission rules, not reconciled until its file changes: {why}"
        ))),
    }
}

/// What BMO's admission rules find wrong with `host`, joined by `; `; `None` when accepted.
pub(super) fn refusal(
    host: &bmh_api::BareMetalHost,
    accepted: Option<&bmh_api::BareMetalHost>,
) -> Option<String> {
    if host.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let errors = crate::validate::validate(host, accepted);
    let texts: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    (!texts.is_empty()).then(|| texts.join("; "))
}

/// What a pass asks to persist; `None` when it changed nothing that is persisted.
fn staged<'a>(out: &'a PassOutcome, rec: &'a HostRecord) -> Option<Staged<'a>> {
    if out.deleted() {
        return Some(Staged {
            status: Change::Clear,
            bookkeeping: Change::Clear,
            removed_annotations: &out.removed_annotations,
            // The firmware objects go with their host (BMO's owner references).
            firmware_settings_status: Change::Clear,
            firmware_components_status: Change::Clear,
            data_image_status: Change::Keep,
        });
    }
    let firmware = out.firmware_changed;
    let staged = Staged {
        status: Change::when(out.save_status, rec.host.status.as_ref()),
        bookkeeping: Change::when(out.bookkeeping_changed || firmware, Some(&rec.book)),
        removed_annotations: &out.removed_annotations,
        firmware_settings_status: rec
            .firmware_settings
            .as_ref()
            .filter(|_| firmware)
            .map_or(Change::Keep, |s| Change::to(s.status.as_ref())),
        firmware_components_status: rec
            .firmware_components
            .as_ref()
            .filter(|_| firmware)
            .map_or(Change::Keep, |c| Change::to(c.status.as_ref())),
        data_image_status: rec
            .data_image
            .as_ref()
            .filter(|_| out.data_image_changed)
            .map_or(Change::Keep, |d| Change::to(d.status.as_ref())),
    };
    (!staged.is_empty()).then_some(staged)
}

#[cfg(test)]
mod admit_tests {
    use super::admit;
    use bmh_api::BareMetalHost;

    /// A provisioned host with boot MAC `mac`.
    fn provisioned(mac: &str) -> BareMetalHost {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "metal3.io/v1alpha1",
            "kind": "BareMetalHost",
            "metadata": {"name": "worker-0", "namespace": "default"},
            "spec": {
                "online": true,
                "bootMACAddress": mac,
                "bmc": {
                    "address": "ipmi://192.168.122.1:6233",
                    "credentialsName": "bmc-secret"
                }
            },
            "status": {"provisioning": {"state": "provisioned"}}
        }))
        .expect("a host")
    }

    /// BMO's validateChanges (baremetalhost_validation.go): a set boot MAC never changes.
    #[test]
    fn a_mac_change_is_refused_against_the_accepted_host_only() {
        let accepted = provisioned("00:11:22:33:44:01");
        let edited = provisioned("00:11:22:33:44:99");
        let error = admit(&edited, Some(&accepted)).unwrap_err().to_string();
        assert!(
            error.contains("spec.bootMACAddress")
                && error.contains("bootMACAddress can not be changed once it is set"),
            "{error}"
        );
        // Without a last accepted host only the create rules run: the new MAC is fine.
        admit(&edited, None).unwrap();
        // Reverted, or re-cased (compared case-insensitively as BMO does): accepted.
        admit(&accepted, Some(&accepted)).unwrap();
        admit(
            &provisioned("00:11:22:33:44:01".to_uppercase().as_str()),
            Some(&accepted),
        )
        .unwrap();
    }

    #[test]
    fn a_host_being_deleted_is_not_checked() {
        let accepted = provisioned("00:11:22:33:44:01");
        let mut edited = provisioned("00:11:22:33:44:99");
        edited.metadata.deletion_timestamp = Some("2026-01-01T00:00:00Z".into());
        admit(&edited, Some(&accepted)).unwrap();
    }
}
