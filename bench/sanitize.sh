#!/usr/bin/env bash
# Build gelu_ext with AddressSanitizer + UndefinedBehaviorSanitizer in a
# throw-away copy of the repository and run the test suite under it, once per
# ISA path this CPU runs (baseline, avx2, and avx512 where present).
#
#   bench/sanitize.sh                    # whole suite
#   bench/sanitize.sh -k fuzz            # extra arguments go to pytest
#   PYTHON=/path/to/venv/bin/python bench/sanitize.sh
#   GELU_EXT_FUZZ_EXAMPLES=2000 bench/sanitize.sh tests/test_fuzz.py   # longer fuzz soak
#
# PYTHON must have numpy, Cython, setuptools and the test extras installed
# (pip install '.[test]' Cython setuptools).  Nothing is built in the checkout:
# the tracked and untracked-but-not-ignored files are copied to a temp dir.
#
# Why these settings:
# - setup.py reads GELU_EXT_SANITIZE=1 and adds -fsanitize=address,undefined
#   -fno-sanitize-recover=undefined -O1 -g.
# - The python binary is not instrumented, so ASan's runtime must be loaded
#   first: LD_PRELOAD of the compiler's own libasan (gcc -print-file-name).
# - ASAN_OPTIONS=detect_leaks=0: CPython does not free everything at exit
#   (interned strings, static types, arenas of immortal objects), so
#   LeakSanitizer would report hundreds of interpreter "leaks" that are not
#   ours.  Leaks of gelu_ext are tested directly by tests/test_leaks.py
#   (tracemalloc and RSS over 10^5 calls).
# - UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1: any undefined behaviour
#   stops the run with a stack.
# The verdict greps each log for 'ERROR: AddressSanitizer' and 'runtime error:'.
# Exit status: 0 clean, 1 sanitizer reports or a crash, 2 could not build/run,
# 3 no sanitizer reports but ordinary test failures.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
CC="${CC:-gcc}"
libasan="$("$CC" -print-file-name=libasan.so)"
if [ ! -e "$libasan" ]; then
    echo "sanitize.sh: $CC has no libasan.so ($libasan); install libasan (gcc) first" >&2
    exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/gelu_ext_sanitize.XXXXXX")"
# the copy is removed after a clean run and kept (with its logs) otherwise
trap 'if [ "${status:-2}" -eq 0 ]; then rm -rf "$work"; else echo "sanitize.sh: logs kept in $work" >&2; fi' EXIT
start=$(date +%s)

echo "== copying $here -> $work"
(cd "$here" && git ls-files -z --cached --others --exclude-standard) |
    (cd "$here" && xargs -0 cp --parents -t "$work")

echo "== building with GELU_EXT_SANITIZE=1 ($("$CC" --version | head -1))"
if ! (cd "$work" && CC="$CC" GELU_EXT_SANITIZE=1 "$PYTHON" setup.py build_ext --inplace \
        >"$work/build.log" 2>&1); then
    tail -30 "$work/build.log"
    echo "sanitize.sh: build failed" >&2
    exit 2
fi
grep -q -- '-fsanitize=address,undefined' "$work/build.log" ||
    { echo "sanitize.sh: the build did not use -fsanitize (setup.py ignored GELU_EXT_SANITIZE?)" >&2; exit 2; }

export ASAN_OPTIONS="detect_leaks=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
run_py() { (cd "$work" && env PYTHONPATH="$work" LD_PRELOAD="$libasan" "$PYTHON" "$@"); }

isas="$(run_py -c 'from gelu_ext import _ufuncs as u
best = u.ISA_NAMES.index(u._best_isa())
print(" ".join(n for i, n in enumerate(u.ISA_NAMES) if i <= best and n in u._compiled_isas()))')" ||
    { echo "sanitize.sh: the sanitized module does not import" >&2; exit 2; }
echo "== ISA paths on this CPU: $isas"

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(tests)
status=0
verdicts=()
for isa in $isas; do
    log="$work/pytest-$isa.log"
    t0=$(date +%s)
    echo "== GELU_EXT_ISA=$isa: pytest ${targets[*]}"
    GELU_EXT_ISA="$isa" run_py -c 'import gelu_ext, sys; sys.exit(gelu_ext._ufuncs._get_isa() != sys.argv[1])' "$isa" ||
        { echo "sanitize.sh: GELU_EXT_ISA=$isa was not applied" >&2; status=1; }
    GELU_EXT_ISA="$isa" run_py -m pytest -q -p no:cacheprovider "${targets[@]}" >"$log" 2>&1
    rc=$?
    tail -3 "$log"
    nasan=$(grep -c 'ERROR: AddressSanitizer' "$log")
    nubsan=$(grep -c 'runtime error:' "$log")
    summary="$(grep -E '^=*.* in [0-9.]+s' "$log" | tail -1 | sed 's/=//g; s/^ *//; s/ *$//')"
    # pytest exits 1 when tests fail; anything else, or no summary line, means
    # the process died (a sanitizer abort, a signal) before pytest finished
    if [ "$nasan" -ne 0 ] || [ "$nubsan" -ne 0 ]; then
        v="SANITIZER REPORTS"; status=1
        grep -E -A30 'ERROR: AddressSanitizer|runtime error:' "$log" | head -60
    elif [ -z "$summary" ] || { [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; }; then
        v="CRASHED or aborted (pytest exit $rc)"; status=1
        tail -30 "$log"
    elif [ "$rc" -eq 1 ]; then
        v="zero sanitizer reports, but tests FAILED"; [ $status -eq 0 ] && status=3
        grep -E '^FAILED' "$log" | head -20
    else
        v="zero sanitizer reports, all tests passed"
    fi
    verdicts+=("sanitize[$isa]: $v -- ASan: $nasan, UBSan: $nubsan; pytest: ${summary:-no summary} ($(( $(date +%s) - t0 )) s)")
done

echo
printf '%s\n' "${verdicts[@]}"
case $status in
    0) final="zero sanitizer reports and every test passed on every ISA path" ;;
    3) final="zero sanitizer reports on every ISA path; some tests failed (see above; not memory/UB errors)" ;;
    *) final="FAILED: sanitizer reports or a crash (see above)" ;;
esac
echo "sanitize.sh: $final; $(( $(date +%s) - start )) s in all"
exit $status
