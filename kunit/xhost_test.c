// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_xhost: ibpost between two hosts, through the kernel's rdma_cm.
 *
 * Run on host B against ibpost_xhost_server on host A (xhost.h has the
 * protocol, xhost_client.c the connections): the seed operations, an
 * exact partial post across the wire, 10,000 SENDs of mixed sizes with
 * RNR retry as the only flow control, the loss of the link under a full
 * send queue and a reconnect (xhost_link_test.c), a 1 MiB sg WRITE with
 * the SEND_WITH_INV of the server's key chained, and a last SHUTDOWN.
 * Each case connects afresh.
 */
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/vmalloc.h>
#include <kunit/test.h>
#include <rdma/rdma_cm.h>
#include "xhost.h"

#define XC_IO		8192U		/* RDMA READ/WRITE size */
#define XC_HALF		(XC_DATA_LEN / 2)
#define XC_STREAM_N	10000U
#define XC_STREAM_RING	64U		/* messages in flight */
#define XC_STREAM_SECS	180

/* ---- Seed operations -------------------------------------------------- */

/* An ECHO by sendv/recvv: header and payload apart, two SGEs each way. */
static void xc_echo_vectors(struct xc_conn *c)
{
	struct xhost_msg *req = c->tx.buf, *rep = c->rx.buf;
	u8 *out = c->data.buf, *in = out + XC_HALF;
	struct ibpost_sge sv[2] = {
		{ .addr = req, .length = sizeof(*req), .mr = c->tx.mr },
		{ .addr = out, .length = XC_ECHO_LEN, .mr = c->data.mr },
	};
	struct ibpost_sge rv[2] = {
		{ .addr = rep, .length = sizeof(*rep), .mr = c->rx.mr },
		{ .addr = in, .length = XC_ECHO_LEN, .mr = c->data.mr },
	};
	struct kunit *test = c->test;
	struct ibpost_comp comp;

	xhost_msg_init(req, XHOST_ECHO, ++c->seq, XC_ECHO_LEN, 0xe2);
	xhost_fill(out, XC_ECHO_LEN, 0xe2);
	memset(in, 0, XC_ECHO_LEN);
	KUNIT_ASSERT_EQ(test, ibpost_post_recvv(c->qp, rep, rv, 2), 0);
	KUNIT_ASSERT_EQ(test, ibpost_post_sendv(c->qp, req, sv, 2,
						IB_SEND_SIGNALED), 0);
	xc_send_comp(c, &comp, XC_REPLY_SECS);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)req);
	xc_recv_comp(c, &comp, XC_REPLY_SECS);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)rep);
	KUNIT_EXPECT_EQ(test, comp.byte_len, (u32)sizeof(*rep) + XC_ECHO_LEN);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rep->type), (u32)XHOST_ECHO);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rep->seq), c->seq);
	KUNIT_EXPECT_EQ(test, memcmp(in, out, XC_ECHO_LEN), 0);
}

