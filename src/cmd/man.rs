//! The man pages, rendered by clap_mangen with the sections clap knows nothing of appended.

use crate::error::{Error, Result};

/// The visible subcommands, in the order `--help` lists them.
pub fn subcommands() -> Vec<String> {
    super::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .map(|c| c.get_name().to_string())
        .collect()
}

pub fn page(subcommand: Option<&str>) -> Result<String> {
    let cli = super::command();
    let mut text = Vec::new();
    let cmd = match subcommand {
        None => cli,
        Some(name) => {
            let sub = cli
                .find_subcommand(name)
                .filter(|c| !c.is_hide_set())
                .ok_or_else(|| Error::Usage(format!("no bmhctl command {name}")))?
                .clone();
            // clap names a page after its command: leaked once, in a hidden one-shot command.
            let title: &'static str = Box::leak(format!("bmhctl-{name}").into_boxed_str());
            sub.name(title).bin_name(format!("bmhctl {name}"))
        }
    };
    clap_mangen::Man::new(cmd)
        .render(&mut text)
        .map_err(|e| Error::io("stdout", e))?;
    let mut page = String::from_utf8_lossy(&text).into_owned();
    page.push_str(&sections(subcommand.unwrap_or("")));
    Ok(page)
}

/// A roff section of plain paragraphs, one per line of `body`; `- ` lines are tagged items.
fn section(title: &str, body: &[&str]) -> String {
    let mut s = format!(".SH \"{title}\"\n");
    for line in body {
        if let Some((tag, text)) = line.split_once(" :: ") {
            s.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", roff(tag), roff(text)));
        } else {
            s.push_str(&format!(".PP\n{}\n", roff(line)));
        }
    }
    s
}

/// Text with what roff would read as its own escaped.
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\\\").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}

fn sections(cmd: &str) -> String {
    let system = crate::provisioners::SYSTEM_PLUGIN_DIR;
    let plugin_dir_text = format!(
        "PROVISIONER_PLUGIN_DIR :: Where provisioner plugins (NAME-provisioner.so) are; default: plugins/ beside the bmhctl binary, then {system}."
    );
    let system_plugins_text = format!(
        "{system}/NAME-provisioner.so :: The provisioner plugins a package installs, used when PROVISIONER_PLUGIN_DIR is unset and plugins/ beside the binary has no such plugin."
    );
    let mut s = String::new();
    s.push_str(&section("EXIT STATUS", &exit_status(cmd)));
    s.push_str(&section(
        "ENVIRONMENT",
        &[
            "BMHCTL_STORE :: The local store, when --store is not given.",
            "BMHCTL_PROVISIONER :: The provisioner, when --provisioner is not given (default ironic).",
            &plugin_dir_text,
            "BMHCTL_IRONIC_WAIT :: How long to keep trying to reach Ironic at start (default 2m).",
            "BMHCTL_TIME_SCALE :: Multiplies every delay (default 1; 0 runs without waiting).",
            "BMHCTL_SEED :: Fixes the backoff jitter.",
            "BMO_CONCURRENCY :: Passes at once when --concurrency is not given (default 8).",
            "BMHCTL_TIMING :: change or bmo, when --timing is not given.",
            "BMHCTL_LOG :: Log filter (tracing syntax), over -v and -q.",
            "BMHCTL_MAX_FILE_SIZE :: The largest input file read, in bytes (default 512 MiB).",
            "NO_COLOR :: No colours when set to anything.",
            "NOTIFY_SOCKET, WATCHDOG_USEC :: Set by systemd for a Type=notify service: watch sends READY=1, WATCHDOG=1 (at least every half of WATCHDOG_USEC), STATUS= and STOPPING=1 there.",
            "JOURNAL_STREAM :: Set by systemd: while standard error (or output) is that stream, each line carries its syslog priority (<3> for errors) and no time of its own.",
            "BMHCTL_CONFIG :: The config file of the contexts (default ~/.config/bmhctl/config.yaml).",
            "BMHCTL_CONTEXT :: The context to use when --context is not given (default: the file's current-context). A context sets IRONIC_ENDPOINT, its credentials, CA and client certificate, DEPLOY_* URLs, BMHCTL_PROVISIONER and BMHCTL_STORE; each variable set in the environment wins over it.",
            "COMPLETE :: bash, zsh, fish, elvish or powershell: print the script of the completions that know the data (source <(COMPLETE=bash bmhctl)).",
        ],
    ));
    s.push_str(&section(
        "FILES",
        &[
            "~/.local/share/bmhctl/store :: The local store when neither --store nor BMHCTL_STORE is given.",
            "~/.config/bmhctl/config.yaml :: The contexts (see bmhctl-config(1)); a credentials file a context names must have mode 0600.",
            "DIR/.bmhctl/ :: Beside a hosts file: bmhctl's bookkeeping for its hosts (uid, generation, finalizers, first seen) and the files' locks.",
            "plugins/NAME-provisioner.so :: Beside the binary: the provisioner plugins (ironic-provisioner.so for the default).",
            &system_plugins_text,
        ],
    ));
    s.push_str(&section("EXAMPLES", &examples(cmd)));
    s
}

