// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_ring (drivers/ring.c): the ring layer driven directly,
 * with no device: a queue on a stand-in QP and CQ, its slots claimed as a
 * post claims them, and completions handed to each slot's ib_cqe as a
 * provider hands them. What it must hold on its own: the free-running
 * positions wrap at 2^32, a signaled send's completion reclaims the
 * unsignaled sends before it, a completion with no consumer callback is
 * parked until taken, every context comes back exactly once, whether
 * its completion came from the provider, from a flush, or twice, and the
 * uses a WR's SGEs hold are released once, however the WR ends. Its
 * submit side, through a test client that posts as post.c does and a
 * stand-in provider (the ib_device's post_send op): the signal policy,
 * a refusal's bad_wr at each position of a two-batch chain, a client's
 * prefix WR, and posts in ERR returned by the flush worker.
 */
#include <linux/bitmap.h>
#include <linux/module.h>
#include <linux/slab.h>
#include "ibpost_test.h"
#include "../drivers/ring.h"
#include "../drivers/ibpost_test_access.h"

#define RING_SLOTS	16
#define RING_CTXS	256

struct ring_env {
	struct kunit *test;
	struct ibpost_ring_qp rqp;
	struct ibpost_queue q;
	struct ib_device *ibdev;
	struct ib_qp *ibqp;
	struct ib_cq cq;
	DECLARE_BITMAP(seen, RING_CTXS);
	int calls, dups, flushed;
};

/* The consumer's callback: each context once, below RING_CTXS. */
static void ring_done(struct ibpost_qp *qp, void *context,
		      const struct ib_wc *wc)
{
	struct ring_env *e = (struct ring_env *)qp;
	unsigned long c = (unsigned long)context;

	e->calls++;
	if (c >= RING_CTXS || __test_and_set_bit(c, e->seen))
		e->dups++;
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		e->flushed++;
}

static void ring_env_free(void *data)
{
	struct ring_env *e = data;

	kfree(e->q.slots);
	kfree(e->q.use_array);
	kfree(e->q.parked);
	kfree(e->ibqp);
	kfree(e->ibdev);
}

/*
 * A send (or receive) queue of RING_SLOTS slots on a QP in RTS, with the
 * callback above (@callback) or none, its positions starting at @pos.
 */
static struct ring_env *ring_env_new(struct kunit *test, bool send,
				     bool callback, u32 pos)
{
	struct ring_env *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	struct ibpost_queue *q;

	KUNIT_ASSERT_NOT_NULL(test, e);
	e->test = test;
	e->ibdev = kzalloc(sizeof(*e->ibdev), GFP_KERNEL);
	e->ibqp = kzalloc(sizeof(*e->ibqp), GFP_KERNEL);
	q = &e->q;
	q->slots = kcalloc(RING_SLOTS, sizeof(*q->slots), GFP_KERNEL);
	q->use_array = kcalloc(RING_SLOTS, sizeof(*q->use_array), GFP_KERNEL);
	ibpost_test_defer(test, ring_env_free, e);
	KUNIT_ASSERT_TRUE(test,
			  e->ibdev && e->ibqp && q->slots && q->use_array);
	e->ibqp->device = e->ibdev;
	e->cq.device = e->ibdev;
	e->cq.cq_context = q;
	e->rqp.ibqp = e->ibqp;
	e->rqp.qpn = 0x1234;
	e->rqp.state = IB_QPS_RTS;
	e->rqp.poll_ctx = IB_POLL_WORKQUEUE;
	/* The owner handed to the callback is the environment itself. */
	ibpost_test_ring_init(q, (struct ibpost_qp *)e, &e->rqp, send,
			      callback ? ring_done : NULL, &e->cq, q->slots,
			      q->use_array, RING_SLOTS, pos);
	KUNIT_ASSERT_TRUE(test, callback || q->parked);
	return e;
}

/* Claim the slot at the head for @ctx, as a post does. */
static struct ibpost_slot *ring_claim(struct ring_env *e, unsigned long ctx,
				      bool signaled)
{
	struct ibpost_queue *q = &e->q;
	struct ibpost_slot *slot = NULL;
	unsigned long flags;

	/* No expectation under the lock: a failed one allocates. */
	spin_lock_irqsave(&q->lock, flags);
	if (q->head - q->tail < q->depth) {
		slot = ibpost_slot_claim(q, (void *)ctx, signaled, signaled);
		slot->since_before = q->since_signal;
		q->stats.posted++;
	}
	spin_unlock_irqrestore(&q->lock, flags);
	KUNIT_ASSERT_NOT_NULL_MSG(e->test, slot, "no free slot for %lu", ctx);
	return slot;
}

/* The provider's completion of @slot, with @status. */
static void ring_complete(struct ring_env *e, struct ibpost_slot *slot,
			  enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_cqe = &slot->cqe,
		.status = status,
		.opcode = e->q.is_send ? IB_WC_SEND : IB_WC_RECV,
		.qp = e->ibqp,
	};

	slot->cqe.done(&e->cq, &wc);
}

