//! Loading and writing back the user's files, end to end on temp files.

use super::host_file::CommitStats;
use super::inventory::*;
use super::sidecar::Sidecar;
use crate::error::Error;
use crate::persist::LoadOptions;
use crate::persist::bookkeeping::spec_hash;
use bmh_api::BareMetalHostStatus;
use bmh_api::ObjectKey;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

fn load(paths: &[PathBuf], mode: LoadMode) -> Result<Inventory, Error> {
    load_with(paths, mode, &LoadOptions::default())
}

fn load_checked(paths: &[PathBuf], mode: LoadMode) -> Result<Inventory, Error> {
    load_checked_with(paths, mode, &LoadOptions::default())
}

const HOSTS: &str = "# two hosts and a HardwareData (a kind bmhctl keeps untouched)
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: host-0
spec:
  online: true
  bmc:
    address: ipmi://10.0.0.1
    credentialsName: host-0-bmc
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: host-1
  namespace: lab
spec:
  online: false
  bmc:
    address: redfish://10.0.0.2
    credentialsName: host-1-bmc
  userData:
    name: ud
---
apiVersion: metal3.io/v1alpha1
kind: HardwareData
metadata:
  name: cm
data:
  a: b
";

const SECRETS: &str = "apiVersion: v1
kind: Secret
metadata:
  name: host-0-bmc
data:
  username: YWRt
    aW4=
  password: c2VjcmV0
stringData:
  password: override
---
apiVersion: v1
kind: Secret
metadata:
  name: host-1-bmc
  namespace: lab
stringData:
  username: root
  password: calvin
---
apiVersion: v1
kind: Secret
metadata: {name: ud, namespace: lab}
stringData: {userData: \"#cloud-config\\n\"}
";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn status(op: &str) -> BareMetalHostStatus {
    serde_json::from_value(serde_json::json!({
        "operationalStatus": op,
        "lastUpdated": "2024-01-01T00:00:00Z",
        "provisioning": {"state": "available", "ID": "abc"},
        "poweredOn": true,
    }))
    .unwrap()
}

fn bad_input(paths: &[PathBuf]) -> String {
    match load_checked(paths, LoadMode::Write) {
        Err(Error::Invalid(ds)) => ds.to_string(),
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("loaded"),
    }
}

/// Modification time and inode: both change when a file is (re)written atomically.
fn stamp(p: &Path) -> (std::time::SystemTime, u64) {
    let m = std::fs::metadata(p).unwrap();
    (m.modified().unwrap(), m.ino())
}

fn sidecar_of(p: &Path) -> PathBuf {
    Sidecar::path_for(&std::fs::canonicalize(p).unwrap())
}

#[test]
fn loads_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "hosts.yaml", HOSTS);
    write(d, "secrets.yml", SECRETS);
    write(d, ".hidden.yaml", "{{{ not yaml");
    write(d, "notes.txt", "{{{ not yaml");
    std::fs::create_dir_all(d.join(".bmhctl")).unwrap();
    std::fs::create_dir_all(d.join("sub")).unwrap();
    write(&d.join("sub"), "x.yaml", "{{{ not yaml");
    let inv = load_checked(&[d.to_path_buf()], LoadMode::ReadOnly).unwrap();

    assert_eq!(inv.files.len(), 1, "only files with hosts");
    assert_eq!(inv.files[0].path(), d.join("hosts.yaml"));
    assert!(inv.files[0].lock.is_none());
    let keys: Vec<String> = inv.hosts.iter().map(|h| h.key.to_string()).collect();
    assert_eq!(keys, ["default/host-0", "lab/host-1"]);
    assert_eq!((inv.hosts[1].file, inv.hosts[1].doc), (0, 1));
    let h0 = &inv.hosts[0].record;
    assert!(h0.host.spec.online);
    assert_eq!(h0.host.metadata.name, "host-0");
    assert_eq!(h0.book.generation, 1);
    assert_eq!(h0.book.uid.len(), 36);
    assert_ne!(h0.book.uid, inv.hosts[1].record.book.uid);
    assert_eq!(h0.book.spec_hash, spec_hash(&h0.host.spec).0);
    assert_eq!(
        h0.book.spec_snapshot.as_ref().unwrap().value()["bmc"]["credentialsName"],
        "host-0-bmc"
    );

    let s = inv
        .objects
        .get_secret(&ObjectKey::new("default", "host-0-bmc"))
        .unwrap();
    assert_eq!(s.get_str("username").unwrap(), "admin");
    assert_eq!(
        s.get_str("password").unwrap(),
        "override",
        "stringData wins"
    );
    let s = inv
        .objects
        .get_secret(&ObjectKey::new("lab", "host-1-bmc"))
        .unwrap();
    assert_eq!(s.get_str("password").unwrap(), "calvin");
    let s = inv
        .objects
        .get_secret(&ObjectKey::new("lab", "ud"))
        .unwrap();
    assert_eq!(s.get_str("userData").unwrap(), "#cloud-config\n");
    assert_eq!(inv.objects.secret_count(), 3);

    assert_eq!(
        inv.other_documents,
        [OtherDocument {
            file: d.join("hosts.yaml"),
            doc: 2,
            api_version: "metal3.io/v1alpha1".into(),
            kind: "HardwareData".into(),
            namespace: "default".into(),
            name: "cm".into(),
            value: serde_json::json!({
                "apiVersion": "metal3.io/v1alpha1",
                "kind": "HardwareData",
                "metadata": {"name": "cm"},
                "data": {"a": "b"},
            }),
        }]
    );
    // No extra kinds asked for: nothing but Secrets offered.
    assert_eq!(inv.objects.object_keys().count(), 0);
    // Read-only: no lock, no sidecar, nothing created.
    assert!(!d.join(".bmhctl/hosts.yaml.lock").exists());
    assert!(!sidecar_of(&d.join("hosts.yaml")).exists());
    // The same file reached twice is loaded once.
    let inv = load(&[d.join("hosts.yaml"), d.to_path_buf()], LoadMode::Write).unwrap();
    assert_eq!(inv.files.len(), 1);
    assert_eq!(inv.hosts.len(), 2);
}

