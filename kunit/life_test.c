// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_life: a QP's whole life on rxe0, with the windows a long
 * run or an unlucky consumer opens made deterministic.
 *
 * - ring positions that wrap past 2^32 (white-box: a queue started at
 *   U32_MAX - 20);
 * - completion callbacks that deregister their buffer while the QP is
 *   destroyed, in every poll context (SOFTIRQ defers to a work item, as
 *   a sleeping call must);
 * - WRs posted in ERR and destroyed before their flush worker ran, with
 *   and without the completion trace event on;
 * - RESET with WRs outstanding, and back to RTS;
 * - a consumer that frees the queued part of its chain from the
 *   completion callback before the post call returned;
 * - the provider refusing part of a chain (a test hook), and the signal
 *   interval counted from what was really queued;
 * - a memory registration whose WR stalls past sync_timeout_ms;
 * - a polling consumer's destroy handing back what it never fetched;
 * - an iWARP READ refused after its sink's REG_MR was taken.
 */
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "ibpost_test.h"
#include "gate.h"

#define LIFE_WRAP_START	(U32_MAX - 20)
#define LIFE_WRAP_N	25

/* Both idle queues of @qp: every position close to the wrap. */
static void life_wrap_queues(struct kunit *test, struct ibpost_qp *qp)
{
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_queue_set_pos(qp, true,
							   LIFE_WRAP_START));
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_queue_set_pos(qp, false,
							   LIFE_WRAP_START));
}

/* The next context of @qp's queue: a success, in range, seen once. */
static long life_wrap_take(struct kunit *test, struct ibpost_qp *qp,
			   bool send, unsigned long *seen)
{
	struct ibpost_comp comp;
	long c;

	if (send)
		ibpost_test_send_comp(test, qp, &comp);
	else
		ibpost_test_recv_comp(test, qp, &comp);
	c = (long)comp.context;
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_TRUE(test, c >= 1 && c <= LIFE_WRAP_N);
	KUNIT_EXPECT_FALSE_MSG(test, test_and_set_bit(c - 1, seen),
			       "%s context %ld came back twice",
			       send ? "send" : "receive", c);
	return c;
}

/* Positions near the wrap: every context exactly once, rings empty. */
static void ibpost_life_ring_wraps(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	DECLARE_BITMAP(seen_s, LIFE_WRAP_N);
	DECLARE_BITMAP(seen_r, LIFE_WRAP_N);
	u8 *ab = p->abuf.buf, *bb = p->bbuf.buf;
	struct ibpost_test_queue tq;
	int i, sig = 0;

	KUNIT_ASSERT_GE(test, p->got.max_send_wr, (u32)LIFE_WRAP_N);
	KUNIT_ASSERT_GE(test, p->got.max_recv_wr, (u32)LIFE_WRAP_N);
	bitmap_zero(seen_s, LIFE_WRAP_N);
	bitmap_zero(seen_r, LIFE_WRAP_N);
	/* Idle queues: move every position close to the wrap. */
	life_wrap_queues(test, p->a);
	life_wrap_queues(test, p->b);

	ibpost_test_fill(ab, LIFE_WRAP_N * 64, 0x77);
	for (i = 0; i < LIFE_WRAP_N; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p->b, (void *)(long)(i + 1),
						 bb + i * 64, 64, p->bbuf.mr));
	for (i = 0; i < LIFE_WRAP_N; i++) {
		/* Every third unsignaled: reclaimed across the wrap. */
		int flags = i % 3 == 1 ? 0 : IB_SEND_SIGNALED;

		sig += !!flags;
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_send(p->a, (void *)(long)(i + 1),
						 ab + i * 64, 64, p->abuf.mr,
						 flags));
	}
	for (i = 0; i < LIFE_WRAP_N; i++)
		life_wrap_take(test, p->b, false, seen_r);
	for (i = 0; i < sig; i++)
		KUNIT_EXPECT_NE(test, (life_wrap_take(test, p->a, true,
						      seen_s) - 1) % 3, 1L);
	ibpost_test_no_send_comp(test, p->a);
	KUNIT_EXPECT_EQ(test, memcmp(ab, bb, LIFE_WRAP_N * 64), 0);
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(p->a, true), 0U);
	ibpost_test_queue_get(p->b, false, &tq);
	KUNIT_EXPECT_EQ(test, tq.head - tq.tail, 0U);
	KUNIT_EXPECT_EQ(test, tq.head, LIFE_WRAP_START + LIFE_WRAP_N);
	/* MR users: all released, so the buffers deregister. */
	KUNIT_EXPECT_EQ(test, ibpost_test_mr_users(p->abuf.mr), 0);
	KUNIT_EXPECT_EQ(test, ibpost_test_mr_users(p->bbuf.mr), 0);
}

