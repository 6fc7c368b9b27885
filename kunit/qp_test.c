// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_qp: QP creation with granted capacities, loopback connect,
 * destroy returning every posted context, receive chains racing a RESET,
 * and a move from a state racing a failed WR, on the live device.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/bitmap.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

static void ibpost_qp_create_rc_reports_granted_caps(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_qp_attr attr, got;
	struct ib_qp_init_attr init;
	u32 sq_asked, sq_held, rq_held;
	struct ib_qp_attr qa;
	struct ibpost_qp *qp;
	struct ib_qp *ibqp;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_inline_data = 64;
	qp = ibpost_test_qp(test, dev, &attr);
	ibpost_qp_get_attr(qp, &got);
	ibqp = ibpost_qp_ibqp(qp);

	KUNIT_ASSERT_EQ(test, 0, ib_query_qp(ibqp, &qa, IB_QP_CAP, &init));
	/*
	 * Usable depth = the provider's grant, as far as the queue's CQ
	 * holds it (at least what ibpost asked it for), minus the drain
	 * spare; on iWARP each slot holds two provider WRs (a READ's sink,
	 * sink.c), and ibpost asks for two per slot.
	 */
	sq_asked = attr.max_send_wr + 1;
	if (ibpost_test_iwarp(dev))
		sq_asked = min_t(u32, 2 * attr.max_send_wr + 1,
				 max_t(int, ibqp->device->attrs.max_qp_wr, 3));
	sq_held = min(init.cap.max_send_wr,
		      max_t(u32, ibqp->send_cq->cqe, sq_asked));
	rq_held = min(init.cap.max_recv_wr,
		      max_t(u32, ibqp->recv_cq->cqe, attr.max_recv_wr + 1));
	KUNIT_EXPECT_EQ(test, got.max_send_wr, ibpost_test_iwarp(dev) ?
			(sq_held - 1) / 2 : sq_held - 1);
	KUNIT_EXPECT_EQ(test, got.max_recv_wr, rq_held - 1);
	/* Never more signaled WRs and a marker than the CQ holds. */
	KUNIT_EXPECT_LE(test, got.max_send_wr + 1,
			max_t(u32, ibqp->send_cq->cqe, sq_asked));
	KUNIT_EXPECT_LE(test, got.max_recv_wr + 1,
			max_t(u32, ibqp->recv_cq->cqe, attr.max_recv_wr + 1));
	KUNIT_EXPECT_GE(test, got.max_send_wr, attr.max_send_wr);
	KUNIT_EXPECT_GE(test, got.max_recv_wr, attr.max_recv_wr);
	KUNIT_EXPECT_EQ(test, got.max_send_sge, init.cap.max_send_sge);
	KUNIT_EXPECT_GE(test, got.max_send_sge, attr.max_send_sge);
	KUNIT_EXPECT_EQ(test, got.max_inline_data, init.cap.max_inline_data);
	KUNIT_EXPECT_GE(test, got.max_inline_data, attr.max_inline_data);
	KUNIT_EXPECT_NE(test, got.signal_interval, 0);
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET, ibpost_test_qp_state(test, qp));
	KUNIT_EXPECT_EQ(test, IB_QPT_RC, ibpost_qp_ibqp(qp)->qp_type);
}

static void ibpost_qp_create_ud_is_rts_with_qkey(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ib_qp_init_attr init;
	struct ibpost_qp_attr attr;
	struct ib_qp_attr qa;
	struct ibpost_qp *qp;

	ibpost_test_need_ud(test, dev);
	ibpost_test_attr(&attr, IB_QPT_UD);
	attr.qkey = 0x1234abcd;
	qp = ibpost_test_qp(test, dev, &attr);
	KUNIT_ASSERT_EQ(test, 0, ib_query_qp(ibpost_qp_ibqp(qp), &qa,
					     IB_QP_STATE | IB_QP_QKEY, &init));
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, qa.qp_state);
	KUNIT_EXPECT_EQ(test, 0x1234abcdU, qa.qkey);
	KUNIT_EXPECT_EQ(test, IB_QPT_UD, ibpost_qp_ibqp(qp)->qp_type);
}

static void ibpost_qp_create_keeps_priv(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.priv = test;
	qp = ibpost_test_qp(test, dev, &attr);
	KUNIT_EXPECT_PTR_EQ(test, (void *)test, ibpost_qp_priv(qp));
}

