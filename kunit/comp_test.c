// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_comp (drivers/ring.c, drivers/comp.c): completions
 * through callbacks and through ibpost_get_*_comp() (with a DIRECT CQ
 * too), busy polling, timeouts, completion order and what each
 * completion reports, the per-queue choice between callback and queued
 * completions, unsignaled WRs reclaimed by a later completion (an error
 * included), queued completions kept over RESET, destroy with WRs
 * outstanding returning every context, a completion given twice ignored,
 * the rules once the device is gone, a DIRECT QP's flushes delivered only
 * by its consumer's polling, and every work completion naming its QP.
 */
#include <linux/module.h>
#include <linux/bitmap.h>
#include <linux/bottom_half.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

#define CB_WRS 24

static const enum ib_poll_context cb_ctxs[] = {
	IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE, IB_POLL_UNBOUND_WORKQUEUE,
};

static void cb_ctx_desc(const enum ib_poll_context *p, char *desc)
{
	static const char * const n[] = { "softirq", "workqueue", "unbound_wq" };

	strscpy(desc, n[*p], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cb_ctx, cb_ctxs, cb_ctx_desc);

static void ibpost_comp_callbacks_return_each_context(struct kunit *test)
{
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct ibpost_test_cb *c;
	int i;

	c = ibpost_test_cb_attr(test, &attr);
	attr.max_send_wr = 32;
	attr.max_recv_wr = 32;
	attr.poll_ctx = *(const enum ib_poll_context *)test->param_value;
	p = ibpost_test_pair(test, &attr);

	for (i = 0; i < CB_WRS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p->b, CTX(CB_WRS + i),
						 (u8 *)p->bbuf.buf + 64 * i,
						 64, p->bbuf.mr));
	/* Every send signaled: 24 send and 24 receive callbacks. */
	for (i = 0; i < CB_WRS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_send(p->a, CTX(i),
						 (u8 *)p->abuf.buf + 64 * i, 64,
						 p->abuf.mr, IB_SEND_SIGNALED));
	KUNIT_EXPECT_EQ(test, 2 * CB_WRS, ibpost_test_cb_wait(c, 2 * CB_WRS));
	KUNIT_EXPECT_EQ(test, 2 * CB_WRS, c->success);
	KUNIT_EXPECT_EQ(test, 0, c->dups);
	KUNIT_EXPECT_TRUE(test, bitmap_full(c->seen, 2 * CB_WRS));
	/* With callbacks, the polling API is not available. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_get_send_comp(p->a, NULL, 0));
}

static void ibpost_comp_direct_cq_polled_by_get_comp(struct kunit *test)
{
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct ibpost_comp comp;
	unsigned long t0;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = IB_POLL_DIRECT;
	p = ibpost_test_pair(test, &attr);
	/* Timeout: nothing posted, 0 after about the time asked. */
	t0 = jiffies;
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_send_comp(p->a, &comp, HZ / 4));
	KUNIT_EXPECT_GE(test, jiffies - t0, (unsigned long)HZ / 4);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1), p->bbuf.buf,
						  64, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(2), p->abuf.buf,
						  64, p->abuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(2), comp.context);
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
	KUNIT_EXPECT_EQ(test, 64U, comp.byte_len);
}

/*
 * Spin on ibpost_poll(@qp, @budget) until @c counted @want callbacks, as a
 * latency consumer does; each call stays within @budget.
 */
static void comp_spin(struct kunit *test, struct ibpost_qp *qp, int budget,
		      struct ibpost_test_cb *c, int want)
{
	unsigned long deadline = jiffies + 10 * HZ;
	int n;

	while (ibpost_test_cb_calls(c) < want && time_before(jiffies, deadline)) {
		n = ibpost_poll(qp, budget);
		KUNIT_EXPECT_GE(test, n, 0);
		KUNIT_EXPECT_LE(test, n, budget);
		if (n < 0)
			break;
		if (!n) {
			/* rxe moves data in bottom halves or work items. */
			local_bh_disable();
			local_bh_enable();
			usleep_range(100, 200);
		}
	}
	KUNIT_EXPECT_EQ(test, want, ibpost_test_cb_calls(c));
}

static void ibpost_comp_poll_busy_polls_direct(struct kunit *test)
{
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct ibpost_qp *other;
	struct ibpost_test_cb *c;
	int i;

	c = ibpost_test_cb_attr(test, &attr);
	attr.poll_ctx = IB_POLL_DIRECT;
	p = ibpost_test_pair(test, &attr);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_poll(p->a, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_poll(p->a, -1));
	KUNIT_EXPECT_EQ(test, 0, ibpost_poll(p->a, 4));

	/* Two SENDs each way: a's CQs get two send and two receive entries. */
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, CTX(10 + i),
							  p->abuf.buf + 2048 + 64 * i,
							  64, p->abuf.mr));
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(20 + i),
							  p->bbuf.buf + 64 * i,
							  64, p->bbuf.mr));
	}
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(i),
							  p->abuf.buf, 32,
							  p->abuf.mr,
							  IB_SEND_SIGNALED));
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->b, CTX(30 + i),
							  p->bbuf.buf + 1024,
							  32, p->bbuf.mr,
							  IB_SEND_SIGNALED));
	}
	/* b's four, one entry per call. */
	comp_spin(test, p->b, 1, c, 4);
	/* By now a's entries are on its CQs; nothing polled them. */
	for (i = 0; i < 25; i++) {
		local_bh_disable();
		local_bh_enable();
		msleep(20);
	}
	KUNIT_EXPECT_EQ(test, 4, ibpost_test_cb_calls(c));
	/* Budget 3 is shared: both sends first, then one receive. */
	KUNIT_EXPECT_EQ(test, 3, ibpost_poll(p->a, 3));
	KUNIT_EXPECT_EQ(test, 7, ibpost_test_cb_calls(c));
	KUNIT_EXPECT_TRUE(test, test_bit(0, c->seen) && test_bit(1, c->seen));
	KUNIT_EXPECT_EQ(test, 1, (int)(test_bit(10, c->seen) +
				       test_bit(11, c->seen)));
	KUNIT_EXPECT_EQ(test, 1, ibpost_poll(p->a, 8));
	KUNIT_EXPECT_EQ(test, 0, ibpost_poll(p->a, 8));
	KUNIT_EXPECT_EQ(test, 8, ibpost_test_cb_calls(c));
	KUNIT_EXPECT_EQ(test, 8, c->success);
	KUNIT_EXPECT_EQ(test, 0, c->dups);

	/* Held elsewhere (a teardown, another poller): 0 at once, no wait. */
	ibpost_test_qp_lock(p->a);
	KUNIT_EXPECT_EQ(test, 0, ibpost_poll(p->a, 8));
	ibpost_test_qp_unlock(p->a);

	/* Only a DIRECT QP is polled by its consumer. */
	attr.poll_ctx = IB_POLL_SOFTIRQ;
	attr.send_done = NULL;
	attr.recv_done = NULL;
	other = ibpost_qp_create(p->dev, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(other));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_poll(other, 4));
	ibpost_qp_destroy(other);
}

static void ibpost_comp_destroy_flushes_outstanding_sends(struct kunit *test)
{
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct ibpost_test_cb *c;
	int i;

	c = ibpost_test_cb_attr(test, &attr);
	p = ibpost_test_pair(test, &attr);
	ibpost_test_need_ib(test, p->dev,
			    "the queue is held by an RNR wait, and iWARP has no RNR (a SEND without a receive is fatal)");

	/*
	 * No receive at b: the SEND waits on RNR (retried forever) and the
	 * WRITEs queue behind it, signaled or not. Destroy must hand back
	 * every one of them flushed, unsignaled ones included.
	 */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(0), p->abuf.buf,
						  8, p->abuf.mr,
						  IB_SEND_SIGNALED));
	for (i = 1; i < 10; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_write(p->a, CTX(i), p->abuf.buf, 8,
						  p->abuf.mr,
						  i % 3 ? 0 : IB_SEND_SIGNALED,
						  ibpost_mr_remote_addr(p->bw.mr),
						  ibpost_mr_rkey(p->bw.mr)));
	msleep(50);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_cb_calls(c));
	ibpost_qp_destroy(p->a);
	p->a = NULL;
	KUNIT_EXPECT_EQ(test, 10, ibpost_test_cb_calls(c));
	KUNIT_EXPECT_EQ(test, 10, c->flushed);
	KUNIT_EXPECT_EQ(test, 0, c->dups);
	KUNIT_EXPECT_EQ(test, 10, (int)bitmap_weight(c->seen, 2 * CB_WRS));
}

