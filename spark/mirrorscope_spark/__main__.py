"""python -m mirrorscope_spark similarity --tables DIR --out DIR [--config FILE]

Runs the similarity stage on Spark over the Parquet tables of `mirrorscope
export --format parquet` and writes OUT/trivial (Parquet: page, cluster) and
OUT/similarity.json (the stage's figures, the seconds it took)."""

import argparse
import json
import os
import sys
import time

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


def similarity_config(path):
    """The `similarity` section of a mirrorscope config.json, over the
    defaults; the defaults alone without a file."""
    config = dict(SIMILARITY_DEFAULTS)
    if path:
        with open(path, encoding="utf-8") as file:
            given = json.load(file).get("similarity", {})
        unknown = sorted(set(given) - set(config))
        if unknown:
            raise SystemExit(f"{path}: unknown similarity settings: {', '.join(unknown)}")
        config.update(given)
    return config


def session(arguments):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.appName("mirrorscope similarity")
        .master(arguments.master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(arguments.partitions))
        .config("spark.default.parallelism", str(arguments.partitions))
        .config("spark.driver.memory", arguments.driver_memory)
        # zstd, as `mirrorscope export` writes: mirrorscope reads it back.
        .config("spark.sql.parquet.compression.codec", "zstd")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


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


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mirrorscope_spark")
    parser.add_argument("job", choices=["similarity"])
    parser.add_argument("--tables", required=True, help="folder of NAME.parquet tables")
    parser.add_argument("--out", required=True, help="folder to write the results into")
    parser.add_argument("--config", help="mirrorscope config.json (its similarity section)")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--partitions", type=int, default=8, help="shuffle partitions")
    parser.add_argument("--driver-memory", default="4g")
    arguments = parser.parse_args(argv)

    config = similarity_config(arguments.config)
    if config["chunk_lines"] not in (1, 2, 4) or config["test"] not in ("chunks", "minhash", "both"):
        raise SystemExit("similarity: chunk_lines must be 1, 2 or 4 and test chunks, minhash or both")
    started = time.monotonic()
    spark = session(arguments)
    try:
        from .similarity import analyse

        tables = read_tables(spark, arguments.tables, ["pages", "chunks", "megashingles"])
        trivial, counts = analyse(spark, tables, config)
        os.makedirs(arguments.out, exist_ok=True)
        trivial.orderBy("page").write.mode("overwrite").parquet(
            os.path.join(arguments.out, "trivial")
        )
        counts["seconds"] = round(time.monotonic() - started, 1)
        counts["similarity"] = config
        with open(os.path.join(arguments.out, "similarity.json"), "w", encoding="utf-8") as file:
            json.dump(counts, file, indent=2)
            file.write("\n")
        json.dump(counts, sys.stdout, indent=2)
        print()
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
