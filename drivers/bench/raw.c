// SPDX-License-Identifier: GPL-2.0
/*
 * The raw verbs backend: the same traffic as a careful ULP would post it
 * without ibpost.
 *
 * Each side has a send CQ and a receive CQ (IB_POLL_SOFTIRQ, or
 * IB_POLL_DIRECT in the poll modes) and an RC QP on ibpost's PD, all
 * asked for one entry more than the depth and used as deep as granted,
 * as ibpost makes its own (rxe rounds 257 entries up to 511: the two
 * modes' rings are as deep only if both use the grant), connected to the
 * other side by hand with the attributes ibpost gives its own loopback
 * pairs (the address vector comes from ibpost, which resolves RoCE's
 * destination MAC for kernel callers); on iWARP made on the pair's
 * rdma_cm ids (rdma_create_qp(), cm.c), which connect them. Buffers are kmalloc'd and mapped
 * with ib_dma_map_single(), used locally through the PD's local_dma_lkey;
 * a buffer the peer accesses is also registered with a fast-registration
 * MR (IB_WR_REG_MR, waited for).
 *
 * Send accounting: a ring of contexts, one per usable send queue slot;
 * the poster counts what it posted, a signaled completion frees every
 * slot up to its own (send queues complete in order), and the poster
 * never posts more than the free slots. When several threads post on one
 * QP (scaling), they serialize that accounting and the post with a
 * spinlock of their own, as a raw ULP must. One slot of each queue is
 * kept for ib_drain_qp(), which every teardown goes through before the
 * QPs and buffers go.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/rdma_cm.h>
#include "bench.h"
/* ibpost's CQ release and loopback RC attributes: headers, no post. */
#include "../ibpost_cq.h"
#include "../ibpost_rc.h"

#define BENCH_RAW_ACCESS	(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ)

static void bench_raw_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct bench_wctx *c = container_of(wc->wr_cqe, struct bench_wctx,
					    cqe);

	bench_tx_done(c->txq, c, wc, c->signaled);
}

static void bench_raw_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct bench_side *s = container_of(wc->wr_cqe, struct bench_side,
					    reg_cqe);

	s->reg_status = wc->status;
	complete(&s->reg_done);
}

static int bench_raw_post_recv(struct bench_run *run, struct bench_side *s)
{
	struct ib_recv_wr wr = {
		.wr_cqe = &s->recv_cqe,
		.sg_list = &s->dst.sge,
		.num_sge = 1,
	};

	return ib_post_recv(s->qp, &wr, NULL);
}

static void bench_raw_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	bench_rx_done(container_of(wc->wr_cqe, struct bench_side, recv_cqe),
		      wc);
}

/*
 * The address of the port itself, as ibpost builds it for its pairs;
 * looked up once per command (a command's pairs share it).
 */
static int bench_raw_loopback_av(struct bench_run *run)
{
	struct bench_run *root = run->root;
	struct rdma_ah_attr *av = &root->av;
	struct ibpost_qp_attr attr = {
		.qp_type = IB_QPT_RC,
		.max_send_wr = 1,
		.max_recv_wr = 1,
		.poll_ctx = IB_POLL_SOFTIRQ,
	};
	struct ibpost_qp *qp;
	int ret;

	if (!root->have_av) {
		qp = ibpost_qp_create(run->dev, &attr);
		if (IS_ERR(qp))
			return bench_fail(run, PTR_ERR(qp),
					  "ibpost_qp_create (for the loopback address)");
		ret = ibpost_qp_loopback_av(qp, av);
		ibpost_qp_destroy(qp);
		if (ret)
			return bench_fail(run, ret, "ibpost_qp_loopback_av");
		root->have_av = true;
	}
	run->port = rdma_ah_get_port_num(av);
	return 0;
}

/*
 * A CQ of side @s's for @run's depth (and the drain's entry): its own, or
 * with cfg->shared_cq a share of one of ib_core's pool on any vector, as a
 * ULP with many QPs takes them.
 */
static struct ib_cq *bench_raw_cq_get(struct bench_run *run,
				      struct bench_side *s,
				      enum ib_poll_context ctx)
{
	if (run->cfg->shared_cq)
		return ib_cq_pool_get(run->ibdev, run->depth + 1, -1, ctx);
	return ib_alloc_cq(run->ibdev, s, run->depth + 1, 0, ctx);
}

