#!/usr/bin/env bash
# Prints, for each program under benchmarks/binsize, the binary's size
# (go build, default flags), the packages it links whose path has a dot
# (go list -deps | grep -c '\.', the issue's count, which also counts the
# program itself and the standard library's vendored golang.org/x
# packages), the non-standard ones alone (go list -deps -f '{{.Standard}}',
# the program itself left out), and how many of them are gRPC's
# (google.golang.org/grpc...). Run from anywhere:
#
#   benchmarks/binsize/binsize.sh > benchmarks/results/binsize-$(git rev-parse --short HEAD).txt
set -euo pipefail
cd "$(dirname "$0")"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '# %s %s/%s, commit %s\n' "$(go env GOVERSION)" "$(go env GOOS)" "$(go env GOARCH)" "$(git rev-parse --short HEAD)"
printf '%-20s %12s %8s %8s %8s %6s\n' program bytes MB dotted nonstd grpc
for dir in */; do
	p=${dir%/}
	go build -o "$out/$p" "./$p"
	bytes=$(stat -c %s "$out/$p")
	deps=$(go list -deps "./$p")
	pkgs=$(grep -c '\.' <<<"$deps" || true)
	nonstd=$(go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' "./$p" | grep -vc '/binsize/' || true)
	grpc=$(grep -c '^google.golang.org/grpc' <<<"$deps" || true)
	printf '%-20s %12d %8.1f %8d %8d %6d\n' "$p" "$bytes" "$(echo "$bytes/1000000" | bc -l)" "$pkgs" "$nonstd" "$grpc"
done