/* A signaled 8-byte WRITE from a to b's remote buffer at @off. */
static int comp_write(struct ibpost_test_pair *p, void *ctx, u32 off,
		      u32 rkey_xor, int flags)
{
	return ibpost_post_write(p->a, ctx, (u8 *)p->abuf.buf + off, 8,
				 p->abuf.mr, flags,
				 ibpost_mr_remote_addr(p->bw.mr) + off,
				 ibpost_mr_rkey(p->bw.mr) ^ rkey_xor);
}

/*
 * A timeout of 0 only checks; a longer one returns 0 once it has passed;
 * a completion already queued is taken by a check alone, once.
 */
static void ibpost_comp_get_comp_timeout_and_check(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_comp comp;
	unsigned long t0;
	int i, ret = 0;

	KUNIT_EXPECT_EQ(test, 0, ibpost_get_send_comp(p->a, &comp, 0));
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(p->b, &comp, 0));
	t0 = jiffies;
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(p->b, &comp, HZ / 4));
	KUNIT_EXPECT_GE(test, jiffies - t0, (unsigned long)HZ / 4);

	KUNIT_ASSERT_EQ(test, 0, comp_write(p, CTX(7), 0, 0, IB_SEND_SIGNALED));
	for (i = 0; i < 500; i++) {
		ret = ibpost_get_send_comp(p->a, &comp, 0);
		if (ret)
			break;
		msleep(20);
	}
	KUNIT_ASSERT_EQ(test, 1, ret);
	KUNIT_EXPECT_PTR_EQ(test, CTX(7), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_send_comp(p->a, &comp, 0));
}

/*
 * Each queue chooses on its own: a callback where one was given, queued
 * completions (and -EINVAL from ibpost_get_*_comp()) where not.
 */
static void ibpost_comp_callback_chosen_per_queue(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_qp_attr aattr, battr;
	/* Before the QPs: released after their destroy. */
	struct ibpost_test_buf *ab = ibpost_test_buf_new(test, dev, 4096);
	struct ibpost_test_buf *bb = ibpost_test_buf_new(test, dev, 4096);
	struct ibpost_qp *a, *b;
	struct ibpost_comp comp;
	struct ibpost_test_cb *c;

	c = ibpost_test_cb_attr(test, &aattr);
	battr = aattr;
	aattr.recv_done = NULL;		/* a: send callback, queued receives */
	battr.send_done = NULL;		/* b: queued sends, receive callback */
	ibpost_test_qp_pair(test, dev, &aattr, &battr, &a, &b);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_get_send_comp(a, &comp, 0));
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(a, &comp, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_get_recv_comp(b, &comp, 0));
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_send_comp(b, &comp, 0));

	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(a, CTX(1), ab->buf, 64,
						  ab->mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(b, CTX(2), bb->buf, 64,
						  bb->mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(a, CTX(3), ab->buf + 1024,
						  16, ab->mr,
						  IB_SEND_SIGNALED));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(b, CTX(4), bb->buf + 1024,
						  16, bb->mr,
						  IB_SEND_SIGNALED));
	ibpost_test_recv_comp(test, a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	ibpost_test_send_comp(test, b, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(4), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, 2, ibpost_test_cb_wait(c, 2));
	KUNIT_EXPECT_EQ(test, 2, c->success);
	KUNIT_EXPECT_TRUE(test, test_bit(2, c->seen) && test_bit(3, c->seen));
	KUNIT_EXPECT_FALSE(test, test_bit(1, c->seen) || test_bit(4, c->seen));
}

#define ORDER_N 6

/*
 * Contexts come back one per call in completion order, each with what
 * its work completion said: opcode, status, the received length, no
 * immediate data where none was sent.
 */
static void ibpost_comp_get_comp_order_and_fields(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u8 *src = p->abuf.buf, *dst = p->bbuf.buf;
	struct ibpost_comp comp;
	int i;

	ibpost_test_fill(src, ORDER_N * 256, 0x0d);
	for (i = 0; i < ORDER_N; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(100 + i),
							  dst + 256 * i, 256,
							  p->bbuf.mr));
	for (i = 0; i < ORDER_N; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(1 + i),
							  src + 256 * i,
							  10 + 7 * i,
							  p->abuf.mr,
							  IB_SEND_SIGNALED));
	KUNIT_ASSERT_EQ(test, 0, comp_write(p, CTX(50), 4096, 0,
					    IB_SEND_SIGNALED));
	for (i = 0; i < ORDER_N; i++) {
		ibpost_test_send_comp(test, p->a, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(1 + i), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		KUNIT_EXPECT_EQ(test, IB_WC_SEND, comp.opcode);
	}
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(50), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_RDMA_WRITE, comp.opcode);
	ibpost_test_no_send_comp(test, p->a);
	for (i = 0; i < ORDER_N; i++) {
		ibpost_test_recv_comp(test, p->b, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(100 + i), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		KUNIT_EXPECT_EQ(test, IB_WC_RECV, comp.opcode);
		KUNIT_EXPECT_EQ(test, 10U + 7 * i, comp.byte_len);
		KUNIT_EXPECT_EQ(test, 0U, comp.imm_data);
		KUNIT_EXPECT_FALSE(test, comp.wc_flags &
					 (IB_WC_WITH_IMM | IB_WC_WITH_INVALIDATE));
		KUNIT_EXPECT_EQ(test, 0U, comp.invalidate_rkey);
		KUNIT_EXPECT_EQ(test, 0, memcmp(src + 256 * i, dst + 256 * i,
						10 + 7 * i));
	}
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(p->b, &comp, 0));
}

/*
 * Send queues complete in order: the unsignaled WRITEs before a signaled
 * one that fails had succeeded; they are reclaimed as such, never shown,
 * and only the failed WR's context comes back.
 */
static void ibpost_comp_unsignaled_before_error_reclaimed(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_test_queue tq;
	struct ibpost_comp comp;
	int i;

	ibpost_test_need_ib(test, p->dev,
			    "a WRITE refused by its peer ends the connection with no completion naming it");
	ibpost_test_fill(p->abuf.buf, 64, 0x5a);
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, 0, comp_write(p, CTX(1 + i), 8 * i, 0, 0));
	/* The peer refuses this one: a bad rkey. */
	KUNIT_ASSERT_EQ(test, 0, comp_write(p, CTX(4), 24, 0x80,
					    IB_SEND_SIGNALED));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(4), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_REM_ACCESS_ERR, comp.status);
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, 4ULL, tq.posted);
	KUNIT_EXPECT_EQ(test, 3ULL, tq.completed);
	KUNIT_EXPECT_EQ(test, 1ULL, tq.failed);
	KUNIT_EXPECT_EQ(test, 0ULL, tq.flushed);
	KUNIT_EXPECT_EQ(test, 0U, tq.head - tq.tail);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->abuf.buf, p->bw.buf, 24));
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, ibpost_test_qp_state(test, p->a));
}

#define COMMON_WRS 8

/*
 * The completion handlers' common path (a signaled success of a plain
 * slot on a queue with a callback) and what it leaves to the full one:
 * COMMON_WRS SENDs from the queue's hit and one with a second MR (a use
 * counted outside the hit) complete there, send and receive, every
 * byte where it belongs, every MR's count back to 0; the WR a signal is
 * forced on completes on the full path and is never shown; so do the
 * completions of a queue that parks them for ibpost_get_*_comp().
 */
