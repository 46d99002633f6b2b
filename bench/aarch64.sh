#!/usr/bin/env bash
# The kernels on aarch64, checked bit for bit against this x86-64 build
# without an ARM machine (issue 24): src/gx_kernels.c and src/gx_pool.c
# cross-compiled with the flags setup.py passes on aarch64 (build_flags), and
# bench/bits_harness.c run natively on every x86 path and under qemu-user.
#
#   bench/aarch64.sh               # 2^18 inputs per op x dtype; x86 paths with and
#                                  # without the AMD loop choices (~1 min on 2 cores)
#   bench/aarch64.sh --quick       # 2^16 inputs (every float16/bfloat16 pattern): CI's step
#   bench/aarch64.sh --exhaustive  # also float32 exact GELU on all 2^32 inputs under
#                                  # qemu, hashed per 2^24 (about half an hour on 2 cores)
#   bench/aarch64.sh --install     # first apt-get install the toolchain if it is missing
#
# Steps: (1) print setup.py's flags for linux/aarch64 and darwin/arm64 and
# fail if any names an instruction set (-m...); (2) cross-compile the two
# kernel sources with them, as setuptools would (-fPIC, the defines), and
# fail on any warning; (3) count the NEON instructions in the float32 table
# loops (information for the NEON path, issue 24 item 2); (4) build the
# harness natively and for aarch64, run it on each x86 path (bits_harness
# isas) and under qemu-aarch64, and compare: one line per op x dtype, one
# column per build against the x86 baseline path.
# Needs Debian's gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and
# qemu-user-static (qemu-aarch64 also does), a host gcc and python3 (only to
# read setup.py's flags: no package is imported).
# Exit status: 0 the same bits everywhere (a NaN for a NaN of another sign or
# payload is counted, not failed: bench/bits_harness.c says why); 1 a
# difference, a warning or a build failure; 77 the toolchain is missing (skipped).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=full
install=0
for a in "$@"; do
    case "$a" in
        --quick) mode=quick ;;
        --exhaustive) mode=exhaustive ;;
        --install) install=1 ;;
        *) echo "usage: bench/aarch64.sh [--quick | --exhaustive] [--install]" >&2; exit 2 ;;
    esac
done

PYTHON="${PYTHON:-python3}"
CC="${CC:-gcc}"
CROSS="${CROSS:-aarch64-linux-gnu-gcc}"
SYSROOT="${SYSROOT:-/usr/aarch64-linux-gnu}"
PKGS="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static"

find_qemu() { command -v qemu-aarch64-static || command -v qemu-aarch64 || true; }
have_tools() { command -v "$CROSS" >/dev/null && [ -n "$(find_qemu)" ] && [ -e "$SYSROOT/lib/ld-linux-aarch64.so.1" ]; }

if ! have_tools && [ "$install" = 1 ]; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        echo "== apt-get install $PKGS"
        # shellcheck disable=SC2086
        (timeout 600 apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq $PKGS) >/dev/null 2>&1 ||
            echo "note: apt-get could not install $PKGS"
    else
        echo "note: cannot install $PKGS here (needs apt-get and root)"
    fi
fi
if ! have_tools; then
    echo "note: aarch64 check skipped: $CROSS, qemu-aarch64(-static) or $SYSROOT missing (Debian: apt-get install $PKGS)"
    exit 77
fi
QEMU="$(find_qemu)"
start=$(date +%s)
work="$(mktemp -d "${TMPDIR:-/tmp}/gelu_ext_aarch64.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# (1) setup.py's flags, as a plain `pip install` passes them (no GELU_EXT_* set)
flags() {   # flags PLATFORM MACHINE -> compile args then -D defines, one line
    "$PYTHON" -c 'import sys, setup
c, l, d = setup.build_flags(sys.argv[1], sys.argv[2], {})
print(" ".join(c + ["-D%s=%s" % m for m in d]))' "$1" "$2"
}
linux_flags="$(flags linux aarch64)"
darwin_flags="$(flags darwin arm64)"
host_flags="$(flags linux x86_64)"
echo "== setup.py flags, linux/aarch64: $linux_flags"
echo "== setup.py flags, darwin/arm64:  $darwin_flags"
for f in $linux_flags $darwin_flags; do
    case "$f" in
        -m*) echo "FAIL: setup.py passes $f on aarch64: no flag may name an instruction set"; exit 1 ;;
    esac
done

