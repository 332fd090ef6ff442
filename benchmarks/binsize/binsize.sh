#!/usr/bin/env bash
# Prints, for each program under benchmarks/binsize, the binary's size
# (go build, default flags), the packages it links whose path has a dot
# (go list -deps | grep -c '\.', the issue's count, which also counts the
# program itself and the standard library's vendored golang.org/x
# packages), the non-standard ones alone (go list -deps -f '{{.Standard}}',
# the program itself left out), and how many of them are gRPC's
# (google.golang.org/grpc...), and the binary's size again built with
# -tags grpcnotrace (gRPC's tag that leaves out golang.org/x/net/trace and,
# with it, text/template, whose MethodByName turns the linker's dead method
# elimination off). Run from anywhere:
#
#   benchmarks/binsize/binsize.sh > benchmarks/results/binsize-$(git rev-parse --short HEAD).txt
set -euo pipefail
cd "$(dirname "$0")"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '# %s %s/%s, commit %s\n' "$(go env GOVERSION)" "$(go env GOOS)" "$(go env GOARCH)" "$(git rev-parse --short HEAD)"
printf '%-20s %12s %8s %8s %8s %6s %12s\n' program bytes MB dotted nonstd grpc notrace
for dir in */; do
	p=${dir%/}
	go build -o "$out/$p" "./$p"
	bytes=$(stat -c %s "$out/$p")
	go build -tags grpcnotrace -o "$out/$p.notrace" "./$p"
	notrace=$(stat -c %s "$out/$p.notrace")
	deps=$(go list -deps "./$p")
	pkgs=$(grep -c '\.' <<<"$deps" || true)
	nonstd=$(go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' "./$p" | grep -vc '/binsize/' || true)
	grpc=$(grep -c '^google.golang.org/grpc' <<<"$deps" || true)
	printf '%-20s %12d %8.1f %8d %8d %6d %12d\n' "$p" "$bytes" "$(echo "$bytes/1000000" | bc -l)" "$pkgs" "$nonstd" "$grpc" "$notrace"
done
