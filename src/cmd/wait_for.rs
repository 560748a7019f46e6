//! What a wait waits for: `wait --for`'s forms (a state, `goal`, kubectl's `condition=`,
//! `jsonpath=` and `delete`) and the verbs' outcomes, each a test of one host and, where a host
//! resting at its goal can never meet it, the reason why.

use crate::error::{Error, Result};
use crate::record::HostRecord;
use crate::runner::Goal;
use bmh_api::{OperationalStatus, ProvisioningState};
use serde_json::Value;

type Met = Box<dyn Fn(Option<&HostRecord>) -> bool + Send + Sync>;
type Never = Box<dyn Fn(&HostRecord) -> Option<String> + Send + Sync>;

/// A condition on a host, as read (`None` when the host is gone).
pub struct Condition {
    met: Met,
    /// Why a host that does not meet it never will, when that is known.
    never: Option<Never>,
}

impl Condition {
    pub fn new(met: impl Fn(Option<&HostRecord>) -> bool + Send + Sync + 'static) -> Self {
        Self {
            met: Box::new(met),
            never: None,
        }
    }

    pub fn met(&self, rec: Option<&HostRecord>) -> bool {
        (self.met)(rec)
    }

    /// Why `rec`, which does not meet the condition, never will; `None` while it still may.
    pub fn never_met(&self, rec: &HostRecord) -> Option<String> {
        self.never.as_ref().and_then(|f| f(rec))
    }

    /// The condition, failing early for a host that rests at its goal without meeting it: a
    /// host at its goal stays there until its spec changes, so waiting would only time out.
    fn or_never_at_goal(mut self) -> Self {
        self.never = Some(Box::new(|rec: &HostRecord| {
            // An inspection asked for moves an `available` host again.
            let moving = rec.being_deleted()
                || (rec.host.metadata.annotations).contains_key(bmh_api::annotations::INSPECT);
            if moving || !at_goal(rec) {
                return None;
            }
            let state = rec.status().provisioning.state.as_str();
            Some(format!(
                "it rests at {state:?}, its goal, since {}",
                goal_reason(rec)
            ))
        }));
        self
    }
}

/// A condition on a host's status (a gone host meets none).
pub fn status_cond(f: fn(&HostRecord) -> bool) -> Condition {
    Condition::new(move |r: Option<&HostRecord>| r.is_some_and(f))
}

/// At the goal `provision` drives to, no error, and (with a BMC) powered as it should be.
fn at_goal(r: &HostRecord) -> bool {
    let s = r.status();
    let state = &s.provisioning.state;
    if !Goal::for_provision(r).reached_by(state) || s.operational_status != OperationalStatus::Ok {
        return false;
    }
    if *state == ProvisioningState::Unmanaged {
        return true;
    }
    let held_off = r
        .host
        .metadata
        .annotations
        .keys()
        .any(|k| bmh_api::annotations::is_reboot_annotation(k));
    held_off || s.powered_on == r.host.spec.online
}

/// What in the host's spec makes its goal what it is.
fn goal_reason(r: &HostRecord) -> &'static str {
    let spec = &r.host.spec;
    match Goal::for_provision(r) {
        Goal::State(ProvisioningState::Unmanaged) => "its spec has no BMC details",
        Goal::State(ProvisioningState::ExternallyProvisioned) => {
            "its spec has externallyProvisioned: true"
        }
        Goal::State(ProvisioningState::Provisioned) => "its spec has an image",
        _ if spec.image.as_ref().is_some_and(|i| !i.url.is_empty())
            || crate::machine::deploy_method(&spec.custom_deploy).is_some() =>
        {
            "its spec has online: false"
        }
        _ => "its spec has no image",
    }
}

/// What `--for` takes besides the provisioning states and kubectl's `condition=`/`jsonpath=`.
pub const CONDITIONS: &str = "goal detached error powered-on powered-off deleted delete";