struct life_destroy {
	struct kunit *test;
	struct ibpost_qp *qp;
};

static int life_destroy_fn(void *arg)
{
	struct life_destroy *d = arg;

	ibpost_test_qp_destroy(d->test, d->qp);
	return 0;
}

/* Receive callbacks deregister their MRs while their QP is destroyed. */
static void life_callback_dereg(struct kunit *test, enum ib_poll_context ctx)
{
	struct ibpost_test_cbd *c = ibpost_test_cbd(test, ibpost_test_dev(test),
						    ctx);
	struct life_destroy *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	struct ibpost_test_thread *t;

	KUNIT_ASSERT_NOT_NULL(test, d);
	/* The MRs are in use: refused while the receives are posted. */
	KUNIT_EXPECT_EQ(test, ibpost_dereg_mr(c->recv[0].mr), -EBUSY);
	d->test = test;
	d->qp = c->b;
	t = ibpost_test_run(test, life_destroy_fn, d);
	KUNIT_ASSERT_TRUE_MSG(test, ibpost_test_join(t, 90 * HZ, NULL),
			      "destroy hung while callbacks deregistered MRs");
	ibpost_test_cbd_check(test, c);
}

static void ibpost_life_callback_dereg_softirq(struct kunit *test)
{
	life_callback_dereg(test, IB_POLL_SOFTIRQ);
}

static void ibpost_life_callback_dereg_workqueue(struct kunit *test)
{
	life_callback_dereg(test, IB_POLL_WORKQUEUE);
}

static void ibpost_life_callback_dereg_direct(struct kunit *test)
{
	life_callback_dereg(test, IB_POLL_DIRECT);
}

/* Send callbacks: count contexts and statuses. */
struct life_sends {
	atomic_t calls, flushed, other;
};

static void life_send_done(struct ibpost_qp *qp, void *context,
			   const struct ib_wc *wc)
{
	struct life_sends *s = ibpost_qp_priv(qp);

	if (wc->status == IB_WC_WR_FLUSH_ERR)
		atomic_inc(&s->flushed);
	else
		atomic_inc(&s->other);
	atomic_inc(&s->calls);
}

/*
 * WRs posted while the QP is in ERR, destroyed before their flush worker
 * ran: each comes back flushed, signaled or not (a WR that did not
 * succeed always comes back).
 */
static void life_err_then_destroy(struct kunit *test, int flags)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ibpost_qp_attr attr;
	struct ibpost_test_buf buf = {};
	struct ibpost_qp *a, *b;
	struct ibpost_test_cm *cm;
	struct life_sends *s;
	bool cancelled;
	int i, ret[5];

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.send_done = life_send_done;
	attr.priv = s;
	ret[0] = ibpost_test_connect_pair(dev, &attr, &attr, &a, &b, &cm);
	ibpost_test_defer_cm(test, cm);
	if (b)
		ibpost_test_defer_qp(test, b);
	if (ret[0])
		ibpost_qp_destroy(a);
	KUNIT_ASSERT_EQ(test, 0, ret[0]);
	ibpost_test_buf_init(test, &buf, dev, NULL, 4096, IBPOST_TEST_MSGS);
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(a, &qa, IB_QP_STATE));
	/*
	 * White-box: the flush worker has not run yet when the destroy
	 * begins (a window a busy system opens at will): make it so. With
	 * preemption off, the worker queued on this CPU cannot run before
	 * it is cancelled (posting is allowed in atomic context).
	 */
	preempt_disable();
	for (i = 0; i < 5; i++)
		ret[i] = ibpost_post_send(a, (void *)(long)i, buf.buf, 64,
					  buf.mr, flags);
	cancelled = ibpost_test_qp_cancel_flush(a);
	preempt_enable();
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ_MSG(test, 0, ret[i], "post %d", i);
	KUNIT_EXPECT_TRUE(test, cancelled);
	ibpost_qp_destroy(a);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->calls), 5);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->flushed), 5);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->other), 0);
	ibpost_test_buf_fini(&buf);
}

