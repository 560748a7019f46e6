//! `bmhctl get`: hosts and their status as `kubectl get` prints them; `-w` only reads.

use super::get_args::{GetArgs, GetFormat};
use super::options::Place;
use super::output;
use crate::error::{Error, Result};
use crate::persist::snapshot::Snapshot;
use crate::record::HostRecord;
use crate::resource_args::Kind;
use crate::selection::HostSelection;
use bmh_api::ObjectKey;
use serde_json::Value;
use std::collections::HashMap;

pub fn get(args: GetArgs, input: crate::persist::InputPolicy) -> Result<()> {
    super::options::hosts_not_files("get", &args.source, &args.hosts)?;
    let named = crate::resource_args::parse(&args.hosts)?;
    match named.kind {
        Kind::BmcEventSubscription => {
            return super::bmc_event_subscriptions::get(&args, &named.names, input);
        }
        Kind::DataImage => return super::data_image::get(&args, &named.names, input),
        Kind::BareMetalHost => {}
    }
    let place = super::options::place(&args.source)?;
    let selection = args.namespaces.narrow(
        HostSelection::new(&args.hosts, args.selector.as_deref())?,
        &place,
    );
    if args.watch {
        return watch(&args, &place, &selection, input);
    }
    let snapshot = Snapshot::read(&place, input)?;
    let picked = snapshot.select(&selection, &place)?;
    let sorted;
    let records = match &args.sort_by {
        Some(by) => {
            sorted = sorted_by(&picked.records, by)?;
            &sorted
        }
        None => &picked.records,
    };
    if picked.is_empty() && matches!(args.output, GetFormat::Table | GetFormat::Wide) {
        // kubectl's words, on stderr; files are listed whole, without a word.
        if place.one_namespace_by_default() {
            match args.namespaces.listed(&place) {
                Some(ns) => crate::eprintln_quiet!("No BareMetalHosts found in namespace {ns}."),
                None => crate::eprintln_quiet!("No BareMetalHosts found in the store."),
            }
        }
        return Ok(());
    }
    let unreadable: Vec<&ObjectKey> = picked.bad.iter().map(|b| &b.key).collect();
    match args.output {
        GetFormat::Table | GetFormat::Wide => output::line(output::hosts_table_with(
            records,
            &unreadable,
            &table_options(&args, true),
            &mut output::Widths::default(),
        )),
        GetFormat::Name => output::print_with(|out| {
            records
                .iter()
                .try_for_each(|r| {
                    writeln!(
                        out,
                        "{}/{}",
                        Kind::BareMetalHost.resource(),
                        r.host.metadata.name
                    )
                })
                .map_err(output::stdout_error)
        }),
        GetFormat::Json | GetFormat::Yaml => output::print_with(|out| {
            let single = named.names.len() == 1 && records.len() == 1;
            write_objects(out, records, single, args.output == GetFormat::Json)
        }),
        GetFormat::JsonPath(_) | GetFormat::CustomColumns(_) => {
            let objects = records
                .iter()
                .map(|r| object(r))
                .collect::<Result<Vec<_>>>()?;
            let single = args.hosts.len() == 1 && records.len() == 1;
            let headers = !args.no_headers;
            let mut widths = output::Widths::default();
            output::print_templated(&args.output, &objects, single, headers, &mut widths).map(drop)
        }
    }?;
    picked.report_bad()
}

/// `records` in the order `--sort-by` asks, by their objects as `-o json` prints them.
fn sorted_by<'a>(
    records: &[&'a HostRecord],
    by: &super::jsonpath::Path,
) -> Result<Vec<&'a HostRecord>> {
    let mut keyed = records
        .iter()
        .map(|r| Ok((object(r)?, *r)))
        .collect::<Result<Vec<_>>>()?;
    keyed.sort_by(|a, b| super::jsonpath::compare(by, &a.0, &b.0));
    Ok(keyed.into_iter().map(|(_, r)| r).collect())
}

/// One host named (`single`): the object, else a List, each object made as it is written.
fn write_objects(
    out: &mut dyn std::io::Write,
    records: &[&HostRecord],
    single: bool,
    json: bool,
) -> Result<()> {
    if single {
        return encode(out, &object(records[0])?, json);
    }
    let list = List {
        api_version: "v1",
        kind: "List",
        items: Objects(records),
    };
    encode(out, &list, json)
}

