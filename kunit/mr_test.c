// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_mr: registrations are scoped to exactly their buffer and
 * access, revoked by dereg, refused while in use, and refuse what they
 * cannot map.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

static void ibpost_reg_msgs_refuses_vmalloc(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	void *v = vmalloc(2 * PAGE_SIZE);

	KUNIT_ASSERT_NOT_NULL(test, v);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_reg_msgs(p->dev, v,
							       PAGE_SIZE)));
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_reg_write(p->b, v,
								PAGE_SIZE)));
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_reg_msgs(p->dev, NULL,
							       16)));
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_reg_msgs(p->dev,
							       p->abuf.buf, 0)));
	vfree(v);
}

static void ibpost_reg_write_new_rkey_each_time(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_mr *m1, *m2;
	u32 k1;

	m1 = ibpost_reg_write(p->b, p->bbuf.buf, 4096);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, m1);
	k1 = ibpost_mr_rkey(m1);
	KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(m1));
	m2 = ibpost_reg_write(p->b, p->bbuf.buf, 4096);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, m2);
	KUNIT_EXPECT_NE(test, k1, ibpost_mr_rkey(m2));
	KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(m2));
}

static void ibpost_dereg_mr_busy_while_posted(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_test_buf extra;
	struct ibpost_comp comp;

	ibpost_test_buf_init(test, &extra, p->dev, NULL, 512,
			     IBPOST_TEST_MSGS);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1), extra.buf,
						  512, extra.mr));
	KUNIT_EXPECT_EQ(test, -EBUSY, ibpost_dereg_mr(extra.mr));

	/* Once the receive completes, the registration can go. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(2), p->abuf.buf,
						  64, p->abuf.mr, 0));
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	ibpost_test_buf_fini(&extra);
}

/*
 * The window of a dereg that finds users (-EBUSY), held at its hook: the
 * MR is revoked there, under the device's MR lock, until the hook returns
 * and the dereg takes the revocation back. The hook cannot sleep: it
 * spins until the post of the other CPU is seen waiting for that lock
 * (@waited), or BUSY_HOLD_NS.
 */
#define BUSY_HOLD_NS	(5 * NSEC_PER_SEC)

struct busy_hold {
	struct ibpost_mr *mr;
	atomic_t hits;
	struct completion arrived;
	bool posting;	/* the test thread is about to post */
	bool waited;	/* that post was seen waiting for the window */
	bool closed;	/* the window is over (set before the lock is dropped) */
	int ret;	/* the dereg's */
};

static int busy_hold_fn(enum ibpost_hook point, void *obj, void *data)
{
	struct busy_hold *h = data;
	u64 end;

	if (point != IBPOST_HOOK_DEREG_BUSY || obj != h->mr ||
	    atomic_inc_return(&h->hits) != 1)
		return 0;
	complete(&h->arrived);
	end = ktime_get_ns() + BUSY_HOLD_NS;
	while (ktime_get_ns() < end) {
		if (READ_ONCE(h->posting) &&
		    ibpost_test_mr_lock_contended(h->mr)) {
			WRITE_ONCE(h->waited, true);
			break;
		}
		cpu_relax();
	}
	WRITE_ONCE(h->closed, true);
	return 0;
}

static void busy_unhook(void *data)
{
	ibpost_test_set_hook(NULL, NULL);
}

static int busy_dereg_fn(void *arg)
{
	struct busy_hold *h = arg;

	h->ret = ibpost_dereg_mr(h->mr);
	return 0;
}

/*
 * A post that names an MR while a dereg of it is finding that posted WRs
 * still use it (-EBUSY) is not refused: the MR stays registered, so the
 * post waits for the dereg's decision instead of taking the revocation
 * in progress for a dereg done. ibpost_dereg_mr() runs on another CPU and
 * is held in that window while this one posts: the post must start while
 * the window is open, be seen waiting for it, and return after it. The MR
 * is the hit of the posting queue, gone idle (a WRITE from it completed
 * first): a hit found again must not be taken while it is revoked. The
 * WRITE names its MR (a seed operation) or gives an SGE to look up.
 */
static const bool dereg_post_lookup[] = { false, true };

static void dereg_post_desc(const bool *lookup, char *desc)
{
	strscpy(desc, *lookup ? "sge_lookup" : "mr_named",
		KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(dereg_post, dereg_post_lookup, dereg_post_desc);

/* A signaled 64-byte WRITE from a's buffer to b's, as @lookup says. */
static int dereg_post_write(struct ibpost_test_pair *p, void *ctx,
			    bool lookup)
{
	struct ib_rdma_wr wr = {
		.wr.wr_id = (uintptr_t)ctx,
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.num_sge = 1,
		.remote_addr = ibpost_mr_remote_addr(p->bw.mr),
		.rkey = ibpost_mr_rkey(p->bw.mr),
	};
	struct ib_sge sge;

	if (!lookup)
		return ibpost_post_write(p->a, ctx, p->abuf.buf, 64,
					 p->abuf.mr, IB_SEND_SIGNALED,
					 wr.remote_addr, wr.rkey);
	if (ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 64, &sge))
		return -EINVAL;
	wr.wr.sg_list = &sge;
	return ibpost_post_send_list(p->a, &wr.wr, NULL);
}

static void ibpost_mr_post_during_failing_dereg(struct kunit *test)
{
	const bool *lookup = test->param_value;
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	bool arrived, open = false, after = false;
	struct busy_hold *h;
	struct task_struct *t;
	int ret = -1;

	if (num_online_cpus() < 2)
		ibpost_test_skip(test,
				 "needs two CPUs: the dereg holds its window on one while the other posts");
	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	h->mr = p->abuf.mr;
	h->ret = 1;
	atomic_set(&h->hits, 0);
	init_completion(&h->arrived);
	/* The MR becomes the hit of a's send queue, which goes idle. */
	KUNIT_ASSERT_EQ(test, 0, dereg_post_write(p, CTX(3), *lookup));
	ibpost_test_send_ok(test, p->a, CTX(3));
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_mr_users(p->abuf.mr));
	/* A receive in the MR: the dereg finds a user and must fail. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, CTX(2),
						  (u8 *)p->abuf.buf + 4096, 64,
						  p->abuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(busy_hold_fn, h));
	ibpost_test_defer(test, busy_unhook, h);
	t = kthread_create(busy_dereg_fn, h, "ibpost-dereg");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	migrate_disable();
	kthread_bind(t, cpumask_any_but(cpu_online_mask,
					raw_smp_processor_id()));
	wake_up_process(t);
	arrived = wait_for_completion_timeout(&h->arrived, 10 * HZ);
	if (arrived) {
		WRITE_ONCE(h->posting, true);
		open = !READ_ONCE(h->closed);
		ret = dereg_post_write(p, CTX(1), *lookup);
		after = READ_ONCE(h->closed);
	}
	migrate_enable();
	/* Returns once the dereg has: no hook call is left in flight. */
	kthread_stop(t);
	put_task_struct(t);
	KUNIT_ASSERT_TRUE_MSG(test, arrived,
			      "the dereg never reached its -EBUSY window");
	KUNIT_EXPECT_EQ(test, h->ret, -EBUSY);
	KUNIT_EXPECT_TRUE_MSG(test, open,
			      "the window closed before the post began");
	KUNIT_EXPECT_TRUE_MSG(test, READ_ONCE(h->waited),
			      "the post was never seen waiting for the dereg's window");
	KUNIT_EXPECT_TRUE_MSG(test, after,
			      "the post returned before the dereg's decision");
	KUNIT_ASSERT_EQ(test, 0, ret);
	ibpost_test_send_ok(test, p->a, CTX(1));
}

