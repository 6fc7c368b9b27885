// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_srq: shared receive queues. Two QPs take their receives
 * from one SRQ and each message lands, byte for byte, in the buffer of
 * the context that comes back, named with the QP that took it; SRQ
 * chains follow IBA 11.4.1.1; the WRs a QP took come back before its
 * destroy returns, those still in the SRQ flushed (with no QP) when it is
 * destroyed or its device removed; the limit event reaches the consumer;
 * the ib_cqe mode; and the bad inputs refused.
 */
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/wait.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

#define SRQ_WRS		16
#define SRQ_SLOT	256
#define SRQ_MSG		200
#define SRQ_DEV		"rxe2"
#define SRQ_NETDEV	"d2"

static const enum ib_poll_context srq_ctxs[] = {
	IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE, IB_POLL_DIRECT,
};

static void srq_ctx_desc(const enum ib_poll_context *p, char *desc)
{
	strscpy(desc, *p == IB_POLL_SOFTIRQ ? "softirq" :
		      *p == IB_POLL_WORKQUEUE ? "workqueue" : "direct",
		KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srq_ctx, srq_ctxs, srq_ctx_desc);

struct srq_rec;

/* One receive context, with its cqe for the ib_cqe mode. */
struct srq_req {
	struct ib_cqe cqe;
	struct srq_rec *rec;
	int calls;
	enum ib_wc_status status;
	u32 byte_len;
	struct ibpost_qp *qp;	/* as recv_done named it */
	struct ib_qp *wc_qp;	/* wc->qp */
	bool cq_null;		/* ib_cqe mode: done's cq was NULL */
};

/* What the SRQ's callbacks saw, for one case. */
struct srq_rec {
	wait_queue_head_t wq;
	atomic_t calls;
	atomic_t strays;	/* a context not ours, or a wc that lies */
	unsigned long events;
	struct ibpost_srq *srq;	/* destroyed at test exit or srq_destroy_now() */
	int destroy_ret;
	bool reenter;		/* a flush's callback destroys and arms */
	int reenter_destroy, reenter_arm;
	struct ibpost_qp *inv_qp;	/* its callbacks read its keys retired */
	u64 inv_seen;
	struct srq_req req[SRQ_WRS];
};

static struct srq_rec *srq_cur;

static void srq_record(struct srq_req *req, struct ibpost_qp *qp,
		       const struct ib_wc *wc)
{
	struct srq_rec *rec = srq_cur;

	if (req < rec->req || req >= rec->req + SRQ_WRS) {
		atomic_inc(&rec->strays);
	} else {
		req->calls++;
		req->status = wc->status;
		req->byte_len = wc->byte_len;
		req->qp = qp;
		req->wc_qp = wc->qp;
	}
	atomic_inc(&rec->calls);
	wake_up(&rec->wq);
}

static void srq_recv_done(struct ibpost_qp *qp, void *context,
			  const struct ib_wc *wc)
{
	/*
	 * A wc that names a QP names the one recv_done names (none after its
	 * provider QP is freed); ibpost's wr_cqe is never shown.
	 */
	if ((wc->qp && (!qp || wc->qp != ibpost_qp_ibqp(qp))) || wc->wr_cqe)
		atomic_inc(&srq_cur->strays);
	/* The pool's count of retired keys, as the callback finds it. */
	if (srq_cur->inv_qp && qp == srq_cur->inv_qp) {
		struct ibpost_test_frwr tf;

		ibpost_test_frwr_get(qp, &tf);
		srq_cur->inv_seen = tf.remote_inv;
	}
	/* The SRQ's own flush: its own destroy or arm would wait for it. */
	if (srq_cur->reenter && !qp) {
		srq_cur->reenter = false;
		srq_cur->reenter_destroy = ibpost_srq_destroy(srq_cur->srq);
		srq_cur->reenter_arm = ibpost_srq_arm(srq_cur->srq, 1);
	}
	srq_record(context, qp, wc);
}

static void srq_cqe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct srq_req *req = container_of(wc->wr_cqe, struct srq_req, cqe);

	srq_record(req, NULL, wc);
	if (req >= srq_cur->req && req < srq_cur->req + SRQ_WRS)
		req->cq_null = !cq;
}

static void srq_event(struct ibpost_srq *srq, enum ib_event_type event)
{
	struct srq_rec *rec = ibpost_srq_priv(srq);

	if (!in_task())
		atomic_inc(&rec->strays);
	set_bit(event, &rec->events);
	wake_up(&rec->wq);
}

