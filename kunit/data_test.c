// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_data: every seed operation at 1 B, 4 KiB and 64 KiB, and
 * with the most SGEs the QP was granted, bytes checked at the other side;
 * inline sends up to the granted inline size.
 *
 * Suite ibpost_comp: completions through callbacks and through
 * ibpost_get_*_comp() (with a DIRECT CQ too), timeouts, and destroy with
 * WRs outstanding returning every context.
 */
#include <linux/module.h>
#include <linux/bitmap.h>
#include <linux/bottom_half.h>
#include <linux/delay.h>
#include <linux/slab.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_internal.h"

#define DATA_LEN 65536

enum data_op { OP_SEND, OP_WRITE, OP_READ, OP_COUNT };

struct data_case {
	enum data_op op;
	u32 len;
};

static const struct data_case data_cases[] = {
	{ OP_SEND, 1 }, { OP_SEND, 4096 }, { OP_SEND, 65536 },
	{ OP_WRITE, 1 }, { OP_WRITE, 4096 }, { OP_WRITE, 65536 },
	{ OP_READ, 1 }, { OP_READ, 4096 }, { OP_READ, 65536 },
};

static void data_case_desc(const struct data_case *c, char *desc)
{
	static const char * const op[] = { "send", "write", "read" };

	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_%u", op[c->op], c->len);
}

KUNIT_ARRAY_PARAM(data_case, data_cases, data_case_desc);

static struct ibpost_test_pair *data_pair(struct kunit *test)
{
	struct ibpost_qp_attr attr;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_sge = 4;
	attr.max_recv_sge = 4;
	/* siw grants 80 bytes (SIW_MAX_INLINE) and refuses more. */
	attr.max_inline_data = ibpost_test_iwarp(ibpost_test_dev(test)) ? 64 : 128;
	return ibpost_test_pair_len(test, &attr, DATA_LEN);
}

static void ibpost_data_seed_op_sizes(struct kunit *test)
{
	const struct data_case *c = test->param_value;
	struct ibpost_test_pair *p = data_pair(test);
	u8 *src, *dst;
	struct ibpost_comp comp;
	int ret;

	switch (c->op) {
	case OP_SEND:
		src = p->abuf.buf;
		dst = p->bbuf.buf;
		ibpost_test_fill(src, c->len, c->len);
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(2), dst,
							  DATA_LEN, p->bbuf.mr));
		ret = ibpost_post_send(p->a, CTX(1), src, c->len, p->abuf.mr,
				       IB_SEND_SIGNALED);
		break;
	case OP_WRITE:
		src = p->abuf.buf;
		dst = p->bw.buf;
		ibpost_test_fill(src, c->len, c->len + 1);
		ret = ibpost_post_write(p->a, CTX(1), src, c->len, p->abuf.mr,
					IB_SEND_SIGNALED,
					ibpost_mr_remote_addr(p->bw.mr),
					ibpost_mr_rkey(p->bw.mr));
		break;
	default:
		src = p->br.buf;
		dst = p->abuf.buf;
		ibpost_test_fill(src, c->len, c->len + 2);
		ret = ibpost_post_read(p->a, CTX(1), dst, c->len, p->abuf.mr,
				       IB_SEND_SIGNALED,
				       ibpost_mr_remote_addr(p->br.mr),
				       ibpost_mr_rkey(p->br.mr));
		break;
	}
	KUNIT_ASSERT_EQ(test, 0, ret);
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	if (c->op == OP_SEND) {
		ibpost_test_recv_comp(test, p->b, &comp);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		KUNIT_EXPECT_EQ(test, c->len, comp.byte_len);
	}
	KUNIT_EXPECT_EQ(test, 0, memcmp(src, dst, c->len));
	/* Nothing beyond the length was touched. */
	KUNIT_EXPECT_EQ(test, 0, dst[c->len == DATA_LEN ? 0 : c->len] !=
			(c->len == DATA_LEN ? src[0] : 0));
}

/* @n pieces of different lengths spread over @buf; returns the total. */
static u32 data_sgl(struct ibpost_sge *sgl, int n, u8 *buf,
		    struct ibpost_mr *mr)
{
	u32 total = 0;
	int i;

	for (i = 0; i < n; i++) {
		sgl[i].addr = buf + i * 9000 + i;
		sgl[i].length = 1000 + 517 * i;
		sgl[i].mr = mr;
		total += sgl[i].length;
	}
	return total;
}

