//! Completions that know the data (`source <(COMPLETE=bash bmhctl)`): hosts, states, contexts,
//! and `get -o`'s formats.

use super::options::Place;
use crate::persist::snapshot::Snapshot;
use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// The CLI with completers on every argument that names a host, a state or a context.
pub fn command() -> clap::Command {
    with_completers(super::command())
}

fn with_completers(cmd: clap::Command) -> clap::Command {
    // The config commands whose NAME (or OLD) is an existing context.
    let names_context = [
        "use-context",
        "delete-context",
        "set-context",
        "rename-context",
    ]
    .contains(&cmd.get_name());
    cmd.mut_args(|a| {
        let value_name = a.get_value_names().and_then(|v| v.first());
        let completer = match (a.get_id().as_str(), value_name.map(|v| v.as_str())) {
            ("context", _) => Some(ArgValueCompleter::new(contexts)),
            ("name" | "old", _) if names_context => Some(ArgValueCompleter::new(contexts)),
            ("for_state", _) => Some(ArgValueCompleter::new(states)),
            // get's -o: its formats are parsed by hand (templates), so clap has no list of them.
            ("output", Some("FORMAT")) => Some(ArgValueCompleter::new(get_formats)),
            (_, Some("HOST")) | ("hosts", _) => Some(ArgValueCompleter::new(hosts)),
            _ => None,
        };
        match completer {
            Some(c) => a.add(c),
            None => a,
        }
    })
    .mut_subcommands(with_completers)
}

fn matching(current: &OsStr, names: impl IntoIterator<Item = String>) -> Vec<CompletionCandidate> {
    let prefix = current.to_string_lossy();
    names
        .into_iter()
        .filter(|n| n.starts_with(prefix.as_ref()))
        .map(CompletionCandidate::new)
        .collect()
}

/// The value of `long` (or `short`) on the command line being completed.
fn flag_values(words: &[OsString], short: Option<&str>, long: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = words.iter().map(|w| w.to_string_lossy().into_owned());
    while let Some(w) = it.next() {
        if w == format!("--{long}") || short.is_some_and(|s| w == format!("-{s}")) {
            if let Some(v) = it.next() {
                out.push(v);
            }
        } else if let Some(v) = w.strip_prefix(&format!("--{long}=")) {
            out.push(v.to_string());
        } else if let Some(v) = short
            .and_then(|s| w.strip_prefix(&format!("-{s}")))
            .filter(|v| !v.is_empty() && !w.starts_with("--"))
        {
            out.push(v.to_string());
        }
    }
    out
}

fn words() -> Vec<OsString> {
    let all: Vec<OsString> = std::env::args_os().collect();
    match all.iter().position(|a| a == "--") {
        Some(i) => all[i + 1..].to_vec(),
        None => all,
    }
}

/// The hosts of the `-f` files on the command line, else of the store.
fn hosts(current: &OsStr) -> Vec<CompletionCandidate> {
    let words = words();
    let files: Vec<PathBuf> = flag_values(&words, Some("f"), "filename")
        .into_iter()
        .map(PathBuf::from)
        .collect();
    let place = if files.is_empty() {
        let context = flag_values(&words, None, "context").pop();
        // The context may name the store; a broken config file just completes nothing more.
        let context = super::options::context_environment(context.as_deref()).unwrap_or_default();
        let store = flag_values(&words, None, "store")
            .pop()
            .map(PathBuf::from)
            .or_else(|| context.get("BMHCTL_STORE").map(PathBuf::from))
            .or_else(|| std::env::var_os("BMHCTL_STORE").map(PathBuf::from));
        match crate::persist::store::resolve_root(store.as_deref()) {
            Ok(root) => Place::Store(root),
            Err(_) => return Vec::new(),
        }
    } else {
        Place::Files(files)
    };
    let Ok(snapshot) = Snapshot::read(&place, crate::persist::InputPolicy::default()) else {
        return Vec::new();
    };
    let names: Vec<String> = snapshot
        .records()
        .into_iter()
        .map(super::output::host_name)
        .collect();
    matching(current, names)
}

fn states(current: &OsStr) -> Vec<CompletionCandidate> {
    let mut names: Vec<String> = bmh_api::ProvisioningState::KNOWN
        .iter()
        .filter(|k| !k.is_empty())
        .map(|k| k.replace(' ', "-"))
        .collect();
    names.extend(super::wait_for::CONDITIONS.split(' ').map(String::from));
    matching(current, names)
}

fn get_formats(current: &OsStr) -> Vec<CompletionCandidate> {
    let formats = "table wide yaml json name jsonpath= custom-columns=";
    matching(current, formats.split(' ').map(String::from))
}

fn contexts(current: &OsStr) -> Vec<CompletionCandidate> {
    let names: Vec<String> = crate::context::Config::load(super::options::config_file().as_deref())
        .map(|c| c.file.contexts.into_iter().map(|c| c.name).collect())
        .unwrap_or_default();
    matching(current, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_values_reads_every_spelling() {
        let w: Vec<OsString> = [
            "get",
            "-f",
            "a.yaml",
            "--filename=b.yaml",
            "-fc.yaml",
            "--store",
            "s",
        ]
        .map(OsString::from)
        .to_vec();
        assert_eq!(
            flag_values(&w, Some("f"), "filename"),
            ["a.yaml", "b.yaml", "c.yaml"]
        );
        assert_eq!(flag_values(&w, None, "store"), ["s"]);
    }

    #[test]
    fn states_are_offered_with_dashes() {
        let c = states(OsStr::new("ext"));
        let names: Vec<String> = c
            .iter()
            .map(|c| c.get_value().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["externally-provisioned"]);
    }

    #[test]
    fn every_host_argument_gets_a_completer() {
        let cmd = command();
        for sub in [
            "get",
            "describe",
            "timeline",
            "delete",
            "deprovision",
            "wait",
        ] {
            let s = cmd.find_subcommand(sub).unwrap();
            let a = s
                .get_arguments()
                .find(|a| a.get_id() == "hosts")
                .unwrap_or_else(|| panic!("{sub} has no hosts"));
            assert!(a.get::<ArgValueCompleter>().is_some(), "{sub}");
        }
    }
}
