# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_bmhctl_global_optspecs
    string join \n v/verbose q/quiet h/help V/version
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

complete -c bmhctl -n "__fish_bmhctl_needs_command" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "provision" -d 'Drive every selected host to its goal and write its status back into its file'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "deprovision" -d 'Remove what provisioning did: BMO\'s deprovision path back to `available`'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "delete" -d 'Run BMO\'s delete path to its end: the provisioner forgets the host and its status is removed'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "apply" -d 'Create or update the files\' hosts, Secrets and companion objects in the local store'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "get" -d 'Show hosts and their status: those of the local store, or of files with -f'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "describe" -d 'Show one host of the local store in detail, with its conditions and recent events'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "reconcile" -d 'Drive the local store\'s hosts to their goal once, holding the store\'s lease (internal: what `watch` builds on)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "validate" -d 'Check hosts against BMO\'s admission rules (CRD schema and validating webhook)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "plugin" -d 'Inspect provisioner plugins'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "version" -d 'Print the version of bmhctl and of its plugin interface'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "man" -d 'Print the man page (roff)'
complete -c bmhctl -n "__fish_bmhctl_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l host -d 'Only this host (NAME or NAMESPACE/NAME); may be repeated' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l timeout -d 'Give up on a host whose next attempt lies beyond this (e.g. 90s, 45m, 2h)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l concurrency -d 'Passes run at once (default: the CPU count, at least 2 and at most 8)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax: a=b,c!=d,e,!f,g in (x,y))' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -s o -l output -d 'Result format printed when all hosts stopped' -r -f -a "table\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand provision" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s f -l filename -d 'YAML files, or directories of them, holding the hosts and their BMC Secrets' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l timeout -d 'Give up on a host whose next attempt lies beyond this (e.g. 90s, 45m, 2h)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l concurrency -d 'Passes run at once (default: the CPU count, at least 2 and at most 8)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax: a=b,c!=d,e,!f,g in (x,y))' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s o -l output -d 'Result format printed when all hosts stopped' -r -f -a "table\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand deprovision" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s f -l filename -d 'YAML files, or directories of them, holding the hosts and their BMC Secrets' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l timeout -d 'Give up on a host whose next attempt lies beyond this (e.g. 90s, 45m, 2h)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l concurrency -d 'Passes run at once (default: the CPU count, at least 2 and at most 8)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax: a=b,c!=d,e,!f,g in (x,y))' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s o -l output -d 'Result format printed when all hosts stopped' -r -f -a "table\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand delete" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -s f -l filename -d 'YAML files, or directories of them, holding BareMetalHosts, their Secrets and companion objects' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand apply" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s f -l filename -d 'YAML files, or directories of them; without, the hosts of the local store' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s o -l output -r -f -a "table\t''
wide\t''
yaml\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand get" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand describe" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reconcile" -l store -d 'The local store [default: the user\'s data directory, e.g. ~/.local/share/bmhctl/store]' -r -F
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reconcile" -l provisioner -d 'The provisioner: `fixture` (built in) or a plugin NAME loaded from $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reconcile" -l timeout -d 'Give up on a host whose next attempt lies beyond this (e.g. 90s, 45m, 2h)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reconcile" -l concurrency -d 'Passes run at once (default: the CPU count, at least 2 and at most 8)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reconcile" -l max-provisioning-retries -d 'Provisioning attempts per image before a host gives up (0 = unlimited)' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reconcile" -s l -l selector -d 'Only hosts whose labels match (kubectl syntax: a=b,c!=d,e,!f,g in (x,y))' -r
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reconcile" -s o -l output -d 'Result format printed when all hosts stopped' -r -f -a "table\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reconcile" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reconcile" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reconcile" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand reconcile" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -s o -l output -d 'How to show the result: a table for people, or JSON (per host: errors, warnings and the resolved BMC access, passwords redacted)' -r -f -a "table\t''
json\t''"
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand validate" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -f -a "check" -d 'Open a plugin as the loader does, run its host configure and factory, and report'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -f -a "list" -d 'The plugins in the plugin directory, with their names and versions'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and not __fish_seen_subcommand_from check list help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from check" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from check" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from check" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from help" -f -a "check" -d 'Open a plugin as the loader does, run its host configure and factory, and report'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from help" -f -a "list" -d 'The plugins in the plugin directory, with their names and versions'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand plugin; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand version" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand completions" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand completions" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand completions" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand completions" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand man" -s v -l verbose -d 'More detail: events and pass errors (-v), debug logs (-vv)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand man" -s q -l quiet -d 'Only errors and the final result'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand man" -s h -l help -d 'Print help'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand man" -s V -l version -d 'Print version'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "provision" -d 'Drive every selected host to its goal and write its status back into its file'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "deprovision" -d 'Remove what provisioning did: BMO\'s deprovision path back to `available`'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "delete" -d 'Run BMO\'s delete path to its end: the provisioner forgets the host and its status is removed'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "apply" -d 'Create or update the files\' hosts, Secrets and companion objects in the local store'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "get" -d 'Show hosts and their status: those of the local store, or of files with -f'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "describe" -d 'Show one host of the local store in detail, with its conditions and recent events'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "reconcile" -d 'Drive the local store\'s hosts to their goal once, holding the store\'s lease (internal: what `watch` builds on)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "validate" -d 'Check hosts against BMO\'s admission rules (CRD schema and validating webhook)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "plugin" -d 'Inspect provisioner plugins'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "version" -d 'Print the version of bmhctl and of its plugin interface'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "man" -d 'Print the man page (roff)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and not __fish_seen_subcommand_from provision deprovision delete apply get describe reconcile validate plugin version completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from plugin" -f -a "check" -d 'Open a plugin as the loader does, run its host configure and factory, and report'
complete -c bmhctl -n "__fish_bmhctl_using_subcommand help; and __fish_seen_subcommand_from plugin" -f -a "list" -d 'The plugins in the plugin directory, with their names and versions'
