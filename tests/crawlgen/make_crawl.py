#!/usr/bin/env python3
"""A crawl of the mechanisms the development crawls lack, with its truth.

    make_crawl.py --out DIR [--seed N]

Writes DIR/crawl1/ as `../shared/devcrawl/build.sh` writes a crawl: WARC files
(`crawl.warc.gz`, one gzip member per record) and truth.tsv, pages.tsv,
hosts.tsv, queries.tsv, mirrors.tsv in the same columns, so that `mirrorscope eval --truth`
and `../shared/devcrawl/checks.py` read it. Python 3.8+, standard library
only; the same seed gives the same bytes.

Each manual is a mechanism of its own (see tests/crawlgen/README.md):

- widget: one manual in three versions on three hosts (4.2 on its original,
  3.2 and 2.2 on mirrors), an exact copy of 4.2 on a CDN host with its own
  address, and a partial mirror that answers the pages it lacks with one
  "not mirrored here" page;
- gadget: a handbook in English, French and German on three hosts under the
  same paths, its command reference the same text in every language;
- toolkit: a manual with 12 identical stub pages, crawled completely on its
  original and four pages in five on its mirror;
- alpha and beta: sibling manuals of one organisation on one host, with the
  same theme, navigation and licence, install and contributing pages nearly
  the same; alpha is mirrored, beta is not;
- pytool: a manual linked under several URLs per page (with and without
  `?utm_source=...`, under `http://` and `https://`, a folder and its
  `index.html`, a `;jsessionid=` in the path on every fourth page), and a
  change log whose `?page=N` parts are pages of their own;
- echo: a manual on a host answering every unknown URL with 200 and a page
  naming the path asked for (a soft 404 that echoes the request); its pages
  link to 40 such URLs;
- lumiere: a French manual, a mirror of it served in ISO-8859-1, and a mirror
  of that mirror served with `Content-Encoding: gzip`, an older state of it;
- kettle: a manual mirrored under renamed paths (without `.html` and in
  lower case; with its folders flattened into the names);
- quill: a manual whose mirrors name their original, by the `rel=canonical`
  they copied with its pages and by a note, one of them over https and
  crawled first;
- StackFarm: a Q&A site copying six single pages of widget and kettle into
  its own template, among questions of its own;
- inkwell: a manual and a mirror over https, crawled first, that names its
  original only in a note on every page (its canonical URLs name itself);
- two single manuals nothing copies (noise).

Truth (truth.tsv) lists the pages that are copies of another page: the same
manual's page at the same place on two hosts, in the same language, sharing at
least half of its lines (older versions included when they do), and the
several URLs of one page; the sibling manuals' shared pages are copies of
each other (of a family of their own, `acme-shared`), the manuals are not.
pages.tsv names every page's manual (`collection`)
whatever its version or language edition, and `variant` (`soft404` for the
error pages).
"""

import argparse
import gzip
import hashlib
import io
import os
import random
import re
import uuid

DATE = "2026-11-20T10:00:00Z"

EN_SYLLABLES = ["ba", "con", "de", "fi", "gra", "hal", "in", "jo", "ker", "lo", "man",
                "nor", "op", "pre", "quin", "ro", "sta", "ter", "un", "ver", "wil", "xen",
                "yor", "zu", "ble", "cre", "dro", "fen", "gor", "hin"]
FR_SYLLABLES = ["beau", "chou", "dé", "eau", "fleur", "gé", "jour", "lé", "mai", "nous",
                "oi", "pré", "quoi", "ré", "sœur", "té", "vous", "ça", "œu", "ille"]
DE_SYLLABLES = ["sch", "ung", "keit", "ei", "ach", "über", "zw", "pf", "ß", "heit", "lich",
                "tz", "ger", "stra", "wä", "öl", "ck", "ig", "ern", "ist"]


class Words:
    """Pseudo-words of one language, drawn without repeating a word."""

    def __init__(self, rng, syllables, lengths=(2, 3)):
        self.rng = rng
        self.syllables = syllables
        self.lengths = lengths
        self.used = set()

    def word(self):
        while True:
            word = "".join(self.rng.choice(self.syllables) for _ in range(self.rng.randint(*self.lengths)))
            if word not in self.used:
                self.used.add(word)
                return word

    def line(self, count=10):
        return " ".join(self.word() for _ in range(count))


