/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The MR table: a registered kernel buffer (struct ibpost_mr), its
 * lookup and the counting of its uses by posted WRs (in the ring's
 * struct ibpost_ring_use, which the ring releases), below the post path;
 * the registration calls above it are mr.c's (mr.h).
 */
#ifndef _IBPOST_MR_TABLE_H
#define _IBPOST_MR_TABLE_H

#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include "ring.h"

struct ibpost_dev;
struct ibpost_mr;

/**
 * struct ibpost_mr_range - DMA addresses an SGE of an MR may start at
 * @node: its node in the device's interval tree (dev->mrs_by_addr)
 * @first: the first address
 * @last: the last: one past the end of the memory (an SGE of length 0),
 *        short of the MR's highest address for a page MR's segment
 * @subtree_last: the interval tree's own
 * @mr: the MR
 *
 * A contiguous MR has one (mr->range), a page MR one per DMA segment:
 * a page MR's segments may lie far apart (rxe's and siw's DMA addresses
 * are kernel addresses, a vmalloc buffer's pages anywhere), and one
 * range from its lowest to its highest address would hold nearly every
 * other MR.
 */
struct ibpost_mr_range {
	struct rb_node node;
	u64 first, last, subtree_last;
	struct ibpost_mr *mr;
};

/**
 * struct ibpost_mr - a registered kernel buffer
 * @use: its uses by posted WRs (first: converting costs nothing)
 * @dev: the device (holds a reference)
 * @node: entry in dev->mrs, in registration order
 * @seq: its place in that order (dev->mr_seq): of two MRs that hold an
 *       SGE, the lookup takes the older
 * @range: a contiguous MR's entry in dev->mrs_by_addr (a page MR's are
 *         its segments')
 * @buf: the kernel virtual address registered
 * @len: its length
 * @dma: the DMA address of @buf
 * @lkey: the key local SGEs use (the PD's local DMA lkey)
 * @ibmr: the fast-registration MR granting remote access, or NULL
 * @rkey: @ibmr's remote key as registered, or 0; set before the MR is
 *        returned to its consumer and never changed, so that
 *        ibpost_mr_rkey() may read it in any context, also while device
 *        removal releases @ibmr
 * @iova: the remote address @ibmr maps the buffer at, or 0; as @rkey
 * @qp: the QP @ibmr was registered through, while it lives
 * @sg: the scatterlist @ibmr maps
 * @access: IB_ACCESS_* granted
 * @release_work: releases an MR whose internal WR outlived its waiter
 * @dead: the provider objects are released (by ibpost_dereg_mr() or by
 *        device removal); only the final free is left to do
 * @revoked: no new post may use it: ibpost_dereg_mr() is invalidating it,
 *           or a registration has not finished yet. It stays on @dev's
 *           list, so device removal still finds and releases it.
 * @dma_flags: IBPOST_MR_* below: whether ibpost syncs it, which way the
 *             device may use it
 * @dma_dir: the direction it is mapped in (enum dma_data_direction)
 * @map: how it is mapped (enum ibpost_mr_map)
 * @segs: a page MR's DMA segments in byte order (mr_pages.c); NULL for
 *        one contiguous buffer (@dma, @len)
 * @nsegs: entries in @segs
 * @seg_by_dma: @segs' indexes in DMA address order, where no two overlap
 *              (a binary search finds an SGE's); NULL: walked in order
 * @dma_lo: a page MR's lowest DMA address
 * @dma_hi: the end of its highest segment
 * @sgt: a page MR's table as mapped: the consumer's (ibpost_reg_sgt()) or
 *       @own_sgt
 * @own_sgt: the table ibpost built (ibpost_reg_vmalloc(),
 *           ibpost_reg_page())
 */
struct ibpost_mr {
	struct ibpost_ring_use use;
	struct ibpost_dev *dev;
	struct list_head node;
	u64 seq;
	struct ibpost_mr_range range;
	void *buf;
	size_t len;
	u64 dma;
	u32 lkey;
	struct ib_mr *ibmr;
	u32 rkey;
	u64 iova;
	struct ibpost_qp *qp;
	struct scatterlist sg;
	int access;
	struct work_struct release_work;
	bool dead;
	bool revoked;
	u8 dma_flags;
	u8 dma_dir;
	u8 map;
	struct ibpost_mr_seg *segs;
	u32 nsegs;
	u32 *seg_by_dma;
	u64 dma_lo, dma_hi;
	struct sg_table *sgt;
	struct sg_table own_sgt;
};

/* mr->dma_flags */
#define IBPOST_MR_SYNC		BIT(0)	/* ibpost mapped it: ibpost syncs */
#define IBPOST_MR_NO_DEV_READ	BIT(1)	/* DMA_FROM_DEVICE: no SEND/WRITE source */
#define IBPOST_MR_NO_DEV_WRITE	BIT(2)	/* DMA_TO_DEVICE: no receive/READ sink */
#define IBPOST_MR_NEED_SYNC	BIT(3)	/* and its syncs do something */
/* A post has DMA work on the MR (post.c): it never becomes a queue's hit. */
#define IBPOST_MR_DMA_WORK	(IBPOST_MR_NEED_SYNC | IBPOST_MR_NO_DEV_READ | \
				 IBPOST_MR_NO_DEV_WRITE)

