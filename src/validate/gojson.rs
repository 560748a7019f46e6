//! What Go's `encoding/json` says about an annotation's JSON, for the webhook's annotation rules:
//! BMO's Go structs restated as [`Shape`]s, and a value checked against them as Go decodes
//! (names matched exactly or else case-insensitively, `null` anywhere, first problem reported),
//! with Go's error texts (syntax errors are serde_json's).

use serde_json::Value;

/// A Go type as `encoding/json` sees it.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// A string kind (Go type name for messages).
    Str(&'static str),
    Bool,
    /// An integer kind: Go type name and range.
    Int(&'static str, i64, i64),
    /// A float kind.
    Float(&'static str),
    /// `metav1.Time`: an RFC 3339 string.
    Time,
    /// A slice: Go type name and element.
    List(&'static str, &'static Shape),
    /// A struct: Go type name (package-qualified) and its JSON fields.
    Struct(&'static str, &'static [(&'static str, Shape)]),
}

const STRING: Shape = Shape::Str("string");
const INT: Shape = Shape::Int("int", i64::MIN, i64::MAX);
const INT64: Shape = Shape::Int("int64", i64::MIN, i64::MAX);

const SECRET_REFERENCE: Shape = Shape::Struct(
    "v1.SecretReference",
    &[("name", STRING), ("namespace", STRING)],
);

const ROOT_DEVICE_HINTS: Shape = Shape::Struct(
    "v1alpha1.RootDeviceHints",
    &[
        ("deviceName", STRING),
        ("hctl", STRING),
        ("model", STRING),
        ("vendor", STRING),
        ("serialNumber", STRING),
        ("minSizeGigabytes", INT),
        ("wwn", STRING),
        ("wwnWithExtension", STRING),
        ("wwnVendorExtension", STRING),
        ("rotational", Shape::Bool),
    ],
);

const HARDWARE_RAID_VOLUME: Shape = Shape::Struct(
    "v1alpha1.HardwareRAIDVolume",
    &[
        ("sizeGibibytes", INT),
        ("level", STRING),
        ("name", STRING),
        ("rotational", Shape::Bool),
        ("numberOfPhysicalDisks", INT),
        ("controller", STRING),
        ("physicalDisks", Shape::List("[]string", &STRING)),
    ],
);

const SOFTWARE_RAID_VOLUME: Shape = Shape::Struct(
    "v1alpha1.SoftwareRAIDVolume",
    &[
        ("rootVolume", Shape::Bool),
        ("sizeGibibytes", INT),
        ("level", STRING),
        (
            "physicalDisks",
            Shape::List("[]v1alpha1.RootDeviceHints", &ROOT_DEVICE_HINTS),
        ),
    ],
);

const RAID_CONFIG: Shape = Shape::Struct(
    "v1alpha1.RAIDConfig",
    &[
        (
            "hardwareRAIDVolumes",
            Shape::List("[]v1alpha1.HardwareRAIDVolume", &HARDWARE_RAID_VOLUME),
        ),
        (
            "softwareRAIDVolumes",
            Shape::List("[]v1alpha1.SoftwareRAIDVolume", &SOFTWARE_RAID_VOLUME),
        ),
    ],
);

const FIRMWARE_CONFIG: Shape = Shape::Struct(
    "v1alpha1.FirmwareConfig",
    &[
        ("virtualizationEnabled", Shape::Bool),
        ("simultaneousMultithreadingEnabled", Shape::Bool),
        ("sriovEnabled", Shape::Bool),
    ],
);

const IMAGE: Shape = Shape::Struct(
    "v1alpha1.Image",
    &[
        ("url", STRING),
        ("checksum", STRING),
        ("checksumType", Shape::Str("v1alpha1.ChecksumType")),
        ("format", STRING),
        ("ociAuthSecretName", STRING),
    ],
);

const PROVISION_STATUS: Shape = Shape::Struct(
    "v1alpha1.ProvisionStatus",
    &[
        ("state", Shape::Str("v1alpha1.ProvisioningState")),
        ("ID", STRING),
        ("image", IMAGE),
        ("rootDeviceHints", ROOT_DEVICE_HINTS),
        ("bootMode", Shape::Str("v1alpha1.BootMode")),
        ("raid", RAID_CONFIG),
        ("firmware", FIRMWARE_CONFIG),
        (
            "customDeploy",
            Shape::Struct("v1alpha1.CustomDeploy", &[("method", STRING)]),
        ),
    ],
);

const CREDENTIALS_STATUS: Shape = Shape::Struct(
    "v1alpha1.CredentialsStatus",
    &[
        ("credentials", SECRET_REFERENCE),
        ("credentialsVersion", STRING),
    ],
);

const OPERATION_METRIC: Shape = Shape::Struct(
    "v1alpha1.OperationMetric",
    &[("start", Shape::Time), ("end", Shape::Time)],
);

const OPERATION_HISTORY: Shape = Shape::Struct(
    "v1alpha1.OperationHistory",
    &[
        ("register", OPERATION_METRIC),
        ("inspect", OPERATION_METRIC),
        ("provision", OPERATION_METRIC),
        ("deprovision", OPERATION_METRIC),
    ],
);

const CONDITION: Shape = Shape::Struct(
    "v1.Condition",
    &[
        ("type", STRING),
        ("status", Shape::Str("v1.ConditionStatus")),
        ("observedGeneration", INT64),
        ("lastTransitionTime", Shape::Time),
        ("reason", STRING),
        ("message", STRING),
    ],
);

const VLAN_ID: Shape = Shape::Int("v1alpha1.VLANID", i32::MIN as i64, i32::MAX as i64);

const NIC: Shape = Shape::Struct(
    "v1alpha1.NIC",
    &[
        ("name", STRING),
        ("model", STRING),
        ("mac", STRING),
        ("ip", STRING),
        ("speedGbps", INT),
        (
            "vlans",
            Shape::List(
                "[]v1alpha1.VLAN",
                &Shape::Struct("v1alpha1.VLAN", &[("id", VLAN_ID), ("name", STRING)]),
            ),
        ),
        ("vlanId", VLAN_ID),
        ("pxe", Shape::Bool),
        (
            "lldp",
            Shape::Struct(
                "v1alpha1.LLDP",
                &[
                    ("switchID", STRING),
                    ("portID", STRING),
                    ("switchSystemName", STRING),
                ],
            ),
        ),
        ("pciAddress", STRING),
    ],
);

const STORAGE: Shape = Shape::Struct(
    "v1alpha1.Storage",
    &[
        ("name", STRING),
        ("alternateNames", Shape::List("[]string", &STRING)),
        ("rotational", Shape::Bool),
        ("type", Shape::Str("v1alpha1.DiskType")),
        (
            "sizeBytes",
            Shape::Int("v1alpha1.Capacity", i64::MIN, i64::MAX),
        ),
        ("vendor", STRING),
        ("model", STRING),
        ("serialNumber", STRING),
        ("wwn", STRING),
        ("wwnVendorExtension", STRING),
        ("wwnWithExtension", STRING),
        ("hctl", STRING),
    ],
);

/// `HardwareDetails` (the `inspect.metal3.io/hardwaredetails` annotation, `status.hardware`).
pub const HARDWARE_DETAILS: Shape = Shape::Struct(
    "v1alpha1.HardwareDetails",
    &[
        (
            "systemVendor",
            Shape::Struct(
                "v1alpha1.HardwareSystemVendor",
                &[
                    ("manufacturer", STRING),
                    ("productName", STRING),
                    ("serialNumber", STRING),
                ],
            ),
        ),
        (
            "firmware",
            Shape::Struct(
                "v1alpha1.Firmware",
                &[(
                    "bios",
                    Shape::Struct(
                        "v1alpha1.BIOS",
                        &[("date", STRING), ("vendor", STRING), ("version", STRING)],
                    ),
                )],
            ),
        ),
        ("ramMebibytes", INT),
        ("nics", Shape::List("[]v1alpha1.NIC", &NIC)),
        ("storage", Shape::List("[]v1alpha1.Storage", &STORAGE)),
        (
            "cpu",
            Shape::Struct(
                "v1alpha1.CPU",
                &[
                    ("arch", STRING),
                    ("model", STRING),
                    ("clockMegahertz", Shape::Float("v1alpha1.ClockSpeed")),
                    ("flags", Shape::List("[]string", &STRING)),
                    ("count", INT),
                ],
            ),
        ),
        ("hostname", STRING),
    ],
);

/// `BareMetalHostStatus` (the `baremetalhost.metal3.io/status` annotation).
pub const HOST_STATUS: Shape = Shape::Struct(
    "v1alpha1.BareMetalHostStatus",
    &[
        (
            "operationalStatus",
            Shape::Str("v1alpha1.OperationalStatus"),
        ),
        ("errorType", Shape::Str("v1alpha1.ErrorType")),
        ("lastUpdated", Shape::Time),
        ("hardwareProfile", STRING),
        ("hardware", HARDWARE_DETAILS),
        ("provisioning", PROVISION_STATUS),
        ("goodCredentials", CREDENTIALS_STATUS),
        ("triedCredentials", CREDENTIALS_STATUS),
        ("errorMessage", STRING),
        ("poweredOn", Shape::Bool),
        ("operationHistory", OPERATION_HISTORY),
        ("errorCount", INT),
        ("provisioningFailCount", INT),
        ("lastAttemptedImage", IMAGE),
        ("conditions", Shape::List("[]v1.Condition", &CONDITION)),
    ],
);

/// `RebootAnnotationArguments` (the `reboot.metal3.io[/<key>]` annotations).
pub const REBOOT_ARGUMENTS: Shape = Shape::Struct(
    "v1alpha1.RebootAnnotationArguments",
    &[
        ("mode", Shape::Str("v1alpha1.RebootMode")),
        ("force", Shape::Bool),
    ],
);

/// `DetachedAnnotationArguments` (the `baremetalhost.metal3.io/detached` annotation).
pub const DETACHED_ARGUMENTS: Shape = Shape::Struct(
    "v1alpha1.DetachedAnnotationArguments",
    &[
        ("deleteAction", Shape::Str("v1alpha1.DetachedDeleteAction")),
        ("force", Shape::Bool),
    ],
);

/// What `json.Unmarshal` of `text` leaves in a struct of string and bool fields (`shape`), and
/// whether it returns no error: every key naming a field in any case sets it in turn, `null`
/// leaves it, a value of the wrong type is skipped (an error, the rest still decoded); text that
/// is not JSON, or not an object, decodes nothing (an error; `null` is none).
pub fn unmarshal_fields(text: &str, shape: &Shape) -> (serde_json::Map<String, Value>, bool) {
    let mut out = serde_json::Map::new();
    let Shape::Struct(_, fields) = shape else {
        return (out, false);
    };
    let object = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => o,
        Ok(Value::Null) => return (out, true),
        _ => return (out, false),
    };
    let mut ok = true;
    for (key, value) in object {
        let Some((name, field)) = fields.iter().find(|(n, _)| n.eq_ignore_ascii_case(&key)) else {
            continue;
        };
        match (field, &value) {
            (_, Value::Null) => {}
            (Shape::Str(_), Value::String(_)) | (Shape::Bool, Value::Bool(_)) => {
                out.insert(name.to_string(), value);
            }
            _ => ok = false,
        }
    }
    (out, ok)
}

/// A `json.Decoder` with `DisallowUnknownFields` decoding one value from `text` into `shape`
/// (trailing text after the first value is not read, as with Go's `Decode`).
pub fn decode_strict(text: &str, shape: &Shape) -> Result<Value, String> {
    let value = match serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .next()
    {
        None => return Err("EOF".into()),
        Some(Err(e)) if e.is_eof() => return Err("unexpected EOF".into()),
        Some(Err(e)) => return Err(syntax_text(&e)),
        Some(Ok(v)) => v,
    };
    check(&value, shape, true)?;
    Ok(value)
}

/// `json.Unmarshal` of the whole of `text` into `shape` (unknown fields ignored).
pub fn unmarshal(text: &str, shape: &Shape) -> Result<Value, String> {
    let value = match serde_json::from_str::<Value>(text) {
        Err(e) if e.is_eof() => return Err("unexpected end of JSON input".into()),
        Err(e) => return Err(syntax_text(&e)),
        Ok(v) => v,
    };
    check(&value, shape, false)?;
    Ok(value)
}

/// serde_json's description of a syntax error, without its position suffix.
fn syntax_text(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The value Go would store in struct field `name`: the last key matching it in any case.
pub fn field<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    object
        .as_object()?
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
        .next_back()
}

/// What Go stores from a value [`decode_strict`] accepted, as JSON with the fields' own names:
/// a key matched case-insensitively is renamed to its field, a `null` field is left out (Go
/// leaves the field as it was) and a `null` list element is the element type's zero value.
pub fn canonical(value: &Value, shape: &Shape) -> Value {
    match (shape, value) {
        (Shape::Struct(_, fields), Value::Object(_)) => Value::Object(
            fields
                .iter()
                .filter_map(|(name, sub)| {
                    let v = field(value, name).filter(|v| !v.is_null())?;
                    Some((name.to_string(), canonical(v, sub)))
                })
                .collect(),
        ),
        (Shape::List(_, element), Value::Array(items)) => Value::Array(
            items
                .iter()
                .map(|v| match v {
                    Value::Null => zero(element),
                    v => canonical(v, element),
                })
                .collect(),
        ),
        _ => value.clone(),
    }
}

/// Go's zero value of `shape`, as JSON.
fn zero(shape: &Shape) -> Value {
    match shape {
        Shape::Str(_) => Value::from(""),
        Shape::Bool => Value::from(false),
        Shape::Int(..) => Value::from(0),
        Shape::Float(_) => Value::from(0.0),
        Shape::Time => Value::Null,
        Shape::List(..) => Value::Array(Vec::new()),
        Shape::Struct(..) => Value::Object(serde_json::Map::new()),
    }
}

/// [`field`] as a string (`""` when absent, null or not a string).
pub fn field_str<'a>(object: &'a Value, name: &str) -> &'a str {
    field(object, name).and_then(Value::as_str).unwrap_or("")
}

struct Walk<'s> {
    strict: bool,
    /// The innermost struct's Go name (unqualified) and the JSON field path.
    stack: Vec<(&'s str, String)>,
}

fn check(value: &Value, shape: &Shape, strict: bool) -> Result<(), String> {
    let stack = Vec::new();
    Walk { strict, stack }.value(value, shape)
}

fn kind_of(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(_) => "number".into(),
        Value::String(_) => "string".into(),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
    }
}

fn go_name(shape: &Shape) -> &'static str {
    match shape {
        Shape::Str(n) | Shape::Int(n, _, _) | Shape::Float(n) | Shape::List(n, _) => n,
        Shape::Struct(n, _) => n,
        Shape::Bool => "bool",
        Shape::Time => "v1.Time",
    }
}

