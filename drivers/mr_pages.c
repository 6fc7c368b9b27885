// SPDX-License-Identifier: GPL-2.0
/*
 * Memory a ULP holds: page MRs (an sg_table, a page range, a vmalloc
 * buffer) and the consumer's own DMA mappings.
 *
 * Operation: a page MR is a list of DMA segments (struct ibpost_mr_seg),
 * in the order of the bytes they map: the MR's bytes are addressed by
 * offset, and, for a vmalloc buffer, by kernel address too. ibpost maps
 * the table itself (ib_dma_map_sgtable_attrs()) in the direction asked,
 * unmaps it at deregistration or device removal, and syncs it around
 * every WR (dma_sync.h); a consumer's mapping (ibpost_reg_dma()) is only
 * described, and stays the consumer's to sync and unmap. Local SGEs use
 * the PD's local DMA lkey, one SGE per segment a range touches: a range
 * spanning segments takes as many of the WR's SGEs (the fast-registration
 * pool is the way to one SGE for a long list).
 *
 * A chain's SGE is found in a page MR by its segments: the device's MR
 * table indexes each (mr_table.c); for the MR a queue already holds (its
 * hit), ibpost_mr_covers_segs() searches them in DMA address order. The
 * seed operations name their MR and skip the search.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/ibpost.h>
#include "mr.h"
#include "mr_table.h"
#include "ibpost_trace.h"
#include "dma_sync.h"

/* Whether a vmalloc mapping needs cache maintenance of its own. */
#ifdef ARCH_IMPLEMENTS_FLUSH_KERNEL_VMAP_RANGE
#define IBPOST_VMAP_ALIASES true
#else
#define IBPOST_VMAP_ALIASES false
#endif

/* The dma_flags a registration in @dir gives; false for a bad @dir. */
static bool ibpost_mr_set_dir(struct ibpost_mr *mr,
			      enum dma_data_direction dir)
{
	switch (dir) {
	case DMA_BIDIRECTIONAL:
		break;
	case DMA_TO_DEVICE:
		mr->dma_flags |= IBPOST_MR_NO_DEV_WRITE;
		break;
	case DMA_FROM_DEVICE:
		mr->dma_flags |= IBPOST_MR_NO_DEV_READ;
		break;
	default:
		pr_warn_ratelimited("reg: DMA direction %d: must be to, from or both\n",
				    dir);
		return false;
	}
	mr->dma_dir = dir;
	return true;
}

static int ibpost_seg_dma_cmp(const void *a, const void *b, const void *priv)
{
	const struct ibpost_mr_seg *segs = priv;
	u64 x = segs[*(const u32 *)a].dma, y = segs[*(const u32 *)b].dma;

	return x < y ? -1 : x > y;
}

/*
 * Order @mr's segments by DMA address (mr->seg_by_dma) when no two
 * overlap, so that whether an SGE lies in the MR is a binary search
 * (ibpost_mr_covers_segs()); left NULL, for a walk of the segments,
 * when two do or the memory is short.
 */
static void ibpost_mr_order_segs(struct ibpost_mr *mr)
{
	u32 i, *o;

	o = kvmalloc_array(mr->nsegs, sizeof(*o), GFP_KERNEL);
	if (!o)
		return;
	for (i = 0; i < mr->nsegs; i++)
		o[i] = i;
	sort_r(o, mr->nsegs, sizeof(*o), ibpost_seg_dma_cmp, NULL, mr->segs);
	for (i = 1; i < mr->nsegs; i++) {
		const struct ibpost_mr_seg *a = &mr->segs[o[i - 1]];

		if (a->dma + a->len > mr->segs[o[i]].dma) {
			kvfree(o);
			return;
		}
	}
	mr->seg_by_dma = o;
}

