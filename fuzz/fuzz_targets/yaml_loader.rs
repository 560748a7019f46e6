//! The YAML loader and the validator on arbitrary file contents: `inventory::load_checked_with` of
//! one file holding the input (any bytes: non-UTF-8 is a diagnostic too), then, for every host
//! it yields, what `bmhctl validate` runs (schema, webhook create rules, update rules against
//! every other host of the file, the BMC access). Nothing may panic; every problem is a value.

#![no_main]

use bmhctl::persist::files::admission::validate_entry;
use bmhctl::persist::LoadOptions;
use bmhctl::persist::files::inventory::{LoadMode, load_checked_with};
use bmhctl::validate::validate;
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// One file, rewritten for every input, in a directory of this process.
fn file() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("bmhctl-fuzz-loader-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        dir.join("hosts.yaml")
    })
}

fuzz_target!(|data: &[u8]| {
    let path = file();
    std::fs::write(path, data).expect("write the input file");
    match load_checked_with(
        std::slice::from_ref(path),
        LoadMode::ReadOnly,
        &LoadOptions::default(),
    ) {
        Ok(inv) => {
            for i in 0..inv.hosts.len() {
                let v = validate_entry(&inv, i);
                assert_eq!(v.valid, v.errors.is_empty());
                for e in &v.errors {
                    let _ = e.to_string();
                }
                let host = &inv.hosts[i].record.host;
                for other in &inv.hosts {
                    let _ = validate(host, Some(&other.record.host));
                }
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
