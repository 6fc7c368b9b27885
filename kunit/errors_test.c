// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Suite ibpost_errors
 *
 * Error paths no other suite reaches, each case made so that it fails if
 * its path goes:
 *
 * - After a device's removal (a second device, its link deleted as an
 *   administrator would): ibpost_qp_modify(), ibpost_qp_loopback_av() and
 *   ibpost_qp_connect_loopback() on its QPs say -ENODEV, and so does
 *   ibpost_qp_create_cm() called from the DEVICE_REMOVAL event of an
 *   rdma_cm id bound to it (rdma_cm hears of the removal after ibpost).
 * - Remote registration through no QP or a UD QP: -EINVAL before any
 *   allocation (the test hook at IBPOST_HOOK_REG_CHECKED must not run).
 * - QP attributes refused before anything is allocated: no receive queue,
 *   depths of 2^31 and more, no device. The probe: the task's next
 *   allocation is armed to fail, and must still be armed afterwards.
 * - QP attributes past ibpost's checks that the provider refuses (SGEs
 *   above the device's, a receive CQ above its max_cqe): the provider's
 *   errno, with the CQs made before the refusal freed. The set-up stages
 *   after the provider's QP exists (rings, drain, a UD QP's RTS) refused
 *   by the test hook at IBPOST_HOOK_QP_STAGE: -ENOMEM, nothing left; an
 *   iWARP rdma_cm QP's READ sinks alike (none are made on IB/RoCE).
 * - A loopback connection across two devices: -EINVAL, both QPs left in
 *   RESET.
 * - A RoCE port with no usable GID (the test hook at IBPOST_HOOK_GID
 *   rejects the entries): -EADDRNOTAVAIL from the address vector and the
 *   loopback connection; with the first entry alone rejected the next
 *   one serves.
 * - The vector seed operations' own refusals: a negative count, no list,
 *   an SGE without an MR, inline data of more than U32_MAX bytes; each
 *   counted, nothing queued, the QP still working.
 * - Allocation failures, through the kernel's fault injection: the
 *   task's fail-nth count (the field /proc/<pid>/fail-nth writes and
 *   reads, set here directly: a kernel_write() to that file is refused,
 *   it has no write_iter). failslab is made to count GFP_KERNEL
 *   allocations, silently (verbose 0); fail_page_alloc to count none, so
 *   that only slab allocations are numbered; all restored at the end. A
 *   registration is failed at its 1st, 2nd, ... allocation until it
 *   makes fewer: each failure is -ENOMEM with no provider MR left, a
 *   failure the call absorbs (kmemleak's record of an allocation) still
 *   gives a whole MR, and the last call succeeds. On siw a remote
 *   registration is failed at ibpost's first allocation only: siw leaks
 *   its page list when its MR's memory object cannot be allocated. A QP
 *   creation is failed at its first allocation only, ibpost's own: any
 *   later one may be inside the provider's vmalloc() (rxe and siw
 *   allocate their queues there), whose failure the kernel reports with
 *   a stack dump.
 * - A registration's REG_MR and a deregistration's LOCAL_INV flushed
 *   behind a SEND whose RNR retries run out: -EIO, and 0 with the MR
 *   released.
 */
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <rdma/rdma_cm.h>
#include <rdma/restrack.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

#define ERR_NETDEV	"d3"
#define ERR_LEN		4096
#define ERR_NTH_MAX	64U

/*
 * The fault-injection knobs err_fi_arm() sets, saved first (the minimum
 * order of fail_page_alloc as "-" where there is none), and put back at
 * the end. Kernel code cannot write debugfs files (no write_iter): a
 * shell does, as root would.
 */
#define ERR_FI		"/sys/kernel/debug"
#define ERR_FI_SAVED	"/ibpost/kunit-errors-fi.txt"
#define ERR_FI_SAVE	"cd " ERR_FI " && grep -qx 0 failslab/probability && " \
			"{ cat failslab/verbose failslab/ignore-gfp-wait; " \
			"cat fail_page_alloc/min-order || echo -; } > " ERR_FI_SAVED
#define ERR_FI_SET	"cd " ERR_FI " && echo 0 > failslab/verbose && " \
			"echo N > failslab/ignore-gfp-wait && " \
			"{ [ ! -d fail_page_alloc ] || " \
			"echo 32 > fail_page_alloc/min-order; }"
#define ERR_FI_RESTORE	"cd " ERR_FI " && { read v; read i; read o; } < " \
			ERR_FI_SAVED " && echo $v > failslab/verbose && " \
			"echo $i > failslab/ignore-gfp-wait && " \
			"{ [ $o = - ] || echo $o > fail_page_alloc/min-order; }"

/* The QP lines of a device's debugfs files, kept, or compared (0: equal). */
#define ERR_QPS_DIR	"/sys/kernel/debug/ibpost/%s"
#define ERR_QPS_SAVED	"/ibpost/kunit-errors-qps.txt"
#define ERR_QPS_LINES	"{ grep '^qps ' stats; cat qps; }"
#define ERR_QPS_SAVE	"cd " ERR_QPS_DIR " && " ERR_QPS_LINES " > " \
			ERR_QPS_SAVED
#define ERR_QPS_CMP	"cd " ERR_QPS_DIR " && [ \"$(" ERR_QPS_LINES ")\" = " \
			"\"$(cat " ERR_QPS_SAVED ")\" ]"

/* The second device: named after its provider, on netdev ERR_NETDEV. */
static const char *err_dev2_name(struct kunit *test)
{
	return ibpost_test_iwarp(ibpost_test_dev(test)) ? "siw3" : "rxe3";
}

/* Delete the link of device @name, as an administrator would. */
static void err_remove(struct kunit *test, const char *name)
{
	struct ibpost_dev *dev;

	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh("rdma link delete %s", name));
	dev = ibpost_dev_get(name);
	if (!IS_ERR(dev))
		ibpost_dev_put(dev);
	KUNIT_ASSERT_TRUE_MSG(test, IS_ERR(dev), "%s is still there", name);
}

static u32 err_count(struct ibpost_dev *dev, enum rdma_restrack_type type)
{
	return rdma_restrack_count(ibpost_dev_ibdev(dev), type, false);
}

/* ---- The task's fail-nth count ---------------------------------------- */

#ifdef CONFIG_FAULT_INJECTION
/* What writing @n to /proc/<pid>/fail-nth of this task does. */
static void err_nth_arm(unsigned int n)
{
	WRITE_ONCE(current->fail_nth, n);
}

