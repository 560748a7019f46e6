//! Completions that know the data: the real binary in clap_complete's completion mode (what
//! `source <(COMPLETE=bash bmhctl)` makes bash call at each Tab) offers host names, states
//! and contexts.

use crate::lab::{Lab, host, secret};

/// What bash is offered for the command line `words` (its last word being completed).
fn offered(lab: &Lab, words: &[&str], envs: &[(&str, &str)]) -> Vec<String> {
    let index = (words.len() - 1).to_string();
    let mut args = vec!["--"];
    args.extend_from_slice(words);
    let mut all = vec![
        ("COMPLETE", "bash"),
        ("_CLAP_COMPLETE_INDEX", index.as_str()),
        ("_CLAP_COMPLETE_COMP_TYPE", "9"),
        ("_CLAP_COMPLETE_SPACE", "true"),
        ("_CLAP_IFS", "\n"),
    ];
    all.extend_from_slice(envs);
    let run = lab.run_env(&args, &all).expect_code(0);
    run.stdout.lines().map(str::to_string).collect()
}

fn hosts_file() -> String {
    format!(
        "{}---\n{}---\n{}---\n{}",
        secret("bmc-secret"),
        host("worker-0", ""),
        host("worker-1", ""),
        host("spare-0", "")
    )
}

#[test]
fn the_registration_script_calls_bmhctl_back() {
    let lab = Lab::new();
    let run = lab.run_env(&[], &[("COMPLETE", "bash")]).expect_code(0);
    assert!(run.stdout.contains("complete "), "{}", run.stdout);
    assert!(run.stdout.contains("COMPLETE=\"bash\""), "{}", run.stdout);
    // Without COMPLETE, bmhctl is bmhctl.
    lab.run(&["version"]).expect_code(0);
}

#[test]
fn host_names_come_from_the_files_given() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    assert_eq!(
        offered(&lab, &["bmhctl", "get", "-f", "hosts.yaml", "w"], &[]),
        ["worker-0", "worker-1"]
    );
    // An empty word gets the options too; the hosts come first, in file order.
    let all = offered(
        &lab,
        &["bmhctl", "describe", "--filename=hosts.yaml", ""],
        &[],
    );
    assert_eq!(all[..3], ["worker-0", "worker-1", "spare-0"], "{all:?}");
    assert!(all[3..].iter().all(|o| o.starts_with('-')), "{all:?}");
    assert_eq!(
        offered(
            &lab,
            &[
                "bmhctl",
                "provision",
                "hosts.yaml",
                "-f",
                "hosts.yaml",
                "--host",
                "sp"
            ],
            &[]
        ),
        ["spare-0"]
    );
}

#[test]
fn host_names_come_from_the_store() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let store = lab.path("store");
    lab.run(&[
        "apply",
        "-f",
        "hosts.yaml",
        "--store",
        store.to_str().unwrap(),
    ])
    .expect_code(0);
    assert_eq!(
        offered(
            &lab,
            &["bmhctl", "delete", "s"],
            &[("BMHCTL_STORE", store.to_str().unwrap())]
        ),
        ["spare-0"]
    );
    assert_eq!(
        offered(
            &lab,
            &[
                "bmhctl",
                "power",
                "off",
                "--store",
                store.to_str().unwrap(),
                "worker-1"
            ],
            &[]
        ),
        ["worker-1"]
    );
}

#[test]
fn states_and_contexts_complete() {
    let lab = Lab::new().file(
        "config.yaml",
        "contexts:\n- name: lab\n- name: local\n- name: prod\n",
    );
    let config = lab.path("config.yaml");
    let env = [("BMHCTL_CONFIG", config.to_str().unwrap())];
    assert_eq!(
        offered(&lab, &["bmhctl", "wait", "--for", "provision"], &[]),
        ["provisioning", "provisioned"]
    );
    assert_eq!(
        offered(&lab, &["bmhctl", "--context", "l"], &env),
        ["lab", "local"]
    );
    for verb in [
        "use-context",
        "delete-context",
        "rename-context",
        "set-context",
    ] {
        assert_eq!(
            offered(&lab, &["bmhctl", "config", verb, "p"], &env),
            ["prod"],
            "{verb}"
        );
    }
    assert_eq!(
        offered(&lab, &["bmhctl", "get", "-o", "j"], &[]),
        ["json", "jsonpath="]
    );
}
