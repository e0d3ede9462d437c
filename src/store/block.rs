//! The block file format: a plain-text header, a blank line, the data.
//!
//! ```text
//! mirrorscope-block 1
//! original-size: 12345
//! compression: zstd
//! references: 3
//!
//! <data: the body, zstd-compressed or as is>
//! ```
//!
//! The header is ASCII, lines end in `\n`, and it ends at the first empty
//! line. Version 1 has exactly these three fields, each once, in any order;
//! numbers are decimal without sign or leading zeros. `compression` is `zstd`
//! (one or more zstd frames) or `none` (the body as is). `references` is at
//! least 1: a block whose last reference is deleted is removed. Functions here
//! return the reason a block is invalid as a string; the caller adds the path.

use std::cell::RefCell;
use std::io::{self, Read};

/// First word of every block.
pub(super) const BLOCK_MAGIC: &str = "mirrorscope-block";

/// Version written after [`BLOCK_MAGIC`].
pub(super) const BLOCK_FORMAT_VERSION: u32 = 1;

/// A valid header is far shorter; anything longer is not a block.
pub(super) const MAX_HEADER_BYTES: usize = 512;

/// Largest buffer reserved up front when decompressing: a corrupt
/// `original-size` must not make the store allocate terabytes.
const MAX_DECOMPRESSION_RESERVE: u64 = 16 << 20;

/// How the data of a block is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BlockCompression {
    None,
    Zstd,
}

impl BlockCompression {
    fn name(self) -> &'static str {
        match self {
            BlockCompression::None => "none",
            BlockCompression::Zstd => "zstd",
        }
    }
}

/// The header fields of one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BlockHeader {
    pub(super) original_size: u64,
    pub(super) compression: BlockCompression,
    pub(super) references: u64,
}

impl BlockHeader {
    /// The header as written to disk, blank line included.
    pub(super) fn encode(&self) -> Vec<u8> {
        debug_assert!(
            self.references >= 1,
            "a stored block has at least one reference"
        );
        format!(
            "{BLOCK_MAGIC} {BLOCK_FORMAT_VERSION}\noriginal-size: {}\ncompression: {}\nreferences: {}\n\n",
            self.original_size,
            self.compression.name(),
            self.references
        )
        .into_bytes()
    }
}

/// Parses the header at the start of `bytes` (a whole block or just its
/// first bytes). Returns the header and the offset where the data starts.
pub(super) fn parse_header(bytes: &[u8]) -> Result<(BlockHeader, usize), String> {
    let searched = &bytes[..bytes.len().min(MAX_HEADER_BYTES)];
    let Some(blank_line_at) = searched.windows(2).position(|pair| pair == b"\n\n") else {
        if bytes.len() < MAX_HEADER_BYTES {
            return Err("the header does not end with an empty line".to_owned());
        }
        return Err(format!(
            "no empty line ends the header within its first {MAX_HEADER_BYTES} bytes"
        ));
    };
    let header_bytes = &bytes[..blank_line_at];
    let data_offset = blank_line_at + 2;
    if !header_bytes.is_ascii() {
        return Err("the header is not ascii text".to_owned());
    }
    let header_text =
        std::str::from_utf8(header_bytes).map_err(|_| "the header is not ascii text".to_owned())?;
    let mut lines = header_text.split('\n');
    let first_line = lines.next().unwrap_or_default();
    let expected_first_line = format!("{BLOCK_MAGIC} {BLOCK_FORMAT_VERSION}");
    if first_line != expected_first_line {
        if let Some(version) = first_line.strip_prefix(BLOCK_MAGIC) {
            return Err(format!(
                "block format version {:?} is not supported (this build reads version {BLOCK_FORMAT_VERSION})",
                version.trim()
            ));
        }
        return Err(format!(
            "the first line is {first_line:?}, not {expected_first_line:?}"
        ));
    }

    let mut original_size = None;
    let mut compression = None;
    let mut references = None;
    for line in lines {
        let Some((name, value)) = line.split_once(": ") else {
            return Err(format!("header line {line:?} is not <field>: <value>"));
        };
        match name {
            "original-size" => {
                let size = parse_header_number(name, value)?;
                set_once(&mut original_size, size, name)?;
            }
            "compression" => {
                let parsed = match value {
                    "zstd" => BlockCompression::Zstd,
                    "none" => BlockCompression::None,
                    other => return Err(format!("compression {other:?} is not supported")),
                };
                set_once(&mut compression, parsed, name)?;
            }
            "references" => {
                let count = parse_header_number(name, value)?;
                if count == 0 {
                    return Err("references is 0 but a stored block has at least one".to_owned());
                }
                set_once(&mut references, count, name)?;
            }
            other => return Err(format!("unknown header field {other:?}")),
        }
    }
    let header = BlockHeader {
        original_size: original_size.ok_or("the header has no original-size field")?,
        compression: compression.ok_or("the header has no compression field")?,
        references: references.ok_or("the header has no references field")?,
    };
    Ok((header, data_offset))
}

