//! The chart: an SVG with a time axis, one row per host (its name at the left), its states as
//! spans, its waits on the provisioner as a hatched band under them, its errors and retries as
//! marks, and how it ended. Every drawn thing carries `data-` attributes (kind, host, state,
//! times in seconds from the start) for tools and tests to read back.

use super::model::{MarkKind, Outcome, Row, Timeline, WaitKind, seconds};
use std::fmt::Write as _;

pub const WIDTH: f64 = 1160.0;
/// Where the chart's time 0 is: the host names are left of it.
pub const CHART_X: f64 = 210.0;
pub const CHART_WIDTH: f64 = WIDTH - CHART_X - 30.0;
pub const AXIS_HEIGHT: f64 = 28.0;
pub const ROW_HEIGHT: f64 = 32.0;
/// The state bar's offset and height in a row; the waits' band comes under it.
const BAR_Y: f64 = 6.0;
const BAR_HEIGHT: f64 = 14.0;
const WAIT_Y: f64 = 23.0;
const WAIT_HEIGHT: f64 = 6.0;
/// About the width of a character of the labels (11-12 px sans-serif), to fit text.
const CHAR_WIDTH: f64 = 6.6;

/// `&`, `<`, `>` and quotes escaped, for text and attribute values alike.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The states in the order BMO's path takes them (the legend's order), each with a colour.
pub const STATES: [&str; 14] = [
    "new",
    "unmanaged",
    "registering",
    "match profile",
    "inspecting",
    "preparing",
    "ready",
    "available",
    "provisioning",
    "provisioned",
    "externally provisioned",
    "deprovisioning",
    "powering off before delete",
    "deleting",
];

/// The CSS class of a state (its last one, for states known only in order); `s-other` for a
/// state BMO does not have.
pub fn state_class(state: &str) -> String {
    let last = state.rsplit(" → ").next().unwrap_or(state);
    if STATES.contains(&last) {
        format!("s-{}", last.replace(' ', "-"))
    } else {
        "s-other".into()
    }
}

/// A length of time, as a person reads it: `0.35s`, `12.4s`, `3m 05s`, `1h 02m`.
pub fn duration(secs: f64) -> String {
    let secs = secs.max(0.0);
    if secs < 1.0 {
        format!("{secs:.2}s")
    } else if secs < 60.0 {
        format!("{secs:.1}s")
    } else if secs < 3600.0 {
        let s = secs.round() as u64;
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        let m = (secs / 60.0).round() as u64;
        format!("{}h {:02}m", m / 60, m % 60)
    }
}

/// The axis's step: the smallest "round" one that makes at most 10 ticks.
fn tick_step(total: f64) -> f64 {
    const STEPS: [f64; 21] = [
        0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0,
        60.0, 120.0, 300.0, 600.0, 900.0, 1800.0,
    ];
    const HOURS: [f64; 6] = [1.0, 2.0, 3.0, 6.0, 12.0, 24.0];
    let candidates = STEPS.into_iter().chain(HOURS.map(|h| h * 3600.0));
    candidates
        .into_iter()
        .find(|s| total / s <= 10.0)
        .unwrap_or_else(|| (total / 10.0 / 86400.0).ceil() * 86400.0)
}

