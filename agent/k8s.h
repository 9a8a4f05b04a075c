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

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
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
/* The pods one namespace's list (or all namespaces') says are running,
 * kept current by the watch events that follow it, and the
 * resourceVersion to watch from. */
struct k8s_podset {
	struct k8s_pod pods[MAX_TARGETS];
	int n;
	char rv[64]; /* "": none, list first */
};

/* A pod list, as k8s_parse_pods reads it, into set, with its
 * resourceVersion.  set->n, or -EBADMSG (set unchanged). */
int k8s_parse_list(const char *json, size_t len, const char *ns, struct k8s_podset *set);

/* What one line of a watch stream (?watch=1: a JSON object a line,
 * {"type": ..., "object": ...}) did to the set. */
enum k8s_event {
	K8S_EV_CHANGED,  /* ADDED, MODIFIED, DELETED: applied, rv moved on */
	K8S_EV_BOOKMARK, /* rv moved on, nothing else */
	K8S_EV_RELIST,   /* ERROR 410 Gone: rv too old, list again */
	K8S_EV_ERROR,    /* another ERROR (err says it): watch again later */
};
/* Apply one watch event line to set.  An enum k8s_event, or -EBADMSG. */
int k8s_watch_event(const char *line, size_t len, const char *ns, struct k8s_podset *set,
		    char *err, size_t errlen);

/* The pod-level cgroup directory of a pod UID under the mount: 0 with
 * path filled, or -ENOENT. */
int k8s_pod_cgroup(const char *mnt, const char *uid, char *path, size_t len);
/* Ask the API for the selected pods of our node (in each of o->namespaces,
 * else in all) and resolve their cgroups
 * (kind TK_K8S, reason "k8s pod NS/NAME").  Returns how many went into
 * out, or -errno with one line in err. */
int k8s_targets(const struct k8s_opts *o, const char *mnt, struct cg_target *out, int max,
		char *err, size_t errlen);

/*
 * The pods, watched rather than listed every few seconds: per namespace
 * (or for all), a LIST, then a watch (?watch=1) from the list's
 * resourceVersion, its events applied as they come; a watch the server
 * ends is taken up again from the last version seen, one that says 410
 * Gone (the version is older than the server keeps) lists again, and one
 * that fails is retried with a backoff (1 s, doubling to 30 s), listing
 * again.  Everything runs in the agent's loop through libcurl's multi
 * interface: k8s_watch_poll() never blocks.
 */
/* A reply's bytes as they come (NUL-terminated). */
struct k8s_buf {
	char *buf;
	size_t len;
};

struct k8s_stream {
	char ns[K8S_NAMESPACE_MAX + 1]; /* "": every namespace */
	struct k8s_podset set;
	bool listed;            /* set holds a list's answer (and its events') */
	bool watching;          /* the request in flight is a watch */
	bool relist;            /* the watch said 410 Gone: list again at once */
	bool bad;               /* the watch said something else: a failure */
	void *easy;             /* CURL *: the request in flight, or NULL */
	void *hdr;              /* struct curl_slist * of that request */
	struct k8s_buf in;      /* a list's body, or a watch's unfinished line */
	long backoff_ms;        /* the next wait after a failure */
	struct timespec retry_at; /* no request before it */
	bool failing;           /* said once per spell of failures */
};

struct k8s_watcher {
	const struct k8s_opts *o;
	void *multi;            /* CURLM * */
	struct k8s_stream streams[K8S_NAMESPACES_MAX];
	int n;
	unsigned long lists, watches; /* requests made, for the log and tests */
};

/* Set up the streams of o (its namespaces, or one for all).  0 or -ENOMEM. */
int k8s_watch_init(struct k8s_watcher *w, const struct k8s_opts *o);
/* Move every stream on, without blocking.  true when the pods changed. */
bool k8s_watch_poll(struct k8s_watcher *w);
/* Has every stream's list been read (so that a pod missing from the
 * sets is not selected, rather than not yet known)? */
bool k8s_watch_complete(const struct k8s_watcher *w);
/* The pods of every stream, into pods[0..max).  How many. */
int k8s_watch_pods(const struct k8s_watcher *w, struct k8s_pod *pods, int max);
/* Their cgroups, as k8s_targets resolves them.  How many went into out. */
int k8s_watch_targets(const struct k8s_watcher *w, const char *mnt, struct cg_target *out,
		      int max);
void k8s_watch_free(struct k8s_watcher *w);

#endif
