//! `mirrorscope dedup-warc`: a crawl's WARC files with each payload written
//! once (gomes-2006's store of distinct contents, in the form archives
//! replay), and a CDXJ index of them.
//!
//! The crawls are read in the order given, each one's files in name order.
//! A `response` whose payload (the HTTP entity as captured, after the
//! response's head) was already written, in this crawl or an earlier one,
//! becomes a `revisit` record of WARC/1.1's identical-payload-digest
//! profile: its own URL, date and record id, the HTTP head it was served
//! with as its block, `WARC-Payload-Digest`, and where the payload is:
//! `WARC-Refers-To-Target-URI` and `WARC-Refers-To-Date` (the first
//! capture of the payload, at whatever URL: a copy on a mirror refers to
//! the original's capture) and `WARC-Refers-To` (that record's id, when it
//! has one). Every other record is copied as it was (its headers in their
//! order; `WARC/1.1` on the version line), each in a gzip member of its own,
//! into files of at most `max_file_bytes` (a record larger than that is a
//! file alone). An empty payload is never a revisit (nothing to save).
//!
//! The CDXJ index (`index.cdxj`, sorted, one line per response or revisit:
//! the URL's SURT key as pywb computes it, the 14-digit capture time, and a
//! JSON object with pywb's fields) lets pywb replay the files without
//! indexing them; a revisit's line names the `original` URL and every line
//! counts the `captures` sharing its payload.
//!
//! Bad input loses nothing else: a record the reader cannot read is
//! counted, named (file and offset) and skipped. Output files are written
//! under a `.partial` name and renamed when complete; a folder that already
//! holds output of that prefix is refused, never overwritten.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::corpus::digest::warc_sha1;
use crate::corpus::http::parse_head;
use crate::corpus::surt::cdx_key;
use crate::corpus::warc::{WarcReader, WarcRecord};
use crate::corpus::warc_write::{OutRecord, WarcWriter};
use crate::corpus::{list_warc_files, WarcError};

/// The largest WARC record block read (the ingest limit).
const MAX_BLOCK_BYTES: u64 = 1 << 30;

/// What `dedup-warc` writes, and where.
#[derive(Debug, Clone)]
pub struct DedupOptions {
    /// The output folder (created when missing).
    pub out: PathBuf,
    /// Output files are cut before a record would take them past this size.
    pub max_file_bytes: u64,
    /// Output files are `PREFIX-00000.warc.gz`, `PREFIX-00001.warc.gz`...
    pub prefix: String,
}

/// What `dedup-warc` did: gomes-2006 Table 1's figures for these crawls.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DedupReport {
    pub input_files: u64,
    pub input_bytes: u64,
    pub records: u64,
    pub responses: u64,
    /// Responses written as revisits, their payload written before.
    pub revisits: u64,
    /// Payload bytes of every response, and of those written as revisits.
    pub payload_bytes: u64,
    pub payload_bytes_saved: u64,
    pub distinct_payloads: u64,
    pub output_bytes: u64,
    /// Responses copied whose `WARC-Payload-Digest` was not of the bytes
    /// after the HTTP head (the entity body of a chunked transfer, its
    /// chunks joined): written with that digest, which `warcio check` and
    /// pywb compare.
    pub digests_corrected: u64,
    pub files: Vec<String>,
    pub index: String,
    pub index_lines: u64,
    /// Records the reader could not read (skipped), with the first few.
    pub bad_records: u64,
    pub bad_examples: Vec<String>,
    pub seconds: f64,
}

/// The first capture of a payload.
struct Original {
    url: String,
    date: String,
    id: Option<String>,
    captures: u64,
}

/// One line of the index, before the capture counts are known.
struct IndexLine {
    key: String,
    timestamp: String,
    url: String,
    mime: String,
    status: Option<String>,
    digest: String,
    length: u64,
    offset: u64,
    filename: String,
    original: Option<String>,
}

/// Errors of `dedup-warc`.
#[derive(Debug, thiserror::Error)]
pub enum DedupError {
    #[error(transparent)]
    Warc(#[from] WarcError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} already holds {prefix}-*.warc.gz files: choose another folder or --prefix (nothing was written)")]
    Exists { path: PathBuf, prefix: String },
    #[error("no WARC file under {0}")]
    NoInput(String),
}

/// The output files, cut at the size limit.
struct Output<'o> {
    options: &'o DedupOptions,
    writer: Option<(WarcWriter<BufWriter<File>>, String)>,
    files: Vec<String>,
    bytes: u64,
}

