// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_frwr: fast registration per I/O. An sg list of scattered
 * pages is mapped at once, its REG_MR rides the QP's next send post ahead
 * of the consumer's first WR (one slot each, in the same provider call),
 * and the peer writes or reads exactly its bytes; a peer's
 * SEND_WITH_INV retires the key, so the unmap posts nothing (DONE), and
 * the old key then fails at the peer; an unmap of a live key posts a
 * LOCAL_INV whose completion carries the consumer's context, after which
 * the key fails; a REG_MR the provider refuses makes *bad_wr the
 * consumer's WR it preceded, with nothing from there on queued, and the
 * map rides the repost; an empty pool is -EAGAIN, never a wait; an unmap
 * on a QP in ERR revokes the key by replacing the MR before its context
 * comes back flushed, once; a device removal with maps outstanding
 * brings every unmap's context back once and releases every MR, the
 * handles left unmapping as DONE; bad input is refused before anything
 * is taken.
 */
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

/* The first entry starts FRWR_HEAD bytes into its page, the last ends
 * FRWR_TAIL bytes before its page's end; at most FRWR_PAGES pages.
 */
#define FRWR_HEAD	100
#define FRWR_TAIL	200
#define FRWR_PAGES	64
#define FRWR_MAPS	4
#define FRWR_REMOVAL_MAPS	64

/*
 * Scattered pages under an sg list: each the first page of an order-1
 * block, so no two entries are adjacent. @want mirrors every byte of the
 * pages (the bytes outside the list are canaries).
 */
struct frwr_pages {
	unsigned int n;
	struct page **blocks;
	struct scatterlist *sg;
	size_t len;
	u8 *want;
};

static void frwr_pages_free(void *data)
{
	struct frwr_pages *f = data;
	unsigned int i;

	for (i = 0; i < f->n; i++)
		if (f->blocks[i])
			__free_pages(f->blocks[i], 1);
	kfree(f->blocks);
	kfree(f->sg);
	vfree(f->want);
	kfree(f);
}

/* Byte @off of the list's bytes laid end to end: its page and offset. */
static u8 *frwr_byte(struct frwr_pages *f, size_t off, bool want)
{
	size_t abs = off + FRWR_HEAD;
	unsigned int pg = abs / PAGE_SIZE;

	if (want)
		return f->want + abs;
	return (u8 *)page_address(f->blocks[pg]) + abs % PAGE_SIZE;
}

static struct frwr_pages *frwr_pages_new(struct kunit *test, unsigned int n,
					 u32 seed)
{
	struct frwr_pages *f;
	unsigned int i;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->blocks = kcalloc(n, sizeof(*f->blocks), GFP_KERNEL);
	f->sg = kcalloc(n, sizeof(*f->sg), GFP_KERNEL);
	f->want = vmalloc(n * PAGE_SIZE);
	if (!f->blocks || !f->sg || !f->want) {
		frwr_pages_free(f);
		KUNIT_FAIL_AND_ABORT(test, "no memory for %u pages", n);
	}
	f->n = n;
	ibpost_test_defer(test, frwr_pages_free, f);
	sg_init_table(f->sg, n);
	for (i = 0; i < n; i++) {
		u32 off = i ? 0 : FRWR_HEAD;
		u32 end = i == n - 1 ? PAGE_SIZE - FRWR_TAIL : PAGE_SIZE;

		f->blocks[i] = alloc_pages(GFP_KERNEL, 1);
		KUNIT_ASSERT_NOT_NULL(test, f->blocks[i]);
		ibpost_test_fill(page_address(f->blocks[i]), PAGE_SIZE,
				 seed + i);
		memcpy(f->want + i * PAGE_SIZE, page_address(f->blocks[i]),
		       PAGE_SIZE);
		sg_set_page(&f->sg[i], f->blocks[i], end - off, off);
	}
	f->len = (size_t)n * PAGE_SIZE - FRWR_HEAD - FRWR_TAIL;
	return f;
}

/* Every byte of the pages is what @want says (the list's and the rest). */
static void frwr_pages_check(struct kunit *test, struct frwr_pages *f)
{
	unsigned int i;

	for (i = 0; i < f->n; i++)
		KUNIT_EXPECT_EQ_MSG(test, 0,
				    memcmp(page_address(f->blocks[i]),
					   f->want + i * PAGE_SIZE, PAGE_SIZE),
				    "page %u of %u", i, f->n);
}

static struct ibpost_test_pair *frwr_pair(struct kunit *test, u32 maps,
					  u32 max_pages, size_t len)
{
	struct ibpost_qp_attr attr;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_inline_data = 64;
	attr.frwr_maps = maps;
	attr.frwr_max_pages = max_pages;
	return ibpost_test_pair_len(test, &attr, len);
}

/* a sends @len bytes of abuf to b (a receive posted first), signaled. */
static void frwr_send(struct kunit *test, struct ibpost_test_pair *p,
		      void *ctx, u32 len)
{
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, ctx, p->bbuf.buf,
						  p->bbuf.len, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, ctx, p->abuf.buf, len,
						  p->abuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, ctx);
	ibpost_test_recv_ok(test, p->b, ctx, len);
}

/* The opcode of a's send slot at ring position @pos, as posted. */
static enum ib_wr_opcode frwr_slot_op(struct ibpost_qp *qp, u32 pos)
{
	struct ibpost_test_slot ts;

	ibpost_test_send_slot(qp, pos, &ts);
	return ts.opcode;
}

static const u32 frwr_npages[] = { 1, 3, 17, FRWR_PAGES };

static void frwr_npages_desc(const u32 *n, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u pages", *n);
}

