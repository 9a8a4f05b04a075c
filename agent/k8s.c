// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
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

/* A pod object into pod: true when it is running, has a UID, and is of
 * namespace want_ns (unless NULL). */
static bool pod_of(json_object *it, const char *want_ns, struct k8s_pod *pod)
{
	json_object *md = get(it, "metadata");
	const char *uid, *phase, *ns, *name;

	/* whole: sets are compared byte for byte (k8s_watch_poll) */
	memset(pod, 0, sizeof(*pod));
	uid = json_object_get_string(get(md, "uid"));
	phase = json_object_get_string(get(get(it, "status"), "phase"));
	ns = json_object_get_string(get(md, "namespace"));
	name = json_object_get_string(get(md, "name"));
	/* a pending pod has no processes yet; a finished one has none left */
	if (!uid || !*uid || strlen(uid) >= sizeof(pod->uid) || !phase || strcmp(phase, "Running"))
		return false;
	/* a namespace's list names no other: one that does is not what was
	 * asked for (a proxy, a wrong URL), and not ours */
	if (want_ns && (!ns || strcmp(ns, want_ns)))
		return false;
	snprintf(pod->uid, sizeof(pod->uid), "%s", uid);
	snprintf(pod->name, sizeof(pod->name), "%s/%s", ns ?: "?", name ?: "?");
	return true;
}

static json_object *parse(const char *json, size_t len)
{
	json_tokener *tok = json_tokener_new();
	json_object *root;

	if (!tok)
		return NULL;
	root = json_tokener_parse_ex(tok, json, (int)len);
	json_tokener_free(tok);
	return root;
}

/* The list's pods into pods[0..max), or -EBADMSG; rv gets its version. */
static int list_items(const char *json, size_t len, const char *want_ns, struct k8s_pod *pods,
		      int max, char *rv, size_t rvlen)
{
	json_object *root = parse(json, len), *items;
	const char *v;
	int n = 0;
	size_t i;

	items = root ? get(root, "items") : NULL;
	if (!items || !json_object_is_type(items, json_type_array)) {
		json_object_put(root);
		return -EBADMSG;
	}
	for (i = 0; i < json_object_array_length(items) && n < max; i++)
		n += pod_of(json_object_array_get_idx(items, i), want_ns, &pods[n]);
	if (rv) {
		v = json_object_get_string(get(get(root, "metadata"), "resourceVersion"));
		snprintf(rv, rvlen, "%s", v && strlen(v) < rvlen ? v : "");
	}
	json_object_put(root);
	return n;
}

int k8s_parse_pods(const char *json, size_t len, const char *want_ns, struct k8s_pod *pods,
		   int max)
{
	return list_items(json, len, want_ns, pods, max, NULL, 0);
}

int k8s_parse_list(const char *json, size_t len, const char *ns, struct k8s_podset *set)
{
	struct k8s_podset fresh;
	int n;

	n = list_items(json, len, ns, fresh.pods, MAX_TARGETS, fresh.rv, sizeof(fresh.rv));
	if (n < 0)
		return n;
	fresh.n = n;
	*set = fresh;
	return n;
}

static void set_remove(struct k8s_podset *set, const char *uid)
{
	int i;

	for (i = 0; i < set->n; i++)
		if (!strcmp(set->pods[i].uid, uid))
			set->pods[i--] = set->pods[--set->n];
}

static void set_put(struct k8s_podset *set, const struct k8s_pod *pod)
{
	int i;

	for (i = 0; i < set->n; i++)
		if (!strcmp(set->pods[i].uid, pod->uid))
			break;
	if (i < MAX_TARGETS) {
		set->pods[i] = *pod;
		set->n += i == set->n;
	}
}

/*
 * One event of a watch (the API's "watch" semantics, Kubernetes API
 * concepts, "Efficient detection of changes"): ADDED, MODIFIED and
 * DELETED carry the pod as it is now; BOOKMARK only a newer
 * resourceVersion (allowWatchBookmarks); ERROR a Status, 410 Gone when
 * the version watched from is older than the server keeps: the list is
 * read again.  A pod that stops running (phase Succeeded or Failed, or
 * no longer Running) leaves the set as a DELETED one does.
 */
