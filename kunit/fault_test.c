// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_fault: the fault-injection knob obeys the partial-post
 * contract, and no debugfs file of ibpost lets anyone but root in.
 */
#include <linux/module.h>
#include <linux/fs.h>
#include <linux/namei.h>
#include "ibpost_test.h"

#define FAULT_FILE "/sys/kernel/debug/ibpost/fault_inject"

/* debugfs cannot be written from the kernel; the guest tests the file. */
static void fault_disarm(void *unused)
{
	ibpost_fault_inject(0, 0);
}

static void ibpost_fault_inject_nth_wr_partial_post(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_rdma_wr wr[5] = {};
	const struct ib_send_wr *bad = NULL;
	struct ibpost_comp comp;
	struct ib_sge sge;
	int i, ret;

	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 8,
					       &sge));
	for (i = 0; i < 5; i++) {
		wr[i].wr.wr_id = 10 + i;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.sg_list = &sge;
		wr[i].wr.num_sge = 1;
		wr[i].wr.next = i < 4 ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = ibpost_mr_remote_addr(p->bw.mr);
		wr[i].rkey = ibpost_mr_rkey(p->bw.mr);
	}
	/* The third WR from now fails with -EIO. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_fault_inject(3, -EIO));
	ibpost_test_defer(test, fault_disarm, NULL);
	KUNIT_EXPECT_EQ(test, -EIO, ibpost_post_send_list(p->a, &wr[0].wr,
							  &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr[2].wr);
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, ibpost_test_qp_state(test, p->a));
	for (i = 0; i < 2; i++) {
		ibpost_test_send_comp(test, p->a, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(10 + i), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	}
	ibpost_test_no_send_comp(test, p->a);
	/* One shot: the repost from bad_wr goes through. */
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_send_list(p->a, bad, &bad));
	for (i = 2; i < 5; i++) {
		ibpost_test_send_comp(test, p->a, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(10 + i), comp.context);
	}
	/* Receives count too; a seed operation sees the errno. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_fault_inject(1, -ENOMEM));
	ret = ibpost_post_recv(p->b, NULL, p->bbuf.buf, 8, p->bbuf.mr);
	KUNIT_EXPECT_EQ(test, -ENOMEM, ret);
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_recv(p->b, NULL, p->bbuf.buf, 8,
						  p->bbuf.mr));
	/* Nonsense is refused. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_fault_inject(2, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_fault_inject(2, 5));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_fault_inject(2, -MAX_ERRNO));
}

static void ibpost_debugfs_files_are_root_only(struct kunit *test)
{
	static const char * const files[] = {
		"/sys/kernel/debug/ibpost/devices",
		FAULT_FILE,
	};
	char qps[64];
	struct path path;
	unsigned int i;
	umode_t mode;

	snprintf(qps, sizeof(qps), "/sys/kernel/debug/ibpost/%s/qps",
		 ibpost_test_ibdev());
	for (i = 0; i <= ARRAY_SIZE(files); i++) {
		const char *name = i < ARRAY_SIZE(files) ? files[i] : qps;

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
	KUNIT_CASE(ibpost_debugfs_files_are_root_only),
	{}
};

static struct kunit_suite ibpost_fault_suite = {
	.name = "ibpost_fault",
	.test_cases = ibpost_fault_cases,
};

kunit_test_suites(&ibpost_fault_suite);
