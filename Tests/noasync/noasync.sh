#!/usr/bin/env bash
# The blocking store API is `noasync`: async code (request handlers, the engine) cannot call it, and the compiler
# says so, on the protocols and on each concrete backend. Type-checks fixtures against the built modules
# (.build/debug by default):
#   async-api.swift                   the async API (`run { }`, `perform { }`) and blocking calls from sync code,
#                                     through the protocols and the concrete backends: compiles
#   registry-in-async.swift           RegistryStore called from an async function: must fail, naming noasync
#   delivery-store-in-async.swift     DeliveryStore called from an async function: must fail, naming noasync
#   sqlite-registry-in-async.swift    SQLiteRegistry (the concrete type) called from async: must fail, naming noasync
#   postgres-registry-in-async.swift  PostgresRegistry (the concrete type) called from async: must fail, naming noasync
# The first one passing shows the module flags are right, so the others fail for the reason they are meant to.
#   bash Tests/noasync/noasync.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-.build/debug}
SWIFTC=${SWIFTC:-swiftc}
[ -d "$BUILD/Modules" ] || { echo "noasync: FAIL: no $BUILD/Modules (run swift build --build-tests first)" >&2; exit 1; }
flags=(-typecheck -swift-version 6 -I "$BUILD/Modules")
# C modules: the generated module maps of C targets, the include directories of packages' C targets (their own
# module maps), and this package's system-library module maps.
while IFS= read -r map; do flags+=(-Xcc "-fmodule-map-file=$map"); done < <(find "$BUILD/" -maxdepth 2 -name module.modulemap)
while IFS= read -r dir; do flags+=(-Xcc "-I$dir"); done < <(find .build/checkouts -type d -path '*/Sources/*/include' 2>/dev/null)
for map in Sources/C*/module.modulemap; do flags+=(-Xcc "-fmodule-map-file=$map"); done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
if "$SWIFTC" "${flags[@]}" Tests/noasync/async-api.swift >"$out" 2>&1; then
  echo "noasync: async-api.swift compiles"
else
  echo "noasync: FAIL: async-api.swift does not compile, so the fixtures prove nothing:" >&2
  head -20 "$out" >&2
  exit 1
fi
for fixture in registry-in-async delivery-store-in-async sqlite-registry-in-async postgres-registry-in-async; do
  if "$SWIFTC" "${flags[@]}" "Tests/noasync/$fixture.swift" >"$out" 2>&1; then
    echo "noasync: FAIL: $fixture.swift compiled: the blocking store API is callable from async code" >&2
    fail=1
  elif grep -q "unavailable from asynchronous contexts" "$out"; then
    echo "noasync: $fixture.swift refused: $(grep -m1 'unavailable from asynchronous contexts' "$out" | sed 's/^.*error: //')"
  else
    echo "noasync: FAIL: $fixture.swift did not compile, but not because of noasync:" >&2
    head -20 "$out" >&2
    fail=1
  fi
done
exit $fail
