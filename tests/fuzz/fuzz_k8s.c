// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: k8s_parse_pods (agent/k8s.c), the API server's pod
 * list (GET /api/v1/pods?labelSelector=...&fieldSelector=spec.nodeName=...).
 * The first byte chooses the namespace asked for and how many pods fit;
 * the rest is the reply's body, not NUL-terminated (curl's buffer is, the
 * parser must not need it).  Every pod taken must be a Running one with a
 * UID that fits, and names must be terminated.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const nss[] = { NULL, "default", "kube-system", "" };
	struct k8s_pod pods[8];
	int max, n, i;

	if (!size)
		return 0;
	max = 1 + (data[0] >> 2) % 8;
	memset(pods, 0xa5, sizeof(pods));
	n = k8s_parse_pods((const char *)data + 1, size - 1, nss[data[0] & 3], pods, max);
	if (n < -4095 || n > max || (n < 0 && n != -EBADMSG && n != -ENOMEM))
		abort();
	for (i = 0; i < n; i++)
		if (!memchr(pods[i].uid, 0, sizeof(pods[i].uid)) || !pods[i].uid[0] ||
		    !memchr(pods[i].name, 0, sizeof(pods[i].name)))
			abort();
	return 0;
}
