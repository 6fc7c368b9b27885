// SPDX-License-Identifier: GPL-2.0
/*
 * The helper module ibpost_test_helpers, shared by both KUnit modules
 * (ibpost_kunit and ibpost_xhost_kunit): deferred cleanup, registered
 * buffers, waiting for a completion, and what a case needs to know of the
 * device under test (iWARP or not, a QP's state).
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include "../ibpost_test.h"
#include "../../drivers/ibpost_test_access.h"

/*
 * Deferred cleanup (6.1 lacks kunit_add_action()): a named resource whose
 * free runs @fn(@data) when the test ends, or earlier through
 * ibpost_test_undefer().
 */
struct ibpost_test_action {
	void (*fn)(void *data);
	void *data;
};

static int ibpost_test_action_init(struct kunit_resource *res, void *context)
{
	res->data = context;
	return 0;
}

static void ibpost_test_action_free(struct kunit_resource *res)
{
	struct ibpost_test_action *a = res->data;

	a->fn(a->data);
	kfree(a);
}

void ibpost_test_defer(struct kunit *test, void (*fn)(void *), void *data)
{
	struct ibpost_test_action *a = kzalloc(sizeof(*a), GFP_KERNEL);

	if (!a) {
		fn(data);
		/* @data is gone: the caller must not go on with it. */
		KUNIT_FAIL_AND_ABORT(test, "out of memory for cleanup");
	}
	a->fn = fn;
	a->data = data;
	if (!kunit_alloc_resource(test, ibpost_test_action_init,
				  ibpost_test_action_free, GFP_KERNEL, a)) {
		ibpost_test_action_free(&(struct kunit_resource){ .data = a });
		KUNIT_FAIL_AND_ABORT(test, "out of memory for cleanup");
	}
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_defer, IBPOST_TEST_NS);

static bool ibpost_test_match_action(struct kunit *test,
				     struct kunit_resource *res, void *match)
{
	struct ibpost_test_action *a = res->data;

	return res->free == ibpost_test_action_free && a->data == match;
}

void ibpost_test_undefer(struct kunit *test, void *data)
{
	KUNIT_EXPECT_EQ(test, 0,
			kunit_destroy_resource(test, ibpost_test_match_action,
					       data));
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_undefer, IBPOST_TEST_NS);

void ibpost_test_buf_init(struct kunit *test, struct ibpost_test_buf *b,
			  struct ibpost_dev *dev, struct ibpost_qp *qp,
			  size_t len, int kind)
{
	b->len = len;
	b->buf = kzalloc(len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b->buf);
	if (kind == IBPOST_TEST_READ)
		b->mr = ibpost_reg_read(qp, b->buf, len);
	else if (kind == IBPOST_TEST_WRITE)
		b->mr = ibpost_reg_write(qp, b->buf, len);
	else
		b->mr = ibpost_reg_msgs(dev, b->buf, len);
	if (IS_ERR(b->mr)) {
		kfree(b->buf);
		b->buf = NULL;
		KUNIT_FAIL_AND_ABORT(test, "registering %zu bytes: %ld", len,
				     PTR_ERR(b->mr));
	}
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_buf_init, IBPOST_TEST_NS);

void ibpost_test_buf_fini(struct ibpost_test_buf *b)
{
	/* A buffer an MR still maps is leaked, not freed under it. */
	if (b->buf && !WARN_ON(ibpost_dereg_mr(b->mr)))
		kfree(b->buf);
	b->buf = NULL;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_buf_fini, IBPOST_TEST_NS);

struct ibpost_test_buf *ibpost_test_buf_new(struct kunit *test,
					    struct ibpost_dev *dev, size_t len)
{
	struct ibpost_test_buf *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	ibpost_test_buf_init(test, b, dev, NULL, len, IBPOST_TEST_MSGS);
	/* Released before @b itself: kunit frees in reverse order. */
	ibpost_test_defer(test, (void (*)(void *))ibpost_test_buf_fini, b);
	return b;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_buf_new, IBPOST_TEST_NS);

void ibpost_test_send_comp_secs(struct kunit *test, struct ibpost_qp *qp,
				struct ibpost_comp *comp, unsigned int secs)
{
	KUNIT_ASSERT_EQ_MSG(test, 1, ibpost_get_send_comp(qp, comp, secs * HZ),
			    "no send completion within %u s", secs);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_send_comp_secs, IBPOST_TEST_NS);

void ibpost_test_recv_comp_secs(struct kunit *test, struct ibpost_qp *qp,
				struct ibpost_comp *comp, unsigned int secs)
{
	KUNIT_ASSERT_EQ_MSG(test, 1, ibpost_get_recv_comp(qp, comp, secs * HZ),
			    "no receive completion within %u s", secs);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_recv_comp_secs, IBPOST_TEST_NS);

void ibpost_test_send_ok(struct kunit *test, struct ibpost_qp *qp, void *ctx)
{
	struct ibpost_comp comp;

	ibpost_test_send_comp(test, qp, &comp);
	KUNIT_EXPECT_PTR_EQ(test, ctx, comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_send_ok, IBPOST_TEST_NS);

void ibpost_test_recv_ok(struct kunit *test, struct ibpost_qp *qp, void *ctx,
			 u32 len)
{
	struct ibpost_comp comp;

	ibpost_test_recv_comp(test, qp, &comp);
	KUNIT_EXPECT_PTR_EQ(test, ctx, comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, len, comp.byte_len);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_recv_ok, IBPOST_TEST_NS);

void ibpost_test_send_inv_ok(struct kunit *test, struct ibpost_qp *qp,
			     u64 wr_id, struct ibpost_mr *mr, void *buf,
			     u32 len, u32 rkey)
{
	struct ib_send_wr inv = {
		.wr_id = wr_id,
		.opcode = IB_WR_SEND_WITH_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = rkey,
		.num_sge = 1,
	};
	const struct ib_send_wr *bad;
	struct ib_sge sge;

	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(mr, buf, len, &sge));
	inv.sg_list = &sge;
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(qp, &inv, &bad));
	ibpost_test_send_ok(test, qp, (void *)(uintptr_t)wr_id);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_send_inv_ok, IBPOST_TEST_NS);