/*
 * Claim the slot at the head for @ctx with one SGE's use of @use counted
 * as a post counts it: in the queue's hit when the hit has other SGEs in
 * it or none at all (then @use becomes the hit), else listed in the
 * slot's use array with a user of its own.
 */
static struct ibpost_slot *ring_claim_use(struct ring_env *e, unsigned long ctx,
					  bool signaled,
					  struct ibpost_ring_use *use)
{
	struct ibpost_queue *q = &e->q;
	struct ibpost_slot *slot;
	unsigned long flags;

	slot = ring_claim(e, ctx, signaled);
	spin_lock_irqsave(&q->lock, flags);
	if (q->hit_users && q->hit == use) {
		q->hit_users++;
		slot->nhit = 1;
	} else {
		atomic_inc(&use->users);
		if (!q->hit_users) {
			ibpost_ring_hit_adopt(q, use);
			slot->nhit = 1;
		} else {
			ibpost_slot_uses(q, slot)[0] = use;
			slot->nuse = 1;
		}
	}
	spin_unlock_irqrestore(&q->lock, flags);
	return slot;
}

static u32 ring_in_use(struct ring_env *e)
{
	return READ_ONCE(e->q.head) - READ_ONCE(e->q.tail);
}

/*
 * Three laps of the ring across the u32 wrap of its positions, every
 * fourth send signaled: each signaled context back once, in order; the
 * unsignaled ones reclaimed by the next signaled completion, never shown;
 * the ring empty after each signaled completion.
 */
static void ibpost_ring_wraps_at_u32(struct kunit *test)
{
	struct ring_env *e = ring_env_new(test, true, true, 0xfffffff0);
	unsigned long ctx;
	int signaled = 0;

	for (ctx = 0; ctx < 3 * RING_SLOTS; ctx++) {
		bool sig = ctx % 4 == 3;
		struct ibpost_slot *slot = ring_claim(e, ctx, sig);

		if (!sig)
			continue;
		ring_complete(e, slot, IB_WC_SUCCESS);
		signaled++;
		KUNIT_EXPECT_EQ(test, ring_in_use(e), 0U);
		KUNIT_EXPECT_TRUE(test, test_bit(ctx, e->seen));
	}
	/* The positions did wrap. */
	KUNIT_EXPECT_LT(test, e->q.head, 0xfffffff0U);
	KUNIT_EXPECT_EQ(test, e->calls, signaled);
	KUNIT_EXPECT_EQ(test, e->dups, 0);
	KUNIT_EXPECT_EQ(test, e->q.stats.completed, 3ULL * RING_SLOTS);
}

/*
 * An unsignaled send that failed comes back (with its error); those
 * before it, unsignaled, succeeded and are reclaimed silently; the QP is
 * in ERR after the failure.
 */
static void ibpost_ring_error_returns_unsignaled(struct kunit *test)
{
	struct ring_env *e = ring_env_new(test, true, true, 0);
	struct ibpost_slot *slot = NULL;
	unsigned long ctx;

	for (ctx = 0; ctx < 5; ctx++)
		slot = ring_claim(e, ctx, false);
	ring_complete(e, slot, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, e->calls, 1);
	KUNIT_EXPECT_TRUE(test, test_bit(4, e->seen));
	KUNIT_EXPECT_EQ(test, ring_in_use(e), 0U);
	KUNIT_EXPECT_EQ(test, e->q.stats.completed, 4ULL);
	KUNIT_EXPECT_EQ(test, e->q.stats.failed, 1ULL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(e->rqp.state), IB_QPS_ERR);
}

/*
 * Receives without a callback: each completion parked in its slot, taken
 * in completion order, the slot free only once taken.
 */
static void ibpost_ring_parks_without_callback(struct kunit *test)
{
	struct ring_env *e = ring_env_new(test, false, false, 0);
	struct ibpost_slot *slot[4];
	struct ibpost_comp comp;
	int i;

	for (i = 0; i < 4; i++)
		slot[i] = ring_claim(e, 10 + i, true);
	/* Out of posting order: a receive queue's slots complete as ready. */
	ring_complete(e, slot[1], IB_WC_SUCCESS);
	ring_complete(e, slot[0], IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, ring_in_use(e), 4U);
	KUNIT_ASSERT_TRUE(test, ibpost_test_ring_take(&e->q, &comp));
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)11);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	/* Slot 0 is still parked: the tail cannot pass it. */
	KUNIT_EXPECT_EQ(test, ring_in_use(e), 4U);
	KUNIT_ASSERT_TRUE(test, ibpost_test_ring_take(&e->q, &comp));
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)10);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, ring_in_use(e), 2U);
	KUNIT_EXPECT_FALSE(test, ibpost_test_ring_take(&e->q, &comp));
	KUNIT_EXPECT_EQ(test, e->calls, 0);
}

