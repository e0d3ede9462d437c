"""Which pages are copies of which, as Spark jobs over exported tables: the
similarity stage of src/similarity (cho-2000 §3.2, fetterly-2004 §2) from
`pages`, `chunks` and `megashingles`, down to every page's trivial cluster.

Steps, each a DataFrame query:

1. documents: the compared pages (answered 200, with a stored body that has
   words) grouped by text signature and language (the `language` column,
   the Rust stage's languages::effective: one text in two editions of a
   manual is a page of each); a document is named by its first page, whose
   chunks and megashingles stand for all of its pages;
2. exact copies: pages with the same body and language but different texts
   join;
3. the chunk self-join (cho §3.2's iceberg): a chunk on more than
   `max_chunk_pages` documents, or on more than `boilerplate_pages_per_host`
   documents of one host, is set aside; two documents are directly similar
   when they share at least T chunks and the given shares of the smaller and
   of the larger one's counted chunks;
4. megashingle pairs: documents sharing a megashingle in the same slot (a
   group of more than 1,000 documents is joined to its first document only,
   as the Rust stage bounds its work);
   Pairs of documents in two known languages are dropped (translations are
   never copies);
5. connected components of the pairs the configured test uses, by label
   propagation with pointer jumping (each round: every document takes the
   smallest label among its own and its neighbours', then the label of that
   label), until no label changes;
6. the split by path (see paths.py), cluster by cluster;
7. every page a trivial cluster, numbered in the order of its first page,
   as the Rust stage numbers them: the two numberings are then the same
   table, not merely the same partition. A stand-in (the `stand_in`
   column: one text answering many URLs of a host, decided by the Rust
   stage's similarity/stand_ins.rs on the whole crawl) is a cluster of its
   own.
"""

from pyspark.sql import functions as F
from pyspark.sql import types as T

from .paths import groups_by_path

# src/similarity/mod.rs: megashingle_pairs' bound.
MAX_LISTED_GROUP = 1000


def compared_pages(pages):
    """The pages the similarity stage compares (`is_compared`), with their
    language as a key (`lang`, empty when unknown)."""
    return pages.where(
        (F.col("status") == 200)
        & F.col("body_signature").isNotNull()
        & (F.col("words") > 0)
    ).select(
        "page",
        "url",
        "host",
        "body_signature",
        "text_signature",
        F.coalesce(F.col("language"), F.lit("")).alias("lang"),
        "stand_in",
        "copied_alone",
    )


def documents(compared):
    """(page, doc, host, body_signature, url, text_signature, lang,
    stand_in) of every compared page, `doc` the first page with the same
    text in the same language."""
    first = compared.groupBy("text_signature", "lang").agg(F.min("page").alias("doc"))
    return compared.join(first, ["text_signature", "lang"]).select(
        "page", "doc", "host", "body_signature", "url", "text_signature", "lang", "stand_in"
    )


def same_language(pairs, page_docs):
    """The pairs (a, b, ...) of documents whose languages may be copies:
    unless both are known and differ (src/language.rs, `compatible`)."""
    langs = page_docs.select("doc", "lang").distinct()
    la = langs.select(F.col("doc").alias("a"), F.col("lang").alias("la"))
    lb = langs.select(F.col("doc").alias("b"), F.col("lang").alias("lb"))
    return (
        pairs.join(la, "a")
        .join(lb, "b")
        .where((F.col("la") == "") | (F.col("lb") == "") | (F.col("la") == F.col("lb")))
        .drop("la", "lb")
    )


def exact_edges(page_docs):
    """Documents whose pages share a body (same bytes, texts decoded apart)
    in one language."""
    first = page_docs.groupBy("body_signature", "lang").agg(F.min("doc").alias("first"))
    return (
        page_docs.join(first, ["body_signature", "lang"])
        .where(F.col("doc") != F.col("first"))
        .select(F.col("first").alias("a"), F.col("doc").alias("b"))
        .distinct()
    )


