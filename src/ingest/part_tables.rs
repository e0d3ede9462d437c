//! What an ingest part read of its captures, as Parquet tables a Spark job
//! (or DuckDB, DataFusion) reads as they are, and `index --parts` reads
//! back into the same captures.
//!
//! A part's captures are numbered from 0 in the order of its files, each
//! file's in the order it holds them; `capture` is that number in every
//! table, and `file` the file's place in the part (`part.bin` lists them).
//! The columns are those of `export`'s tables where they hold the same
//! thing (`url`, `status`, `body_signature`, `text_signature`...):
//!
//! - `captures.parquet`: one row a capture: its record (`file`,
//!   `warc_file`, its path as the part was given it, `offset`,
//!   `url`, `date`, `ip`, `payload_digest`, `status`), its body
//!   (`body_signature`, `body_volume`, `body_overflow`: the key of the
//!   part's store; `body_bytes`, `encoding`), `title`, `revisit_of`,
//!   `language` (ISO 639-3) with `language_declared`, `canonical`, and
//!   `versions` and `text_hosts`, each a list joined by line breaks (none
//!   of them holds one);
//! - `links.parquet`: `capture, target`, a capture's canonical outlinks in
//!   document order;
//! - `fingerprints.parquet`: `capture, text_signature, echo_signature,
//!   words, h0 … h83` for each capture with a fingerprint (the min-hash
//!   columns null for a page without a word);
//! - `lines.parquet`: `capture, line`, the hashes of a fingerprinted
//!   page's lines in order (the chunks are made of them), as signed
//!   64-bit integers of the same bits.

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use crate::corpus::charset::EncodingName;
use crate::corpus::{CaptureInfo, RecordLocation};
use crate::fingerprint::{Fingerprint, MINHASH_FUNCTIONS};
use crate::language::{Language, PageLanguage};
use crate::pages::Capture;
use crate::store::ContentKey;
use crate::tabular::parquet::{read_table, ColumnValues, ParquetWriter};
use crate::tabular::{Column, Kind, Rows};

use super::{io_error, IngestError, Result};

pub(super) const CAPTURES: &str = "captures.parquet";
pub(super) const LINKS: &str = "links.parquet";
pub(super) const FINGERPRINTS: &str = "fingerprints.parquet";
pub(super) const LINES: &str = "lines.parquet";

/// The tables' files, each written beside `part.bin`.
pub(super) const TABLES: [&str; 4] = [CAPTURES, LINKS, FINGERPRINTS, LINES];

/// Rows of a row group: what a table's writer buffers at most (for the
/// fingerprints, 88 columns of 64-bit integers, about 45 MB).
const GROUP_ROWS: usize = 1 << 16;

/// What joins a list of short names in one text column.
const LIST_SEPARATOR: char = '\n';

fn captures_schema() -> Vec<Column> {
    use Kind::{Flag, Int, Text};
    vec![
        Column::new("capture", Int),
        Column::new("file", Int),
        Column::new("warc_file", Text),
        Column::new("offset", Int),
        Column::new("url", Text),
        Column::new("date", Text),
        Column::optional("ip", Text),
        Column::optional("payload_digest", Text),
        Column::new("status", Int),
        Column::optional("body_signature", Text),
        Column::optional("body_volume", Int),
        Column::optional("body_overflow", Int),
        Column::new("body_bytes", Int),
        Column::new("encoding", Text),
        Column::new("title", Text),
        Column::optional("revisit_of", Text),
        Column::optional("language", Text),
        Column::new("language_declared", Flag),
        Column::optional("canonical", Text),
        Column::new("versions", Text),
        Column::new("text_hosts", Text),
    ]
}

fn links_schema() -> Vec<Column> {
    vec![
        Column::new("capture", Kind::Int),
        Column::new("target", Kind::Text),
    ]
}

