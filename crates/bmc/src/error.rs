//! Errors of this crate; texts BMO shows its users are kept word for word.

/// What the generic URL parser (Go `net/url` semantics) found wrong; displays as Go prints it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlErrorKind {
    /// The address starts with `:` (an empty scheme).
    #[error("missing protocol scheme")]
    MissingScheme,
    /// A byte below 0x20 or 0x7f.
    #[error("net/url: invalid control character in URL")]
    ControlCharacter,
    /// No scheme, and the text before the first `/` contains a `:` (e.g. `[fe80::1]`).
    #[error("first path segment in URL cannot contain colon")]
    ColonInFirstPathSegment,
    /// The part before `@` holds characters not allowed in userinfo (e.g. `[@]host`).
    #[error("net/url: invalid userinfo")]
    InvalidUserinfo,
    /// `[` opened an IPv6 literal that no `]` closes.
    #[error("missing ']' in host")]
    MissingBracket,
    /// What follows the host is not `:` and digits; holds the offending text (with its colon).
    #[error("invalid port {} after host", go_quote(.0))]
    InvalidPort(String),
    /// The bracketed text is not an IPv6 address; holds that text.
    #[error("invalid host: {} is not a valid IPv6 address", go_quote(.0))]
    InvalidIpv6(String),
    /// A `%` not followed by two hex digits, or (in a host) escaping an ASCII byte.
    #[error("invalid URL escape {}", go_quote(.0))]
    InvalidEscape(String),
    /// A character that may not appear in a host name.
    #[error("invalid character {} in host name", go_quote(.0))]
    InvalidHostCharacter(String),
}

/// A failed generic parse; displays like Go's `*url.Error`: `parse "<url>": <problem>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parse {}: {}", go_quote(.url), .kind)]
pub struct UrlError {
    pub url: String,
    pub kind: UrlErrorKind,
}

/// Every error this crate returns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BmcError {
    /// BMO: `missing BMC address`.
    #[error("missing BMC address")]
    MissingAddress,

    /// The address could not be parsed at all (BMO wraps Go's parser error).
    #[error("failed to parse BMC address information: {0}")]
    Parse(UrlError),

    /// The host part is neither an IP address nor a valid DNS name; `cause`: why it was refused.
    #[error(
        "failed to parse BMC address information: BMC address hostname/IP : [{hostname}] is invalid{}",
        cause.as_ref().map(|c| format!(" ({c})")).unwrap_or_default()
    )]
    InvalidHostname {
        hostname: String,
        cause: Option<UrlError>,
    },

    /// The scheme is not registered (BMO's `UnknownBMCTypeError`).
    #[error("Unknown BMC type '{bmc_type}' for address {address}")]
    UnknownType { bmc_type: String, address: String },

    /// A `fake-hardware://<id>` address (bmhctl's extension) that is not of that exact form.
    #[error("invalid fake-hardware address {address}: {problem}; expected fake-hardware://<id>")]
    FakeHardware { address: String, problem: String },

    /// BMO: the credentials Secret has an empty `username`.
    #[error(
        "Validation error with BMC credentials: Missing BMC connection detail 'username' in credentials"
    )]
    MissingUsername,

    /// BMO: the credentials Secret has an empty `password`.
    #[error(
        "Validation error with BMC credentials: Missing BMC connection details 'password' in credentials"
    )]
    MissingPassword,

    /// BMO: `spec.bootMode: UEFISecureBoot` on a driver without secure boot.
    #[error("BMC driver {bmc_type} does not support secure boot")]
    SecureBootUnsupported { bmc_type: String },

    /// BMO (webhook): hardware RAID volumes on a driver whose RAID interface is `no-raid`.
    #[error("BMC driver {bmc_type} does not support configuring RAID")]
    RaidUnsupported { bmc_type: String },

    /// BMO: the driver needs a boot MAC (or inspection is disabled) and none is given.
    #[error("BMC driver {bmc_type} requires a BootMACAddress value")]
    BootMacRequired { bmc_type: String },

    /// BMO: `inspectionMode: fast` on a driver without out-of-band inspection.
    #[error("BMC driver {bmc_type} does not support fast (out-of-band) inspection")]
    FastInspectionUnsupported { bmc_type: String },

    /// BMO: the driver needs a provisioning network but `PROVISIONING_NETWORK_DISABLED` is set.
    #[error("BMC driver {bmc_type} requires a provisioning network")]
    ProvisioningNetworkRequired { bmc_type: String },
}

impl BmcError {
    /// True for the errors that come from reading the address itself.
    pub fn is_address_error(&self) -> bool {
        matches!(
            self,
            BmcError::MissingAddress
                | BmcError::Parse(_)
                | BmcError::InvalidHostname { .. }
                | BmcError::UnknownType { .. }
                | BmcError::FakeHardware { .. }
        )
    }
}

/// Quote like Go's `%q` for these messages: backslash, double quote and controls escaped.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
