// SPDX-License-Identifier: GPL-2.0
/*
 * iWARP READ sinks.
 *
 * On iWARP the response to an RDMA READ is a tagged DDP message that the
 * peer writes into the requester's sink buffer, named by the STag the READ
 * carries (RFC 5040): the sink needs a key with remote-write access, as
 * rdma_rw_init_one_mr() in drivers/infiniband/core/rw.c registers it for
 * iWARP. The local DMA lkey of an ibpost MR has none, and giving the whole
 * buffer remote-write access for the MR's life would open it to the peer
 * beyond the READ (ibpost grants remote access through ibpost_reg_read()
 * and ibpost_reg_write() only).
 *
 * So on an iWARP QP each send slot owns a fast-registration MR. A READ in
 * that slot is posted as two WRs in one provider call: a REG_MR of exactly
 * the READ's sink with LOCAL_WRITE | REMOTE_WRITE under a fresh key, then
 * the READ as READ_WITH_INV of that key, so the peer's access ends with the
 * READ. The REG_MR is unsignaled and has a completion entry of its own
 * (only an error or a flush of it ever completes); the READ is signaled
 * (a forced signal, hidden from the consumer), so its slot, and with it the
 * sink, is reused only after the READ is over. The provider's send queue is
 * sized for two WRs per slot. A READ is never split: one context stands for
 * one READ, so its sink must fit one registration (IBPOST_SINK_PAGES).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "ibpost_internal.h"

static void ibpost_sink_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	/* The READ behind it fails or flushes too: its slot reports it. */
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		ibdev_err_ratelimited(cq->device,
				      "ibpost: READ sink registration failed: %s (%d)\n",
				      ib_wc_status_msg(wc->status), wc->status);
}

/* The pages one sink registration of @dev maps. */
static u32 ibpost_sink_pages(struct ibpost_dev *dev)
{
	return min_t(u32, IBPOST_SINK_PAGES,
		     dev->ibdev->attrs.max_fast_reg_page_list_len);
}

int ibpost_sinks_alloc(struct ibpost_queue *q)
{
	struct ibpost_dev *dev = q->qp->dev;
	u32 i, n = q->mask + 1, pages = ibpost_sink_pages(dev);

	if (pages < 2)
		return -EOPNOTSUPP;
	q->sinks = kvcalloc(n, sizeof(*q->sinks), GFP_KERNEL);
	if (!q->sinks)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct ibpost_sink *s = &q->sinks[i];

		s->mr = ib_alloc_mr(dev->pd, IB_MR_TYPE_MEM_REG, pages);
		if (IS_ERR(s->mr)) {
			int ret = PTR_ERR(s->mr);

			s->mr = NULL;
			ibpost_sinks_free(q);
			return ret;
		}
		s->cqe.done = ibpost_sink_reg_done;
		s->reg.wr.opcode = IB_WR_REG_MR;
		s->reg.wr.wr_cqe = &s->cqe;
		s->reg.mr = s->mr;
		s->reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	}
	/* An offset into the first page costs one page of the map. */
	q->sink_max_len = (pages - 1) * PAGE_SIZE;
	return 0;
}

/* After the provider's QP and CQs are gone: nothing refers to a sink. */
void ibpost_sinks_free(struct ibpost_queue *q)
{
	u32 i;

	if (!q->sinks)
		return;
	for (i = 0; i <= q->mask; i++)
		if (q->sinks[i].mr)
			ib_dereg_mr(q->sinks[i].mr);
	kvfree(q->sinks);
	q->sinks = NULL;
}

bool ibpost_sink_wanted(struct ibpost_queue *q, const struct ib_send_wr *wr)
{
	return q->sinks && wr->opcode == IB_WR_RDMA_READ &&
	       wr->num_sge == 1 && wr->sg_list[0].length;
}

/*
 * Register the sink of the READ @wr for the slot at q->head; q->lock held,
 * the WR checked. Return: 0, or -EINVAL when the sink does not map.
 */
int ibpost_sink_prepare(struct ibpost_queue *q, const struct ib_send_wr *wr)
{
	struct ibpost_sink *s = &q->sinks[q->head & q->mask];
	const struct ib_sge *sge = &wr->sg_list[0];
	int n;

	lockdep_assert_held(&q->lock);
	/* A fresh key: the last READ's STag must not name this sink. */
	ib_update_fast_reg_key(s->mr, ib_inc_rkey(s->mr->rkey));
	sg_init_table(&s->sg, 1);
	s->sg.length = sge->length;
	sg_dma_address(&s->sg) = sge->addr;
	sg_dma_len(&s->sg) = sge->length;
	n = ib_map_mr_sg(s->mr, &s->sg, 1, NULL, PAGE_SIZE);
	if (n != 1) {
		pr_warn_ratelimited("post_send: the READ sink (addr %#llx len %u) does not map: %d\n",
				    sge->addr, sge->length, n);
		return -EINVAL;
	}
	s->reg.key = s->mr->rkey;
	s->sge.addr = sge->addr;
	s->sge.length = sge->length;
	s->sge.lkey = s->mr->lkey;
	return 0;
}

/*
 * Turn @slot's READ into REG_MR + READ_WITH_INV of its sink; the REG_MR
 * goes before it in the chain (see ibpost_slot_head()).
 */
void ibpost_sink_attach(struct ibpost_queue *q, struct ibpost_slot *slot)
{
	struct ibpost_sink *s = &q->sinks[slot - q->slots];
	struct ib_send_wr *wr = &slot->wr.send;

	wr->opcode = IB_WR_RDMA_READ_WITH_INV;
	wr->ex.invalidate_rkey = s->mr->lkey;
	wr->sg_list = &s->sge;
	s->reg.wr.next = wr;
	slot->sink = true;
}

struct ib_send_wr *ibpost_slot_head(struct ibpost_queue *q,
				    struct ibpost_slot *slot)
{
	if (slot->sink)
		return &q->sinks[slot - q->slots].reg.wr;
	return &slot->wr.send;
}

/* The slot a refused WR of the provider's chain belongs to. */
struct ibpost_slot *ibpost_sink_bad_slot(struct ibpost_queue *q,
					 const struct ib_send_wr *bad)
{
	const struct ibpost_sink *end = q->sinks + q->mask + 1;
	const struct ibpost_sink *s;

	if (q->sinks && (const void *)bad >= (const void *)q->sinks &&
	    (const void *)bad < (const void *)end) {
		s = container_of(bad, struct ibpost_sink, reg.wr);
		return &q->slots[s - q->sinks];
	}
	return container_of(bad, struct ibpost_slot, wr.send);
}