static void ibpost_life_err_unsignaled_destroyed(struct kunit *test)
{
	life_err_then_destroy(test, 0);
}

#define LIFE_TRACEFS	"/sys/kernel/tracing"

static int life_tracing(bool on)
{
	ibpost_test_sh("[ -d " LIFE_TRACEFS "/events ] || mount -t tracefs nodev " LIFE_TRACEFS);
	return ibpost_test_sh("echo %d > " LIFE_TRACEFS "/events/ibpost/ibpost_send_comp/enable",
			      on);
}

/* The same with the completion trace event on: it reads no freed CQ. */
static void ibpost_life_err_signaled_destroyed_traced(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, 0, life_tracing(true));
	life_err_then_destroy(test, IB_SEND_SIGNALED);
	KUNIT_EXPECT_EQ(test, 0, life_tracing(false));
}

/*
 * RESET with receives and a stalled SEND outstanding: every context comes
 * back flushed, the rings are empty, and the QP connects again.
 */
static void ibpost_life_reset_returns_contexts(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };
	struct ibpost_comp comp;
	u8 *bb = p->bbuf.buf;
	bool sends;
	int i;

	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p->b, (void *)(long)(i + 1),
						 bb + 64 * i, 64, p->bbuf.mr));
	/*
	 * a has no receive: b's SEND retries (RNR) until the RESET. iWARP
	 * has no RNR: there a SEND without a receive ends the connection,
	 * and the SEND (complete once sent) and the WRITE may have
	 * succeeded first; only the receives are outstanding there.
	 */
	sends = !ibpost_test_iwarp(p->dev);
	if (sends) {
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_send(p->b, (void *)100L, bb, 64,
						 p->bbuf.mr, IB_SEND_SIGNALED));
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_write(p->b, (void *)101L, bb, 64,
						  p->bbuf.mr, 0,
						  ibpost_mr_remote_addr(p->bw.mr),
						  ibpost_mr_rkey(p->bw.mr)));
		msleep(100);
	}
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->b, &qa, IB_QP_STATE));
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ_MSG(test, 1,
				    ibpost_get_recv_comp(p->b, &comp, 5 * HZ),
				    "receive %d did not come back at RESET",
				    i + 1);
		KUNIT_EXPECT_EQ(test, (long)comp.context, (long)(i + 1));
		KUNIT_EXPECT_EQ(test, comp.status, IB_WC_WR_FLUSH_ERR);
	}
	/* The SEND and the unsignaled WRITE behind it: both flushed. */
	for (i = 0; sends && i < 2; i++) {
		KUNIT_ASSERT_EQ_MSG(test, 1,
				    ibpost_get_send_comp(p->b, &comp, 5 * HZ),
				    "send WR %d did not come back at RESET", i);
		KUNIT_EXPECT_EQ(test, (long)comp.context, 100L + i);
		KUNIT_EXPECT_EQ(test, comp.status, IB_WC_WR_FLUSH_ERR);
	}
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(p->b, true), 0U);
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(p->b, false), 0U);
	KUNIT_EXPECT_EQ(test, ibpost_test_mr_users(p->bbuf.mr), 0);
	KUNIT_EXPECT_EQ(test, ibpost_test_qp_state(test, p->b), IB_QPS_RESET);
	/* Posting in RESET is refused; back to RTS it works again. */
	KUNIT_EXPECT_EQ(test, ibpost_post_recv(p->b, NULL, bb, 64, p->bbuf.mr),
			-ENOTCONN);
	ibpost_test_need_ib(test, p->dev,
			    "a QP back from RESET reconnects by hand only on IB/RoCE (RESET part passed)");
	ibpost_test_connect(test, p->b, p->a, IB_QPS_RTS, 12, 7);
	KUNIT_EXPECT_EQ(test, ibpost_post_recv(p->b, NULL, bb, 64, p->bbuf.mr),
			0);
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(p->b, false), 1U);
}

/* The consumer frees the queued part of its chain in the callback. */
struct life_chain {
	struct ib_rdma_wr *first;
	struct completion freed;
	bool freed_seen;
};

