// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_chain: every row of the contract's errno table, at the
 * first, middle and last place of a three-WR chain (the opcodes newer
 * kernels added, at one place each). For each: the return
 * value, *bad_wr is the caller's own WR at that place, ibpost refused it
 * itself (no provider error counted), exactly the WRs before it complete
 * (their contexts counted), the QP stays in RTS, and a repost from
 * *bad_wr after fixing the cause completes the rest.
 *
 * Suite ibpost_state: posting outside RTS, and in ERR; a one-WR post the
 * provider refuses.
 *
 * Suite ibpost_batch: a chain longer than the queue's stage, which ibpost
 * hands to the provider in batches of a stage each, refused by a check or
 * by "the provider" (the SUBMIT hook) at the last WR of the first batch,
 * the first of the second, or inside the second: the same contract as a
 * chain of one batch. Trace events, hooks and fault injection leave the
 * post on the code users run.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ibpost_fault.h>
#include "ibpost_test.h"
#include "gate.h"
#include "../drivers/ibpost_rc.h"

#define CHAIN_LEN 3

enum chain_fault {
	F_OPCODE_UNKNOWN,
	F_OPCODE_NOT_FOR_RC,
	F_OPCODE_REG_MR,
	F_TOO_MANY_SGE,
	F_INLINE_TOO_LONG,
	F_INLINE_SUM_TOO_LONG,
	F_INLINE_ON_READ,
	F_SGE_WITHOUT_MR,
	F_SGE_OUTSIDE_MR,
	F_ATOMIC_LENGTH,
	F_ATOMIC_MISALIGNED,
	F_UD_WITHOUT_AH,
	F_NO_SLOTS,
	F_OPCODE_FLUSH,
	F_OPCODE_ATOMIC_WRITE,
	F_COUNT
};

static const char * const chain_fault_name[F_COUNT] = {
	"opcode_unknown", "opcode_not_for_rc", "opcode_reg_mr",
	"too_many_sge", "inline_too_long", "inline_sum_too_long",
	"inline_on_read",
	"sge_without_mr", "sge_outside_mr", "atomic_length",
	"atomic_misaligned", "ud_without_ah", "no_slots",
	"opcode_flush", "opcode_atomic_write",
};

struct chain_case {
	enum chain_fault fault;
	int pos;
};

static const struct chain_case chain_cases[] = {
	{ F_OPCODE_UNKNOWN, 0 }, { F_OPCODE_UNKNOWN, 1 }, { F_OPCODE_UNKNOWN, 2 },
	{ F_OPCODE_NOT_FOR_RC, 0 }, { F_OPCODE_NOT_FOR_RC, 1 }, { F_OPCODE_NOT_FOR_RC, 2 },
	{ F_OPCODE_REG_MR, 0 }, { F_OPCODE_REG_MR, 1 }, { F_OPCODE_REG_MR, 2 },
	{ F_TOO_MANY_SGE, 0 }, { F_TOO_MANY_SGE, 1 }, { F_TOO_MANY_SGE, 2 },
	{ F_INLINE_TOO_LONG, 0 }, { F_INLINE_TOO_LONG, 1 }, { F_INLINE_TOO_LONG, 2 },
	{ F_INLINE_SUM_TOO_LONG, 0 }, { F_INLINE_SUM_TOO_LONG, 1 },
	{ F_INLINE_SUM_TOO_LONG, 2 },
	{ F_INLINE_ON_READ, 0 }, { F_INLINE_ON_READ, 1 }, { F_INLINE_ON_READ, 2 },
	{ F_SGE_WITHOUT_MR, 0 }, { F_SGE_WITHOUT_MR, 1 }, { F_SGE_WITHOUT_MR, 2 },
	{ F_SGE_OUTSIDE_MR, 0 }, { F_SGE_OUTSIDE_MR, 1 }, { F_SGE_OUTSIDE_MR, 2 },
	{ F_ATOMIC_LENGTH, 0 }, { F_ATOMIC_LENGTH, 1 }, { F_ATOMIC_LENGTH, 2 },
	{ F_ATOMIC_MISALIGNED, 0 }, { F_ATOMIC_MISALIGNED, 1 }, { F_ATOMIC_MISALIGNED, 2 },
	{ F_UD_WITHOUT_AH, 0 }, { F_UD_WITHOUT_AH, 1 }, { F_UD_WITHOUT_AH, 2 },
	{ F_NO_SLOTS, 0 }, { F_NO_SLOTS, 1 }, { F_NO_SLOTS, 2 },
	{ F_OPCODE_FLUSH, 1 }, { F_OPCODE_ATOMIC_WRITE, 2 },
};

static void chain_case_desc(const struct chain_case *c, char *desc)
{
	static const char * const pos[] = { "first", "middle", "last" };

	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_%s",
		 chain_fault_name[c->fault], pos[c->pos]);
}

KUNIT_ARRAY_PARAM(chain_case, chain_cases, chain_case_desc);

/* Everything a chain needs; the WR union is big enough for any kind. */
struct chain_env {
	struct ibpost_qp *qp;
	struct ibpost_qp_attr got;
	struct ibpost_mr *mr;
	void *buf;
	union {
		struct ib_rdma_wr rdma;
		struct ib_atomic_wr atomic;
		struct ib_ud_wr ud;
	} wr[CHAIN_LEN];
	struct ib_sge sge[CHAIN_LEN][32];
	char inline_buf[1024];
	/* RC */
	struct ibpost_test_pair *p;
	/* UD */
	struct ib_ah *ah;
	u32 qpn;
	void *stray;
};

