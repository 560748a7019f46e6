//! The plugin entry points of `ironic-provisioner.so`. Ironic is found from `IRONIC_ENDPOINT` and
//! friends (the host's variables first), or, with `IRONIC_NAME`, from an `Ironic` document in the
//! user's files: endpoint in annotation [`ENDPOINT_ANNOTATION`], credentials and CA from the
//! Secrets its spec names.

use super::client::{Auth, IronicClient, IronicConfig};
use super::probe::ProbingFactory;
use super::provisioner::{IronicFactory, ProvisionerConfig};
use base64::Engine;
use bmhctl_plugin_sdk::abi::{
    FEATURE_DUE_HOSTS, FEATURE_PREPROVISIONING_IMAGE, FEATURE_READY_HOSTS, HostConfigureInput,
    HostRequirements, ObjectKind, ObjectRequest,
};
use bmhctl_plugin_sdk::{PluginContext, ProvisionerError};
use serde_json::Value;

pub const IRONIC_API_VERSION: &str = "ironic.metal3.io/v1alpha1";
pub const IRONIC_KIND: &str = "Ironic";
/// Where an `Ironic` document in a file gives its endpoint.
pub const ENDPOINT_ANNOTATION: &str = "bmhctl.metal3.io/endpoint";

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// A setting of the factory: the host's variable, else the process environment's.
fn setting(ctx: &PluginContext, name: &str) -> Option<String> {
    let given = ctx.config().environment.get(name).cloned();
    given.or_else(|| std::env::var(name).ok())
}

/// [`setting`], blank as unset.
fn non_blank(ctx: &PluginContext, name: &str) -> Option<String> {
    setting(ctx, name).filter(|v| !v.trim().is_empty())
}

/// Host configure: with `IRONIC_NAME`, ask the host to load `Ironic` documents.
pub fn host_configure(input: HostConfigureInput) -> Result<HostRequirements, ProvisionerError> {
    if env("IRONIC_NAME").is_none() {
        return Ok(HostRequirements::default());
    }
    Ok(HostRequirements {
        object_kinds: vec![ObjectKind {
            api_version: IRONIC_API_VERSION.into(),
            kind: IRONIC_KIND.into(),
        }],
        namespace: Some(env("IRONIC_NAMESPACE").unwrap_or(input.default_namespace)),
    })
}

/// The factory; readiness is checked lazily per pass and by the start-up probe.
pub fn factory(ctx: PluginContext) -> Result<ProbingFactory, ProvisionerError> {
    let config = match non_blank(&ctx, "IRONIC_NAME") {
        Some(name) => config_from_object(&ctx, &name)?,
        None => IronicConfig::from_lookup(|k| setting(&ctx, k)).map_err(ProvisionerError::other)?,
    };
    let client = IronicClient::new(config.clone()).map_err(ProvisionerError::other)?;
    let mut prov = ProvisionerConfig::from_lookup(
        |k| setting(&ctx, k),
        ctx.has_feature(FEATURE_PREPROVISIONING_IMAGE),
    )
    .map_err(ProvisionerError::Other)?;
    prov.answer_due_hosts = ctx.has_feature(FEATURE_DUE_HOSTS);
    prov.answer_ready_hosts = ctx.has_feature(FEATURE_READY_HOSTS) && prov.hold_passes;
    ctx.logger().info(format!(
        "using Ironic at {} (PROVISIONING_LIMIT={})",
        client.endpoint(),
        prov.provisioning_limit
    ));
    ProbingFactory::new(IronicFactory::new(client, prov), &config)
}

fn config_from_object(ctx: &PluginContext, name: &str) -> Result<IronicConfig, ProvisionerError> {
    let namespace =
        non_blank(ctx, "IRONIC_NAMESPACE").unwrap_or_else(|| ctx.default_namespace().to_string());
    let what = format!("{IRONIC_KIND} {namespace}/{name}");
    let invalid = |m: &dyn std::fmt::Display| ProvisionerError::Other(format!("{what}: {m}"));
    let obj = ctx
        .objects()
        .read(&ObjectRequest {
            api_version: IRONIC_API_VERSION.into(),
            kind: IRONIC_KIND.into(),
            namespace: namespace.clone(),
            name: name.into(),
        })?
        .ok_or_else(|| {
            ProvisionerError::Other(format!(
                "IRONIC_NAME is set but no {what} document was found in the given files"
            ))
        })?;
    let endpoint = obj
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(ENDPOINT_ANNOTATION))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            invalid(&format!(
                "metadata.annotations.{ENDPOINT_ANNOTATION} must give the Ironic endpoint"
            ))
        })?;
    let mut config = IronicConfig::new(endpoint).map_err(|e| invalid(&e))?;
    let secret_value = |secret: &str, keys: &[&str]| -> Result<Option<String>, ProvisionerError> {
        let s = ctx.objects().read_secret(&namespace, secret)?;
        let s = s.ok_or_else(|| invalid(&format!("Secret {namespace}/{secret} not found")))?;
        for k in keys {
            if let Some(v) = s.pointer(&format!("/data/{k}")).and_then(Value::as_str) {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(v)
                    .map_err(|e| {
                        invalid(&format!(
                            "Secret {namespace}/{secret} key {k} is not base64: {e}"
                        ))
                    })?;
                return Ok(Some(String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
        Ok(None)
    };
    let text_at = |pointer: &str| obj.pointer(pointer).and_then(Value::as_str);
    if let Some(secret) = text_at("/spec/apiCredentialsName") {
        let user = secret_value(secret, &["username"])?.unwrap_or_default();
        let pass = secret_value(secret, &["password"])?.unwrap_or_default();
        if user.trim().is_empty() || pass.trim().is_empty() {
            let why = format!("Secret {namespace}/{secret} needs non-empty username and password");
            return Err(invalid(&why));
        }
        config.auth = Auth::HttpBasic {
            username: user.trim().to_string(),
            password: pass.trim().to_string(),
        };
    }
    if let Some(secret) = text_at("/spec/tls/certificateName") {
        config.ca_pem = secret_value(secret, &["ca.crt", "tls.crt"])?.map(String::into_bytes);
    }
    config.insecure |=
        non_blank(ctx, "IRONIC_INSECURE").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    Ok(config)
}
