//! The allocators' settings, and the process's resident memory, from
//! `/proc/self/status` (Linux; `None` elsewhere): what `index` reports per
//! stage and what the benches measure.

/// The resident size now, in MB (`VmRSS`).
pub fn resident_mb() -> Option<f64> {
    status_mb("VmRSS:")
}

/// The peak resident size since the process started or since the last
/// [`reset_peak`], in MB (`VmHWM`).
pub fn peak_mb() -> Option<f64> {
    status_mb("VmHWM:")
}

/// The resident size now split into anonymous memory and mapped files, in
/// MB (`RssAnon`, `RssFile`): the kernel keeps a peak of their sum only, and
/// mapped files (a search index being merged) are given back under pressure.
pub fn resident_split_mb() -> Option<(f64, f64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    Some((
        parse_status_mb(&status, "RssAnon:")?,
        parse_status_mb(&status, "RssFile:")?,
    ))
}

/// Lets the peak start again from the current resident size (Linux 4.0 and
/// later; elsewhere the peak stays the process's).
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Gives the memory the allocators hold free back to the system: mimalloc's,
/// the process's (see `Cargo.toml`), and glibc's malloc, which the C
/// libraries (zstd, LMDB) allocate from. glibc's keeps freed blocks of up to
/// 32 MB on its heaps (its mmap threshold rises with the blocks freed), so
/// after a stage that held big bodies the next stage would start with them
/// still resident.
pub fn release_free() {
    // SAFETY: mi_collect walks mimalloc's own heaps; it takes no pointer.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own heaps; it takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// mimalloc's number for its option `purge_delay` (its `mi_option_e` as the
/// mimalloc 3 that libmimalloc-sys builds numbers it; the crate names no
/// constant for it, and a test checks the number against the option's
/// default, 1,000 ms, which no other option has).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Lets mimalloc give the pages a free leaves empty back at once, where it
/// waits a second by default: for the
/// pipeline's stages, each of which frees most of what it held. On the
/// 1,000,446-page generated web, with the fingerprints written aside, the
/// index stage peaked at 1.8 GB (2.6 with glibc's malloc) and the page table
/// left 1.0 GB held (1.8). Not for `serve`: a search allocates and frees at
/// every request, and giving pages back at once made rolled-up search 20%
/// slower. Call it before threads start; `MIMALLOC_PURGE_DELAY` in the
/// environment is left to decide.
pub fn give_freed_pages_back_at_once() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: sets one of mimalloc's options before other threads run; it
    // takes no pointer.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
    }
}

/// Lets glibc's malloc keep one heap ("arena") a core at most, where it
/// would make up to eight a core: memory a thread frees stays on its own
/// heap, where the other threads' allocations do not reuse it, so each
/// stage's threads (rayon's, tantivy's writers and mergers) grew heaps of
/// their own beside the ones before. On the 100k generated web, two heaps
/// on 2 cores held 264 MB after the mirrors stage instead of 305, and the
/// index stage peaked at 701 MB instead of 806, in the same time. Call it
/// first thing, before threads start; a `MALLOC_ARENA_MAX` set in the
/// environment is left to decide. Elsewhere a no-op.
pub fn one_heap_a_core() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
            return;
        }
        let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
        let heaps = libc::c_int::try_from(cores).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only sets a parameter of glibc's allocator; it
        // takes no pointer.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, heaps);
        }
    }
}

/// A `/proc/self/status` field given in kB, in MB.
fn status_mb(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_status_mb(&status, field)
}

fn parse_status_mb(status: &str, field: &str) -> Option<f64> {
    let value = status.lines().find_map(|line| line.strip_prefix(field))?;
    let kilobytes: f64 = value.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kilobytes / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_set_is_mimallocs_purge_delay() {
        // No test sets it: mimalloc's default, 1,000 ms.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // SAFETY: reads one of mimalloc's options; it takes no pointer.
            let delay = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
            assert_eq!(delay, 1000);
        }
    }

    #[test]
    fn fields_are_read_in_megabytes() {
        let status = "Name:\tx\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n";
        assert_eq!(parse_status_mb(status, "VmHWM:"), Some(200.0));
        assert_eq!(parse_status_mb(status, "VmRSS:"), Some(100.0));
        assert_eq!(parse_status_mb(status, "VmSwap:"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_running_process_has_anonymous_memory_and_mapped_files() {
        let (anonymous, file) = resident_split_mb().unwrap();
        // Its heap and stacks; its own executable, mapped.
        assert!(anonymous > 0.0 && file > 0.0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_peak_is_at_least_what_is_resident() {
        let resident = resident_mb().unwrap();
        assert!(resident > 0.0);
        assert!(peak_mb().unwrap() >= resident * 0.99);
    }
}
