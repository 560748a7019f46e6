//! The page: one self-contained HTML file (inline CSS and SVG; no script, font, image or
//! anything else fetched), with a title, a summary, a legend and the chart.

use super::model::{Outcome, Timeline};
use super::svg::{self, STATES, escape};
use std::fmt::Write as _;

const STYLE: &str = "\
body{font:13px/1.4 system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif;\
margin:16px;color:#1a1a1a;background:#fff}
h1{font-size:16px;margin:0 0 4px;font-weight:600}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,\"DejaVu Sans Mono\",monospace}
.summary,.note,footer{margin:2px 0;color:#555}
.note{max-width:1100px}
.legend{list-style:none;padding:0;margin:10px 0;display:flex;flex-wrap:wrap;gap:4px 16px}
.legend li{display:flex;align-items:center;gap:5px}
.chart-box{overflow-x:auto}
svg text{font-size:12px}
.tick{fill:#555;font-size:11px}
.grid{stroke:#e0e0e0}
.band{fill:#f5f5f5}
.host{fill:#1a1a1a}
.span{stroke:#fff;stroke-width:.5}
.span.inferred{stroke:#444;stroke-dasharray:3 2;stroke-width:1}
.span-label{font-size:11px;fill:#1a1a1a;pointer-events:none}
.s-new{fill:#d9d9d9}
.s-unmanaged{fill:#bdbdbd}
.s-registering{fill:#9ecae1}
.s-match-profile{fill:#dadaeb}
.s-inspecting{fill:#6baed6}
.s-preparing{fill:#bcbddc}
.s-ready,.s-available{fill:#c7e9c0}
.s-provisioning{fill:#fdae6b}
.s-provisioned{fill:#74c476}
.s-externally-provisioned{fill:#a1d99b}
.s-deprovisioning{fill:#fd8d3c}
.s-powering-off-before-delete{fill:#fdd0a2}
.s-deleting{fill:#969696}
.s-other{fill:#cccccc}
.wait{stroke-width:.75}
.w-limit{stroke:#e6550d}
.w-provisioner{stroke:#756bb1}
.error path{fill:#d62728}
.error line{stroke:#d62728;stroke-width:1.5}
.retry circle{fill:#1f77b4;stroke:#fff;stroke-width:1}
.retry line{stroke:#1f77b4;stroke-width:1.5;stroke-dasharray:2 2}
.end.reached{fill:#2ca02c}
.end.stopped{fill:#d62728}
.end.in-flight{fill:#fff;stroke:#777;stroke-width:1.5}
";

/// The page of `t`.
pub fn page(t: &Timeline) -> String {
    let mut s = String::new();
    let command = escape(&t.command);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Timeline: {command}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <header>\n<h1><code>{command}</code></h1>\n<p class=\"summary\">{}</p>\n",
        escape(&summary(t))
    );
    for note in &t.notes {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", escape(note));
    }
    s.push_str("</header>\n");
    legend(&mut s, t);
    let _ = write!(s, "<div class=\"chart-box\">\n{}</div>\n", svg::chart(t));
    s.push_str(
        "<footer>Times are from the start. Hover over a span, wait or mark for its times and \
         text.</footer>\n</body>\n</html>\n",
    );
    s
}

/// `Started 2026-12-01 14:15:11 UTC · 3m 12s · 3 hosts: 2 reached their goal, 1 stopped`.
fn summary(t: &Timeline) -> String {
    let hosts = format!(
        "{} host{}",
        t.rows.len(),
        if t.rows.len() == 1 { "" } else { "s" }
    );
    if t.rows.iter().all(|r| r.first_time().is_none()) {
        return format!("Nothing recorded yet · {hosts}");
    }
    let total = super::model::seconds(t.start, t.end);
    let mut text = format!(
        "Started {} UTC · {} · {hosts}",
        t.start.format("%Y-%m-%d %H:%M:%S"),
        svg::duration(total),
    );
    let count = |f: fn(&Outcome) -> bool| {
        (t.rows.iter())
            .filter(|r| r.outcome.as_ref().is_some_and(f))
            .count()
    };
    let parts: Vec<String> = [
        (count(|o| *o == Outcome::Reached), "reached their goal"),
        (count(|o| matches!(o, Outcome::Stopped(_))), "stopped short"),
        (count(|o| *o == Outcome::InFlight), "in flight"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if !parts.is_empty() {
        text.push_str(": ");
        text.push_str(&parts.join(", "));
    }
    text
}

/// One swatch of the legend: a little SVG of `shape` and its words.
fn item(s: &mut String, shape: &str, words: &str) {
    let _ = writeln!(
        s,
        "<li><svg width=\"24\" height=\"14\" viewBox=\"0 0 24 14\">{shape}</svg>{}</li>",
        escape(words)
    );
}

fn legend(s: &mut String, t: &Timeline) {
    s.push_str("<ul class=\"legend\">\n");
    let spans = || t.rows.iter().flat_map(|r| &r.spans);
    let mut seen: Vec<&str> = Vec::new();
    for span in spans() {
        let last = span.state.rsplit(" → ").next().unwrap_or(&span.state);
        if !seen.contains(&last) {
            seen.push(last);
        }
    }
    let rank = |s: &&str| STATES.iter().position(|k| k == s).unwrap_or(STATES.len());
    seen.sort_by_key(rank);
    for state in seen {
        let class = svg::state_class(state);
        let shape =
            format!("<rect class=\"span {class}\" x=\"1\" y=\"1\" width=\"22\" height=\"12\"/>");
        item(s, &shape, state);
    }
    if spans().any(|s| s.inferred) {
        let shape =
            "<rect class=\"span s-other inferred\" x=\"1\" y=\"1\" width=\"22\" height=\"12\"/>";
        item(s, shape, "inferred from BMO's path");
    }
    let waits = |kind| t.rows.iter().flat_map(|r| &r.waits).any(|w| w.kind == kind);
    let run = t.rows.iter().any(|r| r.outcome.is_some());
    for (kind, words) in [
        (
            super::model::WaitKind::Limit,
            "delayed: no free slot under PROVISIONING_LIMIT",
        ),
        (
            super::model::WaitKind::Provisioner,
            "waiting on the provisioner (e.g. a locked node)",
        ),
    ] {
        // A run's page always explains its waits; a recorded one has none to show.
        if run || waits(kind) {
            let k = kind.as_str();
            let shape = format!(
                "<rect class=\"wait w-{k}\" x=\"1\" y=\"4\" width=\"22\" height=\"6\" fill=\"url(#hatch-{k})\"/>"
            );
            item(s, &shape, words);
        }
    }
    item(
        s,
        "<g class=\"error\"><line x1=\"12\" y1=\"3\" x2=\"12\" y2=\"14\"/><path d=\"M7.5 0h9l-4.5 7z\"/></g>",
        "error (hover for its message)",
    );
    item(
        s,
        "<g class=\"retry\"><line x1=\"12\" y1=\"0\" x2=\"12\" y2=\"10\"/><circle cx=\"12\" cy=\"10\" r=\"3\"/></g>",
        "retry after an error",
    );
    // How hosts ended: the ways some did.
    let ended = |f: fn(&Outcome) -> bool| t.rows.iter().any(|r| r.outcome.as_ref().is_some_and(f));
    if ended(|o| *o == Outcome::Reached) {
        let shape = "<circle class=\"end reached\" cx=\"12\" cy=\"7\" r=\"3.5\"/>";
        item(s, shape, "reached its goal");
    }
    if ended(|o| matches!(o, Outcome::Stopped(_))) {
        let shape = "<rect class=\"end stopped\" x=\"8.5\" y=\"3.5\" width=\"7\" height=\"7\"/>";
        item(s, shape, "stopped short (hover for why)");
    }
    if ended(|o| *o == Outcome::InFlight) {
        let shape = "<circle class=\"end in-flight\" cx=\"12\" cy=\"7\" r=\"3.5\"/>";
        item(s, shape, "in flight when the run stopped");
    }
    s.push_str("</ul>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::model::{Mark, MarkKind, Row, Span, Wait, WaitKind};
    use chrono::{DateTime, Utc};

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-12-01T14:15:11Z")
            .unwrap()
            .with_timezone(&Utc)
            + chrono::Duration::milliseconds(s)
    }

    fn span(state: &str, a: i64, b: i64) -> Span {
        Span {
            state: state.into(),
            start: t(a),
            end: t(b),
            inferred: false,
        }
    }

    /// Two hosts of a run: one provisioned after a wait for a slot, one that failed its
    /// registration twice and stopped.
    fn small_run() -> Timeline {
        Timeline {
            command: "bmhctl provision --timeline t.html hosts.yaml".into(),
            start: t(0),
            end: t(60_000),
            rows: vec![
                Row {
                    host: "default/worker-0".into(),
                    spans: vec![
                        span("new", 0, 50),
                        span("registering", 50, 20_000),
                        span("inspecting", 20_000, 35_000),
                        span("provisioning", 35_000, 55_000),
                        span("provisioned", 55_000, 58_000),
                    ],
                    waits: vec![Wait {
                        kind: WaitKind::Limit,
                        why: "no free slot under PROVISIONING_LIMIT".into(),
                        start: t(5_000),
                        end: t(20_000),
                    }],
                    marks: Vec::new(),
                    outcome: Some(Outcome::Reached),
                },
                Row {
                    host: "default/broken-0".into(),
                    spans: vec![span("new", 0, 40), span("registering", 40, 60_000)],
                    waits: Vec::new(),
                    marks: vec![
                        Mark {
                            kind: MarkKind::Error,
                            at: t(100),
                            text: "registration error: BMC said <no>".into(),
                        },
                        Mark {
                            kind: MarkKind::Retry,
                            at: t(30_000),
                            text: "retried after: registration error: BMC said <no>".into(),
                        },
                        Mark {
                            kind: MarkKind::Error,
                            at: t(30_000),
                            text: "registration error: BMC said <no>".into(),
                        },
                    ],
                    outcome: Some(Outcome::Stopped("BMC said <no>".into())),
                },
            ],
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_page_of_a_small_run() {
        insta::assert_snapshot!(page(&small_run()));
    }

    /// Nothing is fetched: no script, stylesheet, font or image from anywhere, and the only
    /// URLs are the SVG namespace and the patterns' fragments.
    #[test]
    fn the_page_needs_no_network() {
        let html = page(&small_run());
        for banned in [
            "<script",
            "<link",
            "<img",
            "@import",
            "@font-face",
            "src=",
            "href=",
        ] {
            assert!(!html.contains(banned), "{banned} in the page");
        }
        let urls: Vec<&str> = html
            .match_indices("url(")
            .map(|(i, _)| &html[i..i + 20])
            .collect();
        assert!(
            urls.iter().all(|u| u.starts_with("url(#hatch-")),
            "{urls:?}"
        );
        assert_eq!(html.matches("http").count(), 1, "only the SVG namespace");
    }

    /// Every state of a recorded page gets a swatch; a recorded page (no outcomes) shows
    /// neither waits nor how hosts ended in its legend.
    #[test]
    fn the_legend_shows_what_the_page_holds() {
        let mut recorded = small_run();
        for r in &mut recorded.rows {
            r.outcome = None;
            r.waits.clear();
        }
        recorded.rows[0].spans[2].state = "preparing → available".into();
        recorded.rows[0].spans[2].inferred = true;
        let html = page(&recorded);
        let legend =
            &html[html.find("<ul class=\"legend\">").unwrap()..html.find("</ul>").unwrap()];
        for words in [
            "registering",
            "available",
            "inferred from BMO",
            "retry after an error",
        ] {
            assert!(legend.contains(words), "{words}: {legend}");
        }
        for words in ["PROVISIONING_LIMIT", "reached its goal", ">preparing<"] {
            assert!(!legend.contains(words), "{words}: {legend}");
        }
        assert!(!html.contains(": 2 reached"));
    }

    /// Hosts never driven: their rows are empty, and the page says so instead of a start.
    #[test]
    fn a_page_of_hosts_with_nothing_recorded_says_so() {
        let mut empty = small_run();
        for r in &mut empty.rows {
            *r = Row {
                host: r.host.clone(),
                ..Row::default()
            };
        }
        let html = page(&empty);
        assert!(html.contains("<p class=\"summary\">Nothing recorded yet · 2 hosts</p>"));
        assert_eq!(html.matches("data-kind=\"label\"").count(), 2);
        assert!(!html.contains("data-kind=\"span\""));
    }
}
