//! How bmhctl asks glibc's malloc to behave for a run holding thousands of records.

/// Tunes glibc's malloc first thing in `main` (why: decisions.md); `MALLOC_*` variables win.
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
