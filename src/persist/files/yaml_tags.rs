//! YAML tags: only the core schema's are read.

use saphyr_parser::{Event, Parser, Tag};

/// The tags bmhctl reads: the YAML 1.2 core schema's scalars and failsafe collections.
const CORE: &[&str] = &[
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
];

const CORE_PREFIX: &str = "tag:yaml.org,2002:";

/// Whether bmhctl reads a node of this tag (as `!!str` or verbatim, `!<tag:yaml.org,2002:str>`).
pub(super) fn is_core(tag: &Tag) -> bool {
    let full = tag.handle.len() + tag.suffix.len();
    CORE.iter()
        .any(|c| c.len() == full && c.starts_with(&tag.handle) && c.ends_with(&tag.suffix))
}

/// The tag as it was most likely written.
fn written(tag: &Tag) -> String {
    match tag.handle.as_str() {
        CORE_PREFIX => format!("!!{}", tag.suffix),
        "!" => format!("!{}", tag.suffix),
        "" if tag.suffix == "!" => "!".to_string(),
        handle => format!("!<{handle}{}>", tag.suffix),
    }
}

/// A node with a tag bmhctl does not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ForeignTag {
    /// 1-based, in the text given to [`foreign_tags`]; the column counts characters.
    pub line: usize,
    pub column: usize,
    /// The node's field (`spec.consumerRef`, `spec.items[0]`); empty for the root.
    pub field: String,
    pub tag: String,
}

impl ForeignTag {
    pub fn message(&self) -> String {
        format!(
            "YAML tag {} refused: bmhctl reads only the core schema's tags (!!str, !!int, \
             !!float, !!bool, !!null, !!map, !!seq); remove the tag",
            self.tag
        )
    }
}

/// Where in a collection the next node goes.
enum Frame {
    /// `key` is the last key read, `None` while a key is expected.
    Map {
        key: Option<String>,
    },
    Seq {
        index: usize,
    },
}

/// The nodes of `text` (one document, or several) whose tags bmhctl does not read, in order.
pub(super) fn foreign_tags(text: &str) -> Vec<ForeignTag> {
    let mut out = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    // The path of each open collection, as text.
    let mut paths: Vec<String> = Vec::new();
    let mut parser = Parser::new_from_str(text);
    while let Some(Ok((ev, span))) = parser.next_event() {
        let (tag, opens, scalar) = match &ev {
            Event::Scalar(value, _, _, tag) => (tag.as_deref(), false, Some(value.as_ref())),
            Event::MappingStart(_, tag) | Event::SequenceStart(_, tag) => {
                (tag.as_deref(), true, None)
            }
            Event::Alias(_) => (None, false, None),
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
                paths.pop();
                advance(&mut stack, None);
                continue;
            }
            Event::DocumentStart(_) => {
                stack.clear();
                paths.clear();
                continue;
            }
            _ => continue,
        };
        let parent = paths.last().map_or("", String::as_str);
        let field = match stack.last() {
            None => String::new(),
            // A key: named by its own text.
            Some(Frame::Map { key: None }) => join(parent, scalar.unwrap_or("?")),
            Some(Frame::Map { key: Some(k) }) => join(parent, k),
            Some(Frame::Seq { index }) => format!("{parent}[{index}]"),
        };
        if let Some(tag) = tag
            && !is_core(tag)
        {
            out.push(ForeignTag {
                line: span.start.line(),
                column: span.start.col() + 1,
                field: field.clone(),
                tag: written(tag),
            });
        }
        if opens {
            stack.push(match ev {
                Event::MappingStart(..) => Frame::Map { key: None },
                _ => Frame::Seq { index: 0 },
            });
            paths.push(field);
        } else {
            advance(&mut stack, scalar);
        }
    }
    out
}

/// A node of the innermost collection is done (`scalar` its text, if a scalar).
fn advance(stack: &mut [Frame], scalar: Option<&str>) {
    match stack.last_mut() {
        Some(Frame::Map { key }) => {
            *key = match key {
                // A collection as a key is named `?`.
                None => Some(scalar.unwrap_or("?").to_string()),
                Some(_) => None,
            }
        }
        Some(Frame::Seq { index }) => *index += 1,
        None => {}
    }
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(usize, usize, String, String)> {
        foreign_tags(text)
            .into_iter()
            .map(|t| (t.line, t.column, t.field, t.tag))
            .collect()
    }

    #[test]
    fn core_schema_tags_are_read_others_are_not() {
        let text = "a: !!str 1\nb: !!int \"2\"\nc: !!float 1\nd: !!bool 'true'\ne: !!null ''\n\
                    f: !!map {x: 1}\ng: !!seq [1]\nh: !<tag:yaml.org,2002:str> 3\n";
        assert_eq!(found(text), []);
        let text = "spec:\n  consumerRef: !!python/object:os.system {}\n  online: !foo true\n  \
                    list:\n    - a\n    - !!binary aGk=\n    - {k: !local v}\n  ! x: 1\n";
        assert_eq!(
            found(text),
            [
                (
                    2,
                    16,
                    "spec.consumerRef".to_string(),
                    "!!python/object:os.system".to_string()
                ),
                (3, 11, "spec.online".into(), "!foo".into()),
                (6, 7, "spec.list[1]".into(), "!!binary".into()),
                (7, 11, "spec.list[2].k".into(), "!local".into()),
                (8, 3, "spec.x".into(), "!".into()),
            ]
        );
    }

    #[test]
    fn tags_of_roots_and_of_later_documents_are_found() {
        let text = "--- !thing\na: 1\n---\nb: !t 2\n";
        assert_eq!(
            found(text),
            [
                (1, 5, String::new(), "!thing".to_string()),
                (4, 4, "b".into(), "!t".into())
            ]
        );
        let text = "%TAG !e! tag:example.com,2000:\n---\nk: !e!x 1\n";
        assert_eq!(
            found(text)[0].3,
            "!<tag:example.com,2000:x>",
            "a declared handle is shown expanded"
        );
    }
}