fn parse_header_number(name: &str, value: &str) -> Result<u64, String> {
    super::key::parse_canonical_decimal(value)
        .ok_or_else(|| format!("{name} {value:?} is not a decimal number"))
}

fn set_once<T>(slot: &mut Option<T>, value: T, name: &str) -> Result<(), String> {
    if slot.is_some() {
        return Err(format!("the header has field {name} twice"));
    }
    *slot = Some(value);
    Ok(())
}

/// Turns a body into block data: zstd at `level`, or the body as is when
/// compression does not make it smaller.
pub(super) fn encode_data(body: &[u8], level: i32) -> io::Result<(BlockCompression, Vec<u8>)> {
    let compressed = COMPRESSOR.with(|slot| -> io::Result<Vec<u8>> {
        let mut slot = slot.borrow_mut();
        let compressor = match &mut *slot {
            Some((kept_level, compressor)) if *kept_level == level => compressor,
            _ => &mut slot.insert((level, zstd::bulk::Compressor::new(level)?)).1,
        };
        compressor.compress(body)
    })?;
    if compressed.len() < body.len() {
        return Ok((BlockCompression::Zstd, compressed));
    }
    Ok((BlockCompression::None, body.to_vec()))
}

/// Recovers the body from block data, checking its size against the header.
pub(super) fn decode_data(header: &BlockHeader, data: &[u8]) -> Result<Vec<u8>, String> {
    match header.compression {
        BlockCompression::None => {
            if data.len() as u64 != header.original_size {
                return Err(format!(
                    "the data is {} bytes but original-size is {}",
                    data.len(),
                    header.original_size
                ));
            }
            Ok(data.to_vec())
        }
        BlockCompression::Zstd if header.original_size < MAX_DECOMPRESSION_RESERVE => {
            // One byte more than announced is enough to tell "too long".
            let capacity = header.original_size as usize + 1;
            let body = DECOMPRESSOR
                .with(|slot| -> io::Result<Vec<u8>> {
                    let mut slot = slot.borrow_mut();
                    let decompressor = match &mut *slot {
                        Some(decompressor) => decompressor,
                        None => slot.insert(zstd::bulk::Decompressor::new()?),
                    };
                    decompressor.decompress(data, capacity)
                })
                .map_err(|error| {
                    // zstd's own words for "does not fit in original-size + 1".
                    if error.to_string().contains("too small") {
                        format!(
                            "the data decompresses to more than original-size {}",
                            header.original_size
                        )
                    } else {
                        format!("the zstd data cannot be decompressed: {error}")
                    }
                })?;
            check_decompressed_size(body.len() as u64, header.original_size)?;
            Ok(body)
        }
        BlockCompression::Zstd => {
            let reserve = header.original_size.min(MAX_DECOMPRESSION_RESERVE);
            // Bounded by MAX_DECOMPRESSION_RESERVE, so it fits in usize.
            let mut body = Vec::with_capacity(reserve as usize);
            let decoder = zstd::stream::read::Decoder::with_buffer(data)
                .map_err(|error| format!("cannot start zstd decompression: {error}"))?;
            // One byte more than announced is enough to tell "too long".
            decoder
                .take(header.original_size.saturating_add(1))
                .read_to_end(&mut body)
                .map_err(|error| format!("the zstd data cannot be decompressed: {error}"))?;
            check_decompressed_size(body.len() as u64, header.original_size)?;
            Ok(body)
        }
    }
}

