"""`python -m mirrorscope_spark jobs`: the jobs asked on standard input run
in one session, each answered with one line of JSON, a bad one answered
with what is wrong while the session goes on. Spark itself is replaced by a
stand-in (the jobs are checked against the Rust stages by
tests/it/spark.rs); the module needs PySpark to import, which spark/setup.sh
installs."""

import io
import json
import os
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

try:
    import mirrorscope_spark.__main__ as jobs

    HAVE_PYSPARK = True
except ImportError:
    HAVE_PYSPARK = False


@unittest.skipUnless(HAVE_PYSPARK, "needs pyspark (bash spark/setup.sh)")
class Jobs(unittest.TestCase):
    def serve(self, lines, run):
        """Serves `lines` with `run` in place of a job; returns the answers
        and the stand-in session."""
        spark = mock.MagicMock()
        stdin, stdout = io.StringIO("".join(lines)), io.StringIO()
        arguments = jobs.job_parser().parse_args(["jobs", "--master", "local[1]"])
        with (
            mock.patch.object(jobs, "session", return_value=spark),
            mock.patch.object(jobs, "run", side_effect=run),
            mock.patch.object(sys, "stdin", stdin),
        ):
            jobs.serve_jobs(arguments, stdout)
        return [json.loads(line) for line in stdout.getvalue().splitlines()], spark

    def test_each_job_is_answered_in_order_and_a_bad_one_says_why(self):
        def run(spark, job):
            if job.tables == "missing":
                raise SystemExit("missing/pages.parquet: missing")
            return {"job": job.job, "out": job.out, "config": job.config}

        asked = [
            json.dumps({"job": "similarity", "tables": "t", "out": "o1"}) + "\n",
            "\n",
            "[1, 2]\n",
            json.dumps({"job": "index", "tables": "t", "out": "o"}) + "\n",
            json.dumps({"job": "mirrors", "out": "o"}) + "\n",
            "{not json\n",
            json.dumps({"job": "analysis", "tables": "missing", "out": "o"}) + "\n",
            json.dumps({"job": "analysis", "tables": "t", "out": "o2", "config": "c.json"}) + "\n",
        ]
        answers, spark = self.serve(asked, run)
        self.assertEqual(len(answers), 7, "one answer a job, none for the blank line")
        self.assertEqual(
            answers[0], {"figures": {"job": "similarity", "out": "o1", "config": None}}
        )
        for answer, says in zip(
            answers[1:6],
            [
                "a job is a JSON object",
                "unknown job 'index'",
                "the job names no tables folder",
                "JSONDecodeError",
                "missing/pages.parquet: missing",
            ],
        ):
            self.assertIn(says, answer["error"])
        self.assertEqual(
            answers[6], {"figures": {"job": "analysis", "out": "o2", "config": "c.json"}}
        )
        # What a job cached is let go after each; the session ends with the
        # input.
        self.assertEqual(spark.catalog.clearCache.call_count, 7)
        spark.stop.assert_called_once()


if __name__ == "__main__":
    unittest.main()
