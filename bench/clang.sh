#!/usr/bin/env bash
# The extension built with clang: every ISA path this CPU runs
# gives the GCC build's bits, and the tests of what bits do not show pass on
# the clang build.  clang is what every Intel Mac (Apple clang) and
# `CC=clang` users build with; each ISA unit (src/isa/) gets its flags from
# setup.py (isa_flags) whatever the compiler.
#
#   PYTHON=python bench/clang.sh            # $PYTHON: an interpreter with the GCC build
#                                           # of gelu_ext and its test extra installed
#   PYTHON=python bench/clang.sh --install  # first apt-get install clang-19 if no clang is found
#   PYTHON=python bench/clang.sh --quick-tier  # step 3 runs the whole quick tier instead
#
# Steps: (1) a fresh virtualenv and a copy of the tracked files (pip builds
# in the tree), `CC=clang pip install -v .` with what the tests below import,
# failing on any compiler warning (setup.py compiles with -Wall); (2)
# bench/fingerprint.py --quick on the GCC build ($PYTHON), then --compare
# --nan-payloads on the clang build: every op x dtype x ISA path x loop
# switch, NaN payloads aside (clang commutes some multiplies, so where two
# NaN operands meet the other operand's payload comes out: IEEE 754 leaves
# that open); (3) on the clang build, the quick tier of the tests whose
# subject the bits do not cover (CLANG_TESTS: strides, layouts and out= of
# every op x dtype, the Python API, threads, the pool, fork, concurrent
# callers, the vectorised loops, leaks); the bits of step 2 hold every
# op x dtype x path to the GCC build, which the whole suite tests.
# Exit status: 0 the same bits and the tests passed; 1 a warning, a
# difference or a failure; 77 no clang here (skipped, with a note).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/tools.sh
. bench/tools.sh

install=0
tests=(tests/test_ufuncs.py tests/test_api.py tests/test_threads.py tests/test_pool.py tests/test_fork.py
       tests/test_concurrency.py tests/test_vectorised.py tests/test_leaks.py)     # CLANG_TESTS
what="focused tests (${#tests[@]} files)"
for a in "$@"; do
    case "$a" in
        --install) install=1 ;;
        --quick-tier) tests=(); what="quick tier" ;;
        *) echo "usage: bench/clang.sh [--install] [--quick-tier]" >&2; exit 2 ;;
    esac
done
PYTHON="${PYTHON:-python3}"
PKG="$CLANG_PKGS"

have_clang() { [ -n "$(find_clang)" ]; }
need_tools have_clang "$install" "clang check skipped: no clang here" "$PKG"
CLANG="$(find_clang)"
start=$(date +%s)
work="$(mktemp -d "${TMPDIR:-/tmp}/gelu_ext_clang.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# (1) the build
git ls-files -z | xargs -0 cp --parents -t "$work"
"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip >/dev/null 2>&1
# what the tests import, from the index (wheels: nothing compiled), then the
# build alone; the quick tier wants the whole test extra.  (pip never caches
# a wheel it builds from a local directory: this is always a fresh build.)
deps=(pytest mpmath psutil ml_dtypes)
[ "${#tests[@]}" = 0 ] && deps=(pytest)
if ! "$work/venv/bin/pip" install --quiet "${deps[@]}" > "$work/deps.log" 2>&1; then
    tail -n 20 "$work/deps.log"
    echo "clang: installing the tests' dependencies FAILED"
    exit 1
fi
extra=""
[ "${#tests[@]}" = 0 ] && extra="[test]"
if ! (cd "$work" && CC="$CLANG" "$work/venv/bin/pip" install -v ".$extra") \
        > "$work/build.log" 2>&1; then
    tail -n 40 "$work/build.log"
    echo "clang ($CLANG): build FAILED"
    exit 1
fi
if grep -E '(^|[^A-Za-z])warning:' "$work/build.log" | grep -v -e 'byte-compil' -e '^WARNING'; then
    echo "clang ($CLANG): the build warns (above)"
    exit 1
fi

# (2) the bits: the GCC build's fingerprint, then the clang build against it
(cd "$work" && "$PYTHON" bench/fingerprint.py --quick -o "$work/gcc.txt") > /dev/null 2> "$work/fp.log" || {
    tail -n 20 "$work/fp.log"; echo "clang: the GCC fingerprint FAILED"; exit 1; }
if ! (cd "$work" && "$work/venv/bin/python" bench/fingerprint.py --compare "$work/gcc.txt" --nan-payloads) \
        > "$work/compare.txt" 2>> "$work/fp.log"; then
    head -n 40 "$work/compare.txt"
    echo "clang ($CLANG): bits differ from the GCC build (above)"
    exit 1
fi
compared="$(tail -n 1 "$work/compare.txt")"

# (3) the tests on the clang build
if ! summary="$(cd "$work" && "$work/venv/bin/pytest" -q -m "not slow and not idle" -p no:cacheprovider "${tests[@]}" 2>&1 | tail -n 30)"; then
    echo "$summary"
    echo "clang ($CLANG): $what FAILED"
    exit 1
fi
paths="$(cd / && "$work/venv/bin/python" -c 'from gelu_ext import _ufuncs as u; n = u.ISA_NAMES; print(", ".join(n[: n.index(u._best_isa()) + 1]))')"
echo "clang ($("$CLANG" --version | head -n 1)): no warnings; paths $paths: the GCC build's bits, NaN payloads aside (${compared#\# }); $what: ${summary##*$'\n'} ($(( $(date +%s) - start )) s)"
