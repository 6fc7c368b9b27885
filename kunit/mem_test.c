// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_mem: memory a ULP holds in its own form (an sg_table of
 * scattered pages, one physically contiguous page range, a vmalloc
 * buffer, its own DMA mapping) moves through SEND, WRITE and READ byte
 * for byte, in WRs whose SGEs are exactly the segments the range
 * touches, within the QP's SGEs, and no byte lands outside the range;
 * ibpost maps a copy of the consumer's sg_table, which may go once the
 * MR is registered; each mapping direction refuses the WRs it cannot
 * serve before the provider, in the middle of a chain too; a busy MR
 * stays until its WRs are done, and is free once they are; ibpost syncs
 * the memory it mapped, once per SGE, for the device when a WR is posted
 * and for the CPU before the context of a WR that wrote it comes back (a
 * flush, an SRQ's receive, a device removal's flush too) or before the
 * post that refused it returns, never the memory the consumer mapped
 * itself; and a consumer's syncs of memory a peer reaches through an
 * rkey (ibpost_mr_sync_for_cpu(), ibpost_mr_sync_for_device()) sync each
 * DMA segment once.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"
#include "../drivers/dma_trace.h"

/*
 * An sg_table's first entry starts MEM_HEAD bytes into its page, its last
 * ends MEM_TAIL bytes before its page's end. The pairs' WRs take up to
 * MEM_MAX_SGE SGEs, their buffers MEM_WIN bytes: a window of that many
 * pages at byte MEM_GUARD, canaries around it. The sync probe watches up
 * to MEM_RANGES DMA ranges (a consumer's own mapping of three pages) and
 * MEM_WATCH lengths. A second device, for the cases that need one, is on
 * netdev MEM_NETDEV.
 */
#define MEM_HEAD	100
#define MEM_TAIL	200
#define MEM_MAX_SGE	8
#define MEM_GUARD	64
#define MEM_WIN		(MEM_MAX_SGE * PAGE_SIZE + 2 * MEM_GUARD)
#define MEM_RANGES	3
#define MEM_WATCH	12
#define MEM_NETDEV	"d2"

/*
 * Pages a consumer holds, and what every byte of them should hold. The
 * MR's bytes are [MEM_HEAD, n * PAGE_SIZE - MEM_TAIL) of the pages laid
 * end to end: one sg_table entry per page, the first from MEM_HEAD, the
 * last up to PAGE_SIZE - MEM_TAIL, or one page range (reg_page). A
 * scattered page is the first of an order-1 block whose second page stays
 * unused: no page follows the one before it, so no two entries can merge
 * into one DMA segment. @want mirrors the pages, the bytes outside the MR
 * too: they are the canaries.
 */
struct mem_pages {
	unsigned int n, nblocks, order;
	struct page **pages, **blocks;
	struct sg_table sgt;
	bool table;
	size_t len;
	u8 *want;
	struct ibpost_mr *mr;
	struct ib_device *mapped;	/* the consumer's own mapping's */
	enum dma_data_direction map_dir;
};

/* At test exit, or at ibpost_test_undefer(): dereg, unmap, free. */
static void mem_free(void *data)
{
	struct mem_pages *m = data;
	unsigned int i;

	/* Pages an MR may still map are leaked, not freed under it. */
	if (m->mr && WARN_ON(ibpost_dereg_mr(m->mr)))
		return;
	m->mr = NULL;
	if (m->mapped)
		ib_dma_unmap_sg(m->mapped, m->sgt.sgl, m->sgt.orig_nents,
				m->map_dir);
	m->mapped = NULL;
	if (m->table)
		sg_free_table(&m->sgt);
	m->table = false;
	for (i = 0; i < m->nblocks; i++)
		__free_pages(m->blocks[i], m->order);
	m->nblocks = 0;
	vfree(m->want);
	m->want = NULL;
}

/* Page i holds the pattern of @seed + i; so does its mirror. */
static void mem_fill(struct mem_pages *m, u32 seed)
{
	unsigned int i;

	for (i = 0; i < m->n; i++) {
		u8 *pg = page_address(m->pages[i]);

		ibpost_test_fill(pg, PAGE_SIZE, seed + i);
		memcpy(m->want + i * PAGE_SIZE, pg, PAGE_SIZE);
	}
}

/* What the MR's byte @off holds (as mem_check() proves). */
static u8 *mem_at(const struct mem_pages *m, size_t off)
{
	return m->want + MEM_HEAD + off;
}

/* @len bytes of @src landed at the MR's byte @off. */
static void mem_landed(struct mem_pages *m, size_t off, const void *src,
		       size_t len)
{
	memcpy(mem_at(m, off), src, len);
}

/* Every byte of the pages, in the MR and around it, is what it should be. */
static void mem_check(struct kunit *test, const struct mem_pages *m)
{
	unsigned int i;
	size_t j;
	int diff;

	for (i = 0; i < m->n; i++) {
		const u8 *pg = page_address(m->pages[i]);
		const u8 *w = m->want + i * PAGE_SIZE;

		diff = memcmp(pg, w, PAGE_SIZE);
		j = 0;
		while (diff && pg[j] == w[j])
			j++;
		KUNIT_ASSERT_EQ_MSG(test, 0, diff,
				    "page %u of %u, byte %zu (MR offset %ld): %#x, want %#x",
				    i, m->n, j,
				    (long)(i * PAGE_SIZE + j) - MEM_HEAD,
				    pg[j], w[j]);
	}
}

/* Bytes from the MR's byte @off to the end of the @k-th page it touches. */
static u32 mem_piece(const struct mem_pages *m, size_t off, u32 k)
{
	size_t at = MEM_HEAD + off;

	return min_t(size_t, (at / PAGE_SIZE + k) * PAGE_SIZE,
		     m->n * PAGE_SIZE - MEM_TAIL) - at;
}

/* The pages (entries, DMA segments) [@off, @off + @len) touches. */
static int mem_nseg(size_t off, size_t len)
{
	return (MEM_HEAD + off + len - 1) / PAGE_SIZE -
	       (MEM_HEAD + off) / PAGE_SIZE + 1;
}

static struct mem_pages *mem_alloc(struct kunit *test, unsigned int n,
				   bool contig, u32 seed)
{
	struct mem_pages *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct scatterlist *sg;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, m);
	m->pages = kunit_kcalloc(test, n, sizeof(*m->pages), GFP_KERNEL);
	m->blocks = kunit_kcalloc(test, n, sizeof(*m->blocks), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m->pages);
	KUNIT_ASSERT_NOT_NULL(test, m->blocks);
	ibpost_test_defer(test, mem_free, m);
	m->n = n;
	m->order = contig ? get_order(n * PAGE_SIZE) : 1;
	m->len = n * PAGE_SIZE - MEM_HEAD - MEM_TAIL;
	m->want = vmalloc(n * PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, m->want);
	for (i = 0; i < (contig ? 1 : n); i++) {
		m->blocks[i] = alloc_pages(GFP_KERNEL, m->order);
		KUNIT_ASSERT_NOT_NULL(test, m->blocks[i]);
		m->nblocks++;
	}
	for (i = 0; i < n; i++)
		m->pages[i] = contig ? nth_page(m->blocks[0], i) : m->blocks[i];
	mem_fill(m, seed);
	if (contig)
		return m;
	KUNIT_ASSERT_EQ(test, 0, sg_alloc_table(&m->sgt, n, GFP_KERNEL));
	m->table = true;
	for_each_sg(m->sgt.sgl, sg, n, i) {
		unsigned int off = i ? 0 : MEM_HEAD;
		unsigned int end = i < n - 1 ? PAGE_SIZE : PAGE_SIZE - MEM_TAIL;

		sg_set_page(sg, m->pages[i], end - off, off);
		if (i)
			KUNIT_ASSERT_NE(test, page_to_pfn(m->pages[i]),
					page_to_pfn(m->pages[i - 1]) + 1);
	}
	return m;
}

static void mem_reg(struct kunit *test, struct mem_pages *m,
		    struct ibpost_mr *mr)
{
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	m->mr = mr;
	KUNIT_EXPECT_EQ(test, m->len, ibpost_mr_length(mr));
}

/*
 * The end of a case that posted with *@mr, its WRs' completions taken:
 * the MR deregisters now (a use a WR leaked fails the case here; the
 * cleanup's dereg would only warn), and the cleanup leaves it. One still
 * registered stays for the cleanup, which frees no memory under it.
 */
static void mem_dereg(struct kunit *test, struct ibpost_mr **mr)
{
	int ret = ibpost_dereg_mr(*mr);

	KUNIT_EXPECT_EQ(test, 0, ret);
	if (!ret)
		*mr = NULL;
}

/* @n scattered pages in an sg_table, registered for @dir (DMA_NONE: not). */
static struct mem_pages *mem_sgt(struct kunit *test, struct ibpost_dev *dev,
				 unsigned int n, enum dma_data_direction dir,
				 u32 seed)
{
	struct mem_pages *m = mem_alloc(test, n, false, seed);

	if (dir != DMA_NONE)
		mem_reg(test, m, ibpost_reg_sgt(dev, &m->sgt, dir));
	return m;
}

/* A registration that must be refused with -EINVAL; undone if it was not. */
static void mem_refused(struct kunit *test, struct ibpost_mr *mr,
			const char *what)
{
	if (!IS_ERR_OR_NULL(mr))
		KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(mr));
	KUNIT_EXPECT_EQ_MSG(test, -EINVAL, PTR_ERR_OR_ZERO(mr), "%s", what);
}