#[test]
fn wrong_field_type_names_file_position_host_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let text = "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: host-1\nspec:\n  online: \"yes\"\n---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: host-2\n  namespace: lab\nspec:\n  online: true\n  rootDeviceHints:\n    minSizeGigabytes: big\n---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: host-3\nspec:\n  bootMACAddress: 00:11:22:33:44:55\n";
    let p = write(dir.path(), "hosts.yaml", text);
    let f = p.display();
    assert_eq!(
        bad_input(std::slice::from_ref(&p)),
        format!(
            "{f}:6:11: BareMetalHost default/host-1: spec.online: invalid type: string \"yes\", expected a boolean\n\
                 {f}:16:23: BareMetalHost lab/host-2: spec.rootDeviceHints.minSizeGigabytes: invalid type: string \"big\", expected i64\n\
                 {f}:23:3: BareMetalHost default/host-3: spec: missing field `online`"
        )
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
    assert!(!sidecar_of(&p).exists());
}

#[test]
fn syntax_errors_and_missing_names() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.yaml", "a: 1\nb: [1, 2\nc: 3\n");
    let b = write(
        dir.path(),
        "b.yaml",
        "apiVersion: v1\nkind: Secret\nstringData: {a: b}\n---\n# c\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  namespace: x\nspec:\n  online: true\n",
    );
    let msg = bad_input(&[a.clone(), b.clone()]);
    let lines: Vec<&str> = msg.lines().collect();
    assert_eq!(lines.len(), 3, "{msg}");
    assert!(lines[0].starts_with(&format!("{}:", a.display())), "{msg}");
    let pos = lines[0][a.display().to_string().len() + 1..]
        .split(':')
        .take(2)
        .map(|n| n.parse::<usize>().unwrap())
        .collect::<Vec<_>>();
    assert!(pos[0] >= 2 && pos[1] >= 1, "{msg}");
    assert_eq!(
        lines[1],
        format!("{}:1:1: Secret without metadata.name", b.display())
    );
    assert_eq!(
        lines[2],
        format!("{}:9:3: BareMetalHost without metadata.name", b.display())
    );
}

#[test]
fn wrongly_typed_name_is_a_type_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "h.yaml",
        "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: 123\nspec:\n  online: true\n",
    );
    assert_eq!(
        bad_input(std::slice::from_ref(&p)),
        format!(
            "{}:4:9: BareMetalHost default/123: metadata.name: invalid type: integer `123`, expected a string",
            p.display()
        )
    );
}

#[test]
fn duplicates_name_both_places() {
    let dir = tempfile::tempdir().unwrap();
    let host = |name: &str| {
        format!(
            "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\nspec:\n  online: true\n"
        )
    };
    let a = write(dir.path(), "a.yaml", &host("h"));
    let b = write(
        dir.path(),
        "b.yaml",
        &format!(
            "{}---\n{}---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: default\n",
            host("other"),
            host("h")
        ),
    );
    assert_eq!(
        bad_input(&[a.clone(), b.clone()]),
        format!(
            "{b}:11:9: BareMetalHost default/h: defined more than once (first at {a}:4:9)\n\
                 {b}:23:9: Secret default/s: defined more than once (first at {b}:18:9)",
            a = a.display(),
            b = b.display()
        )
    );
}

#[test]
fn missing_secrets_and_bad_secret_values() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = write(
        dir.path(),
        "hosts.yaml",
        "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: host-0\nspec:\n  online: true\n  bmc:\n    address: ipmi://1.2.3.4\n    credentialsName: host-0-bmc\n  networkData:\n    name: nd\n    namespace: other\n  metaData:\n    name: md\n",
    );
    let secrets = write(
        dir.path(),
        "secrets.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: md\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: broken\ndata:\n  password: not*base64\nstringData:\n  port: 623\n",
    );
    let (h, s) = (hosts.display(), secrets.display());
    let msg = bad_input(&[hosts.clone(), secrets.clone()]);
    assert_eq!(
        msg,
        format!(
            "{s}:11:13: Secret default/broken: data.password: not valid base64 (data values are base64-encoded; use stringData for plain text)\n\
                 {s}:13:9: Secret default/broken: stringData.port: must be a string (quote it; the value is not shown)\n\
                 {h}:9:22: BareMetalHost default/host-0: spec.bmc.credentialsName: Secret default/host-0-bmc not found in the given files\n\
                 {h}:11:11: BareMetalHost default/host-0: spec.networkData.name: Secret other/nd not found in the given files"
        )
    );
    assert!(!msg.contains("not*base64") && !msg.contains("623"));
    // `load` alone does not check references; `check_secret_references` does.
    std::fs::write(
        &secrets,
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: md\n",
    )
    .unwrap();
    let inv = load(&[hosts.clone(), secrets.clone()], LoadMode::ReadOnly).unwrap();
    let Err(Error::Invalid(ds)) = check_secret_references(&inv) else {
        panic!()
    };
    let m = ds.to_string();
    assert_eq!(m.lines().count(), 2, "{m}");
    assert!(!sidecar_of(&hosts).exists());
}

#[test]
fn flow_style_host_is_refused_for_writing() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "h.json",
        "{\"apiVersion\": \"metal3.io/v1alpha1\", \"kind\": \"BareMetalHost\", \"metadata\": {\"name\": \"j\"}, \"spec\": {\"online\": true}}\n",
    );
    let msg = bad_input(std::slice::from_ref(&p));
    assert!(
        msg.starts_with(&format!(
            "{}:1:1: BareMetalHost default/j: not a block-style",
            p.display()
        )),
        "{msg}"
    );
    // Reading it is fine.
    assert_eq!(load(&[p], LoadMode::ReadOnly).unwrap().hosts.len(), 1);
}

