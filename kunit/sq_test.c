// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_sq: send queue accounting. The SQ never overflows, forced
 * signals keep unsignaled streams reclaimable and stay invisible, and
 * every signaled context comes back exactly once. White-box where the
 * slot count is checked.
 */
#include <linux/module.h>
#include <linux/delay.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include "ibpost_test.h"
#include "gate.h"
#include "../drivers/ibpost_test_access.h"

static struct ibpost_test_pair *sq_pair_ctx(struct kunit *test, u32 interval,
					    enum ib_poll_context ctx)
{
	struct ibpost_qp_attr attr;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_wr = 16;
	attr.signal_interval = interval;
	attr.poll_ctx = ctx;
	return ibpost_test_pair(test, &attr);
}

static struct ibpost_test_pair *sq_pair(struct kunit *test, u32 interval)
{
	return sq_pair_ctx(test, interval, IB_POLL_SOFTIRQ);
}

static int sq_write(struct ibpost_test_pair *p, void *ctx, int flags)
{
	return ibpost_post_write(p->a, ctx, p->abuf.buf, 8, p->abuf.mr, flags,
				 ibpost_mr_remote_addr(p->bw.mr),
				 ibpost_mr_rkey(p->bw.mr));
}

static void sq_check_comp(struct kunit *test, struct ibpost_comp *comp)
{
	KUNIT_EXPECT_EQ(test, 0UL, ((unsigned long)comp->context - 1000) % 97);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp->status);
}

static void ibpost_sq_unsignaled_stream_never_overflows(struct kunit *test)
{
	struct ibpost_test_pair *p = sq_pair(test, 4);
	int i, ret, full = 0, other = 0, asked = 0, got = 0;
	struct ibpost_test_queue tq;
	struct ibpost_comp comp;

	/*
	 * Far more WRs than the depth; every 97th asks for a completion.
	 * Completions not yet taken hold their slot (as with verbs, where an
	 * unpolled CQE holds its SQ entry): take them while waiting for room.
	 */
	for (i = 0; i < 2000; i++) {
		int flags = i % 97 == 0 ? IB_SEND_SIGNALED : 0;

		while ((ret = sq_write(p, CTX(1000 + i), flags)) == -ENOMEM) {
			full++;
			while (ibpost_get_send_comp(p->a, &comp, 0) == 1) {
				sq_check_comp(test, &comp);
				got++;
			}
			usleep_range(50, 100);
		}
		if (ret)
			other++;
		asked += !ret && flags;
		KUNIT_ASSERT_LE(test, ibpost_test_in_use(p->a, true),
				p->got.max_send_wr);
	}
	KUNIT_EXPECT_EQ(test, 0, other);
	while (got < asked && ibpost_get_send_comp(p->a, &comp, 5 * HZ) == 1) {
		sq_check_comp(test, &comp);
		got++;
	}
	KUNIT_EXPECT_EQ(test, asked, got);
	/* ibpost's count kept the provider from ever refusing a post. */
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, 0U, tq.provider_errors);
	/*
	 * One signaled WR at the end reclaims every slot before it. The last
	 * WRs of the stream may still be in flight (with two CPUs the poster
	 * can run ahead of the provider): wait for room as any poster does.
	 */
	for (i = 0; (ret = sq_write(p, CTX(1), IB_SEND_SIGNALED)) == -ENOMEM &&
	     i < 1000; i++)
		usleep_range(100, 200);
	KUNIT_ASSERT_EQ(test, 0, ret);
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, 0U, tq.head - tq.tail);
	KUNIT_EXPECT_EQ(test, p->got.max_send_wr, tq.depth);
	kunit_info(test, "2000 WRs on a %u-deep SQ, -ENOMEM %d times, all reclaimed",
		   p->got.max_send_wr, full);
}

