//! A warning of `validate` (and `provision`): what BMO accepts but will not work as written, in a
//! class a user can accept (`validate --strict --allow-warning CLASS`).

use std::fmt;

/// The kinds of warning, each named in the warning's text as `[class]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum WarningClass {
    /// A field bmhctl does not know, kept under `--validate=warn` or under `status:`.
    UnknownField,
    /// A `fake-hardware://` address: bmhctl's own scheme, which a metal3 cluster refuses.
    FakeHardware,
    /// A BMC address BMO accepts but that cannot reach a BMC, or a mistyped scheme.
    BmcAddress,
    /// BMC credentials that registration will refuse (no Secret name, a missing field).
    BmcCredentials,
}

impl WarningClass {
    pub fn name(self) -> &'static str {
        match self {
            Self::UnknownField => "unknown-field",
            Self::FakeHardware => "fake-hardware",
            Self::BmcAddress => "bmc-address",
            Self::BmcCredentials => "bmc-credentials",
        }
    }
}

impl fmt::Display for WarningClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One warning: its text ends with its class, `... [fake-hardware]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub class: WarningClass,
    pub message: String,
}

impl Warning {
    pub fn new(class: WarningClass, message: impl Into<String>) -> Self {
        Self {
            class,
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.message, self.class)
    }
}

/// As its text, class included (the `warnings` of `validate -o json`).
impl serde::Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn each_class_is_named_as_the_flag_takes_it() {
        for c in WarningClass::value_variants() {
            let flag = c.to_possible_value().unwrap();
            assert_eq!(flag.get_name(), c.name());
        }
        let w = Warning::new(WarningClass::FakeHardware, "x");
        assert_eq!(w.to_string(), "x [fake-hardware]");
        assert_eq!(serde_json::to_value(&w).unwrap(), "x [fake-hardware]");
    }
}
