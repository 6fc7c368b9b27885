/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of ibpost's KUnit suites. The suites run against a real
 * RDMA device: rxe0 in the test guest, or the one the knob "ibdev=" names
 * (siw0 for the iWARP run). Cases that cannot apply to the device (UD or a
 * hand-made connection on iWARP) are KUnit skips with the reason.
 */
#ifndef _IBPOST_TEST_H
#define _IBPOST_TEST_H

#include <linux/bitmap.h>
#include <linux/spinlock.h>
#include <kunit/test.h>
#include <rdma/ibpost.h>
#include "compat.h"
#include "lib/cm_connect.h"

/* A WR context made of a small number, as the suites post them. */
#define CTX(n) ((void *)(unsigned long)(n))

/* The name of the device under test. */
const char *ibpost_test_ibdev(void);

/* A "name=value" from the guest's /ibpost/kunit_args, or @def. */
uint ibpost_test_knob(const char *name, uint def);

/* The device under test, with a reference dropped at test exit. */
struct ibpost_dev *ibpost_test_dev(struct kunit *test);

/* Default attributes: RC, 16/16 WRs, 2 SGEs, no callbacks. */
void ibpost_test_attr(struct ibpost_qp_attr *attr, enum ib_qp_type type);

/* Create a QP that is destroyed at test exit unless destroyed before. */
struct ibpost_qp *ibpost_test_qp(struct kunit *test, struct ibpost_dev *dev,
				 const struct ibpost_qp_attr *attr);
/* Destroy @qp at test exit unless ibpost_test_qp_destroy() did before. */
void ibpost_test_defer_qp(struct kunit *test, struct ibpost_qp *qp);
/* Destroy a QP made by ibpost_test_qp() now. */
void ibpost_test_qp_destroy(struct kunit *test, struct ibpost_qp *qp);

/*
 * The QP's state as the provider reports it; on iWARP as ibpost tracks it,
 * since an iWARP provider moves its QPs inside iw_cm and need not report
 * the state at all (siw in 6.1 leaves qp_state unset).
 */
enum ib_qp_state ibpost_test_qp_state(struct kunit *test,
				      struct ibpost_qp *qp);

/*
 * From the helper module ibpost_test_helpers (lib/helpers.c), shared by
 * both KUnit modules. Run @fn(@data) when the test ends
 * (6.1 lacks kunit_add_action()), or at ibpost_test_undefer(@data).
 */
void ibpost_test_defer(struct kunit *test, void (*fn)(void *), void *data);
void ibpost_test_undefer(struct kunit *test, void *data);

/* A kmalloc'd buffer registered for local access, freed at test exit. */
struct ibpost_test_buf {
	void *buf;
	size_t len;
	struct ibpost_mr *mr;
};

/*
 * A connected RC pair (see ibpost_test_qp_pair()) with registered
 * buffers on each side:
 * a->abuf, b->bbuf (local), and on b a buffer the peer may write (bw) and
 * one it may read (br). NULL callbacks: completions through
 * ibpost_get_*_comp(). Torn down at test exit: QPs first, then MRs.
 */
struct ibpost_test_cm;

