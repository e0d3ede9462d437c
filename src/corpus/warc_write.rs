//! Writing WARC records, gzip per record or plain.
//!
//! Used by the demo-crawl builder and by tests that need real WARC files; the
//! reader in [`super::warc`] reads back everything written here.

use std::io::{self, Write};

use flate2::write::GzEncoder;
use flate2::Compression;

/// One record to write: its type, its named headers (in order) and its block.
///
/// `WARC-Type` and `Content-Length` are written by the writer; the caller
/// supplies everything else (`WARC-Record-ID`, `WARC-Date`, `WARC-Target-URI`...).
#[derive(Debug, Clone)]
pub struct OutRecord<'a> {
    pub warc_type: &'a str,
    pub headers: Vec<(&'a str, String)>,
    pub block: &'a [u8],
}

/// Writes WARC/1.1 records to `out`, each in a gzip member of its own when
/// `gzip` is set (the `.warc.gz` convention), or plain.
pub struct WarcWriter<W: Write> {
    out: W,
    gzip: bool,
    version: &'static str,
    bytes_written: u64,
}

impl<W: Write> WarcWriter<W> {
    pub fn new(out: W, gzip: bool) -> Self {
        WarcWriter {
            out,
            gzip,
            version: "WARC/1.1",
            bytes_written: 0,
        }
    }

    /// Writes `WARC/1.0` on the version line instead of `WARC/1.1`.
    pub fn with_version_1_0(mut self) -> Self {
        self.version = "WARC/1.0";
        self
    }

    /// The bytes written so far: where the next record starts.
    pub fn position(&self) -> u64 {
        self.bytes_written
    }

    /// Writes one record; returns the offset in the output where it starts.
    pub fn write_record(&mut self, record: &OutRecord<'_>) -> io::Result<u64> {
        let offset = self.bytes_written;
        let mut bytes = Vec::with_capacity(record.block.len() + 512);
        bytes.extend_from_slice(self.version.as_bytes());
        bytes.extend_from_slice(b"\r\n");
        bytes.extend_from_slice(format!("WARC-Type: {}\r\n", record.warc_type).as_bytes());
        for (name, value) in &record.headers {
            bytes.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        bytes.extend_from_slice(
            format!("Content-Length: {}\r\n\r\n", record.block.len()).as_bytes(),
        );
        bytes.extend_from_slice(record.block);
        bytes.extend_from_slice(b"\r\n\r\n");
        self.write_raw_record(&bytes)?;
        Ok(offset)
    }

    /// Writes already-formatted record bytes as one unit (one gzip member when
    /// gzipping). Tests use this to write deliberately broken records.
    pub fn write_raw_record(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.gzip {
            let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
            encoder.write_all(bytes)?;
            let member = encoder.finish()?;
            self.out.write_all(&member)?;
            self.bytes_written += member.len() as u64;
        } else {
            self.out.write_all(bytes)?;
            self.bytes_written += bytes.len() as u64;
        }
        Ok(())
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}