static void ibpost_qp_create_rejects_bad_attr(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_qp_attr attr;

	ibpost_test_attr(&attr, IB_QPT_UC);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_qp_create(dev, &attr)));
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_wr = 0;
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_qp_create(dev, &attr)));
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = IB_POLL_DIRECT + 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_qp_create(dev, &attr)));
	/* A slot counts a WR's MRs in a byte. */
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_sge = 256;
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_qp_create(dev, &attr)));
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_recv_sge = 256;
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_qp_create(dev, &attr)));
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_qp_create(dev, NULL)));
	/* A completion vector the device does not have. */
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.comp_vector = ibpost_dev_num_comp_vectors(dev);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_qp_create(dev, &attr)));
	attr.comp_vector = -2;
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_qp_create(dev, &attr)));
}

#define QP_VEC_QPS	4

/* Both CQs of @qp are on @vec, and its attributes say so. */
static void qp_expect_vector(struct kunit *test, struct ibpost_qp *qp,
			     int vec)
{
	struct ibpost_qp_attr got;

	KUNIT_EXPECT_EQ(test, vec, (int)ibpost_qp_ibqp(qp)->send_cq->comp_vector);
	KUNIT_EXPECT_EQ(test, vec, (int)ibpost_qp_ibqp(qp)->recv_cq->comp_vector);
	ibpost_qp_get_attr(qp, &got);
	KUNIT_EXPECT_EQ(test, vec, got.comp_vector);
}

/*
 * A QP's CQs take the completion vector asked for, the last one of the
 * device included; IBPOST_COMP_VECTOR_ANY takes the vector with the
 * fewest QPs, the first of those on a tie, which the case follows with
 * its own count (the suites run one at a time and destroy their QPs, so
 * the device holds only this case's).
 */
static void ibpost_qp_create_on_comp_vector(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	int n = ibpost_dev_num_comp_vectors(dev), i, v, want;
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp;
	int *count;

	KUNIT_ASSERT_GE(test, n, 1);
	count = kunit_kcalloc(test, n, sizeof(*count), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, count);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.comp_vector = n - 1;
	qp_expect_vector(test, ibpost_test_qp(test, dev, &attr), n - 1);
	count[n - 1]++;
	if (n < 2)
		ibpost_test_skip(test, "the device has one completion vector");
	attr.comp_vector = IBPOST_COMP_VECTOR_ANY;
	for (i = 0; i < QP_VEC_QPS + n; i++) {
		for (want = 0, v = 1; v < n; v++)
			if (count[v] < count[want])
				want = v;
		qp = ibpost_test_qp(test, dev, &attr);
		v = ibpost_qp_ibqp(qp)->send_cq->comp_vector;
		KUNIT_EXPECT_EQ_MSG(test, want, v, "QP %d of the least loaded",
				    i);
		qp_expect_vector(test, qp, v);
		count[want]++;
	}
}

static const enum ib_poll_context qp_shared_ctxs[] = {
	IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE,
};