impl Output<'_> {
    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> DedupError + '_ {
        move |source| DedupError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Writes one record; returns its file, offset and length.
    fn write(&mut self, record: &OutRecord<'_>) -> Result<(String, u64, u64), DedupError> {
        let full = self
            .writer
            .as_ref()
            .is_some_and(|(writer, _)| writer.position() >= self.options.max_file_bytes);
        if full {
            self.close()?;
        }
        if self.writer.is_none() {
            let name = format!("{}-{:05}.warc.gz", self.options.prefix, self.files.len());
            let path = self.options.out.join(format!("{name}.partial"));
            let file = File::create(&path).map_err(Self::io(&path))?;
            self.writer = Some((WarcWriter::new(BufWriter::new(file), true), name));
        }
        let (writer, name) = self.writer.as_mut().expect("opened above");
        let offset = writer
            .write_record(record)
            .map_err(Self::io(&self.options.out))?;
        Ok((name.clone(), offset, writer.position() - offset))
    }

    fn close(&mut self) -> Result<(), DedupError> {
        if let Some((writer, name)) = self.writer.take() {
            let partial = self.options.out.join(format!("{name}.partial"));
            self.bytes += writer.position();
            let file = writer
                .finish()
                .map_err(Self::io(&partial))?
                .into_inner()
                .map_err(|error| DedupError::Io {
                    path: partial.clone(),
                    source: error.into_error(),
                })?;
            file.sync_all().map_err(Self::io(&partial))?;
            let done = self.options.out.join(&name);
            std::fs::rename(&partial, &done).map_err(Self::io(&done))?;
            self.files.push(name);
        }
        Ok(())
    }
}

/// An HTTP response block's head ([`parse_head`]): where its payload starts,
/// its status code and its `Content-Type` without parameters; `None` when
/// the block is no HTTP response.
fn http_head(block: &[u8]) -> Option<(usize, String, String)> {
    let head = parse_head(block).ok()?;
    let mime = head
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        .and_then(|(_, value)| value.split(';').next())
        .map_or_else(|| "unk".into(), |mime| mime.trim().to_ascii_lowercase());
    Some((head.body_offset, head.status.to_string(), mime))
}

/// `2026-11-20T12:00:00Z` (or with fractions) as `20261120120000`.
fn timestamp(date: &str) -> String {
    let digits: String = date.chars().filter(char::is_ascii_digit).take(14).collect();
    format!("{digits:0<14}")
}

