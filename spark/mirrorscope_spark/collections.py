"""Similar clusters grown on Spark: the LinkSummary table and cluster growth
of cho-2000 §3.2-§3.3 (strict, and extended as in §4), as the collections
stage of src/collections/ grows them, over exported tables:

1. the web graph (`WebGraph::from_table`): links between crawled pages, a
   link to a redirect followed (up to 5 hops) to the page it leads to, a
   redirect's own links dropped, self-links and repeats dropped;
2. growth's labels: each compared page's trivial cluster (a stand-in and
   a page copied alone, the `copied_alone` column Rust computed, have none:
   they are no pages of any collection); a page that is a
   second name of another page of its host (the same trivial cluster and
   the same links) takes no part, and links to it lead to the first name;
3. virtual links of partly crawled copies: a page of a cluster of copies
   whose relative link, as written, leads into cluster Rj on another copy
   but not on its own (to a page not crawled, or no longer a copy) links
   into Rj virtually;
4. LinkSummary (Figure 8) as two group-bys: s, the pages of Ri linking into
   Rj (virtual links counted), for the rows with a = |Ri| = s, and d, the
   pages of Rj linked from Ri;
5. the trivial cluster graph: an edge Ri -> Rj where a = s = d = b, or, for
   extended clusters, a = s >= d = b; its connected components by iterated
   joins (similarity.components);
6. each component's pages, edges and links gathered by joins and grown into
   similar clusters on its own (growth.Component), as the Rust stage grows
   components in parallel.

Writes the similar clusters as grown, before the Rust stage's later steps
(parts joining their manuals, second names joining their page's collection,
principal copies), which `mirrorscope import-analysis` runs on them.
"""

from pyspark.sql import functions as F
from pyspark.sql import types as T

from .growth import Component, link_key
from .similarity import compared_pages, components

# CollectionsConfig's defaults in src/collections/mod.rs (the settings growth
# reads).
DEFAULTS = {"extended": True, "single_site": True}

# How many redirects a link is followed through (MAX_REDIRECT_HOPS in
# src/collections/graph.rs).
MAX_REDIRECT_HOPS = 5


def web_graph(pages, links):
    """(src, dst): the links between crawled pages, through redirects."""
    redirect = (F.col("status") >= 300) & (F.col("status") < 400)
    redirects = pages.where(redirect).select("page")
    single = (
        links.join(redirects, links.src == redirects.page)
        .groupBy("src")
        .agg(F.count("*").alias("n"), F.min("dst").alias("next"))
        .where(F.col("n") == 1)
        .select(F.col("src").alias("at"), "next")
    )
    # Where each redirect page leads, after up to MAX_REDIRECT_HOPS hops.
    leads = single.select(F.col("at").alias("page"), F.col("at"))
    for _ in range(MAX_REDIRECT_HOPS):
        leads = leads.join(single, "at", "left").select(
            "page", F.coalesce("next", "at").alias("at")
        )
    leads = leads.localCheckpoint()
    followed = (
        links.join(redirects.select(F.col("page").alias("src")), "src", "left_anti")
        .join(leads.withColumnRenamed("page", "dst"), "dst", "left")
        .select("src", F.coalesce("at", "dst").alias("dst"))
    )
    return followed.where(F.col("src") != F.col("dst")).distinct()


def second_names(graph, labelled):
    """(page, twin): pages of a host with the same trivial cluster and the
    same links (at least one; links between the two names aside) as an
    earlier page, `twin` the first."""
    info = labelled.select("page", "label", "host")
    targets = info.select(
        F.col("page").alias("dst"), F.col("label").alias("dst_label"), F.col("host").alias("dst_host")
    )
    kept = (
        graph.join(info.withColumnRenamed("page", "src"), "src")
        .join(targets, "dst", "left")
        .where(
            F.col("dst_label").isNull()
            | (F.col("dst_label") != F.col("label"))
            | (F.col("dst_host") != F.col("host"))
        )
        .groupBy("src", "label", "host")
        .agg(F.sort_array(F.collect_list("dst")).alias("links"))
    )
    firsts = kept.groupBy("label", "host", "links").agg(F.min("src").alias("twin"))
    return (
        kept.join(firsts, ["label", "host", "links"])
        .where(F.col("src") != F.col("twin"))
        .select(F.col("src").alias("page"), "twin")
    )