KUNIT_ARRAY_PARAM(frwr_npages, frwr_npages, frwr_npages_desc);

/*
 * The peer WRITEs the whole map, then retires its key with SEND_WITH_INV:
 * the REG_MR went ahead of a's SEND in its own slot, the bytes land
 * exactly in the list, the unmap posts nothing (DONE), and the old key
 * then fails at the peer (rxe: a remote access error; siw ends the
 * connection without naming the WRITE, so it is not tried there).
 */
static void ibpost_frwr_peer_writes_then_invalidates(struct kunit *test)
{
	const u32 *npages = test->param_value;
	struct ibpost_test_pair *p;
	struct ibpost_frwr_map map = {}, old;
	struct ibpost_test_queue tq;
	struct ibpost_test_frwr tf;
	struct ibpost_comp comp;
	struct frwr_pages *f;
	size_t i;

	p = frwr_pair(test, FRWR_MAPS, 0, FRWR_PAGES * PAGE_SIZE);
	f = frwr_pages_new(test, *npages, 0x4000);
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(p->a, f->sg, f->n,
						 IB_ACCESS_REMOTE_WRITE,
						 &map));
	KUNIT_EXPECT_EQ(test, map.length, (u32)f->len);
	KUNIT_EXPECT_EQ(test, map.iova & (PAGE_SIZE - 1), (u64)FRWR_HEAD);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.pending, 1U);
	KUNIT_EXPECT_EQ(test, tf.free, FRWR_MAPS - 1U);

	/* The REG_MR rides a's next post, in a slot ahead of the SEND. */
	ibpost_test_queue_get(p->a, true, &tq);
	frwr_send(test, p, (void *)1UL, 16);
	KUNIT_EXPECT_EQ(test, frwr_slot_op(p->a, tq.head), IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, frwr_slot_op(p->a, tq.head + 1), IB_WR_SEND);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.pending, 0U);
	KUNIT_EXPECT_EQ(test, tf.regs, 1ULL);

	/* The peer writes every byte of the map. */
	ibpost_test_fill(p->bbuf.buf, f->len, 0x9000 + *npages);
	for (i = 0; i < f->len; i++)
		*frwr_byte(f, i, true) = ((u8 *)p->bbuf.buf)[i];
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_write(p->b, (void *)2UL,
						   p->bbuf.buf, f->len,
						   p->bbuf.mr,
						   IB_SEND_SIGNALED, map.iova,
						   map.rkey));
	ibpost_test_send_ok(test, p->b, (void *)2UL);

	/* Then retires the key with its SEND_WITH_INV. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, (void *)3UL,
						  p->abuf.buf, p->abuf.len,
						  p->abuf.mr));
	ibpost_test_send_inv_ok(test, p->b, 4, p->bbuf.mr, p->bbuf.buf, 8,
				map.rkey);
	ibpost_test_recv_comp(test, p->a, &comp);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, comp.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, comp.invalidate_rkey, map.rkey);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.remote_inv, 1ULL);

	/* Nothing to invalidate: no LOCAL_INV, no context. */
	old = map;
	KUNIT_EXPECT_EQ(test, IBPOST_FRWR_DONE,
			ibpost_frwr_unmap(p->a, &map, (void *)5UL));
	KUNIT_EXPECT_NULL(test, map.ent);
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.invs, 0ULL);
	KUNIT_EXPECT_EQ(test, tf.free, (u32)FRWR_MAPS);
	frwr_pages_check(test, f);

	/* A stale copy of the handle is refused. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_unmap(p->a, &old, NULL));
	if (ibpost_test_iwarp(p->dev))
		return;
	/* The old key is dead at the peer. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_write(p->b, (void *)6UL,
						   p->bbuf.buf, 8, p->bbuf.mr,
						   IB_SEND_SIGNALED, map.iova,
						   map.rkey));
	ibpost_test_send_comp(test, p->b, &comp);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)6UL);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_REM_ACCESS_ERR);
	frwr_pages_check(test, f);
}

/*
 * The peer READs the map; the unmap of the live key posts a LOCAL_INV
 * that carries the consumer's context back with success; the old key
 * then fails at the peer.
 */
static void ibpost_frwr_unmap_posts_local_inv(struct kunit *test)
{
	struct ibpost_test_pair *p;
	struct ibpost_frwr_map map = {};
	struct ibpost_test_frwr tf;
	struct ibpost_comp comp;
	struct frwr_pages *f;
	size_t i;

	p = frwr_pair(test, FRWR_MAPS, 0, 4 * PAGE_SIZE);
	f = frwr_pages_new(test, 3, 0x5000);
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(p->a, f->sg, f->n,
						 IB_ACCESS_REMOTE_READ, &map));
	frwr_send(test, p, (void *)1UL, 16);
	memset(p->bbuf.buf, 0xa5, p->bbuf.len);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_read(p->b, (void *)2UL,
						  p->bbuf.buf, f->len,
						  p->bbuf.mr, IB_SEND_SIGNALED,
						  map.iova, map.rkey));
	ibpost_test_send_ok(test, p->b, (void *)2UL);
	for (i = 0; i < f->len; i++)
		if (((u8 *)p->bbuf.buf)[i] != *frwr_byte(f, i, false))
			break;
	KUNIT_EXPECT_EQ_MSG(test, i, f->len, "first byte read wrong");

	KUNIT_EXPECT_EQ(test, 0, ibpost_frwr_unmap(p->a, &map, (void *)7UL));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)7UL);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, comp.opcode, IB_WC_LOCAL_INV);
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.invs, 1ULL);
	KUNIT_EXPECT_EQ(test, tf.free, (u32)FRWR_MAPS);
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(p->a, true), 0U);

	/*
	 * The old key is dead at the peer (siw ends the connection instead,
	 * with a TERMINATE: not tried there).
	 */
	if (ibpost_test_iwarp(p->dev))
		return;
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_read(p->b, (void *)8UL,
						  p->bbuf.buf, 8, p->bbuf.mr,
						  IB_SEND_SIGNALED, map.iova,
						  map.rkey));
	ibpost_test_send_comp(test, p->b, &comp);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)8UL);
	KUNIT_EXPECT_NE(test, comp.status, IB_WC_SUCCESS);
	frwr_pages_check(test, f);
}

