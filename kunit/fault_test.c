// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_fault: ibpost's fault-injection site obeys the partial-post
 * contract, armed through ibpost_fault_inject() or through the framework's
 * own knobs as root sets them (fail_ibpost/ in debugfs, /proc/<pid>/
 * fail-nth and make-it-fail), and no debugfs file of ibpost lets anyone
 * but root in.
 */
#include <linux/module.h>
#include <linux/fs.h>
#include <linux/namei.h>
#include <rdma/ibpost_fault.h>
#include "ibpost_test.h"

#define FAIL_DIR "/sys/kernel/debug/ibpost/fail_ibpost"
#define FAULT_N 5

static void fault_disarm(void *unused)
{
	ibpost_fault_inject(0, 0);
}

/*
 * Kernel code cannot write debugfs files (they have no write_iter), so a
 * shell writes the knobs, as root does: "<file>=<value> ...", in order.
 */
#define FAULT_SET "cd " FAIL_DIR " && for kv in %s; do " \
		  "echo ${kv#*=} > ${kv%%=*} || exit 1; done"
/* The framework's defaults, but probability 0; errno -EIO. */
#define FAULT_RESET "probability=0 interval=1 times=1 space=0 " \
		    "task-filter=0 errno=-5"

static void fault_knobs_reset(void *unused)
{
	ibpost_test_sh(FAULT_SET, FAULT_RESET);
	ibpost_fault_inject(0, 0);
}

static void fault_need_debugfs(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS))
		ibpost_test_skip(test, "no CONFIG_FAULT_INJECTION_DEBUG_FS");
}

/*
 * Start from the defaults, the interval's count at 0 (ibpost_fault_inject()
 * zeroes it; debugfs does not show it), then set @knobs (FAULT_SET).
 */
static void fault_knobs(struct kunit *test, const char *knobs)
{
	fault_need_debugfs(test);
	KUNIT_ASSERT_EQ(test, 0, ibpost_fault_inject(0, 0));
	ibpost_test_defer(test, fault_knobs_reset, NULL);
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh(FAULT_SET, FAULT_RESET));
	KUNIT_ASSERT_EQ_MSG(test, 0, ibpost_test_sh(FAULT_SET, knobs), "%s",
			    knobs);
}

/* FAULT_N signaled RDMA WRITEs from a to b, contexts 10, 11, ... */
static void fault_chain(struct kunit *test, struct ibpost_test_pair *p,
			struct ib_rdma_wr *wr, struct ib_sge *sge)
{
	int i;

	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 8,
					       sge));
	for (i = 0; i < FAULT_N; i++) {
		wr[i].wr.wr_id = 10 + i;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.sg_list = sge;
		wr[i].wr.num_sge = 1;
		wr[i].wr.next = i < FAULT_N - 1 ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = ibpost_mr_remote_addr(p->bw.mr);
		wr[i].rkey = ibpost_mr_rkey(p->bw.mr);
	}
}

/*
 * Post @wr[@from..]; expect @err with *bad_wr at @wr[@bad] (or success
 * when @err is 0), the QP still in RTS, and exactly the contexts of
 * @wr[@from..@bad - 1] back, successful, in order.
 */
static void fault_post(struct kunit *test, struct ibpost_test_pair *p,
		       struct ib_rdma_wr *wr, int from, int err, int bad)
{
	const struct ib_send_wr *bad_wr = NULL;
	struct ibpost_comp comp;
	int i, end = err ? bad : FAULT_N;

	KUNIT_EXPECT_EQ(test, err, ibpost_post_send_list(p->a, &wr[from].wr,
							 &bad_wr));
	KUNIT_EXPECT_PTR_EQ(test, err ? &wr[bad].wr : NULL, bad_wr);
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, ibpost_test_qp_state(test, p->a));
	for (i = from; i < end; i++) {
		ibpost_test_send_comp(test, p->a, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(10 + i), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	}
	ibpost_test_no_send_comp(test, p->a);
}