/* One SEND from a, to b's oldest receive: its completion's context. */
static void *hit_send_one(struct kunit *test, struct ibpost_test_pair *p)
{
	struct ibpost_comp comp = {};

	KUNIT_EXPECT_EQ(test, 0, ibpost_post_send(p->a, CTX(9), p->abuf.buf,
						  64, p->abuf.mr, 0));
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	return comp.context;
}

/* Deregister @b's MR, which must have no user left, and free it. */
static void hit_dereg(struct kunit *test, struct ibpost_test_buf *b)
{
	/* Not freed on failure: the deferred release tries again. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_dereg_mr(b->mr));
	kfree(b->buf);
	b->buf = NULL;
}

/* A receive of b into @m1 (64 bytes) and @m2 (64), looked up by SGE. */
static int hit_recv2(struct ibpost_test_pair *p, void *ctx,
		     struct ibpost_test_buf *m1, struct ibpost_test_buf *m2)
{
	struct ib_recv_wr wr = { .wr_id = (uintptr_t)ctx, .num_sge = 0 };
	struct ib_sge sge[2];

	if (ibpost_mr_sge(m1->mr, m1->buf, 64, &sge[wr.num_sge++]))
		return -EINVAL;
	if (m2 && ibpost_mr_sge(m2->mr, m2->buf, 64, &sge[wr.num_sge++]))
		return -EINVAL;
	wr.sg_list = sge;
	return ibpost_post_recv_list(p->b, &wr, NULL);
}

/*
 * A queue counts the SGEs in its hit MR itself, holding one user of the
 * MR for them all, and keeps its hit while any is outstanding; an SGE in
 * another MR meanwhile counts a user of its own. Receives stay posted
 * until a SEND takes them, in order: r1 and r2 in m1 (r1 makes it the
 * hit, r2 is counted in it); r3 in m2 and m1 (m2 counted on m2, m1 in
 * the hit); r4 in m2; then, m1 gone, r5 in m2, which becomes the hit
 * while r3 and r4 are still out. Their completions must release their
 * own users, not the hit's SGEs: m2 stays busy until r5 is done too.
 * Last, r6 takes the hit m2 back after it had no SGE outstanding. Seed
 * operations (the MR named) and SGE lookups alike.
 */
static void ibpost_mr_hit_users_per_queue(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	/* Before the pair: released after its QPs are destroyed. */
	struct ibpost_test_buf *m1 = ibpost_test_buf_new(test, dev, 256);
	struct ibpost_test_buf *m2 = ibpost_test_buf_new(test, dev, 256);
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	int i;

	for (i = 1; i <= 2; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(i),
							  m1->buf, 64, m1->mr));
	KUNIT_ASSERT_EQ(test, 0, hit_recv2(p, CTX(3), m2, m1));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(4), m2->buf, 64,
						  m2->mr));
	/* Three WRs in m1, one user: the queue's. */
	KUNIT_ASSERT_EQ(test, 1, ibpost_test_mr_users(m1->mr));
	KUNIT_ASSERT_EQ(test, 2, ibpost_test_mr_users(m2->mr));
	KUNIT_EXPECT_EQ(test, -EBUSY, ibpost_dereg_mr(m1->mr));
	KUNIT_EXPECT_EQ(test, -EBUSY, ibpost_dereg_mr(m2->mr));

	for (i = 1; i <= 2; i++) {
		KUNIT_EXPECT_PTR_EQ(test, CTX(i), hit_send_one(test, p));
		KUNIT_ASSERT_EQ(test, 1, ibpost_test_mr_users(m1->mr));
	}
	KUNIT_EXPECT_PTR_EQ(test, CTX(3), hit_send_one(test, p));
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_mr_users(m1->mr));
	KUNIT_ASSERT_EQ(test, 1, ibpost_test_mr_users(m2->mr));
	hit_dereg(test, m1);

	KUNIT_ASSERT_EQ(test, 0, hit_recv2(p, CTX(5), m2, NULL));
	KUNIT_ASSERT_EQ(test, 2, ibpost_test_mr_users(m2->mr));
	KUNIT_EXPECT_PTR_EQ(test, CTX(4), hit_send_one(test, p));
	KUNIT_ASSERT_EQ(test, 1, ibpost_test_mr_users(m2->mr));
	KUNIT_EXPECT_EQ(test, -EBUSY, ibpost_dereg_mr(m2->mr));
	KUNIT_EXPECT_PTR_EQ(test, CTX(5), hit_send_one(test, p));
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_mr_users(m2->mr));

	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(6), m2->buf, 64,
						  m2->mr));
	KUNIT_ASSERT_EQ(test, 1, ibpost_test_mr_users(m2->mr));
	KUNIT_EXPECT_PTR_EQ(test, CTX(6), hit_send_one(test, p));
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_mr_users(m2->mr));
	hit_dereg(test, m2);
}

/* One RDMA op from a to b; returns its completion status. */
static enum ib_wc_status ibpost_test_rdma(struct kunit *test,
					  struct ibpost_test_pair *p,
					  bool read, size_t len, u64 raddr,
					  u32 rkey)
{
	struct ibpost_comp comp;
	int ret;

	if (read)
		ret = ibpost_post_read(p->a, CTX(1), p->abuf.buf, len,
				       p->abuf.mr, IB_SEND_SIGNALED, raddr, rkey);
	else
		ret = ibpost_post_write(p->a, CTX(1), p->abuf.buf, len,
					p->abuf.mr, IB_SEND_SIGNALED, raddr,
					rkey);
	KUNIT_EXPECT_EQ(test, 0, ret);
	if (ret)
		return IB_WC_GENERAL_ERR;
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
	return comp.status;
}

