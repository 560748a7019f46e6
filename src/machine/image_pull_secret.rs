//! The OCI image's pull credentials (BMO's `ExtractRegistryCredentials`).

use crate::objects::ResolvedSecret;
use base64::Engine as _;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One registry's entry of a docker config.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AuthConfig {
    username: String,
    password: String,
    auth: String,
    #[serde(rename = "identitytoken")]
    identity_token: String,
}

#[derive(Debug, Default, Deserialize)]
struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, AuthConfig>,
}

/// The registry host of an `oci://` URL (with its port, as Go's `url.Parse` gives `Host`).
fn registry_host(image_url: &str) -> Result<String, String> {
    let rest = image_url
        .get(..6)
        .filter(|s| s.eq_ignore_ascii_case("oci://"))
        .map(|_| &image_url[6..])
        .ok_or_else(|| format!("image URL does not have oci:// scheme: {image_url}"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.is_empty() {
        return Err(format!(
            "failed to extract hostname from image URL: {image_url}"
        ));
    }
    Ok(host.to_string())
}

/// Docker Hub's names all mean its one config key (the docker CLI's `ResolveRegistryHost`).
fn resolve_registry_host(host: &str) -> &str {
    match host {
        "index.docker.io"
        | "docker.io"
        | "https://index.docker.io/v1/"
        | "registry-1.docker.io" => "https://index.docker.io/v1/",
        other => other,
    }
}

/// The user and password of one entry: identity token, else both names, else `auth`.
fn entry_credentials(auth: &AuthConfig) -> Result<(String, String), String> {
    if !auth.identity_token.is_empty() {
        return Ok((String::new(), auth.identity_token.clone()));
    }
    if !auth.username.is_empty() && !auth.password.is_empty() {
        return Ok((auth.username.clone(), auth.password.clone()));
    }
    if auth.auth.is_empty() {
        return Ok((String::new(), String::new()));
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(&auth.auth)
        .map_err(|e| format!("decode auth: {e}"))?;
    let text = String::from_utf8_lossy(&decoded);
    let (user, password) = text
        .split_once(':')
        .ok_or("invalid auth: missing \":\" separator")?;
    Ok((user.to_string(), password.to_string()))
}

/// Where and what kind of JSON problem: serde_json's own message may quote a value (a password).
fn json_problem(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let what = match e.classify() {
        Category::Io => "read error",
        Category::Syntax => "syntax error",
        Category::Data => "unexpected value",
        Category::Eof => "unexpected end of JSON",
    };
    format!("{what} at line {} column {}", e.line(), e.column())
}

/// `user:password` for the registry of `image_url`; errors never quote the Secret's values.
pub(crate) fn registry_credentials(
    secret: &ResolvedSecret,
    image_url: &str,
) -> Result<String, String> {
    let host = registry_host(image_url)
        .map_err(|e| format!("failed to extract registry host from image URL: {e}"))?;
    let auths = if let Some(data) = secret.data.get(".dockerconfigjson") {
        serde_json::from_slice::<DockerConfig>(data)
            .map_err(|e| format!("failed to parse dockerconfigjson: {}", json_problem(&e)))?
            .auths
    } else if let Some(data) = secret.data.get(".dockercfg") {
        serde_json::from_slice::<BTreeMap<String, AuthConfig>>(data)
            .map_err(|e| format!("failed to parse dockercfg: {}", json_problem(&e)))?
    } else {
        return Err("secret does not contain .dockerconfigjson or .dockercfg key".into());
    };
    let (user, password) = match auths.get(resolve_registry_host(&host)) {
        Some(auth) => entry_credentials(auth)
            .map_err(|e| format!("failed to get credentials for registry {host}: {e}"))?,
        None => (String::new(), String::new()),
    };
    if user.is_empty() && password.is_empty() {
        return Err(format!("registry {host} not found in auth config"));
    }
    Ok(format!("{user}:{password}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmh_api::ObjectKey;

    fn secret(key: &str, value: &str) -> ResolvedSecret {
        let mut data = BTreeMap::new();
        data.insert(key.to_string(), value.as_bytes().to_vec());
        ResolvedSecret::new(ObjectKey::new("default", "pull"), data)
    }

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    /// BMO's `ExtractRegistryCredentials`: the entry of the image's registry (port included),
    /// from `username`/`password` or from `auth`.
    #[test]
    fn the_registry_of_the_image_picks_the_entry() {
        let config = format!(
            r#"{{"auths": {{"quay.io": {{"auth": "{}"}}, "registry.example:5000": {{"username": "u", "password": "p"}}}}}}"#,
            b64("robot:s3cret")
        );
        let s = secret(".dockerconfigjson", &config);
        assert_eq!(
            registry_credentials(&s, "oci://quay.io/org/os:1").unwrap(),
            "robot:s3cret"
        );
        assert_eq!(
            registry_credentials(&s, "OCI://registry.example:5000/os@sha256:abc").unwrap(),
            "u:p"
        );
        assert_eq!(
            registry_credentials(&s, "oci://ghcr.io/org/os:1").unwrap_err(),
            "registry ghcr.io not found in auth config"
        );
    }

    /// Docker Hub's names resolve to its one config key (`ResolveRegistryHost`); the legacy
    /// `.dockercfg` form is the bare map of entries.
    #[test]
    fn docker_hub_names_and_the_legacy_form() {
        let s = secret(
            ".dockercfg",
            r#"{"https://index.docker.io/v1/": {"username": "hub", "password": "pw"}}"#,
        );
        for url in [
            "oci://docker.io/library/os:1",
            "oci://index.docker.io/library/os:1",
            "oci://registry-1.docker.io/library/os:1",
        ] {
            assert_eq!(registry_credentials(&s, url).unwrap(), "hub:pw", "{url}");
        }
    }

    /// Every error names what is wrong and never quotes a value of the Secret.
    #[test]
    fn errors_name_the_problem_not_the_secret() {
        let cases = [
            (
                secret("other", "x"),
                "secret does not contain .dockerconfigjson or .dockercfg key",
            ),
            (
                secret(".dockerconfigjson", r#"{"auths": {"quay.io": "hunter2"}}"#),
                "failed to parse dockerconfigjson: unexpected value at line 1 column 31",
            ),
            (
                secret(
                    ".dockerconfigjson",
                    r#"{"auths": {"quay.io": {"auth": "aHVudGVyMg=="}}}"#,
                ),
                "failed to get credentials for registry quay.io: invalid auth: missing \":\" separator",
            ),
            (
                secret(
                    ".dockerconfigjson",
                    r#"{"auths": {"quay.io": {"username": "only"}}}"#,
                ),
                "registry quay.io not found in auth config",
            ),
        ];
        for (s, want) in cases {
            let err = registry_credentials(&s, "oci://quay.io/org/os:1").unwrap_err();
            assert_eq!(err, want);
            assert!(!err.contains("hunter2"), "{err}");
        }
        assert_eq!(
            registry_credentials(&secret(".dockercfg", "{}"), "oci:///os").unwrap_err(),
            "failed to extract registry host from image URL: failed to extract hostname from image URL: oci:///os"
        );
    }
}
