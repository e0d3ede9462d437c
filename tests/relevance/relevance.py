#!/usr/bin/env python3
"""Relevance of the first entry, as issue 31 defines it.

    relevance.py QUERIES TRUTH BASE_URL [--show]

QUERIES is a TSV with at least the columns `query` and `source_url` (the
development crawls' queries.tsv, or tests/relevance/*.tsv); TRUTH a truth.tsv
(`url collection replica page`). A query is answered when the page it was made
from, or the same page of another copy or version (the same `collection` and
`page` in TRUTH; a URL outside TRUTH is only itself), is the first entry's
page or one of its sitelinks. Prints JSON: queries, first (the first entry's
page), first_or_sitelink, top3 (any of the first three entries' pages or
sitelinks), their shares, the listing or index pages shown as an entry where
a prose page of its manual matched (`listing_representatives`), and the
queries missed.
"""
import collections
import csv
import json
import sys
import urllib.parse
import urllib.request

LISTING = ('/_modules/', '/_sources/', '/src-html/', 'genindex', 'py-modindex', '/search.html')


def tsv(path):
    with open(path, newline='', encoding='utf-8') as f:
        return list(csv.DictReader(f, delimiter='\t', quoting=csv.QUOTE_NONE))


def main(argv):
    show = '--show' in argv
    queries, truth_path, base = [a for a in argv if a != '--show']
    truth = {r['url']: (r['collection'], r['page']) for r in tsv(truth_path)}
    key = lambda url: truth.get(url, ('', url))
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