/* A vmalloc buffer with a pattern, registered; freed at test exit. */
struct mem_vm {
	u8 *buf;
	struct ibpost_mr *mr;
};

static void mem_vm_free(void *data)
{
	struct mem_vm *v = data;

	if (v->mr && WARN_ON(ibpost_dereg_mr(v->mr)))
		return;
	vfree(v->buf);
}

static struct mem_vm *mem_vm(struct kunit *test, struct ibpost_dev *dev,
			     size_t len, enum dma_data_direction dir, u32 seed)
{
	struct mem_vm *v = kunit_kzalloc(test, sizeof(*v), GFP_KERNEL);
	struct ibpost_mr *mr;

	KUNIT_ASSERT_NOT_NULL(test, v);
	ibpost_test_defer(test, mem_vm_free, v);
	v->buf = vmalloc(len);
	KUNIT_ASSERT_NOT_NULL(test, v->buf);
	ibpost_test_fill(v->buf, len, seed);
	mr = ibpost_reg_vmalloc(dev, v->buf, len, dir);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	v->mr = mr;
	KUNIT_EXPECT_EQ(test, len, ibpost_mr_length(mr));
	return v;
}

/* The SGEs a WR of @p may take on both sides, up to MEM_MAX_SGE. */
static u32 mem_sge(const struct ibpost_test_pair *p)
{
	return min_t(u32, min_t(u32, p->got.max_send_sge,
				p->got.max_recv_sge), MEM_MAX_SGE);
}

/* A pair of up to MEM_MAX_SGE SGEs a WR, buffers of MEM_WIN bytes. */
static struct ibpost_test_pair *mem_pair(struct kunit *test)
{
	const struct ib_device_attr *da =
		&ibpost_dev_ibdev(ibpost_test_dev(test))->attrs;
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_sge = min_t(u32, da->max_send_sge, MEM_MAX_SGE);
	attr.max_recv_sge = min_t(u32, da->max_recv_sge, MEM_MAX_SGE);
	p = ibpost_test_pair_len(test, &attr, MEM_WIN);
	/* Every case has WRs of three pages. */
	KUNIT_ASSERT_GE(test, mem_sge(p), 3U);
	return p;
}

/*
 * ibpost_post_mr() on @p->a, signaled: a READ from byte MEM_GUARD of
 * @p->br, a WRITE to byte MEM_GUARD of @p->bw.
 */
static int mem_post(struct ibpost_test_pair *p, void *ctx,
		    enum ib_wr_opcode op, struct ibpost_mr *mr, u64 off,
		    u32 len)
{
	struct ibpost_test_buf *r = op == IB_WR_RDMA_READ ? &p->br : &p->bw;
	u64 raddr = ibpost_mr_remote_addr(r->mr) + MEM_GUARD;
	bool rdma = op != IB_WR_SEND;

	return ibpost_post_mr(p->a, ctx, op, mr, off, len, IB_SEND_SIGNALED,
			      rdma ? raddr : 0,
			      rdma ? ibpost_mr_rkey(r->mr) : 0);
}

/* mem_post(), and its successful completion. */
static void mem_post_ok(struct kunit *test, struct ibpost_test_pair *p,
			void *ctx, enum ib_wr_opcode op, struct ibpost_mr *mr,
			u64 off, u32 len)
{
	KUNIT_ASSERT_EQ(test, 0, mem_post(p, ctx, op, mr, off, len));
	ibpost_test_send_ok(test, p->a, ctx);
}

/* The send queue of @p->a and the receive queue of @p->b. */
struct mem_queues {
	struct ibpost_test_queue s, r;
};

static void mem_queues_get(struct ibpost_test_pair *p, struct mem_queues *q)
{
	ibpost_test_queue_get(p->a, true, &q->s);
	ibpost_test_queue_get(p->b, false, &q->r);
}

/* Since @q0, nothing was queued on @p, nor refused by the provider. */
static void mem_none_queued(struct kunit *test, struct ibpost_test_pair *p,
			    const struct mem_queues *q0)
{
	struct mem_queues q;

	mem_queues_get(p, &q);
	KUNIT_EXPECT_EQ(test, q0->s.posted, q.s.posted);
	KUNIT_EXPECT_EQ(test, q0->r.posted, q.r.posted);
	KUNIT_EXPECT_EQ(test, q0->s.provider_errors, q.s.provider_errors);
	KUNIT_EXPECT_EQ(test, q0->r.provider_errors, q.r.provider_errors);
	ibpost_test_no_send_comp(test, p->a);
}

/* The lengths the sync probe counts, one per step of the trace case. */
enum mem_watch {
	MW_SEND, MW_RECV, MW_READ, MW_WRITE, MW_SEG0, MW_SEG1, MW_SEG2,
	MW_RECV3, MW_FLUSH, MW_CB_OK, MW_CB_FLUSH, MW_N
};

static_assert(MW_N <= MEM_WATCH);

/*
 * What the probe of ibpost_dma_sync saw on the device under test: every
 * sync (@events); per watched length (0: none), syncs for the device
 * ([0]) and the CPU ([1]) and the directions (bits); syncs touching a
 * watched DMA range; and, as a receive callback whose context is a watch
 * index ran, the CPU syncs of that length seen then (-1: it never ran),
 * its calls, status and length.
 */
struct mem_trace {
	const struct ib_device *ibdev;
	u32 len[MEM_WATCH];
	atomic_t n[MEM_WATCH][2], dirs[MEM_WATCH], at_cb[MEM_WATCH];
	atomic_t cbs[MEM_WATCH];
	enum ib_wc_status status[MEM_WATCH];
	u32 byte_len[MEM_WATCH];
	u64 lo[MEM_RANGES], hi[MEM_RANGES];
	int ranges;
	atomic_t in_range, calls, events;
};

static void mem_probe(void *data, const struct ib_device *ibdev, u64 addr,
		      u32 len, int dir, bool for_cpu)
{
	struct mem_trace *t = data;
	int i;

	if (ibdev != t->ibdev)
		return;
	atomic_inc(&t->events);
	for (i = 0; i < t->ranges; i++)
		if (addr < t->hi[i] && addr + len > t->lo[i])
			atomic_inc(&t->in_range);
	for (i = 0; i < MEM_WATCH; i++) {
		if (!t->len[i] || len != t->len[i])
			continue;
		atomic_inc(&t->n[i][for_cpu]);
		atomic_or(BIT(clamp(dir, 0, 7)), &t->dirs[i]);
	}
}

/* Before any pair whose callbacks record into it: it outlives them. */
static struct mem_trace *mem_trace_new(struct kunit *test,
				       struct ibpost_dev *dev)
{
	struct mem_trace *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->ibdev = ibpost_dev_ibdev(dev);
	for (i = 0; i < MEM_WATCH; i++)
		atomic_set(&t->at_cb[i], -1);
	return t;
}

/* Watch the DMA range [@addr, +@len); set before the probe is on. */
static void mem_trace_range(struct kunit *test, struct mem_trace *t, u64 addr,
			    u32 len)
{
	KUNIT_ASSERT_LT(test, t->ranges, MEM_RANGES);
	t->lo[t->ranges] = addr;
	t->hi[t->ranges] = addr + len;
	t->ranges++;
}

static void mem_trace_off(void *data)
{
	unregister_trace_ibpost_dma_sync(mem_probe, data);
	tracepoint_synchronize_unregister();
}

static void mem_trace_on(struct kunit *test, struct mem_trace *t)
{
	KUNIT_ASSERT_EQ(test, 0, register_trace_ibpost_dma_sync(mem_probe, t));
	ibpost_test_defer(test, mem_trace_off, t);
}

/* The syncs of watched length @w so far: @dev for the device, @cpu CPU. */
static void mem_seen(struct kunit *test, struct mem_trace *t, int w, int dev,
		     int cpu)
{
	KUNIT_EXPECT_EQ_MSG(test, dev, atomic_read(&t->n[w][0]),
			    "syncs for the device of %u bytes", t->len[w]);
	KUNIT_EXPECT_EQ_MSG(test, cpu, atomic_read(&t->n[w][1]),
			    "syncs for the CPU of %u bytes", t->len[w]);
}

/* The syncs of watched length @w were all in direction @dir. */
static void mem_seen_dir(struct kunit *test, struct mem_trace *t, int w,
			 enum dma_data_direction dir)
{
	KUNIT_EXPECT_EQ_MSG(test, (int)BIT(dir), atomic_read(&t->dirs[w]),
			    "directions of the syncs of %u bytes", t->len[w]);
}

/*
 * A receive context came back: when it is a watch index, the CPU syncs
 * of its length so far, its status and length, one call more of it.
 */
static void mem_trace_record(struct mem_trace *t, void *context,
			     const struct ib_wc *wc)
{
	unsigned long w = (unsigned long)context;

	if (w < MEM_WATCH) {
		atomic_set(&t->at_cb[w], atomic_read(&t->n[w][1]));
		t->status[w] = wc->status;
		t->byte_len[w] = wc->byte_len;
		atomic_inc(&t->cbs[w]);
	}
	/* What it recorded is seen with the count: mem_trace_wait(). */
	smp_mb__before_atomic();
	atomic_inc(&t->calls);
}