static struct srq_rec *srq_rec_new(struct kunit *test)
{
	struct srq_rec *rec = kunit_kzalloc(test, sizeof(*rec), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, rec);
	init_waitqueue_head(&rec->wq);
	for (i = 0; i < SRQ_WRS; i++) {
		rec->req[i].cqe.done = srq_cqe_done;
		rec->req[i].rec = rec;
	}
	srq_cur = rec;
	return rec;
}

static void srq_destroy_deferred(void *data)
{
	struct srq_rec *rec = data;

	rec->destroy_ret = ibpost_srq_destroy(rec->srq);
}

/* An SRQ of @max_wr on @dev, destroyed at test exit (after its QPs). */
static struct ibpost_srq *srq_new(struct kunit *test, struct ibpost_dev *dev,
				  struct srq_rec *rec, u32 max_wr,
				  enum ib_poll_context ctx, bool cqe)
{
	struct ibpost_srq_attr sa = {
		.max_wr = max_wr, .max_sge = 1, .poll_ctx = ctx,
		.recv_done = cqe ? NULL : srq_recv_done, .ib_cqe = cqe,
		.event = srq_event, .priv = rec,
	};
	struct ibpost_srq *srq = ibpost_srq_create(dev, &sa);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, srq);
	rec->srq = srq;
	ibpost_test_defer(test, srq_destroy_deferred, rec);
	return srq;
}

/* Destroy @rec's SRQ now (its deferred destroy, run early). */
static void srq_destroy_now(struct kunit *test, struct srq_rec *rec)
{
	ibpost_test_undefer(test, rec);
	KUNIT_EXPECT_EQ(test, 0, rec->destroy_ret);
}

/* A sender a and a receiver b on @srq, connected; both go at test exit. */
static void srq_pair(struct kunit *test, struct ibpost_dev *dev,
		     struct ibpost_srq *srq, enum ib_poll_context ctx,
		     struct ibpost_qp **a, struct ibpost_qp **b)
{
	struct ibpost_qp_attr aattr, battr;

	ibpost_test_attr(&aattr, IB_QPT_RC);
	aattr.poll_ctx = ctx;
	battr = aattr;
	battr.max_recv_wr = 0;
	battr.srq = srq;
	ibpost_test_qp_pair(test, dev, &aattr, &battr, a, b);
}

/* Post receives @first..@first + @n - 1 of @rec into @buf's slots. */
static void srq_post(struct kunit *test, struct ibpost_srq *srq,
		     struct srq_rec *rec, struct ibpost_test_buf *buf,
		     int first, int n, bool cqe)
{
	int i;

	for (i = first; i < first + n; i++) {
		void *ctx = cqe ? (void *)&rec->req[i].cqe : &rec->req[i];

		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_srq_recv(srq, ctx,
						     buf->buf + i * SRQ_SLOT,
						     SRQ_SLOT, buf->mr));
	}
}

/* Wait up to 10 s for @want calls, polling DIRECT QPs @qps itself. */
static int srq_wait(struct srq_rec *rec, enum ib_poll_context ctx,
		    struct ibpost_qp **qps, int nqps, int want)
{
	unsigned long end = jiffies + 10 * HZ;
	int i;

	while (atomic_read(&rec->calls) < want && time_before(jiffies, end)) {
		if (ctx == IB_POLL_DIRECT) {
			for (i = 0; i < nqps; i++)
				ibpost_poll(qps[i], 16);
			cond_resched();
		} else {
			wait_event_timeout(rec->wq,
					   atomic_read(&rec->calls) >= want,
					   HZ / 10);
		}
	}
	return atomic_read(&rec->calls);
}

/* Send message @seed (SRQ_MSG bytes of its pattern) from @a, signaled. */
static void srq_send(struct kunit *test, struct ibpost_qp *a,
		     struct ibpost_test_buf *src, int slot, u32 seed)
{
	void *msg = src->buf + slot * SRQ_SLOT;

	ibpost_test_fill(msg, SRQ_MSG, seed);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(a, msg, msg, SRQ_MSG,
						  src->mr, IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, a, msg);
}

/*
 * Which message (seed) of @seeds landed in @slot: the pattern's bytes,
 * then the canary's untouched. Return: its index, or -1.
 */
static int srq_which(const u8 *slot, const u8 *canary, const u32 *seeds,
		     int n)
{
	u8 want[SRQ_MSG];
	int k;

	if (memcmp(slot + SRQ_MSG, canary + SRQ_MSG, SRQ_SLOT - SRQ_MSG))
		return -1;
	for (k = 0; k < n; k++) {
		ibpost_test_fill(want, SRQ_MSG, seeds[k]);
		if (!memcmp(slot, want, SRQ_MSG))
			return k;
	}
	return -1;
}

