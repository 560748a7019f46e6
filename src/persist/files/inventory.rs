//! Loading the user's hosts and Secrets from YAML files, and linking them.

use super::host_file::{CommitStats, HostFile, Stamp};
use super::kinds::{FirmwareObject, Unread};
use super::lock::FileLock;
use super::parse::{Item, ParsedFile, parse_file, with_namespace};
pub use super::parse::{LoadMode, OtherDocument};
use super::paths::{expand, read_text};
use super::sidecar::Sidecar;
use super::yaml_file::{PathSeg, YamlFile};
use crate::diagnostic::{Diagnostic, Diagnostics, Position};
use crate::error::Error;
use crate::objects::{ObjectMap, TypedKey};
use crate::persist::LoadOptions;
use crate::persist::bookkeeping::{bookkeeping_at_load, firmware_at_load};
use crate::record::HostRecord;
use bmh_api::ObjectKey;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

pub use super::paths::input_files;

/// Everything the given paths hold.
#[derive(Debug, Default)]
pub struct Inventory {
    /// The files and directories it was loaded from, as given.
    pub paths: Vec<PathBuf>,
    /// The files holding at least one BareMetalHost, in load order.
    pub files: Vec<HostFile>,
    /// All hosts, in file and document order.
    pub hosts: Vec<HostEntry>,
    /// All Secrets of all files, and the documents of the extra kinds of [`LoadOptions`].
    pub objects: ObjectMap,
    /// Documents that are neither a host, a Secret nor a host's companion (kept untouched).
    pub other_documents: Vec<OtherDocument>,
    /// Problems that did not stop the load (already printed unless quiet).
    pub warnings: Vec<Diagnostic>,
    /// Secrets that were refused: a reference to one is not also reported as missing.
    refused_secrets: HashSet<ObjectKey>,
}

/// One BareMetalHost document.
#[derive(Debug, Clone)]
pub struct HostEntry {
    /// Index into [`Inventory::files`].
    pub file: usize,
    /// Document index in that file (as [`super::yaml_file::YamlFile`] counts them).
    pub doc: usize,
    /// `namespace/name`, the namespace defaulted.
    pub key: ObjectKey,
    pub record: HostRecord,
    /// Document index of the host's HostFirmwareSettings in the same file, if any.
    pub firmware_settings_doc: Option<usize>,
    pub firmware_components_doc: Option<usize>,
    pub data_image_doc: Option<usize>,
}

impl Inventory {
    pub fn host(&self, key: &ObjectKey) -> Option<&HostEntry> {
        self.hosts.iter().find(|h| &h.key == key)
    }

    /// The file holding `host` (an index into [`Inventory::hosts`]).
    pub fn file_of(&mut self, host: usize) -> &mut HostFile {
        let f = self.hosts[host].file;
        &mut self.files[f]
    }

    /// Commit every file; all are attempted, and the first error is returned.
    pub fn commit_all(&mut self) -> Result<CommitStats, Error> {
        let mut stats = CommitStats::default();
        let mut first = None;
        for f in &mut self.files {
            match f.commit() {
                Ok(s) => {
                    stats.file_written |= s.file_written;
                    stats.sidecar_written |= s.sidecar_written;
                }
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        first.map_or(Ok(stats), Err)
    }
}

/// Load hosts and Secrets from `paths`, and the documents `options` asks for.
pub fn load_with(
    paths: &[PathBuf],
    mode: LoadMode,
    options: &LoadOptions,
) -> Result<Inventory, Error> {
    let (inv, errors) = load_collecting(paths, mode, options)?;
    bad_input(errors)?;
    Ok(inv)
}

/// [`load_with`] and [`check_secret_references`], all problems reported together.
pub fn load_checked_with(
    paths: &[PathBuf],
    mode: LoadMode,
    options: &LoadOptions,
) -> Result<Inventory, Error> {
    let (inv, mut errors) = load_collecting(paths, mode, options)?;
    errors.extend(secret_reference_errors(&inv));
    bad_input(errors)?;
    Ok(inv)
}

/// Every Secret a host refers to must be among the loaded Secrets (as BMO looks them up).
pub fn check_secret_references(inv: &Inventory) -> Result<(), Error> {
    bad_input(secret_reference_errors(inv))
}

/// [`Error::Invalid`] listing `errors`, if any.
pub(crate) fn bad_input(errors: impl Into<Diagnostics>) -> Result<(), Error> {
    let errors = errors.into();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid(errors))
    }
}

