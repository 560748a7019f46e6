//! Byte-preserving editing of multi-document YAML files.

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use std::sync::Arc;

/// 1-based line/column of a syntax problem or a located node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextPos {
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum YamlFileError {
    #[error("{line}:{column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// The document's root is not a block mapping (e.g. a flow mapping `{...}` or JSON), so we can't splice.
    #[error("document {doc} is not a block mapping; cannot write its status")]
    NotBlockMapping { doc: usize },
    /// A top-level key is explicit (`? key`): where a new entry goes is not worked out for those.
    #[error(
        "document {doc} has an explicit key (`? key`) at its top level; cannot write its status"
    )]
    ExplicitKey { doc: usize },
    /// Rewriting the status entry would take its anchor away from the aliases of it.
    #[error("document {doc} defines an anchor (`&name`) in its status; cannot write its status")]
    AnchorInStatus { doc: usize },
    /// The parser takes a lone CR for a line break, the splice would not.
    #[error("the file has a carriage return without a line feed; cannot edit it")]
    LoneCarriageReturn,
}

/// One path step for `locate`.
pub enum PathSeg<'a> {
    Key(&'a str),
    Index(usize),
    /// The key of this entry rather than its value; the last segment of a path.
    KeyOf(&'a str),
}

/// A multi-document YAML file with pending edits.
pub struct YamlFile {
    text: String,
    docs: Vec<Doc>,
    /// The text has a CR not followed by LF (found once: a scan per edit costs N² per save).
    lone_cr: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum RootKind {
    /// Empty document, scalar, sequence, alias.
    #[default]
    Other,
    FlowMapping,
    BlockMapping,
}

#[derive(Debug, Default)]
struct Doc {
    /// Byte range of the document in the original text (starts at a line start).
    start: usize,
    end: usize,
    /// 1-based line of `start`.
    start_line: usize,
    /// 1-based line where the root node starts.
    content_line: usize,
    root: RootKind,
    /// Column (in characters) of the root mapping's first key.
    indent: usize,
    crlf: bool,
    /// Byte range of the existing `status` entry, or an empty range at the insertion point.
    status_range: (usize, usize),
    status_exists: bool,
    /// Whether `status_range.0` is at the start of its line (only indentation before the key).
    status_at_line_start: bool,
    /// A `|+` scalar ends where the status entry starts (blank lines after it are its content).
    status_after_keep: bool,
    /// A top-level key is explicit (`? key`).
    explicit_key: bool,
    /// The existing status entry defines an anchor.
    status_anchor: bool,
    /// Replacement text for `status_range.0..status_edit_end`, in pieces; `None` = original text.
    status_edit: Option<StatusEdit>,
    /// End of the replaced range: `status_range.1`, or past blank lines a `|+` scalar would take.
    status_edit_end: usize,
    annotations: Option<Annotations>,
    /// Entries of the `metadata` mapping.
    metadata_entries: usize,
    /// A node has a tag bmhctl does not read (see [`super::yaml_tags`]).
    foreign_tag: bool,
}

/// The edits of every document at one moment ([`YamlFile::overlay`]): the file as it was then.
#[derive(Debug, Clone, Default)]
pub struct Overlay(Vec<DocOverlay>);

/// A status edit's text: the concatenation of its pieces.
type StatusEdit = Arc<[Arc<str>]>;

#[derive(Debug, Clone, Default)]
struct DocOverlay {
    /// The status edit and the end of the range it replaces.
    status: Option<(StatusEdit, usize)>,
    annotations: Vec<(usize, usize, String)>,
}

#[derive(Debug, Default)]
struct Annotations {
    /// Byte range of the whole `annotations: ...` entry in `metadata` (block metadata only).
    entry: Option<(usize, usize)>,
    /// Original source text of the `annotations` key, e.g. `annotations` or `"annotations"`.
    key_text: String,
    key_col: usize,
    entry_at_line_start: bool,
    /// For a flow mapping value: byte range from `{` to after `}`.
    flow: Option<(usize, usize)>,
    entries: Vec<AnnEntry>,
    removed: Vec<bool>,
    /// Edits derived from `removed`, sorted and non-overlapping.
    edits: Vec<(usize, usize, String)>,
}

#[derive(Debug)]
struct AnnEntry {
    key: Option<String>,
    key_start: usize,
    value_end: usize,
    /// Whole-lines range for a block mapping entry.
    block_range: (usize, usize),
}

/// Converts the parser's positions into byte offsets.
struct CharMap {
    line_starts: Vec<usize>,
    /// Last lookup `(line, col, byte)`: lookups come in order, so a long line is walked once.
    last: std::cell::Cell<(usize, usize, usize)>,
}

impl CharMap {
    fn new(text: &str) -> CharMap {
        let b = text.as_bytes();
        let breaks = (0..b.len()).filter(|&i| b[i] == b'\n' || lone_cr_at(b, i));
        CharMap {
            line_starts: std::iter::once(0).chain(breaks.map(|i| i + 1)).collect(),
            last: std::cell::Cell::new((usize::MAX, 0, 0)),
        }
    }

    /// Byte offset of the 1-based `line`'s 0-based character column `col` (clamped to the line).
    fn byte(&self, text: &str, line: usize, col: usize) -> usize {
        let Some(&ls) = line.checked_sub(1).and_then(|l| self.line_starts.get(l)) else {
            return text.len();
        };
        // A byte order mark at a line start is not counted in the columns.
        let mut ls = ls;
        while text[ls..].starts_with('\u{feff}') {
            ls += '\u{feff}'.len_utf8();
        }
        let le = self.line_starts.get(line).copied().unwrap_or(text.len());
        let (ll, lc, lb) = self.last.get();
        let (b, c) = if ll == line && lc <= col {
            (lb, lc)
        } else {
            (ls, 0)
        };
        let chars = text[b..le].char_indices();
        let b = b + chars.clone().nth(col - c).map_or(le - b, |(i, _)| i);
        self.last.set((line, col, b));
        b
    }
}

/// Whether byte `i` of `b` is a carriage return not followed by a line feed.
fn lone_cr_at(b: &[u8], i: usize) -> bool {
    b[i] == b'\r' && b.get(i + 1) != Some(&b'\n')
}

/// Role of a mapping in the parts of the tree we index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Root,
    Metadata,
    Annotations,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    Status,
    Metadata,
    Annotations,
    Other,
}

struct OpenEntry {
    kind: KeyKind,
    key: Option<String>,
    key_start: usize,
    key_end: usize,
    key_col: usize,
}

struct Frame {
    is_map: bool,
    flow: bool,
    role: Role,
    expect_key: bool,
    value_role: Role,
    start: usize,
    cur: Option<OpenEntry>,
    first_key_col: Option<usize>,
}

struct Text<'a> {
    s: &'a str,
    b: &'a [u8],
}

impl Text<'_> {
    /// Byte offset of the line break ending the line of `p` (or the end of the text).
    fn line_end(&self, p: usize) -> usize {
        let rest = self.b[p..].iter().position(|&c| c == b'\n');
        rest.map_or(self.b.len(), |i| p + i)
    }

    /// Byte offset of the start of the line containing `p`.
    fn line_start(&self, p: usize) -> usize {
        let p = p.min(self.b.len());
        self.b[..p]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1)
    }

    /// Whether only spaces/tabs precede `p` on its line.
    fn at_line_start(&self, p: usize) -> bool {
        let ls = self.line_start(p);
        self.b[ls..p].iter().all(|&c| c == b' ' || c == b'\t')
    }

    /// The position after the newline ending the line where content `p` ends; `p` at a line start.
    fn eol_after(&self, p: usize) -> usize {
        if p == 0 || self.b[p - 1] == b'\n' {
            return p;
        }
        (self.line_end(p) + 1).min(self.b.len())
    }

    /// Moves `p` (a line start or the end) up over blank lines and comments indented at most `col`.
    fn pullback(&self, mut p: usize, floor: usize, col: usize) -> usize {
        while p > floor {
            let q = self.line_start(if self.b[p - 1] == b'\n' { p - 1 } else { p });
            if q < floor {
                break;
            }
            let line = &self.s[q..p];
            let trimmed = line.trim_start_matches([' ', '\t']);
            let rest = trimmed.trim_end_matches(['\r', '\n']);
            let indent = line.len() - trimmed.len();
            if !(rest.is_empty() || (rest.starts_with('#') && indent <= col)) {
                break;
            }
            p = q;
        }
        p.max(floor)
    }

    /// Whether the key starting at `p` follows a `?` indicator (perhaps on an earlier line).
    fn explicit_key_before(&self, p: usize) -> bool {
        let ws = [' ', '\t', '\r', '\n'];
        let mut before = self.s[..p].trim_end_matches(ws);
        // Comments between the `?` and the key (`? # c`, the key on a later line) hide it.
        loop {
            let ls = self.line_start(before.len());
            let line = &before[ls..];
            let comment = line
                .char_indices()
                .find(|&(i, c)| c == '#' && (i == 0 || line[..i].ends_with([' ', '\t'])));
            match comment {
                Some((i, _)) => before = before[..ls + i].trim_end_matches(ws),
                None => break,
            }
        }
        before.ends_with('?') && self.at_line_start(before.len() - 1)
    }

    /// From `p` (a line start), past the lines of only spaces and tabs, not beyond `limit`.
    fn skip_blank_lines(&self, mut p: usize, limit: usize) -> usize {
        while p < limit {
            let rest = &self.b[p..limit];
            let len = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(rest.len(), |i| i + 1);
            if !rest[..len]
                .iter()
                .all(|&c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
            {
                break;
            }
            p += len;
        }
        p
    }

    /// Where to look upwards from for the end of an entry followed by `next` (its line or the end).
    fn before_next(&self, next: usize) -> usize {
        if next >= self.b.len() {
            self.b.len()
        } else {
            self.line_start(next)
        }
    }

    /// End of the content of the block scalar (`|`, `>`) whose span is `sb..eb`, and whether it
    /// keeps its trailing line breaks (`+`); `None` if its header is not found.
    fn block_scalar_end(&self, sb: usize, eb: usize) -> Option<(usize, bool)> {
        let is_ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n');
        // The header line: that of `sb`, or when `sb` starts it, the last non-blank line before.
        let mut hl = self.line_start(sb);
        if self.at_line_start(sb) {
            loop {
                if hl == 0 {
                    return None;
                }
                hl = self.line_start(hl - 1);
                if !self.b[hl..self.line_end(hl)].iter().all(is_ws) {
                    break;
                }
            }
        }
        let line_end = self.line_end(hl);
        let line = &self.s[hl..line_end];
        // Drop a comment: a `#` after a blank.
        let line = line
            .char_indices()
            .find(|&(i, c)| c == '#' && i > 0 && line[..i].ends_with([' ', '\t']))
            .map_or(line, |(i, _)| &line[..i]);
        let indicators = line
            .trim_end()
            .rsplit([' ', '\t'])
            .next()?
            .strip_prefix(['|', '>'])?;
        if !indicators
            .bytes()
            .all(|c| matches!(c, b'+' | b'-' | b'0'..=b'9'))
        {
            return None;
        }
        // The scalar ended before the LF ending its header: at a lone CR (refused for edits).
        if eb < line_end {
            return None;
        }
        let keep = indicators.contains('+');
        let header_end = (line_end + 1).min(self.b.len()).min(eb.max(line_end));
        if keep {
            // Everything is content but the next line's indentation.
            let end = if (eb < self.b.len() && self.at_line_start(eb))
                || (eb == self.b.len()
                    && self.blank_last_line(hl, line_end, header_end, indicators))
            {
                self.line_start(eb).max(header_end)
            } else {
                eb
            };
            return Some((end.max(header_end), true));
        }
        let region = &self.b[header_end..eb];
        // The indentation: the first non-blank line's, or (an indicator) at least the header's: a
        // bound that never takes a content line for blank.
        let n = if indicators.bytes().any(|c| c.is_ascii_digit()) {
            Some(spaces(&self.b[hl..line_end]))
        } else {
            region
                .split_inclusive(|&c| c == b'\n')
                .find(|l| !is_space_only(l))
                .map(spaces)
        };
        let mut end = header_end;
        let mut pos = header_end;
        for l in region.split_inclusive(|&c| c == b'\n') {
            pos += l.len();
            let blank = is_space_only(l) && n.is_none_or(|n| spaces(l) <= n);
            if !blank {
                end = pos;
            }
        }
        Some((end, false))
    }

    /// Whether the text ends with a line of spaces no deeper than the `|+` scalar's indentation.
    fn blank_last_line(
        &self,
        hl: usize,
        line_end: usize,
        header_end: usize,
        indicators: &str,
    ) -> bool {
        let tail_start = self.line_start(self.b.len());
        let tail = &self.b[tail_start..];
        if tail_start < header_end || !tail.iter().all(|&c| c == b' ') {
            return false;
        }
        let n = match indicators.bytes().find(|c| c.is_ascii_digit()) {
            Some(d) => Some(spaces(&self.b[hl..line_end]) + usize::from(d - b'0')),
            None => self.b[header_end..tail_start]
                .split_inclusive(|&c| c == b'\n')
                .find(|l| !is_space_only(l))
                .map(spaces),
        };
        n.is_some_and(|n| tail.len() <= n)
    }

    /// Byte range of a block mapping entry (key at `key_start`, column `key_col`, content ending at
    /// `content_end`, next sibling at `next`), trailing blank lines and shallow comments left out.
    fn entry_range(
        &self,
        key_start: usize,
        key_col: usize,
        content_end: usize,
        next: usize,
    ) -> (usize, usize) {
        let start = if self.at_line_start(key_start) {
            self.line_start(key_start)
        } else {
            key_start
        };
        let floor = self.eol_after(content_end);
        let end = self.pullback(self.before_next(next), floor, key_col);
        (start, end.max(floor))
    }
}

