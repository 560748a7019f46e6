//! A file holding hosts, as bmhctl writes it back: the user's text with staged edits.

use super::lock::FileLock;
use super::sidecar::Sidecar;
use super::yaml_file::{LaidOut, Overlay, YamlFile, YamlFileError};
use crate::diagnostic::{Diagnostic, Position};
use crate::error::Error;
use crate::persist::atomic::{Gather, Replaced, replace_if_unchanged};
use crate::record::Bookkeeping;
use bmh_api::{
    BareMetalHostStatus, Condition, CredentialsStatus, ErrorType, Extra, HardwareDetails, Image,
    ObjectKey, OperationHistory, OperationalStatus, ProvisionStatus,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What [`HostFile::commit`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommitStats {
    pub file_written: bool,
    pub sidecar_written: bool,
}

/// The status of document `doc` of `yaml` (`None`: no status), or why it cannot be read.
pub(super) fn status_of<T: DeserializeOwned>(
    yaml: &YamlFile,
    doc: usize,
) -> Result<Option<T>, String> {
    let v: Value = serde_saphyr::from_str(yaml.document_text(doc)).map_err(|e| e.to_string())?;
    match v.get("status") {
        None | Some(Value::Null) => Ok(None),
        Some(s) => serde_json::from_value(s.clone())
            .map(Some)
            .map_err(|e| e.to_string()),
    }
}

/// A file holding hosts: its text with staged edits, its sidecar and (in write mode) its lock.
pub struct HostFile {
    /// The path as the user gave it (or the directory's path joined with the file name).
    pub path: PathBuf,
    /// The resolved path: what is read, written and locked.
    pub(super) real_path: PathBuf,
    pub(super) yaml: YamlFile,
    /// What we last wrote to `real_path`, as edits over the text parsed (`None`: that text).
    pub(super) disk_text: Option<Overlay>,
    /// The file's metadata when we last read or wrote it: its content is compared only if changed.
    pub(super) disk_stamp: Option<Stamp>,
    pub(super) sidecar: Sidecar,
    pub(super) lock: Option<FileLock>,
    /// Documents whose text differs from the text parsed (kept as an overlay on it: no re-parse).
    pub(super) edited: BTreeSet<usize>,
    /// Something was staged since the last commit.
    pub(super) pending: bool,
    /// The hosts of this file, by `namespace/name`.
    pub(super) host_keys: BTreeSet<String>,
    /// The filesystem could not exchange two names and this was said (once per file).
    pub(super) said_no_exchange: bool,
}

impl std::fmt::Debug for HostFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostFile")
            .field("path", &self.path)
            .field("real_path", &self.real_path)
            .field("documents", &self.yaml.len())
            .field("locked", &self.lock.is_some())
            .field("edited", &self.edited)
            .field("hosts", &self.host_keys)
            .finish_non_exhaustive()
    }
}

/// A status as [`HostFile::stage_status_yaml`] takes it (`None`: no status).
pub fn status_yaml<T: Serialize>(status: Option<&T>) -> Result<Option<String>, Error> {
    status
        .map(|s| {
            serde_saphyr::to_string(s)
                .map_err(|e| Error::internal("cannot serialize the status as YAML", e))
        })
        .transpose()
}

/// A host's status as [`HostFile::stage_host_status`] takes it: shared pieces, or whole.
#[derive(Debug, Clone)]
pub enum StatusText {
    Pieces(Vec<LaidOut>),
    /// As [`status_yaml`] renders it.
    Whole(String),
}

impl StatusText {
    /// The text as [`status_yaml`] renders it.
    pub fn plain(&self) -> std::borrow::Cow<'_, str> {
        match self {
            StatusText::Pieces(p) => LaidOut::plain(p).into(),
            StatusText::Whole(s) => s.as_str().into(),
        }
    }
}

/// [`status_yaml`]'s text, rendered field by field so that an unchanged field is rendered once.
pub fn host_status_text(status: Option<&BareMetalHostStatus>) -> Result<Option<StatusText>, Error> {
    let Some(s) = status else {
        return Ok(None);
    };
    match status_in_parts(s) {
        Ok(parts) => Ok(Some(StatusText::Pieces(parts))),
        // A field with a text the pieces do not take (a CR, a `+`), or an unseen emitter layout.
        Err(_) => Ok(status_yaml(Some(s))?.map(StatusText::Whole)),
    }
}

