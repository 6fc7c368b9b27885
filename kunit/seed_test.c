// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_seed: the seed operations move real data on the live
 * device, compared byte for byte, and return their contexts.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include "ibpost_test.h"

static void ibpost_post_send_recv_moves_data(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_comp comp;
	size_t len = 3000;

	ibpost_test_fill(p->abuf.buf, len, 1);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(7), p->bbuf.buf,
						  p->bbuf.len, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(5), p->abuf.buf,
						  len, p->abuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(5), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, IB_WC_SEND, comp.opcode);
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(7), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, IB_WC_RECV, comp.opcode);
	KUNIT_EXPECT_EQ(test, (u32)len, comp.byte_len);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->abuf.buf, p->bbuf.buf, len));
}

/* Deregister the MR *@data points at unless the test did (NULL). */
static void seed_dereg_left(void *data)
{
	struct ibpost_mr **mr = data;

	if (*mr)
		ibpost_dereg_mr(*mr);
}

static void ibpost_post_send_inline_without_mr(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	char msg[48] = "inline data needs no memory registration";
	const struct ib_send_wr *bad = CTX(7);
	struct ib_send_wr wr = {};
	struct ibpost_comp comp;
	struct ibpost_mr **mr;
	struct ib_sge sge = {};

	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1), p->bbuf.buf,
						  p->bbuf.len, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(2), msg,
						  sizeof(msg), NULL,
						  IB_SEND_INLINE |
						  IB_SEND_SIGNALED));
	/* The stack copy is dead once the post returns: inline copied it. */
	memset(msg, 0, sizeof(msg));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_EQ(test, (u32)sizeof(msg), comp.byte_len);
	KUNIT_EXPECT_STREQ(test, (char *)p->bbuf.buf,
			   "inline data needs no memory registration");

	/* No bytes at all: siw refuses an inline copy of nothing. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(3), p->bbuf.buf,
						  p->bbuf.len, p->bbuf.mr));
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_send(p->a, CTX(4), NULL, 0, NULL,
						  IB_SEND_INLINE |
						  IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, CTX(4));
	ibpost_test_recv_ok(test, p->b, CTX(3), 0);

	/*
	 * A SEND with invalidate carries inline data as a SEND does (not on
	 * iWARP), here
	 * naming a window the receiver granted for the peer to invalidate
	 * (no completion field shows that it did).
	 */
	mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	*mr = ibpost_reg_write(p->b, p->bw.buf, 64);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, *mr);
	ibpost_test_defer(test, seed_dereg_left, mr);
	wr.wr_id = (uintptr_t)CTX(6);
	wr.opcode = IB_WR_SEND_WITH_INV;
	wr.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED;
	wr.ex.invalidate_rkey = ibpost_mr_rkey(*mr);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	sge.addr = (uintptr_t)msg;
	sge.length = 16;
	memcpy(msg, "and invalidates", 16);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(5), p->bbuf.buf,
						  p->bbuf.len, p->bbuf.mr));
	if (ibpost_test_iwarp(p->dev)) {
		/*
		 * iWARP takes it only from registered memory (siw would
		 * queue it inline, then fail to start it): refused first.
		 */
		KUNIT_EXPECT_EQ(test, -EINVAL,
				ibpost_post_send_list(p->a, &wr, &bad));
		KUNIT_EXPECT_PTR_EQ(test, bad, &wr);
		ibpost_test_no_send_comp(test, p->a);
		wr.send_flags = IB_SEND_SIGNALED;
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 16, &sge));
		memcpy(p->abuf.buf, "and invalidates", 16);
	}
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_send_list(p->a, &wr, &bad));
	KUNIT_EXPECT_NULL(test, bad);
	memset(msg, 0, sizeof(msg));
	ibpost_test_send_ok(test, p->a, CTX(6));
	ibpost_test_recv_ok(test, p->b, CTX(5), 16);
	KUNIT_EXPECT_STREQ(test, (char *)p->bbuf.buf, "and invalidates");
	KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(*mr));
	*mr = NULL;
}

static void ibpost_post_sendv_recvv_gather_scatter(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u8 *a = p->abuf.buf, *b = p->bbuf.buf;
	struct ibpost_sge out[2] = {
		{ a + 100, 700, p->abuf.mr }, { a + 4000, 1300, p->abuf.mr },
	};
	struct ibpost_sge in[2] = {
		{ b, 1000, p->bbuf.mr }, { b + 5000, 1000, p->bbuf.mr },
	};
	struct ibpost_comp comp;

	ibpost_test_fill(a, p->abuf.len, 3);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recvv(p->b, CTX(1), in, 2));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_sendv(p->a, CTX(2), out, 2,
						   IB_SEND_SIGNALED));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, 2000U, comp.byte_len);
	/* 700 + 300 land in the first piece, the last 1000 in the second. */
	KUNIT_EXPECT_EQ(test, 0, memcmp(b, a + 100, 700));
	KUNIT_EXPECT_EQ(test, 0, memcmp(b + 700, a + 4000, 300));
	KUNIT_EXPECT_EQ(test, 0, memcmp(b + 5000, a + 4300, 1000));
}

