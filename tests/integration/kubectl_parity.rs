//! `get` and `describe` as a kubectl user expects them: BMO's printer columns, the object for
//! one named host, `-o name`, `--no-headers`, `--show-labels`, `-n`/`-A`, several hosts
//! described with identical events counted once; and `provision` of a missing file naming it.

use crate::lab::{Lab, secret};

fn hosts_file() -> String {
    format!(
        "{}---\n{}---\n{}---\n{}",
        secret("bmc-secret"),
        host(
            "default",
            "worker-0",
            "rack: r1",
            "consumerRef:\n    name: cluster-a-m0\n    kind: Machine"
        ),
        host("default", "spare-0", "rack: r2", ""),
        host("lab", "edge-0", "rack: r1", ""),
    ) + "---\n"
        + &secret("bmc-secret").replace(
            "  name: bmc-secret\n",
            "  name: bmc-secret\n  namespace: lab\n",
        )
}

fn host(ns: &str, name: &str, label: &str, extra_spec: &str) -> String {
    let mut s = format!(
        "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\n  namespace: {ns}\n  labels:\n    {label}\nspec:\n  online: true\n  bootMACAddress: 52:54:00:00:00:01\n  bmc:\n    address: redfish://127.0.0.1:8000/redfish/v1/Systems/{name}\n    credentialsName: bmc-secret\n"
    );
    for line in extra_spec.lines() {
        s.push_str("  ");
        s.push_str(line);
        s.push('\n');
    }
    s
}

/// A store holding the hosts, driven once by the fixture.
fn store() -> Lab {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["apply", "--store", "store", "-f", "hosts.yaml"])
        .expect_code(0);
    lab.run(&[
        "reconcile",
        "--store",
        "store",
        "--provisioner",
        "fixture",
        "-q",
    ])
    .expect_code(0);
    lab
}

fn get(lab: &Lab, args: &[&str]) -> String {
    let mut all = vec!["get", "--store", "store"];
    all.extend_from_slice(args);
    normalised(&lab.run(&all).expect_code(0).stdout)
}

