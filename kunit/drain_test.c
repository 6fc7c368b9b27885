// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_drain (drivers/drain.c): before a QP is destroyed or moved
 * to RESET, ibpost moves it to ERR and waits for its own marker WRs (an
 * RDMA WRITE on RC, a SEND to the QP's own port on UD, an empty receive).
 * Once a send marker has come back, the unsignaled WRs before it are
 * known to have succeeded: they stay silent (the contract returns only
 * asked-for successes and every WR that did not succeed), where a drain
 * that failed would have to report them flushed. Outstanding receives
 * come back flushed, once each, and so do WRs ibpost kept from the
 * provider because the QP was in ERR. DIRECT QPs are drained by polling
 * their CQs, since nobody else does. A SOFTIRQ QP's callbacks run with
 * bottom halves off also when a RESET runs them, and a destroy may be
 * called from a WQ_MEM_RECLAIM work item.
 */
#include <linux/module.h>
#include <linux/bottom_half.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

#define DRAIN_RECVS	4
#define DRAIN_WRITES	3

struct drain_case {
	enum ib_poll_context ctx;
	bool destroy;
};

static const struct drain_case drain_cases[] = {
	{ IB_POLL_SOFTIRQ, false }, { IB_POLL_SOFTIRQ, true },
	{ IB_POLL_DIRECT, false }, { IB_POLL_DIRECT, true },
};

static void drain_case_desc(const struct drain_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_%s",
		 c->ctx == IB_POLL_DIRECT ? "direct" : "softirq",
		 c->destroy ? "destroy" : "reset");
}

KUNIT_ARRAY_PARAM(drain_case, drain_cases, drain_case_desc);

/* Wait until @len bytes at @dst equal @src (an unsignaled WRITE landed). */
static bool drain_landed(const void *dst, const void *src, size_t len)
{
	int i;

	for (i = 0; i < 250 && memcmp(dst, src, len); i++)
		msleep(20);
	return !memcmp(dst, src, len);
}

/*
 * Unsignaled WRITEs that landed, then RESET or destroy: the drain's
 * markers come back, the WRITEs stay silent (counted as completed), and
 * each receive outstanding comes back flushed, once. On iWARP the
 * marker's return proves nothing of the WRITEs (siw completes out of
 * order while it flushes; see Documentation/providers.rst): there each
 * comes back flushed, once, whether it ran or not.
 */
static void ibpost_drain_succeeded_unsignaled_stay_silent(struct kunit *test)
{
	const struct drain_case *dc = test->param_value;
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };
	struct ibpost_test_queue sq, rq;
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	struct ibpost_test_cb *c;
	int i, writes_back;
	u8 *src;

	c = ibpost_test_cb_attr(test, &attr);
	attr.poll_ctx = dc->ctx;
	p = ibpost_test_pair(test, &attr);
	writes_back = ibpost_test_iwarp(p->dev) ? DRAIN_WRITES : 0;
	src = p->abuf.buf;
	ibpost_test_fill(src, 8 * DRAIN_WRITES, 0xd1);
	for (i = 0; i < DRAIN_RECVS; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, CTX(10 + i),
							  src + 1024 + 64 * i,
							  64, p->abuf.mr));
	for (i = 0; i < DRAIN_WRITES; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_write(p->a, CTX(1 + i), src + 8 * i,
						  8, p->abuf.mr, 0,
						  ibpost_mr_remote_addr(p->bw.mr) + 8 * i,
						  ibpost_mr_rkey(p->bw.mr)));
	KUNIT_ASSERT_TRUE_MSG(test, drain_landed(p->bw.buf, src,
						 8 * DRAIN_WRITES),
			      "the WRITEs did not land within 5 s");
	/*
	 * The peer's acknowledgements are in before the drain begins (no
	 * event tells: the WRITEs are unsignaled). Still outstanding in
	 * ibpost's ring, so the drain is what retires them.
	 */
	msleep(300);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_cb_calls(c));
	ibpost_test_queue_get(p->a, true, &sq);
	KUNIT_ASSERT_EQ(test, (u32)DRAIN_WRITES, sq.head - sq.tail);

	if (dc->destroy) {
		ibpost_qp_destroy(p->a);
		p->a = NULL;
	} else {
		KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa,
							  IB_QP_STATE));
		ibpost_test_queue_get(p->a, true, &sq);
		ibpost_test_queue_get(p->a, false, &rq);
		KUNIT_EXPECT_EQ(test, (u64)(DRAIN_WRITES - writes_back),
				sq.completed);
		KUNIT_EXPECT_EQ(test, (u64)writes_back, sq.flushed);
		KUNIT_EXPECT_EQ(test, 0U, sq.head - sq.tail);
		KUNIT_EXPECT_EQ(test, (u64)DRAIN_RECVS, rq.flushed);
		KUNIT_EXPECT_EQ(test, 0U, rq.head - rq.tail);
	}
	/* Callbacks ran before the call returned: nothing is pending. */
	KUNIT_EXPECT_EQ(test, DRAIN_RECVS + writes_back,
			ibpost_test_cb_calls(c));
	KUNIT_EXPECT_EQ(test, DRAIN_RECVS + writes_back, c->flushed);
	KUNIT_EXPECT_EQ(test, 0, c->dups);
	for (i = 0; i < DRAIN_WRITES; i++)
		KUNIT_EXPECT_EQ_MSG(test, !!test_bit(1 + i, c->seen),
				    writes_back > 0,
				    "unsignaled WRITE %d: came back %d, expected %d",
				    i + 1, !!test_bit(1 + i, c->seen),
				    writes_back > 0);
	for (i = 0; i < DRAIN_RECVS; i++)
		KUNIT_EXPECT_TRUE(test, test_bit(10 + i, c->seen));
}