/*
 * Two QPs take their receives from one SRQ: six messages, three through
 * each, land each in the buffer of the context that comes back, once,
 * named with the QP it came through; the two receives no message took
 * come back flushed, with no QP, when the SRQ is destroyed (refused while
 * QPs are attached), and nothing lands in them.
 */
static void ibpost_srq_two_qps_share_receives(struct kunit *test)
{
	enum ib_poll_context ctx =
		*(const enum ib_poll_context *)test->param_value;
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *dst = ibpost_test_buf_new(test, dev,
							  SRQ_WRS * SRQ_SLOT);
	struct ibpost_test_buf *src = ibpost_test_buf_new(test, dev,
							  8 * SRQ_SLOT);
	struct srq_rec *rec = srq_rec_new(test);
	struct ibpost_srq *srq = srq_new(test, dev, rec, SRQ_WRS, ctx, false);
	const u32 seeds[6] = { 0xa10, 0xa11, 0xa12, 0xb20, 0xb21, 0xb22 };
	struct ibpost_qp *a[2], *b[2];
	int seen[6] = {}, i, k;
	u8 *canary;

	canary = ibpost_test_canary(test, dst->buf, SRQ_WRS * SRQ_SLOT, 0x5e9);
	srq_pair(test, dev, srq, ctx, &a[0], &b[0]);
	srq_pair(test, dev, srq, ctx, &a[1], &b[1]);
	srq_post(test, srq, rec, dst, 0, 8, false);
	for (i = 0; i < 6; i++)
		srq_send(test, a[i / 3], src, i, seeds[i]);
	KUNIT_ASSERT_EQ(test, 6, srq_wait(rec, ctx, b, 2, 6));
	/* Six successes with a callback: the handler's common path. */
	KUNIT_EXPECT_EQ(test, 6U, ibpost_test_srq_comp_common(srq));

	for (i = 0; i < 8; i++) {
		struct srq_req *req = &rec->req[i];
		u8 *slot = dst->buf + i * SRQ_SLOT;

		if (!req->calls) {
			/* Not taken: nothing landed. */
			ibpost_test_expect_canary(test, slot,
						  canary + i * SRQ_SLOT,
						  SRQ_SLOT);
			continue;
		}
		KUNIT_EXPECT_EQ_MSG(test, 1, req->calls, "recv %d", i);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, req->status);
		KUNIT_EXPECT_EQ(test, (u32)SRQ_MSG, req->byte_len);
		k = srq_which(slot, canary + i * SRQ_SLOT, seeds, 6);
		KUNIT_ASSERT_GE_MSG(test, k, 0, "recv %d holds no message", i);
		seen[k]++;
		/* Message k went from a[k / 3] to b[k / 3]. */
		KUNIT_EXPECT_PTR_EQ_MSG(test, req->qp, b[k / 3],
					"message %d named another QP", k);
		KUNIT_EXPECT_PTR_EQ(test, req->wc_qp, ibpost_qp_ibqp(b[k / 3]));
	}
	for (k = 0; k < 6; k++)
		KUNIT_EXPECT_EQ_MSG(test, 1, seen[k], "message %d", k);

	/* Attached: refused, nothing changed. */
	KUNIT_EXPECT_EQ(test, -EBUSY, ibpost_srq_destroy(srq));
	ibpost_test_qp_destroy(test, b[0]);
	ibpost_test_qp_destroy(test, b[1]);
	KUNIT_EXPECT_EQ(test, 6, atomic_read(&rec->calls));
	srq_destroy_now(test, rec);
	KUNIT_EXPECT_EQ(test, 8, atomic_read(&rec->calls));
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ_MSG(test, 1, rec->req[i].calls, "recv %d", i);
	for (i = 0; i < 8; i++) {
		if (rec->req[i].status != IB_WC_WR_FLUSH_ERR)
			continue;
		KUNIT_EXPECT_NULL(test, rec->req[i].qp);
		KUNIT_EXPECT_NULL(test, rec->req[i].wc_qp);
		ibpost_test_expect_canary(test, dst->buf + i * SRQ_SLOT,
					  canary + i * SRQ_SLOT, SRQ_SLOT);
	}
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&rec->strays));
}

