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
# from the original ones and counts the captures whose status or bytes differ.
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
port=$("$bin/python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
(cd "$work/pywb" && exec "$bin/wayback" --port "$port" --bind 127.0.0.1 > "$work/wayback.log" 2>&1) &
server=$!
trap 'kill $server 2> /dev/null || true' EXIT
"$bin/python" - "$crawl" "$port" <<'PY'
import glob, gzip, hashlib, http.client, re, socket, sys, time
crawl, port = sys.argv[1], int(sys.argv[2])
for _ in range(300):
    try:
        socket.create_connection(('127.0.0.1', port)).close()
        break
    except OSError:
        time.sleep(0.2)
captures = []
for name in sorted(glob.glob(crawl + '/*.warc.gz')):
    from warcio.archiveiterator import ArchiveIterator
    with open(name, 'rb') as stream:
        for record in ArchiveIterator(stream):
            if record.rec_type == 'response':
                date = re.sub(r'\D', '', record.rec_headers.get_header('WARC-Date'))[:14]
                captures.append((record.rec_headers.get_header('WARC-Target-URI'), date))
def get(path):
    connection = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
    connection.request('GET', path)
    answer = connection.getresponse()
    body = answer.read()
    connection.close()
    return answer.status, hashlib.sha1(body).hexdigest()
started, differing, answered = time.time(), [], 0
for url, date in captures:
    dedup = get(f'/dedup/{date}id_/{url}')
    answered += dedup[0] == 200
    if dedup != get(f'/orig/{date}id_/{url}'):
        differing.append(url)
print(f'pywb replay: {len(captures)} captures, {len(differing)} differing, {answered} answered 200 '
      f'from the deduplicated files ({time.time() - started:.0f} s)')
for url in differing[:20]:
    print('  differs:', url)
sys.exit(1 if differing else 0)
PY