static void chain_valid_wr(struct kunit *test, struct chain_env *e, int i)
{
	memset(&e->wr[i], 0, sizeof(e->wr[i]));
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_mr_sge(e->mr, (u8 *)e->buf + 8 * i, 8,
				      &e->sge[i][0]));
	e->wr[i].rdma.wr.wr_id = 100 + i;
	e->wr[i].rdma.wr.sg_list = e->sge[i];
	e->wr[i].rdma.wr.num_sge = 1;
	e->wr[i].rdma.wr.send_flags = IB_SEND_SIGNALED;
	e->wr[i].rdma.wr.next = i + 1 < CHAIN_LEN ? &e->wr[i + 1].rdma.wr : NULL;
	if (e->p) {
		e->wr[i].rdma.wr.opcode = IB_WR_RDMA_WRITE;
		e->wr[i].rdma.remote_addr =
			ibpost_mr_remote_addr(e->p->bw.mr) + 8 * i;
		e->wr[i].rdma.rkey = ibpost_mr_rkey(e->p->bw.mr);
	} else {
		e->wr[i].ud.wr.opcode = IB_WR_SEND;
		e->wr[i].ud.ah = e->ah;
		e->wr[i].ud.remote_qpn = e->qpn;
		e->wr[i].ud.remote_qkey = 0x11111111;
	}
}

static void chain_apply_fault(struct kunit *test, struct chain_env *e,
			      enum chain_fault f, int i)
{
	struct ib_send_wr *wr = &e->wr[i].rdma.wr;
	int k;

	switch (f) {
	case F_OPCODE_UNKNOWN:
		/* rxe would index its opcode table with this: never let it. */
		wr->opcode = 0x7f;
		break;
	case F_OPCODE_NOT_FOR_RC:
		wr->opcode = IB_WR_LSO;
		break;
	case F_OPCODE_REG_MR:
		wr->opcode = IB_WR_REG_MR;
		break;
	case F_OPCODE_FLUSH:
		/* 6.12's persistent-memory flush: not in the contract. */
		wr->opcode = IBPOST_TEST_WR_FLUSH;
		break;
	case F_OPCODE_ATOMIC_WRITE:
		wr->opcode = IBPOST_TEST_WR_ATOMIC_WRITE;
		break;
	case F_TOO_MANY_SGE:
		for (k = 0; k <= e->got.max_send_sge && k < 32; k++)
			e->sge[i][k] = e->sge[i][0];
		wr->num_sge = e->got.max_send_sge + 1;
		break;
	case F_INLINE_TOO_LONG:
		wr->send_flags |= IB_SEND_INLINE;
		e->sge[i][0].addr = (uintptr_t)e->inline_buf;
		e->sge[i][0].length = e->got.max_inline_data + 1;
		e->sge[i][0].lkey = 0;
		break;
	case F_INLINE_SUM_TOO_LONG:
		/* Two pieces, each within the limit, one byte over together. */
		KUNIT_ASSERT_GE(test, e->got.max_send_sge, 2U);
		wr->send_flags |= IB_SEND_INLINE;
		e->sge[i][0].addr = (uintptr_t)e->inline_buf;
		e->sge[i][0].length = e->got.max_inline_data / 2 + 1;
		e->sge[i][0].lkey = 0;
		e->sge[i][1] = e->sge[i][0];
		e->sge[i][1].length = e->got.max_inline_data -
				      e->sge[i][0].length + 1;
		wr->num_sge = 2;
		break;
	case F_INLINE_ON_READ:
		wr->opcode = IB_WR_RDMA_READ;
		wr->send_flags |= IB_SEND_INLINE;
		break;
	case F_SGE_WITHOUT_MR:
		/* A real buffer's DMA address, but nobody registered it. */
		e->sge[i][0].addr = (uintptr_t)e->stray;
		break;
	case F_SGE_OUTSIDE_MR:
		/* One byte past the end of the registration. */
		e->sge[i][0].length = IBPOST_TEST_BUF_LEN - 8 * i + 1;
		break;
	case F_ATOMIC_LENGTH:
		wr->opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
		e->sge[i][0].length = 4;
		break;
	case F_ATOMIC_MISALIGNED:
		wr->opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
		e->sge[i][0].addr += 4;
		break;
	case F_UD_WITHOUT_AH:
		e->wr[i].ud.ah = NULL;
		break;
	default:
		break;
	}
}

static void chain_stray_free(void *data)
{
	kfree(data);
}

static void chain_env_init(struct kunit *test, struct chain_env *e,
			   bool ud)
{
	struct ibpost_test_buf *b;

	e->stray = kzalloc(64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->stray);
	ibpost_test_defer(test, chain_stray_free, e->stray);
	if (!ud) {
		e->p = ibpost_test_pair(test, NULL);
		e->qp = e->p->a;
		e->got = e->p->got;
		e->mr = e->p->abuf.mr;
		e->buf = e->p->abuf.buf;
		return;
	}
	e->p = NULL;
	ibpost_test_need_ud(test, ibpost_test_dev(test));
	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	{
		struct ibpost_dev *dev = ibpost_test_dev(test);
		struct ibpost_qp_attr attr;

		ibpost_test_attr(&attr, IB_QPT_UD);
		attr.max_inline_data = 64;
		/* The buffer outlives the QP: deferred actions run LIFO. */
		ibpost_test_buf_init(test, b, dev, NULL, IBPOST_TEST_BUF_LEN,
				     IBPOST_TEST_MSGS);
		ibpost_test_defer(test, (void (*)(void *))ibpost_test_buf_fini,
				  b);
		e->qp = ibpost_test_qp(test, dev, &attr);
	}
	ibpost_qp_get_attr(e->qp, &e->got);
	e->ah = ibpost_test_loopback_ah(test, e->qp);
	e->qpn = ibpost_qp_ibqp(e->qp)->qp_num;
	e->mr = b->mr;
	e->buf = b->buf;
}

