// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_xhost: the KUnit side's connections to ibpost_xhost_server.
 *
 * xc_open() connects a fresh cm_id and ibpost QP to the server at
 * XHOST_SERVER_ADDR:XHOST_PORT, registers the connection's own buffers
 * and waits for HELLO. The server serves one connection at a time, so a
 * rejected connect (the previous connection may still be closing there)
 * is retried, from scratch, after a pause. Completions come through
 * ibpost_get_*_comp(). Every wait is bounded, and sleeps in slices well
 * below the hung-task limit. A connection is torn down when the test
 * ends, or earlier by xc_close(): the QP, then the MRs, then the cm_id.
 */
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/slab.h>
#include <kunit/test.h>
#include <rdma/rdma_cm.h>
#include "xhost.h"

#define XC_TRIES	10
#define XC_RETRY_MS	1000
#define XC_CM_SECS	30
#define XC_RESOLVE_MS	5000
#define XC_CONNECT_END	(BIT(RDMA_CM_EVENT_ESTABLISHED) | \
			 BIT(RDMA_CM_EVENT_REJECTED) | \
			 BIT(RDMA_CM_EVENT_UNREACHABLE) | \
			 BIT(RDMA_CM_EVENT_CONNECT_ERROR) | \
			 BIT(RDMA_CM_EVENT_DISCONNECTED))

/* ---- A connection's resources ---------------------------------------- */

/* A buffer of @len bytes registered on the connection's device. */
static void xc_buf_init(struct xc_conn *c, struct ibpost_test_buf *b,
			size_t len)
{
	ibpost_test_buf_init(c->test, b, c->dev, NULL, len, IBPOST_TEST_MSGS);
}

static void xc_conn_free(void *data)
{
	struct xc_conn *c = data;
	u32 i;

	ibpost_qp_destroy(c->qp);
	for (i = 0; i < c->nring; i++)
		ibpost_test_buf_fini(&c->ring[i]);
	kfree(c->ring);
	ibpost_test_buf_fini(&c->data);
	ibpost_test_buf_fini(&c->rx);
	ibpost_test_buf_fini(&c->tx);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->dev)
		ibpost_dev_put(c->dev);
	kfree(c);
}

/* @n message buffers for messages in flight, freed with @c. */
void xc_ring_alloc(struct xc_conn *c, u32 n)
{
	u32 i;

	c->ring = kcalloc(n, sizeof(*c->ring), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(c->test, c->ring);
	c->nring = n;
	for (i = 0; i < n; i++)
		xc_buf_init(c, &c->ring[i], XHOST_MSG_MAX);
}

/* ---- rdma_cm ---------------------------------------------------------- */

static int xc_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct xc_conn *c = id->context;

	if (ev->event == RDMA_CM_EVENT_REJECTED)
		c->reject_status = ev->status;
	if (ev->event < BITS_PER_LONG)
		set_bit(ev->event, &c->events);
	wake_up_all(&c->wq);
	return 0;
}

/* Wait up to @secs for any event of @mask; true when one came. */
static bool xc_wait_mask(struct xc_conn *c, unsigned long mask,
			 unsigned int secs)
{
	unsigned long deadline = jiffies + secs * HZ;

	while (!(READ_ONCE(c->events) & mask)) {
		if (time_after_eq(jiffies, deadline))
			return false;
		wait_event_timeout(c->wq, READ_ONCE(c->events) & mask, HZ);
	}
	return true;
}

static bool xc_wait(struct xc_conn *c, enum rdma_cm_event_type ev,
		    unsigned int secs)
{
	return xc_wait_mask(c, BIT(ev), secs);
}

static void xc_resolve(struct xc_conn *c)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(XHOST_PORT),
		.sin_addr.s_addr = in_aton(XHOST_SERVER_ADDR),
	};
	struct kunit *test = c->test;

	KUNIT_ASSERT_EQ(test, rdma_resolve_addr(c->id, NULL,
						(struct sockaddr *)&sin,
						XC_RESOLVE_MS), 0);
	xc_wait_mask(c, BIT(RDMA_CM_EVENT_ADDR_RESOLVED) |
		     BIT(RDMA_CM_EVENT_ADDR_ERROR), XC_CM_SECS);
	KUNIT_ASSERT_TRUE_MSG(test, test_bit(RDMA_CM_EVENT_ADDR_RESOLVED,
					     &c->events),
			      "%s not resolved: events %#lx",
			      XHOST_SERVER_ADDR, c->events);
	KUNIT_ASSERT_EQ(test, rdma_resolve_route(c->id, XC_RESOLVE_MS), 0);
	xc_wait_mask(c, BIT(RDMA_CM_EVENT_ROUTE_RESOLVED) |
		     BIT(RDMA_CM_EVENT_ROUTE_ERROR), XC_CM_SECS);
	KUNIT_ASSERT_TRUE_MSG(test, test_bit(RDMA_CM_EVENT_ROUTE_RESOLVED,
					     &c->events),
			      "no route to %s: events %#lx",
			      XHOST_SERVER_ADDR, c->events);
}

