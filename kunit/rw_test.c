// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_rw: RDMA READ and WRITE of an sg list of scattered pages
 * (ibpost_rw_post(), ib_core's rdma_rw_ctx underneath). A 1 MiB list
 * moves byte for byte in either direction, skipped leading bytes and the
 * pages' other bytes untouched, in the WRs ib_core lays out (SGEs per
 * WR, or an iWARP READ's MRs); an op's one context comes back once, a
 * READ's always, a WRITE's when signaled, every failure's flushed; a
 * SEND chained behind a WRITE carries the context and arrives after the
 * data; an op the provider refuses at its first WR returns the error
 * with nothing queued, one it refuses later comes back flushed and
 * leaves the QP usable (an iWARP READ's registered MRs replaced); an op
 * larger than the free send slots is -ENOMEM, an iWARP READ beyond the
 * MR pool -EAGAIN, nothing queued; bad input is -EINVAL before anything
 * is taken; in ib_cqe mode the context is the consumer's cqe.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

/*
 * The pairs: RW_OPS operations, RW_SQ send WRs of RW_SGE SGEs (the same
 * WR counts on rxe and siw for a WRITE). The big ops move RW_LEN bytes
 * through RW_PAGES pages (one more with a leading offset); the small
 * ones RW_SMALL pages. The SEND case runs RW_SEND_ITERS ops of up to
 * RW_SEND_MAX bytes into a window of RW_SEND_PAGES pages.
 */
#define RW_OPS		4
#define RW_SQ		128
#define RW_SGE		4
#define RW_LEN		SZ_1M
#define RW_PAGES	(RW_LEN / PAGE_SIZE)
#define RW_SMALL	16
#define RW_SEND_ITERS	50
#define RW_SEND_PAGES	16
#define RW_SEND_MAX	(12 * PAGE_SIZE)

/**
 * struct rw_pages - pages under an sg list
 * @n: pages
 * @cnt: entries of the list rw_list() laid out last
 * @off: the op's leading bytes skipped (its sg_offset)
 * @len: the op's bytes, from @off
 * @seed: page i holds the pattern of @seed + i but for the bytes an op
 *        wrote
 * @pg: the pages, each the first of an order-1 block: none follows
 *      another, so no two entries merge into one DMA segment
 * @sg: the list, @cnt entries
 */
struct rw_pages {
	unsigned int n, cnt;
	u32 off, len, seed;
	struct page **pg;
	struct scatterlist *sg;
};

static void rw_pages_free(void *data)
{
	struct rw_pages *f = data;
	unsigned int i;

	for (i = 0; i < f->n; i++)
		if (f->pg[i])
			__free_pages(f->pg[i], 1);
}

/**
 * rw_pages_fill - write every page's pattern
 * @f: the pages
 * @seed: page i gets the pattern of @seed + i
 */
static void rw_pages_fill(struct rw_pages *f, u32 seed)
{
	unsigned int i;

	f->seed = seed;
	for (i = 0; i < f->n; i++)
		ibpost_test_fill(page_address(f->pg[i]), PAGE_SIZE, seed + i);
}

/**
 * rw_pages_new - @n scattered pages, filled, freed at test exit
 * @test: the test
 * @n: pages
 * @seed: their pattern (rw_pages_fill())
 *
 * Made before the case's QPs, they are freed after them: an op still in
 * flight when a case fails never touches freed pages.
 *
 * Return: the pages; their list is laid out by rw_list().
 */
static struct rw_pages *rw_pages_new(struct kunit *test, unsigned int n,
				     u32 seed)
{
	struct rw_pages *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->pg = kunit_kcalloc(test, n, sizeof(*f->pg), GFP_KERNEL);
	f->sg = kunit_kcalloc(test, n, sizeof(*f->sg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->pg);
	KUNIT_ASSERT_NOT_NULL(test, f->sg);
	f->n = n;
	ibpost_test_defer(test, rw_pages_free, f);
	for (i = 0; i < n; i++) {
		f->pg[i] = alloc_pages(GFP_KERNEL, 1);
		KUNIT_ASSERT_NOT_NULL(test, f->pg[i]);
	}
	rw_pages_fill(f, seed);
	return f;
}

/**
 * rw_list - lay the list out for an op of @len bytes skipping @off
 * @test: the test
 * @f: the pages
 * @off: the op's sg_offset
 * @len: its bytes
 *
 * The list covers the pages' bytes [0, @off + @len) laid end to end:
 * whole pages, the last one cut short. An op skips its first @off bytes
 * (whole entries too, when @off is a page or more).
 */
static void rw_list(struct kunit *test, struct rw_pages *f, u32 off, u32 len)
{
	size_t end = (size_t)off + len;
	unsigned int i;

	f->off = off;
	f->len = len;
	f->cnt = DIV_ROUND_UP(end, PAGE_SIZE);
	KUNIT_ASSERT_LE(test, f->cnt, f->n);
	sg_init_table(f->sg, f->cnt);
	for (i = 0; i < f->cnt; i++)
		sg_set_page(&f->sg[i], f->pg[i],
			    min_t(size_t, PAGE_SIZE, end - i * PAGE_SIZE), 0);
}

/* Copy the op's bytes of the list, [f->off, f->off + f->len), to @dst. */
static void rw_gather(const struct rw_pages *f, u8 *dst)
{
	size_t pos = f->off, end = (size_t)f->off + f->len;

	while (pos < end) {
		size_t in = pos % PAGE_SIZE;
		size_t n = min_t(size_t, PAGE_SIZE - in, end - pos);

		memcpy(dst, (u8 *)page_address(f->pg[pos / PAGE_SIZE]) + in, n);
		dst += n;
		pos += n;
	}
}

/**
 * rw_pages_check - every byte of the pages is what it should be
 * @test: the test
 * @f: the pages
 * @src: what the op's bytes hold (a READ's source); NULL: their pattern
 *
 * The bytes outside the op (the skipped ones, the rest of the last page,
 * the pages beyond the list) keep their pattern: they are the canaries.
 */
static void rw_pages_check(struct kunit *test, const struct rw_pages *f,
			   const u8 *src)
{
	size_t end = (size_t)f->off + f->len;
	u8 *exp = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, exp);
	for (i = 0; i < f->n; i++) {
		size_t base = (size_t)i * PAGE_SIZE;
		size_t lo = max_t(size_t, base, f->off);
		size_t hi = min_t(size_t, base + PAGE_SIZE, end);

		ibpost_test_fill(exp, PAGE_SIZE, f->seed + i);
		if (src && lo < hi)
			memcpy(exp + lo - base, src + lo - f->off, hi - lo);
		if (!memcmp(page_address(f->pg[i]), exp, PAGE_SIZE))
			continue;
		KUNIT_FAIL(test, "page %u of %u is not as expected", i, f->n);
		ibpost_test_expect_canary(test, page_address(f->pg[i]), exp,
					  PAGE_SIZE);
		break;
	}
	kunit_kfree(test, exp);
}

/**
 * struct rw_win - a peer's buffer the ops read and write
 * @mem: a guard page of canaries, the window, another guard page
 * @want: what every byte of @mem should hold
 * @len: the window's bytes
 * @wmr: the window registered for remote write
 * @rmr: and for remote read
 */
struct rw_win {
	u8 *mem, *want;
	size_t len;
	struct ibpost_mr *wmr, *rmr;
};

static void rw_win_free(void *data)
{
	struct rw_win *w = data;
	int ret = 0;

	vfree(w->want);
	if (!IS_ERR_OR_NULL(w->wmr))
		ret |= ibpost_dereg_mr(w->wmr);
	if (!IS_ERR_OR_NULL(w->rmr))
		ret |= ibpost_dereg_mr(w->rmr);
	/* Memory an MR still maps is leaked, not freed under it. */
	if (w->mem && !WARN_ON(ret))
		free_pages_exact(w->mem, w->len + 2 * PAGE_SIZE);
}

/**
 * rw_win_new - a window of @len bytes on @qp's side, released at test exit
 * @test: the test
 * @qp: the QP the peer reaches it through
 * @len: its bytes (siw: at most 256 pages, ib_alloc_mr()'s limit there)
 * @seed: the pattern the window and its guard pages are filled with
 *
 * Return: the window, page aligned, registered for remote write and read.
 */
static struct rw_win *rw_win_new(struct kunit *test, struct ibpost_qp *qp,
				 size_t len, u32 seed)
{
	struct rw_win *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	size_t all = len + 2 * PAGE_SIZE;

	KUNIT_ASSERT_NOT_NULL(test, w);
	w->len = len;
	w->mem = alloc_pages_exact(all, GFP_KERNEL);
	w->want = vmalloc(all);
	ibpost_test_defer(test, rw_win_free, w);
	KUNIT_ASSERT_NOT_NULL(test, w->mem);
	KUNIT_ASSERT_NOT_NULL(test, w->want);
	ibpost_test_fill(w->mem, all, seed);
	memcpy(w->want, w->mem, all);
	w->wmr = ibpost_reg_write(qp, w->mem + PAGE_SIZE, len);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w->wmr);
	w->rmr = ibpost_reg_read(qp, w->mem + PAGE_SIZE, len);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w->rmr);
	return w;
}

