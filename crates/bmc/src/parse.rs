//! Reading a BMC address the way BMO does: Go's `net/url` parse, then BMO's repairs.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::error::{BmcError, UrlError, UrlErrorKind};

/// An address after BMO's parsing and repairs, before the scheme is looked up.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ParsedAddress {
    /// Lower-cased scheme; `ipmi` when the address had none.
    pub scheme: String,
    /// `host[:port]` as in the address (IPv6 brackets kept, percent-escapes decoded).
    pub authority: String,
    /// Percent-decoded path; `""` when absent.
    pub path: String,
    /// The query without `?`, still encoded; `""` when absent.
    pub raw_query: String,
}

impl ParsedAddress {
    /// The host without port and without IPv6 brackets.
    pub fn hostname(&self) -> &str {
        split_host_port(&self.authority).0
    }

    /// The port digits, `""` when there is none.
    pub fn port(&self) -> &str {
        split_host_port(&self.authority).1
    }

    /// Query parameters (key → values in order). Malformed pairs are left out.
    pub fn query(&self) -> BTreeMap<String, Vec<String>> {
        parse_query(&self.raw_query).0
    }
}

/// BMO's `GetParsedURL`: parse `address`, repair the forms BMO accepts, check the host name.
pub fn parse_address(address: &str) -> Result<ParsedAddress, BmcError> {
    let mut fallback_cause = None;
    let url = match go_parse(address) {
        Err(err) => {
            // Perhaps `host:port`, which a URL parser reads as a path with a colon in it.
            if address.contains(':') && !net_split_host_port_ok(address) {
                return Err(BmcError::Parse(err));
            }
            if !matches!(
                err.kind,
                UrlErrorKind::ColonInFirstPathSegment | UrlErrorKind::MissingScheme
            ) {
                fallback_cause = Some(err);
            }
            GoUrl {
                scheme: "ipmi".to_owned(),
                host: address.to_owned(),
                ..GoUrl::default()
            }
        }
        Ok(mut url) => {
            if !url.opaque.is_empty() {
                // `scheme:host[:port]` – read it as `scheme://host[:port]`.
                url = go_parse(&address.replacen(':', "://", 1)).map_err(BmcError::Parse)?;
            }
            if url.scheme.is_empty() && split_host_port(&url.host).0.is_empty() {
                // No scheme and no `//`: the host was read as a path.
                url = go_parse(&format!("ipmi://{address}")).map_err(BmcError::Parse)?;
            }
            url
        }
    };

    let hostname = split_host_port(&url.host).0;
    if !valid_hostname(hostname) {
        return Err(BmcError::InvalidHostname {
            hostname: hostname.to_owned(),
            cause: fallback_cause,
        });
    }

    Ok(ParsedAddress {
        scheme: url.scheme,
        authority: url.host,
        path: url.path,
        raw_query: url.raw_query,
    })
}

/// Why Go's `url.ParseRequestURI` refused a URL (BMO's webhook reads image URLs with it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestUriErrorKind {
    /// The URL is empty (Go: `empty url`).
    #[error("empty url")]
    Empty,
    /// Neither a scheme nor an absolute path (Go: `invalid URI for request`).
    #[error("invalid URI for request")]
    NotForRequest,
    /// Any other problem, as for BMC addresses.
    #[error("{0}")]
    Url(UrlErrorKind),
}

/// A failed [`parse_request_uri`]; displays like Go's `*url.Error`: `parse "<url>": <problem>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parse {}: {}", crate::error::go_quote(.url), .kind)]
pub struct RequestUriError {
    pub url: String,
    pub kind: RequestUriErrorKind,
}

/// Go's `url.ParseRequestURI`; returns the lower-cased scheme (`""` for a path or `*`).
pub fn parse_request_uri(raw: &str) -> Result<String, RequestUriError> {
    let kind = match raw {
        "" => RequestUriErrorKind::Empty,
        "*" => return Ok(String::new()),
        _ => match parse_without_fragment(raw, true) {
            // Opaque (`mailto:x`) or an absolute path: nothing more is checked.
            Ok(url) if !url.scheme.is_empty() || url.path.starts_with('/') => return Ok(url.scheme),
            Ok(_) => RequestUriErrorKind::NotForRequest,
            Err(kind) => RequestUriErrorKind::Url(kind),
        },
    };
    Err(RequestUriError {
        url: raw.to_owned(),
        kind,
    })
}