static void ibpost_sq_forces_signal_every_interval(struct kunit *test)
{
	struct ibpost_test_pair *p = sq_pair(test, 4);
	struct ib_rdma_wr wr[8] = {};
	const struct ib_send_wr *bad;
	struct ibpost_test_queue tq;
	struct ibpost_test_slot ts;
	struct ibpost_comp comp;
	struct ib_sge sge;
	u32 i;

	KUNIT_ASSERT_EQ(test, 4U, p->got.signal_interval);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 8,
					       &sge));
	for (i = 0; i < 8; i++) {
		wr[i].wr.wr_id = i;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.sg_list = &sge;
		wr[i].wr.num_sge = 1;
		wr[i].wr.next = i < 7 ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = ibpost_mr_remote_addr(p->bw.mr);
		wr[i].rkey = ibpost_mr_rkey(p->bw.mr);
	}
	wr[5].wr.send_flags = IB_SEND_SIGNALED;
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, &wr[0].wr, &bad));
	/*
	 * 0..3: the 4th is forced; 4, 5 (asked), then 6..9 would force the
	 * 9th: in this chain only slots 3 and 5 are signaled.
	 */
	for (i = 0; i < 8; i++) {
		ibpost_test_send_slot(p->a, tq.head + i, &ts);
		KUNIT_EXPECT_EQ_MSG(test, i == 3 || i == 5, ts.signaled,
				    "slot %u", i);
	}
	/* Only the caller's signaled WR is shown. */
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(5), comp.context);
	ibpost_test_no_send_comp(test, p->a);
}

#define MIXED_WRS 600

static void ibpost_sq_mixed_chains_contexts_once(struct kunit *test)
{
	struct ibpost_test_pair *p = sq_pair(test, 8);
	struct ib_rdma_wr wr[8] = {};
	const struct ib_send_wr *bad;
	struct rnd_state rnd;
	unsigned long *seen;
	struct ibpost_comp comp;
	struct ib_sge sge;
	int posted = 0, signaled = 0, got = 0, dups = 0, ret, i, n;

	seen = kunit_kcalloc(test, BITS_TO_LONGS(MIXED_WRS), sizeof(long),
			     GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	prandom_seed_state(&rnd, 0x1b905);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 64,
					       &sge));
	while (posted < MIXED_WRS) {
		n = min_t(int, 1 + prandom_u32_state(&rnd) % 8,
			  MIXED_WRS - posted);
		for (i = 0; i < n; i++) {
			wr[i].wr.wr_id = posted + i;
			wr[i].wr.opcode = IB_WR_RDMA_WRITE;
			wr[i].wr.sg_list = &sge;
			wr[i].wr.num_sge = 1;
			wr[i].wr.send_flags = prandom_u32_state(&rnd) & 1 ?
					      IB_SEND_SIGNALED : 0;
			wr[i].wr.next = i + 1 < n ? &wr[i + 1].wr : NULL;
			wr[i].remote_addr = ibpost_mr_remote_addr(p->bw.mr);
			wr[i].rkey = ibpost_mr_rkey(p->bw.mr);
		}
		bad = &wr[0].wr;
		do {
			ret = ibpost_post_send_list(p->a, bad, &bad);
			/* Take completions while waiting for room. */
			while (ibpost_get_send_comp(p->a, &comp, 0) == 1) {
				got++;
				if (__test_and_set_bit((unsigned long)comp.context,
						       seen))
					dups++;
			}
		} while (ret == -ENOMEM);
		KUNIT_ASSERT_EQ(test, 0, ret);
		for (i = 0; i < n; i++)
			signaled += !!(wr[i].wr.send_flags & IB_SEND_SIGNALED);
		posted += n;
	}
	while (got < signaled &&
	       ibpost_get_send_comp(p->a, &comp, 5 * HZ) == 1) {
		got++;
		if (__test_and_set_bit((unsigned long)comp.context, seen))
			dups++;
	}
	KUNIT_EXPECT_EQ(test, signaled, got);
	KUNIT_EXPECT_EQ(test, 0, dups);
	KUNIT_EXPECT_EQ(test, signaled, (int)bitmap_weight(seen, MIXED_WRS));
	ibpost_test_no_send_comp(test, p->a);
}

/* Chain @n WRITEs of @wr from @first on, @signaled (if < @n) asked for. */
static void sq_chain(struct ibpost_test_pair *p, struct ib_rdma_wr *wr,
		     struct ib_sge *sge, u32 n, u32 first, u32 signaled)
{
	u32 i;