#[test]
fn commit_writes_status_and_sidecar_then_nothing_when_stable() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "hosts.yaml", HOSTS);
    let s = write(dir.path(), "secrets.yaml", SECRETS);
    let paths = [p.clone(), s.clone()];
    let secrets_stamp = stamp(&s);

    let mut inv = load_checked(&paths, LoadMode::Write).unwrap();
    assert!(inv.files[0].lock.is_some());
    // Nothing staged: nothing written.
    assert_eq!(inv.commit_all().unwrap(), CommitStats::default());
    assert!(!sidecar_of(&p).exists());

    let books: Vec<_> = inv
        .hosts
        .iter()
        .map(|h| (h.key.clone(), h.record.book.clone()))
        .collect();
    let f = &mut inv.files[0];
    f.stage_status(0, Some(&status("OK"))).unwrap();
    for (k, b) in &books {
        f.stage_bookkeeping(k, Some(b)).unwrap();
    }
    assert!(f.has_changes());
    assert_eq!(
        f.commit().unwrap(),
        CommitStats {
            file_written: true,
            sidecar_written: true
        }
    );
    drop(inv);
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(
        text.starts_with(&HOSTS[..HOSTS.find("---").unwrap()]),
        "{text}"
    );
    assert!(
        text.contains("    credentialsName: host-0-bmc\nstatus:\n  operationalStatus: OK\n"),
        "{text}"
    );
    assert!(
        text.ends_with(&HOSTS[HOSTS.find("---").unwrap()..]),
        "{text}"
    );
    assert_eq!(stamp(&s), secrets_stamp, "Secrets files are never written");

    // A second run that computes the same results writes nothing.
    let (file_stamp, side_stamp) = (stamp(&p), stamp(&sidecar_of(&p)));
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut inv = load_checked(&paths, LoadMode::Write).unwrap();
    for (h, (k, b)) in inv.hosts.iter().zip(&books) {
        assert_eq!(&h.record.book, b, "{k}");
    }
    assert_eq!(inv.hosts[0].record.host.status, Some(status("OK")));
    let entries: Vec<_> = inv
        .hosts
        .iter()
        .map(|h| (h.doc, h.key.clone(), h.record.clone()))
        .collect();
    let f = &mut inv.files[0];
    for (doc, key, rec) in &entries {
        f.stage_status(*doc, rec.host.status.as_ref()).unwrap();
        f.stage_bookkeeping(key, Some(&rec.book)).unwrap();
    }
    assert!(!f.stage_removed_annotations(0, &["nope"]).unwrap());
    assert!(!f.has_changes());
    assert_eq!(f.commit().unwrap(), CommitStats::default());
    drop(inv);
    assert_eq!(stamp(&p), file_stamp);
    assert_eq!(stamp(&sidecar_of(&p)), side_stamp);

    // Removing the status again restores the original bytes.
    let mut inv = load(&paths, LoadMode::Write).unwrap();
    inv.files[0]
        .stage_status::<BareMetalHostStatus>(0, None)
        .unwrap();
    let stats = inv.commit_all().unwrap();
    assert!(stats.file_written && !stats.sidecar_written);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), HOSTS);
}

#[test]
fn annotations_removed_and_consecutive_commits() {
    let dir = tempfile::tempdir().unwrap();
    let text = "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: h\n  annotations:\n    reboot.metal3.io: \"\"\n    keep: x\nspec:\n  online: true\n";
    let p = write(dir.path(), "hosts.yaml", text);
    let mut inv = load(std::slice::from_ref(&p), LoadMode::Write).unwrap();
    let f = &mut inv.files[0];
    assert!(
        f.stage_removed_annotations(0, &["reboot.metal3.io"])
            .unwrap()
    );
    assert!(f.commit().unwrap().file_written);
    // The file was re-read after the commit: further edits apply to the new text.
    f.stage_status(0, Some(&status("discovered"))).unwrap();
    assert!(f.commit().unwrap().file_written);
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: h\n  annotations:\n    keep: x\nspec:\n  online: true\nstatus:\n  operationalStatus: discovered\n  lastUpdated: \"2024-01-01T00:00:00Z\"\n  provisioning:\n    state: available\n    ID: abc\n    image:\n      url: \"\"\n  errorMessage: \"\"\n  poweredOn: true\n  errorCount: 0\n  provisioningFailCount: 0\n"
    );
    drop(inv);
    let inv = load(&[p], LoadMode::ReadOnly).unwrap();
    assert_eq!(inv.hosts[0].record.host.status, Some(status("discovered")));
}

#[test]
fn symlinked_file_stays_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let real_dir = dir.path().join("checkout");
    std::fs::create_dir(&real_dir).unwrap();
    let target = write(&real_dir, "real-hosts.yaml", HOSTS);
    write(dir.path(), "secrets.yaml", SECRETS);
    let link = dir.path().join("hosts.yaml");
    std::os::unix::fs::symlink("checkout/real-hosts.yaml", &link).unwrap();

    let mut inv = load_checked(&[dir.path().to_path_buf()], LoadMode::Write).unwrap();
    let f = &mut inv.files[0];
    assert_eq!(f.path(), link);
    assert_eq!(f.real_path(), std::fs::canonicalize(&target).unwrap());
    f.stage_status(1, Some(&status("OK"))).unwrap();
    let key = ObjectKey::new("lab", "host-1");
    let book = inv.host(&key).unwrap().record.book.clone();
    inv.files[0].stage_bookkeeping(&key, Some(&book)).unwrap();
    inv.commit_all().unwrap();

    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("checkout/real-hosts.yaml")
    );
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .contains("status:\n  operationalStatus: OK\n")
    );
    // Sidecar and lock live beside the target.
    assert!(real_dir.join(".bmhctl/real-hosts.yaml.state.json").exists());
    assert!(real_dir.join(".bmhctl/real-hosts.yaml.lock").exists());
    assert!(!dir.path().join(".bmhctl").exists());
}

