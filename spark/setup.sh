#!/usr/bin/env bash
# Installs what the Spark jobs need: Java from Debian (when `java` is
# missing), and PySpark and xxhash (the collections job hashes relative
# links as mirrorscope does, with XXH3) from PyPI into a virtual environment.
#
#   bash spark/setup.sh [VENV]     (default: target/spark/venv)
#
# Prints the environment's python (an absolute path) on its last line. Exits 3, with a message,
# when Java cannot be installed (no apt-get, or the package refused): the
# Spark test is then skipped rather than failed.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-target/spark/venv}"
pyspark_version=3.5.7
xxhash_version=3.5.0

if ! command -v java > /dev/null; then
  echo "== installing Java (openjdk-17-jre-headless)" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  if ! command -v apt-get > /dev/null \
    || ! { $sudo apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq openjdk-17-jre-headless > /dev/null; }; then
    echo "spark/setup.sh: Java could not be installed; the Spark jobs cannot run here" >&2
    exit 3
  fi
fi

if [ ! -x "$venv/bin/python" ] \
  || ! "$venv/bin/python" -c "import pyspark, sys, xxhash; sys.exit(pyspark.__version__ != '$pyspark_version' or xxhash.VERSION != '$xxhash_version')" 2> /dev/null; then
  echo "== installing pyspark $pyspark_version and xxhash $xxhash_version into $venv" >&2
  bash .ci/venv-install.sh "$venv" "pyspark==$pyspark_version" "xxhash==$xxhash_version"
fi
echo "$(cd "$venv" && pwd)/bin/python"
