// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_cm: QPs made by ibpost_qp_create_cm() and connected through the
 * kernel's rdma_cm, on one host: the client connects to the test guest's
 * own address on the netdev of the device under test (10.99.0.1 on rxe0's,
 * 10.98.0.1 on siw0's), so the connection goes through address and route
 * resolution, REQ/REP/RTU and DREQ/DREP (on iWARP: TCP and MPA) exactly
 * as between two hosts.
 */
#include <linux/inet.h>
#include <linux/wait.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include <rdma/restrack.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

#define CM_TIMEOUT		(30 * HZ)
#define CM_RECVS		8

struct cm_side {
	struct rdma_cm_id *id;
	struct ibpost_qp *qp;
	unsigned long events;		/* bit per rdma_cm_event_type */
	int create_err;
};

struct cm_conn {
	struct kunit *test;
	struct rdma_cm_id *listen;
	struct cm_side client, server;
	struct ibpost_qp_attr attr;
	u8 depth;			/* both sides' initiator depth */
	wait_queue_head_t wq;
	struct ibpost_test_buf sbuf, cbuf, sw, sr;
};

static void cm_accept(struct cm_conn *c, struct rdma_cm_id *id)
{
	struct rdma_conn_param param = {
		.responder_resources = c->depth, .initiator_depth = c->depth,
		.rnr_retry_count = 7,
	};

	c->server.id = id;
	c->server.qp = ibpost_qp_create_cm(id, &c->attr);
	if (IS_ERR(c->server.qp)) {
		c->server.create_err = PTR_ERR(c->server.qp);
		c->server.qp = NULL;
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return;
	}
	c->server.create_err = rdma_accept(id, &param);
}

static int cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cm_conn *c = id->context;
	struct cm_side *side = id == c->client.id ? &c->client : &c->server;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		cm_accept(c, id);
	if (ev->event < BITS_PER_LONG)
		set_bit(ev->event, &side->events);
	wake_up_all(&c->wq);
	return 0;
}

static bool cm_wait(struct cm_conn *c, struct cm_side *side,
		    enum rdma_cm_event_type ev)
{
	return wait_event_timeout(c->wq, test_bit(ev, &side->events),
				  CM_TIMEOUT) > 0;
}

static void cm_conn_free(void *data)
{
	struct cm_conn *c = data;

	/* ibpost_qp_destroy() first, as rdma_destroy_qp() would be. */
	ibpost_qp_destroy(c->client.qp);
	ibpost_qp_destroy(c->server.qp);
	ibpost_test_buf_fini(&c->sw);
	ibpost_test_buf_fini(&c->sr);
	ibpost_test_buf_fini(&c->sbuf);
	ibpost_test_buf_fini(&c->cbuf);
	if (c->client.id)
		rdma_destroy_id(c->client.id);
	if (c->server.id)
		rdma_destroy_id(c->server.id);
	if (c->listen)
		rdma_destroy_id(c->listen);
}

static struct sockaddr_in cm_addr(struct kunit *test, u16 port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};

	KUNIT_EXPECT_EQ(test, 0, ibpost_test_dev_addr(ibpost_test_dev(test),
						      &sin));
	return sin;
}

/*
 * Listen on @port, connect a client to it; both QPs through ibpost, each
 * side with @depth READs and atomics in flight as initiator and as
 * responder (a side's ORD is the least of its initiator depth and the
 * peer's responder resources).
 */
