//! kubectl's resource forms wherever hosts are named: a leading type (`bmh`, `baremetalhosts`,
//! `baremetalhost.metal3.io`, ...), `TYPE/NAME`, `NAMESPACE/NAME` kept, `-o name` output read
//! back, and types bmhctl does not have refused as kubectl refuses them; on files and on the
//! store.

use crate::lab::{Lab, Run, host, secret};

/// worker-0 and worker-1 in `default`, worker-2 in `lab`, a DataImage and a subscription.
fn hosts() -> String {
    let lab_secret = secret("bmc-secret").replace("metadata:\n", "metadata:\n  namespace: lab\n");
    let worker_2 = host("worker-2", "").replace("metadata:\n", "metadata:\n  namespace: lab\n");
    [
        secret("bmc-secret"),
        lab_secret,
        host("worker-0", ""),
        host("worker-1", ""),
        worker_2,
        "apiVersion: metal3.io/v1alpha1\nkind: DataImage\nmetadata:\n  name: worker-0\nspec:\n  url: http://images.example/config.iso\n".into(),
        "apiVersion: metal3.io/v1alpha1\nkind: BMCEventSubscription\nmetadata:\n  name: events-0\nspec:\n  hostName: worker-0\n  destination: https://events.example.com/hook\n".into(),
    ]
    .join("---\n")
}

/// The lab with `hosts.yaml` and the store `s` holding the same objects.
fn lab() -> Lab {
    let lab = Lab::new().file("hosts.yaml", &hosts());
    lab.run(&["apply", "--store", "s", "-f", "hosts.yaml"])
        .expect_code(0);
    lab
}