/* A QP's receive callback: the QP's priv is the trace. */
static void mem_trace_recv_done(struct ibpost_qp *qp, void *context,
				const struct ib_wc *wc)
{
	mem_trace_record(ibpost_qp_priv(qp), context, wc);
}

/* Wait up to 5 s for @want callbacks; the count then. */
static int mem_trace_wait(struct mem_trace *t, int want)
{
	int i, calls;

	for (i = 0; i < 250 && atomic_read(&t->calls) < want; i++)
		msleep(20);
	calls = atomic_read(&t->calls);
	/* Pairs with mem_trace_record()'s barrier. */
	smp_rmb();
	return calls;
}

/*
 * Receives whose contexts come back through a callback, one successful
 * and one flushed: each callback runs after its receive's CPU sync.
 */
static void mem_trace_callbacks(struct kunit *test, struct mem_trace *t)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ibpost_test_pair *q;
	struct ibpost_qp_attr attr;
	int w;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.recv_done = mem_trace_recv_done;
	attr.priv = t;
	q = ibpost_test_pair(test, &attr);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(q->b, CTX(MW_CB_OK),
						  q->bbuf.buf, 700,
						  q->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(q->b, CTX(MW_CB_FLUSH),
						  (u8 *)q->bbuf.buf + 1024,
						  900, q->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(q->a, CTX(1), q->abuf.buf,
						  600, q->abuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, q->a, CTX(1));
	KUNIT_ASSERT_EQ(test, 1, mem_trace_wait(t, 1));
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(q->b, &qa, IB_QP_STATE));
	KUNIT_ASSERT_EQ(test, 2, mem_trace_wait(t, 2));
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, t->status[MW_CB_OK]);
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, t->status[MW_CB_FLUSH]);
	for (w = MW_CB_OK; w <= MW_CB_FLUSH; w++) {
		KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->cbs[w]));
		KUNIT_EXPECT_EQ_MSG(test, 1, atomic_read(&t->at_cb[w]),
				    "CPU syncs of %u B as its callback ran",
				    t->len[w]);
		mem_seen(test, t, w, 1, 1);
	}
}

/*
 * The consumer's own mapping of @m's table for @dir, declared with
 * ibpost_reg_dma(); its DMA entries are ranges @t watches, when given.
 * Return: the mapped entries.
 */
static int mem_map_dma(struct kunit *test, struct ibpost_dev *dev,
		       struct mem_pages *m, enum dma_data_direction dir,
		       struct mem_trace *t)
{
	struct ib_device *ibdev = ibpost_dev_ibdev(dev);
	struct scatterlist *sg;
	size_t total = 0;
	int n, i;

	n = ib_dma_map_sg(ibdev, m->sgt.sgl, m->sgt.orig_nents, dir);
	KUNIT_ASSERT_GT(test, n, 0);
	m->mapped = ibdev;
	m->map_dir = dir;
	m->sgt.nents = n;
	for_each_sg(m->sgt.sgl, sg, n, i) {
		if (t)
			mem_trace_range(test, t, sg_dma_address(sg),
					sg_dma_len(sg));
		total += sg_dma_len(sg);
	}
	KUNIT_ASSERT_EQ(test, m->len, total);
	mem_reg(test, m, ibpost_reg_dma(dev, m->sgt.sgl, n, dir));
	return n;
}

static const unsigned int mem_npages[] = { 1, 3, 17, 64 };

static void mem_npages_desc(const unsigned int *n, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u page%s", *n,
		 *n == 1 ? "" : "s");
}

KUNIT_ARRAY_PARAM(mem_npages, mem_npages, mem_npages_desc);

/*
 * All of an sg_table MR of scattered pages (partial first and last) goes
 * out by SEND into the same bytes of another, by WRITE, and comes in by
 * READ, in pieces of as many pages as a WR takes (a READ: as the
 * device's READ takes, one on iWARP), each checked with every byte
 * around it.
 */
static void ibpost_mem_sgt_pages_every_opcode(struct kunit *test)
{
	unsigned int n = *(const unsigned int *)test->param_value;
	struct ibpost_dev *dev = ibpost_test_dev(test);
	/* Before the pair: deregistered once its QPs are gone. */
	struct mem_pages *src = mem_sgt(test, dev, n, DMA_TO_DEVICE, 11);
	struct mem_pages *dst = mem_sgt(test, dev, n, DMA_BIDIRECTIONAL, 12);
	struct ibpost_test_pair *p = mem_pair(test);
	u8 *br = (u8 *)p->br.buf + MEM_GUARD;
	u32 k = mem_sge(p), rd, len, i;
	struct ib_sge sge[MEM_MAX_SGE];
	size_t off;
	u8 *exp;

	exp = kunit_kmalloc(test, MEM_WIN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, exp);
	for (off = 0; off < src->len; off += len) {
		len = mem_piece(src, off, k);
		KUNIT_EXPECT_EQ(test, mem_nseg(off, len),
				ibpost_mr_sgl(src->mr, off, len, sge, k));
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv_mr(p->b, CTX(1),
							     dst->mr, off,
							     len));
		mem_post_ok(test, p, CTX(2), IB_WR_SEND, src->mr, off, len);
		ibpost_test_recv_ok(test, p->b, CTX(1), len);
		mem_landed(dst, off, mem_at(src, off), len);
		mem_check(test, dst);
	}
	mem_check(test, src);

	/* A first WRITE of 1000 bytes: the others start inside a page. */
	for (off = 0; off < src->len; off += len) {
		len = min_t(u32, mem_piece(src, off, k), off ? U32_MAX : 1000);
		ibpost_test_fill(p->bw.buf, MEM_WIN, 13);
		ibpost_test_fill(exp, MEM_WIN, 13);
		mem_post_ok(test, p, CTX(3), IB_WR_RDMA_WRITE, src->mr, off,
			    len);
		memcpy(exp + MEM_GUARD, mem_at(src, off), len);
		ibpost_test_expect_canary(test, p->bw.buf, exp, MEM_WIN);
	}

	/* A READ's sinks: max_sge_rd (0: no limit of its own), iWARP one. */
	rd = ibpost_dev_ibdev(p->dev)->attrs.max_sge_rd;
	rd = ibpost_test_iwarp(p->dev) ? 1 : min_t(u32, k, rd ?: k);
	KUNIT_ASSERT_GE(test, rd, 1U);
	/* A READ of one SGE (iWARP) cannot span two scattered pages. */
	if (rd == 1 && n > 1)
		KUNIT_EXPECT_EQ(test, -EINVAL,
				mem_post(p, CTX(4), IB_WR_RDMA_READ, dst->mr, 0,
					 mem_piece(dst, 0, 2)));
	for (off = 0, i = 0; off < dst->len; off += len, i++) {
		len = mem_piece(dst, off, rd);
		ibpost_test_fill(p->br.buf, MEM_WIN, 20 + i);
		mem_post_ok(test, p, CTX(5), IB_WR_RDMA_READ, dst->mr, off,
			    len);
		mem_landed(dst, off, br, len);
		mem_check(test, dst);
	}
	ibpost_test_no_send_comp(test, p->a);
	mem_dereg(test, &src->mr);
	mem_dereg(test, &dst->mr);
}

/*
 * A vmalloc MR takes kernel addresses (seed operations, sendv) and
 * offsets alike, a range across page boundaries split as it needs.
 */
static void ibpost_mem_vmalloc_address_and_offset_forms(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	const size_t len = 5 * PAGE_SIZE + 300;
	struct mem_vm *s = mem_vm(test, dev, len, DMA_TO_DEVICE, 21);
	struct mem_vm *d = mem_vm(test, dev, len, DMA_FROM_DEVICE, 22);
	struct ibpost_test_pair *p = mem_pair(test);
	u8 *sb = s->buf, *db = d->buf;
	struct ibpost_sge out[2] = {
		{ sb + 3 * PAGE_SIZE - 10, 20, s->mr },
		{ sb + 4 * PAGE_SIZE + 7, 50, s->mr },
	};
	u8 *exp = kunit_kmalloc(test, len, GFP_KERNEL);
	struct ib_sge sge[2];

	KUNIT_ASSERT_NOT_NULL(test, exp);
	memcpy(exp, db, len);
	/* Addresses on both sides, each range across a page boundary. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1),
						  db + 3 * PAGE_SIZE - 150,
						  300, d->mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(2),
						  sb + PAGE_SIZE - 100, 300,
						  s->mr, IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, CTX(2));
	ibpost_test_recv_ok(test, p->b, CTX(1), 300);
	memcpy(exp + 3 * PAGE_SIZE - 150, sb + PAGE_SIZE - 100, 300);
	ibpost_test_expect_canary(test, db, exp, len);

	/* sendv, a piece across a boundary, into an offset across another. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv_mr(p->b, CTX(3), d->mr,
						     4 * PAGE_SIZE - 30, 70));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_sendv(p->a, CTX(4), out, 2,
						   IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, CTX(4));
	ibpost_test_recv_ok(test, p->b, CTX(3), 70);
	memcpy(exp + 4 * PAGE_SIZE - 30, out[0].addr, 20);
	memcpy(exp + 4 * PAGE_SIZE - 10, out[1].addr, 50);
	ibpost_test_expect_canary(test, db, exp, len);

	/* An offset over three pages into an address over the last two. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(5),
						  db + 4 * PAGE_SIZE + 100,
						  PAGE_SIZE + 200, d->mr));
	mem_post_ok(test, p, CTX(6), IB_WR_SEND, s->mr, 2 * PAGE_SIZE - 50,
		    PAGE_SIZE + 100);
	ibpost_test_recv_ok(test, p->b, CTX(5), PAGE_SIZE + 100);
	memcpy(exp + 4 * PAGE_SIZE + 100, sb + 2 * PAGE_SIZE - 50,
	       PAGE_SIZE + 100);
	ibpost_test_expect_canary(test, db, exp, len);

	/* An empty SEND from a vmalloc MR, as from any MR: 0 bytes arrive. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(7), db, 10,
						  d->mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(8),
						  sb + PAGE_SIZE, 0, s->mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, CTX(8));
	ibpost_test_recv_ok(test, p->b, CTX(7), 0);
	ibpost_test_expect_canary(test, db, exp, len);

	/* Not a byte beyond the buffer, in either form. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_send(p->a, NULL,
							sb + len - 10, 20,
							s->mr, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_send(p->a, NULL, sb - 1, 20,
							s->mr, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_recv(p->b, NULL,
							db + len - 10, 20,
							d->mr));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sgl(s->mr, len - 10, 11, sge,
						     2));
	ibpost_test_no_send_comp(test, p->a);
	mem_dereg(test, &s->mr);
	mem_dereg(test, &d->mr);
	/* A length past the vmalloc area (its guard page): refused, no oops. */
	mem_refused(test, ibpost_reg_vmalloc(dev, s->buf,
					     PAGE_ALIGN(len) + PAGE_SIZE,
					     DMA_TO_DEVICE),
		    "vmalloc length past its area");
}

