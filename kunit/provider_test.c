// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_provider: the same bad chains, posted raw on the provider's
 * own QP (ib_post_send() on ibpost_qp_ibqp()) and through ibpost, on the
 * device under test. ibpost's answer is asserted: the errno of the
 * contract's table and *bad_wr at the bad WR, the WRs before it queued and
 * completing. The provider's own answer is recorded, not judged: each row
 * prints one "ibpost-provider:" line, from which the test run builds the
 * raw-versus-ibpost table of Documentation/providers.rst.
 *
 * Each row runs on a fresh pair: a raw chain the provider accepts may fail
 * later and take the QP to ERR. Raw WRs carry a completion entry of this
 * suite's own, so the provider's completions of them never reach ibpost's
 * accounting; ibpost's destroy drains them like any other.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/slab.h>
#include "ibpost_test.h"

#define PROV_LEN	3	/* chain: valid, the row's bad WR, valid */

enum prov_row {
	R_OPCODE, R_SGE_MANY, R_INLINE_LONG, R_INLINE_READ, R_BAD_LKEY,
	R_ATOMIC, R_SEND_IMM, R_WRITE_IMM, R_READ_2SGE, R_READ_0SGE,
	R_READ_FENCE, R_NOT_RTS, R_OVERFLOW, R_COUNT
};

static const char * const prov_name[R_COUNT] = {
	"opcode_unknown", "sge_over_granted", "inline_over_granted",
	"inline_on_read", "lkey_unknown", "atomic_misaligned",
	"send_with_imm", "write_with_imm", "read_2_sge", "read_0_sge",
	"read_fenced", "not_connected", "queue_overflow",
};

struct prov_raw {
	struct ib_cqe cqe;
	atomic_t errors;
	int status;		/* the first error's */
};

static void prov_raw_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct prov_raw *r = container_of(wc->wr_cqe, struct prov_raw, cqe);

	if (wc->status != IB_WC_SUCCESS &&
	    atomic_inc_return(&r->errors) == 1)
		r->status = wc->status;
}

/* A chain of @n WRITEs of 8 bytes from a to b's bw, the first signaled. */
struct prov_chain {
	struct ib_rdma_wr wr[PROV_LEN];
	struct ib_rdma_wr *many;	/* R_OVERFLOW: n WRs */
	struct ib_sge sge[PROV_LEN][3];
	u32 n;
};

static struct ib_send_wr *prov_first(struct prov_chain *c)
{
	return c->many ? &c->many[0].wr : &c->wr[0].wr;
}

static void prov_write(struct kunit *test, struct ibpost_test_pair *p,
		       struct ib_rdma_wr *w, struct ib_sge *sge, u32 i)
{
	memset(w, 0, sizeof(*w));
	KUNIT_ASSERT_EQ(test, 0, ibpost_mr_sge(p->abuf.mr,
					       (u8 *)p->abuf.buf + 8 * (i % 64),
					       8, sge));
	w->wr.wr_id = 100 + i;
	w->wr.opcode = IB_WR_RDMA_WRITE;
	w->wr.sg_list = sge;
	w->wr.num_sge = 1;
	w->wr.send_flags = i ? 0 : IB_SEND_SIGNALED;
	w->remote_addr = ibpost_mr_remote_addr(p->bw.mr) + 8 * (i % 64);
	w->rkey = ibpost_mr_rkey(p->bw.mr);
}

