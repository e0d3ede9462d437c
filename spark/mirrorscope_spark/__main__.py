"""python -m mirrorscope_spark JOB --tables DIR --out DIR [--config FILE]

Runs mirrorscope's analysis on Spark over the Parquet tables of `mirrorscope
export --format parquet`:

- `similarity` reads pages, chunks and megashingles and writes OUT/trivial
  (Parquet: page, cluster) and OUT/similarity.json (the stage's figures);
- `collections` reads pages, links, uncrawled and a trivial table
  (`--trivial`, default the exported TABLES/trivial.parquet) and writes the
  similar clusters as grown: OUT/grown (Parquet: component, growth,
  collection, position, page), OUT/grown_trivial (component, growth,
  position, cluster) and OUT/collections.json (growth's figures);
- `mirrors` reads hosts, pages and a trivial table (as `collections`) and
  writes OUT/mirror_pairs (Parquet: the `clusters` ranker's pairs) with
  OUT/mirrors.json, and OUT/prefix_pairs (Parquet: host_a, host_b, score,
  the `prefix` ranker's pairs, bharat-2000's path-prefix evidence) with
  OUT/prefix.json;
- `analysis` runs all three, the later two on Spark's own trivial clusters;
- `index` imports what they wrote (`--analysis`, the OUT of `analysis`) into
  a data folder (`--data`) with its search index built in shards
  (`--shards`), one Spark task each running `mirrorscope index-shard`
  (`--mirrorscope`, the binary), then publishes the generation (index.py);
- `pipeline` indexes a crawl (`--crawl`, WARC files or folders) into a data
  folder (`--data`): its files read by Spark tasks (`mirrorscope
  ingest-part`, `--files-per-task` each, into `--parts`), the parts taken
  by `mirrorscope index --parts` on the driver, which builds the analysis
  and stages the generation, its index built in shards as `index` builds it
  (ingest.py);
- `jobs` runs job after job in one Spark session, as standard input asks
  (one JSON object a line: {"job", "tables", "out", "config", "trivial"}),
  and answers each with a line of JSON ({"figures"} or {"error"}).

Each job prints its figures as JSON, and copies TABLES/GENERATION (the
generation `export` read) into OUT, so that `mirrorscope import-analysis
OUT` can check it imports the clusters into the generation they are of."""

import argparse
import json
import os
import shutil
import sys
import time

from pyspark.sql import functions as F

from .collections import DEFAULTS as COLLECTIONS_DEFAULTS
from .mirrors import DEFAULTS as MIRRORS_DEFAULTS

# The similarity settings mirrorscope uses when config.json leaves them out
# (SimilarityConfig's Default in src/similarity/mod.rs).
SIMILARITY_DEFAULTS = {
    "test": "chunks",
    "chunk_lines": 1,
    "shared_chunks": 1,
    "shared_fraction": 0.8,
    "larger_fraction": 0.5,
    "boilerplate_pages_per_host": 4,
    "max_chunk_pages": 1000,
}


def section(path, name, defaults):
    """The settings of section `name` of a mirrorscope config.json that the
    jobs use, over `defaults`; the defaults alone without a file."""
    config = dict(defaults)
    if path:
        with open(path, encoding="utf-8") as file:
            given = json.load(file).get(name, {})
        config.update({key: value for key, value in given.items() if key in defaults})
    return config