/*
 * Maps wait for a post and unmap as DONE when none came; an empty pool is
 * -EAGAIN at once, and an entry unmapped is free again.
 */
static void ibpost_frwr_pool_exhaustion_eagain(struct kunit *test)
{
	struct ibpost_frwr_map map[FRWR_MAPS + 1] = {};
	struct ibpost_test_pair *p;
	struct ibpost_test_queue tq0, tq;
	struct ibpost_test_frwr tf;
	struct frwr_pages *f;
	int i;

	p = frwr_pair(test, FRWR_MAPS, 0, PAGE_SIZE);
	f = frwr_pages_new(test, FRWR_MAPS + 1, 0x6000);
	ibpost_test_queue_get(p->a, true, &tq0);
	for (i = 0; i < FRWR_MAPS; i++)
		KUNIT_EXPECT_EQ(test, 0, ibpost_frwr_map(p->a, &f->sg[i], 1,
							 IB_ACCESS_REMOTE_READ,
							 &map[i]));
	KUNIT_EXPECT_EQ(test, -EAGAIN,
			ibpost_frwr_map(p->a, &f->sg[FRWR_MAPS], 1,
					IB_ACCESS_REMOTE_READ,
					&map[FRWR_MAPS]));
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.eagain, 1ULL);
	KUNIT_EXPECT_EQ(test, tf.free, 0U);
	KUNIT_EXPECT_EQ(test, tf.pending, (u32)FRWR_MAPS);

	KUNIT_EXPECT_EQ(test, IBPOST_FRWR_DONE,
			ibpost_frwr_unmap(p->a, &map[1], NULL));
	KUNIT_EXPECT_EQ(test, 0, ibpost_frwr_map(p->a, &f->sg[FRWR_MAPS], 1,
						 IB_ACCESS_REMOTE_READ,
						 &map[1]));
	for (i = 0; i < FRWR_MAPS; i++)
		KUNIT_EXPECT_EQ(test, IBPOST_FRWR_DONE,
				ibpost_frwr_unmap(p->a, &map[i], NULL));
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_queue_get(p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, tq.posted, tq0.posted);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.free, (u32)FRWR_MAPS);
	KUNIT_EXPECT_EQ(test, tf.pending, 0U);
	KUNIT_EXPECT_EQ(test, tf.regs, 0ULL);
}

/*
 * The WR behind the REG_MRs keeps its own MR uses and DMA ranges: a SEND
 * of two SGEs in two MRs (one the queue's hit, one counted in the WR's
 * own use array) leaves no use behind once it completed, whatever slot
 * the REG_MRs ahead of it took.
 */
static void ibpost_frwr_first_wr_keeps_its_uses(struct kunit *test)
{
	struct ibpost_frwr_map map[2] = {};
	struct ibpost_test_pair *p;
	struct ibpost_sge sgl[2];
	struct frwr_pages *f;
	int i;

	p = frwr_pair(test, FRWR_MAPS, 0, 2 * PAGE_SIZE);
	f = frwr_pages_new(test, 2, 0xc000);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(p->a, &f->sg[i], 1,
							 IB_ACCESS_REMOTE_READ,
							 &map[i]));
	ibpost_test_fill(p->abuf.buf, 64, 1);
	ibpost_test_fill(p->bbuf.buf, 64, 2);
	sgl[0] = (struct ibpost_sge){ p->abuf.buf, 32, p->abuf.mr };
	sgl[1] = (struct ibpost_sge){ p->bbuf.buf, 32, p->bbuf.mr };
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, (void *)2UL,
						  p->bbuf.buf + PAGE_SIZE, 64,
						  p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_sendv(p->a, (void *)1UL, sgl, 2,
						   IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, (void *)1UL);
	ibpost_test_recv_ok(test, p->b, (void *)2UL, 64);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->bbuf.buf + PAGE_SIZE, p->abuf.buf,
					32));
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->bbuf.buf + PAGE_SIZE + 32,
					p->bbuf.buf, 32));
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(p->abuf.mr));
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_mr_users(p->bbuf.mr));
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, 0, ibpost_frwr_unmap(p->a, &map[i],
							   (void *)3UL));
		ibpost_test_send_ok(test, p->a, (void *)3UL);
	}

	/*
	 * A READ behind a pending map (on iWARP: behind its own sink's
	 * REG_MR too, registered for the slot it takes, not the REG_MR's).
	 */
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(p->a, &f->sg[0], 1,
						 IB_ACCESS_REMOTE_READ,
						 &map[0]));
	ibpost_test_fill(p->br.buf, 3000, 7);
	memset(p->abuf.buf, 0x3c, 4000);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_read(p->a, (void *)4UL,
						  p->abuf.buf + 100, 3000,
						  p->abuf.mr, IB_SEND_SIGNALED,
						  ibpost_mr_remote_addr(p->br.mr),
						  ibpost_mr_rkey(p->br.mr)));
	ibpost_test_send_ok(test, p->a, (void *)4UL);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->abuf.buf + 100, p->br.buf, 3000));
	KUNIT_EXPECT_FALSE(test, memchr_inv(p->abuf.buf, 0x3c, 100));
	KUNIT_EXPECT_FALSE(test, memchr_inv(p->abuf.buf + 3100, 0x3c, 900));
	KUNIT_EXPECT_EQ(test, 0, ibpost_frwr_unmap(p->a, &map[0],
						   (void *)5UL));
	ibpost_test_send_ok(test, p->a, (void *)5UL);
}