/*
 * UD: the send queue's marker is a SEND to the QP's own port. Unsignaled
 * sends that reached the peer stay silent at destroy, the receives come
 * back flushed: the marker completed.
 */
static void ibpost_drain_ud_marker_completes(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *sbuf, *rbuf;
	struct ibpost_qp_attr attr;
	struct ibpost_test_cb *c;
	struct ibpost_qp *x, *y;
	struct ib_ah *ah;
	int i;

	ibpost_test_need_ud(test, dev);
	c = ibpost_test_cb_attr(test, &attr);
	attr.qp_type = IB_QPT_UD;
	sbuf = ibpost_test_buf_new(test, dev, 4096);
	rbuf = ibpost_test_buf_new(test, dev, 4096);
	x = ibpost_test_qp(test, dev, &attr);
	y = ibpost_test_qp(test, dev, &attr);
	ah = ibpost_test_loopback_ah(test, x);
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(y, CTX(20 + i),
							  rbuf->buf + 256 * i,
							  256, rbuf->mr));
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_ud_send(x, CTX(1 + i), sbuf->buf, 32,
						    sbuf->mr, 0, ah,
						    ibpost_qp_ibqp(y)->qp_num,
						    attr.qkey));
	KUNIT_ASSERT_EQ(test, 3, ibpost_test_cb_wait(c, 3));
	KUNIT_EXPECT_EQ(test, 3, c->success);
	/* x's own completions of the sends are in before the drain. */
	msleep(300);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(x, CTX(30 + i),
							  rbuf->buf + 1024 +
							  256 * i, 256,
							  rbuf->mr));
	ibpost_test_qp_destroy(test, x);
	KUNIT_EXPECT_EQ(test, 5, ibpost_test_cb_calls(c));
	KUNIT_EXPECT_EQ(test, 2, c->flushed);
	KUNIT_EXPECT_EQ(test, 0, c->dups);
	KUNIT_EXPECT_TRUE(test, test_bit(30, c->seen) && test_bit(31, c->seen));
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_FALSE_MSG(test, test_bit(1 + i, c->seen),
				       "unsignaled UD send %d came back", i + 1);
}

/*
 * WRs posted while the QP is in ERR never reach the provider; a RESET
 * right after still returns each of them once, flushed, with the
 * outstanding receive, and leaves both rings empty.
 */
static void ibpost_drain_reset_after_err_returns_each_once(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	DECLARE_BITMAP(seen, 7) = {};
	struct ibpost_test_queue sq, rq;
	struct ibpost_comp comp;
	int i;

	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, CTX(6), p->abuf.buf,
						  64, p->abuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa, IB_QP_STATE));
	ibpost_test_post_mixed(test, p);
	qa.qp_state = IB_QPS_RESET;
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa, IB_QP_STATE));
	for (i = 0; i < 4; i++)
		ibpost_test_take_flushed(test, p->a, true, seen, 7);
	for (i = 0; i < 3; i++)
		ibpost_test_take_flushed(test, p->a, false, seen, 7);
	KUNIT_EXPECT_TRUE(test, bitmap_full(seen, 7));
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_send_comp(p->a, &comp, 0));
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(p->a, &comp, 0));
	ibpost_test_queue_get(p->a, true, &sq);
	ibpost_test_queue_get(p->a, false, &rq);
	KUNIT_EXPECT_EQ(test, 4ULL, sq.flushed);
	KUNIT_EXPECT_EQ(test, 3ULL, rq.flushed);
	KUNIT_EXPECT_EQ(test, 0U, sq.head - sq.tail);
	KUNIT_EXPECT_EQ(test, 0U, rq.head - rq.tail);
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET, ibpost_test_qp_state(test, p->a));
}

