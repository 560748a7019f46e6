//! `bmhctl delete HOST...` on the local store: BMO's delete path run to its end.

use crate::lab::{Lab, host, secret};

fn hosts_file() -> String {
    format!(
        "{}---\n{}---\n{}",
        secret("bmc-secret"),
        host(
            "worker-0",
            "bootMACAddress: 00:11:22:33:44:55\nimage:\n  url: http://images.example/os.qcow2\n  checksum: abc123"
        ),
        host("spare-0", "bootMACAddress: 00:11:22:33:44:56"),
    )
}

#[test]
fn delete_runs_the_delete_path_to_its_end_and_removes_the_host_from_the_store() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "store"])
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
    let worker = lab.read("store/baremetalhosts/default/worker-0.yaml");
    assert!(worker.contains("    state: provisioned\n"), "{worker}");

    let run = lab
        .run(&[
            "delete",
            "worker-0",
            "--store",
            "store",
            "--provisioner",
            "fixture",
        ])
        .expect_code(0);
    assert_eq!(
        run.stdout,
        "baremetalhost.metal3.io/worker-0 deletion requested\nbaremetalhost.metal3.io/worker-0 deleted\n"
    );
    assert!(
        !lab.path("store/baremetalhosts/default/worker-0.yaml")
            .exists(),
        "the host is gone from the store"
    );
    // the other host and the Secret are untouched
    assert!(
        lab.path("store/baremetalhosts/default/spare-0.yaml")
            .exists()
    );
    assert!(lab.path("store/secrets/default/bmc-secret.yaml").exists());
    lab.run(&["get", "worker-0", "--store", "store"])
        .expect_code(2);
}

#[test]
fn delete_without_wait_only_records_the_request_and_a_later_run_finishes_it() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "store"])
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
    let run = lab
        .run(&["delete", "spare-0", "--store", "store", "--no-wait"])
        .expect_code(0);
    assert_eq!(
        run.stdout,
        "baremetalhost.metal3.io/spare-0 deletion requested\n"
    );
    let spare = lab.read("store/baremetalhosts/default/spare-0.yaml");
    assert!(spare.contains("deletionTimestamp:"), "{spare}");
    // asking again changes nothing
    let run = lab
        .run(&["delete", "spare-0", "--store", "store", "--no-wait"])
        .expect_code(0);
    assert!(
        run.stdout.contains("already being deleted"),
        "{}",
        run.stdout
    );
    // the next run (here the hidden reconcile; `watch` alike) carries the deletion out
    lab.run(&[
        "reconcile",
        "--store",
        "store",
        "--provisioner",
        "fixture",
        "-q",
    ])
    .expect_code(0);
    assert!(
        !lab.path("store/baremetalhosts/default/spare-0.yaml")
            .exists()
    );
}

#[test]
fn delete_on_the_store_needs_names_and_knows_its_hosts() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "store"])
        .expect_code(0);
    let run = lab.run(&["delete", "--store", "store"]).expect_code(2);
    assert!(run.stderr.contains("name the hosts"), "{}", run.stderr);
    let run = lab
        .run(&["delete", "nope", "--store", "store"])
        .expect_code(2);
    assert_eq!(
        run.stderr,
        "error: no BareMetalHost named nope in the store\n"
    );
}
