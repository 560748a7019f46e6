//! BMCEventSubscription documents in the user's files, whose `status:` is written back.

use super::parse::OtherDocument;
use crate::diagnostic::Diagnostic;
use crate::error::Error;
use bmh_api::{BMC_EVENT_SUBSCRIPTION_KIND, BmcEventSubscription, ObjectKey};

/// A subscription document of the files, typed.
#[derive(Debug, Clone)]
pub(crate) struct SubscriptionDoc {
    /// The file as the user gave it.
    pub(super) file: std::path::PathBuf,
    pub(super) doc: usize,
    pub(crate) sub: BmcEventSubscription,
}

/// The subscriptions among `documents` (they were typed and checked at parse time).
pub(crate) fn subscription_docs(documents: &[OtherDocument]) -> Vec<SubscriptionDoc> {
    documents
        .iter()
        .filter(|d| d.is_subscription())
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
