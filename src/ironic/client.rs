//! The HTTP side of the Ironic client (BMO's `clients/`, `bmo-ironic-and-bmc.md` section 1):
//! configuration, microversion negotiation, retries of idempotent requests, error bodies, counts.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use reqwest::Method;
use reqwest::Url;
use reqwest::blocking::{Client, RequestBuilder};
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue};

use super::api_calls::ApiCalls;

/// BMO's minimum Ironic API microversion (spec 1.5): 1.89.
pub const MIN_MICROVERSION: u32 = 89;

/// BMO's preferred microversions, highest first (spec 1.5); `latest` is never sent.
pub const MICROVERSION_LADDER: &[u32] = &[110, 109, 95, 93, 89];

/// Default whole-request timeout (`IRONIC_CLIENT_TIMEOUT`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Idle pooled connections are dropped before Ironic's 10 s keep-alive closes them.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(8);

/// Default root of the credential files (`METAL3_AUTH_ROOT_DIR`).
pub const DEFAULT_AUTH_ROOT: &str = "/opt/metal3/auth";
/// Default CA bundle (`IRONIC_CACERT_FILE`).
pub const DEFAULT_CACERT_FILE: &str = "/opt/metal3/certs/ca/tls.crt";
/// Default client certificate (`IRONIC_CLIENT_CERT_FILE`).
pub const DEFAULT_CLIENT_CERT_FILE: &str = "/opt/metal3/certs/client/tls.crt";
/// Default client private key (`IRONIC_CLIENT_PRIVATE_KEY_FILE`).
pub const DEFAULT_CLIENT_KEY_FILE: &str = "/opt/metal3/certs/client/tls.key";

/// Attempts for an idempotent request (GET/PUT/DELETE) failing with a connection error.
const IDEMPOTENT_ATTEMPTS: u32 = 3;

/// What went wrong talking to Ironic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IronicErrorKind {
    /// Bad configuration (endpoint, credentials, TLS files, timeout).
    Config,
    /// The server's API version is unusable (below 1.89, unparsable discovery document).
    Version,
    /// The request never got an HTTP answer (connection refused/reset, TLS, timeout).
    Transport,
    /// 409 Conflict: node locked by a conductor or a transition in progress; retry soon.
    Conflict,
    /// 404 Not Found.
    NotFound,
    /// 400 Bad Request.
    BadRequest,
    /// Any other unexpected HTTP status.
    Http,
    /// A successful answer that could not be decoded.
    Decode,
}

/// An error from the Ironic client, with Ironic's `faultstring` when the server sent one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct IronicError {
    pub kind: IronicErrorKind,
    /// The HTTP status when the server answered.
    pub status: Option<u16>,
    pub message: String,
}

impl IronicError {
    pub fn new(kind: IronicErrorKind, message: impl Into<String>) -> Self {
        IronicError {
            kind,
            status: None,
            message: message.into(),
        }
    }

    fn config(message: impl Into<String>) -> Self {
        Self::new(IronicErrorKind::Config, message)
    }

    pub(crate) fn decode(message: impl Into<String>) -> Self {
        Self::new(IronicErrorKind::Decode, message)
    }

    /// 409: the provisioner retries soon instead of failing.
    pub fn is_conflict(&self) -> bool {
        self.kind == IronicErrorKind::Conflict
    }

    pub fn is_not_found(&self) -> bool {
        self.kind == IronicErrorKind::NotFound
    }

    pub fn is_bad_request(&self) -> bool {
        self.kind == IronicErrorKind::BadRequest
    }

    /// Build the error for an unexpected HTTP answer, reading Ironic's error body.
    pub fn from_response(method: &Method, url: &str, status: u16, body: &[u8]) -> Self {
        let kind = match status {
            409 => IronicErrorKind::Conflict,
            404 => IronicErrorKind::NotFound,
            400 => IronicErrorKind::BadRequest,
            _ => IronicErrorKind::Http,
        };
        let reason = reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        let path = url_path_for_message(url);
        let detail = error_body_message(body).map_or_else(String::new, |d| format!(": {d}"));
        IronicError {
            kind,
            status: Some(status),
            message: format!("{method} {path}: {status} {reason}{detail}"),
        }
    }
}

