// SPDX-License-Identifier: GPL-2.0
/*
 * The ibpost backend: the same traffic through ibpost, as its consumers
 * post it.
 *
 * The pair comes from ibpost_qp_create() and ibpost_qp_connect_loopback()
 * (on iWARP from ibpost_qp_create_cm() on the ids of cm.c's pair)
 * with completion callbacks (IB_POLL_SOFTIRQ; IB_POLL_DIRECT in the poll
 * modes, whose engine calls ibpost_poll()) and run->signal as ibpost's
 * signal interval; buffers are registered with ibpost_reg_msgs(), or with
 * ibpost_reg_write() / ibpost_reg_read() when the peer accesses them.
 * ibpost counts the send queue slots itself: a post that finds no slot
 * returns -ENOMEM (with *bad_wr at the first WR not queued), and the
 * poster waits for a completion and reposts from there.
 *
 * "chain" posts run->chain WRs per ibpost_post_send_list() call and its
 * receives with ibpost_post_recv_list(); "seed" posts one WR per
 * ibpost_post_send() / _write() / _read() call and its receives with
 * ibpost_post_recv().
 * Teardown destroys the QPs first (ibpost drains them: every context
 * comes back), then deregisters the buffers.
 *
 * Contexts: a send WR carries its side when signaled and its side's send
 * queue when not, so that the check after teardown tells the two apart.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include "bench.h"

/* The context of a send WR of side @s. */
static void *bench_ibp_ctx(struct bench_side *s, bool signaled)
{
	return signaled ? (void *)s : (void *)&s->txq;
}

static void bench_ibp_send_done(struct ibpost_qp *qp, void *context,
				const struct ib_wc *wc)
{
	struct bench_side *s = ibpost_qp_priv(qp);

	bench_tx_done(&s->txq, NULL, wc, context == s);
}

/* A receive into @s's dst buffer, by the seed call or the chain path. */
static int bench_ibp_post_recv(struct bench_run *run, struct bench_side *s)
{
	struct ib_recv_wr wr = {
		.wr_id = (uintptr_t)s,
		.sg_list = &s->dst.sge,
		.num_sge = 1,
	};

	if (run->seed)
		return ibpost_post_recv(s->iqp, s, s->dst.cpu, run->size,
					s->dst.imr);
	return ibpost_post_recv_list(s->iqp, &wr, NULL);
}

static void bench_ibp_recv_done(struct ibpost_qp *qp, void *context,
				const struct ib_wc *wc)
{
	bench_rx_done(ibpost_qp_priv(qp), wc);
}

/* Side @s's QP: on @run's device, or on iWARP on the rdma_cm @id. */
static int __bench_ibp_qp_create(struct bench_run *run, struct bench_side *s,
				 struct rdma_cm_id *id)
{
	struct ibpost_qp_attr attr = {
		.qp_type = IB_QPT_RC,
		.max_send_wr = run->depth,
		.max_recv_wr = run->depth,
		.max_send_sge = run->cfg->sges,
		.max_recv_sge = 1,
		.max_inline_data = run->cfg->inl ? run->size : 0,
		.signal_interval = run->signal,
		.poll_ctx = run->poll ? IB_POLL_DIRECT : IB_POLL_SOFTIRQ,
		.shared_cq = run->cfg->shared_cq,
		.comp_vector = run->cfg->shared_cq ? IBPOST_COMP_VECTOR_ANY : 0,
		.send_done = bench_ibp_send_done,
		.recv_done = bench_ibp_recv_done,
		.priv = s,
	};
	struct ibpost_qp_attr got;
	struct ibpost_qp *qp;

	qp = id ? ibpost_qp_create_cm(id, &attr) :
		  ibpost_qp_create(run->dev, &attr);
	if (IS_ERR(qp))
		return bench_fail(run, PTR_ERR(qp), id ? "ibpost_qp_create_cm" :
							  "ibpost_qp_create");
	s->iqp = qp;
	ibpost_qp_get_attr(s->iqp, &got);
	s->txq.depth = got.max_send_wr;
	s->rq_depth = got.max_recv_wr;
	/* ibpost clamps the interval to its ring; mark WRs the same way. */
	run->signal = min(run->signal, got.signal_interval);
	return 0;
}

static int bench_ibp_qp_create(struct bench_run *run, struct bench_side *s)
{
	return __bench_ibp_qp_create(run, s, NULL);
}

static void bench_ibp_qp_destroy(struct bench_run *run, struct bench_side *s)
{
	ibpost_qp_destroy(s->iqp);
}

/* Register a buffer; the peer reaches @remote ones. */
static int bench_ibp_buf_reg(struct bench_run *run, struct bench_side *s,
			     struct bench_buf *b, bool remote)
{
	struct ibpost_mr *mr;
	const char *why;

