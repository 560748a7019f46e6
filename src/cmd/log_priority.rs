//! Log lines for the journal: each line of an event with its sd-daemon priority (`<3>` for an
//! error), so that `journalctl -p err` selects them; journald strips the prefix.

use crate::journal_stream::{self, DEBUG, ERR, INFO, WARNING};
use std::fmt;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The events of `F`, each of their lines prefixed with the event's priority.
pub struct Prioritised<F>(pub F);

impl<S, N, F> FormatEvent<S, N> for Prioritised<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut text = String::new();
        self.0.format_event(ctx, Writer::new(&mut text), event)?;
        let priority = priority(event.metadata().level());
        writer.write_str(&journal_stream::prefixed(&text, priority))
    }
}

fn priority(level: &Level) -> u8 {
    match *level {
        Level::ERROR => ERR,
        Level::WARN => WARNING,
        Level::INFO => INFO,
        _ => DEBUG,
    }
}