fn url_path_for_message(url: &str) -> String {
    let Ok(u) = Url::parse(url) else {
        return url.to_string();
    };
    u.query()
        .map_or_else(|| u.path().to_string(), |q| format!("{}?{q}", u.path()))
}

/// An Ironic error body as a readable message: the `faultstring` of `{"error_message": …}`
/// (usually itself JSON text), or what older or proxied answers carry instead.
pub fn error_body_message(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return Some(truncate(text, 500));
    };
    fn from_fault(v: &serde_json::Value) -> Option<String> {
        match v {
            serde_json::Value::String(s) => match serde_json::from_str::<serde_json::Value>(s) {
                Ok(inner @ serde_json::Value::Object(_)) => from_fault(&inner),
                _ => Some(s.trim().to_string()),
            },
            serde_json::Value::Object(map) => {
                if let Some(fs) = map.get("faultstring").and_then(|f| f.as_str()) {
                    return Some(fs.trim().to_string());
                }
                if let Some(em) = map.get("error_message") {
                    return from_fault(em);
                }
                // keystone/wsgi style {"error": {"message": …}} or {"message": …}
                if let Some(m) = map.get("message").and_then(|m| m.as_str()) {
                    return Some(m.trim().to_string());
                }
                if let Some(e) = map.get("error") {
                    return from_fault(e);
                }
                None
            }
            _ => None,
        }
    }
    from_fault(&value).or_else(|| Some(truncate(text, 500)))
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let end = (0..=max).rev().find(|i| s.is_char_boundary(*i));
    format!("{}…", &s[..end.unwrap_or(0)])
}

/// How requests authenticate (spec 1.2). Keystone is not supported.
#[derive(Clone, PartialEq, Eq)]
pub enum Auth {
    None,
    HttpBasic { username: String, password: String },
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::None => write!(f, "noauth"),
            Auth::HttpBasic { username, .. } => write!(f, "http_basic(user={username})"),
        }
    }
}

impl Auth {
    fn header(&self) -> Option<HeaderValue> {
        match self {
            Auth::None => None,
            Auth::HttpBasic { username, password } => {
                let token = base64::engine::general_purpose::STANDARD
                    .encode(format!("{username}:{password}"));
                let mut v = HeaderValue::from_str(&format!("Basic {token}")).ok()?;
                v.set_sensitive(true);
                Some(v)
            }
        }
    }

    /// BMO's credential files `<root>/ironic/{username,password}`; no auth without the directory.
    pub fn from_auth_root(root: &Path) -> Result<Auth, IronicError> {
        let dir = root.join("ironic");
        if let Err(e) = std::fs::metadata(&dir) {
            if e.kind() == std::io::ErrorKind::NotFound {
                return Ok(Auth::None);
            }
            let d = dir.display();
            let m = format!("cannot access Ironic credentials directory {d}: {e}");
            return Err(IronicError::config(m));
        }
        let read = |name: &str| -> Result<String, IronicError> {
            let p = dir.join(name);
            let text = std::fs::read_to_string(&p)
                .map_err(|e| IronicError::config(format!("cannot read {}: {e}", p.display())))?;
            match text.trim() {
                "" => Err(IronicError::config(format!("empty HTTP Basic Auth {name}"))),
                t => Ok(t.to_string()),
            }
        };
        let username = read("username")?;
        let password = read("password")?;
        Ok(Auth::HttpBasic { username, password })
    }
}