static void ibpost_post_write_reaches_remote_buffer(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u64 raddr = ibpost_mr_remote_addr(p->bw.mr);
	struct ibpost_comp comp;

	ibpost_test_fill(p->abuf.buf, p->abuf.len, 4);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_write(p->a, CTX(9), p->abuf.buf,
						   4096, p->abuf.mr,
						   IB_SEND_SIGNALED,
						   raddr + 512,
						   ibpost_mr_rkey(p->bw.mr)));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(9), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, IB_WC_RDMA_WRITE, comp.opcode);
	KUNIT_EXPECT_EQ(test, 0, memcmp((u8 *)p->bw.buf + 512, p->abuf.buf,
					4096));
	KUNIT_EXPECT_EQ(test, 0, ((u8 *)p->bw.buf)[511]);
}

static void ibpost_post_writev_gathers(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u8 *a = p->abuf.buf;
	struct ibpost_sge sgl[2] = {
		{ a + 8, 100, p->abuf.mr }, { a + 2048, 200, p->abuf.mr },
	};
	struct ibpost_comp comp;

	ibpost_test_fill(a, p->abuf.len, 5);
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_writev(p->a, CTX(1), sgl, 2, IB_SEND_SIGNALED,
					   ibpost_mr_remote_addr(p->bw.mr),
					   ibpost_mr_rkey(p->bw.mr)));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->bw.buf, a + 8, 100));
	KUNIT_EXPECT_EQ(test, 0, memcmp((u8 *)p->bw.buf + 100, a + 2048, 200));
}

static void ibpost_post_read_fetches_remote_buffer(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_comp comp;

	ibpost_test_fill(p->br.buf, p->br.len, 6);
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_read(p->a, CTX(3), p->abuf.buf, p->br.len,
					 p->abuf.mr, IB_SEND_SIGNALED,
					 ibpost_mr_remote_addr(p->br.mr),
					 ibpost_mr_rkey(p->br.mr)));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(3), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, IB_WC_RDMA_READ, comp.opcode);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->abuf.buf, p->br.buf, p->br.len));
}

static void ibpost_post_readv_scatters(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u8 *a = p->abuf.buf;
	struct ibpost_sge sgl[2] = {
		{ a + 1, 1000, p->abuf.mr }, { a + 6000, 24, p->abuf.mr },
	};
	struct ibpost_comp comp;

	ibpost_test_fill(p->br.buf, p->br.len, 7);
	if (ibpost_dev_ibdev(p->dev)->attrs.max_sge_rd < 2) {
		/* Refused before the provider: nothing queued, no context. */
		KUNIT_EXPECT_EQ(test, -EINVAL,
				ibpost_post_readv(p->a, CTX(4), sgl, 2,
						  IB_SEND_SIGNALED,
						  ibpost_mr_remote_addr(p->br.mr),
						  ibpost_mr_rkey(p->br.mr)));
		ibpost_test_no_send_comp(test, p->a);
		ibpost_test_skip(test, "%s",
				 "iWARP: a READ has one sink SGE (max_sge_rd 1): a readv of 2 is refused with -EINVAL");
	}
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_readv(p->a, CTX(4), sgl, 2, IB_SEND_SIGNALED,
					  ibpost_mr_remote_addr(p->br.mr) + 16,
					  ibpost_mr_rkey(p->br.mr)));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, 0, memcmp(a + 1, (u8 *)p->br.buf + 16, 1000));
	KUNIT_EXPECT_EQ(test, 0, memcmp(a + 6000, (u8 *)p->br.buf + 1016, 24));
}

