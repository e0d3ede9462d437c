#!/usr/bin/env python3
"""Relevance of the first entry, as issue 31 defines it.

    relevance.py QUERIES TRUTH BASE_URL [--show]

QUERIES is a TSV with at least the columns `query` and `source_url` (the
development crawls' queries.tsv, or tests/relevance/*.tsv); TRUTH a truth.tsv
(`url collection replica page`). A query is answered when the page it was made
from, or the same page of another copy or version (the same `collection` and
`page` in TRUTH; a URL outside TRUTH is only itself), is the first entry's
page or one of its sitelinks. Where a `pages.tsv` sits beside TRUTH (as in
the development crawls), a page is also every URL answered with its very
bytes (the same `payload_sha1`, status 200): one page under two names, such
as a manual that publishes `ch48.html` and `ch-message_processing.html`
alike, is that page whichever name the entry shows. Prints JSON: queries, first (the first entry's
page), first_or_sitelink, top3 (any of the first three entries' pages or
sitelinks), their shares, the listing or index pages shown as an entry where
a prose page of its manual matched (`listing_representatives`), and the
queries missed.
"""
import collections
import csv
import json
import os
import sys
import urllib.parse
import urllib.request

LISTING = ('/_modules/', '/_sources/', '/src-html/', 'genindex', 'py-modindex', '/search.html')


def tsv(path):
    with open(path, newline='', encoding='utf-8') as f:
        return list(csv.DictReader(f, delimiter='\t', quoting=csv.QUOTE_NONE))


def same_bytes(pages_path):
    """The URLs answered with status 200 and the same bytes, as lists of
    two or more; none without a pages.tsv."""
    if not os.path.exists(pages_path):
        return []
    by_payload = collections.defaultdict(list)
    for r in tsv(pages_path):
        if r.get('status') == '200' and r.get('payload_sha1'):
            by_payload[r['payload_sha1']].append(r['url'])
    return [urls for urls in by_payload.values() if len(urls) > 1]


def main(argv):
    show = '--show' in argv
    queries, truth_path, base = [a for a in argv if a != '--show']
    truth = {r['url']: (r['collection'], r['page']) for r in tsv(truth_path)}
    page = lambda url: truth.get(url, ('', url))
    parent = {}

    def key(url):
        k = page(url)
        while parent.get(k, k) != k:
            k = parent[k]
        return k

    for urls in same_bytes(os.path.join(os.path.dirname(truth_path), 'pages.tsv')):
        roots = sorted({key(url) for url in urls})
        for other in roots[1:]:
            parent[other] = roots[0]
    c = collections.Counter()
    missed = []
    for r in tsv(queries):
        want = key(r['source_url'])
        url = base + '/api/search?' + urllib.parse.urlencode({'q': r['query']})
        d = json.load(urllib.request.urlopen(url, timeout=30))
        groups = d['groups']
        entry = lambda g: [g['url']] + [s['url'] for s in g.get('sitelinks', [])]
        c['queries'] += 1
        if groups and key(groups[0]['url']) == want:
            c['first'] += 1
        if groups and any(key(u) == want for u in entry(groups[0])):
            c['first_or_sitelink'] += 1
        else:
            missed.append({'query': r['query'], 'want': r['source_url'],
                           'got': [entry(g) for g in groups[:3]] if show else
                           [g['url'] for g in groups[:3]]})
        if any(key(u) == want for g in groups[:3] for u in entry(g)):
            c['top3'] += 1
        c['listing_representatives'] += sum(
            any(m in g['url'] for m in LISTING) for g in groups[:10])
    n = max(1, c['queries'])
    out = dict(c, first_share=c['first'] / n, first_or_sitelink_share=c['first_or_sitelink'] / n,
               top3_share=c['top3'] / n, missed=missed)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == '__main__':
    main(sys.argv[1:])
