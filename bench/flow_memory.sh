#!/usr/bin/env bash
# Peak memory against the arrival window (issue 38, part 1): seed004_sfc_benefits (its base:
# 320 hosts, Google RPC at 50% load) with new flows arriving for each window given, run by
# the core runner (`cargo build --release -p dcnsim-core --example run_scenario`) of each
# build given, all at once (one core each). Prints one line per run: build, window, wall time
# and the runner's lines (its peak RSS: the kernel's VmHWM at the end, results included; a
# stopped run's is the last VmHWM read while it ran).
#   bench/flow_memory.sh "new=target/release/examples/run_scenario old=/tmp/old/..." 10ms 50ms
# A run still going after $LIMIT seconds (default 560) is stopped and says so, with the
# peak it had reached.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
builds=$1
shift
LIMIT=${LIMIT:-560}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=python/dcnsim/scenarios/seed004_sfc_benefits.toml
for w in "$@"; do
    sed -e "s/^arrivals_for = .*/arrivals_for = \"$w\"/" "$src" >"$work/arrivals_$w.toml"
done
measure() { # name binary window
    local out=$work/$1_$3
    local t0=$SECONDS
    "$2" "$work/arrivals_$3.toml" >"$out.txt" 2>&1 &
    local pid=$! peak=0 hwm
    while kill -0 $pid 2>/dev/null; do
        hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status 2>/dev/null)
        [ -n "$hwm" ] && peak=$hwm
        if [ $((SECONDS - t0)) -ge "$LIMIT" ]; then
            kill $pid
            echo "(stopped after ${LIMIT}s)" >>"$out.txt"
            break
        fi
        sleep 0.5
    done
    wait $pid 2>/dev/null
    grep -q peak_rss_mb "$out.txt" || echo "peak_rss_mb=$((peak / 1024)) (while running)" >>"$out.txt"
    printf '%s arrivals_for=%s wall_s=%d %s\n' "$1" "$3" $((SECONDS - t0)) "$(tr '\n' ' ' <"$out.txt")"
}
for b in $builds; do
    for w in "$@"; do
        measure "${b%%=*}" "${b#*=}" "$w" &
    done
done
wait
