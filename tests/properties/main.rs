//! Property tests (proptest): the status splice, and the validator on arbitrary hosts. Case
//! counts are set per property so that the whole target stays within a few seconds in CI; a
//! longer search: `PROPTEST_CASES=20000 cargo test --test properties` (see
//! docs/reliability.md).

mod splice;
mod validate;

/// The case count of a property: `PROPTEST_CASES` when set (a longer search), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