static void qp_shared_ctx_desc(const enum ib_poll_context *p, char *desc)
{
	strscpy(desc, *p == IB_POLL_SOFTIRQ ? "softirq" : "workqueue",
		KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(qp_shared_ctx, qp_shared_ctxs, qp_shared_ctx_desc);

#define QP_SHARED_WRS	16

/*
 * Two pairs on the same vector take their CQs from ib_core's pool and
 * share them (asserted). One pair's destroy and RESET, run while the
 * other pair's WRs are in flight (asserted), flush only its own
 * contexts, each once; the other pair's come back each once, with the
 * data, and it keeps working after its neighbour left. IB_POLL_DIRECT
 * cannot share; an iWARP device refuses shared CQs (-EOPNOTSUPP).
 */
static void ibpost_qp_shared_cq_neighbours(struct kunit *test)
{
	enum ib_poll_context ctx =
		*(const enum ib_poll_context *)test->param_value;
	struct ibpost_qp_attr at1, at2;
	struct ibpost_test_pair *p1, *p2;
	struct ibpost_test_cb *c1, *c2;
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };
	struct ib_cq *cq;
	u32 in_flight;
	int i;

	c1 = ibpost_test_cb_attr(test, &at1);
	c2 = ibpost_test_cb_attr(test, &at2);
	at1.poll_ctx = ctx;
	at1.shared_cq = true;
	if (ibpost_test_iwarp(ibpost_test_dev(test))) {
		/* Refused at creation: see the kernel-doc of shared_cq. */
		KUNIT_EXPECT_EQ(test, -EOPNOTSUPP,
				PTR_ERR(ibpost_qp_create(ibpost_test_dev(test),
							 &at1)));
		return;
	}
	at1.max_send_wr = 2 * QP_SHARED_WRS;
	at1.max_recv_wr = 2 * QP_SHARED_WRS;
	at2.max_send_wr = at1.max_send_wr;
	at2.max_recv_wr = at1.max_recv_wr;
	at2.poll_ctx = ctx;
	at2.shared_cq = true;
	p1 = ibpost_test_pair(test, &at1);
	p2 = ibpost_test_pair(test, &at2);
	cq = ibpost_qp_ibqp(p1->a)->send_cq;
	KUNIT_ASSERT_TRUE(test, cq->shared);
	KUNIT_ASSERT_PTR_EQ_MSG(test, cq, ibpost_qp_ibqp(p2->a)->send_cq,
				"the two pairs do not share their send CQ");
	KUNIT_EXPECT_PTR_EQ(test, ibpost_qp_ibqp(p1->b)->recv_cq,
			    ibpost_qp_ibqp(p2->b)->recv_cq);

	/* The neighbour: four sends landed, twelve receives left. */
	for (i = 0; i < QP_SHARED_WRS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p2->b, CTX(QP_SHARED_WRS + i),
						 (u8 *)p2->bbuf.buf + 64 * i,
						 64, p2->bbuf.mr));
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_send(p2->a, CTX(i),
						 (u8 *)p2->abuf.buf + 64 * i,
						 64, p2->abuf.mr,
						 IB_SEND_SIGNALED));
	KUNIT_ASSERT_EQ(test, 8, ibpost_test_cb_wait(c2, 8));

	ibpost_test_fill(p1->abuf.buf, QP_SHARED_WRS * 64, 0x5ca);
	ibpost_test_fill(p1->bbuf.buf, QP_SHARED_WRS * 64, 0xbad);
	for (i = 0; i < QP_SHARED_WRS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p1->b, CTX(QP_SHARED_WRS + i),
						 (u8 *)p1->bbuf.buf + 64 * i,
						 64, p1->bbuf.mr));
	for (i = 0; i < QP_SHARED_WRS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_send(p1->a, CTX(i),
						 (u8 *)p1->abuf.buf + 64 * i,
						 64, p1->abuf.mr,
						 IB_SEND_SIGNALED));
	in_flight = ibpost_test_in_use(p1->a, true) +
		    ibpost_test_in_use(p1->b, false);
	ibpost_qp_destroy(p2->b);
	p2->b = NULL;
	KUNIT_EXPECT_EQ(test, 0, ibpost_qp_modify(p2->a, &reset,
						  IB_QP_STATE));
	KUNIT_EXPECT_GT_MSG(test, in_flight, 0U,
			    "the neighbour left with nothing in flight");

	KUNIT_EXPECT_EQ(test, 8 + QP_SHARED_WRS - 4, ibpost_test_cb_calls(c2));
	KUNIT_EXPECT_EQ(test, QP_SHARED_WRS - 4, c2->flushed);
	KUNIT_EXPECT_EQ(test, 0, c2->dups);
	KUNIT_EXPECT_EQ(test, 2 * QP_SHARED_WRS,
			ibpost_test_cb_wait(c1, 2 * QP_SHARED_WRS));
	KUNIT_EXPECT_EQ(test, 2 * QP_SHARED_WRS, c1->success);
	KUNIT_EXPECT_EQ(test, 0, c1->dups);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p1->abuf.buf, p1->bbuf.buf,
					QP_SHARED_WRS * 64));

	/* Alone on the CQs now: a send and its receive, once each. */
	bitmap_zero(c1->seen, IBPOST_TEST_CB_N);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p1->b, CTX(1),
						  p1->bbuf.buf, 64,
						  p1->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p1->a, CTX(0),
						  p1->abuf.buf, 64,
						  p1->abuf.mr,
						  IB_SEND_SIGNALED));
	KUNIT_EXPECT_EQ(test, 2 * QP_SHARED_WRS + 2,
			ibpost_test_cb_wait(c1, 2 * QP_SHARED_WRS + 2));
	KUNIT_EXPECT_EQ(test, 0, c1->dups);

	at2.poll_ctx = IB_POLL_DIRECT;
	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(ibpost_qp_create(p1->dev, &at2)));
}

