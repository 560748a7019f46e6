//! Whether standard error (or output) is systemd's journal, and the sd-daemon priority prefix
//! (`<3>`) its lines then carry so that `journalctl -p err` selects them.
//!
//! systemd sets `JOURNAL_STREAM=DEV:INODE` for a service whose output goes to the journal; the
//! stream is the journal only while the descriptor still is that socket (a child whose output
//! was redirected inherits the variable too).

use std::io::Write as _;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::sync::OnceLock;

/// sd-daemon(3) priorities, as journald reads them from a line's `<N>` prefix.
pub const ERR: u8 = 3;
pub const WARNING: u8 = 4;
pub const INFO: u8 = 6;
pub const DEBUG: u8 = 7;

/// `JOURNAL_STREAM`'s device and inode, when set and well formed.
fn journal_stream(value: Option<&str>) -> Option<(u64, u64)> {
    let (dev, ino) = value?.split_once(':')?;
    Some((dev.parse().ok()?, ino.parse().ok()?))
}

/// `fd` is the stream `JOURNAL_STREAM` names.
fn is_journal(fd: std::os::fd::BorrowedFd<'_>, value: Option<&str>) -> bool {
    let Some(stream) = journal_stream(value) else {
        return false;
    };
    let Ok(owned) = fd.try_clone_to_owned() else {
        return false;
    };
    std::fs::File::from(owned)
        .metadata()
        .is_ok_and(|m| (m.dev(), m.ino()) == stream)
}

fn variable() -> Option<String> {
    std::env::var("JOURNAL_STREAM").ok()
}

/// Standard error goes to the journal: lines carry a priority and no time of their own.
pub fn stderr_is_journal() -> bool {
    static IS: OnceLock<bool> = OnceLock::new();
    *IS.get_or_init(|| is_journal(std::io::stderr().as_fd(), variable().as_deref()))
}

/// Standard output goes to the journal (the same stream as standard error under systemd's
/// defaults): its lines need no time of their own.
pub fn stdout_is_journal() -> bool {
    static IS: OnceLock<bool> = OnceLock::new();
    *IS.get_or_init(|| is_journal(std::io::stdout().as_fd(), variable().as_deref()))
}

/// Each line of `text` with the `<priority>` prefix (an empty text is one empty line).
pub fn prefixed(text: &str, priority: u8) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(text.len() + 4);
    for line in text.lines() {
        let _ = writeln!(out, "<{priority}>{line}");
    }
    if out.is_empty() {
        let _ = writeln!(out, "<{priority}>");
    }
    out
}

/// The priority of one of bmhctl's own messages, by the word it starts with.
pub fn priority_of_message(text: &str) -> u8 {
    if text.starts_with("error:") {
        ERR
    } else if text.starts_with("warning:") {
        WARNING
    } else {
        INFO
    }
}

/// A line on standard error (see `eprintln_quiet!`), prefixed with its priority for the
/// journal, a JSON object under `--log-format json`; dropped when standard error is closed.
pub fn eprintln(args: std::fmt::Arguments<'_>) {
    let mut stderr = std::io::stderr().lock();
    if crate::stderr_json::on() {
        let text = args.to_string();
        let line = crate::stderr_json::message_line(&text);
        let _ = if stderr_is_journal() {
            stderr.write_all(prefixed(&line, priority_of_message(&text)).as_bytes())
        } else {
            stderr.write_fmt(format_args!("{line}\n"))
        };
    } else if stderr_is_journal() {
        let text = args.to_string();
        let _ = stderr.write_all(prefixed(&text, priority_of_message(&text)).as_bytes());
    } else {
        let _ = stderr.write_fmt(format_args!("{args}\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_names_a_device_and_an_inode() {
        assert_eq!(journal_stream(Some("8:12345")), Some((8, 12345)));
        assert_eq!(journal_stream(Some("8")), None);
        assert_eq!(journal_stream(Some("a:1")), None);
        assert_eq!(journal_stream(Some("")), None);
        assert_eq!(journal_stream(None), None);
    }

    /// Only the descriptor that is the named stream counts, not any with the variable set.
    #[test]
    fn a_descriptor_is_the_journal_only_when_device_and_inode_match() {
        let file = tempfile::tempfile().unwrap();
        let m = file.metadata().unwrap();
        let named = format!("{}:{}", m.dev(), m.ino());
        assert!(is_journal(file.as_fd(), Some(&named)));
        let other = format!("{}:{}", m.dev(), m.ino() + 1);
        assert!(!is_journal(file.as_fd(), Some(&other)));
        assert!(!is_journal(file.as_fd(), None));
    }

    #[test]
    fn every_line_carries_the_priority() {
        assert_eq!(prefixed("one\ntwo", ERR), "<3>one\n<3>two\n");
        assert_eq!(prefixed("one\n", INFO), "<6>one\n");
        assert_eq!(prefixed("", INFO), "<6>\n");
        assert_eq!(priority_of_message("error: no such host"), ERR);
        assert_eq!(priority_of_message("warning: skipped x"), WARNING);
        assert_eq!(priority_of_message("watching /var/lib/bmhctl"), INFO);
    }
}