/* Occupy all send slots but @free_slots, with WRs that cannot complete. */
static void chain_fill_sq(struct kunit *test, struct chain_env *e,
			  u32 free_slots)
{
	u32 i, fill = e->got.max_send_wr - free_slots;

	/* No receive at the peer: RNR retry (infinite) holds the SQ. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(e->qp, CTX(99), e->buf, 8,
						  e->mr, IB_SEND_SIGNALED));
	for (i = 1; i < fill; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_write(e->qp, CTX(98), e->buf, 8,
						  e->mr, 0,
						  ibpost_mr_remote_addr(e->p->bw.mr),
						  ibpost_mr_rkey(e->p->bw.mr)));
}

/*
 * A signaled WR posted after the rest must be the next send completion:
 * on a send queue completions come back in posting order, so no earlier
 * WR was left to complete (instant, where waiting for none to come takes
 * the 200 ms of ibpost_test_no_send_comp()).
 */
#define CHAIN_FENCE 200
static void chain_fence(struct kunit *test, struct chain_env *e)
{
	const struct ib_send_wr *bad = NULL;
	struct ibpost_comp comp;

	chain_valid_wr(test, e, 0);
	e->wr[0].rdma.wr.wr_id = CHAIN_FENCE;
	e->wr[0].rdma.wr.next = NULL;
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(e->qp,
						       &e->wr[0].rdma.wr,
						       &bad));
	ibpost_test_send_comp(test, e->qp, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(CHAIN_FENCE), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
}

static void ibpost_post_send_list_errno_table(struct kunit *test)
{
	const struct chain_case *c = test->param_value;
	const struct ib_send_wr *bad = NULL;
	struct ibpost_test_queue before, after;
	struct ibpost_comp comp;
	struct chain_env *e;
	int i, expect = c->fault == F_NO_SLOTS ? -ENOMEM : -EINVAL;

	e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	chain_env_init(test, e, c->fault == F_UD_WITHOUT_AH);
	for (i = 0; i < CHAIN_LEN; i++)
		chain_valid_wr(test, e, i);
	chain_apply_fault(test, e, c->fault, c->pos);
	if (c->fault == F_NO_SLOTS) {
		ibpost_test_need_ib(test, e->p->dev,
				    "the full queue is held by an RNR wait, and iWARP has no RNR (a SEND without a receive is fatal)");
		chain_fill_sq(test, e, c->pos);
	}

	ibpost_test_queue_get(e->qp, true, &before);
	KUNIT_EXPECT_EQ(test, expect,
			ibpost_post_send_list(e->qp, &e->wr[0].rdma.wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, &e->wr[c->pos].rdma.wr);
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, ibpost_test_qp_state(test, e->qp));
	/* ibpost's own check refused it: the provider never saw it. */
	ibpost_test_queue_get(e->qp, true, &after);
	KUNIT_EXPECT_EQ(test, after.provider_errors, before.provider_errors);

	if (c->fault == F_NO_SLOTS) {
		/* Let the blocked SEND through; the queue drains in order. */
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(e->p->b, CTX(1), e->p->bbuf.buf,
						 e->p->bbuf.len, e->p->bbuf.mr));
		ibpost_test_send_comp(test, e->qp, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(99), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	}
	/* Exactly the WRs before bad_wr were queued, and they complete. */
	for (i = 0; i < c->pos; i++) {
		ibpost_test_send_comp(test, e->qp, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(100 + i), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	}
	chain_fence(test, e);

	/* Fix the cause and repost from bad_wr: the rest completes. */
	chain_valid_wr(test, e, c->pos);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(e->qp, bad, &bad));
	KUNIT_EXPECT_NULL(test, bad);
	for (i = c->pos; i < CHAIN_LEN; i++) {
		ibpost_test_send_comp(test, e->qp, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(100 + i), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
	}
	chain_fence(test, e);
	if (e->p)
		for (i = 0; i < CHAIN_LEN; i++)
			KUNIT_EXPECT_EQ(test, 0, memcmp((u8 *)e->p->bw.buf + 8 * i,
							(u8 *)e->buf + 8 * i, 8));
}

static struct kunit_case ibpost_chain_cases[] = {
	KUNIT_CASE_PARAM(ibpost_post_send_list_errno_table,
			 chain_case_gen_params),
	{}
};

static struct kunit_suite ibpost_chain_suite = {
	.name = "ibpost_chain",
	.test_cases = ibpost_chain_cases,
};

/* ---- ibpost_state ----------------------------------------------------- */

static const enum ib_qp_state not_rts_states[] = {
	IB_QPS_RESET, IB_QPS_INIT, IB_QPS_RTR,
};

static void not_rts_desc(const enum ib_qp_state *s, char *desc)
{
	static const char * const n[] = { "RESET", "INIT", "RTR" };

	strscpy(desc, n[*s], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(not_rts, not_rts_states, not_rts_desc);

/* Move @qp to @state along RESET->INIT->RTR, looped back to @peer. */
static void ibpost_post_send_outside_rts_is_enotconn(struct kunit *test)
{
	enum ib_qp_state state = *(const enum ib_qp_state *)test->param_value;
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_buf *b;
	struct ib_send_wr wr[2] = {};
	const struct ib_send_wr *bad = NULL;
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp, *peer;
	struct ib_sge sge;

	if (state != IB_QPS_RESET)
		ibpost_test_need_ib(test, dev,
				    "INIT, RTR and RTS by hand exist on IB/RoCE only (rdma_cm moves iWARP QPs)");
	b = ibpost_test_buf_new(test, dev, 64);
	ibpost_test_attr(&attr, IB_QPT_RC);
	qp = ibpost_test_qp(test, dev, &attr);
	peer = ibpost_test_qp(test, dev, &attr);
	ibpost_test_connect(test, qp, peer, state, 12, 7);
	KUNIT_ASSERT_EQ(test, state, ibpost_test_qp_state(test, qp));

	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(b->mr, b->buf, 8, &sge));
	wr[0].opcode = IB_WR_SEND;
	wr[0].sg_list = &sge;
	wr[0].num_sge = 1;
	wr[0].next = &wr[1];
	wr[1] = wr[0];
	wr[1].next = NULL;
	/* Never reaches the provider: rxe would say -EINVAL here. */
	KUNIT_EXPECT_EQ(test, -ENOTCONN, ibpost_post_send_list(qp, wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr[0]);
	KUNIT_EXPECT_EQ(test, -ENOTCONN, ibpost_post_send(qp, NULL, b->buf, 8,
							  b->mr, 0));
	/*
	 * The QP's state is checked first, for the seed operations too: a
	 * buffer outside its MR, or too many SGEs, is not what refuses a
	 * post that no buffer could make valid.
	 */
	KUNIT_EXPECT_EQ(test, -ENOTCONN, ibpost_post_send(qp, NULL, b->buf,
							  4096, b->mr, 0));
	KUNIT_EXPECT_EQ(test, -ENOTCONN,
			ibpost_post_sendv(qp, NULL,
					  &(struct ibpost_sge){ b->buf, 8,
								b->mr },
					  1000, 0));
	KUNIT_EXPECT_EQ(test, state, ibpost_test_qp_state(test, qp));
	/* Receives may be posted from INIT on (IBA), not in RESET. */
	KUNIT_EXPECT_EQ(test, state == IB_QPS_RESET ? -ENOTCONN : 0,
			ibpost_post_recv(qp, NULL, b->buf, 64, b->mr));
	KUNIT_EXPECT_EQ(test, state == IB_QPS_RESET ? -ENOTCONN : -EINVAL,
			ibpost_post_recv(qp, NULL, b->buf, 4096, b->mr));
}

static void ibpost_post_in_err_flushes_each_wr(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	DECLARE_BITMAP(seen, 6) = {};
	struct ibpost_comp comp;
	int i;

	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa, IB_QP_STATE));
	/* Signaled or not, each WR posted in ERR comes back flushed. */
	ibpost_test_post_mixed(test, p);
	for (i = 0; i < 4; i++) {
		ibpost_test_send_comp(test, p->a, &comp);
		KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
		KUNIT_EXPECT_FALSE(test,
				   __test_and_set_bit((unsigned long)comp.context,
						      seen));
	}
	for (i = 4; i < 6; i++) {
		ibpost_test_recv_comp(test, p->a, &comp);
		KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
		KUNIT_EXPECT_FALSE(test,
				   __test_and_set_bit((unsigned long)comp.context,
						      seen));
	}
	KUNIT_EXPECT_TRUE(test, bitmap_full(seen, 6));
	ibpost_test_no_send_comp(test, p->a);
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, ibpost_test_qp_state(test, p->a));
}

static void ibpost_failed_unsignaled_wr_returns_context(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_comp comp;
	u8 *canary;

	/*
	 * The target holds a canary that differs from the WRITE's bytes in
	 * each place: had the WRITE landed, it would show.
	 */
	canary = ibpost_test_canary(test, p->bw.buf, p->bw.len, 0x62 ^ 0x80);
	ibpost_test_fill(p->abuf.buf, 8, 0x62);
	/* Unsignaled, but it fails (bad rkey): its context must come back. */
	KUNIT_ASSERT_EQ(test, 0,
			ibpost_post_write(p->a, CTX(1), p->abuf.buf, 8,
					  p->abuf.mr, 0,
					  ibpost_mr_remote_addr(p->bw.mr),
					  ibpost_mr_rkey(p->bw.mr) ^ 0x80));
	if (ibpost_test_iwarp(p->dev)) {
		/*
		 * iWARP: a WRITE is over for its sender once sent (RFC 5040);
		 * the peer's TERMINATE ends the connection instead, and the
		 * QP goes to ERR with no completion naming the WRITE.
		 */
		KUNIT_EXPECT_TRUE(test, ibpost_test_wait_err(test, p->a));
		ibpost_test_no_send_comp(test, p->a);
	} else {
		ibpost_test_send_comp(test, p->a, &comp);
		KUNIT_EXPECT_PTR_EQ(test, CTX(1), comp.context);
		KUNIT_EXPECT_EQ(test, IB_WC_REM_ACCESS_ERR, comp.status);
	}
	/* The peer refused it: not one byte of its target changed. */
	ibpost_test_expect_canary(test, p->bw.buf, canary, p->bw.len);
	/* The QP is in ERR now: the next WR is flushed, signaled or not. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(2), p->abuf.buf,
						  8, p->abuf.mr, 0));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(2), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
	ibpost_test_no_send_comp(test, p->a);
}

/*
 * The provider refuses a one-WR post that passes every check of ibpost's:
 * its own QP, moved to RESET behind ibpost's back (as a consumer holding
 * ibpost_qp_ibqp() may), takes neither a send nor a receive (rxe:
 * -EINVAL). No test hook is set, so the refusal is met where a one-WR
 * post is handed over without the loop: the provider's errno, *bad_wr at
 * the caller's WR, no slot kept, the SGE's MR use released (its dereg
 * goes through at once) whether the queue's hit counted it (the send) or
 * its slot listed the MR (the receive, the hit held by a receive posted
 * before), the refusal counted, ibpost's own state unchanged, and no
 * context back.
 */
static void ibpost_post_provider_refuses_one_wr(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };
	struct ibpost_test_queue sb, sa, rb, ra;
	const struct ib_send_wr *sbad = NULL;
	const struct ib_recv_wr *rbad = NULL;
	struct ib_send_wr swr = {};
	struct ib_recv_wr rwr = {};
	struct ibpost_test_pair *p;
	struct ibpost_comp comp;
	struct ibpost_mr *mr;
	struct ib_sge sge;
	void *buf;
	int mask;

	ibpost_test_need_ib(test, dev,
			    "siw keeps a connected QP's state on a move to RESET");
	p = ibpost_test_pair(test, NULL);
	buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	mr = ibpost_reg_msgs(dev, buf, 64);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(mr, buf, 64, &sge));
	swr.wr_id = 1;
	swr.opcode = IB_WR_SEND;
	swr.send_flags = IB_SEND_SIGNALED;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	rwr.wr_id = 2;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	/* The receive queue's hit is the pair's buffer, with a user. */
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, CTX(5), p->abuf.buf,
						  64, p->abuf.mr));
	ibpost_test_queue_get(p->a, true, &sb);
	ibpost_test_queue_get(p->a, false, &rb);
	/* rxe forgets that receive: its context never comes back. */
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(ibpost_qp_ibqp(p->a), &qa,
					      IB_QP_STATE));

	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_send_list(p->a, &swr,
							     &sbad));
	KUNIT_EXPECT_PTR_EQ(test, sbad, &swr);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_recv_list(p->a, &rwr,
							     &rbad));
	KUNIT_EXPECT_PTR_EQ(test, rbad, &rwr);
	/* The seed operations, naming the MR, meet the same. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_send(p->a, CTX(3), buf, 8,
							mr, IB_SEND_SIGNALED));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_post_recv(p->a, CTX(4), buf, 64,
							mr));

	ibpost_test_queue_get(p->a, true, &sa);
	ibpost_test_queue_get(p->a, false, &ra);
	KUNIT_EXPECT_EQ(test, sa.head, sb.head);
	KUNIT_EXPECT_EQ(test, sa.tail, sa.head);
	KUNIT_EXPECT_EQ(test, sa.posted, sb.posted);
	KUNIT_EXPECT_EQ(test, sa.provider_errors - sb.provider_errors, 2U);
	KUNIT_EXPECT_EQ(test, sa.refused_einval - sb.refused_einval, (u64)2);
	KUNIT_EXPECT_EQ(test, ra.head, rb.head);
	KUNIT_EXPECT_EQ(test, ra.head - ra.tail, 1U);
	KUNIT_EXPECT_EQ(test, ra.posted, rb.posted);
	KUNIT_EXPECT_EQ(test, ra.provider_errors - rb.provider_errors, 2U);
	KUNIT_EXPECT_EQ(test, ra.refused_einval - rb.refused_einval, (u64)2);
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, ibpost_test_qp_tracked_state(p->a));
	/* No WR holds the MR. */
	KUNIT_EXPECT_EQ(test, 0, ibpost_dereg_mr(mr));

	/*
	 * Nothing comes back, not even once the provider's QP flushes
	 * (RESET moves on to INIT only; the teardown's drain and flush then
	 * return the receive rxe forgot).
	 */
	mask = ibpost_rc_init_attr(&qa, 1, 0);
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(ibpost_qp_ibqp(p->a), &qa, mask));
	qa.qp_state = IB_QPS_ERR;
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(ibpost_qp_ibqp(p->a), &qa,
					      IB_QP_STATE));
	ibpost_test_no_send_comp(test, p->a);
	KUNIT_EXPECT_EQ(test, 0, ibpost_get_recv_comp(p->a, &comp, HZ / 2));
}