static struct cm_conn *cm_connect_depth(struct kunit *test, u16 port,
					u8 depth)
{
	struct rdma_conn_param param = {
		.responder_resources = depth, .initiator_depth = depth,
		.retry_count = 6, .rnr_retry_count = 7,
	};
	struct sockaddr_in sin = cm_addr(test, port);
	struct ibpost_dev *dev;
	struct cm_conn *c;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	c->test = test;
	c->depth = depth;
	init_waitqueue_head(&c->wq);
	ibpost_test_attr(&c->attr, IB_QPT_RC);
	c->attr.max_recv_wr = CM_RECVS;
	ibpost_test_defer(test, cm_conn_free, c);

	c->listen = rdma_create_id(&init_net, cm_handler, c, RDMA_PS_TCP,
				   IB_QPT_RC);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->listen));
	KUNIT_ASSERT_EQ(test, rdma_bind_addr(c->listen,
					     (struct sockaddr *)&sin), 0);
	KUNIT_ASSERT_EQ(test, rdma_listen(c->listen, 4), 0);

	c->client.id = rdma_create_id(&init_net, cm_handler, c, RDMA_PS_TCP,
				      IB_QPT_RC);
	if (IS_ERR(c->client.id)) {
		c->client.id = NULL;
		KUNIT_FAIL(test, "rdma_create_id failed");
		return NULL;
	}
	KUNIT_ASSERT_EQ(test, rdma_resolve_addr(c->client.id, NULL,
						(struct sockaddr *)&sin,
						5000), 0);
	KUNIT_ASSERT_TRUE(test, cm_wait(c, &c->client,
					RDMA_CM_EVENT_ADDR_RESOLVED));
	KUNIT_ASSERT_EQ(test, rdma_resolve_route(c->client.id, 5000), 0);
	KUNIT_ASSERT_TRUE(test, cm_wait(c, &c->client,
					RDMA_CM_EVENT_ROUTE_RESOLVED));

	c->client.qp = ibpost_qp_create_cm(c->client.id, &c->attr);
	if (IS_ERR(c->client.qp)) {
		KUNIT_FAIL(test, "ibpost_qp_create_cm: %ld",
			   PTR_ERR(c->client.qp));
		c->client.qp = NULL;
		return NULL;
	}
	/* Before the connection: receives only, sends -ENOTCONN. */
	KUNIT_EXPECT_EQ(test, ibpost_test_qp_state(test, c->client.qp),
			IB_QPS_INIT);
	KUNIT_ASSERT_EQ(test, rdma_connect(c->client.id, &param), 0);
	KUNIT_ASSERT_TRUE(test, cm_wait(c, &c->client,
					RDMA_CM_EVENT_ESTABLISHED));
	KUNIT_ASSERT_TRUE(test, cm_wait(c, &c->server,
					RDMA_CM_EVENT_ESTABLISHED));
	KUNIT_ASSERT_EQ(test, c->server.create_err, 0);
	KUNIT_ASSERT_NOT_NULL(test, c->server.qp);

	dev = ibpost_test_dev(test);
	ibpost_test_buf_init(test, &c->cbuf, dev, NULL, 8192,
			     IBPOST_TEST_MSGS);
	ibpost_test_buf_init(test, &c->sbuf, dev, NULL, 8192,
			     IBPOST_TEST_MSGS);
	ibpost_test_buf_init(test, &c->sw, dev, c->server.qp, 8192,
			     IBPOST_TEST_WRITE);
	ibpost_test_buf_init(test, &c->sr, dev, c->server.qp, 8192,
			     IBPOST_TEST_READ);
	return c;
}

static struct cm_conn *cm_connect(struct kunit *test, u16 port)
{
	return cm_connect_depth(test, port, 4);
}

/* Whether rdma_cm tracks @id under the restrack id @qp recorded. */
static bool cm_tracks(struct ibpost_qp *qp, struct rdma_cm_id *id)
{
	struct rdma_restrack_entry *res;
	u32 res_id;
	bool same;

	if (!ibpost_test_qp_cm_res(qp, &res_id))
		return false;
	res = rdma_restrack_get_byid(id->device, RDMA_RESTRACK_CM_ID, res_id);
	if (IS_ERR(res))
		return false;
	same = rdma_res_to_id(res) == id;
	rdma_restrack_put(res);
	return same;
}

