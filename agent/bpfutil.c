// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "bpfutil.h"
#include "test_knobs.h"

void percpu_fold_u64(const __u64 *per, int ncpu, size_t n_u64, __u64 *sum)
{
	size_t j;
	int i;

	memset(sum, 0, n_u64 * sizeof(*sum));
	for (i = 0; i < ncpu; i++)
		for (j = 0; j < n_u64; j++)
			sum[j] += per[(size_t)i * n_u64 + j];
}

int percpu_sum_u64(int map_fd, const void *key, __u64 *sum, size_t n_u64)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *per;

	memset(sum, 0, n_u64 * sizeof(*sum));
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	/* the kernel copies each CPU's value rounded up to 8 bytes: these
	 * values are whole __u64s already */
	per = calloc((size_t)ncpu * n_u64, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, key, per)) {
		free(per);
		return -errno;
	}
	percpu_fold_u64(per, ncpu, n_u64, sum);
	free(per);
	return 0;
}

__u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_map_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

int map_open_by_id(__u32 id, const char *name)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd;

	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	/* the kernel keeps the first BPF_OBJ_NAME_LEN - 1 bytes of a name
	 * (service_profiles is "service_profil") */
	if (bpf_map_get_info_by_fd(fd, &info, &len) ||
	    strncmp(info.name, name, sizeof(info.name) - 1)) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

long map_count_entries(int fd, size_t key_size)
{
	unsigned char key[64], next[64];
	void *prev = NULL;
	long n = 0;

	if (fd < 0 || key_size > sizeof(key))
		return -1;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, key_size);
		prev = key;
		if (++n > 10 * 1000 * 1000)
			break;
	}
	return n;
}

void arena_place(const struct bpf_map *arena, const void *global, unsigned long *addr,
		 unsigned long *off)
{
	size_t size = 0;
	const char *base = bpf_map__initial_value((struct bpf_map *)arena, &size);

	*addr = *off = 0;
	if (!base || (const char *)global < base || (const char *)global >= base + size)
		return;
	*addr = (unsigned long)base;
	*off = (const char *)global - base;
}

int object_progs(const struct bpf_object *obj, struct prog_ref *out, int max)
{
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, obj) {
		if (bpf_program__fd(prog) < 0)
			continue; /* not loaded: the other set of the guard's hooks */
		if (n < max)
			out[n++] = (struct prog_ref){ bpf_program__name(prog), bpf_program__fd(prog) };
	}
	return n;
}

int object_share_maps(struct bpf_object *obj, const struct bpf_object *owner)
{
	struct bpf_map *map, *theirs;
	int err;

	bpf_object__for_each_map(map, obj) {
		/* .rodata, .bss: each object's own */
		if (strchr(bpf_map__name(map), '.'))
			continue;
		theirs = bpf_object__find_map_by_name(owner, bpf_map__name(map));
		if (!theirs)
			continue;
		err = bpf_map__reuse_fd(map, bpf_map__fd(theirs));
		if (err)
			return err;
	}
	return 0;
}

bool kernel_has_arena(void)
{
	/* tests: take the older kernels' path here */
	if (test_knob(KNOB_NO_ARENA))
		return false;
	return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_ARENA, NULL) == 1;
}

bool kernel_skmsg_has_task_btf(void)
{
	/* tests: take the probe-read path of kernels without it here */
	if (test_knob(KNOB_NO_TASK_BTF))
		return false;
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_SK_MSG, BPF_FUNC_get_current_task_btf,
				       NULL) == 1;
}

int bpf_wait_programs(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	int inner, outer, err = 0;
	__u32 zero = 0;

	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ngx_sm_sync_in", 4, 4, 1, NULL);
	if (inner < 0)
		return -errno;
	opts.inner_map_fd = inner;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "ngx_sm_sync", 4, 4, 1, &opts);
	if (outer < 0 || bpf_map_update_elem(outer, &zero, &inner, BPF_ANY))
		err = -errno;
	if (outer >= 0)
		close(outer);
	close(inner);
	return err;
}

bool kernel_has_psock_msg_tot_len(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_member *m;
	const struct btf_type *t;
	bool found = false;
	int id, i;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "sk_psock", BTF_KIND_STRUCT);
	if (id > 0) {
		t = btf__type_by_id(btf, id);
		m = btf_members(t);
		for (i = 0; i < btf_vlen(t); i++, m++)
			if (!strcmp(btf__name_by_offset(btf, m->name_off), "msg_tot_len"))
				found = true;
	}
	btf__free(btf);
	return found;
}