/**
 * rw_post - ibpost_rw_post() of the list rw_list() laid out, on a window
 * @qp: the QP
 * @ctx: the op's context
 * @f: the pages
 * @w: the peer's window
 * @roff: where in the window the op's bytes are
 * @dir: DMA_TO_DEVICE (WRITE) or DMA_FROM_DEVICE (READ)
 * @flags: the op's flags
 * @send: a SEND chained behind it, or NULL
 *
 * Return: what ibpost_rw_post() returned.
 */
static int rw_post(struct ibpost_qp *qp, void *ctx, struct rw_pages *f,
		   struct rw_win *w, u32 roff, enum dma_data_direction dir,
		   int flags, const struct ib_send_wr *send)
{
	struct ibpost_mr *mr = dir == DMA_FROM_DEVICE ? w->rmr : w->wmr;

	return ibpost_rw_post(qp, ctx, f->sg, f->cnt, f->off,
			      ibpost_mr_remote_addr(mr) + roff,
			      ibpost_mr_rkey(mr), dir, flags, send);
}

/**
 * rw_landed - the op's bytes are where they belong, and no other byte moved
 * @test: the test
 * @f: the pages, laid out for the op
 * @w: the window
 * @roff: where in the window the op's bytes are
 * @dir: the op's direction
 */
static void rw_landed(struct kunit *test, struct rw_pages *f,
		      struct rw_win *w, u32 roff, enum dma_data_direction dir)
{
	u8 *at = w->want + PAGE_SIZE + roff;

	if (dir == DMA_TO_DEVICE)
		rw_gather(f, at);
	ibpost_test_expect_canary(test, w->mem, w->want,
				  w->len + 2 * PAGE_SIZE);
	rw_pages_check(test, f, dir == DMA_FROM_DEVICE ? at : NULL);
}

/* A QP's rw and send queue counters. */
struct rw_snap {
	struct ibpost_test_rw tr;
	struct ibpost_test_queue tq;
};

static void rw_snap(struct ibpost_qp *qp, struct rw_snap *s)
{
	ibpost_test_rw_get(qp, &s->tr);
	ibpost_test_queue_get(qp, true, &s->tq);
}

/**
 * rw_wrs - the provider WRs an op over the list of @f takes
 * @p: the pair (a posts)
 * @f: the pages, laid out for the op
 * @dir: the op's direction
 *
 * An iWARP READ registers its sink: a REG_MR and a READ_WITH_INV per MR
 * of at most 256 entries (ib_core's limit); any other op takes the
 * granted SGEs per WR, a READ at most the device's max_sge_rd. Entries
 * of scattered pages do not merge (rxe and siw map them one to one).
 *
 * Return: the WRs, a SEND behind the op not counted.
 */
static u32 rw_wrs(struct ibpost_test_pair *p, const struct rw_pages *f,
		  enum dma_data_direction dir)
{
	const struct ib_device_attr *da = &ibpost_dev_ibdev(p->dev)->attrs;
	u32 nents = f->cnt - f->off / PAGE_SIZE;
	u32 sge = p->got.max_send_sge;

	if (dir == DMA_TO_DEVICE)
		return DIV_ROUND_UP(nents, sge);
	if (ibpost_test_iwarp(p->dev))
		return 2 * DIV_ROUND_UP(nents,
					min_t(u32, da->max_fast_reg_page_list_len,
					      256));
	return DIV_ROUND_UP(nents, min_t(u32, sge, da->max_sge_rd));
}

/**
 * rw_settled - after an op's context came back: nothing held, one op more
 * @test: the test
 * @p: the pair
 * @s0: a's counters before the op
 * @f: the pages, laid out for the op
 * @dir: the op's direction
 * @send: whether a SEND rode behind it
 */
static void rw_settled(struct kunit *test, struct ibpost_test_pair *p,
		       const struct rw_snap *s0, const struct rw_pages *f,
		       enum dma_data_direction dir, bool send)
{
	bool mr = dir == DMA_FROM_DEVICE && ibpost_test_iwarp(p->dev);
	u32 wrs = rw_wrs(p, f, dir) + send;
	struct ibpost_test_rw tr;

	ibpost_test_rw_get(p->a, &tr);
	KUNIT_EXPECT_EQ(test, tr.last_wrs, wrs);
	KUNIT_EXPECT_EQ(test, tr.ops, s0->tr.ops + 1);
	KUNIT_EXPECT_EQ(test, tr.wrs, s0->tr.wrs + wrs);
	KUNIT_EXPECT_EQ(test, tr.mr_ops, s0->tr.mr_ops + mr);
	KUNIT_EXPECT_EQ(test, tr.live, 0U);
	KUNIT_EXPECT_EQ(test, tr.mrs_used, 0U);
	KUNIT_EXPECT_EQ(test, tr.revoking, 0U);
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(p->a, true), 0U);
}

/**
 * rw_untouched - a refused op queued nothing and holds nothing
 * @test: the test
 * @qp: the QP it was posted on
 * @s0: @qp's counters before it
 * @what: the refusal, for the messages
 */
static void rw_untouched(struct kunit *test, struct ibpost_qp *qp,
			 const struct rw_snap *s0, const char *what)
{
	struct rw_snap s;

	rw_snap(qp, &s);
	KUNIT_EXPECT_EQ_MSG(test, s.tq.posted, s0->tq.posted, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, s.tq.head - s.tq.tail,
			    s0->tq.head - s0->tq.tail, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, s.tr.ops, s0->tr.ops, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, s.tr.live, s0->tr.live, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, s.tr.mrs_used, s0->tr.mrs_used, "%s", what);
}

/* Take @qp's next send completion: @ctx's, of @status (and @opcode). */
static void rw_comp(struct kunit *test, struct ibpost_qp *qp, void *ctx,
		    enum ib_wc_status status, enum ib_wc_opcode opcode)
{
	struct ibpost_comp comp;

	ibpost_test_send_comp(test, qp, &comp);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, ctx);
	KUNIT_EXPECT_EQ(test, comp.status, status);
	if (status == IB_WC_SUCCESS)
		KUNIT_EXPECT_EQ(test, comp.opcode, opcode);
}

/**
 * rw_run - one op that succeeds, checked whole
 * @test: the test
 * @p: the pair (a posts, the window is b's)
 * @f: the pages, laid out for the op
 * @w: the window
 * @roff: where in the window the op's bytes are
 * @dir: the op's direction
 * @flags: its flags (a WRITE: IB_SEND_SIGNALED)
 *
 * Its context comes back once, successful, with the op's opcode; nothing
 * is held after it; its bytes landed and no other byte moved.
 */