/*
 * The entries of @cq a side may fill: its own CQ's, or its share of a
 * pool CQ (what bench_raw_cq_get() asked for), which ibpost's shared_cq
 * QP keeps to as well.
 */
static u32 bench_raw_cq_room(const struct bench_run *run,
			     const struct ib_cq *cq)
{
	if (run->cfg->shared_cq)
		return run->depth + 1;
	return max_t(u32, cq->cqe, run->depth + 1);
}

/* Undo bench_raw_cq_get() for @a and @b (NULL: none), their QP gone. */
static void bench_raw_cq_put(struct bench_run *run, struct ib_cq *a,
			     struct ib_cq *b)
{
	if (!run->cfg->shared_cq) {
		/* Not ib_free_cq(): see ibpost_cq.h. */
		ibpost_free_cqs(a, b);
		return;
	}
	ib_cq_pool_put(a, run->depth + 1);
	if (b)
		ib_cq_pool_put(b, run->depth + 1);
}

/* Side @s's QP, made by ib_create_qp() or, on iWARP, rdma_create_qp(). */
static void bench_raw_qp_destroy(struct bench_side *s)
{
	if (s->id)
		rdma_destroy_qp(s->id);
	else
		ib_destroy_qp(s->qp);
	s->qp = NULL;
}

/*
 * Side @s's CQs and QP: on @run's PD, or on iWARP on the rdma_cm @id
 * (rdma_create_qp(), which rdma_cm then moves through its states).
 */
static int __bench_raw_side_create(struct bench_run *run,
				   struct bench_side *s, struct rdma_cm_id *id)
{
	enum ib_poll_context ctx = run->poll ? IB_POLL_DIRECT :
					       IB_POLL_SOFTIRQ;
	struct ib_qp_init_attr init = {}, got = {};
	struct ib_qp_attr qa;
	u32 i;
	int ret;

	s->scq = bench_raw_cq_get(run, s, ctx);
	if (IS_ERR(s->scq))
		return bench_fail(run, PTR_ERR(s->scq), "allocating a CQ");
	s->rcq = bench_raw_cq_get(run, s, ctx);
	if (IS_ERR(s->rcq)) {
		ret = bench_fail(run, PTR_ERR(s->rcq), "allocating a CQ");
		goto out_free_scq;
	}

	init.qp_type = IB_QPT_RC;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.send_cq = s->scq;
	init.recv_cq = s->rcq;
	init.cap.max_send_wr = run->depth + 1;
	init.cap.max_recv_wr = run->depth + 1;
	init.cap.max_send_sge = run->cfg->sges;
	init.cap.max_recv_sge = 1;
	init.cap.max_inline_data = run->cfg->inl ? run->size : 0;
	init.port_num = run->port;
	init.qp_context = s;
	if (id) {
		ret = rdma_create_qp(id, run->pd, &init);
		s->qp = ret ? ERR_PTR(ret) : id->qp;
	} else {
		s->qp = ib_create_qp(run->pd, &init);
	}
	if (IS_ERR(s->qp)) {
		ret = bench_fail(run, PTR_ERR(s->qp),
				 id ? "rdma_create_qp" : "ib_create_qp");
		s->qp = NULL;
		goto out_free_rcq;
	}
	s->id = id;
	/*
	 * What was granted (rxe rounds up), as far as the CQ holds it (a
	 * pool CQ: the side's share, not the whole CQ), less one slot per
	 * queue for ib_drain_qp(): the queues ibpost makes of the same
	 * request, so that both modes post into rings as deep. Asked of
	 * the QP, as ibpost does: 6.1's rxe leaves init.cap as it was
	 * (6.12's writes its grant back).
	 */
	ret = ib_query_qp(s->qp, &qa, IB_QP_CAP, &got);
	if (ret) {
		bench_fail(run, ret, "ib_query_qp");
		goto out_destroy_qp;
	}
	if (got.cap.max_send_wr < 2 || got.cap.max_recv_wr < 2) {
		ret = bench_fail(run, -EINVAL,
				 "ib_create_qp granted fewer than 2 WRs");
		goto out_destroy_qp;
	}
	s->txq.depth = min(got.cap.max_send_wr,
			   bench_raw_cq_room(run, s->scq)) - 1;
	s->rq_depth = min(got.cap.max_recv_wr,
			  bench_raw_cq_room(run, s->rcq)) - 1;

