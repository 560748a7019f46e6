//! The command line: one module per subcommand, one error type, one exit code.

mod applied;
mod apply;
mod bmc_event_subscriptions;
mod config;
mod data_image;
mod describe;
mod diff;
pub mod dynamic_completion;
mod export;
mod get;
mod get_args;
mod global_flags;
mod import;
mod jsonpath;
pub mod man;
mod metrics_server;
mod options;
mod output;
mod plan;
mod plugin;
mod progress;
mod provision;
mod reachable;
mod service_manager;
mod timeline;
mod validate;
mod verbs;
mod version;
mod wait_for;
mod watch;

use crate::error::{Error, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Drive BareMetalHosts through metal3's state machine against Ironic, without Kubernetes.
#[derive(Debug, Parser)]
#[command(name = "bmhctl", version, about, max_term_width = 100)]
pub struct Cli {
    /// More detail: events and pass errors (-v), debug logs (-vv).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Only errors and the final result.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr,
    /// `ignore` keeps them silently. Unknown fields under `status:` are warnings at most.
    #[arg(
        long = "validate",
        global = true,
        value_name = "MODE",
        default_value = "strict",
        value_parser = ["strict", "warn", "ignore"]
    )]
    pub field_validation: String,
    /// Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show
    /// them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain`
    /// always prints the lines, `none` prints nothing but errors.
    #[arg(long, global = true, value_enum, default_value_t = ProgressChoice::Auto, value_name = "MODE")]
    pub progress: ProgressChoice,
    /// The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a
    /// terminal unless NO_COLOR is set, or `json`, one object a line.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text, value_name = "FORMAT")]
    pub log_format: LogFormat,
    /// Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to
    /// metal3.io (refused by default); other kinds are always skipped with a note.
    #[arg(long, global = true)]
    pub skip_unknown_kinds: bool,
    /// The context of the config file to use (endpoint, credentials, deploy images,
    /// provisioner, store) instead of its current one (or $BMHCTL_CONTEXT).
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Drive every selected host to its goal and write its status back into its file.
    ///
    /// The goal is `provisioned` for a host with an image (or custom deploy) and `online: true`,
    /// `externally provisioned` when asked, `unmanaged` without BMC details, else `available`.
    Provision(ProvisionArgs),
    /// Remove what provisioning did: BMO's deprovision path back to `available`.
    ///
    /// On files, driven in-process for this run (the files' `spec.image` stays); beside a
    /// `bmhctl watch -f` that drives them, and on the store, by removing `spec.image` and
    /// `spec.customDeploy`, as a kubectl user deprovisions.
    Deprovision(DeprovisionArgs),
    /// Run BMO's delete path to its end: the provisioner forgets the host and its status is removed.
    Delete(DeleteArgs),
    /// Create or update the files' hosts, Secrets and companion objects in the local store.
    ///
    /// Hosts are checked with BMO's admission rules first (exit 2, nothing written, when one is
    /// invalid). A spec change bumps the host's generation; a status in the files is ignored.
    Apply(apply::ApplyArgs),
    /// Show what `apply -f` would change in the local store, as `kubectl diff`: a unified diff
    /// of each object that would change (Secret values masked).
    ///
    /// Exit code 0 when nothing would change, 1 when something would, above 1 on an error.
    /// Nothing is written.
    Diff(diff::DiffArgs),
    /// Show the path each host would take to its goal, what the provisioner would be asked to
    /// do, and what of it is destructive, without acting: from the hosts' files or the local
    /// store, their status, and the live node when the provisioner answers read-only
    /// questions (ironic).
    ///
    /// Nothing is written anywhere: no status, no bookkeeping, no lock, no store change, no
    /// write to the provisioner. The same plan is what `provision`, `deprovision` and `delete`
    /// print with --dry-run.
    Plan(plan::PlanArgs),
    /// Show hosts and their status: those of the local store, or of files with -f.
    Get(get_args::GetArgs),
    /// Show hosts in detail: spec highlights, hardware, operation history, conditions and
    /// recent events (the store's log; for files, each host's last 20, kept in its bookkeeping), identical events counted once.
    Describe(describe::DescribeArgs),
    /// Write the timeline of hosts as one self-contained HTML page: each host's states over
    /// time, its errors and retries, from what it recorded (its operation history and events).
    ///
    /// From the local store, or from files with -f; to --output-file FILE, else to standard
    /// output (refused on a terminal). Reads only: no lock, no provisioner. The states between
    /// BMO's timed operations are inferred, and waits on the provisioner are not recorded:
    /// `provision --timeline FILE` charts a run with them.
    Timeline(timeline::TimelineArgs),
    /// Write hosts as a metal3 cluster accepts them: status in BMO's status annotation, with
    /// their Secrets, firmware objects and HardwareData.
    ///
    /// From the local store, or from files with -f. A `fake-hardware://` host is refused (exit
    /// 2). `bmhctl apply` of the output restores the status into an empty store, as BMO does.
    Export(export::ExportArgs),
    /// Reconcile hosts continuously, as BMO's controller does, until Ctrl-C or SIGTERM: those
    /// of the local store, or of files with -f.
    ///
    /// Reacts to `apply`, to the verbs (`power`, `reboot`, `inspect`, `detach`, `attach`,
    /// `pause`, `resume`, `retry`) and to edits of the store's files (or of the files given);
    /// holds the store's lease (one `watch` per store), or the files' locks.
    Watch(watch::WatchArgs),
    /// Wait until hosts reach a state (driving them when no `watch` runs).
    Wait(watch::WaitArgs),
    #[command(flatten)]
    Verb(verbs::VerbCommand),
    /// Drive the local store's hosts to their goal once, holding the store's lease (internal:
    /// what `watch` builds on).
    #[command(hide = true)]
    Reconcile(ReconcileArgs),
    /// Check hosts against BMO's admission rules (CRD schema and validating webhook).
    ///
    /// Exit code 0 when every host is valid, 2 when any is not. A host bmhctl has run before is
    /// also checked as an update, against the spec it last saw.
    Validate(validate::ValidateArgs),
    /// Inspect provisioner plugins.
    #[command(subcommand)]
    Plugin(plugin::PluginCommand),
    /// Show, write and switch the contexts of the config file ($BMHCTL_CONFIG, else
    /// ~/.config/bmhctl/config.yaml).
    #[command(subcommand)]
    Config(config::ConfigCommand),
    /// Write BareMetalHosts and their BMC Secrets for the nodes of an Ironic (adopted as they
    /// are by the next run) or of a bifrost inventory.
    Import(import::ImportArgs),
    /// Print the version of bmhctl (its git commit and build date) and of its plugin interface.
    Version(version::VersionArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print a man page (roff): bmhctl's, or COMMAND's.
    #[command(hide = true)]
    Man { command: Option<String> },
}