/* Concatenate the pieces of @sgl into @out. */
static void data_gather(u8 *out, const struct ibpost_sge *sgl, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		memcpy(out, sgl[i].addr, sgl[i].length);
		out += sgl[i].length;
	}
}

static void ibpost_data_vector_ops_max_sge(struct kunit *test)
{
	struct ibpost_test_pair *p = data_pair(test);
	int ns = min_t(int, p->got.max_send_sge, 6);
	int nr = min_t(int, p->got.max_recv_sge, 6);
	struct ibpost_sge out[6], in[6], *many;
	struct ibpost_comp comp;
	u32 total, rtotal;
	u8 *flat, *flat2;
	int i, rd;

	KUNIT_ASSERT_GE(test, ns, 4);
	flat = kunit_kzalloc(test, DATA_LEN, GFP_KERNEL);
	flat2 = kunit_kzalloc(test, DATA_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, flat);
	KUNIT_ASSERT_NOT_NULL(test, flat2);
	ibpost_test_fill(p->abuf.buf, DATA_LEN, 11);
	ibpost_test_fill(p->br.buf, DATA_LEN, 12);

	/* sendv with every granted SGE into recvv with every granted SGE. */
	total = data_sgl(out, ns, p->abuf.buf, p->abuf.mr);
	rtotal = data_sgl(in, nr, p->bbuf.buf, p->bbuf.mr);
	for (i = 0; i < nr; i++) {
		/* Receive pieces large enough for the whole message. */
		in[i].addr = (u8 *)p->bbuf.buf + i * 8192 + 3;
		in[i].length = 4000;
	}
	rtotal = 4000 * nr;
	KUNIT_ASSERT_GE(test, rtotal, total);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recvv(p->b, CTX(1), in, nr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_sendv(p->a, CTX(2), out, ns,
						   IB_SEND_SIGNALED));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_EQ(test, total, comp.byte_len);
	data_gather(flat, out, ns);
	/* The message fills the receive pieces in order. */
	for (i = 0; i < nr && i * 4000 < total; i++)
		memcpy(flat2 + i * 4000, in[i].addr, 4000);
	KUNIT_EXPECT_EQ(test, 0, memcmp(flat, flat2, total));

	/* writev: the pieces land contiguously at the remote address. */
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_writev(p->a, CTX(3), out, ns, IB_SEND_SIGNALED,
					   ibpost_mr_remote_addr(p->bw.mr),
					   ibpost_mr_rkey(p->bw.mr)));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, 0, memcmp(flat, p->bw.buf, total));

	/*
	 * readv: contiguous remote bytes scatter over the pieces, as many
	 * as the device's READ takes (max_sge_rd: one on iWARP).
	 */
	memset(p->abuf.buf, 0, DATA_LEN);
	rd = min_t(int, ns, ibpost_dev_ibdev(p->dev)->attrs.max_sge_rd);
	KUNIT_ASSERT_GE(test, rd, 1);
	for (i = 0, total = 0; i < rd; i++)
		total += out[i].length;
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_readv(p->a, CTX(4), out, rd, IB_SEND_SIGNALED,
					  ibpost_mr_remote_addr(p->br.mr),
					  ibpost_mr_rkey(p->br.mr)));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	data_gather(flat, out, rd);
	KUNIT_EXPECT_EQ(test, 0, memcmp(flat, p->br.buf, total));

	/* One SGE more than granted is refused before the provider. */
	many = kunit_kcalloc(test, p->got.max_send_sge + 1, sizeof(*many),
			     GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, many);
	for (i = 0; i <= p->got.max_send_sge; i++)
		many[i] = out[0];
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_sendv(p->a, NULL, many,
					  p->got.max_send_sge + 1, 0));
}

static void ibpost_data_inline_up_to_granted(struct kunit *test)
{
	struct ibpost_test_pair *p = data_pair(test);
	u32 max = p->got.max_inline_data;
	struct ibpost_comp comp;
	u8 *stack_copy;

	KUNIT_ASSERT_GE(test, max, 64U);
	stack_copy = kunit_kzalloc(test, max + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, stack_copy);
	ibpost_test_fill(stack_copy, max + 1, 13);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1), p->bbuf.buf,
						  DATA_LEN, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(2), stack_copy,
						  max, NULL, IB_SEND_INLINE |
						  IB_SEND_SIGNALED));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_EQ(test, max, comp.byte_len);
	KUNIT_EXPECT_EQ(test, 0, memcmp(stack_copy, p->bbuf.buf, max));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_send(p->a, NULL, stack_copy, max + 1, NULL,
					 IB_SEND_INLINE));
}

