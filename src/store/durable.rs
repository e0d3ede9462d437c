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

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::{Result, StoreError};
use super::location::{is_temporary_file_name, LOCK_FILE_NAME, TEMPORARY_FILE_PREFIX};

/// Makes temporary file names unique among the threads of this process; the
/// pid in the name separates processes.
static TEMPORARY_FILE_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `parts`, concatenated, as `directory/file_name`, replacing any file
/// of that name atomically. The caller holds the directory's lock.
///
/// If the final directory sync fails the new file is already in place but
/// may not survive a power loss; the error says so by naming the directory.
pub(super) fn write_file_atomically(
    directory: &Path,
    file_name: &str,
    parts: &[&[u8]],
) -> Result<()> {
    let counter = TEMPORARY_FILE_COUNTER.fetch_add(1, Ordering::Relaxed);
    let temporary_name = format!(
        "{TEMPORARY_FILE_PREFIX}{}-{counter}-{file_name}",
        std::process::id()
    );
    debug_assert!(is_temporary_file_name(&temporary_name));
    let temporary_path = directory.join(&temporary_name);
    let final_path = directory.join(file_name);

    if let Err(source) = write_and_sync_new_file(&temporary_path, parts) {
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
    if let Err(source) = fs::rename(&temporary_path, &final_path) {
        let _ = fs::remove_file(&temporary_path);
        return Err(StoreError::io("rename into place", final_path, source));
    }
    sync_directory(directory)
}

fn write_and_sync_new_file(path: &Path, parts: &[&[u8]]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(path)?;
    failpoint::before_write(&mut file, parts)?;
    for part in parts {
        file.write_all(part)?;
    }
    file.sync_all()
}

/// Fsyncs a directory so that renames, creations and removals in it are
/// durable.
pub(super) fn sync_directory(directory: &Path) -> Result<()> {
    File::open(directory)
        .and_then(|handle| handle.sync_all())
        .map_err(|source| StoreError::io("sync directory", directory, source))
}

/// Removes `directory/file_name` and makes the removal durable.
pub(super) fn remove_file_durably(directory: &Path, file_name: &str) -> Result<()> {
    let path = directory.join(file_name);
    fs::remove_file(&path).map_err(|source| StoreError::io("remove", path, source))?;
    sync_directory(directory)
}

/// Creates `directory` and any missing parents, fsyncing each parent that
/// gained an entry, so that a block written inside survives a crash.
pub(super) fn create_directory_durably(directory: &Path) -> Result<()> {
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
            sync_directory(parent)?;
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