/* Disarm; whether the armed allocation was reached (fail-nth read 0). */
static bool err_nth_disarm(void)
{
	bool fired = !READ_ONCE(current->fail_nth);

	WRITE_ONCE(current->fail_nth, 0);
	return fired;
}
#else
static void err_nth_arm(unsigned int n)
{
}

static bool err_nth_disarm(void)
{
	return false;
}
#endif

static bool err_fi_usable(void)
{
	return IS_ENABLED(CONFIG_FAILSLAB) &&
	       IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS);
}

static void err_fi_restore(void *unused)
{
	err_nth_disarm();
	ibpost_test_sh(ERR_FI_RESTORE);
}

/*
 * Number this task's slab allocations, and only them, for fail-nth:
 * failslab counts GFP_KERNEL ones too (it ignores every allocation that
 * may sleep by default), without a stack dump for the one it fails;
 * fail_page_alloc counts no page allocation (min-order beyond any order).
 * failslab's own probability must be 0: no other allocation fails.
 */
static void err_fi_arm(struct kunit *test)
{
	KUNIT_ASSERT_EQ_MSG(test, 0, ibpost_test_sh(ERR_FI_SAVE),
			    "failslab is armed already, or not there");
	ibpost_test_defer(test, err_fi_restore, NULL);
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh(ERR_FI_SET));
}

/* err_fi_arm(), or skip the case where the kernel cannot inject. */
static void err_fi_need(struct kunit *test)
{
	if (!err_fi_usable())
		ibpost_test_skip(test, "%s",
				 "no CONFIG_FAILSLAB with CONFIG_FAULT_INJECTION_DEBUG_FS: no allocation failure to inject");
	err_fi_arm(test);
}

/* ---- Removal: -ENODEV ------------------------------------------------- */

/*
 * An rdma_cm id bound to the second device. In its DEVICE_REMOVAL event
 * it asks ibpost for a QP: ibpost's client has let go of the device by
 * then (ib_core removes the clients last registered first, and ibpost
 * registers after rdma_cm, whose symbols it uses).
 */
struct err_cm {
	struct rdma_cm_id *id;	/* until rdma_cm or err_cm_free() ends it */
	struct ibpost_qp *qp;	/* what the event's create made, if a QP */
	int create_ret;
	int removals;
};

static int err_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct err_cm *c = id->context;
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp;

	if (ev->event != RDMA_CM_EVENT_DEVICE_REMOVAL)
		return 0;
	ibpost_test_attr(&attr, IB_QPT_RC);
	qp = ibpost_qp_create_cm(id, &attr);
	if (!IS_ERR_OR_NULL(qp))
		c->qp = qp;
	WRITE_ONCE(c->create_ret, PTR_ERR_OR_ZERO(qp));
	WRITE_ONCE(c->removals, c->removals + 1);
	/* The removal waits for the id: rdma_cm destroys it on non-zero. */
	return cmpxchg(&c->id, id, NULL) == id;
}

static void err_cm_free(void *data)
{
	struct err_cm *c = data;
	struct rdma_cm_id *id = xchg(&c->id, NULL);

	ibpost_qp_destroy(c->qp);
	if (id)
		rdma_destroy_id(id);
}

/* Bind a new id of @c to the address of @dev's netdev, hence to @dev. */
static void err_cm_bind(struct kunit *test, struct err_cm *c,
			struct ibpost_dev *dev)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_cm_id *id;
	int i, ret = 0;

	KUNIT_ASSERT_EQ(test, 0, ibpost_test_dev_addr(dev, &sin));
	ibpost_test_defer(test, err_cm_free, c);
	for (i = 0; i < 40; i++) {
		id = rdma_create_id(&init_net, err_cm_handler, c, RDMA_PS_TCP,
				    IB_QPT_RC);
		KUNIT_ASSERT_FALSE(test, IS_ERR(id));
		ret = rdma_bind_addr(id, (struct sockaddr *)&sin);
		if (!ret && id->device == ibpost_dev_ibdev(dev)) {
			WRITE_ONCE(c->id, id);
			return;
		}
		rdma_destroy_id(id);
		/* A new RoCE device's IPv4 GID is added by a work item. */
		msleep(50);
	}
	KUNIT_FAIL_AND_ABORT(test, "no rdma_cm id bound to %pI4 on the device: %d",
			     &sin.sin_addr, ret);
}

/*
 * After the removal, a QP of the device is refused -ENODEV by
 * ibpost_qp_modify() (towards INIT and towards RESET) and by
 * ibpost_qp_loopback_av(), which answered before; ibpost_qp_create_cm()
 * on an id still bound to the device, in its DEVICE_REMOVAL event, is
 * refused -ENODEV too.
 */
static void ibpost_errors_enodev_after_removal(struct kunit *test)
{
	const char *name = err_dev2_name(test);
	struct ibpost_dev *dev2 = ibpost_test_dev2(test, name, ERR_NETDEV);
	struct ibpost_qp_attr attr;
	struct ib_qp_attr qa = {};
	struct rdma_ah_attr av;
	struct ibpost_qp *qp;
	struct err_cm *c;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	ibpost_test_attr(&attr, IB_QPT_RC);
	qp = ibpost_test_qp(test, dev2, &attr);
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_loopback_av(qp, &av));
	err_cm_bind(test, c, dev2);

	err_remove(test, name);
	KUNIT_ASSERT_EQ_MSG(test, 1, READ_ONCE(c->removals),
			    "the id bound to %s heard no DEVICE_REMOVAL", name);
	KUNIT_EXPECT_EQ(test, -ENODEV, READ_ONCE(c->create_ret));
	KUNIT_EXPECT_NULL(test, ibpost_qp_ibqp(qp));
	qa.qp_state = IB_QPS_INIT;
	KUNIT_EXPECT_EQ(test, -ENODEV, ibpost_qp_modify(qp, &qa, IB_QP_STATE));
	qa.qp_state = IB_QPS_RESET;
	KUNIT_EXPECT_EQ(test, -ENODEV, ibpost_qp_modify(qp, &qa, IB_QP_STATE));
	KUNIT_EXPECT_EQ(test, -ENODEV, ibpost_qp_loopback_av(qp, &av));
}