/*
 * Two drains of one QP: RESET with receives outstanding, back to RTS,
 * the same again: each drain returns its own receives, once, nothing of
 * the first shows in the second, and the QP then carries traffic. (Only
 * b is reset, and it sends only at the end: its packet sequence numbers
 * start again at 0 with each connection, where a expects them.)
 */
static void ibpost_drain_twice_on_one_qp(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };
	struct ibpost_comp comp;
	int round, i;

	ibpost_test_need_ib(test, p->dev,
			    "a QP back from RESET reconnects by hand only on IB/RoCE");
	for (round = 0; round < 2; round++) {
		for (i = 0; i < 3; i++)
			KUNIT_ASSERT_EQ(test, 0,
					ibpost_post_recv(p->b, CTX(10 * round + i),
							 p->bbuf.buf + 64 * i,
							 64, p->bbuf.mr));
		KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->b, &qa,
							  IB_QP_STATE));
		for (i = 0; i < 3; i++) {
			ibpost_test_recv_comp(test, p->b, &comp);
			KUNIT_EXPECT_PTR_EQ(test, CTX(10 * round + i),
					    comp.context);
			KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
		}
		KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(p->b, &comp, 0));
		KUNIT_EXPECT_EQ(test, 0, ibpost_get_send_comp(p->b, &comp, 0));
		ibpost_test_connect(test, p->b, p->a, IB_QPS_RTS, 12, 7);
	}
	/* The QP works again: a SEND from b lands at a. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, CTX(40), p->abuf.buf,
						  64, p->abuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->b, CTX(41), p->bbuf.buf,
						  16, p->bbuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_comp(test, p->b, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(41), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	ibpost_test_recv_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(40), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
}

/*
 * A SOFTIRQ queue's callbacks run with bottom halves disabled on every
 * path, not only from its CQ's softirq: also those ibpost runs itself
 * from a task, here the receives a RESET's drain returns. Each receive
 * flushed by the provider is reposted once from its callback; in ERR the
 * repost goes to ibpost's flush worker, which the callback cancels (a
 * window a busy system opens at will; the callback runs in softirq, so
 * the worker queued on its CPU cannot have started), leaving the reposts
 * to the RESET's own flush, in the resetting task.
 */
#define DRAIN_BH_MAX	32
#define DRAIN_BH_ROUNDS	10

struct drain_bh {
	spinlock_t lock;	/* the callbacks run in softirq */
	DECLARE_BITMAP(seen, 2 * DRAIN_BH_MAX);
	void *buf;
	struct ibpost_mr *mr;
	int calls, flushed, bh_on, dups, repost_err;
};

static void drain_bh_recv_done(struct ibpost_qp *qp, void *context,
			       const struct ib_wc *wc)
{
	struct drain_bh *d = ibpost_qp_priv(qp);
	unsigned long i = (unsigned long)context;
	bool bh_on = !softirq_count();
	int ret = 0;

	if (wc->status == IB_WC_WR_FLUSH_ERR && i < DRAIN_BH_MAX) {
		ret = ibpost_post_recv(qp, CTX(DRAIN_BH_MAX + i),
				       d->buf + 64 * i, 64, d->mr);
		ibpost_test_qp_cancel_flush(qp);
	}
	spin_lock_bh(&d->lock);
	d->calls++;
	d->bh_on += bh_on;
	d->flushed += wc->status == IB_WC_WR_FLUSH_ERR;
	d->repost_err += !!ret;
	if (i >= 2 * DRAIN_BH_MAX || __test_and_set_bit(i, d->seen))
		d->dups++;
	spin_unlock_bh(&d->lock);
}

