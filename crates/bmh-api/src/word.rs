//! [`Word`]: shared text for the short texts a status repeats, cloned without allocating.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::sync::Arc;

/// Text that is one of the known words (held without a copy) or shared.
#[derive(Clone)]
pub struct Word(Repr);

#[derive(Clone)]
enum Repr {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Default for Word {
    fn default() -> Self {
        Self(Repr::Static(""))
    }
}

/// The words held without a copy (a `static`: one copy): BMO's condition types, statuses, reasons.
static KNOWN: &[&str] = &[
    // Types.
    "Ready",
    "Manageable",
    "AvailableForProvisioning",
    "Provisioned",
    "Progressing",
    "Healthy",
    "ChangeDetected",
    "Valid",
    // Statuses.
    "True",
    "False",
    "Unknown",
    // Reasons.
    "NotManaged",
    "NotAvailable",
    "NotProvisioned",
    "NotProgressing",
    "RegistrationFailed",
    "Registering",
    "Available",
    "Preparing",
    "Provisioning",
    "Deprovisioning",
    "Inspecting",
    "PoweringOffBeforeDelete",
    "Deleting",
    "Error",
    "Servicing",
    "Detached",
    "PowerFailure",
    "Warning",
    "CriticalError",
    "Success",
    "ConfigurationError",
    "OK",
    "InvalidComponent",
];

impl Word {
    /// A word from the program's own text: never copied.
    pub const fn from_static(text: &'static str) -> Self {
        Self(Repr::Static(text))
    }

    /// Text already shared: clones of the word share it too.
    pub fn shared(text: Arc<str>) -> Self {
        Self(Repr::Shared(text))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Static(s) => s,
            Repr::Shared(s) => s,
        }
    }
}

/// The program's copy of `text`, when it is a known word.
fn known(text: &str) -> Option<&'static str> {
    KNOWN.iter().copied().find(|k| *k == text)
}

impl From<&str> for Word {
    fn from(text: &str) -> Self {
        match known(text) {
            Some(k) => Self(Repr::Static(k)),
            None => Self(Repr::Shared(text.into())),
        }
    }
}

impl From<String> for Word {
    fn from(text: String) -> Self {
        Self::from(text.as_str())
    }
}

impl std::ops::Deref for Word {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Word {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// The same text: the same address and length first (two known words), then the bytes.
fn same(a: &str, b: &str) -> bool {
    (std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len()) || a == b
}

impl Eq for Word {}

impl PartialEq for Word {
    fn eq(&self, other: &Self) -> bool {
        same(self.as_str(), other.as_str())
    }
}

/// `Word == text` for these text types, and `text == Word` for the first ones.
macro_rules! eq_text {
    ($($both:ty),* ; $($one:ty),*) => {
        $(impl PartialEq<Word> for $both {
            fn eq(&self, other: &Word) -> bool {
                same(self, other.as_str())
            }
        })*
        $(impl PartialEq<$both> for Word {
            fn eq(&self, other: &$both) -> bool {
                same(self.as_str(), other)
            }
        })*
        $(impl PartialEq<$one> for Word {
            fn eq(&self, other: &$one) -> bool {
                same(self.as_str(), other)
            }
        })*
    };
}
eq_text!(str, &str; String);

impl fmt::Debug for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl Serialize for Word {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Word {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Word;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Word, E> {
                Ok(Word::from(v))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Word, E> {
                Ok(Word::from(v))
            }
        }
        d.deserialize_string(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_word_is_the_programs_copy_and_another_its_own() {
        let ready = Word::from(String::from("Ready"));
        assert!(matches!(ready.0, Repr::Static(_)));
        assert!(std::ptr::eq(ready.as_str().as_ptr(), KNOWN[0].as_ptr()));
        let other = Word::from("Readyish");
        assert!(matches!(other.0, Repr::Shared(_)));
        let copy = other.clone();
        assert!(std::ptr::eq(
            copy.as_str().as_ptr(),
            other.as_str().as_ptr()
        ));
        assert_eq!(ready, Word::from_static("Ready"));
        assert_eq!(ready, "Ready");
        assert_ne!(ready, other);
        assert_ne!(Word::from("Read"), ready);
    }

    #[test]
    fn it_reads_and_writes_as_the_text_itself() {
        for text in ["True", "some reason of its own", "", "é: \"quoted\"\n"] {
            let w: Word = serde_json::from_str(&serde_json::to_string(text).unwrap()).unwrap();
            assert_eq!(w, text);
            assert_eq!(
                serde_json::to_string(&w).unwrap(),
                serde_json::to_string(text).unwrap()
            );
            assert_eq!(format!("{w:?}"), format!("{text:?}"));
            assert_eq!(w.to_string(), text);
        }
        let bad: Result<Word, _> = serde_json::from_str("3");
        assert!(bad.unwrap_err().to_string().contains("expected a string"));
    }
}
