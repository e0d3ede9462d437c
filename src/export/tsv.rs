//! Tab-separated text: a header line, then one row per line. Fields are
//! separated by tabs and quoted as in RFC 4180 (`"`, with `""` for a quote
//! inside) only when they hold a tab, a quote or a line break, which is how
//! DataFusion, Spark, DuckDB and pandas read tab-separated CSV. An absent
//! value is an empty field.

use std::io::{self, Write};

use crate::tabular::Rows;

/// Writes rows of tab-separated fields.
pub(super) struct TsvWriter<W: Write> {
    inner: W,
    /// Rows ended, the header not counted.
    rows: u64,
    at_row_start: bool,
}

impl<W: Write> TsvWriter<W> {
    /// A writer whose header line, `columns`, is written.
    pub(super) fn new(inner: W, columns: &[String]) -> io::Result<TsvWriter<W>> {
        let mut writer = TsvWriter {
            inner,
            rows: 0,
            at_row_start: true,
        };
        for column in columns {
            writer.text(column)?;
        }
        writer.inner.write_all(b"\n")?;
        writer.at_row_start = true;
        Ok(writer)
    }

    fn separate(&mut self) -> io::Result<()> {
        if !self.at_row_start {
            self.inner.write_all(b"\t")?;
        }
        self.at_row_start = false;
        Ok(())
    }
}

impl<W: Write> Rows for TsvWriter<W> {
    fn int(&mut self, value: i64) -> io::Result<()> {
        self.separate()?;
        write!(self.inner, "{value}")
    }

    fn text(&mut self, text: &str) -> io::Result<()> {
        self.separate()?;
        write_text(&mut self.inner, text)
    }

    fn flag(&mut self, value: bool) -> io::Result<()> {
        self.separate()?;
        write!(self.inner, "{value}")
    }

    fn absent(&mut self) -> io::Result<()> {
        self.separate()
    }

    fn end_row(&mut self) -> io::Result<()> {
        self.inner.write_all(b"\n")?;
        self.rows += 1;
        self.at_row_start = true;
        Ok(())
    }

    fn rows(&self) -> u64 {
        self.rows
    }
}

/// A text field, quoted when it holds a tab, a quote or a line break.
fn write_text(out: &mut impl Write, text: &str) -> io::Result<()> {
    if !text.contains(['\t', '"', '\n', '\r']) {
        return out.write_all(text.as_bytes());
    }
    out.write_all(b"\"")?;
    for (index, part) in text.split('"').enumerate() {
        if index > 0 {
            out.write_all(b"\"\"")?;
        }
        out.write_all(part.as_bytes())?;
    }
    out.write_all(b"\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(text: &str) -> String {
        let mut out = Vec::new();
        write_text(&mut out, text).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn text_is_quoted_only_when_it_must_be() {
        assert_eq!(quoted("Apache HTTP Server"), "Apache HTTP Server");
        assert_eq!(quoted(""), "");
        assert_eq!(quoted("a\tb"), "\"a\tb\"");
        assert_eq!(quoted("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quoted("two\nlines"), "\"two\nlines\"");
        assert_eq!(quoted("cr\r"), "\"cr\r\"");
    }

    /// Reads tab-separated text as RFC 4180 CSV: fields quoted when they
    /// start with a quote, `""` a quote inside; a stray quote is an error.
    fn parse(text: &str) -> Vec<Vec<String>> {
        let mut rows = vec![Vec::new()];
        let mut field = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' if field.is_empty() => loop {
                    match chars.next().expect("a closing quote") {
                        '"' if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        '"' => break,
                        inside => field.push(inside),
                    }
                },
                '"' => panic!("a quote inside an unquoted field"),
                '\t' => rows.last_mut().unwrap().push(std::mem::take(&mut field)),
                '\n' => {
                    rows.last_mut().unwrap().push(std::mem::take(&mut field));
                    rows.push(Vec::new());
                }
                c => field.push(c),
            }
        }
        assert!(
            rows.pop().unwrap().is_empty(),
            "the last row ends with a line end"
        );
        rows
    }

    #[test]
    fn awkward_text_reads_back_as_written() {
        let fields = [
            "a\tb",
            "say \"hi\"",
            "two\r\nlines",
            "\"",
            "",
            "plain",
            "trailing\t",
        ];
        let mut writer = TsvWriter::new(Vec::new(), &["a".to_string(), "b".to_string()]).unwrap();
        for field in fields {
            writer.text(field).unwrap();
        }
        writer.end_row().unwrap();
        writer.int(1).unwrap();
        writer.text("x").unwrap();
        writer.end_row().unwrap();
        let rows = parse(&String::from_utf8(writer.inner).unwrap());
        assert_eq!(rows[0], ["a", "b"]);
        assert_eq!(rows[1], fields);
        assert_eq!(rows[2], ["1", "x"]);
    }

    #[test]
    fn rows_are_counted_without_the_header() {
        let columns = ["page".to_string(), "url".to_string(), "kept".to_string()];
        let mut writer = TsvWriter::new(Vec::new(), &columns).unwrap();
        writer.int(-7).unwrap();
        writer.optional_text(None).unwrap();
        writer.flag(true).unwrap();
        writer.end_row().unwrap();
        assert_eq!(writer.rows(), 1);
        assert_eq!(
            String::from_utf8(writer.inner).unwrap(),
            "page\turl\tkept\n-7\t\ttrue\n"
        );
    }
}