/* Two RC QPs of a removed device: connecting them is -ENODEV. */
static void ibpost_errors_connect_loopback_after_removal(struct kunit *test)
{
	const char *name = err_dev2_name(test);
	struct ibpost_qp_attr attr;
	struct ibpost_dev *dev2;
	struct ibpost_qp *a, *b;

	ibpost_test_need_ib(test, ibpost_test_dev(test),
			    "QPs connect through rdma_cm only (a loopback connection is -EOPNOTSUPP before the device is looked at)");
	dev2 = ibpost_test_dev2(test, name, ERR_NETDEV);
	ibpost_test_attr(&attr, IB_QPT_RC);
	a = ibpost_test_qp(test, dev2, &attr);
	b = ibpost_test_qp(test, dev2, &attr);
	err_remove(test, name);
	KUNIT_EXPECT_EQ(test, -ENODEV, ibpost_qp_connect_loopback(a, b));
}

static void err_hook_off(void *unused)
{
	ibpost_test_set_hook(NULL, NULL);
}

/* Refuse set-up stage st[0]; st[1] collects the stages asked (bits). */
static int err_stage_hook(enum ibpost_hook point, void *obj, void *data)
{
	unsigned long stage = (unsigned long)obj, *st = data;

	if (point != IBPOST_HOOK_QP_STAGE)
		return 0;
	st[1] |= BIT(stage);
	return stage == st[0];
}

/*
 * The stages of a QP's set-up after the provider's QP exists, each
 * refused in turn by the test hook as if its allocation had failed (the
 * kernel's fault injection reaches them only through a failure inside
 * the provider first): the rings, the drain's resources, a UD QP's move
 * to RTS. Each: -ENOMEM, the provider's QP and CQs gone again, ibpost's
 * QP list as it was; then a QP is made.
 */
static void ibpost_errors_qp_create_late_stage_refused(struct kunit *test)
{
	static const enum ib_qp_type types[] = { IB_QPT_RC, IB_QPT_UD };
	struct ibpost_dev *dev = ibpost_test_dev(test);
	u32 qps = err_count(dev, RDMA_RESTRACK_QP);
	u32 cqs = err_count(dev, RDMA_RESTRACK_CQ);
	unsigned long stage, last, st[2] = {};
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp;
	unsigned int t;

	KUNIT_ASSERT_EQ(test, 0,
			ibpost_test_sh(ERR_QPS_SAVE, ibpost_test_ibdev()));
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(err_stage_hook, st));
	ibpost_test_defer(test, err_hook_off, NULL);
	for (t = 0; t < ARRAY_SIZE(types); t++) {
		/* iWARP: no UD; READ sinks (2) belong to rdma_cm QPs. */
		if (types[t] == IB_QPT_UD && ibpost_test_iwarp(dev))
			continue;
		last = types[t] == IB_QPT_UD ? IBPOST_QP_STAGE_UD_RTS :
					       IBPOST_QP_STAGE_DRAIN;
		for (stage = IBPOST_QP_STAGE_RINGS; stage <= last; stage++) {
			if (stage == IBPOST_QP_STAGE_SINKS)
				continue;
			st[0] = stage;
			st[1] = 0;
			ibpost_test_attr(&attr, types[t]);
			qp = ibpost_qp_create(dev, &attr);
			if (!IS_ERR_OR_NULL(qp))
				ibpost_test_defer_qp(test, qp);
			KUNIT_EXPECT_EQ_MSG(test, -ENOMEM, PTR_ERR_OR_ZERO(qp),
					    "QP type %d, stage %lu", types[t],
					    stage);
			KUNIT_EXPECT_TRUE_MSG(test, st[1] & BIT(stage),
					      "stage %lu never asked", stage);
			KUNIT_EXPECT_EQ_MSG(test, qps,
					    err_count(dev, RDMA_RESTRACK_QP),
					    "stage %lu: a provider QP left",
					    stage);
			KUNIT_EXPECT_EQ_MSG(test, cqs,
					    err_count(dev, RDMA_RESTRACK_CQ),
					    "stage %lu: a provider CQ left",
					    stage);
			KUNIT_EXPECT_EQ_MSG(test, 0,
					    ibpost_test_sh(ERR_QPS_CMP,
							   ibpost_test_ibdev()),
					    "stage %lu: ibpost's QPs changed",
					    stage);
		}
	}
	st[0] = 0;
	ibpost_test_attr(&attr, IB_QPT_RC);
	ibpost_test_qp(test, dev, &attr);
	KUNIT_EXPECT_EQ(test, qps + 1, err_count(dev, RDMA_RESTRACK_QP));
}

/*
 * A QP made through rdma_cm on an iWARP device gets a READ sink per send
 * slot (set-up stage 2). With that stage refused by the test hook, as if
 * a sink's MR could not be allocated, ibpost_qp_create_cm() says -ENOMEM
 * and leaves no provider QP or CQ behind. On InfiniBand and RoCE no QP
 * has sinks: the stage is never asked and the pair connects.
 */
static void ibpost_errors_cm_qp_sinks_refused(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	u32 qps = err_count(dev, RDMA_RESTRACK_QP);
	u32 cqs = err_count(dev, RDMA_RESTRACK_CQ);
	unsigned long st[2] = { IBPOST_QP_STAGE_SINKS, 0 };
	struct ibpost_qp_attr attr;
	struct ibpost_test_cm *cm;
	struct ibpost_qp *a, *b;
	int ret;

	KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(err_stage_hook, st));
	ibpost_test_defer(test, err_hook_off, NULL);
	ibpost_test_attr(&attr, IB_QPT_RC);
	ret = ibpost_test_cm_connect(dev, &attr, &attr, &a, &b, &cm);
	/* Freed in reverse: the QPs first, then the rdma_cm ids. */
	ibpost_test_defer_cm(test, cm);
	if (a)
		ibpost_test_defer_qp(test, a);
	if (b)
		ibpost_test_defer_qp(test, b);
	KUNIT_EXPECT_TRUE_MSG(test, st[1] & BIT(IBPOST_QP_STAGE_RINGS),
			      "no QP was set up");
	if (!ibpost_test_iwarp(dev)) {
		KUNIT_EXPECT_EQ(test, 0, ret);
		KUNIT_EXPECT_FALSE_MSG(test, st[1] & BIT(IBPOST_QP_STAGE_SINKS),
				       "READ sinks set up on an IB/RoCE QP");
		return;
	}
	KUNIT_EXPECT_EQ(test, -ENOMEM, ret);
	KUNIT_EXPECT_TRUE(test, st[1] & BIT(IBPOST_QP_STAGE_SINKS));
	KUNIT_EXPECT_NULL(test, a);
	KUNIT_EXPECT_NULL(test, b);
	KUNIT_EXPECT_EQ_MSG(test, qps, err_count(dev, RDMA_RESTRACK_QP),
			    "a provider QP left");
	KUNIT_EXPECT_EQ_MSG(test, cqs, err_count(dev, RDMA_RESTRACK_CQ),
			    "a provider CQ left");
}

