// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_data: every seed operation at 1 B, 4 KiB and 64 KiB, and
 * with the most SGEs the QP was granted, bytes checked at the other side;
 * inline sends up to the granted inline size.
 */
#include <linux/bitmap.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/sched.h>
#include <linux/module.h>
#include <linux/slab.h>
#include "ibpost_test.h"

#define DATA_LEN 65536
/* Canary bytes before and after a transfer of up to DATA_LEN bytes. */
#define DATA_GUARD 64
#define DATA_BUF_LEN (DATA_LEN + 2 * DATA_GUARD)

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
	return ibpost_test_pair_len(test, &attr, DATA_BUF_LEN);
}

/**
 * data_expect_landed - check a transfer's destination buffer byte for byte
 * @test: the test
 * @buf: the destination buffer, filled with the pattern of @canary before
 * @buf_len: its length
 * @at: where in @buf the transfer went
 * @src: the bytes that should have landed there
 * @len: their number
 * @canary: the seed @buf was filled with (ibpost_test_fill())
 *
 * [@at, @at + @len) of @buf equals @src; every byte before and after it
 * still holds its canary.
 */
static void data_expect_landed(struct kunit *test, const u8 *buf,
			       size_t buf_len, size_t at, const u8 *src,
			       size_t len, u32 canary)
{
	u8 *exp = kunit_kmalloc(test, buf_len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, exp);
	ibpost_test_fill(exp, buf_len, canary);
	KUNIT_EXPECT_EQ_MSG(test, 0, memcmp(buf, exp, at),
			    "%zu bytes at %zu: a byte before them changed",
			    len, at);
	KUNIT_EXPECT_EQ_MSG(test, 0, memcmp(buf + at, src, len),
			    "%zu bytes at %zu: not the source's", len, at);
	KUNIT_EXPECT_EQ_MSG(test, 0, memcmp(buf + at + len, exp + at + len,
					    buf_len - at - len),
			    "%zu bytes at %zu: a byte beyond them changed",
			    len, at);
	kunit_kfree(test, exp);
}

