//! Property tests (proptest): the status splice, and the validator on arbitrary hosts. Case
//! counts are set per property so that the whole target stays within a few seconds in CI; a
//! longer search: `PROPTEST_CASES=20000 cargo test --release --test properties` (see
//! docs/reliability.md).

mod splice;
mod validate;