int k8s_watch_event(const char *line, size_t len, const char *ns, struct k8s_podset *set,
		    char *err, size_t errlen)
{
	json_object *root = parse(line, len), *obj;
	const char *type, *v, *msg, *uid;
	struct k8s_pod pod;
	int ret = -EBADMSG;
	int code;

	type = json_object_get_string(get(root, "type"));
	obj = get(root, "object");
	if (!type || !obj || !json_object_is_type(obj, json_type_object))
		goto out;
	if (!strcmp(type, "ERROR")) {
		code = json_object_get_int(get(obj, "code"));
		v = json_object_get_string(get(obj, "reason"));
		msg = json_object_get_string(get(obj, "message"));
		snprintf(err, errlen, "k8s: watch: ERROR %d %s: %s", code, v ?: "", msg ?: "");
		ret = code == 410 || (v && (!strcmp(v, "Expired") || !strcmp(v, "Gone")))
			      ? K8S_EV_RELIST
			      : K8S_EV_ERROR;
		if (ret == K8S_EV_RELIST)
			set->rv[0] = 0;
		goto out;
	}
	v = json_object_get_string(get(get(obj, "metadata"), "resourceVersion"));
	if (!v || !*v || strlen(v) >= sizeof(set->rv))
		goto out;
	if (!strcmp(type, "BOOKMARK")) {
		ret = K8S_EV_BOOKMARK;
	} else if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED") ||
		   !strcmp(type, "DELETED")) {
		uid = json_object_get_string(get(get(obj, "metadata"), "uid"));
		if (!uid || !*uid)
			goto out;
		if (strcmp(type, "DELETED") && pod_of(obj, ns, &pod))
			set_put(set, &pod);
		else
			set_remove(set, uid);
		ret = K8S_EV_CHANGED;
	} else {
		goto out;
	}
	snprintf(set->rv, sizeof(set->rv), "%s", v);
out:
	json_object_put(root);
	return ret;
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


static size_t take(char *data, size_t size, size_t n, void *userdata)
{
	struct k8s_buf *r = userdata;
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

/* An easy handle for GET /api/v1[/namespaces/NS]/pods?selectors[&extra]
 * into r, with the service account's token (read each time: it is
 * rotated).  NULL with err set. */
static CURL *pods_request(const struct k8s_opts *o, const char *ns, const char *extra,
			  long timeout_ms, struct k8s_buf *r, struct curl_slist **hdr, char *err,
			  size_t errlen)
{
	char path[K8S_NAMESPACE_MAX + 32];
	char url[2048], auth[4200], tok[4096];
	char *sel, *field;
	CURL *c;

	*hdr = NULL;
	c = curl_easy_init();
	if (!c) {
		snprintf(err, errlen, "k8s: curl_easy_init failed");
		return NULL;
	}
	sel = curl_easy_escape(c, o->selector, 0);
	snprintf(url, sizeof(url), "spec.nodeName=%s", o->node);
	field = curl_easy_escape(c, url, 0);
	if (ns)
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	else
		snprintf(path, sizeof(path), "/api/v1/pods");
	snprintf(url, sizeof(url), "%s%s?labelSelector=%s&fieldSelector=%s%s%s", o->api, path,
		 sel ?: "", field ?: "", extra ? "&" : "", extra ?: "");
	curl_free(sel);
	curl_free(field);
	read_token(o->token_file, tok, sizeof(tok));
	if (tok[0]) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", tok);
		*hdr = curl_slist_append(*hdr, auth);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, *hdr);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (o->ca_file && !access(o->ca_file, R_OK))
		curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	return c;
}