static void ibpost_drain_reset_softirq_callbacks_bh_off(struct kunit *test)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };
	struct ibpost_qp_attr attr, got;
	struct ibpost_test_pair *p;
	struct drain_bh *d;
	int round, rounds, i, n;

	/* Before the pair: freed after its destroy, whose flushes see it. */
	d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, d);
	spin_lock_init(&d->lock);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_recv_wr = 4;
	attr.recv_done = drain_bh_recv_done;
	attr.priv = d;
	p = ibpost_test_pair(test, &attr);
	ibpost_qp_get_attr(p->b, &got);
	n = got.max_recv_wr;
	KUNIT_ASSERT_LE(test, n, DRAIN_BH_MAX);
	BUILD_BUG_ON(IBPOST_TEST_BUF_LEN < 64 * 2 * DRAIN_BH_MAX);
	d->buf = p->bbuf.buf;
	d->mr = p->bbuf.mr;
	/* A QP back from RESET reconnects by hand only on IB/RoCE. */
	rounds = ibpost_test_iwarp(p->dev) ? 1 : DRAIN_BH_ROUNDS;
	for (round = 0; round < rounds; round++) {
		spin_lock_bh(&d->lock);
		bitmap_zero(d->seen, 2 * DRAIN_BH_MAX);
		d->calls = 0;
		d->flushed = 0;
		spin_unlock_bh(&d->lock);
		/* The receive queue full. */
		for (i = 0; i < n; i++)
			KUNIT_ASSERT_EQ(test, 0,
					ibpost_post_recv(p->b, CTX(i),
							 d->buf + 64 * i, 64,
							 d->mr));
		KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->b, &qa,
							  IB_QP_STATE));
		/* Every callback ran before the RESET returned. */
		spin_lock_bh(&d->lock);
		spin_unlock_bh(&d->lock);
		KUNIT_EXPECT_EQ_MSG(test, 2 * n, d->calls, "round %d", round);
		KUNIT_EXPECT_EQ_MSG(test, 2 * n, d->flushed, "round %d", round);
		KUNIT_EXPECT_EQ_MSG(test, 0U, ibpost_test_in_use(p->b, false),
				    "round %d", round);
		if (round + 1 < rounds)
			ibpost_test_connect(test, p->b, p->a, IB_QPS_RTS, 12, 7);
	}
	KUNIT_EXPECT_EQ_MSG(test, 0, d->bh_on,
			    "SOFTIRQ callbacks ran with bottom halves enabled");
	KUNIT_EXPECT_EQ(test, 0, d->dups);
	KUNIT_EXPECT_EQ(test, 0, d->repost_err);
}

/*
 * A ULP may destroy a QP from a WQ_MEM_RECLAIM work item of its own (a
 * reclaim path). The destroy flushes ibpost's flush worker, here pending
 * with a receive posted in ERR: that worker must be on a WQ_MEM_RECLAIM
 * workqueue too, or the workqueue code warns (a reclaim path waiting for
 * a worker that may not get to run under memory pressure). The receive
 * comes back flushed.
 */
struct drain_reclaim {
	struct work_struct work;
	struct ibpost_qp *qp;
	void *buf;
	struct ibpost_mr *mr;
	int post_ret;
	struct completion done;
};

static void drain_reclaim_fn(struct work_struct *work)
{
	struct drain_reclaim *r = container_of(work, struct drain_reclaim,
					       work);

	/*
	 * Posted here, so that the flush worker is still pending at the
	 * destroy: queued on this CPU, it runs only once this work item
	 * sleeps, which nothing before the destroy's flush makes it do.
	 */
	r->post_ret = ibpost_post_recv(r->qp, CTX(1), r->buf, 64, r->mr);
	ibpost_qp_destroy(r->qp);
	complete(&r->done);
}

static void ibpost_drain_destroy_from_reclaim_work(struct kunit *test)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	bool tainted = test_taint(TAINT_WARN);
	struct workqueue_struct *wq;
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	struct ibpost_test_cb *c;
	struct drain_reclaim *r;

	c = ibpost_test_cb_attr(test, &attr);
	p = ibpost_test_pair(test, &attr);
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa, IB_QP_STATE));
	wq = alloc_workqueue("t", WQ_MEM_RECLAIM, 0);
	KUNIT_ASSERT_NOT_NULL(test, wq);
	/* Not kunit's: a work item that hangs keeps it. */
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		destroy_workqueue(wq);
		KUNIT_FAIL_AND_ABORT(test, "out of memory");
	}
	INIT_WORK(&r->work, drain_reclaim_fn);
	init_completion(&r->done);
	r->qp = p->a;
	r->buf = p->abuf.buf;
	r->mr = p->abuf.mr;
	queue_work(wq, &r->work);
	if (!wait_for_completion_timeout(&r->done, 30 * HZ)) {
		/* The QP, its work item and the workqueue are left to leak. */
		p->a = NULL;
		KUNIT_FAIL_AND_ABORT(test, "the destroy did not return within 30 s");
	}
	p->a = NULL;
	destroy_workqueue(wq);
	KUNIT_EXPECT_EQ(test, 0, r->post_ret);
	kfree(r);
	KUNIT_EXPECT_EQ(test, 1, ibpost_test_cb_calls(c));
	KUNIT_EXPECT_EQ(test, 1, c->flushed);
	KUNIT_EXPECT_TRUE(test, test_bit(1, c->seen));
	KUNIT_EXPECT_FALSE_MSG(test, !tainted && test_taint(TAINT_WARN),
			       "a WARNING while a reclaim work item destroyed the QP (see the log)");
}

