"""Mirrored host pairs of the `clusters` ranker (fetterly-2004 §2, as
src/mirrors/clusters.rs ranks them), as Spark jobs over exported tables:
host pairs that share near-duplicate pages, confirmed by URL suffixes.

1. members: the pages answered 200 on a considered host (one with at least
   `min_urls` distinct paths), in trivial clusters of two such pages or more;
2. aliases: in each cluster, one preferred host name per IP address (most
   members there, then most URLs, then the first name), the members on the
   address's other names set aside;
3. per cluster and pair of hosts with members: each side's members, and of
   them those whose path ends with the same last arc as a member on the
   other side (the query dropped);
4. summed over the clusters, a pair is ranked when each side has at least
   `cluster_pages` members and as many confirmed ones; its score is the
   smaller side's confirmed count.
"""

from pyspark.sql import functions as F
from pyspark.sql import types as T

# MirrorsConfig's defaults in src/mirrors/mod.rs.
DEFAULTS = {
    "min_urls": 20,
    "cluster_pages": 10,
    "max_term_hosts": 100,
    "max_term_host_share": 0.5,
    "max_pairs": 30000,
}


def last_arc(url):
    """The last arc of a URL's path, query and fragment dropped (`arcs` of
    src/mirrors/clusters.rs after `split_url`); None when it has none."""
    scheme_end = url.find("://")
    if scheme_end < 0:
        return None
    rest = url[scheme_end + 3:]
    starts = [at for at in (rest.find(c) for c in "/?#") if at >= 0]
    path = rest[min(starts) if starts else len(rest):].split("#", 1)[0] or "/"
    arcs = [arc for arc in path.split("?", 1)[0].split("/") if arc]
    return arcs[-1] if arcs else None


def _preferred(on_ip):
    """(cluster, ip, preferred): of the hosts with members on an address in
    a cluster, the one with most members there, then most URLs, then the
    first name (names compare as bytes, as Rust's do)."""
    from pyspark.sql.window import Window

    order = Window.partitionBy("cluster", "ip").orderBy(
        F.col("in_cluster").desc(), F.col("urls").desc(), F.col("name").asc()
    )
    return (
        on_ip.withColumn("rank", F.row_number().over(order))
        .where(F.col("rank") == 1)
        .select("cluster", "ip", F.col("host").alias("preferred"))
    )


