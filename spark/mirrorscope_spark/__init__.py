"""mirrorscope's analysis as Spark jobs over the tables `mirrorscope export
--format parquet` writes (docs/SCALING.md)."""