/// [`host_status_text`]'s pieces.
fn status_in_parts(s: &BareMetalHostStatus) -> Result<Vec<LaidOut>, Error> {
    let mut out = Vec::with_capacity(16 + s.conditions.len());
    head_in_parts(s, &mut out)?;
    if let Some(h) = &s.hardware {
        cached(
            &HARDWARE,
            2,
            &mut out,
            // Hosts share one inspected copy: the same pointer is the same value, uncompared.
            |k| std::sync::Arc::ptr_eq(k, h) || k == h,
            || h.clone(),
            |out| entry(out, "hardware", h),
        )?;
    }
    cached_field(&PROVISIONING, 8, &mut out, "provisioning", &s.provisioning)?;
    for (cache, name, c) in [
        (&GOOD_CREDENTIALS, "goodCredentials", &s.good_credentials),
        (&TRIED_CREDENTIALS, "triedCredentials", &s.tried_credentials),
    ] {
        if !c.is_empty() {
            cached_field(cache, 4, &mut out, name, c)?;
        }
    }
    cached_field(&MESSAGES, 4, &mut out, "errorMessage", &s.error_message)?;
    cached_field(&POWER, 2, &mut out, "poweredOn", &s.powered_on)?;
    let h = &s.operation_history;
    if !h.is_empty() {
        cached_field(&HISTORIES, 16, &mut out, "operationHistory", h)?;
    }
    cached_field(&ERROR_COUNTS, 4, &mut out, "errorCount", &s.error_count)?;
    let fails = &s.provisioning_fail_count;
    cached_field(&FAIL_COUNTS, 4, &mut out, "provisioningFailCount", fails)?;
    if let Some(i) = &s.last_attempted_image {
        cached_field(&IMAGES, 4, &mut out, "lastAttemptedImage", i)?;
    }
    conditions_in_parts(&s.conditions, &mut out)?;
    if !s.extra.is_empty() {
        let mut text = String::new();
        serde_saphyr::to_fmt_writer(&mut text, &StatusExtra { extra: &s.extra })
            .map_err(|e| Error::internal("cannot serialize the status as YAML", e))?;
        out.push(laid_out(&text)?);
    }
    Ok(out)
}

/// The status's first fields, in one piece: they change together.
fn head_in_parts(s: &BareMetalHostStatus, out: &mut Vec<LaidOut>) -> Result<(), Error> {
    let head = (
        &s.operational_status,
        &s.error_type,
        &s.last_updated,
        &s.hardware_profile,
    );
    let (a, b, c, d) = head;
    cached(
        &HEADS,
        8,
        out,
        |k| (&k.0, &k.1, &k.2, &k.3) == head,
        || (a.clone(), b.clone(), c.clone(), d.clone()),
        |out| {
            entry(out, "operationalStatus", head.0)?;
            if !head.1.is_none() {
                entry(out, "errorType", head.1)?;
            }
            if let Some(t) = head.2 {
                entry(out, "lastUpdated", t)?;
            }
            if !head.3.is_empty() {
                entry(out, "hardwareProfile", head.3)?;
            }
            Ok(())
        },
    )
}

/// The `conditions:` key, then a piece per condition.
fn conditions_in_parts(conditions: &[Condition], out: &mut Vec<LaidOut>) -> Result<(), Error> {
    if conditions.is_empty() {
        return Ok(());
    }
    static KEY: std::sync::OnceLock<LaidOut> = std::sync::OnceLock::new();
    out.push(
        KEY.get_or_init(|| LaidOut::new(CONDITIONS_KEY).expect("a key's line"))
            .clone(),
    );
    for (i, c) in conditions.iter().enumerate() {
        // Kept by place in the list: BMO sets a host's conditions in one order, so a lookup
        // compares renderings of one type only.
        CONDITIONS.with(|places| {
            cached_in(
                &places[i.min(CONDITION_PLACES - 1)],
                CONDITIONS_KEPT,
                out,
                |k| same_condition(k, c),
                || c.clone(),
                |out| {
                    // An item alone: a list of one without its key.
                    let mut one = String::with_capacity(256);
                    entry(&mut one, "conditions", &[c])?;
                    let item = one.strip_prefix(CONDITIONS_KEY).ok_or_else(|| {
                        Error::internal("a condition's YAML", "not laid out as an item of a list")
                    })?;
                    out.push_str(item);
                    Ok(())
                },
            )
        })?;
    }
    Ok(())
}

