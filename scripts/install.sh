#!/usr/bin/env bash
# Installs what osworld needs, idempotently, and says how long each part took:
#  1. the Debian packages in desktop_env/providers/local/system_packages.txt (only missing ones), and
#     vscode_build_packages.txt, which building VS Code needs (not with --demo: the demo has no VS Code task);
#  2. at the same time, this package into a project venv (.venv; Debian's own Python refuses global pip
#     installs), with its test tools unless --demo, by uv (from PyPI, into the venv: it fetches in parallel,
#     a few times faster than pip here), or pip when uv cannot be had; byte code compiled as they install
#     (uv would leave it to each test process to compile what it imports, while the desktops need the CPU);
#     then, still beside apt, the env server's venv (Debian's Python and its python3-* packages come first),
#     and unless --demo VS Code (`osworld env setup --vscode`'s build: its build packages come first too):
#     about 90 s of compiling that fills the CPU apt leaves idle, where the first test to need VS Code
#     would otherwise build it while the desktop tests use both cores; beside VS Code, unless --demo, the venv of
#     OSWorld's own code that the tests comparing with it run (osworld_harness/experiments/reference_venv.py: the PyPI package
#     desktop-env with --no-deps and the requirements beside it, in the cache, made once);
#  3. the desktop's view, home template and Chromium 120 (`osworld env setup`), once both are done; as root and
#     unless --demo, Ubuntu 22.04's userland too (`--ubuntu-userland`: 4-13 min, most of it the download), which
#     desktops then boot from (without it, from Debian's packages).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
DEMO=0
[ "${1:-}" = "--demo" ] && DEMO=1
started=$(date +%s)
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"

packages_in() {  # the package names of the given lists (no comments, no blank lines)
  cat "$@" | grep -v '^\s*#' | grep -v '^\s*$'
}

missing_of() {  # the packages of the given lists that dpkg does not have installed
  local p
  for p in $(packages_in "$@"); do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

apt_install() {
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

lists=(desktop_env/providers/local/system_packages.txt)
[ "$DEMO" = 1 ] || lists+=(desktop_env/providers/local/vscode_build_packages.txt)
mapfile -t missing < <(missing_of "${lists[@]}")
apt_s=0
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${#missing[@]} Debian package(s): ${missing[*]}"
  $SUDO apt-get update -qq
  # The venvs need Debian's Python first (the env server's its python3-* modules too); the rest of apt
  # runs while they are built.
  first=(python3 python3-venv python3-pip python3-xlib python3-pil python3-pyatspi gir1.2-atspi-2.0)
  [ "$DEMO" = 1 ] || first+=($(packages_in desktop_env/providers/local/vscode_build_packages.txt))
  mapfile -t python_first < <(printf '%s\n' "${first[@]}" | grep -Fx -f <(printf '%s\n' "${missing[@]}") || true)
  [ ${#python_first[@]} -gt 0 ] && apt_install "${python_first[@]}"
fi

pip_log=$(mktemp)
(
  pip_started=$(date +%s)
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  extras=".[test]"; [ "$DEMO" = 1 ] && extras="."
  if [ -x "$VENV/bin/uv" ] || "$VENV/bin/python" -m pip install -q --disable-pip-version-check uv; then
    "$VENV/bin/uv" pip install -q --compile-bytecode --python "$VENV/bin/python" -e "$extras"
  else
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$extras"
  fi
  "$VENV/bin/python" -c "from desktop_env.providers.local.build.server_venv import ensure_server_venv as e; print(e())"
  echo "$(( $(date +%s) - pip_started ))" > "$pip_log.seconds"
  if [ "$DEMO" = 0 ]; then
    ( reference_started=$(date +%s)
      "$VENV/bin/python" -m osworld_harness.experiments.reference_venv
      echo "$(( $(date +%s) - reference_started ))" > "$pip_log.reference-seconds" ) > "$pip_log.reference" 2>&1 &
    reference_pid=$!
    vscode_started=$(date +%s)
    if "$VENV/bin/python" -c "from desktop_env.providers.local.build.vscode import ensure_vscode as e; e()" \
        > "$pip_log.vscode" 2>&1; then
      echo "$(( $(date +%s) - vscode_started ))" > "$pip_log.vscode-seconds"
    fi
    wait "$reference_pid" || { cat "$pip_log.reference"; exit 1; }
  fi
) > "$pip_log" 2>&1 &
pip_pid=$!

if [ ${#missing[@]} -gt 0 ]; then
  apt_started=$(date +%s)
  apt_install "${missing[@]}"
  apt_s=$(( $(date +%s) - apt_started ))
fi
if ! wait "$pip_pid"; then
  cat "$pip_log" >&2
  echo "installing the Python packages failed (above)" >&2
  exit 1
fi
pip_s=$(cat "$pip_log.seconds")
vscode_note=""
if [ "$DEMO" = 0 ]; then
  if [ -f "$pip_log.vscode-seconds" ]; then
    vscode_note="; VS Code $(cat "$pip_log.vscode-seconds") s (beside them)"
  else
    # Not fatal here: what needs VS Code builds it again when it runs, and fails naming the step.
    tail -n 20 "$pip_log.vscode" >&2
    echo "warning: building VS Code failed (above); the tasks and tests that use it will try again" >&2
  fi
  vscode_note+="; OSWorld's reference venv $(cat "$pip_log.reference-seconds") s (beside VS Code)"
fi
rm -f "$pip_log" "$pip_log.seconds" "$pip_log.vscode" "$pip_log.vscode-seconds" "$pip_log.reference" \
  "$pip_log.reference-seconds"

setup_started=$(date +%s)
"$VENV/bin/osworld" env setup
if [ "$DEMO" = 0 ] && [ "$(id -u)" -eq 0 ]; then
  # Not fatal: without the tree desktops boot from Debian's packages (built just above), and the tests of the
  # Ubuntu desktop skip, saying why. With it, this builds what its desktops mount (their view, venv, seeded home,
  # Thunderbird 115) after the tree.
  "$VENV/bin/osworld" env setup --ubuntu-userland \
    || echo "warning: building the Ubuntu 22.04 userland failed (above); its desktop's tests will skip" >&2
fi
setup_s=$(( $(date +%s) - setup_started ))
echo "install took $(( $(date +%s) - started )) s: Debian packages ${apt_s} s; Python packages and the env" \
  "server's venv ${pip_s} s (at the same time)${vscode_note}; desktop setup ${setup_s} s"