static void ibpost_post_ud_send_delivers_datagram(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf sbuf, rbuf;
	struct ibpost_qp_attr attr;
	struct ib_qp_attr qa = {};
	struct ibpost_qp *x, *y;
	struct ib_ah *ah;

	ibpost_test_need_ud(test, dev);
	ibpost_test_attr(&attr, IB_QPT_UD);
	attr.qkey = 0x5eed;
	x = ibpost_test_qp(test, dev, &attr);
	y = ibpost_test_qp(test, dev, &attr);
	ah = ibpost_test_loopback_ah(test, x);
	ibpost_test_buf_init(test, &sbuf, dev, NULL, 1024, IBPOST_TEST_MSGS);
	ibpost_test_buf_init(test, &rbuf, dev, NULL, 1024 + 40,
			     IBPOST_TEST_MSGS);
	ibpost_test_fill(sbuf.buf, 1024, 8);

	/* A UD receive starts with the 40-byte GRH. */
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_recv(y, CTX(1), rbuf.buf,
						  rbuf.len, rbuf.mr));
	KUNIT_EXPECT_EQ(test, 0,
			ibpost_post_ud_send(x, CTX(2), sbuf.buf, 1024, sbuf.mr,
					    IB_SEND_SIGNALED, ah,
					    ibpost_qp_ibqp(y)->qp_num, 0x5eed));
	ibpost_test_send_ok(test, x, CTX(2));
	ibpost_test_recv_ok(test, y, CTX(1), 1024 + 40);
	KUNIT_EXPECT_EQ(test, 0, memcmp((u8 *)rbuf.buf + 40, sbuf.buf, 1024));

	/*
	 * The RC seed sends on a UD QP: no address handle, -EINVAL before
	 * the provider (ibpost reads a UD send as an ib_ud_wr).
	 */
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_send(x, CTX(3), sbuf.buf, 64, sbuf.mr,
					 IB_SEND_SIGNALED));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_sendv(x, CTX(4),
					  &(struct ibpost_sge){ sbuf.buf, 64,
								sbuf.mr },
					  1, IB_SEND_SIGNALED));
	ibpost_test_no_send_comp(test, x);

	/*
	 * IBA: a remote Q_Key with its high bit set stands for the sending
	 * QP's own (0x5eed here, the receiver's too); rxe would put the
	 * raw value on the wire, and the receiver drop the datagram.
	 */
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_recv(y, CTX(5), rbuf.buf,
						  rbuf.len, rbuf.mr));
	KUNIT_EXPECT_EQ(test, 0,
			ibpost_post_ud_send(x, CTX(6), sbuf.buf, 256, sbuf.mr,
					    IB_SEND_SIGNALED, ah,
					    ibpost_qp_ibqp(y)->qp_num, BIT(31)));
	ibpost_test_send_ok(test, x, CTX(6));
	ibpost_test_recv_ok(test, y, CTX(5), 256 + 40);

	/* Its own as it is now: a Q_Key changed in RTS (RTS to RTS). */
	qa.qkey = 0x7777;
	KUNIT_EXPECT_EQ(test, 0, ibpost_qp_modify(x, &qa, IB_QP_QKEY));
	KUNIT_EXPECT_EQ(test, 0, ibpost_qp_modify(y, &qa, IB_QP_QKEY));
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_recv(y, CTX(7), rbuf.buf,
						  rbuf.len, rbuf.mr));
	KUNIT_EXPECT_EQ(test, 0,
			ibpost_post_ud_send(x, CTX(8), sbuf.buf, 128, sbuf.mr,
					    IB_SEND_SIGNALED, ah,
					    ibpost_qp_ibqp(y)->qp_num, ~0U));
	ibpost_test_send_ok(test, x, CTX(8));
	ibpost_test_recv_ok(test, y, CTX(7), 128 + 40);

	/* Destroy the QPs before their buffers' registrations. */
	ibpost_test_qp_destroy(test, y);
	ibpost_test_qp_destroy(test, x);
	ibpost_test_buf_fini(&rbuf);
	ibpost_test_buf_fini(&sbuf);
}

static void ibpost_chain_with_imm_reaches_receiver(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_rdma_wr w = {};
	struct ib_send_wr s = {};
	const struct ib_send_wr *bad;
	struct ib_sge sge[2];
	struct ibpost_comp comp;

	ibpost_test_fill(p->abuf.buf, 256, 9);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 128,
					       &sge[0]));
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr,
					       (u8 *)p->abuf.buf + 128, 128,
					       &sge[1]));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1), p->bbuf.buf,
						  p->bbuf.len, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(2), p->bbuf.buf,
						  p->bbuf.len, p->bbuf.mr));

	w.wr.wr_id = 10;
	w.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	w.wr.send_flags = IB_SEND_SIGNALED;
	w.wr.sg_list = &sge[0];
	w.wr.num_sge = 1;
	w.wr.ex.imm_data = cpu_to_be32(0xfeed);
	w.remote_addr = ibpost_mr_remote_addr(p->bw.mr);
	w.rkey = ibpost_mr_rkey(p->bw.mr);
	w.wr.next = &s;
	s.wr_id = 11;
	s.opcode = IB_WR_SEND_WITH_IMM;
	s.send_flags = IB_SEND_SIGNALED;
	s.sg_list = &sge[1];
	s.num_sge = 1;
	s.ex.imm_data = cpu_to_be32(0xbeef);
	if (ibpost_test_iwarp(p->dev)) {
		/* Both refused before the provider, the first one named. */
		KUNIT_EXPECT_EQ(test, -EINVAL,
				ibpost_post_send_list(p->a, &w.wr, &bad));
		KUNIT_EXPECT_PTR_EQ(test, bad, &w.wr);
		KUNIT_EXPECT_EQ(test, -EINVAL,
				ibpost_post_send_list(p->a, &s, &bad));
		KUNIT_EXPECT_PTR_EQ(test, bad, &s);
		ibpost_test_no_send_comp(test, p->a);
		ibpost_test_skip(test, "%s",
				 "iWARP: no immediate data (RFC 5040); WRITE_WITH_IMM and SEND_WITH_IMM refused with -EINVAL");
	}
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, &w.wr, &bad));
	KUNIT_EXPECT_NULL(test, bad);

	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(10), comp.context);
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(11), comp.context);
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_RECV_RDMA_WITH_IMM, comp.opcode);
	KUNIT_EXPECT_EQ(test, 0xfeedU, comp.imm_data);
	KUNIT_EXPECT_TRUE(test, comp.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, 0U, comp.invalidate_rkey);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->bw.buf, p->abuf.buf, 128));
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_EQ(test, IB_WC_RECV, comp.opcode);
	KUNIT_EXPECT_EQ(test, 0xbeefU, comp.imm_data);
	KUNIT_EXPECT_TRUE(test, comp.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, 128U, comp.byte_len);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->bbuf.buf, (u8 *)p->abuf.buf + 128,
					128));
}

