"""One trivial cluster per page of a site: the split by path of
src/similarity/paths.rs, for one cluster at a time.

Transitive similarity joins texts, not pages: a manual that publishes one
text under two paths has two pages with that text, and so has every copy of
it, so one trivial cluster holds both pages of every host. The host with the
most distinct paths in the cluster gives one group per path (a folder and its
index page are one path); every other member joins the group whose path
shares the longest run of final arcs with its own, and members that match no
group, or two equally, stay together in a group of their own. The split is
made only when at least two groups find members on other hosts.

Pure Python: Spark calls it once per cluster (an RDD's groupByKey), and the
unit tests call it directly.
"""

_ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def url_path(url):
    """The path of a URL ("/" when it has none), or None without a scheme."""
    scheme_end = url.find("://")
    if scheme_end < 0:
        return None
    rest = url[scheme_end + 3:]
    starts = [at for at in (rest.find(c) for c in "/?#") if at >= 0]
    start = min(starts) if starts else len(rest)
    path = rest[start:]
    for mark in "?#":
        path = path.split(mark, 1)[0]
    return path or "/"


def is_index_name(name):
    """Whether a file name is a folder's default page (index.html, ...)."""
    if "." not in name:
        return False
    stem, extension = name.split(".", 1)
    extension = extension.encode("utf-8")
    return (
        stem.encode("utf-8").lower() in (b"index", b"default")
        and len(extension) > 0
        and all(byte in _ALNUM for byte in extension)
    )


def page_arcs(path):
    """The arcs that name a page: a last index.* or default.* dropped."""
    arcs = [arc for arc in path.split("/") if arc]
    if arcs and is_index_name(arcs[-1]):
        arcs.pop()
    return arcs


def common_suffix(first, second):
    count = 0
    for x, y in zip(reversed(first), reversed(second)):
        if x != y:
            break
        count += 1
    return count


def _utf8(arcs):
    # Rust orders text by its UTF-8 bytes.
    return [arc.encode("utf-8") for arc in arcs]


def groups_by_path(members):
    """`members`: (page, host, url) of one cluster, in page order. Returns
    the cluster's pages in groups when the split is corroborated, else None
    (the cluster stays whole)."""
    arcs = []
    for _, _, url in members:
        path = url_path(url)
        arcs.append(page_arcs(path if path is not None else url))
    paths_by_host = {}
    for (_, host, _), member_arcs in zip(members, arcs):
        paths_by_host.setdefault(host, set()).add(tuple(member_arcs))
    # The reference host: the most distinct paths, then the lowest id.
    reference = min(paths_by_host, key=lambda host: (-len(paths_by_host[host]), host))
    reference_paths = sorted(paths_by_host[reference], key=_utf8)
    if len(reference_paths) < 2:
        return None

    by_last_arc = {}
    for group, path in enumerate(reference_paths):
        by_last_arc.setdefault(path[-1] if path else "", []).append(group)
    groups = [[] for _ in range(len(reference_paths) + 1)]
    corroborated = [False] * len(reference_paths)
    loose = len(reference_paths)
    for (page, host, _), member_arcs in zip(members, arcs):
        best, most, tied = None, -1, False
        for group in by_last_arc.get(member_arcs[-1] if member_arcs else "", []):
            shared = common_suffix(member_arcs, reference_paths[group])
            if best is not None and shared < most:
                continue
            if best is not None and shared == most:
                tied = True
            else:
                best, most, tied = group, shared, False
        if best is not None and not tied:
            groups[best].append(page)
            corroborated[best] = corroborated[best] or host != reference
        else:
            groups[loose].append(page)
    if sum(corroborated) < 2:
        return None
    return [group for group in groups if group]
