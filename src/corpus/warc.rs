//! Reading WARC files record by record: WARC 1.0 and 1.1, plain or gzip per
//! record (the `.warc.gz` convention; a whole file in one gzip member works too).
//!
//! A small reader of our own rather than a crate: what the crawl needs from it
//! is error recovery the crates do not offer. A bad record (wrong
//! Content-Length, corrupt gzip member, garbage between records) is reported
//! with its file and byte offset and reading resumes at the next record, so
//! every good record around a bad one is kept. Memory per reader is bounded by
//! the record size cap: a record whose block is larger is skipped without being
//! held in memory.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use flate2::bufread::GzDecoder;

/// Longest header section we accept for one record (all WARC header lines).
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// One WARC record: its version line, its named fields and its block.
#[derive(Debug, Clone)]
pub struct WarcRecord {
    /// Byte offset of the record in the file (of its gzip member when gzipped).
    pub offset: u64,
    /// `WARC/1.0` or `WARC/1.1` (older `WARC/0.1x` are read the same way).
    pub version: String,
    pub headers: Vec<(String, String)>,
    pub block: Vec<u8>,
}

impl WarcRecord {
    /// The first value of a named field, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        header_value(&self.headers, name)
    }

    /// The `WARC-Type` field, lower-cased (empty when missing).
    pub fn warc_type(&self) -> String {
        self.header("WARC-Type")
            .unwrap_or_default()
            .to_ascii_lowercase()
    }
}

/// The first value of a named header in a list, compared case-insensitively.
pub fn header_value<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_str())
}

/// What went wrong with one record or one file.
#[derive(Debug, thiserror::Error)]
pub enum WarcError {
    #[error("{path}: cannot read: {source}")]
    Open { path: PathBuf, source: io::Error },
    #[error("{path}: not a WARC file (offset {offset}: {detail})")]
    NotWarc {
        path: PathBuf,
        offset: u64,
        detail: String,
    },
    #[error("{path} at offset {offset}: {kind}{}", .skip.describe(*.offset))]
    Record {
        path: PathBuf,
        offset: u64,
        kind: RecordProblem,
        /// The bytes passed over to the next record.
        skip: Skip,
    },
}

/// The bytes a reader passed over after a bad record, from the record's
/// offset: said in every warning, so no byte is lost silently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Nothing beyond the record itself (an over-cap record read to its
    /// end, a read error that stops the file).
    Record,
    /// The bytes up to the next record, which starts at `next`.
    To { next: u64 },
    /// The bytes to the end of the file, which ends at `end`: no record
    /// follows.
    ToEnd { end: u64 },
    /// Inside a gzip member that holds many records: this many decompressed
    /// bytes, to the member's next record or its end.
    InMember { bytes: u64 },
}

impl Skip {
    /// How the warning of a record at `offset` ends.
    fn describe(&self, offset: u64) -> String {
        match *self {
            Skip::Record => String::new(),
            Skip::To { next } => format!(
                "; skipped {} bytes (offsets {offset}-{}) to the next record at offset {next}",
                next - offset,
                next - 1
            ),
            Skip::ToEnd { end } if end > offset => format!(
                "; skipped the last {} bytes of the file (offsets {offset}-{}): no record follows",
                end - offset,
                end - 1
            ),
            Skip::ToEnd { .. } => "; no record follows".to_string(),
            Skip::InMember { bytes } => {
                format!("; skipped {bytes} decompressed bytes of the gzip member")
            }
        }
    }
}

impl WarcError {
    /// The short, stable reason used to count skipped records.
    pub fn reason(&self) -> &'static str {
        match self {
            WarcError::Open { .. } => "unreadable-file",
            WarcError::NotWarc { .. } => "not-warc",
            WarcError::Record { kind, .. } => kind.reason(),
        }
    }
}

/// Why one record was skipped.
#[derive(Debug, thiserror::Error)]
pub enum RecordProblem {
    #[error("not a WARC record: {0}")]
    NoVersionLine(String),
    #[error("bad WARC header: {0}")]
    BadHeader(String),
    #[error("record is truncated (Content-Length {expected}, only {found} bytes left)")]
    Truncated { expected: u64, found: u64 },
    #[error("record is truncated: the file ends inside its WARC header")]
    HeaderCut,
    #[error("Content-Length {declared} does not match the record (no record end after the block)")]
    WrongLength { declared: u64 },
    #[error("block of {declared} bytes is over the {cap}-byte cap")]
    TooLarge { declared: u64, cap: u64 },
    #[error("corrupt gzip member: {0}")]
    BadGzip(String),
    #[error("read error: {0}")]
    Io(String),
}

impl RecordProblem {
    pub fn reason(&self) -> &'static str {
        match self {
            RecordProblem::NoVersionLine(_) => "not-a-record",
            RecordProblem::BadHeader(_) => "bad-warc-header",
            RecordProblem::Truncated { .. } | RecordProblem::HeaderCut => "truncated-record",
            RecordProblem::WrongLength { .. } => "wrong-content-length",
            RecordProblem::TooLarge { .. } => "too-large",
            RecordProblem::BadGzip(_) => "bad-gzip",
            RecordProblem::Io(_) => "read-error",
        }
    }
}

/// Counts the bytes pulled from the inner reader, so record offsets are known.
struct CountingReader<R> {
    inner: R,
    position: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.position += read as u64;
        Ok(read)
    }
}

impl<R: Seek> Seek for CountingReader<R> {
    fn seek(&mut self, position: SeekFrom) -> io::Result<u64> {
        self.position = self.inner.seek(position)?;
        Ok(self.position)
    }
}

type FileInput = BufReader<CountingReader<File>>;

fn input_position(input: &FileInput) -> u64 {
    input.get_ref().position - input.buffer().len() as u64
}

/// Where a reader is in its file.
enum Position {
    /// Reading the file itself: a plain file, or a gzip file between members.
    File(FileInput),
    /// Inside the gzip member that starts at `member_offset`.
    Member {
        decoded: Box<BufReader<GzDecoder<FileInput>>>,
        member_offset: u64,
    },
    /// Only while moving the input from one state to the other.
    Moving,
}