/* Describe the first @n DMA entries of @sgl as @mr's segments. */
static int ibpost_mr_fill_segs(struct ibpost_mr *mr, struct scatterlist *sgl,
			       unsigned int n)
{
	struct scatterlist *sg;
	u64 off = 0;
	unsigned int i;

	struct ibpost_mr_seg *seg;

	mr->segs = kvmalloc_array(n, sizeof(*mr->segs), GFP_KERNEL);
	if (!mr->segs)
		return -ENOMEM;
	mr->nsegs = 0;
	mr->dma_lo = U64_MAX;
	mr->dma_hi = 0;
	for_each_sg(sgl, sg, n, i) {
		/* An empty entry would take an SGE for nothing. */
		if (!sg_dma_len(sg))
			continue;
		seg = &mr->segs[mr->nsegs++];
		seg->dma = sg_dma_address(sg);
		seg->len = sg_dma_len(sg);
		seg->off = off;
		off += seg->len;
		mr->dma_lo = min(mr->dma_lo, seg->dma);
		mr->dma_hi = max(mr->dma_hi, seg->dma + seg->len);
	}
	mr->len = off;
	if (!mr->nsegs)
		return -EINVAL;
	ibpost_mr_order_segs(mr);
	return 0;
}

/**
 * ibpost_mr_sgt_segs - describe a mapped table's DMA segments
 * @mr: a page MR whose @sgt ibpost just mapped (dev->qp_lock held)
 *
 * Return: 0 or -ENOMEM.
 */
int ibpost_mr_sgt_segs(struct ibpost_mr *mr)
{
	return ibpost_mr_fill_segs(mr, mr->sgt->sgl, mr->sgt->nents);
}

/* Free what a page MR's registration allocated besides the MR. */
void ibpost_mr_free_segs(struct ibpost_mr *mr)
{
	kvfree(mr->segs);
	mr->segs = NULL;
	kvfree(mr->seg_by_dma);
	mr->seg_by_dma = NULL;
	if (mr->sgt == &mr->own_sgt)
		sg_free_table(&mr->own_sgt);
	mr->sgt = NULL;
}