static void ibpost_reg_write_grants_no_read(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);

	ibpost_test_need_ib(test, p->dev,
			    "siw serves a READ from any valid STag: its READ response checks no REMOTE_READ (siw_qp_tx.c), a provider defect ibpost cannot reach");

	KUNIT_EXPECT_EQ(test, IB_WC_REM_ACCESS_ERR,
			ibpost_test_rdma(test, p, true, 64,
					 ibpost_mr_remote_addr(p->bw.mr),
					 ibpost_mr_rkey(p->bw.mr)));
}

/*
 * A remote failure of a WRITE: its own error completion on IB/RoCE. On
 * iWARP the WRITE is over for its sender once sent (RFC 5040), and the
 * peer's TERMINATE ends the connection: @qp goes to ERR instead, and the
 * WRITE's own status says success or an error depending on which came
 * first.
 */
static void ibpost_test_write_refused(struct kunit *test,
				      struct ibpost_test_pair *p,
				      u64 raddr, u32 rkey)
{
	enum ib_wc_status st = ibpost_test_rdma(test, p, false, 64, raddr,
						rkey);

	if (ibpost_test_iwarp(p->dev)) {
		KUNIT_EXPECT_NE(test, IB_WC_WR_FLUSH_ERR, st);
		KUNIT_EXPECT_TRUE(test, ibpost_test_wait_err(test, p->a));
	} else {
		KUNIT_EXPECT_EQ(test, IB_WC_REM_ACCESS_ERR, st);
	}
}

static void ibpost_reg_read_grants_no_write(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u8 *canary;

	/* Source and destination patterns differ in every byte. */
	ibpost_test_fill(p->abuf.buf, 64, 0x51);
	canary = ibpost_test_canary(test, p->br.buf, p->br.len, 0x52);
	ibpost_test_write_refused(test, p, ibpost_mr_remote_addr(p->br.mr),
				  ibpost_mr_rkey(p->br.mr));
	ibpost_test_expect_canary(test, p->br.buf, canary, p->br.len);
}

static void ibpost_reg_write_window_is_exact(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u64 raddr = ibpost_mr_remote_addr(p->bw.mr);
	u32 rkey = ibpost_mr_rkey(p->bw.mr);

	/* The last 64 bytes are inside; one byte further is not. */
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
			ibpost_test_rdma(test, p, false, 64,
					 raddr + p->bw.len - 64, rkey));
	ibpost_test_write_refused(test, p, raddr + p->bw.len - 63, rkey);
}

static void ibpost_dereg_mr_revokes_rkey(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_test_buf w;
	u8 *canary;
	u64 raddr;
	u32 rkey;

	ibpost_test_buf_init(test, &w, p->dev, p->b, 256, IBPOST_TEST_WRITE);
	raddr = ibpost_mr_remote_addr(w.mr);
	rkey = ibpost_mr_rkey(w.mr);
	ibpost_test_fill(p->abuf.buf, 64, 0x61);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
			ibpost_test_rdma(test, p, false, 64, raddr, rkey));
	KUNIT_ASSERT_EQ(test, 0, ibpost_dereg_mr(w.mr));
	/* Source and destination patterns differ in every byte. */
	canary = ibpost_test_canary(test, w.buf, 256, 0x62);
	ibpost_test_fill(p->abuf.buf, 64, 0x63);
	if (ibpost_test_iwarp(p->dev))
		ibpost_test_write_refused(test, p, raddr, rkey);
	else
		KUNIT_EXPECT_NE(test, IB_WC_SUCCESS,
				ibpost_test_rdma(test, p, false, 64, raddr,
						 rkey));
	ibpost_test_expect_canary(test, w.buf, canary, 256);
	kfree(w.buf);
}

/*
 * A chained post finds an SGE's MR through the queue's last hit: once the
 * MR is deregistered, the same SGE must be refused, not found in a stale
 * hit; a chain mixing two MRs finds both.
 */
static void ibpost_dereg_mr_forgets_last_hit(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };
	const struct ib_send_wr *bad;
	struct ibpost_test_buf one;
	struct ibpost_comp comp;
	struct ib_sge sge[2];
	int i;

	ibpost_test_buf_init(test, &one, p->dev, NULL, 256, IBPOST_TEST_MSGS);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(one.mr, one.buf, 64, &sge[0]));
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 64,
					       &sge[1]));
	wr.sg_list = sge;
	wr.num_sge = 2;
	wr.send_flags = IB_SEND_SIGNALED;
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(10 + i),
							  p->bbuf.buf, 256,
							  p->bbuf.mr));
		wr.wr_id = 20 + i;
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, &wr, &bad));
		ibpost_test_send_comp(test, p->a, &comp);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		ibpost_test_recv_comp(test, p->b, &comp);
		KUNIT_EXPECT_EQ(test, 128u, comp.byte_len);
	}
	/* Last hit now "one" or abuf: take "one" away, then post it again. */
	wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(12), p->bbuf.buf,
						  256, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, &wr, &bad));
	ibpost_test_send_comp(test, p->a, &comp);
	ibpost_test_recv_comp(test, p->b, &comp);
	ibpost_test_buf_fini(&one);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_send_list(p->a, &wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr);
	ibpost_test_no_send_comp(test, p->a);
}

/*
 * A READ's sink (white-box). On iWARP the READ response is a tagged write
 * into it: ibpost registers exactly the READ's sink with remote write,
 * under a new key each time its slot is reused, and posts the READ as
 * READ_WITH_INV of that key, so the peer cannot write there with it
 * afterwards. On IB/RoCE the READ goes out as posted, a plain READ.
 */
#define SINK_OFF	100
#define SINK_LEN	3000

/* The position @qp's next send WR takes. */
static u32 sink_head(struct ibpost_qp *qp)
{
	struct ibpost_test_queue tq;

	ibpost_test_queue_get(qp, true, &tq);
	return tq.head;
}

/* iWARP: b's WRITE to @addr with a sink's old @key ends its connection. */
static void sink_key_refused(struct kunit *test, struct ibpost_test_pair *p,
			     u64 addr, u32 key)
{
	ibpost_test_fill(p->bbuf.buf, 64, 99);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_write(p->b, CTX(50), p->bbuf.buf,
						   64, p->bbuf.mr,
						   IB_SEND_SIGNALED, addr, key));
	KUNIT_EXPECT_TRUE(test, ibpost_test_wait_err(test, p->b));
}

