//! Apache Parquet: one file per table, a column per field with its type
//! (`INT64`; `BYTE_ARRAY` annotated as a UTF-8 string; `BOOLEAN`), an
//! optional column's absent value a null. Rows are buffered by column and
//! written in row groups of [`ROW_GROUP_ROWS`], each column chunk compressed
//! with zstd, so that an engine reading the file splits it into tasks by
//! row group.
//!
//! Written with the `parquet` crate's column writers, without Arrow: the
//! tables are plain columns of integers and text.

use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType, ZstdLevel};
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use super::{Column, Kind, Rows};

/// Rows per row group: a few megabytes of integers per column, the unit of
/// work a Spark or DataFusion task reads on its own.
pub const ROW_GROUP_ROWS: usize = 1 << 20;

/// One column's values for the row group being filled.
enum Values {
    Int(Vec<i64>),
    Text(Vec<ByteArray>),
    Flag(Vec<bool>),
}

struct Buffer {
    values: Values,
    /// Definition levels of an optional column (1 a value, 0 a null);
    /// `None` for a required one.
    levels: Option<Vec<i16>>,
}

/// Writes a table's rows into a Parquet file.
pub(crate) struct ParquetWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    schema: Vec<Column>,
    buffers: Vec<Buffer>,
    /// The column the next value is for.
    next: usize,
    /// Rows buffered for the current row group.
    buffered: usize,
    /// Rows a row group holds at most.
    group_rows: usize,
    rows: u64,
}

fn failed(error: ParquetError) -> io::Error {
    io::Error::other(error)
}