/* The GID entries below *@data are unusable; each one asked is counted. */
static int err_gid_hook(enum ibpost_hook point, void *obj, void *data)
{
	const struct ib_gid_attr *sgid = obj;
	int *below = data;

	if (point != IBPOST_HOOK_GID)
		return 0;
	below[1]++;
	return sgid->index < below[0];
}

/*
 * A RoCE port whose GID table has no usable entry (the test hook makes
 * every entry the address vector looks at unusable, as if the table were
 * empty): ibpost_qp_loopback_av() and ibpost_qp_connect_loopback() say
 * -EADDRNOTAVAIL and both QPs stay in RESET. With the first entry alone
 * unusable the next one serves: the pair connects and a SEND arrives.
 */
static void ibpost_errors_loopback_no_usable_gid(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	struct rdma_ah_attr av;
	struct ibpost_qp *a, *b;
	int gid[2] = { INT_MAX, 0 };

	ibpost_test_need_ib(test, dev,
			    "QPs connect through rdma_cm only, with no GID-based loopback address vector");
	if (!rdma_protocol_roce(ibpost_dev_ibdev(dev), 1))
		ibpost_test_skip(test, "%s", "not RoCE: an IB port's address vector has no GID");
	ibpost_test_attr(&attr, IB_QPT_RC);
	a = ibpost_test_qp(test, dev, &attr);
	b = ibpost_test_qp(test, dev, &attr);
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(err_gid_hook, gid));
	ibpost_test_defer(test, err_hook_off, NULL);
	KUNIT_EXPECT_EQ(test, -EADDRNOTAVAIL, ibpost_qp_loopback_av(a, &av));
	KUNIT_EXPECT_EQ(test, -EADDRNOTAVAIL, ibpost_qp_connect_loopback(a, b));
	KUNIT_EXPECT_GT_MSG(test, gid[1], 0, "no GID entry was looked at");
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET, ibpost_test_qp_state(test, a));
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET, ibpost_test_qp_state(test, b));

	gid[0] = 1;
	gid[1] = 0;
	KUNIT_EXPECT_EQ(test, 0, ibpost_qp_loopback_av(a, &av));
	KUNIT_EXPECT_NE(test, 0, rdma_ah_get_ah_flags(&av) & IB_AH_GRH);
	KUNIT_EXPECT_GT(test, rdma_ah_read_grh(&av)->sgid_index, 0);
	KUNIT_EXPECT_EQ(test, 2, gid[1]);
	p = ibpost_test_pair(test, NULL);
	KUNIT_EXPECT_EQ(test, 6, gid[1]);
	ibpost_test_fill(p->abuf.buf, 64, 11);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(2), p->bbuf.buf,
						  64, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(1), p->abuf.buf,
						  64, p->abuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, CTX(1));
	ibpost_test_recv_ok(test, p->b, CTX(2), 64);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->bbuf.buf, p->abuf.buf, 64));
}

/* ---- Refusals before anything is allocated ---------------------------- */

/*
 * ibpost_qp_create(@dev, @attr) is refused with -EINVAL before its first
 * allocation: armed to fail, that allocation is still armed afterwards
 * (where failslab counts it: err_fi_arm()).
 */
static void err_create_refused(struct kunit *test, struct ibpost_dev *dev,
			       const struct ibpost_qp_attr *attr,
			       const char *what)
{
	struct ibpost_qp *qp;
	bool fired;

	err_nth_arm(1);
	qp = ibpost_qp_create(dev, attr);
	fired = err_nth_disarm();
	ibpost_qp_destroy(qp);
	KUNIT_EXPECT_EQ_MSG(test, -EINVAL, PTR_ERR_OR_ZERO(qp), "%s", what);
	KUNIT_EXPECT_FALSE_MSG(test, fired, "%s: refused after an allocation",
			       what);
}

/*
 * No receive queue (max_recv_wr 0: ibpost has no SRQ to take its place),
 * send or receive depths of 2^31 and U32_MAX, no device: -EINVAL, with
 * nothing allocated. The probe is shown to work on valid attributes,
 * whose first allocation then fails (-ENOMEM).
 */
static void ibpost_errors_qp_create_refused_early(struct kunit *test)
{
	static const u32 deep[] = { 1U << 31, U32_MAX };
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp;
	unsigned int i;
	bool fired;

	if (err_fi_usable())
		err_fi_arm(test);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_recv_wr = 0;
	err_create_refused(test, dev, &attr, "max_recv_wr 0");
	for (i = 0; i < ARRAY_SIZE(deep); i++) {
		ibpost_test_attr(&attr, IB_QPT_RC);
		attr.max_send_wr = deep[i];
		err_create_refused(test, dev, &attr,
				   i ? "max_send_wr U32_MAX" : "max_send_wr 2^31");
		ibpost_test_attr(&attr, IB_QPT_RC);
		attr.max_recv_wr = deep[i];
		err_create_refused(test, dev, &attr,
				   i ? "max_recv_wr U32_MAX" : "max_recv_wr 2^31");
	}
	ibpost_test_attr(&attr, IB_QPT_RC);
	err_create_refused(test, NULL, &attr, "no device");
	err_create_refused(test, NULL, NULL, "no device, no attributes");

	if (!err_fi_usable())
		return;
	err_nth_arm(1);
	qp = ibpost_qp_create(dev, &attr);
	fired = err_nth_disarm();
	ibpost_qp_destroy(qp);
	KUNIT_EXPECT_TRUE(test, fired);
	KUNIT_EXPECT_EQ(test, -ENOMEM, PTR_ERR_OR_ZERO(qp));
}

/*
 * QPs past ibpost's own checks that the provider refuses: more send or
 * receive SGEs per WR than the device has (the QP refused after its CQs
 * were made), a receive queue deeper than the device's largest CQ (the
 * receive CQ refused after the send CQ was made). Each comes back with
 * the provider's -EINVAL and leaves no QP or CQ with the provider and
 * ibpost's QP list as it was; the same device then makes a valid QP.
 */