	s->txq.ctx = kcalloc(s->txq.depth, sizeof(*s->txq.ctx), GFP_KERNEL);
	if (!s->txq.ctx) {
		ret = bench_fail(run, -ENOMEM, "allocating send contexts");
		goto out_destroy_qp;
	}
	for (i = 0; i < s->txq.depth; i++) {
		s->txq.ctx[i].cqe.done = bench_raw_send_done;
		s->txq.ctx[i].txq = &s->txq;
	}
	s->recv_cqe.done = bench_raw_recv_done;
	s->reg_cqe.done = bench_raw_reg_done;
	init_completion(&s->reg_done);
	return 0;

out_destroy_qp:
	bench_raw_qp_destroy(s);
out_free_rcq:
	bench_raw_cq_put(run, s->rcq, NULL);
out_free_scq:
	bench_raw_cq_put(run, s->scq, NULL);
	return ret;
}

static int bench_raw_side_create(struct bench_run *run, struct bench_side *s)
{
	return __bench_raw_side_create(run, s, NULL);
}

static void bench_raw_side_destroy(struct bench_run *run,
				   struct bench_side *s)
{
	bench_raw_qp_destroy(s);
	bench_raw_cq_put(run, s->rcq, s->scq);
	kfree(s->txq.ctx);
}

/* RESET -> INIT -> RTR -> RTS towards the peer, as ibpost does it. */
static int bench_raw_to_rts(struct bench_run *run, struct bench_side *s,
			    enum ib_mtu mtu)
{
	struct ib_qp_attr qa;
	int mask, ret;

	mask = ibpost_rc_init_attr(&qa, run->port, IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_WRITE);
	ret = ib_modify_qp(s->qp, &qa, mask);
	if (ret)
		return bench_fail(run, ret, "ib_modify_qp to INIT");

	mask = ibpost_rc_rtr_attr(&qa, run->ibdev, mtu, s->peer->qp->qp_num,
				  &run->root->av);
	ret = ib_modify_qp(s->qp, &qa, mask);
	if (ret)
		return bench_fail(run, ret, "ib_modify_qp to RTR");

	mask = ibpost_rc_rts_attr(&qa, run->ibdev);
	ret = ib_modify_qp(s->qp, &qa, mask);
	return ret ? bench_fail(run, ret, "ib_modify_qp to RTS") : 0;
}

static int bench_raw_connect(struct bench_run *run)
{
	struct ib_port_attr pattr;
	int ret;

	ret = ib_query_port(run->ibdev, run->port, &pattr);
	if (ret)
		return bench_fail(run, ret, "ib_query_port");
	ret = bench_raw_to_rts(run, &run->a, pattr.active_mtu);
	if (!ret)
		ret = bench_raw_to_rts(run, &run->b, pattr.active_mtu);
	return ret;
}

/* Wait for an IB_WR_REG_MR; nobody else polls a DIRECT CQ. */
static bool bench_raw_reg_wait(struct bench_run *run, struct bench_side *s)
{
	unsigned long deadline = jiffies + BENCH_TIMEOUT;

	if (!run->poll)
		return wait_for_completion_timeout(&s->reg_done,
						   BENCH_TIMEOUT);
	do {
		ib_process_cq_direct(s->scq, -1);
		if (wait_for_completion_timeout(&s->reg_done, 1))
			return true;
	} while (time_before(jiffies, deadline));
	return false;
}

/* Give the peer access to @b through a fast-registration MR. */
static int bench_raw_reg(struct bench_run *run, struct bench_side *s,
			 struct bench_buf *b)
{
	u32 npages = DIV_ROUND_UP(offset_in_page(b->cpu) + run->size,
				  PAGE_SIZE);
	struct ib_reg_wr reg = {};
	struct scatterlist sg;
	int ret;