static void rw_run(struct kunit *test, struct ibpost_test_pair *p,
		   struct rw_pages *f, struct rw_win *w, u32 roff,
		   enum dma_data_direction dir, int flags)
{
	struct rw_snap s0;

	rw_snap(p->a, &s0);
	KUNIT_ASSERT_EQ(test, 0, rw_post(p->a, CTX(0x77), f, w, roff, dir,
					 flags, NULL));
	rw_comp(test, p->a, CTX(0x77), IB_WC_SUCCESS,
		dir == DMA_TO_DEVICE ? IB_WC_RDMA_WRITE : IB_WC_RDMA_READ);
	ibpost_test_no_send_comp(test, p->a);
	rw_settled(test, p, &s0, f, dir, false);
	rw_landed(test, f, w, roff, dir);
}

static void rw_attr(struct ibpost_qp_attr *attr)
{
	ibpost_test_attr(attr, IB_QPT_RC);
	attr->max_send_wr = RW_SQ;
	attr->max_send_sge = RW_SGE;
	attr->max_inline_data = 64;
	attr->rw_ops = RW_OPS;
}

static struct ibpost_test_pair *rw_pair(struct kunit *test)
{
	struct ibpost_qp_attr attr;

	rw_attr(&attr);
	return ibpost_test_pair(test, &attr);
}

/* A SEND of @sge (set by the caller), as chained behind a WRITE. */
static void rw_send_init(struct ib_send_wr *send, struct ib_sge *sge)
{
	memset(send, 0, sizeof(*send));
	/* Ignored: the op's context comes back with the SEND. */
	send->wr_id = 0xdead;
	send->opcode = IB_WR_SEND;
	send->sg_list = sge;
	send->num_sge = 1;
}

static const u32 rw_offsets[] = { 0, 100 };

static void rw_offset_desc(const u32 *off, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "sg_offset %u", *off);
}

KUNIT_ARRAY_PARAM(rw_offset, rw_offsets, rw_offset_desc);

/*
 * A signaled WRITE of 1 MiB from scattered pages, the list starting at
 * the param's offset (100: over 257 pages, the first 100 bytes skipped,
 * the last page cut to 100 bytes): every byte lands in the peer's
 * window, the guard pages around it and the pages keep theirs; the
 * granted SGEs per WR (64 or 65 WRs of 4); one context, RDMA_WRITE.
 */
static void ibpost_rw_write_1mib(struct kunit *test)
{
	const u32 *off = test->param_value;
	struct rw_pages *f = rw_pages_new(test, RW_PAGES + 1, 0x100);
	struct ibpost_test_pair *p = rw_pair(test);
	struct rw_win *w = rw_win_new(test, p->b, RW_LEN, 0x11);

	rw_list(test, f, *off, RW_LEN);
	rw_run(test, p, f, w, 0, DMA_TO_DEVICE, IB_SEND_SIGNALED);
}

/*
 * A READ of 1 MiB into scattered pages, laid out as the WRITE's: the
 * bytes land exactly in the list, the skipped ones and the rest of the
 * last page keep their pattern, the window does not change; on iWARP
 * through ib_core's MRs (a REG_MR and a READ_WITH_INV per 256 pages: 2
 * or 4 WRs). Unsignaled, its context still comes back; then signaled.
 */
static void ibpost_rw_read_1mib(struct kunit *test)
{
	const u32 *off = test->param_value;
	struct rw_pages *f = rw_pages_new(test, RW_PAGES + 1, 0x200);
	struct ibpost_test_pair *p = rw_pair(test);
	struct rw_win *w = rw_win_new(test, p->b, RW_LEN, 0x22);

	rw_list(test, f, *off, RW_LEN);
	rw_run(test, p, f, w, 0, DMA_FROM_DEVICE, 0);
	rw_pages_fill(f, 0x280);
	rw_run(test, p, f, w, 0, DMA_FROM_DEVICE, IB_SEND_SIGNALED);
}

/* What the SEND behind each WRITE tells the peer. */
struct rw_hdr {
	u32 iter, off, len, roff;
};

/*
 * RW_SEND_ITERS WRITEs of pseudo-random length, sg_offset (whole entries
 * skipped too) and window offset, each with a SEND behind it (its header
 * from an MR, or inline): when the peer's receive completes, the whole
 * range is already in its window; the op's context comes back once, with
 * the SEND's completion; its WRs, one more for the SEND. A READ with a
 * SEND is refused.
 */
static void ibpost_rw_send_after_write(struct kunit *test)
{
	struct rw_pages *f = rw_pages_new(test, RW_SEND_PAGES, 0x300);
	struct ibpost_test_pair *p = rw_pair(test);
	struct rw_win *w = rw_win_new(test, p->b, RW_SEND_PAGES * PAGE_SIZE,
				      0x33);
	struct ib_send_wr send;
	struct rnd_state rnd;
	struct rw_hdr hdr;
	struct ib_sge sge;
	struct rw_snap s0;
	u32 i;

	prandom_seed_state(&rnd, 0x5e0d);
	for (i = 0; i < RW_SEND_ITERS; i++) {
		hdr.iter = i;
		hdr.off = prandom_u32_state(&rnd) % (2 * PAGE_SIZE);
		hdr.len = 1 + prandom_u32_state(&rnd) % RW_SEND_MAX;
		hdr.roff = prandom_u32_state(&rnd) %
			   (w->len - hdr.len + 1);
		rw_pages_fill(f, 0x300 + i * RW_SEND_PAGES);
		rw_list(test, f, hdr.off, hdr.len);
		rw_send_init(&send, &sge);
		if (i & 1) {
			send.send_flags = IB_SEND_INLINE;
			sge.addr = (uintptr_t)&hdr;
			sge.length = sizeof(hdr);
			sge.lkey = 0;
		} else {
			memcpy(p->abuf.buf, &hdr, sizeof(hdr));
			KUNIT_ASSERT_EQ(test, 0,
					ibpost_mr_sge(p->abuf.mr, p->abuf.buf,
						      sizeof(hdr), &sge));
		}
		memset(p->bbuf.buf, 0xe7, sizeof(hdr));
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(i + 1),
							  p->bbuf.buf, 64,
							  p->bbuf.mr));
		rw_snap(p->a, &s0);
		KUNIT_ASSERT_EQ_MSG(test, 0,
				    rw_post(p->a, CTX(1000 + i), f, w,
					    hdr.roff, DMA_TO_DEVICE,
					    IB_SEND_SIGNALED, &send),
				    "op %u", i);
		ibpost_test_recv_ok(test, p->b, CTX(i + 1), sizeof(hdr));
		KUNIT_EXPECT_EQ(test, 0, memcmp(p->bbuf.buf, &hdr,
						sizeof(hdr)));
		rw_landed(test, f, w, hdr.roff, DMA_TO_DEVICE);
		rw_comp(test, p->a, CTX(1000 + i), IB_WC_SUCCESS, IB_WC_SEND);
		rw_settled(test, p, &s0, f, DMA_TO_DEVICE, true);
		if (READ_ONCE(test->status) == KUNIT_FAILURE) {
			KUNIT_FAIL(test, "op %u: off %u len %u roff %u", i,
				   hdr.off, hdr.len, hdr.roff);
			return;
		}
	}
	ibpost_test_no_send_comp(test, p->a);

	rw_snap(p->a, &s0);
	KUNIT_EXPECT_EQ(test, -EINVAL, rw_post(p->a, CTX(1), f, w, 0,
					       DMA_FROM_DEVICE,
					       IB_SEND_SIGNALED, &send));
	rw_untouched(test, p->a, &s0, "READ with a SEND");
	ibpost_test_no_send_comp(test, p->a);
}

/*
 * An unsignaled WRITE: no context comes back; once a later signaled
 * WRITE (a seed one) completes, the ring is empty, the op no longer
 * live, and its bytes are in the window.
 */