	memset(wr, 0, n * sizeof(*wr));
	for (i = 0; i < n; i++) {
		wr[i].wr.wr_id = (uintptr_t)CTX(first + i);
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.sg_list = sge;
		wr[i].wr.num_sge = 1;
		wr[i].wr.send_flags = i == signaled ? IB_SEND_SIGNALED : 0;
		wr[i].wr.next = i + 1 < n ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = ibpost_mr_remote_addr(p->bw.mr);
		wr[i].rkey = ibpost_mr_rkey(p->bw.mr);
	}
}

/*
 * Filling the ring is signaled only when slots run low with more than
 * half the ring unsignaled behind the last signal: a poster that fills
 * it while signaling every few WRs itself (a streaming ULP) costs no
 * completion of its own, and a full ring always holds a signaled WR.
 * DIRECT: no completion is taken before the case polls, so the full ring
 * is seen full (a CQ's own poll may otherwise reclaim it at once).
 */
static void ibpost_sq_full_ring_signals_when_slots_run_low(struct kunit *test)
{
	struct ibpost_test_pair *p = sq_pair_ctx(test, 1U << 20,
						 IB_POLL_DIRECT);
	u32 depth = p->got.max_send_wr, i;
	struct ibpost_test_queue before, tq;
	const struct ib_send_wr *bad;
	unsigned long deadline;
	struct ibpost_test_slot ts;
	struct ibpost_comp comp;
	struct ib_rdma_wr *wr;
	struct ib_sge sge;

	KUNIT_ASSERT_EQ(test, depth, p->got.signal_interval);
	KUNIT_ASSERT_GE(test, depth, 8U);
	wr = kunit_kcalloc(test, depth, sizeof(*wr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wr);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 8,
					       &sge));
	ibpost_test_queue_get(p->a, true, &before);
	KUNIT_ASSERT_EQ(test, 0U, before.head - before.tail);

	/* The whole ring, the last but one asked for: nothing forced. */
	sq_chain(p, wr, &sge, depth, 100, depth - 2);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, &wr[0].wr, &bad));
	for (i = 0; i < depth; i++) {
		ibpost_test_send_slot(p->a, before.head + i, &ts);
		KUNIT_EXPECT_EQ_MSG(test, i == depth - 2, ts.signaled,
				    "slot %u", i);
	}
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, before.forced_signals, tq.forced_signals);
	KUNIT_EXPECT_EQ(test, -ENOMEM, sq_write(p, CTX(1), 0));
	/* Its completion reclaims every slot but the last. */
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(100 + depth - 2), comp.context);
	KUNIT_EXPECT_EQ(test, 1U, ibpost_test_in_use(p->a, true));

	/*
	 * Fill it again, the second WR asked for: the last would leave
	 * depth - 3 unsignaled behind it, more than half the ring, below the
	 * interval. It is forced, and its completion empties the ring.
	 */
	sq_chain(p, wr, &sge, depth - 1, 200, 1);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, &wr[0].wr, &bad));
	for (i = 0; i < depth - 1; i++) {
		ibpost_test_send_slot(p->a, before.head + depth + i, &ts);
		KUNIT_EXPECT_EQ_MSG(test, i == 1 || i == depth - 2, ts.signaled,
				    "slot %u", depth + i);
		KUNIT_EXPECT_EQ_MSG(test, i == 1, ts.user_signaled,
				    "slot %u", depth + i);
	}
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, before.forced_signals + 1, tq.forced_signals);
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(201), comp.context);
	deadline = jiffies + 10 * HZ;
	while (ibpost_test_in_use(p->a, true) &&
	       time_before(jiffies, deadline)) {
		ibpost_poll(p->a, 16);
		usleep_range(1000, 2000);
	}
	KUNIT_EXPECT_EQ(test, 0U, ibpost_test_in_use(p->a, true));
	ibpost_test_no_send_comp(test, p->a);
}

