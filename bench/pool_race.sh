#!/usr/bin/env bash
# ThreadSanitizer run of src/runtime/gx_pool.c alone (bench/pool_race.c): callers
# competing for the pool, then a forked child.  Exit status 0 = no race, all
# results right.  Backoff is compiled out so every job is threaded.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
${CC:-gcc} -O1 -g -fsanitize=thread -pthread -Wall -DGX_BACKOFF_MAX_CALLS=0 -Isrc \
    bench/pool_race.c src/runtime/gx_pool.c -o "$out/pool_race"
# the child starts threads after fork(), which TSan must be told to allow
TSAN_OPTIONS="die_after_fork=0 halt_on_error=1" "$out/pool_race"