#[test]
fn mode_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "hosts.yaml", HOSTS);
    write(dir.path(), "secrets.yaml", SECRETS);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut inv = load(&[dir.path().to_path_buf()], LoadMode::Write).unwrap();
    inv.files[0].stage_status(0, Some(&status("OK"))).unwrap();
    assert!(inv.commit_all().unwrap().file_written);
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600);
}

#[test]
fn external_change_is_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "hosts.yaml", HOSTS);
    let mut inv = load(std::slice::from_ref(&p), LoadMode::Write).unwrap();
    let edited = HOSTS.replace("online: true", "online: false");
    std::fs::write(&p, &edited).unwrap();
    let key = inv.hosts[0].key.clone();
    let book = inv.hosts[0].record.book.clone();
    let f = &mut inv.files[0];
    f.stage_status(0, Some(&status("OK"))).unwrap();
    f.stage_bookkeeping(&key, Some(&book)).unwrap();
    let err = f.commit().unwrap_err();
    let Error::Conflict(msg) = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        msg,
        format!(
            "{} changed on disk since bmhctl read it; not overwriting it (the edit is kept)",
            p.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), edited);
    assert!(!sidecar_of(&p).exists());
}

/// The file a commit's replace moves aside is known by its size, modification time and inode
/// at any name (its text is not read again); another file is compared byte by byte, and an
/// edit of the file aside is seen.
#[test]
fn the_file_moved_aside_is_known_by_its_stamp_and_an_edit_of_it_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "hosts.yaml", HOSTS);
    let mut inv = load(std::slice::from_ref(&p), LoadMode::Write).unwrap();
    let f = &mut inv.files[0];
    f.stage_status(0, Some(&status("OK"))).unwrap();
    assert!(f.commit().unwrap().file_written);
    let aside = dir.path().join(".hosts.yaml.aside");
    std::fs::hard_link(&p, &aside).unwrap();
    assert!(f.holds_as_read(&aside).unwrap());
    let copy = dir.path().join("copy.yaml");
    std::fs::copy(&p, &copy).unwrap();
    assert!(f.holds_as_read(&copy).unwrap());
    std::fs::write(&copy, "# another text\n").unwrap();
    assert!(!f.holds_as_read(&copy).unwrap());
    let mut text = std::fs::read_to_string(&aside).unwrap();
    text.push_str("# edited\n");
    std::fs::write(&aside, text).unwrap();
    assert!(!f.holds_as_read(&aside).unwrap());
}

#[test]
fn second_writer_conflicts_readers_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "hosts.yaml", HOSTS);
    let s = write(dir.path(), "secrets.yaml", SECRETS);
    let first = load(&[p.clone(), s.clone()], LoadMode::Write).unwrap();
    let err = load(&[dir.path().to_path_buf()], LoadMode::Write).unwrap_err();
    let Error::Conflict(msg) = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        msg,
        format!(
            "{} is in use by another bmhctl process (pid {})",
            dir.path().join("hosts.yaml").display(),
            std::process::id()
        )
    );
    // Readers take no lock; a Secrets-only file is never locked.
    load(std::slice::from_ref(&p), LoadMode::ReadOnly).unwrap();
    load(std::slice::from_ref(&s), LoadMode::Write).unwrap();
    drop(first);
    load(&[p], LoadMode::Write).unwrap();
}

#[test]
fn generation_bumps_when_the_spec_changes() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "hosts.yaml", HOSTS);
    let paths = [p.clone()];
    let save_books = |inv: &mut Inventory| {
        let books: Vec<_> = inv
            .hosts
            .iter()
            .map(|h| (h.key.clone(), h.record.book.clone()))
            .collect();
        for (k, b) in &books {
            inv.files[0].stage_bookkeeping(k, Some(b)).unwrap();
        }
        inv.commit_all().unwrap();
    };
    let mut inv = load(&paths, LoadMode::Write).unwrap();
    let first = inv.hosts[0].record.book.clone();
    save_books(&mut inv);
    drop(inv);

    // Unchanged spec (a comment and key order don't count): same generation and uid.
    std::fs::write(&p, HOSTS.replace("  online: true\n  bmc:\n    address: ipmi://10.0.0.1\n    credentialsName: host-0-bmc\n", "  bmc:\n    credentialsName: host-0-bmc # c\n    address: ipmi://10.0.0.1\n  online: true\n")).unwrap();
    let mut inv = load(&paths, LoadMode::Write).unwrap();
    assert_eq!(inv.hosts[0].record.book, first);
    save_books(&mut inv);
    drop(inv);

    std::fs::write(&p, HOSTS.replace("online: true", "online: false")).unwrap();
    let mut inv = load(&paths, LoadMode::Write).unwrap();
    let b = &inv.hosts[0].record.book;
    assert_eq!(b.uid, first.uid);
    assert_eq!(b.generation, 2);
    assert_ne!(b.spec_hash, first.spec_hash);
    assert_eq!(b.spec_snapshot.as_ref().unwrap().value()["online"], false);
    assert_eq!(
        inv.hosts[1].record.book.generation, 1,
        "other host unchanged"
    );
    save_books(&mut inv);
    drop(inv);
    // Not saved: loading again without a change keeps generation 2, and a new bump is 3.
    std::fs::write(
        &p,
        HOSTS
            .replace("online: true", "online: false")
            .replace("10.0.0.1", "10.0.0.9"),
    )
    .unwrap();
    let inv = load(&paths, LoadMode::Write).unwrap();
    assert_eq!(inv.hosts[0].record.book.generation, 3);
}