/* One SGE for [@off, +@len) of @m's MR, inside one of its segments. */
static void mem_sge1(struct kunit *test, const struct mem_pages *m, u64 off,
		     u32 len, struct ib_sge *sge)
{
	KUNIT_ASSERT_EQ(test, 1, ibpost_mr_sgl(m->mr, off, len, sge, 1));
}

/*
 * The same pages registered twice, for the device to read (first) and
 * to write: a chain's receive SGE, which both MRs hold, is the writable
 * one's; a SEND SGE the readable one's. Each dereg says 0 after, so each
 * use was counted on the MR that allows it.
 */
static void ibpost_mem_same_pages_both_ways(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct mem_pages *m = mem_sgt(test, dev, 2, DMA_TO_DEVICE, 71);
	struct ibpost_test_pair *p = mem_pair(test);
	struct ib_recv_wr rwr = { .wr_id = 1, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = 2, .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED,
				  .num_sge = 1 };
	const struct ib_send_wr *sbad;
	const struct ib_recv_wr *rbad;
	struct ibpost_mr *from;
	struct ib_sge rs, ss;

	from = ibpost_reg_sgt(dev, &m->sgt, DMA_FROM_DEVICE);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, from);
	/* On p->a (the peer's SEND lands there); both MRs hold the SGE. */
	KUNIT_ASSERT_EQ(test, 1, ibpost_mr_sgl(from, 0, 300, &rs, 1));
	mem_sge1(test, m, 0, 300, &ss);
	KUNIT_EXPECT_EQ(test, rs.addr, ss.addr);
	rwr.sg_list = &rs;
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv_list(p->a, &rwr, &rbad));
	/* ...and the same SGE as a source, to p->b. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(3), p->bbuf.buf,
						  300, p->bbuf.mr));
	swr.sg_list = &ss;
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, &swr, &sbad));
	ibpost_test_send_ok(test, p->a, CTX(2));
	ibpost_test_recv_ok(test, p->b, CTX(3), 300);
	KUNIT_EXPECT_EQ(test, 0, memcmp(p->bbuf.buf, mem_at(m, 0), 300));
	ibpost_test_fill(p->bbuf.buf, 200, 77);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->b, CTX(4), p->bbuf.buf,
						  200, p->bbuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->b, CTX(4));
	ibpost_test_recv_ok(test, p->a, CTX(1), 200);
	KUNIT_EXPECT_EQ(test, 0,
			memcmp(page_address(m->pages[0]) + MEM_HEAD,
			       p->bbuf.buf, 200));
	KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(from));
	mem_dereg(test, &m->mr);
}

/*
 * One physically contiguous page range (ibpost_reg_page()) is one DMA
 * segment: a range over several of its pages takes one SGE, a READ too.
 */
static void ibpost_mem_page_range_one_segment(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct mem_pages *m = mem_alloc(test, 4, true, 41);
	struct ibpost_test_pair *p;
	u32 rlen = 2 * PAGE_SIZE + 500;
	struct ib_sge sge;
	u8 *exp;

	mem_reg(test, m, ibpost_reg_page(dev, m->pages[0], MEM_HEAD, m->len,
					 DMA_BIDIRECTIONAL));
	p = mem_pair(test);
	KUNIT_ASSERT_EQ(test, 1, ibpost_mr_sgl(m->mr, 0, m->len, &sge, 1));
	KUNIT_EXPECT_EQ(test, (u32)m->len, sge.length);

	exp = ibpost_test_canary(test, p->bbuf.buf, MEM_WIN, 42);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1),
						  (u8 *)p->bbuf.buf + MEM_GUARD,
						  m->len, p->bbuf.mr));
	mem_post_ok(test, p, CTX(2), IB_WR_SEND, m->mr, 0, m->len);
	ibpost_test_recv_ok(test, p->b, CTX(1), m->len);
	memcpy(exp + MEM_GUARD, mem_at(m, 0), m->len);
	ibpost_test_expect_canary(test, p->bbuf.buf, exp, MEM_WIN);

	/* A READ across two page boundaries: one SGE, on iWARP too. */
	ibpost_test_fill(p->br.buf, MEM_WIN, 43);
	mem_post_ok(test, p, CTX(3), IB_WR_RDMA_READ, m->mr, 1000, rlen);
	mem_landed(m, 1000, (u8 *)p->br.buf + MEM_GUARD, rlen);
	mem_check(test, m);
	mem_dereg(test, &m->mr);
}

/*
 * ibpost_mr_sgl() gives one SGE per page a range of an sg_table MR
 * touches, of exactly the bytes there; chains of such SGEs post whole,
 * on both queues. A WR naming a byte past a page's segment stops its
 * chain with -EINVAL there (bad_wr), the WRs before it still going.
 */
static void ibpost_mem_chain_with_mr_sgl(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct mem_pages *m = mem_sgt(test, dev, 6, DMA_BIDIRECTIONAL, 31);
	struct mem_pages *d = mem_sgt(test, dev, 6, DMA_FROM_DEVICE, 32);
	struct ibpost_test_pair *p = mem_pair(test);
	/* 50 bytes, a page, 50 bytes; then 10, a page, 10. */
	const u64 o[2] = { PAGE_SIZE - MEM_HEAD - 50,
			   3 * PAGE_SIZE - MEM_HEAD - 10 };
	const u32 l[2] = { PAGE_SIZE + 100, PAGE_SIZE + 20 };
	struct ib_sge s[2][3], r[2][3], bad[3];
	struct ib_send_wr wr[2] = {};
	struct ib_recv_wr rwr[2] = {};
	const struct ib_send_wr *sbad;
	const struct ib_recv_wr *rbad;
	int i;

	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, 3, ibpost_mr_sgl(m->mr, o[i], l[i], s[i],
						       3));
		KUNIT_EXPECT_EQ(test, (l[i] - PAGE_SIZE) / 2, s[i][0].length);
		KUNIT_EXPECT_EQ(test, PAGE_SIZE, s[i][1].length);
		KUNIT_EXPECT_EQ(test, (l[i] - PAGE_SIZE) / 2, s[i][2].length);
		KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sgl(m->mr, o[i], l[i],
							     bad, 2));
		KUNIT_ASSERT_EQ(test, 3, ibpost_mr_sgl(d->mr, o[i], l[i], r[i],
						       3));
		wr[i].wr_id = 1 + i;
		wr[i].opcode = IB_WR_SEND;
		wr[i].send_flags = IB_SEND_SIGNALED;
		wr[i].sg_list = s[i];
		wr[i].num_sge = 3;
		rwr[i].wr_id = 11 + i;
		rwr[i].sg_list = r[i];
		rwr[i].num_sge = 3;
	}
	wr[0].next = &wr[1];
	rwr[0].next = &rwr[1];
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv_list(p->b, rwr, &rbad));
	KUNIT_EXPECT_NULL(test, rbad);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, wr, &sbad));
	KUNIT_EXPECT_NULL(test, sbad);
	for (i = 0; i < 2; i++) {
		ibpost_test_send_ok(test, p->a, CTX(1 + i));
		ibpost_test_recv_ok(test, p->b, CTX(11 + i), l[i]);
		mem_landed(d, o[i], mem_at(m, o[i]), l[i]);
	}
	mem_check(test, d);

	/* The second WR's middle SGE one byte longer, then just past it. */
	wr[1].sg_list = bad;
	for (i = 0; i < 2; i++) {
		memcpy(bad, s[1], sizeof(bad));
		if (i) {
			bad[1].addr += bad[1].length;
			bad[1].length = 1;
		} else {
			bad[1].length++;
		}
		wr[0].wr_id = 3 + i;
		mem_fill(d, 33 + i);
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv_mr(p->b, CTX(13 + i),
							     d->mr, o[0],
							     l[0]));
		KUNIT_EXPECT_EQ(test, -EINVAL,
				ibpost_post_send_list(p->a, wr, &sbad));
		KUNIT_EXPECT_PTR_EQ(test, sbad, &wr[1]);
		ibpost_test_send_ok(test, p->a, CTX(3 + i));
		ibpost_test_recv_ok(test, p->b, CTX(13 + i), l[0]);
		ibpost_test_no_send_comp(test, p->a);
		mem_landed(d, o[0], mem_at(m, o[0]), l[0]);
		mem_check(test, d);
	}
	mem_dereg(test, &m->mr);
	mem_dereg(test, &d->mr);
}