struct ibpost_test_pair {
	struct ibpost_dev *dev;
	struct ibpost_qp *a, *b;
	struct ibpost_test_cm *cm;	/* iWARP: the pair's rdma_cm ids */
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
/* A kunit-allocated buffer of @len bytes for messages, released at exit. */
struct ibpost_test_buf *ibpost_test_buf_new(struct kunit *test,
					    struct ibpost_dev *dev, size_t len);
enum { IBPOST_TEST_MSGS, IBPOST_TEST_READ, IBPOST_TEST_WRITE };

/* Fill with a pattern derived from @seed. */
void ibpost_test_fill(void *buf, size_t len, u32 seed);

/*
 * Fill @buf (@len bytes) with the canary pattern of @seed and return a
 * copy of it, freed at test exit: what @buf holds while nothing lands.
 */
u8 *ibpost_test_canary(struct kunit *test, void *buf, size_t len, u32 seed);

/*
 * memcmp() of the @len bytes a WRITE put at @dst with @src, once they are
 * there: on iWARP a WRITE is over once TCP has it and its bytes land
 * after, so this waits up to 2-4 s for them (a mismatch after that is
 * returned).
 */
int ibpost_test_landed(const void *dst, const void *src, size_t len);

/* Every byte of @buf still equals @canary: nothing landed in it. */
void ibpost_test_expect_canary(struct kunit *test, const u8 *buf,
			       const u8 *canary, size_t len);

/* Take one send/recv completion, failing the test after @secs (10). */
void ibpost_test_send_comp_secs(struct kunit *test, struct ibpost_qp *qp,
				struct ibpost_comp *comp, unsigned int secs);
void ibpost_test_recv_comp_secs(struct kunit *test, struct ibpost_qp *qp,
				struct ibpost_comp *comp, unsigned int secs);
void ibpost_test_send_comp(struct kunit *test, struct ibpost_qp *qp,
			   struct ibpost_comp *comp);
void ibpost_test_recv_comp(struct kunit *test, struct ibpost_qp *qp,
			   struct ibpost_comp *comp);
/* Take @qp's next send completion: @ctx's, successful. */
void ibpost_test_send_ok(struct kunit *test, struct ibpost_qp *qp, void *ctx);
/* Take @qp's next receive completion: @ctx's, successful, of @len bytes. */
void ibpost_test_recv_ok(struct kunit *test, struct ibpost_qp *qp, void *ctx,
			 u32 len);
/*
 * Post a signaled SEND_WITH_INV of @rkey carrying @len bytes of @buf (in
 * @mr), context @wr_id, and take its completion, successful.
 */
void ibpost_test_send_inv_ok(struct kunit *test, struct ibpost_qp *qp,
			     u64 wr_id, struct ibpost_mr *mr, void *buf,
			     u32 len, u32 rkey);
/* Expect no further send completion within a short wait. */
void ibpost_test_no_send_comp(struct kunit *test, struct ibpost_qp *qp);

/* White-box: slots of @qp's send (or receive) queue in use. */
u32 ibpost_test_in_use(struct ibpost_qp *qp, bool send);

/*
 * Move a QP of a loopback RC pair by hand through ibpost_qp_modify(), up
 * to @state (RESET..RTS), addressed at @peer: bounded retries (retry_cnt
 * 1, timeout 14), @min_rnr_timer and @rnr_retry as given.
 */
void ibpost_test_connect(struct kunit *test, struct ibpost_qp *qp,
			 struct ibpost_qp *peer, enum ib_qp_state state,
			 u8 min_rnr_timer, u8 rnr_retry);
/*
 * A QP of attributes @attr on @dev connected by hand (IB/RoCE) to a peer
 * of plain RC attributes (returned in *@peer when set), both in RTS with
 * @min_rnr_timer and @rnr_retry: a SEND the peer has no receive for is
 * held by RNR retries, then fails. Both destroyed at test exit.
 */
struct ibpost_qp *ibpost_test_rnr_pair(struct kunit *test,
				       struct ibpost_dev *dev,
				       const struct ibpost_qp_attr *attr,
				       u8 min_rnr_timer, u8 rnr_retry,
				       struct ibpost_qp **peer);

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

/*
 * Completion callbacks that count into the QP's priv: how many ran, how
 * many flushed or succeeded, and each context (a CTX() below
 * IBPOST_TEST_CB_N) seen once.
 */
#define IBPOST_TEST_CB_N	64

struct ibpost_test_cb {
	spinlock_t lock;	/* the callbacks run in softirq */
	DECLARE_BITMAP(seen, IBPOST_TEST_CB_N);
	/* @dups: a context seen twice, or a wc that shows a wr_cqe */
	int calls, dups, flushed, success;
	/* ibpost_test_cb_hold(): the first callback waits for @release. */
	bool hold;
	struct completion entered, release;
};

/* A counter for @test, and RC attributes whose callbacks record into it. */
struct ibpost_test_cb *ibpost_test_cb_attr(struct kunit *test,
					   struct ibpost_qp_attr *attr);
int ibpost_test_cb_calls(struct ibpost_test_cb *c);
/* Wait up to 10 s for @want callbacks; the count then. */
int ibpost_test_cb_wait(struct ibpost_test_cb *c, int want);
/*
 * The first callback into @c, once recorded, holds the work item that
 * runs it (IB_POLL_WORKQUEUE QPs only) until ibpost_test_cb_release() or
 * the end of @test; ibpost_test_cb_held() waits up to 10 s for it to be
 * there. Called once @c's QPs exist, so that the end of @test lets the
 * callback go before it destroys them. "First" counts every QP whose
 * attributes record into @c; a first callback run by the test's own
 * thread (a RESET's or destroy's flush) would hold that thread.
 */
void ibpost_test_cb_hold(struct kunit *test, struct ibpost_test_cb *c);
bool ibpost_test_cb_held(struct ibpost_test_cb *c);
void ibpost_test_cb_release(struct ibpost_test_cb *c);

/*
 * On p->a: four 8-byte sends, CTX(0) to CTX(3), the odd ones signaled,
 * then receives CTX(4) and CTX(5).
 */
void ibpost_test_post_mixed(struct kunit *test, struct ibpost_test_pair *p);

/*
 * Take one completion already queued on @qp's send (or receive) queue:
 * a flush, of a context below @nbits not in @seen before (now set).
 */
void ibpost_test_take_flushed(struct kunit *test, struct ibpost_qp *qp,
			      bool send, unsigned long *seen,
			      unsigned long nbits);

/* Run a shell command in the guest; its wait status (0: success). */
__printf(1, 2) int ibpost_test_sh(const char *fmt, ...);
/*
 * Set ibpost's module parameter @name (a uint) to @val for the rest of
 * @test; @dflt, its default, is written back at the test's exit.
 */
void ibpost_test_param_set(struct kunit *test, const char *name,
			   unsigned int val, unsigned int dflt);

/*
 * A second device of the same provider as the one under test (rxe or
 * siw) @name on a new dummy netdev @netdev with an IPv4 address, with a
 * reference; both deleted at test exit unless the test removed them.
 */
struct ibpost_dev *ibpost_test_dev2(struct kunit *test, const char *name,
				    const char *netdev);

/* @fn(@arg) in a kernel thread; join with a timeout (false: still running). */
struct ibpost_test_thread;
struct ibpost_test_thread *ibpost_test_run(struct kunit *test,
					   int (*fn)(void *arg), void *arg);
bool ibpost_test_join(struct ibpost_test_thread *t, long timeout, int *ret);

/* @qp reached ERR within 5 s (on iWARP: its connection ended). */
bool ibpost_test_wait_err(struct kunit *test, struct ibpost_qp *qp);

/*
 * Whether @dev is an iWARP device (RC through rdma_cm only, no UD), as
 * rdma_protocol_iwarp() says; fails the calling thread's case where
 * ibpost took the device for the other kind.
 */
bool ibpost_test_iwarp(struct ibpost_dev *dev);
/* Skip the case, with the reason in the log too (for 6.1's output). */
__printf(2, 3) __noreturn void ibpost_test_skip(struct kunit *test,
						const char *fmt, ...);
/* ibpost_test_skip(), with @why, unless @cond; returns when @cond. */
void ibpost_test_skip_unless(struct kunit *test, bool cond, const char *why);
/* Skip the case, with @why, on an iWARP device. */
void ibpost_test_need_ib(struct kunit *test, struct ibpost_dev *dev,
			 const char *why);
/* On iWARP: check that UD is refused with -EOPNOTSUPP, then skip. */
void ibpost_test_need_ud(struct kunit *test, struct ibpost_dev *dev);

/* ibpost_test_cm_free(@cm) at test exit (deferred before the QPs). */
void ibpost_test_defer_cm(struct kunit *test, struct ibpost_test_cm *cm);
/* The same, asserted; both QPs (and ids) go at test exit. */
void ibpost_test_qp_pair(struct kunit *test, struct ibpost_dev *dev,
			 const struct ibpost_qp_attr *aattr,
			 const struct ibpost_qp_attr *battr,
			 struct ibpost_qp **a, struct ibpost_qp **b);

#endif /* _IBPOST_TEST_H */