/// A tick's label: seconds from the start, in minutes and hours past one of them.
fn tick_label(secs: f64, step: f64) -> String {
    if step < 1.0 {
        let decimals = (-step.log10()).ceil() as usize;
        return format!("{secs:.decimals$}s");
    }
    let s = secs.round() as u64;
    match s {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 && s % 60 == 0 => format!("{}m", s / 60),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// Where things go: time to x, row to y.
struct Scale {
    start: chrono::DateTime<chrono::Utc>,
    total: f64,
}

impl Scale {
    fn secs(&self, t: chrono::DateTime<chrono::Utc>) -> f64 {
        seconds(self.start, t)
    }

    fn x(&self, secs: f64) -> f64 {
        CHART_X + secs / self.total * CHART_WIDTH
    }
}

fn row_y(i: usize) -> f64 {
    AXIS_HEIGHT + i as f64 * ROW_HEIGHT
}

/// The chart's height for `rows` hosts.
pub fn height(rows: usize) -> f64 {
    AXIS_HEIGHT + rows.max(1) as f64 * ROW_HEIGHT + 8.0
}

/// What a host's label shows: its name alone when every host is in one namespace.
fn labels(t: &Timeline) -> Vec<&str> {
    let namespace = |r: &Row| r.host.split_once('/').map_or("", |(ns, _)| ns).to_string();
    let one = t.rows.first().map(namespace);
    let shared = t.rows.iter().all(|r| Some(namespace(r)) == one);
    (t.rows.iter())
        .map(|r| match r.host.split_once('/') {
            Some((_, name)) if shared => name,
            _ => r.host.as_str(),
        })
        .collect()
}

/// `text` cut with an ellipsis to about `width` pixels.
fn fit(text: &str, width: f64) -> String {
    let max = (width / CHAR_WIDTH) as usize;
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn outcome_words(o: &Outcome) -> (&'static str, String) {
    match o {
        Outcome::Reached => ("reached", "reached its goal".into()),
        Outcome::Stopped(why) => ("stopped", format!("stopped: {why}")),
        Outcome::InFlight => ("in-flight", "in flight when the run stopped".into()),
    }
}

/// The chart of `t`, as an `<svg>` element.
pub fn chart(t: &Timeline) -> String {
    let scale = Scale {
        start: t.start,
        total: seconds(t.start, t.end).max(0.001),
    };
    let h = height(t.rows.len());
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{h}\" \
         viewBox=\"0 0 {WIDTH} {h}\" role=\"img\" aria-label=\"{}\" data-start=\"{}\" \
         data-seconds=\"{:.3}\" data-chart-x=\"{CHART_X}\" data-chart-width=\"{CHART_WIDTH}\">",
        escape(&format!("Timeline of {} hosts", t.rows.len())),
        t.start.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        scale.total,
    );
    s.push_str(DEFS);
    // Row bands first, the grid over them, then what each row holds.
    for i in (1..t.rows.len()).step_by(2) {
        let _ = writeln!(
            s,
            "<rect class=\"band\" x=\"0\" y=\"{}\" width=\"{WIDTH}\" height=\"{ROW_HEIGHT}\"/>",
            row_y(i)
        );
    }
    axis(&mut s, &scale, h);
    let labels = labels(t);
    for (i, row) in t.rows.iter().enumerate() {
        draw_row(&mut s, &scale, i, row, labels[i]);
    }
    s.push_str("</svg>\n");
    s
}

const DEFS: &str = "<defs>\n\
<pattern id=\"hatch-limit\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff1e0\"/>\
<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#e6550d\" stroke-width=\"3\"/></pattern>\n\
<pattern id=\"hatch-provisioner\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
patternTransform=\"rotate(-45)\"><rect width=\"6\" height=\"6\" fill=\"#efedf5\"/>\
<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#756bb1\" stroke-width=\"3\"/></pattern>\n\
</defs>\n";

fn axis(s: &mut String, scale: &Scale, h: f64) {
    let step = tick_step(scale.total);
    let _ = writeln!(s, "<g class=\"axis\">");
    let ticks = (scale.total / step + 1e-9).floor() as usize;
    for k in 0..=ticks {
        let secs = k as f64 * step;
        let x = scale.x(secs);
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>\
             <text class=\"tick\" data-kind=\"tick\" data-seconds=\"{secs:.3}\" x=\"{x:.1}\" y=\"15\" \
             text-anchor=\"middle\">{}</text>",
            AXIS_HEIGHT - 6.0,
            h - 4.0,
            tick_label(secs, step)
        );
    }
    let _ = writeln!(s, "</g>");
}

fn draw_row(s: &mut String, scale: &Scale, i: usize, row: &Row, label: &str) {
    let y = row_y(i);
    let host = escape(&row.host);
    let _ = writeln!(s, "<g class=\"row\" data-row=\"{i}\" data-host=\"{host}\">");
    let about = match &row.outcome {
        Some(o) => format!("{}: {}", row.host, outcome_words(o).1),
        None => row.host.clone(),
    };
    let _ = writeln!(
        s,
        "<text class=\"host\" data-kind=\"label\" data-host=\"{host}\" x=\"8\" y=\"{:.1}\">{}<title>{}</title></text>",
        y + BAR_Y + BAR_HEIGHT - 3.0,
        escape(&fit(label, CHART_X - 16.0)),
        escape(&about)
    );
    for span in &row.spans {
        let (a, b) = (scale.secs(span.start), scale.secs(span.end));
        let (x0, x1) = (scale.x(a), scale.x(b));
        let w = (x1 - x0).max(1.0);
        let inferred = if span.inferred { " inferred" } else { "" };
        let state = escape(&span.state);
        let _ = writeln!(
            s,
            "<rect class=\"span {}{inferred}\" data-kind=\"span\" data-host=\"{host}\" \
             data-state=\"{state}\" data-start=\"{a:.3}\" data-end=\"{b:.3}\" x=\"{x0:.2}\" \
             y=\"{:.1}\" width=\"{w:.2}\" height=\"{BAR_HEIGHT}\"><title>{state}: {} (from {} to {}){}</title></rect>",
            state_class(&span.state),
            y + BAR_Y,
            duration(b - a),
            duration(a),
            duration(b),
            if span.inferred {
                ", inferred from BMO's path"
            } else {
                ""
            }
        );
        if w >= span.state.chars().count() as f64 * CHAR_WIDTH + 8.0 {
            let _ = writeln!(
                s,
                "<text class=\"span-label\" x=\"{:.2}\" y=\"{:.1}\">{state}</text>",
                x0 + 4.0,
                y + BAR_Y + BAR_HEIGHT - 3.5
            );
        }
    }
    for wait in &row.waits {
        let (a, b) = (scale.secs(wait.start), scale.secs(wait.end));
        let (x0, x1) = (scale.x(a), scale.x(b));
        let kind = wait.kind.as_str();
        let what = match wait.kind {
            WaitKind::Limit => "delayed",
            WaitKind::Provisioner => "waited on the provisioner",
        };
        let _ = writeln!(
            s,
            "<rect class=\"wait w-{kind}\" data-kind=\"wait\" data-wait=\"{kind}\" data-host=\"{host}\" \
             data-start=\"{a:.3}\" data-end=\"{b:.3}\" x=\"{x0:.2}\" y=\"{:.1}\" width=\"{:.2}\" \
             height=\"{WAIT_HEIGHT}\" fill=\"url(#hatch-{kind})\"><title>{what} {} (from {} to {}): {}</title></rect>",
            y + WAIT_Y,
            (x1 - x0).max(1.0),
            duration(b - a),
            duration(a),
            duration(b),
            escape(&wait.why)
        );
    }
    for mark in &row.marks {
        let at = scale.secs(mark.at);
        let x = scale.x(at);
        let kind = mark.kind.as_str();
        let (top, bottom) = (y + BAR_Y, y + BAR_Y + BAR_HEIGHT);
        let shape = match mark.kind {
            MarkKind::Error => format!(
                "<line x1=\"{x:.2}\" y1=\"{top:.1}\" x2=\"{x:.2}\" y2=\"{bottom:.1}\"/>\
                 <path d=\"M{:.2} {:.1}h9l-4.5 7z\"/>",
                x - 4.5,
                y + 1.0
            ),
            MarkKind::Retry => format!(
                "<line x1=\"{x:.2}\" y1=\"{top:.1}\" x2=\"{x:.2}\" y2=\"{bottom:.1}\"/>\
                 <circle cx=\"{x:.2}\" cy=\"{bottom:.1}\" r=\"3\"/>"
            ),
        };
        let _ = writeln!(
            s,
            "<g class=\"mark {kind}\" data-kind=\"{kind}\" data-host=\"{host}\" data-at=\"{at:.3}\">\
             {shape}<title>{} at {}</title></g>",
            escape(&mark.text),
            duration(at)
        );
    }
    if let (Some(o), Some(end)) = (&row.outcome, row.spans.last().map(|s| s.end)) {
        let at = scale.secs(end);
        let x = scale.x(at) + 5.0;
        let (class, words) = outcome_words(o);
        let cy = y + BAR_Y + BAR_HEIGHT / 2.0;
        let shape = match o {
            Outcome::Stopped(_) => format!(
                "<rect class=\"end {class}\" x=\"{:.2}\" y=\"{:.1}\" width=\"7\" height=\"7\"/>",
                x - 1.0,
                cy - 3.5
            ),
            _ => format!(
                "<circle class=\"end {class}\" cx=\"{:.2}\" cy=\"{cy:.1}\" r=\"3.5\"/>",
                x + 2.5
            ),
        };
        let _ = writeln!(
            s,
            "<g data-kind=\"end\" data-host=\"{host}\" data-outcome=\"{class}\" data-at=\"{at:.3}\">\
             {shape}<title>{} at {}</title></g>",
            escape(&words),
            duration(at)
        );
    }
    s.push_str("</g>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_at_most_ten() {
        assert_eq!(tick_step(0.04), 0.005);
        assert_eq!(tick_step(9.0), 1.0);
        assert_eq!(tick_step(95.0), 10.0);
        assert_eq!(tick_step(290.0), 30.0);
        assert_eq!(tick_step(45.0 * 60.0), 300.0);
        assert_eq!(tick_step(5.0 * 3600.0), 1800.0);
        assert_eq!(tick_step(30.0 * 86400.0), 3.0 * 86400.0);
        assert_eq!(tick_label(0.5, 0.1), "0.5s");
        assert_eq!(tick_label(0.015, 0.005), "0.015s");
        assert_eq!(tick_label(30.0, 10.0), "30s");
        assert_eq!(tick_label(120.0, 60.0), "2m");
        assert_eq!(tick_label(90.0, 30.0), "1m30s");
        assert_eq!(tick_label(5400.0, 1800.0), "1h30m");
        assert_eq!(tick_label(7200.0, 1800.0), "2h");
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(0.349), "0.35s");
        assert_eq!(duration(12.44), "12.4s");
        assert_eq!(duration(185.0), "3m 05s");
        assert_eq!(duration(3720.0), "1h 02m");
    }

    #[test]
    fn text_is_escaped_and_cut_to_fit() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(fit("worker-0", 100.0), "worker-0");
        assert_eq!(fit("a-very-long-host-name", 66.0), "a-very-lo…");
        assert_eq!(state_class("preparing → available"), "s-available");
        assert_eq!(
            state_class("externally provisioned"),
            "s-externally-provisioned"
        );
        assert_eq!(state_class("made up"), "s-other");
    }
}
