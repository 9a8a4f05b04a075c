# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Check rendered ngx-sockmap Kubernetes objects.

    k8s_check.py OVERLAY RENDERED.yaml [BASE_RENDERED.yaml]

BASE_RENDERED (the base's objects) is needed for the sidecar.  OVERLAY: base, sidecar or prometheus-operator (what to expect).  Prints
one "ok - ..." line per check and "FAIL: ..." for the first that fails
(exit 1).  What is checked, on every agent container found (the
DaemonSet's, the sidecar's):
  capabilities exactly BPF, PERFMON, NET_ADMIN, SYS_ADMIN, SYS_PTRACE
  added (daemonset.yaml says what each is for), ALL dropped; not privileged; allowPrivilegeEscalation not false (the API
  server rejects it next to SYS_ADMIN); read-only root; seccomp
  RuntimeDefault; hostPID where the agent follows peers (DaemonSet) and
  not in the sidecar's pod; the host's /sys/fs/cgroup (read-write) and
  /sys/fs/bpf mounted from hostPath Directory volumes, /run writable;
  readiness and liveness `ngx-sockmap health` and no probe on the metrics
  server (any pod can fill its connections: health_probe.sh), the
  DaemonSet's startup probe `ngx-sockmap health` too;
  requests and limits of cpu and memory; the metrics address on all
  interfaces at the annotated port.  Per overlay: the DaemonSet's
  annotations, NODE_NAME, service account, ClusterRole (get/list/watch
  pods, nothing else) and binding, Pod Security "privileged" on the
  namespace; the sidecar's POD_UID, pod-sidecar.sh and native-sidecar
  restartPolicy; the PodMonitor's selector matching the DaemonSet's pods
  and its jobLabel giving job="ngx-sockmap"; the PrometheusRule carrying
  alerts.yml's groups unchanged.  The sidecar's container must agree with
  the DaemonSet's on everything both have (one definition, two places).
"""
import os
import sys

import yaml

CAPS = ["BPF", "PERFMON", "NET_ADMIN", "SYS_ADMIN", "SYS_PTRACE"]
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ok(msg):
    print("ok - " + msg)


def check(cond, msg):
    if not cond:
        print("FAIL: " + msg)
        sys.exit(1)
    ok(msg)


def one(docs, kind, name=None):
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    check(len(found) == 1, "one %s%s (found %d)" % (kind, " " + name if name else "", len(found)))
    return found[0]


def quantity_ok(q):
    return isinstance(q, (str, int)) and str(q) not in ("", "0")


def agent_container(pod, c, where, follows):
    sc = c.get("securityContext", {})
    cap = sc.get("capabilities", {})
    check(sorted(cap.get("add", [])) == sorted(CAPS), "%s: capabilities added exactly %s (got %s)" %
          (where, ",".join(CAPS), cap.get("add")))
    check(cap.get("drop") == ["ALL"], "%s: capabilities drop [ALL]" % where)
    check(sc.get("privileged") is False, "%s: privileged: false, said explicitly" % where)
    check(sc.get("allowPrivilegeEscalation") is not False,
          "%s: allowPrivilegeEscalation not false (rejected next to SYS_ADMIN)" % where)
    check(sc.get("readOnlyRootFilesystem") is True, "%s: read-only root filesystem" % where)
    check(sc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "%s: seccomp RuntimeDefault" % where)
    check(bool(pod.get("hostPID")) == follows, "%s: hostPID %s" % (where, follows))
    check(not pod.get("hostNetwork") and not pod.get("hostIPC"), "%s: no hostNetwork, no hostIPC" % where)
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    for path in ("/sys/fs/cgroup", "/sys/fs/bpf"):
        m = mounts.get(path)
        check(m is not None, "%s: %s mounted" % (where, path))
        hp = vols[m["name"]].get("hostPath", {})
        check(hp.get("path") == path and hp.get("type") == "Directory",
              "%s: %s is the host's (hostPath, type Directory)" % (where, path))
        check(not m.get("readOnly"), "%s: %s read-write" % (where, path))
    run = mounts.get("/run")
    check(run is not None and "emptyDir" in vols[run["name"]], "%s: /run writable (emptyDir)" % where)
    ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
    args = c.get("args", [])
    check("--metrics" in args, "%s: --metrics given" % where)
    addr = args[args.index("--metrics") + 1]
    check(addr.startswith("0.0.0.0:"), "%s: metrics on all interfaces (%s)" % (where, addr))
    mport = int(addr.split(":")[1])
    check(mport in ports.values(), "%s: metrics port %d declared" % (where, mport))
    # no probe may ride on the metrics server's slots, which any pod can
    # hold (health_probe.sh; issue 37: 8 addresses took them all)
    for p in ("startupProbe", "readinessProbe", "livenessProbe"):
        check(not any(k in c.get(p, {}) for k in ("httpGet", "tcpSocket", "grpc")),
              "%s: %s takes no connection of the metrics server" % (where, p))
    for p in ("readinessProbe", "livenessProbe"):
        check(c.get(p, {}).get("exec", {}).get("command") == ["ngx-sockmap", "health"],
              "%s: %s runs ngx-sockmap health" % (where, p))
    check("startupProbe" in c, "%s: startupProbe (the self-test takes seconds)" % where)
    res = c.get("resources", {})
    for k in ("requests", "limits"):
        for r in ("cpu", "memory"):
            check(quantity_ok(res.get(k, {}).get(r)), "%s: %s.%s set" % (where, k, r))
    return sc, mounts, res


def main():
    overlay, path = sys.argv[1:3]
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    kinds = sorted({d["kind"] for d in docs})
    print("# %s: %d objects: %s" % (overlay, len(docs), ", ".join(kinds)))
    if overlay in ("base", "prometheus-operator"):
        ds = one(docs, "DaemonSet", "ngx-sockmap")
        pod = ds["spec"]["template"]["spec"]
        tmeta = ds["spec"]["template"]["metadata"]
        c = next(c for c in pod["containers"] if c["name"] == "agent")
        agent_container(pod, c, "DaemonSet", follows=True)
        check(c["command"] == ["ngx-sockmap"] and c["args"][0] == "run",
              "DaemonSet: runs `ngx-sockmap run` (not the compose entrypoint)")
        check(c["startupProbe"].get("exec", {}).get("command") == ["ngx-sockmap", "health"],
              "DaemonSet: startup probe runs ngx-sockmap health (the loop ticked)")
        args = c["args"]
        check("--k8s-selector" in args and args[args.index("--k8s-selector") + 1] ==
              "app.kubernetes.io/name=nginx", "DaemonSet: --k8s-selector app.kubernetes.io/name=nginx")
        env = {e["name"]: e for e in c.get("env", [])}
        check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
              == "spec.nodeName", "DaemonSet: NODE_NAME from fieldRef spec.nodeName")
        a = tmeta.get("annotations", {})
        mport = c["args"][c["args"].index("--metrics") + 1].split(":")[1]
        check(a.get("prometheus.io/scrape") == "true" and a.get("prometheus.io/port") == mport
              and a.get("prometheus.io/path") == "/metrics",
              "DaemonSet: prometheus.io/scrape, port %s, path /metrics annotations" % mport)
        sel = ds["spec"]["selector"]["matchLabels"]
        check(all(tmeta["labels"].get(k) == v for k, v in sel.items()), "DaemonSet: selector matches its pods")
        sa = one(docs, "ServiceAccount", pod["serviceAccountName"])
        ns = ds["metadata"]["namespace"]
        check(sa["metadata"].get("namespace") == ns, "service account in the DaemonSet's namespace")
        role = one(docs, "ClusterRole")
        check(role["rules"] == [{"apiGroups": [""], "resources": ["pods"],
                                 "verbs": ["get", "list", "watch"]}],
              "ClusterRole: get, list, watch pods and nothing else")
        b = one(docs, "ClusterRoleBinding")
        check(b["roleRef"]["name"] == role["metadata"]["name"] and
              b["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": ns}],
              "ClusterRoleBinding: the role to the agent's service account")
        n = one(docs, "Namespace", ns)
        check(n["metadata"]["labels"].get("pod-security.kubernetes.io/enforce") == "privileged",
              "namespace %s: Pod Security enforce=privileged (hostPID, hostPath)" % ns)
    if overlay == "prometheus-operator":
        pm = one(docs, "PodMonitor")
        check(all(tmeta["labels"].get(k) == v for k, v in pm["spec"]["selector"]["matchLabels"].items()),
              "PodMonitor: selector matches the DaemonSet's pods")
        check(tmeta["labels"].get(pm["spec"]["jobLabel"]) == "ngx-sockmap",
              "PodMonitor: jobLabel gives job=\"ngx-sockmap\" (what alerts.yml expects)")
        eps = pm["spec"]["podMetricsEndpoints"]
        cport = {p["name"] for p in c["ports"]}
        check(len(eps) == 1 and eps[0]["port"] in cport and eps[0]["path"] == "/metrics",
              "PodMonitor: the agent's metrics port, /metrics")
        pr = one(docs, "PrometheusRule")
        with open(os.path.join(TOP, "deploy", "prometheus", "alerts.yml")) as f:
            groups = yaml.safe_load(f)["groups"]
        check(pr["spec"]["groups"] == groups, "PrometheusRule: alerts.yml's groups unchanged")
    if overlay == "sidecar":
        with open(sys.argv[3]) as f:
            base = [d for d in yaml.safe_load_all(f) if d]
        bds = next(d for d in base if d["kind"] == "DaemonSet")
        bc = bds["spec"]["template"]["spec"]["containers"][0]
        deps = [d for d in docs if d["kind"] == "Deployment"
                and d["metadata"].get("labels", {}).get("app.kubernetes.io/name") == "nginx"]
        check(len(deps) >= 1, "an nginx Deployment")
        for d in deps:
            pod = d["spec"]["template"]["spec"]
            side = [c for c in pod.get("initContainers", []) if c["name"] == "ngx-sockmap"]
            check(len(side) == 1, "%s: the agent as an init container" % d["metadata"]["name"])
            c = side[0]
            where = "sidecar in %s" % d["metadata"]["name"]
            check(c.get("restartPolicy") == "Always", "%s: native sidecar (restartPolicy: Always)" % where)
            sc, mounts, res = agent_container(pod, c, where, follows=False)
            check(sc == bc["securityContext"], "%s: securityContext identical to the DaemonSet's" % where)
            check(res == bc["resources"], "%s: resources identical to the DaemonSet's" % where)
            for p in ("/sys/fs/cgroup", "/sys/fs/bpf", "/run"):
                check(p in mounts, "%s: mounts %s like the DaemonSet" % (where, p))
            env = {e["name"]: e for e in c.get("env", [])}
            check(env.get("POD_UID", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
                  == "metadata.uid", "%s: POD_UID from fieldRef metadata.uid" % where)
            check(c["command"][-1].endswith("/pod-sidecar.sh"), "%s: runs pod-sidecar.sh" % where)
            script = mounts[os.path.dirname(c["command"][-1])]
            vol = next(v for v in pod["volumes"] if v["name"] == script["name"])
            cm = one(docs, "ConfigMap", vol["configMap"]["name"])
            with open(os.path.join(TOP, "deploy", "kubernetes", "components", "sidecar", "pod-sidecar.sh")) as f:
                check(cm["data"].get("pod-sidecar.sh") == f.read(),
                      "%s: its ConfigMap carries pod-sidecar.sh as committed" % where)
            check(c["startupProbe"].get("exec", {}).get("command") == ["ngx-sockmap", "health"],
                  "%s: startup probe passes only once the agent has attached and ticks (health, not status: status exits non-zero while not accelerating)" % where)
            ns = one(docs, "Namespace", d["metadata"]["namespace"])
            check(ns["metadata"]["labels"].get("pod-security.kubernetes.io/enforce") == "privileged",
                  "namespace %s: Pod Security enforce=privileged" % d["metadata"]["namespace"])
    images = sorted({c["image"] for d in docs if d["kind"] in ("DaemonSet", "Deployment")
                     for c in d["spec"]["template"]["spec"].get("containers", []) +
                     d["spec"]["template"]["spec"].get("initContainers", [])
                     if c["name"] in ("agent", "ngx-sockmap")})
    check(len(images) == 1 and images[0].startswith("ngx-sockmap/agent:"),
          "agent image %s (one tag, set by kustomize images:)" % images)
    # the release's tag, never :latest (a node would run whatever was
    # pushed last, and two nodes two versions): VERSION's, or where there
    # is none yet, debian/changelog's, the release the package carries
    vfile = os.path.join(TOP, "VERSION")
    if os.path.exists(vfile):
        with open(vfile) as f:
            version = f.read().strip()
    else:
        with open(os.path.join(TOP, "debian", "changelog")) as f:
            version = f.readline().split("(")[1].split(")")[0]
    check(images == ["ngx-sockmap/agent:" + version],
          "agent image %s is the release's, ngx-sockmap/agent:%s" % (images, version))


if __name__ == "__main__":
    main()