static void ibpost_data_seed_op_sizes(struct kunit *test)
{
	const struct data_case *c = test->param_value;
	struct ibpost_test_pair *p = data_pair(test);
	u32 seed = c->len + c->op, canary = seed ^ 0x80;
	struct ibpost_test_buf *from, *to;
	struct ibpost_comp comp;
	u8 *src, *dst;
	int ret;

	if (c->op == OP_SEND || c->op == OP_WRITE) {
		from = &p->abuf;
		to = c->op == OP_SEND ? &p->bbuf : &p->bw;
	} else {
		from = &p->br;
		to = &p->abuf;
	}
	/*
	 * Both buffers whole: the source's pattern differs from the
	 * destination's canary in every byte, so each byte that lands shows,
	 * and so does one written before or beyond the transfer.
	 */
	ibpost_test_fill(from->buf, from->len, seed);
	ibpost_test_fill(to->buf, to->len, canary);
	src = (u8 *)from->buf + DATA_GUARD;
	dst = (u8 *)to->buf + DATA_GUARD;
	switch (c->op) {
	case OP_SEND:
		/* A receive longer than the message: its tail stays canary. */
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(2), dst,
							  DATA_LEN + DATA_GUARD,
							  p->bbuf.mr));
		ret = ibpost_post_send(p->a, CTX(1), src, c->len, p->abuf.mr,
				       IB_SEND_SIGNALED);
		break;
	case OP_WRITE:
		ret = ibpost_post_write(p->a, CTX(1), src, c->len, p->abuf.mr,
					IB_SEND_SIGNALED,
					ibpost_mr_remote_addr(p->bw.mr) +
					DATA_GUARD,
					ibpost_mr_rkey(p->bw.mr));
		break;
	default:
		ret = ibpost_post_read(p->a, CTX(1), dst, c->len, p->abuf.mr,
				       IB_SEND_SIGNALED,
				       ibpost_mr_remote_addr(p->br.mr) +
				       DATA_GUARD,
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
	/* The length landed, every byte; nothing before or beyond it did. */
	data_expect_landed(test, to->buf, to->len, DATA_GUARD, src, c->len,
			   canary);
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

/*
 * Every SGE the device grants, asked for at create (rxe: 32, more than
 * a seed operation keeps on the stack; siw: 6), through sendv into recvv,
 * writev and readv, bytes checked.
 */
static void ibpost_data_vector_ops_device_max_sge(struct kunit *test)
{
	const struct ib_device_attr *da =
		&ibpost_dev_ibdev(ibpost_test_dev(test))->attrs;
	struct ibpost_sge *out, *in;
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	struct ibpost_comp comp;
	u32 total, at;
	int ns, nr, rd, i;
	u8 *flat;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_sge = min_t(int, da->max_send_sge, 32);
	attr.max_recv_sge = min_t(int, da->max_recv_sge, 32);
	p = ibpost_test_pair_len(test, &attr, DATA_LEN);
	KUNIT_ASSERT_GE(test, p->got.max_send_sge, attr.max_send_sge);
	KUNIT_ASSERT_GE(test, p->got.max_recv_sge, attr.max_recv_sge);
	/* What was asked (the pieces below fit 64 KiB up to 32 of each). */
	ns = attr.max_send_sge;
	nr = attr.max_recv_sge;
	out = kunit_kcalloc(test, ns, sizeof(*out), GFP_KERNEL);
	in = kunit_kcalloc(test, nr, sizeof(*in), GFP_KERNEL);
	flat = kunit_kzalloc(test, DATA_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, flat);
	ibpost_test_fill(p->abuf.buf, DATA_LEN, 21);
	ibpost_test_fill(p->br.buf, DATA_LEN, 22);
	for (i = 0, total = 0; i < ns; i++) {
		out[i].addr = (u8 *)p->abuf.buf + i * 1024 + i % 7;
		out[i].length = 100 + 13 * i;
		out[i].mr = p->abuf.mr;
		total += out[i].length;
	}
	/* Receive pieces of 1000 B, 2 KiB apart: the message spans several. */
	for (i = 0; i < nr; i++) {
		in[i].addr = (u8 *)p->bbuf.buf + i * 2048 + 1;
		in[i].length = 1000;
		in[i].mr = p->bbuf.mr;
	}
	KUNIT_ASSERT_GE(test, 1000U * nr, total);
	data_gather(flat, out, ns);

	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recvv(p->b, CTX(1), in, nr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_sendv(p->a, CTX(2), out, ns,
						   IB_SEND_SIGNALED));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(2), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	ibpost_test_recv_comp(test, p->b, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, total, comp.byte_len);
	for (i = 0, at = 0; at < total; i++, at += 1000)
		KUNIT_EXPECT_EQ(test, 0, memcmp(flat + at, in[i].addr,
						min(1000U, total - at)));

	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_writev(p->a, CTX(3), out, ns, IB_SEND_SIGNALED,
					   ibpost_mr_remote_addr(p->bw.mr),
					   ibpost_mr_rkey(p->bw.mr)));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(3), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	KUNIT_EXPECT_EQ(test, 0, memcmp(flat, p->bw.buf, total));

	/* readv: as many pieces as the device's READ takes. */
	rd = min_t(int, ns, da->max_sge_rd);
	KUNIT_ASSERT_GE(test, rd, 1);
	memset(p->abuf.buf, 0, DATA_LEN);
	for (i = 0, total = 0; i < rd; i++)
		total += out[i].length;
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_readv(p->a, CTX(4), out, rd, IB_SEND_SIGNALED,
					  ibpost_mr_remote_addr(p->br.mr),
					  ibpost_mr_rkey(p->br.mr)));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(4), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	data_gather(flat, out, rd);
	KUNIT_EXPECT_EQ(test, 0, memcmp(flat, p->br.buf, total));
	ibpost_test_no_send_comp(test, p->a);
}

#define VEC_THREADS	2
#define VEC_POSTS	48	/* writevs per thread */
#define VEC_SPAN	512	/* each writev's own window: >= 32 * 15 */