/// How hosts are driven: shared by every command that runs the state machine.
#[derive(Debug, Args, Clone)]
pub struct DriveArgs {
    /// The provisioner: `fixture` (built in) or a plugin NAME loaded from
    /// $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then
    /// /usr/lib/bmhctl/plugins).
    #[arg(
        long,
        env = "BMHCTL_PROVISIONER",
        default_value = "ironic",
        value_name = "NAME"
    )]
    pub provisioner: String,
    /// Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on
    /// a CPU, and Ironic's all-in-one API server has 10 request threads, so 8 passes with one
    /// request each plus the one shared node listing stay under that.
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = |s: &str| whole_number(s, 1))]
    pub concurrency: Option<u32>,
    /// When a host's next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO's requeue time
    /// or as soon as the provisioner reports the host's wait over (its node changed, a slot
    /// freed); `bmo` only at BMO's requeue times, exactly as BMO does.
    #[arg(long, value_name = "TIMING", value_parser = ["change", "bmo"])]
    pub timing: Option<String>,
    /// Provisioning attempts per image before a host gives up (0 = unlimited).
    #[arg(long, default_value_t = 5, value_name = "N",
          value_parser = |s: &str| whole_number(s, 0),
          allow_negative_numbers = true)]
    pub max_provisioning_retries: u32,
    /// How long to keep trying to reach Ironic (the provisioner's backend) at start, each new
    /// error printed at once, before giving up (exit 1).
    #[arg(
        long,
        env = "BMHCTL_IRONIC_WAIT",
        default_value = "2m",
        value_parser = parse_duration,
        value_name = "DURATION",
        allow_hyphen_values = true
    )]
    pub ironic_wait: Duration,
}