	if (!remote) {
		mr = ibpost_reg_msgs(run->dev, b->cpu, run->size);
		why = "ibpost_reg_msgs";
	} else if (run->opcode == IB_WR_RDMA_READ) {
		mr = ibpost_reg_read(s->iqp, b->cpu, run->size);
		why = "ibpost_reg_read";
	} else {
		mr = ibpost_reg_write(s->iqp, b->cpu, run->size);
		why = "ibpost_reg_write";
	}
	if (IS_ERR(mr))
		return bench_fail(run, PTR_ERR(mr), why);
	b->imr = mr;
	if (ibpost_mr_sge(mr, b->cpu, run->size, &b->sge))
		return bench_fail(run, -EINVAL, "ibpost_mr_sge");
	b->raddr = ibpost_mr_remote_addr(mr);
	b->rkey = ibpost_mr_rkey(mr);
	return 0;
}

/* After the QPs are gone: no posted WR references the buffer any more. */
static int bench_ibp_buf_unreg(struct bench_run *run, struct bench_buf *b)
{
	/* Refused only while a WR uses it: leak rather than free it mapped. */
	if (b->imr && WARN_ON_ONCE(ibpost_dereg_mr(b->imr)))
		return -EBUSY;
	b->imr = NULL;
	return 0;
}

/* iWARP: both sides' QPs on the pair's rdma_cm ids, connected. */
static int bench_ibp_setup_cm(struct bench_run *run)
{
	int ret;

	ret = bench_cm_connect(run, __bench_ibp_qp_create) ?:
	      bench_bufs_init(run, "ibpost_post_recv");
	if (!ret)
		return 0;
	if (run->b.iqp)
		ibpost_qp_destroy(run->b.iqp);
	if (run->a.iqp)
		ibpost_qp_destroy(run->a.iqp);
	bench_cm_free(run);
	/* Buffers after the QPs: their receives hold the MRs until then. */
	bench_bufs_free(run);
	return ret;
}

static int bench_ibp_setup(struct bench_run *run)
{
	int ret;

	if (run->iwarp)
		return bench_ibp_setup_cm(run);
	ret = bench_ibp_qp_create(run, &run->a);
	if (ret)
		return ret;
	ret = bench_ibp_qp_create(run, &run->b);
	if (ret)
		goto out_destroy_a;
	ret = ibpost_qp_connect_loopback(run->a.iqp, run->b.iqp);
	if (ret) {
		bench_fail(run, ret, "ibpost_qp_connect_loopback");
		goto out_destroy_b;
	}
	ret = bench_bufs_init(run, "ibpost_post_recv");
	if (ret)
		goto out_destroy_b;
	return 0;

out_destroy_b:
	ibpost_qp_destroy(run->b.iqp);
out_destroy_a:
	ibpost_qp_destroy(run->a.iqp);
	/* Buffers after the QPs: their receives hold the MRs until then. */
	bench_bufs_free(run);
	return ret;
}

static void bench_ibp_teardown(struct bench_run *run)
{
	ibpost_qp_destroy(run->b.iqp);
	ibpost_qp_destroy(run->a.iqp);
	bench_cm_free(run);
	bench_bufs_free(run);
}

/*
 * bench_ibp_seed() with cfg->sges > 1: the vector seed operations, @src
 * in as many consecutive pieces. Out of line: its array on the stack
 * would cost every other seed row a frame and a stack canary.
 */
static noinline int bench_ibp_seedv(struct bench_run *run,
				    struct bench_side *s,
				    struct bench_buf *src, int flags, void *ctx)
{
	struct ibpost_sge sgl[BENCH_MAX_SGES];
	struct bench_buf *dst = &s->peer->dst;
	u32 n = run->cfg->sges, i;

	for (i = 0; i < n; i++) {
		sgl[i].addr = (char *)src->cpu +
			      bench_piece(run, i, &sgl[i].length);
		sgl[i].mr = src->imr;
	}
	switch (run->opcode) {
	case IB_WR_SEND:
		return ibpost_post_sendv(s->iqp, ctx, sgl, n, flags);
	case IB_WR_RDMA_READ:
		return ibpost_post_readv(s->iqp, ctx, sgl, n, flags, dst->raddr,
					 dst->rkey);
	default:
		return ibpost_post_writev(s->iqp, ctx, sgl, n, flags,
					  dst->raddr, dst->rkey);
	}
}

/* One seed operation of side @s from @src towards the peer's dst buffer. */
static int bench_ibp_seed(struct bench_run *run, struct bench_side *s,
			  struct bench_buf *src, int flags)
{
	struct bench_buf *dst = &s->peer->dst;
	void *ctx = bench_ibp_ctx(s, flags & IB_SEND_SIGNALED);
	/* Inline data needs no registration. */
	struct ibpost_mr *mr = flags & IB_SEND_INLINE ? NULL : src->imr;
	int ret;

