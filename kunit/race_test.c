// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_race: device removal racing the other entry points, on a
 * second device (rxe2 on a dummy netdev d2) that each case makes and
 * removes with "rdma link delete", as an administrator would.
 *
 * The windows are made wide on purpose: the test hooks stop a thread at
 * the point where the race used to bite (a deregistration that revoked
 * its MR and is about to invalidate it, a registration whose REG_MR came
 * back, one that passed its checks) until the device is gone. Removal
 * must then release everything exactly once, every context must come
 * back, and the kernel must stay silent.
 */
#include <linux/delay.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "ibpost_test.h"
#include "gate.h"

#define RACE_DEV	"rxe2"
#define RACE_NETDEV	"d2"
#define RACE_LEN	4096
#define RACE_DBG	"/sys/kernel/debug/ibpost/"
#define RACE_QPS	8

struct race {
	struct kunit *test;
	struct ibpost_dev *dev;
	struct ibpost_qp *a, *b;
	struct ibpost_test_cm *cm;
	void *buf, *lbuf;
	struct ibpost_mr *mr, *lmr;
	struct ibpost_mr *got;
};

static void race_free(void *data)
{
	struct race *r = data;

	ibpost_qp_destroy(r->a);
	ibpost_qp_destroy(r->b);
	ibpost_test_cm_free(r->cm);
	if (!IS_ERR_OR_NULL(r->lmr))
		WARN_ON(ibpost_dereg_mr(r->lmr));
	kfree(r->buf);
	kfree(r->lbuf);
}

/* The pair moves data: a SEND from a into a receive on b. */
static void race_ping(struct race *r)
{
	struct ibpost_comp comp;
	int ret;

	KUNIT_ASSERT_EQ(r->test, 0, ibpost_post_recv(r->b, r, r->lbuf + 2048,
						     64, r->lmr));
	KUNIT_ASSERT_EQ(r->test, 0, ibpost_post_send(r->a, r, r->lbuf, 64,
						     r->lmr,
						     IB_SEND_SIGNALED));
	ret = ibpost_get_send_comp(r->a, &comp, 10 * HZ);
	if (ret != 1 || comp.status != IB_WC_SUCCESS)
		ibpost_test_sh("(ip addr show dev %s; rdma link) > /dev/kmsg 2>&1",
			       RACE_NETDEV);
	KUNIT_ASSERT_EQ(r->test, ret, 1);
	KUNIT_ASSERT_EQ(r->test, comp.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(r->test, 1, ibpost_get_recv_comp(r->b, &comp, 10 * HZ));
	KUNIT_ASSERT_EQ(r->test, comp.status, IB_WC_SUCCESS);
}

/* A loopback RC pair on a fresh rxe2, no callbacks, @ctx polling. */
static struct race *race_setup(struct kunit *test, enum ib_poll_context ctx)
{
	struct ibpost_qp_attr attr;
	struct race *r;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->test = test;
	r->dev = ibpost_test_dev2(test, RACE_DEV, RACE_NETDEV);
	ibpost_test_defer(test, race_free, r);
	r->buf = kzalloc(RACE_LEN, GFP_KERNEL);
	r->lbuf = kzalloc(RACE_LEN, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, r->buf && r->lbuf);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = ctx;
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_connect_pair(r->dev, &attr, &attr,
							  &r->a, &r->b,
							  &r->cm));
	r->lmr = ibpost_reg_msgs(r->dev, r->lbuf, RACE_LEN);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r->lmr);
	race_ping(r);
	return r;
}

/* A SEND from a that b has no receive for: a's send queue stalls. */
static void race_stall(struct race *r)
{
	KUNIT_ASSERT_EQ(r->test, 0, ibpost_post_send(r->a, r, r->lbuf, 64,
						     r->lmr,
						     IB_SEND_SIGNALED));
}

static void race_remove(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh("rdma link delete " RACE_DEV));
	KUNIT_ASSERT_TRUE(test, IS_ERR(ibpost_dev_get(RACE_DEV)));
}

/*
 * The SEND b had no receive for comes back after the removal too: flushed,
 * or failed when rxe gave up on it first (its retries end when a local
 * operation follows it), never lost. On iWARP there is no RNR to hold
 * it: it is over once sent (success, or an error when b's TERMINATE came
 * first) and ends the connection; it must come back all the same.
 */