/* Connected through rdma_cm: send/recv, write and read, byte for byte. */
static void ibpost_cm_connect_and_move_data(struct kunit *test)
{
	struct ibpost_comp comp;
	struct cm_conn *c = cm_connect(test, 20001);
	struct ib_qp *ibqp;
	char *cb, *sb;

	KUNIT_ASSERT_NOT_NULL(test, c);
	cb = c->cbuf.buf;
	sb = c->sbuf.buf;
	KUNIT_EXPECT_EQ(test, ibpost_test_qp_state(test, c->client.qp),
			IB_QPS_RTS);
	/* White-box: ibpost finds the live id in rdma_cm's tracking. */
	KUNIT_EXPECT_TRUE(test, cm_tracks(c->client.qp, c->client.id));
	KUNIT_EXPECT_TRUE(test, cm_tracks(c->server.qp, c->server.id));
	/* rdma resource show qp/cq credit this module, not rdma_cm. */
	ibqp = ibpost_qp_ibqp(c->client.qp);
	KUNIT_EXPECT_STREQ(test, ibqp->res.kern_name, KBUILD_MODNAME);
	KUNIT_EXPECT_STREQ(test, ibqp->send_cq->res.kern_name,
			   KBUILD_MODNAME);

	/* send -> recv across the connection */
	KUNIT_ASSERT_EQ(test, ibpost_post_recv(c->server.qp, sb, sb, 4096,
					       c->sbuf.mr), 0);
	ibpost_test_fill(cb, 4096, 0xc1);
	KUNIT_ASSERT_EQ(test, ibpost_post_send(c->client.qp, cb, cb, 4096,
					       c->cbuf.mr,
					       IB_SEND_SIGNALED), 0);
	ibpost_test_send_comp(test, c->client.qp, &comp);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)cb);
	ibpost_test_recv_comp(test, c->server.qp, &comp);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, comp.byte_len, 4096u);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)sb);
	KUNIT_EXPECT_EQ(test, memcmp(cb, sb, 4096), 0);

	/* RDMA WRITE into the server's window */
	ibpost_test_fill(cb, 8192, 0xc2);
	KUNIT_ASSERT_EQ(test, ibpost_post_write(c->client.qp, cb, cb, 8192,
						c->cbuf.mr, IB_SEND_SIGNALED,
						ibpost_mr_remote_addr(c->sw.mr),
						ibpost_mr_rkey(c->sw.mr)), 0);
	ibpost_test_send_comp(test, c->client.qp, &comp);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(cb, c->sw.buf, 8192), 0);

	/* RDMA READ from the server's window */
	ibpost_test_fill(c->sr.buf, 8192, 0xc3);
	memset(cb, 0, 8192);
	KUNIT_ASSERT_EQ(test, ibpost_post_read(c->client.qp, cb, cb, 8192,
					       c->cbuf.mr, IB_SEND_SIGNALED,
					       ibpost_mr_remote_addr(c->sr.mr),
					       ibpost_mr_rkey(c->sr.mr)), 0);
	ibpost_test_send_comp(test, c->client.qp, &comp);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(cb, c->sr.buf, 8192), 0);
}

/* A chain with a bad WR in the middle: exact partial post on a cm QP. */
static void ibpost_cm_partial_post(struct kunit *test)
{
	struct ib_rdma_wr wr[4] = {};
	const struct ib_send_wr *bad = NULL;
	struct ibpost_comp comp;
	struct ib_sge sge[4];
	struct cm_conn *c = cm_connect(test, 20002);
	char *cb;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	cb = c->cbuf.buf;
	ibpost_test_fill(cb, 4096, 0xc4);
	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_EQ(test, ibpost_mr_sge(c->cbuf.mr, cb + i * 1024,
						    1024, &sge[i]), 0);
		wr[i].wr.wr_id = i + 1;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].remote_addr = ibpost_mr_remote_addr(c->sw.mr) + i * 1024;
		wr[i].rkey = ibpost_mr_rkey(c->sw.mr);
		wr[i].wr.next = i < 3 ? &wr[i + 1].wr : NULL;
	}
	wr[2].wr.num_sge = 99;		/* beyond the granted SGEs */
	KUNIT_EXPECT_EQ(test, ibpost_post_send_list(c->client.qp, &wr[0].wr,
						    &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr[2].wr);
	for (i = 0; i < 2; i++) {
		ibpost_test_send_comp(test, c->client.qp, &comp);
		KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, (uintptr_t)comp.context, (uintptr_t)i + 1);
	}
	ibpost_test_no_send_comp(test, c->client.qp);
	KUNIT_EXPECT_EQ(test, memcmp(cb, c->sw.buf, 2048), 0);
	KUNIT_EXPECT_EQ(test, ibpost_test_qp_state(test, c->client.qp),
			IB_QPS_RTS);

	/* Fixed and reposted from *bad_wr: the rest goes through. */
	wr[2].wr.num_sge = 1;
	KUNIT_EXPECT_EQ(test, ibpost_post_send_list(c->client.qp, bad, &bad),
			0);
	for (i = 2; i < 4; i++) {
		ibpost_test_send_comp(test, c->client.qp, &comp);
		KUNIT_EXPECT_EQ(test, (uintptr_t)comp.context, (uintptr_t)i + 1);
	}
	KUNIT_EXPECT_EQ(test, memcmp(cb, c->sw.buf, 4096), 0);
}