static void ibpost_comp_common_path(struct kunit *test)
{
	size_t len = COMMON_WRS * 64;
	struct ibpost_test_queue sq0, sq, rq0, rq;
	struct ibpost_test_pair *p, *q;
	struct ibpost_test_buf *m2;
	struct ibpost_qp_attr attr;
	struct ibpost_test_cb *c;
	u32 i, n = 2 * (COMMON_WRS + 1);
	struct ibpost_sge sgl[2];
	u8 *canary;

	c = ibpost_test_cb_attr(test, &attr);
	attr.max_send_wr = 32;
	attr.max_recv_wr = 32;
	attr.signal_interval = 4;
	p = ibpost_test_pair(test, &attr);
	m2 = ibpost_test_buf_new(test, p->dev, IBPOST_TEST_BUF_LEN);
	ibpost_test_fill(p->abuf.buf, len + 64, 0xc0111);
	ibpost_test_fill(m2->buf, 64, 0x2e2);
	sgl[0] = (struct ibpost_sge){ p->abuf.buf + len, 32, p->abuf.mr };
	sgl[1] = (struct ibpost_sge){ m2->buf, 32, m2->mr };
	memset(p->bbuf.buf, 0xee, len + 64);
	canary = ibpost_test_canary(test, p->bbuf.buf + len + 64, 64, 0xca1b);
	ibpost_test_queue_get(p->a, true, &sq0);
	ibpost_test_queue_get(p->b, false, &rq0);
	for (i = 0; i <= COMMON_WRS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p->b, CTX(COMMON_WRS + 1 + i),
						 (u8 *)p->bbuf.buf + 64 * i,
						 64, p->bbuf.mr));
	for (i = 0; i < COMMON_WRS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_send(p->a, CTX(i),
						 (u8 *)p->abuf.buf + 64 * i, 64,
						 p->abuf.mr, IB_SEND_SIGNALED));
	/* Two MRs in one WR: one at least is a use of its own. */
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_sendv(p->a, CTX(COMMON_WRS), sgl, 2,
					  IB_SEND_SIGNALED));
	KUNIT_EXPECT_EQ(test, n, ibpost_test_cb_wait(c, n));
	KUNIT_EXPECT_EQ(test, n, c->success);
	KUNIT_EXPECT_EQ(test, 0, c->dups);
	ibpost_test_queue_get(p->a, true, &sq);
	ibpost_test_queue_get(p->b, false, &rq);
	KUNIT_EXPECT_EQ(test, COMMON_WRS + 1, sq.comp_common - sq0.comp_common);
	KUNIT_EXPECT_EQ(test, COMMON_WRS + 1, rq.comp_common - rq0.comp_common);
	KUNIT_EXPECT_EQ(test, 0U, sq.head - sq.tail);
	KUNIT_EXPECT_EQ(test, 0U, rq.head - rq.tail);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->abuf.buf, p->bbuf.buf, len));
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->abuf.buf + len, p->bbuf.buf + len,
					32));
	KUNIT_EXPECT_EQ(test, 0, memcmp(m2->buf, p->bbuf.buf + len + 32, 32));
	ibpost_test_expect_canary(test, p->bbuf.buf + len + 64, canary, 64);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(p->abuf.mr));
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(p->bbuf.mr));
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(m2->mr));

	/* Four unsignaled WRITEs: ibpost signals the fourth, unseen. */
	sq0 = sq;
	memset(p->bw.buf, 0xee, 32);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, 0, comp_write(p, CTX(100 + i), 8 * i,
						    0, 0));
	for (i = 0; i < 500 && ibpost_test_in_use(p->a, true); i++)
		usleep_range(1000, 2000);
	/* A context shown by mistake would be delivered after the unlock. */
	msleep(50);
	ibpost_test_queue_get(p->a, true, &sq);
	KUNIT_EXPECT_EQ(test, 0U, sq.head - sq.tail);
	KUNIT_EXPECT_EQ(test, sq0.completed + 4, sq.completed);
	KUNIT_EXPECT_EQ(test, sq0.forced_signals + 1, sq.forced_signals);
	KUNIT_EXPECT_EQ(test, sq0.comp_common, sq.comp_common);
	KUNIT_EXPECT_EQ(test, n, ibpost_test_cb_calls(c));
	KUNIT_EXPECT_EQ(test, 0,
			ibpost_test_landed(p->bw.buf, p->abuf.buf, 32));

	/* A queue that parks its completions: the full path. */
	q = ibpost_test_pair(test, NULL);
	ibpost_test_queue_get(q->a, true, &sq0);
	ibpost_test_fill(q->abuf.buf, 64, 0xc0112);
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_write(q->a, CTX(200), q->abuf.buf, 64,
					  q->abuf.mr, IB_SEND_SIGNALED,
					  ibpost_mr_remote_addr(q->bw.mr),
					  ibpost_mr_rkey(q->bw.mr)));
	ibpost_test_send_ok(test, q->a, CTX(200));
	ibpost_test_queue_get(q->a, true, &sq);
	KUNIT_EXPECT_EQ(test, sq0.comp_common, sq.comp_common);
	KUNIT_EXPECT_EQ(test, sq0.completed + 1, sq.completed);
	KUNIT_EXPECT_EQ(test, 0,
			ibpost_test_landed(q->bw.buf, q->abuf.buf, 64));
}

/* White-box: wait until @q of @qp counted @want WRs that succeeded. */
static u64 comp_wait_completed(struct ibpost_qp *qp, bool send, u64 want)
{
	struct ibpost_test_queue tq;
	int i;

	for (i = 0; i < 500; i++) {
		ibpost_test_queue_get(qp, send, &tq);
		if (tq.completed >= want)
			break;
		msleep(20);
	}
	return tq.completed;
}

/*
 * A completion queued for ibpost_get_send_comp() and not fetched yet
 * stays over a RESET (which returns only the WRs still outstanding, as
 * flushes), with its own status.
 */
static void ibpost_comp_queued_survives_reset(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };
	struct ibpost_comp comp;

	KUNIT_ASSERT_EQ(test, 0, comp_write(p, CTX(1), 0, 0, IB_SEND_SIGNALED));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, CTX(2), p->abuf.buf,
						  64, p->abuf.mr));
	/* White-box: the WRITE has completed (its completion is queued). */
	KUNIT_ASSERT_EQ(test, 1ULL, comp_wait_completed(p->a, true, 1));
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa, IB_QP_STATE));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_send_comp(p->a, &comp, 0));
	/* The receive was outstanding: flushed. */
	ibpost_test_recv_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(2), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(p->a, &comp, 0));
	KUNIT_EXPECT_EQ(test, 0U, ibpost_test_in_use(p->a, true));
	KUNIT_EXPECT_EQ(test, 0U, ibpost_test_in_use(p->a, false));
}

/*
 * A provider that completes a WR again (or after ibpost took its slot
 * back) gets nothing: no context comes back twice, no parked completion
 * is queued twice, and no unsignaled WR still with the provider is
 * reclaimed by a slot outside the ring's posted part.
 */
static void ibpost_comp_stale_completion_ignored(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_test_queue tq;
	struct ibpost_comp comp;
	u32 first, rpos;

	ibpost_test_queue_get(p->a, true, &tq);
	first = tq.head;
	KUNIT_ASSERT_EQ(test, 0, comp_write(p, CTX(1), 0, 0, IB_SEND_SIGNALED));
	/* Its completion is parked, not fetched: replayed, it stays one. */
	KUNIT_ASSERT_EQ(test, 1ULL, comp_wait_completed(p->a, true, 1));
	ibpost_test_replay_comp(p->a, true, first, IB_WC_SUCCESS);
	ibpost_test_send_ok(test, p->a, CTX(1));
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_send_comp(p->a, &comp, 0));

	/* Two unsignaled WRs behind the freed slot; it is completed again. */
	KUNIT_ASSERT_EQ(test, 0, comp_write(p, CTX(2), 8, 0, 0));
	KUNIT_ASSERT_EQ(test, 0, comp_write(p, CTX(3), 16, 0, 0));
	ibpost_test_replay_comp(p->a, true, first, IB_WC_SUCCESS);
	ibpost_test_replay_comp(p->a, true, first, IB_WC_REM_ACCESS_ERR);
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, 1ULL, tq.completed);
	KUNIT_EXPECT_EQ(test, 0ULL, tq.failed);
	KUNIT_EXPECT_EQ(test, 2U, tq.head - tq.tail);
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, ibpost_test_qp_state(test, p->a));

	/* The ring goes on: a signaled WR reclaims the two. */
	KUNIT_ASSERT_EQ(test, 0, comp_write(p, CTX(4), 24, 0, IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, CTX(4));
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, 4ULL, tq.completed);
	KUNIT_EXPECT_EQ(test, 0U, tq.head - tq.tail);

	/* A receive completed and fetched, then completed again. */
	ibpost_test_queue_get(p->b, false, &tq);
	rpos = tq.head;
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(5), p->bbuf.buf,
						  64, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(6), p->abuf.buf,
						  64, p->abuf.mr, 0));
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(5), comp.context);
	ibpost_test_replay_comp(p->b, false, rpos, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(p->b, &comp, HZ / 10));
	ibpost_test_queue_get(p->b, false, &tq);
	KUNIT_EXPECT_EQ(test, 1ULL, tq.completed);
	KUNIT_EXPECT_EQ(test, 0U, tq.head - tq.tail);
}