static void ibpost_fault_inject_nth_wr_partial_post(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_rdma_wr wr[FAULT_N] = {};
	struct ib_sge sge;
	int ret;

	if (!IS_ENABLED(CONFIG_FAULT_INJECTION)) {
		KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, ibpost_fault_inject(3, -EIO));
		ibpost_test_skip(test, "no CONFIG_FAULT_INJECTION");
	}
	fault_chain(test, p, wr, &sge);
	/* The third WR from now fails with -EIO, once. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_fault_inject(3, -EIO));
	ibpost_test_defer(test, fault_disarm, NULL);
	fault_post(test, p, wr, 0, -EIO, 2);
	/* One shot: the repost from bad_wr goes through. */
	fault_post(test, p, wr, 2, 0, 0);
	/* Receives count too; a seed operation sees the errno. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_fault_inject(1, -ENOMEM));
	ret = ibpost_post_recv(p->b, NULL, p->bbuf.buf, 8, p->bbuf.mr);
	KUNIT_EXPECT_EQ(test, -ENOMEM, ret);
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_recv(p->b, NULL, p->bbuf.buf, 8,
						  p->bbuf.mr));
	/* Disarmed, the first WR from now goes through. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_fault_inject(1, -EIO));
	KUNIT_ASSERT_EQ(test, 0, ibpost_fault_inject(0, 0));
	fault_post(test, p, wr, 0, 0, 0);
	/* Nonsense is refused. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_fault_inject(2, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_fault_inject(2, 5));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_fault_inject(2, -MAX_ERRNO));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_fault_inject((unsigned int)INT_MAX + 1, -EIO));
}

/* interval 2, times 2: the 2nd and 4th WR from now fail, with errno. */
static void ibpost_fail_ibpost_interval_and_times(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_rdma_wr wr[FAULT_N] = {};
	struct ib_sge sge;

	fault_chain(test, p, wr, &sge);
	fault_knobs(test, "errno=-11 interval=2 times=2 probability=100");
	fault_post(test, p, wr, 0, -EAGAIN, 1);
	fault_post(test, p, wr, 1, -EAGAIN, 2);
	fault_post(test, p, wr, 2, 0, 0);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_sh("grep -qx 0 " FAIL_DIR
						"/times"));
}

/*
 * space 3, times 2: each WR spends 1 of space; the 3rd fails, and so
 * does the next (a failure spends no space), then times is used up.
 */
static void ibpost_fail_ibpost_space_then_times(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_rdma_wr wr[FAULT_N] = {};
	struct ib_sge sge;

	fault_chain(test, p, wr, &sge);
	fault_knobs(test, "space=3 times=2 probability=100");
	fault_post(test, p, wr, 0, -EIO, 2);
	/* Refused at its first WR: nothing queued. */
	fault_post(test, p, wr, 2, -EIO, 2);
	fault_post(test, p, wr, 2, 0, 0);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_sh("grep -qx 1 " FAIL_DIR
						"/space"));
}

/* The errno file takes a negative errno only. */
static void ibpost_fail_ibpost_errno_file(struct kunit *test)
{
	static const char * const bad[] = { "5", "0", "-4095", "x" };
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_rdma_wr wr[FAULT_N] = {};
	struct ib_sge sge;
	unsigned int i;

	fault_chain(test, p, wr, &sge);
	fault_knobs(test, "errno=-4094 errno=-113");
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_NE_MSG(test, 0,
				    ibpost_test_sh("echo %s > " FAIL_DIR
						   "/errno", bad[i]),
				    "errno %s accepted", bad[i]);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_sh("grep -qx -- -113 " FAIL_DIR
						"/errno"));
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh("echo 100 > " FAIL_DIR
						"/probability"));
	fault_post(test, p, wr, 0, -EHOSTUNREACH, 0);
	fault_post(test, p, wr, 0, 0, 0);
}

/* task-filter: only a task with make-it-fail set sees the fault. */
static void ibpost_fail_ibpost_task_filter(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_rdma_wr wr[FAULT_N] = {};
	pid_t pid = task_pid_nr(current);
	struct ib_sge sge;

	fault_chain(test, p, wr, &sge);
	fault_knobs(test, "task-filter=1 probability=100");
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh("echo 0 > /proc/%d/make-it-fail",
						pid));
	fault_post(test, p, wr, 0, 0, 0);
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh("echo 1 > /proc/%d/make-it-fail",
						pid));
	fault_post(test, p, wr, 0, -EIO, 0);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_sh("echo 0 > /proc/%d/make-it-fail",
						pid));
	fault_post(test, p, wr, 0, 0, 0);
}