def ranking(tables, trivial, config):
    """(host_a, host_b, score, clustered_pages_a, clustered_pages_b,
    confirmed_a, confirmed_b) of every ranked pair, host_a < host_b."""
    hosts = tables["hosts"].select("host", "name", "urls")
    considered = hosts.where(F.col("urls") >= config["min_urls"])
    pages = tables["pages"].where(F.col("status") == 200).select("page", "url", "host", "ip")
    members = pages.join(considered.select("host"), "host").join(trivial, "page")
    sizes = members.groupBy("cluster").agg(F.count("*").alias("members"))
    members = members.join(sizes.where(F.col("members") > 1), "cluster").drop("members")

    per_host = members.groupBy("cluster", "host").agg(F.count("*").alias("in_cluster"))
    ranked_hosts = per_host.join(hosts, "host")
    # The preferred name of each address in each cluster.
    on_ip = (
        members.where(F.col("ip").isNotNull())
        .select("cluster", "ip", "host")
        .distinct()
        .join(ranked_hosts, ["cluster", "host"])
    )
    preferred = _preferred(on_ip)
    kept = (
        members.join(preferred, ["cluster", "ip"], "left")
        .where(F.col("ip").isNull() | (F.col("host") == F.col("preferred")))
        .where(F.col("url").contains("://"))
        .select("cluster", "host", "page", "url")
    )
    arc = F.udf(last_arc, T.StringType())
    kept = kept.withColumn("last", arc("url")).localCheckpoint()

    counts = kept.groupBy("cluster", "host").agg(F.count("*").alias("n"))
    hosts_in = counts.groupBy("cluster").agg(F.count("*").alias("hosts"))
    counts = counts.join(hosts_in.where(F.col("hosts") >= 2), "cluster").drop("hosts")
    pairs = (
        counts.alias("a")
        .join(counts.alias("b"), "cluster")
        .where(F.col("a.host") < F.col("b.host"))
        .groupBy(F.col("a.host").alias("host_a"), F.col("b.host").alias("host_b"))
        .agg(F.sum("a.n").alias("pages_a"), F.sum("b.n").alias("pages_b"))
    )

    by_arc = (
        kept.where(F.col("last").isNotNull())
        .groupBy("cluster", "host", "last")
        .agg(F.count("*").alias("n"))
    )
    matched = (
        by_arc.alias("a")
        .join(by_arc.alias("b"), ["cluster", "last"])
        .where(F.col("a.host") != F.col("b.host"))
        .groupBy(F.col("a.host").alias("host"), F.col("b.host").alias("other"))
        .agg(F.sum("a.n").alias("confirmed"))
    )
    confirmed_a = matched.select(
        F.col("host").alias("host_a"), F.col("other").alias("host_b"),
        F.col("confirmed").alias("confirmed_a"),
    )
    confirmed_b = matched.select(
        F.col("other").alias("host_a"), F.col("host").alias("host_b"),
        F.col("confirmed").alias("confirmed_b"),
    )
    least = config["cluster_pages"]
    return (
        pairs.join(confirmed_a, ["host_a", "host_b"], "left")
        .join(confirmed_b, ["host_a", "host_b"], "left")
        .fillna(0, ["confirmed_a", "confirmed_b"])
        .where(
            (F.col("pages_a") >= least)
            & (F.col("pages_b") >= least)
            & (F.col("confirmed_a") >= least)
            & (F.col("confirmed_b") >= least)
        )
        .select(
            "host_a",
            "host_b",
            F.least("confirmed_a", "confirmed_b").alias("score"),
            F.col("pages_a").alias("clustered_pages_a"),
            F.col("pages_b").alias("clustered_pages_b"),
            "confirmed_a",
            "confirmed_b",
        )
        .where(F.col("score") > 0)
    )


# A term on more hosts than this enters only this many vectors
# (RESTRICTED_HOSTS in src/mirrors/terms.rs).
RESTRICTED_HOSTS = 25


def url_path(url):
    """The path of a URL after its host, query kept, fragment dropped (`/`
    when empty); None without `://` (`split_url` of src/mirrors/hosts.rs)."""
    at = url.find("://")
    if at < 0:
        return None
    rest = url[at + 3:]
    ends = [end for end in (rest.find(c) for c in "/?#") if end >= 0]
    path = rest[min(ends) if ends else len(rest):].split("#", 1)[0]
    return path or "/"


def path_prefixes(path):
    """`/a/b.html` gives `/`, `/a/` and `/a/b.html` (`path_prefixes`)."""
    prefixes = [path[: at + 1] for at, c in enumerate(path) if c == "/"]
    if not path.endswith("/"):
        prefixes.append(path)
    return prefixes


def selected_terms(urls):
    """How many terms a host of `urls` URLs keeps: 10 log p, rounded half
    away from zero as Rust's `f64::round`, at least 1."""
    import math

    value = 10.0 * math.log10(max(urls, 1))
    return max(int(math.floor(value + 0.5)), 1)


def term_hash(term):
    """XXH3-64 of a term's UTF-8 bytes, unsigned (`xxh3_64`)."""
    import xxhash

    return xxhash.xxh3_64_intdigest(term.encode("utf-8"))