# (2) the kernels with those flags; the Cython-generated _ufuncs.c needs
# aarch64 Python headers, which a cross toolchain does not have
for target in linux darwin; do
    fl="$linux_flags"
    [ "$target" = darwin ] && fl="$darwin_flags"
    if [ "$target" = darwin ] && [ "$fl" = "$linux_flags" ]; then
        echo "== darwin/arm64: the same flags, the same objects (Apple clang itself is not here)"
        continue
    fi
    for src in gx_kernels gx_pool; do
        # shellcheck disable=SC2086
        if ! "$CROSS" $fl -fPIC -Isrc -c "src/$src.c" -o "$work/$src.$target.o" 2>"$work/cc.log" ||
                [ -s "$work/cc.log" ]; then
            cat "$work/cc.log"
            echo "FAIL: $CROSS $fl -fPIC -c src/$src.c: errors or warnings above"
            exit 1
        fi
    done
    echo "== $CROSS: src/gx_kernels.c, src/gx_pool.c built for $target/aarch64 with no warning"
done

# (3) NEON in the float32 table loops (lut_*, sig_*): 0 until the NEON path lands
neon="$(aarch64-linux-gnu-objdump -d --no-show-raw-insn "$work/gx_kernels.linux.o" 2>/dev/null |
    awk '/^[0-9a-f]+ <gx_k_(lut|sig)_[a-z0-9_]*baseline/ {on = 1; next} /^[0-9a-f]+ </ {on = 0}
         on && /\t(fmla|fmls|tbl|tbx)\t/ {n++} END {print n + 0}')" || neon="?"
echo "== NEON fmla/fmls/tbl/tbx in the float32 table loops: $neon"

# (4) the harness, natively and for aarch64
# shellcheck disable=SC2086
"$CC" $host_flags -Isrc bench/bits_harness.c src/gx_kernels.c src/gx_pool.c -lm -o "$work/bits_x86"
# shellcheck disable=SC2086
"$CROSS" $linux_flags -Isrc bench/bits_harness.c src/gx_kernels.c src/gx_pool.c -lm -o "$work/bits_arm"
qrun() { nice "$QEMU" -L "$SYSROOT" "$work/bits_arm" "$@"; }

n=$((1 << 18))
[ "$mode" = quick ] && n=$((1 << 16))
dirs=()
for isa in $("$work/bits_x86" isas); do
    mkdir -p "$work/$isa"
    "$work/bits_x86" run "$work/$isa" --n "$n" --isa "$isa" --amd 0 >/dev/null
    dirs+=("$work/$isa")
    if [ "$mode" != quick ] && [ "$isa" != baseline ]; then
        mkdir -p "$work/$isa-amd"
        "$work/bits_x86" run "$work/$isa-amd" --n "$n" --isa "$isa" --amd 1 >/dev/null
        dirs+=("$work/$isa-amd")
    fi
done
mkdir -p "$work/aarch64"
qrun run "$work/aarch64" --n "$n" >/dev/null
dirs+=("$work/aarch64")
echo "== $n inputs per op x dtype; x86-64 ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //'))" \
     "against aarch64 under $(basename "$QEMU") ($("$QEMU" --version | head -1 | awk '{print $3}'))"
status=0
"$work/bits_x86" compare "${dirs[@]}" --n "$n" || status=1

if [ "$mode" = exhaustive ]; then
    echo "== float32 gelu_erf, all 2^32 inputs: x86-64 ($("$work/bits_x86" isas | tail -1)), then aarch64 under qemu"
    "$work/bits_x86" exhaustive gelu_erf > "$work/ex_x86.txt"
    qrun exhaustive gelu_erf > "$work/ex_arm.txt"
    echo "   x86-64 $(tail -1 "$work/ex_x86.txt" | tr -d '#'), aarch64 under qemu $(tail -1 "$work/ex_arm.txt" | tr -d '#')"
    if diff <(grep -v '^#' "$work/ex_x86.txt") <(grep -v '^#' "$work/ex_arm.txt") >/dev/null; then
        echo "   identical: all 256 chunk hashes of 2^24 outputs"
    else
        echo "   DIFFER in chunks (first 2^24-input chunk index, x86 hash, aarch64 hash):"
        join <(grep -v '^#' "$work/ex_x86.txt") <(grep -v '^#' "$work/ex_arm.txt") | awk '$2 != $3' | head
        status=1
    fi
fi
echo "aarch64.sh ($mode): $([ $status = 0 ] && echo "the same bits" || echo FAILED) in $(( $(date +%s) - start )) s"
exit $status
