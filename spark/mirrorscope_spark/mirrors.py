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
DEFAULTS = {"min_urls": 20, "cluster_pages": 10}


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