#[test]
fn stale_sidecar_entries_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "hosts.yaml", HOSTS);
    let mut inv = load(std::slice::from_ref(&p), LoadMode::Write).unwrap();
    let books: Vec<_> = inv
        .hosts
        .iter()
        .map(|h| (h.key.clone(), h.record.book.clone()))
        .collect();
    for (k, b) in &books {
        inv.files[0].stage_bookkeeping(k, Some(b)).unwrap();
    }
    inv.commit_all().unwrap();
    drop(inv);
    // host-1 leaves the file.
    std::fs::write(&p, &HOSTS[..HOSTS.find("---").unwrap()]).unwrap();
    let mut inv = load(std::slice::from_ref(&p), LoadMode::Write).unwrap();
    assert_eq!(inv.hosts.len(), 1);
    let stats = inv.commit_all().unwrap();
    assert!(stats.sidecar_written && !stats.file_written);
    let sc = Sidecar::load(&std::fs::canonicalize(&p).unwrap()).unwrap();
    assert!(sc.get("default/host-0").is_some());
    assert!(sc.get("lab/host-1").is_none());
}

#[test]
fn corrupt_sidecar_is_reported_with_other_problems() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "hosts.yaml", HOSTS);
    let sc = sidecar_of(&p);
    std::fs::create_dir_all(sc.parent().unwrap()).unwrap();
    std::fs::write(&sc, "garbage").unwrap();
    let msg = bad_input(&[p]);
    assert!(
        msg.starts_with(&format!("{}: cannot read", sc.display())),
        "{msg}"
    );
    assert_eq!(std::fs::read_to_string(&sc).unwrap(), "garbage");
}

const WIDGETS: &str = "apiVersion: example.bmhctl.metal3.io/v1alpha1
kind: Widget
metadata:
  name: w
spec:
  colour: blue
---
apiVersion: example.bmhctl.metal3.io/v1alpha1
kind: Widget
metadata:
  name: w
  namespace: elsewhere
spec:
  colour: red
---
apiVersion: metal3.io/v1alpha1
kind: BMCEventSubscription
metadata:
  name: g
spec:
  hostName: host-0
  destination: https://events.example/
---
apiVersion: metal3.io/v1alpha1
kind: BMCEventSubscription
metadata:
  name: g2
spec:
  hostName: host-0
  destination: https://events.example/
";

fn widget_options(namespace: Option<&str>) -> LoadOptions {
    LoadOptions {
        extra_kinds: vec![bmhctl_plugin_sdk::abi::ObjectKind {
            api_version: "example.bmhctl.metal3.io/v1alpha1".into(),
            kind: "Widget".into(),
        }],
        namespace: namespace.map(str::to_string),
        ..LoadOptions::default()
    }
}

#[test]
fn extra_kinds_are_kept_as_objects_in_their_namespace() {
    use crate::objects::ObjectSource;
    let dir = tempfile::tempdir().unwrap();
    let h = write(dir.path(), "hosts.yaml", HOSTS);
    let w = write(dir.path(), "widgets.yaml", WIDGETS);
    let paths = [h, w];
    let api = "example.bmhctl.metal3.io/v1alpha1";

    // Every namespace.
    let inv = load_with(&paths, LoadMode::ReadOnly, &widget_options(None)).unwrap();
    let keys: Vec<String> = inv.objects.object_keys().map(|k| k.to_string()).collect();
    assert_eq!(
        keys,
        [
            format!("{api} Widget default/w"),
            format!("{api} Widget elsewhere/w"),
        ]
    );
    let blue = inv
        .objects
        .object(api, "Widget", &ObjectKey::new("default", "w"))
        .unwrap();
    assert_eq!(blue["spec"]["colour"], "blue");
    // The namespace is filled in, as an API server would.
    assert_eq!(blue["metadata"]["namespace"], "default");
    // BMCEventSubscriptions (not asked for) and the HardwareData are no plugin's objects.
    assert_eq!(inv.other_documents.len(), 5);
    assert_eq!(
        inv.objects.object(
            "metal3.io/v1alpha1",
            "BMCEventSubscription",
            &ObjectKey::new("default", "g")
        ),
        None
    );
    // Secrets are still Secrets.
    assert!(
        inv.objects
            .object("v1", "Secret", &ObjectKey::new("default", "host-0-bmc"))
            .is_none(),
        "no Secrets file given"
    );

    // One namespace only.
    let inv = load_with(
        &paths,
        LoadMode::ReadOnly,
        &widget_options(Some("elsewhere")),
    )
    .unwrap();
    let keys: Vec<String> = inv.objects.object_keys().map(|k| k.to_string()).collect();
    assert_eq!(keys, [format!("{api} Widget elsewhere/w")]);
}

#[test]
fn duplicate_extra_kind_objects_name_both_places() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.yaml", WIDGETS);
    let b = write(
        dir.path(),
        "b.yaml",
        "apiVersion: example.bmhctl.metal3.io/v1alpha1\nkind: Widget\nmetadata:\n  name: w\n---\napiVersion: example.bmhctl.metal3.io/v1alpha1\nkind: Widget\nmetadata:\n  namespace: x\n",
    );
    let paths = [a.clone(), b.clone()];
    let Err(Error::Invalid(ds)) = load_with(&paths, LoadMode::ReadOnly, &widget_options(None))
    else {
        panic!("loaded")
    };
    let msg = ds.to_string();
    assert_eq!(
        msg,
        format!(
            "{b}:4:9: Widget default/w: defined more than once (first at {a}:4:9)\n\
                 {b}:9:3: Widget without metadata.name",
            a = a.display(),
            b = b.display()
        )
    );
    // Out of the namespace: no problem.
    load_with(&paths, LoadMode::ReadOnly, &widget_options(Some("other"))).unwrap();
    // Without the extra kind, a Widget is another API group's kind: skipped, not kept.
    let inv = load(&paths, LoadMode::ReadOnly).unwrap();
    assert_eq!(inv.objects.object_keys().count(), 0);
}