/*
 * An MR of the consumer's own DMA mapping (ibpost_reg_dma()) takes a
 * receive; ibpost syncs none of it: the consumer does, then unmaps
 * after the dereg.
 */
static void ibpost_mem_consumer_dma_mapping(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ib_device *ibdev = ibpost_dev_ibdev(dev);
	struct mem_trace *t = mem_trace_new(test, dev);
	struct mem_pages *m = mem_sgt(test, dev, 3, DMA_NONE, 71);
	struct ibpost_test_pair *p;
	struct scatterlist *sg;
	int n, i;
	u32 sent;
	u8 *a;

	n = mem_map_dma(test, dev, m, DMA_FROM_DEVICE, t);
	p = mem_pair(test);
	a = (u8 *)p->abuf.buf + MEM_GUARD;
	sent = m->len - 500;
	t->len[0] = sent;
	ibpost_test_fill(p->abuf.buf, MEM_WIN, 72);
	mem_trace_on(test, t);

	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv_mr(p->b, CTX(1), m->mr, 0,
						     m->len));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(2), a, sent,
						  p->abuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, CTX(2));
	ibpost_test_recv_ok(test, p->b, CTX(1), sent);
	for_each_sg(m->sgt.sgl, sg, n, i)
		ib_dma_sync_single_for_cpu(ibdev, sg_dma_address(sg),
					   sg_dma_len(sg), DMA_FROM_DEVICE);
	mem_landed(m, 0, a, sent);
	mem_check(test, m);
	/* The probe saw the sender's sync, and none of this memory's. */
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->n[0][0]));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&t->in_range));

	KUNIT_ASSERT_EQ(test, 0, ibpost_dereg_mr(m->mr));
	m->mr = NULL;
	ib_dma_unmap_sg(ibdev, m->sgt.sgl, m->sgt.orig_nents, DMA_FROM_DEVICE);
	m->mapped = NULL;
}

/*
 * ibpost_dma_sync, per SGE of memory ibpost mapped: a SEND or WRITE
 * syncs for the device at its post; a receive or READ also for the CPU
 * before its context comes back, from a flush as well, polled or in a
 * callback; each in the direction of the MR's mapping.
 */
static void ibpost_mem_sync_trace_counts(struct kunit *test)
{
	static const u32 lens[MW_N] = {
		[MW_SEND] = 1000, [MW_RECV] = 3000, [MW_READ] = 1500,
		[MW_WRITE] = 2500, [MW_SEG0] = PAGE_SIZE - MEM_HEAD,
		[MW_SEG1] = PAGE_SIZE, [MW_SEG2] = PAGE_SIZE - MEM_TAIL,
		[MW_RECV3] = 3 * PAGE_SIZE, [MW_FLUSH] = 2000,
		[MW_CB_OK] = 700, [MW_CB_FLUSH] = 900,
	};
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ibpost_dev *dev = ibpost_test_dev(test);
	/* Before the pairs: a callback of theirs records into it. */
	struct mem_trace *t = mem_trace_new(test, dev);
	struct mem_pages *m = mem_sgt(test, dev, 3, DMA_TO_DEVICE, 81);
	struct ibpost_test_pair *p = mem_pair(test);
	u8 *a = (u8 *)p->abuf.buf + MEM_GUARD, *b = p->bbuf.buf;
	struct ibpost_comp comp;
	int w;

	memcpy(t->len, lens, sizeof(lens));
	ibpost_test_fill(p->abuf.buf, MEM_WIN, 82);
	ibpost_test_fill(p->br.buf, MEM_WIN, 83);
	mem_trace_on(test, t);

	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1), b, 3000,
						  p->bbuf.mr));
	mem_seen(test, t, MW_RECV, 1, 0);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(2), a, 1000,
						  p->abuf.mr,
						  IB_SEND_SIGNALED));
	mem_seen(test, t, MW_SEND, 1, 0);
	ibpost_test_send_ok(test, p->a, CTX(2));
	ibpost_test_recv_ok(test, p->b, CTX(1), 1000);
	mem_seen(test, t, MW_RECV, 1, 1);
	mem_seen(test, t, MW_SEND, 1, 0);
	KUNIT_EXPECT_EQ(test, 0, memcmp(b, a, 1000));

	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_read(p->a, CTX(3), a, 1500, p->abuf.mr,
					 IB_SEND_SIGNALED,
					 ibpost_mr_remote_addr(p->br.mr) +
					 MEM_GUARD, ibpost_mr_rkey(p->br.mr)));
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->n[MW_READ][0]));
	ibpost_test_send_ok(test, p->a, CTX(3));
	mem_seen(test, t, MW_READ, 1, 1);
	KUNIT_EXPECT_EQ(test, 0, memcmp(a, (u8 *)p->br.buf + MEM_GUARD, 1500));

	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_write(p->a, CTX(4), a, 2500, p->abuf.mr,
					  IB_SEND_SIGNALED,
					  ibpost_mr_remote_addr(p->bw.mr) +
					  MEM_GUARD, ibpost_mr_rkey(p->bw.mr)));
	ibpost_test_send_ok(test, p->a, CTX(4));
	mem_seen(test, t, MW_WRITE, 1, 0);
	/* iWARP: a WRITE is over once TCP has it; its bytes land after. */
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_landed((u8 *)p->bw.buf +
						    MEM_GUARD, a, 2500));

	/* Three SGEs of an sg_table MR: three syncs for the device. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(5), b,
						  3 * PAGE_SIZE, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, mem_post(p, CTX(6), IB_WR_SEND, m->mr, 0,
					  m->len));
	for (w = MW_SEG0; w <= MW_SEG2; w++)
		mem_seen(test, t, w, 1, 0);
	ibpost_test_send_ok(test, p->a, CTX(6));
	ibpost_test_recv_ok(test, p->b, CTX(5), m->len);
	mem_seen(test, t, MW_RECV3, 1, 1);
	KUNIT_EXPECT_EQ(test, 0, memcmp(b, mem_at(m, 0), m->len));

	/* A flushed receive: synced for the CPU before it is taken. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(7), b, 2000,
						  p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->b, &qa, IB_QP_STATE));
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(7), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
	mem_seen(test, t, MW_FLUSH, 1, 1);

	mem_trace_callbacks(test, t);
	/* reg_msgs MRs are mapped both ways, the sg_table one to the device. */
	for (w = 0; w < MW_N; w++)
		mem_seen_dir(test, t, w, w >= MW_SEG0 && w <= MW_SEG2 ?
				 DMA_TO_DEVICE : DMA_BIDIRECTIONAL);
	mem_dereg(test, &m->mr);
}

/*
 * A TO_DEVICE MR takes no receive and no READ, a FROM_DEVICE MR is no
 * SEND or WRITE source, in the offset form and in chains: -EINVAL, none
 * of them queued; each serves its own direction.
 */