/* How a request ended: 0, or -errno with err set. */
static int request_result(const struct k8s_opts *o, const char *ns, CURL *c, CURLcode rc,
			  char *err, size_t errlen)
{
	long code = 0;

	if (rc != CURLE_OK) {
		snprintf(err, errlen, "k8s: GET %s: %s", o->api, curl_easy_strerror(rc));
		return -EIO;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (code == 410) {
		snprintf(err, errlen, "k8s: GET %s: HTTP 410 Gone", o->api);
		return -ESTALE;
	}
	if (code != 200) {
		snprintf(err, errlen, "k8s: GET %s%s%s/pods: HTTP %ld%s", o->api,
			 ns ? "/api/v1/namespaces/" : "/api/v1", ns ?: "", code,
			 code == 401 || code == 403 ? " (the service account may not list pods there)"
						    : "");
		return -EACCES;
	}
	return 0;
}

/* GET the pod list, of namespace ns only unless it is NULL.  0 with the
 * body in r, or -errno with err set. */
static int list_pods(const struct k8s_opts *o, const char *ns, long timeout_ms, struct k8s_buf *r,
		     char *err, size_t errlen)
{
	struct curl_slist *hdr;
	CURLcode rc;
	CURL *c;
	int ret;

	c = pods_request(o, ns, NULL, timeout_ms, r, &hdr, err, errlen);
	if (!c)
		return -ENOMEM;
	rc = curl_easy_perform(c);
	ret = request_result(o, ns, c, rc, err, errlen);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	return ret;
}

/* The selected pods of one namespace (ns), or of all (NULL), appended to
 * pods[*n..max).  0 or -errno with err set. */
static int pods_of(const struct k8s_opts *o, const char *ns, const struct timespec *deadline,
		   struct k8s_pod *pods, int *n, int max, char *err, size_t errlen)
{
	struct k8s_buf r = { 0 };
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

/* The cgroups of pods[0..n) that have one (yet), into out. */
static int pods_targets(const struct k8s_pod *pods, int n, const char *mnt, struct cg_target *out,
			int max)
{
	char path[PATH_MAX], err[PATH_MAX + 256];
	int i, got = 0;

	for (i = 0; i < n && got < max; i++) {
		if (k8s_pod_cgroup(mnt, pods[i].uid, path, sizeof(path))) {
			pr_debug("k8s: pod %s (%s): no cgroup yet\n", pods[i].name, pods[i].uid);
			continue;
		}
		memset(&out[got], 0, sizeof(out[got]));
		if (cg2_resolve(mnt, path, &out[got], err, sizeof(err)))
			continue;
		out[got].kind = TK_K8S;
		snprintf(out[got].reason, sizeof(out[got].reason), "k8s pod %.50s", pods[i].name);
		got++;
	}
	return got;
}

int k8s_targets(const struct k8s_opts *o, const char *mnt, struct cg_target *out, int max,
		char *err, size_t errlen)
{
	struct k8s_pod pods[MAX_TARGETS];
	char ns[K8S_NAMESPACE_MAX + 1];
	const char *p = o->namespaces, *end;
	int n = 0, ret;
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
	return pods_targets(pods, n, mnt, out, max);
}

/* ---- the watch ---- */

/* A watch the server ends after this (it may end it sooner); taken up
 * again from the last version seen. */
#define K8S_WATCH_SECONDS 290
#define K8S_BACKOFF_MIN_MS 1000L
#define K8S_BACKOFF_MAX_MS 30000L

static long ms_until(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (t->tv_sec - now.tv_sec) * 1000L + (t->tv_nsec - now.tv_nsec) / 1000000L;
}

/* A watch's bytes: every whole line is an event, applied at once. */
static size_t take_events(char *data, size_t size, size_t n, void *userdata)
{
	struct k8s_stream *st = userdata;
	struct k8s_buf *b = &st->in;
	size_t add = size * n, used = 0;
	char err[512], *nl, *grown;
	int ret;

	if (b->len + add > K8S_MAX_REPLY)
		return 0;
	grown = realloc(b->buf, b->len + add + 1);
	if (!grown)
		return 0;
	b->buf = grown;
	memcpy(b->buf + b->len, data, add);
	b->len += add;
	b->buf[b->len] = 0;
	while ((nl = memchr(b->buf + used, '\n', b->len - used))) {
		ret = nl > b->buf + used ? k8s_watch_event(b->buf + used, nl - (b->buf + used),
							   st->ns[0] ? st->ns : NULL, &st->set, err,
							   sizeof(err))
					 : K8S_EV_BOOKMARK;
		used = nl + 1 - b->buf;
		if (ret == K8S_EV_RELIST) {
			pr_info("%s: listing again\n", err);
			st->relist = true;
			return 0; /* ends this watch */
		}
		if (ret == K8S_EV_ERROR || ret < 0) {
			pr_warn("%s\n", ret < 0 ? "k8s: watch: a line that is not an event" : err);
			st->bad = true;
			return 0;
		}
	}
	memmove(b->buf, b->buf + used, b->len - used);
	b->len -= used;
	return add;
}

static void stream_end(struct k8s_watcher *w, struct k8s_stream *st)
{
	if (st->easy) {
		curl_multi_remove_handle(w->multi, st->easy);
		curl_easy_cleanup(st->easy);
	}
	curl_slist_free_all(st->hdr);
	st->easy = st->hdr = NULL;
	free(st->in.buf);
	st->in.buf = NULL;
	st->in.len = 0;
}

/* Start the stream's next request: a list, or a watch from its version. */
static void stream_start(struct k8s_watcher *w, struct k8s_stream *st)
{
	const struct k8s_opts *o = w->o;
	char extra[160], err[512];
	CURL *c;

	st->watching = st->listed && st->set.rv[0] && !st->relist;
	st->relist = st->bad = false;
	snprintf(extra, sizeof(extra),
		 "watch=1&allowWatchBookmarks=true&timeoutSeconds=%d&resourceVersion=%s",
		 K8S_WATCH_SECONDS, st->set.rv);
	c = pods_request(o, st->ns[0] ? st->ns : NULL, st->watching ? extra : NULL,
			 st->watching ? (K8S_WATCH_SECONDS + 30) * 1000L : K8S_BUDGET_MS, &st->in,
			 (struct curl_slist **)&st->hdr, err, sizeof(err));
	if (!c) {
		pr_warn("%s\n", err);
		return;
	}
	if (st->watching) {
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take_events);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, st);
		/* a server that went away without a word: known within a minute */
		curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
		curl_easy_setopt(c, CURLOPT_TCP_KEEPIDLE, 30L);
		curl_easy_setopt(c, CURLOPT_TCP_KEEPINTVL, 10L);
	}
	curl_easy_setopt(c, CURLOPT_PRIVATE, st);
	st->easy = c;
	if (curl_multi_add_handle(w->multi, c) != CURLM_OK) {
		stream_end(w, st);
		return;
	}
	if (st->watching)
		w->watches++;
	else
		w->lists++;
}

