// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_fuzz: seeded random chains against a model.
 *
 * The QP polls its CQ directly (IB_POLL_DIRECT), so no slot is reclaimed
 * until the test takes completions and the model knows the free slots
 * exactly. Each round posts random chains of 1-48 WRs (longer than the
 * 32 WR copies ibpost hands the provider at once) mixing valid
 * WRs with every invalid kind of the errno table and opcodes outside the
 * known range (which rxe would index its table with). For each chain the
 * model predicts the queued prefix, the errno and *bad_wr; the QP must
 * stay in RTS. The round then takes the completions and checks that every
 * queued signaled context comes back exactly once, and that the slot count
 * returns to zero.
 *
 * The seed is printed; IBPOST_KUNIT_ARGS="fuzz_seed=<seed>" replays a run,
 * "fuzz_chains=<n>" changes the number of chains (default 6000, posted
 * in two cases of half each).
 */
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/slab.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

#define FUZZ_MAX_CHAIN	48
#define FUZZ_SGES	40
#define FUZZ_DEPTH	64

enum fuzz_kind {
	K_VALID,
	K_OPCODE_UNKNOWN,
	K_OPCODE_RESERVED,
	K_TOO_MANY_SGE,
	K_NEGATIVE_SGE,
	K_INLINE_TOO_LONG,
	K_INLINE_ON_READ,
	K_SGE_WITHOUT_MR,
	K_SGE_OUTSIDE_MR,
	K_ATOMIC_LENGTH,
	K_ATOMIC_MISALIGNED,
	K_BAD_FLAGS,
	K_COUNT
};

struct fuzz {
	struct ibpost_test_pair *p;
	struct rnd_state rnd;
	struct ib_rdma_wr wr[FUZZ_MAX_CHAIN];
	struct ib_sge sge[FUZZ_MAX_CHAIN][FUZZ_SGES];
	u8 *inline_buf;
	void *stray;
	u32 depth, used, next_id, max_sge_rd;
	/* ids queued signaled in this round, to come back exactly once */
	u64 expect[FUZZ_DEPTH * 2];
	u32 nexpect;
	/* figures */
	u32 chains, queued, kinds[K_COUNT], enomem, rounds;
};

static u32 fuzz_rand(struct fuzz *f, u32 n)
{
	return prandom_u32_state(&f->rnd) % n;
}

static void fuzz_sge(struct kunit *test, struct fuzz *f, struct ib_sge *sge,
		     u32 off, u32 len)
{
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(f->p->abuf.mr,
					       (u8 *)f->p->abuf.buf + off, len,
					       sge));
}

/* Build WR @i of kind @k; returns the errno the model expects of it. */
static int fuzz_build(struct kunit *test, struct fuzz *f, int i,
		      enum fuzz_kind k)
{
	static const u8 reserved[] = { 8, 10, 11, 12, 13, 7, 0x20, 0x21 };
	struct ib_rdma_wr *w = &f->wr[i];
	u32 g_sge = f->p->got.max_send_sge, g_inl = f->p->got.max_inline_data;
	u32 n, j;

	memset(w, 0, sizeof(*w));
	w->wr.wr_id = f->next_id++;
	w->wr.opcode = IB_WR_RDMA_WRITE;
	w->wr.sg_list = f->sge[i];
	w->wr.send_flags = fuzz_rand(f, 2) ? IB_SEND_SIGNALED : 0;
	w->remote_addr = ibpost_mr_remote_addr(f->p->bw.mr) + fuzz_rand(f, 64);
	w->rkey = ibpost_mr_rkey(f->p->bw.mr);
	n = 1 + fuzz_rand(f, g_sge);
	for (j = 0; j < n; j++)
		fuzz_sge(test, f, &f->sge[i][j], 64 * j, 1 + fuzz_rand(f, 32));
	w->wr.num_sge = n;
	if (k == K_VALID && fuzz_rand(f, 4) == 0) {
		/*
		 * A READ from the peer's readable buffer, in as many SGEs
		 * as the device's READ takes (max_sge_rd: one on iWARP).
		 */
		w->wr.opcode = IB_WR_RDMA_READ;
		w->wr.num_sge = min(n, max(f->max_sge_rd, 1U));
		w->remote_addr = ibpost_mr_remote_addr(f->p->br.mr);
		w->rkey = ibpost_mr_rkey(f->p->br.mr);
	} else if (k == K_VALID && fuzz_rand(f, 4) == 0 && g_inl) {
		w->wr.send_flags |= IB_SEND_INLINE;
		w->wr.num_sge = 1;
		f->sge[i][0].addr = (uintptr_t)f->inline_buf;
		f->sge[i][0].length = 1 + fuzz_rand(f, g_inl);
	}

