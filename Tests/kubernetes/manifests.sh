#!/usr/bin/env bash
# deploy/kubernetes as a cluster would take it, offline: each overlay (and the base) rendered by kustomize
# (`kubectl kustomize`, kustomize v5 inside kubectl), validated against the Kubernetes API schemas by
# kubernetes-validate (PyPI, pinned: it carries the schemas of every Kubernetes release, so no network is needed; run
# in a network namespace of its own when root, to prove it) in strict mode (an unknown field is an error) for the
# oldest Kubernetes the manifests need, 1.30 (preStop `sleep`); then Tests/kubernetes/check.py checks the security
# settings of every workload, the probes, the Service, the PodDisruptionBudgets and the CronJob, and, with
# --self-test, that each of its checks catches its own breakage. No build needed: make test runs it with the lint.
# Usage: Tests/kubernetes/manifests.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
say() { echo "manifests: $*"; }
fail() { say "FAIL: $*" >&2; exit 1; }
KUBERNETES=1.30.0
VALIDATOR="kubernetes-validate==1.37.0"
command -v kubectl >/dev/null || fail "kubectl is missing (its kustomize renders the overlays): install kubectl"
if ! python3 -c 'from importlib.metadata import version; import sys; sys.exit(version("kubernetes-validate") != "1.37.0")' 2>/dev/null; then
  say "installing $VALIDATOR from PyPI"
  python3 -m pip install -q "$VALIDATOR" >/dev/null 2>&1 || fail "cannot install $VALIDATOR with pip (PyPI unreachable?)"
fi
OFFLINE=()
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then OFFLINE=(unshare -n); fi
VERSION=$(sed -n 's/.*static let semantic = "\([0-9.]*\)".*/\1/p' Sources/PushCore/ProductVersion.swift)
[ -n "$VERSION" ] || fail "no version in Sources/PushCore/ProductVersion.swift"
WORK=$(mktemp -d /tmp/pushprovider-manifests.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
for dir in base overlays/dev overlays/prod; do
  out="$WORK/$(basename "$dir").yaml"
  kubectl kustomize "deploy/kubernetes/$dir" > "$out" 2> "$WORK/kustomize.err" || { cat "$WORK/kustomize.err"; fail "kubectl kustomize deploy/kubernetes/$dir"; }
  "${OFFLINE[@]}" python3 -m kubernetes_validate --strict --quiet -k "$KUBERNETES" "$out" || fail "deploy/kubernetes/$dir does not validate against Kubernetes $KUBERNETES"
  say "deploy/kubernetes/$dir: $(grep -c '^kind:' "$out") objects valid for Kubernetes $KUBERNETES (strict${OFFLINE:+, no network})"
  [ "$dir" = base ] && continue
  python3 Tests/kubernetes/check.py "$out" "$VERSION"
done
python3 Tests/kubernetes/check.py --self-test "$WORK/prod.yaml" "$VERSION"
say "PASS"