fn fingerprints_schema() -> Vec<Column> {
    let mut columns = vec![
        Column::new("capture", Kind::Int),
        Column::new("text_signature", Kind::Text),
        Column::new("echo_signature", Kind::Text),
        Column::new("words", Kind::Int),
    ];
    columns.extend((0..MINHASH_FUNCTIONS).map(|i| Column::optional(format!("h{i}"), Kind::Int)));
    columns
}

fn lines_schema() -> Vec<Column> {
    vec![
        Column::new("capture", Kind::Int),
        Column::new("line", Kind::Int),
    ]
}

/// Writes the captures of `files` (each file's, in the part's order) as the
/// four tables in `folder`, each file synced; the four at once, each on a
/// thread of rayon's.
pub(super) fn write(folder: &Path, files: &[&[Capture]]) -> Result<()> {
    TABLES.par_iter().try_for_each(|&name| {
        let path = folder.join(name);
        let file = std::fs::File::create(&path).map_err(io_error(&path))?;
        let (table, schema) = match name {
            CAPTURES => ("captures", captures_schema()),
            LINKS => ("links", links_schema()),
            FINGERPRINTS => ("fingerprints", fingerprints_schema()),
            _ => ("lines", lines_schema()),
        };
        let mut out = ParquetWriter::new(std::io::BufWriter::new(file), table, schema)
            .map_err(io_error(&path))?
            .with_group_rows(GROUP_ROWS);
        let numbered = files
            .iter()
            .enumerate()
            .flat_map(|(file, captures)| captures.iter().map(move |capture| (file, capture)));
        for (number, (file, capture)) in numbered.enumerate() {
            write_rows(name, (number as i64, file as i64, capture), &mut out).map_err(|error| {
                IngestError::Format {
                    path: path.clone(),
                    detail: format!("capture {number} ({}): {error}", capture.info.url),
                }
            })?;
        }
        out.finish().map_err(io_error(&path))?;
        std::fs::File::open(&path)
            .and_then(|file| file.sync_all())
            .map_err(io_error(&path))
    })
}

/// Writes the rows of the table `name` that are of one capture.
fn write_rows(
    name: &str,
    (number, file, capture): (i64, i64, &Capture),
    out: &mut ParquetWriter<std::io::BufWriter<std::fs::File>>,
) -> std::io::Result<()> {
    let info = &capture.info;
    match name {
        CAPTURES => {
            out.int(number)?;
            out.int(file)?;
            out.text(&info.location.file)?;
            out.int(as_int(info.location.offset)?)?;
            out.text(&info.url)?;
            out.text(&info.date)?;
            out.optional_text(info.ip.as_deref())?;
            out.optional_text(info.payload_digest.as_deref())?;
            out.int(i64::from(info.status))?;
            let key = capture.content_key;
            out.optional_text(key.map(|key| key.signature.to_string()).as_deref())?;
            out.optional_int(key.map(|key| i64::from(key.volume)))?;
            out.optional_int(key.map(|key| i64::from(key.overflow)))?;
            out.int(as_int(capture.body_bytes)?)?;
            out.text(capture.encoding.as_str())?;
            out.text(&capture.title)?;
            out.optional_text(capture.revisit_of.as_deref())?;
            out.optional_text(capture.language.language().as_ref().map(Language::code))?;
            out.flag(matches!(capture.language, PageLanguage::Declared(_)))?;
            out.optional_text(capture.canonical.as_deref())?;
            out.text(&joined("versions", &capture.versions)?)?;
            out.text(&joined("text_hosts", &capture.text_hosts)?)?;
            out.end_row()?;
        }
        LINKS => {
            for target in capture.links.iter() {
                out.int(number)?;
                out.text(target)?;
                out.end_row()?;
            }
        }
        FINGERPRINTS => {
            let Some(print) = &capture.fingerprint else {
                return Ok(());
            };
            out.int(number)?;
            out.text(&format!("{:032x}", print.text_signature))?;
            out.text(&format!("{:032x}", print.echo_signature))?;
            out.int(i64::from(print.words))?;
            match print.minhash.len() {
                0 => (0..MINHASH_FUNCTIONS).try_for_each(|_| out.absent())?,
                MINHASH_FUNCTIONS => print
                    .minhash
                    .iter()
                    .try_for_each(|&value| out.int(i64::from(value)))?,
                other => {
                    return Err(std::io::Error::other(format!(
                        "a min-hash of {other} values, not {MINHASH_FUNCTIONS}"
                    )))
                }
            }
            out.end_row()?;
        }
        _ => {
            for &line in capture.fingerprint.iter().flat_map(|print| &print.lines) {
                out.int(number)?;
                out.int(line as i64)?;
                out.end_row()?;
            }
        }
    }
    Ok(())
}

