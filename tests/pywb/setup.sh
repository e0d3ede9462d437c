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
  mkdir -p "$(dirname "$venv")"
  if ! python3 -m venv "$venv" 2> /dev/null; then
    # Debian's python3 keeps venv in a package of its own.
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv > /dev/null
    python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "pywb==$pywb_version" "warcio==$warcio_version"
fi
echo "$(cd "$venv" && pwd)/bin"
