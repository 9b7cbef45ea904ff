# A libcurl >= 8.5 beside the system's (Debian 12: 7.88), never installed over it: found, or fetched from Debian's
# bookworm-backports with a private apt configuration and unpacked into .build/curl8, then used by running a
# program with LD_LIBRARY_PATH pointing at it. Sourced (from the package root) by Tests/curl8/curl8.sh (the sender's
# suites on libcurl 8, part of `make test`) and bench/bench_sender.sh (the libcurl 8 rows).
#
#   curl8_find SCRATCH [DIR...]   sets CURL8, a directory holding libcurl.so.4 (see below)
#   curl8_check SCRATCH           loads it and checks it (dependencies, version >= CURL8_MIN); sets CURL8_VERSION
#   curl8_resolves BINARY         checks BINARY resolves libcurl.so.4 to it under LD_LIBRARY_PATH; sets CURL8_LDD
#   curl_loaded DIR SCRATCH       the version and file of the libcurl.so.4 a program loads (DIR empty: the system's)
# Each returns non-zero with the reason, one line, in CURL8_WHY. SCRATCH is a writable temporary directory.

CURL8_MIN=8.5
CURL8_ARCH=$(cc -print-multiarch 2>/dev/null || true)
CURL8_ARCH=${CURL8_ARCH:-x86_64-linux-gnu}
CURL8_CACHE=$PWD/.build/curl8   # a fetched package is unpacked here and reused by later runs