	switch (k) {
	case K_VALID:
		return 0;
	case K_OPCODE_UNKNOWN:
		/* Past the last known opcode: rxe would read past its table. */
		w->wr.opcode = 0x22 + fuzz_rand(f, 0xff - 0x22);
		break;
	case K_OPCODE_RESERVED:
		w->wr.opcode = reserved[fuzz_rand(f, ARRAY_SIZE(reserved))];
		break;
	case K_TOO_MANY_SGE:
		n = min_t(u32, g_sge + 1 + fuzz_rand(f, 3), FUZZ_SGES);
		for (j = 0; j < n; j++)
			fuzz_sge(test, f, &f->sge[i][j], 8 * j, 8);
		w->wr.num_sge = n;
		break;
	case K_NEGATIVE_SGE:
		w->wr.num_sge = -1 - fuzz_rand(f, 100);
		break;
	case K_INLINE_TOO_LONG:
		w->wr.send_flags |= IB_SEND_INLINE;
		w->wr.num_sge = 1;
		f->sge[i][0].addr = (uintptr_t)f->inline_buf;
		f->sge[i][0].length = g_inl + 1 + fuzz_rand(f, 64);
		break;
	case K_INLINE_ON_READ:
		w->wr.opcode = IB_WR_RDMA_READ;
		w->wr.send_flags |= IB_SEND_INLINE;
		break;
	case K_SGE_WITHOUT_MR:
		f->sge[i][fuzz_rand(f, w->wr.num_sge)].addr =
			(uintptr_t)f->stray;
		break;
	case K_SGE_OUTSIDE_MR:
		j = fuzz_rand(f, w->wr.num_sge);
		f->sge[i][j].length = f->p->abuf.len + 1 - 64 * j +
				      fuzz_rand(f, 4096);
		break;
	case K_ATOMIC_LENGTH:
		w->wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
		w->wr.num_sge = 1;
		f->sge[i][0].length = fuzz_rand(f, 2) ? 4 : 16;
		break;
	case K_ATOMIC_MISALIGNED:
		w->wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
		w->wr.num_sge = 1;
		fuzz_sge(test, f, &f->sge[i][0], 1 + fuzz_rand(f, 7), 8);
		break;
	case K_BAD_FLAGS:
		w->wr.send_flags |= 1 << (8 + fuzz_rand(f, 20));
		break;
	default:
		break;
	}
	return -EINVAL;
}

/* One random chain against the model. */
static void fuzz_chain(struct kunit *test, struct fuzz *f)
{
	u32 len = 1 + fuzz_rand(f, FUZZ_MAX_CHAIN), i, k = len;
	const struct ib_send_wr *bad = NULL;
	int expect = 0, err, ret;

	for (i = 0; i < len; i++) {
		enum fuzz_kind kind = fuzz_rand(f, 10) ? K_VALID :
				      1 + fuzz_rand(f, K_COUNT - 1);

		err = fuzz_build(test, f, i, kind);
		f->wr[i].wr.next = i + 1 < len ? &f->wr[i + 1].wr : NULL;
		if (k < len)
			continue;
		if (!err && f->used + i >= f->depth)
			err = -ENOMEM;
		if (err) {
			k = i;
			expect = err;
			if (err == -ENOMEM)
				f->enomem++;
			else
				f->kinds[kind]++;
		}
	}
	ret = ibpost_post_send_list(f->p->a, &f->wr[0].wr, &bad);
	f->chains++;
	KUNIT_ASSERT_EQ_MSG(test, expect, ret, "chain %u (len %u)", f->chains,
			    len);
	KUNIT_ASSERT_PTR_EQ_MSG(test, bad, k < len ? &f->wr[k].wr : NULL,
				"chain %u: bad_wr", f->chains);
	for (i = 0; i < k; i++)
		if (f->wr[i].wr.send_flags & IB_SEND_SIGNALED)
			f->expect[f->nexpect++] = f->wr[i].wr.wr_id;
	f->used += k;
	f->queued += k;
	KUNIT_ASSERT_EQ(test, f->used, ibpost_test_in_use(f->p->a, true));
	if (f->chains % 16 == 0)
		KUNIT_ASSERT_EQ(test, IB_QPS_RTS,
				ibpost_test_qp_state(test, f->p->a));
}

static void fuzz_reap(struct kunit *test, struct fuzz *f)
{
	struct ibpost_comp comp;
	u32 i, got = 0;

	while (got < f->nexpect) {
		KUNIT_ASSERT_EQ_MSG(test, 1,
				    ibpost_get_send_comp(f->p->a, &comp, 10 * HZ),
				    "round %u: %u of %u contexts back", f->rounds,
				    got, f->nexpect);
		KUNIT_ASSERT_EQ(test, IB_WC_SUCCESS, comp.status);
		for (i = 0; i < f->nexpect; i++)
			if (f->expect[i] == (uintptr_t)comp.context)
				break;
		KUNIT_ASSERT_LT_MSG(test, i, f->nexpect,
				    "context %lx unexpected or returned twice",
				    (unsigned long)(uintptr_t)comp.context);
		f->expect[i] = ~0ULL;
		got++;
	}
}

/*
 * Two halves of fuzz_chains each, so one KUnit case stays well within
 * kunit's 300 s timeout under TCG with KASAN; one base seed for both.
 */
static const int fuzz_halves[] = { 0, 1 };

