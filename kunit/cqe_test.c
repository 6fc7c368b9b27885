// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_cqe: the ib_cqe completion mode, in which every context is
 * the consumer's struct ib_cqe and comes back through its done(cq, wc)
 * with wc->wr_cqe the consumer's own, as ib_core's consumers complete;
 * contexts that are no usable ib_cqe refused at post, exactly per IBA
 * 11.4.1.1; and the attributes that contradict the mode refused.
 */
#include <linux/module.h>
#include <linux/wait.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

#define CQE_WRS	8
#define CQE_LEN	64

static const enum ib_poll_context cqe_ctxs[] = {
	IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE, IB_POLL_DIRECT,
};

static void cqe_ctx_desc(const enum ib_poll_context *p, char *desc)
{
	strscpy(desc, *p == IB_POLL_SOFTIRQ ? "softirq" :
		      *p == IB_POLL_WORKQUEUE ? "workqueue" : "direct",
		KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cqe_ctx, cqe_ctxs, cqe_ctx_desc);

struct cqe_run;

/* A consumer's request, with its cqe embedded as a ULP embeds it. */
struct cqe_req {
	struct ib_cqe cqe;
	struct cqe_run *run;
	int calls;
	enum ib_wc_status status;
	u32 byte_len;
	bool send;
};

struct cqe_run {
	wait_queue_head_t wq;
	atomic_t calls;
	atomic_t strays;	/* a done whose wc names no request of ours */
	struct cqe_req send[CQE_WRS], recv[2 * CQE_WRS], bad[2];
};

/* The run under way: a done whose wr_cqe is none of its requests' strays. */
static struct cqe_run *cqe_cur;

static bool cqe_ours(const struct ib_cqe *cqe)
{
	const void *lo = cqe_cur, *hi = cqe_cur + 1;

	return (const void *)cqe >= lo && (const void *)cqe < hi;
}

static void cqe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct cqe_req *req;
	struct cqe_run *run;

	if (!cqe_ours(wc->wr_cqe)) {
		atomic_inc(&cqe_cur->strays);
		atomic_inc(&cqe_cur->calls);
		wake_up(&cqe_cur->wq);
		return;
	}
	req = container_of(wc->wr_cqe, struct cqe_req, cqe);
	run = req->run;

	req->calls++;
	req->status = wc->status;
	req->byte_len = wc->byte_len;
	if (req->send != !(wc->opcode & IB_WC_RECV) &&
	    wc->status == IB_WC_SUCCESS)
		atomic_inc(&run->strays);
	atomic_inc(&run->calls);
	wake_up(&run->wq);
}

static void cqe_req_init(struct cqe_run *run, struct cqe_req *req, bool send)
{
	req->cqe.done = cqe_done;
	req->run = run;
	req->send = send;
}

static struct cqe_run *cqe_run_new(struct kunit *test)
{
	struct cqe_run *run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, run);
	cqe_cur = run;
	init_waitqueue_head(&run->wq);
	for (i = 0; i < CQE_WRS; i++)
		cqe_req_init(run, &run->send[i], true);
	for (i = 0; i < 2 * CQE_WRS; i++)
		cqe_req_init(run, &run->recv[i], false);
	for (i = 0; i < 2; i++)
		cqe_req_init(run, &run->bad[i], true);
	return run;
}

/* Wait up to 10 s for @want done calls, polling a DIRECT pair itself. */
static int cqe_wait(struct ibpost_test_pair *p, struct cqe_run *run,
		    enum ib_poll_context ctx, int want)
{
	unsigned long end = jiffies + 10 * HZ;

	while (atomic_read(&run->calls) < want && time_before(jiffies, end)) {
		if (ctx == IB_POLL_DIRECT) {
			ibpost_poll(p->a, 16);
			ibpost_poll(p->b, 16);
			cond_resched();
		} else {
			wait_event_timeout(run->wq,
					   atomic_read(&run->calls) >= want,
					   HZ / 10);
		}
	}
	return atomic_read(&run->calls);
}

static struct ibpost_test_pair *cqe_pair(struct kunit *test,
					 enum ib_poll_context ctx)
{
	struct ibpost_qp_attr attr;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_wr = 2 * CQE_WRS;
	attr.max_recv_wr = 2 * CQE_WRS;
	attr.poll_ctx = ctx;
	attr.ib_cqe = true;
	return ibpost_test_pair(test, &attr);
}

