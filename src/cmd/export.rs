//! `bmhctl export`: the selected hosts and companions as a metal3 cluster accepts them.

use super::SourceArgs;
use crate::error::{Error, Result};
use crate::metal3_export::{
    clean_object, clean_secret, cluster_host, refusal, secret_refs, to_value,
};
use crate::persist::snapshot::Snapshot;
use crate::record::HostRecord;
use crate::selection::HostSelection;
use bmh_api::ObjectKey;
use clap::Args;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The output format: `yaml`, the only one (as `-o` is everywhere a format; a file name
    /// here is refused with a pointer to --output-file).
    #[arg(short = 'o', long = "output", value_name = "FORMAT", default_value = "yaml", value_parser = export_format)]
    pub format: String,
    /// Write the export to FILE (mode 0600: it holds the Secrets' values) instead of stdout.
    #[arg(long = "output-file", value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Only hosts whose labels match (kubectl syntax).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Only these hosts (NAME, NAMESPACE/NAME or TYPE/NAME, after an optional type such as
    /// `bmh`); all hosts when none is given.
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
}

/// `-o` used to name the output file: a file name gets a clear error.
fn export_format(s: &str) -> std::result::Result<String, String> {
    (s == "yaml").then(|| s.to_string()).ok_or_else(|| {
        format!("-o is the output format (yaml); to write to a file use --output-file {s}")
    })
}

pub fn export(args: ExportArgs, input: crate::persist::InputPolicy) -> Result<()> {
    super::options::hosts_not_files("export", &args.source, &args.hosts)?;
    let selection = HostSelection::new(&args.hosts, args.selector.as_deref())?;
    let place = super::options::place(&args.source)?;
    let from = place.describe();
    let source = Snapshot::read(&place, input)?;
    let subscriptions = super::bmc_event_subscriptions::read(&source)?;
    let picked = source.select(&selection, &place)?;
    let selected: Vec<&HostRecord> = picked.records;

    // All or nothing: a host that cannot be read refuses the export, as an invalid one does.
    let mut out = Export {
        refused: picked.bad.iter().map(|b| b.error.chain()).collect(),
        ..Export::default()
    };
    for r in &selected {
        out.host(r, &source, &subscriptions, &from)?;
    }
    // The whole of the files goes to the cluster: what bmhctl skipped goes as it was written.
    if selection.names_none() && args.selector.is_none() {
        out.docs.extend(source.skipped_documents()?);
    }
    if !out.refused.is_empty() {
        return Err(Error::invalid(format!(
            "not exported (nothing written):\n{}",
            out.refused.join("\n")
        )));
    }
    for w in &out.warnings {
        crate::eprintln_quiet!("warning: {w}");
    }
    if selected.is_empty() {
        crate::eprintln_quiet!("No BareMetalHosts found in {from}.");
    }
    let mut text = format!(
        "# bmhctl export of {} BareMetalHost(s) from {from}, for `kubectl apply -f` into a metal3\n\
         # cluster or `bmhctl apply -f`. It holds the Secrets' values: keep it private.\n",
        selected.len()
    );
    if !out.docs.is_empty() {
        text.push_str(
            &serde_saphyr::to_string_multiple(&out.docs)
                .map_err(|e| Error::internal("cannot encode the export as YAML", e))?,
        );
    }
    match &args.output_file {
        Some(path) => crate::persist::atomic::write_atomic_mode(path, text.as_bytes(), Some(0o600))
            .map_err(|e| Error::io(path.display().to_string(), e)),
        None => super::output::write_stdout(&text),
    }
}

#[derive(Default)]
struct Export {
    docs: Vec<Value>,
    /// Why hosts cannot be exported: any refuses the whole export.
    refused: Vec<String>,
    warnings: Vec<String>,
    secrets_done: BTreeSet<ObjectKey>,
}

impl Export {
    /// The documents of host `r`, or why it cannot be exported. `from` names where it is.
    fn host(
        &mut self,
        r: &HostRecord,
        source: &Snapshot,
        subscriptions: &[bmh_api::BmcEventSubscription],
        from: &str,
    ) -> Result<()> {
        let key = r.host.metadata.key();
        if let Some(reason) = refusal(r) {
            self.refused.push(format!("BareMetalHost {key}: {reason}"));
            return Ok(());
        }
        let (host, notes) = cluster_host(r)?;
        for n in notes {
            self.warnings.push(format!("BareMetalHost {key}: {n}"));
        }
        let errors = crate::validate::validate(&host, None);
        if !errors.is_empty() {
            for e in errors {
                self.refused.push(format!(
                    "BareMetalHost {key}: a metal3 cluster would refuse it: {e}"
                ));
            }
            return Ok(());
        }
        let owner = format!("BareMetalHost {key}");
        for sk in secret_refs(&r.host) {
            self.secret(&owner, &sk, source, &format!("in {from}"))?;
        }
        self.companions(r, &key, source)?;
        // Subscriptions without status (a cluster's controller makes them again).
        for s in super::bmc_event_subscriptions::of_host(subscriptions, &key) {
            let k = s.metadata.key();
            if let Some(r) = &s.spec.http_headers_ref {
                let sk = ObjectKey::new(&r.namespace, &r.name);
                self.secret(&format!("BMCEventSubscription {k}"), &sk, source, "there")?;
            }
            self.docs.push(clean_object(&to_value(s)?, &k, false));
        }
        self.docs.push(clean_object(&to_value(&host)?, &key, false));
        Ok(())
    }

    /// Secret `sk` of `owner`, the first time; a warning when it is not `there`.
    fn secret(
        &mut self,
        owner: &str,
        sk: &ObjectKey,
        source: &Snapshot,
        there: &str,
    ) -> Result<()> {
        if self.secrets_done.insert(sk.clone()) {
            match source.secret(sk)? {
                Some(v) => self.docs.push(clean_secret(&v)),
                None => self.warnings.push(format!(
                    "{owner}: Secret {sk} it references is not {there}: not exported"
                )),
            }
        }
        Ok(())
    }

    fn companions(&mut self, r: &HostRecord, key: &ObjectKey, source: &Snapshot) -> Result<()> {
        if let Some(hd) = &r.book.hardware_data {
            self.docs.push(clean_object(&to_value(hd)?, key, true));
        }
        for companion in [
            r.firmware_settings.as_ref().map(to_value).transpose()?,
            r.firmware_components.as_ref().map(to_value).transpose()?,
            source.update_policy(key)?,
            r.data_image.as_ref().map(to_value).transpose()?,
        ] {
            self.docs
                .extend(companion.map(|v| clean_object(&v, key, false)));
        }
        Ok(())
    }
}