/* Take @qp's send completions, counting them and the flushed ones. */
static void sq_take_comps(struct ibpost_qp *qp, long timeout, u32 *got,
			  u32 *flushed)
{
	struct ibpost_comp comp;

	while (ibpost_get_send_comp(qp, &comp, timeout) == 1) {
		(*got)++;
		*flushed += comp.status == IB_WC_WR_FLUSH_ERR;
	}
}

/* An unsignaled 8-byte WRITE from a's @off to the same offset of bw. */
static int sq_write_at(struct ibpost_test_pair *p, void *ctx, size_t off)
{
	return ibpost_post_write(p->a, ctx, (u8 *)p->abuf.buf + off, 8,
				 p->abuf.mr, 0,
				 ibpost_mr_remote_addr(p->bw.mr) + off,
				 ibpost_mr_rkey(p->bw.mr));
}

/* The WRITE to bw's @off has landed (its 8 bytes are abuf's), within 5 s. */
static bool sq_landed(struct ibpost_test_pair *p, size_t off)
{
	unsigned long deadline = jiffies + 5 * HZ;

	while (memcmp((u8 *)p->bw.buf + off, (u8 *)p->abuf.buf + off, 8)) {
		if (time_after(jiffies, deadline))
			return false;
		usleep_range(1000, 2000);
	}
	return true;
}

/*
 * A QP in ERR accepts WRs and flushes each, however many: the unsignaled
 * WRs that succeeded before ERR (no completion comes for them) must not
 * keep the ring full. Posted and flushed three times the depth, twice:
 * again after RESET and back to RTS. The early three are waited for at
 * their destination; those the provider retired before ERR (the case
 * this is about, required at least once) are counted apart from those
 * it flushed.
 */
static void ibpost_sq_err_after_unsignaled_keeps_accepting(struct kunit *test)
{
	struct ibpost_test_pair *p = sq_pair(test, 16);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	u32 depth = p->got.max_send_wr, total = 3 * depth, i, got, flushed;
	u64 completed, reclaimed = 0;
	struct ibpost_test_queue tq;
	unsigned long deadline;
	int round, ret, full;

	ibpost_test_need_ib(test, p->dev,
			    "slots of WRs that succeeded before ERR are reclaimed on IB/RoCE only");
	for (round = 0; round < 2; round++) {
		full = 0;
		got = 0;
		flushed = 0;
		/* A signal first: no forced one among the next three. */
		KUNIT_ASSERT_EQ(test, 0, sq_write(p, CTX(9), IB_SEND_SIGNALED));
		ibpost_test_send_ok(test, p->a, CTX(9));
		ibpost_test_queue_get(p->a, true, &tq);
		completed = tq.completed;
		/* Three WRITEs of bytes their destination does not hold yet. */
		ibpost_test_fill(p->abuf.buf, 256, 0x30 + round);
		ibpost_test_fill(p->bw.buf, 256, 0x40 + round);
		for (i = 0; i < 3; i++)
			KUNIT_ASSERT_EQ(test, 0, sq_write_at(p, CTX(1 + i),
							     64 * (i + 1)));
		/*
		 * Let them land (in order: the last one's bytes tell) and be
		 * acknowledged: retired by the provider, no completion.
		 */
		KUNIT_EXPECT_TRUE_MSG(test, sq_landed(p, 64 * 3),
				      "round %d: the early WRITEs did not land", round);
		msleep(300);
		qa.qp_state = IB_QPS_ERR;
		KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa,
							  IB_QP_STATE));
		deadline = jiffies + 10 * HZ;
		for (i = 0; i < total && time_before(jiffies, deadline); ) {
			ret = sq_write(p, CTX(100 + i), 0);
			if (ret == -ENOMEM) {
				full++;
				usleep_range(500, 1000);
			} else {
				KUNIT_ASSERT_EQ(test, 0, ret);
				i++;
			}
			sq_take_comps(p->a, 0, &got, &flushed);
		}
		KUNIT_EXPECT_EQ_MSG(test, total, i, "round %d: -ENOMEM %d times",
				    round, full);
		/* Each flushed; the early three too if they had not landed. */
		deadline = jiffies + 10 * HZ;
		while (got < i && time_before(jiffies, deadline))
			sq_take_comps(p->a, HZ / 10, &got, &flushed);
		sq_take_comps(p->a, HZ / 2, &got, &flushed);
		KUNIT_EXPECT_GE(test, got, i);
		KUNIT_EXPECT_LE(test, got, i + 3);
		KUNIT_EXPECT_EQ(test, got, flushed);
		deadline = jiffies + 10 * HZ;
		while (ibpost_test_in_use(p->a, true) &&
		       time_before(jiffies, deadline))
			usleep_range(1000, 2000);
		KUNIT_EXPECT_EQ(test, 0U, ibpost_test_in_use(p->a, true));
		KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(p->abuf.mr));
		/* The early three that were not flushed were reclaimed. */
		ibpost_test_queue_get(p->a, true, &tq);
		KUNIT_EXPECT_EQ(test, 3ULL, tq.completed - completed + got - i);
		reclaimed += tq.completed - completed;
		kunit_info(test, "round %d: %u WRs flushed in ERR on a %u-deep SQ, -ENOMEM %d times, %llu of the early 3 reclaimed",
			   round, i, depth, full, tq.completed - completed);
		if (round)
			break;
		/* Both back to RTS, the peer's PSNs with it. */
		qa.qp_state = IB_QPS_RESET;
		KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa,
							  IB_QP_STATE));
		KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->b, &qa,
							  IB_QP_STATE));
		ibpost_test_connect(test, p->a, p->b, IB_QPS_RTS, 12, 7);
		ibpost_test_connect(test, p->b, p->a, IB_QPS_RTS, 12, 7);
	}
	KUNIT_EXPECT_GT_MSG(test, reclaimed, 0ULL,
			    "no early WR succeeded before ERR in either round: their reclaim went untested");
}

