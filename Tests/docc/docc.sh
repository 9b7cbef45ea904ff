#!/usr/bin/env bash
# DocC documentation of PushProviderClient (`make docs`, run by make test): the symbol graph of the module the
# debug build made (swift-symbolgraph-extract: no second build, no flags that would rebuild it) and the catalog
# Sources/PushProviderClient/PushProviderClient.docc, converted by the toolchain's `docc` with warnings as errors,
# so a broken ``Symbol`` link or a catalog page naming something that no longer exists fails the build. Writes
# .build/docs/PushProviderClient.doccarchive (a static site: serve the directory, open
# /documentation/pushproviderclient) and checks that it has the landing page, with the code an app needs, and a
# page for every public type of the module.
#   bash Tests/docc/docc.sh [.build/debug]
# No swift-docc-plugin: a package dependency would be fetched by every app that depends on this package for the
# client library (SwiftPM resolves all of a manifest's dependencies); the toolchain's docc needs none.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/.build/debug}
fail() { echo "docc: FAIL: $*" >&2; exit 1; }
TOOLBIN=$(dirname "$(readlink -f "$(command -v swift)")")
DOCC=$TOOLBIN/docc
EXTRACT=$TOOLBIN/swift-symbolgraph-extract
[ -x "$DOCC" ] || fail "no docc beside swift ($TOOLBIN)"
[ -x "$EXTRACT" ] || fail "no swift-symbolgraph-extract beside swift ($TOOLBIN)"
[ -e "$BUILD/Modules/PushProviderClient.swiftmodule" ] || fail "no PushProviderClient module in $BUILD/Modules (swift build first)"
OUT=$ROOT/.build/docs/PushProviderClient.doccarchive
WORK=$(mktemp -d /tmp/pushprovider-docc.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/symbols" "$(dirname "$OUT")"
"$EXTRACT" -module-name PushProviderClient -I "$BUILD/Modules" -target "$(uname -m)-unknown-linux-gnu" \
  -minimum-access-level public -output-dir "$WORK/symbols" > "$WORK/extract.log" 2>&1 \
  || { cat "$WORK/extract.log"; fail "swift-symbolgraph-extract failed"; }
rm -rf "$OUT"
"$DOCC" convert "$ROOT/Sources/PushProviderClient/PushProviderClient.docc" \
  --additional-symbol-graph-dir "$WORK/symbols" --output-path "$OUT" \
  --fallback-display-name PushProviderClient --fallback-bundle-identifier com.pushprovider.PushProviderClient \
  --warnings-as-errors > "$WORK/convert.log" 2>&1 || { cat "$WORK/convert.log"; fail "docc convert reported errors or warnings"; }
DATA=$OUT/data/documentation
[ -f "$DATA/pushproviderclient.json" ] || fail "the archive has no landing page"
python3 - "$WORK/symbols/PushProviderClient.symbols.json" "$DATA" <<'PY'
import json, os, sys
graph, data = json.load(open(sys.argv[1])), sys.argv[2]
types = sorted({s["pathComponents"][0] for s in graph["symbols"] if len(s["pathComponents"]) == 1})
missing = [t for t in types if not os.path.exists(os.path.join(data, "pushproviderclient", t.lower() + ".json"))]
if missing:
    sys.exit(f"docc: FAIL: no page for {', '.join(missing)}")
landing = json.load(open(os.path.join(data, "pushproviderclient.json")))
code = [l for s in landing.get("primaryContentSections", []) for c in s.get("content", [])
        if c.get("type") == "codeListing" for l in c.get("code", [])]
if not any("Installation(configuration:" in l for l in code):
    sys.exit("docc: FAIL: the landing page has no code listing that makes an Installation")
print(f"docc: {len(types)} public types, each with a page; the landing page shows {len(code)} lines of code")
PY
echo "docc: $OUT"
echo "docc: PASS"