fn as_int(value: u64) -> std::io::Result<i64> {
    i64::try_from(value).map_err(|_| std::io::Error::other(format!("{value} is past 2^63")))
}

fn joined(what: &str, items: &[Box<str>]) -> std::io::Result<String> {
    if items
        .iter()
        .any(|item| item.is_empty() || item.contains(LIST_SEPARATOR))
    {
        return Err(std::io::Error::other(format!(
            "one of its {what} is empty or holds a line break"
        )));
    }
    Ok(items.join("\n"))
}

/// Reads the captures of a part's tables in `folder`, each file's apart:
/// `files[k]` captures for its file `k`, whose location is named `names[k]`.
pub(super) fn read(folder: &Path, files: &[(Arc<str>, usize)]) -> Result<Vec<Vec<Capture>>> {
    let table = |name: &str, schema: &[Column]| -> Result<Vec<ColumnValues>> {
        let path = folder.join(name);
        read_table(&path, schema).map_err(|error| IngestError::Format {
            path,
            detail: error.to_string(),
        })
    };
    let bad = |name: &str, row: usize, detail: String| IngestError::Format {
        path: folder.join(name),
        detail: format!("row {}: {detail}", row + 1),
    };
    let total = files
        .iter()
        .try_fold(0usize, |sum, (_, captures)| sum.checked_add(*captures))
        .ok_or_else(|| IngestError::Format {
            path: folder.join(super::parts::PART_FILE),
            detail: "counts more captures than a machine holds".into(),
        })?;

    let mut columns = table(CAPTURES, &captures_schema())?;
    let [capture, file, _, offset, url, date, ip, digest, status, signature, volume, overflow, body_bytes, encoding, title, revisit_of, language, declared, canonical, versions, text_hosts] =
        &mut columns[..]
    else {
        unreachable!("read_table returns the schema's columns");
    };
    let rows = ints(capture).len();
    if rows != total {
        return Err(IngestError::Format {
            path: folder.join(CAPTURES),
            detail: format!("{rows} captures, where part.bin counts {total}"),
        });
    }
    // Which file each capture number is of.
    let file_of: Vec<usize> = files
        .iter()
        .enumerate()
        .flat_map(|(at, (_, captures))| std::iter::repeat_n(at, *captures))
        .collect();
    let mut captures = Vec::with_capacity(total);
    for row in 0..rows {
        let got = |row_error: &str| bad(CAPTURES, row, row_error.to_string());
        let int = |column: &ColumnValues| ints(column)[row];
        let text = |column: &mut ColumnValues| match column {
            ColumnValues::Text(values) => values[row].take(),
            _ => unreachable!("read_table checked the column's kind"),
        };
        if int(capture) != Some(row as i64) || int(file) != Some(file_of[row] as i64) {
            return Err(got(
                "captures out of order, or of another file than part.bin says",
            ));
        }
        let content_key = match (text(signature), int(volume), int(overflow)) {
            (Some(signature), Some(volume), Some(overflow)) => Some(ContentKey {
                signature: signature
                    .parse()
                    .map_err(|_| got("a body signature that is not one"))?,
                volume: u16::try_from(volume).map_err(|_| got("a volume past 65535"))?,
                overflow: u32::try_from(overflow).map_err(|_| got("an overflow past 2^32"))?,
            }),
            (None, None, None) => None,
            _ => return Err(got("a body key with some of its parts missing")),
        };
        let language = match (text(language), flags(declared)[row]) {
            (None, _) => PageLanguage::Unknown,
            (Some(code), Some(declared)) => {
                let language = Language::from_code(&code)
                    .ok_or_else(|| got("a language that is not an ISO 639-3 code"))?;
                if declared {
                    PageLanguage::Declared(language)
                } else {
                    PageLanguage::Detected(language)
                }
            }
            (Some(_), None) => return Err(got("a language without language_declared")),
        };
        let list = |column: &mut ColumnValues| -> Box<[Box<str>]> {
            text(column)
                .unwrap_or_default()
                .split_terminator(LIST_SEPARATOR)
                .map(Box::from)
                .collect()
        };
        captures.push(Capture {
            info: CaptureInfo {
                url: text(url).unwrap_or_default(),
                date: text(date).unwrap_or_default(),
                ip: text(ip),
                payload_digest: text(digest),
                status: u16::try_from(int(status).unwrap_or(-1))
                    .map_err(|_| got("a status past 65535"))?,
                location: RecordLocation {
                    file: Arc::clone(&files[file_of[row]].0),
                    offset: u64::try_from(int(offset).unwrap_or(-1))
                        .map_err(|_| got("a negative offset"))?,
                },
            },
            content_key,
            body_bytes: u64::try_from(int(body_bytes).unwrap_or(-1))
                .map_err(|_| got("a negative body length"))?,
            encoding: EncodingName::from_label(&text(encoding).unwrap_or_default()),
            title: text(title).unwrap_or_default(),
            links: Default::default(),
            revisit_of: text(revisit_of),
            fingerprint: None,
            language,
            canonical: text(canonical).map(String::into_boxed_str),
            versions: list(versions),
            text_hosts: list(text_hosts).into_vec().into(),
            spilled: None,
        });
    }
    drop(columns);

    // Each table's capture numbers only go up, so each is read in one pass.
    let in_order = |name: &'static str, numbers: &[Option<i64>]| -> Result<()> {
        let mut last = -1;
        for (row, &number) in numbers.iter().enumerate() {
            match number {
                Some(number) if number >= last && (number as usize) < total => last = number,
                _ => {
                    return Err(bad(
                        name,
                        row,
                        "a capture number out of order or past the part's captures".into(),
                    ))
                }
            }
        }
        Ok(())
    };

    let columns = table(LINKS, &links_schema())?;
    let (numbers, targets) = (ints(&columns[0]), texts(&columns[1]));
    in_order(LINKS, numbers)?;
    let mut row = 0;
    while row < numbers.len() {
        let number = numbers[row].unwrap_or(0) as usize;
        let end = row
            + numbers[row..]
                .iter()
                .take_while(|&&n| n == numbers[row])
                .count();
        captures[number].links = targets[row..end]
            .iter()
            .map(|target| target.as_deref().unwrap_or_default())
            .collect();
        row = end;
    }
    drop(columns);

    let columns = table(FINGERPRINTS, &fingerprints_schema())?;
    let numbers = ints(&columns[0]);
    in_order(FINGERPRINTS, numbers)?;
    for (row, number) in numbers.iter().enumerate() {
        let got = |detail: &str| bad(FINGERPRINTS, row, detail.to_string());
        let number = number.unwrap_or(0) as usize;
        let signature = |column: &ColumnValues| {
            texts(column)[row]
                .as_deref()
                .filter(|hex| hex.len() == 32)
                .and_then(|hex| u128::from_str_radix(hex, 16).ok())
                .ok_or_else(|| got("a signature that is not 32 hexadecimal digits"))
        };
        let minhash: Vec<Option<i64>> = columns[4..]
            .iter()
            .map(|column| ints(column)[row])
            .collect();
        let minhash: Vec<u32> = if minhash.iter().all(Option::is_none) {
            Vec::new()
        } else {
            minhash
                .into_iter()
                .map(|value| value.and_then(|value| u32::try_from(value).ok()))
                .collect::<Option<_>>()
                .ok_or_else(|| got("a min-hash with a value missing or past 2^32"))?
        };
        if captures[number].fingerprint.is_some() {
            return Err(got("a second fingerprint of one capture"));
        }
        captures[number].fingerprint = Some(Box::new(Fingerprint {
            text_signature: signature(&columns[1])?,
            echo_signature: signature(&columns[2])?,
            words: u32::try_from(ints(&columns[3])[row].unwrap_or(-1))
                .map_err(|_| got("a count of words past 2^32"))?,
            lines: Vec::new(),
            minhash,
        }));
    }
    drop(columns);

    let columns = table(LINES, &lines_schema())?;
    let (numbers, hashes) = (ints(&columns[0]), ints(&columns[1]));
    in_order(LINES, numbers)?;
    for (row, (number, hash)) in numbers.iter().zip(hashes).enumerate() {
        let number = number.unwrap_or(0) as usize;
        let Some(print) = captures[number].fingerprint.as_mut() else {
            return Err(bad(
                LINES,
                row,
                "a line of a capture without a fingerprint".into(),
            ));
        };
        print.lines.push(hash.unwrap_or(0) as u64);
    }

    let mut per_file = Vec::with_capacity(files.len());
    let mut captures = captures.into_iter();
    for (_, count) in files {
        per_file.push(captures.by_ref().take(*count).collect());
    }
    Ok(per_file)
}