fn secret_reference_errors(inv: &Inventory) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    for h in &inv.hosts {
        let spec = &h.record.host.spec;
        let ns = h.key.namespace.as_str();
        let named = |name: &str| (!name.is_empty()).then(|| ObjectKey::new(ns, name));
        let referenced = |r: &Option<bmh_api::SecretReference>| {
            let r = r.as_ref().filter(|r| !r.name.is_empty())?;
            let rns = if r.namespace.is_empty() {
                ns
            } else {
                &r.namespace
            };
            Some(ObjectKey::new(rns, &r.name))
        };
        let credentials = spec.bmc.as_ref().map_or("", |b| &b.credentials_name);
        let refs: [(&[&str], Option<ObjectKey>); 5] = [
            (&["spec", "bmc", "credentialsName"], named(credentials)),
            (
                &["spec", "preprovisioningNetworkDataName"],
                named(&spec.preprovisioning_network_data_name),
            ),
            (&["spec", "userData", "name"], referenced(&spec.user_data)),
            (
                &["spec", "networkData", "name"],
                referenced(&spec.network_data),
            ),
            (&["spec", "metaData", "name"], referenced(&spec.meta_data)),
        ];
        let file = &inv.files[h.file];
        for (i, (path, key)) in refs.into_iter().enumerate() {
            let Some(key) = key else { continue };
            let problem = match inv.objects.get_secret(&key) {
                // The first reference is the BMC credentials'.
                Some(s) if i == 0 => crate::objects::placeholder_problem(
                    &key,
                    s.data.get("password").map(|p| &p[..]),
                ),
                Some(_) => None,
                None if inv.refused_secrets.contains(&key) => None,
                None => Some(format!("Secret {key} not found in the given files")),
            };
            let Some(problem) = problem else { continue };
            let segs: Vec<PathSeg> = path.iter().map(|k| PathSeg::Key(k)).collect();
            let pos = file.yaml.position(h.doc, &segs);
            errors.push(
                Diagnostic::new(problem)
                    .at(Position::new(&file.path, pos.line, pos.column))
                    .object(bmh_api::host::KIND, &h.key)
                    .field(path.join(".")),
            );
        }
    }
    errors
}

/// Expands the paths, reads, parses and links every file, locks the host files for a write.
fn load_collecting(
    paths: &[PathBuf],
    mode: LoadMode,
    options: &LoadOptions,
) -> Result<(Inventory, Vec<Diagnostic>), Error> {
    let mut errors = Vec::new();
    let mut parsed = read_and_parse(paths, mode, options, &mut errors)?;
    // Bad input is found before any lock is taken: a refused run leaves no `.bmhctl/` behind.
    let mut links = link(&parsed, mode, options);
    let refused =
        !errors.is_empty() || !links.is_empty() || parsed.iter().any(|pf| !pf.errors.is_empty());
    if mode == LoadMode::Write && !refused && lock_and_reread(&mut parsed, options, &mut errors)? {
        links = link(&parsed, mode, options);
    }
    let mut inv = Inventory {
        paths: paths.to_vec(),
        ..Inventory::default()
    };
    for (pf, linked) in parsed.iter_mut().zip(&mut links.per_file) {
        errors.append(&mut pf.errors);
        errors.append(linked);
        inv.warnings.append(&mut pf.warnings);
    }
    errors.append(&mut links.across);
    for (file_index, pf) in parsed.into_iter().enumerate() {
        inv.keep(pf, file_index, &links.kept, options, &mut errors)?;
    }
    let policy = options.input;
    if !policy.quiet {
        for ((api_version, kind), n) in &links.skipped_kinds {
            crate::eprintln_quiet!(
                "note: skipped {n} document{} of kind {kind} ({api_version}): not a kind bmhctl \
                 reads",
                if *n == 1 { "" } else { "s" }
            );
        }
    }
    if errors.is_empty() && !policy.quiet {
        for w in &inv.warnings {
            let class = crate::validate::WarningClass::UnknownField;
            crate::eprintln_quiet!("warning: {w} [{class}]");
        }
    }
    Ok((inv, errors))
}