/// `args` after `command` on the files and on the store.
fn on_each(lab: &Lab, command: &[&str], args: &[&str]) -> [(&'static str, Run); 2] {
    let run = |place: &[&str]| {
        let mut all = command.to_vec();
        all.extend(place);
        all.extend(args);
        lab.run(&all)
    };
    [
        ("the given files", run(&["-f", "hosts.yaml"])),
        ("the store", run(&["--store", "s"])),
    ]
}

/// [`on_each`] where both places answer the same.
fn on_both(lab: &Lab, command: &[&str], args: &[&str]) -> Run {
    let [(_, files), (_, store)] = on_each(lab, command, args);
    assert_eq!(
        (files.code, &files.stdout, &files.stderr),
        (store.code, &store.stdout, &store.stderr),
        "{command:?} {args:?}: files, then the store"
    );
    files
}

/// `describe`'s text without the UID and creation time a file without them gets at each read.
fn described(run: Run) -> String {
    run.expect_code(0)
        .stdout
        .lines()
        .filter(|l| !l.starts_with("UID:") && !l.starts_with("Created:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn names(lab: &Lab, args: &[&str]) -> String {
    let mut all = vec!["-o", "name", "-A"];
    all.extend(args);
    let run = on_both(lab, &["get"], &all).expect_code(0);
    assert_eq!(run.stderr, "", "{args:?}");
    run.stdout
}

const W0: &str = "baremetalhost.metal3.io/worker-0\n";
const ALL: &str = "baremetalhost.metal3.io/worker-0\nbaremetalhost.metal3.io/worker-1\nbaremetalhost.metal3.io/worker-2\n";

#[test]
fn get_takes_a_leading_type_and_type_slash_name_in_every_form() {
    let lab = lab();
    for t in [
        "bmh",
        "BMH",
        "baremetalhost",
        "baremetalhosts",
        "baremetalhost.metal3.io",
        "baremetalhosts.metal3.io",
    ] {
        assert_eq!(names(&lab, &[t]), ALL, "{t}");
        assert_eq!(names(&lab, &[t, "worker-0"]), W0, "{t} worker-0");
        let slashed = format!("{t}/worker-0");
        assert_eq!(names(&lab, &[&slashed]), W0, "{slashed}");
    }
    // NAMESPACE/NAME as before, and after a type.
    let w2 = "baremetalhost.metal3.io/worker-2\n";
    assert_eq!(names(&lab, &["lab/worker-2"]), w2);
    assert_eq!(names(&lab, &["bmh", "lab/worker-2"]), w2);
    assert_eq!(names(&lab, &["bmh/lab/worker-2"]), w2);
    // The other kinds `get` lists, in their forms.
    let image = "dataimage.metal3.io/worker-0\n";
    for args in [
        &["dataimages"][..],
        &["dataimage", "worker-0"],
        &["dataimages.metal3.io"],
        &["dataimage/worker-0"],
        &["dataimage.metal3.io/worker-0"],
    ] {
        assert_eq!(names(&lab, args), image, "{args:?}");
    }
    let subscription = "bmceventsubscription.metal3.io/events-0\n";
    for args in [
        &["bes"][..],
        &["bmceventsubscriptions", "events-0"],
        &["bmceventsubscription.metal3.io/events-0"],
        &["bes/events-0"],
    ] {
        assert_eq!(names(&lab, args), subscription, "{args:?}");
    }
    // The table of one host named by type is the table of that host named plainly (but for its
    // last column, AGE, which may tick between the two commands).
    let plain = on_each(&lab, &["get"], &["worker-0"]);
    let typed = on_each(&lab, &["get"], &["baremetalhost/worker-0"]);
    let without_age = |table: String| -> Vec<String> {
        table
            .lines()
            .map(|l| {
                l.trim_end()
                    .rsplit_once(' ')
                    .map_or(l, |(a, _)| a)
                    .to_string()
            })
            .collect()
    };
    for ((place, plain), (_, typed)) in plain.into_iter().zip(typed) {
        assert_eq!(
            without_age(typed.expect_code(0).stdout),
            without_age(plain.expect_code(0).stdout),
            "{place}"
        );
    }
}

#[test]
fn every_command_taking_hosts_takes_the_forms() {
    let lab = lab();
    let plain = on_each(&lab, &["describe"], &["worker-0"]).map(|(_, r)| described(r));
    for args in [
        &["bmh", "worker-0"][..],
        &["baremetalhosts.metal3.io", "worker-0"],
        &["bmh/worker-0"],
        &["baremetalhost.metal3.io/worker-0"],
    ] {
        let typed = on_each(&lab, &["describe"], args).map(|(_, r)| described(r));
        assert_eq!(typed, plain, "describe {args:?}");
    }
    // The subscriptions described by type, as before.
    let [(_, bes), _] = on_each(&lab, &["describe"], &["bes"]);
    let bes = bes.expect_code(0);
    assert!(
        bes.stdout.starts_with("Name:               events-0\n"),
        "{}",
        bes.stdout
    );
    let run = on_both(
        &lab,
        &["pause"],
        &["bmh/worker-0", "baremetalhost.metal3.io/worker-1"],
    )
    .expect_code(0);
    assert_eq!(
        run.stdout,
        "baremetalhost.metal3.io/worker-0 paused\nbaremetalhost.metal3.io/worker-1 paused\n"
    );
    let run = on_both(
        &lab,
        &["resume"],
        &["baremetalhosts", "worker-0", "lab/worker-2"],
    )
    .expect_code(0);
    assert_eq!(
        run.stdout,
        "baremetalhost.metal3.io/worker-0 resumed\nbaremetalhost.metal3.io/worker-2 resumed (unchanged)\n"
    );
    // A type alone names no host for a verb.
    let run = on_both(&lab, &["pause"], &["bmh"]).expect_code(2);
    assert_eq!(
        run.stderr,
        "error: name the hosts (NAME, TYPE/NAME, or a type then names) or select them with -l\n"
    );
    let run = lab
        .run(&[
            "plan",
            "-f",
            "hosts.yaml",
            "--provisioner",
            "fixture",
            "bmh/worker-1",
        ])
        .expect_code(0);
    assert!(
        run.stdout.lines().nth(1).unwrap().starts_with("worker-1 "),
        "{}",
        run.stdout
    );
    assert_eq!(run.stdout.lines().count(), 2, "{}", run.stdout);
    let run = lab
        .run(&[
            "export",
            "-f",
            "hosts.yaml",
            "baremetalhost.metal3.io/worker-1",
        ])
        .expect_code(0);
    assert!(run.stdout.contains("name: worker-1\n") && !run.stdout.contains("name: worker-0\n"));
    let run = lab
        .run(&[
            "timeline",
            "-f",
            "hosts.yaml",
            "--output-file",
            "t.html",
            "bmh",
            "worker-1",
        ])
        .expect_code(0);
    assert_eq!(run.stderr, "");
    let run = lab
        .run_env(
            &[
                "wait",
                "-f",
                "hosts.yaml",
                "--for",
                "available",
                "bmh/worker-0",
            ],
            &[("BMHCTL_PROVISIONER", "fixture")],
        )
        .expect_code(0);
    assert!(
        run.stdout.ends_with("/worker-0 condition met\n"),
        "{}",
        run.stdout
    );
    let run = lab
        .run_env(
            &[
                "delete",
                "-f",
                "hosts.yaml",
                "-q",
                "baremetalhost/lab/worker-2",
            ],
            &[("BMHCTL_PROVISIONER", "fixture")],
        )
        .expect_code(0);
    assert!(run.stdout.contains("worker-2"), "{}", run.stdout);
    assert!(!run.stdout.contains("worker-0"), "{}", run.stdout);
}

#[test]
fn types_bmhctl_does_not_have_are_refused_as_kubectl_refuses_them() {
    let lab = lab();
    let all = ": it has baremetalhosts (bmh), dataimages and bmceventsubscriptions (bes)\n";
    for (command, args, said) in [
        (
            &["get"][..],
            &["pods"][..],
            format!("error: bmhctl doesn't have a resource type \"pods\"{all}"),
        ),
        (
            &["describe"],
            &["pod/x"],
            format!("error: bmhctl doesn't have a resource type \"pod\"{all}"),
        ),
        (
            &["get"],
            &["baremetalhots"],
            "error: bmhctl doesn't have a resource type \"baremetalhots\" (did you mean \
             baremetalhost?)\n"
                .to_string(),
        ),
        (
            &["pause"],
            &["baremetalhost.metal3.ioo/worker-0"],
            "error: bmhctl doesn't have a resource type \"baremetalhost.metal3.ioo\" (did you \
             mean baremetalhost.metal3.io?)\n"
                .to_string(),
        ),
        (
            &["pause"],
            &["dataimage/worker-0"],
            "error: this command acts on baremetalhosts.metal3.io, not dataimages.metal3.io\n"
                .to_string(),
        ),
        (
            &["get"],
            &["bmh", "bmh/worker-0"],
            "error: there is no need to specify a resource type as a separate argument when \
             passing arguments in resource/name form (e.g. 'bmh NAME' or 'bmh/worker-0', not \
             'bmh bmh/worker-0')\n"
                .to_string(),
        ),
        (
            &["get"],
            &["bmh/worker-0", "dataimage/worker-0"],
            "error: one resource type at a time: baremetalhosts.metal3.io and \
             dataimages.metal3.io given\n"
                .to_string(),
        ),
    ] {
        let run = on_both(&lab, command, args).expect_code(2);
        assert_eq!(run.stderr, said, "{command:?} {args:?}");
        assert_eq!(run.stdout, "");
    }
    // A prefix that is no type is a namespace, as before.
    let run = lab
        .run(&["get", "--store", "s", "nowhere/worker-0"])
        .expect_code(2);
    assert_eq!(
        run.stderr,
        "error: no BareMetalHost named nowhere/worker-0 in the store\n"
    );
}

/// `get -o name` output is read back: by `get`, `describe` and a verb (as through `xargs`).
#[test]
fn get_o_name_output_reads_back_into_get_describe_and_a_verb() {
    let lab = lab();
    for place in [&["-f", "hosts.yaml"][..], &["--store", "s"]] {
        let listed = |args: &[&str]| {
            let mut all = vec!["get", "-o", "name"];
            all.extend(place);
            all.extend(args);
            lab.run(&all).expect_code(0).stdout
        };
        let out = listed(&["worker-0", "worker-1"]);
        let names: Vec<&str> = out.lines().collect();
        assert_eq!(
            names,
            [
                "baremetalhost.metal3.io/worker-0",
                "baremetalhost.metal3.io/worker-1"
            ]
        );
        assert_eq!(listed(&names), out);
        let mut describe = vec!["describe"];
        describe.extend(place);
        describe.extend(&names);
        let mut plain = vec!["describe"];
        plain.extend(place);
        plain.extend(["worker-0", "worker-1"]);
        assert_eq!(described(lab.run(&describe)), described(lab.run(&plain)));
        let mut pause = vec!["pause"];
        pause.extend(place);
        pause.extend(&names);
        assert_eq!(
            lab.run(&pause).expect_code(0).stdout,
            "baremetalhost.metal3.io/worker-0 paused\nbaremetalhost.metal3.io/worker-1 paused\n"
        );
        // Through a shell pipe and xargs, as a user types it.
        let bin = assert_cmd::cargo::cargo_bin("bmhctl");
        let bin = bin.display();
        let place = place.join(" ");
        let piped = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{bin} get {place} -o name | xargs {bin} describe {place} | grep '^Name:'"
            ))
            .current_dir(lab.path(""))
            .env("BMHCTL_CONFIG", lab.path("no-config.yaml"))
            .output()
            .unwrap();
        // Files are listed whole; the store's `default` namespace unless -A.
        let named = match place.starts_with("-f") {
            true => {
                "Name:               worker-0\nName:               worker-1\nName:               worker-2\n"
            }
            false => "Name:               worker-0\nName:               worker-1\n",
        };
        assert_eq!(
            String::from_utf8_lossy(&piped.stdout),
            named,
            "{}",
            String::from_utf8_lossy(&piped.stderr)
        );
        let place: Vec<&str> = place.split(' ').collect();
        let place = &place[..];
        // The other kinds' names read back into `get` and `describe` too.
        for kind in ["dataimages", "bes"] {
            let out = listed(&[kind]);
            let names: Vec<&str> = out.lines().collect();
            assert_eq!(listed(&names), out, "{kind}");
            let mut describe = vec!["describe"];
            describe.extend(place);
            let by_type = lab.run(&[&describe[..], &[kind]].concat()).expect_code(0);
            describe.extend(&names);
            let by_name = lab.run(&describe).expect_code(0);
            assert_eq!(by_name.stdout, by_type.stdout, "{kind}");
        }
        let mut describe = vec!["describe"];
        describe.extend(place);
        describe.push("dataimage.metal3.io/worker-0");
        assert_eq!(
            lab.run(&describe).expect_code(0).stdout,
            "Name:               worker-0\nNamespace:          default\nKind:               \
             DataImage\nURL:                http://images.example/config.iso\nAttached:           \
             <none>\nErrors:             0\nLast Error:         <none>\nLast Reconciled:    \
             <none>\n"
        );
    }
}