static void ibpost_rw_unsignaled_write(struct kunit *test)
{
	struct rw_pages *f = rw_pages_new(test, RW_SMALL + 1, 0x400);
	struct ibpost_test_pair *p = rw_pair(test);
	struct rw_win *w = rw_win_new(test, p->b, RW_SMALL * PAGE_SIZE, 0x44);
	struct rw_snap s0;

	rw_list(test, f, 300, (RW_SMALL - 1) * PAGE_SIZE);
	rw_snap(p->a, &s0);
	KUNIT_ASSERT_EQ(test, 0, rw_post(p->a, CTX(1), f, w, 200,
					 DMA_TO_DEVICE, 0, NULL));
	ibpost_test_no_send_comp(test, p->a);

	ibpost_test_fill(p->abuf.buf, 64, 0x45);
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_write(p->a, CTX(2), p->abuf.buf, 64,
					  p->abuf.mr, IB_SEND_SIGNALED,
					  ibpost_mr_remote_addr(p->bw.mr),
					  ibpost_mr_rkey(p->bw.mr)));
	rw_comp(test, p->a, CTX(2), IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	ibpost_test_no_send_comp(test, p->a);
	rw_settled(test, p, &s0, f, DMA_TO_DEVICE, false);
	rw_landed(test, f, w, 200, DMA_TO_DEVICE);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->bw.buf, p->abuf.buf, 64));
}

/*
 * On a QP in ERR an unsignaled WRITE and an unsignaled READ are taken
 * (0), and each context comes back flushed exactly once; nothing is
 * held after them, no byte moved.
 */
static void ibpost_rw_err_flushes_once(struct kunit *test)
{
	struct rw_pages *f = rw_pages_new(test, 2, 0x500);
	struct ibpost_test_pair *p = rw_pair(test);
	struct rw_win *w = rw_win_new(test, p->b, 2 * PAGE_SIZE, 0x55);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ibpost_test_rw tr;
	struct ibpost_comp comp;
	DECLARE_BITMAP(seen, 2) = {};
	struct rw_snap s0;
	unsigned long ctx;
	int i;

	rw_list(test, f, 0, 2 * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa, IB_QP_STATE));
	rw_snap(p->a, &s0);
	KUNIT_EXPECT_EQ(test, 0, rw_post(p->a, CTX(0), f, w, 0,
					 DMA_TO_DEVICE, 0, NULL));
	KUNIT_EXPECT_EQ(test, 0, rw_post(p->a, CTX(1), f, w, 0,
					 DMA_FROM_DEVICE, 0, NULL));
	for (i = 0; i < 2; i++) {
		ibpost_test_send_comp(test, p->a, &comp);
		ctx = (uintptr_t)comp.context;
		KUNIT_EXPECT_EQ(test, comp.status, IB_WC_WR_FLUSH_ERR);
		KUNIT_ASSERT_LT(test, ctx, 2UL);
		KUNIT_EXPECT_FALSE_MSG(test, __test_and_set_bit(ctx, seen),
				       "context %lu came back twice", ctx);
	}
	ibpost_test_no_send_comp(test, p->a);

	ibpost_test_rw_get(p->a, &tr);
	KUNIT_EXPECT_EQ(test, tr.ops, s0.tr.ops + 2);
	KUNIT_EXPECT_EQ(test, tr.live, 0U);
	KUNIT_EXPECT_EQ(test, tr.mrs_used, 0U);
	KUNIT_EXPECT_EQ(test, tr.revoking, 0U);
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(p->a, true), 0U);
	ibpost_test_expect_canary(test, w->mem, w->want,
				  w->len + 2 * PAGE_SIZE);
	rw_pages_check(test, f, NULL);
}

/**
 * struct rw_refusal - what the hook does to the next post
 * @at: the SUBMIT hook has "the provider" refuse the post from WR @at - 1
 *      on (once; 0 once asked)
 * @no_mr: MR replacements refused (IBPOST_HOOK_RW_REPLACE)
 * @refused_mrs: how many were
 */
struct rw_refusal {
	atomic_t at;
	bool no_mr;
	atomic_t refused_mrs;
};

static int rw_refuse_at(enum ibpost_hook point, void *obj, void *data)
{
	struct rw_refusal *r = data;

	if (point == IBPOST_HOOK_RW_REPLACE && r->no_mr) {
		atomic_inc(&r->refused_mrs);
		return 1;
	}
	if (point != IBPOST_HOOK_SUBMIT)
		return 0;
	return atomic_xchg(&r->at, 0);
}

/*
 * A signaled op at roff 0 whose WR @k "the provider" refuses, @send
 * chained, MR replacements refused with @no_mr.
 */
static int rw_post_refused_send(struct kunit *test,
				struct ibpost_test_pair *p, void *ctx,
				struct rw_pages *f, struct rw_win *w,
				enum dma_data_direction dir, u32 k,
				const struct ib_send_wr *send,
				struct rw_refusal *r)
{
	int ret;

	atomic_set(&r->at, k + 1);
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(rw_refuse_at, r));
	ret = rw_post(p->a, ctx, f, w, 0, dir, IB_SEND_SIGNALED, send);
	if (!ret)
		rw_comp(test, p->a, ctx, IB_WC_WR_FLUSH_ERR, 0);
	ibpost_test_set_hook(NULL, NULL);
	/* The hook was asked: the op reached the provider. */
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&r->at));
	return ret;
}

static int rw_post_refused(struct kunit *test, struct ibpost_test_pair *p,
			   void *ctx, struct rw_pages *f, struct rw_win *w,
			   enum dma_data_direction dir, u32 k)
{
	struct rw_refusal r = {};

	return rw_post_refused_send(test, p, ctx, f, w, dir, k, NULL, &r);
}

/*
 * The provider refuses WR 0 of an op longer than a staged batch, a SEND
 * behind it: the SEND's MR holds no use after the refusal (its dereg
 * goes through). A split iWARP READ whose MRs cannot be replaced gives
 * them up (their keys revoked all the same): the pool is one MR smaller,
 * ib_core's count balanced, and the QP works on.
 */
static void rw_refused_leaves_nothing(struct kunit *test,
				      struct ibpost_test_pair *p,
				      struct rw_pages *f, struct rw_win *ws,
				      struct rw_win *w)
{
	struct rw_refusal r = {};
	struct ibpost_test_rw tr;
	struct ib_send_wr send;
	struct rw_snap s0;
	struct ib_sge sge;
	u32 wrs;

	/* Longer than the stage (32 WRs): the SEND is in no batch refused. */
	rw_list(test, f, 0, RW_LEN);
	wrs = rw_wrs(p, f, DMA_TO_DEVICE);
	KUNIT_ASSERT_GT(test, wrs, 32U);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 16,
					       &sge));
	rw_send_init(&send, &sge);
	rw_snap(p->a, &s0);
	KUNIT_EXPECT_EQ(test, -EIO, rw_post_refused_send(test, p, CTX(20), f,
							 w, DMA_TO_DEVICE, 0,
							 &send, &r));
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(p->abuf.mr));
	rw_untouched(test, p->a, &s0, "WRITE and SEND refused at WR 0");
	ibpost_test_no_send_comp(test, p->a);

	/* A split READ whose MRs find no replacement. */
	rw_list(test, f, 0, RW_SMALL * PAGE_SIZE);
	wrs = rw_wrs(p, f, DMA_FROM_DEVICE);
	r.no_mr = true;
	rw_snap(p->a, &s0);
	KUNIT_EXPECT_EQ(test, 0, rw_post_refused_send(test, p, CTX(21), f, ws,
						      DMA_FROM_DEVICE, wrs - 1,
						      NULL, &r));
	ibpost_test_rw_get(p->a, &tr);
	KUNIT_EXPECT_EQ(test, tr.live, 0U);
	KUNIT_EXPECT_EQ(test, tr.mrs_used, 0U);
	KUNIT_EXPECT_EQ(test, tr.revoked - s0.tr.revoked,
			(u64)atomic_read(&r.refused_mrs));
	KUNIT_EXPECT_EQ(test, tr.lost - s0.tr.lost,
			(u64)atomic_read(&r.refused_mrs));
	if (ibpost_test_iwarp(p->dev))
		KUNIT_EXPECT_EQ(test, atomic_read(&r.refused_mrs), 1);
	else
		KUNIT_EXPECT_EQ(test, atomic_read(&r.refused_mrs), 0);
}

