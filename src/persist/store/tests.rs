use super::*;
use crate::error::Error;
use serde_json::json;

fn widget(name: &str, colour: &str) -> (TypedKey, Value) {
    let key = TypedKey::new("example.com/v1", "Widget", ObjectKey::new("default", name));
    let value = json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"colour": colour},
    });
    (key, value)
}

#[test]
fn resource_directories_are_kubernetes_resource_names() {
    assert_eq!(
        resource_dir("metal3.io/v1alpha1", "BareMetalHost"),
        "baremetalhosts"
    );
    assert_eq!(resource_dir("v1", "Secret"), "secrets");
    assert_eq!(
        resource_dir("metal3.io/v1alpha1", "HardwareData"),
        "hardwaredata"
    );
    assert_eq!(
        resource_dir("metal3.io/v1alpha1", "HostUpdatePolicy"),
        "hostupdatepolicies"
    );
    assert_eq!(
        resource_dir("example.com/v1", "Widget"),
        "widgets.example.com"
    );
}

#[test]
fn writes_are_atomic_versioned_and_skip_no_op_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("store")).unwrap();
    let (key, value) = widget("w", "blue");
    assert_eq!(
        store.write(&key, value.clone(), Expect::Absent).unwrap(),
        Written::Created
    );
    let path = dir.path().join("store/widgets.example.com/default/w.yaml");
    assert_eq!(store.path_of(&key), path);
    let stored = store.get(&key).unwrap().unwrap();
    assert_eq!(stored.version, 1);
    assert_eq!(stored.value["metadata"]["resourceVersion"], "1");
    assert_eq!(stored.value["spec"]["colour"], "blue");
    // The same content again: nothing is written.
    let before = std::fs::metadata(&path).unwrap().modified().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(
        store
            .write(&key, value.clone(), Expect::Version(1))
            .unwrap(),
        Written::Unchanged
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        before
    );
    let (_, red) = widget("w", "red");
    assert_eq!(
        store.write(&key, red, Expect::Version(1)).unwrap(),
        Written::Updated
    );
    assert_eq!(store.get(&key).unwrap().unwrap().version, 2);
    // No temporary file is left beside the object.
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["w.yaml"]);
}

#[test]
fn a_stale_version_is_a_conflict_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (key, value) = widget("w", "blue");
    store.write(&key, value, Expect::Absent).unwrap();
    let read = store.get(&key).unwrap().unwrap();
    // Another writer changes it meanwhile.
    let (_, green) = widget("w", "green");
    store
        .write(&key, green, Expect::Version(read.version))
        .unwrap();
    let (_, red) = widget("w", "red");
    let err = store
        .write(&key, red.clone(), Expect::Version(read.version))
        .unwrap_err();
    assert!(
        matches!(err, Error::Conflict(ref m) if m.contains("changed in the store meanwhile")),
        "{err}"
    );
    assert_eq!(
        store.get(&key).unwrap().unwrap().value["spec"]["colour"],
        "green"
    );
    // A create of an existing object conflicts too.
    assert!(matches!(
        store.write(&key, red, Expect::Absent),
        Err(Error::Conflict(_))
    ));
    // update() applies to the current object under the lock.
    store
        .update(&key, |cur| {
            let mut v = cur.unwrap().clone();
            v["status"] = json!({"seen": true});
            Ok(Some(v))
        })
        .unwrap();
    let now = store.get(&key).unwrap().unwrap();
    assert_eq!(now.value["spec"]["colour"], "green");
    assert_eq!(now.value["status"]["seen"], true);
    assert_eq!(now.version, 3);
}

