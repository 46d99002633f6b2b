#!/usr/bin/env bash
# The kernels on Windows, without a Windows machine: the MSVC
# branches compiled in MSVC mode, and a mingw-w64 build run under wine
# checked bit for bit against this Linux build, threads included.
#
#   bench/windows.sh             # 2^16 inputs per op x dtype (every float16/bfloat16 pattern)
#   bench/windows.sh --n 262144  # more
#   bench/windows.sh --install   # first apt-get install the tools if missing
#
# Steps:
# (1) setup.py's flags for win32 with MSVC, clang-cl and mingw-w64
#     (build_flags): none may name an instruction set (-m..., /arch:).
# (2) MSVC mode: clang --target=x86_64-pc-windows-msvc and
#     aarch64-pc-windows-msvc compile the kernel sources (setup.py
#     kernel_sources, each ISA unit with its isa_flags) with -Wall, -Wvla and -Wgnu (cl.exe has neither
#     variable-length arrays nor GNU extensions), failing on any warning; that mode
#     defines _MSC_VER and not __GNUC__, so every MSVC branch of our code
#     is taken (gx_isas.h's CPUID/XCR0 checks, gx_atomic.h's Interlocked
#     atomics, gx_threads.h's Windows threads), and the objects must hold
#     every ISA path's kernels (avx2, avx512; neon).  The C library and
#     Windows headers are Wine's (Debian's libwine-dev) in place of the
#     UCRT's and the Windows SDK's, with bench/msvc/shim.h for the two
#     things they lack in that mode (fma/fmaf declarations, a builtin
#     clash).  What this does NOT prove: that MSVC itself (cl.exe) accepts
#     the code -- clang is more lenient (GNU vector operators and casts
#     pass even so), and under clang the ISA blocks take clang's
#     target attributes where MSVC takes none -- nor that the result links
#     and runs against the real UCRT (nothing here runs it).
# (3) mingw-w64: src/math/gx_soft_fma.h's fma and fmaf against glibc's (correctly
#     rounded) natively -- a mingw-w64 build links them instead of
#     libmingwex's, which round twice -- then bench/bits_harness.c with the
#     kernels cross-built with setup.py's mingw flags (no warning allowed).
# (4) Under wine64: the harness on every ISA path this CPU runs, one thread,
#     against the Linux build of the same path; then on the best path with 4
#     threads (the pool over Windows threads, gx_threads.h), and again with
#     the Interlocked atomics (-DGX_ATOMICS_INTERLOCKED=1, what MSVC
#     compiles), each against one thread: the same bits, and the workers
#     must have computed items.  This covers the Windows ABI (long is 32
#     bits, the calling convention) and the mingw-w64 C runtime, not the UCRT.
# Needs Debian's gcc-mingw-w64-x86-64, wine64, libwine-dev and clang (any
# of clang-19 ... clang), a host gcc and python3 (setup.py's flags only).
# Exit status: 0 the same bits everywhere (a NaN for a NaN of another sign or
# payload is counted, not failed: bench/bits_harness.c says why); 1 a
# difference, a warning or a build failure; 77 the tools are missing (skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/tools.sh
. bench/tools.sh

install=0
n=$((1 << 16))
while [ $# -gt 0 ]; do
    case "$1" in
        --install) install=1 ;;
        --n) n="$2"; shift ;;
        *) echo "usage: bench/windows.sh [--n N] [--install]" >&2; exit 2 ;;
    esac
    shift
done
PYTHON="${PYTHON:-python3}"
CC="${CC:-gcc}"
MINGW="${MINGW:-x86_64-w64-mingw32-gcc}"
WINE_INC=/usr/include/wine/wine
PKGS="$WINDOWS_PKGS"