static void ibpost_stats_count_posts_and_completions(struct kunit *test)
{
	struct ibpost_test_pair *p = sq_pair(test, 4);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ibpost_sge many[8];
	struct ibpost_test_queue st;
	struct ibpost_comp comp;
	int i;

	for (i = 0; i < 8; i++) {
		many[i].addr = p->abuf.buf;
		many[i].length = 8;
		many[i].mr = p->abuf.mr;
	}
	KUNIT_ASSERT_LT(test, p->got.max_send_sge, 8U);
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_writev(p->a, NULL, many,
					   p->got.max_send_sge + 1, 0,
					   ibpost_mr_remote_addr(p->bw.mr),
					   ibpost_mr_rkey(p->bw.mr)));
	/* 8 unsignaled (the 4th and 8th forced), then one signaled. */
	for (i = 0; i < 9; i++) {
		int flags = i == 8 ? IB_SEND_SIGNALED : 0;

		KUNIT_ASSERT_EQ(test, 0, sq_write(p, CTX(i), flags));
	}
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(8), comp.context);
	/* Copied under the lock; checked outside (a failure allocates). */
	ibpost_test_queue_get(p->a, true, &st);
	KUNIT_EXPECT_EQ(test, 9ULL, st.posted);
	KUNIT_EXPECT_EQ(test, 9ULL, st.completed);
	KUNIT_EXPECT_EQ(test, 2ULL, st.forced_signals);
	KUNIT_EXPECT_EQ(test, 1ULL, st.refused_einval);
	KUNIT_EXPECT_EQ(test, 0ULL, st.failed);

	/* Receives flushed by ERR are counted as flushed. */
	for (i = 0; i < 2; i++) {
		int ret = ibpost_post_recv(p->b, NULL, p->bbuf.buf, 8,
					   p->bbuf.mr);

		KUNIT_ASSERT_EQ(test, 0, ret);
	}
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->b, &qa, IB_QP_STATE));
	for (i = 0; i < 2; i++)
		ibpost_test_recv_comp(test, p->b, &comp);
	ibpost_test_queue_get(p->b, false, &st);
	KUNIT_EXPECT_EQ(test, 2ULL, st.posted);
	KUNIT_EXPECT_EQ(test, 2ULL, st.flushed);
}

