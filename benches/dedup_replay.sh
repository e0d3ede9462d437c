#!/usr/bin/env bash
# dedup-warc on a crawl, checked and measured the way tests/it/dedup_warc.rs
# checks the shipped crawl, for crawls too large for the test suite (development
# crawl 1: about six minutes on 2 cores):
#
#   bash benches/dedup_replay.sh CRAWL [WORK]     (CRAWL: WARC files or a folder)
#
# Runs `mirrorscope dedup-warc` (timed, peak RSS), `warcio check` on every file,
# compares the written index's keys with pywb's `cdx-indexer`, then has pywb
# replay every response of CRAWL in `id_` mode from the deduplicated files and
# from the original ones (tests/pywb/replay.py) and counts the captures whose
# status or bytes differ.
# Exits non-zero on any difference. pywb and warcio come from tests/pywb/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
crawl=$(cd "$1" && pwd)
work="${2:-target/dedup-replay}"
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
bin=$(bash tests/pywb/setup.sh "${XDG_CACHE_HOME:-$HOME/.cache}/mirrorscope/pywb-venv" | tail -1)
cargo build --release --quiet
/usr/bin/time -f "dedup-warc: %e s, peak %M KB" target/release/mirrorscope dedup-warc "$crawl" --out "$work/out"
for file in "$work"/out/dedup-*.warc.gz; do
  "$bin/warcio" check "$file" > /dev/null || { echo "warcio check fails on $file"; exit 1; }
done
echo "warcio check passes on every file"
mkdir -p "$work"/pywb/collections/{orig,dedup}/{archive,indexes}
ln -s "$crawl"/*.warc.gz "$work/pywb/collections/orig/archive/"
ln -s "$work"/out/dedup-*.warc.gz "$work/pywb/collections/dedup/archive/"
cp "$work/out/dedup.cdxj" "$work/pywb/collections/dedup/indexes/index.cdxj"
"$bin/cdx-indexer" --cdxj --sort --output "$work/pywb/collections/orig/indexes/index.cdxj" "$crawl"/*.warc.gz
"$bin/cdx-indexer" --cdxj --sort --output "$work/pywb.cdxj" "$work"/out/dedup-*.warc.gz
if ! diff <(cut -d' ' -f1,2 "$work/pywb.cdxj" | sort) <(cut -d' ' -f1,2 "$work/out/dedup.cdxj" | sort) > /dev/null; then
  echo "the written index's keys differ from pywb's cdx-indexer's"
  exit 1
fi
echo "the written index's keys are pywb's cdx-indexer's"
"$bin/python" - "$crawl" "$work/captures.tsv" <<'PY'
import glob, re, sys
from warcio.archiveiterator import ArchiveIterator
crawl, out = sys.argv[1], open(sys.argv[2], 'w')
for name in sorted(glob.glob(crawl + '/*.warc.gz')):
    with open(name, 'rb') as stream:
        for record in ArchiveIterator(stream):
            if record.rec_type == 'response':
                date = re.sub(r'\D', '', record.rec_headers.get_header('WARC-Date'))[:14]
                out.write(record.rec_headers.get_header('WARC-Target-URI') + '\t' + date + '\n')
PY
started=$(date +%s)
answer=$("$bin/python" tests/pywb/replay.py "$work/pywb" "$work/captures.tsv" dedup orig)
echo "pywb replay ($(( $(date +%s) - started )) s): $answer"
"$bin/python" -c 'import json, sys; sys.exit(1 if json.loads(sys.argv[1])["differing"] else 0)' "$answer"
