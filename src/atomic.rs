//! Replacing a file whole or not at all: written to a temporary file in the
//! same folder, fsynced, renamed over the file, then the folder fsynced so
//! that the rename survives a power cut. The data folder's small files
//! (`CURRENT`, `config.json`, markers) and `export`'s tables are written
//! this way. The page store keeps its own version of the pattern
//! (`store/durable.rs`): it defers the folder syncs of a whole batch to one
//! `syncfs` and has failure points for its crash tests.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file that could not be written, and why.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct WriteError {
    pub path: PathBuf,
    pub source: io::Error,
}

fn at(path: &Path) -> impl FnOnce(io::Error) -> WriteError + '_ {
    move |source| WriteError {
        path: path.to_path_buf(),
        source,
    }
}

/// The temporary name `path` is written under by [`replace_with_bytes`]:
/// `.NAME.tmp-PID` beside it (the pattern `mirrorscope check` looks for).
pub fn temporary_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    folder_of(path).join(format!(".{name}.tmp-{}", std::process::id()))
}

/// Removes the folder `path`, first renamed to a [`unique_temporary_beside`]
/// name: it is never seen half removed under its own name, and a process
/// still writing into it by that name fails rather than making it again.
/// A folder that is not there (another process removed it first) is no
/// error. What cannot be removed stays under the temporary name, where
/// `mirrorscope check --repair` finds it.
pub fn remove_folder(path: &Path) -> std::io::Result<()> {
    let aside = unique_temporary_beside(path);
    match std::fs::rename(path, &aside) {
        Ok(()) => std::fs::remove_dir_all(&aside),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    }
}

/// A temporary name for `path` no other process takes, even one with the
/// same process id on another machine of a shared file system:
/// `.NAME.tmp-PID-NANOS` beside it, for work several processes may do at
/// once (an ingest part, an index shard: Spark tasks run twice).
pub fn unique_temporary_beside(path: &Path) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    let mut name = temporary_beside(path).into_os_string();
    name.push(format!("-{stamp}"));
    PathBuf::from(name)
}

fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    }
}

/// Replaces `path` with `bytes`.
pub fn replace_with_bytes(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    replace(path, &temporary_beside(path), |out| out.write_all(bytes))
}

/// Replaces `path` with what `write` writes, through `temporary` (a path in
/// the same folder); returns what `write` returned. On an error the
/// temporary file is removed and `path` is as it was.
pub fn replace<T>(
    path: &Path,
    temporary: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<T>,
) -> Result<T, WriteError> {
    let written = write_synced(temporary, write);
    let outcome = written.and_then(|value| {
        std::fs::rename(temporary, path).map_err(at(path))?;
        Ok(value)
    });
    match outcome {
        Ok(value) => {
            sync_folder(folder_of(path))?;
            Ok(value)
        }
        Err(error) => {
            // Best effort: what is left is a temporary file `check` reports.
            let _ = std::fs::remove_file(temporary);
            Err(error)
        }
    }
}

fn write_synced<T>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<T>,
) -> Result<T, WriteError> {
    let file = File::create(path).map_err(at(path))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let value = write(&mut out).map_err(at(path))?;
    let file = out
        .into_inner()
        .map_err(|error| at(path)(error.into_error()))?;
    file.sync_all().map_err(at(path))?;
    Ok(value)
}

/// Fsyncs a folder, so that renames, creations and removals in it last.
pub fn sync_folder(folder: &Path) -> Result<(), WriteError> {
    File::open(folder)
        .and_then(|handle| handle.sync_all())
        .map_err(at(folder))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_nothing_is_left_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("CURRENT");
        replace_with_bytes(&path, b"gen-000001\n").unwrap();
        replace_with_bytes(&path, b"gen-000002\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"gen-000002\n");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("table.tsv");
        let temporary = dir.path().join("table.tsv.partial");
        std::fs::write(&path, "old\n").unwrap();
        let error = replace(&path, &temporary, |out| {
            out.write_all(b"half a table")?;
            Err::<(), _>(io::Error::other("the disk is full"))
        })
        .unwrap_err();
        assert!(error.to_string().contains("table.tsv.partial"), "{error}");
        assert!(error.to_string().contains("the disk is full"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
        assert!(!temporary.exists());
    }

    #[test]
    fn what_the_writer_returns_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows");
        let rows = replace(&path, &dir.path().join("rows.partial"), |out| {
            out.write_all(b"a\nb\n")?;
            Ok(2)
        })
        .unwrap();
        assert_eq!(rows, 2);
        assert_eq!(std::fs::read(&path).unwrap(), b"a\nb\n");
    }

    #[test]
    fn the_temporary_name_is_hidden_beside_the_file() {
        let temporary = temporary_beside(Path::new("/data/config.json"));
        let name = temporary.file_name().unwrap().to_str().unwrap();
        assert_eq!(temporary.parent(), Some(Path::new("/data")));
        assert!(name.starts_with(".config.json.tmp-"), "{name}");
        assert_eq!(folder_of(Path::new("CURRENT")), Path::new("."));
    }
}