/// Reads the records of one WARC file in order; an iterator of
/// `Result<WarcRecord, WarcError>` that keeps going after a bad record.
/// Records are handed out one at a time, also from a gzip member that holds
/// many (a whole file gzipped at once), so memory stays bounded.
pub struct WarcReader {
    path: PathBuf,
    position: Position,
    gzip: bool,
    max_block_bytes: u64,
    /// The version line of the next record, already consumed from the input
    /// while resynchronising after a bad record, with the record's offset.
    found_version_line: Option<(u64, Vec<u8>)>,
    records_seen: u64,
    finished: bool,
}

impl WarcReader {
    /// Opens a WARC file; gzip is recognised by its magic bytes, not its name.
    pub fn open(path: &Path, max_block_bytes: u64) -> Result<WarcReader, WarcError> {
        let file = File::open(path).map_err(|source| WarcError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let mut input = BufReader::with_capacity(
            256 * 1024,
            CountingReader {
                inner: file,
                position: 0,
            },
        );
        let start = input.fill_buf().map_err(|source| WarcError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        // By the magic bytes; a file that starts with neither a record nor
        // a gzip member (stray bytes before the first) by its name.
        let named_gzip = path
            .extension()
            .is_some_and(|extension| extension.eq_ignore_ascii_case("gz"));
        let gzip = start.starts_with(&[0x1f, 0x8b]) || (named_gzip && !start.starts_with(b"WARC/"));
        Ok(WarcReader {
            path: path.to_path_buf(),
            position: Position::File(input),
            gzip,
            max_block_bytes,
            found_version_line: None,
            records_seen: 0,
            finished: false,
        })
    }

    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// Bytes of the file consumed so far.
    pub fn position(&self) -> u64 {
        match &self.position {
            Position::File(input) => input_position(input),
            Position::Member { decoded, .. } => input_position(decoded.get_ref().get_ref()),
            Position::Moving => 0,
        }
    }

    /// True once the iterator has nothing more to give.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn record_error(&self, offset: u64, kind: RecordProblem, skip: Skip) -> WarcError {
        WarcError::Record {
            path: self.path.clone(),
            offset,
            kind,
            skip,
        }
    }

    /// The error for a first record that is not a WARC record at all: the
    /// file is not a WARC file, and is not searched further.
    fn not_warc(&mut self, offset: u64, problem: RecordProblem) -> WarcError {
        self.finished = true;
        WarcError::NotWarc {
            path: self.path.clone(),
            offset,
            detail: problem.to_string(),
        }
    }

    fn next_plain(&mut self) -> Option<Result<WarcRecord, WarcError>> {
        let Position::File(input) = &mut self.position else {
            return None;
        };
        let (offset, version_line) = match self.found_version_line.take() {
            Some((offset, line)) => (offset, Some(line)),
            None => match skip_blank_lines(input) {
                Ok(true) => (input_position(input), None),
                Ok(false) => return None,
                Err(error) => {
                    let offset = input_position(input);
                    self.finished = true;
                    return Some(Err(self.record_error(
                        offset,
                        RecordProblem::Io(error.to_string()),
                        Skip::Record,
                    )));
                }
            },
        };
        let problem = match read_one_record(input, offset, self.max_block_bytes, version_line) {
            Ok(record) => return Some(Ok(record)),
            Err(problem) => problem,
        };
        // An over-cap record was skipped up to its record end: nothing to
        // look for. Otherwise go back to just after this record's start (it
        // may have swallowed the next record's first bytes, and stray bytes
        // may run into the next record without a newline) and look for the
        // next record's version line anywhere.
        let skip = if matches!(problem, RecordProblem::TooLarge { .. }) {
            Skip::Record
        } else {
            let found = input
                .seek(SeekFrom::Start(offset + 1))
                .and_then(|_| find_next_record_start(input));
            match found {
                Ok((_, Some(line))) => {
                    let next = input_position(input) - line.len() as u64;
                    self.found_version_line = Some((next, line));
                    Skip::To { next }
                }
                Ok((_, None)) => Skip::ToEnd {
                    end: input_position(input),
                },
                Err(_) => {
                    self.finished = true;
                    Skip::Record
                }
            }
        };
        // A file whose first bytes are no record is not a WARC file, unless
        // a record follows them (padding or stray bytes before the first).
        let first = self.records_seen == 0 && matches!(problem, RecordProblem::NoVersionLine(_));
        if first && !matches!(skip, Skip::To { .. }) {
            self.found_version_line = None;
            return Some(Err(self.not_warc(offset, problem)));
        }
        Some(Err(self.record_error(offset, problem, skip)))
    }

    fn next_gzip(&mut self) -> Option<Result<WarcRecord, WarcError>> {
        loop {
            match std::mem::replace(&mut self.position, Position::Moving) {
                Position::Moving => return None,
                Position::File(mut input) => {
                    match input.fill_buf() {
                        Ok([]) => {
                            self.position = Position::File(input);
                            return None;
                        }
                        Ok(_) => {}
                        Err(error) => {
                            let offset = input_position(&input);
                            self.position = Position::File(input);
                            self.finished = true;
                            return Some(Err(self.record_error(
                                offset,
                                RecordProblem::Io(error.to_string()),
                                Skip::Record,
                            )));
                        }
                    }
                    let member_offset = input_position(&input);
                    self.position = Position::Member {
                        decoded: Box::new(BufReader::with_capacity(
                            64 * 1024,
                            GzDecoder::new(input),
                        )),
                        member_offset,
                    };
                }
                Position::Member {
                    mut decoded,
                    member_offset,
                } => {
                    let version_line = match self.found_version_line.take() {
                        Some((_, line)) => Some(line),
                        None => match skip_blank_lines(&mut decoded) {
                            Ok(true) => None,
                            Ok(false) => {
                                // The member ended: on to the next one.
                                self.position = Position::File(decoded.into_inner().into_inner());
                                continue;
                            }
                            Err(error) => {
                                let skip = self.abandon_member(decoded, member_offset);
                                return Some(Err(self.record_error(
                                    member_offset,
                                    gzip_problem(error),
                                    skip,
                                )));
                            }
                        },
                    };
                    let problem = match read_one_record(
                        &mut decoded,
                        member_offset,
                        self.max_block_bytes,
                        version_line,
                    ) {
                        Ok(record) => {
                            self.position = Position::Member {
                                decoded,
                                member_offset,
                            };
                            return Some(Ok(record));
                        }
                        Err(problem) => problem,
                    };
                    if matches!(problem, RecordProblem::BadGzip(_) | RecordProblem::Io(_)) {
                        let skip = self.abandon_member(decoded, member_offset);
                        return Some(Err(self.record_error(member_offset, problem, skip)));
                    }
                    if self.records_seen == 0
                        && member_offset == 0
                        && matches!(problem, RecordProblem::NoVersionLine(_))
                    {
                        // The first member is no record (a file that is not
                        // WARC, or a member damaged so that it still
                        // inflates): on to the next member, when there is one.
                        let skip = self.abandon_member(decoded, member_offset);
                        if matches!(skip, Skip::ToEnd { .. }) {
                            return Some(Err(self.not_warc(0, problem)));
                        }
                        return Some(Err(self.record_error(member_offset, problem, skip)));
                    }
                    let mut skip = Skip::Record;
                    if !matches!(problem, RecordProblem::TooLarge { .. }) {
                        // Look for a next record in the rest of the member (a
                        // member usually holds one record, a whole-file gzip all).
                        match find_next_record_start(&mut decoded) {
                            Ok((skipped, Some(line))) => {
                                skip = Skip::InMember { bytes: skipped };
                                self.found_version_line = Some((member_offset, line));
                            }
                            Ok((skipped, None)) => skip = Skip::InMember { bytes: skipped },
                            Err(_) => {
                                // The member is corrupt further on: skip to the next one.
                                let skip = self.abandon_member(decoded, member_offset);
                                return Some(Err(self.record_error(member_offset, problem, skip)));
                            }
                        }
                    }
                    self.position = Position::Member {
                        decoded,
                        member_offset,
                    };
                    return Some(Err(self.record_error(member_offset, problem, skip)));
                }
            }
        }
    }

    /// Gives up on a corrupt gzip member: moves to the next member header
    /// after its start, or to the end when there is none. Returns what was
    /// passed over.
    fn abandon_member(
        &mut self,
        decoded: Box<BufReader<GzDecoder<FileInput>>>,
        member_offset: u64,
    ) -> Skip {
        let mut input = decoded.into_inner().into_inner();
        let skip = if seek_to_next_gzip_member(&mut input, member_offset) {
            Skip::To {
                next: input_position(&input),
            }
        } else {
            self.finished = true;
            let end = input.get_ref().inner.metadata().map(|meta| meta.len());
            Skip::ToEnd {
                end: end.unwrap_or(member_offset),
            }
        };
        self.position = Position::File(input);
        skip
    }
}

impl Iterator for WarcReader {
    type Item = Result<WarcRecord, WarcError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        let item = if self.gzip {
            self.next_gzip()
        } else {
            self.next_plain()
        };
        match item {
            Some(item) => {
                self.records_seen += 1;
                Some(item)
            }
            None => {
                self.finished = true;
                None
            }
        }
    }
}

