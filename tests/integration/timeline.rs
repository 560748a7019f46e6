//! The timeline page, through the real binary: `provision --timeline FILE` charts the run it
//! ends (interrupted too), each host's spans in the order its progress lines said its states,
//! its errors where its error events are, its waits for a slot apart; `bmhctl timeline` draws
//! the same page from what the files or the store recorded, reading only. In headless Chromium
//! (`#[ignore]`d: scripts/test.sh installs it) the laid-out page is measured against the run.

use crate::lab::{Lab, Run, host, secret};
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

/// worker-0 is provisioned; broken-0's BMC refuses it (its registration fails, is retried with
/// BMO's backoff, and it stops at the timeout; it has an image, so its goal is provisioned);
/// worker-1 waits twice for a slot (the fixture's capacity countdown) before inspecting, then
/// is provisioned.
fn hosts_file() -> String {
    let annotated = |name: &str, mac: &str, annotation: &str| {
        let spec = format!("bootMACAddress: 00:11:22:33:44:{mac}\n{IMAGE}");
        host(name, &spec).replacen(
            &format!("metadata:\n  name: {name}\n"),
            &format!("metadata:\n  name: {name}\n  annotations:\n    {annotation}\n"),
            1,
        )
    };
    let broken = annotated(
        "broken-0",
        "02",
        "fixture.bmhctl.metal3.io/validate-error: BMC said no",
    );
    let delayed = annotated(
        "worker-1",
        "03",
        "fixture.bmhctl.metal3.io/capacity-counter: \"3\"",
    );
    let worker = host(
        "worker-0",
        &format!("bootMACAddress: 00:11:22:33:44:01\n{IMAGE}"),
    );
    [secret("bmc-secret"), worker, broken, delayed].join("---\n")
}

const HOSTS: [&str; 3] = ["default/worker-0", "default/broken-0", "default/worker-1"];

/// `provision` with the fixture, `--timeline page`, plain progress lines (the states' record
/// this is checked against), and BMO's delays times `scale`; exit 1 (broken-0 fails).
fn provision(lab: &Lab, scale: &str, page: &str) -> Run {
    let args = [
        "provision",
        "--provisioner",
        "fixture",
        "--progress",
        "plain",
        "--timeout",
        "4m",
        "--timeline",
        page,
        "--result-file",
        "result.json",
        "hosts.yaml",
    ];
    lab.run_env(&args, &[("BMHCTL_TIME_SCALE", scale)])
}

/// One drawn thing of a page, by its `data-` attributes.
#[derive(Debug, Clone, Default)]
struct Drawn {
    kind: String,
    host: String,
    attrs: BTreeMap<String, String>,
}

impl Drawn {
    fn num(&self, key: &str) -> f64 {
        self.attrs[key].parse().unwrap()
    }

    fn get(&self, key: &str) -> &str {
        self.attrs.get(key).map_or("", String::as_str)
    }
}

/// Every element of `html` with a `data-kind`, in document order.
fn drawn(html: &str) -> Vec<Drawn> {
    let mut out = Vec::new();
    for tag in html.split('<').skip(1) {
        let tag = tag.split('>').next().unwrap_or_default();
        let mut attrs = BTreeMap::new();
        let mut rest = tag;
        while let Some(eq) = rest.find("=\"") {
            let name = rest[..eq]
                .rsplit(' ')
                .next()
                .unwrap_or_default()
                .to_string();
            let value_end = rest[eq + 2..].find('"').unwrap() + eq + 2;
            let value = rest[eq + 2..value_end]
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&");
            attrs.insert(name, value);
            rest = &rest[value_end + 1..];
        }
        if let Some(kind) = attrs.get("data-kind") {
            out.push(Drawn {
                kind: kind.clone(),
                host: attrs.get("data-host").cloned().unwrap_or_default(),
                attrs: attrs
                    .iter()
                    .filter_map(|(k, v)| Some((k.strip_prefix("data-")?.to_string(), v.clone())))
                    .collect(),
            });
        }
    }
    out
}