static void life_chain_send_done(struct ibpost_qp *qp, void *context,
				 const struct ib_wc *wc)
{
	struct life_chain *lc = ibpost_qp_priv(qp);

	if (context == lc->first) {
		kfree(lc->first);
		WRITE_ONCE(lc->freed_seen, true);
		complete(&lc->freed);
	}
}

static struct completion *life_chain_freed;

static void life_chain_wait_freed(struct ibpost_gate *g)
{
	/* The queued WR completes and is freed before the post returns. */
	wait_for_completion_timeout(life_chain_freed, 5 * HZ);
}

static void ibpost_life_bad_wr_after_free(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	const struct ib_send_wr *bad = NULL;
	struct ibpost_test_buf buf = {}, win = {};
	struct ibpost_qp_attr attr;
	struct ib_rdma_wr second = {};
	struct ibpost_qp *a, *b;
	struct life_chain *lc;
	struct ibpost_gate *g;
	struct ib_sge sge;

	lc = kunit_kzalloc(test, sizeof(*lc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, lc);
	init_completion(&lc->freed);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.send_done = life_chain_send_done;
	attr.priv = lc;
	ibpost_test_qp_pair(test, dev, &attr, &attr, &a, &b);
	ibpost_test_buf_init(test, &buf, dev, NULL, 4096, IBPOST_TEST_MSGS);
	ibpost_test_buf_init(test, &win, dev, b, 4096, IBPOST_TEST_WRITE);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(buf.mr, buf.buf, 64, &sge));

	lc->first = kzalloc(sizeof(*lc->first), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, lc->first);
	lc->first->wr.wr_id = (uintptr_t)lc->first;
	lc->first->wr.opcode = IB_WR_RDMA_WRITE;
	lc->first->wr.send_flags = IB_SEND_SIGNALED;
	lc->first->wr.sg_list = &sge;
	lc->first->wr.num_sge = 1;
	lc->first->remote_addr = ibpost_mr_remote_addr(win.mr);
	lc->first->rkey = ibpost_mr_rkey(win.mr);
	lc->first->wr.next = &second.wr;
	second = *lc->first;
	second.wr.next = NULL;
	second.wr.num_sge = 99;		/* refused: beyond the granted SGEs */

	life_chain_freed = &lc->freed;
	g = ibpost_gate(test, IBPOST_HOOK_POST_UNLOCKED);
	g->at = life_chain_wait_freed;
	KUNIT_EXPECT_EQ(test, ibpost_post_send_list(a, &lc->first->wr, &bad),
			-EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&second.wr);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(lc->freed_seen));
	ibpost_test_buf_fini(&win);
	ibpost_test_buf_fini(&buf);
}

static u32 life_since_signal(struct ibpost_qp *qp)
{
	struct ibpost_test_queue tq;

	ibpost_test_queue_get(qp, true, &tq);
	return tq.since_signal;
}

/*
 * The provider refuses a chain from its second WR (a test hook): the
 * first WR is queued, *bad_wr names the second, and the signal interval
 * counts on from the one WR really queued.
 */
static void ibpost_life_refused_chain_keeps_interval(struct kunit *test)
{
	struct ibpost_qp_attr attr;
	const struct ib_send_wr *bad = NULL;
	struct ib_rdma_wr wr[3] = {};
	struct ibpost_test_pair *p;
	struct ibpost_gate *g;
	struct ib_sge sge;
	int i;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.signal_interval = 4;
	p = ibpost_test_pair(test, &attr);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 64,
					       &sge));
	for (i = 0; i < 3; i++) {
		wr[i].wr.wr_id = i + 1;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.sg_list = &sge;
		wr[i].wr.num_sge = 1;
		wr[i].remote_addr = ibpost_mr_remote_addr(p->bw.mr);
		wr[i].rkey = ibpost_mr_rkey(p->bw.mr);
		wr[i].wr.next = i < 2 ? &wr[i + 1].wr : NULL;
	}
	KUNIT_ASSERT_EQ(test, life_since_signal(p->a), 0U);
	g = ibpost_gate(test, IBPOST_HOOK_SUBMIT);
	g->refuse = 2;				/* from WR 1 on */
	KUNIT_EXPECT_EQ(test, ibpost_post_send_list(p->a, &wr[0].wr, &bad),
			-EIO);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr[1].wr);
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(p->a, true), 1U);
	KUNIT_EXPECT_EQ(test, life_since_signal(p->a), 1U);
	/* Reposted from *bad_wr: the third WR of four is the forced signal. */
	KUNIT_EXPECT_EQ(test, ibpost_post_send_list(p->a, bad, &bad), 0);
	KUNIT_EXPECT_EQ(test, life_since_signal(p->a), 3U);
}

