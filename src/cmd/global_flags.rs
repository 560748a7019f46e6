//! Where each global flag is shown: every command accepts them all (a script may pass them to
//! any), but a command's help and man page list only those that change what it does, as
//! kubectl keeps its global options out of each command's help.

/// The commands that drive hosts, the only ones `--progress` changes.
const DRIVING: &[&str] = &[
    "provision",
    "deprovision",
    "delete",
    "watch",
    "wait",
    "reconcile",
    "power",
    "reboot",
    "inspect",
    "detach",
    "attach",
    "retry",
];

/// The commands that read no host file, which `--validate` and `--skip-unknown-kinds` leave
/// alone.
const READ_NO_HOSTS: &[&str] = &[
    "config",
    "plugin",
    "import",
    "version",
    "completions",
    "man",
];

/// The commands on which a context changes nothing.
const NO_CONTEXT: &[&str] = &["config", "version", "completions", "man"];

/// Whether the global flag `id` is listed in the help of the command `name` (and of its own
/// subcommands).
pub fn shown(id: &str, name: &str) -> bool {
    match id {
        "progress" => DRIVING.contains(&name),
        "field_validation" | "skip_unknown_kinds" => !READ_NO_HOSTS.contains(&name),
        "context" => !NO_CONTEXT.contains(&name),
        "log_format" | "verbose" | "quiet" => !["completions", "man", "version"].contains(&name),
        _ => true,
    }
}

/// `cmd` (built, so its global flags are in every subcommand) with each global flag hidden
/// where it changes nothing.
pub fn hide_where_irrelevant(cmd: clap::Command) -> clap::Command {
    let globals: Vec<String> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .map(|a| a.get_id().to_string())
        .collect();
    cmd.mut_subcommands(|sub| hide_in(sub, &globals, None))
}

fn hide_in(sub: clap::Command, globals: &[String], top: Option<&str>) -> clap::Command {
    let name = top.unwrap_or(sub.get_name()).to_string();
    // In place (`mut_arg` would reorder the built command's arguments under its index).
    sub.mut_args(|a| {
        let id = a.get_id().as_str();
        match globals.iter().any(|g| g == id) {
            true if !shown(id, &name) => a.hide(true),
            // After the command's own options, as kubectl's `options` are apart.
            true => a.help_heading("Global options"),
            false => a,
        }
    })
    .mut_subcommands(|s| hide_in(s, globals, Some(&name)))
    .map_usage()
}

trait GenericUsage {
    fn map_usage(self) -> Self;
}

impl GenericUsage for clap::Command {
    /// A usage line that is the command's, not the one clap makes of the arguments typed
    /// (which reads as if every flag given were required).
    fn map_usage(self) -> Self {
        let usage = self.clone().render_usage().to_string();
        match usage.strip_prefix("Usage: ") {
            Some(u) => {
                let u = u.trim_end().to_string();
                self.override_usage(u)
            }
            _ => self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_shown_only_where_hosts_are_driven() {
        assert!(shown("progress", "provision"));
        assert!(shown("progress", "power"));
        assert!(!shown("progress", "get"));
        assert!(!shown("progress", "pause"));
        assert!(shown("field_validation", "get"));
        assert!(!shown("field_validation", "config"));
        assert!(!shown("skip_unknown_kinds", "plugin"));
        assert!(!shown("context", "version"));
        assert!(shown("verbose", "get"));
    }
}