static void ibpost_read_sink_is_scoped(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u8 *sink = (u8 *)p->abuf.buf + SINK_OFF;
	u32 i, n, *keys, key = 0;
	struct ibpost_test_queue q;
	struct ibpost_test_slot ts;
	struct ibpost_comp comp;
	struct ib_sge sge;

	ibpost_test_queue_get(p->a, true, &q);
	n = q.mask + 2;
	keys = kunit_kcalloc(test, q.mask + 1, sizeof(*keys), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, keys);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, sink, SINK_LEN,
					       &sge));
	KUNIT_EXPECT_EQ(test, q.sinks, ibpost_test_iwarp(p->dev));
	for (i = 0; i < n; i++) {
		u32 head = sink_head(p->a), pos = head & q.mask;

		ibpost_test_fill(p->br.buf, p->br.len, 30 + i);
		/* This case is the QP's only poster: the slot is stable. */
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_read(p->a, CTX(i), sink, SINK_LEN,
						 p->abuf.mr, IB_SEND_SIGNALED,
						 ibpost_mr_remote_addr(p->br.mr) + 8,
						 ibpost_mr_rkey(p->br.mr)));
		ibpost_test_send_slot(p->a, head, &ts);
		if (q.sinks) {
			KUNIT_EXPECT_TRUE(test, ts.sink);
			KUNIT_EXPECT_EQ(test, ts.opcode,
					IB_WR_RDMA_READ_WITH_INV);
			KUNIT_EXPECT_EQ(test, ts.invalidate_rkey, ts.sink_lkey);
			KUNIT_EXPECT_EQ(test, ts.sge_lkey, ts.sink_lkey);
			KUNIT_EXPECT_EQ(test, ts.sge_addr, sge.addr);
			KUNIT_EXPECT_EQ(test, ts.sink_access,
					IB_ACCESS_LOCAL_WRITE |
					IB_ACCESS_REMOTE_WRITE);
			KUNIT_EXPECT_EQ(test, ts.sink_iova, sge.addr);
			KUNIT_EXPECT_EQ(test, ts.sink_length, (u64)SINK_LEN);
			/* A slot used again registers under a new key. */
			KUNIT_EXPECT_NE(test, keys[pos], ts.sink_rkey);
			keys[pos] = ts.sink_rkey;
			key = ts.sink_rkey;
		} else {
			KUNIT_EXPECT_FALSE(test, ts.sink);
			KUNIT_EXPECT_EQ(test, ts.opcode, IB_WR_RDMA_READ);
		}
		ibpost_test_send_comp(test, p->a, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(i), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		KUNIT_EXPECT_EQ(test, IB_WC_RDMA_READ, comp.opcode);
		KUNIT_EXPECT_EQ(test, 0, memcmp(sink, (u8 *)p->br.buf + 8,
						SINK_LEN));
	}
	if (!q.sinks)
		return;
	/* The READ invalidated its sink: the peer's WRITE with it fails. */
	sink_key_refused(test, p, sge.addr, key);
	KUNIT_EXPECT_EQ(test, 0, memcmp(sink, (u8 *)p->br.buf + 8, 64));
}

/*
 * A READ that fails: its context comes back with the error, and its
 * buffer can be deregistered once nothing can reach it any more. On
 * iWARP only a successful READ_WITH_INV invalidates the sink's key, so
 * ibpost revokes it first: the peer of another connection on the device
 * (the same PD) cannot write into the buffer with that key afterwards.
 */
static void ibpost_read_sink_revoked_after_failure(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL), *p2;
	u32 key = 0, head = sink_head(p->a);
	struct ibpost_test_slot ts;
	struct ibpost_comp comp;
	struct ibpost_mr *mr;
	struct ib_sge sge;
	u8 *canary;
	int i, ret;
	void *buf;

	buf = kunit_kzalloc(test, SINK_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	mr = ibpost_reg_msgs(p->dev, buf, SINK_LEN);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(mr, buf, SINK_LEN, &sge));
	/* The peer refuses it: a bad rkey. */
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_read(p->a, CTX(1), buf, SINK_LEN, mr,
					 IB_SEND_SIGNALED,
					 ibpost_mr_remote_addr(p->br.mr),
					 ibpost_mr_rkey(p->br.mr) ^ 0x80));
	ibpost_test_send_slot(p->a, head, &ts);
	key = ts.sink_rkey;
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
	KUNIT_EXPECT_NE(test, IB_WC_SUCCESS, comp.status);
	/* At once, or once the sink's key is revoked (-EBUSY until then). */
	for (i = 0; i < 250 && (ret = ibpost_dereg_mr(mr)) == -EBUSY; i++)
		msleep(20);
	KUNIT_ASSERT_EQ(test, 0, ret);
	if (!ts.sink)
		return;

	/* sink_key_refused() writes pattern(99): 0x71 differs everywhere. */
	canary = ibpost_test_canary(test, buf, SINK_LEN, 0x71);
	p2 = ibpost_test_pair(test, NULL);
	sink_key_refused(test, p2, sge.addr, key);
	ibpost_test_expect_canary(test, buf, canary, SINK_LEN);
}

/* One receive of b into the pieces @pc of @m (offset, length pairs). */
static int sge_recv(struct ibpost_test_pair *p, void *ctx,
		    struct ibpost_test_buf *m, const u32 (*pc)[2], int n,
		    struct ibpost_test_buf *m2, u32 len2)
{
	struct ib_recv_wr wr = { .wr_id = (uintptr_t)ctx };
	struct ib_sge sge[4];
	int i;

	for (i = 0; i < n; i++)
		if (ibpost_mr_sge(m->mr, (u8 *)m->buf + pc[i][0], pc[i][1],
				  &sge[wr.num_sge++]))
			return -EINVAL;
	if (m2 && ibpost_mr_sge(m2->mr, m2->buf, len2, &sge[wr.num_sge++]))
		return -EINVAL;
	wr.sg_list = sge;
	return ibpost_post_recv_list(p->b, &wr, NULL);
}

/*
 * A WR of several SGEs all in the queue's hit counts each of them there
 * (a chain's SGEs and a vector seed operation's alike), so that the hit's
 * MR stays in use until the last of them is done; one SGE outside the
 * hit makes the WR count the others in the hit and that one on its MR.
 * The receives scatter a's messages over m1 and m2: every byte where its
 * SGE put it, the gaps between the SGEs untouched.
 */
