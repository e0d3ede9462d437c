//! Crash-safe file-system primitives: atomic file replacement, directory
//! creation that survives a crash, per-directory locks, and removal of the
//! temporary files a crashed writer leaves behind.
//!
//! Every file in the store is written the same way: a temporary file in the
//! destination directory, named `.tmp-<pid>-<counter>-<final name>`, is
//! written and fsynced, renamed over the final name, and the directory is
//! fsynced. A crash at any point leaves the old file or the new one, plus at
//! worst a temporary file. Writers hold the directory's lock while they do
//! this, so a temporary file seen by someone holding the lock is stale.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::error::{Result, StoreError};
use super::location::{is_temporary_file_name, LOCK_FILE_NAME, TEMPORARY_FILE_PREFIX};

/// Makes temporary file names unique among the threads of this process; the
/// pid in the name separates processes.
static TEMPORARY_FILE_COUNTER: AtomicU64 = AtomicU64::new(0);

/// When the directory fsyncs that make renames, creations and removals
/// durable happen: at once (the default), or together at the next
/// [`DirectorySyncs::flush`]. File contents are fsynced before their rename
/// either way, so a block is never torn; deferring only delays when a change
/// is sure to survive a power loss, and lets a batch of writes share one
/// file-system sync.
#[derive(Debug, Default)]
pub(super) struct DirectorySyncs {
    /// `None`: sync at once. `Some`: directories waiting for the next flush.
    pending: Option<Mutex<BTreeSet<PathBuf>>>,
    /// Held for a whole flush, so that a flush that finds nothing waiting
    /// returns only after a concurrent flush (which took its directories)
    /// has made them durable.
    flushing: Mutex<()>,
}

impl DirectorySyncs {
    pub(super) fn immediate() -> DirectorySyncs {
        DirectorySyncs {
            pending: None,
            flushing: Mutex::new(()),
        }
    }

    pub(super) fn deferred() -> DirectorySyncs {
        DirectorySyncs {
            pending: Some(Mutex::new(BTreeSet::new())),
            flushing: Mutex::new(()),
        }
    }

    /// Makes the entries of `directory` durable, now or at the next flush.
    pub(super) fn sync(&self, directory: &Path) -> Result<()> {
        match &self.pending {
            None => sync_directory(directory),
            Some(pending) => {
                pending
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .insert(directory.to_path_buf());
                Ok(())
            }
        }
    }

    /// Makes every deferred change durable. On Linux one `syncfs` of the
    /// file system holding `root` covers them all; elsewhere each directory is
    /// fsynced. Returns how many directories were waiting.
    pub(super) fn flush(&self, root: &Path) -> Result<usize> {
        let Some(pending) = &self.pending else {
            return Ok(0);
        };
        let _flushing = self
            .flushing
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let directories = std::mem::take(
            &mut *pending
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        if directories.is_empty() {
            return Ok(0);
        }
        if let Err(error) = sync_file_system(root, &directories) {
            // Nothing was made durable for sure: keep them waiting.
            pending
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .extend(directories);
            return Err(error);
        }
        Ok(directories.len())
    }
}

impl Drop for DirectorySyncs {
    fn drop(&mut self) {
        if let Some(pending) = &self.pending {
            let directories = std::mem::take(
                &mut *pending
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()),
            );
            for directory in directories {
                if let Err(error) = sync_directory(&directory) {
                    tracing::warn!(%error, "deferred directory sync failed");
                }
            }
        }
    }
}

/// Makes every change under `directories` durable. On Linux, one `syncfs`
/// per file system they are on (a volume may be a symbolic link to another
/// disk); elsewhere each directory is fsynced.
#[cfg(target_os = "linux")]
fn sync_file_system(_root: &Path, directories: &BTreeSet<PathBuf>) -> Result<()> {
    sync_file_systems_of(directories.iter().map(PathBuf::as_path))
}

#[cfg(not(target_os = "linux"))]
fn sync_file_system(_root: &Path, directories: &BTreeSet<PathBuf>) -> Result<()> {
    for directory in directories {
        sync_directory(directory)?;
    }
    Ok(())
}

/// One `syncfs` for each file system holding one of `paths`.
#[cfg(target_os = "linux")]
fn sync_file_systems_of<'a>(paths: impl Iterator<Item = &'a Path>) -> Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    let mut synced = std::collections::HashSet::new();
    for path in paths {
        let handle = File::open(path).map_err(|source| StoreError::io("open", path, source))?;
        let device = handle
            .metadata()
            .map_err(|source| StoreError::io("inspect", path, source))?
            .dev();
        if !synced.insert(device) {
            continue;
        }
        // SAFETY: syncfs only reads the descriptor, which `handle` keeps
        // open for the duration of the call.
        let status = unsafe { libc::syncfs(handle.as_raw_fd()) };
        if status != 0 {
            return Err(StoreError::io(
                "sync file system of",
                path,
                io::Error::last_os_error(),
            ));
        }
    }
    Ok(())
}

