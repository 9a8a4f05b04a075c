// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "k8s.h"
#include "log.h"

/* Pod lists are a few kB a pod; past this the answer is not ours. */
#define K8S_MAX_REPLY (32u << 20)
/* What one ask of the API may take in all, however many namespaces it
 * lists: it runs in the agent's loop, whose tick renews the guard's
 * heartbeat (GUARD_ALIVE_NS, 15 s) and answers `health` (30 s). */
#define K8S_BUDGET_MS 5000L

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

int k8s_parse_pods(const char *json, size_t len, const char *want_ns, struct k8s_pod *pods,
		   int max)
{
	json_tokener *tok = json_tokener_new();
	json_object *root, *items, *it, *md;
	const char *uid, *phase, *ns, *name;
	int n = 0;
	size_t i;

	if (!tok)
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, json, (int)len);
	json_tokener_free(tok);
	items = root ? get(root, "items") : NULL;
	if (!items || !json_object_is_type(items, json_type_array)) {
		json_object_put(root);
		return -EBADMSG;
	}
	for (i = 0; i < json_object_array_length(items) && n < max; i++) {
		it = json_object_array_get_idx(items, i);
		md = get(it, "metadata");
		uid = json_object_get_string(get(md, "uid"));
		phase = json_object_get_string(get(get(it, "status"), "phase"));
		ns = json_object_get_string(get(md, "namespace"));
		name = json_object_get_string(get(md, "name"));
		/* a pending pod has no processes yet; a finished one has none left */
		if (!uid || !*uid || strlen(uid) >= sizeof(pods[n].uid) || !phase ||
		    strcmp(phase, "Running"))
			continue;
		/* a namespace's list names no other: one that does is not
		 * what was asked for (a proxy, a wrong URL), and not ours */
		if (want_ns && (!ns || strcmp(ns, want_ns)))
			continue;
		snprintf(pods[n].uid, sizeof(pods[n].uid), "%s", uid);
		snprintf(pods[n].name, sizeof(pods[n].name), "%s/%s", ns ?: "?", name ?: "?");
		n++;
	}
	json_object_put(root);
	return n;
}

/* nftw can't take a context: the UID's two spellings and what was found */
static char want_dash[80], want_under[80], found[PATH_MAX];

static int match_pod(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	const char *base = path + ftw->base;

	(void)st;
	if (flag != FTW_D)
		return 0;
	/* "pod<uid>" (cgroupfs) or "...-pod<uid_>.slice" (systemd) */
	if (strstr(base, want_dash) || strstr(base, want_under)) {
		snprintf(found, sizeof(found), "%s", path);
		return 1;
	}
	return 0;
}

int k8s_pod_cgroup(const char *mnt, const char *uid, char *path, size_t len)
{
	size_t i;

	snprintf(want_dash, sizeof(want_dash), "pod%s", uid);
	snprintf(want_under, sizeof(want_under), "pod%s", uid);
	for (i = 0; want_under[i]; i++)
		if (want_under[i] == '-')
			want_under[i] = '_';
	found[0] = 0;
	if (nftw(mnt, match_pod, 16, FTW_PHYS | FTW_MOUNT) != 1)
		return -ENOENT;
	snprintf(path, len, "%s", found);
	return 0;
}

struct reply {
	char *buf;
	size_t len;
};

static size_t take(char *data, size_t size, size_t n, void *userdata)
{
	struct reply *r = userdata;
	size_t add = size * n;
	char *grown;

	if (r->len + add > K8S_MAX_REPLY)
		return 0; /* aborts the transfer */
	grown = realloc(r->buf, r->len + add + 1);
	if (!grown)
		return 0;
	r->buf = grown;
	memcpy(r->buf + r->len, data, add);
	r->len += add;
	r->buf[r->len] = 0;
	return add;
}

/* The service account's bearer token, "" when there is none (tests). */
static void read_token(const char *file, char *tok, size_t len)
{
	FILE *f = file ? fopen(file, "re") : NULL;

	tok[0] = 0;
	if (!f)
		return;
	if (!fgets(tok, len, f))
		tok[0] = 0;
	fclose(f);
	tok[strcspn(tok, "\r\n")] = 0;
}

/* GET the pod list, of namespace ns only unless it is NULL.  0 with the
 * body in r, or -errno with err set. */