def _term_pairs(group, max_df):
    """((host_a, host_b), (term, weight²)) for every pair of hosts sharing
    the term (`match_terms`), hosts by their place among the considered
    hosts: weight 1 + log10(maxdf / df); a term on more than
    RESTRICTED_HOSTS hosts enters the vectors of those with the smallest
    hash of (term, place) only."""
    import math
    import struct

    import xxhash

    term, hosts = group
    hosts = sorted(set(hosts))
    df = len(hosts)
    weight = 1.0 + math.log10(max_df / df)
    if weight <= 0.0 or df < 2:
        return []
    if df > RESTRICTED_HOSTS:
        hosts = sorted(
            hosts, key=lambda host: xxhash.xxh3_64_intdigest(struct.pack("<QQ", term, host))
        )[:RESTRICTED_HOSTS]
        hosts.sort()
    square = weight * weight
    return [
        ((first, second), (term, square))
        for index, first in enumerate(hosts)
        for second in hosts[index + 1:]
    ]


def _pair_score(item, hosts):
    """A pair's (host_a, host_b, score): the squares of its shared terms'
    weights summed in the order of the terms' hashes, as the Rust ranker
    adds them (so the doubles are the same to the bit), times `1 / (0.1 +
    0.15 (log n1 + log n2))`. `hosts`: (id, URLs) by place."""
    import math

    (first, second), terms = item
    score = 0.0
    for _, square in sorted(terms):
        score += square
    log = lambda place: math.log10(max(hosts[place][1], 1))  # noqa: E731
    factor = 1.0 / (0.1 + 0.15 * (log(first) + log(second)))
    return (hosts[first][0], hosts[second][0], score * factor)


def prefix_ranking(spark, tables, config):
    """The `prefix` ranker (bharat-2000 §3.2.3, as src/mirrors/terms.rs
    ranks it): each considered host's path prefixes (those ending in `/`
    or ending the path), its 10 log p most frequent kept; pairs of hosts
    scored by their shared prefixes' squared weights, normalised by their
    sizes. Returns a DataFrame (host_a, host_b, score), host_a < host_b."""
    from pyspark.sql.window import Window

    considered = tables["hosts"].where(F.col("urls") >= config["min_urls"]).select("host", "urls")
    hosts = considered.count()
    share_limit = int(config["max_term_host_share"] * hosts) + 1
    limit = min(config["max_term_hosts"], max(share_limit, 5))
    path = F.udf(url_path, T.StringType())
    prefixes = F.udf(path_prefixes, T.ArrayType(T.StringType()))
    paths = (
        tables["pages"]
        .select("host", path("url").alias("path"))
        .where(F.col("path").isNotNull())
        .distinct()
        .join(considered, "host")
    )
    frequency = (
        paths.select("host", "urls", F.explode(prefixes("path")).alias("term"))
        .groupBy("host", "urls", "term")
        .agg(F.count("*").alias("n"))
    )
    keep = F.udf(selected_terms, T.IntegerType())
    order = Window.partitionBy("host").orderBy(F.col("n").desc(), F.col("term").asc())
    selected = (
        frequency.withColumn("rank", F.row_number().over(order))
        .where(F.col("rank") <= keep("urls"))
        .select("host", "term")
        .localCheckpoint()
    )
    # The considered hosts in id order: the Rust ranker's places.
    places = sorted((row.host, row.urls) for row in considered.collect())
    place_of = {host: place for place, (host, _) in enumerate(places)}
    hashed = selected.rdd.map(lambda row: (term_hash(row.term), place_of[row.host])).distinct()
    groups = hashed.groupByKey().mapValues(list).filter(lambda group: len(group[1]) < limit)
    groups = groups.cache()
    max_df = groups.map(lambda group: len(group[1])).fold(1, max)
    scored = (
        groups.flatMap(lambda group: _term_pairs(group, max_df))
        .groupByKey()
        .map(lambda item: _pair_score(item, places))
        .filter(lambda row: row[2] > 0.0)
    )
    schema = T.StructType(
        [
            T.StructField("host_a", T.LongType()),
            T.StructField("host_b", T.LongType()),
            T.StructField("score", T.DoubleType()),
        ]
    )
    return spark.createDataFrame(scored, schema)
