#!/usr/bin/env bash
# Micro-benchmark: the pure-Swift Argon2 module vs Debian's libargon2 (the C
# reference implementation), same inputs, same parameters, one thread each.
#
#   scripts/bench-argon2.sh [runs] [memoryKiB] [iterations] [parallelism]
#   (defaults: 21 runs at the server's policy m=19456 KiB, t=2, p=1)
#
# Each side hashes once to warm up, then reports the median of `runs` timed
# hashes (wall clock, CLOCK_MONOTONIC). Both produce the same tag, which the
# script checks, so the comparison is like for like.
#
# The Swift side is built in release mode from a throwaway package in
# $ARGON2_BENCH_DIR (default /tmp/argon2-bench) that symlinks GatehouseSDK/Sources/Argon2,
# so the benchmark never touches the project's own build. Plain `-O` (no
# -Ounchecked), as in the real package.
set -euo pipefail

RUNS="${1:-21}"
M="${2:-19456}"
T="${3:-2}"
P="${4:-1}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${ARGON2_BENCH_DIR:-/tmp/argon2-bench}"

# libargon2 headers and a C compiler; installs only what is missing.
if [ ! -f /usr/include/argon2.h ] || ! command -v cc >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && apt-get install -y -qq libargon2-dev gcc >/dev/null
    else
        echo "need libargon2-dev and a C compiler (apt-get install libargon2-dev gcc)" >&2
        exit 1
    fi
fi

mkdir -p "$DIR/Sources/Argon2Bench" "$DIR/c"
ln -sfn "$REPO/GatehouseSDK/Sources/Argon2" "$DIR/Sources/Argon2"

cat >"$DIR/Package.swift" <<'EOF'
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "argon2bench",
    targets: [
        .target(name: "Argon2", path: "Sources/Argon2"),
        .executableTarget(name: "Argon2Bench", dependencies: ["Argon2"], path: "Sources/Argon2Bench"),
    ],
    swiftLanguageModes: [.v6]
)
EOF

cat >"$DIR/Sources/Argon2Bench/main.swift" <<'EOF'
import Argon2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let args = CommandLine.arguments
let runs = Int(args[1])!
let params = Argon2Parameters(memoryKiB: UInt32(args[2])!, iterations: UInt32(args[3])!, parallelism: UInt32(args[4])!)
let password = Array("password".utf8)
let salt = Array("somesalt12345678".utf8)

func nowMs() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) * 1e3 + Double(ts.tv_nsec) / 1e6
}

var tag = try Argon2.hash(password: password, salt: salt, parameters: params)  // warm-up
var times: [Double] = []
for _ in 0..<runs {
    let start = nowMs()
    tag = try Argon2.hash(password: password, salt: salt, parameters: params)
    times.append(nowMs() - start)
}
times.sort()
let median = runs % 2 == 1 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2
let hex = tag.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
print("tag \(hex)")
print("median_ms \(median)")
EOF

cat >"$DIR/c/bench.c" <<'EOF'
#include <argon2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
int main(int argc, char **argv) {
    if (argc != 5) return 2;
    int runs = atoi(argv[1]);
    uint32_t m = (uint32_t)atol(argv[2]), t = (uint32_t)atol(argv[3]), p = (uint32_t)atol(argv[4]);
    const char *pwd = "password", *salt = "somesalt12345678";
    uint8_t tag[32];
    double *times = malloc(sizeof(double) * runs);
    if (argon2id_hash_raw(t, m, p, pwd, strlen(pwd), salt, strlen(salt), tag, 32) != ARGON2_OK) return 1;
    for (int i = 0; i < runs; i++) {
        double start = now_ms();
        if (argon2id_hash_raw(t, m, p, pwd, strlen(pwd), salt, strlen(salt), tag, 32) != ARGON2_OK) return 1;
        times[i] = now_ms() - start;
    }
    qsort(times, runs, sizeof(double), cmp);
    double median = runs % 2 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2;
    printf("tag ");
    for (int i = 0; i < 32; i++) printf("%02x", tag[i]);
    printf("\nmedian_ms %.3f\n", median);
    return 0;
}
EOF

echo "building (swift release, gcc -O2)..." >&2
(cd "$DIR" && swift build -c release --product Argon2Bench >/dev/null)
cc -O2 -o "$DIR/c/bench" "$DIR/c/bench.c" -largon2

echo "m=${M} KiB, t=${T}, p=${P}, median of ${RUNS} hashes each"
c_out="$("$DIR/c/bench" "$RUNS" "$M" "$T" "$P")"
swift_out="$("$DIR/.build/release/Argon2Bench" "$RUNS" "$M" "$T" "$P")"

c_tag="$(sed -n 's/^tag //p' <<<"$c_out")"
swift_tag="$(sed -n 's/^tag //p' <<<"$swift_out")"
c_ms="$(sed -n 's/^median_ms //p' <<<"$c_out")"
swift_ms="$(sed -n 's/^median_ms //p' <<<"$swift_out")"

if [ "$c_tag" != "$swift_tag" ]; then
    echo "TAG MISMATCH: libargon2 $c_tag vs Swift $swift_tag" >&2
    exit 1
fi
printf 'libargon2:               %8.3f ms  (Debian %s)\n' "$c_ms" "$(dpkg-query -W -f='${Version}' libargon2-1 2>/dev/null || echo '?')"
printf 'Swift Argon2 module:     %8.3f ms\n' "$swift_ms"
awk -v s="$swift_ms" -v c="$c_ms" 'BEGIN { printf "ratio Swift/libargon2:   %8.3f     (goal <= 1.5)\n", s / c }'
