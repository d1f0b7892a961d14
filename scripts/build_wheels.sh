#!/usr/bin/env bash
# Build the sdist, then from it one wheel per supported Python (3.11, 3.12, 3.13), and test
# each wheel in a fresh virtual environment: installed with its dependencies from PyPI,
# `maxrepeat --version` must name the native fast path and `maxrepeat grade examples/`
# must give the README's verdict (exit 1, six results, three failing).
#
#   bash scripts/build_wheels.sh             # every version; the files land in dist/
#   VERSIONS="3.12" bash scripts/build_wheels.sh
#
# One wheel per version because the C extension uses CPython's full API (not the limited
# API an abi3 wheel needs; CONTRIBUTING.md). Each interpreter is found as pythonX.Y on
# PATH or under pyenv's versions; a version that is nowhere to be found is reported as
# missing and fails the run (ALLOW_MISSING=1 lets it pass). The wheels are tagged for
# this machine (linux_x86_64): a wheel for PyPI goes through auditwheel first.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

VERSIONS=${VERSIONS:-"3.11 3.12 3.13"}
OUT=${OUT:-dist}
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1

find_python() {  # the interpreter of version $1, or nothing
  local v=$1 cand
  for cand in "python$v" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/"python$v"; do
    if "$cand" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$v'.split('.'))))" \
        >/dev/null 2>&1; then
      command -v "$cand" 2>/dev/null || echo "$cand"
      return 0
    fi
  done
}

declare -A verdict
pythons=()
for v in $VERSIONS; do
  py=$(find_python "$v" || true)
  if [ -z "$py" ]; then verdict[$v]="missing: no python$v on this machine"; continue; fi
  pythons+=("$v=$py")
done
[ ${#pythons[@]} -gt 0 ] || { echo "no supported Python found" >&2; exit 1; }

# The sdist, with the first interpreter found and PyPA's build (in a throw-away venv).
first=${pythons[0]#*=}
"$first" -m venv "$work/tools"
"$work/tools/bin/pip" install -q build
rm -f "$OUT"/maxrepeat-*.tar.gz
"$work/tools/bin/python" -m build --sdist --outdir "$OUT" . >"$work/sdist.log" 2>&1 \
  || { cat "$work/sdist.log" >&2; exit 1; }
sdist=$(ls "$OUT"/maxrepeat-*.tar.gz)
echo "sdist: $sdist"

test_wheel() {  # $1 version, $2 interpreter; prints one verdict line, returns non-zero on failure
  local v=$1 py=$2 tag=cp${1/./} wheel env=$work/test-$1 out code
  "$py" -m venv "$work/build-$v"
  rm -f "$OUT"/maxrepeat-*-"$tag"-*.whl
  "$work/build-$v/bin/pip" wheel -q --no-deps -w "$OUT" "$sdist" >"$work/wheel-$v.log" 2>&1 \
    || { cat "$work/wheel-$v.log" >&2; echo "wheel build failed"; return 1; }
  wheel=$(ls "$OUT"/maxrepeat-*-"$tag"-"$tag"-*.whl)
  "$work/build-$v/bin/python" - "$wheel" <<'EOF' || { echo "wheel contents wrong"; return 1; }
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
assert any(n.startswith("maxrepeat/core/_native.") and n.endswith(".so") for n in names), "no extension"
assert not [n for n in names if n.endswith((".c", ".h"))], "C sources in the wheel"
assert not [n for n in names if n.startswith("tests/")], "tests in the wheel"
EOF
  "$py" -m venv "$env"
  "$env/bin/pip" install -q "$wheel" >"$work/install-$v.log" 2>&1 \
    || { cat "$work/install-$v.log" >&2; echo "install failed"; return 1; }
  out=$(cd "$work" && "$env/bin/maxrepeat" --version)
  case $out in *"native fast path"*) ;; *) echo "not the native path: $out"; return 1;; esac
  code=0
  (cd "$work" && "$env/bin/maxrepeat" grade "$root/examples/" \
     --config "$root/examples/graders.yaml" -o jsonl -q) >"$work/grade-$v.jsonl" || code=$?
  [ "$code" = 1 ] || { echo "grade exited $code, not 1"; return 1; }
  "$env/bin/python" - "$work/grade-$v.jsonl" <<'EOF' || { echo "wrong results"; return 1; }
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
assert len(rows) == 6 and sum(not r["passed"] for r in rows) == 3, rows
EOF
  echo "ok: $(basename "$wheel"), installed and graded examples/ ($out)"
}

failed=0
for entry in "${pythons[@]}"; do
  v=${entry%%=*}; py=${entry#*=}
  if line=$(test_wheel "$v" "$py"); then verdict[$v]=$line; else verdict[$v]="FAILED: $line"; failed=1; fi
done

echo
for v in $VERSIONS; do
  echo "Python $v: ${verdict[$v]}"
  case ${verdict[$v]} in missing:*) [ "${ALLOW_MISSING:-0}" = 1 ] || failed=1;; esac
done
exit $failed
