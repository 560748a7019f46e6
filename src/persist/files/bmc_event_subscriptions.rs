//! BMCEventSubscription documents in the user's files: typed and checked with BMO's admission
//! rules while parsing (problems at `file:line:column`), then kept by the [`super::file_source`]
//! so their controller can read them and write their `status:` back into the file, as a host's
//! is. Only a file holding a BareMetalHost is ever written, so a subscription whose status is to
//! be written must be in one.

use super::host_file::HostFile;
use super::inventory::OtherDocument;
use super::strict::{Extras, Seg};
use super::yaml_file::PathSeg;
use crate::diagnostic::{Diagnostic, Position};
use crate::error::{Error, Result};
use bmh_api::{
    API_VERSION, BMC_EVENT_SUBSCRIPTION_KIND, BmcEventSubscription, BmcEventSubscriptionStatus,
    ObjectKey,
};

impl Extras for BmcEventSubscription {
    fn extras(&self, out: &mut Vec<Vec<Seg>>) {
        let at = |path: &[&str], extra: &bmh_api::meta::Extra, out: &mut Vec<Vec<Seg>>| {
            for k in extra.keys() {
                let mut p: Vec<Seg> = path.iter().map(|s| Seg::Key(s.to_string())).collect();
                p.push(Seg::Key(k.clone()));
                out.push(p);
            }
        };
        at(&[], &self.extra, out);
        super::strict::meta_extras(&self.metadata, out);
        at(&["spec"], &self.spec.extra, out);
        if let Some(status) = &self.status {
            at(&["status"], &status.extra, out);
        }
    }
}

/// BMO's admission rules for a subscription document, at the field each names.
pub(super) fn admission(
    sub: &BmcEventSubscription,
    key: &ObjectKey,
    at: &dyn Fn(&[PathSeg]) -> Position,
) -> Vec<Diagnostic> {
    sub.validate()
        .into_iter()
        .map(|(field, message)| {
            let segs: Vec<PathSeg> = field.split('.').map(PathSeg::Key).collect();
            Diagnostic::new(message)
                .at(at(&segs))
                .object(BMC_EVENT_SUBSCRIPTION_KIND, key)
                .field(field)
        })
        .collect()
}

/// Whether a loaded document is a subscription.
pub(super) fn is_subscription(d: &OtherDocument) -> bool {
    d.api_version == API_VERSION && d.kind == BMC_EVENT_SUBSCRIPTION_KIND
}

/// A subscription document of the files, typed.
#[derive(Debug, Clone)]
pub(super) struct SubscriptionDoc {
    /// The file as the user gave it.
    pub(super) file: std::path::PathBuf,
    pub(super) doc: usize,
    pub(super) sub: BmcEventSubscription,
}

/// The subscriptions among `documents` (they were typed and checked at parse time).
pub(super) fn subscription_docs(documents: &[OtherDocument]) -> Vec<SubscriptionDoc> {
    documents
        .iter()
        .filter(|d| is_subscription(d))
        .filter_map(|d| {
            let mut sub: BmcEventSubscription = serde_json::from_value(d.value.clone()).ok()?;
            if sub.metadata.namespace.is_empty() {
                sub.metadata.namespace = d.namespace.clone();
            }
            Some(SubscriptionDoc {
                file: d.file.clone(),
                doc: d.doc,
                sub,
            })
        })
        .collect()
}

/// Stages and writes the subscription's status into its document.
pub(super) fn write_status(
    file: &mut HostFile,
    doc: usize,
    status: &BmcEventSubscriptionStatus,
) -> Result<()> {
    file.stage_status(doc, Some(status))?;
    file.commit()?;
    Ok(())
}

/// The error of a subscription whose file holds no host (bmhctl never writes such a file).
pub(super) fn not_in_a_host_file(d: &SubscriptionDoc, key: &ObjectKey) -> Error {
    Error::invalid(
        Diagnostic::new(
            "bmhctl writes a BMCEventSubscription's status only into a file holding a \
             BareMetalHost; move it into one",
        )
        .in_file(&d.file)
        .object(BMC_EVENT_SUBSCRIPTION_KIND, key),
    )
}
