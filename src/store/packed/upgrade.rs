//! The upgrade of a file-layout store (format 1) to packs (format 2).

use std::fs;
use std::path::{Path, PathBuf};

use super::super::block::{decode_data, BlockHeader};
use super::super::durable::sync_directory;
use super::super::error::{Result, StoreError};
use super::super::location::LOCK_FILE_NAME;
use super::super::{
    parse_header, read_whole_file, write_layout, PageStore, StoreLayout,
    STORE_DESCRIPTION_FILE_NAME, STORE_FORMAT_VERSION,
};
use super::{parse_pack_file_name, volume_directory, Packed};

/// Blocks moved per index commit during an upgrade.
const UPGRADE_BATCH: usize = 4096;

impl PageStore {
    /// Turns this file-layout store packed: every readable block is copied
    /// as stored (compressed data and reference count) into the packs, in
    /// batches of one commit each; then `store.json` names format 2, and
    /// the block files go. A crash anywhere leaves a store that reads as
    /// before, or as packed with block files left over; either way the next
    /// writable open finishes the job. A block that cannot be read is left
    /// where it is, and logged.
    pub(in crate::store) fn upgrade_to_packed(self) -> Result<PageStore> {
        let started = std::time::Instant::now();
        let walk = self.walk()?;
        let packed = Packed::open(&self.root, self.layout.volumes, true)?;
        let mut upgraded = PageStore {
            packed: Some(packed.clone()),
            ..self.clone()
        };
        let index = &packed.index;
        let (mut moved, mut unreadable) = (0u64, 0u64);
        for chunk in walk.blocks.chunks(UPGRADE_BATCH) {
            let mut txn = index.write()?;
            let mut batch = Vec::with_capacity(chunk.len());
            for block in chunk {
                if index.entry(&txn, &block.key)?.is_some() {
                    continue;
                }
                match read_block_file(&block.path)? {
                    Ok((header, data)) => batch.push((block.key, header, data)),
                    Err(reason) => {
                        tracing::warn!(path = %block.path.display(), %reason, "unreadable block left in place by the upgrade to packs");
                        unreadable += 1;
                    }
                }
            }
            moved += batch.len() as u64;
            if !batch.is_empty() {
                upgraded.append_blocks(&packed, &mut txn, &mut batch)?;
            }
            index.commit(txn)?;
        }
        let layout = StoreLayout {
            format_version: STORE_FORMAT_VERSION,
            ..self.layout
        };
        write_layout(&self.root, &layout)?;
        upgraded.layout = layout;
        let removed = upgraded.finish_upgrade()?;
        tracing::info!(root = %self.root.display(), moved, removed, unreadable, seconds = started.elapsed().as_secs_f64(), "upgraded the page store to packs");
        Ok(upgraded)
    }

    /// Removes the block files an upgrade copied into the packs (those
    /// whose key the index holds) and the folders they leave empty.
    /// Returns how many it removed.
    pub(in crate::store) fn finish_upgrade(&self) -> Result<u64> {
        let packed = self.packed_handle();
        let files = PageStore {
            packed: None,
            staging: None,
            ..self.clone()
        };
        let mut leftovers = false;
        for volume in 0..self.layout.volumes {
            let directory = volume_directory(&self.root, volume);
            let Ok(entries) = fs::read_dir(&directory) else {
                continue;
            };
            leftovers |= entries.flatten().any(|entry| {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                parse_pack_file_name(&name).is_none() && name != LOCK_FILE_NAME
            });
        }
        if !leftovers {
            return Ok(0);
        }
        let walk = files.walk()?;
        let txn = packed.index.read()?;
        let mut removed = 0;
        let mut directories = std::collections::BTreeSet::new();
        for block in &walk.blocks {
            if packed.index.entry(&txn, &block.key)?.is_none() {
                tracing::warn!(path = %block.path.display(), "a block file the packs do not hold is left in place");
                continue;
            }
            fs::remove_file(&block.path)
                .map_err(|source| StoreError::io("remove", &block.path, source))?;
            removed += 1;
            if let Some(directory) = block.path.parent() {
                directories.insert(directory.to_path_buf());
            }
        }
        drop(txn);
        // The deepest folders first, up to the volume's own.
        let mut directories: Vec<PathBuf> = directories.into_iter().collect();
        directories.sort_by_key(|directory| std::cmp::Reverse(directory.components().count()));
        for directory in directories {
            let mut current = directory.as_path();
            while current.starts_with(&self.root)
                && parse_volume_directory(current, &self.root).is_none()
            {
                let lock = current.join(LOCK_FILE_NAME);
                let _ = fs::remove_file(&lock);
                if fs::remove_dir(current).is_err() {
                    break;
                }
                match current.parent() {
                    Some(parent) => current = parent,
                    None => break,
                }
            }
        }
        for volume in 0..self.layout.volumes {
            sync_directory(&volume_directory(&self.root, volume))?;
        }
        Ok(removed)
    }

    /// This reader's view of the store once an upgrade made it packed.
    pub(in crate::store) fn upgraded_view(&self) -> Option<PageStore> {
        let packed = self.upgraded.get()?.clone();
        Some(PageStore {
            packed: Some(packed),
            layout: StoreLayout {
                format_version: STORE_FORMAT_VERSION,
                ..self.layout
            },
            ..self.clone()
        })
    }

    /// For a reader of a file-layout store whose block was not found: if
    /// `store.json` now names the packed layout, that view.
    pub(in crate::store) fn reopen_if_upgraded(&self) -> Result<Option<PageStore>> {
        if self.staging.is_some() {
            return Ok(None);
        }
        let path = self.root.join(STORE_DESCRIPTION_FILE_NAME);
        let Ok(text) = fs::read(&path) else {
            return Ok(None);
        };
        let Ok(layout) = serde_json::from_slice::<StoreLayout>(&text) else {
            return Ok(None);
        };
        if !layout.is_packed() {
            return Ok(None);
        }
        let packed = Packed::open(&self.root, layout.volumes, false)?;
        let _ = self.upgraded.set(packed);
        Ok(self.upgraded_view())
    }
}

/// The volume number of `directory` if it is one of `root`'s volume folders.
fn parse_volume_directory(directory: &Path, root: &Path) -> Option<u16> {
    if directory.parent() != Some(root) {
        return None;
    }
    directory
        .file_name()?
        .to_str()?
        .strip_prefix("vol-")?
        .parse()
        .ok()
}

/// A file-layout block's header and data (as stored), or why it cannot be
/// read; `Err` only for an I/O failure.
fn read_block_file(path: &Path) -> Result<std::result::Result<(BlockHeader, Vec<u8>), String>> {
    let Some(mut bytes) = read_whole_file(path)? else {
        return Ok(Err("removed while the upgrade ran".to_owned()));
    };
    let (header, offset) = match parse_header(&bytes) {
        Ok(parsed) => parsed,
        Err(reason) => return Ok(Err(reason)),
    };
    let data = bytes.split_off(offset);
    if let Err(reason) = decode_data(&header, &data) {
        return Ok(Err(reason));
    }
    Ok(Ok((header, data)))
}