def page_html(lang, title, heading, lines, links, theme="manual", charset="utf-8",
              canonical="", banner="", aside=()):
    """A page; `canonical` a `<link rel="canonical">` URL, `banner` a line
    above the heading, `aside` lines of a sidebar beside the text."""
    body = "\n".join(f"<p>{line}</p>" for line in lines)
    nav = "\n".join(f'<li><a href="{href}">{text}</a></li>' for href, text in links)
    head = f'<link rel="canonical" href="{canonical}">' if canonical else ""
    top = f'<div class="banner">{banner}</div>\n' if banner else ""
    side = "".join(f"<aside><p>{line}</p></aside>\n" for line in aside)
    return (f'<!DOCTYPE html>\n<html lang="{lang}">\n<head><meta charset="{charset}">'
            f"<title>{title}</title>{head}</head>\n<body class=\"{theme}\">\n"
            f'<nav><ul>\n{nav}\n</ul></nav>\n{top}<h1>{heading}</h1>\n{body}\n{side}'
            f"<footer>Documentation theme {theme}</footer>\n</body>\n</html>\n")


class Crawl:
    def __init__(self, out, seed):
        self.out = out
        self.rng = random.Random(seed)
        self.records = []  # (url, ip, status, body bytes, location)
        self.pages = []    # pages.tsv rows
        self.truth = []    # truth.tsv rows
        self.hosts = {}    # host -> hosts.tsv row
        self.queries = []
        # The instance being built when the mechanisms are served several
        # times over (None: once, names as written).
        self.instance = None

    def rename(self, text):
        """Host names (`*.test`) of the instance: `docs.widget.test` as
        `docs.widget-2.test`, in URLs and in pages' text alike."""
        return text if self.instance is None else re.sub(r"\.test\b", f"-{self.instance}.test", text)

    def name(self, collection):
        """A manual's name in the instance's truth: `widget` as `widget-2`."""
        return collection if self.instance is None or not collection else f"{collection}-{self.instance}"

    def address(self, ip):
        """The instance's address: each of the three test networks of the
        one-instance crawl becomes a /24 of 10.<instance>.0.0/16."""
        if self.instance is None:
            return ip
        network = ["192.0.2", "198.51.100", "203.0.113"].index(ip.rsplit(".", 1)[0])
        return f"10.{self.instance}.{network}.{ip.rsplit('.', 1)[1]}"

    def host(self, name, ip, role, serves, scheme="http", fraction=1.0, alias_of="", note=""):
        name, ip, alias_of = self.rename(name), self.address(ip), self.rename(alias_of)
        serves = ";".join(self.name(part.split("=", 1)[0]) + "=" + part.split("=", 1)[1]
                          for part in filter(None, serves.split(";")))
        self.hosts[name] = dict(host=name, ip=ip, scheme=scheme, role=role, server="nginx/1.24.0",
                                crawl_fraction=str(fraction), alias_of=alias_of, serves=serves,
                                pages="0", other_records="0", note=note)

    def serve(self, url, body, collection="", version="", path="", variant="original",
              status=200, location="", charset="utf-8", content_encoding=""):
        url, body, location = self.rename(url), self.rename(body), self.rename(location)
        collection = self.name(collection)
        host = url.split("/")[2].split(":")[0]
        # A page labelled ISO-8859-1 is read as windows-1252, as browsers do
        # (the French texts hold an "œ").
        data = body.encode("cp1252" if charset == "iso-8859-1" else charset)
        if content_encoding == "gzip":
            data = gzip.compress(data, mtime=0)
        self.records.append((url, self.hosts[host]["ip"], status, data, location, charset,
                             content_encoding))
        digest = hashlib.sha1(data).hexdigest().upper()
        self.pages.append(dict(url=url, status=str(status), content="text/html", host=host,
                               collection=collection, version=version, path=path,
                               variant=variant, payload_sha1=digest, copy_sim=""))
        self.hosts[host]["pages"] = str(int(self.hosts[host]["pages"]) + 1)

    def copy(self, url, collection, replica, page):
        family, where = replica.split(":", 1)
        self.truth.append(dict(url=self.rename(url), collection=self.name(collection),
                               replica=f"{self.name(family)}:{self.rename(where)}", page=page))

    def write(self):
        crawl = os.path.join(self.out, "crawl1")
        os.makedirs(crawl, exist_ok=True)
        with open(os.path.join(crawl, "crawl.warc.gz"), "wb") as warc:
            info = b"software: mirrorscope tests/crawlgen/make_crawl.py\r\nformat: WARC File Format 1.1\r\n"
            warc.write(record("warcinfo", None, None, "application/warc-fields", info))
            for url, ip, status, body, location, charset, content_encoding in self.records:
                reason = {200: "OK", 301: "Moved Permanently", 404: "Not Found"}[status]
                head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset={charset}\r\n"
                if content_encoding:
                    head += f"Content-Encoding: {content_encoding}\r\n"
                if location:
                    head += f"Location: {location}\r\n"
                head += f"Content-Length: {len(body)}\r\n\r\n"
                warc.write(record("response", url, ip, "application/http; msgtype=response",
                                  head.encode() + body))
        tables = [("truth.tsv", self.truth, ["url", "collection", "replica", "page"]),
                  ("pages.tsv", self.pages, ["url", "status", "content", "host", "collection",
                                              "version", "path", "variant", "payload_sha1",
                                              "copy_sim"]),
                  ("hosts.tsv", sorted(self.hosts.values(), key=lambda row: row["host"]),
                   ["host", "ip", "scheme", "role", "server", "crawl_fraction", "alias_of",
                    "serves", "pages", "other_records", "note"]),
                  ("queries.tsv", self.queries, ["query", "kind", "collection", "source_url",
                                                 "source_title"])]
        tables.append(("mirrors.tsv", self.mirror_pairs(), ["host_a", "host_b", "relation"]))
        for name, rows, columns in tables:
            with open(os.path.join(crawl, name), "w", encoding="utf-8", newline="") as out:
                out.write("\t".join(columns) + "\n")
                for row in rows:
                    out.write("\t".join(row[column] for column in columns) + "\n")


    def mirror_pairs(self):
        """mirrors.tsv as the development crawl's README defines it: a row for
        every pair of hosts serving one manual (hosts.tsv's `serves`), with
        the first relation that applies. A host holding single copied pages
        serves no manual and pairs with none."""
        served = {}
        for host, row in self.hosts.items():
            for part in filter(None, row["serves"].split(";")):
                family, rest = part.split("=", 1)
                version, place = rest.split("@", 1)
                served.setdefault(family, []).append((host, version, place, row))
        pairs = {}
        for family, holders in served.items():
            for index, (first, version_a, place_a, row_a) in enumerate(holders):
                for second, version_b, place_b, row_b in holders[index + 1:]:
                    partial = any("+partial" in place or row["crawl_fraction"] != "1.0"
                                  for place, row in ((place_a, row_a), (place_b, row_b)))
                    prefix = lambda place: place.split("+")[0]
                    relation = ("alias" if row_a["ip"] == row_b["ip"] else
                                "different-prefix" if prefix(place_a) != prefix(place_b) else
                                "level4" if partial else
                                "stale" if version_a != version_b else "level1")
                    pair = tuple(sorted((first, second)))
                    pairs.setdefault(pair, relation)
        return [dict(host_a=a, host_b=b, relation=relation) for (a, b), relation in sorted(pairs.items())]