/*
 * A full ring, some of it completed by the provider, the rest returned
 * by a flush (the provider's QP gone), then the provider's completions
 * of flushed slots arriving late, and one completion given twice: every
 * context exactly once, the flushed ones with IB_WC_WR_FLUSH_ERR, the
 * ring empty.
 */
static void ibpost_ring_exactly_once_under_flush(struct kunit *test)
{
	struct ring_env *e = ring_env_new(test, true, true, 0);
	struct ibpost_slot *slot[RING_SLOTS - 1];
	unsigned long ctx;
	int n = RING_SLOTS - 1;

	for (ctx = 0; ctx < n; ctx++)
		slot[ctx] = ring_claim(e, ctx, ctx % 2 == 0);
	/* The provider completes 0-4 (1 and 3 reclaimed by 2 and 4). */
	ring_complete(e, slot[0], IB_WC_SUCCESS);
	ring_complete(e, slot[2], IB_WC_SUCCESS);
	ring_complete(e, slot[4], IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, e->calls, 3);
	/* Given twice: ignored. */
	ring_complete(e, slot[4], IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, e->calls, 3);
	/* The provider's QP is gone: the rest come back flushed. */
	WRITE_ONCE(e->rqp.ibqp, NULL);
	ibpost_test_ring_flush(&e->q);
	KUNIT_EXPECT_EQ(test, ring_in_use(e), 0U);
	KUNIT_EXPECT_EQ(test, e->flushed, n - 5);
	/* Late completions of flushed slots: each ignored. */
	ring_complete(e, slot[6], IB_WC_WR_FLUSH_ERR);
	ring_complete(e, slot[7], IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, e->calls, 3 + n - 5);
	KUNIT_EXPECT_EQ(test, e->dups, 0);
	for (ctx = 0; ctx < n; ctx++)
		KUNIT_EXPECT_EQ_MSG(test, test_bit(ctx, e->seen),
				    ctx % 2 == 0 || ctx > 4,
				    "context %lu", ctx);
}

/*
 * Two pieces of memory, their uses counted by posted sends in the
 * queue's hit and in the slots' use arrays: each released exactly once,
 * whether the WR was reclaimed, completed, flushed or not queued after
 * all (a refused post's claims undone).
 */
static void ibpost_ring_uses_released_once(struct kunit *test)
{
	struct ring_env *e = ring_env_new(test, true, true, 0);
	struct ibpost_ring_use a = { .users = ATOMIC_INIT(0) };
	struct ibpost_ring_use b = { .users = ATOMIC_INIT(0) };
	struct ibpost_slot *slot;

	/* 0 and 1 in a, the hit (one user for both); 2 in b, listed. */
	ring_claim_use(e, 0, false, &a);
	ring_claim_use(e, 1, false, &a);
	slot = ring_claim_use(e, 2, true, &b);
	KUNIT_EXPECT_EQ(test, atomic_read(&a.users), 1);
	KUNIT_EXPECT_EQ(test, e->q.hit_users, 2U);
	KUNIT_EXPECT_EQ(test, atomic_read(&b.users), 1);
	KUNIT_EXPECT_EQ(test, slot->nuse, 1);
	/* 2's completion reclaims 0 and 1: every use released. */
	ring_complete(e, slot, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, atomic_read(&a.users), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&b.users), 0);
	KUNIT_EXPECT_EQ(test, e->q.hit_users, 0U);

	/* b the hit now, a listed; a refused post's claims undone. */
	ring_claim_use(e, 3, false, &b);
	ring_claim_use(e, 4, false, &a);
	ring_claim_use(e, 5, false, &b);
	KUNIT_EXPECT_PTR_EQ(test, e->q.hit, &b);
	KUNIT_EXPECT_EQ(test, atomic_read(&a.users), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&b.users), 1);
	ibpost_test_ring_unclaim(&e->q, 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&a.users), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&b.users), 1);
	KUNIT_EXPECT_EQ(test, e->q.hit_users, 1U);

	/* What is left comes back flushed, its uses released. */
	ring_claim_use(e, 6, false, &a);
	ibpost_test_ring_flush(&e->q);
	KUNIT_EXPECT_EQ(test, atomic_read(&a.users), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&b.users), 0);
	KUNIT_EXPECT_EQ(test, e->q.hit_users, 0U);
	KUNIT_EXPECT_EQ(test, ring_in_use(e), 0U);
	KUNIT_EXPECT_EQ(test, e->calls, 1 + 2);
	KUNIT_EXPECT_EQ(test, e->flushed, 2);
	KUNIT_EXPECT_EQ(test, e->dups, 0);
}