/// Empty, an IP address (no zone), or a DNS name of valid labels.
pub fn valid_hostname(hostname: &str) -> bool {
    if hostname.is_empty()
        || hostname.parse::<Ipv4Addr>().is_ok()
        || hostname.parse::<Ipv6Addr>().is_ok()
    {
        return true;
    }
    hostname.split('.').all(|label| {
        let b = label.as_bytes();
        !b.is_empty()
            && b.len() <= 63
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
    })
}

/// The fields of a Go `url.URL` that matter here.
#[derive(Debug, Default)]
struct GoUrl {
    scheme: String,
    opaque: String,
    host: String,
    path: String,
    raw_query: String,
}

/// Go's `url.Parse`.
fn go_parse(raw: &str) -> Result<GoUrl, UrlError> {
    let (without_fragment, fragment) = match raw.split_once('#') {
        Some((u, f)) => (u, Some(f)),
        None => (raw, None),
    };
    let url = parse_without_fragment(without_fragment, false).map_err(|kind| UrlError {
        url: without_fragment.to_owned(),
        kind,
    })?;
    if let Some(fragment) = fragment.filter(|f| !f.is_empty()) {
        unescape(fragment, Mode::Other).map_err(|kind| UrlError {
            url: raw.to_owned(),
            kind,
        })?;
    }
    Ok(url)
}

/// With `via_request`, a URL with neither scheme nor absolute path comes back without a path.
fn parse_without_fragment(raw: &str, via_request: bool) -> Result<GoUrl, UrlErrorKind> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(UrlErrorKind::ControlCharacter);
    }
    let (scheme, mut rest) = split_scheme(raw)?;
    let mut url = GoUrl {
        scheme: scheme.to_ascii_lowercase(),
        ..GoUrl::default()
    };

    if let Some((before, query)) = rest.split_once('?') {
        rest = before;
        url.raw_query = query.to_owned();
    }

    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_owned();
            return Ok(url);
        }
        if via_request {
            return Ok(url);
        }
        let first_segment = rest.split('/').next().unwrap_or_default();
        if first_segment.contains(':') {
            return Err(UrlErrorKind::ColonInFirstPathSegment);
        }
    }

    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///"))
        && rest.starts_with("//")
    {
        let after = &rest[2..];
        let (authority, path) = after.split_at(after.find('/').unwrap_or(after.len()));
        url.host = parse_authority(authority)?;
        rest = path;
    }

    url.path = unescape(rest, Mode::Other)?;
    Ok(url)
}

