"""The pipeline a user would assemble from PyPI for near-duplicate detection
alone, the peer `mirrorscope index` is measured against (issue 32): FastWARC
reads the WARC files, Resiliparse decodes each HTML response and extracts
its text, Rensa computes an 84-permutation min-hash of its word 5-shingles,
one WARC file per task on WORKERS processes; then Rensa's LSH (14 bands of
6 rows) finds candidate pairs, the pairs whose estimated resemblance is at
least 0.8 are kept and union-find makes the clusters.

    python benches/peer_pipeline.py [--workers N] WARC...

Prints its figures as JSON: pages, MB of HTML, clusters of two pages or
more and the pages in them, and the seconds of each stage. Run by
benches/peer_pipeline.sh, which installs the packages."""

import argparse
import json
import os
import sys
import time
from multiprocessing import Pool

PERMUTATIONS = 84
BANDS = 14
THRESHOLD = 0.8
SHINGLE_WORDS = 5
SEED = 42


def shingles(text):
    words = text.lower().split()
    if len(words) <= SHINGLE_WORDS:
        return [" ".join(words)] if words else []
    return [" ".join(words[i : i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)]


def one_file(path):
    """The file's HTML responses: (URL, HTML bytes, min-hash) each, and the
    records passed over."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType
    from rensa import RMinHash
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    pages = []
    with open(path, "rb") as stream:
        for record in ArchiveIterator(stream, record_types=WarcRecordType.response, parse_http=True):
            content_type = record.http_headers.get("Content-Type", "") if record.http_headers else ""
            if "html" not in content_type.lower():
                continue
            body = record.reader.read()
            html = bytes_to_str(body, detect_encoding(body))
            text = extract_plain_text(html)
            minhash = RMinHash(num_perm=PERMUTATIONS, seed=SEED)
            minhash.update(shingles(text))
            pages.append((record.headers.get("WARC-Target-URI"), len(body), minhash))
    return pages


def find(parents, page):
    while parents[page] != page:
        parents[page] = parents[parents[page]]
        page = parents[page]
    return page


def main(argv=None):
    parser = argparse.ArgumentParser(prog="peer_pipeline.py")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("warcs", nargs="+")
    arguments = parser.parse_args(argv)
    from rensa import RMinHashLSH

    started = time.monotonic()
    with Pool(arguments.workers) as pool:
        pages = [page for file in pool.imap_unordered(one_file, arguments.warcs) for page in file]
    read = time.monotonic()

    lsh = RMinHashLSH(threshold=THRESHOLD, num_perm=PERMUTATIONS, num_bands=BANDS)
    for key, (_, _, minhash) in enumerate(pages):
        lsh.insert(key, minhash)
    parents = list(range(len(pages)))
    for key, (_, _, minhash) in enumerate(pages):
        for other in lsh.query(minhash):
            if other != key and minhash.jaccard(pages[other][2]) >= THRESHOLD:
                parents[find(parents, key)] = find(parents, other)
    sizes = {}
    for key in range(len(pages)):
        root = find(parents, key)
        sizes[root] = sizes.get(root, 0) + 1
    clustered = [size for size in sizes.values() if size > 1]
    ended = time.monotonic()

    html_bytes = sum(size for _, size, _ in pages)
    json.dump(
        {
            "pages": len(pages),
            "html_mb": round(html_bytes / 1e6, 1),
            "clusters": len(clustered),
            "clustered_pages": sum(clustered),
            "workers": arguments.workers,
            "read_extract_minhash_seconds": round(read - started, 2),
            "lsh_union_find_seconds": round(ended - read, 2),
            "seconds": round(ended - started, 2),
            "pages_per_second": round(len(pages) / (ended - started)),
            "html_mb_per_second": round(html_bytes / 1e6 / (ended - started), 1),
        },
        sys.stdout,
        indent=2,
    )
    print()


if __name__ == "__main__":
    main()
