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
#include "compat.h"

extern char *ibpost_test_ibdev;

/* A "name=value" from the guest's /ibpost/kunit_args, or @def. */
uint ibpost_test_knob(const char *name, uint def);

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

/* Run @fn(@data) when the test ends (6.1 lacks kunit_add_action()). */
void ibpost_test_defer(struct kunit *test, void (*fn)(void *), void *data);

/* A kmalloc'd buffer registered for local access, freed at test exit. */
struct ibpost_test_buf {
	void *buf;
	size_t len;
	struct ibpost_mr *mr;
};

/*
 * A connected loopback RC pair with registered buffers on each side:
 * a->abuf, b->bbuf (local), and on b a buffer the peer may write (bw) and
 * one it may read (br). NULL callbacks: completions through
 * ibpost_get_*_comp(). Torn down at test exit: QPs first, then MRs.
 */
struct ibpost_test_pair {
	struct ibpost_dev *dev;
	struct ibpost_qp *a, *b;
	struct ibpost_qp_attr got;
	struct ibpost_test_buf abuf, bbuf, bw, br;
};

#define IBPOST_TEST_BUF_LEN 8192

struct ibpost_test_pair *ibpost_test_pair(struct kunit *test,
					  const struct ibpost_qp_attr *attr);
struct ibpost_test_pair *ibpost_test_pair_len(struct kunit *test,
					      const struct ibpost_qp_attr *attr,
					      size_t len);
/* Register @len bytes (kmalloc) on @dev; remote access through @qp. */
void ibpost_test_buf_init(struct kunit *test, struct ibpost_test_buf *b,
			  struct ibpost_dev *dev, struct ibpost_qp *qp,
			  size_t len, int kind);
void ibpost_test_buf_fini(struct ibpost_test_buf *b);
enum { IBPOST_TEST_MSGS, IBPOST_TEST_READ, IBPOST_TEST_WRITE };

/* Fill with a pattern derived from @seed. */
void ibpost_test_fill(void *buf, size_t len, u32 seed);

/* Take one send/recv completion, failing the test on timeout. */
void ibpost_test_send_comp(struct kunit *test, struct ibpost_qp *qp,
			   struct ibpost_comp *comp);
void ibpost_test_recv_comp(struct kunit *test, struct ibpost_qp *qp,
			   struct ibpost_comp *comp);
/* Expect no further send completion within a short wait. */
void ibpost_test_no_send_comp(struct kunit *test, struct ibpost_qp *qp);

/*
 * Move a QP of a loopback RC pair by hand through ibpost_qp_modify(), up
 * to @state (RESET..RTS), addressed at @peer: bounded retries (retry_cnt
 * 1, timeout 14), @min_rnr_timer and @rnr_retry as given.
 */
void ibpost_test_connect(struct kunit *test, struct ibpost_qp *qp,
			 struct ibpost_qp *peer, enum ib_qp_state state,
			 u8 min_rnr_timer, u8 rnr_retry);

/* An AH to @qp's own port on ibpost's PD, destroyed at test exit. */
struct ib_ah *ibpost_test_loopback_ah(struct kunit *test, struct ibpost_qp *qp);

/*
 * A connected loopback RC pair on @dev polled in @ctx, with
 * IBPOST_TEST_CBD_N receives on b, each on a buffer of its own whose MR
 * its completion callback deregisters (from a work item when the callback
 * runs in softirq, where it cannot sleep). Both QPs are destroyed at test
 * exit unless destroyed before (ibpost_test_qp_destroy()).
 */
#define IBPOST_TEST_CBD_N	4

struct ibpost_test_cbd;

struct ibpost_test_cbd_recv {
	struct ibpost_test_cbd *cbd;
	struct work_struct work;
	struct ibpost_mr *mr;
	void *buf;
};

struct ibpost_test_cbd {
	struct ibpost_qp *a, *b;
	struct ibpost_test_cbd_recv recv[IBPOST_TEST_CBD_N];
	atomic_t calls, flushed, dereg_ok;
};

struct ibpost_test_cbd *ibpost_test_cbd(struct kunit *test,
					struct ibpost_dev *dev,
					enum ib_poll_context ctx);
/* Every receive came back flushed and its MR deregistered. */
void ibpost_test_cbd_check(struct kunit *test, struct ibpost_test_cbd *c);

/* Run a shell command in the guest; its wait status (0: success). */
__printf(1, 2) int ibpost_test_sh(const char *fmt, ...);

/*
 * A second device: rxe @name on a new dummy netdev @netdev, with a
 * reference; both deleted at test exit unless the test removed them.
 */
struct ibpost_dev *ibpost_test_dev2(struct kunit *test, const char *name,
				    const char *netdev);

/* @fn(@arg) in a kernel thread; join with a timeout (false: still running). */
struct ibpost_test_thread;
struct ibpost_test_thread *ibpost_test_run(struct kunit *test,
					   int (*fn)(void *arg), void *arg);
bool ibpost_test_join(struct ibpost_test_thread *t, long timeout, int *ret);

#endif /* _IBPOST_TEST_H */