impl<'s> Walk<'s> {
    fn type_error(&self, what: String, shape: &Shape) -> String {
        let into = match self.stack.last() {
            Some((st, _)) => {
                let path: Vec<&str> = self.stack.iter().map(|(_, f)| f.as_str()).collect();
                format!("Go struct field {st}.{}", path.join("."))
            }
            None => "Go value".to_string(),
        };
        format!(
            "json: cannot unmarshal {what} into {into} of type {}",
            go_name(shape)
        )
    }

    fn value(&mut self, v: &Value, shape: &'s Shape) -> Result<(), String> {
        if v.is_null() {
            return Ok(());
        }
        match shape {
            Shape::Str(_) if v.is_string() => Ok(()),
            Shape::Bool if v.is_boolean() => Ok(()),
            Shape::Float(_) if v.is_number() => Ok(()),
            Shape::Int(_, min, max) if v.is_number() => match v.as_i64() {
                Some(n) if n >= *min && n <= *max => Ok(()),
                _ => Err(self.type_error(format!("number {v}"), shape)),
            },
            Shape::Time => match v.as_str() {
                None => Err(format!(
                    "json: cannot unmarshal {} into Go value of type string",
                    kind_of(v)
                )),
                Some(s) => chrono::DateTime::parse_from_rfc3339(s)
                    .map(|_| ())
                    .map_err(|_| {
                        format!(
                            "parsing time {} as \"2006-01-02T15:04:05Z07:00\"",
                            super::golib::quote(s)
                        )
                    }),
            },
            Shape::List(_, element) => match v.as_array() {
                Some(items) => items.iter().try_for_each(|item| self.value(item, element)),
                None => Err(self.type_error(kind_of(v), shape)),
            },
            Shape::Struct(name, fields) => {
                let Some(object) = v.as_object() else {
                    return Err(self.type_error(kind_of(v), shape));
                };
                let short = name.rsplit('.').next().unwrap_or(name);
                for (key, item) in object {
                    let found = fields
                        .iter()
                        .find(|(f, _)| f == key)
                        .or_else(|| fields.iter().find(|(f, _)| f.eq_ignore_ascii_case(key)));
                    match found {
                        Some((f, s)) => {
                            self.stack.push((short, (*f).to_string()));
                            let r = self.value(item, s);
                            self.stack.pop();
                            r?;
                        }
                        None if self.strict => {
                            return Err(format!(
                                "json: unknown field {}",
                                super::golib::quote(key)
                            ));
                        }
                        None => {}
                    }
                }
                Ok(())
            }
            _ => Err(self.type_error(kind_of(v), shape)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_decode_like_go() {
        assert!(decode_strict(r#"{"operationalStatus":"OK"} trailing"#, &HOST_STATUS).is_ok());
        assert_eq!(
            decode_strict(r#"{"x":1}"#, &HOST_STATUS).unwrap_err(),
            "json: unknown field \"x\""
        );
        assert_eq!(
            decode_strict(r#"{"operationalStatus":"OK""#, &HOST_STATUS).unwrap_err(),
            "unexpected EOF"
        );
        assert_eq!(decode_strict("  ", &HOST_STATUS).unwrap_err(), "EOF");
        assert_eq!(
            decode_strict(r#"{"provisioning":{"state":3}}"#, &HOST_STATUS).unwrap_err(),
            "json: cannot unmarshal number into Go struct field ProvisionStatus.provisioning.state of type v1alpha1.ProvisioningState"
        );
        assert_eq!(
            decode_strict(r#""x""#, &HOST_STATUS).unwrap_err(),
            "json: cannot unmarshal string into Go value of type v1alpha1.BareMetalHostStatus"
        );
        assert_eq!(
            decode_strict(r#"{"errorCount":1.5}"#, &HOST_STATUS).unwrap_err(),
            "json: cannot unmarshal number 1.5 into Go struct field BareMetalHostStatus.errorCount of type int"
        );
        assert!(
            decode_strict(r#"{"lastUpdated":"yesterday"}"#, &HOST_STATUS)
                .unwrap_err()
                .starts_with("parsing time \"yesterday\"")
        );
        assert!(
            decode_strict(
                r#"{"lastUpdated":"2024-01-01T00:00:00Z","hardware":null}"#,
                &HOST_STATUS
            )
            .is_ok()
        );
        // The first problem in document order wins.
        assert_eq!(
            decode_strict(r#"{"errorCount":"x","bogus":1}"#, &HOST_STATUS).unwrap_err(),
            "json: cannot unmarshal string into Go struct field BareMetalHostStatus.errorCount of type int"
        );
        assert_eq!(
            decode_strict(r#"{"nics":[{"vlanId":4294967296}]}"#, &HARDWARE_DETAILS).unwrap_err(),
            "json: cannot unmarshal number 4294967296 into Go struct field NIC.nics.vlanId of type v1alpha1.VLANID"
        );
    }

    #[test]
    fn lenient_unmarshal_like_go() {
        assert!(unmarshal(r#"{"mode":"hard","other":1}"#, &REBOOT_ARGUMENTS).is_ok());
        assert!(unmarshal("null", &REBOOT_ARGUMENTS).is_ok());
        assert_eq!(
            unmarshal(r#"{"mode":"#, &REBOOT_ARGUMENTS).unwrap_err(),
            "unexpected end of JSON input"
        );
        assert!(unmarshal(r#"{"mode":"hard"} x"#, &REBOOT_ARGUMENTS).is_err());
        assert_eq!(
            unmarshal(r#"{"force":"yes"}"#, &REBOOT_ARGUMENTS).unwrap_err(),
            "json: cannot unmarshal string into Go struct field RebootAnnotationArguments.force of type bool"
        );
    }

    #[test]
    fn fields_match_case_insensitively_last_wins() {
        let v: Value = serde_json::from_str(r#"{"Mode":"a","mode":"b"}"#).unwrap();
        assert_eq!(field_str(&v, "mode"), "b");
        assert_eq!(field_str(&v, "force"), "");
    }
}
