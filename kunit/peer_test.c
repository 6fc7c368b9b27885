// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_peer: faults on the other side. The remote QP destroyed or
 * moved to ERR mid-stream (retry-exceeded, then flush), and RNR with a
 * bounded retry count: every context comes back, nothing hangs.
 */
#include <linux/module.h>
#include <linux/delay.h>
#include "ibpost_test.h"

#define PEER_WRS 12

/* Post PEER_WRS signaled WRITEs on a; take every completion back. */
static void peer_stream_then(struct kunit *test, struct ibpost_test_pair *p,
			     void (*fault)(struct kunit *test,
					   struct ibpost_test_pair *p))
{
	DECLARE_BITMAP(seen, PEER_WRS) = {};
	struct ibpost_comp comp;
	int i, ret, ok = 0, failed = 0;
	bool dup;

	for (i = 0; i < PEER_WRS; i++) {
		ret = ibpost_post_write(p->a, CTX(i), p->abuf.buf, 4096,
					p->abuf.mr, IB_SEND_SIGNALED,
					ibpost_mr_remote_addr(p->bw.mr),
					ibpost_mr_rkey(p->bw.mr));
		KUNIT_ASSERT_EQ(test, 0, ret);
		if (i == PEER_WRS / 3)
			fault(test, p);
	}
	/* Retry-exceeded takes (timeout 14, retry 7) a few seconds. */
	for (i = 0; i < PEER_WRS; i++) {
		KUNIT_ASSERT_EQ(test, 1, ibpost_get_send_comp(p->a, &comp,
							      30 * HZ));
		dup = __test_and_set_bit((unsigned long)comp.context, seen);
		KUNIT_EXPECT_FALSE(test, dup);
		if (comp.status == IB_WC_SUCCESS)
			ok++;
		else
			failed++;
	}
	ibpost_test_no_send_comp(test, p->a);
	KUNIT_EXPECT_TRUE(test, bitmap_full(seen, PEER_WRS));
	KUNIT_EXPECT_GT(test, failed, 0);
	kunit_info(test, "%d succeeded before the fault, %d failed or flushed",
		   ok, failed);
}

static void peer_destroy_b(struct kunit *test, struct ibpost_test_pair *p)
{
	ibpost_qp_destroy(p->b);
	p->b = NULL;
}

static void peer_b_to_err(struct kunit *test, struct ibpost_test_pair *p)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };

	KUNIT_EXPECT_EQ(test, 0, ibpost_qp_modify(p->b, &qa, IB_QP_STATE));
}

static void ibpost_peer_destroyed_mid_stream(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_comp comp;

	peer_stream_then(test, p, peer_destroy_b);
	/* The QP is in ERR now: a new WR is flushed, not lost. */
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_send(p->a, CTX(99), p->abuf.buf,
						  8, p->abuf.mr, 0));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(99), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
}

static void ibpost_peer_err_mid_stream(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);

	peer_stream_then(test, p, peer_b_to_err);
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, ibpost_test_qp_state(test, p->a));
}

/* Connect @qp to @peer by hand, with a bounded RNR retry count. */
static void ibpost_peer_rnr_bounded_retry_fails(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *b;
	struct ibpost_qp_attr attr;
	struct ibpost_qp *a;
	struct ibpost_comp comp;

	ibpost_test_need_ib(test, dev,
			    "no RNR retry on iWARP (a SEND without a receive is fatal at once)");
	b = ibpost_test_buf_new(test, dev, 64);
	ibpost_test_attr(&attr, IB_QPT_RC);
	a = ibpost_test_rnr_pair(test, dev, &attr, 1, 2, NULL);
	KUNIT_ASSERT_EQ(test, IB_QPS_RTS, ibpost_test_qp_state(test, a));

	/* No receive at z: two RNR retries, then the SEND fails. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(a, CTX(7), b->buf, 16, b->mr,
						  0));
	KUNIT_ASSERT_EQ(test, 1, ibpost_get_send_comp(a, &comp, 30 * HZ));
	KUNIT_EXPECT_PTR_EQ(test, CTX(7), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_RNR_RETRY_EXC_ERR, comp.status);
	ibpost_test_no_send_comp(test, a);
}

static struct kunit_case ibpost_peer_cases[] = {
	KUNIT_CASE(ibpost_peer_destroyed_mid_stream),
	KUNIT_CASE(ibpost_peer_err_mid_stream),
	KUNIT_CASE(ibpost_peer_rnr_bounded_retry_fails),
	{}
};

static struct kunit_suite ibpost_peer_suite = {
	.name = "ibpost_peer",
	.test_cases = ibpost_peer_cases,
};

kunit_test_suites(&ibpost_peer_suite);