/// The position of byte `i` of `text`, lines counted by line feeds.
fn text_pos(text: &str, i: usize) -> TextPos {
    let line_start = text[..i].rfind('\n').map_or(0, |l| l + 1);
    TextPos {
        line: text[..i].matches('\n').count() + 1,
        column: text[line_start..i].chars().count() + 1,
    }
}

fn spaces(l: &[u8]) -> usize {
    l.iter().take_while(|&&c| c == b' ').count()
}

fn is_space_only(l: &[u8]) -> bool {
    l.iter().all(|&c| matches!(c, b' ' | b'\r' | b'\n'))
}

impl YamlFile {
    /// Split into documents and index each one.
    pub fn parse(text: String) -> Result<YamlFile, YamlFileError> {
        // YAML does not allow a NUL, but the parser takes one ending a comment for the end of
        // the input and accepts the file, the bytes after it unread: refuse it wherever it is.
        if let Some(i) = text.find('\0') {
            let TextPos { line, column } = text_pos(&text, i);
            return Err(YamlFileError::Syntax {
                line,
                column,
                message: "a NUL character, not allowed in YAML".to_string(),
            });
        }
        let docs = index(&text)?;
        let b = text.as_bytes();
        let lone_cr = (0..b.len()).any(|i| lone_cr_at(b, i));
        Ok(YamlFile {
            text,
            docs,
            lone_cr,
        })
    }

    /// Number of documents (never 0).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// The original text of document `doc` (including its `---`/`...` markers and comments).
    pub fn document_text(&self, doc: usize) -> &str {
        let d = &self.docs[doc];
        &self.text[d.start..d.end]
    }

    /// 1-based line in the file where the document's root node starts.
    pub fn document_start_line(&self, doc: usize) -> usize {
        self.docs[doc].content_line
    }

    /// Whether document `doc`'s status can be written in place.
    fn check_status_editable(&self, doc: usize) -> Result<(), YamlFileError> {
        self.has_block_status(doc)?;
        self.check_line_breaks()?;
        let d = &self.docs[doc];
        if d.explicit_key {
            return Err(YamlFileError::ExplicitKey { doc });
        }
        if d.status_anchor {
            return Err(YamlFileError::AnchorInStatus { doc });
        }
        Ok(())
    }

    /// Replace, insert (`Some`) or remove (`None`) the document's top-level `status` entry.
    pub fn set_status(
        &mut self,
        doc: usize,
        status_yaml: Option<&str>,
    ) -> Result<(), YamlFileError> {
        self.check_status_editable(doc)?;
        let d = &self.docs[doc];
        let Some(yaml) = status_yaml else {
            let edit = d.status_exists.then(|| Arc::from(Vec::new()));
            self.put_status_edit(doc, edit, false);
            return Ok(());
        };
        let nl = if d.crlf { "\r\n" } else { "\n" };
        let mut out = String::with_capacity(yaml.len() + yaml.len() / 8 + 16);
        if self.status_after_unended_line(doc) {
            out.push_str(nl);
        }
        if d.status_at_line_start {
            out.extend(std::iter::repeat_n(' ', d.indent));
        }
        out.push_str("status:");
        let mut lines: Vec<&str> = yaml.lines().collect();
        if lines.first().is_some_and(|l| l.trim_end() == "---") {
            lines.remove(0);
        }
        // Trailing empty lines are dropped, unless content of a `|+` scalar ending the status (the
        // blank lines after the entry in the file then go, or they would become its content too).
        let keep = yaml.contains('+') && ends_with_keep_scalar(&lines);
        let n = match keep {
            true => lines.len(),
            false => lines
                .iter()
                .rposition(|l| !l.is_empty())
                .map_or(0, |i| i + 1),
        };
        let lines = &lines[..n];
        let first = lines.first().map(|l| l.trim()).unwrap_or("");
        // (A line of spaces is kept: a block scalar's last line, deeper than its indentation.)
        if lines.iter().all(|l| l.trim().is_empty()) {
            out.extend([" {}", nl]);
        } else if lines.len() == 1 && (first.starts_with('{') || first.starts_with('[')) {
            out.extend([" ", first, nl]);
        } else {
            out.push_str(nl);
            for line in lines {
                if !line.is_empty() {
                    out.extend(std::iter::repeat_n(' ', d.indent + 2));
                    out.push_str(line);
                }
                out.push_str(nl);
            }
        }
        self.put_status_edit(doc, Some(Arc::from(vec![Arc::from(out)])), keep);
        Ok(())
    }

    /// Records document `doc`'s status edit; `keep`: its text ends with a `|+` scalar.
    fn put_status_edit(&mut self, doc: usize, edit: Option<StatusEdit>, keep: bool) {
        let t = Text {
            s: &self.text,
            b: self.text.as_bytes(),
        };
        let d = &mut self.docs[doc];
        // Past the blank lines after the entry when a `|+` scalar would take them as content.
        d.status_edit_end = if keep || d.status_after_keep {
            t.skip_blank_lines(d.status_range.1, d.end)
        } else {
            d.status_range.1
        };
        d.status_edit = edit;
    }

    /// Whether the status goes at the end of a file whose last line has no newline.
    fn status_after_unended_line(&self, doc: usize) -> bool {
        let d = &self.docs[doc];
        let p = d.status_range.0;
        p > 0
            && self.text.as_bytes()[p - 1] != b'\n'
            && (!d.status_exists || d.status_at_line_start)
    }

    /// [`set_status`](Self::set_status) with the text laid out in pieces other documents may share.
    pub fn set_status_laid_out(
        &mut self,
        doc: usize,
        pieces: &[LaidOut],
    ) -> Result<bool, YamlFileError> {
        self.check_status_editable(doc)?;
        let d = &self.docs[doc];
        if d.indent != 0 || d.crlf || !laid_out_plainly(pieces) {
            return Ok(false);
        }
        static HEADS: std::sync::OnceLock<[Arc<str>; 2]> = std::sync::OnceLock::new();
        let [head, after_newline] =
            HEADS.get_or_init(|| [Arc::from("status:\n"), Arc::from("\nstatus:\n")]);
        let head = if self.status_after_unended_line(doc) {
            after_newline
        } else {
            head
        };
        let mut edit = Vec::with_capacity(pieces.len() + 1);
        edit.push(head.clone());
        edit.extend(pieces.iter().map(|p| p.0.clone()));
        self.put_status_edit(doc, Some(Arc::from(edit)), false);
        Ok(true)
    }