/// Every file the paths name, read (each once, under the first path it was reached by) and parsed.
fn read_and_parse(
    paths: &[PathBuf],
    mode: LoadMode,
    options: &LoadOptions,
    errors: &mut Vec<Diagnostic>,
) -> Result<Vec<ParsedFile>, Error> {
    let mut seen = HashSet::new();
    let mut parsed = Vec::new();
    for (label, real) in expand(paths, errors)? {
        if !seen.insert(real.clone()) {
            continue;
        }
        let stamp = Stamp::of(&real);
        let Some(text) = read_text(&real, &label, options.input.max_file_size, errors) else {
            continue;
        };
        let mut pf = parse_file(&label, &real, text, mode, options.input);
        pf.stamp = stamp;
        if mode == LoadMode::Write && pf.has_hosts() && super::paths::is_stdin(&real) {
            // Where would the status go? Refused rather than run without saving it.
            errors.push(
                Diagnostic::new(
                    "hosts from standard input (-f -) cannot be driven: their status is \
                     written back into their file; give the file itself (validate, get, apply \
                     and export read -f -)",
                )
                .in_file(&label),
            );
            continue;
        }
        parsed.push(pf);
    }
    Ok(parsed)
}

/// Locks each host file and reads it again, parsed again if changed meanwhile; whether any was.
fn lock_and_reread(
    parsed: &mut [ParsedFile],
    options: &LoadOptions,
    errors: &mut Vec<Diagnostic>,
) -> Result<bool, Error> {
    let mut changed = false;
    // In reverse: the lock that creates a directory's `.bmhctl/` is then the last of that
    // directory's to be released, and removes it when the run is refused later.
    for pf in parsed.iter_mut().rev().filter(|pf| pf.has_hosts()) {
        let lock = FileLock::acquire(&pf.real, &pf.label)?;
        let stamp = Stamp::of(&pf.real);
        let again = read_text(&pf.real, &pf.label, options.input.max_file_size, errors);
        if let Some(again) = again
            && pf.yaml.as_ref().map(|y| y.source_text()) != Some(again.as_str())
        {
            let (label, real) = (pf.label.clone(), pf.real.clone());
            *pf = parse_file(&label, &real, again, LoadMode::Write, options.input);
            pf.stamp = stamp;
            changed = true;
        }
        pf.lock = Some(lock);
    }
    Ok(changed)
}

/// A host document of a parsed file: its document, key and host (`None`: refused).
type ParsedHost = (usize, ObjectKey, Option<Box<bmh_api::BareMetalHost>>);

/// Each host's firmware objects and DataImages, with their documents.
type FirmwareByHost = HashMap<ObjectKey, Vec<(usize, FirmwareObject)>>;

impl Inventory {
    /// Keeps what file `pf` (the `file_index`th parsed) holds.
    fn keep(
        &mut self,
        mut pf: ParsedFile,
        file_index: usize,
        kept: &HashSet<(usize, usize)>,
        options: &LoadOptions,
        errors: &mut Vec<Diagnostic>,
    ) -> Result<(), Error> {
        let Some(yaml) = pf.yaml.take() else {
            return Ok(());
        };
        let has_hosts = pf.has_hosts();
        let items = std::mem::take(&mut pf.items);
        let (hosts, firmware) = self.keep_documents(items, file_index, kept, options);
        if has_hosts {
            self.keep_host_file(pf, yaml, hosts, firmware, errors)?;
        }
        Ok(())
    }