static void race_expect_stall_flushed(struct race *r)
{
	struct ibpost_comp comp;

	ibpost_test_send_comp(r->test, r->a, &comp);
	KUNIT_EXPECT_PTR_EQ(r->test, comp.context, (void *)r);
	if (!ibpost_test_iwarp(r->dev))
		KUNIT_EXPECT_NE(r->test, comp.status, IB_WC_SUCCESS);
}

/* The receive b had posted comes back after the removal: flushed, once. */
static void race_expect_recv_flushed(struct race *r)
{
	struct ibpost_comp comp;

	ibpost_test_recv_comp(r->test, r->b, &comp);
	KUNIT_EXPECT_PTR_EQ(r->test, comp.context, (void *)r);
	KUNIT_EXPECT_EQ(r->test, comp.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(r->test, 0, ibpost_get_recv_comp(r->b, &comp, 0));
}

static int race_dereg_fn(void *arg)
{
	struct race *r = arg;

	return ibpost_dereg_mr(r->mr);
}

/*
 * Dereg of a remote MR, held after it revoked the MR and before its
 * LOCAL_INV, while the device is removed with a SEND outstanding: removal
 * must still release the MR (it is revoked, not gone) and flush the SEND;
 * the dereg must then only free the MR.
 */
static void ibpost_race_dereg_vs_removal(struct kunit *test)
{
	struct race *r = race_setup(test, IB_POLL_SOFTIRQ);
	struct ibpost_test_thread *t;
	struct ibpost_gate *g;
	int ret = -1;

	r->mr = ibpost_reg_write(r->a, r->buf, RACE_LEN);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r->mr);
	g = ibpost_gate(test, IBPOST_HOOK_DEREG_REVOKED);
	race_stall(r);
	t = ibpost_test_run(test, race_dereg_fn, r);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&g->arrived,
							    30 * HZ));
	race_remove(test);
	complete_all(&g->release);
	KUNIT_ASSERT_TRUE_MSG(test, ibpost_test_join(t, 60 * HZ, &ret),
			      "the dereg did not return after the removal");
	KUNIT_EXPECT_EQ(test, ret, 0);
	race_expect_stall_flushed(r);
}

static int race_reg_fn(void *arg)
{
	struct race *r = arg;

	r->got = ibpost_reg_write(r->a, r->buf, RACE_LEN);
	return 0;
}

static int race_reg_msgs_fn(void *arg)
{
	struct race *r = arg;

	r->got = ibpost_reg_msgs(r->dev, r->buf, RACE_LEN);
	return 0;
}

/*
 * Run the registration @fn in a thread, stop it at @point, remove the
 * device, let it go on; it must return. Its MR (r->got) is the caller's
 * to check.
 */
static struct race *race_reg_held(struct kunit *test, enum ibpost_hook point,
				  int (*fn)(void *arg))
{
	struct race *r = race_setup(test, IB_POLL_SOFTIRQ);
	struct ibpost_gate *g = ibpost_gate(test, point);
	struct ibpost_test_thread *t;

	t = ibpost_test_run(test, fn, r);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&g->arrived,
							    30 * HZ));
	race_remove(test);
	complete_all(&g->release);
	KUNIT_ASSERT_TRUE_MSG(test, ibpost_test_join(t, 60 * HZ, NULL),
			      "the registration did not return");
	return r;
}

/*
 * A registration held after its REG_MR came back, until the device is
 * removed: it must fail cleanly, its MR released once (by the removal),
 * nothing published on a device that is gone.
 */
static void ibpost_race_reg_vs_removal(struct kunit *test)
{
	struct race *r = race_reg_held(test, IBPOST_HOOK_REG_POSTED,
				       race_reg_fn);

	KUNIT_EXPECT_TRUE(test, IS_ERR(r->got));
	if (!IS_ERR_OR_NULL(r->got))
		ibpost_dereg_mr(r->got);
}

/*
 * A local registration that passed its checks just before the device
 * went: held there until the removal is over, it must see the removal
 * (-ENODEV) instead of mapping on a device that is gone.
 */
static void ibpost_race_reg_msgs_vs_removal(struct kunit *test)
{
	struct race *r = race_reg_held(test, IBPOST_HOOK_REG_CHECKED,
				       race_reg_msgs_fn);

	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(r->got), -ENODEV);
	if (!IS_ERR_OR_NULL(r->got))
		ibpost_dereg_mr(r->got);
}

/*
 * A consumer without callbacks gets its contexts back with a flush
 * status after the removal, through ibpost_get_*_comp().
 */
