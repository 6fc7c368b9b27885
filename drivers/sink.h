/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The iWARP READ sink layer: the registration each READ of an iWARP
 * send queue is posted behind (see sink.c).
 */
#ifndef _IBPOST_SINK_H
#define _IBPOST_SINK_H

#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include "ring.h"

/**
 * struct ibpost_sink - an iWARP READ's sink registration (see sink.c)
 * @mr: a fast-registration MR of ibpost's PD, owned by one send slot
 * @reg: the REG_MR of one READ's sink, posted just before that READ
 * @cqe: @reg's completion entry (unsignaled: only an error or a flush)
 * @sge: the READ's SGE, with @mr's key
 * @sg: the one-entry scatterlist @mr maps: the sink's DMA address
 * @dirty: @mr's key may still be valid after its READ did not succeed;
 *         revoked by the sinks' work item (under the queue's lock)
 * @held: dirty, and @reg may still be with the provider (it took the
 *        REG_MR and refused the READ): @mr may not be deregistered before
 *        a later send WR succeeded or the provider's QP is destroyed
 * @held_pos: then, the ring position of the READ refused
 * @inv_key: the key the last READ posted with this sink invalidates
 * @pin: the use of the READ's MR, kept until then
 */
struct ibpost_sink {
	struct ib_mr *mr;
	struct ib_reg_wr reg;
	struct ib_cqe cqe;
	struct ib_sge sge;
	struct scatterlist sg;
	bool dirty;
	bool held;
	u32 held_pos;
	u32 inv_key;
	struct ibpost_ring_use *pin;
};

/*
 * A held sink's MR and the READ buffer it may still reach, kept aside
 * from the sink (which gets a fresh MR) until a send WR posted at or
 * after @pos succeeded, or the QP is destroyed.
 */
struct ibpost_sink_held {
	struct ibpost_sink_held *next;
	struct ib_mr *mr;
	struct ibpost_ring_use *pin;
	u32 pos;
};

/**
 * struct ibpost_sinks - the READ sinks of an iWARP QP's send queue
 * @ring: one sink per slot of the send queue's ring, or NULL (not iWARP)
 * @max_len: the longest READ one sink maps
 * @work: revokes the keys of dirty sinks (see sink.c)
 * @held_list: the MRs of held sinks, kept aside (written by @work only)
 * @held_pos: the latest held sink's READ position (under the queue's
 *            lock); the queue's watch_success is set while a held sink
 *            waits for a send WR at or after it to succeed
 * @held_done: a send WR at @held_done or later succeeded (under the
 *             queue's lock)
 *
 * Embedded in the QP; the send queue's ops find it there.
 */
struct ibpost_sinks {
	struct ibpost_sink *ring;
	u32 max_len;
	struct work_struct work;
	struct ibpost_sink_held *held_list;
	u32 held_pos;
	u32 held_done;
};

/* Pages one iWARP READ sink registration maps: up to 1 MiB per READ. */
#define IBPOST_SINK_PAGES	257

/* sink.c: iWARP READ sinks */
int ibpost_sinks_alloc(struct ibpost_queue *q);
void ibpost_sinks_free(struct ibpost_queue *q);

/* Whether the READ @wr, posted to a send queue with @sinks, goes to one. */
static inline bool ibpost_sink_wanted(const struct ibpost_sinks *sinks,
				      const struct ib_send_wr *wr)
{
	return sinks->ring && wr->opcode == IB_WR_RDMA_READ &&
	       wr->num_sge == 1 && wr->sg_list[0].length;
}

int ibpost_sink_prepare(struct ibpost_queue *q, const struct ib_send_wr *wr,
			u32 ahead);
struct ib_send_wr *ibpost_sink_attach(struct ibpost_queue *q,
				      struct ibpost_slot *slot,
				      struct ib_send_wr *wr);

#endif /* _IBPOST_SINK_H */