def record(kind, url, ip, content_type, payload):
    headers = [f"WARC/1.1", f"WARC-Type: {kind}",
               f"WARC-Record-ID: <urn:uuid:{uuid.UUID(bytes=hashlib.md5(payload + (url or '').encode()).digest())}>",
               f"WARC-Date: {DATE}"]
    if url:
        headers.append(f"WARC-Target-URI: {url}")
    if ip:
        headers.append(f"WARC-IP-Address: {ip}")
    headers += [f"Content-Type: {content_type}", f"Content-Length: {len(payload)}"]
    raw = ("\r\n".join(headers) + "\r\n\r\n").encode() + payload + b"\r\n\r\n"
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as member:
        member.write(raw)
    return buffer.getvalue()


def manual_tree(words, name, folders, per_folder, lines=14):
    """A manual: path -> (topic, lines), `index.html` first."""
    tree = {"index.html": (f"{name.capitalize()} overview", [words.line() for _ in range(lines)])}
    for folder in folders:
        for n in range(per_folder):
            topic = f"{words.word()} {words.word()}"
            tree[f"{folder}/{topic.replace(' ', '-')}.html"] = (topic, [words.line() for _ in range(lines)])
    return tree


def revise(words, tree, share):
    """An older version: `share` of each page's lines rewritten."""
    older = {}
    for path, (topic, lines) in tree.items():
        changed = list(lines)
        for index in range(len(changed)):
            if words.rng.random() < share:
                changed[index] = words.line()
        older[path] = (topic, changed)
    return older