find_wine() {
    local w
    for w in /usr/lib/wine/wine64 wine64 wine; do
        if command -v "$w" >/dev/null; then command -v "$w"; return; fi
    done
}
have_tools() {
    command -v "$MINGW" >/dev/null && [ -n "$(find_wine)" ] && [ -n "$(find_clang)" ] &&
        [ -e "$WINE_INC/msvcrt/stdlib.h" ] && [ -e "$WINE_INC/windows/windows.h" ]
}
# shellcheck disable=SC2086
need_tools have_tools "$install" "Windows check skipped: $MINGW, wine64, clang or Wine's headers ($WINE_INC) missing" $PKGS
WINE="$(find_wine)"
CLANG="$(find_clang)"
# its server: beside the loader (Debian's wine64 without the wine package
# has no wineserver on PATH)
WINESERVER=wineserver
for w in "$(dirname "$WINE")/wineserver64" "$(dirname "$WINE")/wineserver"; do
    if [ -x "$w" ]; then WINESERVER="$w"; break; fi
done
start=$(date +%s)
work="$(mktemp -d "${TMPDIR:-/tmp}/gelu_ext_windows.XXXXXX")"
export WINEPREFIX="$work/wineprefix" WINEDEBUG=-all
cleanup() {
    # wine leaves its server running for a while: end it, and wait for it
    if [ -d "$WINEPREFIX" ]; then
        "$WINESERVER" -k >/dev/null 2>&1 || true
        "$WINESERVER" -w >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# (1) setup.py's flags, as a plain `pip install` on Windows passes them
flags() {   # flags COMPILER -> compile args then -D defines, one line
    "$PYTHON" -c 'import sys, setup
c, l, d = setup.build_flags("win32", "AMD64", {}, sys.argv[1])
print(" ".join(c + ["-D%s=%s" % m for m in d]))' "$1"
}
for compiler in msvc clang-cl mingw; do
    fl="$(flags $compiler)"
    echo "== setup.py flags, win32 $compiler: $fl"
    for f in $fl; do
        case "$f" in
            -m*|/arch:*|-march*|/clang:-m*) echo "FAIL: setup.py passes $f for $compiler: no flag may name an instruction set"; exit 1 ;;
        esac
    done
done
mingw_flags="$(flags mingw)"
host_flags="$("$PYTHON" -c 'import setup
c, l, d = setup.build_flags("linux", "x86_64", {}, "gcc")
print(" ".join(c + ["-D%s=%s" % m for m in d]))')"

# (2) MSVC mode over Wine's headers
msvc_inc=(-nostdinc -isystem "$("$CLANG" -print-resource-dir)/include" -isystem "$WINE_INC/msvcrt"
          -isystem "$WINE_INC/windows" -include bench/msvc/shim.h)
for target in x86_64-pc-windows-msvc aarch64-pc-windows-msvc; do
    macros="$("$CLANG" --target=$target -dM -E -x c /dev/null)"
    if ! grep -q '_MSC_VER' <<< "$macros" || grep -q '__GNUC__' <<< "$macros"; then
        echo "FAIL: $CLANG --target=$target does not define _MSC_VER alone"
        exit 1
    fi
    arch="${target%%-*}"
    # shellcheck disable=SC2086
    compile_kernels "$work/$target" win32 "$arch" clang "$CLANG" --target=$target "${msvc_inc[@]}" -O2 \
        -ffp-contract=off -Wall -Wvla -Wgnu -Isrc >/dev/null || exit 1
    # the paths compiled: one kernel per path at least (gx_k_gelu_erf_f32_<isa>)
    want="baseline avx2 avx512"
    [ "$arch" = aarch64 ] && want="baseline neon"
    for isa in $want; do
        # shellcheck disable=SC2086
        "$CLANG" --target=$target "${msvc_inc[@]}" -Isrc $(kernel_units win32 "$arch" clang |
            awk -v s="src/isa/$isa.c" '$1 == s {$1 = ""; print}') -E "src/isa/$isa.c" > "$work/kernels.i"
        if ! grep -qw "gx_k_gelu_erf_f32_$isa" "$work/kernels.i"; then
            echo "FAIL: MSVC mode ($target) compiles no $isa kernel"
            exit 1
        fi
    done
    echo "== MSVC mode, $target ($("$CLANG" --version | head -n 1)): the kernel sources" \
         "compiled with no warning; paths: $want"
done

