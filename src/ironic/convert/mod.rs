//! Pure conversions between BareMetalHost data and Ironic's JSON (spec sections 3.3.1, 3.7, 6).
//! No I/O: every function here is unit-tested on its own.

pub mod capabilities;
pub mod configdrive;
pub mod devicehints;
pub mod inventory;
pub mod raid;
pub mod steps;
