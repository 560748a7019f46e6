//! The DataImage kind in `get` and `describe` (BMO declares no printer columns for it).

use super::get_args::{GetArgs, GetFormat};
use super::output;
use crate::error::{Error, Result};
use crate::persist::snapshot::Snapshot;
use bmh_api::{DataImage, ObjectKey};
use serde_json::Value;
use std::fmt::Write as _;

pub fn get(args: &GetArgs, names: &[String], input: crate::persist::InputPolicy) -> Result<()> {
    let place = super::options::place(&args.source)?;
    let snapshot = Snapshot::read(&place, input)?;
    let listed = args.namespaces.listed(&place);
    let namespace = args.namespaces.namespace.as_deref();
    let mut all = selected(&snapshot, names, namespace, listed.as_deref(), &place)?;
    output::sort_items(&mut all, args.sort_by.as_ref(), |d| object(d))?;
    if matches!(args.output, GetFormat::Table | GetFormat::Wide) {
        if all.is_empty() {
            crate::eprintln_quiet!("No DataImages found in {}.", place.name());
            return Ok(());
        }
        return output::line(table(
            &all,
            args.namespaces.all_namespaces,
            !args.no_headers,
        ));
    }
    let objects = all.iter().map(|d| object(d)).collect::<Result<_>>()?;
    output::print_objects(
        &args.output,
        crate::resource_args::Kind::DataImage.resource(),
        objects,
        names.len() == 1,
        args.sort_by.as_ref(),
        !args.no_headers,
    )
}

/// The DataImages `names` name (every one of `listed`'s namespace, or of all, when none is);
/// a name that names none is a usage error.
fn selected<'a>(
    snapshot: &'a Snapshot,
    names: &[String],
    namespace: Option<&str>,
    listed: Option<&str>,
    place: &super::options::Place,
) -> Result<Vec<&'a DataImage>> {
    let wanted: Vec<ObjectKey> = names.iter().map(|n| key_of_name(n, namespace)).collect();
    let all: Vec<&DataImage> = snapshot
        .records()
        .into_iter()
        .filter_map(|r| r.data_image.as_deref())
        .filter(|d| {
            let key = d.metadata.key();
            if !wanted.is_empty() {
                return wanted.contains(&key);
            }
            listed.is_none_or(|ns| key.namespace == ns)
        })
        .collect();
    let missing: Vec<String> = wanted
        .iter()
        .filter(|k| !all.iter().any(|d| d.metadata.key() == **k))
        .map(|k| format!("DataImage {k} not found in {}", place.name()))
        .collect();
    if !missing.is_empty() {
        return Err(Error::Usage(missing.join("\n")));
    }
    Ok(all)
}

/// `describe dataimages [NAME...]`: each DataImage, as `kubectl describe` shows objects.
pub fn describe(
    snapshot: &Snapshot,
    names: &[String],
    namespace: Option<&str>,
    listed: Option<&str>,
    place: &super::options::Place,
) -> Result<String> {
    let images = selected(snapshot, names, namespace, listed, place)?;
    let text: Vec<String> = images
        .iter()
        .map(|d| {
            let mut out = String::new();
            let mut line = |k: &str, v: &str| {
                let _ = writeln!(out, "{:<20}{v}", format!("{k}:"));
            };
            let st = d.status();
            line("Name", &d.metadata.name);
            line("Namespace", d.metadata.namespace_or_default());
            line("Kind", "DataImage");
            line("URL", &d.spec.url);
            line("Attached", output::or_none(&st.attached_image.url));
            line("Errors", &st.error.count.to_string());
            line("Last Error", output::or_none(&st.error.message));
            line(
                "Last Reconciled",
                st.last_reconciled.as_deref().unwrap_or("<none>"),
            );
            out
        })
        .collect();
    Ok(text.join("\n"))
}

/// NAME or NAMESPACE/NAME; a bare name is in `-n`'s namespace, else `default`.
fn key_of_name(name: &str, namespace: Option<&str>) -> ObjectKey {
    match name.split_once('/') {
        Some((ns, n)) => ObjectKey::new(ns, n),
        None => ObjectKey::new(namespace.unwrap_or(bmh_api::DEFAULT_NAMESPACE), name),
    }
}

fn object(d: &DataImage) -> Result<Value> {
    let mut v =
        serde_json::to_value(d).map_err(|e| Error::internal("cannot encode a DataImage", e))?;
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        let ns = d.metadata.namespace_or_default().to_string();
        meta.insert("namespace".into(), Value::String(ns));
    }
    Ok(v)
}

/// NAME, URL, ATTACHED (the attached URL, `<none>`), ERRORS (count), ERROR (the last message).
pub fn table(images: &[&DataImage], namespace_column: bool, headers: bool) -> String {
    let show = [namespace_column, true, true, true, true, true];
    let header: Vec<&str> = output::shown(
        &show,
        ["NAMESPACE", "NAME", "URL", "ATTACHED", "ERRORS", "ERROR"],
    );
    let rows = images.iter().map(|d| {
        let st = d.status();
        let cells = [
            d.metadata.namespace_or_default().to_string(),
            d.metadata.name.clone(),
            d.spec.url.clone(),
            output::or_none(&st.attached_image.url).into(),
            st.error.count.to_string(),
            output::or_none(&st.error.message).into(),
        ];
        output::shown(&show, cells)
    });
    output::kubectl_table(headers.then_some(&header[..]), rows)
}

pub fn describe_section(out: &mut String, image: Option<&DataImage>) {
    let Some(d) = image else {
        return;
    };
    out.push_str("Data Image:\n");
    let st = d.status();
    let _ = writeln!(out, "  URL:             {}", d.spec.url);
    let _ = writeln!(
        out,
        "  Attached:        {}",
        output::or_none(&st.attached_image.url)
    );
    let _ = writeln!(out, "  Errors:          {}", st.error.count);
    if !st.error.message.is_empty() {
        let _ = writeln!(out, "  Last Error:      {}", st.error.message);
    }
    if let Some(t) = &st.last_reconciled {
        let _ = writeln!(out, "  Last Reconciled: {t}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(url: &str, attached: &str, count: i64, message: &str) -> DataImage {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "worker-0"},
            "spec": {"url": url},
            "status": {"attachedImage": {"url": attached}, "error": {"count": count, "message": message}},
        }))
        .unwrap()
    }

    #[test]
    fn table_and_describe_show_url_attachment_and_errors() {
        let ok = image("http://x/a.iso", "http://x/a.iso", 0, "");
        let failing = image("http://x/b.iso", "", 3, "vmedia down");
        insta::assert_snapshot!(table(&[&ok, &failing], true, true));
        let mut out = String::new();
        describe_section(&mut out, Some(&failing));
        describe_section(&mut out, None);
        insta::assert_snapshot!(out);
    }
}