static int list_pods(const struct k8s_opts *o, const char *ns, long timeout_ms, struct reply *r,
		     char *err, size_t errlen)
{
	char path[K8S_NAMESPACE_MAX + 32];
	char url[2048], auth[4200], tok[4096];
	struct curl_slist *hdr = NULL;
	char *sel, *field;
	long code = 0;
	CURLcode rc;
	CURL *c;

	c = curl_easy_init();
	if (!c) {
		snprintf(err, errlen, "k8s: curl_easy_init failed");
		return -ENOMEM;
	}
	sel = curl_easy_escape(c, o->selector, 0);
	snprintf(url, sizeof(url), "spec.nodeName=%s", o->node);
	field = curl_easy_escape(c, url, 0);
	if (ns)
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	else
		snprintf(path, sizeof(path), "/api/v1/pods");
	snprintf(url, sizeof(url), "%s%s?labelSelector=%s&fieldSelector=%s", o->api, path,
		 sel ?: "", field ?: "");
	curl_free(sel);
	curl_free(field);
	read_token(o->token_file, tok, sizeof(tok));
	if (tok[0]) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", tok);
		hdr = curl_slist_append(hdr, auth);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (o->ca_file && !access(o->ca_file, R_OK))
		curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "k8s: GET %s: %s", o->api, curl_easy_strerror(rc));
		return -EIO;
	}
	if (code != 200) {
		snprintf(err, errlen, "k8s: GET %s%s: HTTP %ld%s", o->api, path, code,
			 code == 401 || code == 403 ? " (the service account may not list pods there)"
						    : "");
		return -EACCES;
	}
	return 0;
}

/* The selected pods of one namespace (ns), or of all (NULL), appended to
 * pods[*n..max).  0 or -errno with err set. */
static int pods_of(const struct k8s_opts *o, const char *ns, const struct timespec *deadline,
		   struct k8s_pod *pods, int *n, int max, char *err, size_t errlen)
{
	struct reply r = { 0 };
	struct timespec now;
	long left;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &now);
	left = (deadline->tv_sec - now.tv_sec) * 1000L + (deadline->tv_nsec - now.tv_nsec) / 1000000L;
	if (left <= 0) {
		snprintf(err, errlen, "k8s: GET %s: no time left of the %ld ms one ask may take "
			 "(namespace %s not asked)", o->api, K8S_BUDGET_MS, ns ?: "all");
		return -ETIMEDOUT;
	}
	ret = list_pods(o, ns, left, &r, err, errlen);
	if (!ret) {
		ret = k8s_parse_pods(r.buf ?: "", r.len, ns, pods + *n, max - *n);
		if (ret < 0)
			snprintf(err, errlen, "k8s: the API's pod list is not a pod list");
		else
			*n += ret;
	}
	free(r.buf);
	return ret < 0 ? ret : 0;
}

int k8s_targets(const struct k8s_opts *o, const char *mnt, struct cg_target *out, int max,
		char *err, size_t errlen)
{
	struct k8s_pod pods[MAX_TARGETS];
	char path[PATH_MAX], ns[K8S_NAMESPACE_MAX + 1];
	const char *p = o->namespaces, *end;
	int n = 0, i, got = 0, ret;
	struct timespec deadline;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += K8S_BUDGET_MS / 1000;
	if (!p) {
		ret = pods_of(o, NULL, &deadline, pods, &n, MAX_TARGETS, err, errlen);
		if (ret)
			return ret;
	}
	/* one list per namespace: a namespaced GET is what a Role in each
	 * tenant's namespace allows, where listing all needs a ClusterRole.
	 * Any one failing fails the whole answer: the caller keeps what it
	 * has rather than detach another namespace's pods.  All of them
	 * share one K8S_BUDGET_MS. */
	while (p) {
		end = p + strcspn(p, ",");
		snprintf(ns, sizeof(ns), "%.*s", (int)(end - p), p);
		ret = pods_of(o, ns, &deadline, pods, &n, MAX_TARGETS, err, errlen);
		if (ret)
			return ret;
		p = *end ? end + 1 : NULL;
	}
	for (i = 0; i < n && got < max; i++) {
		if (k8s_pod_cgroup(mnt, pods[i].uid, path, sizeof(path))) {
			pr_debug("k8s: pod %s (%s): no cgroup yet\n", pods[i].name, pods[i].uid);
			continue;
		}
		memset(&out[got], 0, sizeof(out[got]));
		if (cg2_resolve(mnt, path, &out[got], err, errlen))
			continue;
		out[got].kind = TK_K8S;
		snprintf(out[got].reason, sizeof(out[got].reason), "k8s pod %.50s", pods[i].name);
		got++;
	}
	return got;
}