/*
 * A flush of a later send WR comes before the flush of an unsignaled WR
 * posted earlier, as siw delivers them when a WR is posted while it is
 * still flushing its send queue after a connection loss. On IB and RoCE,
 * whose send queues flush in order, that flush says the earlier WR
 * succeeded: its slot is reclaimed, and a late flush of it is ignored.
 * On iWARP it says nothing: the earlier WR's own flush returns its
 * context. Replayed on a DIRECT pair, whose real completions wait in the
 * CQ unpolled meanwhile.
 */
static void ibpost_comp_flush_overtakes_unsignaled(struct kunit *test)
{
	struct ibpost_test_queue tq;
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct ibpost_comp comp;
	bool iwarp;
	u32 first;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = IB_POLL_DIRECT;
	p = ibpost_test_pair(test, &attr);
	iwarp = ibpost_test_iwarp(p->dev);
	ibpost_test_queue_get(p->a, true, &tq);
	first = tq.head;
	KUNIT_ASSERT_EQ(test, 0, comp_write(p, CTX(1), 0, 0, 0));
	KUNIT_ASSERT_EQ(test, 0, comp_write(p, CTX(2), 8, 0, IB_SEND_SIGNALED));
	ibpost_test_replay_comp(p->a, true, first + 1, IB_WC_WR_FLUSH_ERR);
	ibpost_test_replay_comp(p->a, true, first, IB_WC_WR_FLUSH_ERR);

	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(2), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
	if (iwarp) {
		ibpost_test_send_comp(test, p->a, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
	}
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, iwarp ? 0ULL : 1ULL, tq.completed);
	KUNIT_EXPECT_EQ(test, iwarp ? 2ULL : 1ULL, tq.flushed);
	KUNIT_EXPECT_EQ(test, 0U, tq.head - tq.tail);
}

#define COMP_DEV	"rxe2"
#define COMP_NETDEV	"d2"

/*
 * The device goes away under a DIRECT pair with receives posted: polling
 * says -ENODEV, the receives come back flushed through
 * ibpost_get_recv_comp() after the removal, once each, and posts are
 * refused with -ENODEV.
 */
static void ibpost_comp_after_removal_enodev(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev2(test, COMP_DEV, COMP_NETDEV);
	struct ibpost_test_buf *buf = ibpost_test_buf_new(test, dev, 4096);
	DECLARE_BITMAP(seen, 4) = {};
	struct ibpost_qp_attr attr;
	struct ibpost_comp comp;
	struct ibpost_qp *a, *b;
	struct ibpost_dev *gone;
	int i;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = IB_POLL_DIRECT;
	ibpost_test_qp_pair(test, dev, &attr, &attr, &a, &b);
	for (i = 1; i < 4; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(b, CTX(i),
							  buf->buf + 256 * i,
							  256, buf->mr));
	KUNIT_EXPECT_EQ(test, 0, ibpost_poll(b, 4));
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh("rdma link delete " COMP_DEV));
	gone = ibpost_dev_get(COMP_DEV);
	if (!IS_ERR(gone))
		ibpost_dev_put(gone);
	KUNIT_ASSERT_TRUE(test, IS_ERR(gone));

	KUNIT_EXPECT_EQ(test, -ENODEV, ibpost_poll(a, 4));
	KUNIT_EXPECT_EQ(test, -ENODEV, ibpost_poll(b, 4));
	for (i = 1; i < 4; i++)
		ibpost_test_take_flushed(test, b, false, seen, 4);
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(b, &comp, 0));
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_send_comp(a, &comp, 0));
	KUNIT_EXPECT_EQ(test, -ENODEV, ibpost_post_recv(b, CTX(9), buf->buf,
							64, buf->mr));
	KUNIT_EXPECT_EQ(test, -ENODEV, ibpost_post_send(a, CTX(9), buf->buf,
							64, buf->mr,
							IB_SEND_SIGNALED));
}

/*
 * A DIRECT QP's callbacks run only from its consumer's own calls, the
 * flushes ibpost makes itself for WRs posted in ERR included. A receive
 * callback that moves its QP to RESET on its first flush, as
 * ibpost_qp_modify() allows a DIRECT callback of its own QP's polling,
 * must run nested in the consumer's ibpost_poll(). Run by a kworker (the
 * flush worker) instead, its RESET would wait for the very work item it
 * runs in, and a poller's RESET for that work item while it waits for
 * the poller's mutex: there the callback only notes where it ran and
 * does not reset, so that the case fails rather than hangs.
 */
struct comp_direct_reset {
	struct task_struct *poller;
	atomic_t calls, first, foreign;
	char foreign_comm[TASK_COMM_LEN];
	int ret;
	struct completion done;
};

static void comp_direct_reset_recv_done(struct ibpost_qp *qp, void *context,
					const struct ib_wc *wc)
{
	struct comp_direct_reset *d = ibpost_qp_priv(qp);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };

	atomic_inc(&d->calls);
	if (wc->status != IB_WC_WR_FLUSH_ERR || atomic_xchg(&d->first, 1))
		return;
	if (current != d->poller) {
		atomic_inc(&d->foreign);
		get_task_comm(d->foreign_comm, current);
	} else {
		d->ret = ibpost_qp_modify(qp, &qa, IB_QP_STATE);
	}
	complete(&d->done);
}

static void ibpost_comp_direct_flush_callback_resets(struct kunit *test)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct comp_direct_reset *d;
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	unsigned long deadline;
	int n;

	/* Before the pair: freed after its destroy, whose flushes see it. */
	d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, d);
	d->poller = current;
	d->ret = 1;
	init_completion(&d->done);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = IB_POLL_DIRECT;
	attr.recv_done = comp_direct_reset_recv_done;
	attr.priv = d;
	p = ibpost_test_pair(test, &attr);
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->b, &qa, IB_QP_STATE));
	/* Never given to the provider: ibpost flushes it. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1), p->bbuf.buf,
						  64, p->bbuf.mr));
	/* The consumer's polling loop (Documentation/consumer.rst), 5 s. */
	deadline = jiffies + 5 * HZ;
	while (!completion_done(&d->done) && time_before(jiffies, deadline)) {
		n = ibpost_poll(p->b, 16);
		KUNIT_EXPECT_GE(test, n, 0);
		if (n < 0)
			break;
		if (!n) {
			local_bh_disable();
			local_bh_enable();
			usleep_range(100, 200);
		}
	}
	KUNIT_ASSERT_TRUE_MSG(test, completion_done(&d->done),
			      "the receive did not come back within 5 s");
	KUNIT_EXPECT_EQ_MSG(test, 0, atomic_read(&d->foreign),
			    "the DIRECT callback ran in %s, not in the consumer's ibpost_poll()",
			    d->foreign_comm);
	KUNIT_EXPECT_EQ(test, 0, d->ret);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&d->calls));
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET, ibpost_test_qp_state(test, p->b));
	KUNIT_EXPECT_EQ(test, 0U, ibpost_test_in_use(p->b, false));
}