/*
 * A connection whose initiator depth is 0 may not issue READs: one in a
 * chain is refused before the provider (rxe would stall its send queue
 * behind it, siw fail its send queue after queuing the chain), exactly:
 * the WRITE before it completes, nothing from it on is queued, and the
 * send queue still works.
 */
static void ibpost_cm_read_without_initiator_depth(struct kunit *test)
{
	struct cm_conn *c = cm_connect_depth(test, 20005, 0);
	const struct ib_send_wr *bad = NULL;
	struct ib_rdma_wr wr[3] = {};
	struct ibpost_comp comp;
	struct ib_sge sge[3];
	char *cb;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	cb = c->cbuf.buf;
	ibpost_test_fill(cb, 3072, 0xc7);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, ibpost_mr_sge(c->cbuf.mr, cb + i * 1024,
						    1024, &sge[i]), 0);
		wr[i].wr.wr_id = i + 1;
		wr[i].wr.opcode = i == 1 ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].remote_addr = ibpost_mr_remote_addr(i == 1 ? c->sr.mr :
							  c->sw.mr) + i * 1024;
		wr[i].rkey = ibpost_mr_rkey(i == 1 ? c->sr.mr : c->sw.mr);
		wr[i].wr.next = i < 2 ? &wr[i + 1].wr : NULL;
	}
	KUNIT_EXPECT_EQ(test, ibpost_post_send_list(c->client.qp, &wr[0].wr,
						    &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr[1].wr);
	ibpost_test_send_comp(test, c->client.qp, &comp);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, (uintptr_t)comp.context, 1UL);
	ibpost_test_no_send_comp(test, c->client.qp);
	KUNIT_EXPECT_EQ(test, memcmp(cb, c->sw.buf, 1024), 0);
	KUNIT_EXPECT_EQ(test, ibpost_test_qp_state(test, c->client.qp),
			IB_QPS_RTS);

	/* The seed operation, and the server side, the same. */
	KUNIT_EXPECT_EQ(test, ibpost_post_read(c->client.qp, cb, cb, 64,
					       c->cbuf.mr, IB_SEND_SIGNALED,
					       ibpost_mr_remote_addr(c->sr.mr),
					       ibpost_mr_rkey(c->sr.mr)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, ibpost_post_read(c->server.qp, NULL,
					       c->sbuf.buf, 64, c->sbuf.mr,
					       IB_SEND_SIGNALED,
					       ibpost_mr_remote_addr(c->sr.mr),
					       ibpost_mr_rkey(c->sr.mr)),
			-EINVAL);
	ibpost_test_no_send_comp(test, c->server.qp);

	/* The rest, without the READ: the send queue was not stalled. */
	wr[0].wr.next = &wr[2].wr;
	KUNIT_EXPECT_EQ(test, ibpost_post_send_list(c->client.qp, &wr[0].wr,
						    &bad), 0);
	for (i = 0; i < 2; i++) {
		ibpost_test_send_comp(test, c->client.qp, &comp);
		KUNIT_EXPECT_EQ(test, comp.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, (uintptr_t)comp.context,
				i ? 3UL : 1UL);
	}
	ibpost_test_no_send_comp(test, c->client.qp);
	KUNIT_EXPECT_EQ(test, memcmp(cb + 2048, (char *)c->sw.buf + 2048,
				     1024), 0);
}

/*
 * The peer disconnects: the server hears DISCONNECTED, its posted
 * receives all come back flushed, and a later post is flushed too.
 */