fn exit_status(cmd: &str) -> Vec<&'static str> {
    let mut codes = vec!["0 :: Done."];
    match cmd {
        "provision" | "deprovision" | "delete" => {
            codes.push("1 :: Ran, but some host did not reach its goal (the result says which and why), a save failed during the run (the file and the cause are named; what was saved before stays), or the provisioner's backend stayed unreachable.")
        }
        "wait" => codes.push("1 :: The timeout ran out, a host rests at its goal where the condition can never hold (named with its state and why), a save failed, or the provisioner's backend stayed unreachable."),
        "validate" => {}
        "plugin" => codes.push("1 :: plugin check failed."),
        "watch" => codes.push("1 :: The provisioner's backend stayed unreachable at start."),
        "diff" => codes.push("1 :: Something would change: the diff is on standard output."),
        "" => codes.push("1 :: Ran, but the goal was not met."),
        _ => {}
    }
    codes.push(if cmd == "validate" {
        "2 :: A host is invalid, or bad input or usage; nothing is written."
    } else {
        "2 :: Bad input or usage (a missing file, a malformed or invalid host, an unknown host name, a bad flag); nothing is written."
    });
    if cmd != "version" && cmd != "completions" && cmd != "validate" {
        codes.push("3 :: Conflict, safe to retry: another bmhctl holds the files' locks or the store's lease, or an object changed under a command that writes it once.");
        codes.push("4 :: Reading or writing failed, or the provisioner plugin cannot be loaded.");
    }
    codes.push("70 :: Internal error (a bug).");
    if matches!(
        cmd,
        "" | "provision" | "deprovision" | "delete" | "watch" | "wait"
    ) {
        codes.push("130 :: Interrupted (Ctrl-C or SIGTERM), whatever else failed; passes in flight and pending saves are given 3 s to finish.");
    }
    codes
}