static void ibpost_errors_qp_create_provider_refuses(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	const struct ib_device_attr *da = &ibpost_dev_ibdev(dev)->attrs;
	u32 qps = err_count(dev, RDMA_RESTRACK_QP);
	u32 cqs = err_count(dev, RDMA_RESTRACK_CQ);
	static const char * const what[] = {
		"max_send_sge above the device's", "max_recv_sge above the device's",
		"max_recv_wr at the device's max_cqe",
	};
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, 0,
			ibpost_test_sh(ERR_QPS_SAVE, ibpost_test_ibdev()));
	KUNIT_ASSERT_LT(test, da->max_send_sge, (int)U8_MAX);
	KUNIT_ASSERT_LT(test, da->max_recv_sge, (int)U8_MAX);
	KUNIT_ASSERT_LT(test, da->max_cqe, INT_MAX / 2);
	for (i = 0; i < ARRAY_SIZE(what); i++) {
		ibpost_test_attr(&attr, IB_QPT_RC);
		if (i == 0)
			attr.max_send_sge = da->max_send_sge + 1;
		else if (i == 1)
			attr.max_recv_sge = da->max_recv_sge + 1;
		else
			attr.max_recv_wr = da->max_cqe;
		qp = ibpost_qp_create(dev, &attr);
		if (!IS_ERR_OR_NULL(qp))
			ibpost_test_defer_qp(test, qp);
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL, PTR_ERR_OR_ZERO(qp), "%s",
				    what[i]);
		KUNIT_EXPECT_EQ_MSG(test, qps, err_count(dev, RDMA_RESTRACK_QP),
				    "%s: a provider QP left", what[i]);
		KUNIT_EXPECT_EQ_MSG(test, cqs, err_count(dev, RDMA_RESTRACK_CQ),
				    "%s: a provider CQ left", what[i]);
		KUNIT_EXPECT_EQ_MSG(test, 0,
				    ibpost_test_sh(ERR_QPS_CMP,
						   ibpost_test_ibdev()),
				    "%s: ibpost's QPs in debugfs changed",
				    what[i]);
	}

	ibpost_test_attr(&attr, IB_QPT_RC);
	ibpost_test_qp(test, dev, &attr);
	KUNIT_EXPECT_EQ(test, qps + 1, err_count(dev, RDMA_RESTRACK_QP));
	KUNIT_EXPECT_EQ(test, cqs + 2, err_count(dev, RDMA_RESTRACK_CQ));
}

/* Count the registrations that reach IBPOST_HOOK_REG_CHECKED. */
static int err_hook_fn(enum ibpost_hook point, void *obj, void *data)
{
	if (point == IBPOST_HOOK_REG_CHECKED)
		atomic_inc(data);
	return 0;
}

/* @mr's errno; an MR is deregistered: 0, or the deregistration's. */
static long err_reg_ret(struct ibpost_mr *mr)
{
	if (IS_ERR_OR_NULL(mr))
		return PTR_ERR_OR_ZERO(mr);
	return ibpost_dereg_mr(mr);
}

/*
 * ibpost_reg_read() and ibpost_reg_write() through no QP, or through a
 * UD QP (no remote access there), are -EINVAL before the registration
 * starts: the hook after its first checks never runs for them (it does
 * for one through an RC QP).
 */
static void ibpost_errors_reg_remote_needs_rc_qp(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_qp_attr attr;
	struct ibpost_qp *ud;
	atomic_t *checked;
	void *buf;

	buf = kunit_kzalloc(test, ERR_LEN, GFP_KERNEL);
	checked = kunit_kzalloc(test, sizeof(*checked), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, buf && checked);
	atomic_set(checked, 0);
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(err_hook_fn, checked));
	ibpost_test_defer(test, err_hook_off, NULL);

	KUNIT_EXPECT_EQ(test, -EINVAL,
			err_reg_ret(ibpost_reg_read(NULL, buf, ERR_LEN)));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			err_reg_ret(ibpost_reg_write(NULL, buf, ERR_LEN)));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(checked));
	KUNIT_EXPECT_EQ(test, 0,
			err_reg_ret(ibpost_reg_write(p->b, buf, ERR_LEN)));
	KUNIT_EXPECT_EQ(test, 1, atomic_read(checked));

	ibpost_test_need_ud(test, p->dev);
	ibpost_test_attr(&attr, IB_QPT_UD);
	ud = ibpost_test_qp(test, p->dev, &attr);
	KUNIT_EXPECT_EQ(test, -EINVAL,
			err_reg_ret(ibpost_reg_read(ud, buf, ERR_LEN)));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			err_reg_ret(ibpost_reg_write(ud, buf, ERR_LEN)));
	KUNIT_EXPECT_EQ(test, 1, atomic_read(checked));
}

/*
 * Two RC QPs in RESET on two devices of the same provider: no loopback
 * connection between them, in either order (-EINVAL, on iWARP too, where
 * that comes before the refusal of any hand-made connection); both stay
 * in RESET.
 */
static void ibpost_errors_connect_loopback_two_devices(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_dev *dev2;
	struct ibpost_qp_attr attr;
	struct ibpost_qp *a, *b;

	dev2 = ibpost_test_dev2(test, err_dev2_name(test), ERR_NETDEV);
	ibpost_test_attr(&attr, IB_QPT_RC);
	a = ibpost_test_qp(test, dev, &attr);
	b = ibpost_test_qp(test, dev2, &attr);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_qp_connect_loopback(a, b));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_qp_connect_loopback(b, a));
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET, ibpost_test_qp_state(test, a));
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET, ibpost_test_qp_state(test, b));
}

/* ---- Vector seed operations ------------------------------------------- */

enum err_vop { ERR_SENDV, ERR_WRITEV, ERR_READV, ERR_RECVV, ERR_VOPS };

static const char *const err_vop_name[ERR_VOPS] = {
	"sendv", "writev", "readv", "recvv",
};

static int err_vpost(struct ibpost_test_pair *p, enum err_vop op,
		     struct ibpost_sge *sgl, int nsge, int flags)
{
	switch (op) {
	case ERR_SENDV:
		return ibpost_post_sendv(p->a, CTX(9), sgl, nsge, flags);
	case ERR_WRITEV:
		return ibpost_post_writev(p->a, CTX(9), sgl, nsge, flags,
					  ibpost_mr_remote_addr(p->bw.mr),
					  ibpost_mr_rkey(p->bw.mr));
	case ERR_READV:
		return ibpost_post_readv(p->a, CTX(9), sgl, nsge, flags,
					 ibpost_mr_remote_addr(p->br.mr),
					 ibpost_mr_rkey(p->br.mr));
	default:
		return ibpost_post_recvv(p->b, CTX(9), sgl, nsge);
	}
}

