#!/usr/bin/env bash
# The kernels on aarch64, checked bit for bit against this x86-64 build
# without an ARM machine: the kernel sources (setup.py's
# kernel_sources: the ISA units, gx_half.c, gx_dispatch.c, gx_pool.c,
# gx_soft_fma.c)
# cross-compiled with the flags setup.py passes on aarch64 (build_flags,
# isa_flags), and bench/bits_harness.c run natively on every x86 path and
# under qemu-user.
#
#   bench/aarch64.sh               # 2^18 inputs per op x dtype; x86 paths with and
#                                  # without the AMD loop choices (~1 min on 2 cores)
#   bench/aarch64.sh --quick       # 2^16 inputs (every float16/bfloat16 pattern): CI's step
#   bench/aarch64.sh --exhaustive  # also float32 exact GELU on all 2^32 inputs under
#                                  # qemu, each aarch64 path against the x86 path of
#                                  # its scheme, hashed per 2^24 (bench/results/aarch64.txt
#                                  # has the times); --exhaustive=neon: that path only
#   bench/aarch64.sh --install     # first apt-get install the toolchain if it is missing
#
# Steps: (1) print setup.py's flags for linux/aarch64 and darwin/arm64 and
# fail if any names an instruction set (-m...); (2) cross-compile the three
# kernel sources with them, as setuptools would (-fPIC, the defines; Linux's
# with GCC, Apple clang's with clang for aarch64 where there is one), and
# fail on any warning; (3) count fmla and tbl in the NEON path's float32
# table loops and fail if either is 0 (the loops went scalar); (4) build the
# harness natively and for aarch64, run it on every path of src/gx_isas.h
# (bits_harness isas) natively and under qemu-aarch64, and compare, one
# table per float32 table scheme (32 pieces: x86 baseline, avx512, aarch64
# baseline; 8 pieces: x86 avx2, aarch64 neon): one line per op x dtype, one
# column per path against the scheme's first x86 path.
# Needs Debian's gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and
# qemu-user-static (qemu-aarch64 also does), a host gcc and python3 (only to
# read setup.py's flags: no package is imported).
# Exit status: 0 the same bits everywhere (a NaN for a NaN of another sign or
# payload is counted, not failed: bench/bits_harness.c says why); 1 a
# difference, a warning or a build failure; 77 the toolchain is missing (skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/tools.sh
. bench/tools.sh

mode=full
install=0
ex_isas=all
for a in "$@"; do
    case "$a" in
        --quick) mode=quick ;;
        --exhaustive) mode=exhaustive ;;
        --exhaustive=*) mode=exhaustive; ex_isas="${a#--exhaustive=}" ;;
        --install) install=1 ;;
        *) echo "usage: bench/aarch64.sh [--quick | --exhaustive[=ISA,...]] [--install]" >&2; exit 2 ;;
    esac
done

PYTHON="${PYTHON:-python3}"
CC="${CC:-gcc}"
CROSS="${CROSS:-aarch64-linux-gnu-gcc}"
SYSROOT="${SYSROOT:-/usr/aarch64-linux-gnu}"
PKGS="$AARCH64_PKGS"

find_qemu() { command -v qemu-aarch64-static || command -v qemu-aarch64 || true; }
have_tools() { command -v "$CROSS" >/dev/null && [ -n "$(find_qemu)" ] && [ -e "$SYSROOT/lib/ld-linux-aarch64.so.1" ]; }

# shellcheck disable=SC2086
need_tools have_tools "$install" "aarch64 check skipped: $CROSS, qemu-aarch64(-static) or $SYSROOT missing" $PKGS
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
# Apple clang's flags (setup.py: clang's without -fopenmp-simd) go to a
# clang for aarch64 Linux where there is one -- the same front end reads
# them; Apple clang and the macOS SDK are not here -- else to GCC, which
# warns on the `omp simd` hints clang ignores without that flag.
for target in linux darwin; do
    fl="$linux_flags"
    cc=("$CROSS")
    plat=linux machine=aarch64 compiler=gcc
    if [ "$target" = darwin ]; then
        fl="$darwin_flags"
        plat=darwin machine=arm64 compiler=apple-clang
        if [ -n "$(find_clang)" ]; then
            cc=("$(find_clang)" --target=aarch64-linux-gnu)
        else
            fl="$fl -Wno-unknown-pragmas"
        fi
    fi
    # shellcheck disable=SC2086
    objs="$(compile_kernels "$work/$target" $plat $machine $compiler "${cc[@]}" $fl -fPIC -Isrc)" || exit 1
    echo "== ${cc[*]}: ${objs//$work\/$target\//} built for $target/aarch64 with no warning"
done

# (3) NEON in the float32 table loops of the neon path (lut_*, sig_*): fmla
# and tbl, one tbl per coefficient (src/simd/neon.h); none is a failure
neon_count() {  # neon_count MNEMONIC-REGEX -> such instructions in gx_k_(lut|sig)_*_neon
    aarch64-linux-gnu-objdump -d --no-show-raw-insn "$work/linux/neon.o" |
        awk -v re="$1" '/^[0-9a-f]+ <gx_k_(lut|sig)_[a-z0-9_]*_neon[.>]/ {on = 1; next}
                        /^[0-9a-f]+ </ {on = 0}
                        on { split($0, f, "\t"); if (f[2] ~ "^(" re ")$") n++ } END {print n + 0}'
}
fmla="$(neon_count 'fmla|fmls')"
tbl="$(neon_count 'tbl|tbx')"
echo "== NEON in the float32 table loops (gx_k_{lut,sig}_*_neon): $fmla fmla/fmls, $tbl tbl/tbx"
if [ "$fmla" -eq 0 ] || [ "$tbl" -eq 0 ]; then
    echo "FAIL: the NEON float32 table loops have no fmla or no tbl: they are not vectorised"
    exit 1
