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
 * sink, is reused only after the READ is over. The provider's send queue and
 * the send CQ are sized for two WRs per slot. A READ is never split: one
 * context stands for one READ, so its sink must fit one registration
 * (IBPOST_SINK_PAGES).
 *
 * Only a successful READ_WITH_INV invalidates the sink's key. A READ that
 * fails or flushes (or that the provider refuses after taking its REG_MR)
 * leaves the key possibly valid, with remote write, over the consumer's
 * buffer: the sink turns "dirty", keeps the READ's MR pinned (so
 * ibpost_dereg_mr() says -EBUSY rather than let the buffer go), and a work
 * item deregisters its MR, which revokes the key, allocates a fresh one and
 * only then lets the buffer go. A dirty sink is never registered again;
 * after a failed READ the QP is in ERR anyway, where nothing reaches the
 * provider.
 *
 * A provider that takes the REG_MR and refuses the READ in the same call
 * leaves the REG_MR queued: its MR may not be deregistered while the
 * provider may still execute it. Such a sink is "held": the work item
 * gives the sink a fresh MR and keeps the old one, with the READ's buffer
 * pinned (its key may become valid), until a send WR posted after the
 * REG_MR succeeds (the send queue runs in order: the REG_MR ran before
 * it), then deregisters it, which revokes the key; at the latest when the
 * provider's QP is destroyed (ibpost_sinks_free()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include "sink.h"
#include "qp_core.h"

/* The sinks of the send queue @q, kept in its QP. */
static struct ibpost_sinks *ibpost_q_sinks(struct ibpost_queue *q)
{
	return &q->qp->sinks;
}

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

static struct ib_mr *ibpost_sink_mr(struct ibpost_queue *q)
{
	struct ibpost_dev *dev = q->qp->dev;

	return ib_alloc_mr(dev->pd, IB_MR_TYPE_MEM_REG, ibpost_sink_pages(dev));
}

/* Deregister a held MR and let the buffer it may reach go. */
static void ibpost_sink_held_free(struct ibpost_sink_held *h)
{
	if (h->mr)
		ib_dereg_mr(h->mr);
	ibpost_ring_uses_drop(&h->pin, h->pin ? 1 : 0);
	kfree(h);
}

/* The held MRs whose REG_MR a later success proved done: free them. */
static void ibpost_sinks_held_reap(struct ibpost_queue *q)
{
	struct ibpost_sinks *sk = ibpost_q_sinks(q);
	struct ibpost_sink_held **hp = &sk->held_list, *h;
	bool valid;
	u32 done;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	valid = !q->watch_success;
	done = sk->held_done;
	spin_unlock_irqrestore(&q->lock, flags);
	while ((h = *hp)) {
		if (valid && (s32)(done - h->pos) >= 0) {
			*hp = h->next;
			ibpost_sink_held_free(h);
		} else {
			hp = &h->next;
		}
	}
}

/*
 * A send WR at ring position @pos succeeded: the REG_MRs of held sinks
 * posted before it have run. Completion context, q->lock held (the ring's
 * send_succeeded).
 */
static void ibpost_sink_held_done(struct ibpost_queue *q, u32 pos)
{
	struct ibpost_sinks *sk = ibpost_q_sinks(q);

	lockdep_assert_held(&q->lock);
	if ((s32)(pos - sk->held_pos) < 0)
		return;
	q->watch_success = false;
	sk->held_done = pos;
	queue_work(ibpost_wq, &sk->work);
}

/* Revoke the key of every dirty sink, then let its READ's buffer go. */
static void ibpost_sink_work(struct work_struct *work)
{
	struct ibpost_qp *qp = container_of(work, struct ibpost_qp,
					    sinks.work);
	struct ibpost_sinks *sk = &qp->sinks;
	struct ibpost_queue *q = &qp->sq;
	struct ibpost_sink_held *h;
	struct ibpost_ring_use *pin;
	struct ib_mr *old, *mr;
	bool dirty, held;
	u32 i, pos;
	unsigned long flags;

	for (i = 0; i <= q->mask; i++) {
		struct ibpost_sink *s = &sk->ring[i];

		spin_lock_irqsave(&q->lock, flags);
		dirty = s->dirty;
		held = s->held;
		pos = s->held_pos;
		old = s->mr;
		spin_unlock_irqrestore(&q->lock, flags);
		if (!dirty)
			continue;
		h = NULL;
		if (held) {
			/* No room to keep it aside: the sink stays dirty. */
			h = kmalloc(sizeof(*h), GFP_KERNEL);
			if (!h)
				continue;
		} else if (old) {
			/* Dirty: never registered again, @old is ours alone. */
			ib_dereg_mr(old);
		}
		mr = ibpost_sink_mr(q);
		spin_lock_irqsave(&q->lock, flags);
		s->mr = IS_ERR(mr) ? NULL : mr;
		s->reg.mr = s->mr;
		pin = s->pin;
		s->pin = NULL;
		s->dirty = false;
		s->held = false;
		spin_unlock_irqrestore(&q->lock, flags);
		if (h) {
			h->mr = old;
			h->pin = pin;
			h->pos = pos;
			h->next = sk->held_list;
			sk->held_list = h;
			continue;
		}
		ibpost_ring_uses_drop(&pin, pin ? 1 : 0);
	}
	ibpost_sinks_held_reap(q);
}