static void ibpost_mr_hit_counts_every_sge(struct kunit *test)
{
	static const u32 r2[][2] = { { 64, 16 }, { 96, 16 }, { 128, 32 } };
	static const u32 r3[][2] = { { 192, 32 } };
	/* Message k's bytes, in order, land at these offsets of m1. */
	static const u32 land[][3][2] = {
		{ { 0, 64 } },
		{ { 64, 16 }, { 96, 16 }, { 128, 32 } },
		{ { 192, 32 } },
		{ { 224, 16 }, { 240, 16 } },
	};
	static const u32 msg_len[] = { 64, 64, 64, 32 };
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *m1 = ibpost_test_buf_new(test, dev, 256);
	struct ibpost_test_buf *m2 = ibpost_test_buf_new(test, dev, 64);
	u8 *want1 = kunit_kmalloc(test, 256, GFP_KERNEL);
	u8 *want2 = kunit_kmalloc(test, 64, GFP_KERNEL);
	struct ibpost_sge r4[2] = {
		{ (u8 *)m1->buf + 224, 16, m1->mr },
		{ (u8 *)m1->buf + 240, 16, m1->mr },
	};
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	u8 *src;
	int k, i;

	KUNIT_ASSERT_NOT_NULL(test, want1);
	KUNIT_ASSERT_NOT_NULL(test, want2);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_sge = 4;
	attr.max_recv_sge = 4;
	p = ibpost_test_pair(test, &attr);
	src = p->abuf.buf;
	ibpost_test_fill(m1->buf, 256, 0x51);
	ibpost_test_fill(m2->buf, 64, 0x52);
	ibpost_test_fill(src, 4 * 64, 0x53);
	memcpy(want1, m1->buf, 256);
	memcpy(want2, m2->buf, 64);

	/* r1 makes m1 the hit; r2's three SGEs and r4's two count in it. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1), m1->buf, 64,
						  m1->mr));
	KUNIT_ASSERT_EQ(test, 0, sge_recv(p, CTX(2), m1, r2, 3, NULL, 0));
	KUNIT_ASSERT_EQ(test, 0, sge_recv(p, CTX(3), m1, r3, 1, m2, 32));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recvv(p->b, CTX(4), r4, 2));
	KUNIT_ASSERT_EQ(test, 1, ibpost_test_mr_users(m1->mr));
	KUNIT_ASSERT_EQ(test, 1, ibpost_test_mr_users(m2->mr));

	for (k = 0; k < 4; k++) {
		struct ibpost_comp comp;
		u32 off = 0;

		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(10 + k),
							  src + 64 * k,
							  msg_len[k],
							  p->abuf.mr,
							  IB_SEND_SIGNALED));
		ibpost_test_send_ok(test, p->a, CTX(10 + k));
		ibpost_test_recv_comp(test, p->b, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(k + 1), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		for (i = 0; i < 3 && land[k][i][1]; i++) {
			memcpy(want1 + land[k][i][0], src + 64 * k + off,
			       land[k][i][1]);
			off += land[k][i][1];
		}
		if (k == 2)
			memcpy(want2, src + 64 * k + off, 32);
		/* Until r4 is done, SGEs of m1 are out: the hit holds m1. */
		KUNIT_EXPECT_EQ_MSG(test, k < 3 ? 1 : 0,
				    ibpost_test_mr_users(m1->mr),
				    "after receive %d", k + 1);
		KUNIT_EXPECT_EQ_MSG(test, k < 2 ? 1 : 0,
				    ibpost_test_mr_users(m2->mr),
				    "after receive %d", k + 1);
	}
	KUNIT_EXPECT_EQ(test, 0, memcmp(want1, m1->buf, 256));
	KUNIT_EXPECT_EQ(test, 0, memcmp(want2, m2->buf, 64));
}

/*
 * A vmalloc buffer registered as a table of one entry per page (no two
 * merged), freed at the test's exit.
 */
struct pg_vm {
	u8 *buf;
	struct ibpost_mr *mr;
};

static void pg_vm_free(void *data)
{
	struct pg_vm *v = data;

	/* After the pair's QPs: nothing uses it any more. */
	if (v->mr && WARN_ON(ibpost_dereg_mr(v->mr)))
		return;
	vfree(v->buf);
}

#define PG_PAGES	300	/* more than a batch of the table's ranges */
#define PG_BATCH	256	/* mr_table.c: IBPOST_MR_RANGES_PER_LOCK */

/*
 * b receives 64 bytes at byte 128 of each page of @pages in @v's buffer
 * (after one into its own buffer when @hold, which keeps the queue's hit
 * meanwhile), from a's SENDs; each lands where its SGE said.
 */
static void pg_recv(struct kunit *test, struct ibpost_test_pair *p,
		    struct pg_vm *v, const u32 *pages, int n, bool hold,
		    int users)
{
	u8 *src = p->abuf.buf;
	struct ibpost_comp comp;
	int k, first = hold ? -1 : 0;

	if (hold)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(100),
							  p->bbuf.buf, 64,
							  p->bbuf.mr));
	for (k = 0; k < n; k++) {
		struct ib_recv_wr wr = { .wr_id = k + 1, .num_sge = 1 };
		struct ib_sge sge;

		KUNIT_ASSERT_EQ(test, 1,
				ibpost_mr_sgl(v->mr, pages[k] * PAGE_SIZE + 128,
					      64, &sge, 1));
		wr.sg_list = &sge;
		KUNIT_ASSERT_EQ_MSG(test, 0,
				    ibpost_post_recv_list(p->b, &wr, NULL),
				    "a receive into page %u", pages[k]);
	}
	KUNIT_EXPECT_EQ(test, users, ibpost_test_mr_users(v->mr));
	ibpost_test_fill(src, (n + 1) * 64, pages[0]);
	for (k = first; k < n; k++) {
		u8 *msg = src + (k + 1) * 64;

		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(200), msg,
							  64, p->abuf.mr,
							  IB_SEND_SIGNALED));
		ibpost_test_send_ok(test, p->a, CTX(200));
		ibpost_test_recv_comp(test, p->b, &comp);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		if (k < 0)
			continue;
		KUNIT_EXPECT_PTR_EQ(test, CTX(k + 1), comp.context);
		KUNIT_EXPECT_EQ_MSG(test, 0,
				    memcmp(v->buf + pages[k] * PAGE_SIZE + 128,
					   msg, 64),
				    "page %u", pages[k]);
	}
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(v->mr));
}

