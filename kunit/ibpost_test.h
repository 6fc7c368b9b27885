/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of ibpost's KUnit suites. The suites run against a real
 * RDMA device (rxe0 in the test guest, or the one named by the module
 * parameter "ibdev").
 */
#ifndef _IBPOST_TEST_H
#define _IBPOST_TEST_H

#include <kunit/test.h>
#include <rdma/ibpost.h>

extern char *ibpost_test_ibdev;

/* The device under test, with a reference dropped at test exit. */
struct ibpost_dev *ibpost_test_dev(struct kunit *test);

/* Default attributes: RC, 16/16 WRs, 2 SGEs, no callbacks. */
void ibpost_test_attr(struct ibpost_qp_attr *attr, enum ib_qp_type type);

/* Create a QP that is destroyed at test exit unless destroyed before. */
struct ibpost_qp *ibpost_test_qp(struct kunit *test, struct ibpost_dev *dev,
				 const struct ibpost_qp_attr *attr);
/* Destroy a QP made by ibpost_test_qp() now. */
void ibpost_test_qp_destroy(struct kunit *test, struct ibpost_qp *qp);

/* The QP's state as the provider reports it. */
enum ib_qp_state ibpost_test_qp_state(struct kunit *test,
				      struct ibpost_qp *qp);

#endif /* _IBPOST_TEST_H */