def chunk_pairs(chunks, page_docs, config):
    """(a, b, shared) directly similar by chunks with a < b, and the chunks
    set aside as boilerplate."""
    doc_ids = page_docs.select(F.col("doc").alias("page")).distinct()
    doc_chunks = chunks.join(doc_ids, "page").select(F.col("page").alias("doc"), "chunk")
    doc_hosts = page_docs.select("doc", "host").distinct()

    postings = doc_chunks.groupBy("chunk").agg(F.count("*").alias("n"))
    longest = (
        doc_chunks.join(doc_hosts, "doc")
        .groupBy("chunk", "host")
        .agg(F.count("*").alias("on_host"))
        .groupBy("chunk")
        .agg(F.max("on_host").alias("longest"))
    )
    verdicts = postings.join(longest, "chunk").select(
        "chunk",
        "n",
        (
            (F.col("n") > config["max_chunk_pages"])
            | (
                (F.col("n") >= 2)
                & (F.col("longest") > config["boilerplate_pages_per_host"])
            )
        ).alias("boilerplate"),
    )
    boilerplate = verdicts.where("boilerplate").select("chunk")
    shared_chunks = verdicts.where((F.col("n") >= 2) & ~F.col("boilerplate")).select("chunk")

    counted = (
        doc_chunks.join(verdicts, "chunk")
        .groupBy("doc")
        .agg(F.sum(F.when(F.col("boilerplate"), 0).otherwise(1)).alias("counted"))
    )
    shared = doc_chunks.join(shared_chunks, "chunk")
    pairs = (
        shared.alias("x")
        .join(shared.alias("y"), F.col("x.chunk") == F.col("y.chunk"))
        .where(F.col("x.doc") < F.col("y.doc"))
        .groupBy(F.col("x.doc").alias("a"), F.col("y.doc").alias("b"))
        .agg(F.count("*").alias("shared"))
    )
    ca = counted.select(F.col("doc").alias("a"), F.col("counted").alias("ca"))
    cb = counted.select(F.col("doc").alias("b"), F.col("counted").alias("cb"))
    smaller = F.least("ca", "cb").cast("double")
    larger = F.greatest("ca", "cb").cast("double")
    # required_shared in src/similarity/chunks.rs, in the same doubles.
    required = F.greatest(
        F.ceil(F.lit(float(config["shared_fraction"])) * smaller),
        F.ceil(F.lit(float(config["larger_fraction"])) * larger),
        F.lit(int(config["shared_chunks"])),
    )
    similar = (
        pairs.join(ca, "a").join(cb, "b").where(F.col("shared") >= required)
        .select("a", "b", "shared")
    )
    return similar, boilerplate


def megashingle_pairs(megashingles, page_docs):
    """(a, b) sharing a megashingle in one slot, a < b."""
    doc_ids = page_docs.select(F.col("doc").alias("page")).distinct()
    entries = megashingles.join(doc_ids, "page").select(
        F.col("page").alias("doc"), "slot", "value"
    )
    groups = entries.groupBy("slot", "value").agg(
        F.count("*").alias("n"), F.min("doc").alias("first")
    )
    entries = entries.join(groups, ["slot", "value"])
    small = entries.where(F.col("n") <= MAX_LISTED_GROUP)
    listed = (
        small.alias("x")
        .join(
            small.alias("y"),
            (F.col("x.slot") == F.col("y.slot")) & (F.col("x.value") == F.col("y.value")),
        )
        .where(F.col("x.doc") < F.col("y.doc"))
        .select(F.col("x.doc").alias("a"), F.col("y.doc").alias("b"))
    )
    starred = (
        entries.where((F.col("n") > MAX_LISTED_GROUP) & (F.col("doc") != F.col("first")))
        .select(F.col("first").alias("a"), F.col("doc").alias("b"))
    )
    return listed.union(starred).distinct()


def components(nodes, edges):
    """(node, label): each node's label is the smallest node of its
    connected component. `nodes` has a column `node`, `edges` columns a, b."""
    both = edges.select(F.col("a").alias("src"), F.col("b").alias("dst")).union(
        edges.select(F.col("b").alias("src"), F.col("a").alias("dst"))
    ).distinct().localCheckpoint()
    labels = nodes.select("node", F.col("node").alias("label")).localCheckpoint()
    rounds = 0
    while True:
        rounds += 1
        offered = both.join(labels, both.src == labels.node).select(
            F.col("dst").alias("node"), "label"
        )
        smallest = (
            labels.union(offered)
            .groupBy("node")
            .agg(F.min("label").alias("label"))
            .localCheckpoint()
        )
        # Pointer jumping: a node takes its label's label (the second side
        # renamed: Spark resolves a self-join's columns by name otherwise).
        jumps = smallest.select(F.col("node").alias("via"), F.col("label").alias("jump"))
        jumped = (
            smallest.join(jumps, smallest.label == jumps.via)
            .select("node", F.col("jump").alias("label"))
            .localCheckpoint()
        )
        changed = (
            jumped.alias("new")
            .join(labels.alias("old"), "node")
            .where(F.col("new.label") != F.col("old.label"))
            .count()
        )
        labels = jumped
        if changed == 0:
            return labels, rounds