/// Options of the commands that drive hosts to an end (`provision`, `deprovision`, `delete`).
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub drive: DriveArgs,
    /// Give up on a host whose next attempt lies beyond this (e.g. 90s, 45m, 2h).
    #[arg(long, default_value = "60m", value_parser = parse_duration, value_name = "DURATION",
          allow_hyphen_values = true)]
    pub timeout: Duration,
    /// Only hosts whose labels match (kubectl syntax: a=b,c!=d,e,!f,g in (x,y)).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Result format printed when all hosts stopped.
    #[arg(short, long, value_enum, default_value_t = ResultFormat::Table)]
    pub output: ResultFormat,
    /// Also write the result as the JSON document of `-o json` to PATH (replaced atomically),
    /// whatever `-o` prints: the table for the log, the JSON for the next step.
    #[arg(long, value_name = "PATH")]
    pub result_file: Option<PathBuf>,
    /// Also write the run's timeline to FILE (replaced atomically) when it ends, interrupted
    /// too: one self-contained HTML page charting each host's states over time, its errors,
    /// retries and waits on the provisioner (PROVISIONING_LIMIT).
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
}

impl RunArgs {
    /// Where the run's result goes.
    pub fn result_target(&self) -> ResultTarget {
        ResultTarget {
            format: self.output,
            file: self.result_file.clone(),
            timeline: self.timeline.clone(),
        }
    }
}

/// Where a run's result goes: standard output in `format`, the JSON document to `file`, the
/// timeline page to `timeline`.
#[derive(Debug, Clone)]
pub struct ResultTarget {
    pub format: ResultFormat,
    pub file: Option<PathBuf>,
    pub timeline: Option<PathBuf>,
}

/// The command line as typed (the program as `bmhctl`), quoted where a shell would need it:
/// what a page made by it says it was made by.
pub fn command_line() -> String {
    let quoted = |a: String| {
        let plain = !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
        if plain {
            a
        } else {
            format!("'{}'", a.replace('\'', "'\\''"))
        }
    };
    std::iter::once("bmhctl".to_string())
        .chain(
            std::env::args_os()
                .skip(1)
                .map(|a| quoted(a.to_string_lossy().into_owned())),
        )
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Debug, Args)]
pub struct ProvisionArgs {
    /// Only this host (NAME or NAMESPACE/NAME); may be repeated.
    #[arg(long = "host", value_name = "NAME")]
    pub hosts: Vec<String>,
    #[command(flatten)]
    pub run: RunArgs,
    /// YAML files, or directories of them (as the FILE|DIR arguments; `-` is standard input,
    /// refused here: the status could not be written back).
    #[arg(short = 'f', long = "filename", value_name = "FILE|DIR", id = "files")]
    pub files: Vec<PathBuf>,
    /// YAML files, or directories of them, holding BareMetalHosts and their BMC Secrets.
    #[arg(value_name = "FILE|DIR", required_unless_present = "files")]
    pub paths: Vec<PathBuf>,
    /// Act on nothing: print the plan (`bmhctl plan`) of the run and exit 0.
    #[arg(long)]
    pub dry_run: bool,
}

/// What `deprovision -f` and `delete -f` drive in-process.
#[derive(Debug)]
pub struct TeardownArgs {
    pub paths: Vec<PathBuf>,
    pub run: RunArgs,
    pub hosts: Vec<String>,
}

/// `deprovision`: on files with `-f`, else on the local store.
#[derive(Debug, Args)]
pub struct DeprovisionArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// The hosts (NAME, NAMESPACE/NAME or TYPE/NAME, after an optional type such as `bmh`); with
    /// -f, all hosts of the files when none is given.
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
    /// Act on nothing: print the plan (`bmhctl plan --for deprovision`) and exit 0.
    #[arg(long)]
    pub dry_run: bool,
}

/// `delete`: on files with `-f`, else on the local store.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// The hosts (NAME, NAMESPACE/NAME or TYPE/NAME, after an optional type such as `bmh`); with
    /// -f, all hosts of the files when none is given.
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
    /// Return once the deletion is recorded, without waiting for BMO's delete path to finish
    /// (a running `bmhctl watch` finishes it; on files, the next run that drives them).
    #[arg(long)]
    pub no_wait: bool,
    /// Act on nothing: print the plan (`bmhctl plan --for delete`) and exit 0.
    #[arg(long, conflicts_with = "no_wait")]
    pub dry_run: bool,
}

