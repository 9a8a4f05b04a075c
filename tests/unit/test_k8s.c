// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The API's pod list, as agent/k8s.c reads it: running pods only, names
 * and UIDs kept, anything that is not a pod list refused. */
#include <string.h>
#include "check.h"
#include "k8s.h"

static int parse(const char *json, struct k8s_pod *pods, int max)
{
	return k8s_parse_pods(json, strlen(json), NULL, pods, max);
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
	return CHECK_SUMMARY();
}