fn of<'a>(d: &'a [Drawn], kind: &str, host: &str) -> Vec<&'a Drawn> {
    d.iter()
        .filter(|e| e.kind == kind && e.host == host)
        .collect()
}

/// Per host, its states as the plain progress lines said them (`(new)` as `new`), each with
/// the second of its line: `2026-12-01T14:15:11Z default/worker-0: (new) -> registering`.
fn said_states(stderr: &str) -> BTreeMap<String, Vec<(String, DateTime<Utc>)>> {
    let mut out: BTreeMap<String, Vec<(String, DateTime<Utc>)>> = BTreeMap::new();
    for line in stderr.lines() {
        let Some((stamp, rest)) = line.split_once(' ') else {
            continue;
        };
        let Some((host, change)) = rest.split_once(": ") else {
            continue;
        };
        let Some((from, to)) = change.split_once(" -> ") else {
            continue;
        };
        let at = time(stamp);
        let states = out.entry(host.to_string()).or_default();
        if states.is_empty() {
            states.push((from.replace("(new)", "new"), at));
        }
        states.push((to.to_string(), at));
    }
    out
}

fn time(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .with_timezone(&Utc)
}

fn plus(t: DateTime<Utc>, secs: f64) -> DateTime<Utc> {
    t + chrono::Duration::microseconds((secs * 1e6).round() as i64)
}

/// `t` lies in `[from, from + 1 s + slack)`: a time taken in the second `from` names.
#[track_caller]
fn in_second(t: DateTime<Utc>, from: DateTime<Utc>, what: &str) {
    let late = (t - from).num_milliseconds();
    assert!(
        (0..1_500).contains(&late),
        "{what}: {t} is not in the second of {from}"
    );
}

/// The error events of `host` kept in the files' bookkeeping (`.bmhctl/`), with their times.
fn error_events(lab: &Lab, host: &str) -> Vec<DateTime<Utc>> {
    let sidecar: Value =
        serde_json::from_str(&lab.read(".bmhctl/hosts.yaml.state.json")).expect("the sidecar");
    let events = sidecar["hosts"][host]["events"].as_array().expect("events");
    (events.iter())
        .filter(|e| e["reason"].as_str().unwrap().ends_with("Error"))
        .map(|e| time(e["time"].as_str().unwrap()))
        .collect()
}

