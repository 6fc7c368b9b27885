/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Connected RC pairs on any device, from the helper module ibpost_test_cm
 * (cm_connect.c), for the KUnit suites and for the test consumers the
 * guest's device scenarios load. No KUnit. The QPs and rdma_cm ids are
 * credited to the calling module, as ibpost's own wrappers do.
 */
#ifndef _IBPOST_CM_CONNECT_H
#define _IBPOST_CM_CONNECT_H

#include <rdma/ibpost.h>

/* The helper modules' export namespace, spelt as IBPOST_NS is. */
#define IBPOST_TEST_NS __IBPOST_NS_NAME(IBPOST_TEST)

struct sockaddr_in;
struct ibpost_test_cm;

/* The first IPv4 address of the netdev @dev is on, into @sin. */
int ibpost_test_dev_addr(struct ibpost_dev *dev, struct sockaddr_in *sin);

/*
 * Two RC QPs of @dev, created with @aattr and @battr and connected to
 * each other: by ibpost_qp_connect_loopback() on InfiniBand and RoCE, by
 * rdma_cm to the address of @dev's netdev on iWARP (*@cm then holds the
 * rdma_cm ids, freed by ibpost_test_cm_free() after both QPs). On failure
 * the QPs made so far are in *@a and *@b for the caller to destroy.
 */
int __ibpost_test_connect_pair(struct ibpost_dev *dev,
			       const struct ibpost_qp_attr *aattr,
			       const struct ibpost_qp_attr *battr,
			       struct ibpost_qp **a, struct ibpost_qp **b,
			       struct ibpost_test_cm **cm, const char *caller);
int __ibpost_test_cm_connect(struct ibpost_dev *dev,
			     const struct ibpost_qp_attr *aattr,
			     const struct ibpost_qp_attr *battr,
			     struct ibpost_qp **a, struct ibpost_qp **b,
			     struct ibpost_test_cm **cm, const char *caller);
#define ibpost_test_connect_pair(dev, aattr, battr, a, b, cm) \
	__ibpost_test_connect_pair(dev, aattr, battr, a, b, cm, KBUILD_MODNAME)
/* The rdma_cm way of ibpost_test_connect_pair(), on any device. */
#define ibpost_test_cm_connect(dev, aattr, battr, a, b, cm) \
	__ibpost_test_cm_connect(dev, aattr, battr, a, b, cm, KBUILD_MODNAME)
void ibpost_test_cm_free(struct ibpost_test_cm *cm);

#endif /* _IBPOST_CM_CONNECT_H */