/*
 * A registration whose REG_MR stalls past sync_timeout_ms: -ETIMEDOUT,
 * and only after the QP was moved to ERR and the WR came back; the SEND
 * ahead of it comes back flushed, and the MR was not freed under the WR.
 *
 * The stall is a SEND that b answers with an RNR NAK. b advertises the
 * longest RNR timer (655 ms) and the registration times out well before
 * a's first retry: rxe on 6.12 executes a REG_MR queued behind a WR it is
 * retrying a second time after the retry, and fails the QP when it finds
 * the MR already valid (see Documentation/kernels.rst).
 */
static void ibpost_life_reg_timeout_waits_for_wr(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };
	struct ibpost_comp comp;
	struct ibpost_mr *mr;
	void *buf;

	ibpost_test_need_ib(test, p->dev,
			    "the stalled SQ is an RNR wait, and iWARP has no RNR (a SEND without a receive is fatal)");
	buf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->b, &qa, IB_QP_STATE));
	ibpost_test_connect(test, p->b, p->a, IB_QPS_RTS, 0, 7);
	ibpost_test_param_set(test, "sync_timeout_ms", 200, 30000);
	/* b has no receive: a's SEND and the REG_MR behind it wait. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, (void *)1L,
						  p->abuf.buf, 64, p->abuf.mr,
						  IB_SEND_SIGNALED));
	mr = ibpost_reg_write(p->a, buf, 4096);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -ETIMEDOUT);
	if (!IS_ERR_OR_NULL(mr))
		ibpost_dereg_mr(mr);
	/*
	 * Had the MR been freed with its REG_MR queued, the SEND ahead of it
	 * would complete once b gets a receive, and the REG_MR then run on
	 * a freed MR; here both were flushed before the MR went.
	 */
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_recv(p->b, NULL, p->bbuf.buf, 64,
						  p->bbuf.mr));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_EQ(test, (long)comp.context, 1L);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, ibpost_test_qp_state(test, p->a), IB_QPS_ERR);
	msleep(200);
}

/*
 * A send callback deregisters a remote MR registered through its own QP:
 * the invalidation's completion comes on the CQ the callback runs for.
 * DIRECT: ibpost's polling nests, in queue order, and the dereg succeeds.
 * WORKQUEUE: the work item cannot wait for itself: -EWOULDBLOCK, nothing
 * released, and the same dereg from elsewhere succeeds. The dereg says so
 * before it revokes anything: it never reaches the gate where a dereg
 * has revoked its MR, and a post naming the MR, made while the callback
 * is held right after its dereg, is accepted.
 */
struct life_remote {
	struct ibpost_mr *mr;
	int ret;
	atomic_t calls;
	bool hold;		/* WORKQUEUE: wait in the callback for @posted */
	bool held;		/* the callback was still waiting at @posted */
	struct completion deregged, posted;
};

static void life_remote_send_done(struct ibpost_qp *qp, void *context,
				  const struct ib_wc *wc)
{
	struct life_remote *lr = ibpost_qp_priv(qp);

	if (context == lr) {
		lr->ret = ibpost_dereg_mr(lr->mr);
		complete(&lr->deregged);
		if (lr->hold)
			lr->held = wait_for_completion_timeout(&lr->posted,
							       30 * HZ);
	}
	atomic_inc(&lr->calls);
}