fn check_decompressed_size(decompressed_size: u64, original_size: u64) -> Result<(), String> {
    if decompressed_size > original_size {
        return Err(format!(
            "the data decompresses to more than original-size {original_size}"
        ));
    }
    if decompressed_size < original_size {
        return Err(format!(
            "the data decompresses to {decompressed_size} bytes but original-size is {original_size}"
        ));
    }
    Ok(())
}

thread_local! {
    /// Each thread's zstd contexts, kept between blocks: making one costs
    /// about as much as compressing or decompressing a small page.
    static COMPRESSOR: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let header = BlockHeader {
            original_size: 12345,
            compression: BlockCompression::Zstd,
            references: 3,
        };
        let encoded = header.encode();
        assert_eq!(
            encoded,
            b"mirrorscope-block 1\noriginal-size: 12345\ncompression: zstd\nreferences: 3\n\n"
        );
        assert_eq!(parse_header(&encoded), Ok((header, encoded.len())));
    }

    #[test]
    fn header_rejects_duplicates_unknown_fields_and_zero_references() {
        let duplicate = b"mirrorscope-block 1\noriginal-size: 1\noriginal-size: 1\ncompression: none\nreferences: 1\n\nx";
        assert!(parse_header(duplicate).unwrap_err().contains("twice"));
        let unknown = b"mirrorscope-block 1\noriginal-size: 1\ncolour: red\ncompression: none\nreferences: 1\n\nx";
        assert!(parse_header(unknown)
            .unwrap_err()
            .contains("unknown header field"));
        let zero = b"mirrorscope-block 1\noriginal-size: 1\ncompression: none\nreferences: 0\n\nx";
        assert!(parse_header(zero).unwrap_err().contains("references is 0"));
        let version =
            b"mirrorscope-block 2\noriginal-size: 1\ncompression: none\nreferences: 1\n\nx";
        assert!(parse_header(version).unwrap_err().contains("version \"2\""));
        let plus = b"mirrorscope-block 1\noriginal-size: +1\ncompression: none\nreferences: 1\n\nx";
        assert!(parse_header(plus)
            .unwrap_err()
            .contains("not a decimal number"));
    }

    #[test]
    fn incompressible_data_is_stored_as_is() {
        let (compression, data) = encode_data(b"", 3).unwrap();
        assert_eq!(compression, BlockCompression::None);
        assert!(data.is_empty());
        let html = b"<p>hello</p>".repeat(100);
        let (compression, data) = encode_data(&html, 3).unwrap();
        assert_eq!(compression, BlockCompression::Zstd);
        let header = BlockHeader {
            original_size: html.len() as u64,
            compression,
            references: 1,
        };
        assert_eq!(decode_data(&header, &data).unwrap(), html);
    }

    #[test]
    fn wrong_original_size_is_detected_both_ways() {
        let html = b"<p>hello</p>".repeat(100);
        let (compression, data) = encode_data(&html, 3).unwrap();
        for original_size in [html.len() as u64 - 1, html.len() as u64 + 1, u64::MAX] {
            let header = BlockHeader {
                original_size,
                compression,
                references: 1,
            };
            let reason = decode_data(&header, &data).unwrap_err();
            assert!(reason.contains("original-size"), "{reason}");
        }
    }
}