static void ibpost_mem_direction_refused(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct mem_pages *to = mem_sgt(test, dev, 2, DMA_TO_DEVICE, 51);
	struct mem_pages *from = mem_sgt(test, dev, 2, DMA_FROM_DEVICE, 52);
	struct ibpost_test_pair *p = mem_pair(test);
	struct ib_send_wr swr = { .wr_id = 6, .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED,
				  .num_sge = 1 };
	struct ib_recv_wr rwr = { .wr_id = 5, .num_sge = 1 };
	u64 at = PAGE_SIZE - MEM_HEAD - 200;
	const struct ib_send_wr *sbad;
	const struct ib_recv_wr *rbad;
	struct ibpost_comp comp;
	struct mem_queues q0;
	struct ib_sge ss, rs;

	ibpost_test_fill(p->br.buf, MEM_WIN, 53);
	mem_queues_get(p, &q0);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_recv_mr(p->b, CTX(1),
							   to->mr, 0, 100));
	KUNIT_EXPECT_EQ(test, -EINVAL, mem_post(p, CTX(2), IB_WR_RDMA_READ,
						to->mr, 0, 100));
	KUNIT_EXPECT_EQ(test, -EINVAL, mem_post(p, CTX(3), IB_WR_SEND,
						from->mr, 0, 100));
	KUNIT_EXPECT_EQ(test, -EINVAL, mem_post(p, CTX(4), IB_WR_RDMA_WRITE,
						from->mr, 0, 100));
	/* Chains: the MR found from its SGE refuses the same. */
	KUNIT_ASSERT_EQ(test, 1, ibpost_mr_sgl(to->mr, 0, 100, &rs, 1));
	KUNIT_ASSERT_EQ(test, 1, ibpost_mr_sgl(from->mr, 0, 100, &ss, 1));
	rwr.sg_list = &rs;
	swr.sg_list = &ss;
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_recv_list(p->b, &rwr,
							     &rbad));
	KUNIT_EXPECT_PTR_EQ(test, rbad, &rwr);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_send_list(p->a, &swr,
							     &sbad));
	KUNIT_EXPECT_PTR_EQ(test, sbad, &swr);
	mem_none_queued(test, p, &q0);

	/* Each its own way; theirs are the only completions. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv_mr(p->b, CTX(7), from->mr,
						     100, 300));
	mem_post_ok(test, p, CTX(8), IB_WR_SEND, to->mr, at, 300);
	ibpost_test_recv_ok(test, p->b, CTX(7), 300);
	mem_landed(from, 100, mem_at(to, at), 300);
	mem_post_ok(test, p, CTX(9), IB_WR_RDMA_READ, from->mr, 1000, 500);
	mem_landed(from, 1000, (u8 *)p->br.buf + MEM_GUARD, 500);
	mem_post_ok(test, p, CTX(10), IB_WR_RDMA_WRITE, to->mr, 0, 500);
	KUNIT_EXPECT_EQ(test, 0, memcmp((u8 *)p->bw.buf + MEM_GUARD,
					mem_at(to, 0), 500));
	ibpost_test_no_send_comp(test, p->a);
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(p->b, &comp, 0));
	mem_check(test, from);
	mem_check(test, to);
	mem_dereg(test, &to->mr);
	mem_dereg(test, &from->mr);
}

/*
 * A chain's second WR whose first SGE is good and whose second is in an
 * MR mapped the other way stops the chain there, on either queue:
 * -EINVAL, bad_wr naming it, the first WR queued and delivered. The
 * refused receive's good SGE, handed to the device already, is handed
 * back to the CPU before the post returns (a source is only read: never
 * handed back); the wrong SGE is synced neither way; and every MR is
 * free of uses after.
 */
static void ibpost_mem_direction_refused_mid_chain(struct kunit *test)
{
	/* Watched lengths: each WR's first SGE, both wrong SGEs. */
	enum { W_R0 = 1, W_R1, W_S0, W_S1, W_WRONG };
	static const u32 lens[] = {
		[W_R0] = 600, [W_R1] = 700, [W_S0] = 800, [W_S1] = 900,
		[W_WRONG] = 100,
	};
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct mem_trace *t = mem_trace_new(test, dev);
	struct mem_pages *to = mem_sgt(test, dev, 2, DMA_TO_DEVICE, 54);
	struct mem_pages *from = mem_sgt(test, dev, 2, DMA_FROM_DEVICE, 55);
	struct ibpost_test_pair *p = mem_pair(test);
	u8 *a = (u8 *)p->abuf.buf + MEM_GUARD, *b = p->bbuf.buf;
	struct ib_sge r0, r1[2], s0, s1[2];
	struct ib_recv_wr rwr[2] = {
		{ .wr_id = 1, .sg_list = &r0, .num_sge = 1 },
		{ .wr_id = 2, .sg_list = r1, .num_sge = 2 },
	};
	struct ib_send_wr swr[2] = {
		{ .wr_id = 4, .sg_list = &s0, .num_sge = 1,
		  .opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED },
		{ .wr_id = 5, .sg_list = s1, .num_sge = 2,
		  .opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED },
	};
	const struct ib_recv_wr *rbad;
	const struct ib_send_wr *sbad;
	struct ibpost_comp comp;
	int i;

	static_assert(ARRAY_SIZE(lens) <= MEM_WATCH);
	memcpy(t->len, lens, sizeof(lens));
	ibpost_test_fill(p->abuf.buf, MEM_WIN, 56);
	mem_sge1(test, from, 0, 600, &r0);
	mem_sge1(test, from, 1000, 700, &r1[0]);
	mem_sge1(test, to, 0, 100, &r1[1]);
	mem_sge1(test, to, 0, 800, &s0);
	mem_sge1(test, to, 1000, 900, &s1[0]);
	mem_sge1(test, from, 3000, 100, &s1[1]);
	rwr[0].next = &rwr[1];
	swr[0].next = &swr[1];
	mem_trace_on(test, t);

	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_recv_list(p->b, rwr,
							     &rbad));
	KUNIT_EXPECT_PTR_EQ(test, rbad, &rwr[1]);
	/* Before any completion: WR 1's good SGE went there and back. */
	mem_seen(test, t, W_R0, 1, 0);
	mem_seen(test, t, W_R1, 1, 1);
	mem_seen(test, t, W_WRONG, 0, 0);
	KUNIT_EXPECT_EQ(test, 1U, ibpost_test_in_use(p->b, false));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(3), a, 550,
						  p->abuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, CTX(3));
	ibpost_test_recv_ok(test, p->b, CTX(1), 550);
	mem_landed(from, 0, a, 550);
	mem_check(test, from);
	mem_seen(test, t, W_R0, 1, 1);
	mem_seen(test, t, W_R1, 1, 1);
	KUNIT_EXPECT_EQ(test, 0U, ibpost_test_in_use(p->b, false));

	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(6), b, 1200,
						  p->bbuf.mr));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_send_list(p->a, swr,
							     &sbad));
	KUNIT_EXPECT_PTR_EQ(test, sbad, &swr[1]);
	mem_seen(test, t, W_S0, 1, 0);
	mem_seen(test, t, W_S1, 1, 0);
	mem_seen(test, t, W_WRONG, 0, 0);
	ibpost_test_send_ok(test, p->a, CTX(4));
	ibpost_test_recv_ok(test, p->b, CTX(6), 800);
	KUNIT_EXPECT_EQ(test, 0, memcmp(b, mem_at(to, 0), 800));
	ibpost_test_no_send_comp(test, p->a);
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(p->b, &comp, 0));
	mem_check(test, to);
	for (i = W_R0; i <= W_S1; i++)
		mem_seen_dir(test, t, i, i <= W_R1 ? DMA_FROM_DEVICE :
						     DMA_TO_DEVICE);
	mem_dereg(test, &to->mr);
	mem_dereg(test, &from->mr);
}

/* The second device's name: after the provider under test. */
static const char *mem_dev2_name(struct ibpost_dev *dev)
{
	return ibpost_test_iwarp(dev) ? "siw2" : "rxe2";
}

/*
 * Ranges outside the MR, empty or needing more SGEs than given or
 * granted, opcodes other than SEND, WRITE and READ, an MR's post on a
 * UD QP, registrations without a device, a table, a direction or (a
 * consumer's mapping) an entry of any DMA length, another device's MR:
 * all -EINVAL, nothing queued, and no use of the MRs left behind.
 */
static void ibpost_mem_bad_input(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test), *dev2;
	struct mem_pages *m = mem_sgt(test, dev, 2 * MEM_MAX_SGE,
				      DMA_BIDIRECTIONAL, 91);
	struct ibpost_test_pair *p = mem_pair(test);
	u32 ks = p->got.max_send_sge, kr = p->got.max_recv_sge;
	struct ib_sge sge[2 * MEM_MAX_SGE], one;
	struct scatterlist zero[2];
	struct sg_table empty = {};
	struct ibpost_qp_attr attr;
	struct mem_queues q0;
	struct mem_pages *o;
	struct ibpost_qp *ud;
	size_t len = m->len;

	KUNIT_ASSERT_LT(test, max(ks, kr), m->n);
	mem_queues_get(p, &q0);
	KUNIT_EXPECT_EQ(test, 1, ibpost_mr_sgl(m->mr, len - 10, 10, sge, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sgl(m->mr, len, 1, sge, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sgl(m->mr, len - 10, 11, sge,
						     2));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sgl(m->mr, 0, 0, sge, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sgl(m->mr, U64_MAX - 4, 8,
						     sge, 1));
	KUNIT_EXPECT_EQ(test, (int)m->n, ibpost_mr_sgl(m->mr, 0, len, sge,
						       m->n));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sgl(m->mr, 0, len, sge,
						     m->n - 1));
	/* A reg_msgs MR: one SGE, the one ibpost_mr_sge() gives. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr,
					       (u8 *)p->abuf.buf + 10, 100,
					       &one));
	KUNIT_ASSERT_EQ(test, 1, ibpost_mr_sgl(p->abuf.mr, 10, 100, sge, 1));
	KUNIT_EXPECT_EQ(test, one.addr, sge[0].addr);
	KUNIT_EXPECT_EQ(test, one.length, sge[0].length);
	KUNIT_EXPECT_EQ(test, one.lkey, sge[0].lkey);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sgl(p->abuf.mr, MEM_WIN - 1,
						     2, sge, 1));

	KUNIT_EXPECT_EQ(test, -EINVAL, mem_post(p, NULL, IB_WR_LOCAL_INV,
						m->mr, 0, 8));
	KUNIT_EXPECT_EQ(test, -EINVAL, mem_post(p, NULL, IB_WR_SEND_WITH_IMM,
						m->mr, 0, 8));
	KUNIT_EXPECT_EQ(test, -EINVAL, mem_post(p, NULL, IB_WR_SEND, m->mr,
						len - 10, 11));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_recv_mr(p->b, NULL, m->mr,
							   len - 10, 11));
	/* One page more than the QP's SGEs. */
	KUNIT_EXPECT_EQ(test, -EINVAL, mem_post(p, NULL, IB_WR_SEND, m->mr, 0,
						mem_piece(m, 0, ks + 1)));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_recv_mr(p->b, NULL, m->mr, 0,
					    mem_piece(m, 0, kr + 1)));

	mem_refused(test, ibpost_reg_sgt(NULL, &m->sgt, DMA_BIDIRECTIONAL),
		    "no device");
	mem_refused(test, ibpost_reg_sgt(dev, NULL, DMA_BIDIRECTIONAL),
		    "no table");
	mem_refused(test, ibpost_reg_sgt(dev, &empty, DMA_BIDIRECTIONAL),
		    "an empty table");
	mem_refused(test, ibpost_reg_sgt(dev, &m->sgt, DMA_NONE), "DMA_NONE");
	/* Mapped entries, none of any DMA length: nothing to address. */
	sg_init_table(zero, ARRAY_SIZE(zero));
	mem_refused(test, ibpost_reg_dma(dev, zero, ARRAY_SIZE(zero),
					 DMA_BIDIRECTIONAL),
		    "entries of DMA length 0");

	/* A datagram needs an address: ibpost_post_ud_send(). */
	if (!ibpost_test_iwarp(dev)) {
		ibpost_test_attr(&attr, IB_QPT_UD);
		ud = ibpost_test_qp(test, dev, &attr);
		KUNIT_EXPECT_EQ(test, -EINVAL,
				ibpost_post_mr(ud, NULL, IB_WR_SEND, m->mr, 0, 8,
					       IB_SEND_SIGNALED, 0, 0));
	}

	/* After the device: deregistered before it goes. */
	dev2 = ibpost_test_dev2(test, mem_dev2_name(dev), MEM_NETDEV);
	o = mem_sgt(test, dev2, 1, DMA_BIDIRECTIONAL, 92);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_recv_mr(p->b, NULL, o->mr,
							   0, 64));
	KUNIT_EXPECT_EQ(test, -EINVAL, mem_post(p, NULL, IB_WR_SEND, o->mr, 0,
						64));
	mem_none_queued(test, p, &q0);
	mem_dereg(test, &m->mr);
	mem_dereg(test, &o->mr);
}