static void fuzz_half_desc(const int *h, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "half_%d", *h + 1);
}

KUNIT_ARRAY_PARAM(fuzz_half, fuzz_halves, fuzz_half_desc);

static u32 fuzz_base_seed(void)
{
	static u32 base;

	if (!base)
		base = ibpost_test_knob("fuzz_seed", 0) ?: get_random_u32() ?: 1;
	return base;
}

static void ibpost_fuzz_random_chains_match_model(struct kunit *test)
{
	int half = *(const int *)test->param_value;
	struct ibpost_test_queue tq;
	struct ibpost_qp_attr attr;
	struct ibpost_comp comp;
	struct fuzz *f;
	int ret, i;
	u32 base = fuzz_base_seed(), seed = base + half;
	u32 fuzz_chains = ibpost_test_knob("fuzz_chains", 6000) / 2;

	kunit_info(test, "seed %#x, half %d (replay: IBPOST_KUNIT_ARGS=\"fuzz_seed=%#x\")",
		   base, half + 1, base);
	pr_info("ibpost_fuzz: seed %#x half %d\n", base, half + 1);
	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->inline_buf = kunit_kzalloc(test, 512, GFP_KERNEL);
	f->stray = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->inline_buf);
	KUNIT_ASSERT_NOT_NULL(test, f->stray);
	prandom_seed_state(&f->rnd, seed);

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_wr = FUZZ_DEPTH;
	attr.max_send_sge = 4;
	attr.max_inline_data = 64;
	attr.poll_ctx = IB_POLL_DIRECT;
	f->p = ibpost_test_pair(test, &attr);
	f->max_sge_rd = ibpost_dev_ibdev(f->p->dev)->attrs.max_sge_rd;
	f->depth = f->p->got.max_send_wr;
	KUNIT_ASSERT_LE(test, f->depth, FUZZ_DEPTH * 2 - 1);

	while (f->chains < fuzz_chains) {
		u32 in_round = 0;

		f->nexpect = 0;
		f->used = 0;
		while (f->used < f->depth && in_round++ < 12 &&
		       f->chains < fuzz_chains)
			fuzz_chain(test, f);
		fuzz_reap(test, f);
		/* A last signaled WR reclaims trailing unsignaled slots. */
		ret = ibpost_post_write(f->p->a, NULL, f->p->abuf.buf, 8,
					f->p->abuf.mr, IB_SEND_SIGNALED,
					ibpost_mr_remote_addr(f->p->bw.mr),
					ibpost_mr_rkey(f->p->bw.mr));
		KUNIT_ASSERT_EQ(test, 0, ret);
		KUNIT_ASSERT_EQ(test, 1, ibpost_get_send_comp(f->p->a, &comp,
							      10 * HZ));
		KUNIT_ASSERT_EQ(test, IB_WC_SUCCESS, comp.status);
		/*
		 * On iWARP a READ completes after the WRs behind it (its
		 * forced signal is not shown): poll until the ring is empty.
		 */
		for (i = 0; i < 2 * HZ && ibpost_test_in_use(f->p->a, true);
		     i++)
			KUNIT_ASSERT_EQ(test, 0,
					ibpost_get_send_comp(f->p->a, &comp, 1));
		KUNIT_ASSERT_EQ(test, 0U, ibpost_test_in_use(f->p->a, true));
		f->rounds++;
	}
	ibpost_test_no_send_comp(test, f->p->a);
	ibpost_test_queue_get(f->p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, 0U, tq.provider_errors);
	kunit_info(test, "%u chains in %u rounds, %u WRs queued, -ENOMEM %u",
		   f->chains, f->rounds, f->queued, f->enomem);
	kunit_info(test, "-EINVAL by kind: opcode %u reserved %u sge+ %u sge- %u inline+ %u inline-read %u nomr %u outside %u atomic-len %u atomic-align %u flags %u",
		   f->kinds[K_OPCODE_UNKNOWN], f->kinds[K_OPCODE_RESERVED],
		   f->kinds[K_TOO_MANY_SGE], f->kinds[K_NEGATIVE_SGE],
		   f->kinds[K_INLINE_TOO_LONG], f->kinds[K_INLINE_ON_READ],
		   f->kinds[K_SGE_WITHOUT_MR], f->kinds[K_SGE_OUTSIDE_MR],
		   f->kinds[K_ATOMIC_LENGTH], f->kinds[K_ATOMIC_MISALIGNED],
		   f->kinds[K_BAD_FLAGS]);
	pr_info("ibpost_fuzz: %u chains, %u WRs queued, contexts lost 0\n",
		f->chains, f->queued);
}

static struct kunit_case ibpost_fuzz_cases[] = {
	KUNIT_CASE_PARAM(ibpost_fuzz_random_chains_match_model,
			 fuzz_half_gen_params),
	{}
};

static struct kunit_suite ibpost_fuzz_suite = {
	.name = "ibpost_fuzz",
	.test_cases = ibpost_fuzz_cases,
};

kunit_test_suites(&ibpost_fuzz_suite);
