// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The map layout of every BPF object with __arena globals keeps libbpf
 * before 1.6.1 from relocating them through a dangling pointer.
 *
 * libbpf 1.4.6 (Debian 12's, from bookworm-backports) records the arena as
 * a pointer into obj->maps once the SEC(".maps") maps are parsed
 * (libbpf.c:2975, bpf_object__init_user_btf_maps), then adds the internal
 * maps (.rodata, .bss, ...: bpf_object__init_global_data_maps), each
 * through bpf_object__add_map, which grows obj->maps with realloc
 * (libbpf_ensure_mem: 16 slots, then +25%).  If that realloc moves the
 * array, every __arena relocation gets map_idx = (stale pointer - new
 * array) / sizeof(struct bpf_map) (libbpf.c:4506, bpf_program__record_reloc),
 * and bpf_object__load reads obj->maps[garbage] (libbpf.c:6007,
 * bpf_object__relocate_data): the agent segfaulted on its second data
 * plane load in one process when nonce_pool made accel 20 maps of 20
 * slots.  Whether realloc moves depends on the heap; whether it runs at
 * all only on the counts checked here.  Fixed upstream by storing an
 * index (kernel 0238c45fbbf8 "libbpf: Fix handling of BPF arena
 * relocations", libbpf v1.6.1 and v1.7.0), not in any 1.4.x or 1.5.x.
 */
#include <stdbool.h>
#include <stddef.h>
#include <bpf/libbpf.h>
#include "check.h"
#include "accel.h"
#include "accel.skel.h"
#include "telemetry.h" /* the skeleton's types */
#include "telemetry.skel.h"

/* obj->maps' capacity once n maps are in it (btf.c libbpf_add_mem) */
static size_t maps_cap(size_t n)
{
	size_t cap = 16;

	while (cap < n)
		cap += cap / 4;
	return cap;
}

static void check_object(const char *name, struct bpf_object *obj)
{
	size_t user = 0, internal = 0;
	bool arena = false;
	struct bpf_map *map;

	CHECK(obj, "%s: the object does not open", name);
	if (!obj)
		return;
	bpf_object__for_each_map(map, obj) {
		if (bpf_map__is_internal(map))
			internal++;
		else
			user++;
		arena |= bpf_map__type(map) == BPF_MAP_TYPE_ARENA;
	}
	if (!arena)
		return;
	CHECK(user + internal <= maps_cap(user),
	      "%s: %zu maps in SEC(\".maps\") leave libbpf's array %zu slots, too few for its "
	      "%zu internal maps (.rodata, .bss, ...): the realloc that adds them can leave "
	      "libbpf < 1.6.1 relocating the __arena globals through a stale pointer (see this "
	      "file); add or remove maps until they fit",
	      name, user, maps_cap(user) - user, internal);
	printf("%s: %zu maps + %zu internal, capacity %zu\n", name, user, internal, maps_cap(user));
}

int main(void)
{
	struct accel_bpf *accel = accel_bpf__open();
	struct telemetry_bpf *telemetry = telemetry_bpf__open();

	check_object("accel", accel ? accel->obj : NULL);
	check_object("telemetry", telemetry ? telemetry->obj : NULL);
	accel_bpf__destroy(accel);
	telemetry_bpf__destroy(telemetry);
	return CHECK_SUMMARY();
}
