#!/usr/bin/env bash
# timeout: 60
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: every kustomization under deploy/kubernetes renders offline with
# `kubectl kustomize`, and the rendered objects are what
# deploy/kubernetes/README.md says (tests/lib/k8s_check.py: capabilities
# exactly BPF, PERFMON, NET_ADMIN, SYS_ADMIN, SYS_PTRACE with ALL dropped, not
# privileged, hostPID only where the agent follows peers, the host's cgroup
# and bpffs mounts, exec probes (`ngx-sockmap health`, none on the
# metrics server, whose connections any pod can hold), resources, the
# prometheus.io annotations, RBAC, the PodMonitor and PrometheusRule, the
# sidecar agreeing with the DaemonSet).  pod-sidecar.sh finds a pod's
# cgroup in both kubelet layouts.  Needs no cluster and no root.
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/deploy.sh"
need_render_tools
log "$(kubectl version --client 2>/dev/null | tr '\n' ' ')"

deploy_render base "$TMP/base.yaml"
for o in base overlays/sidecar overlays/prometheus-operator; do
	name=$(basename "$o")
	deploy_render "$o" "$TMP/$name.yaml"
	ok "kubectl kustomize deploy/kubernetes/$o renders"
	python3 "$TOP/tests/lib/k8s_check.py" "$name" "$TMP/$name.yaml" "$TMP/base.yaml" >"$TMP/$name.check" 2>&1 ||
		{ cat "$TMP/$name.check"; fail "deploy/kubernetes/$o: $(tail -n 1 "$TMP/$name.check")"; }
	ok "$o: $(grep -c '^ok' "$TMP/$name.check") checks of the rendered objects"
done
# Every kustomization is one of those three (a new one needs its checks).
n=$(find "$TOP/deploy/kubernetes" -name kustomization.yaml | wc -l)
assert_eq "$n" 4 "kustomizations under deploy/kubernetes (base, 2 overlays, the sidecar component)"

# pod-sidecar.sh: the pod's cgroup directory from its UID, in a tree laid
# out as the kubelet's systemd and cgroupfs drivers lay it out (plain
# directories here: the script only looks).
script=$TOP/deploy/kubernetes/components/sidecar/pod-sidecar.sh
uid=0d5e3c2a-6b8f-4f1e-9c3d-2a1b0c9d8e7f
mkdir -p "$TMP/sd/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid//-/_}.slice/cri-containerd-1.scope" \
	"$TMP/sd/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1${uid:1}.slice" \
	"$TMP/cf/kubepods/besteffort/pod$uid/ctr" "$TMP/cf/kubepods/besteffort/pod1${uid:1}" \
	"$TMP/kind/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod${uid//-/_}.slice"
mkdir -p "$TMP/bin"
printf '#!/bin/sh\necho "$@"\n' >"$TMP/bin/ngx-sockmap"
chmod +x "$TMP/bin/ngx-sockmap"
for layout in "sd:kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid//-/_}.slice" \
	"cf:kubepods/besteffort/pod$uid" \
	"kind:kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod${uid//-/_}.slice"; do
	d=${layout%%:*}
	got=$(POD_UID=$uid NGX_SOCKMAP_CGROUP_ROOT=$TMP/$d PATH=$TMP/bin:$PATH sh "$script" --metrics 0.0.0.0:10435 2>&1 | tail -n 1)
	assert_eq "$got" "run --cgroup $TMP/$d/${layout#*:} --no-follow --metrics 0.0.0.0:10435" "pod-sidecar.sh, $d layout"
done
got=$(POD_UID='../x' NGX_SOCKMAP_CGROUP_ROOT=$TMP/sd PATH=$TMP/bin:$PATH sh "$script" 2>&1)
[[ $got == *"is not a pod UID"* ]] || fail "pod-sidecar.sh accepted POD_UID '../x': $got"
ok "pod-sidecar.sh refuses a POD_UID that is not one"