	b->mr = ib_alloc_mr(run->pd, IB_MR_TYPE_MEM_REG, npages);
	if (IS_ERR(b->mr)) {
		ret = PTR_ERR(b->mr);
		b->mr = NULL;
		return bench_fail(run, ret, "ib_alloc_mr");
	}
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = b->dma;
	sg_dma_len(&sg) = run->size;
	ret = ib_map_mr_sg(b->mr, &sg, 1, NULL, PAGE_SIZE);
	if (ret != 1)
		return bench_fail(run, ret < 0 ? ret : -EINVAL,
				  "ib_map_mr_sg");
	ib_update_fast_reg_key(b->mr, ib_inc_rkey(b->mr->rkey));

	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.wr_cqe = &s->reg_cqe;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.mr = b->mr;
	reg.key = b->mr->rkey;
	reg.access = BENCH_RAW_ACCESS;
	reinit_completion(&s->reg_done);
	ret = ib_post_send(s->qp, &reg.wr, NULL);
	if (ret)
		return bench_fail(run, ret, "posting IB_WR_REG_MR");
	if (!bench_raw_reg_wait(run, s))
		return bench_fail(run, -ETIMEDOUT,
				  "IB_WR_REG_MR did not complete within 30 s");
	if (s->reg_status != IB_WC_SUCCESS)
		return bench_fail(run, -EIO, "IB_WR_REG_MR failed");
	b->raddr = b->mr->iova;
	b->rkey = b->mr->rkey;
	return 0;
}

/* Map a buffer (and register it); bench_raw_buf_unreg() undoes it. */
static int bench_raw_buf_reg(struct bench_run *run, struct bench_side *s,
			     struct bench_buf *b, bool remote)
{
	b->dma = ib_dma_map_single(run->ibdev, b->cpu, run->size,
				   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(run->ibdev, b->dma))
		return bench_fail(run, -ENOMEM, "ib_dma_map_single");
	b->mapped = true;
	b->sge.addr = b->dma;
	b->sge.length = run->size;
	b->sge.lkey = run->pd->local_dma_lkey;
	return remote ? bench_raw_reg(run, s, b) : 0;
}

/* After the drain: no WR references the buffer any more. */
static int bench_raw_buf_unreg(struct bench_run *run, struct bench_buf *b)
{
	if (b->mr)
		ib_dereg_mr(b->mr);
	b->mr = NULL;
	if (b->mapped)
		ib_dma_unmap_single(run->ibdev, b->dma, run->size,
				    DMA_BIDIRECTIONAL);
	b->mapped = false;
	return 0;
}

/* Flush both QPs (every callback has run after this), free the buffers. */
static void bench_raw_release(struct bench_run *run)
{
	ib_drain_qp(run->a.qp);
	ib_drain_qp(run->b.qp);
	bench_bufs_free(run);
}

/* iWARP: both sides' CQs and QPs on the pair's rdma_cm ids, connected. */
static int bench_raw_setup_cm(struct bench_run *run)
{
	int ret;

	ret = bench_cm_connect(run, __bench_raw_side_create);
	if (!ret) {
		/* A full queue must hold a signaled WR, or nothing frees it. */
		run->signal = min3(run->signal, run->a.txq.depth,
				   run->b.txq.depth);
		ret = bench_bufs_init(run, "ib_post_recv");
		if (!ret)
			return 0;
		bench_raw_release(run);
	}
	if (run->b.qp)
		bench_raw_side_destroy(run, &run->b);
	if (run->a.qp)
		bench_raw_side_destroy(run, &run->a);
	bench_cm_free(run);
	return ret;
}

static int bench_raw_setup(struct bench_run *run)
{
	int ret;

	if (run->iwarp)
		return bench_raw_setup_cm(run);
	ret = bench_raw_loopback_av(run);
	if (ret)
		return ret;
	ret = bench_raw_side_create(run, &run->a);
	if (ret)
		return ret;
	ret = bench_raw_side_create(run, &run->b);
	if (ret)
		goto out_destroy_a;
	/* A full queue must hold a signaled WR, or nothing frees it. */
	run->signal = min3(run->signal, run->a.txq.depth, run->b.txq.depth);
	ret = bench_raw_connect(run);
	if (ret)
		goto out_destroy_b;
	/* From here on WRs may be outstanding: unwind through the drain. */
	ret = bench_bufs_init(run, "ib_post_recv");
	if (ret)
		goto out_release;
	return 0;

out_release:
	bench_raw_release(run);
out_destroy_b:
	bench_raw_side_destroy(run, &run->b);
out_destroy_a:
	bench_raw_side_destroy(run, &run->a);
	return ret;
}

