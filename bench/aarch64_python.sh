#!/usr/bin/env bash
# The Python suite on an aarch64 interpreter, without an ARM machine: a
# Debian 12 arm64 root made with debootstrap and entered through
# qemu-user-static (binfmt_misc), gelu_ext built there by pip with the
# arm64 GCC and NumPy from its aarch64 wheels, then pytest.  bench/aarch64.sh
# checks the kernels' bits; this checks the Python layer on top of them (the
# tests parametrised over the ISA paths, the bench's peer settings, threads,
# fork), which no x86 run can.
#
#   sudo bash bench/aarch64_python.sh            # the ISA-dependent files (FILES below), quick tier
#   sudo bash bench/aarch64_python.sh --all      # the whole quick tier (-m "not slow and not idle")
#   sudo bash bench/aarch64_python.sh --install  # first apt-get install debootstrap and qemu-user-static
#
# The root (~600 MB, $ROOT, default /var/tmp/gelu_ext_arm64) and its
# virtualenv are made once and kept; each run copies the tracked files in
# afresh and rebuilds.  Needs root (debootstrap, chroot, mounts), network
# access to the Debian mirror and the package index.  Everything runs
# emulated: the build takes minutes and the tests ~20-50x their native
# time, which is why the default is the files whose behaviour depends on
# the ISA paths, not the whole tier.
# Exit status: pytest's; 77 the tools or root rights are missing (skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/tools.sh
. bench/tools.sh

FILES="tests/test_bench_isa.py tests/test_vectorised.py tests/test_twins.py tests/test_api.py
       tests/test_ufuncs.py tests/test_grad.py tests/test_signed_zeros.py tests/test_threads.py
       tests/test_pool.py tests/test_fork.py tests/test_testing.py"
all=0
install=0
for a in "$@"; do
    case "$a" in
        --all) all=1 ;;
        --install) install=1 ;;
        *) echo "usage: bench/aarch64_python.sh [--all] [--install]" >&2; exit 2 ;;
    esac
done
ROOT="${ROOT:-/var/tmp/gelu_ext_arm64}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
QEMU=/usr/bin/qemu-aarch64-static
have_tools() { command -v debootstrap >/dev/null && [ -x "$QEMU" ]; }
if [ "$(id -u)" != 0 ]; then
    echo "note: aarch64 Python run skipped: needs root (debootstrap, chroot)"
    exit 77
fi
need_tools have_tools "$install" "aarch64 Python run skipped: debootstrap or $QEMU missing" debootstrap qemu-user-static
start=$(date +%s)

# aarch64 binaries run through qemu: binfmt_misc, the interpreter opened now
# (F), so it works inside the chroot
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    line="$(cat /usr/lib/binfmt.d/qemu-aarch64.conf)"   # :name:M::magic:mask:interpreter:flags
    line="${line%:*}"
    echo "${line%:*}:$QEMU:F" > /proc/sys/fs/binfmt_misc/register
fi

if [ ! -e "$ROOT/.gelu_ext_root" ]; then
    echo "== debootstrap arm64 bookworm into $ROOT"
    debootstrap --arch=arm64 --variant=minbase \
        --include=python3,python3-venv,python3-dev,gcc,libc6-dev,binutils,ca-certificates \
        bookworm "$ROOT" "$MIRROR" > "$ROOT.debootstrap.log" 2>&1 ||
        { tail -n 20 "$ROOT.debootstrap.log"; echo "FAIL: debootstrap"; exit 1; }
    touch "$ROOT/.gelu_ext_root"
fi

# the host's name resolution and certificate bundle (a proxy's CA included)
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
mounted=()
cleanup() {
    local m
    for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT
for m in proc dev dev/shm; do
    if ! mountpoint -q "$ROOT/$m"; then
        case "$m" in
            proc) mount -t proc proc "$ROOT/proc" ;;
            *) mount --bind "/$m" "$ROOT/$m" ;;
        esac
        mounted=("$ROOT/$m" "${mounted[@]}")
    fi
done
in_root() { chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/opt/venv/bin:/usr/bin:/bin \
                PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_DEFAULT_TIMEOUT=180 /bin/sh -c "$1"; }

if [ ! -e "$ROOT/opt/venv/.gelu_ext_deps" ]; then
    echo "== the virtualenv: build requirements and the test extra's packages (aarch64 wheels)"
    deps="$("${PYTHON:-python3}" -c 'import tomllib
p = tomllib.load(open("pyproject.toml", "rb"))
print(" ".join(repr(r) for r in p["build-system"]["requires"] + p["project"]["optional-dependencies"]["test"]))')"
    in_root "python3 -m venv /opt/venv && pip install --quiet --upgrade pip && pip install --quiet $deps" \
        > "$ROOT.deps.log" 2>&1 || { tail -n 20 "$ROOT.deps.log"; echo "FAIL: the virtualenv"; exit 1; }
    touch "$ROOT/opt/venv/.gelu_ext_deps"
fi

echo "== gelu_ext, built inside the root (pip, no build isolation)"
rm -rf "$ROOT/src/gelu_ext"
mkdir -p "$ROOT/src/gelu_ext"
git ls-files -z | xargs -0 cp --parents -t "$ROOT/src/gelu_ext"
in_root "cd /src/gelu_ext && pip install --quiet --no-build-isolation --no-deps . && rm -rf build" \
    > "$ROOT.build.log" 2>&1 || { tail -n 30 "$ROOT.build.log"; echo "FAIL: the build"; exit 1; }
in_root "cd / && python -c 'import platform, numpy, gelu_ext; from gelu_ext import _ufuncs as u
print(\"==\", platform.machine(), \"Python\", platform.python_version(), \"NumPy\", numpy.__version__,
      \"paths\", u.ISA_NAMES, \"best\", u._best_isa())'"

files="$FILES"
[ "$all" = 1 ] && files="tests"
# shellcheck disable=SC2086
status=0
in_root "cd /src/gelu_ext && pytest -q -p no:cacheprovider -m 'not slow and not idle' $(echo $files)" \
    > "$ROOT.pytest.log" 2>&1 || status=$?
tail -n 15 "$ROOT.pytest.log"
echo "aarch64_python.sh ($([ "$all" = 1 ] && echo "quick tier" || echo "ISA-dependent files")," \
     "under $(basename "$QEMU")): $(tail -n 1 "$ROOT.pytest.log" | tr -d '=') in $(( $(date +%s) - start )) s"
exit $status