/// The condition types bmhctl's status carries (BMO's).
const CONDITION_TYPES: [&str; 6] = [
    "Ready",
    "Manageable",
    "AvailableForProvisioning",
    "Provisioned",
    "Progressing",
    "Healthy",
];

fn norm(s: &str) -> String {
    s.trim().to_ascii_lowercase().replace(['-', '_'], " ")
}

/// `--for`: a state, `goal`, ..., `condition=TYPE[=STATUS]`, `jsonpath=EXPR[=VALUE]`, `delete`.
pub fn parse(text: &str) -> Result<Condition> {
    if let Some(rest) = text.strip_prefix("condition=") {
        return condition(rest);
    }
    if let Some(rest) = text.strip_prefix("jsonpath=") {
        return jsonpath(rest);
    }
    state(text)
}

fn state(text: &str) -> Result<Condition> {
    let want = norm(text);
    Ok(match want.as_str() {
        "goal" => status_cond(at_goal),
        "detached" => status_cond(|r| r.status().operational_status == OperationalStatus::Detached),
        "error" => status_cond(|r| r.status().operational_status == OperationalStatus::Error),
        "powered on" => status_cond(|r| r.status().powered_on),
        "powered off" => status_cond(|r| !r.status().powered_on),
        // Gone, or (a host in a file, whose document stays) marked with no finalizer left.
        "deleted" | "delete" => Condition::new(|r: Option<&HostRecord>| {
            r.is_none_or(|r| r.being_deleted() && r.book.finalizers.is_empty())
        }),
        _ => {
            let Some(known) = ProvisioningState::KNOWN
                .iter()
                .find(|k| !k.is_empty() && norm(k) == want)
            else {
                let mut states: Vec<&str> = ProvisioningState::KNOWN
                    .iter()
                    .copied()
                    .filter(|k| !k.is_empty())
                    .collect();
                states.extend(CONDITIONS.split(' '));
                let hint = crate::diagnostic::did_you_mean(text, states.iter().copied())
                    .map(|s| format!(" (did you mean {s}?)"))
                    .unwrap_or_default();
                return Err(Error::Usage(format!(
                    "unknown state {text:?} for --for{hint}; one of: {}, condition=TYPE[=STATUS], \
                     jsonpath=EXPR[=VALUE]",
                    states.join(", ")
                )));
            };
            let s = ProvisioningState::from(*known);
            Condition::new(move |r: Option<&HostRecord>| {
                r.is_some_and(|r| r.status().provisioning.state == s)
            })
            .or_never_at_goal()
        }
    })
}

/// kubectl's `condition=TYPE[=STATUS]` (STATUS `True` when not given), both case-insensitive.
fn condition(text: &str) -> Result<Condition> {
    let (name, want) = text.split_once('=').unwrap_or((text, "True"));
    let Some(ty) = CONDITION_TYPES
        .iter()
        .find(|t| t.eq_ignore_ascii_case(name))
        .copied()
    else {
        let hint = crate::diagnostic::did_you_mean(name, CONDITION_TYPES)
            .map(|s| format!(" (did you mean {s}?)"))
            .unwrap_or_default();
        return Err(Error::Usage(format!(
            "unknown condition {name:?} for --for=condition={hint}; a host's conditions are {}",
            CONDITION_TYPES.join(", ")
        )));
    };
    let want = want.to_string();
    let cond = Condition::new(move |r: Option<&HostRecord>| {
        r.is_some_and(|r| {
            (r.status().conditions.iter())
                .any(|c| c.type_ == ty && c.status.eq_ignore_ascii_case(&want))
        })
    });
    // The others follow the state and status, which rest with the host; health is the
    // provisioner's word and may change at any poll.
    Ok(match ty {
        "Healthy" => cond,
        _ => cond.or_never_at_goal(),
    })
}