/* The provider stand-in's record of one WR it took. */
struct ring_rec {
	u64 wr_id;
	int flags;
	struct ib_cqe *cqe;
};

#define RING_STAGE	4
#define RING_PREFIX_ID	100

/*
 * What the stand-in provider does (under the queue's lock, interrupts
 * off: it only records): takes WR after WR, and refuses the one whose
 * id is @refuse_id, naming it in *bad, or naming none (@refuse_name 1),
 * or naming a WR that is none of the chain's (@refuse_name 2), or
 * leaving *bad as it was (@refuse_name 3: a provider that names none by
 * not writing it), with
 * @refuse_err (else -EIO), only once if @refuse_once. A copy's id is its
 * slot's context (the caller's wr_id: the copy carries the slot's wr_cqe
 * in its place); @pre's is RING_PREFIX_ID.
 */
struct ring_fake {
	struct ibpost_queue *q;
	struct ring_rec rec[32];
	int nrec, calls, failed, failed_taken;
	u64 refuse_id;
	int refuse_name, refuse_err;
	bool refuse_once;
	struct ib_send_wr foreign;
	struct ib_recv_wr rforeign;
	const struct ib_send_wr *pre;
	union ibpost_send_copy copies[RING_STAGE];
	const void *wrs[RING_STAGE];
	struct ib_send_wr *prefix[RING_STAGE];
};

static struct ring_fake *ring_fake_of(struct ib_qp *ibqp)
{
	return ibqp->qp_context;
}

static int ring_fake_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			       const struct ib_send_wr **bad)
{
	struct ring_fake *f = ring_fake_of(ibqp);

	f->calls++;
	for (; wr; wr = wr->next) {
		u64 id = wr == f->pre ? RING_PREFIX_ID :
			 (uintptr_t)container_of(wr->wr_cqe, struct ibpost_slot,
						 cqe)->context;

		if (f->refuse_id && id == f->refuse_id) {
			if (f->refuse_name != 3)
				*bad = f->refuse_name == 2 ? &f->foreign :
				       f->refuse_name ? NULL : wr;
			if (f->refuse_once)
				f->refuse_id = 0;
			return f->refuse_err ?: -EIO;
		}
		if ((size_t)f->nrec < ARRAY_SIZE(f->rec)) {
			f->rec[f->nrec].wr_id = id;
			f->rec[f->nrec].flags = wr->send_flags;
			f->rec[f->nrec].cqe = wr->wr_cqe;
		}
		f->nrec++;
	}
	return 0;
}

/* The same for receives, which have no prefix and record no flags. */
static int ring_fake_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad)
{
	struct ring_fake *f = ring_fake_of(ibqp);

	f->calls++;
	for (; wr; wr = wr->next) {
		u64 id = (uintptr_t)container_of(wr->wr_cqe, struct ibpost_slot,
						 cqe)->context;

		if (f->refuse_id && id == f->refuse_id) {
			*bad = f->refuse_name == 2 ? &f->rforeign :
			       f->refuse_name ? NULL : wr;
			return -EIO;
		}
		if ((size_t)f->nrec < ARRAY_SIZE(f->rec)) {
			f->rec[f->nrec].wr_id = id;
			f->rec[f->nrec].cqe = wr->wr_cqe;
		}
		f->nrec++;
	}
	return 0;
}

/* The client's ops: counts what the ring tells of prefixed slots. */
static void ring_fake_slot_failed(struct ibpost_queue *q,
				  struct ibpost_slot *slot, bool prefix_taken)
{
	struct ring_fake *f = ring_fake_of(q->rqp->ibqp);

	f->failed++;
	f->failed_taken += prefix_taken;
}

static void ring_fake_send_succeeded(struct ibpost_queue *q, u32 pos)
{
}

static const struct ibpost_ring_ops ring_fake_ops = {
	.slot_failed = ring_fake_slot_failed,
	.send_succeeded = ring_fake_send_succeeded,
};

/* The flush worker of a QP in ERR, for the ring's queue alone. */
static void ring_fake_flush_work(struct work_struct *work)
{
	struct ibpost_ring_qp *rqp = container_of(work, struct ibpost_ring_qp,
						  flush_work);

	ibpost_test_ring_finish_synthetic(ring_fake_of(rqp->ibqp)->q);
}

