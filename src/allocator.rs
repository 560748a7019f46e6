//! How bmhctl asks glibc's malloc to behave: a run holds every host's record, status texts
//! and sidecar entries, thousands of them touched at every step, so the allocator's defaults
//! (tuned for small, short-lived programs) cost it memory and time.

/// Tunes glibc's malloc; called first thing in `main`, before anything is read. Setting a trim
/// threshold also stops glibc from raising its mmap threshold each time a large block is
/// freed; left to rise, the file's rendered text and other large buffers of every commit came
/// from the heaps, between hosts' records, and the resident size grew to about 1.7 times the
/// heap (10,000 fixture hosts: 695 MiB peak; 386 MiB this way, at the same CPU). Four arenas
/// instead of one per thread (a pass worker's allocations otherwise spread over up to eight
/// times the cores' arenas): two saved 38 MiB at 10,000 fixture hosts when every pass woke a
/// worker, but once workers run back to back they wait on each other's arena lock (most of
/// the futex calls left); four take as little CPU as eight, and a `watch` of them 12 MiB
/// less. The mmap threshold is then fixed at glibc's 128 KiB, so every block above it (a
/// commit's list of the file's pieces, a batch's queues) was mapped, zeroed by the kernel and
/// unmapped again at each use; at 4 MiB they come from the heaps and are reused (10,000
/// fixture hosts: 42k page faults to 32k, sys time down a sixth, the same peak), while a big
/// file's text still gets its own mapping. mimalloc instead took as much CPU and a quarter more
/// memory (decisions.md). `MALLOC_TRIM_THRESHOLD_`, `MALLOC_MMAP_THRESHOLD_` and
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
        for (variable, param, value) in [
            ("MALLOC_TRIM_THRESHOLD_", M_TRIM_THRESHOLD, 256 << 20),
            ("MALLOC_MMAP_THRESHOLD_", M_MMAP_THRESHOLD, 4 << 20),
            ("MALLOC_ARENA_MAX", M_ARENA_MAX, 4),
        ] {
            if std::env::var_os(variable).is_none() {
                // SAFETY: mallopt only sets a parameter of the allocator.
                unsafe {
                    mallopt(param, value);
                }
            }
        }
    }
}
