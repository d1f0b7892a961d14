#!/usr/bin/env bash
# The native extension built with AddressSanitizer + UndefinedBehaviorSanitizer, and the
# native-path tests run against that build (issue 30): any sanitizer report fails the run.
#
# The build goes to a copy of src/ in a temporary folder (the working tree's own build is
# left alone) and is put first on PYTHONPATH. The interpreter is not built with ASan, so
# the runtimes are preloaded; leak checking is off (the interpreter's own allocations
# at exit are not ours). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-.venv/bin/python}
CC=${CC:-gcc}
TESTS=(tests/core/test_native.py tests/core/test_native_module.py
       tests/core/near/test_near_native.py tests/core/near/test_near_rewrite.py
       tests/core/near/test_near_keyed_durations.py tests/core/test_hostile_values.py
       tests/readers/test_fuzz_per_reader.py)

# every .c file under core/ is one translation unit of the extension (setup.py lists them)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r src "$work/src"
rm -f "$work"/src/maxrepeat/core/_native*.so

include=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
"$CC" -shared -fPIC -O1 -g -fno-omit-frame-pointer \
  -fsanitize=address,undefined -fno-sanitize-recover=all \
  -Wall -Wextra -Werror -I"$include" \
  src/maxrepeat/core/_*.c -o "$work/src/maxrepeat/core/_native$suffix"

export LD_PRELOAD="$("$CC" -print-file-name=libasan.so) $("$CC" -print-file-name=libubsan.so)"
# A report aborts the process; pytest is told to leave the standard error descriptor
# alone (--capture=sys), so the report is seen, and any report in the output (a
# subprocess's too) fails the run even where the test passed.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export PYTHONPATH="$work/src"
unset MAXREPEAT_PURE
# fewer random examples than the plain run (which keeps its 300): every property still
# runs, within the few minutes CI gives this step
export MAXREPEAT_NATIVE_EXAMPLES=${MAXREPEAT_NATIVE_EXAMPLES:-20}
# and a short fuzz run: lone surrogates in every reader's strings, native against pure
export MAXREPEAT_READER_FUZZ_EXAMPLES=${MAXREPEAT_READER_FUZZ_EXAMPLES:-6}
# the sanitized build is the one imported, and it is active
"$PY" -c 'import sys; from maxrepeat.core import accel
assert accel.native is not None and accel.native.__file__.startswith(sys.argv[1]), accel.native
' "$work/src"
status=0
# (the code-point sweep of the character classes is left to the plain run: a minute here)
# only the pytest plugin these tests use (scripts/test.sh says why)
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 \
"$PY" -m pytest -p _hypothesis_pytestplugin "${TESTS[@]}" -q -p no:cacheprovider --capture=sys \
  --deselect tests/core/near/test_near_rewrite.py::test_c_rewrite_uses_the_character_classes_of_re "$@" 2>&1 \
  | tee "$work/out" || status=$?
if grep -qE "runtime error:|ERROR: AddressSanitizer|ERROR: UndefinedBehaviorSanitizer" \
    "$work/out"; then
  echo "scripts/sanitize.sh: a sanitizer report (above)" >&2
  exit 1
fi
exit "$status"
