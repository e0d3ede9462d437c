#!/usr/bin/env bash
# Measures the Spark jobs against the Rust stages on one data folder:
#
#   bash spark/bench.sh DATA [MASTER]      (MASTER default local[2])
#
# Exports the tables the jobs read as Parquet, runs `analysis` (similarity,
# then growth and the clusters ranker on Spark's own trivial clusters, and
# the prefix ranker) and prints the
# seconds each took and the peak memory of the whole process tree (the
# Python driver, the JVM and its Python workers, sampled every 0.2 s), and
# whether the results are the Rust stages' (the figures `stats` gives,
# growth's among them, the pairs `mirrors --ranker clusters` gives), for
# BENCHMARKS.md. (tests/it/spark.rs also imports the grown clusters and
# compares the collections themselves.) The Rust
# stages' times are those `index` printed for the same generation.
set -euo pipefail
cd "$(dirname "$0")/.."
data="$1"
master="${2:-local[2]}"
python=$(bash spark/setup.sh)
mirrorscope=${MIRRORSCOPE:-target/release/mirrorscope}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

started=$(date +%s.%N)
"$mirrorscope" export --data "$data" --out "$work/tables" --format parquet \
  --tables hosts,pages,links,uncrawled,chunks,megashingles,trivial > /dev/null
exported=$(date +%s.%N)
echo "export (parquet): $(echo "$exported - $started" | bc) s, $(du -sh "$work/tables" | cut -f1)"

config=()
if [ -f "$data/config.json" ]; then config=(--config "$(cd "$data" && pwd)/config.json"); fi
(cd spark && exec "$python" -m mirrorscope_spark analysis --tables "$work/tables" \
  --out "$work/out" --master "$master" "${config[@]}" > "$work/figures.json" 2> "$work/stderr") &
job=$!
peak=0
while kill -0 "$job" 2> /dev/null; do
  # Resident kB of the job and every process below it.
  tree=$(ps -e -o pid=,ppid=,rss= | awk -v root="$job" '
    { parent[$1] = $2; rss[$1] = $3 }
    END {
      for (pid in rss) {
        p = pid
        while (p != "" && p != 0 && p != root) p = parent[p]
        if (p == root) total += rss[pid]
      }
      print total + 0
    }')
  if [ "$tree" -gt "$peak" ]; then peak=$tree; fi
  sleep 0.2
done
wait "$job" || { cat "$work/stderr" >&2; exit 1; }
python3 - "$work/figures.json" "$peak" <<'PY'
import json, sys
figures = json.load(open(sys.argv[1]))
similarity, growth, mirrors = figures["similarity"], figures["collections"], figures["mirrors"]
prefix = figures["prefix"]
print(f"spark analysis: {figures['seconds']} s in all (similarity {similarity['seconds']} s, "
      f"growth {growth['seconds']} s, clusters ranker {mirrors['seconds']} s, prefix ranker "
      f"{prefix['seconds']} s), peak {int(sys.argv[2]) / 1024:.0f} MB resident over the process tree")
print(f"  {similarity['compared_pages']} compared pages, {similarity['trivial_clusters']} trivial "
      f"clusters, {similarity['chunk_pairs']} chunk pairs, {similarity['component_rounds']} "
      f"rounds of label propagation; {growth['link_summary_rows']} LinkSummary rows with a = s, "
      f"{growth['clusters_grown']} clusters grown; {mirrors['ranked']} and {prefix['ranked']} "
      f"ranked host pairs")
PY
"$mirrorscope" stats --data "$data" --json > "$work/stats.json"
"$mirrorscope" mirrors --data "$data" --ranker clusters --json > "$work/mirrors.json"
"$mirrorscope" mirrors --data "$data" --ranker prefix --json > "$work/prefix.json"
python3 - "$work/figures.json" "$work/stats.json" "$work/mirrors.json" "$work/prefix.json" <<'PY'
import json, sys
figures, stats, mirrors, prefix = (json.load(open(path)) for path in sys.argv[1:])
names = ["compared_pages", "distinct_texts", "trivial_clusters", "near_duplicate_pages",
         "boilerplate_chunks", "chunk_pairs", "megashingle_pairs"]
differ = [name for name in names if figures["similarity"][name] != stats[name]]
growth = ["alias_pages", "virtual_links", "link_summary_rows", "merge_edges",
          "extended_merge_edges", "clusters_grown"]
differ += [name for name in growth if figures["collections"][name] != stats["collections"][name]]
pairs = lambda listed: sorted((p["a"], p["b"], p["score"]) for p in listed)
same_pairs = pairs(figures["mirrors"]["pairs"]) == pairs(mirrors["pairs"])
scored = lambda listed: [(p["a"], p["b"], p["score"]) for p in listed]
same_prefix = scored(figures["prefix"]["pairs"]) == scored(prefix["pairs"])
print("against the Rust stages: prefix ranker",
      "the same pairs, order and scores" if same_prefix else "DIFFERENT pairs")
print("against the Rust stages: similarity and growth figures",
      "the same" if not differ else f"differ in {differ}",
      "; clusters ranker", "the same pairs and scores" if same_pairs else "DIFFERENT pairs")
PY