/// Everything needed to build an [`IronicClient`].
#[derive(Debug, Clone)]
pub struct IronicConfig {
    /// The versioned API root, always ending in `/v1/`, without userinfo.
    pub endpoint: Url,
    pub auth: Auth,
    /// CA bundle; when set it is the only trust root.
    pub ca_file: Option<PathBuf>,
    /// A CA bundle given as bytes (from a Secret); wins over `ca_file`.
    pub ca_pem: Option<Vec<u8>>,
    /// Client certificate and key for mTLS (both needed).
    pub client_cert: Option<(PathBuf, PathBuf)>,
    pub insecure: bool,
    pub timeout: Duration,
}

impl IronicConfig {
    /// Configuration for `endpoint` with no auth, no TLS files, default timeout.
    pub fn new(endpoint: &str) -> Result<IronicConfig, IronicError> {
        let (endpoint, auth) = normalize_endpoint(endpoint)?;
        Ok(IronicConfig {
            endpoint,
            auth: auth.unwrap_or(Auth::None),
            ca_file: None,
            ca_pem: None,
            client_cert: None,
            insecure: false,
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// Configuration from an environment lookup function (tests pass a map).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<IronicConfig, IronicError> {
        let get = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        let raw = get("IRONIC_ENDPOINT")
            .ok_or_else(|| IronicError::config("IRONIC_ENDPOINT is not set"))?;
        // Credentials in the URL win over the credential files.
        let mut config = IronicConfig::new(&raw)?;
        if config.auth == Auth::None {
            let root = get("METAL3_AUTH_ROOT_DIR").unwrap_or_else(|| DEFAULT_AUTH_ROOT.into());
            config.auth = Auth::from_auth_root(Path::new(&root))?;
        }
        let existing = |var: &str, default: &str| -> Option<PathBuf> {
            let p = PathBuf::from(get(var).unwrap_or_else(|| default.to_string()));
            p.exists().then_some(p)
        };
        config.ca_file = existing("IRONIC_CACERT_FILE", DEFAULT_CACERT_FILE);
        let cert = existing("IRONIC_CLIENT_CERT_FILE", DEFAULT_CLIENT_CERT_FILE);
        let key = existing("IRONIC_CLIENT_PRIVATE_KEY_FILE", DEFAULT_CLIENT_KEY_FILE);
        config.client_cert = cert.zip(key);
        config.insecure =
            get("IRONIC_INSECURE").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        if let Some(v) = get("IRONIC_CLIENT_TIMEOUT") {
            config.timeout = parse_go_duration(v.trim()).map_err(|e| {
                IronicError::config(format!("invalid IRONIC_CLIENT_TIMEOUT {v:?}: {e}"))
            })?;
            if config.timeout.is_zero() {
                return Err(IronicError::config(
                    "invalid IRONIC_CLIENT_TIMEOUT: must be greater than zero",
                ));
            }
        }
        Ok(config)
    }
}

/// An endpoint ending in `/v1/`, its userinfo taken out as HTTP basic credentials (spec 1.1, 1.2).
pub fn normalize_endpoint(raw: &str) -> Result<(Url, Option<Auth>), IronicError> {
    let invalid = |why: &dyn std::fmt::Display| {
        IronicError::config(format!("invalid Ironic endpoint {raw:?}: {why}"))
    };
    let mut url = Url::parse(raw.trim()).map_err(|e| invalid(&e))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(&"scheme must be http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid(&"no host"));
    }
    let auth = if url.username().is_empty() {
        None
    } else {
        let username = percent_decode(url.username());
        let password = url.password().map(percent_decode).unwrap_or_default();
        if password.is_empty() {
            return Err(IronicError::config(
                "no password supplied for HTTP Basic Auth",
            ));
        }
        Some(Auth::HttpBasic { username, password })
    };
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    let path = url.path().trim_end_matches('/').to_string();
    let v1 = if path.ends_with("/v1") { "/" } else { "/v1/" };
    url.set_path(&format!("{path}{v1}"));
    Ok((url, auth))
}

fn percent_decode(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let [b, tail @ ..] = rest {
        let hex = tail.get(..2).filter(|_| *b == b'%');
        let decoded = hex.and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        out.push(decoded.unwrap_or(*b));
        rest = if decoded.is_some() { &tail[2..] } else { tail };
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse a Go duration (`30s`, `1m30s`, `1.5s`, `500ms`, `0`).
pub fn parse_go_duration(s: &str) -> Result<Duration, String> {
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err("empty duration".into());
    }
    let mut rest = s;
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(format!("expected a number at {rest:?}"));
        }
        let n: f64 = rest[..num_len]
            .parse()
            .map_err(|_| format!("bad number {:?}", &rest[..num_len]))?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let secs = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "" => return Err("missing unit (use e.g. 30s)".into()),
            u => return Err(format!("unknown unit {u:?}")),
        };
        rest = &rest[unit_len..];
        total += n * secs;
    }
    Ok(Duration::from_secs_f64(total))
}