/*
 * An sg_table MR with a receive posted is busy (-EBUSY) and stays
 * registered: the receive lands. Once it has, the MR goes, and the pages
 * and the table after it.
 */
static void ibpost_mem_dereg_busy_then_free(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct mem_pages *m = mem_sgt(test, dev, 3, DMA_FROM_DEVICE, 61);
	struct ibpost_test_pair *p = mem_pair(test);
	u8 *a = (u8 *)p->abuf.buf + MEM_GUARD;

	ibpost_test_fill(p->abuf.buf, MEM_WIN, 62);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv_mr(p->b, CTX(1), m->mr, 0,
						     m->len));
	KUNIT_EXPECT_EQ(test, -EBUSY, ibpost_dereg_mr(m->mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(2), a,
						  2 * PAGE_SIZE, p->abuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, CTX(2));
	ibpost_test_recv_ok(test, p->b, CTX(1), 2 * PAGE_SIZE);
	mem_landed(m, 0, a, 2 * PAGE_SIZE);
	mem_check(test, m);
	KUNIT_ASSERT_EQ(test, 0, ibpost_dereg_mr(m->mr));
	m->mr = NULL;
	ibpost_test_undefer(test, m);
}

/*
 * ibpost maps a copy of the consumer's sg_table and leaves the table as
 * it was (no DMA address written into it): the consumer frees it as soon
 * as the MR is registered, its entries cleared first, and the MR still
 * sends every byte of the pages, by offset, and deregisters. Under KASAN
 * any later read of the freed entries is caught.
 */
static void ibpost_mem_sgt_copy_frees_table(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct mem_pages *m = mem_alloc(test, 3, false, 121);
	struct ibpost_test_pair *p;
	struct scatterlist *sg;
	u8 *exp;
	int i;

	mem_reg(test, m, ibpost_reg_sgt(dev, &m->sgt, DMA_TO_DEVICE));
	for_each_sg(m->sgt.sgl, sg, m->sgt.orig_nents, i)
		KUNIT_EXPECT_EQ_MSG(test, (dma_addr_t)0, sg_dma_address(sg),
				    "entry %d of the consumer's table mapped", i);
	sg_init_table(m->sgt.sgl, m->sgt.orig_nents);
	sg_free_table(&m->sgt);
	m->table = false;

	p = mem_pair(test);
	exp = ibpost_test_canary(test, p->bbuf.buf, MEM_WIN, 122);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(1),
						  (u8 *)p->bbuf.buf + MEM_GUARD,
						  m->len, p->bbuf.mr));
	mem_post_ok(test, p, CTX(2), IB_WR_SEND, m->mr, 0, m->len);
	ibpost_test_recv_ok(test, p->b, CTX(1), m->len);
	memcpy(exp + MEM_GUARD, mem_at(m, 0), m->len);
	ibpost_test_expect_canary(test, p->bbuf.buf, exp, MEM_WIN);
	mem_check(test, m);
	mem_dereg(test, &m->mr);
}

/*
 * What a peer reaches through an rkey passes through no WR of this side:
 * the consumer syncs it. ibpost_mr_sync_for_cpu() and
 * ibpost_mr_sync_for_device() sync a range of an MR ibpost mapped, once
 * per DMA segment the range touches, in the MR's mapping direction; a
 * range outside the MR, an empty one and the consumer's own mapping
 * (ibpost_reg_dma()) are refused (-EINVAL) with no sync.
 */
static void ibpost_mem_remote_sync_for_cpu(struct kunit *test)
{
	/* Watched lengths: the peer's WRITE, the segments, a split range. */
	enum { W_PEER = 1, W_SEG0, W_SEG1, W_SEG2, W_SPLIT };
	static const u32 lens[] = {
		[W_PEER] = 3000, [W_SEG0] = PAGE_SIZE - MEM_HEAD,
		[W_SEG1] = PAGE_SIZE, [W_SEG2] = PAGE_SIZE - MEM_TAIL,
		[W_SPLIT] = 10,
	};
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct mem_trace *t = mem_trace_new(test, dev);
	struct mem_pages *s = mem_sgt(test, dev, 3, DMA_FROM_DEVICE, 111);
	struct mem_pages *c = mem_sgt(test, dev, 3, DMA_NONE, 112);
	u32 len = lens[W_PEER];
	struct ibpost_test_pair *p;
	struct ibpost_mr *bw;
	struct ib_sge seg[3];
	u8 *a, *exp;
	int i;

	static_assert(ARRAY_SIZE(lens) <= MEM_WATCH);
	mem_map_dma(test, dev, c, DMA_FROM_DEVICE, NULL);
	p = mem_pair(test);
	bw = p->bw.mr;
	a = (u8 *)p->abuf.buf + MEM_GUARD;
	ibpost_test_fill(p->abuf.buf, MEM_WIN, 113);
	exp = ibpost_test_canary(test, p->bw.buf, MEM_WIN, 114);
	KUNIT_ASSERT_EQ(test, 3, ibpost_mr_sgl(s->mr, 0, s->len, seg, 3));
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, lens[W_SEG0 + i], seg[i].length);
		mem_trace_range(test, t, seg[i].addr, seg[i].length);
	}
	memcpy(t->len, lens, sizeof(lens));

	/* The peer's WRITE is done before the probe is on: B's syncs only. */
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_write(p->a, CTX(1), a, len, p->abuf.mr,
					  IB_SEND_SIGNALED,
					  ibpost_mr_remote_addr(bw) + MEM_GUARD,
					  ibpost_mr_rkey(bw)));
	ibpost_test_send_ok(test, p->a, CTX(1));
	mem_trace_on(test, t);
	KUNIT_EXPECT_EQ(test, 0, ibpost_mr_sync_for_cpu(bw, MEM_GUARD, len));
	mem_seen(test, t, W_PEER, 0, 1);
	memcpy(exp + MEM_GUARD, a, len);
	ibpost_test_expect_canary(test, p->bw.buf, exp, MEM_WIN);
	/* Handed back to the device before the peer comes again. */
	KUNIT_EXPECT_EQ(test, 0, ibpost_mr_sync_for_device(bw, MEM_GUARD,
							   len));
	mem_seen(test, t, W_PEER, 1, 1);
	mem_seen_dir(test, t, W_PEER, DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_EQ(test, 2, atomic_read(&t->events));

	/* Not a byte outside, not an empty range, not the consumer's own. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sync_for_cpu(bw, MEM_WIN - 10,
							      11));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sync_for_device(bw, MEM_WIN,
								 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sync_for_cpu(bw, U64_MAX - 4,
							      8));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sync_for_cpu(bw, MEM_GUARD,
							      0));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sync_for_device(bw, MEM_GUARD,
								 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sync_for_cpu(c->mr, 0,
							      c->len));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_mr_sync_for_device(c->mr, 0,
								 100));
	KUNIT_EXPECT_EQ(test, 2, atomic_read(&t->events));

	/* An sg_table MR, whole: one sync per segment, its bytes in all. */
	KUNIT_EXPECT_EQ(test, 0, ibpost_mr_sync_for_cpu(s->mr, 0, s->len));
	for (i = W_SEG0; i <= W_SEG2; i++) {
		mem_seen(test, t, i, 0, 1);
		mem_seen_dir(test, t, i, DMA_FROM_DEVICE);
	}
	KUNIT_EXPECT_EQ(test, 5, atomic_read(&t->events));
	KUNIT_EXPECT_EQ(test, 3, atomic_read(&t->in_range));
	/* Ten bytes each side of a boundary: a sync in each segment. */
	KUNIT_EXPECT_EQ(test, 0,
			ibpost_mr_sync_for_device(s->mr, lens[W_SEG0] - 10,
						  20));
	mem_seen(test, t, W_SPLIT, 2, 0);
	KUNIT_EXPECT_EQ(test, 7, atomic_read(&t->events));
	KUNIT_EXPECT_EQ(test, 5, atomic_read(&t->in_range));
	mem_dereg(test, &s->mr);
	mem_dereg(test, &c->mr);
}