/*
 * @slot's READ did not succeed, or was not queued while its REG_MR was
 * (@reg_queued): its sink's key may be valid over the READ's buffer. Keep
 * the buffer pinned and have the work item revoke the key, or, while the
 * REG_MR may still be with the provider, keep both until the QP is
 * destroyed (see above).
 */
static void ibpost_sink_dirty(struct ibpost_queue *q,
			      struct ibpost_slot *slot, bool reg_queued)
{
	struct ibpost_sinks *sk = ibpost_q_sinks(q);
	struct ibpost_sink *s = &sk->ring[slot - q->slots];

	lockdep_assert_held(&q->lock);
	if (WARN_ON_ONCE(s->dirty || slot->nuse + slot->nhit != 1))
		return;
	s->dirty = true;
	s->held = reg_queued;
	if (reg_queued) {
		s->held_pos = slot->pos;
		sk->held_pos = slot->pos;
		q->watch_success = true;
	}
	/* The pin counts a user of its own, past the slot's release. */
	s->pin = slot->nhit ? ibpost_ring_hit_pin(q) :
			       ibpost_slot_uses(q, slot)[0];
	slot->nuse = 0;
	slot->nhit = 0;
	slot->prefixed = false;
	queue_work(ibpost_wq, &sk->work);
}

/*
 * The ring's slot_failed: a READ behind its sink's REG_MR did not
 * succeed, or the provider refused it after taking the REG_MR
 * (@reg_queued). Once the sinks are freed with the QP, their keys are gone
 * (and the ring has no ops to call: ibpost_sinks_free()).
 */
static void ibpost_sink_slot_failed(struct ibpost_queue *q,
				    struct ibpost_slot *slot, bool reg_queued)
{
	if (ibpost_q_sinks(q)->ring)
		ibpost_sink_dirty(q, slot, reg_queued);
}

static const struct ibpost_ring_ops ibpost_sink_ring_ops = {
	.slot_failed = ibpost_sink_slot_failed,
	.send_succeeded = ibpost_sink_held_done,
};

int ibpost_sinks_alloc(struct ibpost_queue *q)
{
	struct ibpost_sinks *sk = ibpost_q_sinks(q);
	u32 i, n = q->mask + 1;

	if (ibpost_sink_pages(q->qp->dev) < 2)
		return -EOPNOTSUPP;
	sk->ring = ibpost_zalloc_exact(array_size(n, sizeof(*sk->ring)));
	if (!sk->ring)
		return -ENOMEM;
	INIT_WORK(&sk->work, ibpost_sink_work);
	for (i = 0; i < n; i++) {
		struct ibpost_sink *s = &sk->ring[i];

		s->mr = ibpost_sink_mr(q);
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
	sk->max_len = (ibpost_sink_pages(q->qp->dev) - 1) * PAGE_SIZE;
	q->ops = &ibpost_sink_ring_ops;
	return 0;
}

/*
 * After the provider's QP and CQs are gone: no completion can dirty a
 * sink any more, and nothing else refers to one.
 */
void ibpost_sinks_free(struct ibpost_queue *q)
{
	struct ibpost_sinks *sk = ibpost_q_sinks(q);
	u32 i;

	if (!sk->ring)
		return;
	flush_work(&sk->work);
	while (sk->held_list) {
		struct ibpost_sink_held *h = sk->held_list;

		sk->held_list = h->next;
		ibpost_sink_held_free(h);
	}
	for (i = 0; i <= q->mask; i++) {
		struct ibpost_sink *s = &sk->ring[i];

		if (s->mr)
			ib_dereg_mr(s->mr);
		ibpost_ring_uses_drop(&s->pin, s->pin ? 1 : 0);
	}
	ibpost_free_exact(sk->ring, array_size(q->mask + 1, sizeof(*sk->ring)));
	sk->ring = NULL;
	/* The ring has nothing more to tell: no sink is held or marked. */
	q->watch_success = false;
	q->ops = NULL;
}

/*
 * Register the sink of the READ @wr for the slot it will take, @ahead
 * slots past q->head (the fast registrations staged before it, frwr.c),
 * the WR checked. Return: 0, or -EINVAL when the sink does not map.
 */
int ibpost_sink_prepare(struct ibpost_queue *q, const struct ib_send_wr *wr,
			u32 ahead)
{
	struct ibpost_sinks *sk = ibpost_q_sinks(q);
	struct ibpost_sink *s = &sk->ring[(q->head + ahead) & q->mask];
	const struct ib_sge *sge = &wr->sg_list[0];
	int n;

	lockdep_assert_held(&q->lock);
	/* Its last key is being revoked (or no MR could replace it). */
	if (s->dirty || !s->mr)
		return -ENOMEM;
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
 * Turn @slot's READ, whose copy for the provider is @wr, into REG_MR +
 * READ_WITH_INV of its sink. Return: the REG_MR, the prefix the ring
 * chains before the READ.
 */
struct ib_send_wr *ibpost_sink_attach(struct ibpost_queue *q,
				      struct ibpost_slot *slot,
				      struct ib_send_wr *wr)
{
	struct ibpost_sinks *sk = ibpost_q_sinks(q);
	struct ibpost_sink *s = &sk->ring[slot - q->slots];

	wr->opcode = IB_WR_RDMA_READ_WITH_INV;
	wr->ex.invalidate_rkey = s->mr->lkey;
	wr->sg_list = &s->sge;
	s->inv_key = wr->ex.invalidate_rkey;
	ibpost_slot_set_opcode(slot, wr->opcode);
	return &s->reg.wr;
}