/*
 * An empty chain (NULL), as ib_post_send() and ib_post_recv() take it:
 * nothing is queued or counted, *bad_wr is NULL, and the QP posts on.
 */
static void ibpost_post_empty_chain_queues_nothing(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	const struct ib_send_wr *sbad = &(struct ib_send_wr){};
	const struct ib_recv_wr *rbad = &(struct ib_recv_wr){};
	struct ibpost_test_queue sq, rq;

	KUNIT_EXPECT_EQ(test, 0, ibpost_post_send_list(p->a, NULL, &sbad));
	KUNIT_EXPECT_PTR_EQ(test, sbad, NULL);
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_recv_list(p->b, NULL, &rbad));
	KUNIT_EXPECT_PTR_EQ(test, rbad, NULL);
	ibpost_test_queue_get(p->a, true, &sq);
	ibpost_test_queue_get(p->b, false, &rq);
	KUNIT_EXPECT_EQ(test, sq.head, sq.tail);
	KUNIT_EXPECT_EQ(test, 0, sq.posted);
	KUNIT_EXPECT_EQ(test, rq.head, rq.tail);
	KUNIT_EXPECT_EQ(test, 0, rq.posted);
	ibpost_test_no_send_comp(test, p->a);
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, ibpost_test_qp_state(test, p->a));

	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(2), p->bbuf.buf,
						  64, p->bbuf.mr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(1), p->abuf.buf,
						  8, p->abuf.mr,
						  IB_SEND_SIGNALED));
	ibpost_test_send_ok(test, p->a, CTX(1));
	ibpost_test_recv_ok(test, p->b, CTX(2), 8);
}

