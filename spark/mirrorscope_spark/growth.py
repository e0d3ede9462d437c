"""The parts of cluster growth that run on one component at a time, in plain
Python (no Spark), as src/collections/grow.rs and src/pages/ do them:

- `relative_link` and `link_key`: a link as the same relative link would be
  written on any copy of its page (`relative_link_key`), for virtual links;
- `grow_component`: cho-2000 §3's growth of one connected component of the
  trivial cluster graph into similar clusters (`Context::grow_component`).

The collections job (collections.py) gathers each component's pages, edges
and links with DataFrame joins and runs `grow_component` on each, as the
Rust stage runs components in parallel.
"""

from collections import defaultdict, deque

# The reach of at most this many sources of a component is measured
# (MEASURED_SOURCES in src/collections/grow.rs).
MEASURED_SOURCES = 64


def _after_scheme(url):
    at = url.find("://")
    return url if at < 0 else url[at + 3:]


def _host_of(url):
    rest = _after_scheme(url)
    ends = [at for at in (rest.find(c) for c in "/?#") if at >= 0]
    return rest[: min(ends)] if ends else rest


def relative_link(source, target):
    """The path from `source`'s folder to `target` (`../` steps, then the
    rest of its path and its query), or None when the two URLs are on
    different hosts, where a copy's link would not be relative."""
    from_host, to_host = _host_of(source), _host_of(target)
    if from_host != to_host:
        return None
    from_path = _after_scheme(source)[len(from_host):]
    to_path = _after_scheme(target)[len(to_host):]
    cut = [at for at in (from_path.find(c) for c in "?#") if at >= 0]
    if cut:
        from_path = from_path[: min(cut)]
    folder = from_path.rsplit("/", 1)[0] if "/" in from_path else ""
    at = to_path.find("?")
    to_only, query = (to_path[:at], to_path[at:]) if at >= 0 else (to_path, "")
    folders = [arc for arc in folder.split("/") if arc]
    targets = to_only.split("/")[1:]
    common = 0
    for mine, theirs in zip(folders, targets):
        if mine != theirs:
            break
        common += 1
    common = min(common, max(len(targets) - 1, 0))
    return "../" * (len(folders) - common) + "/".join(targets[common:]) + query


def link_key(source, target):
    """`relative_link_key`: the relative link's XXH3-64 hash as the signed
    64-bit integer `mirrorscope export` writes (table `uncrawled`)."""
    import xxhash

    link = relative_link(source, target)
    if link is None:
        return None
    value = xxhash.xxh3_64_intdigest(link.encode("utf-8"))
    return value - (1 << 64) if value >= 1 << 63 else value


def _strongly_connected(nodes, successors):
    """The strongly connected components of a graph (Kosaraju's algorithm
    with explicit stacks: a component can be a chain deeper than Python's
    recursion allows), as a dict node -> component number."""
    order, seen = [], set()
    for root in nodes:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(successors.get(root, ())))]
        while stack:
            node, children = stack[-1]
            for child in children:
                if child not in seen:
                    seen.add(child)
                    stack.append((child, iter(successors.get(child, ()))))
                    break
            else:
                stack.pop()
                order.append(node)
    predecessors = defaultdict(list)
    for node in nodes:
        for child in successors.get(node, ()):
            predecessors[child].append(node)
    component = {}
    for root in reversed(order):
        if root in component:
            continue
        number = len(set(component.values()))
        component[root] = number
        stack = [root]
        while stack:
            node = stack.pop()
            for parent in predecessors[node]:
                if parent not in component:
                    component[parent] = number
                    stack.append(parent)
    return component


