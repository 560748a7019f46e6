//! `bmhctl validate FILE|DIR...`: BMO's admission rules on every host of the files.

use super::output;
use super::{ResultFormat, Verbosity};
use crate::error::{Error, Result};
use crate::persist::files::admission::{self, HostValidation};
use crate::persist::files::inventory::{self, LoadMode};
use crate::validate::WarningClass;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// How to show the result: a table for people, or JSON (per host: errors, warnings and the
    /// resolved BMC access, passwords redacted).
    #[arg(short, long, value_enum, default_value_t = ResultFormat::Table)]
    pub output: ResultFormat,
    /// Fail (exit 2) on warnings too: unknown fields under `--validate=warn` or under
    /// `status:`, BMC addresses BMO accepts but that cannot work, the admission warnings.
    #[arg(long)]
    pub strict: bool,
    /// With --strict, accept the warnings of CLASS (each warning ends with its class in
    /// brackets); repeatable.
    #[arg(
        long = "allow-warning",
        value_enum,
        value_name = "CLASS",
        requires = "strict"
    )]
    pub allow_warning: Vec<WarningClass>,
    /// YAML files, or directories of them (as the FILE|DIR arguments; `-` is standard input).
    #[arg(short = 'f', long = "filename", value_name = "FILE|DIR", id = "files")]
    pub files: Vec<PathBuf>,
    /// YAML files, or directories of them, holding BareMetalHosts and their BMC Secrets.
    #[arg(value_name = "FILE|DIR", required_unless_present = "files")]
    pub paths: Vec<PathBuf>,
}

pub fn validate(
    args: ValidateArgs,
    verbosity: Verbosity,
    input: crate::persist::InputPolicy,
) -> Result<()> {
    let paths: Vec<PathBuf> = args.files.iter().chain(&args.paths).cloned().collect();
    let loaded = inventory::load_checked_with(
        &paths,
        LoadMode::ReadOnly,
        &crate::persist::LoadOptions::with_input(input),
    )
    .and_then(|inv| {
        if inv.hosts.is_empty() {
            return Err(Error::invalid(crate::persist::files::paths::no_hosts_in(
                &paths,
            )));
        }
        Ok(inv)
    });
    let inv = match loaded {
        Ok(inv) => inv,
        // Files that cannot be read as hosts: `-o json` gets the problems in its document.
        Err(e) if args.output == ResultFormat::Json => {
            output::line(document(&[], &e.problems_json(), 0))?;
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    let reports: Vec<HostValidation> = (0..inv.hosts.len())
        .map(|i| admission::validate_entry(&inv, i))
        .collect();
    let invalid = reports.iter().filter(|r| !r.valid).count();
    match args.output {
        ResultFormat::Table => {
            output::line(table(&inv, &reports))?;
            if !verbosity.quiet {
                for (i, r) in reports.iter().enumerate() {
                    for w in &r.warnings {
                        crate::eprintln_quiet!("warning: BareMetalHost {}: {w}", inv.hosts[i].key);
                    }
                }
            }
        }
        ResultFormat::Json => {
            let hosts: Vec<serde_json::Value> = reports
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let mut v = serde_json::to_value(r).unwrap_or_default();
                    // Where each problem is, as bad-input errors say it.
                    if let Some(errors) = v["errors"].as_array_mut() {
                        for (e, err) in errors.iter_mut().zip(&r.errors) {
                            let d = admission::diagnostic(&inv, i, err);
                            if let Some(p) = &d.position {
                                e["position"] = p.to_string().into();
                                e["location"] = serde_json::to_value(p).unwrap_or_default();
                            }
                            e["object"] = d.object.into();
                        }
                    }
                    v
                })
                .collect();
            output::line(document(&hosts, &[], invalid))?;
        }
    }
    if invalid > 0 {
        return Err(Error::invalid(format!(
            "{invalid} of {} hosts are invalid",
            reports.len()
        )));
    }
    // Every warning's class: the files' unknown fields, then each host's.
    let classes = std::iter::repeat_n(WarningClass::UnknownField, inv.warnings.len()).chain(
        reports
            .iter()
            .flat_map(|r| r.warnings.iter().map(|w| w.class)),
    );
    let refused: Vec<WarningClass> = classes
        .filter(|c| !args.allow_warning.contains(c))
        .collect();
    if args.strict && !refused.is_empty() {
        let mut names: Vec<&str> = refused.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        let n = refused.len();
        return Err(Error::invalid(format!(
            "{n} warning{} (--strict fails on warnings; --allow-warning {} accepts {})",
            if n == 1 { "" } else { "s" },
            names.join(" --allow-warning "),
            if n == 1 { "it" } else { "them" }
        )));
    }
    Ok(())
}

/// The `ValidationResult` document (docs/output.md).
fn document(hosts: &[serde_json::Value], errors: &[serde_json::Value], invalid: usize) -> String {
    let doc = serde_json::json!({
        "apiVersion": output::API_VERSION,
        "kind": "ValidationResult",
        "valid": errors.is_empty() && invalid == 0,
        "summary": {
            "hosts": hosts.len(),
            "valid": hosts.len() - invalid,
            "invalid": invalid,
            "errors": errors.len(),
        },
        "errors": errors,
        "hosts": hosts,
    });
    serde_json::to_string_pretty(&doc).expect("JSON of plain values")
}

fn table(inv: &inventory::Inventory, reports: &[HostValidation]) -> String {
    let rows = reports.iter().enumerate().map(|(i, r)| {
        let errors: Vec<String> = r.errors.iter().map(|e| e.to_string()).collect();
        [
            output::host_name(&inv.hosts[i].record),
            if r.valid { "yes" } else { "no" }.to_string(),
            errors.join("\n"),
        ]
    });
    output::kubectl_table(Some(&["NAME", "VALID", "ERRORS"]), rows)
}