/* mr->map */
enum ibpost_mr_map {
	IBPOST_MR_MAP_ONE,	/* @sg, one contiguous buffer */
	IBPOST_MR_MAP_SGT,	/* @sgt, by ibpost */
	IBPOST_MR_MAP_CONSUMER,	/* the consumer's own mapping */
};

/**
 * struct ibpost_mr_seg - one DMA segment of a page MR
 * @dma: its DMA address
 * @off: the offset of its first byte in the MR
 * @len: its length
 * @range: its entry in the device's interval tree
 */
struct ibpost_mr_seg {
	u64 dma;
	u64 off;
	u32 len;
	struct ibpost_mr_range range;
};

/* Whether @sge, under a page MR's local key, lies inside @seg. */
static inline bool ibpost_mr_seg_covers(const struct ibpost_mr_seg *seg,
					const struct ib_sge *sge)
{
	return sge->addr >= seg->dma && sge->addr - seg->dma <= seg->len &&
	       sge->length <= seg->len - (sge->addr - seg->dma);
}

static_assert(offsetof(struct ibpost_mr, use) == 0);

/* The MR whose uses @use counts (a queue's hit, a slot's use array). */
static inline struct ibpost_mr *ibpost_use_mr(struct ibpost_ring_use *use)
{
	return container_of(use, struct ibpost_mr, use);
}

/* A WR's opcode for the lookups below, or a receive's: it writes local memory. */
#define IBPOST_OP_RECV (-1)

/* Whether a WR of @op writes local memory (its SGEs are sinks). */
static inline bool ibpost_wr_writes_local(int op)
{
	return op == IBPOST_OP_RECV || op == IB_WR_RDMA_READ ||
	       op == IB_WR_RDMA_READ_WITH_INV ||
	       op == IB_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_WR_ATOMIC_FETCH_AND_ADD ||
	       op == IB_WR_MASKED_ATOMIC_CMP_AND_SWP ||
	       op == IB_WR_MASKED_ATOMIC_FETCH_AND_ADD;
}

/* The MR flag that forbids an SGE of a WR of @op (an MR mapped the other way). */
static inline u8 ibpost_mr_forbids(int op)
{
	return ibpost_wr_writes_local(op) ? IBPOST_MR_NO_DEV_WRITE :
					    IBPOST_MR_NO_DEV_READ;
}

/* mr_pages.c: a page MR's SGE lookups */
int ibpost_mr_sge_segs(const struct ibpost_mr *mr, const void *addr,
		       u32 length, struct ib_sge *sge);
bool ibpost_mr_covers_segs(const struct ibpost_mr *mr,
			   const struct ib_sge *sge);
int ibpost_mr_va_sgl(const struct ibpost_mr *mr, const void *addr,
		     u32 length, struct ib_sge *sge, int max_sge);
void ibpost_mr_free_segs(struct ibpost_mr *mr);

/*
 * ibpost_mr_sge(), inline for the seed operations' one SGE; a page MR's
 * address (ibpost_reg_vmalloc()) inside one of its DMA segments.
 */
static inline int __ibpost_mr_sge(const struct ibpost_mr *mr,
				  const void *addr, u32 length,
				  struct ib_sge *sge)
{
	const char *p = addr, *b = mr->buf;

	if (unlikely(mr->segs))
		return ibpost_mr_sge_segs(mr, addr, length, sge);
	if (p < b || p > b + mr->len || length > (b + mr->len) - p)
		return -EINVAL;
	sge->addr = mr->dma + (p - b);
	sge->length = length;
	sge->lkey = mr->lkey;
	return 0;
}

/*
 * Whether @sge lies in the @len bytes from DMA address @base (an MR's
 * range, under one of its keys). No MR's range wraps past the top of the
 * address space, so an address below @base wraps to an offset above
 * @len: one compare bounds the start on both sides.
 */
static __always_inline bool ibpost_sge_within(const struct ib_sge *sge,
					      u64 base, u64 len)
{
	u64 off = sge->addr - base;

	return off <= len && sge->length <= len - off;
}

/* Whether @sge lies inside @mr, under one of its keys. */
static inline bool ibpost_mr_covers(const struct ibpost_mr *mr,
				    const struct ib_sge *sge)
{
	u64 base;

	if (unlikely(mr->segs))
		return ibpost_mr_covers_segs(mr, sge);
	if (sge->lkey == mr->lkey)
		base = mr->dma;
	else if (mr->ibmr && sge->lkey == mr->ibmr->lkey)
		base = mr->ibmr->iova;
	else
		return false;
	return ibpost_sge_within(sge, base, mr->len);
}

/*
 * The out-of-line lookups' answer: the MR (or 0) with IBPOST_MR_HIT set
 * when its use is counted in the hit. One value, not an out-parameter: a
 * local whose address the post loops took would cost them the stack
 * protector's canary.
 */