/// Ages (`0s`, `3m20s`), RFC 3339 times and uids replaced, word by word: they change from run to run.
fn normalised(text: &str) -> String {
    let age = |w: &str| {
        !w.is_empty()
            && w.chars().next().is_some_and(|c| c.is_ascii_digit())
            && w.chars().all(|c| c.is_ascii_digit() || "smhdy".contains(c))
            && w.chars().last().is_some_and(|c| "smhdy".contains(c))
    };
    text.lines()
        .map(|l| {
            l.split(' ')
                .map(|w| {
                    if chrono::DateTime::parse_from_rfc3339(w).is_ok() {
                        "[time]".to_string()
                    } else if w.len() == 36 && w.matches('-').count() == 4 {
                        "[uid]".to_string()
                    } else if age(w) {
                        "[age]".to_string()
                    } else if let Some(inner) = w.strip_suffix(')').filter(|i| age(i)) {
                        format!("[age]){}", &w[inner.len() + 1..])
                    } else {
                        w.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_table_has_bmo_printer_columns_in_the_default_namespace() {
    let lab = store();
    insta::assert_snapshot!("table", get(&lab, &[]));
    insta::assert_snapshot!("wide", get(&lab, &["-o", "wide"]));
}

#[test]
fn all_namespaces_add_a_namespace_column_and_n_picks_one() {
    let lab = store();
    insta::assert_snapshot!("all_namespaces_labels", get(&lab, &["-A", "--show-labels"]));
    insta::assert_snapshot!(
        "namespace_no_headers",
        get(&lab, &["-n", "lab", "--no-headers"])
    );
    insta::assert_snapshot!("names", get(&lab, &["-A", "-o", "name"]));
    // A host named NAMESPACE/NAME is found without -n.
    insta::assert_snapshot!("qualified_name", get(&lab, &["lab/edge-0", "--no-headers"]));
    let run = lab
        .run(&["get", "--store", "store", "-n", "nope"])
        .expect_code(0);
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, "No BareMetalHosts found in namespace nope.\n");
    let run = lab
        .run(&["get", "--store", "store", "-n", "lab", "worker-0"])
        .expect_code(2);
    assert_eq!(
        run.stderr,
        "error: no BareMetalHost named worker-0 in namespace lab of the store\n"
    );
}

#[test]
fn one_named_host_is_the_object_and_several_are_a_list() {
    let lab = store();
    let run = lab
        .run(&["get", "--store", "store", "worker-0", "-o", "json"])
        .expect_code(0);
    let obj = run.json();
    assert_eq!(obj["kind"], "BareMetalHost");
    assert_eq!(obj["metadata"]["name"], "worker-0");
    let created = obj["metadata"]["creationTimestamp"].as_str().unwrap();
    assert!(
        chrono::DateTime::parse_from_rfc3339(created).is_ok(),
        "{created}"
    );
    let run = lab
        .run(&["get", "--store", "store", "worker-0", "-o", "yaml"])
        .expect_code(0);
    assert!(
        run.stdout
            .starts_with("apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\n"),
        "{}",
        run.stdout
    );
    let run = lab
        .run(&["get", "--store", "store", "-A", "-o", "json"])
        .expect_code(0);
    let list = run.json();
    assert_eq!(list["kind"], "List");
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["spare-0", "worker-0", "edge-0"]);
}

#[test]
fn the_creation_time_is_kept_across_runs() {
    let lab = store();
    let first = lab
        .run(&["get", "--store", "store", "worker-0", "-o", "json"])
        .json();
    lab.run(&["apply", "--store", "store", "-f", "hosts.yaml"])
        .expect_code(0);
    let again = lab
        .run(&["get", "--store", "store", "worker-0", "-o", "json"])
        .json();
    assert_eq!(
        first["metadata"]["creationTimestamp"],
        again["metadata"]["creationTimestamp"]
    );
}

#[test]
fn a_host_recorded_without_a_creation_time_has_an_unknown_age() {
    let lab = store();
    // As a store written before bmhctl kept the time holds it.
    let path = lab.path("store/baremetalhosts/default/spare-0.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let old: String = text
        .split_inclusive('\n')
        .filter(|l| !l.trim_start().starts_with("creationTimestamp:"))
        .collect();
    assert_ne!(old, text, "the store keeps the creation time");
    std::fs::write(&path, old).unwrap();
    let run = lab
        .run(&["get", "--store", "store", "spare-0", "--no-headers"])
        .expect_code(0);
    assert!(
        run.stdout.trim_end().ends_with("<unknown>"),
        "{}",
        run.stdout
    );
    let run = lab
        .run(&["get", "--store", "store", "spare-0", "-o", "json"])
        .expect_code(0);
    assert!(run.json()["metadata"].get("creationTimestamp").is_none());
}

#[test]
fn describe_shows_several_hosts_with_identical_events_counted_once() {
    let lab = store();
    // Three more identical events, as a host inspected again records them.
    let events = lab.path("store/events/default/spare-0.jsonl");
    let mut text = std::fs::read_to_string(&events).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("InspectionComplete"))
        .unwrap()
        .to_string();
    for _ in 0..3 {
        text.push_str(&line);
        text.push('\n');
    }
    std::fs::write(&events, text).unwrap();
    let run = lab
        .run(&["describe", "--store", "store", "spare-0", "worker-0"])
        .expect_code(0);
    insta::assert_snapshot!(normalised(&run.stdout));
    let run = lab
        .run(&["describe", "-f", "hosts.yaml", "-n", "lab"])
        .expect_code(0);
    assert!(
        run.stdout
            .starts_with("Name:               edge-0\nNamespace:          lab\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn provision_of_a_missing_file_names_it_before_any_plugin_is_loaded() {
    let lab = Lab::new();
    // The default provisioner (ironic) is a plugin; the plugin directory does not exist.
    let run = lab.run_env(
        &["provision", "missing.yaml"],
        &[("PROVISIONER_PLUGIN_DIR", "/nonexistent/plugins")],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("missing.yaml"), "{}", run.stderr);
    assert!(!run.stderr.contains("plugin"), "{}", run.stderr);
}

/// `--sort-by`, `-o jsonpath=` and `-o custom-columns=` as kubectl prints them.
/// `get` on the store, its output as printed.
fn raw(lab: &Lab, args: &[&str]) -> String {
    let mut all = vec!["get", "--store", "store"];
    all.extend_from_slice(args);
    lab.run(&all).expect_code(0).stdout
}

#[test]
fn sort_by_jsonpath_and_custom_columns_print_as_kubectl() {
    let lab = store();
    assert_eq!(
        raw(&lab, &["-A", "--sort-by=.metadata.name", "-o", "name"]),
        "baremetalhost.metal3.io/edge-0\nbaremetalhost.metal3.io/spare-0\n\
         baremetalhost.metal3.io/worker-0\n"
    );
    // The objects of -o json sorted; a missing value sorts first, as kubectl's.
    let json = get(
        &lab,
        &["-A", "--sort-by", "{.spec.consumerRef.name}", "-o", "json"],
    );
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let names: Vec<&str> = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["spare-0", "edge-0", "worker-0"]);
    assert_eq!(
        raw(
            &lab,
            &[
                "-A",
                "--sort-by",
                ".metadata.name",
                "-o",
                "jsonpath={.items[*].metadata.name}"
            ]
        ),
        "edge-0 spare-0 worker-0"
    );
    let range = r#"jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\t"}{.status.provisioning.state}{"\n"}{end}"#;
    assert_eq!(
        raw(&lab, &["-A", "--sort-by=.metadata.name", "-o", range]),
        "lab/edge-0\tavailable\ndefault/spare-0\tavailable\ndefault/worker-0\tavailable\n"
    );
    // One named host: the template is on the object, without .items.
    assert_eq!(
        raw(
            &lab,
            &["worker-0", "-o", "jsonpath={.metadata.name} {.spec.online}"]
        ),
        "worker-0 true"
    );
    assert_eq!(
        raw(
            &lab,
            &[
                "--sort-by=.metadata.name",
                "-o",
                "custom-columns=NAME:.metadata.name,STATE:.status.provisioning.state,CONSUMER:.spec.consumerRef.name"
            ]
        ),
        "NAME      STATE      CONSUMER\nspare-0   available  <none>\nworker-0  available  cluster-a-m0\n"
    );
    assert_eq!(
        raw(
            &lab,
            &[
                "--no-headers",
                "--sort-by=.metadata.name",
                "-o",
                "custom-columns=N:.metadata.name"
            ]
        ),
        "spare-0\nworker-0\n"
    );
}

/// A bad template, column spec or sort path is a usage error, exit 2, saying what is wrong.
#[test]
fn bad_templates_columns_and_sort_paths_are_usage_errors() {
    let lab = store();
    let cases = [
        (
            vec!["-o", "jsonpath={.items[*]"],
            "error: invalid value 'jsonpath={.items[*]' for '--output <FORMAT>': unclosed action in template \"{.items[*]\"",
        ),
        (
            vec!["-o", "jsonpath={range .items[*]}{.a}"],
            "error: invalid value 'jsonpath={range .items[*]}{.a}' for '--output <FORMAT>': {range} without {end} in template \"{range .items[*]}{.a}\"",
        ),
        (
            vec!["-o", "custom-columns=NAME"],
            "error: invalid value 'custom-columns=NAME' for '--output <FORMAT>': unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>",
        ),
        (
            vec!["-o", "jsonpath"],
            "error: invalid value 'jsonpath' for '--output <FORMAT>': jsonpath template format specified but no template given (-o jsonpath='{.items[*].metadata.name}')",
        ),
    ];
    for (args, want) in cases {
        let mut all = vec!["get", "--store", "store"];
        all.extend(args);
        let r = lab.run(&all).expect_code(2);
        assert_eq!(r.stderr.lines().next(), Some(want), "{}", r.stderr);
    }
    let r = lab
        .run(&["get", "--store", "store", "--sort-by", ".metadata[name"])
        .expect_code(2);
    assert!(
        r.stderr
            .starts_with("error: invalid value '.metadata[name' for '--sort-by <JSONPATH>': invalid JSONPath \".metadata[name\": "),
        "{}",
        r.stderr
    );
}

/// AGE is `<unknown>` where nothing recorded when a host was created (standard input, a file
/// never run, a host deleted), and a host deleted from its file but still in it is
/// `(deleted)`, with the time `describe` gives, until a run takes it on again.
#[test]
fn an_unrecorded_host_has_an_unknown_age_and_a_deleted_one_says_so() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let table = "NAME        STATE  CONSUMER      ONLINE  ERROR  AGE\n\
                 worker-0    (new)  cluster-a-m0  true           <unknown>\n\
                 spare-0     (new)                true           <unknown>\n\
                 lab/edge-0  (new)                true           <unknown>\n";
    let stdin = assert_cmd::Command::cargo_bin("bmhctl")
        .unwrap()
        .current_dir(lab.path(""))
        .env("BMHCTL_CONFIG", lab.path("no-config.yaml"))
        .args(["get", "-f", "-"])
        .write_stdin(hosts_file())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&stdin.stdout), table);
    assert_eq!(
        lab.run(&["get", "-f", "hosts.yaml"]).expect_code(0).stdout,
        table
    );
    // Nothing recorded: no creation time in the object either.
    let json = lab
        .run(&["get", "-f", "hosts.yaml", "worker-0", "-o", "json"])
        .expect_code(0)
        .json();
    assert_eq!(json["metadata"].get("creationTimestamp"), None, "{json}");

    let fixture = ["--provisioner", "fixture", "-q"];
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(fixture);
        lab.run(&all).expect_code(0)
    };
    run(&["provision", "-f", "hosts.yaml", "--host", "spare-0"]);
    run(&["delete", "-f", "hosts.yaml", "spare-0"]);
    let after = lab.run(&["get", "-f", "hosts.yaml"]).expect_code(0).stdout;
    assert_eq!(
        after,
        "NAME        STATE      CONSUMER      ONLINE  ERROR  AGE\n\
         worker-0    (new)      cluster-a-m0  true           <unknown>\n\
         spare-0     (deleted)                true           <unknown>\n\
         lab/edge-0  (new)                    true           <unknown>\n"
    );
    let described = lab
        .run(&["describe", "-f", "hosts.yaml", "spare-0"])
        .expect_code(0)
        .stdout;
    let deleted = described
        .lines()
        .find_map(|l| l.strip_prefix("Deleted:            "))
        .unwrap_or_else(|| panic!("no Deleted line:\n{described}"));
    assert!(
        chrono::DateTime::parse_from_rfc3339(deleted).is_ok(),
        "{deleted}"
    );
    assert!(
        described.contains("\nState:              (deleted)\n"),
        "{described}"
    );
    assert!(
        described.contains("\nCreated:            <none>\n"),
        "{described}"
    );
    assert!(!described.contains("Resource Version"), "{described}");

    // Provisioned again, it is a host as any other.
    run(&["provision", "-f", "hosts.yaml", "--host", "spare-0"]);
    let again = lab
        .run(&["get", "-f", "hosts.yaml", "spare-0"])
        .expect_code(0)
        .stdout;
    let row = again.lines().nth(1).unwrap();
    assert!(row.starts_with("spare-0  available "), "{again}");
    assert!(!row.ends_with("<unknown>"), "{again}");
    let described = lab
        .run(&["describe", "-f", "hosts.yaml", "spare-0"])
        .expect_code(0)
        .stdout;
    assert!(!described.contains("Deleted:"), "{described}");
}