/*
 * The provider refuses an op's first WR: its error comes back (-EIO),
 * nothing is queued or held, no context comes back, no byte moved. It
 * refuses a later WR (a WRITE's third of four; a READ's last, on iWARP
 * the READ_WITH_INV behind its REG_MR): the op is queued whole and its
 * context comes back flushed, once, the MRs an iWARP READ registered
 * replaced first; then 1 MiB WRITE and READ succeed byte for byte.
 */
static void ibpost_rw_refused_inside_op(struct kunit *test)
{
	static const enum dma_data_direction dirs[] = {
		DMA_TO_DEVICE, DMA_FROM_DEVICE,
	};
	struct rw_pages *f = rw_pages_new(test, RW_PAGES + 1, 0x600);
	struct ibpost_test_pair *p = rw_pair(test);
	struct rw_win *ws = rw_win_new(test, p->b, RW_SMALL * PAGE_SIZE, 0x66);
	struct rw_win *w = rw_win_new(test, p->b, RW_LEN, 0x67);
	bool iwarp = ibpost_test_iwarp(p->dev);
	struct ibpost_test_rw tr;
	struct rw_snap s0;
	u32 i, k, wrs;

	rw_list(test, f, 0, RW_SMALL * PAGE_SIZE);
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		rw_snap(p->a, &s0);
		KUNIT_EXPECT_EQ(test, -EIO, rw_post_refused(test, p, CTX(1), f,
							    ws, dirs[i], 0));
		ibpost_test_no_send_comp(test, p->a);
		rw_untouched(test, p->a, &s0, dirs[i] == DMA_TO_DEVICE ?
			     "WRITE refused at WR 0" : "READ refused at WR 0");
		ibpost_test_rw_get(p->a, &tr);
		KUNIT_EXPECT_EQ(test, tr.split, s0.tr.split);
		/* Keys bumped on MRs the provider never saw: replaced. */
		if (iwarp && dirs[i] == DMA_FROM_DEVICE)
			KUNIT_EXPECT_GT(test, tr.revoked, s0.tr.revoked);
		else
			KUNIT_EXPECT_EQ(test, tr.revoked, s0.tr.revoked);
	}
	ibpost_test_expect_canary(test, ws->mem, ws->want,
				  ws->len + 2 * PAGE_SIZE);
	rw_pages_check(test, f, NULL);

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		wrs = rw_wrs(p, f, dirs[i]);
		k = dirs[i] == DMA_TO_DEVICE ? 2 : wrs - 1;
		KUNIT_ASSERT_GT(test, k, 0U);
		KUNIT_ASSERT_LT(test, k, wrs);
		rw_snap(p->a, &s0);
		KUNIT_EXPECT_EQ(test, 0, rw_post_refused(test, p, CTX(2 + i), f,
							 ws, dirs[i], k));
		ibpost_test_no_send_comp(test, p->a);
		rw_settled(test, p, &s0, f, dirs[i], false);
		ibpost_test_rw_get(p->a, &tr);
		KUNIT_EXPECT_EQ(test, tr.split, s0.tr.split + 1);
		if (iwarp && dirs[i] == DMA_FROM_DEVICE)
			KUNIT_EXPECT_GT(test, tr.revoked, s0.tr.revoked);
		else
			KUNIT_EXPECT_EQ(test, tr.revoked, s0.tr.revoked);
	}

	rw_refused_leaves_nothing(test, p, f, ws, w);

	/* The QP goes on: whole ops both ways, on MRs replaced on iWARP. */
	rw_pages_fill(f, 0x680);
	rw_list(test, f, 0, RW_LEN);
	rw_run(test, p, f, w, 0, DMA_TO_DEVICE, IB_SEND_SIGNALED);
	rw_pages_fill(f, 0x6c0);
	rw_run(test, p, f, w, 0, DMA_FROM_DEVICE, IB_SEND_SIGNALED);
}

/*
 * A QP of a small send queue, one SGE per WR: an op of one WR more than
 * the free slots is -ENOMEM, and so is one that fills them with a SEND
 * behind it; nothing is queued or held; the op of exactly the free
 * slots then succeeds. iWARP: a READ whose sink needs two MRs of a pool
 * of one is -EAGAIN, nothing held, and one of one MR then succeeds.
 */
static void ibpost_rw_no_room(struct kunit *test)
{
	struct rw_pages *f = rw_pages_new(test, RW_PAGES + 1, 0x700);
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	struct ib_send_wr send;
	struct rw_snap s0;
	struct ib_sge sge;
	struct rw_win *w;
	u32 n;

	rw_attr(&attr);
	attr.max_send_wr = 8;
	attr.max_send_sge = 1;
	attr.max_inline_data = 0;
	attr.rw_ops = 1;
	p = ibpost_test_pair(test, &attr);
	rw_snap(p->a, &s0);
	/* Entries that take every free slot. */
	n = (s0.tq.depth - (s0.tq.head - s0.tq.tail)) * p->got.max_send_sge;
	KUNIT_ASSERT_GT(test, n, 0U);
	KUNIT_ASSERT_LT(test, n, (u32)RW_PAGES);
	w = rw_win_new(test, p->b, (n + 1) * PAGE_SIZE, 0x77);

	rw_list(test, f, 0, (n + 1) * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, -ENOMEM, rw_post(p->a, CTX(1), f, w, 0,
					       DMA_TO_DEVICE,
					       IB_SEND_SIGNALED, NULL));
	rw_untouched(test, p->a, &s0, "one WR too many");
	rw_list(test, f, 0, n * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 8,
					       &sge));
	rw_send_init(&send, &sge);
	KUNIT_EXPECT_EQ(test, -ENOMEM, rw_post(p->a, CTX(2), f, w, 0,
					       DMA_TO_DEVICE,
					       IB_SEND_SIGNALED, &send));
	rw_untouched(test, p->a, &s0, "no slot for the SEND");
	ibpost_test_no_send_comp(test, p->a);
	rw_run(test, p, f, w, 0, DMA_TO_DEVICE, IB_SEND_SIGNALED);

	if (!ibpost_test_iwarp(p->dev))
		return;
	w = rw_win_new(test, p->b, RW_LEN, 0x78);
	/* 257 pages: two MRs of 256 pages. */
	rw_list(test, f, 100, RW_LEN);
	rw_snap(p->a, &s0);
	KUNIT_EXPECT_EQ(test, -EAGAIN, rw_post(p->a, CTX(3), f, w, 0,
					       DMA_FROM_DEVICE,
					       IB_SEND_SIGNALED, NULL));
	rw_untouched(test, p->a, &s0, "a READ beyond the MR pool");
	ibpost_test_no_send_comp(test, p->a);
	rw_pages_check(test, f, NULL);
	rw_list(test, f, 0, RW_LEN);
	rw_run(test, p, f, w, 0, DMA_FROM_DEVICE, IB_SEND_SIGNALED);
}

/*
 * Each bad input is -EINVAL, with nothing queued or held: a QP without
 * rw_ops; no list, no entries; a direction other than TO and FROM the
 * device; flags other than IB_SEND_SIGNALED; a SEND behind a READ, a
 * SEND with a next WR, of an opcode other than a SEND, or with an SGE
 * outside its MR. The same WRITE and SEND, well formed, then succeed. A
 * UD QP with rw_ops is refused at creation.
 */
