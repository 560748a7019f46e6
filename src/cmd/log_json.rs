//! `--log-format json`: each log event as one JSON object a line (spans left out).

use serde_json::{Map, Value};
use std::fmt;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

pub struct JsonLines;

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        writeln!(writer, "{}", line(event))
    }
}

fn line(event: &Event<'_>) -> Value {
    let meta = event.metadata();
    let mut fields = Fields(Map::new());
    event.record(&mut fields);
    let mut obj = Map::new();
    obj.insert("timestamp".into(), crate::stderr_json::timestamp().into());
    obj.insert("level".into(), meta.level().as_str().into());
    obj.insert("target".into(), meta.target().into());
    obj.extend(fields.0);
    Value::Object(obj)
}

struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().into(), format!("{value:?}").into());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn each_event_is_one_json_object_with_its_fields() {
        let out = Buffer::default();
        let writer = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .event_format(JsonLines)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(
                node = "n-1",
                attempt = 2u64,
                "cannot \"save\": {}",
                "disk full"
            );
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["level"], "WARN");
        assert_eq!(v["message"], "cannot \"save\": disk full");
        assert_eq!(v["node"], "n-1");
        assert_eq!(v["attempt"], 2);
        assert!(v["target"].as_str().unwrap().starts_with("bmhctl"));
        assert!(v["timestamp"].as_str().unwrap().ends_with('Z'));
    }
}