static struct kunit_case ibpost_state_cases[] = {
	KUNIT_CASE_PARAM(ibpost_post_send_outside_rts_is_enotconn,
			 not_rts_gen_params),
	KUNIT_CASE(ibpost_post_empty_chain_queues_nothing),
	KUNIT_CASE(ibpost_post_in_err_flushes_each_wr),
	KUNIT_CASE(ibpost_failed_unsignaled_wr_returns_context),
	KUNIT_CASE(ibpost_post_provider_refuses_one_wr),
	{}
};

static struct kunit_suite ibpost_state_suite = {
	.name = "ibpost_state",
	.test_cases = ibpost_state_cases,
};

/* ---- ibpost_batch ----------------------------------------------------- */

/* The QPs' asked depth; a chain is a stage and 8 WRs. */
#define BATCH_DEPTH	64
#define BATCH_WRS	64

struct batch_case {
	bool recv;
	bool provider;	/* refused by the provider (hook), not by a check */
	int at;		/* the refused WR: the stage's size + @at */
};

static const struct batch_case batch_cases[] = {
	{ false, false, 0 }, { false, false, 3 },
	{ false, true, -1 }, { false, true, 0 }, { false, true, 3 },
	{ true, false, 3 }, { true, true, 0 }, { true, true, 3 },
};

static void batch_case_desc(const struct batch_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_%s_%s",
		 c->recv ? "recv" : "send",
		 c->provider ? "provider" : "check",
		 c->at < 0 ? "last_of_batch_1" :
		 c->at ? "inside_batch_2" : "first_of_batch_2");
}

KUNIT_ARRAY_PARAM(batch_case, batch_cases, batch_case_desc);

struct batch_env {
	struct ibpost_test_pair *p;
	struct ib_rdma_wr swr[BATCH_WRS];
	struct ib_recv_wr rwr[BATCH_WRS];
	struct ib_sge ssge[BATCH_WRS];
	struct ib_sge rsge[BATCH_WRS];
};

/* A connected pair whose queues are asked BATCH_DEPTH deep. */
static struct batch_env *batch_env_new(struct kunit *test)
{
	struct ibpost_qp_attr attr;
	struct batch_env *e;

	e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_wr = BATCH_DEPTH;
	attr.max_recv_wr = BATCH_DEPTH;
	e->p = ibpost_test_pair(test, &attr);
	return e;
}

/*
 * @n signaled WRs from a's abuf, 8 bytes each: WRITEs to b's bw, or
 * SENDs, contexts 100 on.
 */