/*
 * Every work completion a callback sees names its QP (wc->qp is
 * ibpost_qp_ibqp()), the flushes ibpost makes itself included: for the
 * WRs posted in ERR (from its flush worker, or a DIRECT consumer's
 * polling) and for those a RESET returns. The provider's own flushes of
 * the receives it held come with it too.
 */
static const enum ib_poll_context wcqp_ctxs[] = {
	IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE, IB_POLL_DIRECT,
};

static void wcqp_ctx_desc(const enum ib_poll_context *p, char *desc)
{
	strscpy(desc, *p == IB_POLL_DIRECT ? "direct" :
		      *p == IB_POLL_SOFTIRQ ? "softirq" : "workqueue",
		KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(wcqp_ctx, wcqp_ctxs, wcqp_ctx_desc);

#define WCQP_N	8

struct comp_wcqp {
	spinlock_t lock;	/* the callbacks may run in softirq */
	DECLARE_BITMAP(seen, WCQP_N);
	int calls, flushed, dups, wrong;
	const struct ib_qp *bad, *want;
};

static void comp_wcqp_done(struct ibpost_qp *qp, void *context,
			   const struct ib_wc *wc)
{
	struct comp_wcqp *w = ibpost_qp_priv(qp);
	struct ib_qp *ibqp = ibpost_qp_ibqp(qp);
	unsigned long i = (unsigned long)context;

	spin_lock_bh(&w->lock);
	w->calls++;
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		w->flushed++;
	if (i >= WCQP_N || __test_and_set_bit(i, w->seen))
		w->dups++;
	if (wc->qp != ibqp) {
		w->wrong++;
		w->bad = wc->qp;
		w->want = ibqp;
	}
	spin_unlock_bh(&w->lock);
}

static bool comp_wcqp_seen(struct comp_wcqp *w, unsigned long want)
{
	bool all;

	spin_lock_bh(&w->lock);
	all = (w->seen[0] & want) == want;
	spin_unlock_bh(&w->lock);
	return all;
}

/* Wait up to 10 s for the contexts in @want, polling a DIRECT @qp. */
static bool comp_wcqp_wait(struct ibpost_qp *qp, struct comp_wcqp *w,
			   unsigned long want, bool direct)
{
	unsigned long deadline = jiffies + 10 * HZ;

	while (!comp_wcqp_seen(w, want)) {
		if (time_after(jiffies, deadline))
			return false;
		if (direct && ibpost_poll(qp, 16) > 0)
			continue;
		local_bh_disable();
		local_bh_enable();
		usleep_range(200, 400);
	}
	return true;
}

static void ibpost_comp_flush_wc_names_qp(struct kunit *test)
{
	enum ib_poll_context ctx = *(const enum ib_poll_context *)test->param_value;
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	bool direct = ctx == IB_POLL_DIRECT;
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct comp_wcqp *w;
	u8 *buf;
	int ret[2];

	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	spin_lock_init(&w->lock);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = ctx;
	attr.send_done = comp_wcqp_done;
	attr.recv_done = comp_wcqp_done;
	attr.priv = w;
	p = ibpost_test_pair(test, &attr);
	buf = p->abuf.buf;

	/* With the provider: flushed by it at ERR, or by RESET's drain. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, CTX(1), buf, 64,
						  p->abuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, CTX(2), buf + 64, 64,
						  p->abuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa, IB_QP_STATE));
	/* Posted in ERR: flushed by ibpost, outside the post call. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(3), buf + 128, 8,
						  p->abuf.mr,
						  IB_SEND_SIGNALED));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, CTX(4), buf + 192, 64,
						  p->abuf.mr));
	KUNIT_ASSERT_TRUE_MSG(test, comp_wcqp_wait(p->a, w, BIT(3) | BIT(4),
						   direct),
			      "the WRs posted in ERR did not come back within 10 s");
	/*
	 * Posted in ERR and kept from the flush worker (a window a busy
	 * system opens at will; with preemption off, the worker queued on
	 * this CPU cannot run before it is cancelled): RESET returns them.
	 */
	preempt_disable();
	ret[0] = ibpost_post_send(p->a, CTX(5), buf + 256, 8, p->abuf.mr, 0);
	ret[1] = ibpost_post_recv(p->a, CTX(6), buf + 320, 64, p->abuf.mr);
	ibpost_test_qp_cancel_flush(p->a);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, 0, ret[0]);
	KUNIT_EXPECT_EQ(test, 0, ret[1]);
	qa.qp_state = IB_QPS_RESET;
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa, IB_QP_STATE));
	KUNIT_EXPECT_TRUE(test, comp_wcqp_wait(p->a, w, GENMASK(6, 1), false));

	/* Every callback has returned (above): the counts are final. */
	spin_lock_bh(&w->lock);
	spin_unlock_bh(&w->lock);
	KUNIT_EXPECT_EQ(test, 6, w->calls);
	KUNIT_EXPECT_EQ(test, 6, w->flushed);
	KUNIT_EXPECT_EQ(test, 0, w->dups);
	KUNIT_EXPECT_EQ_MSG(test, 0, w->wrong,
			    "a callback's wc->qp was %p, not its QP's %p",
			    w->bad, w->want);
}

/*
 * IBA (10.8.3) moves a UD QP whose send failed to SQE, not ERR: its send
 * queue flushes, its receive queue works on. A send completion with a
 * local protection error, replayed for a send still with the provider
 * (a DIRECT QP's CQ holds its real one), must leave later receives
 * reaching the provider, which fills them; later sends come back
 * flushed; a move to RTS sends again.
 */
static void ibpost_comp_ud_send_error_keeps_receiving(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf sbuf, rbuf;
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RTS };
	struct ibpost_qp_attr attr;
	struct ibpost_test_queue tq;
	struct ibpost_comp comp;
	struct ibpost_qp *x, *y;
	struct ib_ah *ax, *ay;
	u32 xqpn, yqpn, first;

	ibpost_test_need_ud(test, dev);
	ibpost_test_attr(&attr, IB_QPT_UD);
	attr.qkey = 0x5eed;
	y = ibpost_test_qp(test, dev, &attr);
	attr.poll_ctx = IB_POLL_DIRECT;
	x = ibpost_test_qp(test, dev, &attr);
	ax = ibpost_test_loopback_ah(test, x);
	ay = ibpost_test_loopback_ah(test, y);
	xqpn = ibpost_qp_ibqp(x)->qp_num;
	yqpn = ibpost_qp_ibqp(y)->qp_num;
	ibpost_test_buf_init(test, &sbuf, dev, NULL, 256, IBPOST_TEST_MSGS);
	ibpost_test_buf_init(test, &rbuf, dev, NULL, 256 + 40,
			     IBPOST_TEST_MSGS);
	ibpost_test_fill(sbuf.buf, 256, 51);

	/* x's send succeeds on the wire; its completion stays in x's CQ. */
	ibpost_test_queue_get(x, true, &tq);
	first = tq.head;
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(y, CTX(1), rbuf.buf,
						  rbuf.len, rbuf.mr));
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_ud_send(x, CTX(2), sbuf.buf, 64, sbuf.mr,
					    IB_SEND_SIGNALED, ax, yqpn,
					    0x5eed));
	ibpost_test_recv_ok(test, y, CTX(1), 64 + 40);
	/* ... and is reported failed first. */
	ibpost_test_replay_comp(x, true, first, IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, IB_QPS_SQE, ibpost_test_qp_tracked_state(x));

	/* A receive still reaches the provider, which fills it. */
	ibpost_test_fill(rbuf.buf, rbuf.len, 52);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(x, CTX(3), rbuf.buf,
						  rbuf.len, rbuf.mr));
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_ud_send(y, CTX(4), sbuf.buf, 128, sbuf.mr,
					    IB_SEND_SIGNALED, ay, xqpn,
					    0x5eed));
	ibpost_test_send_ok(test, y, CTX(4));
	ibpost_test_recv_comp(test, x, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(3), comp.context);
	KUNIT_EXPECT_EQ_MSG(test, IB_WC_SUCCESS, comp.status,
			    "a receive after a UD send error was flushed: %s",
			    ib_wc_status_msg(comp.status));
	KUNIT_EXPECT_EQ(test, 128U + 40, comp.byte_len);
	KUNIT_EXPECT_EQ(test, 0, memcmp((u8 *)rbuf.buf + 40, sbuf.buf, 128));
	/* A polling UD responder has what it needs to reply. */
	KUNIT_EXPECT_EQ(test, yqpn, comp.src_qp);
	KUNIT_EXPECT_EQ(test, 0, (int)comp.pkey_index);
	KUNIT_EXPECT_EQ(test, 0, (int)comp.sl);
	KUNIT_EXPECT_FALSE(test, comp.wc_flags & IB_WC_WITH_IMM);
	if (rdma_protocol_roce(ibpost_dev_ibdev(dev),
			       rdma_start_port(ibpost_dev_ibdev(dev)))) {
		KUNIT_EXPECT_TRUE(test, comp.wc_flags & IB_WC_GRH);
		KUNIT_EXPECT_TRUE(test, comp.wc_flags &
					IB_WC_WITH_NETWORK_HDR_TYPE);
		KUNIT_EXPECT_NE(test, (int)RDMA_NETWORK_IB,
				(int)comp.network_hdr_type);
	}

	/* A send is accepted and flushed, after the failed one. */
	KUNIT_EXPECT_EQ(test, 0,
			ibpost_post_ud_send(x, CTX(5), sbuf.buf, 64, sbuf.mr,
					    IB_SEND_SIGNALED, ax, yqpn,
					    0x5eed));
	ibpost_test_send_comp(test, x, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(2), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_LOC_PROT_ERR, comp.status);
	ibpost_test_send_comp(test, x, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(5), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);

	/* Back to RTS: x sends again. */
	KUNIT_EXPECT_EQ(test, 0, ibpost_qp_modify(x, &qa, IB_QP_STATE));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(y, CTX(6), rbuf.buf,
						  rbuf.len, rbuf.mr));
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_ud_send(x, CTX(7), sbuf.buf, 32, sbuf.mr,
					    IB_SEND_SIGNALED, ax, yqpn,
					    0x5eed));
	ibpost_test_send_ok(test, x, CTX(7));
	ibpost_test_recv_ok(test, y, CTX(6), 32 + 40);
	KUNIT_EXPECT_EQ(test, 0U, ibpost_test_in_use(x, true));
	KUNIT_EXPECT_EQ(test, 0U, ibpost_test_in_use(x, false));

	/* Destroy the QPs before their buffers' registrations. */
	ibpost_test_qp_destroy(test, x);
	ibpost_test_qp_destroy(test, y);
	ibpost_test_buf_fini(&rbuf);
	ibpost_test_buf_fini(&sbuf);
}

