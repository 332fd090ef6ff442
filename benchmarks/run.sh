#!/usr/bin/env bash
# Runs the benchmarks of docs/performance.md and prints the tables of its
# pages (docs/benchmark-results.md, docs/benchmark-call-time.md,
# docs/benchmark-own-provider.md; the method: docs/benchmark-method.md):
#
#   - BenchmarkCall: the logging call (Info, 5 fields and a context) through
#     each contender on its own default pipeline, exporting over OTLP/gRPC to
#     cmd/otlpsink in another process; besides zap alone, the official
#     bridge and zaplens, zaplens-noids (no ids in the user's JSON line);
#   - the same with the receiver paused for each timed loop: the call with
#     no export work competing, a lower bound for every contender;
#   - BenchmarkBusyRank: the busy rank (10 steps x 10,000 lines, with 0.5 s of
#     compute between steps and back to back), the same pipelines but
#     zaplens-noids;
#   - BenchmarkLine and BenchmarkLever: cases 1-7 in one process, every bridge
#     on one sdk/log provider of the user's own whose exporter counts and
#     discards;
#   - CPU profiles of BenchmarkCall for zap alone, the official bridge and
#     zaplens, split by package, and the top functions of zaplens's;
#   - the charts (cmd/charts): the call's time and CPU per delivered line,
#     the share delivered and the peak heap, drawn from call.txt and
#     busy.txt into docs/img/*.svg.
#
# Raw results go to benchmarks/results/.
#
#   benchmarks/run.sh                 # about 8 minutes on 2 cores (484 s at
#                                     # f315d41: results/runsh-time-f315d41.txt)
#   COUNT=10 BUSY_COUNT=8 benchmarks/run.sh
set -euo pipefail
cd "$(dirname "$0")"

COUNT=${COUNT:-8}              # rounds; benchstat wants 6 or more for a 95% interval
BENCHTIME=${BENCHTIME:-500ms}  # per run of each BenchmarkLine and BenchmarkLever case
CALL_LINES=${CALL_LINES:-100000} # lines per run of BenchmarkCall: one busy-rank burst
BUSY_COUNT=${BUSY_COUNT:-6}    # rounds of BenchmarkBusyRank (~40 s each)
PAUSED_COUNT=${PAUSED_COUNT:-6} # rounds of BenchmarkCall with the receiver paused (~3 s each)
PROFILE_LINES=${PROFILE_LINES:-1000000} # lines of the profiled BenchmarkCall runs
BENCHSTAT_VERSION=v0.0.0-20260908200009-22c9c6c9d4da
benchstat() { go run "golang.org/x/perf/cmd/benchstat@${BENCHSTAT_VERSION}" "$@"; }

out=results
mkdir -p "$out"
go test -c -o "$out/bench.test" .
go build -o "$out/otlpsink" ./cmd/otlpsink
export ZAPLENS_BENCH_SINK="$PWD/$out/otlpsink"
# From this directory, so that the profiles land where -test.cpuprofile
# says. The pipelines' own messages (zaplens's loss report) go to stderr.txt.
: > "$out/stderr.txt"
bench() { "$out/bench.test" -test.run='^$' "$@" 2>> "$out/stderr.txt"; }