/*
 * Receives and sends on an ib_cqe pair: each signaled send and each
 * receive comes back once through its own cqe's done, with the data; an
 * unsignaled send that succeeds does not; the receives still posted when
 * the QP goes to ERR come back flushed, and those posted in ERR (which
 * ibpost flushes itself), through their done too, none again at the
 * destroy.
 */
static void ibpost_cqe_completes_through_done(struct kunit *test)
{
	enum ib_poll_context ctx =
		*(const enum ib_poll_context *)test->param_value;
	struct cqe_run *run = cqe_run_new(test);
	struct ibpost_test_pair *p = cqe_pair(test, ctx);
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	u8 *src = p->abuf.buf, *dst = p->bbuf.buf;
	struct ibpost_test_queue sq0, sq, rq0, rq;
	int i, signaled = 0, want;

	ibpost_test_queue_get(p->a, true, &sq0);
	ibpost_test_queue_get(p->b, false, &rq0);
	ibpost_test_fill(src, CQE_WRS * CQE_LEN, 0xc0e);
	ibpost_test_fill(dst, 2 * CQE_WRS * CQE_LEN, 0xbad);
	for (i = 0; i < 2 * CQE_WRS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p->b, &run->recv[i].cqe,
						 dst + i * CQE_LEN, CQE_LEN,
						 p->bbuf.mr));
	for (i = 0; i < CQE_WRS; i++) {
		bool sig = i % 2 == 0 || i == CQE_WRS - 1;

		signaled += sig;
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_send(p->a, &run->send[i].cqe,
						 src + i * CQE_LEN, CQE_LEN,
						 p->abuf.mr,
						 sig ? IB_SEND_SIGNALED : 0));
	}
	want = CQE_WRS + signaled;
	KUNIT_ASSERT_EQ(test, want, cqe_wait(p, run, ctx, want));
	for (i = 0; i < CQE_WRS; i++) {
		bool sig = i % 2 == 0 || i == CQE_WRS - 1;

		KUNIT_EXPECT_EQ_MSG(test, sig ? 1 : 0, run->send[i].calls,
				    "send %d", i);
		if (sig)
			KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
					run->send[i].status);
		KUNIT_EXPECT_EQ_MSG(test, 1, run->recv[i].calls, "recv %d", i);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, run->recv[i].status);
		KUNIT_EXPECT_EQ(test, (u32)CQE_LEN, run->recv[i].byte_len);
	}
	KUNIT_EXPECT_EQ(test, 0, memcmp(src, dst, CQE_WRS * CQE_LEN));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&run->strays));
	/* Each a success of a plain slot: the handlers' common path. */
	ibpost_test_queue_get(p->a, true, &sq);
	ibpost_test_queue_get(p->b, false, &rq);
	KUNIT_EXPECT_EQ(test, (u32)signaled, sq.comp_common - sq0.comp_common);
	KUNIT_EXPECT_EQ(test, (u32)CQE_WRS, rq.comp_common - rq0.comp_common);

	/*
	 * b to ERR: the receives left come back flushed by the provider,
	 * and two posted in ERR flushed by ibpost itself (its flush worker,
	 * or the DIRECT poll), each through its done.
	 */
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->b, &err, IB_QP_STATE));
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p->b, &run->bad[i].cqe,
						 dst + i * CQE_LEN, CQE_LEN,
						 p->bbuf.mr));
	want += CQE_WRS + 2;
	KUNIT_EXPECT_EQ(test, want, cqe_wait(p, run, ctx, want));
	for (i = CQE_WRS; i < 2 * CQE_WRS; i++) {
		KUNIT_EXPECT_EQ_MSG(test, 1, run->recv[i].calls, "recv %d", i);
		KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, run->recv[i].status);
	}
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ_MSG(test, 1, run->bad[i].calls, "in ERR %d", i);
		KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, run->bad[i].status);
	}
	/* Nothing comes back twice, at the destroy or before. */
	ibpost_qp_destroy(p->b);
	p->b = NULL;
	KUNIT_EXPECT_EQ(test, want, atomic_read(&run->calls));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&run->strays));
}