static void ibpost_cm_disconnect_flushes(struct kunit *test)
{
	struct cm_conn *c = cm_connect(test, 20003);
	struct ibpost_comp comp;
	char *sb;
	int i, flushed = 0;

	KUNIT_ASSERT_NOT_NULL(test, c);
	sb = c->sbuf.buf;
	for (i = 0; i < CM_RECVS; i++)
		KUNIT_ASSERT_EQ(test, ibpost_post_recv(c->server.qp, sb + i,
						       sb + i * 512, 512,
						       c->sbuf.mr), 0);
	KUNIT_ASSERT_EQ(test, rdma_disconnect(c->client.id), 0);
	KUNIT_ASSERT_TRUE(test, cm_wait(c, &c->server,
					RDMA_CM_EVENT_DISCONNECTED));
	for (i = 0; i < CM_RECVS; i++) {
		ibpost_test_recv_comp(test, c->server.qp, &comp);
		KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)(sb + i));
		flushed += comp.status == IB_WC_WR_FLUSH_ERR;
	}
	KUNIT_EXPECT_EQ(test, flushed, CM_RECVS);
	KUNIT_EXPECT_EQ(test, ibpost_test_qp_state(test, c->server.qp),
			IB_QPS_ERR);
	/* A QP in ERR takes WRs and flushes each (IBA). */
	KUNIT_EXPECT_EQ(test, ibpost_post_send(c->server.qp, sb, sb, 64,
					       c->sbuf.mr, 0), 0);
	ibpost_test_send_comp(test, c->server.qp, &comp);
	KUNIT_EXPECT_EQ(test, comp.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_PTR_EQ(test, comp.context, (void *)sb);
	/* The server answers the DREQ, as a ULP does: the client hears it. */
	KUNIT_EXPECT_EQ(test, rdma_disconnect(c->server.id), 0);
	KUNIT_EXPECT_TRUE(test, cm_wait(c, &c->client,
					RDMA_CM_EVENT_DISCONNECTED));
	KUNIT_EXPECT_EQ(test, ibpost_test_qp_state(test, c->client.qp),
			IB_QPS_ERR);
}

/* Ids that cannot carry an ibpost QP are refused, nothing is leaked. */
static void ibpost_cm_create_refused(struct kunit *test)
{
	struct ibpost_qp_attr attr;
	struct rdma_cm_id *id;
	struct ibpost_qp *qp;

	ibpost_test_attr(&attr, IB_QPT_RC);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ibpost_qp_create_cm(NULL, &attr)),
			-EINVAL);
	id = rdma_create_id(&init_net, cm_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	KUNIT_ASSERT_FALSE(test, IS_ERR(id));
	/* Not bound to a device yet. */
	qp = ibpost_qp_create_cm(id, &attr);
	KUNIT_EXPECT_EQ(test, PTR_ERR(qp), -EINVAL);
	/* An RC id asked for a UD QP. */
	ibpost_test_attr(&attr, IB_QPT_UD);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ibpost_qp_create_cm(id, &attr)),
			-EINVAL);
	rdma_destroy_id(id);
}

/*
 * The passive side makes its QP inside CONNECT_REQUEST and then refuses
 * the connection by returning non-zero, so rdma_cm destroys the new id
 * right after the handler, unknown to ibpost. The QP, destroyed later,
 * must not touch the freed id (KASAN watches), and nothing leaks.
 */
struct cm_refuse {
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp;
	unsigned long events;
	wait_queue_head_t wq;
};

static int cm_refuse_server(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cm_refuse *r = id->context;
	struct ibpost_qp *qp;

	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 0;
	qp = ibpost_qp_create_cm(id, &r->attr);
	if (!IS_ERR(qp))
		r->qp = qp;
	set_bit(ev->event, &r->events);
	wake_up_all(&r->wq);
	return -ECONNREFUSED;		/* rdma_cm destroys id on return */
}

static int cm_refuse_client(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cm_refuse *r = id->context;

	if (ev->event < BITS_PER_LONG)
		set_bit(ev->event, &r->events);
	wake_up_all(&r->wq);
	return 0;
}