/// The Parquet schema of a table named `name`.
fn message_type(name: &str, schema: &[Column]) -> Result<Type, ParquetError> {
    let fields = schema
        .iter()
        .map(|column| {
            let (physical, logical) = match column.kind {
                Kind::Int => (PhysicalType::INT64, None),
                Kind::Text => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
                Kind::Flag => (PhysicalType::BOOLEAN, None),
            };
            let repetition = if column.optional {
                Repetition::OPTIONAL
            } else {
                Repetition::REQUIRED
            };
            Type::primitive_type_builder(&column.name, physical)
                .with_repetition(repetition)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Type::group_type_builder(name).with_fields(fields).build()
}

impl<W: Write + Send> ParquetWriter<W> {
    /// A writer of the table `name` with the columns `schema`; the file's
    /// header is written.
    pub(crate) fn new(out: W, name: &str, schema: Vec<Column>) -> io::Result<ParquetWriter<W>> {
        let properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_created_by(format!("mirrorscope {}", env!("CARGO_PKG_VERSION")))
            .build();
        let file = SerializedFileWriter::new(
            out,
            Arc::new(message_type(name, &schema).map_err(failed)?),
            Arc::new(properties),
        )
        .map_err(failed)?;
        let buffers = schema
            .iter()
            .map(|column| Buffer {
                values: match column.kind {
                    Kind::Int => Values::Int(Vec::new()),
                    Kind::Text => Values::Text(Vec::new()),
                    Kind::Flag => Values::Flag(Vec::new()),
                },
                levels: column.optional.then(Vec::new),
            })
            .collect();
        Ok(ParquetWriter {
            file,
            schema,
            buffers,
            next: 0,
            buffered: 0,
            group_rows: ROW_GROUP_ROWS,
            rows: 0,
        })
    }

    /// Row groups of at most `rows` rows (at least one) instead of
    /// [`ROW_GROUP_ROWS`]: for a table of many columns, whose buffered
    /// rows would otherwise hold a lot of memory.
    pub(crate) fn with_group_rows(mut self, rows: usize) -> Self {
        self.group_rows = rows.max(1);
        self
    }

    /// The buffer of the next column, which must be of `kind`.
    fn column(&mut self, kind: Kind) -> io::Result<&mut Buffer> {
        let index = self.next;
        let Some(column) = self.schema.get(index) else {
            return Err(io::Error::other(format!(
                "a row of {} values given more",
                self.schema.len()
            )));
        };
        if column.kind != kind {
            return Err(io::Error::other(format!(
                "column {} holds {:?} values, given {kind:?}",
                column.name, column.kind
            )));
        }
        self.next += 1;
        let buffer = &mut self.buffers[index];
        if let Some(levels) = &mut buffer.levels {
            levels.push(1);
        }
        Ok(buffer)
    }

    /// Writes the buffered rows as one row group.
    fn flush(&mut self) -> io::Result<()> {
        if self.buffered == 0 {
            return Ok(());
        }
        let mut group = self.file.next_row_group().map_err(failed)?;
        for buffer in &mut self.buffers {
            let mut column = group
                .next_column()
                .map_err(failed)?
                .ok_or_else(|| io::Error::other("the schema has fewer columns than the rows"))?;
            let levels = buffer.levels.as_deref();
            match &mut buffer.values {
                Values::Int(values) => {
                    column
                        .typed::<Int64Type>()
                        .write_batch(values, levels, None)
                        .map_err(failed)?;
                    values.clear();
                }
                Values::Text(values) => {
                    column
                        .typed::<ByteArrayType>()
                        .write_batch(values, levels, None)
                        .map_err(failed)?;
                    values.clear();
                }
                Values::Flag(values) => {
                    column
                        .typed::<BoolType>()
                        .write_batch(values, levels, None)
                        .map_err(failed)?;
                    values.clear();
                }
            }
            if let Some(levels) = &mut buffer.levels {
                levels.clear();
            }
            column.close().map_err(failed)?;
        }
        group.close().map_err(failed)?;
        self.buffered = 0;
        Ok(())
    }

    /// Writes what is buffered and the file's footer; returns the rows
    /// written.
    pub(crate) fn finish(mut self) -> io::Result<u64> {
        if self.next != 0 {
            return Err(io::Error::other("the last row was not ended"));
        }
        self.flush()?;
        self.file.close().map_err(failed)?;
        Ok(self.rows)
    }
}

impl<W: Write + Send> Rows for ParquetWriter<W> {
    fn int(&mut self, value: i64) -> io::Result<()> {
        if let Values::Int(values) = &mut self.column(Kind::Int)?.values {
            values.push(value);
        }
        Ok(())
    }

    fn text(&mut self, value: &str) -> io::Result<()> {
        if let Values::Text(values) = &mut self.column(Kind::Text)?.values {
            values.push(ByteArray::from(value));
        }
        Ok(())
    }

    fn flag(&mut self, value: bool) -> io::Result<()> {
        if let Values::Flag(values) = &mut self.column(Kind::Flag)?.values {
            values.push(value);
        }
        Ok(())
    }

    fn absent(&mut self) -> io::Result<()> {
        let index = self.next;
        let column = self
            .schema
            .get(index)
            .ok_or_else(|| io::Error::other("a value past the row's last column"))?;
        let Some(levels) = &mut self.buffers[index].levels else {
            return Err(io::Error::other(format!(
                "column {} is required, given no value",
                column.name
            )));
        };
        levels.push(0);
        self.next += 1;
        Ok(())
    }

    fn end_row(&mut self) -> io::Result<()> {
        if self.next != self.schema.len() {
            return Err(io::Error::other(format!(
                "a row of {} values ended after {}",
                self.schema.len(),
                self.next
            )));
        }
        self.next = 0;
        self.buffered += 1;
        self.rows += 1;
        if self.buffered >= self.group_rows {
            self.flush()?;
        }
        Ok(())
    }

    fn rows(&self) -> u64 {
        self.rows
    }
}

/// One column of a table read whole, in row order; `None` is a null.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ColumnValues {
    Int(Vec<Option<i64>>),
    Text(Vec<Option<String>>),
    Flag(Vec<Option<bool>>),
}

/// Reads the whole table in the Parquet file `path`, whose columns must be
/// `schema`'s, in its order, of its kinds, optional where it says (as
/// [`ParquetWriter`] writes them): a file of other columns is refused with
/// the column named. Each column read a row group at a time through
/// parquet's typed column readers, not row by row.
pub(crate) fn read_table(path: &Path, schema: &[Column]) -> io::Result<Vec<ColumnValues>> {
    let file = std::fs::File::open(path)?;
    let reader = SerializedFileReader::new(file).map_err(failed)?;
    let metadata = reader.metadata();
    let descriptor = metadata.file_metadata().schema_descr();
    if descriptor.num_columns() != schema.len() {
        return Err(io::Error::other(format!(
            "{} columns, where {} were expected",
            descriptor.num_columns(),
            schema.len()
        )));
    }
    for (at, column) in schema.iter().enumerate() {
        let found = descriptor.column(at);
        let physical = match column.kind {
            Kind::Int => PhysicalType::INT64,
            Kind::Text => PhysicalType::BYTE_ARRAY,
            Kind::Flag => PhysicalType::BOOLEAN,
        };
        if found.name() != column.name
            || found.physical_type() != physical
            || found.max_rep_level() != 0
            || found.max_def_level() != i16::from(column.optional)
        {
            return Err(io::Error::other(format!(
                "column {} is {} ({:?}, {}), where {} ({:?}, {}) was expected",
                at + 1,
                found.name(),
                found.physical_type(),
                if found.max_def_level() > 0 {
                    "optional"
                } else {
                    "required"
                },
                column.name,
                physical,
                if column.optional {
                    "optional"
                } else {
                    "required"
                },
            )));
        }
    }
    let rows = table_rows(&reader)?;
    // Memory is reserved as rows are read, not as the footer says: a
    // damaged footer must not reserve more than the file holds.
    let reserved = (rows as usize).min(RESERVED_ROWS);
    let mut columns: Vec<ColumnValues> = schema
        .iter()
        .map(|column| match column.kind {
            Kind::Int => ColumnValues::Int(Vec::with_capacity(reserved)),
            Kind::Text => ColumnValues::Text(Vec::with_capacity(reserved)),
            Kind::Flag => ColumnValues::Flag(Vec::with_capacity(reserved)),
        })
        .collect();
    let mut first = 0usize;
    for group in 0..reader.num_row_groups() {
        let group = reader.get_row_group(group).map_err(failed)?;
        let group_rows = group.metadata().num_rows() as usize;
        for (at, (column, values)) in schema.iter().zip(&mut columns).enumerate() {
            let optional = column.optional;
            let read = match (group.get_column_reader(at).map_err(failed)?, values) {
                (ColumnReader::Int64ColumnReader(reader), ColumnValues::Int(values)) => {
                    read_column(reader, group_rows, optional, values)
                }
                (ColumnReader::ByteArrayColumnReader(reader), ColumnValues::Text(values)) => {
                    let mut bytes = Vec::with_capacity(group_rows.min(RESERVED_ROWS));
                    read_column(reader, group_rows, optional, &mut bytes).and_then(|()| {
                        for (row, value) in bytes.into_iter().enumerate() {
                            let text = value
                                .map(|value| String::from_utf8(value.data().to_vec()))
                                .transpose()
                                .map_err(|_| {
                                    io::Error::other(format!(
                                        "row {}: a value that is not UTF-8",
                                        first + row + 1
                                    ))
                                })?;
                            values.push(text);
                        }
                        Ok(())
                    })
                }
                (ColumnReader::BoolColumnReader(reader), ColumnValues::Flag(values)) => {
                    read_column(reader, group_rows, optional, values)
                }
                _ => unreachable!("the physical types were checked above"),
            };
            read.map_err(|error| {
                io::Error::other(format!(
                    "column {}, the row group from row {}: {error}",
                    column.name,
                    first + 1
                ))
            })?;
        }
        first += group_rows;
    }
    Ok(columns)
}

/// Rows reserved at most before they are read.
const RESERVED_ROWS: usize = 1 << 16;

/// The rows of a Parquet file as its footer counts them, checked: the file's
/// count is its row groups' sum, and none is negative.
fn table_rows<R: parquet::file::reader::ChunkReader + 'static>(
    reader: &SerializedFileReader<R>,
) -> io::Result<u64> {
    let metadata = reader.metadata();
    let rows = u64::try_from(metadata.file_metadata().num_rows())
        .map_err(|_| io::Error::other("a negative count of rows"))?;
    let mut sum = 0u64;
    for group in metadata.row_groups() {
        let group_rows = u64::try_from(group.num_rows())
            .map_err(|_| io::Error::other("a row group of a negative count of rows"))?;
        sum = sum.saturating_add(group_rows);
    }
    if sum != rows {
        return Err(io::Error::other(format!(
            "its row groups hold {sum} rows, its footer says {rows}"
        )));
    }
    Ok(rows)
}