/* A send_done, which ib_cqe mode does not take. */
static void cqe_send_done(struct ibpost_qp *qp, void *context,
			  const struct ib_wc *wc)
{
}

/*
 * In ib_cqe mode a WR whose wr_cqe is NULL or has no done is refused
 * with -EINVAL: bad_wr names it, the WRs before it are queued and come
 * back, none from it on is; the seed operations refuse such a context
 * too. A QP asking for ib_cqe mode and callbacks is refused.
 */
static void ibpost_cqe_bad_context_refused(struct kunit *test)
{
	struct cqe_run *run = cqe_run_new(test);
	struct ibpost_test_pair *p = cqe_pair(test, IB_POLL_SOFTIRQ);
	const struct ib_send_wr *sbad = NULL;
	const struct ib_recv_wr *rbad = NULL;
	struct ib_recv_wr rwr[3] = {};
	struct ib_send_wr swr[3] = {};
	struct ib_sge rsge[3], ssge[3];
	struct ibpost_qp_attr attr;
	struct ib_cqe nodone = {};
	int i;

	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_mr_sge(p->bbuf.mr,
					      (u8 *)p->bbuf.buf + i * CQE_LEN,
					      CQE_LEN, &rsge[i]));
		rwr[i].sg_list = &rsge[i];
		rwr[i].num_sge = 1;
		rwr[i].next = i < 2 ? &rwr[i + 1] : NULL;
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_mr_sge(p->abuf.mr,
					      (u8 *)p->abuf.buf + i * CQE_LEN,
					      CQE_LEN, &ssge[i]));
		swr[i].sg_list = &ssge[i];
		swr[i].num_sge = 1;
		swr[i].opcode = IB_WR_SEND;
		swr[i].send_flags = IB_SEND_SIGNALED;
		swr[i].next = i < 2 ? &swr[i + 1] : NULL;
	}
	rwr[0].wr_cqe = &run->recv[0].cqe;
	rwr[1].wr_cqe = NULL;
	rwr[2].wr_cqe = &run->recv[2].cqe;
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_recv_list(p->b, rwr, &rbad));
	KUNIT_EXPECT_PTR_EQ(test, &rwr[1], rbad);

	swr[0].wr_cqe = &run->send[0].cqe;
	swr[1].wr_cqe = &nodone;
	swr[2].wr_cqe = &run->send[2].cqe;
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_send_list(p->a, swr, &sbad));
	KUNIT_EXPECT_PTR_EQ(test, &swr[1], sbad);
	/* The seed operations: the same rule. */
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_send(p->a, NULL, p->abuf.buf, CQE_LEN,
					 p->abuf.mr, IB_SEND_SIGNALED));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_recv(p->b, &nodone, p->bbuf.buf, CQE_LEN,
					 p->bbuf.mr));

	/* The queued prefixes: the send landed in the one receive. */
	KUNIT_EXPECT_EQ(test, 2, cqe_wait(p, run, IB_POLL_SOFTIRQ, 2));
	KUNIT_EXPECT_EQ(test, 1, run->send[0].calls);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, run->send[0].status);
	KUNIT_EXPECT_EQ(test, 1, run->recv[0].calls);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, run->recv[0].status);
	ibpost_qp_destroy(p->a);
	p->a = NULL;
	ibpost_qp_destroy(p->b);
	p->b = NULL;
	KUNIT_EXPECT_EQ(test, 0, run->send[2].calls);
	KUNIT_EXPECT_EQ(test, 0, run->recv[2].calls);
	KUNIT_EXPECT_EQ(test, 2, atomic_read(&run->calls));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&run->strays));

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.ib_cqe = true;
	attr.send_done = cqe_send_done;
	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(ibpost_qp_create(p->dev, &attr)));
}

static struct kunit_case ibpost_cqe_cases[] = {
	KUNIT_CASE_PARAM(ibpost_cqe_completes_through_done,
			 cqe_ctx_gen_params),
	KUNIT_CASE(ibpost_cqe_bad_context_refused),
	{}
};

static struct kunit_suite ibpost_cqe_suite = {
	.name = "ibpost_cqe",
	.test_cases = ibpost_cqe_cases,
};

kunit_test_suites(&ibpost_cqe_suite);