#[cfg(unix)]
#[test]
fn every_object_is_written_0600() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s")).unwrap();
    let key = TypedKey::new("v1", "Secret", ObjectKey::new("lab", "bmc"));
    let value = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "bmc", "namespace": "lab"}, "data": {"password": "cHc="}});
    store.write(&key, value, Expect::Absent).unwrap();
    let path = store.path_of(&key);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    // Even when someone widened it, the next write narrows it again.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    store
        .update(&key, |cur| {
            let mut v = cur.unwrap().clone();
            v["data"]["username"] = json!("YQ==");
            Ok(Some(v))
        })
        .unwrap();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&dir.path().join("s")), 0o700);
    let (widget_key, w) = widget("w", "blue");
    store.write(&widget_key, w, Expect::Absent).unwrap();
    // Not only Secrets: the store is private as a whole.
    assert_eq!(mode(&store.path_of(&widget_key)), 0o600);
    assert_eq!(mode(store.path_of(&widget_key).parent().unwrap()), 0o700);
    let secret = store.object_map().unwrap();
    let s = secret.get_secret(&ObjectKey::new("lab", "bmc")).unwrap();
    assert_eq!(s.get_str("password").unwrap(), "pw");
    assert_eq!(s.get_str("username").unwrap(), "a");
}

#[test]
fn a_second_lease_is_refused_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let lease = store.acquire_lease().unwrap();
    // Another handle (another open file description: as another process would be).
    let other = Store::open(dir.path()).unwrap();
    let err = other.acquire_lease().unwrap_err();
    let Error::Conflict(msg) = err else {
        panic!("{err:?}")
    };
    assert!(
        msg.contains(&format!(
            "already being driven by bmhctl process {}",
            std::process::id()
        )),
        "{msg}"
    );
    assert!(
        msg.contains("only one `bmhctl watch` may run on a store"),
        "{msg}"
    );
    drop(lease);
    let again = other.acquire_lease().unwrap();
    assert_eq!(again.path(), dir.path().join(".lease"));
}

#[test]
fn events_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let key = ObjectKey::new("default", "h0");
    for i in 0..7 {
        let e = StoredEvent {
            time: format!("t{i}"),
            reason: "Reason".into(),
            message: format!("m{i}"),
        };
        store.record_events_bounded(&key, &[e], 5).unwrap();
    }
    let msgs: Vec<String> = store
        .events(&key)
        .unwrap()
        .into_iter()
        .map(|e| e.message)
        .collect();
    assert_eq!(msgs, ["m2", "m3", "m4", "m5", "m6"]);
    assert!(
        store
            .events(&ObjectKey::new("default", "other"))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn names_that_are_not_path_components_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (_, value) = widget("x", "blue");
    for bad in ["../x", ".hidden", "a/b", ""] {
        let key = TypedKey::new("example.com/v1", "Widget", ObjectKey::new("default", bad));
        assert!(
            matches!(
                store.write(&key, value.clone(), Expect::Absent),
                Err(Error::Invalid(_))
            ),
            "{bad}"
        );
    }
}

#[test]
fn a_host_record_round_trips_through_its_objects() {
    use crate::record::Bookkeeping;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let key = ObjectKey::new("default", "h0");
    let host: bmh_api::BareMetalHost = serde_json::from_value(json!({
        "apiVersion": "metal3.io/v1alpha1", "kind": "BareMetalHost",
        "metadata": {"name": "h0", "labels": {"rack": "r1"}},
        "spec": {"online": true, "bmc": {"address": "fake-hardware://h0", "credentialsName": "s"}},
    }))
    .unwrap();
    let book = Bookkeeping {
        uid: "u-1".into(),
        generation: 3,
        finalizers: vec!["baremetalhost.metal3.io".into()],
        architecture: "x86_64".into(),
        provisioner_state: Some(json!({"n": 1}).into()),
        ..Default::default()
    };
    let value = hosts::encode_host(&host, &book).unwrap();
    assert_eq!(value["metadata"]["uid"], "u-1");
    assert_eq!(value["metadata"]["generation"], 3);
    assert_eq!(value["bmhctl"]["architecture"], "x86_64");
    assert!(value["bmhctl"].get("uid").is_none());
    store
        .write(&hosts::host_key(&key), value, Expect::Absent)
        .unwrap();
    let rec = store.load_host(&key).unwrap().unwrap();
    assert_eq!(rec.book.uid, "u-1");
    assert_eq!(rec.book.generation, 3);
    assert_eq!(rec.book.finalizers, book.finalizers);
    assert_eq!(rec.book.provisioner_state, book.provisioner_state);
    assert_eq!(rec.host.metadata.labels["rack"], "r1");
    assert_eq!(store.host_keys().unwrap(), [key]);
}