/// Go's `getScheme`.
fn split_scheme(raw: &str) -> Result<(&str, &str), UrlErrorKind> {
    for (i, b) in raw.bytes().enumerate() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i == 0 => return Ok(("", raw)),
            b'0'..=b'9' | b'+' | b'-' | b'.' => {}
            b':' if i == 0 => return Err(UrlErrorKind::MissingScheme),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseAuthority`; returns the decoded `host[:port]` (userinfo checked, then dropped).
fn parse_authority(authority: &str) -> Result<String, UrlErrorKind> {
    let at = authority.rfind('@');
    let host = parse_host(match at {
        Some(i) => &authority[i + 1..],
        None => authority,
    })?;
    if let Some(i) = at {
        let userinfo = &authority[..i];
        if !valid_userinfo(userinfo) {
            return Err(UrlErrorKind::InvalidUserinfo);
        }
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        unescape(user, Mode::Other)?;
        unescape(password, Mode::Other)?;
    }
    Ok(host)
}

fn valid_userinfo(userinfo: &str) -> bool {
    userinfo
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c))
}

/// Go's `parseHost` (current Go: a bracketed literal must be an IPv6 address).
fn parse_host(host: &str) -> Result<String, UrlErrorKind> {
    if host.starts_with('[') {
        let close = host.rfind(']').ok_or(UrlErrorKind::MissingBracket)?;
        let colon_port = &host[close + 1..];
        if !valid_optional_port(colon_port) {
            return Err(UrlErrorKind::InvalidPort(colon_port.to_owned()));
        }
        if let Some(zone) = host[..close].find("%25") {
            let mut out = unescape(&host[..zone], Mode::Host)?;
            out.push_str(&unescape(&host[zone..close], Mode::Zone)?);
            out.push_str(&unescape(&host[close..], Mode::Host)?);
            return Ok(out);
        }
        let literal = &host[1..close];
        if literal.parse::<Ipv6Addr>().is_err() {
            return Err(UrlErrorKind::InvalidIpv6(literal.to_owned()));
        }
    } else if let Some(colon) = host.rfind(':') {
        let colon_port = &host[colon..];
        if !valid_optional_port(colon_port) {
            return Err(UrlErrorKind::InvalidPort(colon_port.to_owned()));
        }
    }
    unescape(host, Mode::Host)
}

/// `""` or `:` followed by digits only.
fn valid_optional_port(port: &str) -> bool {
    port.is_empty() || (port.starts_with(':') && port[1..].bytes().all(|b| b.is_ascii_digit()))
}

/// Go's `url.splitHostPort` (used by `Hostname()` and `Port()`): never fails.
fn split_host_port(host_port: &str) -> (&str, &str) {
    let mut host = host_port;
    let mut port = "";
    if let Some(colon) = host_port.rfind(':')
        && valid_optional_port(&host_port[colon..])
    {
        host = &host_port[..colon];
        port = &host_port[colon + 1..];
    }
    if host.len() >= 2 && host.starts_with('[') && host.ends_with(']') {
        host = &host[1..host.len() - 1];
    }
    (host, port)
}

/// Whether Go's `net.SplitHostPort` would accept `host_port`.
fn net_split_host_port_ok(host_port: &str) -> bool {
    let Some(last_colon) = host_port.rfind(':') else {
        return false;
    };
    let (no_open_from, no_close_from) = if host_port.starts_with('[') {
        let Some(end) = host_port.find(']') else {
            return false;
        };
        if end + 1 != last_colon {
            return false;
        }
        (1, end + 1)
    } else {
        if host_port[..last_colon].contains(':') {
            return false;
        }
        (0, 0)
    };
    !host_port[no_open_from..].contains('[') && !host_port[no_close_from..].contains(']')
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Host,
    Zone,
    QueryComponent,
    /// Path, userinfo, fragment: only the escapes themselves are checked.
    Other,
}

/// Characters Go refuses, unescaped, in a host (and a zone).
fn invalid_in_host(c: u8) -> bool {
    !(c.is_ascii_alphanumeric() || b"!$&'()*+,;=:[]<>\"-_.~".contains(&c))
}

/// Go's `unescape`: decode `%XX` (and `+` in queries); invalid UTF-8 is replaced.
fn unescape(s: &str, mode: Mode) -> Result<String, UrlErrorKind> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                if i + 2 >= b.len()
                    || !b[i + 1].is_ascii_hexdigit()
                    || !b[i + 2].is_ascii_hexdigit()
                {
                    let end = (i + 3).min(b.len());
                    return Err(UrlErrorKind::InvalidEscape(
                        String::from_utf8_lossy(&b[i..end]).into_owned(),
                    ));
                }
                let escape = &b[i..i + 3];
                let value = hex(b[i + 1]) << 4 | hex(b[i + 2]);
                let refused = match mode {
                    // Hosts may only escape non-ASCII bytes, and `%25` (RFC 6874 zones).
                    Mode::Host => hex(b[i + 1]) < 8 && escape != b"%25",
                    Mode::Zone => escape != b"%25" && value != b' ' && invalid_in_host(value),
                    _ => false,
                };
                if refused {
                    return Err(UrlErrorKind::InvalidEscape(
                        String::from_utf8_lossy(escape).into_owned(),
                    ));
                }
                out.push(value);
                i += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && invalid_in_host(c) {
                    return Err(UrlErrorKind::InvalidHostCharacter((c as char).to_string()));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

fn hex(c: u8) -> u8 {
    (c as char).to_digit(16).unwrap_or(0) as u8
}

/// Go's `url.ParseQuery`: the pairs that decode, and whether every pair did.
pub(crate) fn parse_query(raw: &str) -> (BTreeMap<String, Vec<String>>, bool) {
    let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut all_ok = true;
    for pair in raw.split('&') {
        if pair.contains(';') {
            all_ok = false;
            continue;
        }
        if pair.is_empty() {
            continue;
        }
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match (
            unescape(key, Mode::QueryComponent),
            unescape(value, Mode::QueryComponent),
        ) {
            (Ok(key), Ok(value)) => values.entry(key).or_default().push(value),
            _ => all_ok = false,
        }
    }
    (values, all_ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_uri_like_go() {
        for (raw, scheme) in [
            ("https://example.com/image", "https"),
            ("oci://example.com/image:latest", "oci"),
            ("HTTP://h/x?y#z", "http"),
            ("unix://example.com", "unix"),
            ("mailto:x", "mailto"),
            ("h:8/x", "h"),
            ("/just/a/path", ""),
            ("*", ""),
        ] {
            assert_eq!(parse_request_uri(raw).unwrap(), scheme, "{raw}");
        }
        for (raw, text) in [
            ("", "parse \"\": empty url"),
            ("test1", "parse \"test1\": invalid URI for request"),
            (
                "1.2.3.4:80/x",
                "parse \"1.2.3.4:80/x\": invalid URI for request",
            ),
            (":x", "parse \":x\": missing protocol scheme"),
            (
                "http://h:port/x",
                "parse \"http://h:port/x\": invalid port \":port\" after host",
            ),
            (
                "http://h/%zz",
                "parse \"http://h/%zz\": invalid URL escape \"%zz\"",
            ),
        ] {
            assert_eq!(
                parse_request_uri(raw).unwrap_err().to_string(),
                text,
                "{raw}"
            );
        }
    }

    #[test]
    fn net_split_host_port_matches_go() {
        for ok in ["1.2.3.4:623", ":623", "[fe80::1]:623", "host:", "[::1]:"] {
            assert!(net_split_host_port_ok(ok), "{ok}");
        }
        for bad in [
            "1.2.3.4",
            "[fe80::1]",
            "fe80::1:623",
            "[fe80::1]x:623",
            "[fe80::1:623",
            "a[b:623",
            "a]b:623",
        ] {
            assert!(!net_split_host_port_ok(bad), "{bad}");
        }
    }

    #[test]
    fn go_split_host_port_never_fails() {
        assert_eq!(split_host_port("[fe80::1]:623"), ("fe80::1", "623"));
        assert_eq!(split_host_port("[fe80::1]"), ("fe80::1", ""));
        assert_eq!(split_host_port("h:x"), ("h:x", ""));
        assert_eq!(split_host_port(":623"), ("", "623"));
        assert_eq!(split_host_port(""), ("", ""));
    }

    #[test]
    fn query_like_go() {
        let (q, ok) = parse_query("a=1&a=2&b&c=x+y%21&&");
        assert!(ok);
        assert_eq!(q["a"], ["1", "2"]);
        assert_eq!(q["b"], [""]);
        assert_eq!(q["c"], ["x y!"]);
        let (q, ok) = parse_query("a=1;b=2&c=%zz&d=4");
        assert!(!ok);
        assert_eq!(q.len(), 1);
        assert_eq!(q["d"], ["4"]);
    }

    #[test]
    fn unescape_rules() {
        assert_eq!(unescape("/a%2Fb", Mode::Other).unwrap(), "/a/b");
        assert_eq!(
            unescape("%4", Mode::Other),
            Err(UrlErrorKind::InvalidEscape("%4".into()))
        );
        assert_eq!(
            unescape("a%41", Mode::Host),
            Err(UrlErrorKind::InvalidEscape("%41".into()))
        );
        assert_eq!(unescape("caf%C3%A9", Mode::Host).unwrap(), "café");
        assert_eq!(
            unescape("a/b", Mode::Host),
            Err(UrlErrorKind::InvalidHostCharacter("/".into()))
        );
    }
}