static void ibpost_qp_connect_loopback_reaches_rts(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ib_qp_init_attr init;
	struct ibpost_qp_attr attr;
	struct ibpost_qp *a, *b;
	struct ib_qp_attr qa;

	ibpost_test_attr(&attr, IB_QPT_RC);
	a = ibpost_test_qp(test, dev, &attr);
	b = ibpost_test_qp(test, dev, &attr);
	if (ibpost_test_iwarp(dev)) {
		/* Refused, not half-connected: both stay in RESET. */
		KUNIT_EXPECT_EQ(test, -EOPNOTSUPP,
				ibpost_qp_connect_loopback(a, b));
		KUNIT_EXPECT_EQ(test, IB_QPS_RESET,
				ibpost_test_qp_state(test, a));
		KUNIT_EXPECT_EQ(test, IB_QPS_RESET,
				ibpost_test_qp_state(test, b));
		ibpost_test_skip(test, "%s",
				 "iWARP: QPs connect through rdma_cm only (loopback refused with -EOPNOTSUPP)");
	}
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_connect_loopback(a, b));

	KUNIT_ASSERT_EQ(test, 0, ib_query_qp(ibpost_qp_ibqp(a), &qa,
					     IB_QP_STATE | IB_QP_DEST_QPN,
					     &init));
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, qa.qp_state);
	KUNIT_EXPECT_EQ(test, ibpost_qp_ibqp(b)->qp_num, qa.dest_qp_num);
	KUNIT_ASSERT_EQ(test, 0, ib_query_qp(ibpost_qp_ibqp(b), &qa,
					     IB_QP_STATE | IB_QP_DEST_QPN,
					     &init));
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, qa.qp_state);
	KUNIT_EXPECT_EQ(test, ibpost_qp_ibqp(a)->qp_num, qa.dest_qp_num);

	/* Connecting again, or a QP to itself, is refused. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_qp_connect_loopback(a, b));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_qp_connect_loopback(a, a));
}

static void ibpost_qp_connect_loopback_rejects_ud(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_qp_attr attr;
	struct ibpost_qp *a, *b;

	ibpost_test_need_ud(test, dev);
	ibpost_test_attr(&attr, IB_QPT_UD);
	a = ibpost_test_qp(test, dev, &attr);
	b = ibpost_test_qp(test, dev, &attr);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_qp_connect_loopback(a, b));
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, ibpost_test_qp_state(test, a));
}

#define DRAIN_WRS 12

struct ibpost_drain_count {
	DECLARE_BITMAP(seen, DRAIN_WRS);
	int calls, dups, flushed;
};

static void ibpost_test_count_recv(struct ibpost_qp *qp, void *context,
				   const struct ib_wc *wc)
{
	struct ibpost_drain_count *c = ibpost_qp_priv(qp);
	unsigned long i = (unsigned long)context;

	c->calls++;
	if (i >= DRAIN_WRS || test_and_set_bit(i, c->seen))
		c->dups++;
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		c->flushed++;
}

/* Post DRAIN_WRS receives, one chain, on @qp. */
static void ibpost_test_post_recvs(struct kunit *test, struct ibpost_qp *qp)
{
	struct ib_recv_wr wr[DRAIN_WRS] = {};
	const struct ib_recv_wr *bad;
	int i;

	for (i = 0; i < DRAIN_WRS; i++) {
		wr[i].wr_id = i;
		wr[i].next = i + 1 < DRAIN_WRS ? &wr[i + 1] : NULL;
	}
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv_list(qp, wr, &bad));
	KUNIT_EXPECT_NULL(test, bad);
}

