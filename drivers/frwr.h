/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fast registration per I/O: a QP's pool of fast-registration MRs, each
 * mapped over a consumer's sg list without a wait, its REG_MR riding the
 * QP's next send post ahead of the consumer's first WR, its unmap posting
 * a LOCAL_INV that carries the consumer's context (see frwr.c).
 */
#ifndef _IBPOST_FRWR_H
#define _IBPOST_FRWR_H

#include <linux/list.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include "ring.h"

struct ibpost_dev;
struct ibpost_qp;
struct ibpost_ring_post;

/* struct ibpost_frwr's @state, under the send queue's lock */
enum ibpost_frwr_state {
	IBPOST_FRWR_FREE,	/* on the pool's free list */
	IBPOST_FRWR_MAPPED,	/* the consumer's: pending, or registered */
	IBPOST_FRWR_INV,	/* unmapped: its LOCAL_INV carries the context */
	IBPOST_FRWR_REVOKE,	/* unmapped: the key is revoked by deregistration */
	IBPOST_FRWR_REVOKED,	/* revoked: the context is on its way, flushed */
	IBPOST_FRWR_IDLE_WAIT,	/* unmapped: free once its REG_MR is over */
	IBPOST_FRWR_DEAD_MAPPED, /* torn down while mapped: the unmap is DONE */
	IBPOST_FRWR_DEAD,	/* torn down, or no MR to replace a revoked one */
};

/**
 * struct ibpost_frwr - one entry of a QP's fast-registration pool
 * @reg_sync: its REG_MR's slot: an internal WR, never shown (frwr.c)
 * @inv_sync: its LOCAL_INV's slot, a carrier of the unmap's context, from
 *            the send queue's reserve
 * @reg: the REG_MR staged ahead of the consumer's next send WR
 * @inv: the LOCAL_INV an unmap posts
 * @mr: the fast-registration MR; NULL once deregistered for good
 * @qp: the QP whose pool this is
 * @node: on the pool's free, pending or revoke list
 * @slot: while revoked: the slot, deferred, that carries the unmap's
 *        context back once the key is revoked
 * @sg: the consumer's sg list, DMA-mapped by ibpost while mapped; NULL
 *      once unmapped
 * @nents: its entries, as mapped
 * @dir: the DMA direction the access asked implies
 * @gen: bumped at each unmap: a stale copy of a map handle is refused
 * @rkey: the key registered, which the peer uses
 * @state: enum ibpost_frwr_state
 * @pending: on the pending list: its REG_MR waits for the next send post
 * @reg_out: its REG_MR's slot is with the ring
 * @posted: a REG_MR was queued since the map
 * @remote_inv: a receive with IB_WC_WITH_INVALIDATE retired @rkey
 *
 * All fields but the DMA mapping's, set while the entry is the map
 * call's, change under the QP's send queue lock.
 */
struct ibpost_frwr {
	struct ibpost_sync reg_sync;
	struct ibpost_sync inv_sync;
	struct ib_reg_wr reg;
	struct ib_send_wr inv;
	struct ib_mr *mr;
	struct ibpost_qp *qp;
	struct list_head node;
	struct ibpost_slot *slot;
	struct scatterlist *sg;
	int nents;
	enum dma_data_direction dir;
	u32 gen;
	u32 rkey;
	u8 state;
	bool pending;
	bool reg_out;
	bool posted;
	bool remote_inv;
};

/**
 * struct ibpost_frwr_stats - a pool's counters, under the send queue's lock
 * @maps: maps made
 * @eagain: maps refused for an empty pool
 * @regs: REG_MRs queued ahead of a consumer's WR
 * @invs: LOCAL_INVs posted by unmaps
 * @done: unmaps with nothing to invalidate (IBPOST_FRWR_DONE)
 * @remote_inv: keys retired by a peer's SEND_WITH_INV
 * @revoked: MRs deregistered and replaced, their state unknown
 * @reg_failed: REG_MRs the provider failed (not flushed): never ran
 */
struct ibpost_frwr_stats {
	u64 maps, eagain, regs, invs, done, remote_inv, revoked, reg_failed;
};

/**
 * struct ibpost_frwr_pool - a QP's fast-registration pool (embedded in it)
 * @ents: @n entries; NULL without a pool
 * @n: entries, the QP's frwr_maps
 * @max_pages: pages one map covers at most
 * @npending: entries on @pending, read by the post loop under the lock
 * @free: free entries
 * @pending: mapped entries whose REG_MR waits for the next send post, in
 *           map order
 * @revoke: unmapped entries whose key @revoke_work revokes
 * @revoke_work: deregisters and replaces an MR whose state is unknown,
 *               then hands its unmap's context back flushed
 * @dead: torn down: no map, no work
 * @released: every MR deregistered (teardown): a flushed LOCAL_INV's
 *            context goes back at once
 * @stats: counters
 */
struct ibpost_frwr_pool {
	struct ibpost_frwr *ents;
	u32 n;
	u32 max_pages;
	u32 npending;
	struct list_head free;
	struct list_head pending;
	struct list_head revoke;
	struct work_struct revoke_work;
	bool dead;
	bool released;
	struct ibpost_frwr_stats stats;
};

/*
 * The REG_MRs the next send post stages ahead of its first WR: those
 * pending, at most a batch less one (the WR's own copy).
 */
static inline u32 ibpost_frwr_pending(const struct ibpost_frwr_pool *pool,
				      const struct ibpost_queue *q)
{
	return min(pool->npending, q->stage_max - 1);
}

/* frwr.c */
int ibpost_frwr_attr_check(struct ibpost_dev *dev, u32 maps, u32 *max_pages,
			   enum ib_qp_type type);
int ibpost_frwr_pool_init(struct ibpost_qp *qp);
void ibpost_frwr_pool_release(struct ibpost_qp *qp);
void ibpost_frwr_pool_free(struct ibpost_qp *qp);
void ibpost_frwr_quiesce(struct ibpost_qp *qp);
bool ibpost_frwr_revoking(struct ibpost_qp *qp);
void ibpost_frwr_stage(struct ibpost_ring_post *p, struct ibpost_qp *qp,
		       const struct ib_send_wr *wr, u32 used, u32 k, u8 nuse,
		       u8 ndma);
void ibpost_frwr_remote_inv(struct ibpost_dev *dev, u32 rkey);

#endif /* _IBPOST_FRWR_H */