/*
 * A page MR's SGEs are found by their segment, in the device's table
 * (its segments indexed in batches: the last pages of a buffer larger
 * than one batch too), and in the queue's hit (a search of its segments
 * in DMA address order): receives into pages in no order, first while
 * the hit holds another MR (each counts a user of its own), then with
 * the page MR as the hit (all counted in it: one user).
 */
static void ibpost_mr_page_mr_segments_found(struct kunit *test)
{
	static const u32 spread[] = { 299, 7, 256, 0, 150 };
	static const u32 in_hit[] = { 3, 299, 7, 256, 0 };
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct pg_vm *v = kunit_kzalloc(test, sizeof(*v), GFP_KERNEL);
	struct ib_sge *all = kunit_kcalloc(test, PG_PAGES, sizeof(*all),
					   GFP_KERNEL);
	struct ibpost_test_pair *p;
	struct scatterlist *sg;
	struct sg_table sgt;
	int i, n;

	KUNIT_ASSERT_NOT_NULL(test, v);
	KUNIT_ASSERT_NOT_NULL(test, all);
	v->buf = vmalloc(PG_PAGES * PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, v->buf);
	ibpost_test_defer(test, pg_vm_free, v);
	ibpost_test_fill(v->buf, PG_PAGES * PAGE_SIZE, 0x77);
	KUNIT_ASSERT_EQ(test, 0, sg_alloc_table(&sgt, PG_PAGES, GFP_KERNEL));
	for_each_sg(sgt.sgl, sg, PG_PAGES, i)
		sg_set_page(sg, vmalloc_to_page(v->buf + i * PAGE_SIZE),
			    PAGE_SIZE, 0);
	/* ibpost maps a copy: the table is the test's to free. */
	v->mr = ibpost_reg_sgt(dev, &sgt, DMA_BIDIRECTIONAL);
	sg_free_table(&sgt);
	if (IS_ERR(v->mr)) {
		int err = PTR_ERR(v->mr);

		v->mr = NULL;
		KUNIT_ASSERT_EQ(test, 0, err);
	}
	/* One SGE per DMA segment: more segments than a batch of ranges? */
	n = ibpost_mr_sgl(v->mr, 0, PG_PAGES * PAGE_SIZE, all, PG_PAGES);
	ibpost_test_skip_unless(test, n > PG_BATCH,
				"the mapping merged the pages: no more segments than a batch");
	p = ibpost_test_pair(test, NULL);

	pg_recv(test, p, v, spread, ARRAY_SIZE(spread), true,
		ARRAY_SIZE(spread));
	pg_recv(test, p, v, in_hit, ARRAY_SIZE(in_hit), false, 1);
}

/*
 * The device's MR table: where MRs overlap, an SGE goes to the oldest
 * that may hold it. A set is one buffer of LK_PIECES pieces registered
 * whole and piece by piece, in the order a test chooses.
 */
#define LK_PIECES	8
#define LK_PIECE	256
#define LK_LEN		64	/* each receive's bytes, at LK_OFF in a piece */
#define LK_OFF		16

struct lk_set {
	struct ibpost_dev *dev;
	u8 *buf;
	u8 *want;		/* what buf must hold */
	struct ibpost_mr *mr[LK_PIECES + 2];
	int n;
};

static void lk_set_free(void *data)
{
	struct lk_set *s = data;

	/* After the pair's QPs: nothing uses them any more. */
	while (s->n)
		WARN_ON(ibpost_dereg_mr(s->mr[--s->n]));
}

static struct lk_set *lk_set_new(struct kunit *test, struct ibpost_dev *dev,
				 u32 seed)
{
	struct lk_set *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	s->dev = dev;
	/* Freed after lk_set_free(): kunit releases in reverse order. */
	s->buf = kunit_kmalloc(test, LK_PIECES * LK_PIECE, GFP_KERNEL);
	s->want = kunit_kmalloc(test, LK_PIECES * LK_PIECE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s->buf);
	KUNIT_ASSERT_NOT_NULL(test, s->want);
	ibpost_test_fill(s->buf, LK_PIECES * LK_PIECE, seed);
	memcpy(s->want, s->buf, LK_PIECES * LK_PIECE);
	ibpost_test_defer(test, lk_set_free, s);
	return s;
}

/*
 * Register [@off, @off + @len) of @s's buffer, mapped in @dir: a page MR
 * (ibpost_reg_page()) when @page or one way only.
 */
static struct ibpost_mr *lk_reg(struct kunit *test, struct lk_set *s,
				size_t off, size_t len,
				enum dma_data_direction dir, bool page)
{
	struct ibpost_mr *mr;

	if (dir == DMA_BIDIRECTIONAL && !page)
		mr = ibpost_reg_msgs(s->dev, s->buf + off, len);
	else
		mr = ibpost_reg_page(s->dev, virt_to_page(s->buf),
				     offset_in_page(s->buf) + off, len, dir);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	s->mr[s->n++] = mr;
	return mr;
}

/*
 * Overlapping MRs share SGEs only where mapping the same memory twice
 * gives the same DMA address (rxe and siw: their DMA addresses are kernel
 * addresses); behind an IOMMU each mapping has its own.
 */
static void lk_need_shared_dma(struct kunit *test, struct ibpost_mr *a,
			       struct ibpost_mr *b, void *at)
{
	struct ib_sge x, y;

	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(a, at, 1, &x));
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(b, at, 1, &y));
	ibpost_test_skip_unless(test, x.addr == y.addr,
				"each mapping has a DMA address of its own: no shared SGE");
}

/* Deregistering @mr of @s must fail while a receive uses it. */
static void lk_dereg_busy(struct kunit *test, struct lk_set *s,
			  struct ibpost_mr *mr)
{
	int i, ret = ibpost_dereg_mr(mr);

	for (i = 0; !ret && i < s->n; i++)	/* freed: not again at exit */
		if (s->mr[i] == mr)
			s->mr[i] = NULL;
	KUNIT_ASSERT_EQ(test, -EBUSY, ret);
}

/*
 * b receives LK_LEN bytes into every piece of @s (piece (3k) % LK_PIECES
 * for the k-th), each an SGE looked up in the device's table: a first
 * receive into b's own buffer holds the queue's hit meanwhile.
 */