static void ibpost_qp_destroy_returns_every_context(struct kunit *test)
{
	enum ib_qp_type type = *(enum ib_qp_type *)test->param_value;
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_drain_count *c;
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp, *peer = NULL;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	if (type == IB_QPT_UD)
		ibpost_test_need_ud(test, dev);
	ibpost_test_attr(&attr, type);
	attr.recv_done = ibpost_test_count_recv;
	attr.priv = c;
	if (type == IB_QPT_RC)
		ibpost_test_qp_pair(test, dev, &attr, &attr, &qp, &peer);
	else
		qp = ibpost_test_qp(test, dev, &attr);
	ibpost_test_post_recvs(test, qp);
	KUNIT_EXPECT_EQ(test, 0, c->calls);

	ibpost_test_qp_destroy(test, qp);
	KUNIT_EXPECT_EQ(test, DRAIN_WRS, c->calls);
	KUNIT_EXPECT_EQ(test, DRAIN_WRS, c->flushed);
	KUNIT_EXPECT_EQ(test, 0, c->dups);
	KUNIT_EXPECT_TRUE(test, bitmap_full(c->seen, DRAIN_WRS));
}

static const enum ib_qp_type ibpost_test_qp_types[] = { IB_QPT_RC, IB_QPT_UD };

static void ibpost_test_qp_type_desc(const enum ib_qp_type *t, char *desc)
{
	strscpy(desc, *t == IB_QPT_RC ? "RC" : "UD", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ibpost_test_qp_type, ibpost_test_qp_types,
		  ibpost_test_qp_type_desc);

static void ibpost_qp_recv_list_in_reset_is_enotconn(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ib_recv_wr wr[2] = { { .wr_id = 1, .next = &wr[1] },
				    { .wr_id = 2 } };
	const struct ib_recv_wr *bad = NULL;
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp;

	ibpost_test_attr(&attr, IB_QPT_RC);
	qp = ibpost_test_qp(test, dev, &attr);
	KUNIT_EXPECT_EQ(test, -ENOTCONN, ibpost_post_recv_list(qp, wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr[0]);
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET, ibpost_test_qp_state(test, qp));
}

/*
 * A QP in RTS with no traffic: UD where the device has it, else (iWARP)
 * one side of a connected RC pair.
 */
static struct ibpost_qp *qp_rts(struct kunit *test, struct ibpost_dev *dev,
				struct ibpost_qp_attr *attr)
{
	struct ibpost_qp *qp, *peer;

	if (!ibpost_test_iwarp(dev))
		return ibpost_test_qp(test, dev, attr);
	attr->qp_type = IB_QPT_RC;
	ibpost_test_qp_pair(test, dev, attr, attr, &qp, &peer);
	return qp;
}

static void ibpost_qp_recv_list_bad_sge_partial_post(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ib_recv_wr wr[3] = {};
	const struct ib_recv_wr *bad = NULL;
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ibpost_qp_attr attr, got;
	struct ibpost_comp comp;
	struct ibpost_qp *qp;
	int i;

	ibpost_test_attr(&attr, IB_QPT_UD);
	qp = qp_rts(test, dev, &attr);
	ibpost_qp_get_attr(qp, &got);
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 100 + i;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[1].num_sge = got.max_recv_sge + 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_recv_list(qp, wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr[1]);
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, ibpost_test_qp_state(test, qp));

	/* Exactly the WR before bad_wr was queued: ERR flushes it alone. */
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(ibpost_qp_ibqp(qp), &qa,
					      IB_QP_STATE));
	KUNIT_ASSERT_EQ(test, 1, ibpost_get_recv_comp(qp, &comp, 5 * HZ));
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)100UL);
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(qp, &comp, HZ / 2));
}

