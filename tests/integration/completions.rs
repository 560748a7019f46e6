//! The checked-in shell completions and man page are generated from the CLI: they must be current.

use crate::lab::Lab;

fn check(args: &[&str], path: &str) {
    let run = Lab::new().run(args).expect_code(0);
    let root = env!("CARGO_MANIFEST_DIR");
    let checked_in = std::fs::read_to_string(format!("{root}/{path}")).unwrap();
    assert!(
        run.stdout == checked_in,
        "{path} is out of date: regenerate it from `bmhctl {}`",
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

#[test]
fn every_command_has_a_current_man_page_with_its_sections() {
    let commands = bmhctl::cmd::man::subcommands();
    assert!(commands.iter().any(|c| c == "get"), "{commands:?}");
    for cmd in &commands {
        let path = format!("docs/man/bmhctl-{cmd}.1");
        check(&["man", cmd], &path);
        let page =
            std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        for section in ["EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES"] {
            assert!(
                page.contains(&format!(".SH \"{section}\"")),
                "{path} lacks {section}"
            );
        }
    }
    // No page for a command that is gone.
    let pages = std::fs::read_dir(format!("{}/docs/man", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("bmhctl-")
        })
        .count();
    assert_eq!(pages, commands.len());
}

#[test]
fn completions_offer_no_hidden_command() {
    for shell in ["bash", "zsh", "fish"] {
        let text = crate::lab::Lab::new()
            .run(&["completions", shell])
            .expect_code(0)
            .stdout;
        assert!(text.contains("provision"), "{shell}");
        assert!(
            !text.contains("reconcile"),
            "{shell} offers the hidden reconcile"
        );
    }
}