static void ibpost_race_get_comp_after_removal(struct kunit *test)
{
	struct race *r = race_setup(test, IB_POLL_SOFTIRQ);
	struct ibpost_comp comp;
	int i;

	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(r->b, (void *)(long)(i + 1),
							  r->lbuf + 64 * i, 64,
							  r->lmr));
	race_remove(test);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ_MSG(test, 1,
				    ibpost_get_recv_comp(r->b, &comp, 5 * HZ),
				    "receive %d did not come back after the removal",
				    i + 1);
		KUNIT_EXPECT_EQ(test, (long)comp.context, (long)(i + 1));
		KUNIT_EXPECT_EQ(test, comp.status, IB_WC_WR_FLUSH_ERR);
	}
	KUNIT_EXPECT_EQ(test, ibpost_post_recv(r->b, NULL, r->lbuf, 64, r->lmr),
			-ENODEV);
}

static int race_remove_fn(void *arg)
{
	return ibpost_test_sh("rdma link delete " RACE_DEV);
}

/* Receive callbacks deregister their MRs during the device's removal. */
static void race_callback_dereg(struct kunit *test, enum ib_poll_context ctx)
{
	struct ibpost_dev *dev = ibpost_test_dev2(test, RACE_DEV, RACE_NETDEV);
	struct ibpost_test_cbd *c = ibpost_test_cbd(test, dev, ctx);
	struct ibpost_test_thread *t;
	int ret = -1;

	t = ibpost_test_run(test, race_remove_fn, NULL);
	KUNIT_ASSERT_TRUE_MSG(test, ibpost_test_join(t, 90 * HZ, &ret),
			      "device removal hung while callbacks deregistered MRs");
	KUNIT_EXPECT_EQ(test, ret, 0);
	/* DIRECT too: removal's drain polls, the callbacks run there. */
	ibpost_test_cbd_check(test, c);
}

static void ibpost_race_callback_dereg_removal_workqueue(struct kunit *test)
{
	race_callback_dereg(test, IB_POLL_WORKQUEUE);
}

static void ibpost_race_callback_dereg_removal_direct(struct kunit *test)
{
	race_callback_dereg(test, IB_POLL_DIRECT);
}

/*
 * A device removed under several QPs whose CQs are polled in softirq
 * waits for one RCU grace period before freeing all their CQs (a second
 * one only if a poll was scheduled again meanwhile), not one per QP: a
 * device with many QPs leaves in about the same time as one with few. An
 * iWARP device's removal tears its QPs down one whole teardown at a time
 * (siw's QP list, see removal.c): one grace period per QP.
 */
static void ibpost_race_removal_one_grace_period(struct kunit *test)
{
	struct race *r = race_setup(test, IB_POLL_SOFTIRQ);
	struct ibpost_qp *qps[RACE_QPS];
	struct ibpost_qp_attr attr;
	unsigned long gps;
	unsigned int i;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = IB_POLL_SOFTIRQ;
	for (i = 0; i < RACE_QPS; i++)
		qps[i] = ibpost_test_qp(test, r->dev, &attr);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(r->b, r, r->lbuf + 2048,
						  64, r->lmr));
	gps = ibpost_test_cq_grace_periods();
	race_remove(test);
	gps = ibpost_test_cq_grace_periods() - gps;
	kunit_info(test, "%lu grace periods for %u QPs\n", gps, RACE_QPS + 2);
	if (ibpost_test_iwarp(r->dev)) {
		KUNIT_EXPECT_GE_MSG(test, gps, (unsigned long)RACE_QPS + 2,
				    "iWARP: %lu grace periods for %u whole teardowns",
				    gps, RACE_QPS + 2);
	} else {
		KUNIT_EXPECT_GE(test, gps, 1UL);
		KUNIT_EXPECT_LE_MSG(test, gps, 2UL,
				    "%lu grace periods for the CQs of %u QPs",
				    gps, RACE_QPS + 2);
	}
	for (i = 0; i < RACE_QPS; i++)
		KUNIT_EXPECT_NULL(test, ibpost_qp_ibqp(qps[i]));
	race_expect_recv_flushed(r);
}

static int race_destroy_fn(void *arg)
{
	ibpost_qp_destroy(arg);
	return 0;
}

struct race_released {
	int n;
	void *ctx[2];
	enum ib_wc_status status[2];
};

static void race_release(struct ibpost_qp *qp, bool send,
			 const struct ibpost_comp *comp)
{
	struct race_released *rel = ibpost_qp_priv(qp);

	if (!send && rel->n < ARRAY_SIZE(rel->ctx)) {
		rel->ctx[rel->n] = comp->context;
		rel->status[rel->n] = comp->status;
	}
	rel->n++;
}