static void ibpost_qp_recv_list_full_queue_is_enomem(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_qp_attr attr, got;
	const struct ib_recv_wr *bad;
	struct ib_recv_wr *wr;
	struct ibpost_qp *qp;
	u32 i, n;

	ibpost_test_attr(&attr, IB_QPT_UD);
	qp = qp_rts(test, dev, &attr);
	ibpost_qp_get_attr(qp, &got);
	n = got.max_recv_wr + 2;
	wr = kunit_kcalloc(test, n, sizeof(*wr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wr);
	for (i = 0; i < n; i++) {
		wr[i].wr_id = i;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	/* The prefix that fits is posted; bad_wr is the first that did not. */
	KUNIT_EXPECT_EQ(test, -ENOMEM, ibpost_post_recv_list(qp, wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr[got.max_recv_wr]);
	KUNIT_EXPECT_EQ(test, -ENOMEM, ibpost_post_recv_list(qp, bad, &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr[got.max_recv_wr]);
}

/*
 * Receive chains posted while the QP cycles ERR -> RESET -> INIT: a
 * chain decides once, so each returns 0 (INIT, or ERR: flushed by
 * ibpost), -ENOTCONN (RESET) or -ENOMEM (a full ring in INIT, with
 * bad_wr at the first WR not queued), never the provider's refusal of a
 * QP in RESET; every queued WR's context comes back once. The case
 * counts the RESETs that began with a chain in flight and fails at 0.
 */
#define QP_CYCLE_CHAIN	16
#define QP_CYCLE_ROUNDS	60

struct qp_cycle {
	struct ibpost_qp *qp;
	struct ibpost_mr *mr;
	u8 *buf;
	atomic_long_t returned;
	atomic_t seq;		/* odd while a chain is being posted */
	long queued, enotconn, enomem, other;
	int other_ret;
	bool stop;
};

static void qp_cycle_recv_done(struct ibpost_qp *qp, void *ctx,
			       const struct ib_wc *wc)
{
	struct qp_cycle *c = ibpost_qp_priv(qp);

	atomic_long_inc(&c->returned);
}

static int qp_cycle_poster(void *arg)
{
	struct qp_cycle *c = arg;
	struct ib_recv_wr wr[QP_CYCLE_CHAIN];
	struct ib_sge sge[QP_CYCLE_CHAIN];
	const struct ib_recv_wr *bad;
	int i, ret;

	for (i = 0; i < QP_CYCLE_CHAIN; i++) {
		if (ibpost_mr_sge(c->mr, c->buf + 64 * i, 64, &sge[i]))
			return -EINVAL;
		wr[i].wr_id = i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < QP_CYCLE_CHAIN ? &wr[i + 1] : NULL;
	}
	while (!READ_ONCE(c->stop)) {
		bad = NULL;
		atomic_inc(&c->seq);
		ret = ibpost_post_recv_list(c->qp, wr, &bad);
		atomic_inc(&c->seq);
		if (!ret) {
			c->queued += QP_CYCLE_CHAIN;
		} else if (ret == -ENOTCONN && bad == wr) {
			c->enotconn++;
		} else if (ret == -ENOMEM && bad) {
			c->queued += bad - wr;
			c->enomem++;
		} else {
			c->other++;
			c->other_ret = ret;
		}
		cond_resched();
	}
	return 0;
}

static void ibpost_qp_recv_chains_across_reset(struct kunit *test)
{
	struct ib_qp_attr qa = {};
	struct ibpost_test_pair *p;
	struct ibpost_test_thread *t;
	struct ibpost_test_queue tq;
	struct ibpost_qp_attr attr;
	struct qp_cycle *c;
	int round, straddled = 0, s0, ret;
	unsigned long deadline;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_recv_wr = 4 * QP_CYCLE_CHAIN;
	attr.recv_done = qp_cycle_recv_done;
	attr.priv = c;
	p = ibpost_test_pair(test, &attr);
	ibpost_test_need_ib(test, p->dev,
			    "INIT by hand after RESET exists on IB/RoCE only (rdma_cm moves iWARP QPs)");
	c->qp = p->b;
	c->mr = p->bbuf.mr;
	c->buf = p->bbuf.buf;
	ibpost_test_fill(c->buf, 64 * QP_CYCLE_CHAIN, 9);
	t = ibpost_test_run(test, qp_cycle_poster, c);
	for (round = 0; round < QP_CYCLE_ROUNDS; round++) {
		qa.qp_state = IB_QPS_ERR;
		KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->b, &qa,
							  IB_QP_STATE));
		usleep_range(200, 400);
		s0 = atomic_read(&c->seq);
		qa.qp_state = IB_QPS_RESET;
		KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->b, &qa,
							  IB_QP_STATE));
		if ((s0 & 1) && atomic_read(&c->seq) != s0)
			straddled++;
		usleep_range(200, 400);
		ibpost_test_connect(test, p->b, p->a, IB_QPS_INIT, 12, 7);
		usleep_range(200, 400);
	}
	WRITE_ONCE(c->stop, true);
	KUNIT_ASSERT_TRUE(test, ibpost_test_join(t, 30 * HZ, &ret));
	KUNIT_EXPECT_EQ(test, ret, 0);
	/* What INIT holds comes back flushed at the last RESET. */
	qa.qp_state = IB_QPS_ERR;
	KUNIT_EXPECT_EQ(test, 0, ibpost_qp_modify(p->b, &qa, IB_QP_STATE));
	qa.qp_state = IB_QPS_RESET;
	KUNIT_EXPECT_EQ(test, 0, ibpost_qp_modify(p->b, &qa, IB_QP_STATE));
	deadline = jiffies + 5 * HZ;
	while (atomic_long_read(&c->returned) < c->queued &&
	       time_before(jiffies, deadline))
		usleep_range(10000, 20000);
	kunit_info(test, "%d rounds: %ld WRs queued, %ld chains -ENOTCONN, %ld -ENOMEM; %d RESETs began with a chain in flight",
		   QP_CYCLE_ROUNDS, c->queued, c->enotconn, c->enomem,
		   straddled);
	ibpost_test_queue_get(p->b, false, &tq);
	KUNIT_EXPECT_EQ_MSG(test, c->other, 0L,
			    "%ld chains returned another errno (last %d); the provider refused %u posts",
			    c->other, c->other_ret, tq.provider_errors);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&c->returned), c->queued);
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(p->b, false), 0U);
	KUNIT_EXPECT_GT(test, c->enotconn, 0L);
	KUNIT_EXPECT_GT_MSG(test, straddled, 0,
			    "no RESET began while a chain was being posted");
}