/*
 * A send queue of ring_env_new() with a stage of RING_STAGE copies, a
 * signal interval of @interval, and the stand-in provider behind it.
 */
static struct ring_fake *ring_fake_new(struct ring_env *e, u32 interval)
{
	struct ring_fake *f = kunit_kzalloc(e->test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(e->test, f);
	f->q = &e->q;
	e->ibqp->qp_context = f;
	e->ibdev->ops.post_send = ring_fake_post_send;
	e->ibdev->ops.post_recv = ring_fake_post_recv;
	e->q.ops = &ring_fake_ops;
	INIT_WORK(&e->rqp.flush_work, ring_fake_flush_work);
	ibpost_test_ring_stage(&e->q, f->copies, f->wrs, f->prefix,
			       RING_STAGE, interval);
	return f;
}

/* A chain of @n unsignaled SENDs, wr_id 1 to @n. */
static void ring_chain(struct ib_send_wr *wr, int n)
{
	int i;

	memset(wr, 0, n * sizeof(*wr));
	for (i = 0; i < n; i++) {
		wr[i].wr_id = i + 1;
		wr[i].opcode = IB_WR_SEND;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
}

/* The slot the stand-in's record @i was posted from. */
static struct ibpost_slot *ring_rec_slot(struct ring_fake *f, int i)
{
	return container_of(f->rec[i].cqe, struct ibpost_slot, cqe);
}

/*
 * The signal policy: one-WR unsignaled posts with a signal interval of
 * 4 reach the provider signaled every fourth WR (forced, counted, never
 * shown), each with its slot's ib_cqe; a forced signal's completion
 * reclaims the three before it.
 */
static void ibpost_ring_submit_signal_interval(struct kunit *test)
{
	struct ring_env *e = ring_env_new(test, true, true, 0);
	struct ring_fake *f = ring_fake_new(e, 4);
	struct ib_send_wr wr[12];
	int i;

	ring_chain(wr, 12);
	for (i = 0; i < 12; i++) {
		wr[i].next = NULL;
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_test_ring_post_send(&e->q, &wr[i], NULL,
							   NULL));
	}
	KUNIT_ASSERT_EQ(test, f->nrec, 12);
	KUNIT_EXPECT_EQ(test, f->calls, 12);
	for (i = 0; i < 12; i++) {
		KUNIT_EXPECT_EQ(test, f->rec[i].wr_id, (u64)i + 1);
		KUNIT_EXPECT_EQ_MSG(test,
				    !!(f->rec[i].flags & IB_SEND_SIGNALED),
				    i % 4 == 3, "WR %d", i);
		KUNIT_EXPECT_PTR_EQ(test, f->rec[i].cqe,
				    &e->q.slots[i & e->q.mask].cqe);
	}
	KUNIT_EXPECT_EQ(test, e->q.stats.forced_signals, 3ULL);
	KUNIT_EXPECT_EQ(test, e->q.stats.posted, 12ULL);
	KUNIT_EXPECT_EQ(test, ring_in_use(e), 12U);
	ring_complete(e, ring_rec_slot(f, 3), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, ring_in_use(e), 8U);
	ring_complete(e, ring_rec_slot(f, 7), IB_WC_SUCCESS);
	ring_complete(e, ring_rec_slot(f, 11), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, ring_in_use(e), 0U);
	KUNIT_EXPECT_EQ(test, e->q.stats.completed, 12ULL);
	KUNIT_EXPECT_EQ(test, e->calls, 0);
}

/*
 * A chain of six in batches of four, the provider refusing WR k (naming
 * it, naming none, or naming a WR not in the chain): the post returns
 * its error, bad_wr names the caller's WR from which nothing is queued
 * (k, or the first of k's batch when the provider names none of the
 * batch's WRs), exactly the WRs before it are queued and
 * counted, in order, the provider is not called after the refusal, and
 * each queued context comes back once at the flush.
 */
static void ibpost_ring_submit_refusal_maps_bad_wr(struct kunit *test)
{
	struct ib_send_wr wr[6];
	const struct ib_send_wr *bad;
	static const char * const named[] = { "it", "none", "another WR" };
	int k, name, i;

	for (name = 0; name < 3; name++) {
		for (k = 0; k < 6; k++) {
			struct ring_env *e = ring_env_new(test, true, true, 0);
			struct ring_fake *f = ring_fake_new(e, 15);
			int queued = name ? k / RING_STAGE * RING_STAGE : k;

			ring_chain(wr, 6);
			f->refuse_id = k + 1;
			f->refuse_name = name;
			KUNIT_EXPECT_EQ(test, -EIO,
					ibpost_test_ring_post_send(&e->q, wr,
								   NULL, &bad));
			KUNIT_EXPECT_PTR_EQ_MSG(test, bad,
						(const struct ib_send_wr *)&wr[queued],
						"refused at %d, named %s", k,
						named[name]);
			KUNIT_EXPECT_EQ(test, f->calls, 1 + (k >= RING_STAGE));
			KUNIT_EXPECT_EQ(test, e->q.stats.posted, (u64)queued);
			KUNIT_EXPECT_EQ(test, e->q.provider_errors, 1U);
			KUNIT_EXPECT_EQ(test, ring_in_use(e), (u32)queued);
			KUNIT_EXPECT_EQ(test, e->q.since_signal, (u32)queued);
			for (i = 0; i < queued; i++)
				KUNIT_EXPECT_EQ(test, f->rec[i].wr_id,
						(u64)i + 1);
			ibpost_test_ring_flush(&e->q);
			KUNIT_EXPECT_EQ(test, e->flushed, queued);
			KUNIT_EXPECT_EQ(test, e->dups, 0);
		}
	}
}

/*
 * The provider's bad_wr lives with the queue, NULL between posts: a
 * refusal naming WR 2 of a chain of six, then, reposted from *bad_wr,
 * a refusal of its batch (WRs 3 to 6) by a provider that does not write
 * bad_wr at all. The second is taken as nothing of its batch queued
 * (bad_wr the repost's first WR, still 2 posted), not as a refusal at
 * the first one's stale position (the stage's third copy, WR 5).
 */
static void ibpost_ring_submit_refusal_bad_wr_not_stale(struct kunit *test)
{
	struct ring_env *e = ring_env_new(test, true, true, 0);
	struct ring_fake *f = ring_fake_new(e, 15);
	const struct ib_send_wr *bad;
	struct ib_send_wr wr[6];

	ring_chain(wr, 6);
	f->refuse_id = 3;
	KUNIT_EXPECT_EQ(test, -EIO,
			ibpost_test_ring_post_send(&e->q, wr, NULL, &bad));
	KUNIT_ASSERT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr[2]);
	KUNIT_EXPECT_EQ(test, e->q.stats.posted, 2ULL);