fn encode(out: &mut dyn std::io::Write, doc: &impl serde::Serialize, json: bool) -> Result<()> {
    if json {
        serde_json::to_writer_pretty(&mut *out, doc).map_err(|e| {
            if e.is_io() {
                output::stdout_error(e.into())
            } else {
                Error::internal("cannot encode the hosts as JSON", e)
            }
        })?;
        out.write_all(b"\n").map_err(output::stdout_error)
    } else {
        serde_saphyr::to_io_writer(&mut &mut *out, doc).map_err(|e| match e {
            serde_saphyr::SerializeError::IO { error } => output::stdout_error(error),
            e => Error::internal("cannot encode the hosts as YAML", e),
        })
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct List<'a> {
    api_version: &'static str,
    kind: &'static str,
    items: Objects<'a>,
}

struct Objects<'a>(&'a [&'a HostRecord]);

impl serde::Serialize for Objects<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq};
        let mut seq = ser.serialize_seq(Some(self.0.len()))?;
        for rec in self.0 {
            seq.serialize_element(&object(rec).map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}

/// The host as kubectl prints it: with the creation time bmhctl recorded for it.
pub(super) fn object(rec: &HostRecord) -> Result<Value> {
    let mut v = serde_json::to_value(&rec.host)
        .map_err(|e| Error::internal("cannot encode a host as JSON", e))?;
    if let (Some(t), Some(meta)) = (
        output::created(rec),
        v.get_mut("metadata").and_then(Value::as_object_mut),
    ) {
        meta.insert("creationTimestamp".into(), Value::String(t.to_string()));
    }
    Ok(v)
}

/// The hosts `get -w` read, and what is wrong with each that cannot be read.
type Watched = (Vec<(ObjectKey, HostRecord, Value)>, Vec<String>);

/// The selected hosts as read now; one named and gone is absent (its deletion is a change).
fn watched(
    place: &Place,
    selection: &HostSelection,
    input: crate::persist::InputPolicy,
) -> Result<Watched> {
    let snapshot = Snapshot::read(place, input)?;
    let Ok(picked) = snapshot.select(selection, place) else {
        return Ok(Default::default());
    };
    let hosts = picked
        .records
        .iter()
        .map(|rec| {
            Ok((
                crate::persist::snapshot::key_of(rec),
                (*rec).clone(),
                object(rec)?,
            ))
        })
        .collect::<Result<_>>()?;
    let bad = picked.bad.iter().map(|b| b.error.chain()).collect();
    Ok((hosts, bad))
}

/// `get -w`: the hosts, then every change, read every `--poll-interval` until a signal.
fn watch(
    args: &GetArgs,
    place: &Place,
    selection: &HostSelection,
    input: crate::persist::InputPolicy,
) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::internal("cannot start the async runtime", e))?;
    let (mut first, bad) = watched(place, selection, input)?;
    if let Some(by) = &args.sort_by {
        first.sort_by(|a, b| super::jsonpath::compare(by, &a.2, &b.2));
    }
    let mut unreadable = Unreadable::default();
    unreadable.say(bad);
    // The rows printed later keep the first table's column widths (widened for a longer value).
    let mut widths = output::Widths::default();
    if matches!(args.output, GetFormat::Table | GetFormat::Wide) && !first.is_empty() {
        let recs: Vec<&HostRecord> = first.iter().map(|(_, r, _)| r).collect();
        let options = table_options(args, true);
        output::line(output::hosts_table(&recs, &options, &mut widths))?;
    } else if matches!(args.output, GetFormat::CustomColumns(_)) && !first.is_empty() {
        let objects: Vec<Value> = first.iter().map(|(_, _, o)| o.clone()).collect();
        output::print_templated(&args.output, &objects, false, !args.no_headers, &mut widths)?;
    } else {
        for (_, rec, obj) in &first {
            print_watched(args, "ADDED", rec, obj, false, &mut widths)?;
        }
    }
    let mut last: HashMap<ObjectKey, (HostRecord, Value)> =
        first.into_iter().map(|(k, r, v)| (k, (r, v))).collect();
    let mut headers = last.is_empty();
    runtime.block_on(async {
        let signal = super::provision::wait_for_signal();
        tokio::pin!(signal);
        loop {
            tokio::select! {
                _ = &mut signal => return Ok(()),
                _ = tokio::time::sleep(args.poll_interval) => {}
            }
            match watched(place, selection, input) {
                Ok((hosts, bad)) => {
                    unreadable.say(bad);
                    print_changes(args, &mut last, hosts, &mut headers, &mut widths)?;
                }
                // A file being edited by hand may not parse for a moment: say so (once), go on.
                Err(e) => unreadable.failing(e.chain()),
            }
        }
    })
}

/// What `get -w` said of unreadable hosts: each said once, and again when it changes.
#[derive(Default)]
struct Unreadable {
    said: std::collections::HashSet<String>,
    failing: Option<String>,
}

impl Unreadable {
    fn say(&mut self, bad: Vec<String>) {
        self.failing = None;
        for b in bad.iter().filter(|b| !self.said.contains(*b)) {
            crate::eprintln_quiet!("bmhctl: {b}");
        }
        self.said = bad.into_iter().collect();
    }

    fn failing(&mut self, said: String) {
        if self.failing.as_ref() != Some(&said) {
            crate::eprintln_quiet!("bmhctl: {said}");
            self.failing = Some(said);
        }
    }
}

