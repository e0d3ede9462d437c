#!/usr/bin/env bash
# Creates the virtual environment VENV with python3 (Debian's python3-venv
# installed when the venv module is missing) and installs PACKAGES from PyPI
# into it: what spark/setup.sh and tests/pywb/setup.sh share.
#
#   bash .ci/venv-install.sh VENV PACKAGE==VERSION...
set -euo pipefail
venv="$1"
shift
mkdir -p "$(dirname "$venv")"
if ! python3 -m venv "$venv" 2> /dev/null; then
  # Debian's python3 keeps venv in a package of its own.
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv > /dev/null
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
