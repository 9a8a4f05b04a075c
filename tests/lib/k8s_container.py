# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Run a container of a rendered Kubernetes workload the way a node would.

    k8s_container.py RENDERED.yaml KIND/NAME CONTAINER MODE [options]

MODE:
  docker-args   the `docker run` arguments (one per line, image and
                command included) for that container: --cap-drop/--cap-add,
                --pid host, --read-only, -v for hostPath, --tmpfs for
                emptyDir, --memory/--cpus, -e, --entrypoint.
  oci TEMPLATE  an OCI runtime config (config.json) on stdout, from
                TEMPLATE (the output of `runc spec`), as a kubelet and
                containerd would make it: capabilities exactly as added
                (bounding, permitted, effective), no pid namespace with
                hostPID, a private cgroup namespace (containerd's choice
                for containers that are not privileged on cgroup v2 hosts),
                hostPath volumes as recursive binds over the runtime's own
                mounts, emptyDir as tmpfs, the resource limits.
  get WHAT      one value: startup-command, readiness-command,
                liveness-command (an exec probe's, one word a line),
                metrics-port (from the agent's --metrics argument),
                memory-limit (bytes), image.

Options:
  --image IMAGE        run IMAGE instead of the one in the workload
  --drop-opt OPT       drop OPT and its value from the container's args
                       (an agent option that this host can't serve)
  --add-arg ARG        append ARG to the args (repeatable)
  --node-name NAME     value of fieldRef spec.nodeName (default: hostname)
  --netns PATH         network namespace for `oci` (the pod's)
  --cgroups-path PATH  linux.cgroupsPath for `oci`
  --cgroupns MODE      private (default) or host, for `oci` and docker-args

Every field of the pod and container spec that would change how the
container runs and that this script does not translate is an error, so a
new field in the manifests can't be silently left out of the test.
"""
import argparse
import json
import socket
import sys

import yaml

# Fields translated below, or that change nothing about how the process
# runs on the node (scheduling, probes, ports, the API token).
POD_KNOWN = {"serviceAccountName", "hostPID", "tolerations", "terminationGracePeriodSeconds",
             "containers", "volumes", "shareProcessNamespace", "nodeSelector", "affinity",
             "priorityClassName"}
CONTAINER_KNOWN = {"name", "image", "imagePullPolicy", "command", "args", "env", "ports",
                   "startupProbe", "readinessProbe", "livenessProbe", "resources",
                   "securityContext", "volumeMounts"}
SECCTX_KNOWN = {"privileged", "readOnlyRootFilesystem", "capabilities", "seccompProfile",
                "allowPrivilegeEscalation"}


def die(msg):
    print("k8s_container: " + msg, file=sys.stderr)
    sys.exit(2)


def find(docs, kind_name, cname):
    kind, name = kind_name.split("/", 1)
    for d in docs:
        if d and d.get("kind") == kind and d["metadata"]["name"] == name:
            spec = d["spec"]["template"]["spec"] if "template" in d.get("spec", {}) else d["spec"]
            for c in spec["containers"]:
                if c["name"] == cname:
                    return spec, c
            die("%s has no container %s" % (kind_name, cname))
    die("no %s in the rendered objects" % kind_name)


def quantity(q):
    """A Kubernetes quantity as a number (bytes, or cores for cpu)."""
    q = str(q)
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "k": 1e3, "M": 1e6, "G": 1e9, "m": 1e-3}
    for u, f in units.items():
        if q.endswith(u):
            return float(q[: -len(u)]) * f
    return float(q)


def process_args(c, o):
    args = list(c.get("args", []))
    for opt in o.drop_opt:
        if opt not in args:
            die("--drop-opt %s: not in the args %s" % (opt, args))
        i = args.index(opt)
        del args[i:i + 2]
    return list(c.get("command", [])), args + o.add_arg


def env(c, o):
    out = []
    for e in c.get("env", []):
        if "value" in e:
            out.append("%s=%s" % (e["name"], e["value"]))
            continue
        ref = e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        if ref == "spec.nodeName":
            out.append("%s=%s" % (e["name"], o.node_name))
        else:
            die("env %s: only value and fieldRef spec.nodeName are translated" % e["name"])
    return out


def caps(c):
    sc = c.get("securityContext", {})
    unknown = set(sc) - SECCTX_KNOWN
    if unknown:
        die("securityContext fields not translated: %s" % sorted(unknown))
    if sc.get("privileged"):
        die("privileged containers are not what this translates")
    cap = sc.get("capabilities", {})
    if cap.get("drop") != ["ALL"]:
        die("capabilities.drop must be [ALL] (the runtime's default set is not modelled)")
    return ["CAP_" + x for x in cap.get("add", [])]


def volumes(spec, c):
    byname = {v["name"]: v for v in spec.get("volumes", [])}
    out = []  # (destination, kind, source-or-size, readonly)
    for m in c.get("volumeMounts", []):
        v = byname[m["name"]]
        ro = bool(m.get("readOnly"))
        if "hostPath" in v:
            out.append((m["mountPath"], "bind", v["hostPath"]["path"], ro,
                        m.get("mountPropagation", "None")))
        elif "emptyDir" in v:
            size = v["emptyDir"].get("sizeLimit")
            out.append((m["mountPath"], "tmpfs", int(quantity(size)) if size else None, ro, "None"))
        else:
            die("volume %s: only hostPath and emptyDir are translated" % m["name"])
    return out


def check_fields(spec, c):
    unknown = set(spec) - POD_KNOWN
    if unknown:
        die("pod spec fields not translated: %s" % sorted(unknown))
    unknown = set(c) - CONTAINER_KNOWN
    if unknown:
        die("container fields not translated: %s" % sorted(unknown))


def limits(c):
    lim = c.get("resources", {}).get("limits", {})
    return (int(quantity(lim["memory"])) if "memory" in lim else None,
            quantity(lim["cpu"]) if "cpu" in lim else None)


def docker_args(spec, c, o):
    command, args = process_args(c, o)
    a = ["--cap-drop", "ALL"]
    for cap in caps(c):
        a += ["--cap-add", cap[4:]]
    if spec.get("hostPID"):
        a += ["--pid", "host"]
    a += ["--cgroupns", o.cgroupns]
    sc = c.get("securityContext", {})
    if sc.get("readOnlyRootFilesystem"):
        a.append("--read-only")
    if sc.get("allowPrivilegeEscalation") is False:
        a += ["--security-opt", "no-new-privileges"]
    sp = sc.get("seccompProfile", {}).get("type", "Unconfined")
    if sp == "Unconfined":
        a += ["--security-opt", "seccomp=unconfined"]
    elif sp != "RuntimeDefault":  # RuntimeDefault: Docker's default profile
        die("seccompProfile %s not translated" % sp)
    for dst, kind, src, ro, prop in volumes(spec, c):
        if kind == "bind":
            mode = ",".join(x for x in ["ro" if ro else "rw",
                                        {"None": "", "HostToContainer": "rslave",
                                         "Bidirectional": "rshared"}[prop]] if x)
            a += ["-v", "%s:%s:%s" % (src, dst, mode)]
        else:
            a += ["--tmpfs", dst + (":size=%d" % src if src else "")]
    mem, cpu = limits(c)
    if mem:
        a += ["--memory", str(mem)]
    if cpu:
        a += ["--cpus", "%g" % cpu]
    for e in env(c, o):
        a += ["-e", e]
    if command:
        a += ["--entrypoint", command[0]]
    a.append(o.image or c["image"])
    return a + command[1:] + args


def oci(spec, c, o, template):
    with open(template) as f:
        cfg = json.load(f)
    command, args = process_args(c, o)
    if not command:
        die("oci: the container must name its command (the image's entrypoint is not read)")
    p = cfg["process"]
    p["terminal"] = False
    p["args"] = command + args
    p["env"] = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"] + env(c, o)
    p["cwd"] = "/"
    cl = caps(c)
    p["capabilities"] = {"bounding": cl, "permitted": cl, "effective": cl}
    sc = c.get("securityContext", {})
    # Kubernetes' default (unset) lets a process gain privileges.
    p["noNewPrivileges"] = sc.get("allowPrivilegeEscalation") is False
    p.pop("rlimits", None)  # inherit the runtime's, as containerd does
    cfg["root"]["readonly"] = bool(sc.get("readOnlyRootFilesystem"))
    cfg["hostname"] = "ngx-sockmap-test"
    lx = cfg["linux"]
    ns = [n for n in lx["namespaces"] if n["type"] not in ("pid", "network", "cgroup")]
    if not spec.get("hostPID"):
        ns.append({"type": "pid"})
    if o.netns:
        ns.append({"type": "network", "path": o.netns})
    else:
        ns.append({"type": "network"})
    if o.cgroupns == "private":
        ns.append({"type": "cgroup"})
    lx["namespaces"] = ns
    if o.cgroups_path:
        lx["cgroupsPath"] = o.cgroups_path
    mounts = volumes(spec, c)
    dsts = {m[0] for m in mounts}
    # A volume replaces the runtime's own mount at the same place (as
    # containerd drops its default /sys/fs/cgroup under a hostPath there).
    cfg["mounts"] = [m for m in cfg["mounts"] if m["destination"] not in dsts]
    for dst, kind, src, ro, prop in mounts:
        if kind == "bind":
            opts = ["rbind", "ro" if ro else "rw",
                    {"None": "rprivate", "HostToContainer": "rslave", "Bidirectional": "rshared"}[prop]]
            cfg["mounts"].append({"destination": dst, "type": "bind", "source": src, "options": opts})
        else:
            opts = ["nosuid", "nodev", "mode=755"] + (["size=%d" % src] if src else [])
            cfg["mounts"].append({"destination": dst, "type": "tmpfs", "source": "tmpfs",
                                  "options": opts})
    mem, cpu = limits(c)
    res = lx.setdefault("resources", {})
    if mem:
        res["memory"] = {"limit": mem}
    if cpu:
        res["cpu"] = {"quota": int(cpu * 100000), "period": 100000}
    return cfg


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    ap.add_argument("rendered")
    ap.add_argument("workload")
    ap.add_argument("container")
    ap.add_argument("mode", choices=["docker-args", "oci", "get"])
    ap.add_argument("what", nargs="?")
    ap.add_argument("--image")
    ap.add_argument("--drop-opt", action="append", default=[])
    ap.add_argument("--add-arg", action="append", default=[])
    ap.add_argument("--node-name", default=socket.gethostname())
    ap.add_argument("--netns")
    ap.add_argument("--cgroups-path")
    ap.add_argument("--cgroupns", choices=["private", "host"], default="private")
    o = ap.parse_args()
    with open(o.rendered) as f:
        docs = list(yaml.safe_load_all(f))
    spec, c = find(docs, o.workload, o.container)
    check_fields(spec, c)
    if o.mode == "docker-args":
        print("\n".join(docker_args(spec, c, o)))
    elif o.mode == "oci":
        if not o.what:
            die("oci needs the runc spec template")
        json.dump(oci(spec, c, o, o.what), sys.stdout, indent=1)
    else:
        probes = {"startup-command": "startupProbe", "readiness-command": "readinessProbe",
                  "liveness-command": "livenessProbe"}
        if o.what in probes:
            cmd = c.get(probes[o.what], {}).get("exec", {}).get("command")
            if not cmd:
                die("%s: not an exec probe" % probes[o.what])
            print("\n".join(cmd))
        elif o.what == "metrics-port":
            args = c.get("args", [])
            if "--metrics" not in args:
                die("no --metrics argument")
            print(args[args.index("--metrics") + 1].rsplit(":", 1)[1])
        elif o.what == "memory-limit":
            print(limits(c)[0] or "")
        elif o.what == "image":
            print(c["image"])
        else:
            die("get: unknown %r" % o.what)


if __name__ == "__main__":
    main()
