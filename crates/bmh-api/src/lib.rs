//! metal3.io/v1alpha1 BareMetalHost and its companions, as serde types (unknown fields kept).

#![deny(missing_docs)]

pub mod annotations;
pub mod bmc_event_subscription;
pub mod data_image;
pub mod enums;
pub mod extra;
pub mod firmware;
pub mod hardware;
pub mod host;
pub mod meta;
pub mod predicates;
pub mod secret;
mod string_enum;
pub mod word;

pub use bmc_event_subscription::*;
pub use data_image::*;
pub use enums::*;
pub use firmware::*;
pub use hardware::*;
pub use host::*;
pub use meta::*;
pub use secret::Secret;
pub use word::Word;