/// What the page says and the run recorded agree, whatever drew it: a row per host in the
/// files' order; each host's spans, end to end, in the order its progress lines said its states
/// and in the second each line says; broken-0's error marks at its error events, each error but
/// the last retried; worker-1's one wait for a slot, before it inspects; no wait nor
/// error for the others.
fn check_page_against_run(lab: &Lab, run: &Run, html: &str) -> DateTime<Utc> {
    let d = drawn(html);
    let start = time(
        html.split("data-start=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap(),
    );
    let labels: Vec<&str> = (d.iter())
        .filter(|e| e.kind == "label")
        .map(|e| e.host.as_str())
        .collect();
    assert_eq!(labels, HOSTS);
    let said = said_states(&run.stderr);
    for host in HOSTS {
        let spans = of(&d, "span", host);
        let states: Vec<&str> = spans.iter().map(|s| s.get("state")).collect();
        let lines = &said[host];
        let expected: Vec<&str> = lines.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(states, expected, "{host}\n{}", run.stderr);
        for pair in spans.windows(2) {
            assert_eq!(
                pair[0].get("end"),
                pair[1].get("start"),
                "{host}: end to end"
            );
        }
        // A host's first line says its first two states at once: from the second one on, a
        // span starts in the second its line was printed.
        for (span, (state, at)) in spans.iter().zip(lines).skip(1) {
            in_second(
                plus(start, span.num("start")),
                *at,
                &format!("{host} {state}"),
            );
        }
        let waits = of(&d, "wait", host);
        let errors = of(&d, "error", host);
        let end = &of(&d, "end", host)[0];
        match host {
            "default/broken-0" => {
                let events = error_events(lab, "default/broken-0");
                assert!(events.len() >= 2, "retried at least once: {events:?}");
                assert_eq!(errors.len(), events.len());
                for (mark, event) in errors.iter().zip(&events) {
                    in_second(plus(start, mark.num("at")), *event, "error mark");
                }
                let retries = of(&d, "retry", host);
                assert_eq!(retries.len(), errors.len() - 1);
                for (retry, error) in retries.iter().zip(&errors[1..]) {
                    assert_eq!(retry.get("at"), error.get("at"), "the retry failed again");
                }
                assert_eq!(end.get("outcome"), "stopped");
                assert!(waits.is_empty());
            }
            "default/worker-1" => {
                assert_eq!(waits.len(), 1, "{waits:?}");
                let wait = waits[0];
                assert_eq!(wait.get("wait"), "limit");
                let registering = spans.iter().find(|s| s.get("state") == "registering");
                let registering = registering.unwrap();
                // Delayed on its way to inspecting: while it is still registering.
                assert!(wait.num("start") > registering.num("start"));
                assert!(wait.num("end") <= registering.num("end"), "{wait:?}");
                assert!(errors.is_empty());
                assert_eq!(end.get("outcome"), "reached");
            }
            _ => {
                assert!(waits.is_empty() && errors.is_empty());
                assert_eq!(end.get("outcome"), "reached");
            }
        }
    }
    // The rows span the hosts' times as the result document has them.
    let result: Value = serde_json::from_str(&lab.read("result.json")).unwrap();
    for (host, doc) in HOSTS.iter().zip(result["hosts"].as_array().unwrap()) {
        let spans = of(&d, "span", host);
        let first = plus(start, spans[0].num("start"));
        let last = plus(start, spans.last().unwrap().num("end"));
        for (ours, theirs) in [(first, &doc["start"]), (last, &doc["end"])] {
            let gap = (ours - time(theirs.as_str().unwrap()))
                .num_milliseconds()
                .abs();
            assert!(gap < 100, "{host}: {ours} against {theirs}");
        }
    }
    start
}

#[test]
fn a_run_writes_its_timeline_and_an_unwritable_one_is_exit_4_after_the_table() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let run = provision(&lab, "0.01", "timeline.html").expect_code(1);
    let html = lab.read("timeline.html");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        html.contains("<h1><code>bmhctl provision --provisioner fixture"),
        "the command is the title"
    );
    check_page_against_run(&lab, &run, &html);

    let run = provision(&lab, "0", "missing/timeline.html").expect_code(4);
    assert!(run.stdout.starts_with("NAME "), "the table: {}", run.stdout);
    assert!(
        (run.stderr).contains("error: missing/timeline.html: No such file or directory"),
        "{}",
        run.stderr
    );
    // The result file is still written: only the page failed.
    assert!(lab.path("result.json").is_file());
}

/// `deprovision -f` and `delete -f` take `--timeline` too: the page shows their path.
#[test]
fn deprovision_and_delete_write_their_timeline() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &format!("{}---\n{}", secret("bmc-secret"), host("worker-0", IMAGE)),
    );
    let fixture = ["--provisioner", "fixture", "-q"];
    lab.run(&[&["provision", "hosts.yaml"][..], &fixture].concat())
        .expect_code(0);
    for (verb, state) in [("deprovision", "deprovisioning"), ("delete", "deleting")] {
        let page = format!("{verb}.html");
        let args = [verb, "-f", "hosts.yaml", "--timeline", &page];
        lab.run(&[&args[..], &fixture].concat()).expect_code(0);
        let d = drawn(&lab.read(&page));
        let states: Vec<&str> = (d.iter())
            .filter(|e| e.kind == "span")
            .map(|e| e.get("state"))
            .collect();
        assert!(states.contains(&state), "{verb}: {states:?}");
    }
}