/*
 * fail-nth counts every fault site the task passes, and the test kernels
 * have two more that may pass now and then: failslab and fail_page_alloc
 * count allocations that cannot sleep, and KASAN's stack depot refills
 * its pool with GFP_NOWAIT pages from whatever kfree() needs it (one in
 * the usermode helper's cleanup, after the shell wrote fail-nth, made
 * ibpost's site the 2nd instead of the 3rd). For the case they count
 * nothing: failslab only caches marked for it (none are), fail_page_alloc
 * no order below 32.
 */
#define FAULT_SITES_ONLY_IBPOST "cd /sys/kernel/debug && " \
	"{ [ ! -d failslab ] || echo Y > failslab/cache-filter; } && " \
	"{ [ ! -d fail_page_alloc ] || echo 32 > fail_page_alloc/min-order; }"
#define FAULT_SITES_DEFAULT "cd /sys/kernel/debug && " \
	"{ [ ! -d failslab ] || echo N > failslab/cache-filter; } && " \
	"{ [ ! -d fail_page_alloc ] || echo 1 > fail_page_alloc/min-order; }"

static void fault_sites_default(void *unused)
{
	ibpost_test_sh(FAULT_SITES_DEFAULT);
}

/*
 * /proc/<pid>/fail-nth: the task's 3rd fault site from now fails, though
 * fail_ibpost itself is disarmed; 0 reads back once it fired.
 */
static void ibpost_fail_nth_of_the_task(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_rdma_wr wr[FAULT_N] = {};
	pid_t pid = task_pid_nr(current);
	struct ib_sge sge;

	if (!IS_ENABLED(CONFIG_FAULT_INJECTION))
		ibpost_test_skip(test, "no CONFIG_FAULT_INJECTION");
	fault_chain(test, p, wr, &sge);
	fault_knobs(test, "errno=-110");
	ibpost_test_defer(test, fault_sites_default, NULL);
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh(FAULT_SITES_ONLY_IBPOST));
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh("echo 3 > /proc/%d/fail-nth",
						pid));
	fault_post(test, p, wr, 0, -ETIMEDOUT, 2);
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_sh("grep -qx 0 /proc/%d/fail-nth",
						pid));
	fault_post(test, p, wr, 2, 0, 0);
}

static void ibpost_debugfs_files_are_root_only(struct kunit *test)
{
	static const char * const files[] = {
		"/sys/kernel/debug/ibpost/devices",
		FAIL_DIR "/probability",
		FAIL_DIR "/errno",
	};
	unsigned int i, n = ARRAY_SIZE(files);
	char qps[64];
	struct path path;
	umode_t mode;

	snprintf(qps, sizeof(qps), "/sys/kernel/debug/ibpost/%s/qps",
		 ibpost_test_ibdev());
	/* Without fail_ibpost/, make sure it is not there. */
	if (!IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS)) {
		if (!kern_path(FAIL_DIR, 0, &path)) {
			path_put(&path);
			KUNIT_FAIL(test, FAIL_DIR " exists");
		}
		n = 1;
	}
	for (i = 0; i <= n; i++) {
		const char *name = i < n ? files[i] : qps;

		KUNIT_ASSERT_EQ_MSG(test, 0, kern_path(name, 0, &path), "%s",
				    name);
		mode = d_inode(path.dentry)->i_mode;
		path_put(&path);
		KUNIT_EXPECT_EQ_MSG(test, 0, mode & 0077, "%s mode %o", name,
				    mode & 0777);
		KUNIT_EXPECT_TRUE_MSG(test, S_ISREG(mode), "%s", name);
	}
}

static struct kunit_case ibpost_fault_cases[] = {
	KUNIT_CASE(ibpost_fault_inject_nth_wr_partial_post),
	KUNIT_CASE(ibpost_fail_ibpost_interval_and_times),
	KUNIT_CASE(ibpost_fail_ibpost_space_then_times),
	KUNIT_CASE(ibpost_fail_ibpost_errno_file),
	KUNIT_CASE(ibpost_fail_ibpost_task_filter),
	KUNIT_CASE(ibpost_fail_nth_of_the_task),
	KUNIT_CASE(ibpost_debugfs_files_are_root_only),
	{}
};

static struct kunit_suite ibpost_fault_suite = {
	.name = "ibpost_fault",
	.test_cases = ibpost_fault_cases,
};

kunit_test_suites(&ibpost_fault_suite);
