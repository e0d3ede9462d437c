"""The split by path, port of src/similarity/paths.rs: the same cases as its
Rust tests, on made-up clusters. Run: python -m unittest discover spark/tests"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from mirrorscope_spark.paths import groups_by_path, is_index_name, page_arcs, url_path  # noqa: E402


class Names(unittest.TestCase):
    def test_url_path(self):
        self.assertEqual(url_path("http://a.example/x/y.html?q=1#f"), "/x/y.html")
        self.assertEqual(url_path("http://a.example"), "/")
        self.assertEqual(url_path("http://a.example?q"), "/")
        self.assertIsNone(url_path("no scheme"))

    def test_a_folder_and_its_index_page_are_one_path(self):
        self.assertEqual(page_arcs("/docs/"), ["docs"])
        self.assertEqual(page_arcs("/docs/index.html"), ["docs"])
        self.assertEqual(page_arcs("/docs/DEFAULT.HTM"), ["docs"])
        self.assertEqual(page_arcs("/docs/index.en.html"), ["docs", "index.en.html"])
        self.assertFalse(is_index_name("index."))
        self.assertFalse(is_index_name("İndex.html"))


class Split(unittest.TestCase):
    def test_one_text_under_two_paths_on_every_copy_splits(self):
        members = [
            (0, 1, "http://a.example/std/iter/x.html"),
            (1, 1, "http://a.example/std/ops/x.html"),
            (2, 2, "http://b.example/pub/std/iter/x.html"),
            (3, 2, "http://b.example/pub/std/ops/x.html"),
        ]
        self.assertEqual(groups_by_path(members), [[0, 2], [1, 3]])

    def test_an_uncorroborated_split_keeps_the_cluster(self):
        members = [
            (0, 1, "http://a.example/one.html"),
            (1, 1, "http://a.example/two.html"),
            (2, 2, "http://b.example/one.html"),
        ]
        self.assertIsNone(groups_by_path(members))

    def test_a_member_matching_two_groups_equally_stays_loose(self):
        members = [
            (0, 1, "http://a.example/x/p.html"),
            (1, 1, "http://a.example/y/p.html"),
            (2, 2, "http://b.example/x/p.html"),
            (3, 3, "http://c.example/y/p.html"),
            (4, 4, "http://d.example/z/p.html"),
        ]
        self.assertEqual(groups_by_path(members), [[0, 2], [1, 3], [4]])

    def test_the_reference_is_the_host_with_most_paths_then_lowest(self):
        members = [
            (0, 7, "http://a.example/p/x.html"),
            (1, 7, "http://a.example/q/x.html"),
            (2, 3, "http://b.example/p/x.html"),
            (3, 3, "http://b.example/q/x.html"),
        ]
        # Host 3 is the reference: pages 0 and 1 corroborate its groups.
        self.assertEqual(groups_by_path(members), [[0, 2], [1, 3]])

    def test_one_path_on_every_host_is_no_split(self):
        members = [(0, 1, "http://a.example/x.html"), (1, 2, "http://b.example/x.html")]
        self.assertIsNone(groups_by_path(members))


if __name__ == "__main__":
    unittest.main()