static void ibpost_data_ud_send_sizes(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf sbuf, rbuf;
	struct ibpost_qp_attr attr;
	struct ib_port_attr pattr;
	struct ibpost_qp *x, *y;
	struct ibpost_comp comp;
	struct ib_ah *ah;
	u32 sizes[2], i;

	ibpost_test_need_ud(test, dev);
	ibpost_test_attr(&attr, IB_QPT_UD);
	x = ibpost_test_qp(test, dev, &attr);
	y = ibpost_test_qp(test, dev, &attr);
	KUNIT_ASSERT_EQ(test, 0, ib_query_port(ibpost_dev_ibdev(dev), 1,
					       &pattr));
	sizes[0] = 1;
	sizes[1] = ib_mtu_enum_to_int(pattr.active_mtu);	/* a full MTU */
	ah = ibpost_test_loopback_ah(test, x);
	ibpost_test_buf_init(test, &sbuf, dev, NULL, 4096, IBPOST_TEST_MSGS);
	ibpost_test_buf_init(test, &rbuf, dev, NULL, 4096 + 40,
			     IBPOST_TEST_MSGS);
	for (i = 0; i < 2; i++) {
		ibpost_test_fill(sbuf.buf, sizes[i], i + 20);
		memset(rbuf.buf, 0, rbuf.len);
		KUNIT_EXPECT_EQ(test, 0, ibpost_post_recv(y, CTX(1), rbuf.buf,
							  rbuf.len, rbuf.mr));
		KUNIT_EXPECT_EQ(test, 0,
				ibpost_post_ud_send(x, CTX(2), sbuf.buf, sizes[i],
						    sbuf.mr, IB_SEND_SIGNALED, ah,
						    ibpost_qp_ibqp(y)->qp_num,
						    attr.qkey));
		ibpost_test_send_comp(test, x, &comp);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		ibpost_test_recv_comp(test, y, &comp);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		KUNIT_EXPECT_EQ(test, sizes[i] + 40, comp.byte_len);
		KUNIT_EXPECT_EQ(test, 0, memcmp((u8 *)rbuf.buf + 40, sbuf.buf,
						sizes[i]));
	}
	ibpost_test_qp_destroy(test, y);
	ibpost_test_qp_destroy(test, x);
	ibpost_test_buf_fini(&rbuf);
	ibpost_test_buf_fini(&sbuf);
}

static struct kunit_case ibpost_data_cases[] = {
	KUNIT_CASE_PARAM(ibpost_data_seed_op_sizes, data_case_gen_params),
	KUNIT_CASE(ibpost_data_vector_ops_max_sge),
	KUNIT_CASE(ibpost_data_inline_up_to_granted),
	KUNIT_CASE(ibpost_data_ud_send_sizes),
	{}
};

static struct kunit_suite ibpost_data_suite = {
	.name = "ibpost_data",
	.test_cases = ibpost_data_cases,
};

/* ---- ibpost_comp ------------------------------------------------------ */

#define CB_WRS 24

struct cb_count {
	spinlock_t lock;	/* the callbacks run in softirq */
	DECLARE_BITMAP(seen, 2 * CB_WRS);
	int calls, dups, flushed, success;
	enum ib_poll_context ctx;
};

static void cb_record(struct ibpost_qp *qp, void *context,
		      const struct ib_wc *wc)
{
	struct cb_count *c = ibpost_qp_priv(qp);
	unsigned long i = (unsigned long)context;

	spin_lock_bh(&c->lock);
	c->calls++;
	if (i >= 2 * CB_WRS || __test_and_set_bit(i, c->seen))
		c->dups++;
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		c->flushed++;
	if (wc->status == IB_WC_SUCCESS)
		c->success++;
	spin_unlock_bh(&c->lock);
}

static int cb_calls(struct cb_count *c)
{
	int n;

	spin_lock_bh(&c->lock);
	n = c->calls;
	spin_unlock_bh(&c->lock);
	return n;
}

/* A counter for @test, and RC attributes whose callbacks record into it. */
static struct cb_count *cb_attr(struct kunit *test,
				struct ibpost_qp_attr *attr)
{
	struct cb_count *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	spin_lock_init(&c->lock);
	ibpost_test_attr(attr, IB_QPT_RC);
	attr->send_done = cb_record;
	attr->recv_done = cb_record;
	attr->priv = c;
	return c;
}

