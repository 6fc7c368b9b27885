// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_mr: registrations are scoped to exactly their buffer and
 * access, revoked by dereg, refused while in use, and refuse what they
 * cannot map.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "ibpost_test.h"

#define CTX(n) ((void *)(unsigned long)(n))

static void ibpost_reg_msgs_refuses_vmalloc(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	void *v = vmalloc(2 * PAGE_SIZE);

	KUNIT_ASSERT_NOT_NULL(test, v);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_reg_msgs(p->dev, v,
							       PAGE_SIZE)));
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_reg_write(p->b, v,
								PAGE_SIZE)));
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_reg_msgs(p->dev, NULL,
							       16)));
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(ibpost_reg_msgs(p->dev,
							       p->abuf.buf, 0)));
	vfree(v);
}

static void ibpost_reg_write_new_rkey_each_time(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_mr *m1, *m2;
	u32 k1;

	m1 = ibpost_reg_write(p->b, p->bbuf.buf, 4096);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, m1);
	k1 = ibpost_mr_rkey(m1);
	KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(m1));
	m2 = ibpost_reg_write(p->b, p->bbuf.buf, 4096);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, m2);
	KUNIT_EXPECT_NE(test, k1, ibpost_mr_rkey(m2));
	KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(m2));
}

static void ibpost_dereg_mr_busy_while_posted(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_test_buf extra;
	struct ibpost_comp comp;

	ibpost_test_buf_init(test, &extra, p->dev, NULL, 512,
			     IBPOST_TEST_MSGS);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1), extra.buf,
						  512, extra.mr));
	KUNIT_EXPECT_EQ(test, -EBUSY, ibpost_dereg_mr(extra.mr));

	/* Once the receive completes, the registration can go. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(2), p->abuf.buf,
						  64, p->abuf.mr, 0));
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	ibpost_test_buf_fini(&extra);
}

/* One RDMA op from a to b; returns its completion status. */
static enum ib_wc_status ibpost_test_rdma(struct kunit *test,
					  struct ibpost_test_pair *p,
					  bool read, size_t len, u64 raddr,
					  u32 rkey)
{
	struct ibpost_comp comp;
	int ret;

	if (read)
		ret = ibpost_post_read(p->a, CTX(1), p->abuf.buf, len,
				       p->abuf.mr, IB_SEND_SIGNALED, raddr, rkey);
	else
		ret = ibpost_post_write(p->a, CTX(1), p->abuf.buf, len,
					p->abuf.mr, IB_SEND_SIGNALED, raddr,
					rkey);
	KUNIT_EXPECT_EQ(test, 0, ret);
	if (ret)
		return IB_WC_GENERAL_ERR;
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
	return comp.status;
}

static void ibpost_reg_write_grants_no_read(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);

	KUNIT_EXPECT_EQ(test, IB_WC_REM_ACCESS_ERR,
			ibpost_test_rdma(test, p, true, 64,
					 ibpost_mr_remote_addr(p->bw.mr),
					 ibpost_mr_rkey(p->bw.mr)));
}

static void ibpost_reg_read_grants_no_write(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);

	KUNIT_EXPECT_EQ(test, IB_WC_REM_ACCESS_ERR,
			ibpost_test_rdma(test, p, false, 64,
					 ibpost_mr_remote_addr(p->br.mr),
					 ibpost_mr_rkey(p->br.mr)));
	KUNIT_EXPECT_EQ(test, 0, memchr_inv(p->br.buf, 0, 64) ? 1 : 0);
}

static void ibpost_reg_write_window_is_exact(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u64 raddr = ibpost_mr_remote_addr(p->bw.mr);
	u32 rkey = ibpost_mr_rkey(p->bw.mr);

	/* The last 64 bytes are inside; one byte further is not. */
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
			ibpost_test_rdma(test, p, false, 64,
					 raddr + p->bw.len - 64, rkey));
	KUNIT_EXPECT_EQ(test, IB_WC_REM_ACCESS_ERR,
			ibpost_test_rdma(test, p, false, 64,
					 raddr + p->bw.len - 63, rkey));
}

static void ibpost_dereg_mr_revokes_rkey(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_test_buf w;
	u64 raddr;
	u32 rkey;

	ibpost_test_buf_init(test, &w, p->dev, p->b, 256, IBPOST_TEST_WRITE);
	raddr = ibpost_mr_remote_addr(w.mr);
	rkey = ibpost_mr_rkey(w.mr);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
			ibpost_test_rdma(test, p, false, 64, raddr, rkey));
	KUNIT_ASSERT_EQ(test, 0, ibpost_dereg_mr(w.mr));
	memset(w.buf, 0, 256);
	KUNIT_EXPECT_NE(test, IB_WC_SUCCESS,
			ibpost_test_rdma(test, p, false, 64, raddr, rkey));
	KUNIT_EXPECT_NULL(test, memchr_inv(w.buf, 0, 256));
	kfree(w.buf);
}

static struct kunit_case ibpost_mr_cases[] = {
	KUNIT_CASE(ibpost_reg_msgs_refuses_vmalloc),
	KUNIT_CASE(ibpost_reg_write_new_rkey_each_time),
	KUNIT_CASE(ibpost_dereg_mr_busy_while_posted),
	KUNIT_CASE(ibpost_reg_write_grants_no_read),
	KUNIT_CASE(ibpost_reg_read_grants_no_write),
	KUNIT_CASE(ibpost_reg_write_window_is_exact),
	KUNIT_CASE(ibpost_dereg_mr_revokes_rkey),
	{}
};

static struct kunit_suite ibpost_mr_suite = {
	.name = "ibpost_mr",
	.test_cases = ibpost_mr_cases,
};

kunit_test_suites(&ibpost_mr_suite);
