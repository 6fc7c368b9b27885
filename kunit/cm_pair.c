// SPDX-License-Identifier: GPL-2.0
/*
 * The KUnit side of connected pairs (cm_connect.c makes them): a pair
 * asserted and freed at test exit, and the UD refusal on iWARP.
 */
#include "ibpost_test.h"

void ibpost_test_need_ud(struct kunit *test, struct ibpost_dev *dev)
{
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp;

	if (!ibpost_test_iwarp(dev))
		return;
	/* What ibpost promises instead: a clear refusal. */
	ibpost_test_attr(&attr, IB_QPT_UD);
	qp = ibpost_qp_create(dev, &attr);
	if (!IS_ERR(qp))
		ibpost_qp_destroy(qp);
	KUNIT_ASSERT_EQ(test, PTR_ERR(qp), -EOPNOTSUPP);
	ibpost_test_skip(test, "%s",
			 "iWARP: no UD QPs (creation refused with -EOPNOTSUPP)");
}

static void cm_pair_free(void *data)
{
	ibpost_test_cm_free(data);
}

void ibpost_test_defer_cm(struct kunit *test, struct ibpost_test_cm *cm)
{
	if (cm)
		ibpost_test_defer(test, cm_pair_free, cm);
}

void ibpost_test_qp_pair(struct kunit *test, struct ibpost_dev *dev,
			 const struct ibpost_qp_attr *aattr,
			 const struct ibpost_qp_attr *battr,
			 struct ibpost_qp **a, struct ibpost_qp **b)
{
	struct ibpost_test_cm *cm;
	int ret;

	ret = ibpost_test_connect_pair(dev, aattr, battr ?: aattr, a, b, &cm);
	/* Freed in reverse: the QPs first, then the rdma_cm ids. */
	ibpost_test_defer_cm(test, cm);
	if (*a)
		ibpost_test_defer_qp(test, *a);
	if (*b)
		ibpost_test_defer_qp(test, *b);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "cannot connect a pair on %s: %d",
			    dev_name(&ibpost_dev_ibdev(dev)->dev), ret);
}
