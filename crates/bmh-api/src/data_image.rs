//! `DataImage` (metal3.io/v1alpha1): an image attached to its host as virtual media.

use crate::meta::{Extra, ObjectMeta};
use serde::{Deserialize, Serialize};

/// `kind` of a DataImage.
pub const DATA_IMAGE_KIND: &str = "DataImage";

/// BMO's finalizer on a DataImage: held until the image is detached.
pub const DATA_IMAGE_FINALIZER: &str = "dataimage.metal3.io";

/// A DataImage: an image BMO attaches as virtual media to the provisioned host of the same name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DataImage {
    /// `apiVersion`: `metal3.io/v1alpha1`.
    pub api_version: String,
    /// `kind`: `DataImage`.
    pub kind: String,
    /// Named like its host; held with [`DATA_IMAGE_FINALIZER`] until the image is detached.
    pub metadata: ObjectMeta,
    /// `spec`: the image to attach.
    pub spec: DataImageSpec,
    /// `status`: what is attached and the errors; absent until BMO first handles the DataImage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<DataImageStatus>,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec` of a DataImage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DataImageSpec {
    /// `url`: the image to attach to the host.
    pub url: String,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// As BMO's Go type: `attachedImage` and `error` are structs, so they are always written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DataImageStatus {
    /// `lastReconciled`: when the host controller last looked at the image (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_reconciled: Option<String>,
    /// `attachedImage`: the image attached now.
    pub attached_image: AttachedImageReference,
    /// `error`: count and last message of attach and detach errors.
    pub error: DataImageError,
    /// Status fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The image attached now (empty URL: none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachedImageReference {
    /// `url`: the attached image's URL.
    #[serde(default)]
    pub url: String,
}

/// How many attach/detach/status errors in a row, and the last one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DataImageError {
    /// `count`: failed attempts since the last success; drives the retry backoff.
    pub count: i64,
    /// `message`: the last error; empty after a success.
    pub message: String,
}

impl DataImage {
    /// The status, or an empty one when absent.
    pub fn status(&self) -> DataImageStatus {
        self.status.clone().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_bmos_field_names() {
        let text = r#"{"apiVersion":"metal3.io/v1alpha1","kind":"DataImage",
            "metadata":{"name":"worker-0","namespace":"ns"},
            "spec":{"url":"http://x/a.iso"},
            "status":{"lastReconciled":"2026-01-01T00:00:00Z","attachedImage":{"url":"http://x/a.iso"},
                      "error":{"count":2,"message":"boom"}}}"#;
        let d: DataImage = serde_json::from_str(text).unwrap();
        assert_eq!(d.spec.url, "http://x/a.iso");
        let st = d.status();
        assert_eq!(st.attached_image.url, "http://x/a.iso");
        assert_eq!((st.error.count, st.error.message.as_str()), (2, "boom"));
        let back = serde_json::to_value(&d).unwrap();
        assert_eq!(back["status"]["error"]["count"], 2);
        assert_eq!(back["status"]["attachedImage"]["url"], "http://x/a.iso");
    }

    #[test]
    fn an_empty_status_still_writes_its_structs_as_go_does() {
        let v = serde_json::to_value(DataImageStatus::default()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"attachedImage": {"url": ""}, "error": {"count": 0, "message": ""}})
        );
    }
}