/* A signaled RDMA operation posted with @context came back good. */
static void xc_rdma_done(struct xc_conn *c, void *context)
{
	struct ibpost_comp comp;

	xc_send_comp(c, &comp, XC_REPLY_SECS);
	KUNIT_EXPECT_EQ(c->test, comp.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_PTR_EQ(c->test, comp.context, context);
}

static void xc_write(struct xc_conn *c)
{
	u8 *src = c->data.buf;

	xhost_fill(src, XC_IO, 0xe3);
	KUNIT_ASSERT_EQ(c->test, ibpost_post_write(c->qp, src, src, XC_IO,
						   c->data.mr,
						   IB_SEND_SIGNALED,
						   c->peer.wr_addr,
						   c->peer.wr_rkey), 0);
	xc_rdma_done(c, src);
	KUNIT_EXPECT_EQ(c->test, xc_ask(c, XHOST_CHECK_WRITE, 0, XC_IO, 0xe3),
			1ULL);
}

/* 8 KiB gathered from two places lands at window offset XC_HALF. */
static void xc_writev(struct xc_conn *c)
{
	u8 *src = c->data.buf, *tail = src + XC_HALF;
	struct ibpost_sge sgl[2] = {
		{ .addr = src, .length = 3000, .mr = c->data.mr },
		{ .addr = tail, .length = XC_IO - 3000, .mr = c->data.mr },
	};

	xhost_fill(src, XC_IO, 0xe4);
	memcpy(tail, src + 3000, XC_IO - 3000);
	memset(src + 3000, 0, XC_IO - 3000);
	KUNIT_ASSERT_EQ(c->test, ibpost_post_writev(c->qp, src, sgl, 2,
						    IB_SEND_SIGNALED,
						    c->peer.wr_addr + XC_HALF,
						    c->peer.wr_rkey), 0);
	xc_rdma_done(c, src);
	KUNIT_EXPECT_EQ(c->test, xc_ask(c, XHOST_CHECK_WRITE, XC_HALF, XC_IO,
					0xe4), 1ULL);
}

/* 8 KiB from read window offset 4096: bytes 4096.. of its pattern. */
static void xc_read(struct xc_conn *c)
{
	u8 *dst = c->data.buf;

	memset(dst, 0, XC_IO);
	KUNIT_ASSERT_EQ(c->test, ibpost_post_read(c->qp, dst, dst, XC_IO,
						  c->data.mr,
						  IB_SEND_SIGNALED,
						  c->peer.rd_addr + 4096,
						  c->peer.rd_rkey), 0);
	xc_rdma_done(c, dst);
	KUNIT_EXPECT_TRUE(c->test, xhost_check_at(dst, XC_IO,
						  c->peer.rd_seed, 4096));
}

static void xc_readv(struct xc_conn *c)
{
	u8 *head = c->data.buf, *tail = head + XC_HALF;
	struct ibpost_sge sgl[2] = {
		{ .addr = head, .length = 2000, .mr = c->data.mr },
		{ .addr = tail, .length = XC_IO - 2000, .mr = c->data.mr },
	};

	memset(c->data.buf, 0, XC_DATA_LEN);
	if (ibpost_dev_ibdev(c->dev)->attrs.max_sge_rd < 2) {
		/* iWARP: one sink per READ; refused before the provider. */
		KUNIT_EXPECT_EQ(c->test, ibpost_post_readv(c->qp, head, sgl, 2,
							   IB_SEND_SIGNALED,
							   c->peer.rd_addr,
							   c->peer.rd_rkey),
				-EINVAL);
		sgl[0].length = XC_IO;
		KUNIT_ASSERT_EQ(c->test, ibpost_post_readv(c->qp, head, sgl, 1,
							   IB_SEND_SIGNALED,
							   c->peer.rd_addr,
							   c->peer.rd_rkey), 0);
		xc_rdma_done(c, head);
		KUNIT_EXPECT_TRUE(c->test, xhost_check_at(head, XC_IO,
							  c->peer.rd_seed, 0));
		return;
	}
	KUNIT_ASSERT_EQ(c->test, ibpost_post_readv(c->qp, head, sgl, 2,
						   IB_SEND_SIGNALED,
						   c->peer.rd_addr,
						   c->peer.rd_rkey), 0);
	xc_rdma_done(c, head);
	KUNIT_EXPECT_TRUE(c->test, xhost_check_at(head, 2000,
						  c->peer.rd_seed, 0));
	KUNIT_EXPECT_TRUE(c->test, xhost_check_at(tail, XC_IO - 2000,
						  c->peer.rd_seed, 2000));
}

static void xhost_seed_ops_across_hosts(struct kunit *test)
{
	struct xc_conn *c = xc_open(test);

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_EXPECT_EQ(test, ibpost_test_qp_state(test, c->qp), IB_QPS_RTS);
	xc_echo(c, XC_ECHO_LEN, 0xe1);
	xc_echo_vectors(c);
	xc_write(c);
	xc_writev(c);
	xc_read(c);
	xc_readv(c);
	xc_disconnect(c, XC_DISC_SECS);
}

/* ---- Partial post ----------------------------------------------------- */

/* Four 1 KiB WRITEs to window offsets 0, 1K, 2K, 3K; wr[2] is bad. */
static void xc_chain(struct xc_conn *c, struct ib_rdma_wr *wr,
		     struct ib_sge *sge)
{
	u8 *src = c->data.buf;
	int i;

	xhost_fill(src, 4096, 0xc4);
	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_EQ(c->test, ibpost_mr_sge(c->data.mr,
						       src + i * 1024, 1024,
						       &sge[i]), 0);
		wr[i].wr.wr_id = i + 1;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].wr.next = i < 3 ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = c->peer.wr_addr + i * 1024;
		wr[i].rkey = c->peer.wr_rkey;
	}
	wr[2].wr.num_sge = 99;		/* beyond the granted SGEs */
}