/*
 * Consumer WRs never take the slots kept for LOCAL_INVs: with the send
 * queue held full by an RNR wait, a post beyond depth - frwr_maps is
 * -ENOMEM, and an unmap still posts its LOCAL_INV, whose context comes
 * back with success once the queue moves. IB/RoCE only (iWARP has no
 * RNR wait).
 */
static void ibpost_frwr_reserve_keeps_unmap_room(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_frwr_map map = {};
	struct ibpost_test_queue tq;
	struct ibpost_test_frwr tf;
	struct ibpost_test_buf *buf;
	struct ibpost_qp_attr attr;
	struct ibpost_comp comp;
	struct ibpost_qp *a, *z;
	struct frwr_pages *f;
	u64 c = 0x55;
	u32 n = 0, i;
	int ret;

	ibpost_test_need_ib(test, dev, "no RNR wait to hold the queue full");
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_wr = 8;
	attr.max_inline_data = 64;
	attr.frwr_maps = 2;
	a = ibpost_test_rnr_pair(test, dev, &attr, 20, 7, &z);
	buf = ibpost_test_buf_new(test, dev, PAGE_SIZE);
	f = frwr_pages_new(test, 1, 0xd000);
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(a, f->sg, 1,
						 IB_ACCESS_REMOTE_READ, &map));
	/* The REG_MR runs; the SEND behind it waits for a receive. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(a, (void *)1UL, &c, 8, NULL,
						  IB_SEND_SIGNALED |
						  IB_SEND_INLINE));
	do {
		ret = ibpost_post_send(a, NULL, &c, 8, NULL, IB_SEND_INLINE);
		n += !ret;
	} while (!ret && n < 1000);
	KUNIT_ASSERT_EQ(test, ret, -ENOMEM);
	ibpost_test_queue_get(a, true, &tq);
	ibpost_test_frwr_get(a, &tf);
	KUNIT_EXPECT_EQ(test, tf.reserved, 2U);
	KUNIT_EXPECT_LE(test, ibpost_test_in_use(a, true) + 2, tq.depth);

	KUNIT_EXPECT_EQ(test, 0, ibpost_frwr_unmap(a, &map, (void *)99UL));
	ibpost_test_frwr_get(a, &tf);
	KUNIT_EXPECT_EQ(test, tf.reserved, 1U);
	KUNIT_EXPECT_EQ(test, tf.revoking, 0U);
	KUNIT_EXPECT_EQ(test, tf.revoked, 0ULL);

	/* The peer takes the SENDs: the queue moves, the LOCAL_INV runs. */
	for (i = 0; i <= n; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(z, NULL, buf->buf, 64,
							  buf->mr));
	ibpost_test_send_ok(test, a, (void *)1UL);
	ibpost_test_send_comp(test, a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)99UL);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, comp.opcode, IB_WC_LOCAL_INV);
	ibpost_test_frwr_get(a, &tf);
	KUNIT_EXPECT_EQ(test, tf.reserved, 2U);
	KUNIT_EXPECT_EQ(test, tf.free, 2U);
}

/*
 * A reserve slot comes back when the ring's tail passes it, not when its
 * LOCAL_INV ends: with a completion parked unfetched at the tail (no
 * callbacks), a second unmap finds the reserve held (-EBUSY, the handle
 * still mapped); once the completions are fetched, it posts.
 */
static void ibpost_frwr_parked_completions_hold_the_reserve(struct kunit *test)
{
	struct ibpost_frwr_map map = {};
	struct ibpost_test_pair *p;
	struct ibpost_test_frwr tf;
	struct ibpost_comp comp;
	struct frwr_pages *f;
	int i;

	p = frwr_pair(test, 1, 0, PAGE_SIZE);
	f = frwr_pages_new(test, 1, 0xf000);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, NULL,
							  p->bbuf.buf, 64,
							  p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(p->a, f->sg, 1,
						 IB_ACCESS_REMOTE_READ, &map));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, (void *)1UL,
						  p->abuf.buf, 8, p->abuf.mr,
						  IB_SEND_SIGNALED));
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_unmap(p->a, &map, (void *)90UL));
	/* Both done, parked: the SEND's holds the tail. */
	for (i = 0; i < 100; i++) {
		ibpost_test_frwr_get(p->a, &tf);
		if (tf.free == 1)
			break;
		msleep(20);
	}
	KUNIT_ASSERT_EQ(test, tf.free, 1U);
	KUNIT_EXPECT_EQ(test, tf.reserved, 0U);

	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(p->a, f->sg, 1,
						 IB_ACCESS_REMOTE_READ, &map));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, (void *)2UL,
						  p->abuf.buf, 8, p->abuf.mr,
						  IB_SEND_SIGNALED));
	KUNIT_EXPECT_EQ(test, -EBUSY, ibpost_frwr_unmap(p->a, &map,
							(void *)91UL));
	KUNIT_EXPECT_NOT_NULL(test, map.ent);

	ibpost_test_send_ok(test, p->a, (void *)1UL);
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)90UL);
	KUNIT_EXPECT_EQ(test, comp.opcode, IB_WC_LOCAL_INV);
	ibpost_test_send_ok(test, p->a, (void *)2UL);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.reserved, 1U);
	KUNIT_EXPECT_EQ(test, 0, ibpost_frwr_unmap(p->a, &map, (void *)91UL));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)91UL);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.reserved, 1U);
	KUNIT_EXPECT_EQ(test, tf.free, 1U);
}