	f->refuse_id = 5;
	f->refuse_name = 3;
	KUNIT_EXPECT_EQ(test, -EIO,
			ibpost_test_ring_post_send(&e->q, bad, NULL, &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr[2]);
	KUNIT_EXPECT_EQ(test, f->calls, 2);
	KUNIT_EXPECT_EQ(test, e->q.stats.posted, 2ULL);
	KUNIT_EXPECT_EQ(test, e->q.provider_errors, 2U);
	KUNIT_EXPECT_EQ(test, ring_in_use(e), 2U);
	ibpost_test_ring_flush(&e->q);
	KUNIT_EXPECT_EQ(test, e->flushed, 2);
	KUNIT_EXPECT_EQ(test, e->dups, 0);
}

/*
 * The same for a receive chain of six, which the receive queue stages in
 * copies of its own: refused at WR k (named, not named, or named by a WR
 * that is none of the chain's), bad_wr names the caller's WR from which
 * nothing is queued; with no refusal (k 6) all six are queued in two
 * provider calls and the post returns 0.
 */
static void ibpost_ring_submit_recv_refusal_maps_bad_wr(struct kunit *test)
{
	struct ib_recv_wr wr[6];
	const struct ib_recv_wr *bad;
	static const char * const named[] = { "it", "none", "another WR" };
	int k, name, i;

	for (name = 0; name < 3; name++) {
		for (k = 0; k <= 6; k++) {
			struct ring_env *e = ring_env_new(test, false, true, 0);
			struct ring_fake *f = ring_fake_new(e, 1);
			int queued = k == 6 ? 6 :
				     name ? k / RING_STAGE * RING_STAGE : k;

			memset(wr, 0, sizeof(wr));
			for (i = 0; i < 6; i++) {
				wr[i].wr_id = i + 1;
				wr[i].next = i < 5 ? &wr[i + 1] : NULL;
			}
			f->refuse_id = k + 1;
			f->refuse_name = name;
			bad = &f->rforeign;
			KUNIT_EXPECT_EQ(test, k == 6 ? 0 : -EIO,
					ibpost_test_ring_post_recv(&e->q, wr,
								   &bad));
			KUNIT_EXPECT_PTR_EQ_MSG(test, bad,
						k == 6 ? NULL :
						(const struct ib_recv_wr *)&wr[queued],
						"refused at %d, named %s", k,
						named[name]);
			KUNIT_EXPECT_EQ(test, f->calls,
					1 + (k >= RING_STAGE));
			KUNIT_EXPECT_EQ(test, e->q.stats.posted, (u64)queued);
			KUNIT_EXPECT_EQ(test, e->q.provider_errors,
					k == 6 ? 0U : 1U);
			KUNIT_EXPECT_EQ(test, ring_in_use(e), (u32)queued);
			/* The stand-in took those before k: not named, lost. */
			if (!name || k == 6)
				KUNIT_EXPECT_EQ(test, f->nrec, queued);
			for (i = 0; i < queued; i++)
				KUNIT_EXPECT_PTR_EQ(test, f->rec[i].cqe,
						    &e->q.slots[i].cqe);
			ibpost_test_ring_flush(&e->q);
			KUNIT_EXPECT_EQ(test, e->flushed, queued);
			KUNIT_EXPECT_EQ(test, e->dups, 0);
		}
	}
}

/*
 * A client's prefix WR before the chain's second WR: given to the
 * provider first, its WR's slot prefixed. The provider refusing the WR
 * behind a prefix it took: the client hears of it once (prefix taken);
 * refusing the prefix: the WR is not queued and the client hears
 * nothing. bad_wr names the caller's WR either way, never the prefix.
 * A provider that refuses the WR behind the prefix naming none of the
 * chain's WRs (NULL, or one not in it): nothing is taken as queued,
 * bad_wr names the chain's head, and the client hears of its prefix as
 * possibly taken.
 */
static void ibpost_ring_submit_prefix(struct kunit *test)
{
	struct ib_send_wr wr[3], pre;
	const struct ib_send_wr *bad;
	int refuse;

	for (refuse = 0; refuse < 5; refuse++) {
		struct ring_env *e = ring_env_new(test, true, true, 0);
		struct ring_fake *f = ring_fake_new(e, 15);
		struct ib_send_wr *prefix[3] = { NULL, &pre, NULL };
		int ret;

		ring_chain(wr, 3);
		memset(&pre, 0, sizeof(pre));
		pre.opcode = IB_WR_LOCAL_INV;
		f->pre = &pre;
		f->refuse_id = refuse == 2 ? RING_PREFIX_ID : refuse ? 2 : 0;
		f->refuse_name = refuse > 2 ? refuse - 2 : 0;
		ret = ibpost_test_ring_post_send(&e->q, wr, prefix, &bad);
		if (!refuse) {
			KUNIT_EXPECT_EQ(test, ret, 0);
			KUNIT_ASSERT_EQ(test, f->nrec, 4);
			KUNIT_EXPECT_EQ(test, f->rec[1].wr_id,
					(u64)RING_PREFIX_ID);
			KUNIT_EXPECT_EQ(test, f->rec[2].wr_id, 2ULL);
			KUNIT_EXPECT_TRUE(test, e->q.slots[1].prefixed);
			KUNIT_EXPECT_FALSE(test, e->q.slots[2].prefixed);
			KUNIT_EXPECT_EQ(test, e->q.stats.posted, 3ULL);
			KUNIT_EXPECT_EQ(test, f->failed, 0);
			continue;
		}
		KUNIT_EXPECT_EQ(test, ret, -EIO);
		if (refuse > 2) {
			KUNIT_EXPECT_PTR_EQ(test, bad,
					    (const struct ib_send_wr *)&wr[0]);
			KUNIT_EXPECT_EQ(test, e->q.stats.posted, 0ULL);
			KUNIT_EXPECT_EQ(test, f->nrec, 2);
			KUNIT_EXPECT_EQ_MSG(test, f->failed_taken, 1,
					    "refused naming %s",
					    refuse == 3 ? "none" : "a foreign WR");
			KUNIT_EXPECT_EQ(test, f->failed, 1);
			continue;
		}
		KUNIT_EXPECT_PTR_EQ(test, bad,
				    (const struct ib_send_wr *)&wr[1]);
		KUNIT_EXPECT_EQ(test, e->q.stats.posted, 1ULL);
		KUNIT_EXPECT_EQ(test, f->nrec, refuse == 1 ? 2 : 1);
		KUNIT_EXPECT_EQ_MSG(test, f->failed, refuse == 1 ? 1 : 0,
				    "refused at the %s", refuse == 1 ?
				    "prefixed WR" : "prefix");
		KUNIT_EXPECT_EQ(test, f->failed_taken, f->failed);
	}
}

/*
 * An iWARP provider refuses a post with -ENOTCONN, once, as siw does
 * while its state lock is busy. Refused at the prefix (nothing taken),
 * the post is tried again and queued whole, its prefix first. Refused
 * at the WR behind a prefix it took, or naming no WR (the prefix taken,
 * as far as ibpost knows), the client has heard of its prefix as taken:
 * the WR is not tried again (it would go without its prefix); the
 * connection is taken for ending and ibpost flushes it, once.
 */
static void ibpost_ring_submit_iwarp_busy_retry(struct kunit *test)
{
	static const char * const how[] = { "the prefix", "the WR", "none" };
	struct ib_send_wr wr, pre;
	const struct ib_send_wr *bad;
	int row;

	for (row = 0; row < 3; row++) {
		struct ring_env *e = ring_env_new(test, true, true, 0);
		struct ring_fake *f = ring_fake_new(e, 1);
		struct ib_send_wr *prefix[1] = { &pre };
		int ret;

		e->rqp.iwarp = true;
		ring_chain(&wr, 1);
		memset(&pre, 0, sizeof(pre));
		pre.opcode = IB_WR_REG_MR;
		f->pre = &pre;
		f->refuse_id = row ? 1 : RING_PREFIX_ID;
		f->refuse_name = row == 2;
		f->refuse_err = -ENOTCONN;
		f->refuse_once = true;
		ret = ibpost_test_ring_post_send(&e->q, &wr, prefix, &bad);
		flush_work(&e->rqp.flush_work);
		KUNIT_EXPECT_EQ_MSG(test, ret, 0, "refused at %s", how[row]);
		KUNIT_EXPECT_EQ_MSG(test, f->calls, row ? 1 : 2,
				    "refused at %s: tried again?", how[row]);
		KUNIT_EXPECT_EQ(test, f->failed_taken, row ? 1 : 0);
		/* Never a READ without its prefix: the last record is it. */
		if (!row) {
			KUNIT_ASSERT_EQ(test, f->nrec, 2);
			KUNIT_EXPECT_EQ(test, f->rec[0].wr_id,
					(u64)RING_PREFIX_ID);
			KUNIT_EXPECT_EQ(test, f->rec[1].wr_id, 1ULL);
			KUNIT_EXPECT_EQ(test, e->flushed, 0);
		} else {
			KUNIT_EXPECT_EQ(test, f->nrec, 1);
			KUNIT_EXPECT_EQ(test, f->rec[0].wr_id,
					(u64)RING_PREFIX_ID);
			KUNIT_EXPECT_EQ(test, e->calls, 1);
			KUNIT_EXPECT_EQ(test, e->flushed, 1);
		}
		KUNIT_EXPECT_EQ(test, e->dups, 0);
	}
}

/*
 * Posted while the QP is in ERR: nothing reaches the provider; the flush
 * worker returns each context once, flushed.
 */
static void ibpost_ring_submit_in_err_flushes(struct kunit *test)
{
	struct ring_env *e = ring_env_new(test, true, true, 0);
	struct ring_fake *f = ring_fake_new(e, 15);
	struct ib_send_wr wr[3];

	ring_chain(wr, 3);
	WRITE_ONCE(e->rqp.state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, 0,
			ibpost_test_ring_post_send(&e->q, wr, NULL, NULL));
	flush_work(&e->rqp.flush_work);
	KUNIT_EXPECT_EQ(test, f->calls, 0);
	KUNIT_EXPECT_EQ(test, e->calls, 3);
	KUNIT_EXPECT_EQ(test, e->flushed, 3);
	KUNIT_EXPECT_EQ(test, e->dups, 0);
	KUNIT_EXPECT_EQ(test, ring_in_use(e), 0U);
}

static struct kunit_case ibpost_ring_cases[] = {
	KUNIT_CASE(ibpost_ring_wraps_at_u32),
	KUNIT_CASE(ibpost_ring_error_returns_unsignaled),
	KUNIT_CASE(ibpost_ring_parks_without_callback),
	KUNIT_CASE(ibpost_ring_exactly_once_under_flush),
	KUNIT_CASE(ibpost_ring_uses_released_once),
	KUNIT_CASE(ibpost_ring_submit_signal_interval),
	KUNIT_CASE(ibpost_ring_submit_refusal_maps_bad_wr),
	KUNIT_CASE(ibpost_ring_submit_refusal_bad_wr_not_stale),
	KUNIT_CASE(ibpost_ring_submit_recv_refusal_maps_bad_wr),
	KUNIT_CASE(ibpost_ring_submit_prefix),
	KUNIT_CASE(ibpost_ring_submit_iwarp_busy_retry),
	KUNIT_CASE(ibpost_ring_submit_in_err_flushes),
	{}
};

static struct kunit_suite ibpost_ring_suite = {
	.name = "ibpost_ring",
	.test_cases = ibpost_ring_cases,
};

kunit_test_suites(&ibpost_ring_suite);