/* Build row @row's chain on @p; *@bad_at: the WR ibpost must refuse. */
static void prov_build(struct kunit *test, struct ibpost_test_pair *p,
		       enum prov_row row, struct prov_chain *c, u32 cap,
		       int *bad_at)
{
	struct ib_rdma_wr *b = &c->wr[1];
	u32 i;

	*bad_at = 1;
	c->n = PROV_LEN;
	if (row == R_OVERFLOW) {
		/* Longer than the provider's real queue, and ibpost's. */
		c->n = cap + 2;
		c->many = kunit_kcalloc(test, c->n, sizeof(*c->many),
					GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, c->many);
		for (i = 0; i < c->n; i++) {
			prov_write(test, p, &c->many[i], &c->sge[0][0], i);
			c->many[i].wr.next = i + 1 < c->n ?
					     &c->many[i + 1].wr : NULL;
		}
		*bad_at = p->got.max_send_wr;
		return;
	}
	for (i = 0; i < PROV_LEN; i++) {
		prov_write(test, p, &c->wr[i], &c->sge[i][0], i);
		c->wr[i].wr.next = i + 1 < PROV_LEN ? &c->wr[i + 1].wr : NULL;
	}
	c->wr[2].wr.send_flags = IB_SEND_SIGNALED;
	if (row == R_INLINE_READ || row == R_READ_2SGE || row == R_READ_0SGE ||
	    row == R_READ_FENCE) {
		b->remote_addr = ibpost_mr_remote_addr(p->br.mr);
		b->rkey = ibpost_mr_rkey(p->br.mr);
	}
	switch (row) {
	case R_OPCODE:
		b->wr.opcode = 0xf0;
		break;
	case R_SGE_MANY:
		b->wr.num_sge = p->got.max_send_sge + 1;
		b->wr.sg_list = kunit_kcalloc(test, b->wr.num_sge,
					      sizeof(struct ib_sge), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, b->wr.sg_list);
		for (i = 0; i < b->wr.num_sge; i++)
			b->wr.sg_list[i] = c->sge[1][0];
		break;
	case R_INLINE_LONG:
		b->wr.send_flags |= IB_SEND_INLINE;
		c->sge[1][0].addr = (uintptr_t)p->abuf.buf;
		c->sge[1][0].length = p->got.max_inline_data + 1;
		break;
	case R_INLINE_READ:
		b->wr.opcode = IB_WR_RDMA_READ;
		b->wr.send_flags |= IB_SEND_INLINE;
		c->sge[1][0].addr = (uintptr_t)p->abuf.buf;
		break;
	case R_BAD_LKEY:
		c->sge[1][0].lkey ^= 0x5a5a00;
		break;
	case R_ATOMIC:
		b->wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
		c->sge[1][0].addr += 4;
		break;
	case R_SEND_IMM:
		b->wr.opcode = IB_WR_SEND_WITH_IMM;
		break;
	case R_WRITE_IMM:
		b->wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
		break;
	case R_READ_2SGE:
		b->wr.opcode = IB_WR_RDMA_READ;
		c->sge[1][1] = c->sge[1][0];
		c->sge[1][1].addr += 8;
		b->wr.num_sge = 2;
		break;
	case R_READ_0SGE:
		b->wr.opcode = IB_WR_RDMA_READ;
		b->wr.num_sge = 0;
		break;
	case R_READ_FENCE:
		b->wr.opcode = IB_WR_RDMA_READ;
		b->wr.send_flags |= IB_SEND_FENCE;
		break;
	case R_NOT_RTS:
		*bad_at = 0;
		break;
	default:
		break;
	}
}

/* The position of @bad in @c; -1 for NULL, -2 when never set. */
static int prov_pos(struct prov_chain *c, const struct ib_send_wr *bad,
		    const struct ib_send_wr *unset)
{
	const struct ib_send_wr *w;
	int i = 0;

	if (bad == unset)
		return -2;
	for (w = prov_first(c); w; w = w->next, i++)
		if (w == bad)
			return i;
	return -1;
}

static void prov_pos_str(char *buf, size_t len, int pos)
{
	if (pos == -2)
		strscpy(buf, "unset", len);
	else if (pos == -1)
		strscpy(buf, "NULL", len);
	else
		snprintf(buf, len, "%d", pos);
}

/* The errno ibpost's contract gives row @row on @p's device. */
static int prov_expect(struct ibpost_test_pair *p, enum prov_row row)
{
	struct ib_device *ibdev = ibpost_dev_ibdev(p->dev);
	bool iwarp = ibpost_test_iwarp(p->dev);

	switch (row) {
	case R_NOT_RTS:
		return -ENOTCONN;
	case R_OVERFLOW:
		return -ENOMEM;
	case R_SEND_IMM:
	case R_WRITE_IMM:
		return iwarp ? -EINVAL : 0;
	case R_READ_2SGE:
		return ibdev->attrs.max_sge_rd >= 2 ? 0 : -EINVAL;
	case R_READ_0SGE:
	case R_READ_FENCE:
		return iwarp ? -EINVAL : 0;
	default:
		return -EINVAL;
	}
}

static struct ibpost_test_pair *prov_pair(struct kunit *test,
					  enum prov_row row)
{
	struct ibpost_qp_attr attr;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_inline_data = 64;
	/* ibpost's forced signals stay out of the overflow row's way. */
	attr.signal_interval = 1U << 20;
	if (row == R_NOT_RTS) {
		struct ibpost_test_pair *p;

		p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, p);
		p->dev = ibpost_test_dev(test);
		p->a = ibpost_test_qp(test, p->dev, &attr);
		ibpost_qp_get_attr(p->a, &p->got);
		ibpost_test_buf_init(test, &p->abuf, p->dev, NULL, 4096,
				     IBPOST_TEST_MSGS);
		ibpost_test_defer(test,
				  (void (*)(void *))ibpost_test_buf_fini,
				  &p->abuf);
		/* Stand in for a peer's windows: never reached. */
		p->bw = p->abuf;
		p->br = p->abuf;
		return p;
	}
	return ibpost_test_pair_len(test, &attr, 4096);
}