#define IBPOST_MR_HIT	1UL
static_assert(__alignof__(struct ibpost_mr) > IBPOST_MR_HIT);

unsigned long __ibpost_mr_find(struct ibpost_queue *q,
			       const struct ib_sge *sge, int op);
unsigned long __ibpost_mr_pin(struct ibpost_queue *q, struct ibpost_mr *mr);

/* Split such an answer into the MR and *@hit. */
static inline struct ibpost_mr *ibpost_mr_found(unsigned long found,
						bool *hit)
{
	*hit = found & IBPOST_MR_HIT;
	return (struct ibpost_mr *)(found & ~IBPOST_MR_HIT);
}

/*
 * The MR of @q's device that holds @sge, its use counted (mr_table.c): an SGE
 * in the queue's hit while that has users, the common case, is counted
 * here without a call. *@hit: whether the use is counted in the hit; an
 * MR found while the hit has no users becomes the hit, unless a post has
 * DMA work on it (IBPOST_MR_DMA_WORK): so an SGE in the hit needs no
 * DMA sync nor direction check. Where two MRs hold @sge, one whose
 * direction forbids a WR of @op is passed over.
 */
static inline struct ibpost_mr *
ibpost_mr_find(struct ibpost_queue *q, const struct ib_sge *sge, int op,
	       bool *hit)
{
	lockdep_assert_held(&q->lock);
	if (q->hit_users && ibpost_mr_covers(ibpost_use_mr(q->hit), sge)) {
		q->hit_users++;
		*hit = true;
		return ibpost_use_mr(q->hit);
	}
	return ibpost_mr_found(__ibpost_mr_find(q, sge, op), hit);
}

/* The same for an MR a post names itself (the seed operations). */
static inline struct ibpost_mr *
ibpost_mr_pin(struct ibpost_queue *q, struct ibpost_mr *mr, bool *hit)
{
	lockdep_assert_held(&q->lock);
	if (q->hit_users && ibpost_use_mr(q->hit) == mr) {
		q->hit_users++;
		*hit = true;
		return mr;
	}
	return ibpost_mr_found(__ibpost_mr_pin(q, mr), hit);
}

/**
 * struct ibpost_hit_snap - a post loop's copy of its queue's hit
 * @hit: the hit it was taken of, or NULL: none (the hit had no users, or
 *       is a page MR)
 * @base: the DMA address the hit's MR starts at under @lkey
 * @len: the MR's length
 * @lkey: its local key
 *
 * A chain's WRs mostly gather from the one MR that is the queue's hit:
 * the loop tests each one-SGE WR against this copy, kept with its own
 * locals, rather than through the queue's hit pointer and the MR (the
 * loop's stores to slots and stage could alias both: each WR read them
 * again). Taken again after a WR that went the full way when q->hit is
 * not @hit: only that way can q->hit change under the loop (and an MR's
 * hit is forgotten under q->lock before the MR is freed). An MR's key,
 * DMA address and length never change while it has users, and
 * q->hit_users is read with the copy: a hit that has lost its users
 * under the loop (a provider's refusal of an iWARP READ pins one of its
 * SGEs for the READ's sink) serves nothing until a WR going the full
 * way adopts one again.
 */
struct ibpost_hit_snap {
	const struct ibpost_ring_use *hit;
	u64 base;
	u64 len;
	u32 lkey;
};

/* Take @s from @q's hit, q->lock held. */
static inline void ibpost_hit_snap_take(struct ibpost_hit_snap *s,
					const struct ibpost_queue *q)
{
	const struct ibpost_mr *mr;

	lockdep_assert_held(&q->lock);
	s->hit = NULL;
	if (!q->hit_users)
		return;
	mr = ibpost_use_mr(q->hit);
	if (mr->segs)
		return;
	s->base = mr->dma;
	s->len = mr->len;
	s->lkey = mr->lkey;
	s->hit = q->hit;
}

/*
 * Whether @sge lies in @q's hit by its copy @s (as ibpost_mr_covers() under
 * the MR's own key; one under its fast-registration key goes the full way).
 */
static __always_inline bool ibpost_hit_snap_covers(const struct ibpost_queue *q,
						   const struct ibpost_hit_snap *s,
						   const struct ib_sge *sge)
{
	return s->hit && q->hit_users && sge->lkey == s->lkey &&
	       ibpost_sge_within(sge, s->base, s->len);
}

/* mr_table.c */
void ibpost_mr_table_add(struct ibpost_dev *dev, struct ibpost_mr *mr);
void ibpost_mr_table_del(struct ibpost_dev *dev, struct ibpost_mr *mr);
struct ibpost_mr *ibpost_mr_lookup(struct ibpost_dev *dev,
				   const struct ib_sge *sge, u8 forbid);
void ibpost_mr_forget_hits(struct ibpost_dev *dev, struct ibpost_mr *mr);
void ibpost_mrs_forget_qp(struct ibpost_qp *qp);

#endif /* _IBPOST_MR_TABLE_H */