static void life_send_callback_dereg_remote(struct kunit *test,
					    enum ib_poll_context ctx)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf buf = {}, win = {};
	struct ibpost_gate *g = NULL;
	struct ibpost_qp_attr attr;
	struct ibpost_qp *a, *b;
	struct life_remote *lr;
	void *rbuf, *rbuf2;
	struct ibpost_mr *mr2;

	lr = kunit_kzalloc(test, sizeof(*lr), GFP_KERNEL);
	rbuf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	rbuf2 = kunit_kzalloc(test, 4096, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, lr && rbuf && rbuf2);
	lr->ret = 1;
	lr->hold = ctx == IB_POLL_WORKQUEUE;
	init_completion(&lr->deregged);
	init_completion(&lr->posted);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = ctx;
	attr.send_done = life_remote_send_done;
	attr.priv = lr;
	ibpost_test_qp_pair(test, dev, &attr, &attr, &a, &b);
	ibpost_test_buf_init(test, &buf, dev, NULL, 4096, IBPOST_TEST_MSGS);
	ibpost_test_buf_init(test, &win, dev, b, 4096, IBPOST_TEST_WRITE);
	lr->mr = ibpost_reg_write(a, rbuf, 4096);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, lr->mr);
	if (ctx != IB_POLL_DIRECT)
		g = ibpost_gate(test, IBPOST_HOOK_DEREG_REVOKED);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_write(a, lr, buf.buf, 64, buf.mr,
						   IB_SEND_SIGNALED,
						   ibpost_mr_remote_addr(win.mr),
						   ibpost_mr_rkey(win.mr)));
	if (ctx == IB_POLL_DIRECT) {
		/* ibpost polls a's CQ while it registers: the callback runs. */
		mr2 = ibpost_reg_write(a, rbuf2, 4096);
		KUNIT_EXPECT_FALSE(test, IS_ERR_OR_NULL(mr2));
		KUNIT_EXPECT_EQ(test, lr->ret, 0);
		if (!IS_ERR_OR_NULL(mr2))
			KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(mr2));
	} else {
		int i, ret;

		/* The callback's dereg returned, or revoked at the gate. */
		for (i = 0; i < 100 && !completion_done(&lr->deregged) &&
		     !completion_done(&g->arrived); i++)
			msleep(50);
		KUNIT_EXPECT_FALSE_MSG(test, completion_done(&g->arrived),
				       "the callback's dereg revoked the MR before it refused to wait");
		KUNIT_EXPECT_TRUE_MSG(test, completion_done(&lr->deregged),
				      "the send callback's dereg did not return within 5 s");
		/* The callback waits for this post: the dereg released nothing. */
		ret = ibpost_post_write(a, CTX(2), rbuf, 64, lr->mr,
					IB_SEND_SIGNALED,
					ibpost_mr_remote_addr(win.mr),
					ibpost_mr_rkey(win.mr));
		complete(&lr->posted);
		complete_all(&g->release);
		KUNIT_EXPECT_EQ(test, 0, ret);
		for (i = 0; i < 100 && atomic_read(&lr->calls) < 2; i++)
			msleep(50);
		KUNIT_EXPECT_EQ(test, lr->ret, -EWOULDBLOCK);
		KUNIT_EXPECT_TRUE_MSG(test, lr->held,
				      "the post was not made while the callback was held after its dereg");
		KUNIT_EXPECT_EQ(test, 2, atomic_read(&lr->calls));
		KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(lr->mr));
	}
	ibpost_test_buf_fini(&win);
	ibpost_test_buf_fini(&buf);
}

static void ibpost_life_send_callback_dereg_remote_direct(struct kunit *test)
{
	life_send_callback_dereg_remote(test, IB_POLL_DIRECT);
}

static void ibpost_life_send_callback_dereg_remote_workqueue(struct kunit *test)
{
	life_send_callback_dereg_remote(test, IB_POLL_WORKQUEUE);
}

/* What the release callback was handed, in order. */
#define LIFE_REL_MAX	8
static struct life_released {
	int n;
	long ctx[LIFE_REL_MAX];
	bool send[LIFE_REL_MAX];
	enum ib_wc_status status[LIFE_REL_MAX];
} life_rel;

static void life_release(struct ibpost_qp *qp, bool send,
			 const struct ibpost_comp *comp)
{
	struct life_released *r = &life_rel;

	might_sleep();
	if (r->n < LIFE_REL_MAX) {
		r->ctx[r->n] = (long)comp->context;
		r->send[r->n] = send;
		r->status[r->n] = comp->status;
	}
	r->n++;
}

/*
 * A polling consumer destroys its QPs without fetching: every context
 * comes back once through the release callback, in completion order.
 * b's two receives that got data (parked successes), then its two that
 * did not (flushed by the teardown); then a's two SENDs.
 */
