//! The index of a generation, opened for reading only.
//!
//! A generation's index never changes once written (a new crawl makes a new
//! generation), so a reader takes no lock and writes nothing. tantivy's
//! reader takes its `.tantivy-meta.lock` by creating that file, which fails
//! where the data folder is read-only (a mounted archive, a folder another
//! user owns): through this directory, `serve`, `check` and every reading
//! command open such a folder as they open their own.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};

/// A directory that reads through `MmapDirectory` and refuses every write.
#[derive(Clone, Debug)]
pub struct ReadOnlyDirectory {
    inner: MmapDirectory,
}

impl ReadOnlyDirectory {
    pub fn open(dir: &Path) -> tantivy::Result<ReadOnlyDirectory> {
        Ok(ReadOnlyDirectory {
            inner: MmapDirectory::open(dir)?,
        })
    }
}

fn refused(path: &Path) -> Arc<io::Error> {
    Arc::new(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{}: a generation's index is read only once written",
            path.display()
        ),
    ))
}

impl Directory for ReadOnlyDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.inner.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError {
            io_error: refused(path),
            filepath: path.to_path_buf(),
        })
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::IoError {
            io_error: refused(path),
            filepath: PathBuf::from(path),
        })
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, _data: &[u8]) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            refused(path).to_string(),
        ))
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    /// Nothing writes a generation's index once it is written: a reader
    /// needs no lock against a writer.
    fn acquire_lock(&self, _lock: &Lock) -> Result<DirectoryLock, LockError> {
        Ok(DirectoryLock::from(Box::new(())))
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(watch_callback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_takes_no_lock_and_writing_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("meta.json"), b"{}").unwrap();
        let directory = ReadOnlyDirectory::open(dir.path()).unwrap();
        let lock = Lock {
            filepath: PathBuf::from(".tantivy-meta.lock"),
            is_blocking: true,
        };
        let _held = directory.acquire_lock(&lock).unwrap();
        assert!(!dir.path().join(".tantivy-meta.lock").exists());
        assert_eq!(
            directory.atomic_read(Path::new("meta.json")).unwrap(),
            b"{}"
        );
        assert!(directory.open_write(Path::new("new")).is_err());
        assert!(directory
            .atomic_write(Path::new("meta.json"), b"x")
            .is_err());
        assert!(directory.delete(Path::new("meta.json")).is_err());
        assert!(dir.path().join("meta.json").exists());
        assert!(!dir.path().join("new").exists());
    }
}