/// [`cached`] for a field compared by equality and rendered as `name: value`.
fn cached_field<K: PartialEq + Clone + Serialize + 'static>(
    cache: &'static std::thread::LocalKey<Recent<K>>,
    kept: usize,
    out: &mut Vec<LaidOut>,
    name: &str,
    value: &K,
) -> Result<(), Error> {
    cached(
        cache,
        kept,
        out,
        |k| k == value,
        || value.clone(),
        |out| entry(out, name, value),
    )
}

/// `text` laid out, or the error that sends the status to [`status_yaml`].
fn laid_out(text: &str) -> Result<LaidOut, Error> {
    LaidOut::new(text).ok_or_else(|| Error::internal("a status field's YAML", "not laid out"))
}

/// How many renderings of the conditions at one place of the list a thread keeps.
const CONDITIONS_KEPT: usize = 8;

/// The places of the list kept apart; the conditions after them share the last one's.
const CONDITION_PLACES: usize = 8;

/// Whether two conditions are equal, the fields most likely to differ compared first.
fn same_condition(a: &Condition, b: &Condition) -> bool {
    a.type_ == b.type_
        && a.status == b.status
        && a.reason == b.reason
        && a.observed_generation == b.observed_generation
        && same_short_text(&a.last_transition_time, &b.last_transition_time)
        && same_short_text(&a.message, &b.message)
}

/// `a == b` a word at a time rather than by a call to `memcmp`: the texts compared at every
/// save are short, and a call per comparison cost more than the bytes.
fn same_short_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    if a.len() > 64 {
        return a == b;
    }
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    for (p, q) in (&mut x).zip(&mut y) {
        if u64::from_ne_bytes(p.try_into().expect("eight bytes"))
            != u64::from_ne_bytes(q.try_into().expect("eight bytes"))
        {
            return false;
        }
    }
    x.remainder().iter().zip(y.remainder()).all(|(p, q)| p == q)
}

/// The line the conditions' items follow.
const CONDITIONS_KEY: &str = "conditions:\n";

/// A thread's recent renderings of one field: the value and its text, laid out.
type Recent<K> = super::Recent<K, LaidOut>;

type Head = (OperationalStatus, ErrorType, Option<String>, String);

thread_local! {
    static HEADS: Recent<Head> = Recent::default();
    static HARDWARE: Recent<std::sync::Arc<HardwareDetails>> = Recent::default();
    static PROVISIONING: Recent<ProvisionStatus> = Recent::default();
    static GOOD_CREDENTIALS: Recent<CredentialsStatus> = Recent::default();
    static TRIED_CREDENTIALS: Recent<CredentialsStatus> = Recent::default();
    static MESSAGES: Recent<String> = Recent::default();
    static POWER: Recent<bool> = Recent::default();
    static HISTORIES: Recent<OperationHistory> = Recent::default();
    static ERROR_COUNTS: Recent<i64> = Recent::default();
    static FAIL_COUNTS: Recent<i64> = Recent::default();
    static IMAGES: Recent<Image> = Recent::default();
    static CONDITIONS: [Recent<Condition>; CONDITION_PLACES] = Default::default();
}

/// Pushes the piece `matches` finds in `cache`, or renders, lays out and keeps it (with `key()`).
fn cached<K: 'static>(
    cache: &'static std::thread::LocalKey<Recent<K>>,
    kept: usize,
    out: &mut Vec<LaidOut>,
    matches: impl Fn(&K) -> bool,
    key: impl FnOnce() -> K,
    render: impl FnOnce(&mut String) -> Result<(), Error>,
) -> Result<(), Error> {
    cache.with(|recent| cached_in(recent, kept, out, matches, key, render))
}

/// [`cached`] in the renderings `recent`.
fn cached_in<K>(
    recent: &Recent<K>,
    kept: usize,
    out: &mut Vec<LaidOut>,
    matches: impl Fn(&K) -> bool,
    key: impl FnOnce() -> K,
    render: impl FnOnce(&mut String) -> Result<(), Error>,
) -> Result<(), Error> {
    let piece = super::recent_or(recent, kept, matches, key, || {
        let mut text = String::new();
        render(&mut text)?;
        laid_out(&text)
    })?;
    out.push(piece);
    Ok(())
}

