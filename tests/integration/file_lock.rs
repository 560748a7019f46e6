//! The lock a run holds on its host file cannot be deleted from under it: removing `.bmhctl/`
//! mid-run neither lets a second run drive the same hosts nor lets the first go on unawares.

use crate::lab::Lab;
use crate::save_failures::{hosts, spawn, wait_for_a_save, wait_output};

#[test]
fn removing_the_state_directory_mid_run_lets_no_second_run_in() {
    let lab = Lab::new().file("hosts.yaml", &hosts(4));
    let first = spawn(
        &lab,
        &["provision", "--provisioner", "fixture", "hosts.yaml"],
    );
    wait_for_a_save(&lab.path("hosts.yaml"));
    // Held still (its locks held) while the second run tries, so that on a loaded machine the
    // first cannot meet the removal at a save and end before the second starts.
    let signal = |sig| assert_eq!(unsafe { libc::kill(first.id() as i32, sig) }, 0);
    signal(libc::SIGSTOP);
    std::fs::remove_dir_all(lab.path(".bmhctl")).unwrap();

    let second = lab.run(&["provision", "--provisioner", "fixture", "hosts.yaml"]);
    signal(libc::SIGCONT);
    assert_eq!(
        (second.code, second.stderr.as_str()),
        (
            3,
            format!(
                "error: hosts.yaml is in use by another bmhctl process (pid {})\n",
                first.id()
            )
            .as_str()
        ),
        "{}",
        second.stdout
    );
    assert!(
        !lab.path(".bmhctl").exists(),
        "the refused run wrote nothing"
    );

    // The first run stops at its next save, saying why, and a re-run resumes.
    let (code, _, stderr) = wait_output(first);
    assert_eq!(code, 1, "{stderr}");
    let real = std::fs::canonicalize(lab.path("hosts.yaml")).unwrap();
    let lock = real.parent().unwrap().join(".bmhctl/hosts.yaml.lock");
    assert!(
        stderr.contains(&format!(
            "error: cannot save: hosts.yaml: its lock {} was removed during the run; stopping so \
             that no other bmhctl drives these hosts at the same time (run again to resume)",
            lock.display()
        )),
        "{stderr}"
    );
    lab.run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(0);
}