static void batch_send_chain(struct kunit *test, struct batch_env *e, u32 n,
			     bool write)
{
	struct ibpost_test_pair *p = e->p;
	u32 i;

	for (i = 0; i < n; i++) {
		struct ib_rdma_wr *wr = &e->swr[i];

		KUNIT_ASSERT_EQ(test, 0,
				ibpost_mr_sge(p->abuf.mr,
					      (u8 *)p->abuf.buf + 8 * i, 8,
					      &e->ssge[i]));
		memset(wr, 0, sizeof(*wr));
		wr->wr.wr_id = 100 + i;
		wr->wr.sg_list = &e->ssge[i];
		wr->wr.num_sge = 1;
		wr->wr.send_flags = IB_SEND_SIGNALED;
		wr->wr.next = i + 1 < n ? &e->swr[i + 1].wr : NULL;
		wr->wr.opcode = write ? IB_WR_RDMA_WRITE : IB_WR_SEND;
		if (!write)
			continue;
		wr->remote_addr = ibpost_mr_remote_addr(p->bw.mr) + 8 * i;
		wr->rkey = ibpost_mr_rkey(p->bw.mr);
	}
}

/* @n receives into b's bbuf, 8 bytes each, contexts 200 on. */
static void batch_recv_chain(struct kunit *test, struct batch_env *e, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_mr_sge(e->p->bbuf.mr,
					      (u8 *)e->p->bbuf.buf + 8 * i, 8,
					      &e->rsge[i]));
		memset(&e->rwr[i], 0, sizeof(e->rwr[i]));
		e->rwr[i].wr_id = 200 + i;
		e->rwr[i].sg_list = &e->rsge[i];
		e->rwr[i].num_sge = 1;
		e->rwr[i].next = i + 1 < n ? &e->rwr[i + 1] : NULL;
	}
}

/* Take @n send (or receive) completions, contexts @ctx0 on, in order. */
static void batch_take(struct kunit *test, struct ibpost_qp *qp, bool recv,
		       u32 ctx0, u32 n)
{
	struct ibpost_comp comp;
	u32 i;

	for (i = 0; i < n; i++) {
		if (recv)
			ibpost_test_recv_comp(test, qp, &comp);
		else
			ibpost_test_send_comp(test, qp, &comp);
		KUNIT_EXPECT_PTR_EQ_MSG(test, CTX(ctx0 + i), comp.context,
					"completion %u of %u", i, n);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		if (recv)
			KUNIT_EXPECT_EQ(test, 8U, comp.byte_len);
	}
}

/*
 * Post the chain of @n (send: WRITEs from a; receive: on b) with WR @k
 * refused as @c says. Return: the caller's WR @k, to repost from.
 */
static const void *batch_post_refused(struct kunit *test,
				      const struct batch_case *c,
				      struct batch_env *e, u32 n, u32 k)
{
	const struct ib_send_wr *sbad = NULL;
	const struct ib_recv_wr *rbad = NULL;
	struct ibpost_gate *g;
	int ret;

	if (c->provider) {
		g = ibpost_gate(test, IBPOST_HOOK_SUBMIT);
		g->refuse = k + 1;
	} else if (c->recv) {
		e->rwr[k].num_sge = e->p->got.max_recv_sge + 1;
	} else {
		e->swr[k].wr.opcode = 0x7f;
	}
	if (c->recv) {
		ret = ibpost_post_recv_list(e->p->b, e->rwr, &rbad);
		KUNIT_EXPECT_PTR_EQ(test, rbad, &e->rwr[k]);
	} else {
		ret = ibpost_post_send_list(e->p->a, &e->swr[0].wr, &sbad);
		KUNIT_EXPECT_PTR_EQ(test, sbad, &e->swr[k].wr);
	}
	KUNIT_EXPECT_EQ(test, ret, c->provider ? -EIO : -EINVAL);
	/* Fix the cause (a gate refuses the first post only). */
	if (c->recv) {
		e->rwr[k].num_sge = 1;
		return &e->rwr[k];
	}
	e->swr[k].wr.opcode = IB_WR_RDMA_WRITE;
	return &e->swr[k].wr;
}

/*
 * A chain of a stage and 8 WRs, refused at WR k: exactly the k before it
 * are queued (in both batches when k is past the first), *bad_wr is the
 * caller's WR k, its slots and the later ones are released, no later
 * batch reaches the provider, the QP stays in RTS, and a repost from
 * *bad_wr queues the rest, in order.
 */
static void ibpost_chain_across_batches(struct kunit *test)
{
	const struct batch_case *c = test->param_value;
	struct ibpost_test_queue before, after;
	const struct ib_send_wr *sbad;
	const struct ib_recv_wr *rbad;
	struct batch_env *e;
	struct ibpost_qp *qp;
	const void *bad;
	u8 *src, *dst;
	u32 n, k, i;

	e = batch_env_new(test);
	qp = c->recv ? e->p->b : e->p->a;
	ibpost_test_queue_get(qp, !c->recv, &before);
	n = before.stage + 8;
	k = before.stage + c->at;
	KUNIT_ASSERT_GE(test, before.stage, 4U);
	KUNIT_ASSERT_LE(test, n, (u32)BATCH_WRS);
	KUNIT_ASSERT_LE(test, n, before.depth);
	src = e->p->abuf.buf;
	dst = c->recv ? e->p->bbuf.buf : e->p->bw.buf;
	for (i = 0; i < n; i++)
		memset(src + 8 * i, 0x40 + i, 8);
	memset(dst, 0, 8 * n);
	if (c->recv)
		batch_recv_chain(test, e, n);
	else
		batch_send_chain(test, e, n, true);

	bad = batch_post_refused(test, c, e, n, k);
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, ibpost_test_qp_state(test, qp));
	ibpost_test_queue_get(qp, !c->recv, &after);
	KUNIT_EXPECT_EQ(test, after.head - before.head, k);
	KUNIT_EXPECT_EQ(test, after.posted - before.posted, (u64)k);
	KUNIT_EXPECT_EQ(test, after.provider_errors - before.provider_errors,
			c->provider ? 1U : 0U);
	KUNIT_EXPECT_EQ(test, ibpost_test_in_use(qp, !c->recv), k);

	if (!c->recv) {
		/* The k queued complete, in order; nothing of the rest ran. */
		batch_take(test, qp, false, 100, k);
		ibpost_test_no_send_comp(test, qp);
		KUNIT_EXPECT_FALSE(test, memchr_inv(dst + 8 * k, 0,
						    8 * (n - k)));
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(qp, bad, &sbad));
		KUNIT_EXPECT_NULL(test, sbad);
		batch_take(test, qp, false, 100 + k, n - k);
		ibpost_test_no_send_comp(test, qp);
	} else {
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv_list(qp, bad, &rbad));
		KUNIT_EXPECT_NULL(test, rbad);
		KUNIT_EXPECT_EQ(test, ibpost_test_in_use(qp, false), n);
		/* n SENDs land in the n receives, in posting order. */
		batch_send_chain(test, e, n, false);
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(e->p->a,
							       &e->swr[0].wr,
							       &sbad));
		batch_take(test, qp, true, 200, n);
		batch_take(test, e->p->a, false, 100, n);
	}
	KUNIT_EXPECT_EQ(test, 0, memcmp(dst, src, 8 * n));
}

