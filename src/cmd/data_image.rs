//! The DataImage kind in `get` and `describe` (BMO declares no printer columns for it).

use super::get_args::{GetArgs, GetFormat};
use super::output;
use crate::error::{Error, Result};
use crate::persist::snapshot::Snapshot;
use bmh_api::{DataImage, ObjectKey};
use serde_json::Value;
use std::fmt::Write as _;

/// Whether `get`'s first word names the kind as kubectl takes it.
pub fn is_kind(word: &str) -> bool {
    matches!(
        word.to_ascii_lowercase().as_str(),
        "dataimage" | "dataimages" | "dataimage.metal3.io" | "dataimages.metal3.io"
    )
}

pub fn get(args: &GetArgs, names: &[String], input: crate::persist::InputPolicy) -> Result<()> {
    let place = super::options::place(&args.source)?;
    let snapshot = Snapshot::read(&place, input)?;
    let listed = args.namespaces.listed(&place);
    let wanted: Vec<ObjectKey> = names.iter().map(|n| key_of_name(n, args)).collect();
    let mut all: Vec<&DataImage> = snapshot
        .records()
        .into_iter()
        .filter_map(|r| r.data_image.as_deref())
        .filter(|d| {
            let key = d.metadata.key();
            if !wanted.is_empty() {
                return wanted.contains(&key);
            }
            listed.as_ref().is_none_or(|ns| key.namespace == *ns)
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
        "dataimage.metal3.io",
        objects,
        names.len() == 1,
        args.sort_by.as_ref(),
        !args.no_headers,
    )
}

/// NAME or NAMESPACE/NAME; a bare name is in `-n`'s namespace, else `default`.
fn key_of_name(name: &str, args: &GetArgs) -> ObjectKey {
    match name.split_once('/') {
        Some((ns, n)) => ObjectKey::new(ns, n),
        None => ObjectKey::new(
            args.namespaces
                .namespace
                .as_deref()
                .unwrap_or(bmh_api::DEFAULT_NAMESPACE),
            name,
        ),
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
    fn the_kind_is_taken_as_kubectl_takes_it() {
        for w in [
            "dataimage",
            "DataImages",
            "dataimage.metal3.io",
            "dataimages.metal3.io",
        ] {
            assert!(is_kind(w), "{w}");
        }
        assert!(!is_kind("worker-0") && !is_kind("di"));
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
