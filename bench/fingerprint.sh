#!/usr/bin/env bash
# Proof that an engine change leaves outputs identical: run every shipped scenario that is
# small (the *_small ones, the examples, the test scenarios) to its end and the bench
# scenarios (but the largest fat trees) for 300 simulated microseconds, and compare the
# per-run fingerprint (events, hashes of flows/ports/queues tables and summary) with
# bench/fingerprints.txt.
#   bench/fingerprint.sh              compare (exit 1 on any difference)
#   bench/fingerprint.sh --update     rewrite bench/fingerprints.txt (a deliberate model change)
#   bench/fingerprint.sh --threads N  compare the same runs split over N threads with the
#                                     one-thread fingerprints (split runs are byte-identical)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release -q -p dcnsim-core --example fingerprint
FP=target/release/examples/fingerprint
S=python/dcnsim/scenarios
THREADS=()
if [ "${1:-}" = "--threads" ]; then
    THREADS=(--threads "$2")
    shift 2
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
{
    "$FP" "${THREADS[@]}" $S/*_small.toml $S/dumbbell_dctcp.toml $S/incast_reno_vs_dctcp.toml $S/leaf_spine_dctcp.toml \
        $S/roce_incast_pfc.toml tests/scenarios/*.toml bench/fingerprint/*.toml
    # k = 48-64 (issue 38's largest fabrics) are k = 40's fabric grown: they would add about
    # a minute here and check nothing k = 40 does not
    "$FP" "${THREADS[@]}" --limit-us 300 $(ls bench/scenarios/*.toml | grep -v -E 'fat_tree_k(48|56|64|74)_')
} >"$out"
if [ "${1:-}" = "--update" ]; then
    [ ${#THREADS[@]} -eq 0 ] || { echo "--update writes one thread's fingerprints" >&2; exit 2; }
    cp "$out" bench/fingerprints.txt
    echo "wrote bench/fingerprints.txt ($(wc -l <"$out") runs)"
elif diff -u bench/fingerprints.txt "$out"; then
    echo "fingerprints identical ($(wc -l <"$out") runs${THREADS[1]:+, ${THREADS[1]} threads})"
else
    echo "fingerprints differ" >&2
    exit 1
fi