/* The SUBMIT hook: "the provider" refuses the next post from WR *data. */
static int frwr_refuse_at(enum ibpost_hook point, void *obj, void *data)
{
	int *at = data;
	int k;

	if (point != IBPOST_HOOK_SUBMIT)
		return 0;
	k = *at;
	*at = 0;
	return k;
}

static void frwr_unhook(void *data)
{
	ibpost_test_set_hook(NULL, NULL);
}

static int frwr_bad_reg(enum ibpost_hook point, void *obj, void *data)
{
	return point == IBPOST_HOOK_FRWR_REG;
}

/*
 * A REG_MR the provider fails when it runs (its key names another MR's
 * index): the QP goes to ERR, and the SEND it rode ahead of comes back
 * flushed, once; nothing else is shown. A provider that names the
 * REG_MR's failure (6.1's rxe) says it never ran: its unmap has nothing
 * to post (DONE). One that reports it flushed with the rest (6.12's rxe
 * may, its completer flushing the queue first; siw) leaves its state
 * unknown: the unmap's context comes back flushed, once, after the MR
 * was replaced. Either way the entry is free again.
 */
static void ibpost_frwr_reg_mr_fails_at_execution(struct kunit *test)
{
	struct ibpost_frwr_map map = {};
	struct ibpost_test_pair *p;
	struct ibpost_test_frwr tf;
	struct ibpost_comp comp;
	struct frwr_pages *f;
	u64 c = 0x55, failed;
	int un;

	p = frwr_pair(test, FRWR_MAPS, 0, PAGE_SIZE);
	f = frwr_pages_new(test, 2, 0x7800);
	ibpost_test_defer(test, frwr_unhook, NULL);
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(frwr_bad_reg, NULL));
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(p->a, f->sg, f->n,
						 IB_ACCESS_REMOTE_WRITE, &map));
	ibpost_test_set_hook(NULL, NULL);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, (void *)1UL,
						  p->bbuf.buf, 64, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, (void *)2UL, &c, 8,
						  NULL, IB_SEND_SIGNALED |
						  IB_SEND_INLINE));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)2UL);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_WR_FLUSH_ERR);
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.regs, 1ULL);
	failed = tf.reg_failed;
	kunit_info(test, "the REG_MR came back %s\n",
		   failed ? "failed" : "flushed");
	un = ibpost_frwr_unmap(p->a, &map, (void *)3UL);
	if (failed) {
		KUNIT_EXPECT_EQ(test, un, IBPOST_FRWR_DONE);
	} else {
		KUNIT_EXPECT_EQ(test, un, 0);
		ibpost_test_send_comp(test, p->a, &comp);
		KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)3UL);
		KUNIT_EXPECT_EQ(test, comp.status, IB_WC_WR_FLUSH_ERR);
	}
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.free, (u32)FRWR_MAPS);
	KUNIT_EXPECT_EQ(test, tf.revoked, failed ? 0ULL : 1ULL);
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(p->a, true), 0U);
	frwr_pages_check(test, f);
}

/*
 * The provider refuses a REG_MR riding a chain of two SENDs: *bad_wr is
 * the first SEND, nothing from the refused REG_MR on is queued, and the
 * maps not queued ride the repost from *bad_wr; with two maps and the
 * second REG_MR refused, the first is a queued registration.
 */
static void ibpost_frwr_refused_reg_mr_names_the_wr(struct kunit *test)
{
	struct ibpost_frwr_map map[2] = {};
	struct ibpost_test_pair *p;
	struct ibpost_test_queue tq, tq1;
	struct ibpost_test_frwr tf;
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr wr[2] = {};
	struct ib_sge sge[2];
	struct ibpost_comp comp;
	struct frwr_pages *f;
	int at, nmaps, i, j;

	p = frwr_pair(test, FRWR_MAPS, 0, PAGE_SIZE);
	f = frwr_pages_new(test, 2, 0x7000);
	ibpost_test_defer(test, frwr_unhook, NULL);
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr, p->abuf.buf,
						       8, &sge[i]));
		wr[i].wr_id = 10 + i;
		wr[i].opcode = IB_WR_SEND;
		wr[i].send_flags = IB_SEND_SIGNALED;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
	}
	wr[0].next = &wr[1];

	for (nmaps = 1; nmaps <= 2; nmaps++) {
		for (i = 0; i < nmaps; i++)
			KUNIT_ASSERT_EQ(test, 0,
					ibpost_frwr_map(p->a, &f->sg[i], 1,
							IB_ACCESS_REMOTE_READ,
							&map[i]));
		for (i = 0; i < 2; i++)
			KUNIT_ASSERT_EQ(test, 0,
					ibpost_post_recv(p->b, (void *)20UL,
							 p->bbuf.buf, 64,
							 p->bbuf.mr));
		ibpost_test_queue_get(p->a, true, &tq);
		/* Refuse the last map's REG_MR: WR nmaps - 1 of the post. */
		at = nmaps;
		KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(frwr_refuse_at,
							      &at));
		KUNIT_EXPECT_EQ(test, -EIO, ibpost_post_send_list(p->a, wr,
								  &bad));
		ibpost_test_set_hook(NULL, NULL);
		KUNIT_EXPECT_PTR_EQ(test, bad, &wr[0]);
		/*
		 * The REG_MRs before it are queued (one may have completed
		 * already), it and the rest not.
		 */
		ibpost_test_queue_get(p->a, true, &tq1);
		KUNIT_EXPECT_EQ(test, tq1.posted - tq.posted, (u64)nmaps - 1);
		KUNIT_EXPECT_EQ(test, tq1.head - tq.head, (u32)nmaps - 1);
		ibpost_test_frwr_get(p->a, &tf);
		KUNIT_EXPECT_EQ(test, tf.pending, 1U);
		ibpost_test_no_send_comp(test, p->a);

		/* The repost carries the map not queued, then both SENDs. */
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, bad,
							       &bad));
		KUNIT_EXPECT_EQ(test, frwr_slot_op(p->a, tq.head + nmaps - 1),
				IB_WR_REG_MR);
		KUNIT_EXPECT_EQ(test, frwr_slot_op(p->a, tq.head + nmaps),
				IB_WR_SEND);
		for (i = 0; i < 2; i++) {
			ibpost_test_send_ok(test, p->a,
					    (void *)(uintptr_t)(10 + i));
			ibpost_test_recv_ok(test, p->b, (void *)20UL, 8);
		}
		ibpost_test_frwr_get(p->a, &tf);
		KUNIT_EXPECT_EQ(test, tf.pending, 0U);
		/* Each map registered once: each unmap invalidates. */
		for (i = 0; i < nmaps; i++) {
			KUNIT_EXPECT_EQ(test, 0,
					ibpost_frwr_unmap(p->a, &map[i],
							  (void *)30UL));
		}
		for (j = 0; j < nmaps; j++) {
			ibpost_test_send_comp(test, p->a, &comp);
			KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)30UL);
			KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
		}
		ibpost_test_no_send_comp(test, p->a);
	}
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.regs, 3ULL);
	KUNIT_EXPECT_EQ(test, tf.free, (u32)FRWR_MAPS);
}