fn print_changes(
    args: &GetArgs,
    last: &mut HashMap<ObjectKey, (HostRecord, Value)>,
    now: Vec<(ObjectKey, HostRecord, Value)>,
    headers: &mut bool,
    widths: &mut output::Widths,
) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for (key, rec, obj) in now {
        seen.insert(key.clone());
        let change = match last.get(&key) {
            None => "ADDED",
            Some((_, before)) if same_but_created(before, &obj) => continue,
            Some(_) => "MODIFIED",
        };
        print_watched(args, change, &rec, &obj, *headers, widths)?;
        *headers = false;
        last.insert(key, (rec, obj));
    }
    let mut gone: Vec<ObjectKey> = last
        .keys()
        .filter(|k| !seen.contains(*k))
        .cloned()
        .collect();
    gone.sort();
    for key in gone {
        if let Some((rec, obj)) = last.remove(&key) {
            print_watched(args, "DELETED", &rec, &obj, *headers, widths)?;
            *headers = false;
        }
    }
    Ok(())
}

fn table_options(args: &GetArgs, headers: bool) -> output::TableOptions {
    output::TableOptions {
        wide: args.output == GetFormat::Wide,
        namespace_column: args.namespaces.all_namespaces,
        qualified_names: args.namespaces.namespace.is_none(),
        headers: headers && !args.no_headers,
        labels: args.show_labels,
        now: chrono::Utc::now(),
    }
}

fn print_watched(
    args: &GetArgs,
    change: &str,
    rec: &HostRecord,
    obj: &Value,
    headers: bool,
    widths: &mut output::Widths,
) -> Result<()> {
    match args.output {
        GetFormat::Table | GetFormat::Wide => output::line(output::hosts_table(
            &[rec],
            &table_options(args, headers),
            widths,
        )),
        GetFormat::Name => {
            output::outln!(
                "{}/{}",
                Kind::BareMetalHost.resource(),
                rec.host.metadata.name
            )
        }
        // One compact line: a Value's Display.
        GetFormat::Json => output::line(watch_event(change, obj)),
        GetFormat::Yaml => {
            let text = serde_saphyr::to_string(&watch_event(change, obj))
                .map_err(|e| Error::internal("cannot encode a watch event as YAML", e))?;
            output::write_stdout(&format!("---\n{text}"))
        }
        // Each change as its own object, as kubectl's -w prints them.
        GetFormat::JsonPath(_) | GetFormat::CustomColumns(_) => {
            let one = std::slice::from_ref(obj);
            output::print_templated(&args.output, one, true, headers, widths).map(drop)
        }
    }
}

/// Whether two reads differ only in `metadata.creationTimestamp` (a host never run).
fn same_but_created(before: &Value, now: &Value) -> bool {
    let without = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("creationTimestamp");
        }
        v
    };
    before == now || without(before) == without(now)
}

/// A watch event, its type as kubectl's `--output-watch-events` spells it.
fn watch_event(change: &str, object: &Value) -> Value {
    serde_json::json!({"type": change, "object": object})
}

#[cfg(test)]
mod watch_tests {
    use super::same_but_created;
    use serde_json::json;

    #[test]
    fn a_new_creation_time_alone_is_no_change() {
        let host = |created: &str, online: bool| {
            json!({"metadata": {"name": "w0", "creationTimestamp": created},
                   "spec": {"online": online}})
        };
        let first = host("2026-12-01T10:00:00Z", true);
        assert!(same_but_created(
            &first,
            &host("2026-12-01T10:00:01Z", true)
        ));
        assert!(!same_but_created(
            &first,
            &host("2026-12-01T10:00:00Z", false)
        ));
        assert!(!same_but_created(
            &first,
            &host("2026-12-01T10:00:01Z", false)
        ));
    }
}

#[cfg(test)]
mod output_tests {
    use super::*;

    /// Three hosts, one with the creation time bmhctl records.
    fn hosts() -> Vec<HostRecord> {
        (0..3)
            .map(|i| {
                let mut r = HostRecord::default();
                r.host.metadata.name = format!("worker-{i}");
                r.host.spec.online = i != 1;
                if i == 2 {
                    r.book.creation_timestamp = Some("2026-12-01T10:00:00Z".into());
                }
                r
            })
            .collect()
    }

    fn written(records: &[&HostRecord], single: bool, json: bool) -> String {
        let mut out = Vec::new();
        write_objects(&mut out, records, single, json).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Written host by host, the List and the single object are byte for byte what they were
    /// as one JSON tree printed whole (`to_string_pretty` and a newline, or YAML).
    #[test]
    fn objects_written_one_by_one_are_the_document_printed_whole() {
        let hosts = hosts();
        let records: Vec<&HostRecord> = hosts.iter().collect();
        let objects: Vec<Value> = records.iter().map(|r| object(r).unwrap()).collect();
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": objects});
        for (records, doc, single) in [
            (&records[..], &list, false),
            (&records[2..], &objects[2], true),
            (
                &records[..0],
                &serde_json::json!({"apiVersion": "v1", "kind": "List", "items": []}),
                false,
            ),
        ] {
            let json = format!("{}\n", serde_json::to_string_pretty(doc).unwrap());
            assert_eq!(written(records, single, true), json);
            let yaml = serde_saphyr::to_string(doc).unwrap();
            assert_eq!(written(records, single, false), yaml);
        }
        assert!(
            written(&records, false, true)
                .contains("\"creationTimestamp\": \"2026-12-01T10:00:00Z\"")
        );
    }
}