#[test]
fn the_store_source_never_overwrites_an_apply_made_during_a_pass() {
    use crate::persist::{HostSource, Staged};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let key = ObjectKey::new("default", "h0");
    let mut host: bmh_api::BareMetalHost = serde_json::from_value(json!({
        "metadata": {"name": "h0", "annotations": {"reboot.metal3.io": "", "keep": "me"}},
        "spec": {"online": true},
    }))
    .unwrap();
    let book = crate::persist::bookkeeping::bookkeeping_at_load(None, &host.spec);
    let hk = hosts::host_key(&key);
    store
        .write(
            &hk,
            hosts::encode_host(&host, &book).unwrap(),
            Expect::Absent,
        )
        .unwrap();
    // The runner read the host; a pass changes its status and bookkeeping.
    let mut rec = store.load_host(&key).unwrap().unwrap();
    rec.host.status = Some(bmh_api::BareMetalHostStatus {
        powered_on: true,
        ..Default::default()
    });
    rec.book.finalizers = vec!["baremetalhost.metal3.io".into()];
    rec.book.provisioner_state = Some(json!({"step": 2}).into());
    // Meanwhile an apply changes the spec (generation 2).
    host.spec.online = false;
    let stored = store.get(&hk).unwrap().unwrap();
    let (_, old_book) = hosts::decode_host(&stored.value).unwrap();
    let new_book = crate::persist::bookkeeping::bookkeeping_at_load(Some(&old_book), &host.spec);
    store
        .write(
            &hk,
            hosts::encode_host(&host, &new_book).unwrap(),
            Expect::Version(stored.version),
        )
        .unwrap();
    let backend = store_source::StoreSource::new(
        store.clone(),
        None,
        std::sync::Arc::new(crate::clock::SystemClock),
    );
    backend.add_host(key.clone());
    let removed = vec!["reboot.metal3.io".to_string()];
    let staged = Staged {
        status: crate::persist::Change::to(rec.host.status.as_ref()),
        bookkeeping: crate::persist::Change::Set(&rec.book),
        removed_annotations: &removed,
        ..Default::default()
    };
    let ticket = backend.stage(0, &staged).unwrap();
    assert_eq!(backend.commit(0).unwrap(), ticket);
    let after = store.load_host(&key).unwrap().unwrap();
    assert!(!after.host.spec.online, "the applied spec stays");
    assert_eq!(after.book.generation, 2);
    assert_eq!(after.book.spec_hash, new_book.spec_hash);
    assert!(after.status().powered_on, "the pass's status is written");
    assert_eq!(after.book.finalizers, rec.book.finalizers);
    assert_eq!(
        after.book.provisioner_state.as_deref(),
        Some(&json!({"step": 2}))
    );
    let annotations: Vec<&String> = after.host.metadata.annotations.keys().collect();
    assert_eq!(annotations, ["keep"]);
}

