//! Tables of typed columns (64-bit integers, UTF-8 text, booleans; a
//! column optional or not) written row by row through [`Rows`], and their
//! Parquet files ([`parquet`]): `export`'s tables, an ingest part's
//! captures, read back by `index --parts`.

pub mod parquet;

use std::io;

/// What a column holds, as a typed format stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A 64-bit signed integer: ids, counts, hashes.
    Int,
    /// UTF-8 text.
    Text,
    /// `true` or `false`.
    Flag,
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
    /// Whether a row may have no value (an empty field, a Parquet null).
    pub optional: bool,
}

impl Column {
    pub(crate) fn new(name: impl Into<String>, kind: Kind) -> Column {
        Column {
            name: name.into(),
            kind,
            optional: false,
        }
    }

    pub(crate) fn optional(name: impl Into<String>, kind: Kind) -> Column {
        Column {
            optional: true,
            ..Column::new(name, kind)
        }
    }
}

/// Where a table's rows go, field by field in the order of its schema.
pub(crate) trait Rows {
    fn int(&mut self, value: i64) -> io::Result<()>;
    fn text(&mut self, value: &str) -> io::Result<()>;
    fn flag(&mut self, value: bool) -> io::Result<()>;
    /// No value in an optional column.
    fn absent(&mut self) -> io::Result<()>;
    fn end_row(&mut self) -> io::Result<()>;

    /// Rows ended so far.
    fn rows(&self) -> u64;

    fn optional_int(&mut self, value: Option<i64>) -> io::Result<()> {
        match value {
            Some(value) => self.int(value),
            None => self.absent(),
        }
    }

    fn optional_text(&mut self, value: Option<&str>) -> io::Result<()> {
        match value {
            Some(value) => self.text(value),
            None => self.absent(),
        }
    }
}
