#!/usr/bin/env bash
# An app's view of this repository: a new package that depends on it (by path, as an app depends on it by URL) and
# uses only the PushProviderClient product. SwiftPM resolves — fetches — every dependency of this package's
# manifest (it cannot do otherwise), but must build only the client: the script fails unless the build products
# are exactly the client's module and the consumer's own (no NIO*, Hummingbird*, PostgresNIO, Crypto, Logging, or
# PushCore/PushStore/PushServer… module or object directory). The consumer then runs: it saves against an address
# nothing listens on and must find its change kept as pending on disk (the library linked and works on Linux).
# It prints what it fetched and built, and how long each took (the numbers in README "In your app").
#   bash Tests/client/consumer.sh            (SWIFT=swift by default)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SWIFT=${SWIFT:-swift}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pushprovider-consumer.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "consumer: FAIL: $*" >&2; exit 1; }

# The dependency's identity is its directory's name (a clone may be called anything).
IDENTITY=$(basename "$ROOT" | tr '[:upper:]' '[:lower:]')
mkdir -p "$WORK/Consumer/Sources/Consumer"
cat > "$WORK/Consumer/Package.swift" <<SWIFT
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v14), .iOS(.v15)],
    dependencies: [.package(path: "$ROOT")],
    targets: [
        .executableTarget(name: "Consumer", dependencies: [.product(name: "PushProviderClient", package: "$IDENTITY")]),
    ]
)
SWIFT
cat > "$WORK/Consumer/Sources/Consumer/main.swift" <<'SWIFT'
import Foundation
import PushProviderClient

// Port 9 (discard) on loopback: nothing answers, so the change must end up pending on disk.
let state = URL(fileURLWithPath: CommandLine.arguments[1])
let installation = try Installation(
    configuration: ClientConfiguration(serverURL: URL(string: "http://127.0.0.1:9")!, app: "example", registrationKey: "k"),
    stateDirectory: state, facts: DeviceFacts(timeZone: "Europe/Berlin", locale: "de-DE", appVersion: "1.0"),
    retry: RetryPolicy(maxAttempts: 1))
await installation.setDeviceToken(Data(repeating: 0xab, count: 32))
await installation.subscribe("news")
let outcome = try await installation.save()
guard case .pending(let why) = outcome, why.code == "unreachable" else {
    print("unexpected outcome: \(outcome)")
    exit(1)
}
let saved = try String(contentsOf: state.appendingPathComponent("installation.json"), encoding: .utf8)
guard saved.contains(String(repeating: "ab", count: 32)), saved.contains("news") else {
    print("the pending change is not on disk: \(saved)")
    exit(1)
}
print("pending (\(why.code)); kept in installation.json")
SWIFT

cd "$WORK/Consumer"
start=$(date +%s)
"$SWIFT" package resolve >"$WORK/resolve.log" 2>&1 || { cat "$WORK/resolve.log"; fail "swift package resolve"; }
resolved=$(date +%s)
"$SWIFT" build >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; fail "swift build"; }
built=$(date +%s)

fetched=$(find .build/checkouts -mindepth 1 -maxdepth 1 -type d | wc -l)
fetched_mb=$(du -sm .build/checkouts | cut -f1)
# Every Swift module the build produced, and every target directory holding object files: exactly the client and
# the consumer. (SwiftPM makes a directory per target of the whole graph while planning; an unbuilt one stays
# without objects.)
modules=$(find .build/debug/ -name '*.swiftmodule' -not -path '*/ModuleCache/*' -exec basename {} .swiftmodule \; | sort -u | tr '\n' ' ')
objects=$(find .build/debug/ -mindepth 2 -name '*.o' -path '.build/debug/*.build/*' | sed -E 's|.*/([^/]+)\.build/.*|\1|' | sort -u | tr '\n' ' ')
compiled=$(grep -c '^\[[0-9]*/[0-9]*\] Compiling' "$WORK/build.log" || true)
echo "consumer: fetched $fetched packages (${fetched_mb} MB of checkouts) in $((resolved - start)) s; built in $((built - resolved)) s: modules [ ${modules}], object directories [ ${objects}], $compiled compile steps"
[ "$modules" = "Consumer PushProviderClient " ] || fail "the consumer built more (or less) than PushProviderClient: modules [ ${modules}]"
[ "$objects" = "Consumer PushProviderClient " ] || fail "the consumer compiled more (or less) than PushProviderClient: [ ${objects}]"
if grep -E 'Compiling (NIO|Hummingbird|PostgresNIO|Crypto|Logging|PushCore|PushStore|PushSender|PushDelivery|PushServer|PushSimulator)' "$WORK/build.log" >/dev/null; then
  fail "a server module was compiled: $(grep -E 'Compiling (NIO|Hummingbird|PostgresNIO|Crypto|Logging|Push[A-Z]|APNs)' "$WORK/build.log" | head -3)"
fi
out=$(.build/debug/Consumer "$WORK/state") || fail "the consumer did not run: $out"
echo "consumer: $out"
echo "consumer: PASS"
