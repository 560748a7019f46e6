//! String-valued enumerations that keep values they don't know (in `Other`).

/// Declares an enum of fixed strings plus `Other(String)`; the first, empty one is the default.
#[macro_export]
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident($is_default:ident) {
        $(#[$dmeta:meta])* $default:ident = $dtext:literal,
        $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $(#[$dmeta])*
            #[default]
            $default,
            $($(#[$vmeta])* $variant,)+
            /// A value this version does not know.
            Other(String),
        }

        impl $name {
            /// Every known value, in declaration order.
            pub const KNOWN: &'static [&'static str] = &[$dtext, $($text),+];

            /// The value as written in YAML and JSON.
            pub fn as_str(&self) -> &str {
                match self {
                    Self::$default => $dtext,
                    $(Self::$variant => $text,)+
                    Self::Other(s) => s,
                }
            }

            /// Whether the value is the default, empty one.
            pub fn $is_default(&self) -> bool {
                *self == Self::$default
            }

            /// Whether the value is one this version names (not `Other`).
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::Other(_))
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $dtext => Self::$default,
                    $($text => Self::$variant,)+
                    other => Self::Other(other.to_string()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Ok(Self::from(s.as_str()))
            }
        }
    };
}