fn ints(column: &ColumnValues) -> &[Option<i64>] {
    match column {
        ColumnValues::Int(values) => values,
        _ => unreachable!("read_table checked the column's kind"),
    }
}

fn texts(column: &ColumnValues) -> &[Option<String>] {
    match column {
        ColumnValues::Text(values) => values,
        _ => unreachable!("read_table checked the column's kind"),
    }
}

fn flags(column: &ColumnValues) -> &[Option<bool>] {
    match column {
        ColumnValues::Flag(values) => values,
        _ => unreachable!("read_table checked the column's kind"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::capture;

    /// Captures with every field a part keeps set, and each optional one
    /// absent, across two files.
    fn files() -> Vec<Vec<Capture>> {
        let mut full = capture(
            "https://docs.example.org/a",
            "One line\nand another, longer line",
        );
        full.info.ip = Some("192.0.2.7".into());
        full.info.payload_digest = Some("sha1:ABCDEF".into());
        full.info.location.offset = 1 << 40;
        full.content_key.as_mut().unwrap().volume = 3;
        full.content_key.as_mut().unwrap().overflow = 70_000;
        full.encoding = "windows-1252".into();
        full.title = "A title, with \"quotes\"".into();
        full.links = ["https://docs.example.org/b", "https://other.example/"]
            .into_iter()
            .collect();
        full.language = PageLanguage::Declared(Language::from_code("fra").unwrap());
        full.canonical = Some("https://docs.example.org/a".into());
        full.versions = vec!["3.11".into(), "2.0".into()].into_boxed_slice();
        full.text_hosts = vec![Box::from("mirror.example")].into();
        let print = full.fingerprint.as_mut().unwrap();
        print.echo_signature = u128::MAX - 5;
        print.lines.push(u64::MAX);

        let mut redirect = capture("https://docs.example.org/old", "");
        redirect.info.status = 301;
        redirect.content_key = None;
        redirect.fingerprint = None;
        redirect.encoding = EncodingName::NONE;
        redirect.revisit_of = Some("https://docs.example.org/a".into());

        // A page of no word: a fingerprint with an empty min-hash.
        let mut wordless = capture("https://docs.example.org/empty", "");
        wordless.language = PageLanguage::Detected(Language::from_code("deu").unwrap());
        assert!(wordless.fingerprint.as_ref().unwrap().minhash.is_empty());

        let other = capture(
            "https://mirror.example/a",
            "One line\nand another, longer line",
        );
        let mut files = vec![vec![full, redirect], Vec::new(), vec![wordless, other]];
        for (at, captures) in files.iter_mut().enumerate() {
            for capture in captures {
                capture.info.location.file = Arc::from(format!("crawl-{at}.warc.gz"));
            }
        }
        files
    }

    /// [`files`] written as a part's tables in a new folder.
    fn written() -> (tempfile::TempDir, Vec<Vec<Capture>>) {
        let dir = tempfile::tempdir().unwrap();
        let files = files();
        let slices: Vec<&[Capture]> = files.iter().map(Vec::as_slice).collect();
        write(dir.path(), &slices).unwrap();
        (dir, files)
    }

    fn named(files: &[Vec<Capture>]) -> Vec<(Arc<str>, usize)> {
        files
            .iter()
            .enumerate()
            .map(|(at, captures)| (Arc::from(format!("crawl-{at}.warc.gz")), captures.len()))
            .collect()
    }

    #[test]
    fn captures_read_back_from_the_tables_as_they_were_written() {
        let (dir, files) = written();
        let names = named(&files);
        assert_eq!(read(dir.path(), &names).unwrap(), files);
    }

    #[test]
    fn the_tables_are_plain_parquet_with_the_documented_columns() {
        let (dir, _) = written();
        let links = read_table(&dir.path().join(LINKS), &links_schema()).unwrap();
        assert_eq!(links[0], ColumnValues::Int(vec![Some(0), Some(0)]));
        assert_eq!(
            links[1],
            ColumnValues::Text(vec![
                Some("https://docs.example.org/b".into()),
                Some("https://other.example/".into())
            ])
        );
        let captures = read_table(&dir.path().join(CAPTURES), &captures_schema()).unwrap();
        // `file` is the file's place in the part: the second is empty.
        assert_eq!(
            captures[1],
            ColumnValues::Int(vec![Some(0), Some(0), Some(2), Some(2)])
        );
        assert_eq!(
            captures[2],
            ColumnValues::Text(
                ["crawl-0", "crawl-0", "crawl-2", "crawl-2"]
                    .map(|name| Some(format!("{name}.warc.gz")))
                    .to_vec()
            )
        );
        assert_eq!(
            captures[16],
            ColumnValues::Text(vec![Some("fra".into()), None, Some("deu".into()), None])
        );
        let prints = read_table(&dir.path().join(FINGERPRINTS), &fingerprints_schema()).unwrap();
        assert_eq!(
            prints[0],
            ColumnValues::Int(vec![Some(0), Some(2), Some(3)])
        );
        // The wordless page's min-hash is null.
        assert!(matches!(&prints[4], ColumnValues::Int(values) if values[1].is_none()));
        // A table read with other columns than it has is refused, by name.
        let error = read_table(&dir.path().join(LINES), &links_schema()).unwrap_err();
        assert!(error.to_string().contains("line"), "{error}");
    }

    #[test]
    fn a_table_that_disagrees_with_the_listing_is_refused_by_file_and_row() {
        let (dir, files) = written();
        // The listing counts one capture more in the first file.
        let mut names = named(&files);
        names[0].1 += 1;
        let error = read(dir.path(), &names).unwrap_err().to_string();
        assert!(
            error.contains(CAPTURES) && error.contains("part.bin"),
            "{error}"
        );

        // Links of a capture number past the part's.
        let path = dir.path().join(LINKS);
        let mut writer = ParquetWriter::new(
            std::fs::File::create(&path).unwrap(),
            "links",
            links_schema(),
        )
        .unwrap();
        for number in [1, 9] {
            writer.int(number).unwrap();
            writer.text("https://x.example/").unwrap();
            writer.end_row().unwrap();
        }
        writer.finish().unwrap();
        let error = read(dir.path(), &named(&files)).unwrap_err().to_string();
        assert!(error.contains(LINKS) && error.contains("row 2"), "{error}");
    }
}