# (3) the soft fma against glibc's, then the builds
# shellcheck disable=SC2086
linux_objs="$(compile_kernels "$work/linux" linux x86_64 gcc "$CC" $host_flags -Isrc)" || exit 1
# shellcheck disable=SC2086
"$CC" $host_flags -Isrc bench/bits_harness.c $linux_objs -lm -o "$work/bits_linux"
if ! "$work/bits_linux" softfma --n 4000000 > "$work/softfma.txt"; then
    cat "$work/softfma.txt"
    echo "FAIL: gx_soft_fma.h differs from glibc's fma/fmaf"
    exit 1
fi
echo "== $(tail -n 1 "$work/softfma.txt" | sed 's/^# //')"
for variant in gnu interlocked; do
    extra=""
    [ $variant = interlocked ] && extra="-DGX_ATOMICS_INTERLOCKED=1"
    # shellcheck disable=SC2086
    mingw_objs="$(compile_kernels "$work/mingw-$variant" win32 AMD64 mingw "$MINGW" $mingw_flags $extra -Isrc)" ||
        exit 1
    # shellcheck disable=SC2086
    if ! "$MINGW" $mingw_flags $extra -Isrc bench/bits_harness.c $mingw_objs \
            -o "$work/bits_$variant.exe" 2>"$work/cc.log" || [ -s "$work/cc.log" ]; then
        head -n 40 "$work/cc.log"
        echo "FAIL: $MINGW $mingw_flags $extra: errors or warnings above"
        exit 1
    fi
done
echo "== $MINGW ($("$MINGW" --version | head -n 1)): the harness built with no warning"

# (4) under wine: every path against Linux's, then threads against one thread
wrun() { "$WINE" "$work/bits_$1.exe" "${@:2}"; }
wrun gnu isas >/dev/null 2>"$work/wine.log" || { cat "$work/wine.log"; echo "FAIL: $WINE cannot run the mingw-w64 build"; exit 1; }
status=0
best=""
while read -r isa pieces; do
    mkdir -p "$work/linux-$isa" "$work/win-$isa"
    "$work/bits_linux" run "$work/linux-$isa" --n "$n" --isa "$isa" >/dev/null
    wrun gnu run "$work/win-$isa" --n "$n" --isa "$isa" >/dev/null
    echo "-- $isa path ($pieces-piece float32 tables), one thread: wine against Linux"
    if ! "$work/bits_linux" compare "$work/linux-$isa" "$work/win-$isa" --n "$n" > "$work/cmp.txt"; then
        grep -v identical "$work/cmp.txt" | head -n 20
        status=1
    fi
    tail -n 1 "$work/cmp.txt"
    best="$isa"
done < <("$work/bits_linux" isas)
for variant in gnu interlocked; do
    mkdir -p "$work/win-$best-threads-$variant"
    pool="$(wrun $variant run "$work/win-$best-threads-$variant" --n "$n" --isa "$best" --threads 4 | tail -n 1)"
    echo "-- $best path, 4 threads, $variant atomics, under wine: ${pool#\# }"
    if ! "$work/bits_linux" compare "$work/win-$best" "$work/win-$best-threads-$variant" --n "$n" --strict 1 \
            > "$work/cmp.txt"; then
        grep -v identical "$work/cmp.txt" | head -n 20
        status=1
    fi
    tail -n 1 "$work/cmp.txt"
    workers="$(sed -E 's/.*items by workers ([0-9]+) .*/\1/' <<< "$pool")"
    if ! [ "$workers" -gt 0 ] 2>/dev/null; then
        echo "FAIL: no item was computed by a worker thread under wine ($variant atomics)"
        status=1
    fi
done
paths="$("$work/bits_linux" isas | awk '{print $1}' | paste -sd, -)"
echo "windows.sh: MSVC mode (x64, ARM64) compiled with no warning; under $("$WINE" --version 2>/dev/null || echo wine)," \
     "paths $paths and 4 Windows threads: $([ $status = 0 ] && echo "the Linux build's bits, NaN payloads aside" || echo FAILED)" \
     "($n inputs per op x dtype, $(( $(date +%s) - start )) s)"
exit $status