def analyse(spark, tables, trivial, config):
    """The similar clusters as grown over the exported `tables` (pages,
    links, uncrawled) and `trivial` (page, cluster), with the collections
    settings `config`. Returns (grown, grown_trivial, counts): DataFrames
    (component, growth, collection, position, page) and (component, growth,
    position, cluster), and growth's figures as the manifest names them."""
    pages = tables["pages"].select("page", "url", "host", "status", "body_signature", "words")
    graph = web_graph(pages, tables["links"]).localCheckpoint()
    # Stand-ins and pages copied alone are pages of no collection
    # (compared_labels).
    labelled = (
        compared_pages(tables["pages"])
        .where(~F.col("stand_in") & ~F.col("copied_alone"))
        .join(trivial, "page")
        .select("page", F.col("cluster").alias("label"), "host")
        .localCheckpoint()
    )
    aliases = second_names(graph, labelled).localCheckpoint()

    # The graph with second names merged into their page.
    same = aliases.select(F.col("page").alias("dst"), "twin")
    merged = (
        graph.join(aliases.select(F.col("page").alias("src")), "src", "left_anti")
        .join(same, "dst", "left")
        .select("src", F.coalesce("twin", "dst").alias("dst"))
        .where(F.col("src") != F.col("dst"))
        .distinct()
        .localCheckpoint()
    )
    growing = labelled.join(aliases.select("page"), "page", "left_anti")
    sizes = growing.groupBy("label").agg(F.count("*").alias("size"))
    growing = growing.join(sizes, "label").localCheckpoint()
    source = growing.select(
        F.col("page").alias("src"), F.col("label").alias("from"), F.col("size").alias("a")
    )
    target = growing.select(
        F.col("page").alias("dst"), F.col("label").alias("to"), F.col("size").alias("b")
    )
    between = merged.join(source, "src").join(target, "dst").where(F.col("from") != F.col("to"))
    between = between.localCheckpoint()

    # Virtual links, from the pages of clusters of copies.
    urls = pages.select("page", "url")
    key = F.udf(link_key, T.LongType())
    large = source.where(F.col("a") >= 2)
    written_links = (
        merged.join(large, "src")
        .join(urls.select(F.col("page").alias("src"), F.col("url").alias("src_url")), "src")
        .join(urls.select(F.col("page").alias("dst"), F.col("url").alias("dst_url")), "dst")
        .join(target.select("dst", "to"), "dst", "left")
        .select("src", "from", "to", key("src_url", "dst_url").alias("link"))
        .where(F.col("link").isNotNull())
        .localCheckpoint()
    )
    written = (
        written_links.where(F.col("to").isNotNull() & (F.col("to") != F.col("from")))
        .select("from", "link", F.col("to").alias("leads"))
        .distinct()
    )
    uncrawled = tables["uncrawled"].select(
        F.col("page").alias("src"), "link", F.lit(None).cast("long").alias("to")
    )
    own = written_links.select("src", "link", "to").union(
        uncrawled.join(large.select("src", "from"), "src").select("src", "link", "to")
    )
    virtual = (
        own.join(large.select("src", "from"), "src")
        .join(written, ["from", "link"])
        .where(F.col("to").isNull() | (F.col("leads") != F.col("to")))
        .select("src", F.col("leads").alias("to"))
        .distinct()
        .localCheckpoint()
    )

    # LinkSummary: s for the rows with a = s, then their d.
    linking = between.select("src", "to").union(virtual).distinct().join(source, "src")
    rows = (
        linking.groupBy("from", "to", "a")
        .agg(F.count("*").alias("s"))
        .where(F.col("a") == F.col("s"))
        .join(sizes.select(F.col("label").alias("to"), F.col("size").alias("b")), "to")
    )
    linked = (
        between.select("dst", "from", "to").distinct().groupBy("from", "to").agg(F.count("*").alias("d"))
    )
    rows = rows.join(linked, ["from", "to"], "left").fillna(0, ["d"]).localCheckpoint()
    strict = (F.col("s") == F.col("d")) & (F.col("d") == F.col("b"))
    extended = (F.col("s") >= F.col("d")) & (F.col("d") == F.col("b"))
    merging = strict | extended if config["extended"] else strict
    edges = rows.where(merging).select("from", "to", strict.alias("strict")).localCheckpoint()

    # Components of the trivial cluster graph, named by their smallest cluster.
    pairs = edges.select(F.col("from").alias("a"), F.col("to").alias("b")).localCheckpoint()
    nodes = (
        pairs.select(F.col("a").alias("node"))
        .union(pairs.select(F.col("b").alias("node")))
        .distinct()
        .localCheckpoint()
    )
    labels, _ = components(nodes, pairs)
    component_of = labels.select(F.col("node").alias("label"), F.col("label").alias("component")).localCheckpoint()

    members = growing.join(component_of, "label")
    outside = (
        merged.join(pages.select(F.col("page").alias("src"), F.col("host").alias("src_host")), "src")
        .join(pages.select(F.col("page").alias("dst"), F.col("host").alias("dst_host")), "dst")
        .where(F.col("src_host") != F.col("dst_host"))
        .groupBy("dst")
        .agg(F.count("*").alias("inlinks"))
        .withColumnRenamed("dst", "page")
    )
    members = members.join(outside, "page", "left").fillna(0, ["inlinks"])
    inside = (
        merged.join(members.select(F.col("page").alias("src"), F.col("component")), "src")
        .join(members.select(F.col("page").alias("dst"), F.col("component").alias("other")), "dst")
        .where(F.col("component") == F.col("other"))
    )
    options = (bool(config["extended"]), bool(config["single_site"]))
    gathered = (
        members.rdd.map(lambda r: (r.component, (0, (r.page, r.label, r.host, r.inlinks))))
        .union(
            edges.join(component_of.withColumnRenamed("label", "from"), "from").rdd.map(
                lambda r: (r.component, (1, (r["from"], r["to"])))
            )
        )
        .union(inside.rdd.map(lambda r: (r.component, (2, (r.src, r.dst)))))
        .groupByKey()
        .flatMap(lambda item: _grow(item, options))
    )
    schema = T.StructType(
        [
            T.StructField("kind", T.IntegerType()),
            T.StructField("component", T.LongType()),
            T.StructField("growth", T.LongType()),
            T.StructField("collection", T.LongType()),
            T.StructField("position", T.LongType()),
            T.StructField("value", T.LongType()),
        ]
    )
    grown_rows = spark.createDataFrame(gathered, schema).localCheckpoint()
    grown = grown_rows.where(F.col("kind") == 0).select(
        "component", "growth", "collection", "position", F.col("value").alias("page")
    )
    grown_trivial = grown_rows.where(F.col("kind") == 1).select(
        "component", "growth", "position", F.col("value").alias("cluster")
    )

    used = grown_trivial.select(F.col("cluster").alias("label")).distinct()
    unused = sizes.where(F.col("size") >= 2).join(used, "label", "left_anti").count()
    grown_count = grown_trivial.select("component", "growth").distinct().count()
    counts = {
        "alias_pages": aliases.count(),
        "virtual_links": virtual.count(),
        "link_summary_rows": rows.count(),
        "merge_edges": edges.where(F.col("strict")).count(),
        "extended_merge_edges": edges.where(~F.col("strict")).count(),
        "components": component_of.select("component").distinct().count(),
        "grown": grown_count,
        "clusters_grown": grown_count + unused,
    }
    return grown, grown_trivial, counts


def _grow(item, options):
    """Rows of the similar clusters grown from one component: (0, component,
    growth, collection, position, page) and (1, component, growth, None,
    position, trivial cluster)."""
    component, rows = item
    parts = ([], [], [])
    for kind, row in rows:
        parts[kind].append(row)
    extended, single_site = options
    grown = Component(*parts, extended=extended, single_site=single_site).grow()
    out = []
    for growth, (collections, trivial) in enumerate(grown):
        for collection, pages in enumerate(collections):
            for position, page in enumerate(pages):
                out.append((0, component, growth, collection, position, page))
        for position, cluster in enumerate(trivial):
            out.append((1, component, growth, None, position, cluster))
    return out
