//! `bmhctl plan` and the `--dry-run`s: each host's path to its goal ([`crate::plan`]).

use super::options::Place;
use super::output::{self, API_VERSION};
use super::{ResultFormat, SourceArgs};
use crate::clock::{Clock, SystemClock, format_time};
use crate::error::{Error, Result};
use crate::machine::MachineConfig;
use crate::plan::{HostPlan, Live, Planner};
use crate::record::HostRecord;
use crate::runner::Goal;
use crate::selection::HostSelection;
use bmh_api::ProvisioningState as S;
use clap::{Args, ValueEnum};
use serde_json::{Value, json};

#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The hosts (NAME, NAMESPACE/NAME or TYPE/NAME, after an optional type such as `bmh`); all
    /// hosts when none is given.
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
    /// Only hosts whose labels match (kubectl syntax).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// The command whose goal is planned: `provision` (on the store: what `watch` would do,
    /// hosts being deleted included), `deprovision` or `delete`.
    #[arg(long = "for", value_enum, default_value_t = Intent::Provision, value_name = "COMMAND")]
    pub intent: Intent,
    /// The provisioner whose hosts these are: `fixture` or a plugin NAME; a plugin that
    /// answers read-only questions (ironic) is asked for each registered host's node.
    #[arg(
        long,
        env = "BMHCTL_PROVISIONER",
        default_value = "ironic",
        value_name = "NAME"
    )]
    pub provisioner: String,
    /// Provisioning attempts per image before a host gives up (0 = unlimited).
    #[arg(long, default_value_t = 5, value_name = "N",
          value_parser = |s: &str| super::whole_number(s, 0),
          allow_negative_numbers = true)]
    pub max_provisioning_retries: u32,
    #[arg(short, long, value_enum, default_value_t = ResultFormat::Table)]
    pub output: ResultFormat,
}

/// Which command's goal a plan is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Intent {
    Provision,
    Deprovision,
    Delete,
}

pub fn plan(
    args: PlanArgs,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    super::options::hosts_not_files("plan", &args.source, &args.hosts)?;
    let place = super::options::place(&args.source)?;
    let selection = HostSelection::new(&args.hosts, args.selector.as_deref())?;
    run(
        args.intent,
        place,
        selection,
        &args.provisioner,
        args.max_provisioning_retries,
        args.output,
        input,
        provisioners,
    )
}

pub fn dry_run(
    intent: Intent,
    place: Place,
    selection: HostSelection,
    args: &super::RunArgs,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    let drive = &args.drive;
    run(
        intent,
        place,
        selection,
        &drive.provisioner,
        drive.max_provisioning_retries,
        args.output,
        input,
        provisioners,
    )
}

#[allow(clippy::too_many_arguments)]
fn run(
    intent: Intent,
    place: Place,
    selection: HostSelection,
    name: &str,
    max_provisioning_retries: u32,
    output: ResultFormat,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    super::options::missing_inputs(name, place.paths())?;
    // BMO's timing: nothing asks the provisioner which hosts are due. A provisioner that cannot
    // be loaded (no plugin, no Ironic configured) leaves the plan to the status and spec.
    let provisioner = match crate::provisioners::resolve(
        name,
        crate::provisioners::Asked::Nothing,
        input,
        provisioners,
    ) {
        Ok(p) => Some(p),
        Err(e @ Error::Provisioner { .. }) => {
            crate::eprintln_quiet!("warning: {e}; planning from the hosts' status and spec alone");
            None
        }
        Err(e) => return Err(e),
    };
    let load_options = match &provisioner {
        Some(p) => p.load_options.clone(),
        None => crate::persist::LoadOptions::with_input(input),
    };
    let (records, objects) = crate::persist::to_drive::snapshot(&place, &selection, &load_options)?;
    let fixture = name == crate::provisioners::fixture::NAME;
    let reachable = match &provisioner {
        None => Err("the provisioner could not be loaded".to_string()),
        Some(_) if fixture => Ok(()),
        Some(p) => {
            p.set_objects(objects.clone());
            p.factory.probe().map(drop).map_err(|e| {
                crate::eprintln_quiet!(
                    "warning: the provisioner could not be reached ({e}); planning from the \
                     hosts' status alone"
                );
                e.to_string()
            })
        }
    };
    let machine = MachineConfig {
        max_provisioning_retries: i64::from(max_provisioning_retries),
        ..MachineConfig::default()
    };
    let planner = Planner {
        objects: objects.as_ref(),
        machine: &machine,
        fixture,
    };
    let now = format_time(SystemClock.now());
    let plans: Vec<HostPlan> = records
        .into_iter()
        .map(|mut rec| {
            let live = match &reachable {
                _ if fixture => Live::NotAsked,
                Ok(()) => match &provisioner {
                    Some(p) => crate::plan::seed::ask(p.factory.as_ref(), &rec),
                    None => Live::NotAsked,
                },
                Err(_) if rec.status().provisioning.id.is_empty() => Live::NotAsked,
                Err(e) => Live::Failed(e.clone()),
            };
            let goal = goal(intent, &mut rec, &now);
            planner.plan(&rec, goal, live)
        })
        .collect();
    match output {
        ResultFormat::Table => output::line(table(&plans)),
        ResultFormat::Json => output::line(
            serde_json::to_string_pretty(&document(intent, name, &plans))
                .map_err(|e| crate::error::Error::internal("cannot encode the plan", e))?,
        ),
    }
}