/*
 * An unmap on a QP in ERR cannot invalidate: the MR is deregistered
 * (which revokes the key) and replaced, and only then its context comes
 * back flushed, exactly once; the entry maps again under a new MR.
 */
static void ibpost_frwr_err_unmap_revokes(struct kunit *test)
{
	struct ibpost_frwr_map map = {};
	struct ibpost_test_pair *p;
	struct ibpost_test_frwr tf;
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ibpost_comp comp;
	struct frwr_pages *f;
	u32 old;

	p = frwr_pair(test, 1, 0, PAGE_SIZE);
	f = frwr_pages_new(test, 2, 0x8000);
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(p->a, f->sg, 2,
						 IB_ACCESS_REMOTE_WRITE,
						 &map));
	frwr_send(test, p, (void *)1UL, 16);
	old = map.rkey;
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa, IB_QP_STATE));
	KUNIT_EXPECT_EQ(test, 0, ibpost_frwr_unmap(p->a, &map, (void *)9UL));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)9UL);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_WR_FLUSH_ERR);
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.revoked, 1ULL);
	KUNIT_EXPECT_EQ(test, tf.free, 1U);
	KUNIT_EXPECT_EQ(test, tf.revoking, 0U);
	/* A new MR: another key index. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(p->a, f->sg, 2,
						 IB_ACCESS_REMOTE_WRITE,
						 &map));
	KUNIT_EXPECT_NE(test, map.rkey >> 8, old >> 8);
	/* Its REG_MR flushed with a SEND in ERR: it never ran, DONE. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, (void *)10UL,
						  p->abuf.buf, 8, p->abuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)10UL);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_WR_FLUSH_ERR);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.regs, 2ULL);
	KUNIT_EXPECT_EQ(test, IBPOST_FRWR_DONE,
			ibpost_frwr_unmap(p->a, &map, NULL));
	ibpost_test_no_send_comp(test, p->a);
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.revoked, 1ULL);
	KUNIT_EXPECT_EQ(test, tf.free, 1U);
}

/* The RESET case's send callback: a flush makes it unmap. */
struct frwr_reset {
	struct ibpost_qp *qp;
	struct ibpost_frwr_map map;
	atomic_t seen[4];
	int unmapped;
};

static void frwr_reset_done(struct ibpost_qp *qp, void *context,
			    const struct ib_wc *wc)
{
	struct frwr_reset *r = ibpost_qp_priv(qp);
	uintptr_t i = (uintptr_t)context;

	if (i < ARRAY_SIZE(r->seen))
		atomic_inc(&r->seen[i]);
	if (i == 2 && wc->status == IB_WC_WR_FLUSH_ERR)
		r->unmapped = ibpost_frwr_unmap(qp, &r->map, (void *)3UL);
}

/* The revocation work takes its time: RESET must wait for it. */
static int frwr_slow_revoke(enum ibpost_hook point, void *obj, void *data)
{
	if (point == IBPOST_HOOK_FRWR_REVOKE)
		msleep(300);
	return 0;
}

/*
 * RESET returns every context first, the context of an unmap a flush
 * callback starts on the way included: its LOCAL_INV cannot run (ERR),
 * so its key is revoked (the work slowed down by a hook), and its
 * context is back, flushed, once, before ibpost_qp_modify() returns.
 * IB/RoCE only (an RNR wait holds the SEND).
 */