/*
 * A callback asks for what would wait for itself. Run by its QP's CQ (a
 * receive that got data: a bottom half for SOFTIRQ, the CQ's work item
 * for WORKQUEUE, the consumer's ibpost_poll() for DIRECT) or by ibpost's
 * flush worker (a receive posted in ERR), its RESET of its own QP gets
 * -EWOULDBLOCK (DIRECT: nested in the poll, not tried here) and its
 * destroy is refused (the test hook counts it in place of the
 * WARN_ONCE): the QP is left as it was and, reached through its CQ, still
 * receives. The callback notes where it ran, so that each row proves its
 * path. The DIRECT row's callback also runs a bottom half on its own
 * stack (a tasklet at its local_bh_enable(), as a SOFTIRQ CQ's poll runs
 * on the task that polls or resets the QP): that bottom half's move of
 * the QP to ERR gets -EWOULDBLOCK, though its task is the QP's poller.
 */
struct comp_own_row {
	enum ib_poll_context ctx;
	bool flush;		/* the receive is posted in ERR */
};

static const struct comp_own_row comp_own_rows[] = {
	{ IB_POLL_SOFTIRQ, false }, { IB_POLL_SOFTIRQ, true },
	{ IB_POLL_WORKQUEUE, false }, { IB_POLL_WORKQUEUE, true },
	{ IB_POLL_DIRECT, false },
};

static void comp_own_desc(const struct comp_own_row *r, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_%s",
		 r->ctx == IB_POLL_DIRECT ? "direct" :
		 r->ctx == IB_POLL_SOFTIRQ ? "softirq" : "workqueue",
		 r->flush ? "flush_worker" : "cq");
}

KUNIT_ARRAY_PARAM(comp_own, comp_own_rows, comp_own_desc);

struct comp_own {
	struct ibpost_qp *qp;		/* the hook counts refusals of this one */
	struct task_struct *poller;
	bool direct;
	atomic_t first, calls, refused;
	int reset_ret;
	bool bh, worker, polled;	/* where the first callback ran */
	enum ib_wc_status status;
	struct completion done;
	struct tasklet_struct bh_task;	/* DIRECT: a bottom half's modify */
	int bh_ret;
	bool bh_ran, bh_on_poller;
	bool softirq;			/* a SOFTIRQ QP: its callback's ERR */
	int err_ret;
	void *reg_buf;			/* WORKQUEUE: a registration of it */
	struct ibpost_mr *reg;
	bool reg_try;
};

/* A bottom half on the poller's stack (the DIRECT row) moves it to ERR. */
static void comp_own_bh(struct tasklet_struct *t)
{
	struct comp_own *o = from_tasklet(o, t, bh_task);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };

	o->bh_on_poller = !in_task() && current == o->poller;
	o->bh_ret = ibpost_qp_modify(READ_ONCE(o->qp), &qa, IB_QP_STATE);
	WRITE_ONCE(o->bh_ran, true);
}

/*
 * Run comp_own_bh() on this task's stack: raised with bottom halves off,
 * it runs at their local_bh_enable(), unless ksoftirqd took it (then
 * again, up to 20 times).
 */
static void comp_own_run_bh(struct comp_own *o)
{
	int i, j;

	for (i = 0; i < 20 && !o->bh_on_poller; i++) {
		WRITE_ONCE(o->bh_ran, false);
		local_bh_disable();
		tasklet_schedule(&o->bh_task);
		local_bh_enable();
		for (j = 0; j < 5000 && !READ_ONCE(o->bh_ran); j++)
			usleep_range(100, 200);
	}
}

static int comp_own_hook(enum ibpost_hook point, void *obj, void *data)
{
	struct comp_own *o = data;

	if (point != IBPOST_HOOK_DESTROY_REFUSED || obj != READ_ONCE(o->qp))
		return 0;
	atomic_inc(&o->refused);
	return 1;
}

static void comp_own_recv_done(struct ibpost_qp *qp, void *context,
			       const struct ib_wc *wc)
{
	struct comp_own *o = ibpost_qp_priv(qp);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };

	atomic_inc(&o->calls);
	if (context != CTX(7) || atomic_xchg(&o->first, 1))
		return;
	o->status = wc->status;
	o->bh = !in_task();
	o->worker = in_task() && current_work();
	/* A bottom half may run on the poller's own stack (siw). */
	o->polled = in_task() && current == o->poller;
	/*
	 * A registration waits for this QP's own completion: refused. (A
	 * SOFTIRQ QP's callbacks may not sleep at all, in the flush worker
	 * too: its bottom halves are off there.)
	 */
	if (o->reg_try)
		o->reg = ibpost_reg_write(qp, o->reg_buf, 64);
	/*
	 * A SOFTIRQ QP's callback may not sleep, from its CQ or from the
	 * flush worker (bottom halves off there): no state change at all.
	 */
	if (o->softirq) {
		struct ib_qp_attr qe = { .qp_state = IB_QPS_ERR };

		o->err_ret = ibpost_qp_modify(qp, &qe, IB_QP_STATE);
	}
	if (!o->direct)
		o->reset_ret = ibpost_qp_modify(qp, &qa, IB_QP_STATE);
	else
		comp_own_run_bh(o);
	ibpost_qp_destroy(qp);
	complete(&o->done);
}

/* Wait up to 10 s for @n receive callbacks, polling a DIRECT @qp. */
static bool comp_own_wait(struct ibpost_qp *qp, struct comp_own *o, int n)
{
	unsigned long deadline = jiffies + 10 * HZ;

	while (atomic_read(&o->calls) < n) {
		if (time_after(jiffies, deadline))
			return false;
		if (o->direct && ibpost_poll(qp, 16) > 0)
			continue;
		local_bh_disable();
		local_bh_enable();
		usleep_range(200, 400);
	}
	return true;
}