/* The case's SRQ: destroyed at its end, after its QPs, or before. */
struct mem_srq {
	struct ibpost_srq *srq;
	int ret;
};

static void mem_srq_destroy(void *data)
{
	struct mem_srq *s = data;

	s->ret = ibpost_srq_destroy(s->srq);
}

/* The SRQ's callback, whose own flushes name no QP: the case's trace. */
static struct mem_trace *mem_srq_trace;

static void mem_srq_recv_done(struct ibpost_qp *qp, void *context,
			      const struct ib_wc *wc)
{
	mem_trace_record(mem_srq_trace, context, wc);
}

/*
 * A receive posted on an SRQ (ibpost_post_srq_recv_list()) with an SGE
 * for each page a range of a page MR touches: a SEND lands across both,
 * and each SGE is synced for the device at the post and for the CPU
 * before the SRQ's callback runs.
 */
static void ibpost_mem_srq_page_mr(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	/* Before the SRQ and its QPs: their callback records into it. */
	struct mem_trace *t = mem_trace_new(test, dev);
	struct mem_pages *m = mem_sgt(test, dev, 2, DMA_FROM_DEVICE, 131);
	struct ibpost_test_buf *src = ibpost_test_buf_new(test, dev,
							  PAGE_SIZE);
	struct ibpost_srq_attr sa = {
		.max_wr = 4, .max_sge = 2, .poll_ctx = IB_POLL_SOFTIRQ,
		.recv_done = mem_srq_recv_done,
	};
	/* 500 bytes each side of the pages' boundary: two SGEs of 500. */
	const u64 off = PAGE_SIZE - MEM_HEAD - 500;
	struct ib_recv_wr wr = { .wr_id = 1, .num_sge = 2 };
	struct ibpost_qp_attr aattr, battr;
	const struct ib_recv_wr *bad;
	struct ibpost_qp *a, *b;
	const u32 len = 1000;
	struct ib_sge sge[2];
	struct mem_srq *s;

	if (ibpost_dev_ibdev(dev)->attrs.max_srq_sge < 2)
		ibpost_test_skip(test, "%s: an SRQ WR takes one SGE (max_srq_sge)",
				 ibpost_test_ibdev());
	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	mem_srq_trace = t;
	s->srq = ibpost_srq_create(dev, &sa);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s->srq);
	ibpost_test_defer(test, mem_srq_destroy, s);
	ibpost_test_attr(&aattr, IB_QPT_RC);
	battr = aattr;
	battr.max_recv_wr = 0;
	battr.srq = s->srq;
	ibpost_test_qp_pair(test, dev, &aattr, &battr, &a, &b);

	KUNIT_ASSERT_EQ(test, 2, ibpost_mr_sgl(m->mr, off, len, sge, 2));
	KUNIT_EXPECT_EQ(test, 500U, sge[0].length);
	KUNIT_EXPECT_EQ(test, 500U, sge[1].length);
	wr.sg_list = sge;
	t->len[1] = 500;
	ibpost_test_fill(src->buf, len, 132);
	mem_trace_on(test, t);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_srq_recv_list(s->srq, &wr, &bad));
	KUNIT_EXPECT_NULL(test, bad);
	mem_seen(test, t, 1, 2, 0);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(a, CTX(2), src->buf, len,
						  src->mr, IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, a, CTX(2));
	KUNIT_ASSERT_EQ(test, 1, mem_trace_wait(t, 1));
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->cbs[1]));
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, t->status[1]);
	KUNIT_EXPECT_EQ(test, len, t->byte_len[1]);
	KUNIT_EXPECT_EQ_MSG(test, 2, atomic_read(&t->at_cb[1]),
			    "CPU syncs of the SGEs as the SRQ's callback ran");
	mem_seen(test, t, 1, 2, 2);
	mem_seen_dir(test, t, 1, DMA_FROM_DEVICE);
	mem_landed(m, off, src->buf, len);
	mem_check(test, m);

	/* The one WR was taken: nothing left for the SRQ's flush. */
	ibpost_test_qp_destroy(test, b);
	ibpost_test_undefer(test, s);
	KUNIT_EXPECT_EQ(test, 0, s->ret);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->calls));
	mem_dereg(test, &m->mr);
}

#define MEM_REMOVAL_N	8

/*
 * The device goes away under receives posted into an sg_table MR, one
 * range of each of its pages: each context comes back once, flushed,
 * its range synced for the CPU before its callback ran; nothing landed;
 * the MR, unmapped with its device, syncs no more (-ENODEV), then
 * deregisters, and its pages go.
 */
static void ibpost_mem_removal_with_page_mrs(struct kunit *test)
{
	const char *name = mem_dev2_name(ibpost_test_dev(test));
	struct ibpost_dev *dev = ibpost_test_dev2(test, name, MEM_NETDEV);
	/* Before the QPs: their callbacks record into it. */
	struct mem_trace *t = mem_trace_new(test, dev);
	struct mem_pages *m = mem_sgt(test, dev, MEM_REMOVAL_N,
				      DMA_FROM_DEVICE, 101);
	struct ibpost_qp_attr attr;
	struct ibpost_qp *a, *b;
	int w;

	static_assert(MEM_REMOVAL_N < MEM_WATCH);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.recv_done = mem_trace_recv_done;
	attr.priv = t;
	ibpost_test_qp_pair(test, dev, &attr, &attr, &a, &b);
	/* Receive w: 1000 + 10 w bytes from byte 100 of MR page w - 1. */
	for (w = 1; w <= MEM_REMOVAL_N; w++)
		t->len[w] = 1000 + 10 * w;
	mem_trace_on(test, t);
	for (w = 1; w <= MEM_REMOVAL_N; w++) {
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv_mr(b, CTX(w), m->mr,
						    (w - 1) * PAGE_SIZE + 100,
						    t->len[w]));
		mem_seen(test, t, w, 1, 0);
	}
	KUNIT_EXPECT_EQ(test, -EBUSY, ibpost_dereg_mr(m->mr));

	KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh("rdma link delete %s", name));
	KUNIT_EXPECT_EQ(test, MEM_REMOVAL_N, mem_trace_wait(t, MEM_REMOVAL_N));
	for (w = 1; w <= MEM_REMOVAL_N; w++) {
		KUNIT_EXPECT_EQ_MSG(test, 1, atomic_read(&t->cbs[w]),
				    "receive %d", w);
		KUNIT_EXPECT_EQ_MSG(test, IB_WC_WR_FLUSH_ERR, t->status[w],
				    "receive %d", w);
		KUNIT_EXPECT_EQ_MSG(test, 1, atomic_read(&t->at_cb[w]),
				    "CPU syncs of receive %d as its callback ran",
				    w);
		mem_seen(test, t, w, 1, 1);
	}
	mem_check(test, m);
	KUNIT_EXPECT_EQ(test, -ENODEV, ibpost_mr_sync_for_cpu(m->mr, 0, 100));
	KUNIT_EXPECT_EQ(test, -ENODEV, ibpost_mr_sync_for_device(m->mr, 0,
								 100));
	mem_dereg(test, &m->mr);
	/* The pages go now, not at the case's end. */
	ibpost_test_undefer(test, m);
}

static struct kunit_case ibpost_mem_cases[] = {
	KUNIT_CASE_PARAM(ibpost_mem_sgt_pages_every_opcode,
			 mem_npages_gen_params),
	KUNIT_CASE(ibpost_mem_vmalloc_address_and_offset_forms),
	KUNIT_CASE(ibpost_mem_same_pages_both_ways),
	KUNIT_CASE(ibpost_mem_page_range_one_segment),
	KUNIT_CASE(ibpost_mem_chain_with_mr_sgl),
	KUNIT_CASE(ibpost_mem_consumer_dma_mapping),
	KUNIT_CASE(ibpost_mem_sync_trace_counts),
	KUNIT_CASE(ibpost_mem_direction_refused),
	KUNIT_CASE(ibpost_mem_direction_refused_mid_chain),
	KUNIT_CASE(ibpost_mem_bad_input),
	KUNIT_CASE(ibpost_mem_dereg_busy_then_free),
	KUNIT_CASE(ibpost_mem_sgt_copy_frees_table),
	KUNIT_CASE(ibpost_mem_remote_sync_for_cpu),
	KUNIT_CASE(ibpost_mem_srq_page_mr),
	KUNIT_CASE(ibpost_mem_removal_with_page_mrs),
	{}
};

static struct kunit_suite ibpost_mem_suite = {
	.name = "ibpost_mem",
	.test_cases = ibpost_mem_cases,
};

kunit_test_suites(&ibpost_mem_suite);
