//! sig2location (gomes-et-al-2006 §4.1): where a signature's blocks live in a
//! volume tree, and how block files are named.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::key::{parse_canonical_decimal, Signature, SIGNATURE_BYTES};

/// Names of temporary files start with this; nothing else in the tree does.
pub(super) const TEMPORARY_FILE_PREFIX: &str = ".tmp-";

/// Name of the lock file in every leaf directory.
pub(super) const LOCK_FILE_NAME: &str = ".lock";

/// Where a signature's blocks are: a leaf directory, and the name of the
/// primary block in it. Overflow block k is `<leaf_name>.<k>` beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BlockLocation {
    pub(super) directory: PathBuf,
    pub(super) leaf_name: String,
}

/// The tree path of a signature in a volume of depth `depth`: the `depth - 1`
/// most significant bytes name one directory each, in lower-case hex; the
/// remaining bytes, in hex, name the leaf block.
pub(super) fn sig2location(signature: Signature, depth: u8) -> (Vec<String>, String) {
    let directory_levels = usize::from(depth.saturating_sub(1));
    debug_assert!(
        directory_levels < SIGNATURE_BYTES,
        "depth {depth} leaves no signature byte for the block name"
    );
    let bytes = signature.to_be_bytes();
    let directories = bytes[..directory_levels]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let mut leaf_name = String::with_capacity(2 * (SIGNATURE_BYTES - directory_levels));
    for byte in &bytes[directory_levels..] {
        // Writing to a String cannot fail.
        let _ = write!(leaf_name, "{byte:02x}");
    }
    (directories, leaf_name)
}

/// Length in characters of a leaf name in a tree of depth `depth`.
pub(super) fn leaf_name_length(depth: u8) -> usize {
    2 * (SIGNATURE_BYTES - usize::from(depth.saturating_sub(1)))
}

impl BlockLocation {
    /// The location of `signature` in the volume tree rooted at
    /// `volume_directory`.
    pub(super) fn new(volume_directory: &Path, signature: Signature, depth: u8) -> Self {
        let (directories, leaf_name) = sig2location(signature, depth);
        let mut directory = volume_directory.to_path_buf();
        directory.extend(directories);
        BlockLocation {
            directory,
            leaf_name,
        }
    }

    /// File name of block `overflow` at this location.
    pub(super) fn block_file_name(&self, overflow: u32) -> String {
        if overflow == 0 {
            return self.leaf_name.clone();
        }
        format!("{}.{overflow}", self.leaf_name)
    }

    /// Path of block `overflow` at this location.
    pub(super) fn block_path(&self, overflow: u32) -> PathBuf {
        self.directory.join(self.block_file_name(overflow))
    }

    /// The leaf name as a number (at most 32 hex digits), for listings.
    pub(super) fn leaf_key(&self) -> u128 {
        leaf_key(&self.leaf_name).unwrap_or_default()
    }

    /// The overflow index of `file_name` if it is a block at this location.
    pub(super) fn overflow_of(&self, file_name: &str) -> Option<u32> {
        let rest = file_name.strip_prefix(self.leaf_name.as_str())?;
        if rest.is_empty() {
            return Some(0);
        }
        parse_overflow_suffix(rest)
    }
}

/// Parses `.<k>` with k >= 1 written canonically.
fn parse_overflow_suffix(suffix: &str) -> Option<u32> {
    let digits = suffix.strip_prefix('.')?;
    let overflow = u32::try_from(parse_canonical_decimal(digits)?).ok()?;
    (overflow >= 1).then_some(overflow)
}

/// True if `file_name` is a block file in a tree of depth `depth`: a leaf
/// name of the right length in lower-case hex, optionally `.<k>`.
pub(super) fn is_block_file_name(file_name: &str, depth: u8) -> bool {
    let leaf_length = leaf_name_length(depth);
    if file_name.len() < leaf_length || !file_name.is_char_boundary(leaf_length) {
        return false;
    }
    let (leaf, suffix) = file_name.split_at(leaf_length);
    let leaf_is_hex = leaf
        .bytes()
        .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
    leaf_is_hex && (suffix.is_empty() || parse_overflow_suffix(suffix).is_some())
}