/// Appends `name: value` as the emitter renders an entry of the status's mapping (serde writes
/// a map: the status has flattened fields).
fn entry<T: Serialize + ?Sized>(out: &mut String, name: &str, value: &T) -> Result<(), Error> {
    struct Entry<'a, T: ?Sized>(&'a str, &'a T);
    impl<T: Serialize + ?Sized> Serialize for Entry<'_, T> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(None)?;
            m.serialize_entry(self.0, self.1)?;
            m.end()
        }
    }
    serde_saphyr::to_fmt_writer(out, &Entry(name, value))
        .map_err(|e| Error::internal("cannot serialize the status as YAML", e))
}

#[derive(Serialize)]
struct StatusExtra<'a> {
    #[serde(flatten)]
    extra: &'a Extra,
}

/// Size, modification time and inode of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stamp {
    len: u64,
    modified: std::time::SystemTime,
    ino: u64,
}

impl Stamp {
    pub(crate) fn of(path: &Path) -> Option<Stamp> {
        Self::of_metadata(std::fs::metadata(path).ok()?)
    }

    pub(crate) fn of_file(file: &std::fs::File) -> Option<Stamp> {
        Self::of_metadata(file.metadata().ok()?)
    }

    fn of_metadata(m: std::fs::Metadata) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        Some(Stamp {
            len: m.len(),
            modified: m.modified().ok()?,
            ino: m.ino(),
        })
    }
}

impl HostFile {
    /// The edits that make what `real_path` holds (as bmhctl last read or wrote it).
    fn disk_overlay(&self) -> &Overlay {
        static NONE: std::sync::OnceLock<Overlay> = std::sync::OnceLock::new();
        self.disk_text
            .as_ref()
            .unwrap_or_else(|| NONE.get_or_init(Overlay::default))
    }

    /// What `real_path` holds, whole.
    fn disk_text(&self) -> String {
        self.yaml.pieces(Some(self.disk_overlay())).concat()
    }
}

