#!/usr/bin/env python3
"""Links the shipped pushctl from the objects of the one release compile, with the Swift runtime and Foundation
linked statically and without -export-dynamic (the Makefile's `release` and `build-tests` targets run it after
`swift build -c release`).

Why not `swift build --static-swift-stdlib`: that flag also compiles every module against the static resource
directory (usr/lib/swift_static), which has no Testing or XCTest module, so the test bundle cannot be built in the
same build; a second build with it compiled all ~800 modules again, BoringSSL twice included (13 of a CI run's 57
minutes, 2026-12-01). The objects do not depend on how the runtime is linked, so the link alone is redone here: the
command SwiftPM itself runs for pushctl (read from the build's llbuild manifest, so every object, library and
linker flag SwiftPM chose stays), plus `-static-stdlib` and `-Xlinker --no-export-dynamic` (see the Makefile's
`release` target for why each). The result replaces .build/release/pushctl; the Makefile runs this after every
release build, so the binary there is always the static one.

Usage: packaging/link-static.py [BUILD_DIR]   (default .build/release)
"""
import json
import os
import re
import subprocess
import sys


def fail(message):
    print(f"link-static: {message}", file=sys.stderr)
    sys.exit(1)


# .build/release is a link to .build/<triple>/release; the manifest is .build/release.yaml.
build = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else ".build/release")
manifest = os.path.join(os.path.dirname(os.path.dirname(build)), "release.yaml")
if not os.path.exists(manifest):
    fail(f"no release.yaml beside {build}: run swift build -c release first")

# The manifest is YAML whose `args:` values are JSON arrays: find the pushctl link command's.
text = open(manifest, encoding="utf-8").read()
block = re.search(r'^  "C\.pushctl-[^"]*-release\.exe":\n((?:    .*\n)+)', text, re.M)
if not block:
    fail(f"{manifest} has no link command for pushctl")
args_line = re.search(r"^    args: (\[.*\])$", block.group(1), re.M)
if not args_line:
    fail("the pushctl link command has no args")
args = json.loads(args_line.group(1))
output = args[args.index("-o") + 1]
if "-static-stdlib" in args:
    fail("the link command already has -static-stdlib (built with --static-swift-stdlib?)")
# The objects were compiled against the dynamic runtime's module files, whose autolink entries name only the .so
# libraries; the static module files (usr/lib/swift_static) also name what each static library needs in turn. Those
# are added here, in one group as swiftc -static-stdlib links them (the libraries an `import Foundation,
# FoundationNetworking, Dispatch, Synchronization` program autolinks with -static-stdlib; a member nothing uses is
# not linked in).
STATIC_RUNTIME = [
    "_CFURLSessionInterface", "BlocksRuntime", "dispatch", "swiftDispatch", "swiftSynchronization", "_FoundationICU",
    "CoreFoundation", "Foundation", "FoundationEssentials", "FoundationInternationalization", "FoundationNetworking",
    "_FoundationCShims", "_FoundationCollections", "curl", "m", "pthread", "util", "dl",
]
args += ["-static-stdlib", "-Xlinker", "--no-export-dynamic", "-Xlinker", "--start-group"]
# Each through -Xlinker: swiftc moves plain -l options elsewhere on the line, out of the group.
for lib in STATIC_RUNTIME:
    args += ["-Xlinker", f"-l{lib}"]
args += ["-Xlinker", "--end-group"]
tmp = output + ".static"
args[args.index("-o") + 1] = tmp
result = subprocess.run(args)
if result.returncode != 0:
    fail(f"the static link failed (exit {result.returncode})")
# The runtime must be in the binary, not loaded: no libswiftCore or libFoundation among its needed libraries.
needed = subprocess.run(["readelf", "-d", tmp], capture_output=True, text=True).stdout
swift_libs = re.findall(r"\[(libswift[^\]]*|libFoundation[^\]]*|libdispatch[^\]]*)\]", needed)
if swift_libs:
    os.unlink(tmp)
    fail(f"the linked pushctl still needs {', '.join(swift_libs)}")
os.replace(tmp, output)
print(f"link-static: {os.path.relpath(output)} linked with the static Swift runtime ({os.path.getsize(output):,} bytes)")