	if (run->cfg->sges > 1)
		return bench_ibp_seedv(run, s, src, flags, ctx);
	switch (run->opcode) {
	case IB_WR_SEND:
		ret = ibpost_post_send(s->iqp, ctx, src->cpu, run->size, mr,
				       flags);
		break;
	case IB_WR_RDMA_READ:
		ret = ibpost_post_read(s->iqp, ctx, src->cpu, run->size, mr,
				       flags, dst->raddr, dst->rkey);
		break;
	default:
		ret = ibpost_post_write(s->iqp, ctx, src->cpu, run->size, mr,
					flags, dst->raddr, dst->rkey);
		break;
	}
	return ret;
}

static int bench_ibp_post_seed_bw(struct bench_run *run,
				  struct bench_poster *p, u32 *queued)
{
	u64 t0 = ktime_get_ns();
	int flags = bench_bw_flags(run, bench_bw_signaled(run, p, p->idx));
	int ret;

	ret = bench_ibp_seed(run, &run->a, bench_src(&run->a, p->idx), flags);
	p->post_ns += ktime_get_ns() - t0;
	*queued = ret ? 0 : 1;
	bench_ctx_sent(&run->a, *queued,
		       *queued && (flags & IB_SEND_SIGNALED));
	if (ret == -ENOMEM)
		return -EAGAIN;
	return ret ? bench_fail(run, ret, "ibpost seed operation") : 0;
}

/* A fresh chain of @n WRs, or the rest of the last one from *bad_wr. */
static int bench_ibp_post_bw(struct bench_run *run, struct bench_poster *p,
			     u32 n, bool fresh, u32 *queued)
{
	const struct ib_send_wr *first, *bad = NULL;
	bool sig;
	u64 t0;
	u32 i;
	int ret;

	if (run->seed)
		return bench_ibp_post_seed_bw(run, p, queued);
	/* Timed with the chain's making, as raw's post is with its own. */
	t0 = ktime_get_ns();
	if (fresh) {
		for (i = 0; i < n; i++) {
			struct ib_send_wr *wr = &p->wrs[i].wr;

			sig = bench_bw_signaled(run, p, p->idx + i);
			if (unlikely(run->a.rot))
				wr->sg_list = &bench_src(&run->a,
							 p->idx + i)->sge;
			wr->wr_id = (uintptr_t)bench_ibp_ctx(&run->a, sig);
			wr->send_flags = bench_bw_flags(run, sig);
			wr->next = i + 1 < n ? &p->wrs[i + 1].wr : NULL;
		}
		p->resume = &p->wrs[0].wr;
	}
	first = p->resume;
	ret = ibpost_post_send_list(run->a.iqp, first, &bad);
	p->post_ns += ktime_get_ns() - t0;
	*queued = ret ? bench_chain_index(first, bad) : n;
	bench_ctx_sent(&run->a, *queued, bench_wr_signaled(first, *queued));
	if (!ret)
		return 0;
	p->resume = bad;
	if (ret == -ENOMEM)
		return -EAGAIN;
	return bench_fail(run, ret, "ibpost_post_send_list");
}

static int bench_ibp_post_lat(struct bench_run *run, struct bench_side *s)
{
	int flags = bench_lat_flags(run, &s->txq);
	int ret;

	if (run->seed) {
		ret = bench_ibp_seed(run, s, &s->src, flags);
	} else {
		s->lat_wr.wr.wr_id = (uintptr_t)bench_ibp_ctx(s, flags);
		s->lat_wr.wr.send_flags = flags;
		ret = ibpost_post_send_list(s->iqp, &s->lat_wr.wr, NULL);
	}
	if (ret == -ENOMEM)
		return -EAGAIN;
	if (ret)
		return bench_fail(run, ret, run->seed ?
				  "ibpost seed operation" :
				  "ibpost_post_send_list");
	bench_ctx_sent(s, 1, !!flags);
	s->txq.lat_count++;
	return 0;
}

/* Poll modes: whatever completed on both QPs (ibpost runs the callbacks). */
static int bench_ibp_poll(struct bench_run *run)
{
	int ret;

	ret = ibpost_poll(run->a.iqp, BENCH_POLL_BUDGET);
	if (ret >= 0)
		ret = ibpost_poll(run->b.iqp, BENCH_POLL_BUDGET);
	return ret < 0 ? bench_fail(run, ret, "ibpost_poll") : 0;
}

const struct bench_ops bench_ibp_ops = {
	.setup = bench_ibp_setup,
	.teardown = bench_ibp_teardown,
	.side_create = bench_ibp_qp_create,
	.side_destroy = bench_ibp_qp_destroy,
	.buf_reg = bench_ibp_buf_reg,
	.buf_unreg = bench_ibp_buf_unreg,
	.post_recv = bench_ibp_post_recv,
	.post_bw = bench_ibp_post_bw,
	.post_lat = bench_ibp_post_lat,
	.poll = bench_ibp_poll,
};