fn gzip_problem(err: io::Error) -> RecordProblem {
    match err.kind() {
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => {
            RecordProblem::BadGzip(err.to_string())
        }
        _ => RecordProblem::Io(err.to_string()),
    }
}

/// Skips CR/LF bytes; returns false at end of input.
fn skip_blank_lines<R: BufRead>(input: &mut R) -> io::Result<bool> {
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok(false);
        }
        let blanks = available
            .iter()
            .take_while(|&&byte| byte == b'\r' || byte == b'\n')
            .count();
        let has_more = blanks < available.len();
        input.consume(blanks);
        if has_more {
            return Ok(true);
        }
    }
}

/// Reads one line (up to and including `\n`) into `line`, refusing lines that
/// would push the header section past `budget` bytes.
fn read_header_line<R: BufRead>(
    input: &mut R,
    line: &mut Vec<u8>,
    budget: &mut usize,
) -> Result<usize, RecordProblem> {
    line.clear();
    let read = input
        .by_ref()
        .take(*budget as u64 + 1)
        .read_until(b'\n', line)
        .map_err(gzip_problem)?;
    if read > *budget {
        return Err(RecordProblem::BadHeader(format!(
            "header section longer than {MAX_HEADER_BYTES} bytes"
        )));
    }
    *budget -= read;
    Ok(read)
}