/*
 * SRQ chains follow IBA 11.4.1.1: a WR with too many SGEs, one outside
 * every MR, and one beyond the SRQ's room each stop the chain there, with
 * bad_wr naming it and the WRs before it queued; the queued ones (and no
 * other) come back flushed at the destroy, whose callback may not destroy
 * or arm the SRQ again (-EWOULDBLOCK).
 */
static void ibpost_srq_chain_stops_at_bad_wr(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *dst = ibpost_test_buf_new(test, dev,
							  SRQ_WRS * SRQ_SLOT);
	struct srq_rec *rec = srq_rec_new(test);
	/*
	 * WORKQUEUE: the flush's callbacks may sleep, so only the SRQ's own
	 * flush can refuse their destroy and arm.
	 */
	struct ibpost_srq *srq = srq_new(test, dev, rec, 4, IB_POLL_WORKQUEUE,
					 false);
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr[6] = {};
	struct ib_sge sge[6], two[2], outside;
	u8 stray[64];
	int i;

	for (i = 0; i < 6; i++) {
		KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(dst->mr,
						       dst->buf + i * SRQ_SLOT,
						       SRQ_SLOT, &sge[i]));
		wr[i].wr_id = (uintptr_t)&rec->req[i];
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].next = i < 5 ? &wr[i + 1] : NULL;
	}
	two[0] = sge[1];
	two[1] = sge[2];

	/* Two SGEs where one is granted: WR 1 refused, WR 0 queued. */
	wr[1].sg_list = two;
	wr[1].num_sge = 2;
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_srq_recv_list(srq, wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr[1]);

	/* An SGE in no MR: WR 2 refused, WR 1 queued. */
	outside = sge[2];
	outside.addr = (uintptr_t)stray;
	wr[1].sg_list = &sge[1];
	wr[1].num_sge = 1;
	wr[2].sg_list = &outside;
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_srq_recv_list(srq, &wr[1], &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr[2]);

	/* Room for two more of four: WR 4 refused, WRs 2 and 3 queued. */
	wr[2].sg_list = &sge[2];
	KUNIT_EXPECT_EQ(test, -ENOMEM,
			ibpost_post_srq_recv_list(srq, &wr[2], &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr[4]);

	KUNIT_EXPECT_EQ(test, 0, atomic_read(&rec->calls));
	/* Its flush's first callback tries to destroy and arm it: refused. */
	rec->reenter = true;
	srq_destroy_now(test, rec);
	KUNIT_EXPECT_FALSE(test, rec->reenter);
	KUNIT_EXPECT_EQ(test, -EWOULDBLOCK, rec->reenter_destroy);
	KUNIT_EXPECT_EQ(test, -EWOULDBLOCK, rec->reenter_arm);
	KUNIT_EXPECT_EQ(test, 4, atomic_read(&rec->calls));
	for (i = 0; i < 6; i++) {
		KUNIT_EXPECT_EQ_MSG(test, i < 4 ? 1 : 0, rec->req[i].calls,
				    "recv %d", i);
		if (i < 4)
			KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR,
					rec->req[i].status);
	}
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&rec->strays));
}

/*
 * A DIRECT QP on an SRQ whose receive completions nobody polled: its
 * destroy returns them, succeeded and named with it, before it returns;
 * the SRQ keeps the WRs no QP took, flushed at its destroy.
 */
static void ibpost_srq_destroy_returns_taken(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *dst = ibpost_test_buf_new(test, dev,
							  SRQ_WRS * SRQ_SLOT);
	struct ibpost_test_buf *src = ibpost_test_buf_new(test, dev,
							  4 * SRQ_SLOT);
	struct srq_rec *rec = srq_rec_new(test);
	struct ibpost_srq *srq = srq_new(test, dev, rec, SRQ_WRS,
					 IB_POLL_DIRECT, false);
	const u32 seeds[2] = { 0xd10, 0xd11 };
	struct ibpost_qp *a, *b;
	int i, taken = 0;
	u8 *canary;

	canary = ibpost_test_canary(test, dst->buf, SRQ_WRS * SRQ_SLOT, 0xd5);
	srq_pair(test, dev, srq, IB_POLL_DIRECT, &a, &b);
	srq_post(test, srq, rec, dst, 0, 4, false);
	for (i = 0; i < 2; i++)
		srq_send(test, a, src, i, seeds[i]);
	/* b's CQ holds both; nobody polls it. */
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&rec->calls));
	ibpost_test_qp_destroy(test, b);
	KUNIT_EXPECT_EQ(test, 2, atomic_read(&rec->calls));
	for (i = 0; i < 4; i++) {
		struct srq_req *req = &rec->req[i];

		if (!req->calls)
			continue;
		taken++;
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, req->status);
		KUNIT_EXPECT_PTR_EQ(test, req->qp, b);
		KUNIT_EXPECT_GE(test, srq_which(dst->buf + i * SRQ_SLOT,
						canary + i * SRQ_SLOT, seeds,
						2), 0);
	}
	KUNIT_EXPECT_EQ(test, 2, taken);
	srq_destroy_now(test, rec);
	KUNIT_EXPECT_EQ(test, 4, atomic_read(&rec->calls));
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ_MSG(test, 1, rec->req[i].calls, "recv %d", i);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&rec->strays));
}