/// The rows of the table in the Parquet file `path`, read from its footer
/// alone (checked as [`read_table`] checks them).
pub(crate) fn rows_of(path: &Path) -> io::Result<u64> {
    let reader = SerializedFileReader::new(std::fs::File::open(path)?).map_err(failed)?;
    table_rows(&reader)
}

/// Appends the `rows` values of one column chunk to `out`.
fn read_column<T: DataType>(
    mut reader: ColumnReaderImpl<T>,
    rows: usize,
    optional: bool,
    out: &mut Vec<Option<T::T>>,
) -> io::Result<()> {
    let reserved = rows.min(RESERVED_ROWS);
    let (mut values, mut levels) = (Vec::with_capacity(reserved), Vec::with_capacity(reserved));
    let mut read = 0;
    while read < rows {
        let levels = optional.then_some(&mut levels);
        let (records, _, _) = reader
            .read_records(rows - read, levels, None, &mut values)
            .map_err(failed)?;
        if records == 0 {
            return Err(io::Error::other(format!(
                "{read} values in a row group of {rows} rows"
            )));
        }
        read += records;
    }
    if !optional {
        out.extend(values.into_iter().map(Some));
        return Ok(());
    }
    let mut values = values.into_iter();
    for level in levels {
        out.push(if level > 0 {
            Some(
                values.next().ok_or_else(|| {
                    io::Error::other("fewer values than its levels say are there")
                })?,
            )
        } else {
            None
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    fn schema() -> Vec<Column> {
        vec![
            Column::new("page", Kind::Int),
            Column::optional("ip", Kind::Text),
            Column::new("extended", Kind::Flag),
        ]
    }

    fn read(bytes: Vec<u8>) -> (Vec<String>, Vec<Vec<Field>>, usize) {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&bytes).unwrap();
        let reader = SerializedFileReader::new(file).unwrap();
        let metadata = reader.metadata();
        let names = metadata
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|column| column.name().to_string())
            .collect();
        let groups = metadata.num_row_groups();
        let rows = reader
            .get_row_iter(None)
            .unwrap()
            .map(|row| {
                row.unwrap()
                    .get_column_iter()
                    .map(|(_, field)| field.clone())
                    .collect()
            })
            .collect();
        (names, rows, groups)
    }

    #[test]
    fn typed_columns_and_nulls_read_back() {
        let mut out = Vec::new();
        let mut writer = ParquetWriter::new(&mut out, "pages", schema()).unwrap();
        writer.int(-5).unwrap();
        writer.optional_text(Some("192.0.2.1")).unwrap();
        writer.flag(true).unwrap();
        writer.end_row().unwrap();
        writer.int(i64::MAX).unwrap();
        writer.absent().unwrap();
        writer.flag(false).unwrap();
        writer.end_row().unwrap();
        assert_eq!(writer.finish().unwrap(), 2);

        let (names, rows, groups) = read(out);
        assert_eq!(names, ["page", "ip", "extended"]);
        assert_eq!(groups, 1);
        assert_eq!(
            rows,
            [
                vec![
                    Field::Long(-5),
                    Field::Str("192.0.2.1".into()),
                    Field::Bool(true)
                ],
                vec![Field::Long(i64::MAX), Field::Null, Field::Bool(false)],
            ]
        );
    }

    #[test]
    fn an_empty_table_is_a_valid_file() {
        let mut out = Vec::new();
        let writer = ParquetWriter::new(&mut out, "mirrors", schema()).unwrap();
        assert_eq!(writer.finish().unwrap(), 0);
        let (names, rows, groups) = read(out);
        assert_eq!(names.len(), 3);
        assert!(rows.is_empty());
        assert_eq!(groups, 0);
    }

    #[test]
    fn rows_past_a_row_group_start_another() {
        let mut out = Vec::new();
        let mut writer =
            ParquetWriter::new(&mut out, "links", vec![Column::new("src", Kind::Int)]).unwrap();
        let total = ROW_GROUP_ROWS + 3;
        for row in 0..total {
            writer.int(row as i64).unwrap();
            writer.end_row().unwrap();
        }
        assert_eq!(writer.finish().unwrap(), total as u64);
        let (_, rows, groups) = read(out);
        assert_eq!(groups, 2);
        assert_eq!(rows.len(), total);
        assert_eq!(rows[total - 1], [Field::Long(total as i64 - 1)]);
    }

    #[test]
    fn a_table_reads_back_by_column_across_row_groups_with_its_nulls() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pages.parquet");
        let mut writer =
            ParquetWriter::new(std::fs::File::create(&path).unwrap(), "pages", schema())
                .unwrap()
                .with_group_rows(2);
        for page in 0..5i64 {
            writer.int(page).unwrap();
            writer
                .optional_text(
                    (page % 2 == 0)
                        .then(|| format!("192.0.2.{page}"))
                        .as_deref(),
                )
                .unwrap();
            writer.flag(page > 2).unwrap();
            writer.end_row().unwrap();
        }
        writer.finish().unwrap();
        let columns = read_table(&path, &schema()).unwrap();
        assert_eq!(columns[0], ColumnValues::Int((0..5).map(Some).collect()));
        assert_eq!(
            columns[1],
            ColumnValues::Text(vec![
                Some("192.0.2.0".into()),
                None,
                Some("192.0.2.2".into()),
                None,
                Some("192.0.2.4".into())
            ])
        );
        assert_eq!(
            columns[2],
            ColumnValues::Flag(vec![
                Some(false),
                Some(false),
                Some(false),
                Some(true),
                Some(true)
            ])
        );
        // Another schema: refused with the column named.
        let mut other = schema();
        other[1] = Column::new("ip", Kind::Text);
        let error = read_table(&path, &other).unwrap_err().to_string();
        assert!(
            error.contains("column 2 is ip") && error.contains("required"),
            "{error}"
        );
        let error = read_table(&path, &schema()[..2]).unwrap_err().to_string();
        assert!(error.contains("3 columns"), "{error}");
    }

    #[test]
    fn a_value_of_the_wrong_kind_or_a_short_row_is_an_error() {
        let mut out = Vec::new();
        let mut writer = ParquetWriter::new(&mut out, "pages", schema()).unwrap();
        assert!(writer.text("not a page id").is_err());
        writer.int(1).unwrap();
        writer.absent().unwrap();
        assert!(writer.end_row().is_err(), "a row without its last value");
        assert!(writer.absent().is_err(), "extended is required");
    }
}