    /// Removes the entries of `keys` from the document's `metadata.annotations` (block or flow).
    pub fn remove_annotations(&mut self, doc: usize, keys: &[&str]) -> Result<bool, YamlFileError> {
        self.check_line_breaks()?;
        let text = &self.text;
        let d = &mut self.docs[doc];
        let Some(ann) = d.annotations.as_mut() else {
            return Ok(false);
        };
        let mut changed = false;
        for (i, e) in ann.entries.iter().enumerate() {
            if !ann.removed[i] && e.key.as_deref().is_some_and(|k| keys.contains(&k)) {
                ann.removed[i] = true;
                changed = true;
            }
        }
        if !changed {
            return Ok(false);
        }
        let nl = if d.crlf { "\r\n" } else { "\n" };
        let all = ann.removed.iter().all(|&r| r);
        let mut edits = Vec::new();
        if let Some((fs, fe)) = ann.flow {
            if all {
                edits.push((fs, fe, "{}".to_string()));
            } else {
                let n = ann.entries.len();
                // Trailing run of removed entries: cut from the end of the last kept value.
                let tail = n - ann.removed.iter().rev().take_while(|&&r| r).count();
                for i in (0..tail).filter(|&i| ann.removed[i]) {
                    let (from, to) = (ann.entries[i].key_start, ann.entries[i + 1].key_start);
                    edits.push((from, to, String::new()));
                }
                if tail < n {
                    edits.push((
                        ann.entries[tail - 1].value_end,
                        ann.entries[n - 1].value_end,
                        String::new(),
                    ));
                }
            }
        } else if all {
            let Some((s, e)) = ann.entry else {
                return Ok(false);
            };
            // Gone, as an API server drops an empty map; kept as `{}` when it is all `metadata`
            // holds, which would otherwise be left null.
            if ann.entry_at_line_start && d.metadata_entries > 1 && text.as_bytes()[e - 1] == b'\n'
            {
                ann.edits = vec![(s, e, String::new())];
                return Ok(true);
            }
            let indent = if ann.entry_at_line_start {
                ann.key_col
            } else {
                0
            };
            let mut rep = format!("{}{}: {{}}", " ".repeat(indent), ann.key_text);
            if e > 0 && text.as_bytes()[e - 1] == b'\n' {
                rep.push_str(nl);
            }
            edits.push((s, e, rep));
        } else {
            let removed = ann.entries.iter().zip(&ann.removed).filter(|(_, r)| **r);
            edits.extend(removed.map(|(e, _)| (e.block_range.0, e.block_range.1, String::new())));
        }
        ann.edits = edits;
        Ok(true)
    }

    /// Edits are placed by LF line breaks: a lone CR (a line break to the parser) is refused.
    fn check_line_breaks(&self) -> Result<(), YamlFileError> {
        if self.lone_cr {
            return Err(YamlFileError::LoneCarriageReturn);
        }
        Ok(())
    }

    /// Where the first lone carriage return is ([`YamlFileError::LoneCarriageReturn`]).
    pub fn lone_carriage_return(&self) -> Option<TextPos> {
        if !self.lone_cr {
            return None;
        }
        let b = self.text.as_bytes();
        let i = (0..b.len()).find(|&i| lone_cr_at(b, i))?;
        Some(text_pos(&self.text, i))
    }

    /// Whether a node of document `doc` has a tag bmhctl does not read.
    pub fn has_foreign_tag(&self, doc: usize) -> bool {
        self.docs[doc].foreign_tag
    }

    /// Whether the document has a `status` entry (edits aside); an error unless a block mapping.
    pub fn has_block_status(&self, doc: usize) -> Result<bool, YamlFileError> {
        let d = &self.docs[doc];
        if d.root != RootKind::BlockMapping {
            return Err(YamlFileError::NotBlockMapping { doc });
        }
        Ok(d.status_exists)
    }

    pub fn source_text(&self) -> &str {
        &self.text
    }

    pub fn render(&self) -> String {
        self.pieces(None).concat()
    }

    /// The edits as they are now, to render the file as it is now later ([`Self::pieces`]).
    pub fn overlay(&self) -> Overlay {
        Overlay(
            self.docs
                .iter()
                .map(|d| DocOverlay {
                    status: d.status_edit.clone().map(|s| (s, d.status_edit_end)),
                    annotations: d
                        .annotations
                        .as_ref()
                        .map(|a| a.edits.clone())
                        .unwrap_or_default(),
                })
                .collect(),
        )
    }

    /// The file's text with the edits of `overlay` (`None`: now) applied, in pieces.
    pub fn pieces<'a>(&'a self, overlay: Option<&'a Overlay>) -> Vec<&'a str> {
        let mut out = Vec::with_capacity(self.docs.len() + 8);
        self.each_piece(overlay, |p| out.push(p));
        out
    }

    /// [`pieces`](Self::pieces) given to `f` in order, without a list of all the pieces.
    pub fn each_piece<'a>(&'a self, overlay: Option<&'a Overlay>, mut f: impl FnMut(&'a str)) {
        let (mut edits, mut out) = (Vec::new(), Vec::new());
        for i in 0..self.docs.len() {
            out.clear();
            self.doc_pieces(i, overlay, &mut edits, &mut out);
            out.iter().for_each(|p| f(p));
        }
    }

    /// Whether the file reads the same with the edits of `a` and of `b` (`None`: the edits now).
    pub fn renders_same(&self, a: Option<&Overlay>, b: Option<&Overlay>) -> bool {
        let (mut edits, mut pa, mut pb) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..self.docs.len() {
            let (sa, aa) = self.doc_edit(i, a);
            let (sb, ab) = self.doc_edit(i, b);
            let same_status = match (sa, sb) {
                (None, None) => true,
                (Some((x, xe)), Some((y, ye))) => xe == ye && Arc::ptr_eq(x, y),
                _ => false,
            };
            if same_status && aa == ab {
                continue;
            }
            pa.clear();
            pb.clear();
            self.doc_pieces(i, a, &mut edits, &mut pa);
            self.doc_pieces(i, b, &mut edits, &mut pb);
            if !same_text(&pa, &pb) {
                return false;
            }
        }
        true
    }

    /// Document `i`'s status edit (with the end of its range) and annotation edits in `overlay`.
    #[allow(clippy::type_complexity)]
    fn doc_edit<'a>(
        &'a self,
        i: usize,
        overlay: Option<&'a Overlay>,
    ) -> (
        Option<(&'a StatusEdit, usize)>,
        &'a [(usize, usize, String)],
    ) {
        match overlay {
            None => {
                let d = &self.docs[i];
                (
                    d.status_edit.as_ref().map(|s| (s, d.status_edit_end)),
                    d.annotations.as_ref().map_or(&[][..], |a| &a.edits[..]),
                )
            }
            Some(o) => match o.0.get(i) {
                None => (None, &[]),
                Some(o) => (o.status.as_ref().map(|(s, e)| (s, *e)), &o.annotations[..]),
            },
        }
    }

    /// Appends document `i`'s text with the edits of `overlay` to `out`, in pieces.
    fn doc_pieces<'a>(
        &'a self,
        i: usize,
        overlay: Option<&'a Overlay>,
        edits: &mut Vec<(usize, usize, &'a [Arc<str>], &'a str)>,
        out: &mut Vec<&'a str>,
    ) {
        let d = &self.docs[i];
        let (status, annotations) = self.doc_edit(i, overlay);
        edits.clear();
        if let Some((s, end)) = status {
            edits.push((d.status_range.0, end, &s[..], ""));
        }
        edits.extend(
            annotations
                .iter()
                .map(|(s, e, r)| (*s, *e, &[][..], r.as_str())),
        );
        if edits.is_empty() {
            out.push(&self.text[d.start..d.end]);
            return;
        }
        edits.sort_by_key(|&(s, e, _, _)| (s, e));
        let mut pos = d.start;
        for &(s, e, parts, r) in edits.iter() {
            let s = s.max(pos);
            out.push(&self.text[pos..s]);
            out.extend(parts.iter().map(|p| &**p));
            out.push(r);
            pos = e.max(s);
        }
        out.push(&self.text[pos..d.end]);
    }

    /// [`locate`](Self::locate), or the start of document `doc` when nothing there is found.
    pub fn position(&self, doc: usize, path: &[PathSeg]) -> TextPos {
        self.locate(doc, path).unwrap_or(TextPos {
            line: self.document_start_line(doc),
            column: 1,
        })
    }

    /// Position (1-based) of the node at `path` of document `doc`, or of the deepest prefix found.
    pub fn locate(&self, doc: usize, path: &[PathSeg]) -> Option<TextPos> {
        let d = self.docs.get(doc)?;
        let text = &self.text[d.start..d.end];
        let mut parser = Parser::new_from_str(text);
        let mut events: Vec<(Event, Span)> = Vec::new();
        let mut depth = 0usize;
        while let Some(r) = parser.next_event() {
            let (ev, sp) = r.ok()?;
            match ev {
                Event::StreamStart | Event::DocumentStart(_) | Event::Nothing => continue,
                Event::StreamEnd | Event::DocumentEnd => break,
                Event::MappingStart(..) | Event::SequenceStart(..) => depth += 1,
                Event::MappingEnd | Event::SequenceEnd => depth -= 1,
                _ => {}
            }
            events.push((ev, sp));
            if depth == 0 {
                break;
            }
        }
        if events.is_empty() {
            return None;
        }
        let i = navigate(&events, 0, path);
        let m = events[i].1.start;
        Some(TextPos {
            line: d.start_line + m.line() - 1,
            column: m.col() + 1,
        })
    }
}

/// A status's YAML laid out as [`YamlFile::set_status`] writes it at column 0 (LF line breaks).
#[derive(Debug, Clone)]
pub struct LaidOut(Arc<str>);