/// Whether the file at `path` holds exactly the text `each` gives, read a block at a time.
fn file_holds(path: &Path, each: impl FnOnce(&mut dyn FnMut(&[u8]))) -> std::io::Result<bool> {
    use std::io::{BufRead, ErrorKind::Interrupted};
    let mut file = std::io::BufReader::with_capacity(64 << 10, std::fs::File::open(path)?);
    let (mut same, mut error) = (true, None);
    each(&mut |mut piece| {
        while same && error.is_none() && !piece.is_empty() {
            match file.fill_buf() {
                // Shorter than the text (it shrank since its length was read).
                Ok([]) => same = false,
                Ok(buf) => {
                    let k = piece.len().min(buf.len());
                    same = piece[..k] == buf[..k];
                    piece = &piece[k..];
                    file.consume(k);
                }
                Err(e) if e.kind() == Interrupted => {}
                Err(e) => error = Some(e),
            }
        }
    });
    if let Some(e) = error {
        return Err(e);
    }
    // Nothing after the text (the file grew since its length was read).
    if !same {
        return Ok(false);
    }
    loop {
        match file.fill_buf() {
            Ok(rest) => return Ok(rest.is_empty()),
            Err(e) if e.kind() == Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

impl HostFile {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The resolved path (symlinks followed): what is read, locked and written.
    pub fn real_path(&self) -> &Path {
        &self.real_path
    }

    pub fn yaml(&self) -> &YamlFile {
        &self.yaml
    }

    pub fn sidecar(&self) -> &Sidecar {
        &self.sidecar
    }

    /// Set (`Some`) or remove (`None`) the document's `status`.
    pub fn stage_status<T>(&mut self, doc: usize, status: Option<&T>) -> Result<(), Error>
    where
        T: Serialize + DeserializeOwned + PartialEq + Clone,
    {
        let yaml = status_yaml(status)?;
        self.stage_status_yaml(doc, status, yaml.as_deref())
    }

    /// [`stage_status`](Self::stage_status) with the status already serialised by [`status_yaml`].
    pub fn stage_status_yaml<T>(
        &mut self,
        doc: usize,
        status: Option<&T>,
        yaml: Option<&str>,
    ) -> Result<(), Error>
    where
        T: DeserializeOwned + PartialEq + Clone,
    {
        if self.as_in_file(doc, status)? {
            return Ok(());
        }
        self.yaml
            .set_status(doc, yaml)
            .map_err(|e| self.edit_error(doc, e))?;
        self.edited.insert(doc);
        self.pending = true;
        Ok(())
    }

    /// [`stage_status_yaml`](Self::stage_status_yaml) for a host's [`host_status_text`].
    pub fn stage_host_status(
        &mut self,
        doc: usize,
        status: Option<&BareMetalHostStatus>,
        text: Option<&StatusText>,
    ) -> Result<(), Error> {
        if self.as_in_file(doc, status)? {
            return Ok(());
        }
        let laid = match text {
            Some(StatusText::Pieces(p)) => self
                .yaml
                .set_status_laid_out(doc, p)
                .map_err(|e| self.edit_error(doc, e))?,
            _ => false,
        };
        if !laid {
            let plain = text.map(StatusText::plain);
            self.yaml
                .set_status(doc, plain.as_deref())
                .map_err(|e| self.edit_error(doc, e))?;
        }
        self.edited.insert(doc);
        self.pending = true;
        Ok(())
    }

    /// Whether `status` is what document `doc` holds as the user wrote it (its formatting kept).
    fn as_in_file<T>(&self, doc: usize, status: Option<&T>) -> Result<bool, Error>
    where
        T: DeserializeOwned + PartialEq + Clone,
    {
        if self.edited.contains(&doc) {
            return Ok(false);
        }
        let in_file = self
            .yaml
            .has_block_status(doc)
            .map_err(|e| self.edit_error(doc, e))?;
        Ok(match (in_file, status) {
            (false, None) => true,
            (false, Some(_)) => false,
            (true, _) => status_of::<T>(&self.yaml, doc).ok() == Some(status.cloned()),
        })
    }

    /// Remove these keys from the document's `metadata.annotations`; returns whether any was there.
    pub fn stage_removed_annotations(&mut self, doc: usize, keys: &[&str]) -> Result<bool, Error> {
        let removed = self
            .yaml
            .remove_annotations(doc, keys)
            .map_err(|e| self.edit_error(doc, e))?;
        if removed {
            self.edited.insert(doc);
            self.pending = true;
        }
        Ok(removed)
    }

    /// Set (`Some`) or remove (`None`) a host's sidecar entry.
    pub fn stage_bookkeeping(
        &mut self,
        key: &ObjectKey,
        book: Option<&Bookkeeping>,
    ) -> Result<(), Error> {
        self.stage_bookkeeping_json(&key.to_string(), book.map(super::sidecar::encode))
            .map(drop)
    }

    /// [`stage_bookkeeping`](Self::stage_bookkeeping) with the entry already encoded.
    pub fn stage_bookkeeping_json(
        &mut self,
        key: &str,
        json: Option<super::sidecar::Encoded>,
    ) -> Result<Option<super::sidecar::Encoded>, Error> {
        let host_keys = &self.host_keys;
        self.sidecar
            .set_encoded_if_known(key, json, |k| host_keys.contains(k))
            .map_err(|_| {
                Error::bug(format!(
                    "{}: internal error: host {key} is not in this file",
                    self.path.display()
                ))
            })
    }

    fn edit_error(&self, doc: usize, e: YamlFileError) -> Error {
        let p = self.yaml.position(doc, &[]);
        Error::invalid(
            Diagnostic::new(e.to_string()).at(Position::new(&self.path, p.line, p.column)),
        )
    }

    /// Whether [`commit`](Self::commit) would write anything.
    pub fn has_changes(&self) -> bool {
        self.sidecar.is_dirty()
            || (self.pending && !self.yaml.renders_same(None, Some(self.disk_overlay())))
    }

    /// Writes what was staged: the sidecar, then the file if its bytes changed, both atomically.
    pub fn commit(&mut self) -> Result<CommitStats, Error> {
        let sidecar_dirty = self.sidecar.is_dirty();
        let next = if !self.pending {
            None
        } else {
            Some(self.yaml.overlay())
                .filter(|o| !self.yaml.renders_same(Some(o), Some(self.disk_overlay())))
        };
        if !sidecar_dirty && next.is_none() {
            self.pending = false;
            return Ok(CommitStats::default());
        }
        self.check_writable()?;
        self.check_unchanged_on_disk()?;
        self.check_lock()?;
        let mut stats = CommitStats::default();
        if sidecar_dirty {
            // Named after the hosts file the user gave, the state file beside it said too.
            stats.sidecar_written = self.sidecar.save().map_err(|e| match e {
                Error::Io { path, source } => Error::io(
                    &self.path,
                    std::io::Error::new(
                        source.kind(),
                        format!("its state file {}: {source}", path.display()),
                    ),
                ),
                e => e,
            })?;
        }
        if let Some(next) = next {
            // Checked again once the new text is on disk, before and after it takes the name: an
            // edit made meanwhile is not overwritten.
            let yaml = &self.yaml;
            let replaced = self.replace(
                |file| {
                    let mut out = Gather::new(file);
                    yaml.each_piece(Some(&next), |p| out.push(p.as_bytes()));
                    out.finish()
                },
                |at| file_holds(at, |f| yaml.each_piece(Some(&next), |p| f(p.as_bytes()))),
            )?;
            self.took(replaced)?;
            self.disk_text = Some(next);
            stats.file_written = true;
        }
        self.pending = false;
        Ok(stats)
    }

    /// Takes what [`replace_if_unchanged`] did; a refused write is the conflict of an edit.
    fn took(&mut self, replaced: Replaced) -> Result<(), Error> {
        let file = match replaced {
            Replaced::Checked { file } => file,
            Replaced::Unchecked { file } => {
                if !std::mem::replace(&mut self.said_no_exchange, true) {
                    tracing::warn!(
                        "{}: its filesystem cannot exchange two files' names \
                         (renameat2 RENAME_EXCHANGE), so an edit saved in the instant bmhctl \
                         replaces the file could be lost; do not edit it during a run",
                        self.path.display()
                    );
                }
                file
            }
            Replaced::Changed => return Err(self.changed_during_run()),
            Replaced::ChangedTwice { kept } => {
                tracing::warn!(
                    "{}: edited twice in the instant bmhctl replaced it; the first edit is in \
                     the file, the second (made to bmhctl's new text) kept as {}: merge it by \
                     hand",
                    self.path.display(),
                    kept.display()
                );
                return Err(self.changed_during_run());
            }
        };
        // Of the file written, not of the path: another writer's file may be there already.
        self.disk_stamp = Stamp::of_file(&file);
        if let Some(lock) = self.lock.as_mut() {
            lock.hold(file);
        }
        Ok(())
    }

    /// [`replace_if_unchanged`] with `write`'s text (`is_it`: whether a file holds it).
    fn replace(
        &self,
        write: impl FnOnce(&std::fs::File) -> std::io::Result<()>,
        is_it: impl Fn(&Path) -> std::io::Result<bool>,
    ) -> Result<Replaced, Error> {
        replace_if_unchanged(
            &self.real_path,
            true,
            write,
            |at| self.holds_as_read(at),
            is_it,
        )
        .map_err(|e| Error::io(&self.path, e))
    }

    /// An internal error when the file was loaded read-only.
    fn check_writable(&self) -> Result<(), Error> {
        if self.lock.is_none() {
            return Err(Error::bug(format!(
                "{}: loaded read-only; not writing",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// Whether the file at `at` holds what bmhctl last read or wrote.
    pub(super) fn holds_as_read(&self, at: &Path) -> std::io::Result<bool> {
        // By inode, not path: the file a replace has just moved aside (its old text, to be
        // checked for an edit made meanwhile) is the one stamped, at another name.
        if self.disk_stamp.is_some() && Stamp::of(at) == self.disk_stamp {
            return Ok(true);
        }
        let disk = self.disk_overlay();
        file_holds(at, |f| {
            self.yaml.each_piece(Some(disk), |p| f(p.as_bytes()))
        })
    }

    /// An error when the lock file was removed during the run ([`FileLock::check`]).
    fn check_lock(&self) -> Result<(), Error> {
        self.lock.as_ref().map_or(Ok(()), FileLock::check)
    }

    /// Locks the file now at the path when an editor's rename replaced it ([`FileLock::follow`]).
    pub(super) fn follow_lock(&mut self) -> Result<(), Error> {
        self.lock.as_mut().map_or(Ok(()), FileLock::follow)
    }

    /// The [`Error::Conflict`] of a file edited (or removed) since bmhctl last read or wrote it.
    fn changed_during_run(&self) -> Error {
        Error::Conflict(format!(
            "{} changed on disk since bmhctl read it; not overwriting it (the edit is kept)",
            self.path.display()
        ))
    }

    /// [`Error::Conflict`] when the file no longer holds what bmhctl last read or wrote.
    fn check_unchanged_on_disk(&self) -> Result<(), Error> {
        match self.holds_as_read(&self.real_path) {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.changed_during_run()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::Conflict(format!(
                "{} was removed since bmhctl read it; not writing it again",
                self.path.display()
            ))),
            Err(e) => Err(Error::io(&self.path, e)),
        }
    }

    /// Sets (`Some`) or removes (`None`) one annotation of the document, writing the file at once.
    pub fn write_annotation(
        &mut self,
        doc: usize,
        key: &str,
        value: Option<&str>,
    ) -> Result<bool, Error> {
        self.commit()?;
        let current: Option<String> = serde_saphyr::from_str::<Value>(self.yaml.document_text(doc))
            .ok()
            .and_then(|v| {
                v["metadata"]["annotations"][key]
                    .as_str()
                    .map(str::to_string)
            });
        if current.as_deref() == value {
            return Ok(false);
        }
        if current.is_some() {
            self.stage_removed_annotations(doc, &[key])?;
            self.commit()?;
        }
        let Some(value) = value else {
            return Ok(true);
        };
        self.check_writable()?;
        let text = super::annotation_edit::with_annotation(&self.disk_text(), doc, key, value)
            .map_err(|mut e| {
                if let Error::Invalid(ds) = &mut e {
                    let unplaced = ds.0.iter_mut().filter(|d| d.position.is_none());
                    unplaced.for_each(|d| d.position = Some(Position::file(&self.path)));
                }
                e
            })?;
        self.check_unchanged_on_disk()?;
        self.check_lock()?;
        let replaced = self.replace(
            |mut f| std::io::Write::write_all(&mut f, text.as_bytes()),
            |at| Ok(std::fs::read(at)? == text.as_bytes()),
        )?;
        self.took(replaced)?;
        self.yaml = YamlFile::parse(text).map_err(|e| Error::invalid(e.to_string()))?;
        self.disk_text = None;
        self.edited.clear();
        self.pending = false;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::file_holds;

    #[test]
    fn a_file_holds_its_text_in_any_pieces_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hosts.yaml");
        // Longer than the block read at a time, so a difference after the first block counts.
        let mut text = "a: 1\n".repeat(30_000);
        std::fs::write(&path, &text).unwrap();
        let (head, tail) = text.split_at(70_001);
        let holds = |path: &std::path::Path, pieces: &[&str]| {
            file_holds(path, |f| pieces.iter().for_each(|p| f(p.as_bytes())))
        };
        assert!(holds(&path, &[head, "", tail]).unwrap());
        assert!(!holds(&path, &[head]).unwrap());
        assert!(!holds(&path, &[head, tail, "x"]).unwrap());
        // The same length, one byte differing in the last block or the first.
        let mut other = text.clone();
        other.replace_range(149_999..150_000, "x");
        assert!(!holds(&path, &[&other]).unwrap());
        assert!(!holds(&path, &[&format!("b{}", &text[1..])]).unwrap());
        text.replace_range(100_000..100_001, "b");
        assert!(!holds(&path, &[&text]).unwrap());
        assert!(holds(&dir.path().join("gone.yaml"), &[]).is_err());
    }

    /// The status rendered in parts, with the hardware's text reused, is the status rendered
    /// whole, byte for byte: for every field set or unset, and hardware the same as the last
    /// rendering's, different from it, and absent.
    #[test]
    fn a_host_status_in_parts_is_the_status_rendered_whole() {
        use super::{StatusText, host_status_text, status_yaml};
        let parts = |s: &BareMetalHostStatus| match host_status_text(Some(s)).unwrap().unwrap() {
            StatusText::Pieces(p) => super::LaidOut::plain(&p),
            StatusText::Whole(w) => panic!("rendered whole: {w}"),
        };
        use crate::provisioners::fixture::canned_hardware_details;
        use bmh_api::*;
        let canned = canned_hardware_details();
        let mut other = canned.clone();
        other.hostname = "other: host\nwith a line".into();
        other.nics.truncate(1);
        let bare = BareMetalHostStatus {
            hardware: Some(canned.clone().into()),
            ..Default::default()
        };
        let mut full = bare.clone();
        full.operational_status = OperationalStatus::Error;
        full.error_type = ErrorType::ProvisioningError;
        full.last_updated = Some("2026-12-01T16:00:00Z".into());
        full.hardware_profile = "unknown".into();
        full.provisioning.state = ProvisioningState::Provisioned;
        full.provisioning.id = "0b3a-uuid".into();
        full.good_credentials.credentials = Some(SecretReference {
            name: "bmc".into(),
            namespace: "default".into(),
        });
        full.good_credentials.credentials_version = "1".into();
        full.tried_credentials = full.good_credentials.clone();
        full.error_message = "failed: \"x\"\nsecond line".into();
        full.powered_on = true;
        full.operation_history.provision.start = Some("2026-12-01T16:00:01Z".into());
        full.error_count = 2;
        full.provisioning_fail_count = 1;
        full.last_attempted_image = Some(Image {
            url: "http://images/os.qcow2".into(),
            ..Default::default()
        });
        full.conditions = vec![Condition {
            type_: "Ready".into(),
            status: "True".into(),
            observed_generation: 3,
            last_transition_time: "2026-12-01T16:00:02Z".into(),
            reason: "Provisioned".into(),
            message: "yes: it is".into(),
        }];
        full.conditions.push(Condition {
            type_: "Healthy".into(),
            status: "Unknown".into(),
            reason: "- no".into(),
            message: "two\nlines: and a trailing one\n".into(),
            ..Default::default()
        });
        full.extra
            .insert("kept".into(), serde_json::json!({"a": [1, "b"], "c": null}));
        let mut others = full.clone();
        others.hardware = Some(other.into());
        let mut none = full.clone();
        none.hardware = None;
        let mut empty = full.clone();
        empty.hardware = Some(HardwareDetails::default().into());
        let mut half = full.clone();
        half.good_credentials = Default::default();
        half.operation_history = Default::default();
        half.conditions.clear();
        half.last_attempted_image = None;
        half.error_count = -1;
        let mut seen = 0;
        for s in [
            &bare, &full, &full, &others, &full, &none, &empty, &half, &bare,
        ] {
            let whole = status_yaml(Some(s)).unwrap().unwrap();
            assert_eq!(parts(s), whole);
            seen += whole.contains("hardware:") as usize;
        }
        assert_eq!(seen, 8);
        // More conditions than a thread keeps the text of: each is rendered as it is.
        for i in 0..2 * super::CONDITIONS_KEPT {
            let mut s = full.clone();
            s.conditions[i % 2].last_transition_time =
                format!("2026-12-01T16:{:02}:00Z", i % 60).into();
            s.conditions[i % 2].observed_generation = i as i64;
            let whole = status_yaml(Some(&s)).unwrap().unwrap();
            assert_eq!(parts(&s), whole);
        }
        // More conditions than the places kept apart: the last ones share a place.
        let mut many = full.clone();
        many.conditions = (0..super::CONDITION_PLACES + 3)
            .map(|i| Condition {
                type_: format!("Type{}", i % 4).into(),
                status: "True".into(),
                reason: format!("Reason{i}").into(),
                last_transition_time: "2026-12-01T16:00:02Z".into(),
                ..Default::default()
            })
            .collect();
        for _ in 0..2 {
            let whole = status_yaml(Some(&many)).unwrap().unwrap();
            assert_eq!(parts(&many), whole);
        }
        assert!(host_status_text(None).unwrap().is_none());
    }

    /// The word-at-a-time comparison is `==`, for texts differing at any byte, of any length
    /// up to past the longest it compares itself.
    #[test]
    fn short_texts_compare_as_equal_texts_do() {
        use super::same_short_text;
        let base: String = "2026-12-01T16:00:02Z, and then some more text; ".repeat(2);
        for len in 0..base.len() {
            let a = &base[..len];
            assert!(same_short_text(a, a));
            // Another copy: equal by its bytes, not by its address.
            let copy = String::from(a);
            assert!(same_short_text(a, &copy));
            assert!(!same_short_text(a, &base[..len + 1]));
            for at in 0..len {
                let mut b = a.as_bytes().to_vec();
                b[at] ^= 1;
                let b = String::from_utf8(b).unwrap();
                assert!(!same_short_text(a, &b), "{a:?} {b:?}");
            }
        }
    }
}
