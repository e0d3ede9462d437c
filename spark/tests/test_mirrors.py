"""The `prefix` ranker's terms, ports of src/mirrors/hosts.rs and terms.rs:
the same cases as their Rust tests. Run: python -m unittest discover
spark/tests"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

try:
    from mirrorscope_spark.mirrors import path_prefixes, selected_terms, url_path  # noqa: E402
except ImportError as error:  # pyspark missing: the module imports it
    raise unittest.SkipTest(f"pyspark is not installed ({error})")


class Prefixes(unittest.TestCase):
    def test_urls_split_into_host_and_path(self):
        self.assertEqual(url_path("http://www.example.org/a/b.html?x=1#top"), "/a/b.html?x=1")
        self.assertEqual(url_path("http://www.example.org"), "/")
        self.assertEqual(url_path("http://www.example.org?q"), "?q")
        self.assertIsNone(url_path("www.example.org/a"))

    def test_prefixes_end_in_a_slash_or_end_the_path(self):
        self.assertEqual(path_prefixes("/a/b/c.html"), ["/", "/a/", "/a/b/", "/a/b/c.html"])
        self.assertEqual(path_prefixes("/a/"), ["/", "/a/"])

    def test_a_host_keeps_ten_log_p_terms(self):
        self.assertEqual(selected_terms(0), 1)
        self.assertEqual(selected_terms(1), 1)
        self.assertEqual(selected_terms(20), 13)
        self.assertEqual(selected_terms(1000), 30)


if __name__ == "__main__":
    unittest.main()
