//! How bmhctl asks glibc's malloc to behave: a run holds every host's record, status texts
//! and sidecar entries, thousands of them touched at every step, so the allocator's defaults
//! (tuned for small, short-lived programs) cost it memory and time.

/// Tunes glibc's malloc, once per process, before hosts are loaded. Setting a trim threshold
/// also stops glibc from raising its mmap threshold each time a large block is freed; left
/// to rise, the file's rendered text and other large buffers of every commit came from the
/// heaps, between hosts' records, and the resident size grew to about 1.7 times the heap
/// (10,000 fixture hosts: 695 MiB peak; 386 MiB this way, at the same CPU). Four arenas
/// instead of one per thread (a pass worker's allocations otherwise spread over up to eight
/// times the cores' arenas): two saved 38 MiB at 10,000 fixture hosts when every pass woke a
/// worker, but once workers run back to back they wait on each other's arena lock (most of
/// the futex calls left); four take as little CPU as eight, and a `watch` of them 12 MiB
/// less. The mmap threshold is then fixed at glibc's 128 KiB, so every block above it (a
/// commit's list of the file's pieces, a batch's queues) was mapped, zeroed by the kernel and
/// unmapped again at each use; at 4 MiB they come from the heaps and are reused (10,000
/// fixture hosts: 42k page faults to 32k, sys time down a sixth, the same peak), while a big
/// file's text still gets its own mapping. An allocator crate would do as well; this keeps
/// the dependencies as they are. `MALLOC_TRIM_THRESHOLD_`, `MALLOC_MMAP_THRESHOLD_` and
/// `MALLOC_ARENA_MAX` in the environment still decide.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_MMAP_THRESHOLD: i32 = -3;
        const M_ARENA_MAX: i32 = -8;
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            if std::env::var_os("MALLOC_TRIM_THRESHOLD_").is_none() {
                // SAFETY: mallopt only sets a parameter of the allocator.
                unsafe {
                    mallopt(M_TRIM_THRESHOLD, 256 << 20);
                }
            }
            if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
                // SAFETY: as above.
                unsafe {
                    mallopt(M_MMAP_THRESHOLD, 4 << 20);
                }
            }
            if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
                // SAFETY: as above.
                unsafe {
                    mallopt(M_ARENA_MAX, 4);
                }
            }
        });
    }
}

/// Starts bmhctl again, in place (the same process, arguments and standard streams), with
/// glibc's malloc told to ask for transparent huge pages, when the kernel gives them only to
/// those who ask (`madvise`, most distributions' default). A run touches every host's record
/// at every step: with 4 KiB pages the processor's address cache misses most of them, and at
/// 10,000 fixture hosts the huge pages took a tenth off the CPU time (peak resident size 1-5
/// MiB more). glibc reads the setting only when a program starts, hence the restart; it is
/// done first thing in `main`, before anything is read. A `GLIBC_TUNABLES` in the environment
/// (even empty) is left as it is and nothing is restarted; so is a kernel that gives huge
/// pages to all (`always`) or none (`never`), or a restart that fails.
pub fn prefer_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt as _;
        if std::env::var_os(TUNABLES).is_some() {
            return;
        }
        let asked_only = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .is_ok_and(|mode| mode.contains("[madvise]"));
        if !asked_only {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut args = std::env::args_os();
        let mut again = std::process::Command::new(exe);
        if let Some(name) = args.next() {
            again.arg0(name);
        }
        again.args(args).env(TUNABLES, HUGE_PAGES);
        // Returns only when the restart failed: run on as started.
        let _ = again.exec();
    }
}

/// The environment variable glibc reads its settings from, and the setting that makes malloc
/// ask for huge pages.
pub const TUNABLES: &str = "GLIBC_TUNABLES";
pub const HUGE_PAGES: &str = "glibc.malloc.hugetlb=1";