static void lk_recv_pieces(struct kunit *test, struct ibpost_test_pair *p,
			   struct lk_set *s, struct ibpost_mr **piece)
{
	int k;

	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(100), p->bbuf.buf,
						  LK_LEN, p->bbuf.mr));
	for (k = 0; k < LK_PIECES; k++) {
		int i = (3 * k) % LK_PIECES;
		u8 *at = s->buf + i * LK_PIECE + LK_OFF;
		struct ib_recv_wr wr = {
			.wr_id = (uintptr_t)CTX(k + 1), .num_sge = 1,
		};
		struct ib_sge sge;

		/* The piece's address: the same in every MR that holds it. */
		KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(piece[i], at, LK_LEN,
						       &sge));
		wr.sg_list = &sge;
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv_list(p->b, &wr, NULL));
	}
}

/* a's SENDs take the receives of lk_recv_pieces(); the data checked. */
static void lk_deliver(struct kunit *test, struct ibpost_test_pair *p,
		       struct lk_set *s)
{
	u8 *src = p->abuf.buf;
	struct ibpost_comp comp;
	int k;

	ibpost_test_fill(src, (LK_PIECES + 1) * LK_LEN, 0x5eed);
	for (k = 0; k <= LK_PIECES; k++) {
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(k),
							  src + k * LK_LEN,
							  LK_LEN, p->abuf.mr,
							  IB_SEND_SIGNALED));
		ibpost_test_send_ok(test, p->a, CTX(k));
		ibpost_test_recv_comp(test, p->b, &comp);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		KUNIT_EXPECT_PTR_EQ(test, k ? CTX(k) : CTX(100), comp.context);
		if (k)
			memcpy(s->want + (3 * (k - 1)) % LK_PIECES * LK_PIECE +
			       LK_OFF, src + k * LK_LEN, LK_LEN);
	}
	KUNIT_EXPECT_EQ_MSG(test, 0, memcmp(s->want, s->buf,
					    LK_PIECES * LK_PIECE),
			    "the receives landed elsewhere than their SGEs");
}

/*
 * Where registrations of the same memory overlap, an SGE is counted on
 * the oldest MR that may hold it: first an MR the device may only read
 * (receives pass over it), then each piece, then the whole buffer again:
 * every receive counts on its piece. Then a whole buffer registered
 * before its pieces (a page MR: the table holds its segment) takes every
 * receive. A lookup that took any MR
 * holding the address (the tree yields the whole buffer's before a
 * piece's) counts them on the whole.
 */
static void ibpost_mr_lookup_oldest_of_overlapping(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct lk_set *s1 = lk_set_new(test, dev, 0x1001);
	struct lk_set *s2 = lk_set_new(test, dev, 0x2002);
	struct ibpost_mr *ro, *whole, *piece[LK_PIECES];
	struct ibpost_test_pair *p;
	int i;

	ro = lk_reg(test, s1, 0, LK_PIECES * LK_PIECE, DMA_TO_DEVICE, true);
	for (i = 0; i < LK_PIECES; i++)
		piece[i] = lk_reg(test, s1, i * LK_PIECE, LK_PIECE,
				  DMA_BIDIRECTIONAL, false);
	whole = lk_reg(test, s1, 0, LK_PIECES * LK_PIECE, DMA_BIDIRECTIONAL,
		       false);
	lk_need_shared_dma(test, piece[1], whole, s1->buf + LK_PIECE);
	/* After the MRs: the pair's QPs are destroyed before they are. */
	p = ibpost_test_pair(test, NULL);

	lk_recv_pieces(test, p, s1, piece);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(ro));
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(whole));
	for (i = 0; i < LK_PIECES; i++)
		KUNIT_EXPECT_EQ_MSG(test, 1, ibpost_test_mr_users(piece[i]),
				    "piece %d", i);
	lk_dereg_busy(test, s1, piece[1]);
	lk_deliver(test, p, s1);
	for (i = 0; i < LK_PIECES; i++)
		KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(piece[i]));

	whole = lk_reg(test, s2, 0, LK_PIECES * LK_PIECE, DMA_BIDIRECTIONAL,
		       true);
	for (i = 0; i < LK_PIECES; i++)
		piece[i] = lk_reg(test, s2, i * LK_PIECE, LK_PIECE,
				  DMA_BIDIRECTIONAL, false);
	lk_recv_pieces(test, p, s2, piece);
	KUNIT_EXPECT_EQ(test, LK_PIECES, ibpost_test_mr_users(whole));
	for (i = 0; i < LK_PIECES; i++)
		KUNIT_EXPECT_EQ_MSG(test, 0, ibpost_test_mr_users(piece[i]),
				    "piece %d", i);
	lk_deliver(test, p, s2);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(whole));
}

/*
 * Inside a chain the loop tests each WR against its own copy of the
 * queue's hit: a receive chain over m1 (the hit, from its first WR), m2
 * (counted on its own, the hit kept) and m1 again is queued up to the WR
 * one byte beyond m1's end, refused there with -EINVAL and nothing of it
 * counted; a send chain whose WRs all gather from one buffer fills the
 * receives. Every byte lands where its SGE put it, the rest of m1 and m2
 * untouched, and neither MR keeps a user once the receives are done.
 */
