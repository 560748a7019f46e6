//! The checked-in shell completions and man page are generated from the CLI: they must be current.

use crate::lab::Lab;

fn check(args: &[&str], path: &str) {
    let run = Lab::new().run(args).expect_code(0);
    let root = env!("CARGO_MANIFEST_DIR");
    let checked_in = std::fs::read_to_string(format!("{root}/{path}")).unwrap();
    assert!(
        run.stdout == checked_in,
        "{path} is out of date: regenerate it with `bmhctl {}`",
        args.join(" ")
    );
}

#[test]
fn completions_and_man_page_are_current() {
    check(&["completions", "bash"], "completions/bmhctl.bash");
    check(&["completions", "zsh"], "completions/_bmhctl");
    check(&["completions", "fish"], "completions/bmhctl.fish");
    check(&["man"], "docs/man/bmhctl.1");
}