/// Reads one record (version line, fields, block, trailing CRLF CRLF).
///
/// `version_line` is the record's first line when it was already read (while
/// looking for the next record after a bad one).
fn read_one_record<R: BufRead>(
    input: &mut R,
    offset: u64,
    max_block_bytes: u64,
    version_line: Option<Vec<u8>>,
) -> Result<WarcRecord, RecordProblem> {
    let mut budget = MAX_HEADER_BYTES;
    let mut line = Vec::with_capacity(128);
    match version_line {
        Some(found) => line = found,
        None => {
            read_header_line(input, &mut line, &mut budget)?;
        }
    }
    let version_line = String::from_utf8_lossy(&line).trim_end().to_string();
    if !is_version(version_line.as_bytes()) {
        let shown: String = version_line.chars().take(40).collect();
        return Err(RecordProblem::NoVersionLine(format!(
            "expected a version line like WARC/1.1, found {shown:?}"
        )));
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    loop {
        let read = read_header_line(input, &mut line, &mut budget)?;
        if read == 0 {
            return Err(RecordProblem::HeaderCut);
        }
        let text = header_text(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        if text.starts_with([' ', '\t']) {
            // A folded continuation of the previous field.
            match headers.last_mut() {
                Some((_, value)) => {
                    value.push(' ');
                    value.push_str(text.trim());
                }
                None => {
                    return Err(RecordProblem::BadHeader(
                        "continuation line before any field".into(),
                    ))
                }
            }
            continue;
        }
        let Some((name, value)) = text.split_once(':') else {
            let shown: String = text.chars().take(40).collect();
            return Err(RecordProblem::BadHeader(format!(
                "field without a colon: {shown:?}"
            )));
        };
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let length_text = header_value(&headers, "Content-Length")
        .ok_or_else(|| RecordProblem::BadHeader("no Content-Length field".into()))?;
    let declared: u64 = length_text.parse().map_err(|_| {
        RecordProblem::BadHeader(format!("Content-Length {length_text:?} is not a number"))
    })?;
    if declared > max_block_bytes {
        let skipped =
            io::copy(&mut input.by_ref().take(declared), &mut io::sink()).map_err(gzip_problem)?;
        if skipped < declared {
            return Err(RecordProblem::Truncated {
                expected: declared,
                found: skipped,
            });
        }
        if !consume_record_end(input) {
            return Err(RecordProblem::WrongLength { declared });
        }
        return Err(RecordProblem::TooLarge {
            declared,
            cap: max_block_bytes,
        });
    }
    // The declared length is not trusted for the allocation: grow as bytes come.
    let mut block = Vec::with_capacity(declared.min(1 << 20) as usize);
    let read = input
        .by_ref()
        .take(declared)
        .read_to_end(&mut block)
        .map_err(gzip_problem)? as u64;
    if read < declared {
        return Err(RecordProblem::Truncated {
            expected: declared,
            found: read,
        });
    }
    if !consume_record_end(input) {
        return Err(RecordProblem::WrongLength { declared });
    }
    Ok(WarcRecord {
        offset,
        version: version_line,
        headers,
        block,
    })
}

/// A header line as text: UTF-8, with each byte that is not part of valid
/// UTF-8 percent-encoded (`caf\xe9` becomes `caf%E9`), so that two URLs
/// that differ in such a byte stay two URLs, as a crawler that fetched them
/// saw them.
fn header_text(line: &[u8]) -> std::borrow::Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(line) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut text = String::with_capacity(line.len() + 8);
    for chunk in line.utf8_chunks() {
        text.push_str(chunk.valid());
        for byte in chunk.invalid() {
            text.push_str(&format!("%{byte:02X}"));
        }
    }
    std::borrow::Cow::Owned(text)
}

/// Consumes the CRLF CRLF that ends a record. Returns false when the bytes
/// after the block are not a record end, which means the Content-Length was
/// wrong. Lenient where writers differ: bare LF LF, a missing record end at the
/// end of input, or the next record directly after the block.
fn consume_record_end<R: BufRead>(input: &mut R) -> bool {
    let mut ending = Vec::with_capacity(4);
    while ending.len() < 4 {
        let Ok(available) = input.fill_buf() else {
            return false;
        };
        match available.first() {
            None => return true,
            Some(&byte) if byte == b'\r' || byte == b'\n' => {
                ending.push(byte);
                input.consume(1);
            }
            Some(_) => break,
        }
    }
    if ending == b"\r\n\r\n" || ending.ends_with(b"\n\n") {
        return true;
    }
    match input.fill_buf() {
        Ok([]) => true,
        Ok(next) => next.starts_with(b"WARC/"),
        Err(_) => false,
    }
}

/// Consumes bytes up to the next record start, a version line (`WARC/1.1`,
/// `WARC/1.0`, `WARC/0.17`: `WARC/`, 0 or 1, a dot, digits, an optional CR,
/// LF) that may begin at any byte, not only at a line's start: stray bytes
/// without a newline (a record cut short by a crash, padding) often run
/// straight into the next record. Returns the bytes passed over and the
/// version line, consumed; no line at the end of input. Memory is one
/// version line, however long the stray bytes.
fn find_next_record_start<R: BufRead>(input: &mut R) -> io::Result<(u64, Option<Vec<u8>>)> {
    let mut skipped = 0u64;
    let mut candidate: Vec<u8> = Vec::with_capacity(LONGEST_VERSION_LINE);
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok((skipped + candidate.len() as u64, None));
        }
        let mut used = 0;
        for &byte in available {
            used += 1;
            if candidate.is_empty() {
                if byte == b'W' {
                    candidate.push(byte);
                } else {
                    skipped += 1;
                }
                continue;
            }
            candidate.push(byte);
            if byte == b'\n' && is_version_line(&candidate) {
                input.consume(used);
                return Ok((skipped, Some(candidate)));
            }
            if !could_start_version_line(&candidate) {
                // `W` is the only byte a version line can start with, and
                // it appears in the line only there: a new candidate starts
                // at this byte or not at all.
                let restart = byte == b'W';
                skipped += candidate.len() as u64 - u64::from(restart);
                candidate.clear();
                if restart {
                    candidate.push(byte);
                }
            }
        }
        input.consume(used);
    }
}

/// The longest version line looked for, with its CR LF.
const LONGEST_VERSION_LINE: usize = 18;

/// Whether `bytes` can be the start of a version line: `WARC/`, 0 or 1, a
/// dot, digits, then at most a CR before the LF.
fn could_start_version_line(bytes: &[u8]) -> bool {
    const PREFIX: &[u8] = b"WARC/";
    if bytes.len() > LONGEST_VERSION_LINE {
        return false;
    }
    let head = bytes.len().min(PREFIX.len());
    if bytes[..head] != PREFIX[..head] {
        return false;
    }
    match &bytes[head..] {
        [] => true,
        [b'0' | b'1'] => true,
        [b'0' | b'1', b'.', minor @ ..] => {
            let digits = minor.iter().take_while(|b| b.is_ascii_digit()).count();
            matches!(&minor[digits..], [] | [b'\r'] | [b'\n'] | [b'\r', b'\n'])
        }
        _ => false,
    }
}

