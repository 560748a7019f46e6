//! A listing read by what changed: once a listing is large, the listings between full ones read
//! one page of the items Ironic stamped last (newest first) and merge it over the last listing.
//! A full listing costs Ironic in proportion to every item, those nobody waits on included; the
//! page costs it what the items on it cost. Shared by the node and port listings.

use std::time::{Duration, Instant, SystemTime};

/// From this many items listed, listings between full ones read only what changed.
pub const DEFAULT_DELTA_FROM: usize = 200;
/// While pages serve, a full listing at least this often: an item deleted shows only there.
pub const FULL_LISTING_EVERY: Duration = Duration::from_secs(15);
/// How far before the newest stamp already seen a page reads: an item stamped earlier but
/// committed later, or by a conductor whose clock is behind, still shows.
pub const DELTA_MARGIN: Duration = Duration::from_secs(2);
/// The smallest page asked for.
pub const DELTA_MIN_PAGE: u32 = 32;
/// The largest page Ironic gives (`[api]max_limit`).
const MAX_PAGE: u32 = crate::MAX_PAGE;

/// What the next listing is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Every item.
    Full,
    /// A page that finds Ironic's newest stamp, then every item (the first time a listing is
    /// large: a later page reads back from that stamp).
    Probe { page: u32 },
    /// A page of the items stamped at or after `since`, merged over the last listing if it
    /// holds them all.
    Page { page: u32, since: SystemTime },
}

/// What the next page of one listing needs.
#[derive(Debug, Default)]
pub struct DeltaClock {
    /// The newest stamp seen (Ironic's clock).
    newest: Option<SystemTime>,
    /// When the last full listing started.
    full_at: Option<Instant>,
    /// The page the next one asks for: twice what the last needed, at least [`DELTA_MIN_PAGE`].
    page: u32,
}

impl DeltaClock {
    /// The next listing, `large` when the last one held at least the threshold.
    pub fn next(&self, large: bool) -> Next {
        let page = self.page.clamp(DELTA_MIN_PAGE, MAX_PAGE);
        let fresh = self
            .full_at
            .is_some_and(|f| f.elapsed() < FULL_LISTING_EVERY);
        match self.newest {
            _ if !large => Next::Full,
            None => Next::Probe { page },
            Some(newest) if fresh => Next::Page {
                page,
                since: newest - DELTA_MARGIN,
            },
            Some(_) => Next::Full,
        }
    }

    /// A page of `asked` came back with these stamps (newest first; `None`: never stamped, or
    /// not understood); for [`Next::Page`], whether it holds every item stamped at or after
    /// `since`: it is not full, or it reaches an item stamped before (wherever the database
    /// sorts the never-stamped). If not, the next page is four times larger.
    pub fn page_seen(&mut self, stamps: &[Option<SystemTime>], asked: u32, since: Next) -> bool {
        let newest = stamps.iter().flatten().max().copied();
        self.newest = self.newest.max(newest).or(Some(SystemTime::UNIX_EPOCH));
        let Next::Page { since, .. } = since else {
            return false;
        };
        let needed = stamps
            .iter()
            .filter(|t| t.is_none_or(|t| t >= since))
            .count() as u32;
        let covers = stamps.len() < asked as usize || stamps.iter().flatten().any(|t| *t < since);
        self.page = if covers {
            (2 * needed).clamp(DELTA_MIN_PAGE, MAX_PAGE)
        } else {
            (4 * asked).min(MAX_PAGE)
        };
        covers
    }

    /// A full listing started at `started`.
    pub fn full_listed(&mut self, started: Instant) {
        self.full_at = Some(started);
    }

    /// Make the last full listing look `by` older (tests).
    #[cfg(test)]
    pub fn age_full(&mut self, by: Duration) {
        self.full_at = self.full_at.map(|f| f - by);
    }
}

/// A timestamp as Ironic writes it (`2026-12-07T19:37:29.814869+00:00`); `None` for none, or a
/// form not understood (read as never stamped: merged, never trusted to cover).
pub fn stamp(text: Option<&str>) -> Option<SystemTime> {
    let t = text?;
    let t = t.strip_suffix("+00:00").unwrap_or(t).trim_end_matches('Z');
    humantime::parse_rfc3339_weak(t).ok()
}

#[cfg(test)]
mod unit {
    use super::*;

    fn t(s: &str) -> SystemTime {
        humantime::parse_rfc3339(s).unwrap()
    }

    #[test]
    fn stamps_are_read_as_ironic_writes_them() {
        let at = t("2026-12-01T02:00:05.25Z");
        assert_eq!(stamp(Some("2026-12-01T02:00:05.250000+00:00")), Some(at));
        let whole = Some(t("2026-12-01T02:00:05Z"));
        assert_eq!(stamp(Some("2026-12-01T02:00:05Z")), whole);
        assert_eq!(stamp(Some("2026-12-01T02:00:05")), whole);
        assert_eq!(stamp(Some("yesterday")), None);
        assert_eq!(stamp(None), None);
    }

    #[test]
    fn a_large_listing_probes_once_then_pages_until_a_full_one_is_due() {
        let mut c = DeltaClock::default();
        assert_eq!(c.next(false), Next::Full);
        let probe = c.next(true);
        assert_eq!(
            probe,
            Next::Probe {
                page: DELTA_MIN_PAGE
            }
        );
        assert!(!c.page_seen(&[Some(t("2026-12-01T02:00:10Z")), None], 32, probe));
        // no full listing yet: one now
        assert_eq!(c.next(true), Next::Full);
        c.full_listed(Instant::now());
        let since = t("2026-12-01T02:00:08Z");
        assert_eq!(c.next(true), Next::Page { page: 32, since });
        assert_eq!(
            c.next(false),
            Next::Full,
            "a listing grown small again is full"
        );
        c.age_full(FULL_LISTING_EVERY);
        assert_eq!(c.next(true), Next::Full);
    }

    #[test]
    fn a_page_covers_what_it_reaches_back_past_wherever_the_never_stamped_sort() {
        let since = t("2026-12-01T02:00:03Z");
        let page = Next::Page { page: 3, since };
        let new = Some(t("2026-12-01T02:00:04Z"));
        let old = Some(t("2026-12-01T02:00:01Z"));
        let mut c = DeltaClock::default();
        // PostgreSQL: never-stamped first; SQLite: last
        assert!(c.page_seen(&[None, new, old], 3, page));
        assert!(c.page_seen(&[new, old, None], 3, page));
        // a page not full holds every item
        assert!(c.page_seen(&[new, None], 3, page));
        // a full page of what is newer, or never stamped, proves nothing: four times larger
        assert!(!c.page_seen(&[None, new], 2, page));
        assert_eq!(c.page, 8);
        assert!(!c.page_seen(&[new, None], 2, page));
        // the next page is twice what the last one needed
        let many: Vec<_> = (0..40).map(|_| new).chain([old]).collect();
        assert!(c.page_seen(&many, 64, page));
        assert_eq!(c.page, 80);
        assert_eq!(c.newest, new, "the newest stamp seen");
    }
}