/* A request of st ended (rc): take its answer, and say what comes next. */
static bool stream_done(struct k8s_watcher *w, struct k8s_stream *st, CURLcode rc)
{
	char err[512] = "";
	bool changed = false;
	long wait = 0;
	int ret;

	if (st->bad) {
		snprintf(err, sizeof(err), "k8s: watch %s: ended on a bad event", w->o->api);
		ret = -EBADMSG;
	} else {
		ret = st->relist ? 0 : request_result(w->o, st->ns[0] ? st->ns : NULL, st->easy, rc,
						       err, sizeof(err));
	}
	if (!ret && !st->watching && !st->relist) {
		struct k8s_podset before = st->set;

		if (k8s_parse_list(st->in.buf ?: "", st->in.len, st->ns[0] ? st->ns : NULL, &st->set) < 0) {
			snprintf(err, sizeof(err), "k8s: the API's pod list is not a pod list");
			ret = -EBADMSG;
		} else {
			changed = !st->listed || before.n != st->set.n ||
				  memcmp(before.pods, st->set.pods, st->set.n * sizeof(st->set.pods[0]));
			st->listed = true;
		}
	}
	if (ret == -ESTALE) { /* the watch's version is gone: list now */
		st->set.rv[0] = 0;
		st->relist = true;
		ret = 0;
	}
	stream_end(w, st);
	if (ret) {
		/* a failed list or watch: keep the pods (a flapping API server
		 * must not detach nginx), and list again after a while */
		if (!st->failing)
			pr_warn("%s: asking again in %ld s (and backing off)\n", err,
				(st->backoff_ms ?: K8S_BACKOFF_MIN_MS) / 1000);
		st->failing = true;
		wait = st->backoff_ms ?: K8S_BACKOFF_MIN_MS;
		st->backoff_ms = wait * 2 > K8S_BACKOFF_MAX_MS ? K8S_BACKOFF_MAX_MS : wait * 2;
		st->relist = true;
	} else {
		if (st->failing)
			pr_info("k8s: the API answers again%s%s\n", st->ns[0] ? ": namespace " : "",
				st->ns);
		st->failing = false;
		st->backoff_ms = 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &st->retry_at);
	st->retry_at.tv_sec += wait / 1000;
	st->retry_at.tv_nsec += (wait % 1000) * 1000000L;
	if (st->retry_at.tv_nsec >= 1000000000L) {
		st->retry_at.tv_sec++;
		st->retry_at.tv_nsec -= 1000000000L;
	}
	return changed;
}