#[cfg(target_os = "linux")]
#[test]
fn taking_the_lease_removes_temporary_files_of_dead_writers_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s")).unwrap();
    let hosts = dir.path().join("s/baremetalhosts/default");
    std::fs::create_dir_all(&hosts).unwrap();
    // No pid reaches 10^9 (Linux's pid_max is at most 2^22).
    let dead = hosts.join(".h0.yaml.999999999.00000000deadbeef.tmp");
    let live = hosts.join(format!(
        ".h1.yaml.{}.00000000deadbeef.tmp",
        std::process::id()
    ));
    let other = hosts.join(".notes.tmp");
    for p in [&dead, &live, &other] {
        std::fs::write(p, "partial").unwrap();
    }
    let _lease = store.acquire_lease().unwrap();
    assert!(!dead.exists());
    assert!(live.exists());
    assert!(other.exists());
}

/// Writes `text` as the object file `rel` of `store` (as a hand edit would).
fn hand_write(store: &Store, rel: &str, text: &str) {
    let path = store.root().join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_secret_that_does_not_parse_is_located_without_quoting_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s")).unwrap();
    hand_write(
        &store,
        "secrets/default/bmc.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc\ndata:\n  password: c2VjcmV0LXZhbHVl\n  username: YWRtaW4=: oops\n",
    );
    let key = secret_key(&ObjectKey::new("default", "bmc"));
    let e = store.get(&key).unwrap_err().chain();
    assert!(e.contains("secrets/default/bmc.yaml:7:"), "{e}");
    assert!(e.contains("Secret default/bmc"), "{e}");
    assert!(!e.contains("c2VjcmV0") && !e.contains("YWRtaW4"), "{e}");
    // Bad base64: the field, not the value.
    hand_write(
        &store,
        "secrets/default/bmc.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc\ndata:\n  password: not*base64*secret\n",
    );
    let e = store.get(&key).unwrap_err().chain();
    assert!(e.contains(":6:") && e.contains("data.password"), "{e}");
    assert!(!e.contains("secret*"), "{e}");
}

#[test]
fn an_object_is_what_its_path_names_or_it_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s")).unwrap();
    let host = |kind: &str, name: &str| {
        format!(
            "apiVersion: metal3.io/v1alpha1\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  online: true\n"
        )
    };
    hand_write(
        &store,
        "baremetalhosts/default/a.yaml",
        &host("BareMetalHost", "a"),
    );
    hand_write(
        &store,
        "baremetalhosts/default/b.yaml",
        &host("Banana", "b"),
    );
    hand_write(
        &store,
        "baremetalhosts/default/c.yaml",
        &host("BareMetalHost", "other"),
    );
    hand_write(&store, "baremetalhosts/default/d.yaml", "spec:\0\n");
    let listing = store.list(bmh_api::API_VERSION, bmh_api::KIND).unwrap();
    assert_eq!(listing.objects.len(), 1);
    let bad: Vec<(String, String)> = listing
        .bad
        .iter()
        .map(|b| (b.key.name.clone(), b.error.chain()))
        .collect();
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(
        bad[0].1.contains("b.yaml:2:7") && bad[0].1.contains("kind"),
        "{bad:?}"
    );
    assert!(bad[1].1.contains("metadata.name"), "{bad:?}");
    assert!(bad[2].1.contains("NUL"), "{bad:?}");
    // The hosts that can be read are; the others are apart, each with its reason.
    let hosts = store.load_hosts().unwrap();
    assert_eq!(hosts.objects.len(), 1);
    assert_eq!(hosts.bad.len(), 3);
}

#[test]
fn a_secret_that_becomes_unreadable_keeps_its_last_value_for_the_objects_already_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s")).unwrap();
    let text = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc\n  namespace: default\ndata:\n  password: cHc=\n";
    hand_write(&store, "secrets/default/bmc.yaml", text);
    let key = ObjectKey::new("default", "bmc");
    let before = store.object_map().unwrap();
    assert!(before.contains_secret(&key));
    hand_write(&store, "secrets/default/bmc.yaml", ":::\n");
    assert!(!store.object_map().unwrap().contains_secret(&key));
    let after = store.object_map_after(Some(&before)).unwrap();
    assert_eq!(after.get_secret(&key), before.get_secret(&key));
}