    /// Keeps the Secrets and objects among `items`; returns its hosts and firmware objects by host.
    fn keep_documents(
        &mut self,
        items: Vec<Item>,
        file_index: usize,
        kept: &HashSet<(usize, usize)>,
        options: &LoadOptions,
    ) -> (Vec<ParsedHost>, FirmwareByHost) {
        let mut hosts = Vec::new();
        let mut firmware: FirmwareByHost = HashMap::new();
        for item in items {
            match item {
                Item::Host { doc, key, host } => hosts.push((doc, key, host)),
                Item::Firmware {
                    doc,
                    key,
                    kind,
                    value,
                    object,
                } => {
                    if options.accepts_in(bmh_api::API_VERSION, kind, &key.namespace) {
                        self.objects.insert_object(
                            TypedKey::new(bmh_api::API_VERSION, kind, key.clone()),
                            with_namespace(&value, &key.namespace),
                        );
                    }
                    if let Some(o) = object {
                        firmware.entry(key).or_default().push((doc, o));
                    }
                }
                Item::Secret {
                    secret: Some(s), ..
                } => self.objects.insert_secret(s),
                Item::Secret { key, .. } => {
                    self.refused_secrets.insert(key);
                }
                Item::Other(o) => {
                    if kept.contains(&(file_index, o.doc)) {
                        let key = TypedKey::new(
                            &o.api_version,
                            &o.kind,
                            ObjectKey::new(&o.namespace, &o.name),
                        );
                        self.objects
                            .insert_object(key, with_namespace(&o.value, &o.namespace));
                    }
                    self.other_documents.push(o);
                }
            }
        }
        (hosts, firmware)
    }