/**
 * struct vec_race - what the posters share, and the proof that they raced
 * @in_post: posters inside ibpost_post_writev() now
 * @overlaps: writevs entered while another poster's was in progress
 * @ready: writevs the posters are ready to begin: each begins its k-th
 *         once all are ready for theirs (a start line per writev, so
 *         that a poster scheduled late cannot post all of its own alone)
 * @failed: a poster stopped early; the others wait for it no more
 */
struct vec_race {
	atomic_t in_post;
	atomic_t overlaps;
	atomic_t ready;
	atomic_t failed;
};

struct vec_thread {
	struct ibpost_test_pair *p;
	struct completion *start;
	struct vec_race *race;
	int t, ns;
	struct ibpost_sge *sgl;
};

/* Thread @t's pieces of its @k-th writev: its own pattern, varied by @k. */
static void vec_sgl(struct vec_thread *v, int k)
{
	u8 *src = (u8 *)v->p->abuf.buf + v->t * (DATA_LEN / VEC_THREADS);
	int i;

	for (i = 0; i < v->ns; i++) {
		v->sgl[i].addr = src + i * 600 + k % 97;
		v->sgl[i].length = 8 + (i + k) % 8;
		v->sgl[i].mr = v->p->abuf.mr;
	}
}

/* Offset of thread @t's @k-th window in the remote buffer. */
static u32 vec_window(int t, int k)
{
	return (t * VEC_POSTS + k) * VEC_SPAN;
}

static int vec_poster(void *arg)
{
	struct vec_thread *v = arg;
	struct vec_race *r = v->race;
	int k, ret;

	/* Both threads post at once, each on its own CPU where there are two. */
	set_cpus_allowed_ptr(current, cpumask_of(v->t % num_online_cpus()));
	wait_for_completion(v->start);
	for (k = 0; k < VEC_POSTS; k++) {
		vec_sgl(v, k);
		/* A woken thread may start late: each writev waits for all. */
		atomic_inc(&r->ready);
		while (atomic_read(&r->ready) < VEC_THREADS * (k + 1) &&
		       !atomic_read(&r->failed)) {
			cpu_relax();
			cond_resched();
		}
		if (atomic_inc_return(&r->in_post) > 1)
			atomic_inc(&r->overlaps);
		ret = ibpost_post_writev(v->p->a, CTX(v->t * VEC_POSTS + k + 1),
					 v->sgl, v->ns, IB_SEND_SIGNALED,
					 ibpost_mr_remote_addr(v->p->bw.mr) +
					 vec_window(v->t, k),
					 ibpost_mr_rkey(v->p->bw.mr));
		atomic_dec(&r->in_post);
		if (ret) {
			atomic_set(&r->failed, 1);
			return ret;
		}
	}
	return 0;
}

/*
 * Two threads post writevs of every granted SGE (up to 32) on one QP at
 * once: the vector operations share their queue's scratch, one at a
 * time, so each WRITE carries its own thread's pieces, byte for byte, and
 * nothing past them. That the two were inside a writev at the same time
 * is counted, and must have happened.
 */