/* At the post's first batch: the QP fails, as by a concurrent completion. */
static int batch_fail_at_submit(enum ibpost_hook point, void *obj, void *data)
{
	if (point == IBPOST_HOOK_SUBMIT)
		ibpost_test_qp_failed(data);
	return 0;
}

static void batch_unhook(void *data)
{
	ibpost_test_set_hook(NULL, NULL);
}

/*
 * The QP goes to ERR while the first batch of a chain is with the
 * provider (a completion's error, on another CPU): every later batch is
 * flushed by ibpost, as a later post would be, never handed to the
 * provider. The post itself succeeds: each WR was queued, and each
 * context comes back exactly once.
 */
static void ibpost_chain_err_between_batches(struct kunit *test)
{
	struct ibpost_test_queue tq;
	const struct ib_send_wr *sbad = NULL;
	struct ibpost_comp comp;
	struct batch_env *e;
	unsigned long seen[BITS_TO_LONGS(BATCH_WRS)] = {};
	u32 n, i, flushed = 0;
	u8 *dst;

	e = batch_env_new(test);
	ibpost_test_queue_get(e->p->a, true, &tq);
	n = tq.stage + 8;
	KUNIT_ASSERT_LE(test, n, (u32)BATCH_WRS);
	KUNIT_ASSERT_LE(test, n, tq.depth);
	dst = e->p->bw.buf;
	memset(e->p->abuf.buf, 0x5a, 8 * n);
	memset(dst, 0, 8 * n);
	batch_send_chain(test, e, n, true);

	KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(batch_fail_at_submit,
						      e->p->a));
	ibpost_test_defer(test, batch_unhook, NULL);
	KUNIT_EXPECT_EQ(test, 0, ibpost_post_send_list(e->p->a, &e->swr[0].wr,
						       &sbad));
	ibpost_test_set_hook(NULL, NULL);
	KUNIT_EXPECT_NULL(test, sbad);

	for (i = 0; i < n; i++) {
		u32 id;

		ibpost_test_send_comp(test, e->p->a, &comp);
		id = (unsigned long)comp.context - 100;
		KUNIT_ASSERT_LT(test, id, n);
		KUNIT_EXPECT_FALSE_MSG(test, __test_and_set_bit(id, seen),
				       "context %u came back twice", id);
		/* The first batch ran; the provider never had the second. */
		if (id >= tq.stage) {
			KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
			flushed++;
		}
	}
	ibpost_test_no_send_comp(test, e->p->a);
	KUNIT_EXPECT_EQ(test, flushed, n - tq.stage);
	KUNIT_EXPECT_FALSE(test, memchr_inv(dst + 8 * tq.stage, 0,
					    8 * (n - tq.stage)));
}

/* What may watch a post; none of them may change the code it runs. */
enum path_watch { WATCH_NONE, WATCH_TRACE, WATCH_HOOK, WATCH_FAULT, WATCH_NR };

static const char * const path_watch_name[WATCH_NR] = {
	"nothing", "trace events", "a test hook", "an armed fault site",
};

#define PATH_TRACEFS	"/sys/kernel/tracing"
/*
 * Mounted if need be, the buffer emptied, ibpost's events on; no
 * command-line recording (see trace_start() in scripts/guest-init.sh).
 */
#define PATH_TRACE_ON \
	"{ [ -d " PATH_TRACEFS "/events ] || " \
	"mount -t tracefs nodev " PATH_TRACEFS "; } && " \
	"echo 0 > " PATH_TRACEFS "/options/record-cmd && " \
	"echo > " PATH_TRACEFS "/trace && " \
	"echo 1 > " PATH_TRACEFS "/events/ibpost/enable"
/* Both post events are in the buffer. */
#define PATH_TRACE_SEEN \
	"grep -q ' ibpost_post_send: ' " PATH_TRACEFS "/trace && " \
	"grep -q ' ibpost_post_recv: ' " PATH_TRACEFS "/trace"
#define PATH_LEN	64

static int path_hook(enum ibpost_hook point, void *obj, void *data)
{
	atomic_inc(data);
	return 0;
}

/* Undo what watcher @w turned on (a shell only for the trace events). */
static void path_unwatch_one(enum path_watch w)
{
	switch (w) {
	case WATCH_TRACE:
		ibpost_test_sh("echo 0 > " PATH_TRACEFS "/events/ibpost/enable");
		break;
	case WATCH_HOOK:
		ibpost_test_set_hook(NULL, NULL);
		break;
	case WATCH_FAULT:
		ibpost_fault_inject(0, 0);
		break;
	default:
		break;
	}
}

/* Deferred: whatever a failed case left on. */
static void path_unwatch(void *data)
{
	enum path_watch w;

	for (w = WATCH_NONE; w < WATCH_NR; w++)
		path_unwatch_one(w);
}

static void path_watch(struct kunit *test, enum path_watch w, atomic_t *hooks)
{
	switch (w) {
	case WATCH_TRACE:
		KUNIT_ASSERT_EQ(test, 0, ibpost_test_sh(PATH_TRACE_ON));
		break;
	case WATCH_HOOK:
		KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(path_hook, hooks));
		break;
	case WATCH_FAULT:
		/* Six WRs pass the site; the seventh is refused (below). */
		KUNIT_ASSERT_EQ(test, 0, ibpost_fault_inject(7, -EIO));
		break;
	default:
		break;
	}
}

/*
 * Three sends a -> b (one alone, then a chain of two) into three
 * receives (one alone, then a chain of two), @seed's pattern each: the
 * four post calls, each checked, and the data byte for byte.
 */