/* RUN_CHAINS chains of RUN_LEN WRITEs; the last one's second WR elsewhere. */
#define RUN_CHAINS 7
#define RUN_LEN 8

/*
 * Chain RUN_LEN WRITEs of 8 bytes, the @c-th chain's: WR i copies the
 * source's bytes at its own offset to the same offset of the peer's
 * buffer; the last WR asks for its completion. @other: the second WR's
 * source is @m2's buffer instead (an MR outside the queue's hit).
 */
static void sq_run_chain(struct kunit *test, struct ibpost_test_pair *p,
			 struct ib_rdma_wr *wr, struct ib_sge *sge, u32 c,
			 struct ibpost_test_buf *m2, bool other)
{
	u32 i;

	memset(wr, 0, RUN_LEN * sizeof(*wr));
	for (i = 0; i < RUN_LEN; i++) {
		u32 off = (c * RUN_LEN + i) * 8;
		bool o = other && i == 1;

		KUNIT_ASSERT_EQ(test, 0,
				ibpost_mr_sge(o ? m2->mr : p->abuf.mr,
					      (o ? m2->buf : p->abuf.buf) +
					      off, 8, &sge[i]));
		wr[i].wr.wr_id = (uintptr_t)CTX(c * RUN_LEN + i + 1);
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].wr.send_flags = i == RUN_LEN - 1 ? IB_SEND_SIGNALED : 0;
		wr[i].wr.next = i + 1 < RUN_LEN ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = ibpost_mr_remote_addr(p->bw.mr) + off;
		wr[i].rkey = ibpost_mr_rkey(p->bw.mr);
	}
}

/*
 * A signaled completion reclaims the run of plain unsignaled WRs behind
 * it at once: with a signal forced every 4 WRs, each chain of 8 is two
 * runs of 3, each reclaimed at once, the hit's counts released with them
 * (no MR keeps a user), every byte written where it belongs. A WR whose
 * SGE is outside the hit breaks its run, which is reclaimed slot by slot,
 * its MR's user released; the next run is whole again. A late completion
 * of a WR reclaimed at once finds it behind the tail: ignored, the ring
 * goes on. A post the provider refuses after a signaled WR breaks the
 * run behind that WR, whose claim came before the refusal, and the run
 * claimed next: both reclaimed slot by slot; the one after is whole.
 */
