#!/usr/bin/env bash
# Installs what osworld needs, idempotently:
#  1. the Debian packages in desktop_env/providers/local/system_packages.txt and
#     vscode_build_packages.txt (only missing ones),
#  2. this package into a project venv (.venv; Debian's own Python refuses global pip installs),
#  3. the env server's venv and the desktop's home template (`osworld env setup`).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

# VS Code's build packages too: small, and what a run needs to build VS Code on first need.
pkgs=$(cat desktop_env/providers/local/system_packages.txt desktop_env/providers/local/vscode_build_packages.txt \
  | grep -v '^\s*#' | grep -v '^\s*$')
missing=()
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[test]"
"$VENV/bin/osworld" env setup