/*
 * A QP destroyed while a removal has torn its QPs down but not yet freed
 * their CQs (the removal held there by the test hook): the destroy
 * finishes that QP's teardown itself, waiting for its own CQs' polls,
 * and returns both receives flushed, once each; the removal then
 * finishes the rest and never touches the CQs the destroy freed.
 */
static void ibpost_race_destroy_between_removal_halves(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev2(test, RACE_DEV, RACE_NETDEV);
	struct race_released *rel;
	struct ibpost_qp_attr aattr, battr;
	struct ibpost_test_thread *t, *d;
	struct ibpost_gate *g;
	struct race *r;
	unsigned long gps;
	int i, ret = -1;

	ibpost_test_need_ib(test, dev,
			    "a removal tears an iWARP device's QPs down one whole teardown at a time (siw's QP list, see providers.rst)");
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	rel = kunit_kzalloc(test, sizeof(*rel), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, r && rel);
	r->test = test;
	r->dev = dev;
	ibpost_test_defer(test, race_free, r);
	r->lbuf = kzalloc(RACE_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->lbuf);
	ibpost_test_attr(&aattr, IB_QPT_RC);
	aattr.poll_ctx = IB_POLL_SOFTIRQ;
	battr = aattr;
	battr.release = race_release;
	battr.priv = rel;
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_connect_pair(dev, &aattr, &battr,
							  &r->a, &r->b,
							  &r->cm));
	r->lmr = ibpost_reg_msgs(dev, r->lbuf, RACE_LEN);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r->lmr);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(r->b, (void *)(100L + i),
						 r->lbuf + 64 * i, 64, r->lmr));

	g = ibpost_gate(test, IBPOST_HOOK_REMOVAL_CQS);
	t = ibpost_test_run(test, race_remove_fn, NULL);
	KUNIT_ASSERT_TRUE_MSG(test,
			      wait_for_completion_timeout(&g->arrived, 60 * HZ),
			      "the removal never reached its CQs");
	/*
	 * Torn down but for its CQs: the drain brought both receives back
	 * (parked for ibpost_get_recv_comp()), the flush is still to come.
	 * Nothing below may end the case while the removal is held.
	 */
	KUNIT_EXPECT_NULL(test, ibpost_qp_ibqp(r->b));
	gps = ibpost_test_cq_grace_periods();
	d = ibpost_test_run(test, race_destroy_fn, r->b);
	KUNIT_ASSERT_TRUE_MSG(test, ibpost_test_join(d, 60 * HZ, NULL),
			      "the destroy hung against the held removal");
	r->b = NULL;
	KUNIT_EXPECT_GE_MSG(test, ibpost_test_cq_grace_periods() - gps, 1UL,
			    "the destroy freed softirq CQs without waiting");
	KUNIT_EXPECT_EQ(test, 2, rel->n);
	for (i = 0; i < 2 && i < rel->n; i++) {
		KUNIT_EXPECT_PTR_EQ(test, rel->ctx[i], (void *)(100L + i));
		KUNIT_EXPECT_EQ(test, rel->status[i], IB_WC_WR_FLUSH_ERR);
	}
	complete_all(&g->release);
	KUNIT_ASSERT_TRUE_MSG(test, ibpost_test_join(t, 90 * HZ, &ret),
			      "the removal hung after the destroy");
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_NULL(test, ibpost_qp_ibqp(r->a));
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&g->hits));
	/* The removal returned nothing of b's a second time. */
	KUNIT_EXPECT_EQ(test, 2, rel->n);
}

/* A DIRECT QP's receive callback that waits for another QP's flush. */
struct race_waiter {
	struct ibpost_qp *other;	/* its receive comes back flushed */
	int got;			/* ibpost_get_recv_comp() on it */
	void *ctx;
	enum ib_wc_status status;
	unsigned long waited;		/* jiffies the wait took */
	int calls;
};

static void race_dereg_at_exit(void *mr)
{
	WARN_ON(ibpost_dereg_mr(mr));
}

static void race_waiter_recv_done(struct ibpost_qp *qp, void *context,
				  const struct ib_wc *wc)
{
	struct race_waiter *w = ibpost_qp_priv(qp);
	struct ibpost_comp comp = {};
	unsigned long start = jiffies;

	if (w->calls++)
		return;
	w->got = ibpost_get_recv_comp(w->other, &comp, 5 * HZ);
	w->waited = jiffies - start;
	w->ctx = comp.context;
	w->status = comp.status;
}