def session(arguments):
    from pyspark.sql import SparkSession

    # Python workers run this interpreter, which has PySpark and xxhash: the
    # environment variable, as local mode does not pass the setting below on
    # to the workers it starts.
    os.environ["PYSPARK_PYTHON"] = sys.executable

    spark = (
        SparkSession.builder.appName(f"mirrorscope {arguments.job}")
        .master(arguments.master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(arguments.partitions))
        .config("spark.default.parallelism", str(arguments.partitions))
        .config("spark.driver.memory", arguments.driver_memory)
        # Python workers run this interpreter, which has PySpark.
        .config("spark.pyspark.python", sys.executable)
        # zstd, as `mirrorscope export` writes: mirrorscope reads it back.
        .config("spark.sql.parquet.compression.codec", "zstd")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    ship_package(spark)
    return spark


def ship_package(spark):
    """Sends this package's code with the jobs: an executor of a cluster
    (not local mode) runs in a folder of its own, where `mirrorscope_spark`
    cannot be imported otherwise."""
    import atexit
    import tempfile
    import zipfile

    package = os.path.dirname(os.path.abspath(__file__))
    handle, path = tempfile.mkstemp(prefix="mirrorscope_spark-", suffix=".zip")
    atexit.register(os.remove, path)
    with os.fdopen(handle, "wb") as raw, zipfile.ZipFile(raw, "w") as archive:
        for name in sorted(os.listdir(package)):
            if name.endswith(".py"):
                archive.write(os.path.join(package, name), os.path.join("mirrorscope_spark", name))
    spark.sparkContext.addPyFile(path)


def read_tables(spark, folder, names):
    tables = {}
    for name in names:
        path = os.path.join(folder, f"{name}.parquet")
        if not os.path.exists(path):
            raise SystemExit(
                f"{path}: missing; write it with `mirrorscope export --format parquet --out {folder}`"
            )
        tables[name] = spark.read.parquet(path)
    return tables


# The jobs one run (or one line of `jobs`) can ask for.
JOBS = ("similarity", "collections", "mirrors", "analysis")


def job_parser():
    parser = argparse.ArgumentParser(prog="python -m mirrorscope_spark")
    parser.add_argument("job", choices=[*JOBS, "jobs", "index", "pipeline"])
    parser.add_argument("--tables", help="folder of NAME.parquet tables")
    parser.add_argument("--out", help="folder to write the results into")
    parser.add_argument(
        "--config", help="mirrorscope config.json (its similarity, collections and mirrors sections)"
    )
    parser.add_argument(
        "--trivial",
        help="the collections and mirrors jobs' trivial table (default TABLES/trivial.parquet)",
    )
    parser.add_argument("--data", help="the index job's mirrorscope data folder")
    parser.add_argument(
        "--analysis", help="the index job's analysis to import (the OUT of `analysis`)"
    )
    parser.add_argument(
        "--shards", type=int, default=2, help="shards the index job builds the index in"
    )
    parser.add_argument(
        "--mirrorscope", default="mirrorscope", help="the mirrorscope binary the index job runs"
    )
    parser.add_argument("--crawl", nargs="+", help="the pipeline job's WARC files or folders")
    parser.add_argument("--parts", help="the pipeline job's folder of ingest parts")
    parser.add_argument(
        "--files-per-task", type=int, default=1, help="WARC files a pipeline ingest task reads"
    )
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--partitions", type=int, default=8, help="shuffle partitions")
    parser.add_argument("--driver-memory", default="4g")
    return parser


def main(argv=None):
    arguments = job_parser().parse_args(argv)
    if arguments.job == "jobs":
        # The answers keep standard output to themselves: whatever else
        # writes to it, this process or the JVM it starts, writes to
        # standard error instead.
        sys.stdout.flush()
        answers = os.fdopen(os.dup(sys.stdout.fileno()), "w")
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        return serve_jobs(arguments, answers)
    if arguments.job in ("index", "pipeline"):
        return index_job(arguments)
    for option in ("tables", "out"):
        if getattr(arguments, option) is None:
            raise SystemExit(f"--{option} is required by the {arguments.job} job")
    spark = session(arguments)
    try:
        figures = run(spark, arguments)
    finally:
        spark.stop()
    json.dump(figures, sys.stdout, indent=2)
    print()


def index_job(arguments):
    """`index` (index.py) and `pipeline` (ingest.py)."""
    from . import index, ingest

    needed = ("data", "analysis") if arguments.job == "index" else ("data", "crawl", "parts")
    for option in needed:
        if getattr(arguments, option) is None:
            raise SystemExit(f"--{option} is required by the {arguments.job} job")
    spark = session(arguments)
    try:
        if arguments.job == "index":
            figures = index.run(
                spark, arguments.mirrorscope, arguments.data, arguments.analysis, arguments.shards
            )
        else:
            figures = ingest.run(
                spark,
                arguments.mirrorscope,
                arguments.data,
                arguments.crawl,
                arguments.parts,
                arguments.shards,
                arguments.files_per_task,
            )
    finally:
        spark.stop()
    json.dump(figures, sys.stdout, indent=2)
    print()


def serve_jobs(arguments, answers):
    """`jobs`: runs job after job in one Spark session, as standard input
    asks: one JSON object per line, {"job": ..., "tables": ..., "out": ...}
    with "config" and "trivial" when wanted (the options of one job). Each
    answer is one line written to `answers`: {"figures": {...}} or {"error":
    "the traceback"}; the session ends with standard input. One session
    spares each job the start of a JVM and its warming up."""
    import traceback

    spark = session(arguments)
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                asked = json.loads(line)
                if not isinstance(asked, dict):
                    raise ValueError("a job is a JSON object")
                job = argparse.Namespace(**vars(arguments))
                job.job = asked.get("job")
                if job.job not in JOBS:
                    raise ValueError(f"unknown job {job.job!r}")
                for option in ("tables", "out"):
                    if not isinstance(asked.get(option), str):
                        raise ValueError(f"the job names no {option} folder")
                    setattr(job, option, asked[option])
                for option in ("config", "trivial"):
                    setattr(job, option, asked.get(option))
                answer = {"figures": run(spark, job)}
            except (Exception, SystemExit):  # noqa: BLE001 - the asker gets the traceback
                answer = {"error": traceback.format_exc()}
            # What a job cached is of its tables only.
            spark.catalog.clearCache()
            answers.write(json.dumps(answer) + "\n")
            answers.flush()
    finally:
        spark.stop()


def run(spark, arguments):
    """Runs `arguments.job` in `spark`; returns its figures."""
    similarity = section(arguments.config, "similarity", SIMILARITY_DEFAULTS)
    collections = section(arguments.config, "collections", COLLECTIONS_DEFAULTS)
    mirrors = section(arguments.config, "mirrors", MIRRORS_DEFAULTS)
    if similarity["test"] not in ("chunks", "minhash", "both"):
        raise SystemExit("similarity.test must be chunks, minhash or both")
    started = time.monotonic()
    figures = {}
    os.makedirs(arguments.out, exist_ok=True)
    # Which generation the results are of, for `mirrorscope
    # import-analysis` to check.
    marker = os.path.join(arguments.tables, "GENERATION")
    if os.path.exists(marker):
        shutil.copyfile(marker, os.path.join(arguments.out, "GENERATION"))
    trivial = None
    if arguments.job in ("similarity", "analysis"):
        from .similarity import analyse

        tables = read_tables(spark, arguments.tables, ["pages", "chunks", "megashingles"])
        trivial, counts = analyse(spark, tables, similarity)
        path = os.path.join(arguments.out, "trivial")
        trivial.orderBy("page").write.mode("overwrite").parquet(path)
        trivial = spark.read.parquet(path)
        counts["seconds"] = round(time.monotonic() - started, 1)
        counts["similarity"] = similarity
        write_json(os.path.join(arguments.out, "similarity.json"), counts)
        figures["similarity"] = counts
    if trivial is None:
        trivial = spark.read.parquet(
            arguments.trivial or os.path.join(arguments.tables, "trivial.parquet")
        )
    if arguments.job in ("collections", "analysis"):
        from .collections import analyse as grow

        stage_started = time.monotonic()
        tables = read_tables(spark, arguments.tables, ["pages", "links", "uncrawled"])
        grown, grown_trivial, counts = grow(spark, tables, trivial, collections)
        order = ["component", "growth", "collection", "position"]
        grown.orderBy(*order).write.mode("overwrite").parquet(os.path.join(arguments.out, "grown"))
        grown_trivial.orderBy("component", "growth", "position").write.mode("overwrite").parquet(
            os.path.join(arguments.out, "grown_trivial")
        )
        counts["seconds"] = round(time.monotonic() - stage_started, 1)
        counts["collections"] = collections
        write_json(os.path.join(arguments.out, "collections.json"), counts)
        figures["collections"] = counts
    if arguments.job in ("mirrors", "analysis"):
        from .mirrors import prefix_ranking, ranking

        stage_started = time.monotonic()
        tables = read_tables(spark, arguments.tables, ["hosts", "pages"])
        pairs = ranking(tables, trivial, mirrors)
        path = os.path.join(arguments.out, "mirror_pairs")
        pairs.orderBy(F.col("score").desc(), "host_a", "host_b").write.mode("overwrite").parquet(path)
        names = {row.host: row.name for row in tables["hosts"].select("host", "name").collect()}
        ranked = [
            {
                "a": names[row.host_a],
                "b": names[row.host_b],
                "score": row.score,
                "clustered_pages": [row.clustered_pages_a, row.clustered_pages_b],
            }
            for row in spark.read.parquet(path).collect()
        ]
        result = {
            "ranker": "clusters",
            "ranked": len(ranked),
            "pairs": ranked,
            "seconds": round(time.monotonic() - stage_started, 1),
            "mirrors": mirrors,
        }
        write_json(os.path.join(arguments.out, "mirrors.json"), result)
        figures["mirrors"] = result

        stage_started = time.monotonic()
        prefix = prefix_ranking(spark, tables, mirrors)
        path = os.path.join(arguments.out, "prefix_pairs")
        prefix.orderBy(F.col("score").desc(), "host_a", "host_b").write.mode("overwrite").parquet(path)
        ranked = sorted(
            spark.read.parquet(path).collect(),
            key=lambda row: (-row.score, row.host_a, row.host_b),
        )
        result = {
            "ranker": "prefix",
            "ranked": len(ranked),
            "pairs": [
                {"a": names[row.host_a], "b": names[row.host_b], "score": row.score}
                for row in ranked[: mirrors["max_pairs"]]
            ],
            "seconds": round(time.monotonic() - stage_started, 1),
        }
        write_json(os.path.join(arguments.out, "prefix.json"), result)
        figures["prefix"] = result
    figures["seconds"] = round(time.monotonic() - started, 1)
    return figures


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as file:
        json.dump(value, file, indent=2)
        file.write("\n")


if __name__ == "__main__":
    main()