/// The negotiated API version and the features it unlocks (spec 1.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiVersion {
    /// The microversion sent on every request (`1.<minor>`).
    pub minor: u32,
    /// The server's maximum microversion (`major`, `minor`).
    pub server_max: (u32, u32),
}

impl ApiVersion {
    /// Pick BMO's version for a server whose maximum is `major.minor`.
    pub fn choose(major: u32, minor: u32) -> Result<ApiVersion, IronicError> {
        if major != 1 || minor < MIN_MICROVERSION {
            // 1.89 came with Ironic 24.0 (the first of the 2024.1 series); 23.1 stops at 1.88.
            return Err(IronicError::new(
                IronicErrorKind::Version,
                format!(
                    "it supports API {major}.{minor} at most, a release older than Ironic 24.0 \
                     (2024.1 Caracal); bmhctl needs API 1.{MIN_MICROVERSION} or newer, as BMO \
                     does: Ironic 24.0 or newer"
                ),
            ));
        }
        let chosen = MICROVERSION_LADDER
            .iter()
            .copied()
            .find(|v| *v <= minor)
            .unwrap_or(MIN_MICROVERSION);
        Ok(ApiVersion {
            minor: chosen,
            server_max: (major, minor),
        })
    }

    /// `abort` is allowed from `wait call-back` (1.110).
    pub fn has_deployment_abort(&self) -> bool {
        self.minor >= 110
    }
    /// Node `health` field (1.109).
    pub fn has_health_api(&self) -> bool {
        self.minor >= 109
    }
    /// Node `disable_power_off` (1.95).
    pub fn has_disable_power_off(&self) -> bool {
        self.minor >= 95
    }
    /// `GET /v1/nodes/{id}/vmedia` (1.93).
    pub fn has_virtual_media_get_api(&self) -> bool {
        self.minor >= 93
    }
}

/// A raw successful answer.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, IronicError> {
        serde_json::from_slice(&self.body)
            .map_err(|e| IronicError::decode(format!("invalid response from Ironic: {e}")))
    }
}

/// A thin, synchronous client of Ironic's REST API, to share between blocking threads.
pub struct IronicClient {
    http: Client,
    endpoint: Url,
    auth: Option<HeaderValue>,
    version: Mutex<Option<ApiVersion>>,
    requests: AtomicU64,
    /// The same requests by kind; shared by the clients of one factory.
    calls: Arc<ApiCalls>,
    pub(crate) drivers_cache: Mutex<Option<Vec<super::types::Driver>>>,
}

impl std::fmt::Debug for IronicClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IronicClient")
            .field("endpoint", &self.endpoint.as_str())
            .field("version", &*crate::mutex::lock(&self.version))
            .field("requests", &self.request_count())
            .finish()
    }
}