static void ibpost_data_vector_ops_two_threads(struct kunit *test)
{
	const struct ib_device_attr *da =
		&ibpost_dev_ibdev(ibpost_test_dev(test))->attrs;
	struct ibpost_test_thread *th[VEC_THREADS];
	DECLARE_BITMAP(seen, VEC_THREADS * VEC_POSTS);
	struct completion start;
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	struct ibpost_comp comp;
	struct vec_thread *v;
	struct vec_race *race;
	int t, k, ret;
	bool joined = true;
	u8 *flat, *canary;

	BUILD_BUG_ON(VEC_THREADS * VEC_POSTS * VEC_SPAN > DATA_LEN);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_sge = min_t(int, da->max_send_sge, 32);
	attr.max_send_wr = 2 * VEC_THREADS * VEC_POSTS;
	p = ibpost_test_pair_len(test, &attr, DATA_LEN);
	KUNIT_ASSERT_GE(test, p->got.max_send_wr, VEC_THREADS * VEC_POSTS);
	flat = kunit_kzalloc(test, VEC_SPAN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, flat);
	/* The target holds a canary, a pattern other than the sources'. */
	canary = ibpost_test_canary(test, p->bw.buf, DATA_LEN, 31 ^ 0x80);
	/* Not the test's: a thread that hangs keeps them. */
	v = kcalloc(VEC_THREADS, sizeof(*v), GFP_KERNEL);
	race = kzalloc(sizeof(*race), GFP_KERNEL);
	if (!v || !race) {
		kfree(race);
		kfree(v);
		KUNIT_FAIL_AND_ABORT(test, "out of memory");
	}
	init_completion(&start);
	ibpost_test_fill(p->abuf.buf, DATA_LEN, 31);
	bitmap_zero(seen, VEC_THREADS * VEC_POSTS);
	for (t = 0; t < VEC_THREADS; t++) {
		v[t] = (struct vec_thread){ .p = p, .start = &start,
					    .race = race, .t = t,
					    .ns = attr.max_send_sge };
		v[t].sgl = kunit_kcalloc(test, v[t].ns, sizeof(*v[t].sgl),
					 GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, v[t].sgl);
	}
	for (t = 0; t < VEC_THREADS; t++)
		th[t] = ibpost_test_run(test, vec_poster, &v[t]);
	complete_all(&start);
	for (t = 0; t < VEC_THREADS; t++) {
		if (!ibpost_test_join(th[t], 30 * HZ, &ret)) {
			joined = false;
			continue;
		}
		KUNIT_EXPECT_EQ(test, 0, ret);
	}
	KUNIT_ASSERT_TRUE_MSG(test, joined, "a poster hung");
	/* The race happened: a writev began while the other's was going on. */
	KUNIT_EXPECT_GT_MSG(test, atomic_read(&race->overlaps), 0,
			    "the %d posters were never inside a writev at once",
			    VEC_THREADS);
	kunit_info(test, "%d of %d writevs began inside another thread's\n",
		   atomic_read(&race->overlaps), VEC_THREADS * VEC_POSTS);
	/* Every context once, each a success. */
	for (k = 0; k < VEC_THREADS * VEC_POSTS; k++) {
		uintptr_t c;

		ibpost_test_send_comp(test, p->a, &comp);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		c = (uintptr_t)comp.context;
		KUNIT_ASSERT_TRUE(test, c >= 1 && c <= VEC_THREADS * VEC_POSTS);
		KUNIT_EXPECT_FALSE(test, test_and_set_bit(c - 1, seen));
	}
	ibpost_test_no_send_comp(test, p->a);
	/* Each window holds the gather of its own writev. */
	for (t = 0; t < VEC_THREADS; t++) {
		for (k = 0; k < VEC_POSTS; k++) {
			u8 *dst = (u8 *)p->bw.buf + vec_window(t, k);
			u32 total = 0;
			int i;

			vec_sgl(&v[t], k);
			for (i = 0; i < v[t].ns; i++)
				total += v[t].sgl[i].length;
			data_gather(flat, v[t].sgl, v[t].ns);
			KUNIT_EXPECT_EQ_MSG(test, 0, memcmp(flat, dst, total),
					    "thread %d, writev %d", t, k);
			KUNIT_EXPECT_EQ_MSG(test, 0,
					    memcmp(dst + total,
						   canary + vec_window(t, k) +
						   total, VEC_SPAN - total),
					    "thread %d, writev %d: past its %u bytes",
					    t, k, total);
		}
	}
	kfree(race);
	kfree(v);
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
	KUNIT_CASE(ibpost_data_vector_ops_device_max_sge),
	KUNIT_CASE(ibpost_data_vector_ops_two_threads),
	KUNIT_CASE(ibpost_data_inline_up_to_granted),
	KUNIT_CASE(ibpost_data_ud_send_sizes),
	{}
};

static struct kunit_suite ibpost_data_suite = {
	.name = "ibpost_data",
	.test_cases = ibpost_data_cases,
};

kunit_test_suites(&ibpost_data_suite);