/*
 * Slots come back in any order: one QP holds the SRQ's first WR (its
 * completion unpolled) while another takes and completes three times the
 * SRQ's depth of WRs, one at a time, each reposted; none is refused for
 * room, each lands named with its QP, and the held one comes back last.
 */
static void ibpost_srq_slow_taker_holds_one_slot(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *dst = ibpost_test_buf_new(test, dev,
							  SRQ_WRS * SRQ_SLOT);
	struct ibpost_test_buf *src = ibpost_test_buf_new(test, dev,
							  SRQ_WRS * SRQ_SLOT);
	struct srq_rec *rec = srq_rec_new(test);
	struct ibpost_srq *srq = srq_new(test, dev, rec, 4, IB_POLL_DIRECT,
					 false);
	struct ibpost_qp *a[2], *b[2];
	int i;

	srq_pair(test, dev, srq, IB_POLL_DIRECT, &a[0], &b[0]);
	srq_pair(test, dev, srq, IB_POLL_DIRECT, &a[1], &b[1]);
	srq_post(test, srq, rec, dst, 0, 1, false);
	srq_send(test, a[0], src, 0, 0x510);
	for (i = 1; i <= 12; i++) {
		srq_post(test, srq, rec, dst, i, 1, false);
		srq_send(test, a[1], src, i, 0x510 + i);
		KUNIT_ASSERT_EQ(test, i, srq_wait(rec, IB_POLL_DIRECT, &b[1],
						  1, i));
		KUNIT_EXPECT_EQ(test, 1, rec->req[i].calls);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, rec->req[i].status);
		KUNIT_EXPECT_PTR_EQ(test, rec->req[i].qp, b[1]);
	}
	KUNIT_EXPECT_EQ(test, 0, rec->req[0].calls);
	KUNIT_ASSERT_EQ(test, 13, srq_wait(rec, IB_POLL_DIRECT, &b[0], 1, 13));
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, rec->req[0].status);
	KUNIT_EXPECT_PTR_EQ(test, rec->req[0].qp, b[0]);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&rec->strays));
}

/*
 * The limit armed at 4 of 8 posted: once fewer than 4 remain, the
 * consumer's event callback hears IB_EVENT_SRQ_LIMIT_REACHED, in process
 * context; a limit not below max_wr is refused.
 */
static void ibpost_srq_limit_event_reaches_consumer(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *dst = ibpost_test_buf_new(test, dev,
							  SRQ_WRS * SRQ_SLOT);
	struct ibpost_test_buf *src = ibpost_test_buf_new(test, dev,
							  8 * SRQ_SLOT);
	struct srq_rec *rec = srq_rec_new(test);
	struct ibpost_srq *srq = srq_new(test, dev, rec, SRQ_WRS,
					 IB_POLL_WORKQUEUE, false);
	struct ibpost_qp *a, *b;
	int i;

	srq_pair(test, dev, srq, IB_POLL_WORKQUEUE, &a, &b);
	srq_post(test, srq, rec, dst, 0, 8, false);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_srq_arm(srq, SRQ_WRS));
	KUNIT_ASSERT_EQ(test, 0, ibpost_srq_arm(srq, 4));
	for (i = 0; i < 3; i++)
		srq_send(test, a, src, i, 0x1e0 + i);
	KUNIT_ASSERT_EQ(test, 3, srq_wait(rec, IB_POLL_WORKQUEUE, &b, 1, 3));
	/* Five remain: not yet. */
	msleep(100);
	KUNIT_EXPECT_FALSE(test, test_bit(IB_EVENT_SRQ_LIMIT_REACHED,
					  &rec->events));
	for (i = 3; i < 5; i++)
		srq_send(test, a, src, i, 0x1e0 + i);
	KUNIT_ASSERT_EQ(test, 5, srq_wait(rec, IB_POLL_WORKQUEUE, &b, 1, 5));
	wait_event_timeout(rec->wq, test_bit(IB_EVENT_SRQ_LIMIT_REACHED,
					     &rec->events), 10 * HZ);
	KUNIT_EXPECT_TRUE(test, test_bit(IB_EVENT_SRQ_LIMIT_REACHED,
					 &rec->events));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&rec->strays));
}