/// A block file name (see [`is_block_file_name`]) as its leaf's number and
/// its overflow index.
pub(super) fn parse_block_file_name(file_name: &str, depth: u8) -> Option<(u128, u32)> {
    if !is_block_file_name(file_name, depth) {
        return None;
    }
    let (leaf, suffix) = file_name.split_at(leaf_name_length(depth));
    let overflow = if suffix.is_empty() {
        0
    } else {
        parse_overflow_suffix(suffix)?
    };
    Some((leaf_key(leaf)?, overflow))
}

fn leaf_key(leaf: &str) -> Option<u128> {
    u128::from_str_radix(leaf, 16).ok()
}

/// True for the names temporary files are written under.
pub(super) fn is_temporary_file_name(file_name: &str) -> bool {
    file_name.starts_with(TEMPORARY_FILE_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_example_depth_3() {
        // gomes-et-al-2006 §4.1: with depth 3, signature ADEE2232AF3A4355 is
        // found by following nodes AD, EE and leaf 2232AF3A4355. Our
        // signatures are 16 bytes, so the leaf name carries the other 14.
        let signature = Signature(0xADEE2232AF3A4355_0011223344556677);
        let (directories, leaf_name) = sig2location(signature, 3);
        assert_eq!(directories, ["ad", "ee"]);
        assert_eq!(leaf_name, "2232af3a43550011223344556677");
        assert_eq!(leaf_name.len(), leaf_name_length(3));

        let location = BlockLocation::new(Path::new("/store/vol-1"), signature, 3);
        assert_eq!(
            location.block_path(0),
            Path::new("/store/vol-1/ad/ee/2232af3a43550011223344556677")
        );
        assert_eq!(
            location.block_path(2),
            Path::new("/store/vol-1/ad/ee/2232af3a43550011223344556677.2")
        );
    }

    #[test]
    fn depth_1_and_16() {
        let signature = Signature(0x000102030405060708090a0b0c0d0e0f);
        let (directories, leaf_name) = sig2location(signature, 1);
        assert!(directories.is_empty());
        assert_eq!(leaf_name, "000102030405060708090a0b0c0d0e0f");
        let (directories, leaf_name) = sig2location(signature, 16);
        assert_eq!(directories.len(), 15);
        assert_eq!(directories[14], "0e");
        assert_eq!(leaf_name, "0f");
    }

    #[test]
    fn block_file_names() {
        let location = BlockLocation::new(Path::new("v"), Signature(0xab), 14);
        assert_eq!(location.leaf_name, "0000ab");
        assert_eq!(location.overflow_of("0000ab"), Some(0));
        assert_eq!(location.overflow_of("0000ab.7"), Some(7));
        assert_eq!(location.overflow_of("0000ab.0"), None);
        assert_eq!(location.overflow_of("0000ab.07"), None);
        assert_eq!(location.overflow_of("0000ab7"), None);
        assert_eq!(location.overflow_of(".tmp-1-2-0000ab"), None);
        assert!(is_block_file_name("0000ab.12", 14));
        assert!(!is_block_file_name("0000AB", 14));
        assert!(!is_block_file_name(".lock", 14));
        assert!(!is_block_file_name("0000ab.x", 14));
        assert!(is_temporary_file_name(".tmp-1-2-0000ab"));
        assert_eq!(parse_block_file_name("0000ab", 14), Some((0xab, 0)));
        assert_eq!(parse_block_file_name("0000ab.12", 14), Some((0xab, 12)));
        assert_eq!(parse_block_file_name("0000ab.0", 14), None);
        assert_eq!(parse_block_file_name(".lock", 14), None);
        assert_eq!(location.leaf_key(), 0xab);
    }
}
