#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ (libFuzzer), each for a given time, and prints (at the
# end, on stdout) one line per target: runs, crashes, corpus size, execs per second, peak RSS.
# Exits non-zero when any target crashed (or failed to build or run); the crashing inputs are in
# fuzz/artifacts/<target>/.
#
#   scripts/fuzz.sh [--time SECONDS] [--jobs N] [--sanitizer none|address] [TARGET...]
#
# --time: per target (default 600). --jobs: parallel fuzzing processes per target (default 1).
# --sanitizer: the targets call safe Rust only, so the default is none (faster to build and
# run); `address` adds AddressSanitizer. No TARGET: every target of fuzz/Cargo.toml.
#
# cargo-fuzz needs a nightly compiler's flags; on a stable toolchain RUSTC_BOOTSTRAP=1 lets it
# use them. cargo-fuzz is installed (cargo install) when missing. The corpus grows in
# fuzz/corpus/<target>/ (not committed), seeded from fuzz/seeds/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

time=600
jobs=1
sanitizer=none
targets=()
while (($#)); do
    case $1 in
    --time) time=$2; shift 2 ;;
    --time=*) time=${1#*=}; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --jobs=*) jobs=${1#*=}; shift ;;
    --sanitizer) sanitizer=$2; shift 2 ;;
    --sanitizer=*) sanitizer=${1#*=}; shift ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
    esac
done
[[ $time =~ ^[0-9]+$ && $jobs =~ ^[0-9]+$ && $jobs -ge 1 ]] || {
    echo "fuzz.sh: --time and --jobs take a number" >&2
    exit 2
}

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi
export RUSTC_BOOTSTRAP=1

cd fuzz
if ((${#targets[@]} == 0)); then
    mapfile -t targets < <(cargo fuzz list)
fi
if ((${#targets[@]} == 1)); then
    cargo fuzz build --sanitizer "$sanitizer" "${targets[0]}" >&2
else
    cargo fuzz build --sanitizer "$sanitizer" >&2
fi

failed=0
summary=()
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "seeds/$t" "artifacts/$t"
    log=$(mktemp "${TMPDIR:-/tmp}/fuzz-$t.XXXXXX")
    before=$(find "artifacts/$t" -type f | wc -l)
    echo "fuzz.sh: $t for ${time}s" >&2
    status=0
    # -max_total_time bounds each process; -jobs runs several, each with its own log.
    args=(-max_total_time="$time" -print_final_stats=1)
    if ((jobs > 1)); then
        args+=(-jobs="$jobs" -workers="$jobs")
    fi
    # A temporary directory of its own (yaml_loader writes its input file there).
    work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-$t.XXXXXX")
    TMPDIR=$work cargo fuzz run --sanitizer "$sanitizer" "$t" "corpus/$t" "seeds/$t" -- \
        "${args[@]}" >"$log" 2>&1 || status=$?
    rm -rf "$work"
    if ((jobs > 1)); then
        cat fuzz-*.log >>"$log" 2>/dev/null || true
        rm -f fuzz-*.log
    fi
    after=$(find "artifacts/$t" -type f | wc -l)
    crashes=$((after - before))
    # libFuzzer's final stats: stat::number_of_executed_units (one line per process).
    runs=$(awk '/stat::number_of_executed_units/ {s += $NF} END {print s + 0}' "$log")
    rate=$(awk '/stat::average_exec_per_sec/ {s += $NF} END {print s + 0}' "$log")
    rss=$(awk '/stat::peak_rss_mb/ {if ($NF > m) m = $NF} END {print m + 0}' "$log")
    corpus=$(find "corpus/$t" -type f | wc -l)
    if ((status != 0 || crashes > 0)); then
        failed=1
        ((crashes > 0)) || crashes="? (exit $status)"
        tail -n 40 "$log" >&2
        line="$t: FAILED runs=$runs crashes=$crashes corpus=$corpus time=${time}s"
        line+=" exec/s=$rate rss=${rss}MB log=$log"
    else
        line="$t: ok runs=$runs crashes=0 corpus=$corpus time=${time}s exec/s=$rate rss=${rss}MB"
        rm -f "$log"
    fi
    echo "$line" >&2
    summary+=("$line")
done
printf '%s\n' "${summary[@]}"
exit "$failed"