/// Writes `parts`, concatenated, as `directory/file_name`, replacing any file
/// of that name atomically. The caller holds the directory's lock.
///
/// If the final directory sync fails the new file is already in place but
/// may not survive a power loss; the error says so by naming the directory.
pub(super) fn write_file_atomically(
    syncs: &DirectorySyncs,
    directory: &Path,
    file_name: &str,
    parts: &[&[u8]],
) -> Result<()> {
    let temporary_path = write_new_temporary_file(directory, file_name, parts, true)?;
    let final_path = directory.join(file_name);
    if let Err(source) = fs::rename(&temporary_path, &final_path) {
        let _ = fs::remove_file(&temporary_path);
        return Err(StoreError::io("rename into place", final_path, source));
    }
    syncs.sync(directory)
}

/// Writes `parts` to a new temporary file in `directory` that will become
/// `file_name`, without syncing it (a staged write: see `staging.rs`; on
/// systems without `syncfs` it is synced here). Returns its path.
pub(super) fn write_temporary_file(
    directory: &Path,
    file_name: &str,
    parts: &[&[u8]],
) -> Result<PathBuf> {
    write_new_temporary_file(directory, file_name, parts, cfg!(not(target_os = "linux")))
}

/// Writes `parts` to `.tmp-<pid>-<counter>-<file_name>` in `directory`,
/// fsynced when `sync`; on an error, removes it (unless a test simulates a
/// crash) and names it.
fn write_new_temporary_file(
    directory: &Path,
    file_name: &str,
    parts: &[&[u8]],
    sync: bool,
) -> Result<PathBuf> {
    let counter = TEMPORARY_FILE_COUNTER.fetch_add(1, Ordering::Relaxed);
    let temporary_name = format!(
        "{TEMPORARY_FILE_PREFIX}{}-{counter}-{file_name}",
        std::process::id()
    );
    debug_assert!(is_temporary_file_name(&temporary_name));
    let temporary_path = directory.join(&temporary_name);
    let written = (|| -> io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary_path)?;
        failpoint::before_write(&mut file, parts)?;
        for part in parts {
            file.write_all(part)?;
        }
        if sync {
            file.sync_all()?;
        }
        Ok(())
    })();
    if let Err(source) = written {
        if !failpoint::is_simulated_crash(&source) {
            // Best effort: a leftover is removed by the next cleanup anyway.
            let _ = fs::remove_file(&temporary_path);
        }
        return Err(StoreError::io(
            "write temporary file",
            temporary_path,
            source,
        ));
    }
    Ok(temporary_path)
}

/// Renames a temporary file over its final name.
pub(super) fn rename_into_place(temporary: &Path, path: &Path) -> Result<()> {
    fs::rename(temporary, path).map_err(|source| StoreError::io("rename into place", path, source))
}

/// Removes a temporary file that will not be renamed; a failure only leaves
/// a stale file that the next writer in its directory removes.
pub(super) fn remove_temporary_file(temporary: &Path) {
    if let Err(error) = fs::remove_file(temporary) {
        if error.kind() != io::ErrorKind::NotFound {
            tracing::warn!(path = %temporary.display(), %error, "could not remove a temporary file");
        }
    }
}

/// Makes the contents of the files written in `directories` durable: one
/// `syncfs` per file system on Linux; elsewhere the staged files were synced
/// as they were written. (Linux reports a write error through `syncfs` since
/// 5.8.)
pub(super) fn sync_contents<'a>(directories: impl Iterator<Item = &'a Path>) -> Result<()> {
    #[cfg(target_os = "linux")]
    return sync_file_systems_of(directories);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = directories;
        Ok(())
    }
}

/// Fsyncs a directory so that renames, creations and removals in it are
/// durable.
pub(super) fn sync_directory(directory: &Path) -> Result<()> {
    File::open(directory)
        .and_then(|handle| handle.sync_all())
        .map_err(|source| StoreError::io("sync directory", directory, source))
}

/// Removes `directory/file_name` and makes the removal durable.
pub(super) fn remove_file_durably(
    syncs: &DirectorySyncs,
    directory: &Path,
    file_name: &str,
) -> Result<()> {
    let path = directory.join(file_name);
    fs::remove_file(&path).map_err(|source| StoreError::io("remove", path, source))?;
    syncs.sync(directory)
}