def shared_lines(first, second):
    return len(set(first) & set(second)) / max(len(first), len(second))


def publish(crawl, base, name, version, tree, lang="en", fetched=lambda path: True,
            collection=None, variant="original", theme="manual", query_link=None,
            charset="utf-8", content_encoding="", rename=lambda path: path,
            canonical=lambda path: "", banner=""):
    """Serves a manual's pages under `base` (a URL ending in `/`), each path
    `rename`d (a mirror that drops `.html` or flattens a folder), with the
    `canonical` URL of each path and a `banner` line."""
    collection = collection or name
    paths = list(tree)
    for path in paths:
        if not fetched(path):
            continue
        topic, lines = tree[path]
        links = [(base + rename("index.html"), "Home")]
        links += [(base + rename(other), tree[other][0]) for other in paths if other.split("/")[0] == path.split("/")[0] and other != path][:6]
        if path == "index.html":
            links += [(base + rename(other), tree[other][0]) for other in paths[1:]]
        if query_link:
            links += query_link(path)
        title = f"{topic} - {name.capitalize()} {version} Documentation"
        crawl.serve(base + rename(path), page_html(lang, title, topic, lines, links, theme, charset,
                                                   canonical=canonical(path), banner=banner),
                    collection=collection, version=version, path=path, variant=variant,
                    charset=charset, content_encoding=content_encoding)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--instances", type=int, default=1,
                        help="the mechanisms this many times over, each instance's hosts, addresses and "
                             "manuals named apart (docs.widget-2.test, widget-2) and its words its own")
    args = parser.parse_args()
    if not 1 <= args.instances <= 250:
        parser.error("--instances is 1 to 250 (each instance's addresses are 10.<instance>.x.y)")
    crawl = Crawl(args.out, args.seed)
    if args.instances == 1:
        build(crawl, args.seed)
    else:
        for number in range(1, args.instances + 1):
            crawl.instance = number
            queries = len(crawl.queries)
            build(crawl, args.seed + 1000 * (number - 1))
            for row in crawl.queries[queries:]:
                row.update(collection=crawl.name(row["collection"]), source_url=crawl.rename(row["source_url"]))
    # Queries of no manual, once for the crawl.
    for query in ("widget overview", "gadget", "not mirrored", "page not found", "install", "license"):
        crawl.queries.append(dict(query=query, kind="noise", collection="", source_url="", source_title=""))
    crawl.write()
    print(f"{len(crawl.records)} responses, {len(crawl.truth)} truth rows, {len(crawl.hosts)} hosts, "
          f"{len(crawl.queries)} queries in {os.path.join(args.out, 'crawl1')}")