fi

# (4) the harness, natively and for aarch64
# shellcheck disable=SC2086
x86_objs="$(compile_kernels "$work/x86" linux x86_64 gcc "$CC" $host_flags -Isrc)" || exit 1
# shellcheck disable=SC2086
"$CC" $host_flags -Isrc bench/bits_harness.c $x86_objs -lm -o "$work/bits_x86"
# shellcheck disable=SC2086
"$CROSS" $linux_flags -Isrc bench/bits_harness.c "$work"/linux/*.o -lm -o "$work/bits_arm"
qrun() { nice "$QEMU" -L "$SYSROOT" "$work/bits_arm" "$@"; }

# Every path of src/gx_isas.h this CPU runs (bits_harness isas: name and
# float32 table scheme).  Paths of one scheme must agree bit for bit; the
# 32- and 8-piece tables differ in last bits (gx_lut8.h).  So each scheme
# has its own table: every path against the first x86 path of the scheme
# (baseline: 32 pieces, avx2: 8), the aarch64 paths included.
n=$((1 << 18))
[ "$mode" = quick ] && n=$((1 << 16))
declare -A ref cols
schemes=()
run_path() {    # run_path LABEL SCHEME RUNNER OPTIONS... -> a column of SCHEME's table
    local label="$1" scheme="$2" runner="$3"
    shift 3
    mkdir -p "$work/$label"
    "$runner" run "$work/$label" --n "$n" "$@" >/dev/null
    if [ -z "${ref[$scheme]:-}" ]; then
        ref[$scheme]="$work/$label"
        schemes+=("$scheme")
    else
        cols[$scheme]="${cols[$scheme]:-} $work/$label"
    fi
}
while read -r isa pieces; do
    run_path "$isa" "$pieces" "$work/bits_x86" --isa "$isa" --amd 0
    if [ "$mode" != quick ] && [ "$isa" != baseline ]; then
        run_path "$isa-amd" "$pieces" "$work/bits_x86" --isa "$isa" --amd 1
    fi
done < <("$work/bits_x86" isas)
arm_isas="$(qrun isas)"
while read -r isa pieces; do
    if [ -z "${ref[$pieces]:-}" ]; then
        echo "FAIL: aarch64's $isa path ($pieces-piece tables) has no x86 path of its scheme on this CPU to compare with"
        exit 1
    fi
    run_path "arm-$isa" "$pieces" qrun --isa "$isa"
done <<< "$arm_isas"
echo "== $n inputs per op x dtype; x86-64 ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //'))" \
     "against aarch64 (arm-*) under $(basename "$QEMU") ($("$QEMU" --version | head -1 | awk '{print $3}'))"
status=0
for scheme in "${schemes[@]}"; do
    echo "-- float32 tables of $scheme pieces: against x86 $(basename "${ref[$scheme]}")"
    if [ -z "${cols[$scheme]:-}" ]; then
        echo "   (no other path of this scheme)"
        continue
    fi
    # shellcheck disable=SC2086
    "$work/bits_x86" compare "${ref[$scheme]}" ${cols[$scheme]} --n "$n" || status=1
done

if [ "$mode" = exhaustive ]; then
    # each aarch64 path (or those of --exhaustive=ISA,...) against the x86
    # path of its scheme: float32 exact GELU on all 2^32 inputs, hashed per 2^24
    while read -r isa pieces; do
        case ",$ex_isas," in ",all,"|*",$isa,"*) ;; *) continue ;; esac
        x86="$(basename "${ref[$pieces]}")"
        echo "== float32 gelu_erf, all 2^32 inputs: aarch64 $isa under qemu against x86-64 $x86 ($pieces-piece tables)"
        "$work/bits_x86" exhaustive gelu_erf --isa "$x86" > "$work/ex_x86.txt"
        qrun exhaustive gelu_erf --isa "$isa" > "$work/ex_arm.txt"
        echo "   x86-64 $x86 $(tail -1 "$work/ex_x86.txt" | tr -d '#'), aarch64 $isa under qemu $(tail -1 "$work/ex_arm.txt" | tr -d '#')"
        if diff <(grep -v '^#' "$work/ex_x86.txt") <(grep -v '^#' "$work/ex_arm.txt") >/dev/null; then
            echo "   identical: all 256 chunk hashes of 2^24 outputs"
        else
            echo "   DIFFER in chunks (first 2^24-input chunk index, x86 hash, aarch64 hash):"
            join <(grep -v '^#' "$work/ex_x86.txt") <(grep -v '^#' "$work/ex_arm.txt") | awk '$2 != $3' | head
            status=1
        fi
    done <<< "$arm_isas"
fi
echo "aarch64.sh ($mode): $([ $status = 0 ] && echo "the same bits" || echo FAILED) in $(( $(date +%s) - start )) s"
exit $status
