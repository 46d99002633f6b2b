# Shared by bench/aarch64.sh, bench/aarch64_python.sh, bench/clang.sh and
# bench/windows.sh (sourced), and by .ci/run.

# The Debian packages each cross-check installs with --install; .ci/run
# installs their union (CROSS_PKGS) in one apt-get, one package-list update.
AARCH64_PKGS="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static"
CLANG_PKGS="clang-19"
WINDOWS_PKGS="gcc-mingw-w64-x86-64 wine64 libwine-dev clang-19"
# shellcheck disable=SC2034  # used by .ci/run
CROSS_PKGS="$AARCH64_PKGS $CLANG_PKGS $WINDOWS_PKGS"

# find_clang -> the first clang on PATH ($CLANG first, then the newest
# Debian versions), or nothing
find_clang() {
    local c
    for c in ${CLANG:-} clang-19 clang-18 clang-17 clang-16 clang-15 clang-14 clang; do
        if command -v "$c" >/dev/null; then echo "$c"; return; fi
    done
}

# apt_install PKG... -> Debian packages installed where this can (apt-get,
# root), else a note; another CI job may hold the package lock: wait for it
apt_install() {
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        echo "== apt-get install $*"
        (timeout 900 apt-get -o DPkg::Lock::Timeout=300 update -qq &&
            DEBIAN_FRONTEND=noninteractive timeout 900 apt-get -o DPkg::Lock::Timeout=300 \
                install -y -qq --no-install-recommends "$@") >/dev/null 2>&1 ||
            echo "note: apt-get could not install $*"
    else
        echo "note: cannot install $* here (needs apt-get and root)"
    fi
}

# need_tools CHECK INSTALL MESSAGE PKG...: CHECK (a command) says whether the
# tools are here; if not and INSTALL is 1, apt_install the packages and ask
# again; if still not, print "note: MESSAGE (Debian: apt-get install PKG...)"
# and exit the script with 77 (skipped, never failed)
need_tools() {
    local check="$1" install="$2" message="$3"
    shift 3
    if ! "$check" && [ "$install" = 1 ]; then
        apt_install "$@"
    fi
    if ! "$check"; then
        echo "note: $message (Debian: apt-get install $*)"
        exit 77
    fi
}

# kernel_units PLAT MACHINE COMPILER -> setup.py's kernel sources
# (kernel_sources), one per line: the path, then the flags it takes beyond
# build_flags (an ISA unit's isa_flags; nothing for the others).  Needs $PYTHON.
kernel_units() {
    "$PYTHON" -c 'import sys, setup
plat, machine, compiler = sys.argv[1:4]
for s in setup.kernel_sources():
    u = setup.unit_of(s)
    print(s, *(setup.isa_flags(u, machine, compiler, plat) if u else []))' "$1" "$2" "$3"
}

# compile_kernels DIR PLAT MACHINE COMPILER CC [FLAGS...] -> each kernel source
# compiled by CC FLAGS into DIR/<name>.o, an ISA unit with its own flags
# added, as setup.py builds them; prints the objects.  An error or a warning
# fails (status 1, the compiler's output shown).
compile_kernels() {
    local dir="$1" plat="$2" machine="$3" compiler="$4" src extra obj objs=()
    shift 4
    mkdir -p "$dir"
    while read -r src extra; do
        obj="$dir/$(basename "${src%.c}").o"
        # shellcheck disable=SC2086
        if ! "$@" $extra -c "$src" -o "$obj" 2>"$dir/cc.log" || [ -s "$dir/cc.log" ]; then
            head -n 40 "$dir/cc.log" >&2
            echo "FAIL: $* $extra -c $src: errors or warnings above" >&2
            return 1
        fi
        objs+=("$obj")
    done < <(kernel_units "$plat" "$machine" "$compiler")
    echo "${objs[*]}"
}
