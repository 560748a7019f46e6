//! `--log-format json` for bmhctl's own lines on stderr (progress, events, heartbeats,
//! warnings, errors): each one JSON object a line, with the fields of the log's JSON lines
//! (`timestamp`, `level`, `target`, `message`) and the host where it is known, so that stderr
//! is one JSON stream.

use serde_json::{Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};

static ON: AtomicBool = AtomicBool::new(false);

/// From now on, bmhctl's own stderr lines are JSON objects.
pub fn turn_on() {
    ON.store(true, Ordering::Relaxed);
}

/// Whether bmhctl's own stderr lines are JSON objects.
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The target of bmhctl's own lines, beside the log's module paths.
const TARGET: &str = "bmhctl";

/// A line's time: RFC 3339, UTC, milliseconds (the log's JSON lines' too).
pub fn timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// One line's object, without its newline: `fields` come after the message.
pub fn line(level: &str, message: &str, fields: &[(&str, &str)]) -> String {
    let mut obj = Map::new();
    obj.insert("timestamp".into(), timestamp().into());
    obj.insert("level".into(), level.into());
    obj.insert("target".into(), TARGET.into());
    obj.insert("message".into(), message.into());
    for (k, v) in fields {
        obj.insert((*k).into(), (*v).into());
    }
    Value::Object(obj).to_string()
}

/// The log's level name of an sd-daemon priority ([`crate::journal_stream`]).
pub fn level_of(priority: u8) -> &'static str {
    use crate::journal_stream::{DEBUG, ERR, INFO, WARNING};
    match priority {
        0..=ERR => "ERROR",
        WARNING => "WARN",
        INFO => "INFO",
        DEBUG.. => "DEBUG",
        _ => "INFO",
    }
}

/// One of bmhctl's messages (`error: ...`, `warning: ...`, or a note) as its line: the level
/// its first word says, the word itself left out of the message.
pub fn message_line(text: &str) -> String {
    let priority = crate::journal_stream::priority_of_message(text);
    let message = ["error: ", "warning: "]
        .iter()
        .find_map(|p| text.strip_prefix(p))
        .unwrap_or(text);
    line(level_of(priority), message, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_one_object_its_level_from_its_first_word() {
        let v: Value = serde_json::from_str(&message_line("error: no \"host\"\nsee x")).unwrap();
        assert_eq!(v["level"], "ERROR");
        assert_eq!(v["message"], "no \"host\"\nsee x");
        assert_eq!(v["target"], "bmhctl");
        assert!(v["timestamp"].as_str().unwrap().ends_with('Z'));
        let v: Value = serde_json::from_str(&message_line("warning: odd")).unwrap();
        assert_eq!(
            (v["level"].as_str(), v["message"].as_str()),
            (Some("WARN"), Some("odd"))
        );
        let v: Value =
            serde_json::from_str(&line("INFO", "up", &[("host", "default/w0")])).unwrap();
        assert_eq!(
            (v["message"].as_str(), v["host"].as_str()),
            (Some("up"), Some("default/w0"))
        );
        assert_eq!(level_of(crate::journal_stream::DEBUG), "DEBUG");
    }
}