/*
 * ib_cqe mode: each context is the consumer's cqe, back through its done
 * with wc->wr_cqe its own and cq the taking QP's CQ; the SRQ's own
 * flushes with cq and wc->qp NULL. A context that is no ib_cqe is
 * refused at post.
 */
static void ibpost_srq_cqe_mode(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *dst = ibpost_test_buf_new(test, dev,
							  SRQ_WRS * SRQ_SLOT);
	struct ibpost_test_buf *src = ibpost_test_buf_new(test, dev,
							  4 * SRQ_SLOT);
	struct srq_rec *rec = srq_rec_new(test);
	struct ibpost_srq *srq = srq_new(test, dev, rec, SRQ_WRS,
					 IB_POLL_SOFTIRQ, true);
	struct ibpost_qp *a, *b;
	struct ib_qp *bqp;
	int i;

	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_srq_recv(srq, NULL, dst->buf, 64, dst->mr));
	srq_pair(test, dev, srq, IB_POLL_SOFTIRQ, &a, &b);
	bqp = ibpost_qp_ibqp(b);
	srq_post(test, srq, rec, dst, 0, 4, true);
	for (i = 0; i < 2; i++)
		srq_send(test, a, src, i, 0xce0 + i);
	KUNIT_ASSERT_EQ(test, 2, srq_wait(rec, IB_POLL_SOFTIRQ, &b, 1, 2));
	ibpost_test_qp_destroy(test, b);
	srq_destroy_now(test, rec);
	KUNIT_EXPECT_EQ(test, 4, atomic_read(&rec->calls));
	for (i = 0; i < 4; i++) {
		struct srq_req *req = &rec->req[i];
		bool ok = req->status == IB_WC_SUCCESS;

		KUNIT_EXPECT_EQ_MSG(test, 1, req->calls, "recv %d", i);
		KUNIT_EXPECT_EQ(test, i < 2 ? IB_WC_SUCCESS :
					      IB_WC_WR_FLUSH_ERR, req->status);
		KUNIT_EXPECT_EQ(test, !ok, req->cq_null);
		KUNIT_EXPECT_PTR_EQ(test, req->wc_qp, ok ? bqp : NULL);
	}
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&rec->strays));
}

/*
 * The device goes away under an SRQ with a DIRECT QP attached whose
 * receive completion nobody polled: the removal returns it, succeeded,
 * named with the QP (its teardown's reap), and the receives the SRQ still
 * held flushed with no QP, once each; the SRQ's posts get -ENODEV; its
 * destroy waits for the QP's (-EBUSY), then frees it with no further call.
 */
static void ibpost_srq_device_removal_flushes(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev2(test, SRQ_DEV, SRQ_NETDEV);
	struct ibpost_test_buf *dst = ibpost_test_buf_new(test, dev,
							  SRQ_WRS * SRQ_SLOT);
	struct ibpost_test_buf *src = ibpost_test_buf_new(test, dev,
							  4 * SRQ_SLOT);
	struct srq_rec *rec = srq_rec_new(test);
	struct ibpost_srq *srq = srq_new(test, dev, rec, SRQ_WRS,
					 IB_POLL_DIRECT, false);
	struct ibpost_qp *a, *b;
	int i, ok = 0;

	srq_pair(test, dev, srq, IB_POLL_DIRECT, &a, &b);
	srq_post(test, srq, rec, dst, 0, 4, false);
	srq_send(test, a, src, 0, 0x4e0);
	/* In b's CQ; nobody polls it. */
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&rec->calls));
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh("rdma link delete " SRQ_DEV));
	KUNIT_EXPECT_EQ(test, 4, atomic_read(&rec->calls));
	for (i = 0; i < 4; i++) {
		struct srq_req *req = &rec->req[i];

		KUNIT_EXPECT_EQ_MSG(test, 1, req->calls, "recv %d", i);
		if (req->status == IB_WC_SUCCESS) {
			ok++;
			KUNIT_EXPECT_PTR_EQ(test, req->qp, b);
		} else {
			KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, req->status);
			KUNIT_EXPECT_NULL(test, req->qp);
		}
	}
	KUNIT_EXPECT_EQ(test, 1, ok);
	KUNIT_EXPECT_EQ(test, -ENODEV,
			ibpost_post_srq_recv(srq, &rec->req[5], dst->buf, 64,
					     dst->mr));
	KUNIT_EXPECT_EQ(test, -EBUSY, ibpost_srq_destroy(srq));
	ibpost_test_qp_destroy(test, b);
	srq_destroy_now(test, rec);
	KUNIT_EXPECT_EQ(test, 4, atomic_read(&rec->calls));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&rec->strays));
}

