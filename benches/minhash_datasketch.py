"""Min-hash of documents with datasketch, for `cargo bench --bench similarity`.

Reads JSON lines (one document text per line) from the file given, computes for
each document the 5-word shingles as mirrorscope's fingerprints take them
(words are runs of letters and digits, lower-cased; shingles wrap at the end so
that every word starts one) and a datasketch MinHash with 84 permutations fed
through update_batch (its fastest path), on one thread, and prints
{"documents": N, "seconds": S} as JSON. Needs `pip install datasketch`.
"""

import json
import re
import sys
import time

from datasketch import MinHash

WORD = re.compile(r"[^\W_]+")


def main(path):
    with open(path, encoding="utf-8") as lines:
        documents = [json.loads(line) for line in lines]
    started = time.perf_counter()
    for text in documents:
        words = WORD.findall(text.lower())
        if not words:
            continue
        wrapped = words + words[:4]
        shingles = [
            " ".join(wrapped[start:start + 5]).encode("utf-8")
            for start in range(len(words))
        ]
        minhash = MinHash(num_perm=84)
        minhash.update_batch(shingles)
        minhash.digest()
    seconds = time.perf_counter() - started
    print(json.dumps({"documents": len(documents), "seconds": seconds}))


if __name__ == "__main__":
    main(sys.argv[1])