/*
 * A drain whose flushes cannot come back in time: b's receive CQ is
 * polled by a work item (IB_POLL_WORKQUEUE) held in b's first receive
 * callback, so the drain's receive marker cannot be seen. With
 * drain_timeout_ms at 300, the move to RESET waits that long and says
 * -ETIMEDOUT, leaving b in ERR with its other receives outstanding and
 * unreported (the provider still holds them). Let go, the callback
 * returns, and the destroy returns each of those receives flushed,
 * exactly once.
 */
#define DRAIN_HELD_RECVS	4

static void ibpost_drain_timeout_leaves_err(struct kunit *test)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	struct ibpost_test_cb *c;
	unsigned long t;
	int i;

	c = ibpost_test_cb_attr(test, &attr);
	attr.poll_ctx = IB_POLL_WORKQUEUE;
	attr.send_done = NULL;		/* a's SEND: polled */
	p = ibpost_test_pair(test, &attr);
	ibpost_test_cb_hold(test, c);
	for (i = 0; i < DRAIN_HELD_RECVS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p->b, CTX(i),
						 p->bbuf.buf + 64 * i, 64,
						 p->bbuf.mr));
	ibpost_test_fill(p->abuf.buf, 64, 3);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(9), p->abuf.buf,
						  64, p->abuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, CTX(9));
	KUNIT_ASSERT_TRUE_MSG(test, ibpost_test_cb_held(c),
			      "b's receive callback did not run");

	ibpost_test_param_set(test, "drain_timeout_ms", 300, 10000);
	t = jiffies;
	KUNIT_EXPECT_EQ(test, -ETIMEDOUT,
			ibpost_qp_modify(p->b, &qa, IB_QP_STATE));
	KUNIT_EXPECT_GE_MSG(test, jiffies - t, msecs_to_jiffies(300),
			    "the drain gave up before drain_timeout_ms");
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, ibpost_test_qp_tracked_state(p->b));
	/* Nothing reported while the provider may still return them. */
	KUNIT_EXPECT_EQ(test, (u32)DRAIN_HELD_RECVS - 1,
			ibpost_test_in_use(p->b, false));
	KUNIT_EXPECT_EQ(test, 1, ibpost_test_cb_calls(c));

	ibpost_test_cb_release(c);
	ibpost_qp_destroy(p->b);
	p->b = NULL;
	KUNIT_EXPECT_EQ(test, DRAIN_HELD_RECVS, ibpost_test_cb_calls(c));
	KUNIT_EXPECT_EQ(test, 1, c->success);
	KUNIT_EXPECT_EQ(test, DRAIN_HELD_RECVS - 1, c->flushed);
	KUNIT_EXPECT_EQ(test, 0, c->dups);
	for (i = 0; i < DRAIN_HELD_RECVS; i++)
		KUNIT_EXPECT_TRUE(test, test_bit(i, c->seen));
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->bbuf.buf, p->abuf.buf, 64));
}

static struct kunit_case ibpost_drain_cases[] = {
	KUNIT_CASE_PARAM(ibpost_drain_succeeded_unsignaled_stay_silent,
			 drain_case_gen_params),
	KUNIT_CASE(ibpost_drain_ud_marker_completes),
	KUNIT_CASE(ibpost_drain_reset_after_err_returns_each_once),
	KUNIT_CASE(ibpost_drain_twice_on_one_qp),
	KUNIT_CASE(ibpost_drain_reset_softirq_callbacks_bh_off),
	KUNIT_CASE(ibpost_drain_destroy_from_reclaim_work),
	KUNIT_CASE(ibpost_drain_timeout_leaves_err),
	{}
};

static struct kunit_suite ibpost_drain_suite = {
	.name = "ibpost_drain",
	.test_cases = ibpost_drain_cases,
};

kunit_test_suites(&ibpost_drain_suite);