static void ibpost_life_destroy_releases_parked(struct kunit *test)
{
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	struct ibpost_qp *a, *b;
	u8 *ab, *bb;
	int i;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_inline_data = 64;
	attr.release = life_release;
	p = ibpost_test_pair(test, &attr);
	ab = p->abuf.buf;
	bb = p->bbuf.buf;
	memset(&life_rel, 0, sizeof(life_rel));
	ibpost_test_fill(ab, 128, 5);
	ibpost_test_fill(bb, 256, 6);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p->b, (void *)(long)(i + 1),
						 bb + 64 * i, 64, p->bbuf.mr));
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_send(p->a, (void *)(100L + i),
						 ab + 64 * i, 64, p->abuf.mr,
						 IB_SEND_SIGNALED));
	/* Both SENDs landed: b's first two receives completed. */
	for (i = 0; i < 500 && memcmp(bb + 64, ab + 64, 64); i++)
		usleep_range(10000, 20000);
	KUNIT_ASSERT_EQ_MSG(test, 0, memcmp(bb, ab, 128),
			    "the two SENDs did not land in 5 s");
	b = p->b;
	p->b = NULL;
	ibpost_qp_destroy(b);
	KUNIT_ASSERT_EQ(test, life_rel.n, 4);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, life_rel.ctx[i], i + 1L);
		KUNIT_EXPECT_FALSE(test, life_rel.send[i]);
		KUNIT_EXPECT_EQ(test, life_rel.status[i],
				i < 2 ? IB_WC_SUCCESS : IB_WC_WR_FLUSH_ERR);
	}
	/* a's SENDs: acknowledged or flushed by b's end, but each once. */
	a = p->a;
	p->a = NULL;
	ibpost_qp_destroy(a);
	KUNIT_ASSERT_EQ(test, life_rel.n, 6);
	for (i = 4; i < 6; i++) {
		KUNIT_EXPECT_EQ(test, life_rel.ctx[i], 96L + i);
		KUNIT_EXPECT_TRUE(test, life_rel.send[i]);
	}
	KUNIT_EXPECT_EQ(test, ibpost_test_mr_users(p->abuf.mr), 0);
	KUNIT_EXPECT_EQ(test, ibpost_test_mr_users(p->bbuf.mr), 0);
}

/*
 * An unsignaled WRITE that landed, its slot still posted (nothing
 * signaled followed it), then destroy: on IB and RoCE the drain marker
 * proves it succeeded, and no context comes back; on iWARP the marker
 * proves nothing (siw completes out of order while it flushes), so it
 * comes back flushed, to the release callback.
 */
static void ibpost_life_destroy_iwarp_unsignaled_flushed(struct kunit *test)
{
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	struct ibpost_qp *a;
	u8 *ab, *bw;
	bool iwarp;
	int i;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_inline_data = 64;
	attr.release = life_release;
	p = ibpost_test_pair(test, &attr);
	iwarp = ibpost_test_iwarp(p->dev);
	ab = p->abuf.buf;
	bw = p->bw.buf;
	memset(&life_rel, 0, sizeof(life_rel));
	ibpost_test_fill(ab, 256, 11);
	ibpost_test_fill(bw, 256, 12);
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_write(p->a, (void *)300L, ab, 256,
					  p->abuf.mr, 0,
					  ibpost_mr_remote_addr(p->bw.mr),
					  ibpost_mr_rkey(p->bw.mr)));
	for (i = 0; i < 500 && memcmp(bw, ab, 256); i++)
		usleep_range(10000, 20000);
	KUNIT_ASSERT_EQ_MSG(test, 0, memcmp(bw, ab, 256),
			    "the WRITE did not land in 5 s");
	/*
	 * Landed at b is not yet acknowledged at a: a WRITE whose ACK a's
	 * provider has not taken when the drain moves the QP to ERR is
	 * flushed by the provider itself, and that flush is a context
	 * returned (rightly). rxe takes the ACK in a's softirq (6.1) or
	 * work item (6.12), within microseconds; 100 ms leaves no doubt.
	 */
	msleep(100);
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(p->a, true), 1U);
	a = p->a;
	p->a = NULL;
	ibpost_qp_destroy(a);
	KUNIT_ASSERT_EQ_MSG(test, life_rel.n, iwarp ? 1 : 0,
			    "%s: %d contexts came back for one unsignaled WRITE that landed",
			    iwarp ? "iWARP" : "IB/RoCE", life_rel.n);
	if (iwarp) {
		KUNIT_EXPECT_EQ(test, life_rel.ctx[0], 300L);
		KUNIT_EXPECT_TRUE(test, life_rel.send[0]);
		KUNIT_EXPECT_EQ(test, life_rel.status[0], IB_WC_WR_FLUSH_ERR);
	}
	KUNIT_EXPECT_EQ(test, ibpost_test_mr_users(p->abuf.mr), 0);
}