/* @op of @sgl[@nsge] is -EINVAL, counted as such, nothing queued. */
static void err_vrefused(struct kunit *test, struct ibpost_test_pair *p,
			 enum err_vop op, struct ibpost_sge *sgl, int nsge,
			 int flags, const char *what)
{
	struct ibpost_qp *qp = op == ERR_RECVV ? p->b : p->a;
	struct ibpost_test_queue before, after;
	bool send = op != ERR_RECVV;

	ibpost_test_queue_get(qp, send, &before);
	KUNIT_EXPECT_EQ_MSG(test, -EINVAL, err_vpost(p, op, sgl, nsge, flags),
			    "%s: %s", err_vop_name[op], what);
	ibpost_test_queue_get(qp, send, &after);
	KUNIT_EXPECT_EQ_MSG(test, before.refused_einval + 1,
			    after.refused_einval, "%s: %s", err_vop_name[op],
			    what);
	KUNIT_EXPECT_EQ_MSG(test, before.posted, after.posted, "%s: %s",
			    err_vop_name[op], what);
	KUNIT_EXPECT_EQ_MSG(test, before.head, after.head, "%s: %s",
			    err_vop_name[op], what);
}

/*
 * sendv, writev, readv and recvv refuse, before the post path, a negative
 * count (-1, INT_MIN), no list for one SGE, and an SGE without an MR
 * after a valid one; sendv and writev refuse inline data of 2^32 bytes
 * (U32_MAX + 1, which a 32-bit sum would see as 0). Nothing was queued:
 * the next SEND's and receive's contexts come back first, and no other.
 */
static void ibpost_errors_vector_posts_refused(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u8 *a = p->abuf.buf, *b = p->bbuf.buf;
	struct ibpost_sge sgl[2];
	enum err_vop op;

	for (op = 0; op < ERR_VOPS; op++) {
		struct ibpost_test_buf *lb = op == ERR_RECVV ? &p->bbuf :
							       &p->abuf;
		u8 *buf = lb->buf;

		sgl[0] = (struct ibpost_sge){ buf, 8, lb->mr };
		sgl[1] = (struct ibpost_sge){ buf + 8, 8, lb->mr };
		err_vrefused(test, p, op, sgl, -1, IB_SEND_SIGNALED,
			     "count -1");
		err_vrefused(test, p, op, sgl, INT_MIN, IB_SEND_SIGNALED,
			     "count INT_MIN");
		err_vrefused(test, p, op, NULL, 1, IB_SEND_SIGNALED,
			     "no list");
		sgl[1].mr = NULL;
		err_vrefused(test, p, op, sgl, 2, IB_SEND_SIGNALED,
			     "second SGE without MR");
	}
	/* Inline: no MR bounds the lengths, only their sum does. */
	sgl[0] = (struct ibpost_sge){ a, U32_MAX, NULL };
	sgl[1] = (struct ibpost_sge){ a, 1, NULL };
	err_vrefused(test, p, ERR_SENDV, sgl, 2,
		     IB_SEND_INLINE | IB_SEND_SIGNALED, "inline 2^32 bytes");
	err_vrefused(test, p, ERR_WRITEV, sgl, 2,
		     IB_SEND_INLINE | IB_SEND_SIGNALED, "inline 2^32 bytes");

	sgl[0] = (struct ibpost_sge){ b, 8, p->bbuf.mr };
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recvv(p->b, CTX(2), sgl, 1));
	sgl[0] = (struct ibpost_sge){ a, 8, p->abuf.mr };
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_sendv(p->a, CTX(1), sgl, 1,
						   IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, CTX(1));
	ibpost_test_recv_ok(test, p->b, CTX(2), 8);
	ibpost_test_no_send_comp(test, p->a);
}

/* ---- Allocation failures ---------------------------------------------- */

/*
 * ibpost_qp_create() with its first allocation failing (ibpost's own,
 * before any provider call): -ENOMEM, no QP or CQ left with the
 * provider, ibpost's QP count and list in debugfs as they were. Disarmed,
 * the same call succeeds, and the counts move.
 */
static void ibpost_errors_qp_create_enomem(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	u32 qps = err_count(dev, RDMA_RESTRACK_QP);
	u32 cqs = err_count(dev, RDMA_RESTRACK_CQ);
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp;
	bool fired;

	err_fi_need(test);
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_test_sh(ERR_QPS_SAVE, ibpost_test_ibdev()));
	ibpost_test_attr(&attr, IB_QPT_RC);
	err_nth_arm(1);
	qp = ibpost_qp_create(dev, &attr);
	fired = err_nth_disarm();
	if (!IS_ERR_OR_NULL(qp))
		ibpost_test_defer_qp(test, qp);
	KUNIT_EXPECT_TRUE(test, fired);
	KUNIT_EXPECT_EQ(test, -ENOMEM, PTR_ERR_OR_ZERO(qp));
	KUNIT_EXPECT_EQ(test, qps, err_count(dev, RDMA_RESTRACK_QP));
	KUNIT_EXPECT_EQ(test, cqs, err_count(dev, RDMA_RESTRACK_CQ));
	KUNIT_EXPECT_EQ_MSG(test, 0,
			    ibpost_test_sh(ERR_QPS_CMP, ibpost_test_ibdev()),
			    "ibpost's QPs in debugfs changed");

	ibpost_test_qp(test, dev, &attr);
	KUNIT_EXPECT_EQ(test, qps + 1, err_count(dev, RDMA_RESTRACK_QP));
	KUNIT_EXPECT_EQ(test, cqs + 2, err_count(dev, RDMA_RESTRACK_CQ));
	KUNIT_EXPECT_NE(test, 0,
			ibpost_test_sh(ERR_QPS_CMP, ibpost_test_ibdev()));
}

/*
 * Register @b->buf on @dev (remote write through @qp, or local without
 * one) with the task's @n-th allocation failing. Refused: -ENOMEM, the
 * fault spent, no provider MR left over @mrs (return true). Made: the MR
 * is kept in @b->mr if the fault was not reached (the call made fewer
 * allocations), else deregistered (a failure the call absorbed).
 */
static bool err_reg_nth(struct kunit *test, struct ibpost_dev *dev,
			struct ibpost_qp *qp, struct ibpost_test_buf *b,
			unsigned int n, u32 mrs, bool *fired)
{
	struct ibpost_mr *mr;

	err_nth_arm(n);
	mr = qp ? ibpost_reg_write(qp, b->buf, b->len) :
		  ibpost_reg_msgs(dev, b->buf, b->len);
	*fired = err_nth_disarm();
	if (IS_ERR_OR_NULL(mr)) {
		KUNIT_EXPECT_EQ_MSG(test, -ENOMEM, PTR_ERR_OR_ZERO(mr),
				    "allocation %u failed", n);
		KUNIT_EXPECT_TRUE_MSG(test, *fired,
				      "%ld, with allocation %u not reached",
				      PTR_ERR(mr), n);
		KUNIT_EXPECT_EQ_MSG(test, mrs, err_count(dev, RDMA_RESTRACK_MR),
				    "allocation %u failed: provider MR left", n);
		return true;
	}
	if (!*fired)
		b->mr = mr;
	else
		KUNIT_EXPECT_EQ_MSG(test, 0, ibpost_dereg_mr(mr),
				    "allocation %u failed", n);
	return false;
}