/// kubectl's `jsonpath=EXPR=VALUE` (the value at EXPR, as text, is VALUE) and `jsonpath=EXPR`
/// (EXPR names a value), on the host as `get -o json` prints it.
fn jsonpath(text: &str) -> Result<Condition> {
    let bad = |why: &str| Error::Usage(format!("--for=jsonpath={text}: {why}"));
    let (expr, value) = match text.strip_prefix('{') {
        Some(inner) => {
            let end = inner.find('}').ok_or_else(|| bad("no closing }"))?;
            let rest = &inner[end + 1..];
            let value = match rest.strip_prefix('=') {
                Some(v) => Some(v.to_string()),
                None if rest.is_empty() => None,
                None => return Err(bad("expected =VALUE after the expression")),
            };
            (inner[..end].to_string(), value)
        }
        None => match text.split_once('=') {
            Some((e, v)) => (e.to_string(), Some(v.to_string())),
            None => (text.to_string(), None),
        },
    };
    let path = JsonPath::parse(&expr).map_err(|e| bad(&e))?;
    Ok(Condition::new(move |r: Option<&HostRecord>| {
        let Some(doc) = r.and_then(|r| super::get::object(r).ok()) else {
            return false;
        };
        let found = path.find(&doc);
        match &value {
            None => found.iter().any(|v| !v.is_null()),
            Some(want) => found.iter().any(|v| text_of(v) == *want),
        }
    }))
}

/// A value as kubectl's jsonpath prints it.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The jsonpath kubectl's `--for` is mostly given: `.a.b`, `[N]`, `[*]` and `[?(@.k=="v")]`.
#[derive(Debug, Clone, PartialEq)]
struct JsonPath(Vec<Step>);

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(usize),
    All,
    Filter(Vec<String>, String),
}