static void path_posts(struct kunit *test, struct ibpost_test_pair *p,
		       u32 seed)
{
	struct ib_sge ssge[3], rsge[3];
	struct ib_send_wr swr[2] = {};
	struct ib_recv_wr rwr[2] = {};
	const struct ib_send_wr *sbad;
	const struct ib_recv_wr *rbad;
	u8 *src = p->abuf.buf, *dst = p->bbuf.buf;
	int i;

	ibpost_test_fill(src, 3 * PATH_LEN, seed);
	ibpost_test_fill(dst, 3 * PATH_LEN, ~seed);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr,
						       src + PATH_LEN * i,
						       PATH_LEN, &ssge[i]));
		KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->bbuf.mr,
						       dst + PATH_LEN * i,
						       PATH_LEN, &rsge[i]));
	}
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(0), dst, PATH_LEN,
						  p->bbuf.mr));
	for (i = 0; i < 2; i++) {
		rwr[i].wr_id = (unsigned long)CTX(1 + i);
		rwr[i].sg_list = &rsge[1 + i];
		rwr[i].num_sge = 1;
		rwr[i].next = i ? NULL : &rwr[1];
		swr[i].wr_id = (unsigned long)CTX(11 + i);
		swr[i].sg_list = &ssge[1 + i];
		swr[i].num_sge = 1;
		swr[i].opcode = IB_WR_SEND;
		swr[i].send_flags = IB_SEND_SIGNALED;
		swr[i].next = i ? NULL : &swr[1];
	}
	rbad = &rwr[1];
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv_list(p->b, rwr, &rbad));
	KUNIT_EXPECT_NULL(test, rbad);
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send(p->a, CTX(10), src, PATH_LEN,
						  p->abuf.mr,
						  IB_SEND_SIGNALED));
	sbad = &swr[1];
	KUNIT_ASSERT_EQ(test, 0, ibpost_post_send_list(p->a, swr, &sbad));
	KUNIT_EXPECT_NULL(test, sbad);
	for (i = 0; i < 3; i++) {
		ibpost_test_send_ok(test, p->a, CTX(10 + i));
		ibpost_test_recv_ok(test, p->b, CTX(i), PATH_LEN);
	}
	KUNIT_EXPECT_EQ(test, 0, memcmp(src, dst, 3 * PATH_LEN));
}

/*
 * Trace events, a test hook and an armed fault site watch the post path
 * users run; none of them turns another one on. A one-WR post runs the
 * post loop's one-WR copy and a chain its chain copy (counted per queue
 * in test builds), the same with each of them on as with none, and the
 * data arrives; each watcher is seen at work (its events in the trace
 * buffer, its hook asked, its fault refusing the WR it counted to). The
 * count is taken where a post call enters the loop: the loop itself has
 * no branch on a watcher but each watcher's own (the events, the hook
 * points, the fault check), which the other suites run.
 */
static void ibpost_post_path_same_when_watched(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_test_queue sb, sa, rb, ra;
	const struct ib_send_wr *sbad;
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	atomic_t *hooks = kunit_kzalloc(test, sizeof(*hooks), GFP_KERNEL);
	enum path_watch w;
	u32 one;

	/* Freed after path_unwatch(): the hook never sees it gone. */
	KUNIT_ASSERT_NOT_NULL(test, hooks);
	ibpost_test_defer(test, path_unwatch, NULL);
	for (w = WATCH_NONE; w < WATCH_NR; w++) {
		kunit_info(test, "watched by %s\n", path_watch_name[w]);
		ibpost_test_queue_get(p->a, true, &sb);
		ibpost_test_queue_get(p->b, false, &rb);
		if (w == WATCH_FAULT && !IS_ENABLED(CONFIG_FAULT_INJECTION))
			continue;	/* no fault site to arm */
		path_watch(test, w, hooks);
		path_posts(test, p, 0x5a00 + w);
		one = 1;
		if (w == WATCH_FAULT) {
			/* The site counted the six WRs: it refuses the next. */
			KUNIT_ASSERT_EQ(test, 0,
					ibpost_mr_sge(p->abuf.mr, p->abuf.buf,
						      8, &sge));
			wr.wr_id = (unsigned long)CTX(20);
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = IB_WR_SEND;
			KUNIT_EXPECT_EQ(test, -EIO,
					ibpost_post_send_list(p->a, &wr,
							      &sbad));
			KUNIT_EXPECT_PTR_EQ(test, sbad,
					    (const struct ib_send_wr *)&wr);
			one = 2;
		}
		ibpost_test_queue_get(p->a, true, &sa);
		ibpost_test_queue_get(p->b, false, &ra);
		path_unwatch_one(w);
		KUNIT_EXPECT_EQ_MSG(test, sa.posts_one - sb.posts_one, one,
				    "watched by %s", path_watch_name[w]);
		KUNIT_EXPECT_EQ_MSG(test, sa.posts_chain - sb.posts_chain, 1,
				    "watched by %s", path_watch_name[w]);
		KUNIT_EXPECT_EQ_MSG(test, ra.posts_one - rb.posts_one, 1,
				    "watched by %s", path_watch_name[w]);
		KUNIT_EXPECT_EQ_MSG(test, ra.posts_chain - rb.posts_chain, 1,
				    "watched by %s", path_watch_name[w]);
		if (w == WATCH_TRACE)
			KUNIT_EXPECT_EQ_MSG(test, 0,
					    ibpost_test_sh(PATH_TRACE_SEEN),
					    "no post event in the trace buffer");
		if (w == WATCH_HOOK)
			KUNIT_EXPECT_GT(test, atomic_read(hooks), 0);
	}
}

static struct kunit_case ibpost_batch_cases[] = {
	KUNIT_CASE_PARAM(ibpost_chain_across_batches, batch_case_gen_params),
	KUNIT_CASE(ibpost_chain_err_between_batches),
	KUNIT_CASE(ibpost_post_path_same_when_watched),
	{}
};

static struct kunit_suite ibpost_batch_suite = {
	.name = "ibpost_batch",
	.test_cases = ibpost_batch_cases,
};

kunit_test_suites(&ibpost_chain_suite, &ibpost_state_suite,
		  &ibpost_batch_suite);
