// SPDX-License-Identifier: GPL-2.0
/*
 * Memory: the kernel memory one QP or one registration takes, measured.
 *
 * On a set-up pair (whose QPs and buffers have warmed the caches the
 * objects come from), cfg->count objects are created back to back and
 * the kernel's own counters read before and after:
 *
 *  - the pages taken from the page allocator: the PGALLOC events of every
 *    zone less PGFREE, exact sums of per-CPU counters, which count slab
 *    pages, vmalloc'd queues and large kmallocs alike, whether a page
 *    came from a per-CPU list or the buddy allocator;
 *  - of those, the pages of slab caches: NR_SLAB_RECLAIMABLE_B and
 *    NR_SLAB_UNRECLAIMABLE_B, whose global values lag behind by up to
 *    their per-CPU thresholds.
 *
 * Both are divided by the count. A single object is below the noise: it
 * may fit in slabs already partly used, and whatever else the kernel
 * allocates or frees meanwhile (a kfree_rcu() batch of an earlier run
 * among it) counts too; hence many objects, pending RCU callbacks run
 * before the first reading, and the runner's repeated rounds for a
 * spread. Negative figures are noise.
 *
 * obj=qp: a QP asked for cfg->depth send and receive WRs (both backends
 * ask the provider for one more, for the drain, and use what it grants)
 * with its send and receive CQ, not connected, as the backend makes them
 * for a pair (raw:
 * ib_alloc_cq() twice, ib_create_qp() and the ULP's ring of send
 * contexts; ibpost: ibpost_qp_create()). obj=mr: a registration of a
 * buffer of cfg->size bytes (allocated before, not counted) on side B:
 * op=send for local use (raw: ib_dma_map_single() and the PD's
 * local_dma_lkey; ibpost: ibpost_reg_msgs()), op=write or read for the
 * peer's access too (raw: also ib_alloc_mr(), ib_map_mr_sg() and an
 * IB_WR_REG_MR; ibpost: ibpost_reg_write() or ibpost_reg_read()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/vmstat.h>
#include "bench.h"

/**
 * struct bench_mem_snap - the counters at one moment
 * @pages: pages allocated less pages freed, since boot (wrapping)
 * @slab: pages of slab caches
 */
struct bench_mem_snap {
	unsigned long pages;
	unsigned long slab;
};

/* Read the counters; @ev has room for NR_VM_EVENT_ITEMS. */
static void bench_mem_read(unsigned long *ev, struct bench_mem_snap *snap)
{
	unsigned long pages = 0;
	unsigned int zid;

	all_vm_events(ev);
	for (zid = 0; zid < MAX_NR_ZONES; zid++)
		pages += ev[PGALLOC_NORMAL - ZONE_NORMAL + zid];
	snap->pages = pages - ev[PGFREE];
	snap->slab = global_node_page_state_pages(NR_SLAB_RECLAIMABLE_B) +
		     global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B);
}

/* Let pending RCU frees land now, rather than between the readings. */
static void bench_mem_before(unsigned long *ev, struct bench_mem_snap *snap)
{
	rcu_barrier();
	bench_mem_read(ev, snap);
}

static void bench_mem_result(struct bench_result *res,
			     const struct bench_mem_snap *before,
			     const struct bench_mem_snap *after, u32 count)
{
	long pages = (long)(after->pages - before->pages);
	long slab = (long)(after->slab - before->slab);

	res->obj_bytes = div_s64((s64)pages * PAGE_SIZE, count);
	res->slab_bytes = div_s64((s64)slab * PAGE_SIZE, count);
}

/* cfg->count QPs with their CQs, not connected. */
static int bench_mem_qps(struct bench_run *run, unsigned long *ev,
			 struct bench_result *res)
{
	u32 count = run->cfg->count, n;
	struct bench_mem_snap before, after;
	struct bench_side *sides;
	int ret = 0;

	sides = kcalloc(count, sizeof(*sides), GFP_KERNEL);
	if (!sides)
		return bench_fail(run, -ENOMEM, "allocating the sides");
	for (n = 0; n < count; n++)
		bench_side_init(run, &sides[n], NULL, 'Q');
	bench_mem_before(ev, &before);
	for (n = 0; n < count; n++) {
		ret = run->ops->side_create(run, &sides[n]);
		if (ret)
			break;
	}
	bench_mem_read(ev, &after);
	while (n--)
		run->ops->side_destroy(run, &sides[n]);
	kfree(sides);
	if (!ret)
		bench_mem_result(res, &before, &after, count);
	return ret;
}

/* cfg->count registrations of as many buffers, on side B. */
static int bench_mem_mrs(struct bench_run *run, unsigned long *ev,
			 struct bench_result *res)
{
	bool remote = run->opcode != IB_WR_SEND;
	u32 count = run->cfg->count, n;
	struct bench_mem_snap before, after;
	struct bench_buf *bufs;
	int ret = 0;

	bufs = kcalloc(count, sizeof(*bufs), GFP_KERNEL);
	if (!bufs)
		return bench_fail(run, -ENOMEM, "allocating the buffers");
	for (n = 0; n < count && !ret; n++)
		ret = bench_buf_alloc(run, &bufs[n]);
	if (ret)
		goto out_free;
	bench_mem_before(ev, &before);
	for (n = 0; n < count && !ret; n++)
		ret = run->ops->buf_reg(run, &run->b, &bufs[n], remote);
	bench_mem_read(ev, &after);
	if (!ret)
		bench_mem_result(res, &before, &after, count);
out_free:
	/* Undoes what each registration did, also a failed one's. */
	for (n = 0; n < count; n++)
		bench_buf_free(run, &bufs[n]);
	kfree(bufs);
	return ret;
}

/**
 * bench_mem - measure the memory of cfg->count QPs or registrations
 * @run: the run, its pair set up
 * @res: gets bytes per object, all pages and slab pages
 *
 * Context: Process context; sleeps.
 * Return: 0, or the run's failure.
 */
int bench_mem(struct bench_run *run, struct bench_result *res)
{
	unsigned long *ev;
	int ret;

	if (!IS_ENABLED(CONFIG_VM_EVENT_COUNTERS))
		return bench_fail(run, -EOPNOTSUPP,
				  "no page counts without CONFIG_VM_EVENT_COUNTERS");
	ev = kcalloc(NR_VM_EVENT_ITEMS, sizeof(*ev), GFP_KERNEL);
	if (!ev)
		return bench_fail(run, -ENOMEM, "allocating the counters");
	if (run->cfg->obj == BENCH_OBJ_QP)
		ret = bench_mem_qps(run, ev, res);
	else
		ret = bench_mem_mrs(run, ev, res);
	kfree(ev);
	return ret;
}