/* A QP of @attr on @dev refused with @err (one made anyway goes at once). */
static void srq_expect_refused(struct kunit *test, struct ibpost_dev *dev,
			       const struct ibpost_qp_attr *attr, int err)
{
	struct ibpost_qp *qp = ibpost_qp_create(dev, attr);

	KUNIT_EXPECT_PTR_EQ(test, qp, ERR_PTR(err));
	if (!IS_ERR(qp))
		ibpost_qp_destroy(qp);
}

/*
 * Bad input: receives posted on an SRQ's QP, its polled receive
 * completions, an SRQ with shared CQs or of another completion context
 * or device, an SRQ without a way back for its contexts, beyond the
 * device's limits, or posted with an MR of another device.
 */
static void ibpost_srq_bad_input(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *dst = ibpost_test_buf_new(test, dev,
							  SRQ_WRS * SRQ_SLOT);
	struct srq_rec *rec = srq_rec_new(test);
	struct ibpost_srq *srq = srq_new(test, dev, rec, SRQ_WRS,
					 IB_POLL_WORKQUEUE, false);
	struct ibpost_srq_attr sa = {
		.max_wr = 4, .max_sge = 1, .poll_ctx = IB_POLL_WORKQUEUE,
		.recv_done = srq_recv_done,
	};
	struct ibpost_qp_attr attr;
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr = {};
	struct ibpost_test_buf *other;
	struct ibpost_dev *dev2;
	struct ibpost_comp comp;
	struct ibpost_qp *qp;
	struct ib_sge sge;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = IB_POLL_WORKQUEUE;
	attr.max_recv_wr = 0;
	attr.srq = srq;
	qp = ibpost_test_qp(test, dev, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_recv(qp, &rec->req[0], dst->buf, 64,
					 dst->mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(dst->mr, dst->buf, 64, &sge));
	wr.wr_id = (uintptr_t)&rec->req[0];
	wr.sg_list = &sge;
	wr.num_sge = 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_recv_list(qp, &wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_recv_wr *)&wr);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_get_recv_comp(qp, &comp, 0));
	KUNIT_EXPECT_EQ(test, -EBUSY, ibpost_srq_destroy(srq));

	attr.shared_cq = true;
	srq_expect_refused(test, dev, &attr, -EOPNOTSUPP);
	attr.shared_cq = false;
	attr.poll_ctx = IB_POLL_SOFTIRQ;
	srq_expect_refused(test, dev, &attr, -EINVAL);

	sa.recv_done = NULL;
	KUNIT_EXPECT_PTR_EQ(test, ibpost_srq_create(dev, &sa),
			    ERR_PTR(-EINVAL));
	sa.recv_done = srq_recv_done;
	sa.ib_cqe = true;
	KUNIT_EXPECT_PTR_EQ(test, ibpost_srq_create(dev, &sa),
			    ERR_PTR(-EINVAL));
	sa.ib_cqe = false;
	sa.max_wr = 0;
	KUNIT_EXPECT_PTR_EQ(test, ibpost_srq_create(dev, &sa),
			    ERR_PTR(-EINVAL));
	sa.max_wr = ibpost_dev_ibdev(dev)->attrs.max_srq_wr + 1;
	KUNIT_EXPECT_PTR_EQ(test, ibpost_srq_create(dev, &sa),
			    ERR_PTR(-EINVAL));

	/* Another device: its QPs cannot take this SRQ, nor its MRs post. */
	dev2 = ibpost_test_dev2(test, SRQ_DEV, SRQ_NETDEV);
	other = ibpost_test_buf_new(test, dev2, 4096);
	attr.poll_ctx = IB_POLL_WORKQUEUE;
	srq_expect_refused(test, dev2, &attr, -EINVAL);
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_srq_recv(srq, &rec->req[1], other->buf, 64,
					     other->mr));

	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_srq_recv_list(NULL, &wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_recv_wr *)&wr);
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_srq_recv(NULL, &rec->req[1], dst->buf, 64,
					     dst->mr));
	KUNIT_EXPECT_EQ(test, 0, ibpost_srq_destroy(NULL));

	/* Nothing was queued by any of it. */
	ibpost_test_qp_destroy(test, qp);
	srq_destroy_now(test, rec);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&rec->calls));
}

