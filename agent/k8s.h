/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Kubernetes: the Nginx pods of this node, found by label through the API
 * server (the DaemonSet's service account), and the pod-level cgroup of
 * each (deploy/kubernetes/README.md).
 *
 * A pod's cgroup is named after its UID under the kubelet's cgroup driver:
 *   systemd:  .../kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid_>.slice
 *             (guaranteed pods: kubepods.slice/kubepods-pod<uid_>.slice;
 *             the UID's dashes become underscores)
 *   cgroupfs: .../kubepods/<qos>/pod<uid>   (guaranteed: kubepods/pod<uid>)
 * so the directory is found by its name, whatever the driver and however
 * deep the kubepods tree sits (kind and other nested setups).
 */
#ifndef NGX_SOCKMAP_K8S_H
#define NGX_SOCKMAP_K8S_H

#include <stddef.h>
#include "target.h"

/* A namespace name (a DNS-1123 label), and how many --k8s-namespace takes. */
#define K8S_NAMESPACE_MAX  63
#define K8S_NAMESPACES_MAX 16

struct k8s_opts {
	const char *selector; /* label selector, e.g. app.kubernetes.io/name=nginx */
	const char *namespaces; /* "ns[,ns...]", checked; NULL: every namespace */
	const char *node;     /* spec.nodeName of our pods ($NODE_NAME) */
	const char *api;      /* https://$KUBERNETES_SERVICE_HOST:PORT, or a test's URL */
	const char *token_file, *ca_file; /* the service account's */
};

struct k8s_pod {
	char uid[64];
	char name[128]; /* namespace/name */
};

/* The running pods in an API pod list (the JSON of GET /api/v1/pods, or
 * of one namespace's), of namespace ns only unless it is NULL.  Returns
 * how many went into pods (at most max), or -EBADMSG. */
int k8s_parse_pods(const char *json, size_t len, const char *ns, struct k8s_pod *pods, int max);
/* The pod-level cgroup directory of a pod UID under the mount: 0 with
 * path filled, or -ENOENT. */
int k8s_pod_cgroup(const char *mnt, const char *uid, char *path, size_t len);
/* Ask the API for the selected pods of our node (in each of o->namespaces,
 * else in all) and resolve their cgroups
 * (kind TK_K8S, reason "k8s pod NS/NAME").  Returns how many went into
 * out, or -errno with one line in err. */
int k8s_targets(const struct k8s_opts *o, const char *mnt, struct cg_target *out, int max,
		char *err, size_t errlen);

#endif
