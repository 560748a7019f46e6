//! The Ironic requests a client has sent, by kind (`PUT /v1/nodes/{node}/states/power`), served
//! as `bmhctl_ironic_api_calls_total{kind=...}`; only the second path segment is an identifier.

use bmhctl_plugin_sdk::ApiCallCount;
use reqwest::Method;
use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Request counters by kind (the exclusive lock only the first time a kind is seen).
#[derive(Debug, Default)]
pub struct ApiCalls {
    by_kind: RwLock<HashMap<String, AtomicU64>>,
}

impl ApiCalls {
    /// Counts one request of `method` to `path` (a URL path or one relative to `root`, `/v1/`).
    pub fn count(&self, method: &Method, root: &str, path: &str) {
        let kind = kind(method, root, path);
        if let Some(n) = self
            .by_kind
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&kind)
        {
            n.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.by_kind
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .entry(kind)
            .or_default()
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Every kind seen so far and its count, sorted by kind.
    pub fn snapshot(&self) -> Vec<ApiCallCount> {
        let mut rows: Vec<ApiCallCount> = self
            .by_kind
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(kind, n)| ApiCallCount {
                kind: kind.clone(),
                count: n.load(Ordering::Relaxed),
            })
            .collect();
        rows.sort_by(|a, b| a.kind.cmp(&b.kind));
        rows
    }
}

/// The kind of a request: `METHOD /v1/<collection>[/{placeholder}[/<sub-resource>...]]`, without
/// the query; a path outside `root` (a pagination link's other prefix) is read from its `/v1/`.
pub fn kind(method: &Method, root: &str, path: &str) -> String {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let relative = path
        .strip_prefix(root)
        .or_else(|| path.split_once("/v1/").map(|(_, rest)| rest))
        .unwrap_or(path)
        .trim_matches('/');
    let mut segments: Vec<&str> = relative.split('/').filter(|s| !s.is_empty()).collect();
    if segments.len() > 1 {
        segments[1] = placeholder(segments[0]);
    }
    format!("{method} /v1/{}", segments.join("/"))
}

/// What stands for the identifier under `collection`.
fn placeholder(collection: &str) -> &'static str {
    match collection {
        "nodes" => "{node}",
        "ports" => "{port}",
        "drivers" => "{driver}",
        "conductors" => "{conductor}",
        _ => "{id}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_hold_no_identifier() {
        let cases = [
            (Method::GET, "/v1/", "GET /v1/"),
            (
                Method::GET,
                "/v1/nodes?fields=uuid&limit=1000",
                "GET /v1/nodes",
            ),
            (Method::POST, "/v1/nodes", "POST /v1/nodes"),
            (
                Method::GET,
                "/v1/nodes/1be26c0b-03f2-4d2e-ae87-c02d7f33c123",
                "GET /v1/nodes/{node}",
            ),
            (
                Method::PUT,
                "/v1/nodes/default~worker-0/states/provision",
                "PUT /v1/nodes/{node}/states/provision",
            ),
            (
                Method::POST,
                "/v1/nodes/n1/vendor_passthru?method=create_subscription",
                "POST /v1/nodes/{node}/vendor_passthru",
            ),
            (Method::DELETE, "/v1/ports/p1", "DELETE /v1/ports/{port}"),
            (
                Method::GET,
                "/v1/conductors?fields=hostname,alive",
                "GET /v1/conductors",
            ),
        ];
        for (method, path, want) in cases {
            assert_eq!(kind(&method, "/v1/", path), want, "{path}");
        }
        // Under a prefix, and a pagination link that names another one.
        assert_eq!(
            kind(&Method::GET, "/baremetal/v1/", "/baremetal/v1/nodes/x/bios"),
            "GET /v1/nodes/{node}/bios"
        );
        assert_eq!(
            kind(&Method::GET, "/baremetal/v1/", "/v1/nodes?marker=x"),
            "GET /v1/nodes"
        );
    }

    #[test]
    fn counts_add_up_by_kind() {
        let calls = ApiCalls::default();
        assert!(calls.snapshot().is_empty());
        for node in ["a", "b", "c"] {
            calls.count(&Method::GET, "/v1/", &format!("/v1/nodes/{node}"));
        }
        calls.count(&Method::POST, "/v1/", "/v1/nodes");
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let calls = &calls;
                move || {
                    for _ in 0..250 {
                        calls.count(&Method::GET, "/v1/", "/v1/nodes?limit=1");
                    }
                }
            })
            .collect();
        std::thread::scope(|s| {
            for t in threads {
                s.spawn(t);
            }
        });
        let rows: Vec<(String, u64)> = calls
            .snapshot()
            .into_iter()
            .map(|r| (r.kind, r.count))
            .collect();
        assert_eq!(
            rows,
            [
                ("GET /v1/nodes".to_string(), 1000),
                ("GET /v1/nodes/{node}".to_string(), 3),
                ("POST /v1/nodes".to_string(), 1),
            ]
        );
    }
}