/// Creates `directory` and any missing parents, fsyncing each parent that
/// gained an entry, so that a block written inside survives a crash.
pub(super) fn create_directory_durably(syncs: &DirectorySyncs, directory: &Path) -> Result<()> {
    if directory.is_dir() {
        return Ok(());
    }
    let mut missing = Vec::new();
    let mut candidate = directory;
    loop {
        match fs::metadata(candidate) {
            Ok(metadata) if metadata.is_dir() => break,
            Ok(_) => {
                return Err(StoreError::io(
                    "create directory",
                    candidate,
                    io::Error::new(io::ErrorKind::AlreadyExists, "a file is in the way"),
                ))
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                missing.push(candidate);
                match candidate.parent() {
                    Some(parent) if !parent.as_os_str().is_empty() => candidate = parent,
                    _ => break,
                }
            }
            Err(error) => return Err(StoreError::io("inspect", candidate, error)),
        }
    }
    for created in missing.into_iter().rev() {
        match fs::create_dir(created) {
            Ok(()) => {}
            // Another writer created it first: it synced the parent.
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(StoreError::io("create directory", created, error)),
        }
        if let Some(parent) = created
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            syncs.sync(parent)?;
        }
    }
    Ok(())
}

/// An exclusive `flock` on `<directory>/.lock`, released on drop. Each
/// acquisition opens the lock file anew, so it excludes other threads of
/// this process as well as other processes.
#[derive(Debug)]
pub(super) struct DirectoryLock {
    file: File,
}

impl DirectoryLock {
    /// Blocks until the lock is held. Fails with `NotFound` if the directory
    /// does not exist.
    pub(super) fn acquire(directory: &Path) -> io::Result<DirectoryLock> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(directory.join(LOCK_FILE_NAME))?;
        file.lock()?;
        Ok(DirectoryLock { file })
    }
}

impl Drop for DirectoryLock {
    fn drop(&mut self) {
        // Closing the descriptor releases the lock too; unlocking first
        // releases it even if the descriptor were ever duplicated.
        let _ = self.file.unlock();
    }
}

/// Removes the temporary files in `directory`. The caller holds the
/// directory's lock, so every temporary file there was left by a writer that
/// crashed or failed. Returns how many were removed.
pub(super) fn remove_stale_temporary_files(directory: &Path) -> Result<usize> {
    let entries =
        fs::read_dir(directory).map_err(|source| StoreError::io("list", directory, source))?;
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(|source| StoreError::io("list", directory, source))?;
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        if !is_temporary_file_name(file_name) {
            continue;
        }
        let path = entry.path();
        match fs::remove_file(&path) {
            Ok(()) => {
                tracing::warn!(path = %path.display(), "removed a temporary file left by an interrupted write");
                removed += 1;
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(StoreError::io("remove", path, error)),
        }
    }
    if removed > 0 {
        sync_directory(directory)?;
    }
    Ok(removed)
}

/// Test-only fault injection: make the next write on this thread fail after
/// writing half of its temporary file.
#[cfg(test)]
pub(super) mod failpoint {
    use std::cell::Cell;
    use std::fs::File;
    use std::io::{self, Write};

    /// What the next write on this thread does.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(in crate::store) enum WriteFailpoint {
        /// Write half the temporary file, then fail; the writer cleans up
        /// its temporary file as on any error.
        ErrorHalfway,
        /// Write half the temporary file, then fail as if the process died:
        /// the temporary file stays behind.
        CrashHalfway,
    }

    thread_local! {
        static NEXT_WRITE: Cell<Option<WriteFailpoint>> = const { Cell::new(None) };
    }

    /// Arms `failpoint` for the next write on this thread.
    pub(in crate::store) fn arm(failpoint: WriteFailpoint) {
        NEXT_WRITE.with(|next| next.set(Some(failpoint)));
    }

    #[derive(Debug)]
    struct InjectedFailure(WriteFailpoint);

    impl std::fmt::Display for InjectedFailure {
        fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(
                formatter,
                "injected failure ({:?}) after writing half the file",
                self.0
            )
        }
    }

    impl std::error::Error for InjectedFailure {}

    pub(super) fn before_write(file: &mut File, parts: &[&[u8]]) -> io::Result<()> {
        let Some(failpoint) = NEXT_WRITE.with(|next| next.take()) else {
            return Ok(());
        };
        let whole = parts.concat();
        file.write_all(&whole[..whole.len() / 2])?;
        Err(io::Error::other(InjectedFailure(failpoint)))
    }

    pub(super) fn is_simulated_crash(error: &io::Error) -> bool {
        error
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<InjectedFailure>())
            .is_some_and(|injected| injected.0 == WriteFailpoint::CrashHalfway)
    }
}

/// Without tests, no fault is ever injected.
#[cfg(not(test))]
mod failpoint {
    use std::fs::File;
    use std::io;

    #[inline]
    pub(super) fn before_write(_file: &mut File, _parts: &[&[u8]]) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    pub(super) fn is_simulated_crash(_error: &io::Error) -> bool {
        false
    }
}