static void ibpost_mr_chain_hit_copy(struct kunit *test)
{
	/* Receive k: buffer (1: m1, 2: m2), offset, length. */
	static const u32 rx[][3] = {
		{ 1, 0, 32 }, { 2, 0, 32 }, { 1, 32, 32 }, { 1, 96, 32 },
		{ 1, 240, 17 },
	};
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *m[2] = { ibpost_test_buf_new(test, dev, 256),
					 ibpost_test_buf_new(test, dev, 64) };
	u8 *want[2] = { kunit_kmalloc(test, 256, GFP_KERNEL),
			kunit_kmalloc(test, 64, GFP_KERNEL) };
	struct ib_rdma_wr swr[4] = {};
	struct ib_recv_wr rwr[5] = {};
	struct ib_sge ssge[4], rsge[5];
	const struct ib_recv_wr *rbad = NULL;
	const struct ib_send_wr *sbad = NULL;
	struct ibpost_test_pair *p;
	struct ibpost_comp comp;
	u8 *src;
	int k;

	KUNIT_ASSERT_NOT_NULL(test, want[0]);
	KUNIT_ASSERT_NOT_NULL(test, want[1]);
	p = ibpost_test_pair(test, NULL);
	src = p->abuf.buf;
	ibpost_test_fill(m[0]->buf, 256, 0x61);
	ibpost_test_fill(m[1]->buf, 64, 0x62);
	ibpost_test_fill(src, 4 * 32, 0x63);
	memcpy(want[0], m[0]->buf, 256);
	memcpy(want[1], m[1]->buf, 64);
	for (k = 0; k < 5; k++) {
		struct ibpost_test_buf *b = m[rx[k][0] - 1];

		KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(b->mr, b->buf, 1,
						       &rsge[k]));
		rsge[k].addr += rx[k][1];
		rsge[k].length = rx[k][2];
		rwr[k].wr_id = (uintptr_t)CTX(k + 1);
		rwr[k].sg_list = &rsge[k];
		rwr[k].num_sge = 1;
		rwr[k].next = k < 4 ? &rwr[k + 1] : NULL;
	}
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_recv_list(p->b, rwr, &rbad));
	KUNIT_EXPECT_PTR_EQ(test, rbad, &rwr[4]);
	KUNIT_EXPECT_EQ(test, 1, ibpost_test_mr_users(m[0]->mr));
	KUNIT_EXPECT_EQ(test, 1, ibpost_test_mr_users(m[1]->mr));

	for (k = 0; k < 4; k++) {
		KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, src + 32 * k,
						       32, &ssge[k]));
		swr[k].wr.wr_id = 10 + k;
		swr[k].wr.opcode = IB_WR_SEND;
		swr[k].wr.send_flags = IB_SEND_SIGNALED;
		swr[k].wr.sg_list = &ssge[k];
		swr[k].wr.num_sge = 1;
		swr[k].wr.next = k < 3 ? &swr[k + 1].wr : NULL;
		memcpy(want[rx[k][0] - 1] + rx[k][1], src + 32 * k, 32);
	}
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, &swr[0].wr,
						       &sbad));
	for (k = 0; k < 4; k++) {
		ibpost_test_send_ok(test, p->a, CTX(10 + k));
		ibpost_test_recv_comp(test, p->b, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(k + 1), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		KUNIT_EXPECT_EQ(test, 32, comp.byte_len);
	}
	KUNIT_EXPECT_EQ(test, 0, memcmp(m[0]->buf, want[0], 256));
	KUNIT_EXPECT_EQ(test, 0, memcmp(m[1]->buf, want[1], 64));
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(m[0]->mr));
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(m[1]->mr));
}

/*
 * Unsignaled WRs are reclaimed when a later signaled one completes: the
 * run of WRs whose SGEs are all in the send queue's hit at once, a WR
 * with an MR of its own (m2) ending that run, the WRs after it one by
 * one. The ring's positions cross the 32-bit wrap and the ring's end
 * meanwhile. Once the signaled WR is back no MR keeps a user, the ring
 * is empty, every WR counts as completed, and each WRITE's bytes are at
 * the peer.
 */
#define RECLAIM_WRS	9
#define RECLAIM_OWN	4	/* the WR from m2 */
static void ibpost_mr_reclaim_releases_uses(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *m1 = ibpost_test_buf_new(test, dev,
							 8 * RECLAIM_WRS);
	struct ibpost_test_buf *m2 = ibpost_test_buf_new(test, dev, 64);
	struct ibpost_test_queue before, after;
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	u8 *want;
	int k;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.signal_interval = 2 * RECLAIM_WRS;
	p = ibpost_test_pair(test, &attr);
	KUNIT_ASSERT_GE(test, p->got.max_send_wr, 2 * RECLAIM_WRS);
	want = kunit_kmalloc(test, 8 * RECLAIM_WRS, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	ibpost_test_fill(m1->buf, 8 * RECLAIM_WRS, 0x71);
	ibpost_test_fill(m2->buf, 64, 0x72);
	ibpost_test_fill(p->bw.buf, 8 * RECLAIM_WRS, 0x73);
	/* The run wraps the ring's end and the positions' 32 bits. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_queue_set_pos(p->a, true,
							   U32_MAX - 1));
	ibpost_test_queue_get(p->a, true, &before);

	for (k = 0; k < RECLAIM_WRS; k++) {
		bool own = k == RECLAIM_OWN;
		u8 *src = own ? (u8 *)m2->buf : (u8 *)m1->buf + 8 * k;

		memcpy(want + 8 * k, src, 8);
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_write(p->a, CTX(k + 1), src, 8,
						  own ? m2->mr : m1->mr,
						  k == RECLAIM_WRS - 1 ?
						  IB_SEND_SIGNALED : 0,
						  ibpost_mr_remote_addr(p->bw.mr) + 8 * k,
						  ibpost_mr_rkey(p->bw.mr)));
	}
	ibpost_test_send_ok(test, p->a, CTX(RECLAIM_WRS));

	ibpost_test_queue_get(p->a, true, &after);
	KUNIT_EXPECT_EQ(test, after.head, before.head + RECLAIM_WRS);
	KUNIT_EXPECT_EQ(test, after.tail, after.head);
	KUNIT_EXPECT_EQ(test, after.completed - before.completed,
			(u64)RECLAIM_WRS);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(m1->mr));
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(m2->mr));
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->bw.buf, want, 8 * RECLAIM_WRS));
	ibpost_test_no_send_comp(test, p->a);
}

static struct kunit_case ibpost_mr_cases[] = {
	KUNIT_CASE(ibpost_reg_msgs_refuses_vmalloc),
	KUNIT_CASE(ibpost_reg_write_new_rkey_each_time),
	KUNIT_CASE(ibpost_dereg_mr_busy_while_posted),
	KUNIT_CASE_PARAM(ibpost_mr_post_during_failing_dereg,
			 dereg_post_gen_params),
	KUNIT_CASE(ibpost_mr_hit_users_per_queue),
	KUNIT_CASE(ibpost_mr_lookup_oldest_of_overlapping),
	KUNIT_CASE(ibpost_mr_hit_counts_every_sge),
	KUNIT_CASE(ibpost_mr_chain_hit_copy),
	KUNIT_CASE(ibpost_mr_reclaim_releases_uses),
	KUNIT_CASE(ibpost_mr_page_mr_segments_found),
	KUNIT_CASE(ibpost_reg_write_grants_no_read),
	KUNIT_CASE(ibpost_reg_read_grants_no_write),
	KUNIT_CASE(ibpost_reg_write_window_is_exact),
	KUNIT_CASE(ibpost_dereg_mr_revokes_rkey),
	KUNIT_CASE(ibpost_dereg_mr_forgets_last_hit),
	KUNIT_CASE(ibpost_read_sink_is_scoped),
	KUNIT_CASE(ibpost_read_sink_revoked_after_failure),
	{}
};

static struct kunit_suite ibpost_mr_suite = {
	.name = "ibpost_mr",
	.test_cases = ibpost_mr_cases,
};

kunit_test_suites(&ibpost_mr_suite);