/*
 * A removal under a DIRECT QP whose receive callback, run by the
 * removal's drain of that QP, waits for a softirq QP's flushed receive:
 * the softirq QPs are torn down first (both halves), so the context is
 * back before the DIRECT QP's drain, though the softirq QP was created
 * after it. Batching the DIRECT QP too, or the softirq QP after it,
 * makes the callback wait its whole 5 s for a flush that only the same
 * thread does later.
 */
static void ibpost_race_removal_direct_waits_for_softirq_flush(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev2(test, RACE_DEV, RACE_NETDEV);
	struct ibpost_qp *xa, *xb, *ya, *yb;
	struct ibpost_qp_attr xattr, yattr;
	struct ibpost_test_thread *t;
	struct race_waiter *w;
	struct ibpost_mr *mr;
	int ret = -1;
	void *buf;

	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	buf = kunit_kzalloc(test, RACE_LEN, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, w && buf);
	memset(buf, 0x5a, RACE_LEN);
	ibpost_test_attr(&xattr, IB_QPT_RC);
	xattr.poll_ctx = IB_POLL_DIRECT;
	xattr.recv_done = race_waiter_recv_done;
	xattr.priv = w;
	ibpost_test_qp_pair(test, dev, &xattr, &xattr, &xa, &xb);
	ibpost_test_attr(&yattr, IB_QPT_RC);
	yattr.poll_ctx = IB_POLL_SOFTIRQ;
	ibpost_test_qp_pair(test, dev, &yattr, &yattr, &ya, &yb);
	w->other = yb;
	mr = ibpost_reg_msgs(dev, buf, RACE_LEN);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	ibpost_test_defer(test, race_dereg_at_exit, mr);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(yb, (void *)0x1234L, buf,
						  64, mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(xb, (void *)0x5678L,
						  buf + 64, 64, mr));

	t = ibpost_test_run(test, race_remove_fn, NULL);
	KUNIT_ASSERT_TRUE_MSG(test, ibpost_test_join(t, 90 * HZ, &ret),
			      "the removal hung");
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, w->calls, 1);
	KUNIT_EXPECT_EQ_MSG(test, w->got, 1,
			    "the callback waited %u ms for a flush still to come",
			    jiffies_to_msecs(w->waited));
	KUNIT_EXPECT_PTR_EQ(test, w->ctx, (void *)0x1234L);
	KUNIT_EXPECT_EQ(test, w->status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_LT(test, jiffies_to_msecs(w->waited), 1000U);
}

/* 0 when ibpost's debugfs has a directory @name and none @old. */
static int race_debugfs_named(const char *name, const char *old)
{
	return ibpost_test_sh("[ -e " RACE_DBG "%s/stats ] && [ ! -e " RACE_DBG "%s ]",
			      name, old);
}

/*
 * A renamed device keeps its handle and is found under its new name
 * only, its debugfs directory too; QPs are still made on it.
 */
static void ibpost_race_rename(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev2(test, RACE_DEV, RACE_NETDEV);
	struct ibpost_dev *found, *other;
	struct ibpost_qp_attr attr;

	KUNIT_ASSERT_EQ(test, 0,
			ibpost_test_sh("rdma dev set " RACE_DEV " name " RACE_DEV "r"));
	found = ibpost_dev_get(RACE_DEV "r");
	KUNIT_EXPECT_PTR_EQ(test, found, dev);
	if (!IS_ERR(found))
		ibpost_dev_put(found);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ibpost_dev_get(RACE_DEV)), -ENODEV);
	/* Its ib_device finds it whatever its name, and only it. */
	found = ibpost_dev_get_by_ibdev(ibpost_dev_ibdev(dev));
	KUNIT_EXPECT_PTR_EQ(test, found, dev);
	if (!IS_ERR(found))
		ibpost_dev_put(found);
	other = ibpost_test_dev(test);
	found = ibpost_dev_get_by_ibdev(ibpost_dev_ibdev(other));
	KUNIT_EXPECT_PTR_EQ(test, found, other);
	if (!IS_ERR(found))
		ibpost_dev_put(found);
	KUNIT_EXPECT_EQ_MSG(test, 0, race_debugfs_named(RACE_DEV "r", RACE_DEV),
			    "the debugfs directory kept the old name");
	ibpost_test_attr(&attr, IB_QPT_RC);
	ibpost_test_qp(test, dev, &attr);
	KUNIT_EXPECT_EQ(test, 0,
			ibpost_test_sh("rdma dev set " RACE_DEV "r name " RACE_DEV));
	found = ibpost_dev_get(RACE_DEV);
	KUNIT_EXPECT_PTR_EQ(test, found, dev);
	if (!IS_ERR(found))
		ibpost_dev_put(found);
	KUNIT_EXPECT_EQ(test, 0, race_debugfs_named(RACE_DEV, RACE_DEV "r"));
}

