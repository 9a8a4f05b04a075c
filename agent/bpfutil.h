/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Map helpers every reader of the BPF maps needs (libbpf-tools'
 * map_helpers.c in spirit): each written once. */
#ifndef NGX_SOCKMAP_BPFUTIL_H
#define NGX_SOCKMAP_BPFUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Look up key in a per-CPU map whose value is n_u64 __u64 counters and add
 * every CPU's copy into sum[0..n_u64).  0 or -errno. */
int percpu_sum_u64(int map_fd, const void *key, __u64 *sum, size_t n_u64);
/* The same fold over values already read (e.g. by a batch lookup): per
 * holds ncpu copies of n_u64 counters; sum gets their totals. */
void percpu_fold_u64(const __u64 *per, int ncpu, size_t n_u64, __u64 *sum);
/* The kernel's id of a map (0 on error). */
__u32 map_id(int fd);
/* Open a map by id and check it is still called name: ids are reused
 * once a map is freed.  fd, or -errno (-ENOENT: not that map). */
int map_open_by_id(__u32 id, const char *name);
/* Entries in a hash-like map, by walking it (cost grows with the map). */
long map_count_entries(int fd, size_t key_size);

/* Does this kernel have BPF arena maps (6.9+)?  Where not, the event
 * streams ride on BPF ring buffers (bpf/event_ring.h, event_emit). */
bool kernel_has_arena(void);
/* May an sk_msg program call bpf_get_current_task_btf on this kernel? */
bool kernel_skmsg_has_task_btf(void);
/* Does this kernel's struct sk_psock count unread bytes (msg_tot_len,
 * 6.12.75+, 7.0; vmlinux BTF)?  Without it nothing bounds them. */
bool kernel_has_psock_msg_tot_len(void);
/* Return once every non-sleepable BPF program running now has finished
 * (an update of a map-in-map waits for an RCU grace period: kernel/bpf/
 * syscall.c maybe_wait_bpf_programs).  0 or -errno. */
int bpf_wait_programs(void);

struct bpf_map;
struct bpf_object;

/* A program of a loaded object, by name, for run-time statistics. */
struct prog_ref {
	const char *name;
	int fd;
};
/* The object's programs into out (up to max); returns how many. */
int object_progs(const struct bpf_object *obj, struct prog_ref *out, int max);

/* Before obj is loaded: use owner's copy of every map both declare by
 * the same name (bpf/accel_maps.h: the data plane's maps, shared with
 * the objects loaded after it).  0 or -errno. */
int object_share_maps(struct bpf_object *obj, const struct bpf_object *owner);

/* Where libbpf mapped an arena map and where one of its __arena globals
 * sits in it (bytes from the start); zeros when global is not in it.  A
 * second process must map an arena at the same address
 * (kernel/bpf/arena.c, arena_map_mmap), so `top` needs both. */
void arena_place(const struct bpf_map *arena, const void *global, unsigned long *addr,
		 unsigned long *off);

#endif