/// Ctrl-C: the page is written as the result is, the host still driven in flight.
#[test]
fn an_interrupted_run_writes_its_timeline_with_the_hosts_in_flight() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &format!("{}---\n{}", secret("bmc-secret"), host("worker-0", IMAGE)),
    );
    let child = lab.spawn(&[
        "provision",
        "--provisioner",
        "fixture",
        "--timeline",
        "timeline.html",
        "hosts.yaml",
    ]);
    let started = std::time::Instant::now();
    while !lab.read("hosts.yaml").contains("\nstatus:\n") {
        assert!(started.elapsed() < Duration::from_secs(30), "no save");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.id().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status();
    assert!(sent.unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let html = lab.read("timeline.html");
    let d = drawn(&html);
    let end = &of(&d, "end", "default/worker-0")[0];
    assert_eq!(end.get("outcome"), "in-flight");
    assert!(html.contains("The run was interrupted"), "{html}");
}

/// `bmhctl timeline -f`: the recorded page, from the files the run wrote back, reading only;
/// `-o` is a format, as everywhere; on a terminal the page needs --output-file.
#[test]
fn the_recorded_timeline_of_files_reads_only() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    provision(&lab, "0.01", "timeline.html").expect_code(1);
    let files = |lab: &Lab| {
        let dir = std::fs::read_dir(lab.path(".bmhctl")).unwrap();
        let mut names: Vec<String> = dir
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let bytes = |p: &str| std::fs::read(lab.path(p)).unwrap();
        (
            names,
            bytes("hosts.yaml"),
            bytes(".bmhctl/hosts.yaml.state.json"),
        )
    };
    let before = files(&lab);
    let run = lab
        .run(&[
            "timeline",
            "-f",
            "hosts.yaml",
            "--output-file",
            "recorded.html",
        ])
        .expect_code(0);
    assert_eq!(run.stdout, "");
    let html = lab.read("recorded.html");
    let d = drawn(&html);
    let labels: Vec<&str> = (d.iter())
        .filter(|e| e.kind == "label")
        .map(|e| e.host.as_str())
        .collect();
    assert_eq!(labels, HOSTS);
    let states = |host| {
        (of(&d, "span", host).iter())
            .map(|s| s.get("state").to_string())
            .collect::<Vec<_>>()
    };
    for state in ["registering", "inspecting", "provisioning"] {
        assert!(states(HOSTS[0]).iter().any(|s| s == state), "{state}");
    }
    assert_eq!(states(HOSTS[1]), ["registering"]);
    let errors = of(&d, "error", HOSTS[1]);
    assert_eq!(errors.len(), error_events(&lab, HOSTS[1]).len());
    assert!(
        html.contains("are not recorded"),
        "says what it cannot show"
    );
    assert_eq!(files(&lab), before, "nothing written, no lock taken");

    // Standard output (a pipe here), one host, and `-o FILE` pointed to --output-file.
    let one = lab
        .run(&["timeline", "-f", "hosts.yaml", "worker-1"])
        .expect_code(0);
    assert!(one.stdout.starts_with("<!DOCTYPE html>"));
    let d = drawn(&one.stdout);
    assert!(
        d.iter()
            .filter(|e| e.kind == "label")
            .all(|e| e.host == HOSTS[2])
    );
    let wrong = lab
        .run(&["timeline", "-f", "hosts.yaml", "-o", "page.html"])
        .expect_code(2);
    assert!(
        wrong
            .stderr
            .contains("to write to a file use --output-file page.html"),
        "{}",
        wrong.stderr
    );
    lab.run(&["timeline", "-f", "hosts.yaml", "nobody"])
        .expect_code(2);

    let (code, stderr) = stdout_on_a_terminal(&lab, &["timeline", "-f", "hosts.yaml"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--output-file FILE.html"), "{stderr}");
}

/// Runs bmhctl with its standard output on a pseudo-terminal: its exit code and stderr.
fn stdout_on_a_terminal(lab: &Lab, args: &[&str]) -> (i32, String) {
    let (master, slave) = crate::ci_output::pty();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(lab.path(""))
        .env("BMHCTL_CONFIG", lab.path("no-bmhctl-config.yaml"))
        .args(args)
        .stdout(std::process::Stdio::from(slave))
        .output()
        .expect("run bmhctl");
    drop(master);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), stderr)
}