static void comp_own_send(struct kunit *test, struct ibpost_test_pair *p,
			  void *ctx, u8 seed)
{
	u8 *src = p->abuf.buf, *dst = p->bbuf.buf;

	memset(dst, 0x5a, 96);
	ibpost_test_fill(src, 64, seed);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, ctx, dst, 64,
						  p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, NULL, src, 64,
						  p->abuf.mr, 0));
}

/* The message landed whole in b's buffer, and nothing past it. */
static void comp_own_expect_landed(struct kunit *test,
				   struct ibpost_test_pair *p)
{
	u8 *dst = p->bbuf.buf;
	int i;

	KUNIT_EXPECT_EQ(test, 0, memcmp(dst, p->abuf.buf, 64));
	for (i = 64; i < 96; i++)
		KUNIT_EXPECT_EQ(test, dst[i], 0x5a);
}

static void ibpost_comp_callback_own_qp_refused(struct kunit *test)
{
	const struct comp_own_row *row = test->param_value;
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct comp_own *o;
	bool done, worker, again = true;

	/* Before the pair: its teardown's flushes see it. */
	o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o);
	o->poller = current;
	o->direct = row->ctx == IB_POLL_DIRECT;
	o->reg_try = row->ctx == IB_POLL_WORKQUEUE;
	o->softirq = row->ctx == IB_POLL_SOFTIRQ;
	o->err_ret = 1;
	o->reset_ret = 1;
	o->bh_ret = 1;
	o->reg_buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o->reg_buf);
	init_completion(&o->done);
	tasklet_setup(&o->bh_task, comp_own_bh);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = row->ctx;
	attr.recv_done = comp_own_recv_done;
	attr.priv = o;
	p = ibpost_test_pair(test, &attr);
	WRITE_ONCE(o->qp, p->b);
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(comp_own_hook, o));
	if (row->flush) {
		KUNIT_EXPECT_EQ(test, 0, ibpost_qp_modify(p->b, &qa,
							  IB_QP_STATE));
		KUNIT_EXPECT_EQ(test, 0, ibpost_post_recv(p->b, CTX(7),
							  p->bbuf.buf, 64,
							  p->bbuf.mr));
	} else {
		comp_own_send(test, p, CTX(7), 0x31);
	}
	done = comp_own_wait(p->b, o, 1) &&
	       wait_for_completion_timeout(&o->done, 5 * HZ);
	/* A second message reaches the QP the callback could not destroy. */
	if (done && !row->flush) {
		comp_own_expect_landed(test, p);
		comp_own_send(test, p, CTX(8), 0x47);
		again = comp_own_wait(p->b, o, 2);
		comp_own_expect_landed(test, p);
	}
	ibpost_test_set_hook(NULL, NULL);
	tasklet_kill(&o->bh_task);
	KUNIT_ASSERT_TRUE_MSG(test, done,
			      "the callback did not return within 10 s");
	KUNIT_EXPECT_TRUE(test, again);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&o->refused));
	if (row->ctx != IB_POLL_DIRECT)
		KUNIT_EXPECT_EQ(test, -EWOULDBLOCK, o->reset_ret);
	/* DIRECT: a bottom half ran on the poller's stack, and was refused. */
	KUNIT_EXPECT_EQ(test, o->bh_on_poller, row->ctx == IB_POLL_DIRECT);
	if (row->ctx == IB_POLL_DIRECT)
		KUNIT_EXPECT_EQ(test, -EWOULDBLOCK, o->bh_ret);
	KUNIT_EXPECT_EQ(test, o->status, row->flush ? IB_WC_WR_FLUSH_ERR :
						       IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, row->flush ? IB_QPS_ERR : IB_QPS_RTS,
			ibpost_test_qp_state(test, p->b));
	/* Each row ran where it says. */
	KUNIT_EXPECT_EQ(test, o->bh, row->ctx == IB_POLL_SOFTIRQ && !row->flush);
	worker = row->ctx == IB_POLL_WORKQUEUE || row->flush;
	KUNIT_EXPECT_EQ(test, o->worker, worker);
	KUNIT_EXPECT_EQ(test, o->polled, row->ctx == IB_POLL_DIRECT);
	if (o->softirq)
		KUNIT_EXPECT_EQ(test, -EWOULDBLOCK, o->err_ret);
	/* A worker's registration through its own QP: refused. */
	if (o->reg_try)
		KUNIT_EXPECT_EQ(test, -EWOULDBLOCK, PTR_ERR_OR_ZERO(o->reg));
	if (!IS_ERR_OR_NULL(o->reg))
		KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(o->reg));
}

/*
 * A QP's asynchronous events, reported as a provider does (the QP's event
 * handler called with bottom halves off). A fatal error moves the QP to
 * ERR: its receives come back flushed, and a later one too; the
 * consumer's event callback hears of each event once, in process
 * context, after that move; COMM_EST on the connected QP reaches it too
 * (on a QP of rdma_cm, rdma_notify() passes it on).
 */
struct comp_event {
	unsigned long seen;		/* IB_EVENT_* bits told */
	int calls;
	bool atomic;			/* a call outside process context */
	enum ib_qp_state state;		/* ibpost's view at QP_FATAL */
	struct completion told;
};

static void comp_event_cb(struct ibpost_qp *qp, enum ib_event_type event)
{
	struct comp_event *ce = ibpost_qp_priv(qp);

	ce->calls++;
	ce->atomic |= !in_task() || softirq_count() || irqs_disabled();
	if (event == IB_EVENT_QP_FATAL)
		ce->state = ibpost_test_qp_tracked_state(qp);
	set_bit(event, &ce->seen);
	complete(&ce->told);
}

/* Report @event on @qp as its provider would. */
static void comp_event_report(struct ibpost_qp *qp, enum ib_event_type event)
{
	struct ib_qp *ibqp = ibpost_qp_ibqp(qp);
	struct ib_event ev = {
		.device = ibqp->device,
		.element.qp = ibqp,
		.event = event,
	};

	local_bh_disable();
	ibqp->event_handler(&ev, ibqp->qp_context);
	local_bh_enable();
}

static void ibpost_comp_qp_event_fatal_flushes(struct kunit *test)
{
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct comp_event *ce;
	struct ibpost_comp comp;
	u8 *dst;
	int i;

	ce = kunit_kzalloc(test, sizeof(*ce), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ce);
	init_completion(&ce->told);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.event = comp_event_cb;
	attr.priv = ce;
	p = ibpost_test_pair(test, &attr);
	dst = p->bbuf.buf;
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(20 + i),
							  dst + 64 * i, 64,
							  p->bbuf.mr));
	comp_event_report(p->b, IB_EVENT_COMM_EST);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&ce->told, 5 * HZ));
	comp_event_report(p->b, IB_EVENT_QP_FATAL);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&ce->told, 5 * HZ));
	KUNIT_EXPECT_EQ(test, ce->seen, BIT(IB_EVENT_COMM_EST) |
					BIT(IB_EVENT_QP_FATAL));
	KUNIT_EXPECT_EQ(test, ce->calls, 2);
	KUNIT_EXPECT_FALSE(test, ce->atomic);
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, ce->state);
	for (i = 0; i < 3; i++) {
		ibpost_test_recv_comp(test, p->b, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(20 + i), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
	}
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_recv(p->b, CTX(23), dst, 64,
						  p->bbuf.mr));
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(23), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
	/*
	 * The other side heard of nothing on IB and RoCE; on iWARP the
	 * move to ERR ends the connection (the peer goes to ERR too).
	 */
	if (!ibpost_test_iwarp(p->dev))
		KUNIT_EXPECT_EQ(test, IB_QPS_RTS,
				ibpost_test_qp_state(test, p->a));
}

/*
 * No event callback after ibpost_qp_destroy() returns. The callback of a
 * first event blocks; a second event is reported meanwhile (its work
 * queued again); a thread destroys the QP. The destroy waits for the
 * running callback (the case asserts it had not returned when the
 * callback was let go) and the second event is never told.
 */