/* At a move from a state: a failed WR's completion, as on another CPU. */
static int qp_fail_at_move(enum ibpost_hook point, void *obj, void *data)
{
	if (point == IBPOST_HOOK_STATE_FROM && obj == data)
		ibpost_test_qp_failed(data);
	return 0;
}

static int qp_hook_token;

static void qp_unhook(void *token)
{
	ibpost_test_set_hook(NULL, NULL);
}

/*
 * A move from a state (rdma_cm's INIT -> RTS on iWARP) while a failed
 * WR's completion moves the QP to ERR under the other queue's lock: the
 * ERR stays and the move does not happen; the next post is flushed.
 */
static void ibpost_qp_state_from_keeps_err(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_comp comp;

	KUNIT_ASSERT_EQ(test, ibpost_test_qp_tracked_state(p->a), IB_QPS_RTS);
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(qp_fail_at_move, p->a));
	ibpost_test_defer(test, qp_unhook, &qp_hook_token);
	ibpost_test_set_state_from(p->a, IB_QPS_RTS, IB_QPS_SQD);
	ibpost_test_undefer(test, &qp_hook_token);
	KUNIT_EXPECT_EQ_MSG(test, ibpost_test_qp_tracked_state(p->a),
			    IB_QPS_ERR, "the completion's ERR was lost");
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, (void *)1L,
						  p->abuf.buf, 8, p->abuf.mr,
						  IB_SEND_SIGNALED));
	KUNIT_ASSERT_EQ(test, 1, ibpost_get_send_comp(p->a, &comp, 5 * HZ));
	KUNIT_EXPECT_EQ(test, (long)comp.context, 1L);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_WR_FLUSH_ERR);
}

static struct kunit_case ibpost_qp_cases[] = {
	KUNIT_CASE(ibpost_qp_create_rc_reports_granted_caps),
	KUNIT_CASE(ibpost_qp_create_ud_is_rts_with_qkey),
	KUNIT_CASE(ibpost_qp_create_keeps_priv),
	KUNIT_CASE(ibpost_qp_create_rejects_bad_attr),
	KUNIT_CASE(ibpost_qp_create_on_comp_vector),
	KUNIT_CASE_PARAM(ibpost_qp_shared_cq_neighbours, qp_shared_ctx_gen_params),
	KUNIT_CASE(ibpost_qp_connect_loopback_reaches_rts),
	KUNIT_CASE(ibpost_qp_connect_loopback_rejects_ud),
	KUNIT_CASE_PARAM(ibpost_qp_destroy_returns_every_context,
			 ibpost_test_qp_type_gen_params),
	KUNIT_CASE(ibpost_qp_recv_list_in_reset_is_enotconn),
	KUNIT_CASE(ibpost_qp_recv_list_bad_sge_partial_post),
	KUNIT_CASE(ibpost_qp_recv_list_full_queue_is_enomem),
	KUNIT_CASE(ibpost_qp_recv_chains_across_reset),
	KUNIT_CASE(ibpost_qp_state_from_keeps_err),
	{}
};

static struct kunit_suite ibpost_qp_suite = {
	.name = "ibpost_qp",
	.test_cases = ibpost_qp_cases,
};

kunit_test_suites(&ibpost_qp_suite);