const FIRMWARE: &str = "apiVersion: metal3.io/v1alpha1
kind: HostFirmwareSettings
metadata:
  name: host-0
spec:
  settings:
    ProcVirtualization: Disabled # off for the benchmark
    NetworkBootRetryCount: 7
---
# updates
apiVersion: metal3.io/v1alpha1
kind: HostFirmwareComponents
metadata:
  name: host-1
  namespace: lab
spec:
  updates:
  - component: bmc
    url: http://fw.example/bmc.bin
";

#[test]
fn firmware_objects_load_with_their_host_and_their_status_is_written_back() {
    use bmh_api::{HostFirmwareComponentsStatus, HostFirmwareSettingsStatus, IntOrString};
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{HOSTS}---\n{FIRMWARE}");
    let p = write(dir.path(), "hosts.yaml", &text);
    let paths = [p.clone()];
    let mut inv = load(&paths, LoadMode::Write).unwrap();
    let h0 = &inv.hosts[0];
    assert_eq!(
        (h0.firmware_settings_doc, h0.firmware_components_doc),
        (Some(3), None)
    );
    let hfs = h0.record.firmware_settings.clone().unwrap();
    assert_eq!(
        hfs.spec.settings["NetworkBootRetryCount"],
        IntOrString::Int(7)
    );
    assert_eq!(hfs.metadata.generation, 1);
    assert_eq!(h0.record.book.firmware.settings_generation, 1);
    assert_eq!(h0.record.book.firmware.components_generation, 0);
    let h1 = &inv.hosts[1];
    assert_eq!(
        (h1.firmware_settings_doc, h1.firmware_components_doc),
        (None, Some(4))
    );
    let hfc = h1.record.firmware_components.clone().unwrap();
    assert_eq!(hfc.spec.updates[0].component, "bmc");
    assert_eq!(hfc.metadata.generation, 1);
    // Not "other" documents, and not offered to plugins that did not ask for them.
    assert_eq!(inv.other_documents.len(), 1);
    assert_eq!(inv.objects.object_keys().count(), 0);

    let hfs_status: HostFirmwareSettingsStatus = serde_json::from_value(serde_json::json!({
        "schema": {"name": "schema-01234567", "namespace": "default"},
        "settings": {"ProcVirtualization": "Enabled", "NetworkBootRetryCount": "7"},
        "lastUpdated": "2024-01-01T00:00:00Z",
        "conditions": [{"type": "ChangeDetected", "status": "True", "observedGeneration": 1,
                        "lastTransitionTime": "2024-01-01T00:00:00Z", "reason": "Success",
                        "message": ""}],
    }))
    .unwrap();
    let hfc_status: HostFirmwareComponentsStatus = serde_json::from_value(serde_json::json!({
        "components": [{"component": "bmc", "initialVersion": "1"}],
    }))
    .unwrap();
    let books: Vec<_> = inv
        .hosts
        .iter()
        .map(|h| (h.key.clone(), h.record.book.clone()))
        .collect();
    let f = &mut inv.files[0];
    f.stage_status(3, Some(&hfs_status)).unwrap();
    f.stage_status(4, Some(&hfc_status)).unwrap();
    for (k, b) in &books {
        f.stage_bookkeeping(k, Some(b)).unwrap();
    }
    assert!(f.commit().unwrap().file_written);
    drop(inv);
    let after = std::fs::read_to_string(&p).unwrap();
    // Every byte but the two status blocks is kept.
    assert!(
            after.contains("    NetworkBootRetryCount: 7\nstatus:\n  schema:\n    namespace: default\n    name: schema-01234567\n  settings:\n"),
            "{after}"
        );
    assert!(after.contains("    ProcVirtualization: Disabled # off for the benchmark\n"));
    assert!(
            after.ends_with("    url: http://fw.example/bmc.bin\nstatus:\n  components:\n  - component: bmc\n    initialVersion: \"1\"\n"),
            "{after}"
        );
    let stripped: String = {
        let mut out = String::new();
        let mut skipping = false;
        for line in after.split_inclusive('\n') {
            if line.starts_with("status:") {
                skipping = true;
                continue;
            }
            if skipping && line.starts_with(' ') {
                continue;
            }
            skipping = false;
            out.push_str(line);
        }
        out
    };
    assert_eq!(stripped, text);

    // Loaded again: the statuses are read; staging them again writes nothing.
    let mut inv = load(&paths, LoadMode::Write).unwrap();
    let rec = &inv.hosts[0].record;
    assert_eq!(
        rec.firmware_settings.as_ref().unwrap().status,
        Some(hfs_status.clone())
    );
    assert_eq!(rec.book.firmware.settings_generation, 1);
    let f = &mut inv.files[0];
    f.stage_status(3, Some(&hfs_status)).unwrap();
    f.stage_status(4, Some(&hfc_status)).unwrap();
    assert!(!f.has_changes());
    assert_eq!(f.commit().unwrap(), CommitStats::default());
    drop(inv);

    // A spec change bumps the generation of that object only.
    std::fs::write(
        &p,
        after.replace("NetworkBootRetryCount: 7", "NetworkBootRetryCount: 8"),
    )
    .unwrap();
    let inv = load(&paths, LoadMode::ReadOnly).unwrap();
    let rec = &inv.hosts[0].record;
    assert_eq!(rec.book.firmware.settings_generation, 2);
    assert_eq!(
        rec.firmware_settings.as_ref().unwrap().metadata.generation,
        2
    );
    assert_eq!(inv.hosts[1].record.book.firmware.components_generation, 1);
}