struct comp_event_gate {
	struct ibpost_qp *qp;
	int calls;
	bool destroyed, late;
	bool destroy_back_at_release;
	struct completion entered, go, destroy_done;
};

static void comp_event_gate_cb(struct ibpost_qp *qp, enum ib_event_type e)
{
	struct comp_event_gate *g = ibpost_qp_priv(qp);

	g->late |= READ_ONCE(g->destroyed);
	if (g->calls++)
		return;
	complete(&g->entered);
	wait_for_completion_timeout(&g->go, 10 * HZ);
}

static int comp_event_destroyer(void *data)
{
	struct comp_event_gate *g = data;

	ibpost_qp_destroy(g->qp);
	WRITE_ONCE(g->destroyed, true);
	complete(&g->destroy_done);
	return 0;
}

static void ibpost_comp_qp_event_none_after_destroy(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct comp_event_gate *g;
	struct ibpost_qp_attr attr;
	struct task_struct *t;

	g = kunit_kzalloc(test, sizeof(*g), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, g);
	init_completion(&g->entered);
	init_completion(&g->go);
	init_completion(&g->destroy_done);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.event = comp_event_gate_cb;
	attr.priv = g;
	g->qp = ibpost_qp_create(dev, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(g->qp));
	comp_event_report(g->qp, IB_EVENT_SQ_DRAINED);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&g->entered,
							    5 * HZ));
	comp_event_report(g->qp, IB_EVENT_PATH_MIG);
	t = kthread_run(comp_event_destroyer, g, "ibpost-evdestroy");
	if (IS_ERR(t)) {
		complete(&g->go);
		ibpost_qp_destroy(g->qp);
		KUNIT_FAIL(test, "no destroy thread: %ld", PTR_ERR(t));
		return;
	}
	/* Time for the destroy to reach the running event work. */
	msleep(1000);
	g->destroy_back_at_release = completion_done(&g->destroy_done);
	complete(&g->go);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&g->destroy_done,
							    10 * HZ));
	msleep(200);
	KUNIT_EXPECT_FALSE_MSG(test, g->destroy_back_at_release,
			       "the destroy returned while an event callback ran");
	KUNIT_EXPECT_EQ_MSG(test, g->calls, 1,
			    "an event pending at the destroy was told");
	KUNIT_EXPECT_FALSE(test, g->late);
}

/*
 * A DIRECT callback that changes another QP's state, nested two deep:
 * B1's receive callback, run by the consumer's ibpost_poll() under B1's
 * mutex, moves B2 to RESET; that RESET runs B2's flushed receive
 * callback under B2's mutex, which moves B3 to RESET. Every QP's mutex
 * is of one lockdep class, taken a subclass deeper at each level
 * (ibpost_qp_lock()): a nesting lockdep took for the task taking a lock
 * it held would be a report in the kernel log, which fails the run.
 */
struct comp_nest {
	struct ibpost_qp *next;
	struct task_struct *poller;
	atomic_t calls, foreign;
	int ret;
	struct completion done;
};

static void comp_nest_recv_done(struct ibpost_qp *qp, void *context,
				const struct ib_wc *wc)
{
	struct comp_nest *n = ibpost_qp_priv(qp);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };

	if (wc->status != IB_WC_WR_FLUSH_ERR || atomic_inc_return(&n->calls) > 1)
		return;
	if (current != n->poller)
		atomic_inc(&n->foreign);
	else if (n->next)
		n->ret = ibpost_qp_modify(n->next, &qa, IB_QP_STATE);
	complete(&n->done);
}

static void ibpost_comp_direct_callback_resets_other_qps(struct kunit *test)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ibpost_test_pair *p[3];
	struct ibpost_qp_attr attr;
	struct comp_nest *n[3];
	unsigned long deadline;
	int i, r;

	/* Before the pairs: freed after their destroy, whose flushes see them. */
	for (i = 0; i < 3; i++) {
		n[i] = kunit_kzalloc(test, sizeof(*n[i]), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, n[i]);
		n[i]->poller = current;
		n[i]->ret = 1;
		init_completion(&n[i]->done);
	}
	for (i = 0; i < 3; i++) {
		ibpost_test_attr(&attr, IB_QPT_RC);
		attr.poll_ctx = IB_POLL_DIRECT;
		attr.recv_done = comp_nest_recv_done;
		attr.priv = n[i];
		p[i] = ibpost_test_pair(test, &attr);
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_qp_modify(p[i]->b, &qa, IB_QP_STATE));
		/* Never given to the provider: ibpost flushes it. */
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p[i]->b, CTX(i + 1),
						 p[i]->bbuf.buf, 64,
						 p[i]->bbuf.mr));
	}
	n[0]->next = p[1]->b;
	n[1]->next = p[2]->b;
	/* The consumer polls B1 only (Documentation/consumer.rst), 5 s. */
	deadline = jiffies + 5 * HZ;
	while (!completion_done(&n[0]->done) && time_before(jiffies, deadline)) {
		r = ibpost_poll(p[0]->b, 16);
		KUNIT_EXPECT_GE(test, r, 0);
		if (r < 0)
			break;
		if (!r)
			usleep_range(100, 200);
	}
	KUNIT_ASSERT_TRUE_MSG(test, completion_done(&n[0]->done),
			      "B1's receive did not come back within 5 s");
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_TRUE_MSG(test, completion_done(&n[i]->done),
				      "B%d's callback did not run", i + 1);
		KUNIT_EXPECT_EQ_MSG(test, 0, atomic_read(&n[i]->foreign),
				    "B%d's callback ran outside the poll",
				    i + 1);
		KUNIT_EXPECT_EQ(test, 1, atomic_read(&n[i]->calls));
	}
	KUNIT_EXPECT_EQ(test, 0, n[0]->ret);
	KUNIT_EXPECT_EQ(test, 0, n[1]->ret);
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, ibpost_test_qp_state(test, p[0]->b));
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET,
			ibpost_test_qp_state(test, p[1]->b));
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET,
			ibpost_test_qp_state(test, p[2]->b));
}

static struct kunit_case ibpost_comp_cases[] = {
	KUNIT_CASE_PARAM(ibpost_comp_callbacks_return_each_context,
			 cb_ctx_gen_params),
	KUNIT_CASE(ibpost_comp_direct_cq_polled_by_get_comp),
	KUNIT_CASE(ibpost_comp_poll_busy_polls_direct),
	KUNIT_CASE(ibpost_comp_destroy_flushes_outstanding_sends),
	KUNIT_CASE(ibpost_comp_get_comp_timeout_and_check),
	KUNIT_CASE(ibpost_comp_callback_chosen_per_queue),
	KUNIT_CASE(ibpost_comp_get_comp_order_and_fields),
	KUNIT_CASE(ibpost_comp_qp_event_fatal_flushes),
	KUNIT_CASE(ibpost_comp_qp_event_none_after_destroy),
	KUNIT_CASE(ibpost_comp_unsignaled_before_error_reclaimed),
	KUNIT_CASE(ibpost_comp_common_path),
	KUNIT_CASE(ibpost_comp_queued_survives_reset),
	KUNIT_CASE(ibpost_comp_stale_completion_ignored),
	KUNIT_CASE(ibpost_comp_flush_overtakes_unsignaled),
	KUNIT_CASE(ibpost_comp_after_removal_enodev),
	KUNIT_CASE(ibpost_comp_direct_flush_callback_resets),
	KUNIT_CASE(ibpost_comp_direct_callback_resets_other_qps),
	KUNIT_CASE_PARAM(ibpost_comp_flush_wc_names_qp, wcqp_ctx_gen_params),
	KUNIT_CASE_PARAM(ibpost_comp_callback_own_qp_refused,
			 comp_own_gen_params),
	KUNIT_CASE(ibpost_comp_ud_send_error_keeps_receiving),
	{}
};

static struct kunit_suite ibpost_comp_suite = {
	.name = "ibpost_comp",
	.test_cases = ibpost_comp_cases,
};

kunit_test_suites(&ibpost_comp_suite);
