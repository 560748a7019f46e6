//! [`Extra`]: the fields of an object bmhctl does not model, kept for the round trip.

use serde::{Deserialize, Serialize, Serializer};
use std::ops::{Deref, DerefMut};
use std::sync::LazyLock;

type Map = serde_json::Map<String, serde_json::Value>;

/// A JSON map (it derefs to one) that takes one pointer when empty, as it nearly always is.
#[derive(Clone, Default, Deserialize)]
#[serde(from = "Map")]
pub struct Extra(Option<Box<Map>>);

static EMPTY: LazyLock<Map> = LazyLock::new(Map::new);

impl Extra {
    /// An empty map; allocates nothing.
    pub fn new() -> Self {
        Self(None)
    }
}

impl Deref for Extra {
    type Target = Map;
    fn deref(&self) -> &Map {
        self.0.as_deref().unwrap_or(&EMPTY)
    }
}

impl DerefMut for Extra {
    /// Allocates the map on the first mutable use.
    fn deref_mut(&mut self) -> &mut Map {
        self.0.get_or_insert_with(Default::default)
    }
}

impl From<Map> for Extra {
    fn from(map: Map) -> Self {
        Self((!map.is_empty()).then(|| Box::new(map)))
    }
}

impl FromIterator<(String, serde_json::Value)> for Extra {
    fn from_iter<I: IntoIterator<Item = (String, serde_json::Value)>>(iter: I) -> Self {
        Map::from_iter(iter).into()
    }
}

impl<'a> IntoIterator for &'a Extra {
    type Item = (&'a String, &'a serde_json::Value);
    type IntoIter = serde_json::map::Iter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.deref().iter()
    }
}

impl PartialEq for Extra {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Extra {}

impl std::fmt::Debug for Extra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.deref().fmt(f)
    }
}

impl Serialize for Extra {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.deref().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_empty_extra_is_one_pointer_and_allocates_only_when_written() {
        assert_eq!(std::mem::size_of::<Extra>(), std::mem::size_of::<usize>());
        let mut e = Extra::new();
        assert!(e.is_empty() && e.0.is_none());
        assert_eq!(e, Extra::from(Map::new()));
        e.insert("kept".into(), json!(1));
        assert_eq!(e.get("kept"), Some(&json!(1)));
        assert_ne!(e, Extra::new());
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Object {
        known: i64,
        #[serde(flatten)]
        extra: Extra,
    }

    #[test]
    fn flattened_it_keeps_unknown_fields_in_order_through_a_round_trip() {
        let text = r#"{"known":1,"zeta":{"a":[1,"b"]},"alpha":null}"#;
        let o: Object = serde_json::from_str(text).unwrap();
        assert_eq!(o.extra.keys().collect::<Vec<_>>(), ["zeta", "alpha"]);
        assert_eq!(serde_json::to_string(&o).unwrap(), text);
        let bare: Object = serde_json::from_str(r#"{"known":2}"#).unwrap();
        assert!(bare.extra.0.is_none());
        assert_eq!(serde_json::to_string(&bare).unwrap(), r#"{"known":2}"#);
    }
}