static const enum ib_poll_context cb_ctxs[] = {
	IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE, IB_POLL_UNBOUND_WORKQUEUE,
};

static void cb_ctx_desc(const enum ib_poll_context *p, char *desc)
{
	static const char * const n[] = { "softirq", "workqueue", "unbound_wq" };

	strscpy(desc, n[*p], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cb_ctx, cb_ctxs, cb_ctx_desc);

static void ibpost_comp_callbacks_return_each_context(struct kunit *test)
{
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct cb_count *c;
	int i, tries;

	c = cb_attr(test, &attr);
	attr.max_send_wr = 32;
	attr.max_recv_wr = 32;
	attr.poll_ctx = *(const enum ib_poll_context *)test->param_value;
	p = ibpost_test_pair(test, &attr);

	for (i = 0; i < CB_WRS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p->b, CTX(CB_WRS + i),
						 (u8 *)p->bbuf.buf + 64 * i,
						 64, p->bbuf.mr));
	/* Every send signaled: 24 send and 24 receive callbacks. */
	for (i = 0; i < CB_WRS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_send(p->a, CTX(i),
						 (u8 *)p->abuf.buf + 64 * i, 64,
						 p->abuf.mr, IB_SEND_SIGNALED));
	for (tries = 0; cb_calls(c) < 2 * CB_WRS && tries < 500; tries++)
		msleep(20);
	KUNIT_EXPECT_EQ(test, 2 * CB_WRS, cb_calls(c));
	KUNIT_EXPECT_EQ(test, 2 * CB_WRS, c->success);
	KUNIT_EXPECT_EQ(test, 0, c->dups);
	KUNIT_EXPECT_TRUE(test, bitmap_full(c->seen, 2 * CB_WRS));
	/* With callbacks, the polling API is not available. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_get_send_comp(p->a, NULL, 0));
}

static void ibpost_comp_direct_cq_polled_by_get_comp(struct kunit *test)
{
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct ibpost_comp comp;
	unsigned long t0;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = IB_POLL_DIRECT;
	p = ibpost_test_pair(test, &attr);
	/* Timeout: nothing posted, 0 after about the time asked. */
	t0 = jiffies;
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_send_comp(p->a, &comp, HZ / 4));
	KUNIT_EXPECT_GE(test, jiffies - t0, (unsigned long)HZ / 4);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1), p->bbuf.buf,
						  64, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(2), p->abuf.buf,
						  64, p->abuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(2), comp.context);
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
	KUNIT_EXPECT_EQ(test, 64U, comp.byte_len);
}

/*
 * Spin on ibpost_poll(@qp, @budget) until @c counted @want callbacks, as a
 * latency consumer does; each call stays within @budget.
 */
static void comp_spin(struct kunit *test, struct ibpost_qp *qp, int budget,
		      struct cb_count *c, int want)
{
	unsigned long deadline = jiffies + 10 * HZ;
	int n;

	while (cb_calls(c) < want && time_before(jiffies, deadline)) {
		n = ibpost_poll(qp, budget);
		KUNIT_EXPECT_GE(test, n, 0);
		KUNIT_EXPECT_LE(test, n, budget);
		if (n < 0)
			break;
		if (!n) {
			/* rxe moves data in bottom halves or work items. */
			local_bh_disable();
			local_bh_enable();
			usleep_range(100, 200);
		}
	}
	KUNIT_EXPECT_EQ(test, want, cb_calls(c));
}

