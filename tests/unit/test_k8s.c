// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The API's pod list, as agent/k8s.c reads it: running pods only, names
 * and UIDs kept, anything that is not a pod list refused; its
 * resourceVersion, and the watch events that follow it (ADDED, MODIFIED,
 * DELETED, BOOKMARK, ERROR 410 Gone -> list again). */
#include <string.h>
#include "check.h"
#include "k8s.h"

static int parse(const char *json, struct k8s_pod *pods, int max)
{
	return k8s_parse_pods(json, strlen(json), NULL, pods, max);
}

static int ev(const char *line, const char *ns, struct k8s_podset *set)
{
	char err[256];

	return k8s_watch_event(line, strlen(line), ns, set, err, sizeof(err));
}

#define POD(type, rv, uid, name, ns, phase)                                                   \
	"{\"type\":\"" type "\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"uid\":\"" uid \
	"\",\"name\":\"" name "\",\"namespace\":\"" ns "\",\"resourceVersion\":\"" rv    \
	"\"},\"status\":{\"phase\":\"" phase "\"}}}"

static void test_watch(void)
{
	struct k8s_podset set = { .n = 0 };
	const char *list =
		"{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":["
		"{\"metadata\":{\"uid\":\"u-1\",\"name\":\"a\",\"namespace\":\"ns\"},\"status\":{\"phase\":\"Running\"}},"
		"{\"metadata\":{\"uid\":\"u-2\",\"name\":\"b\",\"namespace\":\"ns\"},\"status\":{\"phase\":\"Pending\"}}]}";
	const char *forbidden = "{\"kind\":\"Status\",\"code\":403}";
	const char *expired = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
			      "\"reason\":\"Expired\",\"message\":\"too old resource version\"}}";
	char err[256] = "";

	CHECK(k8s_parse_list(list, strlen(list), NULL, &set) == 1 && set.n == 1 &&
		      !strcmp(set.rv, "100"), "a list: its running pod and its version: %d %s", set.n,
	      set.rv);
	CHECK(k8s_parse_list(forbidden, strlen(forbidden), NULL, &set) < 0 &&
		      set.n == 1 && !strcmp(set.rv, "100"), "not a list: the set as it was");

	/* the pending pod starts running: added */
	CHECK(ev(POD("MODIFIED", "101", "u-2", "b", "ns", "Running"), NULL, &set) == K8S_EV_CHANGED &&
		      set.n == 2 && !strcmp(set.rv, "101") && !strcmp(set.pods[1].name, "ns/b"),
	      "MODIFIED to Running: in the set, version 101: %d %s", set.n, set.rv);
	CHECK(ev(POD("ADDED", "102", "u-3", "c", "ns", "Pending"), NULL, &set) == K8S_EV_CHANGED &&
		      set.n == 2 && !strcmp(set.rv, "102"), "ADDED pending: not in the set");
	CHECK(ev(POD("MODIFIED", "103", "u-2", "b", "ns", "Running"), NULL, &set) == K8S_EV_CHANGED &&
		      set.n == 2, "MODIFIED again: still once");
	CHECK(ev(POD("MODIFIED", "104", "u-1", "a", "ns", "Succeeded"), NULL, &set) == K8S_EV_CHANGED &&
		      set.n == 1 && !strcmp(set.pods[0].uid, "u-2"), "finished: out of the set");
	CHECK(ev(POD("DELETED", "105", "u-2", "b", "ns", "Running"), NULL, &set) == K8S_EV_CHANGED &&
		      set.n == 0 && !strcmp(set.rv, "105"), "DELETED: out of the set");
	CHECK(ev(POD("ADDED", "106", "u-4", "d", "other", "Running"), "ns", &set) == K8S_EV_CHANGED &&
		      set.n == 0, "namespace ns: another's pod not taken");
	CHECK(ev("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"200\"}}}",
		 NULL, &set) == K8S_EV_BOOKMARK && !strcmp(set.rv, "200") && set.n == 0,
	      "BOOKMARK: the version only: %s", set.rv);
	CHECK(k8s_watch_event(expired, strlen(expired), NULL, &set, err, sizeof(err)) ==
			      K8S_EV_RELIST &&
		      !set.rv[0] && strstr(err, "410"),
	      "ERROR 410 Gone: list again, from no version: '%s' %s", set.rv, err);
	CHECK(ev("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500}}", NULL,
		 &set) == K8S_EV_ERROR, "another ERROR: not a relist");
	CHECK(ev("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"uid\":\"u\"}}}", NULL, &set) < 0,
	      "an event without a version refused");
	CHECK(ev("{\"type\":\"WHAT\",\"object\":{\"metadata\":{\"resourceVersion\":\"1\"}}}", NULL,
		 &set) < 0, "an unknown type refused");
	CHECK(ev("{\"kind\":\"PodList\",\"items\":[]}", NULL, &set) < 0,
	      "a list where an event was due refused");
	CHECK(ev("{\"type\":\"ADDED\",\"obj", NULL, &set) < 0, "half a line refused");
}

int main(void)
{
	struct k8s_pod pods[4];
	const char *list =
		"{\"kind\":\"PodList\",\"items\":["
		"{\"metadata\":{\"uid\":\"u-1\",\"name\":\"a\",\"namespace\":\"ns\"},\"status\":{\"phase\":\"Running\"}},"
		"{\"metadata\":{\"uid\":\"u-2\",\"name\":\"b\",\"namespace\":\"ns\"},\"status\":{\"phase\":\"Pending\"}},"
		"{\"metadata\":{\"name\":\"no-uid\"},\"status\":{\"phase\":\"Running\"}},"
		"{\"metadata\":{\"uid\":\"u-3\"},\"status\":{\"phase\":\"Running\"}}]}";

	CHECK(parse(list, pods, 4) == 2, "running pods with a uid: %d", parse(list, pods, 4));
	CHECK(!strcmp(pods[0].uid, "u-1") && !strcmp(pods[0].name, "ns/a"), "first: %s %s",
	      pods[0].uid, pods[0].name);
	CHECK(!strcmp(pods[1].uid, "u-3") && !strcmp(pods[1].name, "?/?"), "names missing: %s",
	      pods[1].name);
	CHECK(parse(list, pods, 1) == 1, "at most max");
	CHECK(parse("{\"items\":[]}", pods, 4) == 0, "empty list");
	CHECK(parse("{\"kind\":\"Status\",\"code\":403}", pods, 4) < 0, "an error status refused");
	CHECK(parse("not json", pods, 4) < 0, "not JSON refused");
	CHECK(parse("{\"items\":{}}", pods, 4) < 0, "items not a list refused");
	CHECK(parse("{\"items\":[1,\"x\",null]}", pods, 4) == 0, "items that are not objects skipped");
	/* one namespace's list: a pod of another, or of none, is not ours */
	CHECK(k8s_parse_pods(list, strlen(list), "ns", pods, 4) == 1 && !strcmp(pods[0].uid, "u-1"),
	      "namespace ns: only its running pod");
	CHECK(k8s_parse_pods(list, strlen(list), "other", pods, 4) == 0,
	      "namespace other: none of ns's pods");
	test_watch();
	return CHECK_SUMMARY();
}
