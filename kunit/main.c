// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost KUnit module: helpers shared by the suites. The suites run when
 * the module is loaded (CONFIG_KUNIT=m), after the guest has made rxe0.
 */
#include <linux/module.h>
#include "ibpost_test.h"

char *ibpost_test_ibdev = "rxe0";
module_param_named(ibdev, ibpost_test_ibdev, charp, 0444);
MODULE_PARM_DESC(ibdev, "RDMA device the suites run against (default rxe0)");

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

static void ibpost_test_defer(struct kunit *test, void (*fn)(void *),
			      void *data)
{
	struct ibpost_test_action *a = kzalloc(sizeof(*a), GFP_KERNEL);

	if (!a) {
		fn(data);
		KUNIT_FAIL(test, "out of memory for cleanup");
		return;
	}
	a->fn = fn;
	a->data = data;
	if (!kunit_alloc_resource(test, ibpost_test_action_init,
				  ibpost_test_action_free, GFP_KERNEL, a)) {
		ibpost_test_action_free(&(struct kunit_resource){ .data = a });
		KUNIT_FAIL(test, "out of memory for cleanup");
	}
}

static bool ibpost_test_match_action(struct kunit *test,
				     struct kunit_resource *res, void *match)
{
	struct ibpost_test_action *a = res->data;

	return res->free == ibpost_test_action_free && a->data == match;
}

static void ibpost_test_dev_put(void *data)
{
	ibpost_dev_put(data);
}

struct ibpost_dev *ibpost_test_dev(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_dev_get(ibpost_test_ibdev);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(dev), "no ibpost device %s: %ld",
			       ibpost_test_ibdev, PTR_ERR(dev));
	ibpost_test_defer(test, ibpost_test_dev_put, dev);
	return dev;
}

void ibpost_test_attr(struct ibpost_qp_attr *attr, enum ib_qp_type type)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_type = type;
	attr->max_send_wr = 16;
	attr->max_recv_wr = 16;
	attr->max_send_sge = 2;
	attr->max_recv_sge = 2;
	attr->qkey = 0x11111111;
	attr->poll_ctx = IB_POLL_SOFTIRQ;
}

static void ibpost_test_qp_free(void *data)
{
	ibpost_qp_destroy(data);
}

struct ibpost_qp *ibpost_test_qp(struct kunit *test, struct ibpost_dev *dev,
				 const struct ibpost_qp_attr *attr)
{
	struct ibpost_qp *qp = ibpost_qp_create(dev, attr);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	ibpost_test_defer(test, ibpost_test_qp_free, qp);
	return qp;
}

void ibpost_test_qp_destroy(struct kunit *test, struct ibpost_qp *qp)
{
	KUNIT_EXPECT_EQ(test, 0, kunit_destroy_resource(test,
				ibpost_test_match_action, qp));
}

enum ib_qp_state ibpost_test_qp_state(struct kunit *test,
				      struct ibpost_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr qa;

	KUNIT_ASSERT_EQ(test, 0, ib_query_qp(ibpost_qp_ibqp(qp), &qa,
					     IB_QP_STATE, &init));
	return qa.qp_state;
}

MODULE_DESCRIPTION("KUnit suites for ibpost, run against a live RDMA device");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(IBPOST);
