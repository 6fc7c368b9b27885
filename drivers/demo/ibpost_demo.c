// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_demo: a small ULP that uses only ibpost's exported symbols, as any
 * consumer would (built against ibpost's Module.symvers).
 *
 * On load it takes the device named by "ibdev" (rxe0 by default), makes a
 * loopback RC pair and two UD QPs, registers buffers, and moves real data
 * through every seed operation (send/recv, sendv/recvv, write, writev,
 * read, readv, UD send) and through page memory (an sg_table of
 * scattered pages, a vmalloc buffer, and pages mapped for the peer per
 * I/O with fast registration), comparing it byte for byte. It
 * then posts a chain with one deliberately bad WR in the middle and shows
 * the partial post: how many WRs were queued, which one bad_wr names,
 * that the QP is still in RTS, and the rest completing once reposted from
 * bad_wr. The QPs stay until the module is unloaded, so ibpost's debugfs
 * view shows them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ibpost.h>

static char *ibdev = "rxe0";
module_param(ibdev, charp, 0444);
MODULE_PARM_DESC(ibdev, "RDMA device to run the demo on (default rxe0)");

#define DEMO_LEN	16384
#define DEMO_QKEY	0x1234
#define DEMO_PAGES	4

struct demo_buf {
	void *buf;
	struct ibpost_mr *mr;
};

static struct demo {
	struct ibpost_dev *dev;
	struct ibpost_qp *a, *b, *x, *y;
	struct ib_ah *ah;
	struct demo_buf src, dst, rd, wr;
	int checks, failed;
} demo;

static void demo_check(bool ok, const char *what, const char *detail)
{
	demo.checks++;
	if (!ok)
		demo.failed++;
	pr_info("  %-26s %-4s %s\n", what, ok ? "ok" : "FAIL", detail);
}

static void demo_fill(void *buf, size_t len, u8 seed)
{
	u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = seed + i * 13 + (i >> 9);
}

/* The next completion of a queue, or a status that says it never came. */
static struct ibpost_comp demo_comp(struct ibpost_qp *qp, bool send)
{
	struct ibpost_comp c = { .status = IB_WC_GENERAL_ERR };
	int ret;

	ret = send ? ibpost_get_send_comp(qp, &c, 10 * HZ) :
		     ibpost_get_recv_comp(qp, &c, 10 * HZ);
	if (ret != 1)
		c.status = IB_WC_RESP_TIMEOUT_ERR;
	return c;
}

static int demo_reg(struct demo_buf *b, struct ibpost_qp *remote, int kind)
{
	b->buf = kzalloc(DEMO_LEN, GFP_KERNEL);
	if (!b->buf)
		return -ENOMEM;
	if (kind == 'r')
		b->mr = ibpost_reg_read(remote, b->buf, DEMO_LEN);
	else if (kind == 'w')
		b->mr = ibpost_reg_write(remote, b->buf, DEMO_LEN);
	else
		b->mr = ibpost_reg_msgs(demo.dev, b->buf, DEMO_LEN);
	if (IS_ERR(b->mr)) {
		int ret = PTR_ERR(b->mr);

		kfree(b->buf);
		b->buf = NULL;
		return ret;
	}
	return 0;
}

static void demo_unreg(struct demo_buf *b)
{
	if (!b->buf)
		return;
	if (ibpost_dereg_mr(b->mr))
		pr_err("dereg_mr refused after the QPs were destroyed\n");
	kfree(b->buf);
	b->buf = NULL;
}

static void demo_send_recv(void)
{
	struct ibpost_comp s, r;
	char detail[96];
	int ret;

	demo_fill(demo.src.buf, 3000, 1);
	memset(demo.dst.buf, 0, DEMO_LEN);
	ret = ibpost_post_recv(demo.b, &demo.dst, demo.dst.buf, DEMO_LEN,
			       demo.dst.mr) ?:
	      ibpost_post_send(demo.a, &demo.src, demo.src.buf, 3000,
			       demo.src.mr, IB_SEND_SIGNALED);
	s = demo_comp(demo.a, true);
	r = demo_comp(demo.b, false);
	snprintf(detail, sizeof(detail), "3000 B, recv byte_len %u, contexts %s",
		 r.byte_len, s.context == &demo.src && r.context == &demo.dst ?
		 "returned" : "WRONG");
	demo_check(!ret && !s.status && !r.status && r.byte_len == 3000 &&
		   !memcmp(demo.src.buf, demo.dst.buf, 3000) &&
		   s.context == &demo.src && r.context == &demo.dst,
		   "send/recv", detail);
}

static void demo_sendv_recvv(void)
{
	u8 *s = demo.src.buf, *d = demo.dst.buf;
	struct ibpost_sge out[2] = {
		{ s, 1000, demo.src.mr }, { s + 8192, 3000, demo.src.mr },
	};
	struct ibpost_sge in[2] = {
		{ d, 2000, demo.dst.mr }, { d + 10000, 2000, demo.dst.mr },
	};
	struct ibpost_comp sc, rc;
	int ret;

	demo_fill(s, DEMO_LEN, 2);
	memset(d, 0, DEMO_LEN);
	ret = ibpost_post_recvv(demo.b, NULL, in, 2) ?:
	      ibpost_post_sendv(demo.a, NULL, out, 2, IB_SEND_SIGNALED);
	sc = demo_comp(demo.a, true);
	rc = demo_comp(demo.b, false);
	demo_check(!ret && !sc.status && !rc.status && rc.byte_len == 4000 &&
		   !memcmp(d, s, 1000) && !memcmp(d + 1000, s + 8192, 1000) &&
		   !memcmp(d + 10000, s + 9192, 2000),
		   "sendv/recvv", "2 SGEs out (1000+3000 B), 2 SGEs in (2000+2000 B)");
}

static void demo_write(bool vector)
{
	u8 *s = demo.src.buf;
	struct ibpost_sge sgl[2] = {
		{ s + 100, 4000, demo.src.mr }, { s + 9000, 4096, demo.src.mr },
	};
	u64 raddr = ibpost_mr_remote_addr(demo.wr.mr);
	u32 rkey = ibpost_mr_rkey(demo.wr.mr);
	struct ibpost_comp c;
	int ret;

	demo_fill(s, DEMO_LEN, vector ? 4 : 3);
	memset(demo.wr.buf, 0, DEMO_LEN);
	if (vector)
		ret = ibpost_post_writev(demo.a, NULL, sgl, 2,
					 IB_SEND_SIGNALED, raddr, rkey);
	else
		ret = ibpost_post_write(demo.a, NULL, s, DEMO_LEN, demo.src.mr,
					IB_SEND_SIGNALED, raddr, rkey);
	c = demo_comp(demo.a, true);
	if (vector)
		demo_check(!ret && !c.status &&
			   !memcmp(demo.wr.buf, s + 100, 4000) &&
			   !memcmp((u8 *)demo.wr.buf + 4000, s + 9000, 4096),
			   "writev", "2 SGEs (4000+4096 B) into the peer's reg_write MR");
	else
		demo_check(!ret && !c.status &&
			   !memcmp(demo.wr.buf, s, DEMO_LEN),
			   "write", "16384 B into the peer's reg_write MR");
}

static void demo_read(bool vector)
{
	u8 *d = demo.dst.buf;
	struct ibpost_sge sgl[2] = {
		{ d + 3, 5000, demo.dst.mr }, { d + 12000, 3000, demo.dst.mr },
	};
	u64 raddr = ibpost_mr_remote_addr(demo.rd.mr);
	u32 rkey = ibpost_mr_rkey(demo.rd.mr);
	struct ibpost_comp c;
	int ret;

	demo_fill(demo.rd.buf, DEMO_LEN, vector ? 6 : 5);
	memset(d, 0, DEMO_LEN);
	if (vector)
		ret = ibpost_post_readv(demo.a, NULL, sgl, 2, IB_SEND_SIGNALED,
					raddr, rkey);
	else
		ret = ibpost_post_read(demo.a, NULL, d, DEMO_LEN, demo.dst.mr,
				       IB_SEND_SIGNALED, raddr, rkey);
	c = demo_comp(demo.a, true);
	if (vector)
		demo_check(!ret && !c.status && !memcmp(d + 3, demo.rd.buf, 5000) &&
			   !memcmp(d + 12000, (u8 *)demo.rd.buf + 5000, 3000),
			   "readv", "8000 B scattered over 2 SGEs from the peer's reg_read MR");
	else
		demo_check(!ret && !c.status && !memcmp(d, demo.rd.buf, DEMO_LEN),
			   "read", "16384 B from the peer's reg_read MR");
}

static void demo_ud_send(void)
{
	struct ibpost_comp s, r;
	int ret;

	demo_fill(demo.src.buf, 1024, 7);
	memset(demo.dst.buf, 0, DEMO_LEN);
	ret = ibpost_post_recv(demo.y, NULL, demo.dst.buf, 1024 + 40,
			       demo.dst.mr) ?:
	      ibpost_post_ud_send(demo.x, NULL, demo.src.buf, 1024, demo.src.mr,
				  IB_SEND_SIGNALED, demo.ah,
				  ibpost_qp_ibqp(demo.y)->qp_num, DEMO_QKEY);
	s = demo_comp(demo.x, true);
	r = demo_comp(demo.y, false);
	demo_check(!ret && !s.status && !r.status && r.byte_len == 1064 &&
		   !memcmp((u8 *)demo.dst.buf + 40, demo.src.buf, 1024),
		   "ud_send", "1024 B datagram (+40 B GRH) to another UD QP");
}

/* A five-WR chain of WRITEs whose third WR asks for too many SGEs. */
/*
 * Memory a ULP holds as pages: an sg_table of 4 scattered pages, sent
 * by offset over the page boundaries into a vmalloc buffer registered
 * page by page, then read back into the pages with a READ from the
 * peer's reg_read MR; ibpost maps, bounds-checks and syncs them.
 */
static void demo_pages(void)
{
	struct page *pages[DEMO_PAGES] = {};
	struct ibpost_mr *smr = NULL, *vmr = NULL;
	struct ibpost_comp s, r, c;
	struct sg_table sgt;
	bool same = false;
	char detail[112];
	u8 *v = NULL;
	int i, ret = -ENOMEM;

	if (sg_alloc_table(&sgt, DEMO_PAGES, GFP_KERNEL))
		goto out;
	for (i = 0; i < DEMO_PAGES; i++) {
		/* One of two pages each: no two entries are adjacent. */
		pages[i] = alloc_pages(GFP_KERNEL, 1);
		if (!pages[i])
			goto out_free;
		demo_fill(page_address(pages[i]), PAGE_SIZE, 40 + i);
		sg_set_page(&sgt.sgl[i], pages[i], PAGE_SIZE, 0);
	}
	v = vzalloc(DEMO_PAGES * PAGE_SIZE);
	if (!v)
		goto out_free;
	smr = ibpost_reg_sgt(demo.dev, &sgt, DMA_BIDIRECTIONAL);
	vmr = ibpost_reg_vmalloc(demo.dev, v, DEMO_PAGES * PAGE_SIZE,
				 DMA_FROM_DEVICE);
	ret = IS_ERR(smr) ? PTR_ERR(smr) : IS_ERR(vmr) ? PTR_ERR(vmr) : 0;
	if (ret)
		goto out_free;
	/*
	 * 2 pages from byte 1000 of the first: 3 SGEs on the send side, at
	 * most 2 (the QP's receive SGEs) on the receive side, where the
	 * vmalloc pages may or may not be adjacent.
	 */
	ret = ibpost_post_recv_mr(demo.b, vmr, vmr, 0, 2 * PAGE_SIZE) ?:
	      ibpost_post_mr(demo.a, smr, IB_WR_SEND, smr, 1000,
			     2 * PAGE_SIZE, IB_SEND_SIGNALED, 0, 0);
	s = demo_comp(demo.a, true);
	r = demo_comp(demo.b, false);
	for (i = 0, same = true; i < 2 * PAGE_SIZE; i++) {
		size_t at = 1000 + i;

		same &= v[i] == ((u8 *)page_address(pages[at / PAGE_SIZE]))
				[at % PAGE_SIZE];
	}
	snprintf(detail, sizeof(detail), "%lu B from 3 scattered pages by offset into a vmalloc MR",
		 2 * PAGE_SIZE);
	demo_check(!ret && !s.status && !r.status && same &&
		   r.byte_len == 2 * PAGE_SIZE, "sg_table send", detail);
	/* The peer's 5000 B land over the boundary of pages 1 and 2. */
	demo_fill(demo.rd.buf, DEMO_LEN, 9);
	ret = ibpost_post_mr(demo.a, smr, IB_WR_RDMA_READ, smr,
			     2 * PAGE_SIZE - 2000, 5000, IB_SEND_SIGNALED,
			     ibpost_mr_remote_addr(demo.rd.mr),
			     ibpost_mr_rkey(demo.rd.mr));
	c = demo_comp(demo.a, true);
	same = !memcmp(page_address(pages[1]) + PAGE_SIZE - 2000, demo.rd.buf,
		       2000) &&
	       !memcmp(page_address(pages[2]), demo.rd.buf + 2000, 3000);
	snprintf(detail, sizeof(detail), "5000 B over pages 1 and 2 (%s)",
		 ret == -EINVAL ? "iWARP: a READ has one SGE" : "2 SGEs");
	demo_check((!ret && !c.status && same) || ret == -EINVAL,
		   "sg_table read", detail);
out_free:
	/* ibpost mapped a copy of the table: it is the demo's again. */
	sg_free_table(&sgt);
	/* A WR still uses the pages (a completion that never came): keep them. */
	if ((!IS_ERR_OR_NULL(vmr) && ibpost_dereg_mr(vmr)) ||
	    (!IS_ERR_OR_NULL(smr) && ibpost_dereg_mr(smr))) {
		pr_err("dereg refused: a WR still uses the pages; they are kept\n");
		demo_check(false, "sg_table memory", "pages still in use");
		return;
	}
	vfree(v);
	for (i = 0; i < DEMO_PAGES; i++)
		if (pages[i])
			__free_pages(pages[i], 1);
out:
	if (ret)
		demo_check(false, "sg_table memory", "set-up failed");
}

/* DEMO_PAGES scattered pages (each the first of an order-1 block). */
static int demo_pages_alloc(struct page **pages, struct scatterlist *sg,
			    u8 seed)
{
	int i;

	sg_init_table(sg, DEMO_PAGES);
	for (i = 0; i < DEMO_PAGES; i++) {
		pages[i] = alloc_pages(GFP_KERNEL, 1);
		if (!pages[i])
			return -ENOMEM;
		demo_fill(page_address(pages[i]), PAGE_SIZE, seed + i);
		sg_set_page(&sg[i], pages[i], PAGE_SIZE, 0);
	}
	return 0;
}

static void demo_pages_free(struct page **pages)
{
	int i;

	for (i = 0; i < DEMO_PAGES; i++)
		if (pages[i])
			__free_pages(pages[i], 1);
}

/*
 * b's response retiring a's key @rkey: the SEND_WITH_INV in @wr (8 bytes
 * of src through @sge), a's receive for it posted.
 */
static int demo_response(struct ib_send_wr *wr, struct ib_sge *sge, u32 rkey)
{
	wr->opcode = IB_WR_SEND_WITH_INV;
	wr->ex.invalidate_rkey = rkey;
	wr->sg_list = sge;
	wr->num_sge = 1;
	return ibpost_mr_sge(demo.src.mr, demo.src.buf, 8, sge) ?:
	       ibpost_post_recv(demo.a, &demo.dst, demo.rd.buf, 64, demo.rd.mr);
}

/*
 * a maps @sg for b's WRITE and sends b the key in a SEND (the command of
 * an initiator), whose completion is *@s: the REG_MR rides ahead of it.
 */
static int demo_map_for_peer(struct scatterlist *sg,
			     struct ibpost_frwr_map *map, struct ibpost_comp *s)
{
	struct ibpost_comp r;
	int ret;

	ret = ibpost_frwr_map(demo.a, sg, DEMO_PAGES, IB_ACCESS_REMOTE_WRITE,
			      map) ?:
	      ibpost_post_recv(demo.b, &demo.dst, demo.dst.buf, DEMO_LEN,
			       demo.dst.mr) ?:
	      ibpost_post_send(demo.a, &demo.src, map, sizeof(map->rkey),
			       NULL, IB_SEND_SIGNALED | IB_SEND_INLINE);
	if (ret)
		return ret;
	*s = demo_comp(demo.a, true);
	r = demo_comp(demo.b, false);
	return s->status || r.status ? -EIO : 0;
}

/*
 * One I/O the nvme-rdma way: a's scattered pages mapped for the peer at
 * once (fast registration, its REG_MR riding a's next SEND), the peer
 * (b) WRITEs them and answers with SEND_WITH_INV, which retires the key:
 * a's unmap then posts nothing.
 */
static void demo_frwr(void)
{
	struct page *pages[DEMO_PAGES] = {};
	struct ibpost_frwr_map map = {};
	struct ibpost_comp s = {}, r, c = {};
	struct scatterlist sg[DEMO_PAGES];
	struct ib_send_wr inv = {};
	const struct ib_send_wr *bad;
	struct ib_sge sge;
	bool same = true;
	char detail[112];
	int i, ret, un = 0;

	ret = demo_pages_alloc(pages, sg, 5) ?:
	      demo_map_for_peer(sg, &map, &s);
	if (ret)
		goto out;
	/* The peer writes the pages, then retires the key. */
	demo_fill(demo.src.buf, DEMO_PAGES * PAGE_SIZE, 77);
	ret = ibpost_post_write(demo.b, &demo.wr, demo.src.buf, map.length,
				demo.src.mr, IB_SEND_SIGNALED, map.iova,
				map.rkey);
	c = demo_comp(demo.b, true);
	ret = ret ?: c.status ? -EIO : 0;
	ret = ret ?: demo_response(&inv, &sge, map.rkey);
	inv.send_flags = IB_SEND_SIGNALED;
	ret = ret ?: ibpost_post_send_list(demo.b, &inv, &bad);
	c = demo_comp(demo.b, true);
	r = demo_comp(demo.a, false);
	for (i = 0; i < DEMO_PAGES; i++)
		same &= !memcmp(page_address(pages[i]),
				demo.src.buf + i * PAGE_SIZE, PAGE_SIZE);
	snprintf(detail, sizeof(detail),
		 "%u B in %d scattered pages, rkey %#x, written by the peer",
		 map.length, DEMO_PAGES, map.rkey);
	demo_check(!ret && !s.status && !c.status && same, "frwr map + WRITE",
		   detail);
	if (!ret)
		un = ibpost_frwr_unmap(demo.a, &map, &demo.src);
	snprintf(detail, sizeof(detail), "received (invalidated %#x), unmap: %s",
		 r.invalidate_rkey, un == IBPOST_FRWR_DONE ?
		 "nothing to post" : "LOCAL_INV posted");
	demo_check(!ret && !r.status && (r.wc_flags & IB_WC_WITH_INVALIDATE) &&
		   r.invalidate_rkey == map.rkey && un == IBPOST_FRWR_DONE,
		   "SEND_WITH_INV retires it", detail);
out:
	/* Still mapped (a step failed): the pages stay with the map. */
	if (!map.ent ||
	    ibpost_frwr_unmap(demo.a, &map, &demo.src) == IBPOST_FRWR_DONE)
		demo_pages_free(pages);
	if (ret)
		demo_check(false, "frwr", "set-up failed");
}

/*
 * The target's side of that I/O (nvmet): b WRITEs an sg list of its own
 * scattered pages into the pages a mapped for it, its response (a
 * SEND_WITH_INV of a's key) chained behind in the same call: one context
 * for the whole operation, the key retired when a sees the response.
 */
static void demo_rw(void)
{
	struct page *apages[DEMO_PAGES] = {}, *bpages[DEMO_PAGES] = {};
	struct scatterlist asg[DEMO_PAGES], bsg[DEMO_PAGES];
	struct ibpost_frwr_map map = {};
	struct ibpost_comp s, r = {}, c = {};
	struct ib_send_wr rsp = {};
	struct ib_sge sge;
	bool same = true;
	char detail[128];
	int i, ret, un = 0;

	ret = demo_pages_alloc(apages, asg, 3) ?:
	      demo_pages_alloc(bpages, bsg, 101) ?:
	      demo_map_for_peer(asg, &map, &s);
	if (ret)
		goto out;
	/* The data and the response, one call, one context. */
	ret = demo_response(&rsp, &sge, map.rkey) ?:
	      ibpost_rw_post(demo.b, &demo.wr, bsg, DEMO_PAGES, 0, map.iova,
			     map.rkey, DMA_TO_DEVICE, IB_SEND_SIGNALED, &rsp);
	if (!ret) {
		c = demo_comp(demo.b, true);
		r = demo_comp(demo.a, false);
	}
	for (i = 0; i < DEMO_PAGES; i++)
		same &= !memcmp(page_address(apages[i]),
				page_address(bpages[i]), PAGE_SIZE);
	if (!ret)
		un = ibpost_frwr_unmap(demo.a, &map, &demo.src);
	snprintf(detail, sizeof(detail),
		 "%u B from %d scattered pages + SEND_WITH_INV: 1 context (%s), key %s",
		 map.length, DEMO_PAGES, c.opcode == IB_WC_SEND ? "SEND" : "?",
		 un == IBPOST_FRWR_DONE ? "retired" : "still valid");
	demo_check(!ret && !c.status && c.context == &demo.wr && !r.status &&
		   (r.wc_flags & IB_WC_WITH_INVALIDATE) && same &&
		   un == IBPOST_FRWR_DONE, "rw WRITE + response", detail);
out:
	/* Still mapped (a step failed): a's pages stay with the map. */
	if (!map.ent ||
	    ibpost_frwr_unmap(demo.a, &map, &demo.src) == IBPOST_FRWR_DONE)
		demo_pages_free(apages);
	/* An operation whose context never came may still read them. */
	if (c.status != IB_WC_RESP_TIMEOUT_ERR)
		demo_pages_free(bpages);
	if (ret)
		demo_check(false, "rw", "set-up failed");
}

static void demo_partial_post(void)
{
	struct ibpost_qp_attr got;
	struct ib_rdma_wr wr[5] = {};
	struct ib_sge sge[4];
	const struct ib_send_wr *bad = NULL;
	struct ib_qp_init_attr init;
	struct ib_qp_attr qa;
	struct ibpost_comp c;
	int i, ret, first = 0, rest = 0, bad_idx = -1;
	char detail[160];

	ibpost_qp_get_attr(demo.a, &got);
	for (i = 0; i < 4; i++)
		ibpost_mr_sge(demo.src.mr, (u8 *)demo.src.buf + 64 * i, 64,
			      &sge[i]);
	for (i = 0; i < 5; i++) {
		wr[i].wr.wr_id = i;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.sg_list = &sge[0];
		wr[i].wr.num_sge = 1;
		wr[i].wr.next = i < 4 ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = ibpost_mr_remote_addr(demo.wr.mr) + 64 * i;
		wr[i].rkey = ibpost_mr_rkey(demo.wr.mr);
	}
	wr[2].wr.num_sge = got.max_send_sge + 1;

	ret = ibpost_post_send_list(demo.a, &wr[0].wr, &bad);
	for (i = 0; i < 5; i++)
		if (bad == &wr[i].wr)
			bad_idx = i;
	while (ibpost_get_send_comp(demo.a, &c, HZ / 2) == 1 && !c.status)
		first++;
	ib_query_qp(ibpost_qp_ibqp(demo.a), &qa, IB_QP_STATE, &init);
	snprintf(detail, sizeof(detail),
		 "WR 2 of 0..4 has %u SGEs (granted %u): ret %d, bad_wr = WR %d, %d queued and completed, QP %s",
		 got.max_send_sge + 1, got.max_send_sge, ret, bad_idx, first,
		 qa.qp_state == IB_QPS_RTS ? "still RTS" : "NOT RTS");
	demo_check(ret == -EINVAL && bad_idx == 2 && first == 2 &&
		   qa.qp_state == IB_QPS_RTS, "chain, bad WR in middle",
		   detail);

	wr[2].wr.num_sge = 1;
	ret = ibpost_post_send_list(demo.a, bad, &bad);
	while (ibpost_get_send_comp(demo.a, &c, HZ / 2) == 1 && !c.status)
		rest++;
	snprintf(detail, sizeof(detail),
		 "fixed WR 2, reposted from bad_wr: ret %d, %d more completed",
		 ret, rest);
	demo_check(!ret && rest == 3, "chain, resumed", detail);
}

static void demo_report_qp(const char *what, struct ibpost_qp *qp)
{
	struct ibpost_qp_attr got;

	ibpost_qp_get_attr(qp, &got);
	pr_info("  %-5s qpn %-3u granted send_wr %u recv_wr %u send_sge %u inline %u, signal every %u\n",
		what, ibpost_qp_ibqp(qp)->qp_num, got.max_send_wr,
		got.max_recv_wr, got.max_send_sge, got.max_inline_data,
		got.signal_interval);
}

static int demo_setup(void)
{
	struct ibpost_qp_attr attr = {
		.qp_type = IB_QPT_RC,
		.max_send_wr = 16, .max_recv_wr = 16,
		.max_send_sge = 2, .max_recv_sge = 2,
		.max_inline_data = 64,
		.qkey = DEMO_QKEY,
		.poll_ctx = IB_POLL_SOFTIRQ,
		.frwr_maps = 4,
		.rw_ops = 4,
	};
	struct rdma_ah_attr av;
	int ret;

	demo.a = ibpost_qp_create(demo.dev, &attr);
	if (IS_ERR(demo.a))
		return PTR_ERR(demo.a);
	demo.b = ibpost_qp_create(demo.dev, &attr);
	if (IS_ERR(demo.b))
		return PTR_ERR(demo.b);
	ret = ibpost_qp_connect_loopback(demo.a, demo.b);
	if (ret)
		return ret;
	attr.qp_type = IB_QPT_UD;
	attr.frwr_maps = 0;
	attr.rw_ops = 0;
	demo.x = ibpost_qp_create(demo.dev, &attr);
	if (IS_ERR(demo.x))
		return PTR_ERR(demo.x);
	demo.y = ibpost_qp_create(demo.dev, &attr);
	if (IS_ERR(demo.y))
		return PTR_ERR(demo.y);
	ret = ibpost_qp_loopback_av(demo.x, &av);
	if (ret)
		return ret;
	demo.ah = rdma_create_ah(ibpost_dev_pd(demo.dev), &av,
				 RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(demo.ah))
		return PTR_ERR(demo.ah);
	return demo_reg(&demo.src, NULL, 'm') ?:
	       demo_reg(&demo.dst, NULL, 'm') ?:
	       demo_reg(&demo.rd, demo.b, 'r') ?:
	       demo_reg(&demo.wr, demo.b, 'w');
}

static void demo_teardown(void)
{
	/* QPs first: their drain returns every context, then MRs can go. */
	if (!IS_ERR_OR_NULL(demo.ah))
		rdma_destroy_ah(demo.ah, RDMA_DESTROY_AH_SLEEPABLE);
	ibpost_qp_destroy(demo.y);
	ibpost_qp_destroy(demo.x);
	ibpost_qp_destroy(demo.b);
	ibpost_qp_destroy(demo.a);
	demo_unreg(&demo.wr);
	demo_unreg(&demo.rd);
	demo_unreg(&demo.dst);
	demo_unreg(&demo.src);
	ibpost_dev_put(demo.dev);
}

static int __init demo_init(void)
{
	int ret;

	pr_info("==== ibpost demo on %s ====\n", ibdev);
	demo.dev = ibpost_dev_get(ibdev);
	if (IS_ERR(demo.dev)) {
		pr_err("no ibpost device %s: %ld\n", ibdev, PTR_ERR(demo.dev));
		return PTR_ERR(demo.dev);
	}
	ret = demo_setup();
	if (ret) {
		pr_err("setup failed: %d\n", ret);
		demo_teardown();
		return ret;
	}
	pr_info("QPs (loopback RC pair a<->b in RTS, UD x and y in RTS):\n");
	demo_report_qp("RC a", demo.a);
	demo_report_qp("RC b", demo.b);
	demo_report_qp("UD x", demo.x);
	demo_report_qp("UD y", demo.y);
	pr_info("seed operations, data compared byte for byte:\n");
	demo_send_recv();
	demo_sendv_recvv();
	demo_write(false);
	demo_write(true);
	demo_read(false);
	demo_read(true);
	demo_ud_send();
	pr_info("pages and sg_tables (ibpost maps and syncs them):\n");
	demo_pages();
	pr_info("fast registration per I/O (the peer's SEND_WITH_INV retires it):\n");
	demo_frwr();
	pr_info("RDMA WRITE of an sg list, the response chained (rdma_rw):\n");
	demo_rw();
	pr_info("chained post, exact IBA 11.4.1.1 partial post:\n");
	demo_partial_post();
	pr_info("==== ibpost demo: %d of %d checks passed ====\n",
		demo.checks - demo.failed, demo.checks);
	return 0;
}

static void __exit demo_exit(void)
{
	demo_teardown();
	pr_info("==== ibpost demo unloaded: QPs drained, MRs released ====\n");
}

module_init(demo_init);
module_exit(demo_exit);

MODULE_DESCRIPTION("ibpost demo ULP: a consumer of ibpost's exported API");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(IBPOST_NS);
