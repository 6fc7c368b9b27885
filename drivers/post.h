/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The posting layer: the entry points of the post path (post.c) that
 * the QP and MR code call.
 */
#ifndef _IBPOST_POST_H
#define _IBPOST_POST_H

#include <rdma/ib_verbs.h>
#include "qp_core.h"

/* post.c */
int ibpost_post_send_mrs(struct ibpost_qp *qp, const struct ib_send_wr *wr,
			 const struct ib_send_wr **bad_wr,
			 struct ibpost_mr **mrs, struct ibpost_sync *sync);
int ibpost_post_recv_mrs(struct ibpost_qp *qp, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr,
			 struct ibpost_mr **mrs);
void ibpost_send_fast_init(struct ibpost_qp *qp);

/**
 * struct ibpost_send_prep - a consumer's send WR checked for a client
 *                           that stages it behind WRs of its own
 * @uses: where its SGEs' uses were counted (the next slot's array)
 * @dma: where its DMA ranges were recorded (the next slot's array)
 * @size: the size of its WR structure, to copy
 * @nuse: uses in @uses
 * @nhit: SGEs in the queue's hit
 * @ndma: ranges in @dma
 */
struct ibpost_send_prep {
	struct ibpost_ring_use **uses;
	struct ibpost_ring_dma *dma;
	size_t size;
	int nuse;
	u8 nhit;
	u8 ndma;
};

struct ibpost_ring_post;

void ibpost_post_send_begin(struct ibpost_ring_post *p, struct ibpost_qp *qp);
int ibpost_send_prepare(struct ibpost_ring_post *p, struct ibpost_qp *qp,
			const struct ib_send_wr *wr,
			struct ibpost_send_prep *prep);
void ibpost_send_unprepare(struct ibpost_ring_post *p,
			   const struct ibpost_send_prep *prep);
void ibpost_send_stage(struct ibpost_ring_post *p, struct ibpost_qp *qp,
		       struct ibpost_slot *slot, const struct ib_send_wr *wr,
		       const struct ibpost_send_prep *prep);
int ibpost_post_send_end(struct ibpost_ring_post *p, struct ibpost_qp *qp,
			 const void *stop)
	__releases(&p->q->lock);

#endif /* _IBPOST_POST_H */
