// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_data: every seed operation at 1 B, 4 KiB and 64 KiB, and
 * with the most SGEs the QP was granted, bytes checked at the other side;
 * inline sends up to the granted inline size.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include "ibpost_test.h"

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

kunit_test_suites(&ibpost_data_suite);