def _split(rows):
    """The split by path of one cluster: (page, group) for its pages, the
    group a cluster label and the group's number within it."""
    label, members = rows
    members = sorted(members)
    groups = groups_by_path(members)
    if groups is None:
        return [(page, label, 0) for page, _, _ in members]
    return [(page, label, number) for number, group in enumerate(groups) for page in group]


def analyse(spark, tables, config):
    """The similarity stage over the exported `tables` (a dict of
    DataFrames: pages, chunks, megashingles) with the similarity settings
    `config`. Returns (trivial, counts): a DataFrame (page, cluster) of
    every page, and the stage's figures as the manifest names them."""
    pages = tables["pages"]
    compared = compared_pages(pages).localCheckpoint()
    page_docs = documents(compared).localCheckpoint()
    exact = exact_edges(page_docs)
    similar, boilerplate = chunk_pairs(tables["chunks"], page_docs, config)
    similar = similar.localCheckpoint()
    mega = megashingle_pairs(tables["megashingles"], page_docs).localCheckpoint()
    # Translations are never copies.
    pairs_before = similar.count() + mega.count()
    similar = same_language(similar, page_docs).localCheckpoint()
    mega = same_language(mega, page_docs).localCheckpoint()
    cross_language = pairs_before - similar.count() - mega.count()

    test = config["test"]
    edges = exact
    if test in ("chunks", "both"):
        edges = edges.union(similar.select("a", "b"))
    if test in ("minhash", "both"):
        edges = edges.union(mega)
    nodes = page_docs.select(F.col("doc").alias("node")).distinct()
    labels, rounds = components(nodes, edges)

    # Pages with their document's cluster; stand-ins are clusters of their
    # own (below), the others' clusters of three pages or more split by path.
    clustered = page_docs.where(~F.col("stand_in")).join(
        labels.select(F.col("node").alias("doc"), "label"), "doc"
    )
    held = clustered.groupBy("label").agg(F.count("*").alias("size"))
    clustered = clustered.join(held, "label").localCheckpoint()
    whole = clustered.where(F.col("size") < 3).select(
        "page", "label", F.lit(0).alias("part")
    )
    candidates = clustered.where(F.col("size") >= 3)
    split_schema = T.StructType(
        [
            T.StructField("page", T.LongType()),
            T.StructField("label", T.LongType()),
            T.StructField("part", T.IntegerType()),
        ]
    )
    split = spark.createDataFrame(
        candidates.select("label", "page", "host", "url")
        .rdd.map(lambda row: (row.label, (row.page, row.host, row.url)))
        .groupByKey()
        .flatMap(_split),
        split_schema,
    )

    # Every page not compared, and every stand-in, is a cluster of its own.
    alone = (
        pages.select("page")
        .join(compared.where(~F.col("stand_in")).select("page"), "page", "left_anti")
        .select("page", (-F.col("page") - 1).alias("label"), F.lit(0).alias("part"))
    )
    assigned = whole.union(split).union(alone).localCheckpoint()
    firsts = assigned.groupBy("label", "part").agg(F.min("page").alias("first"))
    numbered = spark.createDataFrame(
        firsts.rdd.map(lambda row: (row.first, (row.label, row.part)))
        .sortByKey()
        .zipWithIndex()
        .map(lambda item: (item[0][1][0], item[0][1][1], item[1])),
        T.StructType(
            [
                T.StructField("label", T.LongType()),
                T.StructField("part", T.IntegerType()),
                T.StructField("cluster", T.LongType()),
            ]
        ),
    )
    trivial = assigned.join(numbered, ["label", "part"]).select("page", "cluster")

    sizes = (
        trivial.join(compared.select("page"), "page")
        .groupBy("cluster")
        .agg(F.count("*").alias("size"))
    )
    compared_count = compared.count()
    cluster_count = sizes.count()
    counts = {
        "compared_pages": compared_count,
        "distinct_texts": nodes.count(),
        "trivial_clusters": sizes.where(F.col("size") > 1).count(),
        "near_duplicate_pages": compared_count - cluster_count,
        "boilerplate_chunks": boilerplate.count(),
        "chunk_pairs": similar.count(),
        "megashingle_pairs": mega.count(),
        "cross_language_pairs": cross_language,
        "stand_in_pages": compared.where(F.col("stand_in")).count(),
        "component_rounds": rounds,
    }
    return trivial, counts