static void srq_page_free(void *data)
{
	__free_page(data);
}

/*
 * A peer's SEND_WITH_INV received through an SRQ retires the fast
 * registration it names, as one received on a QP's own queue does: the
 * receive comes back, the pool has heard of the key (remote_inv) when
 * the callback runs, and the unmap posts nothing (DONE).
 */
static void ibpost_srq_send_with_inv_retires_key(struct kunit *test)
{
	enum ib_poll_context ctx = IB_POLL_WORKQUEUE;
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *dst = ibpost_test_buf_new(test, dev,
							  SRQ_WRS * SRQ_SLOT);
	struct ibpost_test_buf *src = ibpost_test_buf_new(test, dev,
							  SRQ_SLOT);
	struct srq_rec *rec = srq_rec_new(test);
	struct ibpost_srq *srq = srq_new(test, dev, rec, SRQ_WRS, ctx, false);
	struct ibpost_qp_attr aattr, battr;
	struct ibpost_frwr_map map = {};
	struct ibpost_test_frwr tf;
	struct scatterlist sg;
	struct ibpost_qp *a, *b;
	struct page *page;

	ibpost_test_attr(&aattr, IB_QPT_RC);
	aattr.poll_ctx = ctx;
	battr = aattr;
	battr.max_recv_wr = 0;
	battr.srq = srq;
	battr.frwr_maps = 1;
	ibpost_test_qp_pair(test, dev, &aattr, &battr, &a, &b);
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	ibpost_test_defer(test, srq_page_free, page);
	sg_init_table(&sg, 1);
	sg_set_page(&sg, page, PAGE_SIZE, 0);
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(b, &sg, 1,
						 IB_ACCESS_REMOTE_WRITE, &map));

	/* b's REG_MR rides its next post: a SEND to a. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(a, (void *)1UL, src->buf,
						  SRQ_SLOT, src->mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(b, (void *)2UL, dst->buf,
						  SRQ_MSG, dst->mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, b, (void *)2UL);
	ibpost_test_recv_ok(test, a, (void *)1UL, SRQ_MSG);

	/* a retires the key with a SEND_WITH_INV that b takes from the SRQ. */
	rec->inv_qp = b;
	srq_post(test, srq, rec, dst, 0, 1, false);
	ibpost_test_send_inv_ok(test, a, 3, src->mr, src->buf, SRQ_MSG,
				map.rkey);
	KUNIT_ASSERT_EQ(test, 1, srq_wait(rec, ctx, &b, 1, 1));
	KUNIT_EXPECT_EQ(test, 1, rec->req[0].calls);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, rec->req[0].status);
	KUNIT_EXPECT_PTR_EQ(test, rec->req[0].qp, b);
	/* The pool heard of the key before the callback ran. */
	KUNIT_EXPECT_EQ(test, rec->inv_seen, 1ULL);
	ibpost_test_frwr_get(b, &tf);
	KUNIT_EXPECT_EQ(test, tf.remote_inv, 1ULL);

	/* Nothing to invalidate: no LOCAL_INV, no context. */
	KUNIT_EXPECT_EQ(test, IBPOST_FRWR_DONE,
			ibpost_frwr_unmap(b, &map, (void *)4UL));
	ibpost_test_frwr_get(b, &tf);
	KUNIT_EXPECT_EQ(test, tf.invs, 0ULL);
	KUNIT_EXPECT_EQ(test, tf.free, 1U);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&rec->strays));
}

static struct kunit_case ibpost_srq_cases[] = {
	KUNIT_CASE_PARAM(ibpost_srq_two_qps_share_receives, srq_ctx_gen_params),
	KUNIT_CASE(ibpost_srq_chain_stops_at_bad_wr),
	KUNIT_CASE(ibpost_srq_destroy_returns_taken),
	KUNIT_CASE(ibpost_srq_slow_taker_holds_one_slot),
	KUNIT_CASE(ibpost_srq_limit_event_reaches_consumer),
	KUNIT_CASE(ibpost_srq_cqe_mode),
	KUNIT_CASE(ibpost_srq_device_removal_flushes),
	KUNIT_CASE(ibpost_srq_bad_input),
	KUNIT_CASE(ibpost_srq_send_with_inv_retires_key),
	{}
};

static struct kunit_suite ibpost_srq_suite = {
	.name = "ibpost_srq",
	.test_cases = ibpost_srq_cases,
};

kunit_test_suites(&ibpost_srq_suite);