static void ibpost_rw_bad_input(struct kunit *test)
{
	struct rw_pages *f = rw_pages_new(test, 2, 0x800);
	struct ibpost_test_pair *p = rw_pair(test);
	struct rw_win *w = rw_win_new(test, p->b, 2 * PAGE_SIZE, 0x88);
	u64 raddr = ibpost_mr_remote_addr(w->wmr);
	u32 rkey = ibpost_mr_rkey(w->wmr);
	struct ib_send_wr send, next;
	struct ibpost_qp_attr attr;
	struct ib_rdma_wr write;
	struct ibpost_qp *a0, *b0;
	struct ib_sge sge, wide;
	struct ibpost_qp *qp;
	struct rw_snap s0;

	rw_list(test, f, 0, 2 * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf, 16,
					       &sge));
	rw_send_init(&send, &sge);
	rw_snap(p->a, &s0);

	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_rw_post(p->a, CTX(1), NULL, 1, 0, raddr, rkey,
				       DMA_TO_DEVICE, IB_SEND_SIGNALED, NULL));
	rw_untouched(test, p->a, &s0, "no list");
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_rw_post(p->a, CTX(1), f->sg, 0, 0, raddr, rkey,
				       DMA_TO_DEVICE, IB_SEND_SIGNALED, NULL));
	rw_untouched(test, p->a, &s0, "no entries");
	KUNIT_EXPECT_EQ(test, -EINVAL, rw_post(p->a, CTX(1), f, w, 0,
					       DMA_BIDIRECTIONAL,
					       IB_SEND_SIGNALED, NULL));
	rw_untouched(test, p->a, &s0, "DMA_BIDIRECTIONAL");
	KUNIT_EXPECT_EQ(test, -EINVAL, rw_post(p->a, CTX(1), f, w, 0,
					       DMA_NONE, IB_SEND_SIGNALED,
					       NULL));
	rw_untouched(test, p->a, &s0, "DMA_NONE");
	KUNIT_EXPECT_EQ(test, -EINVAL, rw_post(p->a, CTX(1), f, w, 0,
					       DMA_TO_DEVICE, IB_SEND_INLINE,
					       NULL));
	rw_untouched(test, p->a, &s0, "IB_SEND_INLINE");
	KUNIT_EXPECT_EQ(test, -EINVAL,
			rw_post(p->a, CTX(1), f, w, 0, DMA_TO_DEVICE,
				IB_SEND_SIGNALED | IB_SEND_SOLICITED, NULL));
	rw_untouched(test, p->a, &s0, "IB_SEND_SOLICITED");

	KUNIT_EXPECT_EQ(test, -EINVAL, rw_post(p->a, CTX(1), f, w, 0,
					       DMA_FROM_DEVICE,
					       IB_SEND_SIGNALED, &send));
	rw_untouched(test, p->a, &s0, "READ with a SEND");
	rw_send_init(&next, &sge);
	send.next = &next;
	KUNIT_EXPECT_EQ(test, -EINVAL, rw_post(p->a, CTX(1), f, w, 0,
					       DMA_TO_DEVICE,
					       IB_SEND_SIGNALED, &send));
	rw_untouched(test, p->a, &s0, "a SEND with a next WR");
	send.next = NULL;
	/* A whole WRITE, well formed but for being no SEND. */
	rw_send_init(&write.wr, &sge);
	write.wr.opcode = IB_WR_RDMA_WRITE;
	write.remote_addr = raddr;
	write.rkey = rkey;
	KUNIT_EXPECT_EQ(test, -EINVAL, rw_post(p->a, CTX(1), f, w, 0,
					       DMA_TO_DEVICE,
					       IB_SEND_SIGNALED, &write.wr));
	rw_untouched(test, p->a, &s0, "RDMA_WRITE behind the op");
	/* One byte past the end of the registration. */
	wide = sge;
	wide.length = p->abuf.len + 1;
	send.sg_list = &wide;
	KUNIT_EXPECT_EQ(test, -EINVAL, rw_post(p->a, CTX(1), f, w, 0,
					       DMA_TO_DEVICE,
					       IB_SEND_SIGNALED, &send));
	rw_untouched(test, p->a, &s0, "a SEND outside its MR");
	ibpost_test_no_send_comp(test, p->a);

	/* Well formed, the same op goes. */
	send.sg_list = &sge;
	ibpost_test_fill(p->abuf.buf, 16, 0x89);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(2), p->bbuf.buf,
						  64, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, rw_post(p->a, CTX(3), f, w, 0, DMA_TO_DEVICE,
					 IB_SEND_SIGNALED, &send));
	ibpost_test_recv_ok(test, p->b, CTX(2), 16);
	rw_comp(test, p->a, CTX(3), IB_WC_SUCCESS, IB_WC_SEND);
	rw_settled(test, p, &s0, f, DMA_TO_DEVICE, true);
	rw_landed(test, f, w, 0, DMA_TO_DEVICE);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->bbuf.buf, p->abuf.buf, 16));

	/* A QP without rw_ops. */
	rw_attr(&attr);
	attr.rw_ops = 0;
	ibpost_test_qp_pair(test, p->dev, &attr, NULL, &a0, &b0);
	KUNIT_EXPECT_EQ(test, -EINVAL, rw_post(a0, CTX(1), f, w, 0,
					       DMA_TO_DEVICE,
					       IB_SEND_SIGNALED, NULL));
	KUNIT_EXPECT_EQ(test, 0U, ibpost_test_in_use(a0, true));
	ibpost_test_no_send_comp(test, a0);

	/* UD: RC only (iWARP has no UD QP at all). */
	if (ibpost_test_iwarp(p->dev))
		return;
	ibpost_test_attr(&attr, IB_QPT_UD);
	attr.rw_ops = RW_OPS;
	qp = ibpost_qp_create(p->dev, &attr);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(qp), -EINVAL);
	if (!IS_ERR(qp))
		ibpost_qp_destroy(qp);
}

/**
 * struct rw_cqe - a request of the ib_cqe case
 * @cqe: its cqe, the op's context
 * @done: completed at each done call
 * @calls: done calls
 * @status: the last one's
 * @opcode: the last one's
 */
struct rw_cqe {
	struct ib_cqe cqe;
	struct completion done;
	atomic_t calls;
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
};

#define RW_CQES	2

/* The ib_cqe case's requests; a done for any other wr_cqe is a stray. */
static struct rw_cqe *rw_cqe_reqs;
static atomic_t rw_cqe_strays;

static void rw_cqe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rw_cqe *r = READ_ONCE(rw_cqe_reqs);
	int i;

	for (i = 0; i < RW_CQES; i++) {
		if (wc->wr_cqe != &r[i].cqe)
			continue;
		r[i].status = wc->status;
		r[i].opcode = wc->opcode;
		atomic_inc(&r[i].calls);
		complete(&r[i].done);
		return;
	}
	atomic_inc(&rw_cqe_strays);
}

/* Wait up to 1 s for @qp's ring to empty and its ops to end. */
static void rw_quiesce(struct ibpost_qp *qp)
{
	struct ibpost_test_rw tr;
	int i;

	for (i = 0; i < 50; i++) {
		ibpost_test_rw_get(qp, &tr);
		if (!tr.live && !ibpost_test_in_use(qp, true))
			return;
		msleep(20);
	}
}

/*
 * ib_cqe mode: a context that is no cqe with a done is refused; a
 * signaled WRITE and an unsignaled READ each come back once through
 * their cqe's done, with wc->wr_cqe the consumer's own, successful, of
 * the op's opcode; bytes checked both ways.
 */