static void ibpost_post_send_rejects_bad_buffers(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u8 *a = p->abuf.buf;
	u8 canary[16];
	unsigned long flags;
	int ret, refused;

	/* No MR without IB_SEND_INLINE; outside the MR, before or after. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_send(p->a, NULL, a, 8, NULL,
							IB_SEND_SIGNALED));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_send(p->a, NULL, a + 8000,
							400, p->abuf.mr, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_send(p->a, NULL, a - 1, 8,
							p->abuf.mr, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_recv(p->b, NULL, a, 8,
							p->bbuf.mr));
	/* Unknown send flags; inline on a READ. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_send(p->a, NULL, a, 8,
							p->abuf.mr, 1 << 20));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_read(p->a, NULL, a, 8, NULL,
							IB_SEND_INLINE, 0, 0));
	/* A datagram on an RC QP: its address would be dropped. */
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_ud_send(p->a, NULL, a, 8, p->abuf.mr,
					    IB_SEND_SIGNALED, NULL, 1, 0x5eed));
	/*
	 * Interrupts disabled are "any context but hard IRQ": there a WR is
	 * refused for its own fault only. The refused one differs from the
	 * one accepted and completed right after it in the same section by
	 * its NULL MR alone; had it been queued, its context (NULL) would
	 * come back first.
	 */
	ibpost_test_fill(a, 8, 41);
	ibpost_test_fill(p->bbuf.buf, sizeof(canary), 42);
	ibpost_test_fill(canary, sizeof(canary), 42);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(2), p->bbuf.buf,
						  8, p->bbuf.mr));
	local_irq_save(flags);
	refused = ibpost_post_send(p->a, NULL, a, 8, NULL, IB_SEND_SIGNALED);
	ret = ibpost_post_send(p->a, CTX(1), a, 8, p->abuf.mr,
			       IB_SEND_SIGNALED);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, -EINVAL, refused);
	KUNIT_ASSERT_EQ(test, 0, ret);
	ibpost_test_send_ok(test, p->a, CTX(1));
	ibpost_test_recv_ok(test, p->b, CTX(2), 8);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->bbuf.buf, a, 8));
	KUNIT_EXPECT_EQ(test, 0, memcmp((u8 *)p->bbuf.buf + 8, canary + 8,
					sizeof(canary) - 8));
	ibpost_test_no_send_comp(test, p->a);
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, ibpost_test_qp_state(test, p->a));
}

static struct kunit_case ibpost_seed_cases[] = {
	KUNIT_CASE(ibpost_post_send_recv_moves_data),
	KUNIT_CASE(ibpost_post_send_inline_without_mr),
	KUNIT_CASE(ibpost_post_sendv_recvv_gather_scatter),
	KUNIT_CASE(ibpost_post_write_reaches_remote_buffer),
	KUNIT_CASE(ibpost_post_writev_gathers),
	KUNIT_CASE(ibpost_post_read_fetches_remote_buffer),
	KUNIT_CASE(ibpost_post_readv_scatters),
	KUNIT_CASE(ibpost_post_ud_send_delivers_datagram),
	KUNIT_CASE(ibpost_chain_with_imm_reaches_receiver),
	KUNIT_CASE(ibpost_post_send_rejects_bad_buffers),
	{}
};

static struct kunit_suite ibpost_seed_suite = {
	.name = "ibpost_seed",
	.test_cases = ibpost_seed_cases,
};

kunit_test_suites(&ibpost_seed_suite);