/// Where the hosts are: files with -f, else the local store.
#[derive(Debug, Args, Clone)]
pub struct SourceArgs {
    /// YAML files, or directories of them (`-` is standard input); without -f, the hosts of
    /// the local store.
    #[arg(short = 'f', long = "filename", value_name = "FILE|DIR")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Where the local store is.
#[derive(Debug, Args, Clone)]
pub struct StoreArgs {
    /// The local store [default: the user's data directory, e.g. ~/.local/share/bmhctl/store].
    #[arg(long, env = "BMHCTL_STORE", value_name = "DIR")]
    pub store: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReconcileArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Only these hosts (NAME, NAMESPACE/NAME or TYPE/NAME, after an optional type such as
    /// `bmh`); all hosts when none is given.
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProgressChoice {
    Auto,
    Plain,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ResultFormat {
    Table,
    Json,
}

/// A duration as humantime reads it; `-5m` is taken as a value, to be this error.
fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    if let Some(rest) = s.trim_start().strip_prefix('-') {
        return Err(if rest.starts_with(|c: char| c.is_ascii_digit()) {
            format!("must not be negative, got {s} (examples: 90s, 45m, 2h)")
        } else {
            format!("expected a duration, got the option {s} (examples: 90s, 45m, 2h)")
        });
    }
    humantime::parse_duration(s).map_err(|e| format!("{e} (examples: 90s, 45m, 2h)"))
}

/// A count of at least `min`; its arguments take negative numbers, to say so of `-1`.
fn whole_number(s: &str, min: u32) -> std::result::Result<u32, String> {
    match s.trim().parse::<i64>() {
        Ok(n) if n < i64::from(min) => Err(format!("must be at least {min}, got {n}")),
        Ok(n) => u32::try_from(n).map_err(|_| format!("must be at most {}, got {n}", u32::MAX)),
        Err(_) => Err(format!("must be a whole number, got {s:?}")),
    }
}

/// The command line as every part of bmhctl reads it (parsing, help, man pages, completions):
/// each global flag accepted everywhere and listed where it changes something.
pub fn command() -> clap::Command {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    cmd.build();
    global_flags::hide_where_irrelevant(cmd)
}

/// `cmd` with a context's variables as the defaults of the flags that read them.
fn under_context(
    cmd: clap::Command,
    environment: &std::collections::BTreeMap<String, String>,
) -> clap::Command {
    cmd.mut_args(|a| {
        let value = a.get_env().and_then(|e| environment.get(e.to_str()?));
        match value {
            // clap keeps 'static defaults; one per flag, once per process.
            Some(v) => a.env(None).default_value(&*v.clone().leak()),
            None => a,
        }
    })
    .mut_subcommands(|c| under_context(c, environment))
}

pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    // Completes when the shell asks (`COMPLETE` is set) and exits; returns otherwise.
    clap_complete::CompleteEnv::with_factory(dynamic_completion::command).complete();
    let args: Vec<OsString> = args.into_iter().collect();
    parse_and_run(&args).unwrap_or_else(|code| code)
}

fn said(e: &Error) -> i32 {
    crate::eprintln_quiet!("{}", e.render());
    e.exit_code()
}

fn parse_and_run(args: &[OsString]) -> std::result::Result<i32, i32> {
    // Parsed as `Cli::try_parse_from` does, by a command that a context may have changed.
    let parse = |mut cmd: clap::Command| {
        let matches = cmd.try_get_matches_from_mut(args).and_then(|mut m| {
            <Cli as clap::FromArgMatches>::from_arg_matches_mut(&mut m)
                .map_err(|e| e.format(&mut cmd))
        });
        matches.map_err(|e| {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            code
        })
    };
    let mut cli = parse(command())?;
    // Every line of bmhctl's own on stderr from here on, errors too, as the logs are.
    if cli.log_format == LogFormat::Json {
        crate::stderr_json::turn_on();
    }
    // A context's variables make the defaults of the flags that read them: parse again.
    let mut context = std::collections::BTreeMap::new();
    if !matches!(
        cli.command,
        Command::Config(_)
            | Command::Completions { .. }
            | Command::Man { .. }
            | Command::Version(_)
    ) {
        context = options::context_environment(cli.context.as_deref()).map_err(|e| said(&e))?;
        if !context.is_empty() {
            cli = parse(under_context(command(), &context))?;
        }
    }
    let provisioners = crate::provisioners::Settings {
        plugin_dir: std::env::var_os("PROVISIONER_PLUGIN_DIR").map(PathBuf::from),
        namespace: std::env::var("POD_NAMESPACE").ok(),
        environment: context,
    };
    init_logging(&cli);
    let max_file_size = options::max_file_size(|k| std::env::var(k).ok()).map_err(|e| said(&e))?;
    let input = crate::persist::InputPolicy {
        fields: match cli.field_validation.as_str() {
            "warn" => crate::persist::FieldValidation::Warn,
            "ignore" => crate::persist::FieldValidation::Ignore,
            _ => crate::persist::FieldValidation::Strict,
        },
        skip_unknown_kinds: cli.skip_unknown_kinds,
        quiet: cli.quiet,
        max_file_size,
    };
    // `diff` tells by its exit code whether anything differs, as `kubectl diff` does.
    let outcome = match &cli.command {
        Command::Diff(a) => diff::diff(a, input).map(i32::from),
        _ => dispatch(cli, input, &provisioners).map(|()| 0),
    };
    Ok(match outcome {
        Ok(code) => code,
        // The reader went away (`bmhctl get ... | head -1`): what it wanted, it has.
        Err(Error::Io { path, source })
            if path.as_os_str() == "stdout" && source.kind() == std::io::ErrorKind::BrokenPipe =>
        {
            0
        }
        Err(e) => {
            let code = said(&e);
            if let Error::Provisioner { name, reason, .. } = &e
                && matches!(
                    reason.downcast_ref(),
                    Some(crate::provisioners::loader::LoadError::Open { .. })
                )
            {
                crate::eprintln_quiet!("{}", provisioners_found(name, &provisioners));
            }
            code
        }
    })
}

/// The provisioners there are, with the closest name, for a `--provisioner` that names none.
fn provisioners_found(name: &str, provisioners: &crate::provisioners::Settings) -> String {
    let dirs = provisioners.plugin_dirs().unwrap_or_default();
    let found = dirs.iter().filter_map(|d| plugin::plugin_files(d).ok());
    let mut names = vec!["fixture".to_string()];
    names.extend(found.flatten().map(|(_, n)| n));
    names[1..].sort();
    names.dedup();
    let mut hint = format!("provisioners found: {}", names.join(", "));
    if !dirs.is_empty() {
        let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        hint.push_str(&format!(" (plugins in {})", dirs.join(", ")));
    }
    if let Some(m) = crate::diagnostic::did_you_mean(name, names.iter().map(String::as_str)) {
        hint.push_str(&format!("; did you mean --provisioner {m}?"));
    }
    hint
}

fn dispatch(
    cli: Cli,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    let verbosity = Verbosity {
        verbose: cli.verbose,
        quiet: cli.quiet,
        progress: cli.progress,
    };
    match cli.command {
        Command::Provision(a) if a.dry_run => provision::provision_plan(a, input, provisioners),
        Command::Provision(a) => provision::provision(a, verbosity, input, provisioners),
        Command::Deprovision(a) => verbs::deprovision(a, verbosity, input, provisioners),
        Command::Delete(a) => verbs::delete(a, verbosity, input, provisioners),
        Command::Apply(a) => apply::apply(a, input),
        Command::Diff(a) => diff::diff(&a, input).map(drop),
        Command::Plan(a) => plan::plan(a, input, provisioners),
        Command::Get(a) => get::get(a, input),
        Command::Describe(a) => describe::describe(a, input),
        Command::Timeline(a) => timeline::timeline(a, input),
        Command::Export(a) => export::export(a, input),
        Command::Reconcile(a) => provision::reconcile(a, verbosity, input, provisioners),
        Command::Watch(a) => watch::watch(a, verbosity, input, provisioners),
        Command::Wait(a) => watch::wait(a, input, provisioners),
        Command::Verb(v) => verbs::run(v, input, provisioners),
        Command::Validate(a) => validate::validate(a, verbosity, input),
        Command::Plugin(c) => plugin::run(c, provisioners),
        Command::Config(c) => config::run(c, cli.context.as_deref()),
        Command::Import(a) => import::import(a, input, provisioners),
        Command::Version(a) => version::print(a),
        Command::Completions { shell } => {
            // clap_complete offers hidden commands too: complete only the documented ones.
            // Unbuilt, as it builds it; every global flag completes everywhere, as accepted.
            let full = <Cli as clap::CommandFactory>::command();
            let mut shown = clap::Command::new("bmhctl")
                .version(env!("CARGO_PKG_VERSION"))
                .about(full.get_about().cloned().unwrap_or_default())
                .args(full.get_arguments().cloned())
                .subcommands(full.get_subcommands().filter(|c| !c.is_hide_set()).cloned());
            let mut text = Vec::new();
            clap_complete::generate(shell, &mut shown, "bmhctl", &mut text);
            output::write_stdout(&String::from_utf8_lossy(&text))
        }
        Command::Man { command } => output::write_stdout(&man::page(command.as_deref())?),
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Verbosity {
    pub verbose: u8,
    pub quiet: bool,
    pub progress: ProgressChoice,
}

impl Verbosity {
    /// The progress a run shows on stderr (whatever `-o` prints on stdout).
    pub fn progress_mode(&self) -> progress::ProgressMode {
        use progress::ProgressMode;
        use std::io::{IsTerminal, stderr};
        let (term, ci) = (std::env::var("TERM").ok(), std::env::var("CI").ok());
        match self.progress {
            _ if self.quiet || self.progress == ProgressChoice::None => ProgressMode::Quiet,
            // Bars only on a terminal that draws them, outside CI.
            // Bars are no lines: with --log-format json, stderr is JSON objects only.
            ProgressChoice::Auto
                if progress::bars_fit(stderr().is_terminal(), term.as_deref(), ci.as_deref())
                    && !crate::stderr_json::on() =>
            {
                ProgressMode::Bars
            }
            _ => ProgressMode::Lines,
        }
    }
}

fn init_logging(cli: &Cli) {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let level = match (cli.quiet, cli.verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, _) => "debug",
    };
    let filter = EnvFilter::try_from_env("BMHCTL_LOG").unwrap_or_else(|_| EnvFilter::new(level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // A log line that cannot be written (stderr closed: `2>&1 | head`) is dropped, as
        // bmhctl's own lines are: its fallback, eprintln!, would panic the thread logging
        // (a pass), and the run would wait for that pass forever.
        .log_internal_errors(false);
    // The journal gives each line its time; a priority prefix gives it its level.
    let journal = crate::journal_stream::stderr_is_journal();
    let _ = match cli.log_format {
        LogFormat::Text if journal => {
            let format = tracing_subscriber::fmt::format()
                .without_time()
                .with_ansi(false);
            builder
                .with_ansi(false)
                .event_format(log_priority::Prioritised(format))
                .try_init()
        }
        LogFormat::Text => {
            let colour = colour_fits(
                std::io::stderr().is_terminal(),
                std::env::var_os("NO_COLOR").as_deref(),
                std::env::var("TERM").ok().as_deref(),
            );
            builder.with_ansi(colour).with_timer(UtcSeconds).try_init()
        }
        LogFormat::Json if journal => builder
            .with_ansi(false)
            .event_format(log_priority::Prioritised(log_json::JsonLines))
            .try_init(),
        LogFormat::Json => builder
            .with_ansi(false)
            .event_format(log_json::JsonLines)
            .try_init(),
    };
}

/// A text log line's time, as the progress lines give theirs: UTC, to the second.
struct UtcSeconds;

impl tracing_subscriber::fmt::time::FormatTime for UtcSeconds {
    fn format_time(&self, w: &mut tracing_subscriber::fmt::format::Writer<'_>) -> std::fmt::Result {
        write!(w, "{}", chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ"))
    }
}

/// Colours only on a terminal that shows them, and not when NO_COLOR is set to anything.
fn colour_fits(terminal: bool, no_color: Option<&std::ffi::OsStr>, term: Option<&str>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty()) && term != Some("dumb")
}

mod log_json;
mod log_priority;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_only_on_a_terminal_without_no_color() {
        assert!(colour_fits(true, None, Some("xterm")));
        assert!(!colour_fits(false, None, Some("xterm")));
        assert!(!colour_fits(true, Some("1".as_ref()), Some("xterm")));
        assert!(!colour_fits(true, None, Some("dumb")));
        // NO_COLOR= (empty) is unset, as its convention says.
        assert!(colour_fits(true, Some("".as_ref()), None));
    }

    #[test]
    fn counts_and_durations_say_what_is_wrong_with_a_sign() {
        let at_least_one = |s| whole_number(s, 1);
        let at_least_zero = |s| whole_number(s, 0);
        assert_eq!(at_least_one("8"), Ok(8));
        assert_eq!(at_least_one("-1"), Err("must be at least 1, got -1".into()));
        assert_eq!(at_least_one("0"), Err("must be at least 1, got 0".into()));
        assert_eq!(at_least_zero("0"), Ok(0));
        assert_eq!(
            at_least_zero("5000000000"),
            Err("must be at most 4294967295, got 5000000000".into())
        );
        assert_eq!(
            at_least_one("lots"),
            Err("must be a whole number, got \"lots\"".into())
        );
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(
            parse_duration("-5m"),
            Err("must not be negative, got -5m (examples: 90s, 45m, 2h)".into())
        );
        assert!(
            parse_duration("--host")
                .is_err_and(|e| e.starts_with("expected a duration, got the option"))
        );
    }
}