int k8s_watch_init(struct k8s_watcher *w, const struct k8s_opts *o)
{
	const char *p = o->namespaces, *end;

	memset(w, 0, sizeof(*w));
	w->o = o;
	w->multi = curl_multi_init();
	if (!w->multi)
		return -ENOMEM;
	if (!p) {
		w->n = 1;
	}
	while (p && w->n < K8S_NAMESPACES_MAX) {
		end = p + strcspn(p, ",");
		snprintf(w->streams[w->n++].ns, sizeof(w->streams[0].ns), "%.*s", (int)(end - p), p);
		p = *end ? end + 1 : NULL;
	}
	return 0;
}

bool k8s_watch_poll(struct k8s_watcher *w)
{
	struct k8s_pod before[MAX_TARGETS], after[MAX_TARGETS];
	int nb, na, running, left, i;
	struct k8s_stream *st;
	bool changed = false;
	CURLMsg *m;

	if (!w->multi)
		return false;
	nb = k8s_watch_pods(w, before, MAX_TARGETS);
	curl_multi_perform(w->multi, &running);
	while ((m = curl_multi_info_read(w->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		st = NULL;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&st);
		if (st)
			changed |= stream_done(w, st, m->data.result);
	}
	/* what is due next (a watch after its list, a list after a
	 * failure's wait), sent now rather than a tick later */
	for (i = 0; i < w->n; i++) {
		st = &w->streams[i];
		if (!st->easy && ms_until(&st->retry_at) <= 0)
			stream_start(w, st);
	}
	curl_multi_perform(w->multi, &running);
	/* a watch's events change the sets as they arrive */
	na = k8s_watch_pods(w, after, MAX_TARGETS);
	return changed || na != nb || memcmp(before, after, na * sizeof(after[0]));
}

bool k8s_watch_complete(const struct k8s_watcher *w)
{
	int i;

	for (i = 0; i < w->n; i++)
		if (!w->streams[i].listed)
			return false;
	return true;
}

int k8s_watch_pods(const struct k8s_watcher *w, struct k8s_pod *pods, int max)
{
	int i, j, n = 0;

	for (i = 0; i < w->n; i++)
		for (j = 0; j < w->streams[i].set.n && n < max; j++)
			pods[n++] = w->streams[i].set.pods[j];
	return n;
}

int k8s_watch_targets(const struct k8s_watcher *w, const char *mnt, struct cg_target *out,
		      int max)
{
	struct k8s_pod pods[MAX_TARGETS];

	return pods_targets(pods, k8s_watch_pods(w, pods, MAX_TARGETS), mnt, out, max);
}

void k8s_watch_free(struct k8s_watcher *w)
{
	int i;

	if (!w->multi)
		return;
	for (i = 0; i < w->n; i++)
		stream_end(w, &w->streams[i]);
	curl_multi_cleanup(w->multi);
	w->multi = NULL;
}