/*
 * The provider takes an iWARP READ's sink REG_MR and refuses the READ
 * itself (the SUBMIT hook): that REG_MR may still run, so the sink's MR,
 * and the READ's buffer its key may open, are kept until a later send WR
 * succeeds: the buffer's MR deregisters with -EBUSY until then. The READ
 * in the same slot after it gets a fresh sink and its data, and proves
 * the REG_MR done: then the buffer goes. Without sinks (IB, RoCE)
 * nothing is kept.
 */
static void ibpost_life_refused_read_holds_sink(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u64 raddr = ibpost_mr_remote_addr(p->br.mr);
	u32 rkey = ibpost_mr_rkey(p->br.mr);
	struct ibpost_gate *g;
	struct ibpost_mr *mr;
	bool iwarp;
	u8 *buf;

	iwarp = ibpost_test_iwarp(p->dev);
	buf = kunit_kmalloc(test, 4096, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	ibpost_test_fill(buf, 4096, 21);
	ibpost_test_fill(p->br.buf, 4096, 22);
	mr = ibpost_reg_msgs(p->dev, buf, 4096);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	g = ibpost_gate(test, IBPOST_HOOK_SUBMIT);
	g->refuse = 1;				/* from WR 0 on */
	KUNIT_EXPECT_EQ(test, -EIO,
			ibpost_post_read(p->a, (void *)1L, buf, 256, mr,
					 IB_SEND_SIGNALED, raddr, rkey));
	/* The sink's work item has run, if it was to release anything. */
	msleep(100);
	if (!iwarp) {
		KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(mr));
		return;
	}
	KUNIT_EXPECT_EQ_MSG(test, -EBUSY, ibpost_dereg_mr(mr),
			    "the buffer went while its sink's REG_MR may run");
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_read(p->a, (void *)2L, buf, 256, mr,
					 IB_SEND_SIGNALED, raddr, rkey));
	ibpost_test_send_ok(test, p->a, (void *)2L);
	KUNIT_EXPECT_EQ(test, 0, memcmp(buf, p->br.buf, 256));
	/* The sink's work item has released the held MR. */
	msleep(100);
	KUNIT_EXPECT_EQ_MSG(test, 0, ibpost_dereg_mr(mr),
			    "the held sink outlived a later READ's success");
}

static struct kunit_case ibpost_life_cases[] = {
	KUNIT_CASE(ibpost_life_ring_wraps),
	KUNIT_CASE(ibpost_life_err_unsignaled_destroyed),
	KUNIT_CASE(ibpost_life_err_signaled_destroyed_traced),
	KUNIT_CASE(ibpost_life_reset_returns_contexts),
	KUNIT_CASE(ibpost_life_bad_wr_after_free),
	KUNIT_CASE(ibpost_life_refused_chain_keeps_interval),
	KUNIT_CASE(ibpost_life_reg_timeout_waits_for_wr),
	KUNIT_CASE(ibpost_life_callback_dereg_softirq),
	KUNIT_CASE(ibpost_life_callback_dereg_workqueue),
	KUNIT_CASE(ibpost_life_callback_dereg_direct),
	KUNIT_CASE(ibpost_life_send_callback_dereg_remote_direct),
	KUNIT_CASE(ibpost_life_send_callback_dereg_remote_workqueue),
	KUNIT_CASE(ibpost_life_destroy_releases_parked),
	KUNIT_CASE(ibpost_life_destroy_iwarp_unsignaled_flushed),
	KUNIT_CASE(ibpost_life_refused_read_holds_sink),
	{}
};

static struct kunit_suite ibpost_life_suite = {
	.name = "ibpost_life",
	.test_cases = ibpost_life_cases,
};

kunit_test_suite(ibpost_life_suite);