void ibpost_test_send_comp(struct kunit *test, struct ibpost_qp *qp,
			   struct ibpost_comp *comp)
{
	ibpost_test_send_comp_secs(test, qp, comp, 10);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_send_comp, IBPOST_TEST_NS);

void ibpost_test_recv_comp(struct kunit *test, struct ibpost_qp *qp,
			   struct ibpost_comp *comp)
{
	ibpost_test_recv_comp_secs(test, qp, comp, 10);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_recv_comp, IBPOST_TEST_NS);

void ibpost_test_no_send_comp(struct kunit *test, struct ibpost_qp *qp)
{
	struct ibpost_comp comp;

	KUNIT_EXPECT_EQ(test, 0, ibpost_get_send_comp(qp, &comp, HZ / 5));
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_no_send_comp, IBPOST_TEST_NS);

u32 ibpost_test_in_use(struct ibpost_qp *qp, bool send)
{
	struct ibpost_test_queue tq;

	ibpost_test_queue_get(qp, send, &tq);
	return tq.head - tq.tail;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_in_use, IBPOST_TEST_NS);

/*
 * The suites' expectations and skips follow the device itself:
 * rdma_protocol_iwarp() of its first port. ibpost's behaviour follows
 * what ibpost found at the device's add (white-box): where the two differ,
 * @test (or the case the calling thread runs) fails, so that ibpost
 * misclassifying a device cannot turn cases into skips or pass them with
 * the other provider's expectations. A removed device has no ib_device
 * left to ask: there only ibpost's record is (checked by every call
 * made while the device was there).
 */
static bool ibpost_test_iwarp_of(struct kunit *test, struct ibpost_dev *dev)
{
	struct ib_device *ibdev = ibpost_dev_ibdev(dev);
	bool found = ibpost_test_dev_iwarp(dev);
	bool iwarp;

	if (!ibdev)
		return found;
	iwarp = rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev));
	if (iwarp == found)
		return iwarp;
	if (test)
		KUNIT_FAIL(test, "ibpost takes %s for %s, rdma_protocol_iwarp() says %s",
			   dev_name(&ibdev->dev), found ? "iWARP" : "IB/RoCE",
			   iwarp ? "iWARP" : "IB/RoCE");
	else
		WARN(1, "ibpost takes %s for %s, rdma_protocol_iwarp() says %s\n",
		     dev_name(&ibdev->dev), found ? "iWARP" : "IB/RoCE",
		     iwarp ? "iWARP" : "IB/RoCE");
	return iwarp;
}

bool ibpost_test_iwarp(struct ibpost_dev *dev)
{
	/* Called without the case's struct kunit: the thread knows it. */
	return ibpost_test_iwarp_of(current->kunit_test, dev);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_iwarp, IBPOST_TEST_NS);

enum ib_qp_state ibpost_test_qp_state(struct kunit *test,
				      struct ibpost_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr qa;

	/* White-box on iWARP: see the header. */
	if (ibpost_test_iwarp_of(test, ibpost_test_qp_dev(qp)))
		return ibpost_test_qp_tracked_state(qp);
	KUNIT_ASSERT_EQ(test, 0, ib_query_qp(ibpost_qp_ibqp(qp), &qa,
					     IB_QP_STATE, &init));
	return qa.qp_state;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_qp_state, IBPOST_TEST_NS);

bool ibpost_test_wait_err(struct kunit *test, struct ibpost_qp *qp)
{
	int i;

	for (i = 0; i < 50; i++) {
		if (ibpost_test_qp_state(test, qp) == IB_QPS_ERR)
			return true;
		msleep(100);
	}
	return false;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_wait_err, IBPOST_TEST_NS);

/*
 * 6.1's KUnit prints a skipped parameter as a plain "ok": the reason goes
 * to the log as well, where the test run lists it.
 */
__noreturn void ibpost_test_skip(struct kunit *test, const char *fmt, ...)
{
	char why[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	/* kunit_skip() would overwrite the failure of a check made before. */
	if (READ_ONCE(test->status) == KUNIT_FAILURE) {
		KUNIT_FAIL(test, "failed before the skip (%s)", why);
		kunit_try_catch_throw(&test->try_catch);
	}
	kunit_info(test, "ibpost-skip: %s\n", why);
	kunit_skip(test, "%s", why);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_skip, IBPOST_TEST_NS);

/*
 * Not declared __noreturn, though it does not return when it skips: a
 * caller's compiled code then never ends in the call, which objtool,
 * not knowing another module's noreturn functions, would read as
 * running on into the next function.
 */
void ibpost_test_skip_unless(struct kunit *test, bool cond, const char *why)
{
	if (!cond)
		ibpost_test_skip(test, "%s", why);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_skip_unless, IBPOST_TEST_NS);

void ibpost_test_need_ib(struct kunit *test, struct ibpost_dev *dev,
			 const char *why)
{
	if (ibpost_test_iwarp_of(test, dev))
		ibpost_test_skip(test, "iWARP: %s", why);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_need_ib, IBPOST_TEST_NS);

MODULE_DESCRIPTION("ibpost test helper: what the KUnit suites share");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(IBPOST_NS);