/// `bmhctl timeline` on the store: the hosts `reconcile` drove, the store untouched.
#[test]
fn the_recorded_timeline_of_the_store_reads_only() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &format!(
            "{}---\n{}---\n{}",
            secret("bmc-secret"),
            host("worker-0", IMAGE),
            host("spare-0", "bootMACAddress: 00:11:22:33:44:56")
        ),
    );
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "store"])
        .expect_code(0);
    lab.run(&[
        "reconcile",
        "--store",
        "store",
        "--provisioner",
        "fixture",
        "-q",
    ])
    .expect_code(0);
    let before = crate::store::snapshot(&lab.path("store"));
    let run = lab
        .run(&["timeline", "--store", "store", "-l", "!nothing"])
        .expect_code(0);
    assert_eq!(crate::store::snapshot(&lab.path("store")), before);
    let d = drawn(&run.stdout);
    let labels: Vec<&str> = (d.iter())
        .filter(|e| e.kind == "label")
        .map(|e| e.host.as_str())
        .collect();
    assert_eq!(labels, ["default/spare-0", "default/worker-0"]);
    let worker: Vec<&str> = (of(&d, "span", "default/worker-0").iter())
        .map(|s| s.get("state"))
        .collect();
    assert!(worker.contains(&"provisioning"), "{worker:?}");
    assert!(
        run.stdout
            .contains("<h1><code>bmhctl timeline --store store"),
        "the command is the title"
    );
}

