#!/usr/bin/env python3
"""Builds a container image from files of this machine, offline, with no container tool: one layer holding the files
a spec names plus every shared library they load (their `ldd` closure), written as an OCI archive (`podman load`,
skopeo, `docker load` of Docker 25 and later) and a docker-archive (`docker load` of any Docker, `podman load`).
Both hold the same config and layer, so both load as the same image id. `make image` runs it through
packaging/image.sh for PushProvider's image; Tests/image/image.sh runs it for the test's PostgreSQL image.

Why the machine's own files and not packages downloaded for the image: it needs no network at all (not even
Debian's registry), and the libraries are exactly the ones the binary was built, linked and tested against here.
Every file taken from the system must belong to an installed Debian package and match that package's md5sums
(dpkg's record of what it installed), so a locally changed library cannot slip in; the image's package list (name,
version, files) is that record, written into the image at /usr/share/doc/image-packages.txt and printed.

Reproducible: entries sorted, owners numeric, times SOURCE_DATE_EPOCH (default 0), gzip without a name or time:
one spec and one machine give byte-identical archives.

Usage: packaging/image.py SPEC.json OUTDIR      (prints the paths of the two archives)
The spec (JSON):
  "name": "localhost/pushprovider", "tag": "1.0.0",
  "files": [{"src": "PATH", "dst": "/usr/bin/pushctl", "mode": 493}]      files of ours, copied as given (ldd'd)
  "system": ["/usr/bin/curl", ...]        system files at their own path, each with its ldd closure, dpkg-checked
  "trees": [{"path": "/usr/share/zoneinfo", "exclude": ["right"]}]         system directories, dpkg-checked
  "generated": [{"path": "/etc/ssl/certs/ca-certificates.crt", "package": "ca-certificates"}]
                                          system files a package's scripts made (no md5sum to check), copied
  "text": [{"path": "/etc/passwd", "content": "...", "mode": 420}]          files written as given
  "dirs": [{"path": "/var/lib/pushprovider", "uid": 10001, "gid": 10001, "mode": 488}]
  "config": {...}                          the image config's "config" (User, Entrypoint, Cmd, Env, Healthcheck, ...)
  "labels": {...}
"""
import datetime
import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile

EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))


def fail(message):
    print(f"image: {message}", file=sys.stderr)
    sys.exit(1)


def image_path(path):
    """Where a host path goes in the image: Debian 12 is merged-/usr (/lib -> usr/lib), and so is the image."""
    for prefix in ("/lib/", "/lib64/", "/bin/", "/sbin/"):
        if path.startswith(prefix):
            return "/usr" + path
    return path


class Layer:
    def __init__(self):
        self.entries = {}  # image path -> (kind, data): ("dir", (mode, uid, gid)), ("file", (bytes, mode, uid, gid)), ("link", target)
        self.system = set()  # host paths of files copied from the system (dpkg-checked)
        self.generated = {}  # host path -> package

    def add_dir(self, path, mode=0o755, uid=0, gid=0):
        parts = path.strip("/").split("/")
        for i in range(1, len(parts)):
            parent = "/" + "/".join(parts[:i])
            self.entries.setdefault(parent, ("dir", (0o755, 0, 0)))
        self.entries[path] = ("dir", (mode, uid, gid))

    def _parents(self, path):
        parent = os.path.dirname(path)
        if parent != "/" and parent not in self.entries:
            self.add_dir(parent)

    def add_bytes(self, path, data, mode=0o644, uid=0, gid=0):
        self._parents(path)
        self.entries[path] = ("file", (data, mode, uid, gid))

    def add_link(self, path, target):
        self._parents(path)
        self.entries[path] = ("link", target)

    def add_host(self, host, dst=None, mode=None, check=True):
        """A host file at its own path (or dst), following its symlink chain: each link is kept as a link."""
        seen = 0
        while os.path.islink(host):
            seen += 1
            if seen > 20:
                fail(f"symlink loop at {host}")
            target = os.readlink(host)
            self.add_link(image_path(dst or host), target)
            dst = None
            host = os.path.normpath(os.path.join(os.path.dirname(host), target))
        if not os.path.isfile(host):
            fail(f"{host} is not a file")
        if check:
            self.system.add(host)
        with open(host, "rb") as f:
            data = f.read()
        self.add_bytes(image_path(dst or host), data, mode if mode is not None else os.stat(host).st_mode & 0o7777)

    def add_ldd(self, binary):
        """The shared libraries binary loads, as the dynamic loader resolves them on this machine."""
        out = subprocess.run(["ldd", binary], capture_output=True, text=True)
        if "not a dynamic executable" in out.stdout + out.stderr:
            return  # statically linked: nothing to add
        if out.returncode != 0:
            fail(f"ldd {binary}: {out.stderr.strip() or out.stdout.strip()}")
        for line in out.stdout.splitlines():
            line = line.strip()
            if "not found" in line:
                fail(f"ldd {binary}: {line}")
            m = re.match(r"\S+ => (/\S+) \(", line) or re.match(r"(/\S+) \(", line)
            if m:
                self.add_host(m.group(1))

    def tar(self):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path in sorted(self.entries):
                kind, data = self.entries[path]
                info = tarfile.TarInfo(path.lstrip("/"))
                info.mtime = EPOCH
                info.uname = info.gname = ""
                if kind == "dir":
                    info.type, (info.mode, info.uid, info.gid) = tarfile.DIRTYPE, data
                    tar.addfile(info)
                elif kind == "link":
                    info.type, info.linkname, info.mode = tarfile.SYMTYPE, data, 0o777
                    tar.addfile(info)
                else:
                    content, info.mode, info.uid, info.gid = data
                    info.size = len(content)
                    tar.addfile(info, io.BytesIO(content))
        return buf.getvalue()