/* The device, the buffers and the QP, once the id knows its device. */
static void xc_setup(struct xc_conn *c)
{
	struct ibpost_qp_attr attr = {
		.qp_type = IB_QPT_RC,
		.max_send_wr = 128, .max_recv_wr = 8,
		.max_send_sge = 4, .max_recv_sge = 2,
		.poll_ctx = IB_POLL_SOFTIRQ,
		.rw_ops = 2,
	};
	struct ibpost_dev *dev;
	struct ibpost_qp *qp;

	dev = ibpost_dev_get(dev_name(&c->id->device->dev));
	KUNIT_ASSERT_FALSE_MSG(c->test, IS_ERR(dev), "no ibpost device %s",
			       dev_name(&c->id->device->dev));
	c->dev = dev;
	xc_buf_init(c, &c->tx, XHOST_MSG_MAX);
	xc_buf_init(c, &c->rx, XHOST_MSG_MAX);
	xc_buf_init(c, &c->data, XC_DATA_LEN);
	qp = ibpost_qp_create_cm(c->id, &attr);
	KUNIT_ASSERT_FALSE_MSG(c->test, IS_ERR(qp), "qp_create_cm: %ld",
			       PTR_ERR(qp));
	c->qp = qp;
	ibpost_qp_get_attr(qp, &c->got);
}

/* The server's first message: its windows. */
static void xc_hello(struct xc_conn *c)
{
	const struct xhost_msg *m = c->rx.buf;
	struct kunit *test = c->test;
	struct xc_peer *p = &c->peer;
	struct ibpost_comp comp;
	u64 rd;

	xc_recv_comp(c, &comp, XC_REPLY_SECS);
	KUNIT_ASSERT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, comp.byte_len, (u32)sizeof(*m));
	KUNIT_ASSERT_EQ(test, le32_to_cpu(m->magic), XHOST_MAGIC);
	KUNIT_ASSERT_EQ(test, le32_to_cpu(m->type), (u32)XHOST_HELLO);
	p->wr_addr = le64_to_cpu(m->addr);
	p->wr_rkey = le32_to_cpu(m->rkey);
	p->wr_len = le32_to_cpu(m->len);
	p->rd_addr = le64_to_cpu(m->arg0);
	rd = le64_to_cpu(m->arg1);
	p->rd_rkey = rd >> 32;
	p->rd_len = (u32)rd;
	p->rd_seed = le32_to_cpu(m->seed);
	KUNIT_ASSERT_EQ(test, p->wr_len, XHOST_WIN);
	KUNIT_ASSERT_EQ(test, p->rd_len, XHOST_WIN);
	KUNIT_ASSERT_EQ(test, p->rd_seed, XHOST_READ_SEED);
}

/* Connect; false when the server rejected the request (it is busy). */
static bool xc_connect(struct xc_conn *c)
{
	struct rdma_conn_param param = {
		.responder_resources = 4, .initiator_depth = 4,
		.retry_count = 6, .rnr_retry_count = 7,
	};
	struct kunit *test = c->test;
	struct rdma_cm_id *id;

	id = rdma_create_id(&init_net, xc_handler, c, RDMA_PS_TCP, IB_QPT_RC);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(id), "rdma_create_id: %ld",
			       PTR_ERR(id));
	c->id = id;
	xc_resolve(c);
	xc_setup(c);
	/* HELLO's receive, before the connection: INIT takes receives. */
	KUNIT_ASSERT_EQ(test, ibpost_post_recv(c->qp, c->rx.buf, c->rx.buf,
					       XHOST_MSG_MAX, c->rx.mr), 0);
	KUNIT_ASSERT_EQ(test, rdma_connect(c->id, &param), 0);
	KUNIT_ASSERT_TRUE_MSG(test, xc_wait_mask(c, XC_CONNECT_END,
						 XC_CM_SECS),
			      "no answer to the connect request");
	if (test_bit(RDMA_CM_EVENT_REJECTED, &c->events))
		return false;
	/*
	 * iWARP: a busy server's refusal can come back as a CONNECT_ERROR
	 * (the MPA exchange or TCP ended early): retried the same way.
	 */
	if (test_bit(RDMA_CM_EVENT_CONNECT_ERROR, &c->events) &&
	    rdma_protocol_iwarp(c->id->device, c->id->port_num))
		return false;
	KUNIT_ASSERT_TRUE_MSG(test, test_bit(RDMA_CM_EVENT_ESTABLISHED,
					     &c->events),
			      "connect failed: events %#lx", c->events);
	xc_hello(c);
	return true;
}