static void ibpost_frwr_reset_returns_callback_unmap(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };
	struct ibpost_test_frwr tf;
	struct ibpost_qp_attr attr;
	struct frwr_reset *r;
	struct frwr_pages *f;
	u64 c = 0x77;
	int i;

	ibpost_test_need_ib(test, dev,
			    "no RNR wait to hold a SEND until the RESET");
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_inline_data = 64;
	attr.frwr_maps = 2;
	attr.send_done = frwr_reset_done;
	attr.priv = r;
	r->qp = ibpost_test_rnr_pair(test, dev, &attr, 20, 7, NULL);
	f = frwr_pages_new(test, 1, 0xe000);
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(r->qp, f->sg, 1,
						 IB_ACCESS_REMOTE_READ,
						 &r->map));
	/* The REG_MR runs, the SEND waits for a receive that never comes. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(r->qp, (void *)2UL, &c, 8,
						  NULL, IB_SEND_SIGNALED |
						  IB_SEND_INLINE));
	/* The REG_MR's slot comes back: only the SEND's is held. */
	for (i = 0; i < 100 && ibpost_test_in_use(r->qp, true) != 1; i++)
		msleep(20);
	KUNIT_ASSERT_EQ(test, ibpost_test_in_use(r->qp, true), 1U);
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(frwr_slow_revoke, NULL));
	ibpost_test_defer(test, frwr_unhook, NULL);
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(r->qp, &qa, IB_QP_STATE));
	ibpost_test_set_hook(NULL, NULL);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&r->seen[2]));
	KUNIT_EXPECT_EQ(test, 0, r->unmapped);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&r->seen[3]));
	ibpost_test_frwr_get(r->qp, &tf);
	KUNIT_EXPECT_EQ(test, tf.revoked, 1ULL);
	KUNIT_EXPECT_EQ(test, tf.free, 2U);
	msleep(100);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&r->seen[3]));
}

/* Contexts the removal case's send callback saw, by context. */
struct frwr_seen {
	atomic_t cnt[2 * FRWR_REMOVAL_MAPS + 2];
	enum ib_wc_status status[2 * FRWR_REMOVAL_MAPS + 2];
};

static void frwr_seen_done(struct ibpost_qp *qp, void *context,
			   const struct ib_wc *wc)
{
	struct frwr_seen *s = ibpost_qp_priv(qp);
	uintptr_t i = (uintptr_t)context;

	if (i >= ARRAY_SIZE(s->cnt))
		return;
	s->status[i] = wc->status;
	atomic_inc(&s->cnt[i]);
}

/*
 * Device removal with FRWR_REMOVAL_MAPS maps outstanding, a quarter in
 * each state (pending, registered, unmapped with a LOCAL_INV on its way
 * or done, mapped on the peer too): every unmap's context comes back
 * exactly once, every MR is released (the handles still held unmap as
 * DONE on the QP shell the removal left, once), nothing leaks.
 */
static void ibpost_frwr_removal_with_maps(struct kunit *test)
{
	const char *name = ibpost_test_iwarp(ibpost_test_dev(test)) ?
			   "siw2" : "rxe2";
	struct ibpost_dev *dev = ibpost_test_dev2(test, name, "d2");
	struct ibpost_frwr_map *map;
	const int q = FRWR_REMOVAL_MAPS / 4;
	struct ibpost_test_buf *buf;
	struct ibpost_qp_attr attr;
	struct ibpost_qp *a, *b;
	struct frwr_seen *seen;
	struct frwr_pages *f;
	unsigned long end;
	int i, back;

	seen = kunit_kzalloc(test, sizeof(*seen), GFP_KERNEL);
	map = kunit_kcalloc(test, FRWR_REMOVAL_MAPS, sizeof(*map), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	KUNIT_ASSERT_NOT_NULL(test, map);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.frwr_maps = FRWR_REMOVAL_MAPS;
	attr.send_done = frwr_seen_done;
	attr.priv = seen;
	ibpost_test_qp_pair(test, dev, &attr, &attr, &a, &b);
	buf = ibpost_test_buf_new(test, dev, PAGE_SIZE);
	f = frwr_pages_new(test, FRWR_REMOVAL_MAPS, 0xb000);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(b, NULL, buf->buf, 64,
						  buf->mr));
	/* Half registered, riding one SEND (a batch less one)... */
	for (i = 0; i < 2 * q; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(a, &f->sg[i], 1,
							 IB_ACCESS_REMOTE_READ,
							 &map[i]));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(a, (void *)1UL, buf->buf,
						  8, buf->mr,
						  IB_SEND_SIGNALED));
	/* ...a quarter of those unmapped, a quarter pending. */
	for (i = 0; i < q; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_frwr_unmap(a, &map[i],
						  (void *)(uintptr_t)(2 + i)));
	for (i = 2 * q; i < FRWR_REMOVAL_MAPS; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(a, &f->sg[i], 1,
							 IB_ACCESS_REMOTE_READ,
							 &map[i]));

	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh("rdma link delete %s", name));
	/* The SEND's context and each unmap's, exactly once. */
	end = jiffies + 10 * HZ;
	do {
		for (back = 0, i = 1; i < 2 + q; i++)
			back += atomic_read(&seen->cnt[i]) > 0;
		if (back == 1 + q)
			break;
		msleep(20);
	} while (time_before(jiffies, end));
	msleep(100);
	for (i = 1; i < 2 + q; i++)
		KUNIT_EXPECT_EQ_MSG(test, 1, atomic_read(&seen->cnt[i]),
				    "context %d", i);
	for (i = q; i < FRWR_REMOVAL_MAPS; i++) {
		struct ibpost_frwr_map copy = map[i];

		KUNIT_EXPECT_EQ_MSG(test, IBPOST_FRWR_DONE,
				    ibpost_frwr_unmap(a, &map[i], NULL),
				    "map %d", i);
		KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_unmap(a, &copy,
								 NULL));
	}
	KUNIT_EXPECT_EQ(test, -ENODEV, ibpost_frwr_map(a, &f->sg[0], 1,
						       IB_ACCESS_REMOTE_READ,
						       &map[0]));
	/* The device's attributes are not read once it is gone. */
	KUNIT_EXPECT_EQ(test, -ENODEV,
			ibpost_frwr_map(a, &f->sg[0], 1,
					IB_ACCESS_REMOTE_ATOMIC, &map[0]));
}