static void xc_expect_writes(struct xc_conn *c, u64 first, u64 last)
{
	struct ibpost_comp comp;
	u64 id;

	for (id = first; id <= last; id++) {
		xc_send_comp(c, &comp, XC_REPLY_SECS);
		KUNIT_EXPECT_EQ(c->test, comp.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(c->test, (u64)(uintptr_t)comp.context, id);
	}
}

static void xhost_partial_post_across_wire(struct kunit *test)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_rdma_wr wr[4] = {};
	struct ibpost_comp comp;
	struct ib_sge sge[4];
	struct xc_conn *c;

	c = xc_open(test);
	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_EQ(test, xc_ask(c, XHOST_ZERO, 0, 0, 0), 1ULL);
	xc_chain(c, wr, sge);

	KUNIT_EXPECT_EQ(test, ibpost_post_send_list(c->qp, &wr[0].wr, &bad),
			-EINVAL);
	KUNIT_ASSERT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr[2].wr);
	xc_expect_writes(c, 1, 2);
	KUNIT_EXPECT_EQ(test, ibpost_get_send_comp(c->qp, &comp, HZ / 2), 0);
	KUNIT_EXPECT_EQ(test, ibpost_test_qp_state(test, c->qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, xc_ask(c, XHOST_CHECK_WRITE, 0, 2048, 0xc4),
			1ULL);
	KUNIT_EXPECT_EQ(test, xc_ask(c, XHOST_CHECK_ZERO, 2048, 2048, 0),
			1ULL);

	/* Fixed and reposted from *bad_wr: the rest lands. */
	wr[2].wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, ibpost_post_send_list(c->qp, bad, &bad), 0);
	KUNIT_EXPECT_NULL(test, bad);
	xc_expect_writes(c, 3, 4);
	KUNIT_EXPECT_EQ(test, xc_ask(c, XHOST_CHECK_WRITE, 0, 4096, 0xc4),
			1ULL);
	xc_disconnect(c, XC_DISC_SECS);
}

/* ---- A stream of 10,000 SENDs ----------------------------------------- */

struct xc_stream {
	u32 signaled, returned, failed;
	u32 done;		/* every message with seq < done has gone */
	u64 bytes;
};

/*
 * Mostly small (64..4096 bytes), one in 32 large (4 KiB..16 KiB), and
 * XHOST_PAYLOAD_MAX every 1000th and last: 2.4 KiB on average, so the
 * 10,000 fit the time a TCG guest with KASAN has.
 */
static u32 xc_stream_len(u32 seq)
{
	u32 h = (seq * 2654435761U) >> 12;

	if (seq % 1000 == 999)
		return XHOST_PAYLOAD_MAX;
	if (seq % 32 == 7)
		return 4096 + h % (XHOST_PAYLOAD_MAX - 4096);
	return 64 + h % (4096 - 64 + 1);
}

/* One send completion: every message up to its seq has gone. */
static void xc_stream_reap(struct xc_conn *c, struct xc_stream *s)
{
	struct ibpost_comp comp;

	xc_send_comp(c, &comp, XC_REPLY_SECS);
	s->returned++;
	if (comp.status != IB_WC_SUCCESS)
		s->failed++;
	s->done = max_t(u32, s->done, (uintptr_t)comp.context);
}

