//! A command's help lists its own options, then only the global options that change what it
//! does; every global option is still accepted by every command.

use crate::lab::Lab;

/// The long flags of each section of `bmhctl ARGS --help`, one section a line.
fn sections(args: &[&str]) -> String {
    let mut args = args.to_vec();
    args.push("--help");
    let help = Lab::new().run(&args).expect_code(0).stdout;
    let mut out = String::new();
    for line in help.lines() {
        if line.ends_with(':') && !line.starts_with(' ') {
            out.push_str(&format!("\n{line}"));
        } else if let Some(flag) = line.split_whitespace().find(|w| w.starts_with("--"))
            && line.trim_start().starts_with('-')
        {
            out.push_str(&format!(" {}", flag.trim_end_matches(',')));
        }
    }
    out.trim_start().to_string()
}

#[test]
fn each_command_lists_the_global_options_that_change_it() {
    let all = [
        "get",
        "provision",
        "config get-contexts",
        "plugin list",
        "version",
    ]
    .map(|c| {
        format!(
            "bmhctl {c}\n{}\n",
            sections(&c.split(' ').collect::<Vec<_>>())
        )
    })
    .join("\n");
    insta::assert_snapshot!(all);
}

#[test]
fn a_global_option_not_listed_is_still_accepted() {
    let lab = Lab::new().file("hosts.yaml", &crate::lab::host("worker-0", ""));
    lab.run(&[
        "get",
        "--progress",
        "plain",
        "-f",
        "hosts.yaml",
        "-o",
        "name",
    ])
    .expect_code(0);
    lab.run(&["config", "path", "--skip-unknown-kinds"])
        .expect_code(0);
}

#[test]
fn only_the_top_level_prints_the_version() {
    let lab = Lab::new();
    let top = lab.run(&["-V"]).expect_code(0);
    assert_eq!(
        top.stdout,
        format!("bmhctl {}\n", env!("CARGO_PKG_VERSION"))
    );
    let sub = lab.run(&["get", "-V"]).expect_code(2);
    assert!(
        sub.stderr
            .starts_with("error: unexpected argument '-V' found"),
        "{}",
        sub.stderr
    );
}

#[test]
fn a_usage_error_shows_the_commands_usage_not_the_flags_typed() {
    let run = Lab::new()
        .run(&["get", "-f", "x.yaml", "--store", "y", "--bogus"])
        .expect_code(2);
    let usage: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("Usage:"))
        .collect();
    assert_eq!(
        usage,
        ["Usage: bmhctl get [OPTIONS] [HOST]..."],
        "{}",
        run.stderr
    );
    let run = Lab::new().run(&["power", "off", "--bogus"]).expect_code(2);
    assert!(
        run.stderr
            .contains("\nUsage: bmhctl power off [OPTIONS] [HOST]...\n"),
        "{}",
        run.stderr
    );
}