/*
 * err_reg_nth() for n = 1, 2, ... until the call makes fewer allocations
 * than n: that last, undisturbed, call's MR is left in @b->mr.
 */
static void err_reg_loop(struct kunit *test, struct ibpost_dev *dev,
			 struct ibpost_qp *qp, struct ibpost_test_buf *b)
{
	u32 mrs = err_count(dev, RDMA_RESTRACK_MR);
	unsigned int n, refused = 0;
	bool fired = true;

	for (n = 1; n <= ERR_NTH_MAX && fired; n++)
		refused += err_reg_nth(test, dev, qp, b, n, mrs, &fired);
	KUNIT_ASSERT_NOT_NULL_MSG(test, b->mr,
				  "no undisturbed registration (last: allocation %u)",
				  n - 1);
	kunit_info(test, "%u allocations, %u of them refused\n", n - 2,
		   refused);
	KUNIT_EXPECT_GT(test, refused, 0U);
	KUNIT_EXPECT_EQ(test, mrs + !!qp, err_count(dev, RDMA_RESTRACK_MR));
}

static void err_buf_free(void *data)
{
	ibpost_test_buf_fini(data);
}

/* A kmalloc'd buffer, and its MR, released at test exit. */
static struct ibpost_test_buf *err_buf(struct kunit *test)
{
	struct ibpost_test_buf *b = kunit_kzalloc(test, sizeof(*b),
						  GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	b->len = ERR_LEN;
	b->buf = kzalloc(ERR_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b->buf);
	ibpost_test_defer(test, err_buf_free, b);
	return b;
}

/* Deregister @b's MR now (kept for the exit's retry should it fail). */
static void err_dereg(struct kunit *test, struct ibpost_test_buf *b)
{
	int ret = ibpost_dereg_mr(b->mr);

	KUNIT_EXPECT_EQ(test, 0, ret);
	if (!ret)
		b->mr = NULL;
}

/* ibpost_reg_msgs() through every allocation failing in turn. */
static void ibpost_errors_reg_msgs_enomem(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *b = err_buf(test);
	struct ib_sge sge;

	err_fi_need(test);
	err_reg_loop(test, dev, NULL, b);
	KUNIT_EXPECT_EQ(test, 0, ibpost_mr_sge(b->mr, b->buf, ERR_LEN, &sge));
	err_dereg(test, b);
}

/*
 * ibpost_reg_write() through every allocation failing in turn (ibpost's
 * MR, the provider's MR and its page list, ibpost's wait for the REG_MR):
 * the QP it goes through stays in RTS with no slot held, and the last MR
 * takes the peer's RDMA WRITE.
 */
static void ibpost_errors_reg_write_enomem(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_test_buf *b = err_buf(test);
	bool fired;

	err_fi_need(test);
	if (ibpost_test_iwarp(p->dev)) {
		/* ibpost's MR, before any provider call. */
		KUNIT_EXPECT_TRUE(test, err_reg_nth(test, p->dev, p->b, b, 1,
						    err_count(p->dev,
							      RDMA_RESTRACK_MR),
						    &fired));
		ibpost_test_skip(test, "%s",
				 "iWARP: siw_alloc_mr() leaks its page list when siw_mr_add_mem() cannot allocate: no fault is injected past ibpost's first allocation");
	}
	err_reg_loop(test, p->dev, p->b, b);
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, ibpost_test_qp_state(test, p->b));
	KUNIT_EXPECT_EQ(test, 0U, ibpost_test_in_use(p->b, true));

	ibpost_test_fill(p->abuf.buf, 64, 7);
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_write(p->a, CTX(1), p->abuf.buf, 64,
					  p->abuf.mr, IB_SEND_SIGNALED,
					  ibpost_mr_remote_addr(b->mr),
					  ibpost_mr_rkey(b->mr)));
	ibpost_test_send_ok(test, p->a, CTX(1));
	KUNIT_EXPECT_EQ(test, 0, memcmp(b->buf, p->abuf.buf, 64));
	err_dereg(test, b);
}

/*
 * A connected pair whose SEND from the returned QP finds no receive at
 * the peer: with the peer's RNR timer at its longest (491.52 ms) and one
 * retry, the send queue is held about a second before the SEND fails
 * (IB_WC_RNR_RETRY_EXC_ERR) and the WRs behind it flush. When @w is
 * set, *@w is @buf registered through that QP before the SEND.
 */
static struct ibpost_qp *err_stalled_qp(struct kunit *test,
					struct ibpost_dev *dev,
					struct ibpost_test_buf *b,
					struct ibpost_mr **w, void *buf)
{
	struct ibpost_qp_attr attr;
	struct ibpost_qp *a;

	ibpost_test_attr(&attr, IB_QPT_RC);
	a = ibpost_test_rnr_pair(test, dev, &attr, 31, 1, NULL);
	if (w) {
		*w = ibpost_reg_write(a, buf, ERR_LEN);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, *w);
	}
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(a, CTX(1), b->buf, 16, b->mr,
						  IB_SEND_SIGNALED));
	return a;
}

/*
 * @a's stalled SEND came back failed, and @a is in ERR. Its RNR retries
 * ran out, or (6.12's rxe, see Documentation/kernels.rst) the retry ran
 * the WR behind it a second time, which failed the QP and flushed it.
 */
static void err_stall_failed(struct kunit *test, struct ibpost_qp *a)
{
	struct ibpost_comp comp;
	bool failed;

	KUNIT_ASSERT_EQ(test, 1, ibpost_get_send_comp(a, &comp, 30 * HZ));
	KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
	failed = comp.status == IB_WC_RNR_RETRY_EXC_ERR ||
		 comp.status == IB_WC_WR_FLUSH_ERR;
	KUNIT_EXPECT_TRUE_MSG(test, failed,
			      "the stalled SEND came back with status %d",
			      comp.status);
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, ibpost_test_qp_tracked_state(a));
}