/// The goal of `intent` for `rec`, prepared as the command prepares it.
pub fn goal(intent: Intent, rec: &mut HostRecord, now: &str) -> Goal {
    match intent {
        Intent::Provision if rec.being_deleted() => Goal::Deleted,
        Intent::Provision => Goal::for_provision(rec),
        Intent::Deprovision => {
            // BMO deprovisions when the image goes from the spec; the user's spec is not ours
            // to edit, so the image is masked for this run only.
            rec.host.spec.image = None;
            rec.host.spec.custom_deploy = None;
            Goal::State(S::Available)
        }
        Intent::Delete => {
            if rec.book.deletion_requested.is_none() {
                rec.book.deletion_requested = Some(now.to_string());
            }
            Goal::Deleted
        }
    }
}

/// The states of the path (`(new)` for people), `deleted` at the end of a delete path.
fn path_states(p: &HostPlan, people: bool) -> Vec<String> {
    let mut states: Vec<String> = p
        .path
        .iter()
        .map(|s| {
            let s = s.as_str();
            if people { output::show_state(s) } else { s }.to_string()
        })
        .collect();
    if p.deleted {
        states.push("deleted".into());
    }
    states
}

pub fn table(plans: &[HostPlan]) -> String {
    let rows = plans.iter().map(|p| {
        let mut path = path_states(p, true).join(" -> ");
        if !p.reaches {
            path.push_str(&format!(" (stops: {})", p.stops));
        }
        let actions: Vec<String> = p
            .steps
            .iter()
            .map(|s| match s.destructive {
                true => format!("{} (destructive)", s.text),
                false => s.text.clone(),
            })
            .collect();
        [
            output::display_name(&p.key.namespace, &p.key.name),
            output::show_state(p.from.as_str()).to_string(),
            path,
            if actions.is_empty() {
                "none".into()
            } else {
                actions.join(", ")
            },
            if p.destructive() { "yes" } else { "no" }.to_string(),
        ]
    });
    let header = ["NAME", "FROM", "PATH", "ACTIONS", "DESTRUCTIVE"];
    super::output::kubectl_table(Some(&header), rows)
}

/// The `PlanResult` document (docs/output.md).
pub fn document(intent: Intent, provisioner: &str, plans: &[HostPlan]) -> Value {
    let hosts: Vec<Value> = plans
        .iter()
        .map(|p| {
            let live = match &p.live {
                Live::NotAsked => json!({"node": "notAsked"}),
                Live::Node { powered_on } => json!({"node": "found", "poweredOn": powered_on}),
                Live::NoNode => json!({"node": "missing"}),
                Live::Failed(e) => json!({"node": "unknown", "error": e}),
            };
            json!({
                "namespace": p.key.namespace,
                "name": p.key.name,
                "from": p.from.as_str(),
                "goal": p.goal.describe(),
                "path": path_states(p, false),
                "reaches": p.reaches,
                "reason": p.stops,
                "destructive": p.destructive(),
                "actions": p.steps.iter().map(|s| json!({
                    "kind": s.kind,
                    "text": s.text,
                    "destructive": s.destructive,
                })).collect::<Vec<_>>(),
                "live": live,
            })
        })
        .collect();
    json!({
        "apiVersion": API_VERSION,
        "kind": "PlanResult",
        "command": intent,
        "provisioner": provisioner,
        "hosts": hosts,
    })
}