    /// Keeps the hosts of file `pf`, with their bookkeeping and firmware objects, and the file.
    fn keep_host_file(
        &mut self,
        pf: ParsedFile,
        yaml: YamlFile,
        hosts: Vec<ParsedHost>,
        mut firmware: FirmwareByHost,
        errors: &mut Vec<Diagnostic>,
    ) -> Result<(), Error> {
        let mut sidecar = match Sidecar::load(&pf.real) {
            Ok(s) => s,
            Err(Error::Invalid(ds)) => {
                errors.extend(ds.0);
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let host_keys: BTreeSet<String> = hosts.iter().map(|(_, k, _)| k.to_string()).collect();
        sidecar.keep_only(host_keys.clone());
        let file = self.files.len();
        for (doc, key, host) in hosts {
            let Some(host) = host else { continue };
            let mut book = bookkeeping_at_load(sidecar.get(&key.to_string()), &host.spec);
            // The first of each kind (a second is a duplicate, already reported).
            let (mut settings, mut components, mut data_image) = (None, None, None);
            for (d, o) in firmware.remove(&key).unwrap_or_default() {
                match o {
                    FirmwareObject::Settings(s) => _ = settings.get_or_insert((d, s)),
                    FirmwareObject::Components(c) => _ = components.get_or_insert((d, c)),
                    FirmwareObject::DataImage(i) => _ = data_image.get_or_insert((d, i)),
                }
            }
            firmware_at_load(
                &mut book,
                settings.as_mut().map(|s| &mut *s.1),
                components.as_mut().map(|c| &mut *c.1),
            );
            self.hosts.push(HostEntry {
                file,
                doc,
                key,
                firmware_settings_doc: settings.as_ref().map(|(d, _)| *d),
                firmware_components_doc: components.as_ref().map(|(d, _)| *d),
                data_image_doc: data_image.as_ref().map(|(d, _)| *d),
                record: HostRecord::with_deletion_timestamp(HostRecord {
                    host,
                    book,
                    firmware_settings: settings.map(|(_, s)| s),
                    firmware_components: components.map(|(_, c)| c),
                    data_image: data_image.map(|(_, i)| i),
                }),
            });
        }
        let disk_stamp = pf.stamp;
        self.files.push(HostFile {
            path: pf.label,
            real_path: pf.real,
            yaml,
            disk_text: None,
            disk_stamp,
            sidecar,
            lock: pf.lock,
            edited: BTreeSet::new(),
            pending: false,
            host_keys,
            said_no_exchange: false,
        });
        Ok(())
    }
}

/// The problems found by comparing files and documents, and what the comparison decides.
#[derive(Default)]
struct Links {
    /// Per file (as `parsed`): unknown kinds, duplicates, misplaced documents.
    per_file: Vec<Vec<Diagnostic>>,
    /// Firmware objects without their host in their file.
    across: Vec<Diagnostic>,
    /// Which other documents are kept as objects (the first of duplicates), as (file, document).
    kept: HashSet<(usize, usize)>,
    /// Documents skipped, by apiVersion and kind (one note each).
    skipped_kinds: BTreeMap<(String, String), usize>,
}

impl Links {
    fn is_empty(&self) -> bool {
        self.per_file.iter().all(Vec::is_empty) && self.across.is_empty()
    }
}

/// Compares the documents of all files: duplicates, firmware objects to their hosts, kinds.
fn link(parsed: &[ParsedFile], mode: LoadMode, options: &LoadOptions) -> Links {
    let mut links = Links::default();
    let mut seen = Seen::default();
    for (file, pf) in parsed.iter().enumerate() {
        let mut errors = Vec::new();
        if pf.yaml.is_some() {
            kind_problems(pf, options, &mut errors, &mut links.skipped_kinds);
            seen.typed_documents(parsed, file, &mut errors);
            seen.subscriptions(pf, mode, &mut errors);
            seen.objects(pf, file, options, &mut errors, &mut links.kept);
        }
        links.per_file.push(errors);
    }
    links.across = companions_apart(parsed, &seen.host_file);
    links
}

/// The problems of the kinds of `pf`'s other documents: kinds refused (counted in `skipped`
/// instead under `--skip-unknown-kinds`, as the kinds skipped always are), and the labels of
/// those read untyped.
fn kind_problems(
    pf: &ParsedFile,
    options: &LoadOptions,
    errors: &mut Vec<Diagnostic>,
    skipped: &mut BTreeMap<(String, String), usize>,
) {
    for item in &pf.items {
        let Item::Other(o) = item else { continue };
        let unread = super::kinds::unread(&o.api_version, &o.kind);
        let Some(unread) = unread.filter(|_| !options.knows_kind(&o.api_version, &o.kind)) else {
            // Untyped, but read: its labels are checked as a typed object's are.
            if !o.is_subscription() {
                let at = |segs: &[PathSeg]| pf.position(o.doc, segs);
                let key = ObjectKey::new(&o.namespace, &o.name);
                errors.extend(super::strict::label_problems(&o.value, &o.kind, &key, &at));
                errors.extend(super::strict::label_type_problems(
                    &o.value, &o.kind, &key, &at,
                ));
            }
            continue;
        };
        match unread {
            Unread::Skipped if options.keep_every_kind => {}
            Unread::Refused(field, why) if !options.input.skip_unknown_kinds => {
                let mut d = Diagnostic::new(why).at(pf.position(o.doc, &[PathSeg::Key(field)]));
                if !o.name.is_empty() {
                    d = d.object(&o.kind, ObjectKey::new(&o.namespace, &o.name));
                }
                errors.push(d.field(field));
            }
            _ => {
                *skipped
                    .entry((o.api_version.clone(), o.kind.clone()))
                    .or_default() += 1
            }
        }
    }
}

/// The documents seen so far, to find duplicates across all files.
#[derive(Default)]
struct Seen {
    /// Where the first typed document of each kind and key is (its position is looked up only for
    /// a duplicate: finding it parses the document's text again).
    typed: HashMap<(&'static str, ObjectKey), (usize, usize)>,
    subscriptions: HashMap<ObjectKey, Position>,
    /// Kept objects of the extra kinds, by kind (whatever the version) and key.
    objects: HashMap<(String, ObjectKey), Position>,
    /// The file (index into the parsed files) of each host.
    host_file: HashMap<ObjectKey, usize>,
}

const NAME: &[PathSeg] = &[PathSeg::Key("metadata"), PathSeg::Key("name")];

impl Seen {
    /// Hosts, Secrets and firmware objects of the `file`th file defined before.
    fn typed_documents(
        &mut self,
        parsed: &[ParsedFile],
        file: usize,
        errors: &mut Vec<Diagnostic>,
    ) {
        let pf = &parsed[file];
        for item in &pf.items {
            let (doc, key, what) = match item {
                Item::Host { doc, key, .. } => {
                    self.host_file.entry(key.clone()).or_insert(file);
                    (*doc, key, bmh_api::host::KIND)
                }
                Item::Secret { doc, key, .. } => (*doc, key, crate::objects::SECRET_KIND),
                Item::Firmware { doc, key, kind, .. } => (*doc, key, *kind),
                Item::Other(_) => continue,
            };
            match self.typed.entry((what, key.clone())) {
                Entry::Occupied(first) => {
                    let (first_file, first_doc) = *first.get();
                    let first = parsed[first_file].position(first_doc, NAME);
                    errors.push(again(&first, pf.position(doc, NAME), what, key));
                }
                Entry::Vacant(v) => {
                    v.insert((file, doc));
                }
            }
        }
    }

    /// Two BMCEventSubscriptions of one name would be one subscription made twice.
    fn subscriptions(&mut self, pf: &ParsedFile, mode: LoadMode, errors: &mut Vec<Diagnostic>) {
        for item in &pf.items {
            let Item::Other(o) = item else { continue };
            if !o.is_subscription() || o.name.is_empty() {
                continue;
            }
            let here = pf.position(o.doc, NAME);
            let key = ObjectKey::new(&o.namespace, &o.name);
            if mode == LoadMode::Write && !pf.has_hosts() {
                // Its status could not be written: it would be made again by every run.
                errors.push(
                    Diagnostic::new(
                        "in a file holding no BareMetalHost: bmhctl writes a subscription's \
                         status only into a file of hosts; move it into one",
                    )
                    .at(here.clone())
                    .object(&o.kind, &key),
                );
            }
            match self.subscriptions.get(&key) {
                Some(first) => errors.push(again(first, here, &o.kind, &key)),
                None => {
                    self.subscriptions.insert(key, here);
                }
            }
        }
    }

    /// The documents of the extra kinds `options` asks for: the first of each kind and key is kept.
    fn objects(
        &mut self,
        pf: &ParsedFile,
        file: usize,
        options: &LoadOptions,
        errors: &mut Vec<Diagnostic>,
        kept: &mut HashSet<(usize, usize)>,
    ) {
        for item in &pf.items {
            let Item::Other(o) = item else { continue };
            if !options.accepts(&o.api_version, &o.kind, &o.namespace) {
                continue;
            }
            let key = ObjectKey::new(&o.namespace, &o.name);
            if o.name.is_empty() {
                errors.push(
                    Diagnostic::new(format!("{} without metadata.name", o.kind))
                        .at(pf.position(o.doc, &[PathSeg::Key("metadata")])),
                );
                continue;
            }
            let here = pf.position(o.doc, NAME);
            match self.objects.entry((o.kind.clone(), key)) {
                Entry::Occupied(first) => {
                    errors.push(again(first.get(), here, &o.kind, &first.key().1))
                }
                Entry::Vacant(v) => {
                    v.insert(here);
                    kept.insert((file, o.doc));
                }
            }
        }
    }
}

/// A document defined again at `here`, first at `first`.
fn again(first: &Position, here: Position, kind: &str, key: &ObjectKey) -> Diagnostic {
    Diagnostic::new(format!("defined more than once (first at {first})"))
        .at(here)
        .object(kind, key)
}

/// Every firmware object belongs to a host in its own file: the problems of those that are not.
fn companions_apart(
    parsed: &[ParsedFile],
    host_file: &HashMap<ObjectKey, usize>,
) -> Vec<Diagnostic> {
    let mut across = Vec::new();
    for (file, pf) in parsed.iter().enumerate() {
        for item in &pf.items {
            let Item::Firmware { doc, key, kind, .. } = item else {
                continue;
            };
            let problem = |message: String| {
                Diagnostic::new(message)
                    .at(pf.position(*doc, NAME))
                    .object(kind, key)
                    .field("metadata.name")
            };
            match host_file.get(key) {
                Some(f) if *f == file => {}
                Some(f) => across.push(problem(format!(
                    "must be in the same file as BareMetalHost {key} (which is in {})",
                    parsed[*f].label.display()
                ))),
                None => across.push(problem(format!(
                    "no BareMetalHost {key} in the given files (a {kind} belongs to the \
                     BareMetalHost of the same namespace and name)"
                ))),
            }
        }
    }
    across
}