static void ibpost_cm_qp_outlives_refused_id(struct kunit *test)
{
	struct rdma_conn_param param = {
		.responder_resources = 4, .initiator_depth = 4,
		.retry_count = 6, .rnr_retry_count = 7,
	};
	struct sockaddr_in sin = cm_addr(test, 20004);
	struct rdma_cm_id *listen, *client;
	struct ibpost_qp *cqp = NULL;
	struct cm_refuse *r;
	unsigned long ends = BIT(RDMA_CM_EVENT_REJECTED) |
			     BIT(RDMA_CM_EVENT_UNREACHABLE) |
			     BIT(RDMA_CM_EVENT_CONNECT_ERROR);

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	init_waitqueue_head(&r->wq);
	ibpost_test_attr(&r->attr, IB_QPT_RC);
	listen = rdma_create_id(&init_net, cm_refuse_server, r, RDMA_PS_TCP,
				IB_QPT_RC);
	KUNIT_ASSERT_FALSE(test, IS_ERR(listen));
	client = rdma_create_id(&init_net, cm_refuse_client, r, RDMA_PS_TCP,
				IB_QPT_RC);
	if (IS_ERR(client)) {
		rdma_destroy_id(listen);
		KUNIT_ASSERT_FALSE(test, IS_ERR(client));
	}
	if (rdma_bind_addr(listen, (struct sockaddr *)&sin) ||
	    rdma_listen(listen, 4) ||
	    rdma_resolve_addr(client, NULL, (struct sockaddr *)&sin, 5000) ||
	    !wait_event_timeout(r->wq, test_bit(RDMA_CM_EVENT_ADDR_RESOLVED,
						&r->events), CM_TIMEOUT) ||
	    rdma_resolve_route(client, 5000) ||
	    !wait_event_timeout(r->wq, test_bit(RDMA_CM_EVENT_ROUTE_RESOLVED,
						&r->events), CM_TIMEOUT)) {
		KUNIT_FAIL(test, "could not resolve the route to the listener");
		goto out;
	}
	cqp = ibpost_qp_create_cm(client, &r->attr);
	if (IS_ERR(cqp)) {
		KUNIT_FAIL(test, "client QP: %ld", PTR_ERR(cqp));
		cqp = NULL;
		goto out;
	}
	KUNIT_EXPECT_EQ(test, rdma_connect(client, &param), 0);
	KUNIT_EXPECT_TRUE(test, wait_event_timeout(r->wq, r->events & ends,
						   CM_TIMEOUT));
	KUNIT_EXPECT_TRUE(test, test_bit(RDMA_CM_EVENT_CONNECT_REQUEST,
					 &r->events));
	KUNIT_EXPECT_NOT_NULL(test, r->qp);
	/* The server's id is gone by now; its QP is destroyed after. */
	msleep(100);
	if (r->qp) {
		struct rdma_restrack_entry *res;
		u32 res_id = 0;

		/* White-box: rdma_cm no longer tracks the id. */
		KUNIT_EXPECT_TRUE(test, ibpost_test_qp_cm_res(r->qp, &res_id));
		res = rdma_restrack_get_byid(ibpost_qp_ibqp(r->qp)->device,
					     RDMA_RESTRACK_CM_ID, res_id);
		KUNIT_EXPECT_TRUE_MSG(test, IS_ERR(res),
				      "the refused id still exists");
		if (!IS_ERR(res))
			rdma_restrack_put(res);
	}
	ibpost_qp_destroy(r->qp);
	r->qp = NULL;
out:
	ibpost_qp_destroy(cqp);
	rdma_destroy_id(client);
	rdma_destroy_id(listen);
}

static struct kunit_case ibpost_cm_cases[] = {
	KUNIT_CASE(ibpost_cm_connect_and_move_data),
	KUNIT_CASE(ibpost_cm_partial_post),
	KUNIT_CASE(ibpost_cm_read_without_initiator_depth),
	KUNIT_CASE(ibpost_cm_disconnect_flushes),
	KUNIT_CASE(ibpost_cm_create_refused),
	KUNIT_CASE(ibpost_cm_qp_outlives_refused_id),
	{}
};

static struct kunit_suite ibpost_cm_suite = {
	.name = "ibpost_cm",
	.test_cases = ibpost_cm_cases,
};

kunit_test_suite(ibpost_cm_suite);
