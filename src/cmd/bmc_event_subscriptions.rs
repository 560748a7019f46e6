//! BMCEventSubscriptions in `get`, `describe` and `export` (header Secrets' values never shown).

use super::get_args::{GetArgs, GetFormat};
use super::output;
use crate::error::{Error, Result};
use crate::machine::event_subscription::host_key;
use crate::persist::snapshot::Snapshot;
use bmh_api::{BMC_EVENT_SUBSCRIPTION_KIND, BmcEventSubscription, ObjectKey};
use std::fmt::Write as _;

pub fn read(snapshot: &Snapshot) -> Result<Vec<BmcEventSubscription>> {
    let mut subs = snapshot.event_subscriptions()?;
    subs.sort_by_key(|s| s.metadata.key());
    Ok(subs)
}

pub fn of_host<'a>(
    subs: &'a [BmcEventSubscription],
    host: &ObjectKey,
) -> impl Iterator<Item = &'a BmcEventSubscription> {
    subs.iter().filter(move |s| host_key(s) == *host)
}

pub fn get(args: &GetArgs, names: &[String], input: crate::persist::InputPolicy) -> Result<()> {
    let place = super::options::place(&args.source)?;
    let snapshot = Snapshot::read(&place, input)?;
    let all_namespaces = args.namespaces.all_namespaces;
    let namespace = args.namespaces.listed(&place);
    let mut subs: Vec<BmcEventSubscription> = read(&snapshot)?
        .into_iter()
        .filter(|s| {
            namespace
                .as_ref()
                .is_none_or(|ns| s.metadata.namespace_or_default() == ns)
        })
        .filter(|s| names.is_empty() || names.contains(&s.metadata.name))
        .collect();
    for n in names {
        if !subs.iter().any(|s| s.metadata.name == *n) {
            return Err(Error::Usage(format!(
                "bmceventsubscriptions.metal3.io {n:?} not found"
            )));
        }
    }
    output::sort_items(&mut subs, args.sort_by.as_ref(), |s| {
        serde_json::to_value(s).map_err(|e| Error::internal("cannot encode a subscription", e))
    })?;
    if matches!(args.output, GetFormat::Table | GetFormat::Wide) {
        if subs.is_empty() {
            crate::eprintln_quiet!("No BMCEventSubscriptions found.");
            return Ok(());
        }
        let wide = args.output == GetFormat::Wide;
        return output::line(table(&subs, all_namespaces, !args.no_headers, wide));
    }
    let objects = subs
        .iter()
        .map(|s| {
            serde_json::to_value(s)
                .map_err(|e| Error::internal("cannot encode a subscription as JSON", e))
        })
        .collect::<Result<_>>()?;
    let resource = crate::resource_args::Kind::BmcEventSubscription.resource();
    output::print_objects(
        &args.output,
        resource,
        objects,
        names.len() == 1,
        args.sort_by.as_ref(),
        !args.no_headers,
    )
}

/// The `get` table: BMO's printer columns with the host and the BMC's ID (`wide`: destination).
pub fn table(subs: &[BmcEventSubscription], namespaces: bool, headers: bool, wide: bool) -> String {
    let show = [namespaces, true, true, true, true, wide];
    let header: Vec<&str> = output::shown(
        &show,
        [
            "NAMESPACE",
            "NAME",
            "HOST",
            "SUBSCRIPTION ID",
            "ERROR",
            "DESTINATION",
        ],
    );
    let rows = subs.iter().map(|s| {
        let cells = [
            s.metadata.namespace_or_default(),
            &s.metadata.name,
            &s.spec.host_name,
            s.subscription_id(),
            s.error(),
            &s.spec.destination,
        ];
        output::shown(&show, cells.map(str::to_string))
    });
    output::kubectl_table(headers.then_some(&header[..]), rows)
}

pub fn describe(s: &BmcEventSubscription) -> String {
    let mut out = String::new();
    let mut line = |k: &str, v: &str| {
        let _ = writeln!(out, "{:<20}{v}", format!("{k}:"));
    };
    line("Name", &s.metadata.name);
    line("Namespace", s.metadata.namespace_or_default());
    line("Kind", BMC_EVENT_SUBSCRIPTION_KIND);
    line("Host Name", output::or_none(&s.spec.host_name));
    line("Destination", output::or_none(&s.spec.destination));
    line("Context", output::or_none(&s.spec.context));
    let headers = s
        .spec
        .http_headers_ref
        .as_ref()
        .map(|r| format!("from Secret {}/{} (values not shown)", r.namespace, r.name));
    line("HTTP Headers", headers.as_deref().unwrap_or("<none>"));
    line("Subscription ID", output::or_none(s.subscription_id()));
    line("Error", output::or_none(s.error()));
    out
}

pub fn host_section(subs: &[&BmcEventSubscription]) -> String {
    let mut out = String::from("BMC Event Subscriptions:\n");
    for s in subs {
        let id = if s.subscription_id().is_empty() {
            "<not made>"
        } else {
            s.subscription_id()
        };
        let _ = write!(out, "  {}  {}  {id}", s.metadata.name, s.spec.destination);
        if !s.error().is_empty() {
            let _ = write!(out, "  error: {}", s.error());
        }
        out.push('\n');
    }
    out
}