{
	echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(go version)"
	echo "code: $(git rev-parse --short HEAD)$(git status --porcelain --untracked-files=no -- .. ':!.' ':!../docs' | awk 'NR==1{printf " + uncommitted:"} {printf " %s", $2}')"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/machine.txt"
cat "$out/machine.txt" >&2

# One run of every benchmark at a time, COUNT times over, so that a burst
# of load from elsewhere on the machine falls on all contenders alike.
echo "BenchmarkCall, BenchmarkLine, BenchmarkLever: $COUNT rounds" >&2
: > "$out/call.txt"
: > "$out/line.txt"
: > "$out/lever.txt"
for i in $(seq "$COUNT"); do
	echo "round $i" >&2
	bench -test.bench='^BenchmarkCall$' -test.benchmem -test.benchtime="${CALL_LINES}x" >> "$out/call.txt"
	bench -test.bench='^BenchmarkLine$' -test.benchmem -test.benchtime="$BENCHTIME" >> "$out/line.txt"
	bench -test.bench='^BenchmarkLever$' -test.benchmem -test.benchtime="$BENCHTIME" >> "$out/lever.txt"
done

echo "BenchmarkBusyRank: $BUSY_COUNT rounds of 10 steps x 10,000 lines" >&2
: > "$out/busy.txt"
for i in $(seq "$BUSY_COUNT"); do
	ZAPLENS_BENCH_BUSY=full bench -test.bench='^BenchmarkBusyRank$' -test.benchtime=1x | tee -a "$out/busy.txt" >&2
done

# The receiver paused (SIGSTOP) for each loop: every exporter blocks on it,
# so the call runs with no export work competing.
echo "BenchmarkCall, receiver paused: $PAUSED_COUNT rounds" >&2
: > "$out/call-paused.txt"
for i in $(seq "$PAUSED_COUNT"); do
	ZAPLENS_BENCH_PAUSE_SINK=1 bench -test.bench='^BenchmarkCall$' -test.benchmem -test.benchtime="${CALL_LINES}x" >> "$out/call-paused.txt"
done

echo "profiles of BenchmarkCall" >&2
for b in zap official zaplens; do
	bench -test.bench="^BenchmarkCall\$/^bridge=$b\$" -test.benchtime="${PROFILE_LINES}x" \
		-test.cpuprofile="$out/call-$b.prof" >&2
done
go tool pprof -top -nodecount=30 "$out/bench.test" "$out/call-zaplens.prof" > "$out/call-zaplens-top.txt" 2>/dev/null
go tool pprof -top -cum -nodecount=40 "$out/bench.test" "$out/call-zaplens.prof" > "$out/call-zaplens-cum.txt" 2>/dev/null

benchstat -col /bridge "$out/call.txt" > "$out/call-benchstat.txt"
benchstat -col /bridge "$out/call-paused.txt" > "$out/call-paused-benchstat.txt"
benchstat -col /bridge -row /compute "$out/busy.txt" > "$out/busy-benchstat.txt"
benchstat -col /bridge -row /case "$out/line.txt" > "$out/line-benchstat.txt"
benchstat -col /bridge -row /lever "$out/lever.txt" > "$out/lever-benchstat.txt"

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
go run ./cmd/charts -call "$out/call.txt" -busy "$out/busy.txt" -out ../docs/img
cat "$out/machine.txt"
echo
echo "## The logging call, to a receiver in another process"
echo
benchstat -col /bridge -format csv "$out/call.txt" 2>/dev/null | go run ./cmd/benchtable -call -raw "$out/call.txt"
echo
echo "## The logging call, the receiver paused during the loop"
echo
benchstat -col /bridge -format csv "$out/call-paused.txt" 2>/dev/null | go run ./cmd/benchtable -call -raw "$out/call-paused.txt"
echo
echo "## The busy rank"
echo
benchstat -col /bridge -row /compute -format csv "$out/busy.txt" 2>/dev/null | go run ./cmd/benchtable -busy -raw "$out/busy.txt"
echo
echo "## Cases 1-7, on a provider of the user's own"
echo
benchstat -col /bridge -row /case -format csv "$out/line.txt" 2>/dev/null | go run ./cmd/benchtable
echo
echo "## Case 1 with the levers a user has"
echo
benchstat -col /bridge -row /lever -format csv "$out/lever.txt" 2>/dev/null | go run ./cmd/benchtable
for b in zap official zaplens; do
	echo
	echo "## BenchmarkCall CPU profile: $b"
	echo
	go run ./cmd/profsplit "$out/call-$b.prof"
done
echo
echo "## BenchmarkCall CPU profile: zaplens, top functions"
echo
echo '```'
sed -n '1,40p' "$out/call-zaplens-top.txt"
echo '```'
