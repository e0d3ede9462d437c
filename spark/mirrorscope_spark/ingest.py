"""The `pipeline` job: a crawl's WARC files to a served generation, its two
costly stages as Spark tasks.

1. Ingest: the files, a few a task (`--files-per-task`), each task running
   `mirrorscope ingest-part FILE… --out PARTS/part-K`: the Rust code reads
   them (decoding, extraction, fingerprints) into a part of its own, a page
   store of their bodies, the captures as Parquet tables (captures, links,
   fingerprints, lines; docs/SCALING.md) and what was read of each file.
   The job reads the tables back with Spark and counts their rows.
2. On the driver, `mirrorscope index CRAWL --parts PARTS --index-shards N`
   takes the parts as if it had read the files (the same crawl id, the
   same captures), builds the page table and the analysis, and stages the
   generation.
3. The index in N shards, one task each (`index.build_and_publish`), then
   the generation published.

The data folder, the parts folder and the crawl must be at the same paths
on every worker (a shared file system, or one machine), and `mirrorscope`
runnable there.
"""

import os
import re
import time

from .index import build_and_publish, mirrorscope


def warc_files(inputs):
    """The WARC files (`*.warc`, `*.warc.gz`, any case) of `inputs`, files
    or folders searched through, as absolute paths, sorted. `index` lists
    the crawl itself; a file left out here is one no part read, which it
    says."""
    found = set()
    for given in inputs:
        if os.path.isdir(given):
            for folder, _, names in os.walk(given):
                for name in names:
                    if name.lower().endswith((".warc", ".warc.gz")):
                        found.add(os.path.abspath(os.path.join(folder, name)))
        else:
            found.add(os.path.abspath(given))
    return sorted(found)


def part_task(binary, data, parts):
    """What a task runs for one group of files, `(number, files)`."""

    def ingest(group):
        number, files = group
        started = time.monotonic()
        out = os.path.join(parts, f"part-{number:05d}")
        printed = mirrorscope(binary, "ingest-part", *files, "--out", out, "--data", data)
        return {
            "part": number,
            "files": len(files),
            "printed": printed.strip(),
            "seconds": round(time.monotonic() - started, 1),
            "executor": os.getcwd(),
        }

    return ingest


def part_tables(spark, folders):
    """The rows of the parts' tables in `folders`, read by Spark: the
    captures, their links, fingerprints and lines."""
    return {
        table: spark.read.parquet(
            *[os.path.join(folder, f"{table}.parquet") for folder in folders]
        ).count()
        for table in ("captures", "links", "fingerprints", "lines")
    }


def run(spark, binary, data, inputs, parts, shards, files_per_task=1):
    """The crawl `inputs` ingested as parts into `parts`, indexed into the
    data folder `data` with its index in `shards` shards; the figures."""
    if files_per_task < 1:
        raise ValueError("a task reads at least one file")
    binary = os.path.abspath(binary) if os.sep in binary else binary
    data, parts = os.path.abspath(data), os.path.abspath(parts)
    inputs = [os.path.abspath(given) for given in inputs]
    files = warc_files(inputs)
    if not files:
        raise ValueError(f"no WARC files in {', '.join(inputs)}")
    groups = [
        (number, files[start : start + files_per_task])
        for number, start in enumerate(range(0, len(files), files_per_task))
    ]
    os.makedirs(parts, exist_ok=True)
    started = time.monotonic()
    read = (
        spark.sparkContext.parallelize(groups, len(groups))
        .map(part_task(binary, data, parts))
        .collect()
    )
    read.sort(key=lambda part: part["part"])
    ingest_seconds = round(time.monotonic() - started, 1)
    counted = time.monotonic()
    tables = part_tables(
        spark, [os.path.join(parts, f"part-{part['part']:05d}") for part in read]
    )
    tables_seconds = round(time.monotonic() - counted, 1)
    indexed = mirrorscope(
        binary, "index", *inputs, "--data", data, "--parts", parts, "--index-shards", str(shards)
    )
    staged = re.search(r"\bstaged (staged-[0-9]+)", indexed)
    if staged is None:
        raise RuntimeError(f"index staged no generation:\n{indexed}")
    index_seconds = round(time.monotonic() - started, 1) - ingest_seconds - tables_seconds
    figures = build_and_publish(spark, binary, data, staged.group(1), shards)
    figures.update(
        {
            "parts": read,
            "part_tables": tables,
            "files": len(files),
            "ingest_executors": len({part["executor"] for part in read}),
            "ingest_seconds": ingest_seconds,
            "part_tables_seconds": tables_seconds,
            "index_seconds": round(index_seconds, 1),
            "seconds": round(time.monotonic() - started, 1),
        }
    )
    return figures