/// Deduplicates the WARC files of `crawls` (files or folders, earlier crawls
/// first) into `options.out`.
pub fn dedup(crawls: &[PathBuf], options: &DedupOptions) -> Result<DedupReport, DedupError> {
    let started = Instant::now();
    std::fs::create_dir_all(&options.out).map_err(Output::io(&options.out))?;
    let taken = std::fs::read_dir(&options.out)
        .map_err(Output::io(&options.out))?
        .flatten()
        .any(|entry| {
            let name = entry.file_name().to_string_lossy().to_string();
            name.starts_with(&format!("{}-", options.prefix)) && name.contains(".warc.gz")
        });
    if taken {
        return Err(DedupError::Exists {
            path: options.out.clone(),
            prefix: options.prefix.clone(),
        });
    }
    let mut report = DedupReport::default();
    let mut output = Output {
        options,
        writer: None,
        files: Vec::new(),
        bytes: 0,
    };
    let mut originals: HashMap<String, Original> = HashMap::new();
    let mut index: Vec<IndexLine> = Vec::new();
    for crawl in crawls {
        let files = list_warc_files(std::slice::from_ref(crawl))?;
        if files.files.is_empty() {
            return Err(DedupError::NoInput(crawl.display().to_string()));
        }
        for path in &files.files {
            report.input_files += 1;
            report.input_bytes += std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            let reader = WarcReader::open(path, MAX_BLOCK_BYTES)?;
            for record in reader {
                let record = match record {
                    Ok(record) => record,
                    Err(error) => {
                        report.bad_records += 1;
                        tracing::warn!("{}: {error}: record skipped", path.display());
                        if report.bad_examples.len() < 10 {
                            report
                                .bad_examples
                                .push(format!("{}: {error}", path.display()));
                        }
                        continue;
                    }
                };
                report.records += 1;
                one_record(
                    &record,
                    &mut output,
                    &mut originals,
                    &mut index,
                    &mut report,
                )?;
                // Each record's block is allocated and freed: glibc's rising
                // mmap threshold would keep the freed blocks resident, RSS
                // growing with the crawl; giving them back now and then
                // keeps it to a few records' size.
                if report.records % 256 == 0 {
                    crate::memory::release_free();
                }
            }
        }
    }
    output.close()?;
    report.distinct_payloads = originals.len() as u64;
    report.output_bytes = output.bytes;
    report.files = output.files;

    // The index, sorted as CDXJ readers search it.
    index.sort_by(|x, y| {
        (&x.key, &x.timestamp, &x.filename, x.offset).cmp(&(
            &y.key,
            &y.timestamp,
            &y.filename,
            y.offset,
        ))
    });
    let index_path = options.out.join(format!("{}.cdxj", options.prefix));
    let partial = options.out.join(format!("{}.cdxj.partial", options.prefix));
    let mut out = BufWriter::new(File::create(&partial).map_err(Output::io(&partial))?);
    for line in &index {
        let captures = originals
            .get(&format!("sha1:{}", line.digest))
            .map_or(1, |original| original.captures);
        let mut fields = serde_json::Map::new();
        fields.insert("url".into(), line.url.clone().into());
        fields.insert("mime".into(), line.mime.clone().into());
        if let Some(status) = &line.status {
            fields.insert("status".into(), status.clone().into());
        }
        fields.insert("digest".into(), line.digest.clone().into());
        fields.insert("length".into(), line.length.to_string().into());
        fields.insert("offset".into(), line.offset.to_string().into());
        fields.insert("filename".into(), line.filename.clone().into());
        if let Some(original) = &line.original {
            fields.insert("original".into(), original.clone().into());
        }
        fields.insert("captures".into(), captures.into());
        writeln!(
            out,
            "{} {} {}",
            line.key,
            line.timestamp,
            serde_json::Value::Object(fields)
        )
        .map_err(Output::io(&partial))?;
    }
    out.into_inner()
        .map_err(|error| DedupError::Io {
            path: partial.clone(),
            source: error.into_error(),
        })?
        .sync_all()
        .map_err(Output::io(&partial))?;
    std::fs::rename(&partial, &index_path).map_err(Output::io(&index_path))?;
    report.index = index_path.display().to_string();
    report.index_lines = index.len() as u64;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Copies one record, or writes it as a revisit when its payload was
/// written before; adds its index line.
fn one_record(
    record: &WarcRecord,
    output: &mut Output<'_>,
    originals: &mut HashMap<String, Original>,
    index: &mut Vec<IndexLine>,
    report: &mut DedupReport,
) -> Result<(), DedupError> {
    let kind = record.warc_type();
    let copied: Vec<(&str, String)> = record
        .headers
        .iter()
        .filter(|(name, _)| {
            !name.eq_ignore_ascii_case("WARC-Type") && !name.eq_ignore_ascii_case("Content-Length")
        })
        .map(|(name, value)| (name.as_str(), value.clone()))
        .collect();
    let copy = OutRecord {
        warc_type: &kind,
        headers: copied,
        block: &record.block,
    };
    let url = record.header("WARC-Target-URI").unwrap_or("").to_string();
    let date = record.header("WARC-Date").unwrap_or("").to_string();
    let head = match kind.as_str() {
        "response" | "revisit" => http_head(&record.block),
        _ => None,
    };
    let Some((head_end, status, mime)) = head else {
        let (filename, offset, length) = output.write(&copy)?;
        if kind == "resource" {
            // A resource (a file kept as it was) is a capture too.
            let mime = record
                .header("Content-Type")
                .and_then(|value| value.split(';').next())
                .unwrap_or("unk")
                .trim()
                .to_ascii_lowercase();
            index.push(IndexLine {
                key: cdx_key(&url),
                timestamp: timestamp(&date),
                url,
                mime,
                status: None,
                digest: warc_sha1(&record.block)["sha1:".len()..].to_string(),
                length,
                offset,
                filename,
                original: None,
            });
        }
        return Ok(());
    };
    let line =
        |digest: &str, (filename, offset, length): (String, u64, u64), mime: String| IndexLine {
            key: cdx_key(&url),
            timestamp: timestamp(&date),
            url: url.clone(),
            mime,
            status: Some(status.clone()),
            digest: digest.trim_start_matches("sha1:").to_string(),
            length,
            offset,
            filename,
            original: None,
        };
    if kind == "revisit" {
        // An input's own revisit: copied, indexed as pywb indexes one.
        let digest = record
            .header("WARC-Payload-Digest")
            .unwrap_or("")
            .to_string();
        let place = output.write(&copy)?;
        let mut entry = line(&digest, place, "warc/revisit".into());
        entry.original = record
            .header("WARC-Refers-To-Target-URI")
            .map(str::to_string);
        if let Some(original) = originals.get_mut(&digest) {
            original.captures += 1;
        }
        index.push(entry);
        return Ok(());
    }
    report.responses += 1;
    let payload = &record.block[head_end..];
    report.payload_bytes += payload.len() as u64;
    // The payload digest as archives compute and compare it: of the bytes
    // after the HTTP head as captured (a chunked transfer's chunks as
    // sent), which `warcio check` verifies and pywb matches revisits by. A
    // revisit then always refers to a record holding the same bytes.
    let digest = warc_sha1(payload);
    // A record copied with another payload digest (a crawler that digested
    // the entity body, its chunks joined, as WARC 1.1 words it) gets this
    // one, so that the files pass `warcio check`.
    let mut copy = copy;
    if let Some(index) = copy
        .headers
        .iter()
        .position(|(name, _)| name.eq_ignore_ascii_case("WARC-Payload-Digest"))
    {
        if copy.headers[index].1 != digest {
            copy.headers[index].1 = digest.clone();
            report.digests_corrected += 1;
        }
    }
    let earlier = originals.get_mut(&digest).filter(|_| !payload.is_empty());
    let Some(original) = earlier else {
        let place = output.write(&copy)?;
        index.push(line(&digest, place, mime));
        let id = record.header("WARC-Record-ID").map(str::to_string);
        originals
            .entry(digest)
            .or_insert_with(|| Original {
                url: url.clone(),
                date: date.clone(),
                id,
                captures: 0,
            })
            .captures += 1;
        return Ok(());
    };
    original.captures += 1;
    report.revisits += 1;
    report.payload_bytes_saved += payload.len() as u64;
    let mut headers: Vec<(&str, String)> = Vec::new();
    for name in [
        "WARC-Record-ID",
        "WARC-Date",
        "WARC-Target-URI",
        "WARC-IP-Address",
    ] {
        if let Some(value) = record.header(name) {
            headers.push((name, value.to_string()));
        }
    }
    headers.push((
        "WARC-Profile",
        "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest".into(),
    ));
    headers.push(("WARC-Refers-To-Target-URI", original.url.clone()));
    headers.push(("WARC-Refers-To-Date", original.date.clone()));
    if let Some(id) = &original.id {
        headers.push(("WARC-Refers-To", id.clone()));
    }
    headers.push(("WARC-Payload-Digest", digest.clone()));
    headers.push(("Content-Type", "application/http; msgtype=response".into()));
    let original_url = original.url.clone();
    let revisit = OutRecord {
        warc_type: "revisit",
        headers,
        block: &record.block[..head_end],
    };
    let place = output.write(&revisit)?;
    let mut entry = line(&digest, place, "warc/revisit".into());
    entry.original = Some(original_url);
    index.push(entry);
    Ok(())
}

impl std::fmt::Display for DedupReport {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let share = |part: u64, whole: u64| 100.0 * part as f64 / whole.max(1) as f64;
        writeln!(
            formatter,
            "read {} WARC files ({} bytes): {} records, {} responses",
            self.input_files, self.input_bytes, self.records, self.responses
        )?;
        writeln!(
            formatter,
            "{} responses written as revisits of an identical payload; {} distinct payloads",
            self.revisits, self.distinct_payloads
        )?;
        writeln!(
            formatter,
            "payload bytes: {} captured, {} written once, {} saved ({:.1}%)",
            self.payload_bytes,
            self.payload_bytes - self.payload_bytes_saved,
            self.payload_bytes_saved,
            share(self.payload_bytes_saved, self.payload_bytes)
        )?;
        writeln!(
            formatter,
            "WARC bytes: {} read, {} written ({:.1}% of them) in {} files; index {} ({} lines)",
            self.input_bytes,
            self.output_bytes,
            share(self.output_bytes, self.input_bytes),
            self.files.len(),
            self.index,
            self.index_lines
        )?;
        if self.digests_corrected > 0 {
            writeln!(
                formatter,
                "{} responses copied with the payload digest of the bytes after their HTTP head (theirs was of the chunks joined)",
                self.digests_corrected
            )?;
        }
        if self.bad_records > 0 {
            writeln!(
                formatter,
                "{} records could not be read and were skipped, e.g. {}",
                self.bad_records,
                self.bad_examples.join("; ")
            )?;
        }
        write!(formatter, "{:.2} s", self.seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WARC file of responses `(url, id, body)` at `path`.
    fn crawl(path: &Path, responses: &[(&str, &str, &str)]) {
        let mut writer = WarcWriter::new(File::create(path).unwrap(), true);
        for (url, id, body) in responses {
            let block = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            writer
                .write_record(&OutRecord {
                    warc_type: "response",
                    headers: vec![
                        ("WARC-Record-ID", id.to_string()),
                        ("WARC-Date", "2026-11-20T12:00:00Z".into()),
                        ("WARC-Target-URI", url.to_string()),
                        ("Content-Type", "application/http; msgtype=response".into()),
                    ],
                    block: block.as_bytes(),
                })
                .unwrap();
        }
        writer.finish().unwrap();
    }

    #[test]
    fn a_payload_written_before_is_a_revisit_of_its_first_capture() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("one");
        let second = dir.path().join("two");
        std::fs::create_dir_all(&first).unwrap();
        std::fs::create_dir_all(&second).unwrap();
        crawl(
            &first.join("a.warc.gz"),
            &[
                ("http://www.example.org/docs/", "<urn:uuid:1>", "the manual"),
                ("http://www.example.org/empty", "<urn:uuid:2>", ""),
            ],
        );
        // The next crawl: the manual on a mirror, the empty page again.
        crawl(
            &second.join("b.warc.gz"),
            &[
                (
                    "http://mirror.example.net/docs/",
                    "<urn:uuid:3>",
                    "the manual",
                ),
                ("http://mirror.example.net/empty", "<urn:uuid:4>", ""),
            ],
        );
        let options = DedupOptions {
            out: dir.path().join("out"),
            max_file_bytes: 1,
            prefix: "d".into(),
        };
        let report = dedup(&[first.clone(), second.clone()], &options).unwrap();
        assert_eq!(report.responses, 4);
        assert_eq!(report.revisits, 1, "an empty payload is never a revisit");
        assert_eq!(report.payload_bytes_saved, "the manual".len() as u64);
        // A file a record, at a limit of one byte.
        assert_eq!(report.files.len(), 4);
        let records: Vec<WarcRecord> = report
            .files
            .iter()
            .flat_map(|file| WarcReader::open(&options.out.join(file), 1 << 20).unwrap())
            .map(Result::unwrap)
            .collect();
        let revisit = records
            .iter()
            .find(|record| record.warc_type() == "revisit")
            .unwrap();
        assert_eq!(
            revisit.header("WARC-Target-URI"),
            Some("http://mirror.example.net/docs/")
        );
        assert_eq!(
            revisit.header("WARC-Refers-To-Target-URI"),
            Some("http://www.example.org/docs/")
        );
        assert_eq!(revisit.header("WARC-Refers-To"), Some("<urn:uuid:1>"));
        assert_eq!(
            revisit.header("WARC-Refers-To-Date"),
            Some("2026-11-20T12:00:00Z")
        );
        assert_eq!(
            revisit.header("WARC-Payload-Digest"),
            Some(warc_sha1(b"the manual").as_str())
        );
        assert!(revisit.block.starts_with(b"HTTP/1.1 200 OK"));
        assert!(revisit.block.ends_with(b"\r\n\r\n"), "the head only");
        // The index: sorted by key, the revisit naming its original and
        // both captures of the payload counted.
        let index = std::fs::read_to_string(options.out.join("d.cdxj")).unwrap();
        let lines: Vec<&str> = index.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("net,example,mirror)/docs 20261120120000 "));
        assert!(
            lines[0].contains("\"mime\":\"warc/revisit\""),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("\"original\":\"http://www.example.org/docs/\""));
        assert!(lines[0].contains("\"captures\":2"), "{}", lines[0]);
        assert!(lines[2].starts_with("org,example)/docs 20261120120000 "));
        // Written again into the same folder: refused, nothing touched.
        let before = std::fs::read(options.out.join(&report.files[0])).unwrap();
        assert!(matches!(
            dedup(&[first, second], &options),
            Err(DedupError::Exists { .. })
        ));
        assert_eq!(
            std::fs::read(options.out.join(&report.files[0])).unwrap(),
            before
        );
    }

    #[test]
    fn a_response_head_ends_at_its_blank_line() {
        let end = |block: &[u8]| http_head(block).map(|(end, ..)| end);
        assert_eq!(end(b"HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody"), Some(25));
        assert_eq!(end(b"HTTP/1.0 200 OK\n\nbody"), Some(17));
        assert_eq!(end(b"not http"), None);
        assert_eq!(
            http_head(b"HTTP/1.1 404 Not Found\r\nContent-Type: Text/HTML; charset=utf-8\r\n\r\n")
                .map(|(_, status, mime)| (status, mime)),
            Some(("404".to_string(), "text/html".to_string()))
        );
        assert_eq!(timestamp("2026-11-20T12:00:00Z"), "20261120120000");
        assert_eq!(timestamp("2026-11-20T12:00:00.123Z"), "20261120120000");
    }
}