# curl8_fetch DEST SCRATCH: apt-get download + dpkg -x of bookworm-backports' libcurl4 into DEST, with a private
# sources list (the mirror and key of the machine's own Debian sources), lists and cache under SCRATCH: nothing
# of the system's apt state or libraries changes.
curl8_fetch() {
  local dest=$1 d=$2 src=/etc/apt/sources.list.d/debian.sources codename uris key deb
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || { echo "no VERSION_CODENAME in /etc/os-release"; return 1; }
  [ -r "$src" ] || { echo "no $src to copy the mirror and its key from"; return 1; }
  # The stanza serving "$codename" itself (not -security): its URIs and Signed-By lines.
  uris=$(awk -v c="$codename" 'BEGIN { RS = "" } $0 ~ "Suites:[^\n]*[ \t]" c "([ \t]|\n|$)" {
           if (match($0, /URIs:[^\n]*/)) { s = substr($0, RSTART + 5, RLENGTH - 5); gsub(/^[ \t]+/, "", s); print s; exit } }' "$src")
  key=$(awk -v c="$codename" 'BEGIN { RS = "" } $0 ~ "Suites:[^\n]*[ \t]" c "([ \t]|\n|$)" {
           if (match($0, /Signed-By:[^\n]*/)) { s = substr($0, RSTART + 10, RLENGTH - 10); gsub(/^[ \t]+/, "", s); print s; exit } }' "$src")
  [ -n "$uris" ] || { echo "no URIs line for $codename in $src"; return 1; }
  mkdir -p "$d/sources.list.d" "$d/lists/partial" "$d/cache/archives/partial" "$d/deb"
  : > "$d/sources.list"
  { echo "Types: deb"; echo "URIs: $uris"; echo "Suites: $codename-backports"; echo "Components: main"
    [ -n "$key" ] && echo "Signed-By: $key"; } > "$d/sources.list.d/backports.sources"
  local opts=(-o "Dir::Etc::SourceList=$d/sources.list" -o "Dir::Etc::SourceParts=$d/sources.list.d"
              -o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache" -o "APT::Sandbox::User=root")
  apt-get "${opts[@]}" update || return 1
  (cd "$d/deb" && apt-get "${opts[@]}" download -t "$codename-backports" libcurl4) || return 1
  deb=$(ls "$d"/deb/libcurl4_*.deb 2>/dev/null | head -n 1)
  [ -n "$deb" ] || { echo "apt-get download left no libcurl4_*.deb"; return 1; }
  rm -rf "$dest"; mkdir -p "$dest"
  dpkg -x "$deb" "$dest"
}

# curl8_find SCRATCH [DIR...]: CURL8 := $CURL8_DIR if set, else the first DIR holding libcurl.so.4, else
# .build/curl8/usr/lib/ARCH, else (root with apt-get) Debian's backports libcurl4 fetched into .build/curl8.
# Returns 2 when CURL8_DIR is set but holds no libcurl.so.4, 1 when there is none.
curl8_find() {
  local scratch=$1 dir
  shift
  CURL8= CURL8_WHY=
  if [ -n "${CURL8_DIR:-}" ]; then
    [ -e "$CURL8_DIR/libcurl.so.4" ] || { CURL8_WHY="CURL8_DIR=$CURL8_DIR holds no libcurl.so.4"; return 2; }
    CURL8=$(cd "$CURL8_DIR" && pwd)
    return 0
  fi
  for dir in "$@" "$CURL8_CACHE/usr/lib/$CURL8_ARCH"; do
    if [ -e "$dir/libcurl.so.4" ]; then CURL8=$dir; return 0; fi
  done
  if [ "$(id -u)" != 0 ] || ! command -v apt-get > /dev/null 2>&1; then
    CURL8_WHY="no CURL8_DIR, no libcurl.so.4 in ${*:+$* or }.build/curl8, and not root with apt-get to fetch Debian's backports libcurl4"
    return 1
  fi
  echo "Fetching Debian's backports libcurl4 into $CURL8_CACHE (apt-get update / download / dpkg -x, private apt state)"
  if curl8_fetch "$CURL8_CACHE" "$scratch/apt" > "$scratch/curl8-fetch.log" 2>&1 \
      && [ -e "$CURL8_CACHE/usr/lib/$CURL8_ARCH/libcurl.so.4" ]; then
    CURL8=$CURL8_CACHE/usr/lib/$CURL8_ARCH
  else
    CURL8_WHY="fetching the backports libcurl4 failed: $(grep -v '^[[:space:]]*$' "$scratch/curl8-fetch.log" | tail -n 1)"
    return 1
  fi
}

# curl_loaded DIR SCRATCH: dlopen("libcurl.so.4") with LD_LIBRARY_PATH=DIR, as pushctl's loader would, and ask it:
# CURL_LOADED_VERSION (e.g. 8.14.1, from curl_version()) and CURL_LOADED_PATH (the file the loader mapped). A tiny C
# program (no curl headers needed) when cc exists, else python3's ctypes.
curl_loaded() {
  local dir=$1 scratch=$2 out
  CURL_LOADED_VERSION= CURL_LOADED_PATH=
  if command -v cc > /dev/null 2>&1; then
    if [ ! -x "$scratch/curl_loaded" ]; then
      cat > "$scratch/curl_loaded.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
int main(void) {
    void *h = dlopen("libcurl.so.4", RTLD_NOW);
    if (!h) { printf("dlopen: %s\n", dlerror()); return 1; }
    char *(*version)(void) = (char *(*)(void))dlsym(h, "curl_version");
    struct link_map *map = 0;
    if (!version || dlinfo(h, RTLD_DI_LINKMAP, &map) != 0) { printf("no curl_version in libcurl.so.4\n"); return 1; }
    printf("%s\n%s\n", version(), map->l_name);
    return 0;
}
C
      cc -o "$scratch/curl_loaded" "$scratch/curl_loaded.c" -ldl > "$scratch/curl_loaded.log" 2>&1 \
        || { CURL8_WHY="cc could not build a 15-line dlopen program: $(tail -n 1 "$scratch/curl_loaded.log")"; return 1; }
    fi
    out=$(LD_LIBRARY_PATH=$dir "$scratch/curl_loaded" 2>&1) || { CURL8_WHY="loading libcurl.so.4: $out"; return 1; }
  elif command -v python3 > /dev/null 2>&1; then
    out=$(LD_LIBRARY_PATH=$dir python3 -c '
import ctypes
lib = ctypes.CDLL("libcurl.so.4")
lib.curl_version.restype = ctypes.c_char_p
print(lib.curl_version().decode())
print(next(l.split()[-1] for l in open("/proc/self/maps") if "/libcurl.so" in l))' 2>&1) \
      || { CURL8_WHY="loading libcurl.so.4: $(echo "$out" | tail -n 1)"; return 1; }
  else
    CURL8_WHY="neither cc nor python3 to load libcurl.so.4 and ask its version"
    return 1
  fi
  CURL_LOADED_VERSION=$(echo "$out" | sed -n '1s|^libcurl/\([^ ]*\).*|\1|p')
  CURL_LOADED_PATH=$(echo "$out" | sed -n 2p)
  [ -n "$CURL_LOADED_VERSION" ] && [ -n "$CURL_LOADED_PATH" ] \
    || { CURL8_WHY="unexpected answer from libcurl.so.4: $(echo "$out" | head -n 2 | tr '\n' ' ')"; return 1; }
}

# curl8_check SCRATCH: CURL8's libcurl.so.4 has all its libraries, is the one loaded under LD_LIBRARY_PATH=CURL8,
# and is at least CURL8_MIN; sets CURL8_VERSION.
curl8_check() {
  local scratch=$1 missing
  CURL8_VERSION= CURL8_WHY=
  missing=$(LD_LIBRARY_PATH=$CURL8 ldd "$CURL8/libcurl.so.4" 2>&1 | grep 'not found' || true)
  [ -z "$missing" ] || { CURL8_WHY="$CURL8/libcurl.so.4 misses libraries: $(echo "$missing" | awk '{ print $1 }' | tr '\n' ' ')"; return 1; }
  curl_loaded "$CURL8" "$scratch" || return 1
  [ "$(readlink -f "$CURL_LOADED_PATH")" = "$(readlink -f "$CURL8/libcurl.so.4")" ] \
    || { CURL8_WHY="with LD_LIBRARY_PATH=$CURL8 the loader still picks $CURL_LOADED_PATH"; return 1; }
  if [ "$(printf '%s\n%s\n' "$CURL8_MIN" "$CURL_LOADED_VERSION" | sort -V | head -n 1)" != "$CURL8_MIN" ]; then
    CURL8_WHY="$CURL8/libcurl.so.4 is libcurl $CURL_LOADED_VERSION, older than $CURL8_MIN"
    return 1
  fi
  CURL8_VERSION=$CURL_LOADED_VERSION
}

# curl8_resolves BINARY: under LD_LIBRARY_PATH=CURL8, BINARY's libcurl.so.4 (ldd) is CURL8's; sets CURL8_LDD.
curl8_resolves() {
  CURL8_LDD=$(LD_LIBRARY_PATH=$CURL8 ldd "$1" | awk '$1 == "libcurl.so.4" { print $3 }')
  [ -n "$CURL8_LDD" ] && [ "$(readlink -f "$CURL8_LDD")" = "$(readlink -f "$CURL8/libcurl.so.4")" ] \
    || { CURL8_WHY="with LD_LIBRARY_PATH=$CURL8, $1 resolves libcurl.so.4 to '${CURL8_LDD:-nothing}'"; return 1; }
}