/* An MR or an address handle of another device is refused: -EINVAL. */
static void ibpost_race_other_device_handles(struct kunit *test)
{
	struct ibpost_dev *dev2 = ibpost_test_dev2(test, RACE_DEV, RACE_NETDEV);
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_qp_attr attr;
	struct ibpost_qp *ud, *ud2;
	struct rdma_ah_attr av;
	struct ibpost_mr *mr2;
	struct ib_ah *ah2;
	void *buf;

	buf = kunit_kzalloc(test, 256, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	mr2 = ibpost_reg_msgs(dev2, buf, 256);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr2);
	KUNIT_EXPECT_EQ(test, ibpost_post_send(p->a, NULL, buf, 64, mr2,
					       IB_SEND_SIGNALED), -EINVAL);
	KUNIT_EXPECT_EQ(test, ibpost_post_recv(p->b, NULL, buf, 64, mr2),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(mr2));

	ibpost_test_need_ud(test, dev2);
	ibpost_test_attr(&attr, IB_QPT_UD);
	ud = ibpost_test_qp(test, p->dev, &attr);
	ud2 = ibpost_test_qp(test, dev2, &attr);
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_loopback_av(ud2, &av));
	ah2 = rdma_create_ah(ibpost_dev_pd(dev2), &av,
			     RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ah2);
	KUNIT_EXPECT_EQ(test, ibpost_post_ud_send(ud, NULL, p->abuf.buf, 64,
						  p->abuf.mr, IB_SEND_SIGNALED,
						  ah2, 1, attr.qkey), -EINVAL);
	rdma_destroy_ah(ah2, RDMA_DESTROY_AH_SLEEPABLE);
}

/*
 * Many rounds without hooks, for the interleavings nobody thought of: on a
 * fresh rxe2 each round, one thread registers and deregisters remote MRs
 * through a QP whose send queue holds a SEND b has no receive for, another
 * does the same with local MRs, and the device is removed after a random
 * delay. Every call must end (an MR, or -ENODEV/-EIO/-ETIMEDOUT once the
 * device is going), every dereg must succeed, the SEND must come back.
 * Each loop runs until an error ends it; each kind of loop must have been
 * cut by the removal (ended after it began) in some round: a remote loop
 * may end first, when the stalled SEND's retries end and its QP errs.
 */
#define RACE_ROUNDS	6
#define RACE_LOOP_SECS	60	/* a loop's bound, should nothing cut it */

struct race_loop {
	struct race *r;
	bool remote;
	atomic_t regs, errs;
	long last_err;
	long cut;		/* the removal's errno that ended the loop */
	unsigned long ended;	/* when (jiffies) */
};

static int race_loop_fn(void *arg)
{
	unsigned long deadline = jiffies + RACE_LOOP_SECS * HZ;
	struct race_loop *l = arg;
	struct ibpost_mr *mr;

	while (time_before(jiffies, deadline)) {
		mr = l->remote ? ibpost_reg_write(l->r->a, l->r->buf, RACE_LEN) :
				 ibpost_reg_msgs(l->r->dev, l->r->buf, RACE_LEN);
		if (IS_ERR(mr)) {
			if (PTR_ERR(mr) != -ENODEV && PTR_ERR(mr) != -EIO &&
			    PTR_ERR(mr) != -ETIMEDOUT) {
				atomic_inc(&l->errs);
				l->last_err = PTR_ERR(mr);
			} else {
				l->cut = PTR_ERR(mr);
				l->ended = jiffies;
			}
			break;
		}
		atomic_inc(&l->regs);
		if (ibpost_dereg_mr(mr))
			atomic_inc(&l->errs);
		cond_resched();
	}
	return 0;
}