/*
 * A memory registration's REG_MR, and a deregistration's LOCAL_INV,
 * queued behind a SEND that fails: the REG_MR does not succeed and the
 * registration says -EIO, leaving nothing registered; the LOCAL_INV
 * neither, and the deregistration still releases the MR (deregistering
 * the provider's MR revokes its key): 0. Each waited behind the stall,
 * so each went through its WR, not the shortcut for a QP already down.
 */
static void ibpost_errors_reg_and_inv_flushed(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *b;
	struct ibpost_mr *mr;
	struct ibpost_qp *a;
	unsigned long t;
	void *buf;

	ibpost_test_need_ib(test, dev,
			    "no RNR retry on iWARP (a SEND without a receive is fatal at once)");
	b = ibpost_test_buf_new(test, dev, 64);
	buf = kunit_kzalloc(test, ERR_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	a = err_stalled_qp(test, dev, b, NULL, NULL);
	t = jiffies;
	mr = ibpost_reg_write(a, buf, ERR_LEN);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), -EIO);
	if (!IS_ERR(mr))
		KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(mr));
	KUNIT_EXPECT_GE_MSG(test, jiffies - t, (unsigned long)HZ / 4,
			    "the registration did not wait behind the stall");
	err_stall_failed(test, a);

	a = err_stalled_qp(test, dev, b, &mr, buf);
	t = jiffies;
	KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(mr));
	KUNIT_EXPECT_GE_MSG(test, jiffies - t, (unsigned long)HZ / 4,
			    "the deregistration did not wait behind the stall");
	err_stall_failed(test, a);
}

/*
 * A deregistration whose LOCAL_INV neither completes nor flushes in
 * time: it waits behind a SEND held by RNR retries, on a QP whose send
 * CQ is polled by a work item held in the QP's first send callback.
 * sync_timeout_ms (200) passes and the QP is moved to ERR; the flush
 * cannot be seen within drain_timeout_ms (300): -ETIMEDOUT, with the MR
 * handed over to its WR and still registered. Let go, the flush releases
 * it (the device's MR count back to what it was before the
 * registration), and each SEND comes back once.
 */
static void ibpost_errors_dereg_timeout_orphans_mr(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *b, *r;
	struct ibpost_qp_attr attr;
	struct ibpost_test_cb *c;
	struct ibpost_qp *a, *z;
	struct ibpost_mr *mr;
	unsigned long t;
	void *buf;
	u32 mrs;
	int i;

	ibpost_test_need_ib(test, dev,
			    "no RNR retry on iWARP (a SEND without a receive is fatal at once)");
	b = ibpost_test_buf_new(test, dev, 64);
	r = ibpost_test_buf_new(test, dev, 64);
	buf = kunit_kzalloc(test, ERR_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	c = ibpost_test_cb_attr(test, &attr);
	attr.poll_ctx = IB_POLL_WORKQUEUE;
	attr.recv_done = NULL;
	a = ibpost_test_rnr_pair(test, dev, &attr, 31, 1, &z);
	ibpost_test_cb_hold(test, c);
	mrs = err_count(dev, RDMA_RESTRACK_MR);
	mr = ibpost_reg_write(a, buf, ERR_LEN);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_EXPECT_EQ(test, mrs + 1, err_count(dev, RDMA_RESTRACK_MR));

	/* A SEND z takes: its callback holds a's send CQ's work item. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(z, NULL, r->buf, 64, r->mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(a, CTX(1), b->buf, 16, b->mr,
						  IB_SEND_SIGNALED));
	KUNIT_ASSERT_TRUE_MSG(test, ibpost_test_cb_held(c),
			      "a's send callback did not run");
	/* One it has no receive for: the LOCAL_INV waits behind it. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(a, CTX(2), b->buf, 16, b->mr,
						  IB_SEND_SIGNALED));
	ibpost_test_param_set(test, "sync_timeout_ms", 200, 30000);
	ibpost_test_param_set(test, "drain_timeout_ms", 300, 10000);
	t = jiffies;
	KUNIT_EXPECT_EQ(test, -ETIMEDOUT, ibpost_dereg_mr(mr));
	KUNIT_EXPECT_GE_MSG(test, jiffies - t, msecs_to_jiffies(500),
			    "the deregistration gave up before both timeouts");
	KUNIT_EXPECT_EQ_MSG(test, mrs + 1, err_count(dev, RDMA_RESTRACK_MR),
			    "the MR went while its LOCAL_INV may still run");

	ibpost_test_cb_release(c);
	KUNIT_EXPECT_EQ(test, 2, ibpost_test_cb_wait(c, 2));
	for (i = 0; i < 250 && err_count(dev, RDMA_RESTRACK_MR) != mrs; i++)
		msleep(20);
	KUNIT_EXPECT_EQ_MSG(test, mrs, err_count(dev, RDMA_RESTRACK_MR),
			    "the MR was not released when its LOCAL_INV flushed");
	KUNIT_EXPECT_EQ(test, 1, c->success);
	KUNIT_EXPECT_EQ(test, 0, c->dups);
	KUNIT_EXPECT_TRUE(test, test_bit(1, c->seen));
	KUNIT_EXPECT_TRUE(test, test_bit(2, c->seen));
}

static struct kunit_case ibpost_errors_cases[] = {
	KUNIT_CASE(ibpost_errors_enodev_after_removal),
	KUNIT_CASE(ibpost_errors_connect_loopback_after_removal),
	KUNIT_CASE(ibpost_errors_connect_loopback_two_devices),
	KUNIT_CASE(ibpost_errors_loopback_no_usable_gid),
	KUNIT_CASE(ibpost_errors_qp_create_refused_early),
	KUNIT_CASE(ibpost_errors_qp_create_provider_refuses),
	KUNIT_CASE(ibpost_errors_qp_create_late_stage_refused),
	KUNIT_CASE(ibpost_errors_cm_qp_sinks_refused),
	KUNIT_CASE(ibpost_errors_reg_remote_needs_rc_qp),
	KUNIT_CASE(ibpost_errors_vector_posts_refused),
	KUNIT_CASE(ibpost_errors_qp_create_enomem),
	KUNIT_CASE(ibpost_errors_reg_msgs_enomem),
	KUNIT_CASE(ibpost_errors_reg_write_enomem),
	KUNIT_CASE(ibpost_errors_reg_and_inv_flushed),
	KUNIT_CASE(ibpost_errors_dereg_timeout_orphans_mr),
	{}
};

static struct kunit_suite ibpost_errors_suite = {
	.name = "ibpost_errors",
	.test_cases = ibpost_errors_cases,
};

kunit_test_suite(ibpost_errors_suite);
