#!/usr/bin/env bash
# Installs pywb (the Webrecorder archive replay system, with warcio) from
# PyPI into a virtual environment, for the test that replays the files
# `mirrorscope dedup-warc` writes (tests/it/dedup_warc.rs).
#
#   bash tests/pywb/setup.sh [VENV]     (default: target/pywb/venv)
#
# Prints the environment's bin folder (an absolute path) on its last line.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${1:-target/pywb/venv}"
pywb_version=2.9.1
warcio_version=1.8.1

if [ ! -x "$venv/bin/wayback" ] || [ ! -x "$venv/bin/warcio" ] \
  || ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('pywb') != '$pywb_version' or m.version('warcio') != '$warcio_version')" 2> /dev/null; then
  echo "== installing pywb $pywb_version and warcio $warcio_version into $venv" >&2
  bash .ci/venv-install.sh "$venv" "pywb==$pywb_version" "warcio==$warcio_version"
fi
echo "$(cd "$venv" && pwd)/bin"