static void ibpost_race_rounds(struct kunit *test)
{
	int cut_by_removal[2] = {};
	unsigned long removing;
	struct race_loop *l;
	int round;

	l = kunit_kcalloc(test, 2, sizeof(*l), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, l);
	for (round = 0; round < RACE_ROUNDS; round++) {
		struct ibpost_test_thread *t[2];
		struct race *r = race_setup(test, round & 1 ? IB_POLL_WORKQUEUE :
						      IB_POLL_SOFTIRQ);
		int i;

		for (i = 0; i < 2; i++) {
			l[i].r = r;
			l[i].remote = !i;
			atomic_set(&l[i].regs, 0);
			atomic_set(&l[i].errs, 0);
			l[i].cut = 0;
			t[i] = ibpost_test_run(test, race_loop_fn, &l[i]);
		}
		/*
		 * Some registrations go through, then the send queue stalls
		 * (on IB/RoCE: iWARP has no RNR to hold a SEND, which would
		 * end the connection; there they race the removal alone).
		 */
		msleep(100);
		if (!ibpost_test_iwarp(r->dev))
			race_stall(r);
		/*
		 * The first two rounds (one per poll context) remove at
		 * once, before the stalled SEND's RNR retries can end a
		 * remote registration (6.12 rxe gives up within a few
		 * tens of ms, sooner under load): the removal cuts it there
		 * for sure; the others remove at a random moment.
		 */
		msleep(round < 2 ? 0 : get_random_u32() % 400);
		removing = jiffies;
		race_remove(test);
		for (i = 0; i < 2; i++) {
			KUNIT_ASSERT_TRUE_MSG(test,
					      ibpost_test_join(t[i], 120 * HZ, NULL),
					      "round %d: a registration loop hung",
					      round);
			KUNIT_EXPECT_EQ_MSG(test, atomic_read(&l[i].errs), 0,
					    "round %d: %s registration failed: %ld",
					    round, i ? "local" : "remote",
					    l[i].last_err);
			KUNIT_EXPECT_GT(test, atomic_read(&l[i].regs), 0);
			KUNIT_EXPECT_TRUE_MSG(test, l[i].cut,
					      "round %d: the %s registrations ran out their time uncut",
					      round, i ? "local" : "remote");
			/*
			 * Cut by the removal, or earlier: a remote
			 * registration fails (-EIO) once the stalled SEND's
			 * RNR retries end and the QP errs (on 6.12 rxe gives
			 * up sooner), which raced nothing.
			 */
			if (l[i].cut && time_after_eq(l[i].ended, removing))
				cut_by_removal[i]++;
		}
		if (!ibpost_test_iwarp(r->dev))
			race_expect_stall_flushed(r);
		kunit_info(test, "round %d: %d remote and %d local registrations before the removal, cut by %ld and %ld\n",
			   round, atomic_read(&l[0].regs), atomic_read(&l[1].regs),
			   l[0].cut, l[1].cut);
	}
	/* Each kind of registration was cut by a removal at least once. */
	kunit_info(test, "rounds cut by the removal: remote %d, local %d of %d\n",
		   cut_by_removal[0], cut_by_removal[1], RACE_ROUNDS);
	KUNIT_EXPECT_GT_MSG(test, cut_by_removal[0], 0,
			    "no remote registration loop was cut by the removal");
	KUNIT_EXPECT_GT_MSG(test, cut_by_removal[1], 0,
			    "no local registration loop was cut by the removal");
}

/*
 * The remote address and rkey of a remote MR are read without a lock, in
 * any context, also while device removal releases the MR's provider
 * objects: a thread spins on them across the removal and must always see
 * the values registered (nor may it touch anything the removal frees).
 */
enum { RACE_KEYS_BEFORE, RACE_KEYS_DURING, RACE_KEYS_AFTER, RACE_KEYS_STOP };

struct race_keys {
	struct ibpost_mr *mr;
	u64 addr;
	u32 rkey;
	atomic_t phase;
	atomic_long_t reads[RACE_KEYS_STOP], changed;
	struct ibpost_test_thread *t;
};

static int race_keys_fn(void *arg)
{
	struct race_keys *k = arg;
	unsigned long i = 0;
	int phase;

	while ((phase = atomic_read(&k->phase)) != RACE_KEYS_STOP) {
		if (ibpost_mr_rkey(k->mr) != k->rkey ||
		    ibpost_mr_remote_addr(k->mr) != k->addr)
			atomic_long_inc(&k->changed);
		atomic_long_inc(&k->reads[phase]);
		if (!(++i % 64))
			cond_resched();
	}
	return 0;
}

