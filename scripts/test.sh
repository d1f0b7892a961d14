#!/usr/bin/env bash
# The whole test suite, from a fresh machine with only Python >= 3.11:
# makes .venv, installs the package with every extra the tests exercise, installs the
# system packages the browser tests need (Debian's chromium, when running as root), and
# runs pytest. Extra pytest arguments are passed through: bash scripts/test.sh -k lint
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test,inspect,ray,langchain,openai-agents,smolagents,pydantic-ai,docs]'

# System packages for tests that drive real components: the HTML report is opened in
# headless Chromium (tests/test_html_browser.py).
need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# Node.js: the differential tests of tools patterns against JavaScript's own RegExp
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
if [ ${#need_apt[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${need_apt[*]} with apt-get" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Real agent CLIs that tests drive against a scripted model server on 127.0.0.1, installed
# into the git-ignored .npm-agents/ (Node from Debian when missing).
if ! command -v npm >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
if command -v npm >/dev/null 2>&1 && [ ! -x .npm-agents/node_modules/.bin/codex ]; then
  npm install -s --prefix .npm-agents --no-audit --no-fund @openai/codex@0.171.0 >/dev/null
fi

exec .venv/bin/python -m pytest "$@"
