#!/usr/bin/env bash
# mirrorscope `index` against the pipeline a user would assemble from PyPI
# for near-duplicate detection alone (benches/peer_pipeline.py: FastWARC,
# Resiliparse, Rensa's min-hash and LSH, union-find), on the same WARC files
# in the same run, one after the other on an otherwise idle machine (issue
# 32). mirrorscope does more (it stores every body once, clusters
# collections, ranks mirrors and builds the search index); the figures are
# pages and MB of HTML a second, and peak memory.
#
#   bash benches/peer_pipeline.sh CRAWL [WORKERS]
#
# CRAWL is a WARC file or a folder of them (the peer reads each file as one
# task); WORKERS is the peer's processes (default: the machine's cores, as
# mirrorscope uses). Installs the peer's packages into a virtual environment
# in the user's cache; builds mirrorscope in release.
set -euo pipefail
cd "$(dirname "$0")/.."
crawl="$1"
workers="${2:-$(nproc)}"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/mirrorscope/peer-venv"
fastwarc_version=2.0.1
resiliparse_version=2.0.1
rensa_version=0.5.0

if [ ! -x "$venv/bin/python" ] \
  || ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit((m.version('fastwarc'), m.version('resiliparse'), m.version('rensa')) != ('$fastwarc_version', '$resiliparse_version', '$rensa_version'))" 2> /dev/null; then
  echo "== installing fastwarc $fastwarc_version, resiliparse $resiliparse_version and rensa $rensa_version into $venv" >&2
  bash .ci/venv-install.sh "$venv" "fastwarc==$fastwarc_version" "resiliparse==$resiliparse_version" "rensa==$rensa_version"
fi
cargo build --release --quiet
bin=target/release/mirrorscope

mapfile -t files < <(if [ -d "$crawl" ]; then find "$crawl" -name '*.warc.gz' -o -name '*.warc' | sort; else echo "$crawl"; fi)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== peer pipeline ($workers processes, ${#files[@]} WARC files)"
/usr/bin/time -f "%e %M" -o "$work/peer.time" \
  "$venv/bin/python" benches/peer_pipeline.py --workers "$workers" "${files[@]}" > "$work/peer.json"
cat "$work/peer.json"

echo "== mirrorscope index"
/usr/bin/time -f "%e %M" -o "$work/index.time" \
  "$bin" index "$crawl" --data "$work/data" > "$work/index.txt" 2> "$work/index.log" \
  || { cat "$work/index.log"; exit 1; }
grep -E "^(pages \(HTML|time |throughput|time by stage)" "$work/index.txt"

read -r peer_seconds peer_kb < "$work/peer.time"
read -r index_seconds index_kb < "$work/index.time"
python3 - "$work/peer.json" "$work/index.txt" "$peer_seconds" "$peer_kb" "$index_seconds" "$index_kb" << 'EOF'
import json, re, sys
peer = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
peer_seconds, peer_kb, index_seconds, index_kb = map(float, sys.argv[3:])
pages, megabytes = re.search(r"throughput: (\d+) pages, ([\d.]+) MB of HTML", text).groups()
ingest = float(re.search(r"ingest and store ([\d.]+) s", text).group(1))
rows = [
    ("peer pipeline (whole process)", peer["pages"], peer["html_mb"], peer_seconds, peer_kb),
    ("mirrorscope index (whole process)", int(pages), float(megabytes), index_seconds, index_kb),
    ("mirrorscope ingest stage alone", int(pages), float(megabytes), ingest, None),
]
print()
print("| run | pages | MB of HTML | seconds | pages/s | MB of HTML/s | peak MB (largest process) |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for name, pages, mb, seconds, kb in rows:
    peak = f"{kb / 1024:.0f}" if kb else ""
    print(f"| {name} | {pages} | {mb:.1f} | {seconds:.1f} | {pages / seconds:.0f} | {mb / seconds:.1f} | {peak} |")
print()
print(f"index / peer time: {index_seconds / peer_seconds:.2f}; ingest / peer time: {ingest / peer_seconds:.2f}")
EOF
