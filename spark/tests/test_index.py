"""The `index` job's driver and tasks (mirrorscope_spark/index.py), with a
stand-in for the `mirrorscope` binary (a script that records how it was
called) and for Spark (a context whose parallelize runs the tasks in this
process). The job on a real cluster is tests/it/spark_cluster.rs's."""

import os
import stat
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from mirrorscope_spark import index  # noqa: E402 - needs no PySpark

# What the stand-in binary prints, by subcommand; `fail` exits 2.
STAND_IN = """#!/bin/sh
echo "$@" >> "$CALLS"
case "$1" in
  import-analysis) echo staged-123; echo "what to run next" ;;
  index-shard) echo "staged-123: shard $4 of $6 built, 10 documents, 99 bytes" ;;
  publish) echo "staged-123 published as generation gen-000002" ;;
  fail) echo "no such thing" >&2; exit 2 ;;
esac
"""


class Tasks:
    """A stand-in SparkContext: parallelize(...).map(f).collect() runs f
    on each element here."""

    def __init__(self, elements, function=None):
        self.elements = list(elements)
        self.function = function

    def map(self, function):
        return Tasks(self.elements, function)

    def collect(self):
        return [self.function(element) for element in self.elements]


class IndexJob(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.binary = os.path.join(self.dir.name, "mirrorscope")
        with open(self.binary, "w", encoding="utf-8") as file:
            file.write(STAND_IN)
        os.chmod(self.binary, os.stat(self.binary).st_mode | stat.S_IXUSR)
        self.calls = os.path.join(self.dir.name, "calls")
        os.environ["CALLS"] = self.calls

    def tearDown(self):
        self.dir.cleanup()

    def called(self):
        with open(self.calls, encoding="utf-8") as file:
            return [line.split() for line in file]

    def test_imports_builds_every_shard_as_a_task_then_publishes(self):
        spark = mock.MagicMock()
        spark.sparkContext.parallelize = lambda elements, slices: Tasks(elements)
        figures = index.run(spark, self.binary, "data", "out", 3)
        calls = self.called()
        self.assertEqual(calls[0][:2], ["import-analysis", os.path.abspath("out")])
        self.assertEqual(calls[0][-2:], ["--index-shards", "3"])
        self.assertEqual(
            sorted(call[3] for call in calls[1:4]), ["0", "1", "2"]
        )
        for call in calls[1:4]:
            self.assertEqual(call[:2], ["index-shard", "staged-123"])
            self.assertEqual(call[4:], ["--of", "3", "--data", os.path.abspath("data")])
        self.assertEqual(calls[4][:2], ["publish", "staged-123"])
        self.assertEqual(figures["staged"], "staged-123")
        self.assertEqual([shard["shard"] for shard in figures["shards"]], [0, 1, 2])
        self.assertIn("shard 2 of 3 built", figures["shards"][2]["printed"])

    def test_a_failing_command_fails_the_job_with_its_error(self):
        with self.assertRaises(RuntimeError) as raised:
            index.mirrorscope(self.binary, "fail")
        self.assertIn("no such thing", str(raised.exception))
        self.assertIn("exited 2", str(raised.exception))

    def test_no_shards_is_refused(self):
        with self.assertRaises(ValueError):
            index.run(mock.MagicMock(), self.binary, "data", "out", 0)


if __name__ == "__main__":
    unittest.main()