static void ibpost_rw_cqe_mode(struct kunit *test)
{
	struct rw_pages *f = rw_pages_new(test, RW_SMALL + 1, 0x900);
	struct ib_cqe nodone = {};
	struct ibpost_qp_attr attr;
	struct ibpost_test_pair *p;
	enum dma_data_direction dir;
	struct rw_snap s0;
	struct rw_cqe *r;
	struct rw_win *w;
	int i;

	r = kunit_kcalloc(test, RW_CQES, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	for (i = 0; i < RW_CQES; i++) {
		r[i].cqe.done = rw_cqe_done;
		init_completion(&r[i].done);
	}
	atomic_set(&rw_cqe_strays, 0);
	WRITE_ONCE(rw_cqe_reqs, r);
	rw_attr(&attr);
	attr.ib_cqe = true;
	p = ibpost_test_pair(test, &attr);
	w = rw_win_new(test, p->b, RW_SMALL * PAGE_SIZE, 0x99);
	rw_list(test, f, 100, RW_SMALL * PAGE_SIZE - 300);

	rw_snap(p->a, &s0);
	KUNIT_EXPECT_EQ(test, -EINVAL, rw_post(p->a, NULL, f, w, 0,
					       DMA_TO_DEVICE,
					       IB_SEND_SIGNALED, NULL));
	rw_untouched(test, p->a, &s0, "no cqe");
	KUNIT_EXPECT_EQ(test, -EINVAL, rw_post(p->a, &nodone, f, w, 0,
					       DMA_TO_DEVICE,
					       IB_SEND_SIGNALED, NULL));
	rw_untouched(test, p->a, &s0, "a cqe without done");

	for (i = 0; i < RW_CQES; i++) {
		dir = i ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
		rw_pages_fill(f, 0x900 + 0x40 * i);
		rw_snap(p->a, &s0);
		KUNIT_ASSERT_EQ(test, 0, rw_post(p->a, &r[i].cqe, f, w, 50,
						 dir, i ? 0 : IB_SEND_SIGNALED,
						 NULL));
		KUNIT_ASSERT_NE(test, 0UL,
				wait_for_completion_timeout(&r[i].done,
							    10 * HZ));
		KUNIT_EXPECT_EQ(test, r[i].status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, r[i].opcode, i ? IB_WC_RDMA_READ :
						       IB_WC_RDMA_WRITE);
		/* The ring lets the slots go once done has returned. */
		rw_quiesce(p->a);
		rw_settled(test, p, &s0, f, dir, false);
		rw_landed(test, f, w, 50, dir);
	}
	msleep(200);
	for (i = 0; i < RW_CQES; i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&r[i].calls), 1,
				    "request %d", i);
	KUNIT_EXPECT_EQ(test, atomic_read(&rw_cqe_strays), 0);
}

/*
 * With maps pending, the provider refuses the second REG_MR, then (one
 * map left) the operation's first WR: both are refusals of the
 * operation, never a split: its error, no context, nothing of it
 * queued; the REG_MRs before the refused WR are queued registrations,
 * the rest pending again.
 */
static void rw_refused_behind_maps(struct kunit *test,
				   struct ibpost_test_pair *p,
				   struct rw_pages *f, struct rw_win *w,
				   struct rw_pages *m, struct ib_send_wr *send)
{
	struct ibpost_frwr_map maps[2] = {};
	struct ibpost_test_frwr tf0, tf;
	struct ibpost_test_queue tq;
	struct rw_refusal r = {};
	struct ibpost_test_rw tr;
	struct rw_snap s0;
	int i;

	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_frwr_map(p->a, &m->sg[i], 1,
						IB_ACCESS_REMOTE_WRITE,
						&maps[i]));
	for (i = 0; i < 2; i++) {
		ibpost_test_frwr_get(p->a, &tf0);
		rw_snap(p->a, &s0);
		KUNIT_EXPECT_EQ(test, -EIO,
				rw_post_refused_send(test, p, CTX(5 + i), f, w,
						     DMA_TO_DEVICE, 1, send,
						     &r));
		ibpost_test_no_send_comp(test, p->a);
		ibpost_test_rw_get(p->a, &tr);
		KUNIT_EXPECT_EQ(test, tr.ops, s0.tr.ops);
		KUNIT_EXPECT_EQ(test, tr.split, s0.tr.split);
		KUNIT_EXPECT_EQ(test, tr.live, 0U);
		/* Only the REG_MR taken before the refusal was posted. */
		ibpost_test_queue_get(p->a, true, &tq);
		KUNIT_EXPECT_EQ(test, tq.posted, s0.tq.posted + 1);
		ibpost_test_frwr_get(p->a, &tf);
		KUNIT_EXPECT_EQ(test, tf.regs, tf0.regs + 1);
		KUNIT_EXPECT_EQ(test, tf.pending, tf0.pending - 1);
	}
	KUNIT_EXPECT_EQ(test, tf.pending, 0U);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, 0, ibpost_frwr_unmap(p->a, &maps[i],
							   CTX(7 + i)));
		rw_comp(test, p->a, CTX(7 + i), IB_WC_SUCCESS,
			IB_WC_LOCAL_INV);
	}
}

/*
 * A map pending on the QP rides an rw operation's post as any send
 * post's: its REG_MR goes first, so the key the SEND behind the WRITE
 * carries is valid when the peer uses it.
 */
static void ibpost_rw_carries_pending_maps(struct kunit *test)
{
	struct rw_pages *f = rw_pages_new(test, RW_SMALL, 0xa00);
	struct rw_pages *m = rw_pages_new(test, 3, 0xa40);
	struct ibpost_frwr_map map = {};
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	struct ibpost_test_queue tq;
	struct ibpost_test_frwr tf;
	struct ibpost_test_slot ts;
	struct ib_send_wr send;
	struct rw_win *w;
	struct ib_sge sge;
	u32 len = 3 * PAGE_SIZE;
	u8 *want;

	rw_attr(&attr);
	attr.frwr_maps = 2;
	p = ibpost_test_pair_len(test, &attr, len);
	w = rw_win_new(test, p->b, RW_SMALL * PAGE_SIZE, 0xa8);
	rw_list(test, f, 0, RW_SMALL * PAGE_SIZE);
	rw_list(test, m, 0, len);
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(p->a, m->sg, m->cnt,
						 IB_ACCESS_REMOTE_WRITE, &map));
	/* The SEND carries the key: the map's REG_MR must precede it. */
	memcpy(p->abuf.buf, &map, sizeof(map));
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf,
					       sizeof(map), &sge));
	rw_send_init(&send, &sge);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1), p->bbuf.buf,
						  p->bbuf.len, p->bbuf.mr));
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_ASSERT_EQ(test, 0, rw_post(p->a, CTX(2), f, w, 0, DMA_TO_DEVICE,
					 IB_SEND_SIGNALED, &send));
	ibpost_test_send_slot(p->a, tq.head, &ts);
	KUNIT_EXPECT_EQ(test, ts.opcode, IB_WR_REG_MR);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.pending, 0U);
	KUNIT_EXPECT_EQ(test, tf.regs, 1ULL);
	rw_comp(test, p->a, CTX(2), IB_WC_SUCCESS, IB_WC_SEND);
	ibpost_test_recv_ok(test, p->b, CTX(1), sge.length);
	rw_landed(test, f, w, 0, DMA_TO_DEVICE);

	/* The peer writes the map with the key it got. */
	want = kunit_kmalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	ibpost_test_fill(p->bw.buf, len, 0xab);
	memcpy(want, p->bw.buf, len);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_write(p->b, CTX(3), p->bw.buf,
						   len, p->bw.mr,
						   IB_SEND_SIGNALED, map.iova,
						   map.rkey));
	ibpost_test_send_ok(test, p->b, CTX(3));
	rw_pages_check(test, m, want);
	KUNIT_EXPECT_EQ(test, 0, ibpost_frwr_unmap(p->a, &map, CTX(4)));
	rw_comp(test, p->a, CTX(4), IB_WC_SUCCESS, IB_WC_LOCAL_INV);
	rw_refused_behind_maps(test, p, f, w, m, &send);
}

/* Flushed contexts the release callback saw, by context. */
static atomic_t rw_released[3];

static void rw_release(struct ibpost_qp *qp, bool send,
		       const struct ibpost_comp *comp)
{
	uintptr_t i = (uintptr_t)comp->context;

	if (send && i < ARRAY_SIZE(rw_released) &&
	    comp->status == IB_WC_WR_FLUSH_ERR)
		atomic_inc(&rw_released[i]);
}

/*
 * A WRITE and an unsignaled READ held behind a SEND that waits for a
 * receive (RNR): an RNR pair, its peer's window, the three posted, and
 * the ring holding all of them. Return: the QP.
 */