def build(crawl, seed):
    """Serves every mechanism once into `crawl`, its words drawn from `seed`."""
    en = Words(random.Random(seed + 1), EN_SYLLABLES)

    # widget: three versions on three hosts, a CDN copy, a partial mirror.
    crawl.host("docs.widget.test", "192.0.2.10", "primary", "widget=4.2@/manual/")
    crawl.host("cdn.widgetcdn.test", "198.51.100.20", "mirror", "widget=4.2@/manual/", note="exact copy on a CDN")
    crawl.host("mirror-one.test", "198.51.100.30", "mirror", "widget=3.2@/widget/3.2/")
    crawl.host("mirror-two.test", "198.51.100.40", "mirror", "widget=2.2@/pub/widget/")
    crawl.host("partial.widget-mirror.test", "198.51.100.50", "mirror", "widget=4.2@/w/+partial-soft404")
    v42 = manual_tree(en, "widget", ["guide", "ref", "api"], 12)
    v32 = revise(en, v42, 0.2)
    v22 = revise(en, v32, 0.2)
    copies = [("http://docs.widget.test/manual/", "4.2", v42), ("http://cdn.widgetcdn.test/manual/", "4.2", v42),
              ("http://mirror-one.test/widget/3.2/", "3.2", v32), ("http://mirror-two.test/pub/widget/", "2.2", v22)]
    for base, version, tree in copies:
        publish(crawl, base, "widget", version, tree)
    partial = [path for index, path in enumerate(v42) if index % 2 == 0]
    publish(crawl, "http://partial.widget-mirror.test/w/", "widget", "4.2", v42, fetched=lambda path: path in partial)
    for path in v42:
        if path not in partial:
            crawl.serve(f"http://partial.widget-mirror.test/w/{path}",
                        page_html("en", "Not mirrored", "Not mirrored",
                                  ["This document is not mirrored here.", "Please use the original site."], []),
                        collection="", variant="soft404-not-mirrored")
    for path in v42:
        # Copies of a page: the versions of it sharing half of their lines
        # with another copy, in groups (2.2 through 3.2 when not directly;
        # 3.2 and 2.2 apart from 4.2 when both drifted from it).
        groups = []
        for candidate in copies:
            joined = [group for group in groups
                      if any(shared_lines(candidate[2][path][1], held[2][path][1]) >= 0.5 for held in group)]
            merged = [candidate] + [held for group in joined for held in group]
            groups = [group for group in groups if group not in joined] + [merged]
        for number, group in enumerate(sorted(groups, key=lambda group: -any(held is copies[0] for held in group))):
            holders = [base for base, _, _ in group]
            if number == 0 and path in partial:
                holders.append("http://partial.widget-mirror.test/w/")
            if len(holders) > 1:
                for base in holders:
                    page = path if number == 0 else f"{path}#{number}"
                    crawl.copy(base + path, "widget", f"widget:{base.split('/')[2]}", page)

    # gadget: a handbook in three languages, under the same paths.
    editions = [("en", "en.gadget.test", EN_SYLLABLES, "192.0.2.60"),
                ("fr", "fr.gadget.test", FR_SYLLABLES, "192.0.2.61"),
                ("de", "de.gadget.test", DE_SYLLABLES, "192.0.2.62")]
    commands = [f"gadget --{en.word()} --{en.word()} PATH" for _ in range(12)]
    gadget_paths = [f"handbook/{name}.html" for name in ("start", "install", "usage", "config", "faq", "trouble", "commands")]
    for lang, host, syllables, ip in editions:
        crawl.host(host, ip, "primary", f"gadget-{lang}=1.0@/")
        words = Words(random.Random(seed + 7 + len(lang) + ord(lang[0])), syllables)
        tree = {"index.html": (f"Gadget {words.word()}", [words.line() for _ in range(12)])}
        for path in gadget_paths:
            tree[path] = (f"{words.word()} {words.word()}", commands if path.endswith("commands.html") else [words.line() for _ in range(12)])
        publish(crawl, f"http://{host}/", "gadget", "1.0", tree, lang=lang, collection=f"gadget-{lang}")

    # toolkit: 12 identical stubs, crawled whole on one host, 80% on another.
    crawl.host("docs.toolkit.test", "192.0.2.70", "primary", "toolkit=1.0@/docs/")
    crawl.host("toolkit.mirror.test", "198.51.100.70", "mirror", "toolkit=1.0@/toolkit/", fraction=0.8)
    toolkit = manual_tree(en, "toolkit", ["ref"], 20)
    # (The manual's name in the stub: another manual's stubs, when the
    # mechanisms are served several times over, are not these.)
    stub = [f"This operator is described in the main reference of {crawl.name('toolkit')}.", "See the operator table."]
    for n in range(12):
        toolkit[f"ref/op{n}.html"] = ("Operator", stub)
    skipped = {path for index, path in enumerate(toolkit) if index % 5 == 3}
    for base, fetched in [("http://docs.toolkit.test/docs/", lambda path: True),
                          ("http://toolkit.mirror.test/toolkit/", lambda path: path not in skipped)]:
        publish(crawl, base, "toolkit", "1.0", toolkit, fetched=fetched)
    for path in toolkit:
        if path not in skipped:
            for base in ("http://docs.toolkit.test/docs/", "http://toolkit.mirror.test/toolkit/"):
                crawl.copy(base + path, "toolkit", f"toolkit:{base.split('/')[2]}", path)

    # alpha and beta: sibling manuals with one theme and shared pages.
    crawl.host("docs.acme.test", "192.0.2.80", "primary", "alpha=2.0@/alpha/;beta=1.5@/beta/")
    crawl.host("acme.mirror.test", "198.51.100.80", "mirror", "alpha=2.0@/acme/alpha/")
    common = {name: [en.line() for _ in range(14)] for name in ("install", "license", "contributing")}
    for name, version in (("alpha", "2.0"), ("beta", "1.5")):
        tree = manual_tree(en, name, ["guide", "api"], 10)
        for shared, lines in common.items():
            tree[f"{shared}.html"] = (shared.capitalize(), [line.replace("acme", name) for line in lines[:-1]] + [f"This is the {name} project."])
        bases = [f"http://docs.acme.test/{name}/"] + (["http://acme.mirror.test/acme/alpha/"] if name == "alpha" else [])
        for base in bases:
            publish(crawl, base, name, version, tree, theme="acme")
        for path in tree:
            # Alpha's pages are copies on its two hosts. The pages both
            # manuals share are near-copies (one line differs): beta's are
            # copies of alpha's page, each a replica of one page (a copy of
            # a page, not of the manual).
            if name == "alpha":
                for base in bases:
                    crawl.copy(base + path, "alpha", f"alpha:{base.split('/')[2]}", path)
            elif path.split(".")[0] in common:
                crawl.copy(bases[0] + path, "alpha", f"alpha:{bases[0]}{path}", path)

    # pytool: one page under several URLs.
    crawl.host("www.pytool.test", "192.0.2.90", "primary", "pytool=0.9@/")
    pytool = manual_tree(en, "pytool", ["howto"], 10)
    pytool["howto/index.html"] = ("Howto overview", [en.line() for _ in range(14)])
    for number, path in enumerate(pytool):
        topic, lines = pytool[path]
        body = page_html("en", f"{topic} - Pytool 0.9 Documentation", topic, lines,
                         [("https://www.pytool.test/index.html?utm_source=feed", "Home"),
                          ("http://www.pytool.test/changes.html", "Changes")] +
                         [("http://www.pytool.test/" + other + "?utm_source=newsletter", pytool[other][0]) for other in pytool if other != path][:8])
        urls = [f"http://www.pytool.test/{path}", f"https://www.pytool.test/{path}",
                f"http://www.pytool.test/{path}?utm_source=newsletter"]
        if path.endswith("index.html"):
            # A folder and its index page.
            urls.append(f"http://www.pytool.test/{path[:-len('index.html')]}")
        if number % 4 == 1:
            # A session id in the path, as a servlet container writes it.
            urls.append(f"http://www.pytool.test/{path};jsessionid=8F{number:02d}C0DE")
        for url in urls:
            crawl.serve(url, body, collection="pytool", version="0.9", path=path,
                        variant="original" if url == urls[0] else "url-alias")
            crawl.copy(url, "pytool", "pytool:www.pytool.test", path)
    # A parameter that names other pages: each part of the change log is a
    # page of its own, never an alias of the first.
    for part in range(1, 5):
        lines = [en.line() for _ in range(14)]
        url = "http://www.pytool.test/changes.html" + (f"?page={part}" if part > 1 else "")
        crawl.serve(url, page_html("en", f"Changes, part {part} - Pytool 0.9 Documentation",
                                   f"Changes, part {part}", lines,
                                   [("http://www.pytool.test/changes.html?page=" + str(part % 4 + 1), "Next")]),
                    collection="pytool", version="0.9", path=f"changes.html?page={part}")

    # echo: a soft 404 that names the path asked for.
    crawl.host("docs.echo.test", "192.0.2.100", "primary", "echo=3.1@/+soft404-echo")
    echo = manual_tree(en, "echo", ["guide"], 12)
    missing = [f"guide/{en.word()}.html" for _ in range(40)]
    def broken_links(path):
        start = (len(path) % 10) * 4
        return [("http://docs.echo.test/" + target, "See also") for target in missing[start:start + 4]]

    publish(crawl, "http://docs.echo.test/", "echo", "3.1", echo, query_link=broken_links)
    for target in missing:
        crawl.serve(f"http://docs.echo.test/{target}",
                    page_html("en", "Page not found", "Page not found",
                              [f"The page /{target} was not found on this server.", "Check the address and try again."], []),
                    variant="soft404-echo")

    # Two single manuals nothing copies.
    for name, ip in (("sprocket", "192.0.2.110"), ("lantern", "192.0.2.111")):
        crawl.host(f"docs.{name}.test", ip, "primary", f"{name}=1.0@/")
        publish(crawl, f"http://docs.{name}.test/", name, "1.0", manual_tree(en, name, ["guide"], 8), collection="")

    # lumiere: a French manual, its mirror served in ISO-8859-1, and a mirror
    # of that mirror served with Content-Encoding: gzip, which copied it
    # before it was brought up to date (it lags the mirror it copies).
    fr = Words(random.Random(seed + 7), FR_SYLLABLES)
    lumiere = manual_tree(fr, "lumiere", ["guide"], 10)
    older = revise(fr, lumiere, 0.1)
    chain = [("http://docs.lumiere.test/", "docs.lumiere.test", "192.0.2.120", "primary", lumiere, "utf-8", ""),
             ("http://miroir.latin1.test/lumiere/", "miroir.latin1.test", "198.51.100.121", "mirror", lumiere, "iso-8859-1", ""),
             ("http://copie.gzip.test/miroir/lumiere/", "copie.gzip.test", "198.51.100.122", "mirror", older, "utf-8", "gzip")]
    for base, host, ip, role, tree, charset, content_encoding in chain:
        crawl.host(host, ip, role, f"lumiere=2.0@/{base.split('/', 3)[3]}", note=f"{charset} {content_encoding}".strip())
        publish(crawl, base, "lumiere", "2.0", tree, lang="fr", charset=charset,
                content_encoding=content_encoding)
    for path in lumiere:
        holders = [base for base, _, _, _, tree, _, _ in chain
                   if shared_lines(tree[path][1], lumiere[path][1]) >= 0.5]
        for base in holders:
            crawl.copy(base + path, "lumiere", f"lumiere:{base.split('/')[2]}", path)

    # kettle: a manual mirrored under renamed paths: one mirror serves each
    # page without `.html` and in lower case, another flattens its folders.
    kettle = manual_tree(en, "kettle", ["Guide", "Reference"], 8)
    renamings = [("http://docs.kettle.test/", "docs.kettle.test", "192.0.2.130", "primary", lambda path: path),
                 ("http://kettle.plainurls.test/", "kettle.plainurls.test", "198.51.100.131", "mirror",
                  lambda path: path.lower()[:-len(".html")] if path != "index.html" else ""),
                 ("http://flat.kettle-mirror.test/k/", "flat.kettle-mirror.test", "198.51.100.132", "mirror",
                  lambda path: path.replace("/", "_"))]
    for base, host, ip, role, rename in renamings:
        crawl.host(host, ip, role, f"kettle=5.1@/{base.split('/', 3)[3]}",
                   note="" if role == "primary" else "paths renamed")
        publish(crawl, base, "kettle", "5.1", kettle, rename=rename)
    for path in kettle:
        for base, host, _, _, rename in renamings:
            crawl.copy(base + rename(path), "kettle", f"kettle:{host}", path)

    # quill: mirrors that name their original. One, over https and crawled
    # first, copied the original's pages with their `rel=canonical` (which
    # names the original) and adds a note saying whose mirror it is; one
    # names its original only in that note, its canonical URLs rewritten to
    # its own pages (a canonical that names itself says nothing).
    # (English words of three and four syllables: the two- and three-syllable
    # ones are nearly all taken.)
    en = Words(random.Random(seed + 3), EN_SYLLABLES, lengths=(3, 4))
    quill = manual_tree(en, "quill", ["guide", "ref"], 10)
    quill_copies = [("https://quill.mirrorhub.test/quill/", "quill.mirrorhub.test", "198.51.100.140", "mirror",
                     lambda path: f"http://docs.quill.test/manual/{path}",
                     "This site is a mirror of docs.quill.test, updated daily."),
                    ("https://quill.rehost.test/docs/", "quill.rehost.test", "198.51.100.141", "mirror",
                     lambda path: f"https://quill.rehost.test/docs/{path}",
                     "A copy of docs.quill.test, kept by the rehost project."),
                    ("http://docs.quill.test/manual/", "docs.quill.test", "192.0.2.140", "primary",
                     lambda path: f"http://docs.quill.test/manual/{path}", "")]
    for base, host, ip, role, canonical, banner in quill_copies:
        crawl.host(host, ip, role, f"quill=1.4@/{base.split('/', 3)[3]}", scheme=base.split(":")[0],
                   note="names its original" if banner else "")
        publish(crawl, base, "quill", "1.4", quill, canonical=canonical, banner=banner)
    for path in quill:
        for base, host, _, _, _, _ in quill_copies:
            crawl.copy(base + path, "quill", f"quill:{host}", path)

    # A content farm: questions and answers of its own in its own template,
    # and single pages of manuals copied into it, two of them naming the
    # page they copied as canonical. Copies of those pages, not a mirror of
    # any manual (mirrors.tsv pairs no host with it).
    crawl.host("answers.stackfarm.test", "203.0.113.150", "other", "")
    farm_links = [("http://answers.stackfarm.test/", "Home"), ("http://answers.stackfarm.test/hot.html", "Hot questions")]
    chrome = ["Sponsored: fast hosting for your projects.",
              f"Join 40,000 developers asking questions on {crawl.name('StackFarm')}."]
    # Questions and copies are numbered as a site numbers its posts, from
    # where its count stood (another site of the same software numbers its
    # own: same template, other paths).
    first = random.Random(seed + 11).randrange(10000, 90000)
    question = lambda number: f"http://answers.stackfarm.test/q/{first + number}.html"
    copied = lambda number: f"http://answers.stackfarm.test/copied/{first + 24 + number}.html"
    for number in range(24):
        topic = f"{en.word()} {en.word()}"
        crawl.serve(question(number),
                    page_html("en", f"How to {topic}? - StackFarm", f"How to {topic}?",
                              [en.line() for _ in range(8)],
                              farm_links + [(question((number + step) % 24), "Related") for step in (1, 5, 11)]
                              + [(copied(number % 6), "Explained")],
                              theme="farm", aside=chrome))
    farmed = [("widget", "4.2", "http://docs.widget.test/manual/", v42, path) for path in list(v42)[2::9]]
    farmed += [("kettle", "5.1", "http://docs.kettle.test/", kettle, path) for path in list(kettle)[3::7]]
    for number, (name, version, base, tree, path) in enumerate(farmed):
        topic, lines = tree[path]
        url = copied(number)
        related = [(question((number * 4 + step) % 24), "Related") for step in (0, 1)]
        crawl.serve(url, page_html("en", f"{topic} explained - StackFarm", topic, lines, farm_links + related,
                                   theme="farm", aside=chrome,
                                   canonical=base + path if number % 3 == 0 else ""),
                    collection=name, version=version, path=path, variant="farm-copy")
        # A replica of one page: a copy of the page, not of the manual.
        page = [row for row in crawl.truth if row["url"] == crawl.rename(base + path)][0]["page"]
        crawl.copy(url, name, f"{name}:{url}", page)
        crawl.queries.append(dict(query=topic, kind="replicated", collection=name,
                                  source_url=base + path, source_title=topic))

    # inkwell: a mirror over https, crawled first, that names its original
    # only in a note on every page (no link to it, its canonical URLs its
    # own): the note is the one evidence telling the original.
    inkwell = manual_tree(en, "inkwell", ["guide"], 10)
    inkwell_copies = [("https://inkwell.mirrorsite.test/inkwell/", "inkwell.mirrorsite.test", "198.51.100.160", "mirror",
                       "This site mirrors docs.inkwell.test, synchronised every night."),
                      ("http://docs.inkwell.test/", "docs.inkwell.test", "192.0.2.160", "primary", "")]
    for base, host, ip, role, banner in inkwell_copies:
        crawl.host(host, ip, role, f"inkwell=0.7@/{base.split('/', 3)[3]}", scheme=base.split(":")[0],
                   note="names its original in a note" if banner else "")
        publish(crawl, base, "inkwell", "0.7", inkwell, canonical=lambda path, base=base: base + path, banner=banner)
    for path in inkwell:
        for base, host, _, _, _ in inkwell_copies:
            crawl.copy(base + path, "inkwell", f"inkwell:{host}", path)

    # Queries: two topic words of pages of each manual, and a manual's name.
    sources = [("widget", "http://docs.widget.test/manual/", v42, "replicated"),
               ("toolkit", "http://docs.toolkit.test/docs/", toolkit, "replicated"),
               ("pytool", "http://www.pytool.test/", pytool, "replicated"),
               ("echo", "http://docs.echo.test/", echo, "noise"),
               ("lumiere", "http://docs.lumiere.test/", lumiere, "replicated"),
               ("kettle", "http://docs.kettle.test/", kettle, "replicated"),
               ("quill", "http://docs.quill.test/manual/", quill, "replicated"),
               ("inkwell", "http://docs.inkwell.test/", inkwell, "replicated")]
    rng = random.Random(seed + 99)
    for collection, base, tree, kind in sources:
        for path in rng.sample([path for path in tree if path != "index.html" and tree[path][0] != "Operator"], 5):
            topic = tree[path][0]
            crawl.queries.append(dict(query=topic, kind=kind, collection=collection,
                                      source_url=base + path, source_title=topic))


if __name__ == "__main__":
    main()