impl JsonPath {
    fn parse(expr: &str) -> std::result::Result<Self, String> {
        let mut steps = Vec::new();
        let mut rest = expr.trim();
        if rest.is_empty() {
            return Err("an empty expression".into());
        }
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('.') {
                let end = r.find(['.', '[']).unwrap_or(r.len());
                if end == 0 {
                    return Err(format!("a field name is missing at {rest:?}"));
                }
                steps.push(Step::Field(r[..end].to_string()));
                rest = &r[end..];
            } else if let Some(r) = rest.strip_prefix('[') {
                let end = r
                    .find(']')
                    .ok_or_else(|| format!("no closing ] in {rest:?}"))?;
                let inner = r[..end].trim();
                steps.push(if inner == "*" {
                    Step::All
                } else if let Some(f) = inner.strip_prefix("?(@.").and_then(|f| f.strip_suffix(')'))
                {
                    let (field, value) = f.split_once("==").ok_or_else(|| {
                        format!("a filter is [?(@.FIELD==\"VALUE\")], not {inner:?}")
                    })?;
                    let value = value.trim().trim_matches(['"', '\'']).to_string();
                    let field = field.trim().split('.').map(String::from).collect();
                    Step::Filter(field, value)
                } else {
                    Step::Index(
                        inner
                            .parse()
                            .map_err(|_| format!("{inner:?} is no index, * or filter"))?,
                    )
                });
                rest = &r[end + 1..];
            } else {
                return Err(format!("expected . or [ at {rest:?}"));
            }
        }
        Ok(Self(steps))
    }

    /// The values the path names in `doc`.
    fn find<'a>(&self, doc: &'a Value) -> Vec<&'a Value> {
        let mut now = vec![doc];
        for step in &self.0 {
            now = now
                .into_iter()
                .flat_map(|v| -> Vec<&Value> {
                    match (step, v) {
                        (Step::Field(f), Value::Object(m)) => m.get(f).into_iter().collect(),
                        (Step::Index(i), Value::Array(a)) => a.get(*i).into_iter().collect(),
                        (Step::All, Value::Array(a)) => a.iter().collect(),
                        (Step::All, Value::Object(m)) => m.values().collect(),
                        (Step::Filter(field, want), Value::Array(a)) => a
                            .iter()
                            .filter(|item| {
                                field
                                    .iter()
                                    .try_fold(*item, |v, f| v.get(f))
                                    .is_some_and(|v| text_of(v) == *want)
                            })
                            .collect(),
                        _ => Vec::new(),
                    }
                })
                .collect();
        }
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmh_api::Condition as HostCondition;

    fn host(state: ProvisioningState, image: bool) -> HostRecord {
        let mut r = HostRecord::default();
        r.host.metadata.name = "w0".into();
        r.host.spec.online = true;
        r.host.spec.bmc = Some(bmh_api::BmcDetails {
            address: "ipmi://10.0.0.1".into(),
            credentials_name: "bmc".into(),
            ..Default::default()
        });
        if image {
            r.host.spec.image = Some(bmh_api::Image {
                url: "http://x/os.img".into(),
                ..Default::default()
            });
        }
        let s = r.host.status.get_or_insert_with(Default::default);
        s.provisioning.state = state;
        s.operational_status = OperationalStatus::Ok;
        s.powered_on = true;
        s.conditions.push(HostCondition {
            type_: "Ready".into(),
            status: "False".into(),
            ..Default::default()
        });
        r
    }

    #[test]
    fn kubectl_conditions_are_read_from_the_status_case_insensitively() {
        let r = host(ProvisioningState::Available, false);
        assert!(!parse("condition=Ready").unwrap().met(Some(&r)));
        assert!(parse("condition=ready=false").unwrap().met(Some(&r)));
        assert!(parse("condition=READY=False").unwrap().met(Some(&r)));
        assert_eq!(
            parse("condition=Redy").err().unwrap().to_string(),
            "unknown condition \"Redy\" for --for=condition= (did you mean Ready?); a host's \
             conditions are Ready, Manageable, AvailableForProvisioning, Provisioned, \
             Progressing, Healthy"
        );
    }

    #[test]
    fn jsonpath_with_a_value_and_for_existence() {
        let r = host(ProvisioningState::Provisioned, true);
        let met = |t: &str| parse(t).unwrap().met(Some(&r));
        assert!(met("jsonpath={.status.provisioning.state}=provisioned"));
        assert!(!met("jsonpath={.status.provisioning.state}=available"));
        assert!(met("jsonpath={.spec.image.url}"));
        assert!(!met("jsonpath={.spec.consumerRef}"));
        assert!(met(
            "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}=False"
        ));
        assert!(met("jsonpath={.status.conditions[0].type}=Ready"));
        assert!(met("jsonpath=.status.poweredOn=true"));
        assert_eq!(
            parse("jsonpath={.status").err().unwrap().to_string(),
            "--for=jsonpath={.status: no closing }"
        );
        assert!(
            !parse("jsonpath={.status.poweredOn}=true")
                .unwrap()
                .met(None)
        );
    }

    #[test]
    fn a_host_resting_at_another_goal_never_meets_a_state() {
        let cond = parse("provisioned").unwrap();
        let spare = host(ProvisioningState::Available, false);
        assert!(!cond.met(Some(&spare)));
        assert_eq!(
            cond.never_met(&spare).as_deref(),
            Some("it rests at \"available\", its goal, since its spec has no image")
        );
        // On its way (its goal is provisioned), or asked to inspect: it may yet.
        let worker = host(ProvisioningState::Available, true);
        assert_eq!(cond.never_met(&worker), None);
        let mut inspected = host(ProvisioningState::Available, false);
        (inspected.host.metadata.annotations)
            .insert(bmh_api::annotations::INSPECT.into(), String::new());
        assert_eq!(cond.never_met(&inspected), None);
        // `goal`, power and jsonpath never fail early.
        for t in ["goal", "powered-off", "jsonpath={.spec.consumerRef}"] {
            assert_eq!(parse(t).unwrap().never_met(&spare), None, "{t}");
        }
        assert!(
            parse("condition=Ready")
                .unwrap()
                .never_met(&spare)
                .is_some()
        );
    }

    #[test]
    fn delete_is_deleted() {
        assert!(parse("delete").unwrap().met(None));
        assert!(parse("deleted").unwrap().met(None));
    }
}