_OWNERS = None


def dpkg_owner(path):
    """The package that installed path, with the path as dpkg recorded it (Debian 12 records /lib/... for files
    that live under /usr/lib through the merged-/usr link). Read from dpkg's file lists at once: one dpkg-query per
    file took minutes for the time zone database."""
    global _OWNERS
    if _OWNERS is None:
        _OWNERS = {}
        info = "/var/lib/dpkg/info"
        for name in sorted(os.listdir(info)):
            if name.endswith(".list"):
                for line in open(os.path.join(info, name), encoding="utf-8", errors="surrogateescape"):
                    _OWNERS.setdefault(line.rstrip("\n"), name[: -len(".list")])
    candidates = [path, path[len("/usr"):] if path.startswith("/usr/") else "/usr" + path]
    for candidate in candidates:
        if candidate in _OWNERS:
            return _OWNERS[candidate], candidate
    return None, None


def md5sums(pkg):
    for name in (pkg, pkg.split(":")[0]):
        path = f"/var/lib/dpkg/info/{name}.md5sums"
        if os.path.exists(path):
            sums = {}
            for line in open(path, encoding="utf-8", errors="surrogateescape"):
                digest, _, file = line.rstrip("\n").partition("  ")
                sums["/" + file] = digest
            return sums
    return {}


def package_list(layer):
    """name -> (version, [image paths]); fails for a system file no package installed, or one changed since."""
    packages = {}
    for host in sorted(layer.system):
        pkg, recorded = dpkg_owner(host)
        if not pkg:
            fail(f"{host} belongs to no installed Debian package")
        want = md5sums(pkg).get(recorded)
        have = hashlib.md5(open(host, "rb").read()).hexdigest()
        if want != have:
            fail(f"{host} differs from what package {pkg} installed (md5 {have}, dpkg says {want})")
        packages.setdefault(pkg, set()).add(image_path(host))
    for host, pkg in layer.generated.items():
        packages.setdefault(pkg, set()).add(image_path(host))
    result = {}
    for pkg, files in packages.items():
        version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True).stdout.strip()
        if not version:
            fail(f"dpkg-query knows no version of {pkg}")
        result[pkg.split(":")[0]] = (version, sorted(files))
    return result


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def add_blob(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), EPOCH, 0o644
    tar.addfile(info, io.BytesIO(data))