/* Bad input: refused with a clear errno before anything is taken. */
static void ibpost_frwr_bad_input(struct kunit *test)
{
	struct ibpost_frwr_map map = {}, other = {};
	struct ibpost_test_pair *p;
	struct ibpost_test_frwr tf;
	struct ibpost_qp_attr attr;
	struct scatterlist sg[2];
	struct frwr_pages *f;
	struct page *big;
	struct ibpost_qp *qp;
	int ret;

	p = frwr_pair(test, 2, 4, PAGE_SIZE);
	f = frwr_pages_new(test, 5, 0xa000);
	KUNIT_EXPECT_EQ(test, p->got.frwr_max_pages, 4U);
	/* More entries than pages a map covers. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_map(p->a, f->sg, 5,
						       IB_ACCESS_REMOTE_READ,
						       &map));
	/* Access: none, local only, undefined bits. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_map(p->a, f->sg, 1, 0,
						       &map));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_frwr_map(p->a, f->sg, 1, IB_ACCESS_LOCAL_WRITE,
					&map));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_frwr_map(p->a, f->sg, 1,
					IB_ACCESS_REMOTE_READ | BIT(20),
					&map));
	/* No sg list, no entries, no handle. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_map(p->a, NULL, 1,
						       IB_ACCESS_REMOTE_READ,
						       &map));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_map(p->a, f->sg, 0,
						       IB_ACCESS_REMOTE_READ,
						       &map));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_map(p->a, f->sg, 1,
						       IB_ACCESS_REMOTE_READ,
						       NULL));
	/* A middle entry that does not start a page: a gap. */
	sg_init_table(sg, 2);
	sg_set_page(&sg[0], f->blocks[0], PAGE_SIZE - 100, 0);
	sg_set_page(&sg[1], f->blocks[1], PAGE_SIZE, 0);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_map(p->a, sg, 2,
						       IB_ACCESS_REMOTE_READ,
						       &map));
	/* Five pages in two entries: more than the four a map covers. */
	big = alloc_pages(GFP_KERNEL, 2);
	KUNIT_ASSERT_NOT_NULL(test, big);
	sg_init_table(sg, 2);
	sg_set_page(&sg[0], big, 4 * PAGE_SIZE, 0);
	sg_set_page(&sg[1], f->blocks[2], PAGE_SIZE, 0);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_map(p->a, sg, 2,
						       IB_ACCESS_REMOTE_READ,
						       &map));
	__free_pages(big, 2);
	/* Atomics where the device has none. */
	ret = ibpost_frwr_map(p->a, f->sg, 1, IB_ACCESS_REMOTE_ATOMIC, &map);
	if (ibpost_test_iwarp(p->dev)) {
		KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, ret);
	} else {
		KUNIT_EXPECT_EQ(test, 0, ret);
		KUNIT_EXPECT_EQ(test, IBPOST_FRWR_DONE,
				ibpost_frwr_unmap(p->a, &map, NULL));
	}
	ibpost_test_frwr_get(p->a, &tf);
	KUNIT_EXPECT_EQ(test, tf.free, 2U);
	KUNIT_EXPECT_EQ(test, tf.pending, 0U);

	/* Handles: used again, of another QP, none. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_frwr_map(p->a, f->sg, 1,
						 IB_ACCESS_REMOTE_READ, &map));
	other = map;
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_unmap(p->b, &other, NULL));
	KUNIT_EXPECT_EQ(test, IBPOST_FRWR_DONE,
			ibpost_frwr_unmap(p->a, &map, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_unmap(p->a, &map, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_unmap(p->a, &other, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_frwr_unmap(p->a, NULL, NULL));

	/* Creation: pages beyond the device's, a UD QP. */
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.frwr_maps = 2;
	attr.frwr_max_pages = 1 << 30;
	qp = ibpost_qp_create(p->dev, &attr);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(qp), -EINVAL);
	if (!IS_ERR(qp))
		ibpost_qp_destroy(qp);
	if (ibpost_test_iwarp(p->dev))
		return;
	ibpost_test_attr(&attr, IB_QPT_UD);
	attr.frwr_maps = 2;
	qp = ibpost_qp_create(p->dev, &attr);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(qp), -EINVAL);
	if (!IS_ERR(qp))
		ibpost_qp_destroy(qp);
}

static struct kunit_case ibpost_frwr_cases[] = {
	KUNIT_CASE_PARAM(ibpost_frwr_peer_writes_then_invalidates,
			 frwr_npages_gen_params),
	KUNIT_CASE(ibpost_frwr_unmap_posts_local_inv),
	KUNIT_CASE(ibpost_frwr_pool_exhaustion_eagain),
	KUNIT_CASE(ibpost_frwr_first_wr_keeps_its_uses),
	KUNIT_CASE(ibpost_frwr_reserve_keeps_unmap_room),
	KUNIT_CASE(ibpost_frwr_parked_completions_hold_the_reserve),
	KUNIT_CASE(ibpost_frwr_refused_reg_mr_names_the_wr),
	KUNIT_CASE(ibpost_frwr_reg_mr_fails_at_execution),
	KUNIT_CASE(ibpost_frwr_err_unmap_revokes),
	KUNIT_CASE(ibpost_frwr_reset_returns_callback_unmap),
	KUNIT_CASE(ibpost_frwr_removal_with_maps),
	KUNIT_CASE(ibpost_frwr_bad_input),
	{}
};

static struct kunit_suite ibpost_frwr_suite = {
	.name = "ibpost_frwr",
	.test_cases = ibpost_frwr_cases,
};

kunit_test_suites(&ibpost_frwr_suite);