class Component:
    """One connected component of the trivial cluster graph.

    `members`: (page, cluster, host, inlinks from other hosts) of every page
    of its trivial clusters; `edges`: its (from, to) merge edges; `links`:
    the (source, target) links between its pages."""

    def __init__(self, members, edges, links, extended=True, single_site=True):
        self.extended = extended
        self.single_site = single_site
        self.pages = defaultdict(list)
        self.host, self.label = {}, {}
        self.inlinks = defaultdict(int)
        for page, cluster, host, inlinks in sorted(members):
            self.pages[cluster].append(page)
            self.host[page] = host
            self.label[page] = cluster
            self.inlinks[cluster] += inlinks
        self.successors = defaultdict(list)
        for source, target in sorted(set(edges)):
            self.successors[source].append(target)
        self.clusters = sorted({c for edge in edges for c in edge})
        self.parents = defaultdict(list)
        for source, target in sorted(set(links)):
            self.parents[target].append(source)
        self.links = set(links)

    def size(self, cluster):
        return len(self.pages[cluster])

    def preference(self, cluster):
        """Most pages, then most in-links from other hosts, then the lowest
        number first."""
        return (-self.size(cluster), -self.inlinks[cluster], cluster)

    def starts(self):
        """The starts in order of preference (`Context::starts`): the
        sources of the component's condensation first, those reaching most
        trivial clusters of copies first; then every cluster of copies."""
        others = sorted((c for c in self.clusters if self.size(c) >= 2), key=self.preference)
        if not others:
            return []
        copied = set(others)
        among = {c: [s for s in self.successors[c] if s in copied] for c in others}
        scc = _strongly_connected(others, among)
        entered = {scc[s] for c in others for s in among[c] if scc[s] != scc[c]}
        best = {}
        for cluster in others:
            number = scc[cluster]
            if number not in entered and number not in best:
                best[number] = cluster
        sources = sorted(best.values(), key=self.preference)
        measured = sources[:MEASURED_SOURCES]
        reach = []
        for source in measured:
            seen, queue = {source}, deque([source])
            while queue:
                for successor in among[queue.popleft()]:
                    if successor not in seen:
                        seen.add(successor)
                        queue.append(successor)
            reach.append((len(seen), source))
        # Most reached first; Python's sort is stable, so ties keep preference.
        reach.sort(key=lambda item: -item[0])
        return [source for _, source in reach] + sources[MEASURED_SOURCES:] + others

    def grow(self):
        """Every similar cluster of the component: (collections, trivial),
        each collection its pages, root first, in the order they joined;
        `trivial` the clusters it took pages from, the start first."""
        reached, grown = set(), []
        for start in self.starts():
            if start not in reached:
                grown.append(self.grow_from(start, reached))
        return grown

    def grow_from(self, start, reached):
        collections, collection_of = [], {}
        for page in self.pages[start]:
            collection_of[page] = len(collections)
            collections.append([page])
        reached.add(start)
        trivial, queue = [start], deque([start])
        while queue:
            parent_cluster = queue.popleft()
            # A page with no copy joins from a cluster of copies only (a link
            # between two pages without copies is no evidence of a copy).
            parent_single = self.size(parent_cluster) == 1
            for child_cluster in self.successors[parent_cluster]:
                if child_cluster in reached or (parent_single and self.size(child_cluster) == 1):
                    continue
                taken, joined = set(), []
                for child in self.pages[child_cluster]:
                    host = self.host[child]
                    best = None
                    for parent in self.parents[child]:
                        if self.label.get(parent) != parent_cluster:
                            continue
                        collection = collection_of.get(parent)
                        if collection is None or collection in taken:
                            continue
                        same_host = self.host[parent] == host
                        if not same_host and self.single_site:
                            continue
                        # A parent on the child's host first, then the lowest page.
                        key = (not same_host, parent, collection)
                        if best is None or key < best:
                            best = key
                    if best is not None:
                        taken.add(best[2])
                        joined.append((child, best[2]))
                if not self.extended:
                    # Strict clusters: the copies all link back to their
                    # collection's root or none does, the smaller side out.
                    def links_back(join):
                        return (join[0], collections[join[1]][0]) in self.links

                    back = sum(1 for join in joined if links_back(join))
                    keep_back = back * 2 > len(joined)
                    joined = [join for join in joined if links_back(join) == keep_back]
                for child, collection in joined:
                    collection_of[child] = collection
                    collections[collection].append(child)
                if joined:
                    reached.add(child_cluster)
                    trivial.append(child_cluster)
                    queue.append(child_cluster)
        return collections, trivial