/* The provider's queue as granted, from its own query. */
static u32 prov_cap(struct kunit *test, struct ibpost_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr qa;

	KUNIT_ASSERT_EQ(test, 0, ib_query_qp(ibpost_qp_ibqp(qp), &qa,
					     IB_QP_CAP, &init));
	return init.cap.max_send_wr;
}

static void prov_recvs(struct kunit *test, struct ibpost_test_pair *p)
{
	int i;

	/* The IMM rows consume a receive at b where they are valid. */
	for (i = 0; p->b && i < 2; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(i),
							  p->bbuf.buf, 64,
							  p->bbuf.mr));
}

static void ibpost_provider_raw_vs_ibpost(struct kunit *test)
{
	static const struct ib_send_wr unset_mark;
	const struct ib_send_wr *bad = &unset_mark;
	enum prov_row row = *(const enum prov_row *)test->param_value;
	int raw, ret, raw_pos, pos, bad_at, expect, i;
	struct ibpost_test_pair *p;
	struct prov_chain *c;
	struct ibpost_comp comp;
	struct prov_raw *r;
	char rp[8], ip[8];

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, r && c);
	r->cqe.done = prov_raw_done;
	atomic_set(&r->errors, 0);

	/* Raw: the provider's own answer, on a pair of its own. */
	p = prov_pair(test, row);
	prov_recvs(test, p);
	prov_build(test, p, row, c, prov_cap(test, p->a), &bad_at);
	for (i = 0; i < c->n; i++)
		(c->many ? &c->many[i].wr : &c->wr[i].wr)->wr_cqe = &r->cqe;
	raw = ib_post_send(ibpost_qp_ibqp(p->a), prov_first(c), &bad);
	raw_pos = raw ? prov_pos(c, bad, &unset_mark) : -1;
	msleep(200);			/* for the errors that come later */
	prov_pos_str(rp, sizeof(rp), raw_pos);

	/* ibpost, on a fresh pair: the contract's answer, asserted. */
	expect = prov_expect(p, row);
	memset(c, 0, sizeof(*c));
	p = prov_pair(test, row);
	prov_recvs(test, p);
	prov_build(test, p, row, c, prov_cap(test, p->a), &bad_at);
	bad = &unset_mark;
	ret = ibpost_post_send_list(p->a, prov_first(c), &bad);
	pos = prov_pos(c, bad, &unset_mark);
	prov_pos_str(ip, sizeof(ip), pos);
	kunit_info(test, "ibpost-provider: %s %s raw %d %s %d %d ibpost %d %s\n",
		   ibpost_test_ibdev(), prov_name[row], raw, rp,
		   atomic_read(&r->errors), r->status, ret, ip);

	KUNIT_EXPECT_EQ(test, expect, ret);
	if (ret) {
		KUNIT_EXPECT_EQ(test, bad_at, pos);
		/* The WRs before it were queued: the first one completes. */
		if (bad_at > 0) {
			ibpost_test_send_comp(test, p->a, &comp);
			KUNIT_EXPECT_PTR_EQ(test, CTX(100), comp.context);
			KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		}
	} else {
		KUNIT_EXPECT_EQ(test, -1, pos);
		for (i = 0; i < 2; i++) {
			ibpost_test_send_comp(test, p->a, &comp);
			KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
		}
	}
	if (row != R_OVERFLOW)
		ibpost_test_no_send_comp(test, p->a);
}

static void prov_desc(const enum prov_row *row, char *desc)
{
	strscpy(desc, prov_name[*row], KUNIT_PARAM_DESC_SIZE);
}

static const enum prov_row prov_rows[R_COUNT] = {
	R_OPCODE, R_SGE_MANY, R_INLINE_LONG, R_INLINE_READ, R_BAD_LKEY,
	R_ATOMIC, R_SEND_IMM, R_WRITE_IMM, R_READ_2SGE, R_READ_0SGE,
	R_READ_FENCE, R_NOT_RTS, R_OVERFLOW,
};

KUNIT_ARRAY_PARAM(prov, prov_rows, prov_desc);

static struct kunit_case ibpost_provider_cases[] = {
	KUNIT_CASE_PARAM(ibpost_provider_raw_vs_ibpost, prov_gen_params),
	{}
};

static struct kunit_suite ibpost_provider_suite = {
	.name = "ibpost_provider",
	.test_cases = ibpost_provider_cases,
};

kunit_test_suites(&ibpost_provider_suite);
