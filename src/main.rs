//! The `mirrorscope` command: parse arguments, call the library, print.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use mirrorscope::config::Config;
use mirrorscope::datadir::DataDir;
use mirrorscope::eval;
use mirrorscope::export;
use mirrorscope::mirrors;
use mirrorscope::pipeline::{self, IndexPlan, IndexRequest, Written};
use mirrorscope::report;
use mirrorscope::web;

/// Search a web crawl with its mirrored collections rolled up.
#[derive(Parser)]
#[command(name = "mirrorscope", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Read WARC files (or folders of them) into the page store and page table,
    /// and switch to the new generation. Without CRAWL, indexes the shipped crawl in corpus/.
    Index {
        /// WARC files (.warc, .warc.gz) or folders holding them.
        crawl: Vec<PathBuf>,
        /// Data directory.
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Add the crawl to the current generation's crawls (the newest
        /// capture of a URL wins) instead of replacing them.
        #[arg(long, conflicts_with = "remove")]
        add: bool,
        /// Remove a crawl (by the id `index` printed) from the current
        /// generation and give back its stored bodies' references.
        #[arg(long, value_name = "CRAWL_ID")]
        remove: Option<String>,
        /// Make the crawl current even when it holds under half the pages
        /// of the current generation read from files of the same names
        /// (refused otherwise: a file cut short or replaced by mistake).
        #[arg(long)]
        allow_shrink: bool,
        /// Take the files from the ingest parts in this folder (written by
        /// `ingest-part`, one per task of the Spark job `ingest`) instead
        /// of reading them: the same crawl and generation.
        #[arg(long, value_name = "DIR", conflicts_with = "remove")]
        parts: Option<PathBuf>,
        /// Build the search index apart, in this many shards: the new
        /// generation is staged, and becomes current by `publish` once
        /// `index-shard` has built each shard (see `import-analysis`).
        #[arg(long, conflicts_with = "remove", value_parser = clap::value_parser!(u32).range(1..=i64::from(mirrorscope::index::shards::MOST_SHARDS)))]
        index_shards: Option<u32>,
    },
    /// Read WARC files into an ingest part (a folder of its own: a page
    /// store of their bodies, the captures as Parquet tables and what was
    /// read of each file), for `index --parts` to take. A part written
    /// before is left as it is.
    IngestPart {
        /// WARC files (.warc, .warc.gz), or folders of them (listed as
        /// `index` lists a crawl's).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The part's folder (created).
        #[arg(long)]
        out: PathBuf,
        /// The data folder whose settings (ingest, store) the part is read
        /// with; its defaults when it has none.
        #[arg(long, default_value = "data")]
        data: PathBuf,
    },
    /// Serve the search site. Indexes the shipped crawl first when DATA has no
    /// index yet; picks up new generations written by `index` while running.
    Serve {
        /// Data directory (default `data`, created with the shipped crawl's
        /// index on first start; a folder named here must exist).
        #[arg(long)]
        data: Option<PathBuf>,
        /// Address to listen on (loopback by default; port 0 picks a free port).
        #[arg(long, default_value = "127.0.0.1:8080")]
        bind: String,
        /// HTTP worker threads (searches run on their own bounded pool).
        #[arg(long, default_value_t = 2)]
        workers: usize,
    },
    /// Statistics of the current generation.
    Stats {
        /// Data directory.
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// A page's copies: its trivial cluster, with each copy's resemblance
    /// estimate and shared chunks.
    Similar {
        /// The page's URL (canonicalised before lookup).
        url: String,
        /// Data directory.
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Similar clusters of replicated collections, largest cardinality first.
    Clusters {
        /// Data directory.
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Only clusters of at least this many collections (replicas).
        #[arg(long, default_value_t = 0)]
        min_cardinality: usize,
        /// Only clusters whose largest collection has at least this many pages.
        #[arg(long, default_value_t = 0)]
        min_size: u32,
    },
    /// Mirrored host pairs: one ranking (combined by default) with each
    /// pair's mirroring level.
    Mirrors {
        /// Data directory.
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// The ranking: combined, bigrams, ip4, ip3, hosts, paths, prefix,
        /// shingles, conn, hconn1, hconn2 or clusters.
        #[arg(long, default_value = "combined")]
        ranker: String,
        /// Only the first N pairs.
        #[arg(long)]
        top: Option<usize>,
    },
    /// The crawl-avoid list: folders of replicated collections' other copies
    /// and host aliases, one tab-separated line each (see `mirrorscope
    /// avoid` output's header).
    Avoid {
        /// Data directory.
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Print JSON instead of the list.
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// The form of the list: `prefix` (one entry a line), `wget` (a
        /// `--reject-regex` for `--regex-type=pcre`), `browsertrix` (its
        /// `exclude` list, YAML) or `heritrix` (SURT prefixes for a
        /// `SurtPrefixedDecideRule`'s `surtsSourceFile`).
        #[arg(long, value_enum, default_value = "prefix")]
        format: report::AvoidFormat,
        /// An earlier crawl's list (the prefix form): which of its entries
        /// still hold on this crawl, which come off, which are new, and
        /// the skipped URLs to fetch again (cho-2000 §5.1's loop).
        #[arg(long, value_name = "LIST", conflicts_with = "format")]
        previous: Option<PathBuf>,
        /// At most N entries (and N rules in the compact forms), the ones
        /// skipping the most pages; 0: no bound. Default: one per ten
        /// documents of the crawl. (`--previous` checks every entry found.)
        #[arg(long, value_name = "N", conflicts_with = "previous")]
        max_entries: Option<usize>,
        /// Print only the pages a crawler loading the list in `--format`
        /// must seed (one URL a line, for `wget --input-file`): the ones it
        /// keeps that only pages it skips link to.
        #[arg(long, conflicts_with_all = ["previous", "json"])]
        seeds: bool,
    },
    /// How clusters, collections and mirrors changed from the crawl indexed
    /// in one data directory to the crawl indexed in another
    /// (fetterly-2004 §3: containment of clusters by size, pairs still
    /// near-duplicates, clusters born, gone, grown, shrunk, merged, split).
    Evolve {
        /// Data directory of the earlier crawl.
        a: PathBuf,
        /// Data directory of the later crawl.
        b: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Show every changed cluster, not only the largest.
        #[arg(long)]
        all: bool,
    },
    /// A crawl's WARC files with each payload written once (gomes-2006): a
    /// response whose payload was written before, in this crawl or an
    /// earlier one, becomes a `revisit` record (WARC/1.1,
    /// identical-payload-digest) referring to its first capture; every other
    /// record is copied. Writes PREFIX-NNNNN.warc.gz files and PREFIX.cdxj,
    /// the index pywb reads.
    DedupWarc {
        /// The crawls: WARC files or folders of them, earlier crawls first.
        #[arg(required = true)]
        crawls: Vec<PathBuf>,
        /// The output folder (created when missing; never overwritten).
        #[arg(long)]
        out: PathBuf,
        /// Start a new file before one would pass this many bytes.
        #[arg(long, default_value_t = 1_000_000_000)]
        max_file_bytes: u64,
        /// The output files' name prefix.
        #[arg(long, default_value = "dedup")]
        prefix: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write the current generation's tables (pages, links, chunks, minhash,
    /// megashingles, trivial clusters, similar clusters, collections, mirrored
    /// host pairs...) as tab-separated files with a header line or as Parquet
    /// files, for a distributed query engine or a notebook (see
    /// docs/SCALING.md).
    Export {
        /// Folder to write NAME.tsv or NAME.parquet files into (created when
        /// missing).
        #[arg(long)]
        out: PathBuf,
        /// Data directory.
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Only these tables, comma-separated (default: all of them).
        #[arg(long, value_delimiter = ',')]
        tables: Vec<String>,
        /// `tsv` (tab-separated text with a header line) or `parquet` (one
        /// Parquet file per table, typed columns).
        #[arg(long, default_value = "tsv", value_parser = parse_format)]
        format: export::Format,
    },
    /// Make the analysis computed elsewhere (the Spark jobs of spark/,
    /// docs/SCALING.md) the current generation's: reads DIR/trivial
    /// (Parquet: page, cluster), DIR/grown and DIR/grown_trivial (similar
    /// clusters as grown) with DIR/collections.json, DIR/mirror_pairs and
    /// DIR/prefix_pairs (rankings of mirrored hosts), whichever are there,
    /// and DIR/GENERATION; then computes the rest (parts joining their
    /// manuals, principal copies, the other rankers, levels, search index)
    /// on them into a new generation.
    ImportAnalysis {
        /// The jobs' output folder.
        dir: PathBuf,
        /// Data directory.
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Build the search index apart, in this many shards: the new
        /// generation is staged, its name printed on the first line, and
        /// becomes current by `publish` once `index-shard` has built each
        /// shard (the Spark job `index` runs them as tasks).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(mirrorscope::index::shards::MOST_SHARDS)))]
        index_shards: Option<u32>,
    },
    /// Build one shard of a staged generation's search index (see
    /// `import-analysis --index-shards`). Takes no lock: every shard of a
    /// generation can be built at once, each by its own process. A shard
    /// built already is left as it is.
    IndexShard {
        /// The staged generation (`staged-…`).
        staged: String,
        /// The shard, from 0.
        #[arg(long)]
        shard: u32,
        /// How many shards the index is built in.
        #[arg(long)]
        of: u32,
        /// Data directory.
        #[arg(long, default_value = "data")]
        data: PathBuf,
    },
    /// Make a staged generation, every shard of its index built, the
    /// current one. Refused when another generation became current since it
    /// was staged.
    Publish {
        /// The staged generation (`staged-…`).
        staged: String,
        /// Data directory.
        #[arg(long, default_value = "data")]
        data: PathBuf,
    },
    /// Whether the data folder is consistent: every store block's reference
    /// count against what the crawls hold, blocks nobody holds or that are
    /// missing or corrupt, temporary files, each generation against its
    /// manifest. Exits 0 only when all is consistent.
    Check {
        /// Data directory.
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Put right what can be: set counts to what is held, remove blocks
        /// nobody holds and temporary files. Needs the writer lock (refused
        /// while `index` runs).
        #[arg(long)]
        repair: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Quality against a ground-truth file (format of corpus/truth.tsv).
    Eval {
        /// The truth file: tab-separated `url collection replica page`.
        #[arg(long)]
        truth: PathBuf,
        /// Data directory.
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    mirrorscope::memory::one_heap_a_core();
    init_logging();
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Serve { .. }) {
        // Each command but the server runs stages that free most of what
        // they held.
        mirrorscope::memory::give_freed_pages_back_at_once();
    }
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            if is_broken_pipe(&error) {
                return ExitCode::SUCCESS;
            }
            eprintln!("mirrorscope: {}", error_message(&error));
            ExitCode::FAILURE
        }
    }
}

/// `--format`'s value.
fn parse_format(name: &str) -> Result<export::Format, String> {
    export::Format::from_name(name)
        .ok_or_else(|| format!("{name:?} is not a format; formats: tsv, parquet"))
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MIRRORSCOPE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,mirrorscope=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .without_time()
        .init();
}

/// The error and its causes, leaving out a cause whose text the message
/// already holds (our errors name their source in their own message).
fn error_message(error: &anyhow::Error) -> String {
    let mut message = error.to_string();
    for cause in error.chain().skip(1) {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
    }
    message
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|error| error.kind() == std::io::ErrorKind::BrokenPipe)
}