/// Whether `text` (a line without its line end) is a version: `WARC/`, 0
/// or 1, a dot and digits.
fn is_version(text: &[u8]) -> bool {
    text.len() > 7
        && text.len() + 2 <= LONGEST_VERSION_LINE
        && could_start_version_line(text)
        && text[7..].iter().all(u8::is_ascii_digit)
}

/// Whether `line` is a whole version line: one that ends in LF and has a
/// minor version.
fn is_version_line(line: &[u8]) -> bool {
    could_start_version_line(line)
        && line.ends_with(b"\n")
        && line.get(7).is_some_and(u8::is_ascii_digit)
}

/// After a corrupt gzip member, moves to the next gzip member header
/// (`1f 8b 08`) after `failed_member_offset`. Returns false when there is none.
fn seek_to_next_gzip_member(input: &mut FileInput, failed_member_offset: u64) -> bool {
    const MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];
    let mut chunk = vec![0u8; 256 * 1024];
    let mut position = failed_member_offset + 1;
    loop {
        if input.seek(SeekFrom::Start(position)).is_err() {
            return false;
        }
        let mut filled = 0;
        while filled < chunk.len() {
            match input.read(&mut chunk[filled..]) {
                Ok(0) => break,
                Ok(read) => filled += read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
        if let Some(found) = chunk[..filled]
            .windows(MAGIC.len())
            .position(|window| window == MAGIC)
        {
            return input.seek(SeekFrom::Start(position + found as u64)).is_ok();
        }
        if filled < chunk.len() {
            return false;
        }
        // The next chunk starts two bytes back: a header may straddle chunks.
        position += (filled - (MAGIC.len() - 1)) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::warc_write::{OutRecord, WarcWriter};
    use std::io::Write;

    fn response(uri: &str, body: &str) -> (Vec<(&'static str, String)>, Vec<u8>) {
        let block =
            format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n{body}").into_bytes();
        (vec![("WARC-Target-URI", uri.to_string())], block)
    }

    fn write_file(dir: &Path, name: &str, gzip: bool, raw_records: &[Vec<u8>]) -> PathBuf {
        let path = dir.join(name);
        let mut writer = WarcWriter::new(File::create(&path).unwrap(), gzip);
        for raw in raw_records {
            writer.write_raw_record(raw).unwrap();
        }
        writer.finish().unwrap();
        path
    }

    fn record_bytes(uri: &str, body: &str) -> Vec<u8> {
        let (headers, block) = response(uri, body);
        let mut writer = WarcWriter::new(Vec::new(), false);
        writer
            .write_record(&OutRecord {
                warc_type: "response",
                headers,
                block: &block,
            })
            .unwrap();
        writer.finish().unwrap()
    }

    /// Flips bits of `range` in the file: inside the first gzip member's
    /// deflate data when the range starts after its 10-byte header.
    fn damage(path: &Path, range: std::ops::Range<usize>, mask: u8) {
        let mut bytes = std::fs::read(path).unwrap();
        for byte in &mut bytes[range] {
            *byte ^= mask;
        }
        std::fs::write(path, &bytes).unwrap();
    }

    fn three_records() -> Vec<Vec<u8>> {
        (0..3)
            .map(|index| {
                record_bytes(
                    &format!("http://a.example/{index}"),
                    "<p>some text here</p>",
                )
            })
            .collect()
    }

    fn read_all(path: &Path) -> (Vec<WarcRecord>, Vec<WarcError>) {
        read_all_with_cap(path, 1 << 20)
    }

    fn read_all_with_cap(path: &Path, max_block_bytes: u64) -> (Vec<WarcRecord>, Vec<WarcError>) {
        let mut records = Vec::new();
        let mut errors = Vec::new();
        for item in WarcReader::open(path, max_block_bytes).unwrap() {
            match item {
                Ok(record) => records.push(record),
                Err(error) => errors.push(error),
            }
        }
        (records, errors)
    }

    #[test]
    fn reads_plain_and_gzip_records_with_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let raws: Vec<Vec<u8>> = (0..3)
            .map(|index| record_bytes(&format!("http://a.example/{index}"), "<p>hi</p>"))
            .collect();
        for gzip in [false, true] {
            let path = write_file(
                dir.path(),
                if gzip { "a.warc.gz" } else { "a.warc" },
                gzip,
                &raws,
            );
            let (records, errors) = read_all(&path);
            assert!(errors.is_empty(), "{errors:?}");
            assert_eq!(records.len(), 3);
            assert_eq!(records[0].offset, 0);
            assert!(records[1].offset > 0);
            assert_eq!(
                records[2].header("warc-target-uri"),
                Some("http://a.example/2")
            );
            assert_eq!(records[2].warc_type(), "response");
            assert!(records[2].block.ends_with(b"<p>hi</p>"));
        }
    }

    #[test]
    fn wrong_content_length_skips_one_record_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let good = record_bytes("http://a.example/good", "<p>good</p>");
        let bad = String::from_utf8(record_bytes("http://a.example/bad", "<p>bad</p>"))
            .unwrap()
            .replace("Content-Length: 54", "Content-Length: 45")
            .into_bytes();
        assert_ne!(
            bad,
            record_bytes("http://a.example/bad", "<p>bad</p>"),
            "fixture must change the length"
        );
        // Too long: the block runs into the next record's version line.
        let too_long = String::from_utf8(record_bytes("http://a.example/bad", "<p>bad</p>"))
            .unwrap()
            .replace("Content-Length: 54", "Content-Length: 62")
            .into_bytes();
        for (gzip, bad) in [
            (false, &bad),
            (true, &bad),
            (false, &too_long),
            (true, &too_long),
        ] {
            let path = write_file(
                dir.path(),
                "b.warc",
                gzip,
                &[good.clone(), bad.clone(), good.clone()],
            );
            let (records, errors) = read_all(&path);
            assert_eq!(records.len(), 2, "gzip={gzip}");
            assert_eq!(errors.len(), 1, "gzip={gzip}");
            // In a gzip member a length past the member's end reads as a truncated record.
            assert!(
                ["wrong-content-length", "truncated-record"].contains(&errors[0].reason()),
                "{}",
                errors[0]
            );
            assert!(
                errors[0].to_string().contains("b.warc at offset"),
                "{}",
                errors[0]
            );
            assert_eq!(
                records[1].header("WARC-Target-URI"),
                Some("http://a.example/good")
            );
        }
    }

    #[test]
    fn truncated_gzip_keeps_the_records_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let raws = three_records();
        let path = write_file(dir.path(), "t.warc.gz", true, &raws);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 20]).unwrap();
        let (records, errors) = read_all(&path);
        assert_eq!(records.len(), 2);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].reason(), "bad-gzip");
    }

    #[test]
    fn corrupt_member_in_the_middle_resyncs_to_the_next_member() {
        let dir = tempfile::tempdir().unwrap();
        let raws = three_records();
        let path = write_file(dir.path(), "c.warc.gz", true, &raws);
        damage(&path, 12..30, 0x5a);
        let (records, errors) = read_all(&path);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(records.len(), 2);
        assert_eq!(
            records[0].header("WARC-Target-URI"),
            Some("http://a.example/1")
        );
    }

    #[test]
    fn a_file_that_is_not_warc_is_one_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.warc");
        std::fs::File::create(&path)
            .unwrap()
            .write_all(
                b"<html>this is a web page, not a crawl</html>\n"
                    .repeat(100)
                    .as_slice(),
            )
            .unwrap();
        let (records, errors) = read_all(&path);
        assert!(records.is_empty());
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].reason(), "not-warc");
        assert!(
            errors[0]
                .to_string()
                .contains("notes.warc: not a WARC file"),
            "{}",
            errors[0]
        );
        // The same for gzip-compressed garbage.
        let path = dir.path().join("notes.warc.gz");
        let mut encoder = flate2::write::GzEncoder::new(
            File::create(&path).unwrap(),
            flate2::Compression::fast(),
        );
        encoder.write_all(b"just some text\n").unwrap();
        encoder.finish().unwrap();
        let (records, errors) = read_all(&path);
        assert!(records.is_empty());
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].reason(), "not-warc");
    }

    #[test]
    fn over_cap_record_is_skipped_without_losing_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let big = record_bytes("http://a.example/big", &"x".repeat(5000));
        let small = record_bytes("http://a.example/small", "<p>s</p>");
        for gzip in [false, true] {
            let path = write_file(dir.path(), "big.warc", gzip, &[big.clone(), small.clone()]);
            let (records, errors) = read_all_with_cap(&path, 1000);
            assert_eq!(records.len(), 1);
            assert_eq!(
                records[0].header("WARC-Target-URI"),
                Some("http://a.example/small")
            );
            assert_eq!(errors.len(), 1);
            assert_eq!(errors[0].reason(), "too-large");
        }
    }

    #[test]
    fn whole_file_gzip_and_folded_headers_and_warc_1_0() {
        let dir = tempfile::tempdir().unwrap();
        let mut plain = Vec::new();
        let mut writer = WarcWriter::new(&mut plain, false).with_version_1_0();
        for index in 0..2 {
            let (mut headers, block) = response(&format!("http://a.example/{index}"), "<p>x</p>");
            headers.push(("X-Folded", "first\r\n  second".to_string()));
            writer
                .write_record(&OutRecord {
                    warc_type: "response",
                    headers,
                    block: &block,
                })
                .unwrap();
        }
        writer.finish().unwrap();
        let path = dir.path().join("whole.warc.gz");
        let mut encoder = flate2::write::GzEncoder::new(
            File::create(&path).unwrap(),
            flate2::Compression::fast(),
        );
        encoder.write_all(&plain).unwrap();
        encoder.finish().unwrap();
        let (records, errors) = read_all(&path);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].version, "WARC/1.0");
        assert_eq!(records[1].header("x-folded"), Some("first second"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// Whatever is written is read back: types, fields, blocks, order.
        #[test]
        fn write_then_read_round_trips(
            gzip in proptest::bool::ANY,
            records in proptest::collection::vec(
                (
                    "[a-z]{1,10}",
                    proptest::collection::vec(("[A-Z][A-Za-z-]{0,15}", "[ -~]{0,40}"), 0..4),
                    proptest::collection::vec(proptest::num::u8::ANY, 0..2000),
                ),
                1..8,
            ),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("round-trip.warc");
            let mut writer = WarcWriter::new(File::create(&path).unwrap(), gzip);
            for (warc_type, headers, block) in &records {
                let headers: Vec<(&str, String)> = headers
                    .iter()
                    .filter(|(name, _)| !name.eq_ignore_ascii_case("content-length") && !name.eq_ignore_ascii_case("warc-type"))
                    .map(|(name, value)| (name.as_str(), value.trim().to_string()))
                    .collect();
                writer.write_record(&OutRecord { warc_type, headers, block }).unwrap();
            }
            writer.finish().unwrap();
            let (read, errors) = read_all(&path);
            proptest::prop_assert!(errors.is_empty(), "{:?}", errors);
            proptest::prop_assert_eq!(read.len(), records.len());
            for (record, (warc_type, _, block)) in read.iter().zip(&records) {
                proptest::prop_assert_eq!(&record.warc_type(), warc_type);
                proptest::prop_assert_eq!(&record.block, block);
            }
        }
    }

    /// Deterministic bytes without 0x1f, so no gzip header can appear in them
    /// (nor in the stored deflate blocks that hold them).
    fn noise(length: usize) -> String {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        (0..length)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                char::from(b'!' + (state % 90) as u8)
            })
            .collect()
    }

    #[test]
    fn a_corrupt_member_far_from_the_next_one_does_not_lose_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let big = record_bytes("http://a.example/big", &noise(600_000));
        let raws = vec![big, record_bytes("http://a.example/after", "<p>after</p>")];
        let path = write_file(dir.path(), "far.warc.gz", true, &raws);
        damage(&path, 12..40, 0xa5);
        let (records, errors) = read_all(&path);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(records.len(), 1);
        assert_eq!(
            records[0].header("WARC-Target-URI"),
            Some("http://a.example/after")
        );
    }

    #[test]
    fn a_bad_field_in_the_first_record_loses_only_that_record() {
        let dir = tempfile::tempdir().unwrap();
        let first = String::from_utf8(record_bytes("http://a.example/0", "<p>x</p>"))
            .unwrap()
            .replace("Content-Length:", "Content-Lenght:")
            .into_bytes();
        for gzip in [false, true] {
            let mut raws = vec![first.clone()];
            raws.extend(three_records());
            let path = write_file(dir.path(), "first.warc", gzip, &raws);
            let (records, errors) = read_all(&path);
            assert_eq!(records.len(), 3, "gzip={gzip} {errors:?}");
            assert_eq!(errors.len(), 1);
            assert_eq!(errors[0].reason(), "bad-warc-header");
        }
    }

    #[test]
    fn a_whole_file_gzip_keeps_going_after_a_bad_or_over_cap_record() {
        let dir = tempfile::tempdir().unwrap();
        let mut plain = Vec::new();
        plain.extend(record_bytes("http://a.example/0", "<p>zero</p>"));
        plain.extend(record_bytes("http://a.example/big", &"x".repeat(5000)));
        plain.extend(record_bytes("http://a.example/1", "<p>one</p>"));
        let wrong =
            String::from_utf8(record_bytes("http://a.example/wrong", "<p>wrong</p>")).unwrap();
        let wrong = wrong.replace("Content-Length: 56", "Content-Length: 50");
        plain.extend(wrong.as_bytes());
        plain.extend(record_bytes("http://a.example/2", "<p>two</p>"));
        let path = dir.path().join("whole.warc.gz");
        let mut encoder = flate2::write::GzEncoder::new(
            File::create(&path).unwrap(),
            flate2::Compression::fast(),
        );
        encoder.write_all(&plain).unwrap();
        encoder.finish().unwrap();
        let (records, errors) = read_all_with_cap(&path, 1000);
        let urls: Vec<_> = records
            .iter()
            .map(|record| record.header("WARC-Target-URI").unwrap())
            .collect();
        assert_eq!(
            urls,
            [
                "http://a.example/0",
                "http://a.example/1",
                "http://a.example/2"
            ]
        );
        let reasons: Vec<_> = errors.iter().map(WarcError::reason).collect();
        assert_eq!(reasons, ["too-large", "wrong-content-length"]);
    }

    #[test]
    fn an_over_cap_block_holding_warc_lines_yields_no_phantom_records() {
        let dir = tempfile::tempdir().unwrap();
        let inner =
            String::from_utf8(record_bytes("http://inner.example/", "<p>inner</p>")).unwrap();
        let outer = record_bytes("http://a.example/archive", &inner.repeat(20));
        let path = write_file(
            dir.path(),
            "nested.warc",
            false,
            &[outer, record_bytes("http://a.example/next", "<p>n</p>")],
        );
        let (records, errors) = read_all_with_cap(&path, 1000);
        assert_eq!(records.len(), 1, "{records:?}");
        assert_eq!(
            records[0].header("WARC-Target-URI"),
            Some("http://a.example/next")
        );
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].reason(), "too-large");
    }

    #[test]
    fn a_short_record_end_before_the_next_record_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = record_bytes("http://a.example/0", "<p>x</p>");
        first.truncate(first.len() - 2);
        let path = write_file(
            dir.path(),
            "short.warc",
            false,
            &[first, record_bytes("http://a.example/1", "<p>y</p>")],
        );
        let (records, errors) = read_all(&path);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(records.len(), 2);
    }

    #[test]
    fn missing_file_names_the_path() {
        let error = WarcReader::open(Path::new("/nonexistent/crawl.warc.gz"), 1000)
            .err()
            .unwrap();
        assert!(
            error
                .to_string()
                .starts_with("/nonexistent/crawl.warc.gz: cannot read"),
            "{error}"
        );
    }

    /// Bytes a simple generator makes, reproducibly, none of them CR or LF
    /// at the start (blank lines before a record are no fault).
    fn noise_bytes(length: usize, seed: u64) -> Vec<u8> {
        let mut state = seed;
        let mut bytes: Vec<u8> = (0..length)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 56) as u8
            })
            .collect();
        if let Some(first) = bytes.first_mut() {
            *first = b'#';
        }
        bytes
    }

    fn uri(record: &WarcRecord) -> &str {
        record.header("WARC-Target-URI").unwrap_or_default()
    }

    /// The faults found between two good records of a plain `.warc`: each
    /// loses no good record, and its one warning names the file, the offset
    /// and the bytes passed over.
    #[test]
    fn stray_bytes_between_records_lose_no_record() {
        let dir = tempfile::tempdir().unwrap();
        let records = three_records();
        let cut = record_bytes("http://a.example/cut", "<p>cut short by a crash</p>");
        let faults: Vec<(&str, Vec<u8>)> = vec![
            ("ten stray bytes", b"0123456789".to_vec()),
            ("NUL padding", vec![0; 4096]),
            ("random bytes", noise_bytes(3000, 7)),
            (
                "a record cut short by a crash",
                cut[..cut.len() - 20].to_vec(),
            ),
            ("the start of a version line", b"xxWARC/1".to_vec()),
            ("a version line with nothing after it", b"WARC/1.1".to_vec()),
        ];
        for (what, fault) in faults {
            let start = records[0].len() as u64;
            let next = start + fault.len() as u64;
            let mut bytes = records[0].clone();
            bytes.extend_from_slice(&fault);
            bytes.extend_from_slice(&records[1]);
            bytes.extend_from_slice(&records[2]);
            let path = dir.path().join("stray.warc");
            std::fs::write(&path, &bytes).unwrap();
            let (read, errors) = read_all(&path);
            let uris: Vec<&str> = read.iter().map(uri).collect();
            assert_eq!(
                uris,
                [
                    "http://a.example/0",
                    "http://a.example/1",
                    "http://a.example/2"
                ],
                "{what}: {errors:?}"
            );
            assert_eq!(read[1].offset, next, "{what}");
            assert_eq!(errors.len(), 1, "{what}: {errors:?}");
            let message = errors[0].to_string();
            for expected in [
                format!("{} at offset {start}:", path.display()),
                format!(
                    "skipped {} bytes (offsets {start}-{}) to the next record at offset {next}",
                    next - start,
                    next - 1
                ),
            ] {
                assert!(message.contains(&expected), "{what}: {message}");
            }
        }
    }

    /// Stray bytes before the first record, and after the last.
    #[test]
    fn stray_bytes_at_either_end_lose_no_record() {
        let dir = tempfile::tempdir().unwrap();
        let records = three_records();
        let mut bytes = vec![0u8; 100];
        for record in &records {
            bytes.extend_from_slice(record);
        }
        let end = bytes.len() as u64;
        bytes.extend_from_slice(b"trailing junk");
        let path = dir.path().join("ends.warc");
        std::fs::write(&path, &bytes).unwrap();
        let (read, errors) = read_all(&path);
        assert_eq!(read.len(), 3, "{errors:?}");
        assert_eq!(read[0].offset, 100);
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(
            messages[0].contains("at offset 0:")
                && messages[0].contains("skipped 100 bytes (offsets 0-99)"),
            "{messages:?}"
        );
        assert!(
            messages[1].contains(&format!("at offset {end}:"))
                && messages[1].contains("skipped the last 13 bytes of the file"),
            "{messages:?}"
        );
    }

    /// A header cut off by the end of the file says so (not "Content-Length
    /// 0, only 0 bytes left").
    #[test]
    fn a_header_cut_at_the_end_of_the_file_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let records = three_records();
        let mut bytes = records[0].clone();
        bytes.extend_from_slice(b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 10\r\n");
        let path = dir.path().join("cut-header.warc");
        std::fs::write(&path, &bytes).unwrap();
        let (read, errors) = read_all(&path);
        assert_eq!(read.len(), 1);
        let message = errors[0].to_string();
        assert!(
            message.contains("the file ends inside its WARC header"),
            "{message}"
        );
        assert_eq!(errors[0].reason(), "truncated-record");
    }

    #[test]
    fn version_lines_are_found_anywhere_and_only_whole() {
        for (bytes, skipped, line) in [
            (&b"WARC/1.1\r\nrest"[..], 0, Some(&b"WARC/1.1\r\n"[..])),
            (b"abcWARC/1.0\nrest", 3, Some(b"WARC/1.0\n")),
            (b"WWARC/0.17\r\n", 1, Some(b"WARC/0.17\r\n")),
            (b"WARC/1.1WARC/1.1\r\n", 8, Some(b"WARC/1.1\r\n")),
            (b"WARC/2.0\r\nWARC/1.\r\nWARC/1.1 x\r\n", 31, None),
            (b"WARC/1", 6, None),
            (b"", 0, None),
        ] {
            let mut input = io::BufReader::with_capacity(4, bytes);
            let (found_skipped, found) = find_next_record_start(&mut input).unwrap();
            assert_eq!(
                (found_skipped, found.as_deref()),
                (skipped, line),
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Arbitrary bytes put between and inside the records of a valid
        /// WARC (plain or gzip): every record they do not touch is read
        /// back, whole.
        #[test]
        fn every_untouched_record_is_read_back(
            gzip in proptest::bool::ANY,
            insertions in proptest::collection::vec(
                (0.0f64..=1.0, proptest::collection::vec(proptest::num::u8::ANY, 1..200)),
                1..4,
            ),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let records: Vec<Vec<u8>> = (0..6)
                .map(|index| {
                    let mut writer = WarcWriter::new(Vec::new(), gzip);
                    let (headers, block) = response(
                        &format!("http://a.example/{index}"),
                        &format!("<p>page {index} {}</p>", "text ".repeat(index * 30)),
                    );
                    writer
                        .write_record(&OutRecord { warc_type: "response", headers, block: &block })
                        .unwrap();
                    writer.finish().unwrap()
                })
                .collect();
            let mut bounds = vec![0usize];
            for record in &records {
                bounds.push(bounds[bounds.len() - 1] + record.len());
            }
            let total = bounds[bounds.len() - 1];
            let mut at: Vec<(usize, &Vec<u8>)> = insertions
                .iter()
                .map(|(place, bytes)| (((total as f64) * place) as usize, bytes))
                .collect();
            at.sort_by_key(|(position, _)| std::cmp::Reverse(*position));
            let mut bytes = records.concat();
            for (position, inserted) in &at {
                bytes.splice(*position..*position, inserted.iter().copied());
            }
            // A record is touched when bytes went strictly inside it.
            let touched = |index: usize| {
                at.iter().any(|(position, _)| bounds[index] < *position && *position < bounds[index + 1])
            };
            let path = dir.path().join(if gzip { "fuzzed.warc.gz" } else { "fuzzed.warc" });
            std::fs::write(&path, &bytes).unwrap();
            let (read, errors) = read_all(&path);
            for index in (0..records.len()).filter(|&index| !touched(index)) {
                let wanted = format!("http://a.example/{index}");
                let found = read.iter().find(|record| uri(record) == wanted);
                proptest::prop_assert!(found.is_some(), "record {} lost: {:?}", index, errors);
                let expected = format!("<p>page {index} {}</p>", "text ".repeat(index * 30));
                proptest::prop_assert!(found.unwrap().block.ends_with(expected.as_bytes()));
            }
        }
    }
}