struct xc_conn *xc_open(struct kunit *test)
{
	struct xc_conn *c;
	int i;

	for (i = 0; i < XC_TRIES; i++) {
		c = kzalloc(sizeof(*c), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, c);
		c->test = test;
		init_waitqueue_head(&c->wq);
		ibpost_test_defer(test, xc_conn_free, c);
		if (xc_connect(c))
			return c;
		kunit_info(test, "connect rejected (reason %d), retrying\n",
			   c->reject_status);
		xc_close(c);
		msleep(XC_RETRY_MS);
	}
	KUNIT_FAIL(test, "the server rejected %d connect requests", XC_TRIES);
	return NULL;
}

void xc_close(struct xc_conn *c)
{
	ibpost_test_undefer(c->test, c);
}

void xc_disconnect(struct xc_conn *c, unsigned int secs)
{
	KUNIT_EXPECT_EQ(c->test, rdma_disconnect(c->id), 0);
	KUNIT_ASSERT_TRUE_MSG(c->test,
			      xc_wait(c, RDMA_CM_EVENT_DISCONNECTED, secs),
			      "no DISCONNECTED within %u s: events %#lx",
			      secs, c->events);
}

/* ---- Completions and requests ---------------------------------------- */

void xc_send_comp(struct xc_conn *c, struct ibpost_comp *comp,
		  unsigned int secs)
{
	ibpost_test_send_comp_secs(c->test, c->qp, comp, secs);
}

void xc_recv_comp(struct xc_conn *c, struct ibpost_comp *comp,
		  unsigned int secs)
{
	ibpost_test_recv_comp_secs(c->test, c->qp, comp, secs);
}

/*
 * Send the request in c->tx (its header and @plen payload bytes) after
 * posting the receive for its answer; wait for both. Return the answer,
 * in c->rx, checked to be whole and to answer this request.
 */
const struct xhost_msg *xc_call(struct xc_conn *c, u32 plen)
{
	struct xhost_msg *req = c->tx.buf, *rep = c->rx.buf;
	struct kunit *test = c->test;
	struct ibpost_comp comp;

	KUNIT_ASSERT_EQ(test, ibpost_post_recv(c->qp, rep, rep, XHOST_MSG_MAX,
					       c->rx.mr), 0);
	KUNIT_ASSERT_EQ(test, ibpost_post_send(c->qp, req, req,
					       sizeof(*req) + plen, c->tx.mr,
					       IB_SEND_SIGNALED), 0);
	xc_send_comp(c, &comp, XC_REPLY_SECS);
	KUNIT_ASSERT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_PTR_EQ(test, comp.context, (void *)req);
	xc_recv_comp(c, &comp, XC_REPLY_SECS);
	KUNIT_ASSERT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_PTR_EQ(test, comp.context, (void *)rep);
	KUNIT_ASSERT_GE(test, comp.byte_len, (u32)sizeof(*rep));
	KUNIT_ASSERT_EQ(test, le32_to_cpu(rep->magic), XHOST_MAGIC);
	KUNIT_ASSERT_EQ(test, le32_to_cpu(rep->seq), le32_to_cpu(req->seq));
	KUNIT_ASSERT_EQ(test, comp.byte_len,
			(u32)sizeof(*rep) + le32_to_cpu(rep->len));
	return rep;
}

/* @len bytes of pattern(@seed) out in an ECHO, and back. */
void xc_echo(struct xc_conn *c, u32 len, u32 seed)
{
	struct xhost_msg *req = c->tx.buf;
	const struct xhost_msg *rep;

	xhost_msg_init(req, XHOST_ECHO, ++c->seq, len, seed);
	xhost_fill(req + 1, len, seed);
	rep = xc_call(c, len);
	KUNIT_EXPECT_EQ(c->test, le32_to_cpu(rep->type), (u32)XHOST_ECHO);
	KUNIT_ASSERT_EQ(c->test, le32_to_cpu(rep->len), len);
	KUNIT_EXPECT_EQ(c->test, memcmp(rep + 1, req + 1, len), 0);
}

/* A request without payload, answered by RESULT. */
const struct xhost_msg *xc_request(struct xc_conn *c, u32 type, u64 arg0,
				   u32 len, u32 seed)
{
	struct xhost_msg *req = c->tx.buf;
	const struct xhost_msg *rep;

	xhost_msg_init(req, type, ++c->seq, len, seed);
	req->arg0 = cpu_to_le64(arg0);
	rep = xc_call(c, 0);
	KUNIT_ASSERT_EQ(c->test, le32_to_cpu(rep->type), (u32)XHOST_RESULT);
	return rep;
}

/* The same, for the RESULT's arg0. */
u64 xc_ask(struct xc_conn *c, u32 type, u64 arg0, u32 len, u32 seed)
{
	return le64_to_cpu(xc_request(c, type, arg0, len, seed)->arg0);
}