/* Stop the reader, then release the MR (before race_free() frees buf). */
static void race_keys_free(void *data)
{
	struct race_keys *k = data;

	atomic_set(&k->phase, RACE_KEYS_STOP);
	/* A reader that does not stop keeps its MR and @k. */
	if (k->t && !ibpost_test_join(k->t, 10 * HZ, NULL))
		return;
	if (!IS_ERR_OR_NULL(k->mr))
		WARN_ON(ibpost_dereg_mr(k->mr));
	kfree(k);
}

static void ibpost_race_mr_keys_vs_removal(struct kunit *test)
{
	bool tainted = test_taint(TAINT_BAD_PAGE);
	struct race *r = race_setup(test, IB_POLL_SOFTIRQ);
	struct race_keys *k;
	int i;

	k = kzalloc(sizeof(*k), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, k);
	ibpost_test_defer(test, race_keys_free, k);
	k->mr = ibpost_reg_write(r->a, r->buf, RACE_LEN);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, k->mr);
	k->rkey = ibpost_mr_rkey(k->mr);
	k->addr = ibpost_mr_remote_addr(k->mr);
	KUNIT_ASSERT_NE(test, k->addr, 0ULL);
	k->t = ibpost_test_run(test, race_keys_fn, k);
	for (i = 0; i < 250 && !atomic_long_read(&k->reads[RACE_KEYS_BEFORE]);
	     i++)
		msleep(20);
	KUNIT_ASSERT_GT_MSG(test, atomic_long_read(&k->reads[RACE_KEYS_BEFORE]),
			    0L, "the reader did not start within 5 s");
	atomic_set(&k->phase, RACE_KEYS_DURING);
	race_remove(test);
	atomic_set(&k->phase, RACE_KEYS_AFTER);
	for (i = 0; i < 50 &&
	     atomic_long_read(&k->reads[RACE_KEYS_AFTER]) < 1000; i++)
		msleep(20);
	atomic_set(&k->phase, RACE_KEYS_STOP);
	KUNIT_ASSERT_TRUE_MSG(test, ibpost_test_join(k->t, 10 * HZ, NULL),
			      "the reader did not stop");
	k->t = NULL;
	kunit_info(test, "reads: %ld before, %ld during and %ld after the removal\n",
		   atomic_long_read(&k->reads[RACE_KEYS_BEFORE]),
		   atomic_long_read(&k->reads[RACE_KEYS_DURING]),
		   atomic_long_read(&k->reads[RACE_KEYS_AFTER]));
	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&k->changed), 0L,
			    "the rkey or the remote address changed across the removal");
	KUNIT_EXPECT_GT_MSG(test, atomic_long_read(&k->reads[RACE_KEYS_DURING]),
			    0L, "the reader did not run during the removal");
	KUNIT_EXPECT_GT(test, atomic_long_read(&k->reads[RACE_KEYS_AFTER]), 0L);
	KUNIT_EXPECT_EQ(test, ibpost_mr_rkey(k->mr), k->rkey);
	KUNIT_EXPECT_EQ(test, ibpost_mr_remote_addr(k->mr), k->addr);
	KUNIT_EXPECT_FALSE_MSG(test, !tainted && test_taint(TAINT_BAD_PAGE),
			       "a bad-page report (KASAN) during the removal: see the log");
}

static struct kunit_case ibpost_race_cases[] = {
	KUNIT_CASE(ibpost_race_dereg_vs_removal),
	KUNIT_CASE(ibpost_race_reg_vs_removal),
	KUNIT_CASE(ibpost_race_reg_msgs_vs_removal),
	KUNIT_CASE(ibpost_race_get_comp_after_removal),
	KUNIT_CASE(ibpost_race_rename),
	KUNIT_CASE(ibpost_race_removal_one_grace_period),
	KUNIT_CASE(ibpost_race_destroy_between_removal_halves),
	KUNIT_CASE(ibpost_race_removal_direct_waits_for_softirq_flush),
	KUNIT_CASE(ibpost_race_other_device_handles),
	KUNIT_CASE(ibpost_race_callback_dereg_removal_workqueue),
	KUNIT_CASE(ibpost_race_callback_dereg_removal_direct),
	KUNIT_CASE(ibpost_race_rounds),
	KUNIT_CASE(ibpost_race_mr_keys_vs_removal),
	{}
};

static struct kunit_suite ibpost_race_suite = {
	.name = "ibpost_race",
	.test_cases = ibpost_race_cases,
};

kunit_test_suite(ibpost_race_suite);