static void bench_raw_teardown(struct bench_run *run)
{
	bench_raw_release(run);
	bench_raw_side_destroy(run, &run->b);
	bench_raw_side_destroy(run, &run->a);
	bench_cm_free(run);
}

/*
 * Up to @n WRs from @p's chain array, as many as there are free slots.
 * Timed from the room check to the count of what was queued: the slot
 * accounting is raw's share of what ibpost does inside its post call.
 */
static int bench_raw_post_chain(struct bench_run *run, struct bench_poster *p,
				u32 n, u32 *queued)
{
	struct bench_txq *txq = &run->a.txq;
	const struct ib_send_wr *bad = NULL;
	u64 t0 = ktime_get_ns();
	u32 room = bench_txq_room(txq), i;
	bool sig;
	int ret;

	*queued = 0;
	if (!room) {
		p->post_ns += ktime_get_ns() - t0;
		return -EAGAIN;
	}
	n = min(n, room);
	for (i = 0; i < n; i++) {
		struct ib_send_wr *wr = &p->wrs[i].wr;

		sig = bench_bw_signaled(run, p, p->idx + i);
		if (unlikely(run->a.rot))
			wr->sg_list = &bench_src(&run->a, p->idx + i)->sge;
		wr->wr_cqe = bench_txq_next(txq, i, sig);
		wr->send_flags = bench_bw_flags(run, sig);
		wr->next = i + 1 < n ? &p->wrs[i + 1].wr : NULL;
	}
	ret = ib_post_send(run->a.qp, &p->wrs[0].wr, &bad);
	*queued = ret ? bench_chain_index(&p->wrs[0].wr, bad) : n;
	txq->posted += *queued;
	p->post_ns += ktime_get_ns() - t0;
	bench_ctx_sent(&run->a, *queued,
		       bench_wr_signaled(&p->wrs[0].wr, *queued));
	return ret ? bench_fail(run, ret, "ib_post_send") : 0;
}

/* A chain, under the posters' own lock when several threads share A. */
static int bench_raw_post_bw(struct bench_run *run, struct bench_poster *p,
			     u32 n, bool fresh, u32 *queued)
{
	struct bench_txq *txq = &run->a.txq;
	int ret;

	if (!run->shared)
		return bench_raw_post_chain(run, p, n, queued);
	spin_lock(&txq->lock);
	ret = bench_raw_post_chain(run, p, n, queued);
	spin_unlock(&txq->lock);
	return ret;
}

static int bench_raw_post_lat(struct bench_run *run, struct bench_side *s)
{
	struct bench_txq *txq = &s->txq;
	struct ib_send_wr *wr = &s->lat_wr.wr;
	int flags = bench_lat_flags(run, txq);
	int ret;

	if (!bench_txq_room(txq))
		return -EAGAIN;
	wr->wr_cqe = bench_txq_next(txq, 0, flags);
	wr->send_flags = flags;
	ret = ib_post_send(s->qp, wr, NULL);
	if (ret)
		return bench_fail(run, ret, "ib_post_send");
	txq->posted++;
	txq->lat_count++;
	bench_ctx_sent(s, 1, !!flags);
	return 0;
}

/* Poll modes: whatever completed on both sides' DIRECT CQs. */
static int bench_raw_poll(struct bench_run *run)
{
	ib_process_cq_direct(run->a.scq, BENCH_POLL_BUDGET);
	ib_process_cq_direct(run->a.rcq, BENCH_POLL_BUDGET);
	ib_process_cq_direct(run->b.scq, BENCH_POLL_BUDGET);
	ib_process_cq_direct(run->b.rcq, BENCH_POLL_BUDGET);
	return 0;
}

const struct bench_ops bench_raw_ops = {
	.setup = bench_raw_setup,
	.teardown = bench_raw_teardown,
	.side_create = bench_raw_side_create,
	.side_destroy = bench_raw_side_destroy,
	.buf_reg = bench_raw_buf_reg,
	.buf_unreg = bench_raw_buf_unreg,
	.post_recv = bench_raw_post_recv,
	.post_bw = bench_raw_post_bw,
	.post_lat = bench_raw_post_lat,
	.poll = bench_raw_poll,
};
