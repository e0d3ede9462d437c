"""Cluster growth on one component and relative links, ports of
src/collections/grow.rs and src/pages/: made-up components whose similar
clusters follow from cho-2000 §3 by hand. Run: python -m unittest discover
spark/tests (the link hash needs xxhash, which spark/setup.sh installs)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from mirrorscope_spark.growth import Component, _strongly_connected, relative_link  # noqa: E402

try:
    import xxhash  # noqa: F401

    HAVE_XXHASH = True
except ImportError:
    HAVE_XXHASH = False


def members(hosts, clusters):
    """(page, cluster, host, inlinks) rows: page i on hosts[i], in
    clusters[i], no in-links from other hosts."""
    return [(page, clusters[page], hosts[page], 0) for page in range(len(hosts))]


class Links(unittest.TestCase):
    def test_the_path_from_the_folder(self):
        self.assertEqual(
            relative_link(
                "http://a.example/docs/guide/intro.html", "http://a.example/docs/api/index.html?x=1"
            ),
            "../api/index.html?x=1",
        )
        self.assertEqual(relative_link("http://a.example/", "http://a.example/"), "")
        self.assertEqual(relative_link("http://a.example", "http://a.example/x"), "x")
        self.assertIsNone(relative_link("http://a.example/x", "http://b.example/x"))

    def test_copies_under_other_prefixes_link_alike(self):
        self.assertEqual(
            relative_link(
                "http://a.example/docs/2.4/en/mod/core.html", "http://a.example/docs/2.4/en/index.html"
            ),
            relative_link(
                "http://m.example/pub/apache/docs/2.4/en/mod/core.html",
                "http://m.example/pub/apache/docs/2.4/en/index.html",
            ),
        )

    @unittest.skipUnless(HAVE_XXHASH, "xxhash is not installed (spark/setup.sh installs it)")
    def test_the_key_is_the_rust_key(self):
        from mirrorscope_spark.growth import link_key

        # relative_link_key_is_the_hash_of_the_relative_link in src/pages/mod.rs.
        self.assertEqual(
            link_key(
                "http://a.example/docs/guide/intro.html", "http://a.example/docs/api/index.html?x=1"
            ),
            -4939720349677312645,
        )
        self.assertIsNone(link_key("http://a.example/x", "http://b.example/x"))


class Growth(unittest.TestCase):
    def test_two_copies_of_a_collection_grow_into_one_cluster(self):
        # Hosts 0 and 1 each hold a root and two children; cluster 0 the
        # roots, 1 and 2 the children (cho Figure 9).
        component = Component(
            members([0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2]),
            [(0, 1), (0, 2)],
            [(0, 1), (0, 2), (3, 4), (3, 5)],
        )
        self.assertEqual(component.grow(), [([[0, 1, 2], [3, 4, 5]], [0, 1, 2])])

    def test_collections_stay_on_their_host(self):
        # Each root links only to the other host's child.
        rows = members([0, 0, 1, 1], [0, 1, 0, 1])
        edges, links = [(0, 1)], [(0, 3), (2, 1)]
        self.assertEqual(
            Component(rows, edges, links).grow(),
            [([[0], [2]], [0]), ([[1], [3]], [1])],
        )
        self.assertEqual(
            Component(rows, edges, links, single_site=False).grow(),
            [([[0, 3], [2, 1]], [0, 1])],
        )

    def test_strict_clusters_keep_the_copies_that_link_back_as_most_do(self):
        # Three copies; the children of two link back to their root.
        rows = members([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1])
        edges = [(0, 1)]
        links = [(0, 1), (2, 3), (4, 5), (1, 0), (3, 2)]
        self.assertEqual(
            Component(rows, edges, links, extended=False).grow(),
            [([[0, 1], [2, 3], [4]], [0, 1])],
        )
        self.assertEqual(
            Component(rows, edges, links, extended=True).grow(),
            [([[0, 1], [2, 3], [4, 5]], [0, 1])],
        )

    def test_a_page_without_copies_joins_from_copies_only(self):
        # Cluster 0 (pages 0, 1 on hosts 0 and 1) links to page 2 (no copy,
        # host 0), which links to page 3 (no copy): 2 joins, 3 does not
        # (grow.rs, a_sibling_manual_does_not_grow_in_through_the_pages_both_share).
        rows = members([0, 1, 0, 0], [0, 0, 1, 2])
        edges = [(0, 1), (1, 2)]
        links = [(0, 2), (2, 3)]
        self.assertEqual(Component(rows, edges, links).grow(), [([[0, 2], [1]], [0, 1])])

    def test_growth_starts_where_nothing_leads(self):
        # Cluster 5 leads to cluster 2: 5 starts though 2 has the lower number.
        rows = [(10, 2, 0, 0), (11, 5, 0, 0), (12, 2, 1, 0), (13, 5, 1, 0)]
        component = Component(rows, [(5, 2)], [(11, 10), (13, 12)])
        self.assertEqual(component.starts()[0], 5)
        self.assertEqual(component.grow(), [([[11, 10], [13, 12]], [5, 2])])

    def test_a_cycle_is_one_strongly_connected_component(self):
        scc = _strongly_connected([1, 2, 3], {1: [2], 2: [1], 3: [1]})
        self.assertEqual(scc[1], scc[2])
        self.assertNotEqual(scc[1], scc[3])


if __name__ == "__main__":
    unittest.main()