#[test]
fn firmware_objects_are_offered_to_plugins_that_ask_for_them() {
    use crate::objects::ObjectSource;
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "hosts.yaml", &format!("{HOSTS}---\n{FIRMWARE}"));
    let options = LoadOptions {
        extra_kinds: vec![bmhctl_plugin_sdk::abi::ObjectKind {
            api_version: "metal3.io/v1alpha1".into(),
            kind: "HostFirmwareSettings".into(),
        }],
        namespace: None,
        ..LoadOptions::default()
    };
    let inv = load_with(&[p], LoadMode::ReadOnly, &options).unwrap();
    let v = inv
        .objects
        .object(
            "metal3.io/v1alpha1",
            "HostFirmwareSettings",
            &ObjectKey::new("default", "host-0"),
        )
        .unwrap();
    assert_eq!(v["spec"]["settings"]["NetworkBootRetryCount"], 7);
    assert_eq!(v["metadata"]["namespace"], "default");
}

#[test]
fn firmware_objects_without_their_host_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.yaml", HOSTS);
    let s = write(dir.path(), "s.yaml", SECRETS);
    let b = write(
        dir.path(),
        "b.yaml",
        "apiVersion: metal3.io/v1alpha1\nkind: HostFirmwareSettings\nmetadata:\n  name: host-0\nspec:\n  settings: {}\n---\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareComponents\nmetadata:\n  name: ghost\nspec:\n  updates: []\n---\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareSettings\nmetadata:\n  name: host-0\nspec:\n  settings:\n    A: true\n---\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareComponents\nmetadata:\n  namespace: lab\n",
    );
    let msg = bad_input(&[a.clone(), b.clone(), s]);
    assert_eq!(
        msg,
        format!(
            "{b}:21:8: HostFirmwareSettings default/host-0: spec.settings.A: invalid type: boolean `true`, expected an integer or a string\n\
                 {b}:26:3: HostFirmwareComponents without metadata.name\n\
                 {b}:18:9: HostFirmwareSettings default/host-0: defined more than once (first at {b}:4:9)\n\
                 {b}:4:9: HostFirmwareSettings default/host-0: metadata.name: must be in the same file as BareMetalHost default/host-0 (which is in {a})\n\
                 {b}:11:9: HostFirmwareComponents default/ghost: metadata.name: no BareMetalHost default/ghost in the given files (a HostFirmwareComponents belongs to the BareMetalHost of the same namespace and name)\n\
                 {b}:18:9: HostFirmwareSettings default/host-0: metadata.name: must be in the same file as BareMetalHost default/host-0 (which is in {a})",
            a = a.display(),
            b = b.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), HOSTS);
    assert!(!sidecar_of(&a).exists());
}

#[test]
fn missing_path_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nope.yaml");
    assert_eq!(
        bad_input(std::slice::from_ref(&p)),
        format!("{}: no such file or directory", p.display())
    );
}

/// The stamps bmhctl compares are (size, mtime, inode): make a rewrite visible even within
/// the file system's timestamp granularity.
fn rewrite(p: &Path, text: &str) {
    let tmp = p.with_extension("tmp-rewrite");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, p).unwrap();
}