impl IronicClient {
    pub fn new(config: IronicConfig) -> Result<IronicClient, IronicError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let mut builder = Client::builder()
            .default_headers(headers)
            .user_agent(concat!("bmhctl/", env!("CARGO_PKG_VERSION")))
            .timeout(config.timeout)
            .connect_timeout(Duration::from_secs(30))
            .tcp_keepalive(Duration::from_secs(30))
            .pool_idle_timeout(POOL_IDLE_TIMEOUT);
        let read = |what: &str, p: &Path| {
            std::fs::read(p).map_err(|e| {
                IronicError::config(format!("cannot read {what} {}: {e}", p.display()))
            })
        };
        let ca = match (&config.ca_pem, &config.ca_file) {
            (Some(pem), _) => Some((pem.clone(), PathBuf::from("<secret>"))),
            (None, Some(ca)) => Some((read("CA bundle", ca)?, ca.clone())),
            (None, None) => None,
        };
        if let Some((pem, ca)) = &ca {
            let certs = reqwest::Certificate::from_pem_bundle(pem).map_err(|e| {
                IronicError::config(format!("invalid CA bundle {}: {e}", ca.display()))
            })?;
            if certs.is_empty() {
                return Err(IronicError::config(format!(
                    "CA bundle {} holds no certificate",
                    ca.display()
                )));
            }
            let only_these = builder.tls_built_in_root_certs(false);
            builder = certs
                .into_iter()
                .fold(only_these, |b, c| b.add_root_certificate(c));
        }
        if let Some((cert, key)) = &config.client_cert {
            let mut pem = read("client certificate", cert)?;
            pem.push(b'\n');
            pem.extend(read("client key", key)?);
            let id = reqwest::Identity::from_pem(&pem)
                .map_err(|e| IronicError::config(format!("invalid client certificate/key: {e}")))?;
            builder = builder.identity(id);
        }
        if config.insecure {
            builder = builder.danger_accept_invalid_certs(true);
        }
        let http = builder
            .build()
            .map_err(|e| IronicError::config(format!("cannot build HTTP client: {e}")))?;
        Ok(IronicClient {
            http,
            endpoint: config.endpoint,
            auth: config.auth.header(),
            version: Mutex::default(),
            requests: AtomicU64::default(),
            calls: Arc::default(),
            drivers_cache: Mutex::default(),
        })
    }

    /// The versioned API root (ends in `/v1/`).
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// HTTP requests sent so far (every attempt, version discovery included).
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// The requests sent so far by kind (every attempt, version discovery included).
    pub fn api_calls(&self) -> &Arc<ApiCalls> {
        &self.calls
    }

    /// This client, counting its requests by kind into `calls` (another client's).
    pub fn counting_into(mut self, calls: Arc<ApiCalls>) -> Self {
        self.calls = calls;
        self
    }

    /// The negotiated API version, discovered on first use (`GET /v1/`); failures are not kept.
    pub fn api_version(&self) -> Result<ApiVersion, IronicError> {
        let mut guard = crate::mutex::lock(&self.version);
        if let Some(v) = *guard {
            return Ok(v);
        }
        Ok(*guard.insert(self.discover_version()?))
    }

    /// Forget the negotiated version (e.g. after Ironic was replaced behind the endpoint).
    pub fn reset_cache(&self) {
        *crate::mutex::lock(&self.version) = None;
        *crate::mutex::lock(&self.drivers_cache) = None;
    }

    fn discover_version(&self) -> Result<ApiVersion, IronicError> {
        let url = self.endpoint.as_str().to_string();
        let resp = self.send(&Method::GET, &url, self.http.get(&url))?;
        if !matches!(resp.status, 200 | 300) {
            let (status, body) = (resp.status, &resp.body);
            return Err(IronicError::from_response(&Method::GET, &url, status, body));
        }
        let unusable = |m: String| IronicError::new(IronicErrorKind::Version, m);
        let doc: serde_json::Value = resp.json()?;
        let version = doc.pointer("/version/version").and_then(|v| v.as_str());
        let missing = || format!("no version.version in Ironic's version document at {url}");
        let version = version.ok_or_else(|| unusable(missing()))?;
        let (major, minor) = parse_microversion(version)
            .ok_or_else(|| unusable(format!("cannot parse Ironic API version {version:?}")))?;
        ApiVersion::choose(major, minor)
    }

    /// URL for a path relative to the endpoint (`nodes/<id>/states/provision`).
    pub fn url(&self, path: &str) -> Result<Url, IronicError> {
        self.endpoint
            .join(path.trim_start_matches('/'))
            .map_err(|e| IronicError::config(format!("invalid request path {path:?}: {e}")))
    }

    /// Send a request to `path` (relative to the endpoint) and check its status against `expect`.
    pub fn request(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&serde_json::Value>,
        expect: &[u16],
    ) -> Result<RawResponse, IronicError> {
        let mut url = self.url(path)?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        self.request_url(method, url, body, expect)
    }

    /// Like [`IronicClient::request`] with a complete URL.
    pub fn request_url(
        &self,
        method: Method,
        url: Url,
        body: Option<&serde_json::Value>,
        expect: &[u16],
    ) -> Result<RawResponse, IronicError> {
        let version = format!("1.{}", self.api_version()?.minor);
        let url_s = url.to_string();
        let mut rb = self
            .http
            .request(method.clone(), url)
            .header("X-OpenStack-Ironic-API-Version", &version)
            .header("OpenStack-API-Version", format!("baremetal {version}"));
        if let Some(auth) = &self.auth {
            rb = rb.header(AUTHORIZATION, auth.clone());
        }
        if let Some(b) = body {
            rb = rb.json(b);
        }
        let resp = self.send(&method, &url_s, rb)?;
        if !expect.contains(&resp.status) {
            let (status, body) = (resp.status, &resp.body);
            return Err(IronicError::from_response(&method, &url_s, status, body));
        }
        Ok(resp)
    }

    /// Send with counting, and retries of idempotent methods on connection errors.
    fn send(
        &self,
        method: &Method,
        url: &str,
        rb: RequestBuilder,
    ) -> Result<RawResponse, IronicError> {
        // Only reads are resent. PUT and DELETE are idempotent in HTTP's sense, but a resent
        // provision-state PUT that did reach Ironic would start a second transition.
        let idempotent = matches!(*method, Method::GET | Method::HEAD);
        let attempts = if idempotent { IDEMPOTENT_ATTEMPTS } else { 1 };
        let path = Url::parse(url)
            .map(|u| u.path().to_owned())
            .unwrap_or_default();
        let count = || {
            self.requests.fetch_add(1, Ordering::Relaxed);
            self.calls.count(method, self.endpoint.path(), &path);
        };
        let mut last_err = None;
        for attempt in 0..attempts {
            let Some(this) = rb.try_clone() else {
                // a streaming body cannot be cloned: send once
                count();
                return read_response(method, url, rb.send());
            };
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(100 * u64::from(attempt)));
                tracing::debug!(%method, url, attempt, "retrying Ironic request after connection error");
            }
            count();
            match this.send() {
                Err(e) if retryable(&e) && attempt + 1 < attempts => last_err = Some(e),
                other => return read_response(method, url, other),
            }
        }
        read_response(method, url, Err(last_err.expect("at least one attempt")))
    }
}

/// A connection-level failure where the request probably did not reach Ironic (timeouts are
/// not retried: the request may be running).
fn retryable(e: &reqwest::Error) -> bool {
    !e.is_timeout() && (e.is_connect() || e.is_request())
}

fn read_response(
    method: &Method,
    url: &str,
    r: reqwest::Result<reqwest::blocking::Response>,
) -> Result<RawResponse, IronicError> {
    let path = url_path_for_message(url);
    let transport = |e: reqwest::Error| {
        let causes = std::iter::successors(std::error::Error::source(&e), |s| s.source());
        let msg = causes.fold(format!("{method} {path}: {e}"), |m, s| format!("{m}: {s}"));
        IronicError::new(IronicErrorKind::Transport, msg)
    };
    let resp = r.map_err(transport)?;
    let status = resp.status().as_u16();
    let body = resp.bytes().map_err(transport)?.to_vec();
    Ok(RawResponse { status, body })
}

/// Parse `"1.89"` into `(1, 89)`.
pub fn parse_microversion(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}