static void ibpost_sq_runs_reclaimed_at_once(struct kunit *test)
{
	struct ibpost_test_pair *p = sq_pair(test, 4);
	struct ibpost_test_buf *m2 = ibpost_test_buf_new(test, p->dev,
							 IBPOST_TEST_BUF_LEN);
	size_t len = RUN_CHAINS * RUN_LEN * 8;
	struct ib_rdma_wr wr[RUN_LEN];
	struct ib_sge sge[RUN_LEN];
	struct ibpost_test_queue tq0, tq;
	const struct ib_send_wr *bad;
	u8 *want, *canary;
	u32 c, last = 0;
	int i;

	KUNIT_ASSERT_EQ(test, 4U, p->got.signal_interval);
	want = kunit_kmalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	ibpost_test_fill(p->abuf.buf, len, 0x5a17);
	ibpost_test_fill(m2->buf, len, 0x3c0de);
	canary = ibpost_test_canary(test, p->bw.buf + len, 64, 0xca1a);
	memset(p->bw.buf, 0xee, len);
	ibpost_test_queue_get(p->a, true, &tq0);
	for (c = 0; c < RUN_CHAINS; c++) {
		bool other = c == RUN_CHAINS - 1;

		sq_run_chain(test, p, wr, sge, c, m2, other);
		ibpost_test_queue_get(p->a, true, &tq);
		last = tq.head + RUN_LEN - 2;
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, &wr[0].wr,
							       &bad));
		ibpost_test_send_ok(test, p->a, CTX((c + 1) * RUN_LEN));
		ibpost_test_queue_get(p->a, true, &tq);
		KUNIT_EXPECT_EQ_MSG(test, 0U, tq.head - tq.tail, "chain %u", c);
		KUNIT_EXPECT_EQ_MSG(test, (u32)(2 * c + 2 - other),
				    tq.run_reclaims - tq0.run_reclaims,
				    "chain %u", c);
		memcpy(want + c * RUN_LEN * 8, p->abuf.buf + c * RUN_LEN * 8,
		       RUN_LEN * 8);
		if (other)
			memcpy(want + (c * RUN_LEN + 1) * 8,
			       m2->buf + (c * RUN_LEN + 1) * 8, 8);
	}
	KUNIT_EXPECT_EQ(test, (u64)RUN_CHAINS * RUN_LEN,
			tq.completed - tq0.completed);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(p->abuf.mr));
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(m2->mr));
	KUNIT_EXPECT_EQ(test, 0, memcmp(want, p->bw.buf, len));
	ibpost_test_expect_canary(test, p->bw.buf + len, canary, 64);

	/* A late error for an unsignaled WR reclaimed at once: ignored. */
	ibpost_test_replay_comp(p->a, true, last, IB_WC_REM_ACCESS_ERR);
	ibpost_test_no_send_comp(test, p->a);
	tq0 = tq;
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, tq0.completed, tq.completed);
	KUNIT_EXPECT_EQ(test, 0ULL, tq.failed);
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, ibpost_test_qp_state(test, p->a));

	/* The ring goes on, its runs reclaimed at once again. */
	sq_run_chain(test, p, wr, sge, 0, m2, false);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, &wr[0].wr, &bad));
	ibpost_test_send_ok(test, p->a, CTX(RUN_LEN));
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, 0U, tq.head - tq.tail);
	KUNIT_EXPECT_EQ(test, tq0.run_reclaims + 2, tq.run_reclaims);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(p->abuf.mr));

	/* WRs 0-3 queued (3 signaled by the interval), 4-7 refused. */
	tq0 = tq;
	sq_run_chain(test, p, wr, sge, 0, m2, false);
	/* "The provider" refuses this post from WR 4 on, and no other. */
	ibpost_gate(test, IBPOST_HOOK_SUBMIT)->refuse = 5;
	KUNIT_EXPECT_EQ(test, -EIO,
			ibpost_post_send_list(p->a, &wr[0].wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, &wr[4].wr, bad);
	for (i = 0; i < 500 && ibpost_test_in_use(p->a, true); i++)
		usleep_range(1000, 2000);
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, 0U, tq.head - tq.tail);
	KUNIT_EXPECT_EQ(test, tq0.completed + 4, tq.completed);
	KUNIT_EXPECT_EQ(test, tq0.run_reclaims, tq.run_reclaims);
	ibpost_test_no_send_comp(test, p->a);
	/* Its run began before the refusal: slot by slot; then whole. */
	sq_run_chain(test, p, wr, sge, 0, m2, false);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, &wr[0].wr, &bad));
	ibpost_test_send_ok(test, p->a, CTX(RUN_LEN));
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, 0U, tq.head - tq.tail);
	KUNIT_EXPECT_EQ(test, tq0.completed + 4 + RUN_LEN, tq.completed);
	KUNIT_EXPECT_EQ(test, tq0.run_reclaims + 1, tq.run_reclaims);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(p->abuf.mr));
}

static struct kunit_case ibpost_sq_cases[] = {
	KUNIT_CASE(ibpost_stats_count_posts_and_completions),
	KUNIT_CASE(ibpost_sq_unsignaled_stream_never_overflows),
	KUNIT_CASE(ibpost_sq_forces_signal_every_interval),
	KUNIT_CASE(ibpost_sq_full_ring_signals_when_slots_run_low),
	KUNIT_CASE(ibpost_sq_err_after_unsignaled_keeps_accepting),
	KUNIT_CASE(ibpost_sq_mixed_chains_contexts_once),
	KUNIT_CASE(ibpost_sq_runs_reclaimed_at_once),
	{}
};

static struct kunit_suite ibpost_sq_suite = {
	.name = "ibpost_sq",
	.test_cases = ibpost_sq_cases,
};

kunit_test_suites(&ibpost_sq_suite);
