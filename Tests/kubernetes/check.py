#!/usr/bin/env python3
"""What deploy/kubernetes promises, checked on the rendered manifests of one overlay (`kubectl kustomize`):
every workload runs non-root with a read-only root file system, no privilege escalation and every capability
dropped, with resource requests; serve's Service leaves the admin listener out; serve has its probes (startup
and liveness /livez, readiness /readyz, on the public listener); both Deployments have a
PodDisruptionBudget; the CronJob is cron-safe (Forbid, the broadcast id from the Job's name); the ConfigMap's
pushctl.json parses and listens where the probes, the Service and the image's HEALTHCHECK look; the
pushprovider-env ConfigMap, which every container reads, names a PostgreSQL database and no secret's value; every pushprovider
container runs the image of this version with its configuration read-only and its secrets unreadable by others.

Usage: Tests/kubernetes/check.py RENDERED.yaml VERSION    (exit 1 with one line per problem)
       Tests/kubernetes/check.py --self-test RENDERED.yaml VERSION   (each check must catch its own breakage)
"""
import copy
import json
import sys

import yaml

WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"}


def pod_spec(obj):
    spec = obj["spec"]
    if obj["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    return spec["template"]["spec"]


def check(docs, version):
    problems = []
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    names = lambda kind: {d["metadata"]["name"] for d in by_kind.get(kind, [])}

    for w in [d for d in docs if d["kind"] in WORKLOADS]:
        name = f"{w['kind']}/{w['metadata']['name']}"
        spec = pod_spec(w)
        psc = spec.get("securityContext") or {}
        if psc.get("runAsNonRoot") is not True:
            problems.append(f"{name}: pod securityContext.runAsNonRoot is not true")
        if not psc.get("runAsUser"):
            problems.append(f"{name}: pod securityContext.runAsUser is not a non-zero uid")
        if (psc.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
            problems.append(f"{name}: pod seccompProfile is not RuntimeDefault")
        if spec.get("automountServiceAccountToken") is not False:
            problems.append(f"{name}: automountServiceAccountToken is not false")
        containers = spec.get("containers", []) + spec.get("initContainers", [])
        if not containers:
            problems.append(f"{name}: no containers")
        for c in containers:
            cname = f"{name} container {c['name']}"
            sc = c.get("securityContext") or {}
            if sc.get("readOnlyRootFilesystem") is not True:
                problems.append(f"{cname}: readOnlyRootFilesystem is not true")
            if sc.get("allowPrivilegeEscalation") is not False:
                problems.append(f"{cname}: allowPrivilegeEscalation is not false")
            if "ALL" not in ((sc.get("capabilities") or {}).get("drop") or []):
                problems.append(f"{cname}: capabilities do not drop ALL")
            if (sc.get("capabilities") or {}).get("add"):
                problems.append(f"{cname}: capabilities add {sc['capabilities']['add']}")
            if sc.get("privileged"):
                problems.append(f"{cname}: privileged")
            if sc.get("runAsNonRoot") is False or sc.get("runAsUser") == 0:
                problems.append(f"{cname}: runs as root")
            resources = c.get("resources") or {}
            if not {"cpu", "memory"} <= set((resources.get("requests") or {})):
                problems.append(f"{cname}: no cpu and memory requests")
            if "memory" not in (resources.get("limits") or {}):
                problems.append(f"{cname}: no memory limit")
            image = c.get("image", "")
            if "pushprovider" in image.rsplit("/", 1)[-1].split(":")[0] and "postgres" not in image:
                if not image.endswith(":" + version):
                    problems.append(f"{cname}: image {image} is not version {version}")
                mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
                config = mounts.get("/etc/pushprovider")
                if not config or config.get("readOnly") is not True:
                    problems.append(f"{cname}: /etc/pushprovider is not mounted read-only")
                else:
                    volume = next((v for v in spec.get("volumes", []) if v["name"] == config["name"]), {})
                    source = volume.get("projected") or volume.get("secret") or volume.get("configMap") or {}
                    mode = source.get("defaultMode", 0o644)
                    if mode & 0o007:
                        problems.append(f"{cname}: /etc/pushprovider's files are readable by others (mode {mode:o}): pushctl refuses such secrets")
                if "/var/lib/pushprovider" not in mounts:
                    problems.append(f"{cname}: no volume at /var/lib/pushprovider (the root file system is read-only)")

    serve = [d for d in by_kind.get("Deployment", []) if d["metadata"]["name"] == "pushprovider-serve"]
    if not serve:
        problems.append("no Deployment pushprovider-serve")
    else:
        c = pod_spec(serve[0])["containers"][0]
        ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
        if ports.get("http") != 8080 or ports.get("admin") != 8081:
            problems.append(f"serve: ports are {ports}, not http 8080 and admin 8081")
        # /livez asks nothing but the process (a database outage must not restart every replica); /readyz asks
        # the database. Both on the public listener, where the Service sends the traffic they vouch for.
        for probe, path in (("startupProbe", "/livez"), ("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
            get = ((c.get(probe) or {}).get("httpGet") or {})
            if get.get("path") != path or get.get("port") not in ("http", 8080):
                problems.append(f"serve: {probe} is not GET {path} on the public listener: {get}")
        selector = serve[0]["spec"]["selector"]["matchLabels"]
        services = [s for s in by_kind.get("Service", []) if s["spec"].get("selector") == selector]
        if not services:
            problems.append("serve: no Service selects it")
        for s in services:
            for p in s["spec"].get("ports", []):
                if p.get("targetPort") in ("admin", 8081) or p.get("port") == 8081:
                    problems.append(f"Service/{s['metadata']['name']} exposes the admin listener: {p}")
    for deployment in ("pushprovider-serve", "pushprovider-worker"):
        if deployment not in names("Deployment"):
            problems.append(f"no Deployment {deployment}")
            continue
        labels = next(d for d in by_kind["Deployment"] if d["metadata"]["name"] == deployment)["spec"]["template"]["metadata"]["labels"]
        pdbs = [p for p in by_kind.get("PodDisruptionBudget", [])
                if all(labels.get(k) == v for k, v in p["spec"]["selector"].get("matchLabels", {}).items())]
        if not pdbs:
            problems.append(f"{deployment}: no PodDisruptionBudget selects it")

    cronjobs = by_kind.get("CronJob", [])
    if not cronjobs:
        problems.append("no CronJob")
    for cj in cronjobs:
        name = f"CronJob/{cj['metadata']['name']}"
        if cj["spec"].get("concurrencyPolicy") != "Forbid":
            problems.append(f"{name}: concurrencyPolicy is not Forbid")
        c = pod_spec(cj)["containers"][0]
        args = c.get("args", [])
        if "broadcast" not in args or "--id" not in args or args[args.index("--id") + 1] != "$(BROADCAST_ID)":
            problems.append(f"{name}: not `broadcast --id $(BROADCAST_ID)`: {args}")
        env = {e["name"]: e for e in c.get("env", [])}
        field = (((env.get("BROADCAST_ID") or {}).get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
        if field != "metadata.labels['batch.kubernetes.io/job-name']":
            problems.append(f"{name}: BROADCAST_ID is not the Job's name: {field}")

    maps = [m for m in by_kind.get("ConfigMap", []) if "pushctl.json" in (m.get("data") or {})]
    if not maps:
        problems.append("no ConfigMap with pushctl.json")
    for m in maps:
        try:
            config = json.loads(m["data"]["pushctl.json"])
        except ValueError as e:
            problems.append(f"ConfigMap/{m['metadata']['name']}: pushctl.json is not JSON: {e}")
            continue
        server = config.get("server", {})
        if (server.get("host"), server.get("port")) != ("0.0.0.0", 8080):
            problems.append(f"pushctl.json: the public listener is not 0.0.0.0:8080 (the probes', the Service's and the HEALTHCHECK's): {server}")
        admin = server.get("admin", {})
        if (admin.get("host"), admin.get("port")) != ("0.0.0.0", 8081):
            problems.append(f"pushctl.json: the admin listener is not 0.0.0.0:8081 (Prometheus', /healthz/details'): {admin}")
        for key in ("database", "databasePasswordFile"):
            if key in config:
                problems.append(f"pushctl.json: {key} is set in the file; it belongs in pushprovider-env (pushctl.env)")
    # Where the database is: the environment every pushprovider container reads (docs/configuration.md, "From the
    # environment"), never a secret's value there.
    envs = [m for m in by_kind.get("ConfigMap", []) if m["metadata"]["name"].startswith("pushprovider-env")]
    if len(envs) != 1:
        problems.append(f"not one ConfigMap pushprovider-env: {[m['metadata']['name'] for m in envs]}")
    else:
        env = envs[0].get("data", {})
        if not env.get("PUSHCTL_DATABASE", "").startswith("postgres://"):
            problems.append(f"pushprovider-env: PUSHCTL_DATABASE is not PostgreSQL (workers and replicas share it): {env.get('PUSHCTL_DATABASE')}")
        if not env.get("PUSHCTL_DATABASE_PASSWORD_FILE", "").startswith("/etc/pushprovider/"):
            problems.append("pushprovider-env: PUSHCTL_DATABASE_PASSWORD_FILE is not a file of the mounted Secret")
        for key in env:
            if not key.startswith("PUSHCTL_"):
                problems.append(f"pushprovider-env: {key} is not a pushctl variable")
            elif not key.endswith(("_FILE", "_P8", "_P12", "_VAPID_KEY", "_SERVICE_ACCOUNT")) and any(w in key for w in ("PASSWORD", "SECRET", "CREDENTIALS")):
                problems.append(f"pushprovider-env: {key} would carry a secret's value (pushctl refuses it; use the _FILE form)")
        for d in [d for kind in ("Deployment", "CronJob") for d in by_kind.get(kind, [])]:
            for c in pod_spec(d).get("containers", []):
                refs = [(e.get("configMapRef") or {}).get("name") for e in c.get("envFrom", [])]
                if envs[0]["metadata"]["name"] not in refs:
                    problems.append(f"{d['kind']}/{d['metadata']['name']}: container {c['name']} does not read pushprovider-env (envFrom)")
    return problems


def main():
    args = sys.argv[1:]
    self_test = args[:1] == ["--self-test"]
    if self_test:
        args = args[1:]
    path, version = args
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    problems = check(docs, version)
    if problems:
        for p in problems:
            print(f"manifests: {p}", file=sys.stderr)
        sys.exit(1)
    if not self_test:
        print(f"manifests: {path}: {len(docs)} objects, every check holds")
        return
    # Each breakage must be caught: a checker that passes everything proves nothing.
    def workload(ds, kind, name):
        return next(d for d in ds if d["kind"] == kind and d["metadata"]["name"] == name)
    breakages = {
        "readOnlyRootFilesystem": lambda ds: pod_spec(workload(ds, "Deployment", "pushprovider-worker"))["containers"][0]["securityContext"].update(readOnlyRootFilesystem=False),
        "allowPrivilegeEscalation": lambda ds: pod_spec(workload(ds, "CronJob", "pushprovider-digest"))["containers"][0]["securityContext"].pop("allowPrivilegeEscalation"),
        "capabilities": lambda ds: pod_spec(workload(ds, "Deployment", "pushprovider-serve"))["containers"][0]["securityContext"].update(capabilities={"drop": ["NET_RAW"]}),
        "runAsNonRoot": lambda ds: pod_spec(workload(ds, "Deployment", "pushprovider-serve"))["securityContext"].pop("runAsNonRoot"),
        "admin in the Service": lambda ds: next(d for d in ds if d["kind"] == "Service" and d["metadata"]["name"] == "pushprovider")["spec"]["ports"].append({"name": "admin", "port": 8081, "targetPort": "admin"}),
        "secret mode": lambda ds: next(v for v in pod_spec(workload(ds, "Deployment", "pushprovider-worker"))["volumes"] if v["name"] == "config")["projected"].update(defaultMode=0o444),
        "readiness": lambda ds: pod_spec(workload(ds, "Deployment", "pushprovider-serve"))["containers"][0].pop("readinessProbe"),
        "liveness on the database": lambda ds: pod_spec(workload(ds, "Deployment", "pushprovider-serve"))["containers"][0]["livenessProbe"]["httpGet"].update(path="/healthz"),
        "PodDisruptionBudget": lambda ds: ds.remove(next(d for d in ds if d["kind"] == "PodDisruptionBudget" and d["metadata"]["name"] == "pushprovider-worker")),
        "image version": lambda ds: pod_spec(workload(ds, "Deployment", "pushprovider-worker"))["containers"][0].update(image="localhost/pushprovider:0.0.1"),
        "environment": lambda ds: pod_spec(workload(ds, "Deployment", "pushprovider-worker"))["containers"][0].pop("envFrom"),
        "database in the environment": lambda ds: next(d for d in ds if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("pushprovider-env"))["data"].update(PUSHCTL_DATABASE="/var/lib/pushprovider/pushctl.sqlite"),
        "cron id": lambda ds: pod_spec(workload(ds, "CronJob", "pushprovider-digest"))["containers"][0].update(args=["broadcast", "--id", "digest"]),
    }
    missed = []
    for what, breaks in breakages.items():
        broken = copy.deepcopy(docs)
        breaks(broken)
        if not check(broken, version):
            missed.append(what)
    if missed:
        print(f"manifests: the checks miss a broken {', '.join(missed)}", file=sys.stderr)
        sys.exit(1)
    print(f"manifests: self-test: each of {len(breakages)} breakages is caught")


if __name__ == "__main__":
    main()