static void ibpost_comp_poll_busy_polls_direct(struct kunit *test)
{
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct ibpost_qp *other;
	struct cb_count *c;
	int i;

	c = cb_attr(test, &attr);
	attr.poll_ctx = IB_POLL_DIRECT;
	p = ibpost_test_pair(test, &attr);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_poll(p->a, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_poll(p->a, -1));
	KUNIT_EXPECT_EQ(test, 0, ibpost_poll(p->a, 4));

	/* Two SENDs each way: a's CQs get two send and two receive entries. */
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, CTX(10 + i),
							  p->abuf.buf + 2048 + 64 * i,
							  64, p->abuf.mr));
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(20 + i),
							  p->bbuf.buf + 64 * i,
							  64, p->bbuf.mr));
	}
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(i),
							  p->abuf.buf, 32,
							  p->abuf.mr,
							  IB_SEND_SIGNALED));
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->b, CTX(30 + i),
							  p->bbuf.buf + 1024,
							  32, p->bbuf.mr,
							  IB_SEND_SIGNALED));
	}
	/* b's four, one entry per call. */
	comp_spin(test, p->b, 1, c, 4);
	/* By now a's entries are on its CQs; nothing polled them. */
	for (i = 0; i < 25; i++) {
		local_bh_disable();
		local_bh_enable();
		msleep(20);
	}
	KUNIT_EXPECT_EQ(test, 4, cb_calls(c));
	/* Budget 3 is shared: both sends first, then one receive. */
	KUNIT_EXPECT_EQ(test, 3, ibpost_poll(p->a, 3));
	KUNIT_EXPECT_EQ(test, 7, cb_calls(c));
	KUNIT_EXPECT_TRUE(test, test_bit(0, c->seen) && test_bit(1, c->seen));
	KUNIT_EXPECT_EQ(test, 1, (int)(test_bit(10, c->seen) +
				       test_bit(11, c->seen)));
	KUNIT_EXPECT_EQ(test, 1, ibpost_poll(p->a, 8));
	KUNIT_EXPECT_EQ(test, 0, ibpost_poll(p->a, 8));
	KUNIT_EXPECT_EQ(test, 8, cb_calls(c));
	KUNIT_EXPECT_EQ(test, 8, c->success);
	KUNIT_EXPECT_EQ(test, 0, c->dups);

	/* Held elsewhere (a teardown, another poller): 0 at once, no wait. */
	mutex_lock(&p->a->mutex);
	KUNIT_EXPECT_EQ(test, 0, ibpost_poll(p->a, 8));
	mutex_unlock(&p->a->mutex);

	/* Only a DIRECT QP is polled by its consumer. */
	attr.poll_ctx = IB_POLL_SOFTIRQ;
	attr.send_done = NULL;
	attr.recv_done = NULL;
	other = ibpost_qp_create(p->dev, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(other));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_poll(other, 4));
	ibpost_qp_destroy(other);
}

static void ibpost_comp_destroy_flushes_outstanding_sends(struct kunit *test)
{
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct cb_count *c;
	int i;

	c = cb_attr(test, &attr);
	p = ibpost_test_pair(test, &attr);
	ibpost_test_need_ib(test, p->dev,
			    "the queue is held by an RNR wait, and iWARP has no RNR (a SEND without a receive is fatal)");

	/*
	 * No receive at b: the SEND waits on RNR (retried forever) and the
	 * WRITEs queue behind it, signaled or not. Destroy must hand back
	 * every one of them flushed, unsignaled ones included.
	 */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(0), p->abuf.buf,
						  8, p->abuf.mr,
						  IB_SEND_SIGNALED));
	for (i = 1; i < 10; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_write(p->a, CTX(i), p->abuf.buf, 8,
						  p->abuf.mr,
						  i % 3 ? 0 : IB_SEND_SIGNALED,
						  ibpost_mr_remote_addr(p->bw.mr),
						  ibpost_mr_rkey(p->bw.mr)));
	msleep(50);
	KUNIT_EXPECT_EQ(test, 0, cb_calls(c));
	ibpost_qp_destroy(p->a);
	p->a = NULL;
	KUNIT_EXPECT_EQ(test, 10, cb_calls(c));
	KUNIT_EXPECT_EQ(test, 10, c->flushed);
	KUNIT_EXPECT_EQ(test, 0, c->dups);
	KUNIT_EXPECT_EQ(test, 10, (int)bitmap_weight(c->seen, 2 * CB_WRS));
}

static struct kunit_case ibpost_comp_cases[] = {
	KUNIT_CASE_PARAM(ibpost_comp_callbacks_return_each_context,
			 cb_ctx_gen_params),
	KUNIT_CASE(ibpost_comp_direct_cq_polled_by_get_comp),
	KUNIT_CASE(ibpost_comp_poll_busy_polls_direct),
	KUNIT_CASE(ibpost_comp_destroy_flushes_outstanding_sends),
	{}
};

static struct kunit_suite ibpost_comp_suite = {
	.name = "ibpost_comp",
	.test_cases = ibpost_comp_cases,
};

kunit_test_suites(&ibpost_data_suite, &ibpost_comp_suite);