fn examples(cmd: &str) -> Vec<&'static str> {
    match cmd {
        "provision" => vec![
            "bmhctl provision hosts.yaml :: Drive every host of the file to its goal through Ironic.",
            "bmhctl provision --provisioner fixture -l rack=r1 -o json hosts.yaml :: Without Ironic, only rack r1, the result as JSON.",
            "bmhctl provision --dry-run hosts.yaml :: What the run would do (bmhctl plan), doing nothing.",
            "bmhctl provision --timeline run.html hosts.yaml :: The same run, and its timeline as an HTML page: each host's states over time, errors, retries, waits for PROVISIONING_LIMIT.",
        ],
        "deprovision" => vec!["bmhctl deprovision -f hosts.yaml worker-0 :: Back to available."],
        "delete" => vec![
            "bmhctl delete worker-0 :: BMO's delete path for a stored host, to its end.",
            "bmhctl delete -f hosts.yaml :: The same for every host of the file.",
        ],
        "apply" => vec![
            "bmhctl apply -f hosts.yaml :: Create or update the hosts and Secrets in the store.",
            "bmhctl apply --dry-run -f hosts.yaml :: What it would change (bmhctl diff), writing nothing.",
        ],
        "diff" => vec![
            "bmhctl diff -f hosts.yaml :: What apply -f hosts.yaml would change in the store; exit 1 when anything would.",
        ],
        "plan" => vec![
            "bmhctl plan -f hosts.yaml :: Each host's path to its provision goal, its actions, and which are destructive.",
            "bmhctl plan --for delete worker-0 -o json :: The delete path of a stored host, as a PlanResult document.",
        ],
        "get" => vec![
            "bmhctl get :: The store's hosts in the default namespace.",
            "bmhctl get -A --show-labels :: Every namespace, with labels.",
            "bmhctl get worker-0 -o json :: One host as a BareMetalHost object.",
            "bmhctl get bmh/worker-0 :: The same host in kubectl's TYPE/NAME form (bmh, baremetalhost, baremetalhosts, with or without .metal3.io).",
            "bmhctl get -f hosts.yaml -o name | xargs bmhctl describe -f hosts.yaml :: -o name output (baremetalhost.metal3.io/NAME) read back by another command.",
            "bmhctl get -f hosts.yaml -o wide :: The hosts of a file, with BMO's wide columns.",
            "bmhctl get dataimages -f hosts.yaml :: The hosts' DataImages: URL, what is attached, errors.",
            "bmhctl get -w :: The hosts, then a row per change as a running watch or provision drives them, until Ctrl-C.",
            "bmhctl get -w -o json :: The same as kubectl watch events, one JSON object a line: {\"type\": \"ADDED|MODIFIED|DELETED\", \"object\": {...}}.",
        ],
        "describe" => vec![
            "bmhctl describe worker-0 spare-0 :: Two hosts of the store in detail.",
            "bmhctl describe -f hosts.yaml -l rack=r1 :: The matching hosts of a file.",
        ],
        "timeline" => vec![
            "bmhctl timeline --output-file hosts.html :: The store's hosts' timeline from their operation history and events, as an HTML page.",
            "bmhctl timeline -f hosts.yaml worker-0 > worker-0.html :: One host of a file.",
        ],
        "export" => vec![
            "bmhctl export > cluster.yaml :: The store's hosts as a metal3 cluster takes them.",
        ],
        "watch" => vec![
            "bmhctl watch :: Reconcile the store's hosts until Ctrl-C.",
            "bmhctl watch -o json :: The same, each transition and event as one JSON object a line (NDJSON).",
            "bmhctl watch --metrics-addr 127.0.0.1:9464 :: The same, with Prometheus metrics at http://127.0.0.1:9464/metrics (docs/metrics.md).",
        ],
        "wait" => vec![
            "bmhctl wait --for provisioned worker-0 :: Until worker-0 is provisioned.",
            "bmhctl wait --for=condition=Ready --all :: kubectl's form: until every host's Ready condition is True, a line per host as it is.",
            "bmhctl wait --for=jsonpath='{.status.provisioning.state}'=available bmh/spare-0 :: Until a field of the host has a value.",
        ],
        "validate" => {
            vec![
                "bmhctl validate hosts.yaml :: Check the hosts against BMO's admission rules.",
                "bmhctl validate --strict --allow-warning fake-hardware hosts.yaml :: Fail on any warning but those of the fake-hardware class.",
            ]
        }
        "plugin" => {
            vec![
                "bmhctl plugin list :: The plugins of the plugin directories, with their versions.",
            ]
        }
        "version" => vec!["bmhctl version :: bmhctl's version and its plugin interface's."],
        "config" => vec![
            "bmhctl config set-context lab --endpoint http://127.0.0.1:6385 --current :: Create (or change) the context lab and make it current.",
            "bmhctl config get-contexts :: The contexts of the config file, * marking the current one.",
            "bmhctl config use-context lab :: Make lab the current context.",
            "bmhctl --context prod get :: One command in another context.",
        ],
        "import" => vec![
            "bmhctl import --from-ironic > hosts.yaml :: Every active or available node of the Ironic, as hosts bmhctl adopts as they are.",
            "bmhctl import --from-ironic -l ironic.driver=redfish --output-file hosts.yaml :: Only the redfish nodes, into a new file.",
            "bmhctl import --from-bifrost baremetal.json --output-file hosts.yaml :: A bifrost inventory, with its BMC passwords (file mode 0600).",
        ],
        "completions" => {
            vec![
                "bmhctl completions bash > /etc/bash_completion.d/bmhctl :: Bash completion.",
                "source <(COMPLETE=bash bmhctl) :: Bash completion that also offers host names, states and contexts.",
            ]
        }
        "" => vec![
            "cp hosts.example.yaml hosts.yaml && bmhctl provision --provisioner fixture hosts.yaml :: A first run without Ironic.",
            "bmhctl get -f hosts.yaml :: What it did.",
        ],
        "power" => vec!["bmhctl power off worker-0 :: Keep worker-0 powered off."],
        _ => vec!["bmhctl get :: The hosts, as the command left them."],
    }
}
