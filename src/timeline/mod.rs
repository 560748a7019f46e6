//! The timeline page: per host, its provisioning states over time, its waits on the
//! provisioner, its errors and retries, drawn as one self-contained HTML page with an inline
//! SVG chart. Made from a run as it goes ([`Recorder`], `provision --timeline`) or from what the
//! hosts recorded ([`recorded`], `bmhctl timeline`).

mod html;
pub mod model;
pub mod recorded;
mod recorder;
mod svg;

pub use html::page;
pub use model::Timeline;
pub use recorder::Recorder;

use std::path::Path;

/// Writes the page of `t` to `path`, replacing it atomically.
pub fn write(path: &Path, t: &Timeline) -> std::io::Result<()> {
    let html = page(t);
    crate::persist::atomic::write_atomic_with(path, None, |out| out.write_all(html.as_bytes()))
}