impl LaidOut {
    /// `text` laid out; `None` unless whole lines without a CR (set_status breaks lines as
    /// `str::lines` does) or a `+` (after a `|+` header set_status keeps blank lines).
    pub fn new(text: &str) -> Option<LaidOut> {
        if !text.ends_with('\n') || text.bytes().any(|b| b == b'\r' || b == b'+') {
            return None;
        }
        let mut out = String::with_capacity(text.len() + text.len() / 8 + 8);
        for line in text.split_inclusive('\n') {
            if line != "\n" {
                out.push_str("  ");
            }
            out.push_str(line);
        }
        Some(LaidOut(Arc::from(out)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text the pieces were laid out from, whole.
    pub fn plain(pieces: &[LaidOut]) -> String {
        let mut out = String::with_capacity(pieces.iter().map(|p| p.0.len()).sum());
        for line in pieces.iter().flat_map(|p| p.0.split_inclusive('\n')) {
            out.push_str(line.strip_prefix("  ").unwrap_or(line));
        }
        out
    }
}

/// Whether set_status writes `pieces` as they are: the first line a key's (not `---` nor a flow
/// collection) and no blank line at the end (set_status drops those).
fn laid_out_plainly(pieces: &[LaidOut]) -> bool {
    let first_is_a_key = pieces.first().is_some_and(|p| {
        let b = p.0.as_bytes();
        b.len() > 2 && b.starts_with(b"  ") && b[2].is_ascii_alphabetic()
    });
    let no_blank_at_end = pieces
        .last()
        .is_some_and(|p| p.0.len() > 1 && !p.0.ends_with("\n\n"));
    first_is_a_key && no_blank_at_end
}

/// Whether serialized YAML `lines` end with a keep-chomping block scalar (`|+`, `>2+`).
fn ends_with_keep_scalar(lines: &[&str]) -> bool {
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let is_keep_header = |l: &str| {
        l.trim_end()
            .rsplit([' ', '\t'])
            .next()
            .and_then(|tok| tok.strip_prefix(['|', '>']))
            .is_some_and(|ind| {
                ind.contains('+') && ind.bytes().all(|c| c == b'+' || c.is_ascii_digit())
            })
    };
    let Some(h) = lines.iter().rposition(|l| is_keep_header(l)) else {
        return false;
    };
    let col = indent(lines[h]);
    lines[h + 1..]
        .iter()
        .all(|l| l.trim().is_empty() || indent(l) > col)
}

/// Index just past the node starting at `i`.
fn skip_node(events: &[(Event, Span)], i: usize) -> usize {
    let mut depth = 0usize;
    for (j, (ev, _)) in events.iter().enumerate().skip(i) {
        match ev {
            Event::MappingStart(..) | Event::SequenceStart(..) => depth += 1,
            Event::MappingEnd | Event::SequenceEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 {
            return j + 1;
        }
    }
    events.len().max(i + 1)
}

/// Index of the node at `path` below the node at `i` (or of the deepest existing prefix).
fn navigate(events: &[(Event, Span)], i: usize, path: &[PathSeg]) -> usize {
    let Some((seg, rest)) = path.split_first() else {
        return i;
    };
    match (&events[i].0, seg) {
        (Event::MappingStart(..), PathSeg::Key(k) | PathSeg::KeyOf(k)) => {
            let mut j = i + 1;
            while j < events.len() && !matches!(events[j].0, Event::MappingEnd) {
                let found = matches!(&events[j].0, Event::Scalar(key, ..) if key == k);
                if found && matches!(seg, PathSeg::KeyOf(_)) {
                    return j;
                }
                let v = skip_node(events, j);
                if v >= events.len() {
                    break;
                }
                if found {
                    return navigate(events, v, rest);
                }
                j = skip_node(events, v);
            }
            i
        }
        (Event::SequenceStart(..), PathSeg::Index(n)) => {
            let mut j = i + 1;
            let mut idx = 0;
            while j < events.len() && !matches!(events[j].0, Event::SequenceEnd) {
                if idx == *n {
                    return navigate(events, j, rest);
                }
                j = skip_node(events, j);
                idx += 1;
            }
            i
        }
        _ => i,
    }
}

#[derive(Default)]
struct DocState {
    doc: Doc,
    stack: Vec<Frame>,
    /// Byte offset of the end of the most recent content (scalar, alias, flow end).
    last_end: usize,
    /// End of the content of the last `|+` scalar: blank lines right after it are its content.
    keep_end: Option<usize>,
    root_seen: bool,
    /// Where the document's anchored nodes start (most documents have none).
    anchors: Vec<usize>,
}

fn new_doc(start: usize, start_line: usize) -> Doc {
    Doc {
        start,
        end: start,
        start_line,
        content_line: start_line,
        status_at_line_start: true,
        ..Doc::default()
    }
}

fn index(text: &str) -> Result<Vec<Doc>, YamlFileError> {
    let cm = CharMap::new(text);
    let t = Text {
        s: text,
        b: text.as_bytes(),
    };
    let mut docs: Vec<Doc> = Vec::new();
    let mut state: Option<DocState> = None;
    // Where the next document starts if the previous one ended with `...`.
    let mut after_explicit_end: Option<usize> = None;
    let mut line_count_pos = 0usize;
    let mut line_count = 1usize;
    let mut count_lines_to = |p: usize| -> usize {
        line_count += t.b[line_count_pos..p]
            .iter()
            .filter(|&&c| c == b'\n')
            .count();
        line_count_pos = p;
        line_count
    };

    let mut parser = Parser::new_from_str(text);
    while let Some(r) = parser.next_event() {
        let (ev, sp) = r.map_err(|e| YamlFileError::Syntax {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: e.info().to_string(),
        })?;
        let sb = cm.byte(text, sp.start.line(), sp.start.col());
        let eb = if sp.end.index() == sp.start.index() {
            sb
        } else {
            cm.byte(text, sp.end.line(), sp.end.col())
        };
        match ev {
            Event::StreamStart | Event::Nothing => {}
            Event::StreamEnd => break,
            Event::DocumentStart(_) => {
                let start = if docs.is_empty() {
                    0
                } else {
                    after_explicit_end.unwrap_or_else(|| t.line_start(sb))
                };
                if let Some(prev) = docs.last_mut() {
                    prev.end = start;
                }
                after_explicit_end = None;
                let line = count_lines_to(start);
                state = Some(DocState {
                    doc: new_doc(start, line),
                    last_end: sb,
                    ..DocState::default()
                });
            }
            Event::DocumentEnd => {
                if let Some(st) = state.take() {
                    let mut doc = st.doc;
                    let (from, to) = doc.status_range;
                    doc.status_anchor =
                        doc.status_exists && st.anchors.iter().any(|&p| (from..to).contains(&p));
                    if t.b[sb..eb].starts_with(b"...") {
                        after_explicit_end = Some(t.eol_after(eb));
                    }
                    doc.end = text.len();
                    docs.push(doc);
                }
            }
            ev => {
                if let Some(st) = state.as_mut() {
                    anchor_and_tag(st, &ev, sb);
                    node_event(&t, st, ev, sp.start.line(), sp.start.col(), sb, eb);
                }
            }
        }
    }
    if docs.is_empty() {
        docs.push(new_doc(0, 1));
    }
    if let Some(last) = docs.last_mut() {
        last.end = text.len();
    }
    line_endings(t.b, &mut docs);
    Ok(docs)
}

/// Whether each document's lines end with CRLF (as its first line does, or the file's).
fn line_endings(b: &[u8], docs: &mut [Doc]) {
    let crlf = |region: &[u8]| {
        let lf = region.iter().position(|&c| c == b'\n');
        lf.map(|i| i > 0 && region[i - 1] == b'\r')
    };
    let file_crlf = crlf(b).unwrap_or(false);
    for d in docs {
        d.crlf = crlf(&b[d.start..d.end]).unwrap_or(file_crlf);
    }
}

/// Notes where a node with an anchor starts, and whether a node has a tag bmhctl does not read.
fn anchor_and_tag(st: &mut DocState, ev: &Event, sb: usize) {
    if let Event::Scalar(_, _, a, _) | Event::SequenceStart(a, _) | Event::MappingStart(a, _) = ev
        && *a > 0
    {
        st.anchors.push(sb);
    }
    if let Event::Scalar(_, _, _, Some(tag))
    | Event::SequenceStart(_, Some(tag))
    | Event::MappingStart(_, Some(tag)) = ev
        && !super::yaml_tags::is_core(tag)
    {
        st.doc.foreign_tag = true;
    }
}

fn node_event(
    t: &Text,
    st: &mut DocState,
    ev: Event,
    line: usize,
    col: usize,
    sb: usize,
    eb: usize,
) {
    let is_start = matches!(
        ev,
        Event::Scalar(..) | Event::Alias(..) | Event::MappingStart(..) | Event::SequenceStart(..)
    );
    let role = if is_start {
        node_start(t, st, &ev, line, col, sb, eb)
    } else {
        Role::Other
    };
    match ev {
        Event::Scalar(_, style, ..) => {
            if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
                // (The span is empty for a scalar without content lines.)
                let end = match t.block_scalar_end(sb, eb) {
                    Some((end, true)) => *st.keep_end.insert(end),
                    Some((end, false)) => end,
                    None if eb > sb && t.at_line_start(eb) => t.line_start(eb),
                    None => eb,
                };
                st.last_end = st.last_end.max(end);
            } else if eb > sb {
                st.last_end = st.last_end.max(eb);
            }
            complete(st);
        }
        Event::Alias(_) => {
            st.last_end = st.last_end.max(eb);
            complete(st);
        }
        Event::MappingStart(..) => collection_start(st, true, role, sb, eb),
        Event::SequenceStart(..) => collection_start(st, false, Role::Other, sb, eb),
        Event::MappingEnd | Event::SequenceEnd => collection_end(t, st, sb, eb),
        _ => {}
    }
}

/// A node starts: the root, a mapping's key or a value; the role of a mapping starting there.
fn node_start(
    t: &Text,
    st: &mut DocState,
    ev: &Event,
    line: usize,
    col: usize,
    sb: usize,
    eb: usize,
) -> Role {
    if !st.root_seen {
        st.root_seen = true;
        st.doc.content_line = line;
        if !matches!(ev, Event::MappingStart(..)) {
            return Role::Other;
        }
        st.doc.root = if eb > sb {
            RootKind::FlowMapping
        } else {
            RootKind::BlockMapping
        };
        return Role::Root;
    }
    let Some(top) = st.stack.last_mut().filter(|top| top.is_map) else {
        return Role::Other;
    };
    if !top.expect_key {
        return if matches!(ev, Event::MappingStart(..)) {
            top.value_role
        } else {
            Role::Other
        };
    }
    if top.role == Role::Other {
        top.value_role = Role::Other;
    } else {
        key_start(t, st, ev, col, sb, eb);
    }
    Role::Other
}

/// A key starts in a mapping bmhctl indexes: the previous entry is closed and this one opened.
fn key_start(t: &Text, st: &mut DocState, ev: &Event, col: usize, sb: usize, eb: usize) {
    let top = st.stack.last_mut().expect("a mapping");
    let key = match ev {
        Event::Scalar(k, ..) => Some(k.as_ref()),
        _ => None,
    };
    let kind = match (top.role, key) {
        (Role::Root, Some("status")) => KeyKind::Status,
        (Role::Root, Some("metadata")) => KeyKind::Metadata,
        (Role::Metadata, Some("annotations")) => KeyKind::Annotations,
        _ => KeyKind::Other,
    };
    let owned = if top.role == Role::Annotations {
        key.map(str::to_string)
    } else {
        None
    };
    if let Some(prev) = top.cur.take() {
        let (flow, role) = (top.flow, top.role);
        close_entry(t, st, role, flow, prev, sb);
    }
    let top = st.stack.last_mut().expect("a mapping");
    if top.first_key_col.is_none() {
        top.first_key_col = Some(col);
    }
    if top.role == Role::Root && !top.flow && t.explicit_key_before(sb) {
        st.doc.explicit_key = true;
    }
    top.cur = Some(OpenEntry {
        kind,
        key: owned,
        key_start: sb,
        key_end: eb,
        key_col: col,
    });
    top.value_role = match kind {
        KeyKind::Metadata => Role::Metadata,
        KeyKind::Annotations => Role::Annotations,
        _ => Role::Other,
    };
}

fn collection_start(st: &mut DocState, is_map: bool, mut role: Role, sb: usize, eb: usize) {
    let flow = eb > sb;
    if flow {
        st.last_end = st.last_end.max(eb);
    }
    if role == Role::Annotations {
        if st.doc.annotations.is_none() {
            st.doc.annotations = Some(Annotations::default());
        } else {
            // A duplicate `annotations` mapping: only the first one is indexed.
            role = Role::Other;
        }
    }
    st.stack.push(Frame {
        is_map,
        flow,
        role,
        expect_key: true,
        value_role: Role::Other,
        start: sb,
        cur: None,
        first_key_col: None,
    });
}

/// A mapping or sequence ends: its last entry is closed, and what it tells of the document noted.
fn collection_end(t: &Text, st: &mut DocState, sb: usize, eb: usize) {
    let Some(mut frame) = st.stack.pop() else {
        return;
    };
    if frame.role != Role::Other {
        if let Some(prev) = frame.cur.take() {
            close_entry(t, st, frame.role, frame.flow, prev, sb);
        }
        match frame.role {
            Role::Root if !frame.flow => {
                st.doc.indent = frame.first_key_col.unwrap_or(0);
                if !st.doc.status_exists {
                    let floor = t.eol_after(st.last_end);
                    let p = t.pullback(t.before_next(sb), floor, st.doc.indent);
                    st.doc.status_range = (p, p);
                    st.doc.status_at_line_start = true;
                }
            }
            Role::Annotations => {
                if let Some(a) = st.doc.annotations.as_mut()
                    && frame.flow
                    && a.flow.is_none()
                {
                    a.flow = Some((frame.start, eb));
                }
            }
            _ => {}
        }
    }
    if eb > sb {
        st.last_end = st.last_end.max(eb);
    }
    complete(st);
}

/// A node finished: toggle key/value expectation of the enclosing mapping.
fn complete(st: &mut DocState) {
    if let Some(top) = st.stack.last_mut()
        && top.is_map
    {
        top.expect_key = !top.expect_key;
    }
}

/// An entry of a mapping in `role` ends (the next node at `next`): its range is noted.
fn close_entry(t: &Text, st: &mut DocState, role: Role, flow: bool, e: OpenEntry, next: usize) {
    let (doc, keep_end) = (&mut st.doc, st.keep_end);
    let content_end = st.last_end.max(e.key_end);
    if role == Role::Metadata {
        doc.metadata_entries += 1;
    }
    match (role, e.kind) {
        (Role::Root, KeyKind::Status) if !flow && !doc.status_exists => {
            doc.status_exists = true;
            doc.status_at_line_start = t.at_line_start(e.key_start);
            doc.status_range = t.entry_range(e.key_start, e.key_col, content_end, next);
            doc.status_after_keep = keep_end == Some(doc.status_range.0);
        }
        (Role::Metadata, KeyKind::Annotations) => {
            if let Some(a) = doc.annotations.as_mut()
                && a.entry.is_none()
                && !flow
            {
                a.entry = Some(t.entry_range(e.key_start, e.key_col, content_end, next));
                a.key_text = t.s[e.key_start..e.key_end].to_string();
                a.key_col = e.key_col;
                a.entry_at_line_start = t.at_line_start(e.key_start);
            }
        }
        (Role::Annotations, _) => {
            if let Some(a) = doc.annotations.as_mut() {
                let block_range = if flow {
                    (e.key_start, content_end)
                } else {
                    t.entry_range(e.key_start, e.key_col, content_end, next)
                };
                a.entries.push(AnnEntry {
                    key: e.key,
                    key_start: e.key_start,
                    value_end: content_end,
                    block_range,
                });
                a.removed.push(false);
            }
        }
        _ => {}
    }
}

/// Whether two texts given in pieces are the same.
pub(super) fn same_text(a: &[&str], b: &[&str]) -> bool {
    let len = |p: &[&str]| p.iter().map(|s| s.len()).sum::<usize>();
    len(a) == len(b)
        && a.iter()
            .flat_map(|s| s.bytes())
            .eq(b.iter().flat_map(|s| s.bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn vals(s: &str) -> Vec<Value> {
        serde_saphyr::from_multiple::<Value>(s)
            .unwrap_or_else(|e| panic!("re-parse failed: {e}\n---\n{s}"))
    }

    fn parse(s: &str) -> YamlFile {
        YamlFile::parse(s.to_string()).unwrap()
    }

    /// Assert `out` equals `orig` except that `orig[a..b]` became some other text.
    fn only_changed(orig: &str, out: &str, a: usize, b: usize) {
        assert!(out.starts_with(&orig[..a]), "prefix changed:\n{out}");
        assert!(out.ends_with(&orig[b..]), "suffix changed:\n{out}");
    }

    const TRICKY: &[&str] = &[
        "# only a comment\n",
        "",
        "a: 1",
        "---\n",
        "a: 1\n---\n",
        "# head\n---\n# c1\napiVersion: v1 # trailing\nkind: Secret\n# mid\ndata:\n  k: dmFsdWU=  # c\n# tail\n---\n# second\nb: [1, 2]\n...\n# after end\n",
        "a: 1\r\nb:\r\n  - x\r\n  - y\r\n# c\r\n---\r\nc: |\r\n  line1\r\n  line2\r\n",
        "base: &b\n  x: 1\nuse: *b\nmerge:\n  <<: *b\n  y: 2\n",
        "lit: |\n  a\n   b\n\n  # not a comment\nfold: >-\n  folded\n  text\n\nkeep: |+\n  kept\n\n\nnext: 1\n",
        "description: \"Ünïcödé – host\"\nname: ñandú\nspec:\n  x: \"日本語\"\n",
        "a: 1\n...\n---\nb: 2\n...\n%YAML 1.2\n---\nc: 3\n",
        "---\na: 1\n",
        "  a: 1\n  b:\n    c: 2\n",
        "\"status\": {}\n'metadata': {name: x}\n",
        "{\"a\": 1, \"b\": [1, 2]}\n",
        "- 1\n- 2\n",
    ];

    #[test]
    fn an_overlay_renders_the_file_as_it_was_taken() {
        let t = "a: 1\nstatus:\n  x: 1\n---\nb: 2\n---\nmetadata:\n  annotations:\n    k: v\n";
        let mut f = parse(t);
        let source = Overlay::default();
        assert_eq!(f.pieces(Some(&source)).concat(), t);
        assert!(f.renders_same(None, Some(&source)));

        f.set_status(0, Some("x: 2\n")).unwrap();
        f.set_status(1, Some("y: 3\n")).unwrap();
        let first = f.overlay();
        let first_text = f.render();
        assert_eq!(f.pieces(None).concat(), first_text);
        assert_eq!(f.pieces(Some(&first)).concat(), first_text);
        assert!(!f.renders_same(Some(&first), Some(&source)));

        // Later edits leave what the overlay renders alone.
        f.set_status(1, None).unwrap();
        assert!(f.remove_annotations(2, &["k"]).unwrap());
        assert_eq!(f.pieces(Some(&first)).concat(), first_text);
        assert_eq!(f.pieces(None).concat(), f.render());
        let mut each = Vec::new();
        f.each_piece(Some(&first), |p| each.push(p));
        assert_eq!(each, f.pieces(Some(&first)));
        assert!(!f.renders_same(None, Some(&first)));

        // An edit back to the text of the source is no change of what the file reads.
        let mut g = parse(t);
        g.set_status(0, Some("x: 1\n")).unwrap();
        assert!(g.renders_same(None, Some(&source)));
        g.set_status(0, Some("x: 9\n")).unwrap();
        assert!(!g.renders_same(None, Some(&source)));
    }

    #[test]
    fn texts_in_pieces_compare_whatever_the_cuts() {
        assert!(same_text(&["ab", "", "c"], &["a", "bc"]));
        assert!(same_text(&[], &["", ""]));
        assert!(!same_text(&["ab", "c"], &["a", "bd"]));
        assert!(!same_text(&["abc"], &["ab"]));
    }

    #[test]
    fn no_edits_round_trip() {
        for t in TRICKY {
            let f = parse(t);
            assert_eq!(f.render(), *t);
            let joined: String = (0..f.len()).map(|i| f.document_text(i)).collect();
            assert_eq!(joined, *t);
        }
    }

    #[test]
    fn document_counting() {
        assert_eq!(parse("").len(), 1);
        assert_eq!(parse("# c\n").len(), 1);
        assert_eq!(parse("a: 1\n").len(), 1);
        assert_eq!(parse("---\na: 1\n").len(), 1);
        assert_eq!(parse("a: 1\n---\n").len(), 2);
        assert_eq!(parse("a: 1\n---\nb: 2\n").len(), 2);
        assert_eq!(parse("a: 1\n...\nb: 2\n").len(), 2);
        assert_eq!(parse("a: 1\n...\n# c\n").len(), 1);
        let f = parse("# head\n---\n# c\na: 1\n# before second\n---\nb: 2\n");
        assert_eq!(
            f.document_text(0),
            "# head\n---\n# c\na: 1\n# before second\n"
        );
        assert_eq!(f.document_text(1), "---\nb: 2\n");
        assert_eq!(f.document_start_line(0), 4);
        assert_eq!(f.document_start_line(1), 7);
        let f = parse("a: 1\n...\n%YAML 1.2\n---\nb: 2\n");
        assert_eq!(f.document_text(1), "%YAML 1.2\n---\nb: 2\n");
        for i in 0..f.len() {
            serde_saphyr::from_str::<Value>(f.document_text(i)).unwrap();
        }
    }

    #[test]
    fn insert_status_before_later_document() {
        let t = "apiVersion: v1\nkind: BareMetalHost\nspec:\n  online: true\n# comment about host 2\n---\nkind: Other\nspec: {}\n";
        let mut f = parse(t);
        f.set_status(0, Some("provisioning:\n  state: ready\nlist:\n- a\n- b\n"))
            .unwrap();
        let out = f.render();
        let second = f.document_text(1);
        assert!(out.ends_with(&format!("# comment about host 2\n{second}")));
        assert_eq!(
            out,
            "apiVersion: v1\nkind: BareMetalHost\nspec:\n  online: true\nstatus:\n  provisioning:\n    state: ready\n  list:\n  - a\n  - b\n# comment about host 2\n---\nkind: Other\nspec: {}\n"
        );
        let v = vals(&out);
        assert_eq!(
            v[0]["status"],
            json!({"provisioning": {"state": "ready"}, "list": ["a", "b"]})
        );
        assert_eq!(v[1], vals(t)[1]);
        // Removing it again restores the original bytes.
        f.set_status(0, None).unwrap();
        assert_eq!(f.render(), t);
    }

    #[test]
    fn replace_block_status_in_middle_document() {
        let t = "a: 1\nstatus:\n  x: 1\n---\n# doc 2\nmetadata:\n  name: h2\nstatus:\n  # inside\n  old: true\n  list:\n  - 1\n  - 2\n    # deeper trailing comment\n# top-level comment\nspec:\n  online: false\n---\nc: 3\nstatus: {y: 2}\n";
        let mut f = parse(t);
        f.set_status(1, Some("new: value\n")).unwrap();
        let out = f.render();
        let a = t.find("status:\n  # inside").unwrap();
        let b = t.find("# top-level comment").unwrap();
        only_changed(t, &out, a, b);
        assert_eq!(
            &out[a..out.len() - (t.len() - b)],
            "status:\n  new: value\n"
        );
        let (vo, vn) = (vals(t), vals(&out));
        assert_eq!(vn[0], vo[0]);
        assert_eq!(vn[2], vo[2]);
        let mut exp = vo[1].clone();
        exp["status"] = json!({"new": "value"});
        assert_eq!(vn[1], exp);
    }

    #[test]
    fn replace_empty_null_and_flow_status() {
        for (t, old) in [
            (
                "metadata:\n  name: x\nstatus: {}\nspec:\n  a: 1\n",
                "status: {}\n",
            ),
            (
                "metadata:\n  name: x\nstatus:\nspec:\n  a: 1\n",
                "status:\n",
            ),
            (
                "metadata:\n  name: x\nstatus: {a: 1, b: [x,\n   y]}  # c\nspec:\n  a: 1\n",
                "status: {a: 1, b: [x,\n   y]}  # c\n",
            ),
            (
                "metadata:\n  name: x\nstatus: ~\nspec:\n  a: 1\n",
                "status: ~\n",
            ),
            (
                "metadata:\n  name: x\n\"status\":\n  a: |\n    text\n\n  b: 2\nspec:\n  a: 1\n",
                "\"status\":\n  a: |\n    text\n\n  b: 2\n",
            ),
        ] {
            let mut f = parse(t);
            f.set_status(0, Some("state: ok\n")).unwrap();
            let out = f.render();
            assert_eq!(out, t.replace(old, "status:\n  state: ok\n"), "for {t:?}");
            let v = vals(&out);
            assert_eq!(v[0]["status"], json!({"state": "ok"}));
            assert_eq!(v[0]["spec"], json!({"a": 1}));
            assert_eq!(v[0]["metadata"], json!({"name": "x"}));
        }
    }

    #[test]
    fn remove_status() {
        let t = "metadata:\n  name: x\nstatus:\n  a: 1\n  b:\n  - 2\nspec:\n  a: 1\n---\nstatus: {a: 1}\nz: 1\n";
        let mut f = parse(t);
        f.set_status(0, None).unwrap();
        f.set_status(1, None).unwrap();
        let out = f.render();
        assert_eq!(out, "metadata:\n  name: x\nspec:\n  a: 1\n---\nz: 1\n");
        let v = vals(&out);
        assert_eq!(
            v,
            vec![
                json!({"metadata": {"name": "x"}, "spec": {"a": 1}}),
                json!({"z": 1})
            ]
        );
    }

    #[test]
    fn crlf_and_no_final_newline() {
        let t = "a: 1\r\nb:\r\n  c: 2";
        let mut f = parse(t);
        f.set_status(0, Some("x: 1\ny:\n- 1\n")).unwrap();
        let out = f.render();
        assert_eq!(
            out,
            "a: 1\r\nb:\r\n  c: 2\r\nstatus:\r\n  x: 1\r\n  y:\r\n  - 1\r\n"
        );
        assert_eq!(vals(&out)[0]["status"], json!({"x": 1, "y": [1]}));
        f.set_status(0, None).unwrap();
        assert_eq!(f.render(), t);
    }

    #[test]
    fn indented_document_and_trailing_comments() {
        let t = "---\n  # leading\n  a: 1\n  b:\n    c: 2\n    # inner tail\n\n# outer tail\n...\n";
        let mut f = parse(t);
        f.set_status(0, Some("s: 1\n")).unwrap();
        let out = f.render();
        assert_eq!(
            out,
            "---\n  # leading\n  a: 1\n  b:\n    c: 2\n    # inner tail\n  status:\n    s: 1\n\n# outer tail\n...\n"
        );
        assert_eq!(
            vals(&out)[0],
            json!({"a": 1, "b": {"c": 2}, "status": {"s": 1}})
        );
    }

    #[test]
    fn non_ascii_offsets() {
        let t =
            "description: \"Ünïcödé – host\"\nstatus:\n  note: \"日本語\"\nspec:\n  name: ñandú\n";
        let mut f = parse(t);
        f.set_status(0, Some("ok: true\n")).unwrap();
        let out = f.render();
        assert_eq!(
            out,
            "description: \"Ünïcödé – host\"\nstatus:\n  ok: true\nspec:\n  name: ñandú\n"
        );
        assert_eq!(
            f.locate(0, &[PathSeg::Key("spec"), PathSeg::Key("name")]),
            Some(TextPos { line: 5, column: 9 })
        );
    }

    const ANN: &str = "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: h\n  annotations:\n    keep.me/one: |\n      multi\n      line\n    baremetalhost.metal3.io/status: '{\"a\": 1,\n      \"b\": 2}'\n    \"reboot.metal3.io\": \"\"\n    other: plain\n      continued\n  labels:\n    x: z\nspec:\n  online: true\n";

    #[test]
    fn remove_one_annotation_among_several() {
        let mut f = parse(ANN);
        assert!(
            f.remove_annotations(0, &["baremetalhost.metal3.io/status", "not-there"])
                .unwrap()
        );
        let out = f.render();
        assert_eq!(
            out,
            ANN.replace(
                "    baremetalhost.metal3.io/status: '{\"a\": 1,\n      \"b\": 2}'\n",
                ""
            )
        );
        let v = vals(&out);
        assert_eq!(
            v[0]["metadata"]["annotations"],
            json!({"keep.me/one": "multi\nline\n", "reboot.metal3.io": "", "other": "plain continued"})
        );
        assert!(f.remove_annotations(0, &["reboot.metal3.io"]).unwrap());
        assert!(!f.remove_annotations(0, &["reboot.metal3.io"]).unwrap());
        let v = vals(&f.render());
        assert_eq!(
            v[0]["metadata"]["annotations"],
            json!({"keep.me/one": "multi\nline\n", "other": "plain continued"})
        );
        assert_eq!(v[0]["metadata"]["labels"], json!({"x": "z"}));
        assert_eq!(v[0]["spec"], json!({"online": true}));
    }

    #[test]
    fn remove_all_annotations() {
        let mut f = parse(ANN);
        assert!(
            f.remove_annotations(
                0,
                &[
                    "keep.me/one",
                    "baremetalhost.metal3.io/status",
                    "reboot.metal3.io",
                    "other"
                ]
            )
            .unwrap()
        );
        let out = f.render();
        // The mapping goes, as an API server drops an empty map.
        assert!(out.contains("  name: h\n  labels:\n"), "{out}");
        let v = vals(&out);
        assert_eq!(v[0]["metadata"], json!({"name": "h", "labels": {"x": "z"}}));

        let t = "metadata:\n  annotations:\n    reboot.metal3.io: \"\"\nstatus:\n  a: 1\n";
        let mut f = parse(t);
        assert!(f.remove_annotations(0, &["reboot.metal3.io"]).unwrap());
        f.set_status(0, Some("b: 2\n")).unwrap();
        let out = f.render();
        // All that `metadata` holds: kept, empty, rather than leave `metadata` null.
        assert_eq!(out, "metadata:\n  annotations: {}\nstatus:\n  b: 2\n");
        assert_eq!(
            vals(&out)[0],
            json!({"metadata": {"annotations": {}}, "status": {"b": 2}})
        );
        // No annotations at all.
        let mut f = parse("metadata:\n  name: x\n");
        assert!(!f.remove_annotations(0, &["a"]).unwrap());
    }

    #[test]
    fn remove_flow_annotations() {
        let t = "metadata: {name: x, annotations: {a: 1, \"b\": 2, c: 3}}\nspec: 1\n";
        for (keys, exp) in [
            (&["a"][..], json!({"b": 2, "c": 3})),
            (&["b"][..], json!({"a": 1, "c": 3})),
            (&["c"][..], json!({"a": 1, "b": 2})),
            (&["b", "c"][..], json!({"a": 1})),
            (&["a", "b", "c"][..], json!({})),
        ] {
            let mut f = parse(t);
            assert!(f.remove_annotations(0, keys).unwrap());
            let out = f.render();
            assert_eq!(vals(&out)[0]["metadata"]["annotations"], exp, "{out}");
        }
    }

    #[test]
    fn flow_root_is_not_block_mapping() {
        let mut f = parse("{\"metadata\": {\"name\": \"x\"}}\n");
        assert!(matches!(
            f.set_status(0, Some("a: 1\n")),
            Err(YamlFileError::NotBlockMapping { doc: 0 })
        ));
        let mut f = parse("a: 1\n---\n- x\n");
        assert!(matches!(
            f.set_status(1, None),
            Err(YamlFileError::NotBlockMapping { doc: 1 })
        ));
        let mut f = parse("a: 1\n---\n");
        assert!(matches!(
            f.set_status(1, Some("a: 1\n")),
            Err(YamlFileError::NotBlockMapping { doc: 1 })
        ));
    }

    #[test]
    fn syntax_error_position() {
        let err = YamlFile::parse("a: 1\nb: [1, 2\nc: 3\n".to_string())
            .err()
            .unwrap();
        match err {
            YamlFileError::Syntax { line, column, .. } => {
                assert!(line >= 2 && column >= 1, "{line}:{column}")
            }
            e => panic!("{e:?}"),
        }
        let err = YamlFile::parse("a: 1\n  b: 2\n".to_string()).err().unwrap();
        let YamlFileError::Syntax {
            line,
            column,
            message,
        } = err
        else {
            panic!()
        };
        assert_eq!((line, column), (2, 4), "{message}");
    }

    #[test]
    fn locate_paths() {
        let t = "first: 1\n---\n# c\nspec:\n  online: true\n  list:\n  - a\n  - b: 1\n  -   c\n  flow: {x: [1, 2]}\n";
        let f = parse(t);
        let pos = |p: &[PathSeg]| f.locate(1, p).unwrap();
        assert_eq!(
            pos(&[PathSeg::Key("spec"), PathSeg::Key("online")]),
            TextPos {
                line: 5,
                column: 11
            }
        );
        assert_eq!(
            pos(&[
                PathSeg::Key("spec"),
                PathSeg::Key("list"),
                PathSeg::Index(2)
            ]),
            TextPos { line: 9, column: 7 }
        );
        assert_eq!(
            pos(&[
                PathSeg::Key("spec"),
                PathSeg::Key("list"),
                PathSeg::Index(1),
                PathSeg::Key("b")
            ]),
            TextPos { line: 8, column: 8 }
        );
        assert_eq!(
            pos(&[
                PathSeg::Key("spec"),
                PathSeg::Key("flow"),
                PathSeg::Key("x"),
                PathSeg::Index(1)
            ]),
            TextPos {
                line: 10,
                column: 17
            }
        );
        // Missing tail: deepest existing prefix (a block list node is reported at its first item).
        assert_eq!(
            pos(&[
                PathSeg::Key("spec"),
                PathSeg::Key("list"),
                PathSeg::Index(7)
            ]),
            TextPos { line: 7, column: 5 }
        );
        assert_eq!(pos(&[PathSeg::Key("nope")]), TextPos { line: 4, column: 1 });
        assert_eq!(
            f.locate(0, &[PathSeg::Key("first")]),
            Some(TextPos { line: 1, column: 8 })
        );
    }

    #[test]
    fn edits_on_tricky_files_reparse() {
        for t in TRICKY {
            let mut f = parse(t);
            let orig = vals(t);
            let mut any = false;
            for d in 0..f.len() {
                if f.set_status(d, Some("x: 1\n")).is_ok() {
                    any = true;
                }
            }
            let out = f.render();
            let new = vals(&out);
            assert_eq!(orig.len(), new.len(), "{t:?}\n{out}");
            for (o, n) in orig.iter().zip(&new) {
                if let (Value::Object(o), Value::Object(n)) = (o, n)
                    && any
                {
                    let mut o = o.clone();
                    o.remove("status");
                    let mut n = n.clone();
                    assert_eq!(n.remove("status"), Some(json!({"x": 1})), "{out}");
                    assert_eq!(o, n);
                } else {
                    assert_eq!(o, n);
                }
            }
            for d in 0..f.len() {
                let _ = f.set_status(d, None);
            }
            let out = f.render();
            for (o, n) in orig.iter().zip(&vals(&out)) {
                let mut o = o.clone();
                if let Value::Object(m) = &mut o {
                    m.remove("status");
                }
                assert_eq!(&o, n, "{out}");
            }
        }
    }

    #[test]
    fn non_ascii_directive_then_next_document() {
        // The parser's character index drifts on a directive line with non-ASCII characters.
        let t = "%éé\n---\na: a\n---";
        let mut f = parse(t);
        f.set_status(0, Some("x: 1\n")).unwrap();
        assert_eq!(f.render(), "%éé\n---\na: a\nstatus:\n  x: 1\n---");
        assert_eq!(
            f.locate(0, &[PathSeg::Key("a")]),
            Some(TextPos { line: 3, column: 4 })
        );
    }

    #[test]
    fn blank_lines_after_block_scalar_are_not_its_content() {
        // Removing: the blank line after the scalar stays.
        let mut f = parse("status: |\n  one\n\nnext: 1\n");
        f.set_status(0, None).unwrap();
        assert_eq!(f.render(), "\nnext: 1\n");
        // Replacing: likewise.
        let mut f = parse("a: 1\nstatus:\n  m: >\n    x\n\n  \n# c\nnext: 1\n");
        f.set_status(0, Some("s: 1\n")).unwrap();
        assert_eq!(f.render(), "a: 1\nstatus:\n  s: 1\n\n  \n# c\nnext: 1\n");
        // Inserting after a last entry ending in one: before the blank lines.
        let mut f = parse("a: |-\n  x\n\n# tail\n");
        f.set_status(0, Some("s: 1\n")).unwrap();
        assert_eq!(f.render(), "a: |-\n  x\nstatus:\n  s: 1\n\n# tail\n");
        // Spaces deeper than the scalar's indentation are content.
        let mut f = parse("a: |\n  x\n   \n\nb: 1\n");
        f.set_status(0, Some("s: 1\n")).unwrap();
        let out = f.render();
        assert_eq!(out, "a: |\n  x\n   \n\nb: 1\nstatus:\n  s: 1\n");
        assert_eq!(vals(&out)[0]["a"], json!("x\n \n"));
    }

    /// A status set from laid-out pieces writes the bytes set_status writes for their text,
    /// wherever the status goes, however the text is cut into lines; a document the pieces
    /// do not fit (indented keys, CRLF) or a text they cannot hold is left to set_status.
    #[test]
    fn a_status_laid_out_in_pieces_is_the_status_set_from_its_text() {
        let files = [
            "a: 1\n",
            "a: 1",
            "status:\n  old: 1\nb: 2\n",
            "a: 1\nstatus: {x: 1}\n# after\n---\nb: 2\nstatus:\n  y: 2\n\n",
            "s: |+\n  x\n\nstatus: 1\n\n\nb: 2\n",
            "---\na: 1\n...\n",
            "  a: 1\n  b: 2\n",
            "a: 1\r\nb: 2\r\n",
        ];
        let texts = [
            "x: 1\n",
            "operationalStatus: OK\nlist:\n- a\n- b: 1\n",
            "m: |\n  one\n\n  two\nn: 2\n",
            "m: |-\n  one\n   \nn: \"\"\n",
        ];
        let mut fitted = 0;
        for file in files {
            for text in texts {
                let lines: Vec<&str> = text.split_inclusive('\n').collect();
                for cut in 1..=lines.len() {
                    let pieces: Vec<LaidOut> = [lines[..cut].concat(), lines[cut..].concat()]
                        .iter()
                        .filter(|p| !p.is_empty())
                        .map(|p| LaidOut::new(p).unwrap())
                        .collect();
                    assert_eq!(LaidOut::plain(&pieces), text);
                    let mut whole = parse(file);
                    let mut laid = parse(file);
                    for d in 0..whole.len() {
                        whole.set_status(d, Some(text)).unwrap();
                        if laid.set_status_laid_out(d, &pieces).unwrap() {
                            fitted += 1;
                        } else {
                            laid.set_status(d, Some(&LaidOut::plain(&pieces))).unwrap();
                        }
                    }
                    assert_eq!(laid.render(), whole.render(), "{file:?} {text:?} cut {cut}");
                }
            }
        }
        // Every document but those of the last two files (seven) took the pieces as they are,
        // cut every way (14 ways over the four texts).
        assert_eq!(fitted, 7 * 14);
        // A text the pieces cannot hold as set_status writes it.
        for text in ["a: |+\n  x\n\n", "a: \"\r\"\n", "a: 1"] {
            assert!(LaidOut::new(text).is_none(), "{text:?}");
        }
        // Trailing blank lines (set_status drops them), a flow collection: left to set_status.
        let mut f = parse("a: 1\n");
        for pieces in [["x: 1\n", "\n"], ["{}\n", "y: 1\n"]] {
            let pieces: Vec<LaidOut> = pieces.iter().map(|p| LaidOut::new(p).unwrap()).collect();
            assert!(!f.set_status_laid_out(0, &pieces).unwrap());
        }
        assert_eq!(f.render(), "a: 1\n");
        // The errors of set_status.
        let mut f = parse("- a\n");
        let pieces = [LaidOut::new("x: 1\n").unwrap()];
        assert!(matches!(
            f.set_status_laid_out(0, &pieces),
            Err(YamlFileError::NotBlockMapping { doc: 0 })
        ));
    }

    #[test]
    fn keep_chomping_status_keeps_its_blank_lines() {
        let mut f = parse("a: 1\n");
        f.set_status(0, Some("a: |+\n\n")).unwrap();
        let out = f.render();
        assert_eq!(out, "a: 1\nstatus:\n  a: |+\n\n");
        assert_eq!(vals(&out)[0]["status"], json!({"a": "\n"}));
        // Blank lines after the entry in the file would become content: they go.
        let mut f = parse("status: 1\n\n\nb: 2\n");
        f.set_status(0, Some("a: |+\n  x\n\n")).unwrap();
        let out = f.render();
        assert_eq!(out, "status:\n  a: |+\n    x\n\nb: 2\n");
        assert_eq!(vals(&out)[0]["status"], json!({"a": "x\n\n"}));
        f.set_status(0, Some("a: |+\n  x\n\n")).unwrap();
        assert_eq!(f.render(), out);
        // A last line of spaces deeper than the scalar's indentation is content too, also
        // with an explicit indentation (`|2`).
        for v in [
            json!({"a": " \n"}),
            json!({"a": [" \n"]}),
            json!({"a": "x\n\n"}),
            json!({"a": "\n"}),
        ] {
            let yaml = serde_saphyr::to_string(&v).unwrap();
            let mut f = parse("b: 1\n");
            f.set_status(0, Some(&yaml)).unwrap();
            let out = f.render();
            assert_eq!(vals(&out)[0]["status"], v, "{out}");
            let mut g = parse(&out);
            g.set_status(0, Some(&yaml)).unwrap();
            assert_eq!(g.render(), out);
        }
    }

    #[test]
    fn blank_lines_after_keep_chomping_scalar_are_its_content() {
        // Inserting after one: after its blank lines.
        let mut f = parse("b: |+\n\n#");
        f.set_status(0, Some("s: 1\n")).unwrap();
        let out = f.render();
        assert_eq!(out, "b: |+\n\nstatus:\n  s: 1\n#");
        assert_eq!(vals(&out)[0]["b"], json!("\n"));
        // Removing a status right after one: the blank lines after the status would join it.
        let mut f = parse("k: |+\n  x\nstatus: 1\n\n# c\n");
        f.set_status(0, None).unwrap();
        let out = f.render();
        assert_eq!(out, "k: |+\n  x\n# c\n");
        assert_eq!(vals(&out)[0], json!({"k": "x\n"}));
    }

    #[test]
    fn byte_order_mark_is_kept() {
        let mut f = parse("\u{feff}status: 1\nb: 2\n");
        f.set_status(0, None).unwrap();
        assert_eq!(f.render(), "\u{feff}b: 2\n");
        f.set_status(0, Some("s: 1\n")).unwrap();
        assert_eq!(f.render(), "\u{feff}status:\n  s: 1\nb: 2\n");
        let mut f = parse("\u{feff}a: 1");
        f.set_status(0, Some("s: 1\n")).unwrap();
        assert_eq!(f.render(), "\u{feff}a: 1\nstatus:\n  s: 1\n");
    }

    #[test]
    fn a_lone_carriage_return_is_found_at_its_line_and_column() {
        assert!(parse("a: 1\r\nb: 2\r\n").lone_carriage_return().is_none());
        let p = parse("a: 1\nb: 2 # x\r# y\n")
            .lone_carriage_return()
            .unwrap();
        assert_eq!((p.line, p.column), (2, 9));
    }

    #[test]
    fn a_key_itself_is_located() {
        let f = parse("metadata:\n  labels:\n    \"bad key\": v v\n");
        let key = [
            PathSeg::Key("metadata"),
            PathSeg::Key("labels"),
            PathSeg::KeyOf("bad key"),
        ];
        let p = f.locate(0, &key).unwrap();
        assert_eq!((p.line, p.column), (3, 5));
        let value = [
            PathSeg::Key("metadata"),
            PathSeg::Key("labels"),
            PathSeg::Key("bad key"),
        ];
        let p = f.locate(0, &value).unwrap();
        assert_eq!((p.line, p.column), (3, 16));
    }

    #[test]
    fn lone_carriage_return_is_refused() {
        let mut f = parse("a:\r...");
        assert!(matches!(
            f.set_status(0, Some("s: 1\n")),
            Err(YamlFileError::LoneCarriageReturn)
        ));
        assert!(matches!(
            f.remove_annotations(0, &["x"]),
            Err(YamlFileError::LoneCarriageReturn)
        ));
        // CRLF is fine.
        let mut f = parse("a: 1\r\n");
        f.set_status(0, Some("s: 1\n")).unwrap();
        assert_eq!(f.render(), "a: 1\r\nstatus:\r\n  s: 1\r\n");
    }

    #[test]
    fn block_scalar_header_ended_by_a_lone_carriage_return() {
        // The parser ends `a`'s header at the CR (finding J: this panicked).
        let mut f = parse("a: |\rb: |");
        assert_eq!(vals(f.source_text())[0], json!({"a": "", "b": ""}));
        assert!(matches!(
            f.set_status(0, Some("s: 1\n")),
            Err(YamlFileError::LoneCarriageReturn)
        ));
        assert_eq!(f.render(), "a: |\rb: |");
        parse("a: >+ # c\r  x\rb: 1\n");
    }

    #[test]
    fn unterminated_last_line_of_spaces_after_keep_chomping_scalar() {
        // No content where the parser reads no line break; once the status follows it, it
        // would be a blank line of the `|+` scalar (finding L).
        for (text, keep) in [
            ("k: |+\n  a\n ", "a\n"),
            ("k: |+\n  a\n\n  ", "a\n\n"),
            ("k: |+2\n  a\n  ", "a\n"),
            ("k: |+\n ", "\n"),
        ] {
            let mut f = parse(text);
            f.set_status(0, Some("s: 1\n")).unwrap();
            let out = f.render();
            assert_eq!(vals(text)[0], json!({"k": keep}), "{text:?}");
            assert_eq!(
                vals(&out)[0],
                json!({"k": keep, "status": {"s": 1}}),
                "{out:?}"
            );
            f.set_status(0, None).unwrap();
            assert_eq!(vals(&f.render())[0], json!({"k": keep}), "{text:?}");
        }
        // Deeper than the scalar's indentation, the spaces are content.
        let mut f = parse("k: |+\n  a\n   ");
        f.set_status(0, Some("s: 1\n")).unwrap();
        let out = f.render();
        assert_eq!(
            vals(&out)[0]["k"],
            vals("k: |+\n  a\n   ")[0]["k"],
            "{out:?}"
        );
    }

    #[test]
    fn a_nul_character_is_refused_at_its_position() {
        // After a block scalar header's comment (finding J: this panicked), or anywhere.
        for (text, at) in [
            ("x: | #\0", (1, 7)),
            ("x: | #\0\ny: 1\n", (1, 7)),
            ("a: 1\nb: é\0\n", (2, 5)),
        ] {
            let err = YamlFile::parse(text.to_string()).err();
            let Some(YamlFileError::Syntax {
                line,
                column,
                message,
            }) = err
            else {
                panic!("{text:?}: {err:?}");
            };
            assert_eq!((line, column), at, "{text:?}");
            assert_eq!(message, "a NUL character, not allowed in YAML");
        }
    }

    #[test]
    fn empty_last_sequence_item_without_newline() {
        let mut f = parse("x: 1\nstatus:\n  -");
        f.set_status(0, Some("s: 1\n")).unwrap();
        assert_eq!(f.render(), "x: 1\nstatus:\n  s: 1\n");
        let mut f = parse("b:\n- #");
        f.set_status(0, Some("s: 1\n")).unwrap();
        let out = f.render();
        assert_eq!(out, "b:\n- #\nstatus:\n  s: 1\n");
        assert_eq!(vals(&out)[0], json!({"b": [null], "status": {"s": 1}}));
    }

    #[test]
    fn whitespace_last_line_of_block_scalar_without_newline() {
        let mut f = parse("b: |\n \t");
        f.set_status(0, Some("s: 1\n")).unwrap();
        let out = f.render();
        assert_eq!(out, "b: |\n \t\nstatus:\n  s: 1\n");
        assert_eq!(vals(&out)[0], json!({"b": "\t\n", "status": {"s": 1}}));
    }

    #[test]
    fn deeper_comment_on_last_line_without_newline() {
        let mut f = parse("a: 1\n # c");
        f.set_status(0, Some("{}\n")).unwrap();
        assert_eq!(f.render(), "a: 1\n # c\nstatus: {}\n");
        let mut f = parse("a: 1\nstatus: 2\n # c");
        f.set_status(0, None).unwrap();
        assert_eq!(f.render(), "a: 1\n");
    }

    #[test]
    fn an_anchor_in_the_status_is_refused() {
        // Finding M: removing or replacing the entry would take `&b` from `*b`.
        for text in ["status: &b 1\nuse: *b\n", "a: 1\nstatus:\n  x: &c {y: 1}\n"] {
            let mut f = parse(text);
            assert!(
                matches!(
                    f.set_status(0, Some("{}\n")),
                    Err(YamlFileError::AnchorInStatus { doc: 0 })
                ),
                "{text:?}"
            );
            assert!(f.set_status(0, None).is_err(), "{text:?}");
            assert_eq!(f.render(), text);
        }
        // An anchor outside the status, even aliased inside it, is no obstacle.
        let mut f = parse("a: &b 1\nstatus: *b\n");
        f.set_status(0, Some("{}\n")).unwrap();
        assert_eq!(f.render(), "a: &b 1\nstatus: {}\n");
    }

    #[test]
    fn explicit_keys_are_refused() {
        let mut f = parse("? a\n: 1\n");
        assert!(matches!(
            f.set_status(0, Some("{}\n")),
            Err(YamlFileError::ExplicitKey { doc: 0 })
        ));
        assert!(f.set_status(0, None).is_err());
        // A comment after the `?` (finding K): the key on a later line is explicit too.
        for text in ["? #\n A", "? #\n .\n:", "? # c\n# d\n\n  a\n: 1\n"] {
            let mut f = parse(text);
            assert!(
                matches!(
                    f.set_status(0, Some("{}\n")),
                    Err(YamlFileError::ExplicitKey { doc: 0 })
                ),
                "{text:?}"
            );
            assert_eq!(f.render(), text);
        }
        // A `?` inside a value or a comment is no explicit key.
        let mut f = parse("a: what?\nb: [?]\n");
        f.set_status(0, Some("{}\n")).unwrap();
        let mut f = parse("a: 1 # ?\n# ?\nb: 2\n");
        f.set_status(0, Some("{}\n")).unwrap();
        assert_eq!(f.render(), "a: 1 # ?\n# ?\nb: 2\nstatus: {}\n");
    }

    #[test]
    fn edge_cases() {
        // Block scalar status at EOF without a final newline.
        let mut f = parse("a: 1\nstatus: |\n  text\n  more");
        f.set_status(0, Some("b: 2\n")).unwrap();
        assert_eq!(f.render(), "a: 1\nstatus:\n  b: 2\n");
        // Null items in a block sequence go with the removed status.
        let mut f = parse("status:\n  - a\n  -\nb: 1\n");
        f.set_status(0, None).unwrap();
        assert_eq!(f.render(), "b: 1\n");
        // Status before `...` and comments of the next document.
        let t = "a: 1\nstatus:\n  x: 1\n...\n# c\n---\nb: 1\n";
        let mut f = parse(t);
        f.set_status(0, None).unwrap();
        assert_eq!(f.render(), "a: 1\n...\n# c\n---\nb: 1\n");
        f.set_status(0, Some("y: 2\n")).unwrap();
        assert_eq!(
            vals(&f.render()),
            vec![json!({"a": 1, "status": {"y": 2}}), json!({"b": 1})]
        );
        // Single-line flow status stays on the key's line; empty text means `{}`.
        let mut f = parse("a: 1\n");
        f.set_status(0, Some("{}\n")).unwrap();
        assert_eq!(f.render(), "a: 1\nstatus: {}\n");
        f.set_status(0, Some("")).unwrap();
        assert_eq!(f.render(), "a: 1\nstatus: {}\n");
        // A block scalar annotation followed by a blank line and a comment line: the blank
        // line is not the scalar's, it stays.
        let t =
            "metadata:\n  annotations:\n    a: x\n    b: |\n      t\n\n    # comment\nspec: 1\n";
        let mut f = parse(t);
        assert!(f.remove_annotations(0, &["b"]).unwrap());
        assert_eq!(
            f.render(),
            "metadata:\n  annotations:\n    a: x\n\n    # comment\nspec: 1\n"
        );
        assert_eq!(
            vals(&f.render())[0],
            json!({"metadata": {"annotations": {"a": "x"}}, "spec": 1})
        );
    }
}