def main():
    if len(sys.argv) != 3:
        fail("usage: packaging/image.py SPEC.json OUTDIR")
    spec = json.load(open(sys.argv[1]))
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    layer = Layer()
    # merged /usr, as Debian 12
    for link, target in (("/lib", "usr/lib"), ("/lib64", "usr/lib64"), ("/bin", "usr/bin"), ("/sbin", "usr/sbin")):
        layer.add_link(link, target)
    layer.add_dir("/usr/lib")
    layer.add_dir("/usr/lib64")
    layer.add_dir("/usr/bin")
    layer.add_dir("/tmp", 0o1777)
    for item in spec.get("files", []):
        layer.add_host(item["src"], item["dst"], item.get("mode"), check=False)
        layer.add_ldd(item["src"])
    for path in spec.get("system", []):
        layer.add_host(path)
        with open(path, "rb") as f:
            if f.read(4) == b"\x7fELF":
                layer.add_ldd(path)
    for tree in spec.get("trees", []):
        root, exclude = tree["path"], set(tree.get("exclude", []))
        for dirpath, dirnames, filenames in os.walk(root):
            rel = os.path.relpath(dirpath, root)
            layer.add_dir(image_path(dirpath))
            keep = []
            for name in sorted(dirnames + filenames):
                host = os.path.join(dirpath, name)
                if os.path.normpath(os.path.join(rel, name)) in exclude:
                    continue
                if os.path.islink(host):
                    layer.add_link(image_path(host), os.readlink(host))
                elif os.path.isdir(host):
                    keep.append(name)
                else:
                    layer.add_host(host)
            dirnames[:] = keep
    for item in spec.get("generated", []):
        layer.add_host(item["path"], check=False)
        layer.generated[item["path"]] = item["package"]
    for item in spec.get("dirs", []):
        layer.add_dir(item["path"], item.get("mode", 0o755), item.get("uid", 0), item.get("gid", 0))
    for item in spec.get("text", []):
        layer.add_bytes(item["path"], item["content"].encode(), item.get("mode", 0o644))

    packages = package_list(layer)
    own = spec.get("own", [])
    listing = "".join(f"{name} {version}\n" for name, (version, _) in sorted(packages.items()))
    listing += "".join(f"{line}\n" for line in own)
    detail = "".join(f"{name} {version}: {' '.join(files)}\n" for name, (version, files) in sorted(packages.items()))
    layer.add_bytes("/usr/share/doc/image-packages.txt", (listing + "\n" + detail).encode())

    raw = layer.tar()
    compressed = gzip.compress(raw, compresslevel=6, mtime=0)
    diff_id = sha256(raw)
    created = datetime.datetime.fromtimestamp(EPOCH, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    config = {
        "architecture": {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine),
        "os": "linux",
        "created": created,
        "config": dict(spec.get("config", {}), Labels=spec.get("labels", {})),
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": created, "created_by": "packaging/image.py"}],
    }
    config_bytes = canonical(config)
    name, tag = spec["name"], spec["tag"]
    ref = f"{name}:{tag}"

    # OCI layout archive
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": sha256(config_bytes), "size": len(config_bytes)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": sha256(compressed), "size": len(compressed)}],
        "annotations": {"org.opencontainers.image.created": created},
    }
    manifest_bytes = canonical(manifest)
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": manifest["mediaType"], "digest": sha256(manifest_bytes), "size": len(manifest_bytes),
                       "annotations": {"org.opencontainers.image.ref.name": ref}}],
    }
    base = os.path.join(out, f"{name.rsplit('/', 1)[-1]}-{tag}")
    oci_path, docker_path = base + ".oci.tar", base + ".docker.tar"
    with tarfile.open(oci_path, "w", format=tarfile.PAX_FORMAT) as tar:
        add_blob(tar, "oci-layout", canonical({"imageLayoutVersion": "1.0.0"}))
        add_blob(tar, "index.json", canonical(index))
        for blob in sorted([config_bytes, manifest_bytes, compressed], key=sha256):
            add_blob(tar, "blobs/sha256/" + sha256(blob)[7:], blob)
    # docker-archive (docker save's format): the same config, the layer uncompressed
    with tarfile.open(docker_path, "w", format=tarfile.PAX_FORMAT) as tar:
        config_name = sha256(config_bytes)[7:] + ".json"
        layer_name = diff_id[7:] + "/layer.tar"
        add_blob(tar, "manifest.json", canonical([{"Config": config_name, "RepoTags": [ref], "Layers": [layer_name]}]))
        add_blob(tar, config_name, config_bytes)
        add_blob(tar, layer_name, raw)
    with open(base + ".packages.txt", "w") as f:
        f.write(listing)
    print(json.dumps({"oci": oci_path, "docker": docker_path, "packages": base + ".packages.txt", "id": sha256(config_bytes),
                      "layerBytes": len(raw), "compressedBytes": len(compressed), "ref": ref}))


if __name__ == "__main__":
    main()
