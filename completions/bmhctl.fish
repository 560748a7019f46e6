# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_bmhctl_global_optspecs
    string join \n v/verbose q/quiet validate= progress= log-format= skip-unknown-kinds context= h/help V/version
end

function __fish_bmhctl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_bmhctl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_bmhctl_using_subcommand
    set -l cmd (__fish_bmhctl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c bmhctl -n "__fish_bmhctl_needs_command" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_needs_command" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_needs_command" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_needs_command" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_needs_command" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "provision" -d 'Drive every selected host to its goal and write its status back into its file'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "deprovision" -d 'Remove what provisioning did: BMO\'s deprovision path back to `available`'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "delete" -d 'Run BMO\'s delete path to its end: the provisioner forgets the host and its status is removed'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "apply" -d 'Create or update the files\' hosts, Secrets and companion objects in the local store'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "diff" -d 'Show what `apply -f` would change in the local store, as `kubectl diff`: a unified diff of each object that would change (Secret values masked)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "plan" -d 'Show the path each host would take to its goal, what the provisioner would be asked to do, and what of it is destructive, without acting: from the hosts\' files or the local store, their status, and the live node when the provisioner answers read-only questions (ironic)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "get" -d 'Show hosts and their status: those of the local store, or of files with -f'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "describe" -d 'Show hosts in detail: spec highlights, hardware, operation history, conditions and recent events (the store\'s log; for files, each host\'s last 20, kept in its bookkeeping), identical events counted once'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "timeline" -d 'Write the timeline of hosts as one self-contained HTML page: each host\'s states over time, its errors and retries, from what it recorded (its operation history and events)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "export" -d 'Write hosts as a metal3 cluster accepts them: status in BMO\'s status annotation, with their Secrets, firmware objects and HardwareData'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "watch" -d 'Reconcile hosts continuously, as BMO\'s controller does, until Ctrl-C or SIGTERM: those of the local store, or of files with -f'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "wait" -d 'Wait until hosts reach a state (driving them when no `watch` runs)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "power" -d 'Power hosts off or let them power on again (BMO\'s held reboot annotation)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "reboot" -d 'Reboot hosts once: sets BMO\'s one-shot `reboot.metal3.io` annotation'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "inspect" -d 'Inspect hosts again: sets `inspect.metal3.io` (BMO acts on it in `available`)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "detach" -d 'Detach hosts from the provisioner: sets `baremetalhost.metal3.io/detached`'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "attach" -d 'Attach detached hosts again: removes `baremetalhost.metal3.io/detached`'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "pause" -d 'Stop reconciling hosts: sets `baremetalhost.metal3.io/paused` (done once written: nothing to wait for)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "resume" -d 'Reconcile paused hosts again: removes `baremetalhost.metal3.io/paused` (done once written)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "retry" -d 'Retry hosts now instead of after their backoff wait (their error counts are kept)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "validate" -d 'Check hosts against BMO\'s admission rules (CRD schema and validating webhook)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "plugin" -d 'Inspect provisioner plugins'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "config" -d 'Show, write and switch the contexts of the config file ($BMHCTL_CONFIG, else ~/.config/bmhctl/config.yaml)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "import" -d 'Write BareMetalHosts and their BMC Secrets for the nodes of an Ironic (adopted as they are by the next run) or of a bifrost inventory'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "version" -d 'Print the version of bmhctl (its git commit and build date) and of its plugin interface'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l host -d 'Only this host (NAME or NAMESPACE/NAME); may be repeated' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then /usr/lib/bmhctl/plugins)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l concurrency -d 'Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on a CPU, and Ironic\'s all-in-one API server has 10 request threads, so 8 passes with one request each plus the one shared node listing stay under that' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l timing -d 'When a host\'s next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO\'s requeue time or as soon as the provisioner reports the host\'s wait over (its node changed, a slot freed); `bmo` only at BMO\'s requeue times, exactly as BMO does' -r -f -a "change\t''
bmo\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l ironic-wait -d 'How long to keep trying to reach Ironic (the provisioner\'s backend) at start, each new error printed at once, before giving up (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l timeout -d 'Give up on a host whose next attempt lies beyond this (e.g. 90s, 45m, 2h)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax: a=b,c!=d,e,!f,g in (x,y))' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -s o -l output -d 'Result format printed when all hosts stopped' -r -f -a "table\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l result-file -d 'Also write the result as the JSON document of `-o json` to PATH (replaced atomically), whatever `-o` prints: the table for the log, the JSON for the next step' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l timeline -d 'Also write the run\'s timeline to FILE (replaced atomically) when it ends, interrupted too: one self-contained HTML page charting each host\'s states over time, its errors, retries and waits on the provisioner (PROVISIONING_LIMIT)' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -s f -l filename -d 'YAML files, or directories of them (as the FILE|DIR arguments; `-` is standard input, refused here: the status could not be written back)' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l dry-run -d 'Act on nothing: print the plan (`bmhctl plan`) of the run and exit 0'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then /usr/lib/bmhctl/plugins)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l concurrency -d 'Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on a CPU, and Ironic\'s all-in-one API server has 10 request threads, so 8 passes with one request each plus the one shared node listing stay under that' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l timing -d 'When a host\'s next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO\'s requeue time or as soon as the provisioner reports the host\'s wait over (its node changed, a slot freed); `bmo` only at BMO\'s requeue times, exactly as BMO does' -r -f -a "change\t''
bmo\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l ironic-wait -d 'How long to keep trying to reach Ironic (the provisioner\'s backend) at start, each new error printed at once, before giving up (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l timeout -d 'Give up on a host whose next attempt lies beyond this (e.g. 90s, 45m, 2h)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax: a=b,c!=d,e,!f,g in (x,y))' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s o -l output -d 'Result format printed when all hosts stopped' -r -f -a "table\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l result-file -d 'Also write the result as the JSON document of `-o json` to PATH (replaced atomically), whatever `-o` prints: the table for the log, the JSON for the next step' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l timeline -d 'Also write the run\'s timeline to FILE (replaced atomically) when it ends, interrupted too: one self-contained HTML page charting each host\'s states over time, its errors, retries and waits on the provisioner (PROVISIONING_LIMIT)' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l dry-run -d 'Act on nothing: print the plan (`bmhctl plan --for deprovision`) and exit 0'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then /usr/lib/bmhctl/plugins)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l concurrency -d 'Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on a CPU, and Ironic\'s all-in-one API server has 10 request threads, so 8 passes with one request each plus the one shared node listing stay under that' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l timing -d 'When a host\'s next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO\'s requeue time or as soon as the provisioner reports the host\'s wait over (its node changed, a slot freed); `bmo` only at BMO\'s requeue times, exactly as BMO does' -r -f -a "change\t''
bmo\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l ironic-wait -d 'How long to keep trying to reach Ironic (the provisioner\'s backend) at start, each new error printed at once, before giving up (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l timeout -d 'Give up on a host whose next attempt lies beyond this (e.g. 90s, 45m, 2h)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax: a=b,c!=d,e,!f,g in (x,y))' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s o -l output -d 'Result format printed when all hosts stopped' -r -f -a "table\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l result-file -d 'Also write the result as the JSON document of `-o json` to PATH (replaced atomically), whatever `-o` prints: the table for the log, the JSON for the next step' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l timeline -d 'Also write the run\'s timeline to FILE (replaced atomically) when it ends, interrupted too: one self-contained HTML page charting each host\'s states over time, its errors, retries and waits on the provisioner (PROVISIONING_LIMIT)' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l no-wait -d 'Return once the deletion is recorded, without waiting for BMO\'s delete path to finish (a running `bmhctl watch` finishes it; on files, the next run that drives them)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l dry-run -d 'Act on nothing: print the plan (`bmhctl plan --for delete`) and exit 0'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -s f -l filename -d 'YAML files, or directories of them, holding BareMetalHosts, their Secrets and companion objects' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -l dry-run -d 'Write nothing: show what would change in the store, as `bmhctl diff` does (exit 0)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand diff" -s f -l filename -d 'YAML files, or directories of them, as `bmhctl apply` takes them' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand diff" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand diff" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand diff" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand diff" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand diff" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand diff" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand diff" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand diff" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -l for -d 'The command whose goal is planned: `provision` (on the store: what `watch` would do, hosts being deleted included), `deprovision` or `delete`' -r -f -a "provision\t''
deprovision\t''
delete\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -l provisioner -d 'The provisioner whose hosts these are: `fixture` or a plugin NAME; a plugin that answers read-only questions (ironic) is asked for each registered host\'s node' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -s o -l output -r -f -a "table\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s o -l output -d 'table, wide, yaml, json, name, jsonpath=TEMPLATE (kubectl\'s: `{.items[*].metadata.name}`, `{range .items[*]}{.metadata.name}{"\\n"}{end}`) or custom-columns=HEADER:PATH,...' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -l sort-by -d 'Sort the objects by the value at this JSONPath (kubectl\'s: `.metadata.name`, `{.metadata.creationTimestamp}`), as they are printed with -o json' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s n -l namespace -d 'Only the hosts of this namespace [default on the store: default]' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -l poll-interval -d 'How often `-w` reads the hosts again' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s A -l all-namespaces -d 'The hosts of every namespace, with a NAMESPACE column'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -l no-headers -d 'Print the table without its header line'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -l show-labels -d 'Add a LABELS column to the table'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s w -l watch -d 'After the hosts, print each change of them as it happens, until SIGINT or SIGTERM: a table row, or with `-o json` one watch event a line (`{"type":"ADDED|MODIFIED|DELETED","object":{...}}`)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -s n -l namespace -d 'Only the hosts of this namespace [default on the store: default]' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -s A -l all-namespaces -d 'The hosts of every namespace, with a NAMESPACE column'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -s n -l namespace -d 'Only the hosts of this namespace [default on the store: default]' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -s o -l output -d 'The output format: `html`, the only one (as `-o` is everywhere a format; a file name here is refused with a pointer to --output-file)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -l output-file -d 'Write the page to FILE (replaced atomically) instead of standard output, which must then not be a terminal' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -s A -l all-namespaces -d 'The hosts of every namespace, with a NAMESPACE column'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand timeline" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -s o -l output -d 'The output format: `yaml`, the only one (as `-o` is everywhere a format; a file name here is refused with a pointer to --output-file)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -l output-file -d 'Write the export to FILE (mode 0600: it holds the Secrets\' values) instead of stdout' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then /usr/lib/bmhctl/plugins)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l concurrency -d 'Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on a CPU, and Ironic\'s all-in-one API server has 10 request threads, so 8 passes with one request each plus the one shared node listing stay under that' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l timing -d 'When a host\'s next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO\'s requeue time or as soon as the provisioner reports the host\'s wait over (its node changed, a slot freed); `bmo` only at BMO\'s requeue times, exactly as BMO does' -r -f -a "change\t''
bmo\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l ironic-wait -d 'How long to keep trying to reach Ironic (the provisioner\'s backend) at start, each new error printed at once, before giving up (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l poll-interval -d 'How often the store\'s files (or the files given) are checked for changes' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -s o -l output -d '`text`: a line per transition; `json`: one JSON object a line (NDJSON) per transition and per event, flushed as it happens' -r -f -a "text\t'A line per change of a host\'s state, status, power or error'
json\t'One JSON object a line: each transition and each event (docs/output.md)'"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l metrics-addr -d 'Serve Prometheus metrics at http://ADDR/metrics (`HOST:PORT`; port 0 picks a free port, said on stderr)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l for -d 'What to wait for: a provisioning state as BMO spells it (`available`, `provisioned`, `"externally provisioned"`, ...; `-` or `_` may stand for the space, as in `externally-provisioned`), `goal` (the host\'s goal, as `provision` sees it, with no error), `detached`, `error`, `powered-on`, `powered-off`, `delete` (or `deleted`); kubectl\'s `condition=TYPE[=STATUS]` on the host\'s status conditions (`Ready`, `Provisioned`, `AvailableForProvisioning`, `Manageable`, `Progressing`, `Healthy`; STATUS `True` by default; any case) and `jsonpath=EXPR[=VALUE]` (EXPR such as `{.status.provisioning.state}`; without VALUE, EXPR names a value). A host resting at its goal that can never meet a state or condition ends the wait at once (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l timeout -d 'Give up after this long (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then /usr/lib/bmhctl/plugins)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l concurrency -d 'Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on a CPU, and Ironic\'s all-in-one API server has 10 request threads, so 8 passes with one request each plus the one shared node listing stay under that' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l timing -d 'When a host\'s next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO\'s requeue time or as soon as the provisioner reports the host\'s wait over (its node changed, a slot freed); `bmo` only at BMO\'s requeue times, exactly as BMO does' -r -f -a "change\t''
bmo\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l ironic-wait -d 'How long to keep trying to reach Ironic (the provisioner\'s backend) at start, each new error printed at once, before giving up (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l all -d 'Every host of the files or the store (what naming none does too)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand wait" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and not __fish_seen_subcommand_from on off help" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and not __fish_seen_subcommand_from on off help" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and not __fish_seen_subcommand_from on off help" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and not __fish_seen_subcommand_from on off help" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and not __fish_seen_subcommand_from on off help" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and not __fish_seen_subcommand_from on off help" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and not __fish_seen_subcommand_from on off help" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and not __fish_seen_subcommand_from on off help" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and not __fish_seen_subcommand_from on off help" -f -a "on" -d 'Let the hosts be powered on again: removes bmhctl\'s `reboot.metal3.io/bmhctl` annotation (a host with `online: false` stays off)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and not __fish_seen_subcommand_from on off help" -f -a "off" -d 'Keep the hosts powered off: sets the held reboot annotation `reboot.metal3.io/bmhctl`'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and not __fish_seen_subcommand_from on off help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -s l -l selector -d 'The hosts whose labels match (kubectl syntax), with or instead of names' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l timeout -d 'With --wait: give up after this long (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then /usr/lib/bmhctl/plugins)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l concurrency -d 'Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on a CPU, and Ironic\'s all-in-one API server has 10 request threads, so 8 passes with one request each plus the one shared node listing stay under that' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l timing -d 'When a host\'s next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO\'s requeue time or as soon as the provisioner reports the host\'s wait over (its node changed, a slot freed); `bmo` only at BMO\'s requeue times, exactly as BMO does' -r -f -a "change\t''
bmo\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l ironic-wait -d 'How long to keep trying to reach Ironic (the provisioner\'s backend) at start, each new error printed at once, before giving up (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l wait -d 'Wait for the outcome (driving the hosts in-process when no `bmhctl watch` runs)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from on" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -s l -l selector -d 'The hosts whose labels match (kubectl syntax), with or instead of names' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l timeout -d 'With --wait: give up after this long (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then /usr/lib/bmhctl/plugins)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l concurrency -d 'Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on a CPU, and Ironic\'s all-in-one API server has 10 request threads, so 8 passes with one request each plus the one shared node listing stay under that' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l timing -d 'When a host\'s next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO\'s requeue time or as soon as the provisioner reports the host\'s wait over (its node changed, a slot freed); `bmo` only at BMO\'s requeue times, exactly as BMO does' -r -f -a "change\t''
bmo\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l ironic-wait -d 'How long to keep trying to reach Ironic (the provisioner\'s backend) at start, each new error printed at once, before giving up (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l hard -d 'Power off hard, without a graceful shutdown first (`{"mode":"hard"}`)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l force -d 'Also act on hosts that are not provisioned (`{"force":true}`; BMO ignores the annotation in `available` otherwise, and a forced one interrupts inspection or provisioning)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l wait -d 'Wait for the outcome (driving the hosts in-process when no `bmhctl watch` runs)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from off" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from help" -f -a "on" -d 'Let the hosts be powered on again: removes bmhctl\'s `reboot.metal3.io/bmhctl` annotation (a host with `online: false` stays off)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from help" -f -a "off" -d 'Keep the hosts powered off: sets the held reboot annotation `reboot.metal3.io/bmhctl`'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand power; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -s l -l selector -d 'The hosts whose labels match (kubectl syntax), with or instead of names' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l timeout -d 'With --wait: give up after this long (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then /usr/lib/bmhctl/plugins)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l concurrency -d 'Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on a CPU, and Ironic\'s all-in-one API server has 10 request threads, so 8 passes with one request each plus the one shared node listing stay under that' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l timing -d 'When a host\'s next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO\'s requeue time or as soon as the provisioner reports the host\'s wait over (its node changed, a slot freed); `bmo` only at BMO\'s requeue times, exactly as BMO does' -r -f -a "change\t''
bmo\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l ironic-wait -d 'How long to keep trying to reach Ironic (the provisioner\'s backend) at start, each new error printed at once, before giving up (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l hard -d 'Power off hard, without a graceful shutdown first'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l force -d 'Also act on hosts that are not provisioned (see `power off --force`)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l wait -d 'Wait for the outcome (driving the hosts in-process when no `bmhctl watch` runs)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reboot" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -s l -l selector -d 'The hosts whose labels match (kubectl syntax), with or instead of names' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l timeout -d 'With --wait: give up after this long (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then /usr/lib/bmhctl/plugins)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l concurrency -d 'Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on a CPU, and Ironic\'s all-in-one API server has 10 request threads, so 8 passes with one request each plus the one shared node listing stay under that' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l timing -d 'When a host\'s next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO\'s requeue time or as soon as the provisioner reports the host\'s wait over (its node changed, a slot freed); `bmo` only at BMO\'s requeue times, exactly as BMO does' -r -f -a "change\t''
bmo\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l ironic-wait -d 'How long to keep trying to reach Ironic (the provisioner\'s backend) at start, each new error printed at once, before giving up (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l wait -d 'Wait for the outcome (driving the hosts in-process when no `bmhctl watch` runs)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand inspect" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -s l -l selector -d 'The hosts whose labels match (kubectl syntax), with or instead of names' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l timeout -d 'With --wait: give up after this long (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then /usr/lib/bmhctl/plugins)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l concurrency -d 'Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on a CPU, and Ironic\'s all-in-one API server has 10 request threads, so 8 passes with one request each plus the one shared node listing stay under that' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l timing -d 'When a host\'s next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO\'s requeue time or as soon as the provisioner reports the host\'s wait over (its node changed, a slot freed); `bmo` only at BMO\'s requeue times, exactly as BMO does' -r -f -a "change\t''
bmo\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l ironic-wait -d 'How long to keep trying to reach Ironic (the provisioner\'s backend) at start, each new error printed at once, before giving up (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l force -d 'Detach even while an operation is in progress (`{"force":true}`)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l wait -d 'Wait for the outcome (driving the hosts in-process when no `bmhctl watch` runs)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand detach" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -s l -l selector -d 'The hosts whose labels match (kubectl syntax), with or instead of names' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l timeout -d 'With --wait: give up after this long (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then /usr/lib/bmhctl/plugins)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l concurrency -d 'Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on a CPU, and Ironic\'s all-in-one API server has 10 request threads, so 8 passes with one request each plus the one shared node listing stay under that' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l timing -d 'When a host\'s next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO\'s requeue time or as soon as the provisioner reports the host\'s wait over (its node changed, a slot freed); `bmo` only at BMO\'s requeue times, exactly as BMO does' -r -f -a "change\t''
bmo\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l ironic-wait -d 'How long to keep trying to reach Ironic (the provisioner\'s backend) at start, each new error printed at once, before giving up (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l wait -d 'Wait for the outcome (driving the hosts in-process when no `bmhctl watch` runs)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand attach" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand pause" -s l -l selector -d 'The hosts whose labels match (kubectl syntax), with or instead of names' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand pause" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand pause" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand pause" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand pause" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand pause" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand pause" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand pause" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand pause" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand pause" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand pause" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand resume" -s l -l selector -d 'The hosts whose labels match (kubectl syntax), with or instead of names' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand resume" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand resume" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand resume" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand resume" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand resume" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand resume" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand resume" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand resume" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand resume" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand resume" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -s l -l selector -d 'The hosts whose labels match (kubectl syntax), with or instead of names' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -s f -l filename -d 'YAML files, or directories of them (`-` is standard input); without -f, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l timeout -d 'With --wait: give up after this long (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so (unset: plugins/ beside the binary, then /usr/lib/bmhctl/plugins)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l concurrency -d 'Passes run at once (default 8, or $BMO_CONCURRENCY): passes mostly wait on Ironic, not on a CPU, and Ironic\'s all-in-one API server has 10 request threads, so 8 passes with one request each plus the one shared node listing stay under that' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l timing -d 'When a host\'s next pass runs: `change` (default, or $BMHCTL_TIMING) at BMO\'s requeue time or as soon as the provisioner reports the host\'s wait over (its node changed, a slot freed); `bmo` only at BMO\'s requeue times, exactly as BMO does' -r -f -a "change\t''
bmo\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l ironic-wait -d 'How long to keep trying to reach Ironic (the provisioner\'s backend) at start, each new error printed at once, before giving up (exit 1)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l wait -d 'Wait for the outcome (driving the hosts in-process when no `bmhctl watch` runs)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand retry" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -s o -l output -d 'How to show the result: a table for people, or JSON (per host: errors, warnings and the resolved BMC access, passwords redacted)' -r -f -a "table\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -l allow-warning -d 'With --strict, accept the warnings of CLASS (each warning ends with its class in brackets); repeatable' -r -f -a "unknown-field\t'A field bmhctl does not know, kept under `--validate=warn` or under `status:`'
fake-hardware\t'A `fake-hardware://` address: bmhctl\'s own scheme, which a metal3 cluster refuses'
bmc-address\t'A BMC address BMO accepts but that cannot reach a BMC, or a mistyped scheme'
bmc-credentials\t'BMC credentials that registration will refuse (no Secret name, a missing field)'"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -s f -l filename -d 'YAML files, or directories of them (as the FILE|DIR arguments; `-` is standard input)' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -l strict -d 'Fail (exit 2) on warnings too: unknown fields under `--validate=warn` or under `status:`, BMC addresses BMO accepts but that cannot work, the admission warnings'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -f -a "check" -d 'Open a plugin as the loader does, run its host configure and factory, and report'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -f -a "list" -d 'The plugins of the plugin directories, with their names and versions'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from check" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from check" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from check" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from check" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from check" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from check" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from check" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -s o -l output -d '`table`, or the `PluginList` document as `json`' -r -f -a "table\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from help" -f -a "check" -d 'Open a plugin as the loader does, run its host configure and factory, and report'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from help" -f -a "list" -d 'The plugins of the plugin directories, with their names and versions'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -f -a "get-contexts" -d 'List the contexts of the config file; `*` marks the current one'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -f -a "current-context" -d 'Print the name of the current context'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -f -a "use-context" -d 'Make NAME the current context (written into the config file)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -f -a "path" -d 'Print where the config file is (`$BMHCTL_CONFIG`, else the platform\'s config directory)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -f -a "set-context" -d 'Create the context NAME, or change the fields given (an empty value removes one)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -f -a "view" -d 'Print the config file as bmhctl reads it, passwords in URLs as REDACTED'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -f -a "delete-context" -d 'Remove the context NAME from the config file'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -f -a "rename-context" -d 'Rename the context OLD to NEW (and the current context with it)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and not __fish_seen_subcommand_from get-contexts current-context use-context path set-context view delete-context rename-context help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from get-contexts" -s o -l output -d '`table`, or `name`: the names alone, one a line' -r -f -a "table\t''
name\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from get-contexts" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from get-contexts" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from get-contexts" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from get-contexts" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from get-contexts" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from get-contexts" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from get-contexts" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from get-contexts" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from current-context" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from current-context" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from current-context" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from current-context" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from current-context" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from current-context" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from current-context" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from current-context" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from use-context" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from use-context" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from use-context" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from use-context" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from use-context" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from use-context" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from use-context" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from use-context" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from path" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from path" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from path" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from path" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from path" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from path" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from path" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from path" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l endpoint -l ironic-endpoint -d 'Ironic\'s API (`IRONIC_ENDPOINT`); credentials go in --credentials-file' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l credentials-file -d 'HTTP basic credentials for the endpoint (YAML or a Secret), mode 0600' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l ca-file -d 'CA bundle (`IRONIC_CACERT_FILE`)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l client-cert-file -d 'mTLS client certificate (`IRONIC_CLIENT_CERT_FILE`)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l client-key-file -d 'mTLS client key (`IRONIC_CLIENT_PRIVATE_KEY_FILE`)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l insecure -d 'Skip TLS verification (`IRONIC_INSECURE`); `--insecure=false` turns it off' -r -f -a "true\t''
false\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l deploy-kernel-url -d '`DEPLOY_KERNEL_URL`' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l deploy-ramdisk-url -d '`DEPLOY_RAMDISK_URL`' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l deploy-iso-url -d '`DEPLOY_ISO_URL`' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l provisioner -d 'The provisioner (`--provisioner` of the commands run in the context)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l store -d 'The store (`--store` of the commands run in the context)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l current -d 'Make it the current context too'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from set-context" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from view" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from view" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from view" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from view" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from view" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from view" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from view" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from view" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from delete-context" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from delete-context" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from delete-context" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from delete-context" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from delete-context" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from delete-context" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from delete-context" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from delete-context" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from rename-context" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from rename-context" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from rename-context" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from rename-context" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from rename-context" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from rename-context" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from rename-context" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from rename-context" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "get-contexts" -d 'List the contexts of the config file; `*` marks the current one'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "current-context" -d 'Print the name of the current context'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "use-context" -d 'Make NAME the current context (written into the config file)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "path" -d 'Print where the config file is (`$BMHCTL_CONFIG`, else the platform\'s config directory)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "set-context" -d 'Create the context NAME, or change the fields given (an empty value removes one)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "view" -d 'Print the config file as bmhctl reads it, passwords in URLs as REDACTED'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "delete-context" -d 'Remove the context NAME from the config file'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "rename-context" -d 'Rename the context OLD to NEW (and the current context with it)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -l from-bifrost -d 'Read a bifrost inventory (JSON or YAML: node name -> uuid, driver, driver_info, nics)' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -s l -l selector -d 'Only nodes whose generated labels match (kubectl syntax), e.g. `ironic.driver=redfish,ironic.state=active`' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -s n -l namespace -d 'The namespace of the hosts (a node named `NAMESPACE~NAME`, as BMO names its nodes, keeps its own)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -l output-file -d 'Write the documents into FILE (created, mode 0600; refused when it exists) instead of standard output. Only a file gets a real password; standard output gets placeholders' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -l from-ironic -d 'Read the nodes of the Ironic the environment (or the context) names: IRONIC_ENDPOINT, its credentials and CA, listed by the ironic provisioner plugin'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand import" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -s o -l output -d '`text` for people, or the `Version` document as `json` or `yaml`' -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand completions" -l validate -d 'Fields no schema knows: `strict` refuses the input (exit 2), `warn` says so on stderr, `ignore` keeps them silently. Unknown fields under `status:` are warnings at most' -r -f -a "strict\t''
warn\t''
ignore\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand completions" -l progress -d 'Progress on stderr while hosts are driven: `auto` draws bars on a terminal that can show them and prints timestamped lines otherwise (a pipe, `CI=true`, `TERM=dumb`), `plain` always prints the lines, `none` prints nothing but errors' -r -f -a "auto\t''
plain\t''
none\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand completions" -l log-format -d 'The format of log messages on stderr (-v, -vv, BMHCTL_LOG): `text`, coloured on a terminal unless NO_COLOR is set, or `json`, one object a line' -r -f -a "text\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand completions" -l context -d 'The context of the config file to use (endpoint, credentials, deploy images, provisioner, store) instead of its current one (or $BMHCTL_CONTEXT)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand completions" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand completions" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand completions" -l skip-unknown-kinds -d 'Also skip documents whose kind looks like a typo of one bmhctl reads, or is unknown to metal3.io (refused by default); other kinds are always skipped with a note'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand completions" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "provision" -d 'Drive every selected host to its goal and write its status back into its file'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "deprovision" -d 'Remove what provisioning did: BMO\'s deprovision path back to `available`'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "delete" -d 'Run BMO\'s delete path to its end: the provisioner forgets the host and its status is removed'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "apply" -d 'Create or update the files\' hosts, Secrets and companion objects in the local store'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "diff" -d 'Show what `apply -f` would change in the local store, as `kubectl diff`: a unified diff of each object that would change (Secret values masked)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "plan" -d 'Show the path each host would take to its goal, what the provisioner would be asked to do, and what of it is destructive, without acting: from the hosts\' files or the local store, their status, and the live node when the provisioner answers read-only questions (ironic)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "get" -d 'Show hosts and their status: those of the local store, or of files with -f'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "describe" -d 'Show hosts in detail: spec highlights, hardware, operation history, conditions and recent events (the store\'s log; for files, each host\'s last 20, kept in its bookkeeping), identical events counted once'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "timeline" -d 'Write the timeline of hosts as one self-contained HTML page: each host\'s states over time, its errors and retries, from what it recorded (its operation history and events)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "export" -d 'Write hosts as a metal3 cluster accepts them: status in BMO\'s status annotation, with their Secrets, firmware objects and HardwareData'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "watch" -d 'Reconcile hosts continuously, as BMO\'s controller does, until Ctrl-C or SIGTERM: those of the local store, or of files with -f'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "wait" -d 'Wait until hosts reach a state (driving them when no `watch` runs)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "power" -d 'Power hosts off or let them power on again (BMO\'s held reboot annotation)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "reboot" -d 'Reboot hosts once: sets BMO\'s one-shot `reboot.metal3.io` annotation'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "inspect" -d 'Inspect hosts again: sets `inspect.metal3.io` (BMO acts on it in `available`)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "detach" -d 'Detach hosts from the provisioner: sets `baremetalhost.metal3.io/detached`'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "attach" -d 'Attach detached hosts again: removes `baremetalhost.metal3.io/detached`'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "pause" -d 'Stop reconciling hosts: sets `baremetalhost.metal3.io/paused` (done once written: nothing to wait for)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "resume" -d 'Reconcile paused hosts again: removes `baremetalhost.metal3.io/paused` (done once written)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "retry" -d 'Retry hosts now instead of after their backoff wait (their error counts are kept)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "validate" -d 'Check hosts against BMO\'s admission rules (CRD schema and validating webhook)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "plugin" -d 'Inspect provisioner plugins'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "config" -d 'Show, write and switch the contexts of the config file ($BMHCTL_CONFIG, else ~/.config/bmhctl/config.yaml)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "import" -d 'Write BareMetalHosts and their BMC Secrets for the nodes of an Ironic (adopted as they are by the next run) or of a bifrost inventory'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "version" -d 'Print the version of bmhctl (its git commit and build date) and of its plugin interface'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply diff plan get describe timeline export watch wait power reboot inspect detach attach pause resume retry validate plugin config import version completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from power" -f -a "on" -d 'Let the hosts be powered on again: removes bmhctl\'s `reboot.metal3.io/bmhctl` annotation (a host with `online: false` stays off)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from power" -f -a "off" -d 'Keep the hosts powered off: sets the held reboot annotation `reboot.metal3.io/bmhctl`'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from plugin" -f -a "check" -d 'Open a plugin as the loader does, run its host configure and factory, and report'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from plugin" -f -a "list" -d 'The plugins of the plugin directories, with their names and versions'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "get-contexts" -d 'List the contexts of the config file; `*` marks the current one'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "current-context" -d 'Print the name of the current context'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "use-context" -d 'Make NAME the current context (written into the config file)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "path" -d 'Print where the config file is (`$BMHCTL_CONFIG`, else the platform\'s config directory)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "set-context" -d 'Create the context NAME, or change the fields given (an empty value removes one)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "view" -d 'Print the config file as bmhctl reads it, passwords in URLs as REDACTED'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "delete-context" -d 'Remove the context NAME from the config file'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "rename-context" -d 'Rename the context OLD to NEW (and the current context with it)'