/// The page laid out by a browser: rows in the hosts' order, one under the other; every span,
/// wait and mark where its times put it on the axis's scale; waits in a band of their own under
/// the spans; and it renders (a screenshot).
#[test]
#[ignore = "needs chromium"]
fn the_page_lays_out_the_run_in_chromium() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let run = provision(&lab, "0.03", "timeline.html").expect_code(1);
    let html = lab.read("timeline.html");
    let start = check_page_against_run(&lab, &run, &html);
    std::fs::write(
        lab.path("measured.html"),
        html.replace("</body>", &format!("{MEASURE}</body>")),
    )
    .unwrap();
    let dom = chromium(&lab, &["--dump-dom", &url(&lab.path("measured.html"))]);
    let json = dom
        .split("<pre id=\"geometry\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("no geometry in the page:\n{dom}"))
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let laid: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(time(laid["start"].as_str().unwrap()), start);
    let items = laid["items"].as_array().unwrap();
    let all = |kind: &str| -> Vec<&Value> { items.iter().filter(|i| i["kind"] == kind).collect() };
    let num = |v: &Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} of {v}"));

    // The axis: tick labels centred on a linear scale from time 0.
    let ticks = all("tick");
    assert!(ticks.len() >= 3, "{ticks:?}");
    let centre = |v: &Value| num(v, "x") + num(v, "w") / 2.0;
    let (t0, t1) = (ticks[0], ticks[ticks.len() - 1]);
    let per_second = (centre(t1) - centre(t0)) / (num(t1, "seconds") - num(t0, "seconds"));
    let x_of = |secs: f64| centre(t0) + (secs - num(t0, "seconds")) * per_second;
    for t in &ticks {
        assert!((centre(t) - x_of(num(t, "seconds"))).abs() < 1.0, "{t}");
    }

    // Rows: one per host, in the files' order, one under the other.
    let labels = all("label");
    let hosts: Vec<&str> = labels.iter().map(|l| l["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, HOSTS);
    for pair in labels.windows(2) {
        assert!(num(pair[1], "y") > num(pair[0], "y") + 20.0, "{pair:?}");
    }
    for (i, label) in labels.iter().enumerate() {
        let host = label["host"].as_str().unwrap();
        let row_top = num(label, "y") - 8.0;
        let row_bottom = labels.get(i + 1).map_or(f64::MAX, |l| num(l, "y") - 8.0);
        let mine = |kind: &str| -> Vec<&Value> {
            all(kind)
                .into_iter()
                .filter(|v| v["host"] == host)
                .collect()
        };
        let spans = mine("span");
        let mut bar_bottom = 0f64;
        for s in &spans {
            let (a, b) = (num(s, "start"), num(s, "end"));
            assert!((num(s, "x") - x_of(a)).abs() < 1.0, "{host}: {s}");
            let width = ((b - a) * per_second).max(1.0);
            assert!((num(s, "w") - width).abs() < 1.0, "{host}: {s}");
            assert!(num(s, "y") > row_top && num(s, "y") + num(s, "h") < row_bottom);
            bar_bottom = bar_bottom.max(num(s, "y") + num(s, "h"));
        }
        assert!(spans.windows(2).all(|p| num(p[1], "x") >= num(p[0], "x")));
        for w in mine("wait") {
            let (a, b) = (num(w, "start"), num(w, "end"));
            assert!((num(w, "x") - x_of(a)).abs() < 1.0, "{host}: {w}");
            assert!((num(w, "w") - ((b - a) * per_second).max(1.0)).abs() < 1.0);
            // Apart: under the spans, inside the row.
            assert!(num(w, "y") >= bar_bottom, "{host}: {w} overlaps the spans");
            assert!(num(w, "y") + num(w, "h") < row_bottom, "{host}: {w}");
        }
        for m in mine("error").into_iter().chain(mine("retry")) {
            assert!((centre(m) - x_of(num(m, "at"))).abs() < 1.5, "{host}: {m}");
            assert!(
                num(m, "y") >= row_top - 2.0 && num(m, "y") < row_bottom,
                "{m}"
            );
            assert!(!m["title"].as_str().unwrap().is_empty(), "a tooltip: {m}");
        }
        let errors = mine("error");
        if host == "default/broken-0" {
            assert!(errors[0]["title"].as_str().unwrap().contains("BMC said no"));
        } else {
            assert!(errors.is_empty());
        }
    }
    let waits = all("wait");
    assert_eq!(waits.len(), 1);
    assert_eq!(waits[0]["host"], "default/worker-1");

    let shot = lab.path("timeline.png");
    chromium(
        &lab,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,500",
            &url(&lab.path("timeline.html")),
        ],
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    // A blank page of that size is a few KB; the chart's colours and text are many more.
    assert!(png.len() > 15_000, "{} bytes: blank?", png.len());
}

/// Appended to a copy of the page: writes the laid-out box of every drawn thing, with its
/// `data-` attributes, into the page as JSON.
const MEASURE: &str = r#"<script>
const out = {start: document.querySelector('svg.chart').dataset.start, items: []};
for (const e of document.querySelectorAll('svg.chart [data-kind]')) {
  const r = e.getBoundingClientRect(), d = e.dataset, n = k => d[k] === undefined ? null : +d[k];
  const title = e.querySelector('title');
  out.items.push({kind: d.kind, host: d.host || '', state: d.state || '', wait: d.wait || '',
    start: n('start'), end: n('end'), at: n('at'), seconds: n('seconds'),
    title: title ? title.textContent : '', x: r.x, y: r.y, w: r.width, h: r.height});
}
const pre = document.createElement('pre');
pre.id = 'geometry';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>
"#;

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Runs headless Chromium on `args` (with the flags this machine's closed network needs, and a
/// profile of its own), at most a minute; its standard output. Missing Chromium fails the test.
fn chromium(lab: &Lab, args: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .current_dir(lab.path(""))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("chromium: {e} (scripts/test.sh installs it)"));
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium {args:?} still running after a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "chromium {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