static void xc_stream_post(struct xc_conn *c, struct xc_stream *s, u32 seq)
{
	u32 len = xc_stream_len(seq);
	int flags = 0, ret;
	struct ibpost_test_buf *b;

	/* Its buffer was last used by seq - nring: wait until it went. */
	while (seq - s->done >= c->nring)
		xc_stream_reap(c, s);
	b = &c->ring[seq % c->nring];
	xhost_msg_init(b->buf, XHOST_DATA, seq, len, seq);
	xhost_fill((struct xhost_msg *)b->buf + 1, len, seq);
	if (seq % 16 == 15 || seq == XC_STREAM_N - 1)
		flags = IB_SEND_SIGNALED;
	for (;;) {
		ret = ibpost_post_send(c->qp, (void *)(uintptr_t)(seq + 1),
				       b->buf, sizeof(struct xhost_msg) + len,
				       b->mr, flags);
		if (ret != -ENOMEM)
			break;
		xc_stream_reap(c, s);	/* the send queue is full */
	}
	KUNIT_ASSERT_EQ(c->test, ret, 0);
	s->signaled += !!flags;
	s->bytes += len;
}

static void xhost_stream_10000_mixed(struct kunit *test)
{
	unsigned long start = jiffies, deadline;
	const struct xhost_msg *rep;
	struct xc_stream s = {};
	struct xc_conn *c;
	u32 seq;

	c = xc_open(test);
	KUNIT_ASSERT_NOT_NULL(test, c);
	ibpost_test_need_ib(test, c->dev,
			    "a SEND that finds no receive ends the connection, and this stream's only flow control is RNR retry");
	xc_ring_alloc(c, XC_STREAM_RING);
	deadline = jiffies + XC_STREAM_SECS * HZ;
	for (seq = 0; seq < XC_STREAM_N; seq++) {
		xc_stream_post(c, &s, seq);
		KUNIT_ASSERT_TRUE_MSG(test, time_before(jiffies, deadline),
				      "only %u of %u messages sent in %d s",
				      seq + 1, XC_STREAM_N, XC_STREAM_SECS);
		/*
		 * Completions are often there already: without a yield this
		 * loop starves the RCU kthread on the test kernel.
		 */
		cond_resched();
	}
	while (s.returned < s.signaled)
		xc_stream_reap(c, &s);
	KUNIT_EXPECT_EQ(test, s.signaled, XC_STREAM_N / 16);
	KUNIT_EXPECT_EQ(test, s.returned, s.signaled);
	KUNIT_EXPECT_EQ(test, s.failed, 0U);
	KUNIT_EXPECT_EQ(test, s.done, XC_STREAM_N);

	rep = xc_request(c, XHOST_STATS, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(rep->arg0), (u64)XC_STREAM_N);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(rep->arg1), 0ULL);
	KUNIT_EXPECT_GE(test, le64_to_cpu(rep->addr), (u64)XC_STREAM_N);
	kunit_info(test, "%u messages, %llu payload bytes, in %u ms\n",
		   XC_STREAM_N, s.bytes, jiffies_to_msecs(jiffies - start));
	xc_disconnect(c, XC_DISC_SECS);
}

/* ---- An sg list's WRITE, the response retiring the peer's key --------- */

struct xc_pages {
	struct page *pg[XHOST_MAP_MAX / PAGE_SIZE];
	struct scatterlist sg[XHOST_MAP_MAX / PAGE_SIZE];
};

static void xc_pages_free(void *data)
{
	struct xc_pages *x = data;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(x->pg); i++)
		if (x->pg[i])
			__free_pages(x->pg[i], 1);
	vfree(x);
}

/*
 * The nvmet pattern across the wire: the server maps 1 MiB of scattered
 * pages for the client (MAP: its fast registration rides the answer that
 * carries the key), the client WRITEs 1 MiB of its own scattered pages
 * there with ibpost_rw_post() and chains CHECK_MAP behind it as the
 * SEND_WITH_INV of that key, one context for both. The server finds
 * every byte, the key retired by the receive, and its unmap with nothing
 * to post.
 */