/* The segment holding byte @off of @mr (@off < mr->len). */
static u32 ibpost_mr_seg_at(const struct ibpost_mr *mr, u64 off)
{
	u32 lo = 0, hi = mr->nsegs - 1;

	while (lo < hi) {
		u32 mid = lo + (hi - lo + 1) / 2;

		if (mr->segs[mid].off <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/**
 * ibpost_mr_sgl - describe part of an MR as local SGEs
 * @mr: the MR (any kind)
 * @offset: the first byte, from the start of the MR's memory
 * @length: bytes, more than 0, all inside the MR
 * @sge: filled with one SGE per DMA segment the range touches, for the
 *       WRs of ibpost_post_send_list() and ibpost_post_recv_list()
 * @max_sge: entries @sge holds
 *
 * An MR of one contiguous buffer (ibpost_reg_msgs() and the remote
 * registrations) always takes one SGE; a page MR one per segment, where
 * the DMA mapping did not merge adjacent pages.
 *
 * Context: Any context.
 * Return: the SGEs filled (at least 1), or -EINVAL when @length is 0, the
 * range is not inside @mr, or it needs more than @max_sge SGEs.
 */
int ibpost_mr_sgl(const struct ibpost_mr *mr, u64 offset, u32 length,
		  struct ib_sge *sge, int max_sge)
{
	u32 i, n = 0;

	if (!mr || !sge || !length || max_sge < 1 || offset >= mr->len ||
	    length > mr->len - offset)
		return -EINVAL;
	if (!mr->segs) {
		sge->addr = mr->dma + offset;
		sge->length = length;
		sge->lkey = mr->lkey;
		return 1;
	}
	for (i = ibpost_mr_seg_at(mr, offset); length; i++) {
		const struct ibpost_mr_seg *seg = &mr->segs[i];
		u64 in = offset - seg->off;
		u32 take = min_t(u64, length, seg->len - in);

		if (n == max_sge)
			return -EINVAL;
		sge[n].addr = seg->dma + in;
		sge[n].length = take;
		sge[n].lkey = mr->lkey;
		n++;
		offset += take;
		length -= take;
	}
	return n;
}
EXPORT_SYMBOL_NS_GPL(ibpost_mr_sgl, IBPOST_NS);

/* ibpost_mr_sgl() of a page MR's kernel address (ibpost_reg_vmalloc()). */
int ibpost_mr_va_sgl(const struct ibpost_mr *mr, const void *addr,
		     u32 length, struct ib_sge *sge, int max_sge)
{
	const char *p = addr, *b = mr->buf;

	if (!b || p < b || p - b > mr->len || max_sge < 1)
		return -EINVAL;
	/* An empty buffer, as ibpost_mr_sge() gives one: where it points. */
	if (!length) {
		const struct ibpost_mr_seg *seg =
			&mr->segs[ibpost_mr_seg_at(mr, p - b ? p - b - 1 : 0)];

		sge->addr = seg->dma + (p - b - seg->off);
		sge->length = 0;
		sge->lkey = mr->lkey;
		return 1;
	}
	return ibpost_mr_sgl(mr, p - b, length, sge, max_sge);
}

/* __ibpost_mr_sge() of a page MR: one SGE, inside one segment. */
int ibpost_mr_sge_segs(const struct ibpost_mr *mr, const void *addr,
		       u32 length, struct ib_sge *sge)
{
	return ibpost_mr_va_sgl(mr, addr, length, sge, 1) == 1 ? 0 : -EINVAL;
}

/*
 * Whether @sge lies inside one of @mr's segments, under its lkey: the
 * one starting last at or below its address, where no two segments
 * overlap (touching ones may: an SGE inside one lies in no other).
 */
bool ibpost_mr_covers_segs(const struct ibpost_mr *mr,
			   const struct ib_sge *sge)
{
	const u32 *o = mr->seg_by_dma;
	u32 i, lo, hi;

	if (sge->lkey != mr->lkey || sge->addr < mr->dma_lo ||
	    sge->addr >= mr->dma_hi)
		return false;
	if (likely(o)) {
		/* The segment starting last at or below the address. */
		lo = 0;
		hi = mr->nsegs - 1;
		while (lo < hi) {
			u32 mid = lo + (hi - lo + 1) / 2;

			if (mr->segs[o[mid]].dma <= sge->addr)
				lo = mid;
			else
				hi = mid - 1;
		}
		return ibpost_mr_seg_covers(&mr->segs[o[lo]], sge);
	}
	for (i = 0; i < mr->nsegs; i++)
		if (ibpost_mr_seg_covers(&mr->segs[i], sge))
			return true;
	return false;
}

/*
 * Map, list and open a page MR for posts. On failure @mr is freed (its
 * own table too).
 */
static struct ibpost_mr *ibpost_mr_pages_add(struct ibpost_mr *mr)
{
	int ret = ibpost_mr_add(mr, NULL);

	if (ret)
		return ERR_PTR(ret);
	ibpost_mr_unrevoke(mr);
	trace_ibpost_mr_reg(mr, 0, 0, 0);
	return mr;
}

/* A page MR of @dev in @dir, not mapped yet; ERR_PTR on bad input. */
static struct ibpost_mr *ibpost_mr_pages_new(struct ibpost_dev *dev,
					     enum dma_data_direction dir)
{
	struct ibpost_mr *mr;

	if (!dev)
		return ERR_PTR(-EINVAL);
	mr = ibpost_mr_new(dev, IB_ACCESS_LOCAL_WRITE);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	if (!ibpost_mr_set_dir(mr, dir)) {
		kfree(mr);
		return ERR_PTR(-EINVAL);
	}
	mr->map = IBPOST_MR_MAP_SGT;
	return mr;
}

/*
 * A copy of @from's CPU entries (page, offset, length) in @to: ibpost maps
 * its own table, so that the consumer's stays untouched (it may map it
 * elsewhere, register it twice, free it).
 */
static int ibpost_sgt_copy(struct sg_table *to, const struct sg_table *from)
{
	struct scatterlist *s, *d;
	unsigned int i;

	if (sg_alloc_table(to, from->orig_nents, GFP_KERNEL))
		return -ENOMEM;
	d = to->sgl;
	for_each_sg(from->sgl, s, from->orig_nents, i) {
		sg_set_page(d, sg_page(s), s->length, s->offset);
		d = sg_next(d);
	}
	return 0;
}

/**
 * ibpost_reg_sgt - register the pages of an sg_table for local access
 * @dev: the device
 * @sgt: the table: its CPU entries (page, offset, length; orig_nents of
 *       them) from anywhere (alloc_page, a bio's bvecs, a folio,
 *       sg_alloc_table_from_pages() of user or vmalloc pages). ibpost
 *       maps a copy of it: the table itself stays the consumer's (it may
 *       be freed, mapped elsewhere or registered again); its pages must
 *       stay until the MR is deregistered.
 * @dir: DMA_TO_DEVICE (the sources of SENDs and WRITEs only),
 *       DMA_FROM_DEVICE (receive and READ sinks only) or DMA_BIDIRECTIONAL
 *
 * The MR's bytes are the entries' bytes in order, addressed by offset:
 * ibpost_post_mr(), ibpost_post_recv_mr(), ibpost_mr_sgl(). ibpost syncs
 * the memory for the device before each WR that uses it is posted and for
 * the CPU before the context of a WR that wrote it is handed back; the
 * consumer never syncs it. It grants no remote access.
 *
 * Context: Process context; may sleep.
 * Return: the MR, or ERR_PTR(-EINVAL) for no device, no or an empty
 * table or a bad direction, -ENODEV when the device is being removed,
 * -ENOMEM, or the DMA mapping's error.
 */
struct ibpost_mr *ibpost_reg_sgt(struct ibpost_dev *dev, struct sg_table *sgt,
				 enum dma_data_direction dir)
{
	struct ibpost_mr *mr;

	might_sleep();
	if (!sgt || !sgt->sgl || !sgt->orig_nents) {
		pr_warn_ratelimited("reg_sgt: no table, or an empty one\n");
		return ERR_PTR(-EINVAL);
	}
	mr = ibpost_mr_pages_new(dev, dir);
	if (IS_ERR(mr))
		return mr;
	if (ibpost_sgt_copy(&mr->own_sgt, sgt)) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->sgt = &mr->own_sgt;
	return ibpost_mr_pages_add(mr);
}
EXPORT_SYMBOL_NS_GPL(ibpost_reg_sgt, IBPOST_NS);

/**
 * ibpost_reg_page - register a physically contiguous page range
 * @dev: the device
 * @page: its first page (a higher-order allocation, a folio's head)
 * @offset: the first byte's offset in @page
 * @len: bytes, at most U32_MAX
 * @dir: as for ibpost_reg_sgt()
 *
 * As ibpost_reg_sgt() of one entry: addressed by offset from byte
 * @offset of @page.
 *
 * Context: Process context; may sleep.
 * Return: as ibpost_reg_sgt(); -EINVAL for no page or a length of 0 or
 * above U32_MAX.
 */
struct ibpost_mr *ibpost_reg_page(struct ibpost_dev *dev, struct page *page,
				  unsigned int offset, size_t len,
				  enum dma_data_direction dir)
{
	struct ibpost_mr *mr;

	might_sleep();
	if (!page || !len || len > U32_MAX) {
		pr_warn_ratelimited("reg_page: no page, or a length of 0 or above 4 GiB\n");
		return ERR_PTR(-EINVAL);
	}
	mr = ibpost_mr_pages_new(dev, dir);
	if (IS_ERR(mr))
		return mr;
	if (sg_alloc_table(&mr->own_sgt, 1, GFP_KERNEL)) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->sgt = &mr->own_sgt;
	sg_set_page(mr->sgt->sgl, page, len, offset);
	return ibpost_mr_pages_add(mr);
}
EXPORT_SYMBOL_NS_GPL(ibpost_reg_page, IBPOST_NS);

/*
 * The @n pages of the kernel buffer at @buf, in @pages. Return: 0, or
 * -EINVAL when one is not mapped (a length past a vmalloc area's end, or
 * past the linear map's valid pages).
 */
static int ibpost_buf_pages(void *buf, struct page **pages, unsigned int n)
{
	char *p = (char *)buf - offset_in_page(buf);
	unsigned int i;

	for (i = 0; i < n; i++, p += PAGE_SIZE) {
		if (is_vmalloc_addr(p))
			pages[i] = vmalloc_to_page(p);
		else
			pages[i] = virt_addr_valid(p) ? virt_to_page(p) : NULL;
		if (!pages[i]) {
			pr_warn_ratelimited("reg_vmalloc: page %u of the buffer at %p is not mapped: the length runs past it\n",
					    i, buf);
			return -EINVAL;
		}
	}
	return 0;
}

/**
 * ibpost_reg_vmalloc - register a vmalloc buffer page by page
 * @dev: the device
 * @buf: a vmalloc (or kmalloc) buffer, not a stack one
 * @len: its length in bytes, at most U32_MAX
 * @dir: as for ibpost_reg_sgt()
 *
 * ibpost_reg_msgs() refuses a vmalloc buffer, whose pages are not
 * physically contiguous; this registers it as a page MR of its pages. Its
 * bytes are addressed by offset (as ibpost_reg_sgt()'s) and by kernel
 * address inside [@buf, @buf + @len): the seed operations take it like
 * any MR, a buffer that spans pages taking one SGE per segment (their
 * one-buffer forms as many as the QP grants).
 *
 * Context: Process context; may sleep.
 * Return: as ibpost_reg_sgt(); -EINVAL for no buffer, a stack buffer or a
 * length of 0 or above U32_MAX, a buffer that runs past its allocation's
 * pages, and a vmalloc buffer on an architecture whose caches alias
 * (ARCH_IMPLEMENTS_FLUSH_KERNEL_VMAP_RANGE: its vmalloc mapping needs a
 * flush of its own), where ibpost_reg_sgt() of its pages is the way.
 */
struct ibpost_mr *ibpost_reg_vmalloc(struct ibpost_dev *dev, void *buf,
				     size_t len, enum dma_data_direction dir)
{
	unsigned int n = DIV_ROUND_UP(offset_in_page(buf) + len, PAGE_SIZE);
	struct page **pages;
	struct ibpost_mr *mr;
	int ret;

	might_sleep();
	/*
	 * The DMA syncs keep the linear map coherent, not a vmalloc alias
	 * (flush_kernel_vmap_range() would be needed on such caches).
	 */
	if (IBPOST_VMAP_ALIASES && is_vmalloc_addr(buf)) {
		pr_warn_ratelimited("reg_vmalloc: vmalloc aliases need cache maintenance on this architecture: use ibpost_reg_sgt() of the pages\n");
		return ERR_PTR(-EINVAL);
	}
	if (!buf || !len || len > U32_MAX || object_is_on_stack(buf) ||
	    (!is_vmalloc_addr(buf) && !virt_addr_valid(buf))) {
		pr_warn_ratelimited("reg_vmalloc: buffer %p (%zu bytes) is not a vmalloc or kmalloc buffer\n",
				    buf, len);
		return ERR_PTR(-EINVAL);
	}
	mr = ibpost_mr_pages_new(dev, dir);
	if (IS_ERR(mr))
		return mr;
	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL);
	if (!pages) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	ret = ibpost_buf_pages(buf, pages, n) ?:
	      sg_alloc_table_from_pages(&mr->own_sgt, pages, n,
					offset_in_page(buf), len, GFP_KERNEL);
	kvfree(pages);
	if (ret) {
		kfree(mr);
		return ERR_PTR(ret);
	}
	mr->sgt = &mr->own_sgt;
	mr->buf = buf;
	return ibpost_mr_pages_add(mr);
}
EXPORT_SYMBOL_NS_GPL(ibpost_reg_vmalloc, IBPOST_NS);

/**
 * ibpost_reg_dma - declare the consumer's own DMA mapping to ibpost
 * @dev: the device it is mapped for
 * @sgl: a scatterlist the consumer mapped with ib_dma_map_sg() (or
 *       ib_dma_map_sgtable_attrs()) on @dev's ib_device
 * @dma_nents: the mapped entries that call returned
 * @dir: the direction it was mapped in
 *
 * Its SGEs are then checked like any MR's (bounds, device, lifetime:
 * ibpost_dereg_mr() says -EBUSY while a posted WR uses it), through the
 * PD's local DMA lkey. ibpost neither syncs nor unmaps it: the consumer
 * syncs it as the DMA API says, and unmaps it after ibpost_dereg_mr(),
 * while the device is there (on a removal, from its own remove: the
 * ib_device may be freed after it). Addressed by offset, over the mapped
 * entries' DMA lengths in order (entries of DMA length 0 skipped).
 *
 * Context: Process context; may sleep.
 * Return: the MR, or ERR_PTR(-EINVAL) for no device or list, no entries
 * (or none of any length) or a bad direction, -ENODEV when the device is
 * being removed, -ENOMEM.
 */
struct ibpost_mr *ibpost_reg_dma(struct ibpost_dev *dev,
				 struct scatterlist *sgl, int dma_nents,
				 enum dma_data_direction dir)
{
	struct ibpost_mr *mr;
	int ret;

	might_sleep();
	if (!sgl || dma_nents < 1) {
		pr_warn_ratelimited("reg_dma: no list, or no mapped entries\n");
		return ERR_PTR(-EINVAL);
	}
	mr = ibpost_mr_pages_new(dev, dir);
	if (IS_ERR(mr))
		return mr;
	mr->map = IBPOST_MR_MAP_CONSUMER;
	mr->dma_flags &= ~IBPOST_MR_SYNC;
	ret = ibpost_mr_fill_segs(mr, sgl, dma_nents);
	if (ret) {
		ibpost_mr_free_segs(mr);
		kfree(mr);
		return ERR_PTR(ret);
	}
	return ibpost_mr_pages_add(mr);
}
EXPORT_SYMBOL_NS_GPL(ibpost_reg_dma, IBPOST_NS);

/* Sync [@offset, +@length) of @mr, checked, for the CPU or the device. */
static int ibpost_mr_sync(struct ibpost_mr *mr, u64 offset, u32 length,
			  bool for_cpu)
{
	struct ib_device *ibdev;
	u32 i, take;
	u64 in;

	if (!mr || !length || offset >= mr->len || length > mr->len - offset ||
	    !(mr->dma_flags & IBPOST_MR_SYNC))
		return -EINVAL;
	/* Device removal waits for this before it unmaps (mr.c). */
	rcu_read_lock();
	if (test_bit(IBPOST_DEV_REMOVING, &mr->dev->flags) ||
	    READ_ONCE(mr->dead)) {
		rcu_read_unlock();
		return -ENODEV;
	}
	ibdev = mr->dev->ibdev;
	for (i = mr->segs ? ibpost_mr_seg_at(mr, offset) : 0; length; i++) {
		u64 dma = mr->segs ? mr->segs[i].dma : mr->dma;

		in = offset - (mr->segs ? mr->segs[i].off : 0);
		take = min_t(u64, length,
			     (mr->segs ? mr->segs[i].len : mr->len) - in);
		if (for_cpu)
			ibpost_dma_sync_cpu(ibdev, dma + in, take, mr->dma_dir);
		else
			ibpost_dma_sync_dev(ibdev, dma + in, take, mr->dma_dir);
		offset += take;
		length -= take;
	}
	rcu_read_unlock();
	return 0;
}

/**
 * ibpost_mr_sync_for_cpu - hand memory a peer wrote back to the CPU
 * @mr: an MR ibpost mapped (not ibpost_reg_dma()'s)
 * @offset: the first byte, from the start of the MR's memory
 * @length: bytes, more than 0, inside @mr
 *
 * The local WRs' syncs are ibpost's; a peer's accesses through an rkey
 * (ibpost_reg_write(), ibpost_reg_read()) pass through no WR of this
 * side. Call this once the protocol says the peer's WRITE into the range
 * has landed (a SEND that follows it arrived), before reading it; or read
 * it after ibpost_dereg_mr(), whose unmap hands a remotely writable MR
 * back to the CPU.
 *
 * Context: Any context.
 * Return: 0; -EINVAL for a range outside @mr or an MR whose syncs are the
 * consumer's; -ENODEV when the device is being removed.
 */
int ibpost_mr_sync_for_cpu(struct ibpost_mr *mr, u64 offset, u32 length)
{
	return ibpost_mr_sync(mr, offset, length, true);
}
EXPORT_SYMBOL_NS_GPL(ibpost_mr_sync_for_cpu, IBPOST_NS);

/**
 * ibpost_mr_sync_for_device - hand memory a peer will access to the device
 * @mr: an MR ibpost mapped (not ibpost_reg_dma()'s)
 * @offset: the first byte, from the start of the MR's memory
 * @length: bytes, more than 0, inside @mr
 *
 * As ibpost_mr_sync_for_cpu(), the other way: after the CPU wrote the
 * range and before the peer may READ it (or WRITE it again).
 *
 * Context: Any context.
 * Return: as ibpost_mr_sync_for_cpu().
 */
int ibpost_mr_sync_for_device(struct ibpost_mr *mr, u64 offset, u32 length)
{
	return ibpost_mr_sync(mr, offset, length, false);
}
EXPORT_SYMBOL_NS_GPL(ibpost_mr_sync_for_device, IBPOST_NS);

/**
 * ibpost_mr_length - the bytes an MR registers
 * @mr: the MR
 *
 * Context: Any context.
 * Return: its length: offsets in it run from 0 to the length less 1.
 */
size_t ibpost_mr_length(const struct ibpost_mr *mr)
{
	return mr ? mr->len : 0;
}
EXPORT_SYMBOL_NS_GPL(ibpost_mr_length, IBPOST_NS);