fn run(cli: Cli) -> Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    match cli.command {
        Command::Index {
            crawl,
            data,
            add,
            remove: Some(crawl_id),
            allow_shrink,
            ..
        } => {
            if !crawl.is_empty() || add || allow_shrink {
                anyhow::bail!("--remove takes a crawl id only, no CRAWL files");
            }
            let outcome = pipeline::run_remove(&data, &crawl_id)?;
            writeln!(stdout, "{}", report::remove_summary(&outcome))?;
        }
        Command::Index {
            crawl,
            data,
            add,
            allow_shrink,
            parts,
            index_shards,
            ..
        } => {
            let inputs = if crawl.is_empty() {
                vec![pipeline::default_corpus_dir()]
            } else {
                crawl
            };
            let outcome = pipeline::run_index(&IndexRequest {
                inputs,
                data,
                progress: std::io::stderr().is_terminal(),
                add,
                allow_shrink,
                parts,
                index_shards,
            })?;
            writeln!(stdout, "{}", report::index_summary(&outcome))?;
        }
        Command::IngestPart { files, out, data } => {
            let summary = pipeline::run_ingest_part(&files, &out, &data)?;
            writeln!(
                stdout,
                "{}: {} file(s), {} captures{}{}",
                out.display(),
                summary.files,
                summary.captures,
                if summary.skipped > 0 {
                    format!(", {} passed over (said above)", summary.skipped)
                } else {
                    String::new()
                },
                if summary.written {
                    ""
                } else {
                    " (written before)"
                }
            )?;
        }
        Command::Serve {
            data,
            bind,
            workers,
        } => {
            // A folder named on the command line that is not there is a
            // typing mistake, not a wish to serve the shipped crawl from it.
            let data = match data {
                Some(named) if !named.exists() => anyhow::bail!(
                    "{}: no such data folder; index a crawl into it first (mirrorscope index CRAWL --data {0}), or leave --data out to serve the shipped crawl from ./data",
                    named.display()
                ),
                Some(named) => named,
                None => PathBuf::from("data"),
            };
            let public = bind
                .rsplit_once(':')
                .map(|(host, _)| host.trim_matches(['[', ']']))
                .and_then(|host| host.parse::<std::net::IpAddr>().ok())
                .is_some_and(|address| !address.is_loopback());
            if public {
                tracing::warn!(
                    "listening on {bind}: the site is reachable from other machines, not only this one"
                );
            }
            // Serving needs a generation: the shipped crawl's, the first time.
            pipeline::index_shipped_crawl_unless_indexed(&data)?;
            let options = web::ServeOptions {
                data,
                bind,
                reload_every: std::time::Duration::from_secs(1),
                workers,
                settings: mirrorscope::settings_from_config(),
            };
            web::serve(&options, |address| {
                // Scripts and tests read this line to find the port.
                let _ = writeln!(stdout, "mirrorscope: serving http://{address}/");
                let _ = stdout.flush();
            })?;
        }
        Command::Stats { data, json } => {
            let data = DataDir::open_existing(&data)?;
            let stats = mirrorscope::stats::Stats::gather(&data)?;
            print(&mut stdout, json, &stats, Text::Line)?;
        }
        Command::Similar { url, data, json } => {
            let data = DataDir::open_existing(&data)?;
            let similar = report::SimilarReport::gather(&data, &url)?;
            print(&mut stdout, json, &similar, Text::Line)?;
        }
        Command::Clusters {
            data,
            json,
            min_cardinality,
            min_size,
        } => {
            let data = DataDir::open_existing(&data)?;
            let filter = report::ClusterFilter {
                min_cardinality,
                min_size,
            };
            let clusters = report::ClustersReport::gather(&data, filter)?;
            print(&mut stdout, json, &clusters, Text::Ended)?;
        }
        Command::Mirrors {
            data,
            json,
            ranker,
            top,
        } => {
            let Some(ranker) = mirrors::Ranker::from_name(&ranker) else {
                let names: Vec<&str> = mirrors::Ranker::ALL.iter().map(|r| r.name()).collect();
                anyhow::bail!(
                    "--ranker {ranker:?} is not a ranker; one of: {}",
                    names.join(", ")
                );
            };
            let data = DataDir::open_existing(&data)?;
            let mirrors = report::MirrorsReport::gather(&data, ranker, top)?;
            print(&mut stdout, json, &mirrors, Text::Ended)?;
        }
        Command::Avoid {
            data,
            json,
            format,
            previous,
            max_entries,
            seeds,
        } => {
            let data = DataDir::open_existing(&data)?;
            if let Some(previous) = previous {
                let earlier = report::PreviousList::read(&previous)?;
                for bad in &earlier.bad_lines {
                    tracing::warn!("{}: {bad}: line skipped", previous.display());
                }
                let (list, table) = report::AvoidList::gather_with_table(&data, Some(0))?;
                let answer =
                    report::AvoidLoop::of(&list, &table, &earlier, &previous.display().to_string());
                print(&mut stdout, json, &answer, Text::Ended)?;
            } else {
                let (list, table) = report::AvoidList::gather_with_table(&data, max_entries)?;
                if seeds {
                    for seed in list.seeds(&table, format) {
                        writeln!(stdout, "{seed}")?;
                    }
                } else if format == report::AvoidFormat::Heritrix {
                    let mut text = list.render_heritrix(&table);
                    report::write_seeds(&mut text, &list.seeds)?;
                    stdout.write_all(text.as_bytes())?;
                } else if json || format == report::AvoidFormat::Prefix {
                    print(&mut stdout, json, &list, Text::Ended)?;
                } else {
                    let mut text = list.render(format);
                    report::write_seeds(&mut text, &list.seeds(&table, format))?;
                    stdout.write_all(text.as_bytes())?;
                }
            }
        }
        Command::Evolve { a, b, json, all } => {
            let mut evolution = report::Evolution::gather(
                &DataDir::open_existing(&a)?,
                &DataDir::open_existing(&b)?,
            )?;
            if all {
                evolution.shown_changes = None;
            }
            print(&mut stdout, json, &evolution, Text::Ended)?;
        }
        Command::DedupWarc {
            crawls,
            out,
            max_file_bytes,
            prefix,
            json,
        } => {
            let options = mirrorscope::dedup_warc::DedupOptions {
                out,
                max_file_bytes,
                prefix,
            };
            let report = mirrorscope::dedup_warc::dedup(&crawls, &options)?;
            print(&mut stdout, json, &report, Text::Line)?;
        }
        Command::Export {
            out,
            data,
            tables,
            format,
        } => {
            let tables = if tables.is_empty() {
                export::Table::ALL.to_vec()
            } else {
                tables
                    .iter()
                    .map(|name| {
                        export::Table::from_name(name).ok_or_else(|| {
                            let names: Vec<&str> =
                                export::Table::ALL.iter().map(|t| t.name()).collect();
                            anyhow::anyhow!(
                                "--tables: {name:?} is not a table; tables: {}",
                                names.join(", ")
                            )
                        })
                    })
                    .collect::<Result<_>>()?
            };
            let data = DataDir::open_existing(&data)?;
            for file in export::export(&data, &out, &tables, format)? {
                writeln!(
                    stdout,
                    "{}\t{} rows\t{} bytes",
                    file.path.display(),
                    file.rows,
                    file.bytes
                )?;
            }
        }
        Command::ImportAnalysis {
            dir,
            data,
            index_shards,
        } => {
            let plan = match index_shards {
                Some(shards) => IndexPlan::InShards(shards),
                None => IndexPlan::Here,
            };
            let imported = mirrorscope::import::import(&data, &dir, plan)?;
            let text = match &imported.written {
                Written::Current(manifest) => {
                    report::import_summary(manifest, &imported.stages, &imported.files)
                }
                Written::Staged(staged) => {
                    report::staged_summary(staged, &imported.stages, &imported.files)
                }
            };
            writeln!(stdout, "{text}")?;
        }
        Command::IndexShard {
            staged,
            shard,
            of,
            data,
        } => {
            let shard = mirrorscope::index::Shard::new(shard, of)
                .map_err(|detail| anyhow::anyhow!("--shard {shard} --of {of}: {detail}"))?;
            let counts = pipeline::run_index_shard(&data, &staged, shard)?;
            writeln!(
                stdout,
                "{staged}: shard {} of {} built, {} documents, {} bytes",
                shard.number, shard.count, counts.documents, counts.bytes
            )?;
        }
        Command::Publish { staged, data } => {
            let manifest = pipeline::run_publish(&data, &staged)?;
            writeln!(
                stdout,
                "{staged} published as generation {}: {} documents in its index",
                manifest.generation, manifest.index.documents
            )?;
        }
        Command::Check { data, repair, json } => {
            let data = DataDir::open_to_check(&data)?;
            let config = Config::of(&data)?;
            let report = mirrorscope::datadir::check(&data, &config.store, repair)?;
            print(&mut stdout, json, &report, Text::Line)?;
            if !report.is_consistent() {
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Eval { truth, data, json } => {
            let data = DataDir::open_existing(&data)?;
            let evaluation = eval::evaluate(&data, &truth)?;
            print(&mut stdout, json, &evaluation, Text::Ended)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// How a report's text ends: with its own line end, or not.
#[derive(Clone, Copy)]
enum Text {
    /// The text ends with a line end.
    Ended,
    /// The text is one or more lines without the last line end.
    Line,
}

/// Prints `report` as pretty JSON (`--json`) or as its text.
fn print<T: serde::Serialize + std::fmt::Display>(
    out: &mut impl Write,
    json: bool,
    report: &T,
    text: Text,
) -> Result<()> {
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(report)?)?;
    } else {
        match text {
            Text::Ended => write!(out, "{report}")?,
            Text::Line => writeln!(out, "{report}")?,
        }
    }
    Ok(())
}