static void xhost_rw_sg_write_with_inv(struct kunit *test)
{
	const u32 n = XHOST_MAP_MAX / PAGE_SIZE, seed = 0x51;
	struct xhost_msg *req, *rep;
	struct ib_send_wr send = {};
	struct ibpost_comp comp;
	struct xc_pages *x;
	struct xc_conn *c;
	struct ib_sge sge;
	u32 i, rkey;
	u64 iova;

	x = vzalloc(sizeof(*x));
	KUNIT_ASSERT_NOT_NULL(test, x);
	ibpost_test_defer(test, xc_pages_free, x);
	sg_init_table(x->sg, n);
	for (i = 0; i < n; i++) {
		u8 *va;
		u32 j;

		x->pg[i] = alloc_pages(GFP_KERNEL, 1);
		KUNIT_ASSERT_NOT_NULL(test, x->pg[i]);
		va = page_address(x->pg[i]);
		for (j = 0; j < PAGE_SIZE; j++)
			va[j] = xhost_byte(seed, i * PAGE_SIZE + j);
		sg_set_page(&x->sg[i], x->pg[i], PAGE_SIZE, 0);
	}
	c = xc_open(test);
	KUNIT_ASSERT_NOT_NULL(test, c);
	/* The server's pages hold another pattern: every byte must change. */
	rep = (struct xhost_msg *)xc_request(c, XHOST_MAP, 0, XHOST_MAP_MAX,
					     seed + 1);
	KUNIT_ASSERT_EQ(test, le64_to_cpu(rep->arg1), (u64)XHOST_MAP_MAX);
	rkey = le64_to_cpu(rep->arg0);
	iova = le64_to_cpu(rep->addr);

	req = c->tx.buf;
	rep = c->rx.buf;
	xhost_msg_init(req, XHOST_CHECK_MAP, ++c->seq, XHOST_MAP_MAX, seed);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(c->tx.mr, req, sizeof(*req),
					       &sge));
	send.opcode = IB_WR_SEND_WITH_INV;
	send.ex.invalidate_rkey = rkey;
	send.sg_list = &sge;
	send.num_sge = 1;
	KUNIT_ASSERT_EQ(test, ibpost_post_recv(c->qp, rep, rep, XHOST_MSG_MAX,
					       c->rx.mr), 0);
	KUNIT_ASSERT_EQ(test, 0, ibpost_rw_post(c->qp, x, x->sg, n, 0, iova,
						rkey, DMA_TO_DEVICE,
						IB_SEND_SIGNALED, &send));
	xc_send_comp(c, &comp, XC_REPLY_SECS);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)x);
	KUNIT_EXPECT_EQ(test, comp.opcode, IB_WC_SEND);
	xc_recv_comp(c, &comp, XC_REPLY_SECS);
	KUNIT_ASSERT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, le32_to_cpu(rep->type), (u32)XHOST_RESULT);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rep->seq), c->seq);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(rep->arg0), (u64)XHOST_MAP_ALL_OK);
	xc_disconnect(c, XC_DISC_SECS);
}

/* ---- The end ---------------------------------------------------------- */

static void xhost_server_shutdown(struct kunit *test)
{
	struct xc_conn *c = xc_open(test);

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_EXPECT_EQ(test, xc_ask(c, XHOST_SHUTDOWN, 0, 0, 0), 1ULL);
	xc_disconnect(c, XC_DISC_SECS);
}

static struct kunit_case ibpost_xhost_cases[] = {
	KUNIT_CASE(xhost_seed_ops_across_hosts),
	KUNIT_CASE(xhost_partial_post_across_wire),
	KUNIT_CASE(xhost_stream_10000_mixed),
	KUNIT_CASE(xhost_link_loss_and_reconnect),
	KUNIT_CASE(xhost_rw_sg_write_with_inv),
	KUNIT_CASE(xhost_server_shutdown),
	{}
};

static struct kunit_suite ibpost_xhost_suite = {
	.name = "ibpost_xhost",
	.test_cases = ibpost_xhost_cases,
};

kunit_test_suite(ibpost_xhost_suite);

MODULE_DESCRIPTION("KUnit suite for ibpost between two hosts, the client of ibpost_xhost_server");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(IBPOST_NS);
MODULE_IMPORT_NS(IBPOST_TEST_NS);