static struct ibpost_qp *rw_held(struct kunit *test, u32 seed)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct rw_pages *f = rw_pages_new(test, RW_SMALL, seed);
	struct rw_pages *g = rw_pages_new(test, RW_SMALL, seed + 0x40);
	struct ibpost_qp_attr attr;
	struct ibpost_test_rw tr;
	struct ibpost_qp *a, *z;
	struct rw_win *w;
	u64 c = 0x77;
	u32 wrs;

	rw_attr(&attr);
	attr.release = rw_release;
	a = ibpost_test_rnr_pair(test, dev, &attr, 20, 7, &z);
	w = rw_win_new(test, z, RW_SMALL * PAGE_SIZE, seed + 0x80);
	rw_list(test, f, 0, RW_SMALL * PAGE_SIZE);
	rw_list(test, g, 0, RW_SMALL * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(a, CTX(0), &c, 8, NULL,
						  IB_SEND_SIGNALED |
						  IB_SEND_INLINE));
	KUNIT_ASSERT_EQ(test, 0, rw_post(a, CTX(1), f, w, 0, DMA_TO_DEVICE,
					 IB_SEND_SIGNALED, NULL));
	ibpost_test_rw_get(a, &tr);
	wrs = 1 + tr.last_wrs;
	KUNIT_ASSERT_EQ(test, 0, rw_post(a, CTX(2), g, w, 0, DMA_FROM_DEVICE,
					 0, NULL));
	ibpost_test_rw_get(a, &tr);
	wrs += tr.last_wrs;
	msleep(50);
	/* Held: every slot still taken, no context back. */
	KUNIT_ASSERT_EQ(test, ibpost_test_in_use(a, true), wrs);
	KUNIT_ASSERT_EQ(test, tr.live, 2U);
	return a;
}

/*
 * RESET, then a destroy, with operations held: each context comes back
 * flushed, once, by the time the call returns (RESET: for get_comp;
 * destroy: through the release callback), nothing held after.
 * IB/RoCE only (an RNR wait holds the queue).
 */
static void ibpost_rw_held_ops_reset_and_destroy(struct kunit *test)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };
	struct ibpost_test_rw tr;
	struct ibpost_comp comp;
	struct ibpost_qp *a;
	int seen[3] = {};
	int i;

	ibpost_test_need_ib(test, ibpost_test_dev(test),
			    "no RNR wait to hold the operations");
	a = rw_held(test, 0xb00);
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(a, &qa, IB_QP_STATE));
	for (i = 0; i < 3; i++) {
		ibpost_test_send_comp(test, a, &comp);
		KUNIT_EXPECT_EQ(test, comp.status, IB_WC_WR_FLUSH_ERR);
		if ((uintptr_t)comp.context < ARRAY_SIZE(seen))
			seen[(uintptr_t)comp.context]++;
	}
	ibpost_test_no_send_comp(test, a);
	for (i = 0; i < ARRAY_SIZE(seen); i++)
		KUNIT_EXPECT_EQ_MSG(test, seen[i], 1, "context %d", i);
	ibpost_test_rw_get(a, &tr);
	KUNIT_EXPECT_EQ(test, tr.live, 0U);
	KUNIT_EXPECT_EQ(test, tr.mrs_used, 0U);
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(a, true), 0U);

	for (i = 0; i < ARRAY_SIZE(rw_released); i++)
		atomic_set(&rw_released[i], 0);
	a = rw_held(test, 0xc00);
	ibpost_test_qp_destroy(test, a);
	for (i = 0; i < ARRAY_SIZE(rw_released); i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&rw_released[i]), 1,
				    "context %d", i);
}

/* Lets the held callback go later, from a work item of the test's. */
struct rw_later {
	struct delayed_work dw;
	struct ibpost_test_cb *c;
};

static void rw_later_release(struct work_struct *work)
{
	struct rw_later *l = container_of(to_delayed_work(work),
					  struct rw_later, dw);

	ibpost_test_cb_release(l->c);
}

/*
 * A destroy whose drain fails: a's send CQ is polled by a work item held
 * in a's first send callback (a WRITE's), so the drain's marker is not
 * seen within drain_timeout_ms; an rw WRITE posted behind it is done at
 * the provider, its completion waiting in that CQ. ib_core's context of
 * the operation must be destroyed before the provider's QP is (it reads
 * the QP); the completion, polled once the callback is let go during
 * the CQ's free, then hands the context back, once, touching no more of
 * the QP.
 */
static void ibpost_rw_destroy_undrained(struct kunit *test)
{
	struct rw_pages *f = rw_pages_new(test, RW_SMALL, 0xd00);
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	struct ibpost_test_cb *c;
	struct ibpost_test_rw tr;
	struct rw_later *l;
	struct rw_win *w;

	c = ibpost_test_cb_attr(test, &attr);
	attr.poll_ctx = IB_POLL_WORKQUEUE;
	attr.max_send_wr = RW_SQ;
	attr.max_send_sge = RW_SGE;
	attr.max_inline_data = 64;
	attr.rw_ops = RW_OPS;
	p = ibpost_test_pair(test, &attr);
	w = rw_win_new(test, p->b, RW_SMALL * PAGE_SIZE, 0xd8);
	rw_list(test, f, 0, RW_SMALL * PAGE_SIZE);
	l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, l);
	INIT_DELAYED_WORK(&l->dw, rw_later_release);
	l->c = c;
	ibpost_test_cb_hold(test, c);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_write(p->a, CTX(1), p->abuf.buf,
						   64, p->abuf.mr,
						   IB_SEND_SIGNALED,
						   ibpost_mr_remote_addr(w->wmr),
						   ibpost_mr_rkey(w->wmr)));
	KUNIT_ASSERT_TRUE_MSG(test, ibpost_test_cb_held(c),
			      "a's send callback did not run");
	KUNIT_ASSERT_EQ(test, 0, rw_post(p->a, CTX(2), f, w, 0, DMA_TO_DEVICE,
					 IB_SEND_SIGNALED, NULL));
	msleep(100);
	ibpost_test_rw_get(p->a, &tr);
	KUNIT_ASSERT_EQ(test, tr.live, 1U);

	ibpost_test_param_set(test, "drain_timeout_ms", 300, 10000);
	schedule_delayed_work(&l->dw, msecs_to_jiffies(1500));
	ibpost_qp_destroy(p->a);
	p->a = NULL;
	flush_delayed_work(&l->dw);
	KUNIT_EXPECT_EQ(test, 2, ibpost_test_cb_calls(c));
	KUNIT_EXPECT_EQ(test, 0, c->dups);
	KUNIT_EXPECT_TRUE(test, test_bit(1, c->seen));
	KUNIT_EXPECT_TRUE(test, test_bit(2, c->seen));
}

static struct kunit_case ibpost_rw_cases[] = {
	KUNIT_CASE_PARAM(ibpost_rw_write_1mib, rw_offset_gen_params),
	KUNIT_CASE_PARAM(ibpost_rw_read_1mib, rw_offset_gen_params),
	KUNIT_CASE(ibpost_rw_send_after_write),
	KUNIT_CASE(ibpost_rw_unsignaled_write),
	KUNIT_CASE(ibpost_rw_err_flushes_once),
	KUNIT_CASE(ibpost_rw_refused_inside_op),
	KUNIT_CASE(ibpost_rw_no_room),
	KUNIT_CASE(ibpost_rw_bad_input),
	KUNIT_CASE(ibpost_rw_carries_pending_maps),
	KUNIT_CASE(ibpost_rw_held_ops_reset_and_destroy),
	KUNIT_CASE(ibpost_rw_destroy_undrained),
	KUNIT_CASE(ibpost_rw_cqe_mode),
	{}
};

static struct kunit_suite ibpost_rw_suite = {
	.name = "ibpost_rw",
	.test_cases = ibpost_rw_cases,
};

kunit_test_suites(&ibpost_rw_suite);