#[test]
fn the_file_source_reports_edits_of_the_files_not_its_own_saves() {
    use crate::persist::files::file_source::FileSource;
    use crate::persist::{HostSource, SourceChange, Staged};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hosts = write(d, "hosts.yaml", HOSTS);
    let secrets = write(d, "secrets.yml", SECRETS);
    let paths = vec![d.to_path_buf()];
    let inv = load_checked(&paths, LoadMode::Write).unwrap();
    let source = FileSource::new(inv, &LoadOptions::default());
    let h0 = ObjectKey::new("default", "host-0");
    let h1 = ObjectKey::new("lab", "host-1");
    assert_eq!(
        source.changes().unwrap(),
        [
            SourceChange::Host(h0.clone()),
            SourceChange::Host(h1.clone())
        ]
    );
    assert_eq!(source.changes().unwrap(), []);

    // Its own save is not a change; what it staged is what `load` answers.
    let host = source.add_host(h0.clone());
    let st = status("OK");
    let ticket = source
        .stage(
            host,
            &Staged {
                status: crate::persist::Change::Set(&st),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(source.commit(source.group_of(host)).unwrap(), ticket);
    assert_eq!(source.changes().unwrap(), []);
    assert_eq!(source.load(&h0).unwrap().unwrap().host.status, Some(st));

    // An edit: every host of the file is read again; one gone is gone.
    let text = std::fs::read_to_string(&hosts).unwrap();
    let (first, _) = text
        .split_once("\n---\napiVersion: metal3.io/v1alpha1")
        .unwrap();
    rewrite(&hosts, &format!("{first}\n"));
    assert_eq!(
        source.changes().unwrap(),
        [
            SourceChange::HostGone(h1.clone()),
            SourceChange::Host(h0.clone()),
            SourceChange::Objects
        ]
    );
    assert!(source.load(&h1).unwrap().is_none());
    assert_eq!(
        source
            .load(&h0)
            .unwrap()
            .unwrap()
            .status()
            .operational_status
            .as_str(),
        "OK",
        "the saved status is what the file holds"
    );

    // A Secret's file changing is a change of the objects only.
    let rotated = SECRETS.replace("override", "rotated");
    rewrite(&secrets, &rotated);
    assert_eq!(source.changes().unwrap(), [SourceChange::Objects]);
    let objects = source.objects().unwrap();
    assert_eq!(
        objects
            .get_secret(&h0_bmc())
            .unwrap()
            .get_str("password")
            .as_deref(),
        Some("rotated")
    );

    // A save that meets an edit made meanwhile: the file is read again, the status this run
    // holds is spliced into the edited text (the edit of everything else wins) and saved, and
    // its hosts are reported changed.
    let st = status("Error");
    let ticket = source
        .stage(
            host,
            &Staged {
                status: crate::persist::Change::Set(&st),
                ..Default::default()
            },
        )
        .unwrap();
    let edited = std::fs::read_to_string(&hosts)
        .unwrap()
        .replace("online: true", "online: false");
    rewrite(&hosts, &edited);
    assert_eq!(source.commit(source.group_of(host)).unwrap(), ticket);
    assert_eq!(source.changes().unwrap(), [SourceChange::Host(h0.clone())]);
    let now = source.load(&h0).unwrap().unwrap();
    assert!(!now.host.spec.online, "the edit");
    assert_eq!(
        now.status().operational_status.as_str(),
        "Error",
        "the status the run holds"
    );
    let saved = std::fs::read_to_string(&hosts).unwrap();
    let spec_of = |t: &str| t.split("\nstatus:\n").next().unwrap().to_string();
    assert_eq!(spec_of(&saved), spec_of(&edited), "{saved}");
    assert!(saved.contains("operationalStatus: Error"), "{saved}");

    // A file half-way through an edit is left alone until it is whole again.
    rewrite(&hosts, "{{{ not yaml");
    assert_eq!(source.changes().unwrap(), []);
    rewrite(&hosts, HOSTS);
    assert_eq!(
        source.changes().unwrap(),
        [
            SourceChange::Host(h0),
            SourceChange::Host(h1),
            SourceChange::Objects
        ]
    );
}

fn h0_bmc() -> ObjectKey {
    ObjectKey::new("default", "host-0-bmc")
}

#[test]
fn a_subscription_status_written_over_an_edit_is_refused_and_the_file_read_again() {
    use crate::persist::HostSource;
    use crate::persist::files::file_source::FileSource;
    let dir = tempfile::tempdir().unwrap();
    let sub = "---\napiVersion: metal3.io/v1alpha1\nkind: BMCEventSubscription\nmetadata:\n  name: sub\nspec:\n  hostName: host-0\n  destination: https://events.example/\n";
    let p = write(dir.path(), "hosts.yaml", &format!("{HOSTS}{sub}"));
    let paths = vec![p.clone()];
    let inv = load_with(&paths, LoadMode::Write, &LoadOptions::default()).unwrap();
    let source = FileSource::new(inv, &LoadOptions::default());
    let key = ObjectKey::new("default", "sub");
    let status = bmh_api::BmcEventSubscriptionStatus {
        subscription_id: "id-1".into(),
        ..Default::default()
    };
    assert!(
        source
            .write_event_subscription_status(&key, &status)
            .unwrap()
    );
    let written = std::fs::read_to_string(&p).unwrap();
    assert!(
        written.ends_with("status:\n  subscriptionID: id-1\n"),
        "{written}"
    );
    assert_eq!(
        source.event_subscriptions().unwrap()[0].subscription_id(),
        "id-1"
    );
    // The user removes the subscription meanwhile: the write is refused (not made over the
    // edit), and the source reads the file again, without the subscription.
    rewrite(&p, HOSTS);
    let status = bmh_api::BmcEventSubscriptionStatus {
        error: "failed to create a subscription".into(),
        ..Default::default()
    };
    let err = source
        .write_event_subscription_status(&key, &status)
        .unwrap_err();
    assert!(matches!(err, Error::Conflict(_)), "{err:?}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), HOSTS);
    assert!(source.event_subscriptions().unwrap().is_empty());
    assert!(
        !source
            .write_event_subscription_status(&key, &status)
            .unwrap()
    );
}

/// `provision`'s source (records handed over): an editor saving a copy read before the run's
/// last save (an older status in it) gets its spec edit kept and the run's status back; the
/// edited host is reported changed, the one removed gone.
#[test]
fn an_edit_from_a_stale_copy_keeps_the_users_spec_and_the_runs_status() {
    use crate::persist::files::file_source::FileSource;
    use crate::persist::{HostSource, SourceChange, Staged};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hosts = write(d, "hosts.yaml", HOSTS);
    write(d, "secrets.yml", SECRETS);
    let paths = vec![d.to_path_buf()];
    let inv = load_checked(&paths, LoadMode::Write).unwrap();
    let (source, records) = FileSource::handing_over(inv, &LoadOptions::default());
    assert_eq!(records.len(), 2);
    // The run's hosts are handed over: the first look reports no change.
    assert_eq!(source.changes().unwrap(), []);
    let h0 = ObjectKey::new("default", "host-0");
    let h1 = ObjectKey::new("lab", "host-1");
    let host = source.add_host(h0.clone());
    source.add_host(h1.clone());
    let stale = std::fs::read_to_string(&hosts).unwrap();
    let st = status("OK");
    let ticket = source
        .stage(
            host,
            &Staged {
                status: crate::persist::Change::Set(&st),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(source.commit(source.group_of(host)).unwrap(), ticket);
    assert!(
        std::fs::read_to_string(&hosts)
            .unwrap()
            .contains("operationalStatus: OK")
    );

    // The editor's copy: no status, host-0 turned off, host-1 removed.
    let (first, _) = stale
        .split_once("\n---\napiVersion: metal3.io/v1alpha1")
        .unwrap();
    let edited = format!("{first}\n").replace("online: true", "online: false");
    assert!(!edited.contains("status:"), "{edited}");
    rewrite(&hosts, &edited);
    let st = status("Error");
    let ticket = source
        .stage(
            host,
            &Staged {
                status: crate::persist::Change::Set(&st),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(source.commit(source.group_of(host)).unwrap(), ticket);
    let saved = std::fs::read_to_string(&hosts).unwrap();
    assert!(
        saved.starts_with(&edited),
        "the edit, byte for byte:\n{saved}"
    );
    assert!(saved.contains("operationalStatus: Error"), "{saved}");
    let changes = source.changes().unwrap();
    assert!(
        changes.contains(&SourceChange::Host(h0.clone())),
        "{changes:?}"
    );
    assert!(
        changes.contains(&SourceChange::HostGone(h1.clone())),
        "{changes:?}"
    );
    let now = source.load(&h0).unwrap().unwrap();
    assert!(!now.host.spec.online);
    assert!(source.load(&h1).unwrap().is_none());
}
