// SPDX-License-Identifier: GPL-2.0
/*
 * Pairs on iWARP, whose QPs connect through rdma_cm only (siw): a listener
 * on the IPv4 address the command names (addr=, an address of the
 * device's netdev), an active id that resolves it, and each side's QP made
 * on its id by the mode's backend (raw: rdma_create_qp() on CQs of its
 * own; ibpost: ibpost_qp_create_cm()). Side A's QP is made on the active
 * id before rdma_connect(), side B's inside the connect request's event
 * before rdma_accept(), as a ULP's target does. A connects to B: the
 * initiator of an iWARP connection sends first, and A is the poster.
 *
 * Teardown: the backend destroys both QPs, then bench_cm_free() destroys
 * the ids, as rdma_cm wants (the QP before its id).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/inet.h>
#include <linux/slab.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include "bench.h"
#include "../ibpost_rc.h"

/*
 * The listeners' TCP ports, one per pair, tried in turn: a range of the
 * bench's own (the test helpers' pairs use 18000 on), past one in use.
 */
#define BENCH_CM_PORT_BASE	30000
#define BENCH_CM_PORTS		1024
#define BENCH_CM_PORT_TRIES	8
/* rdma_cm's resolution; a step's wait (MPA under TCG is slow) is longer. */
#define BENCH_CM_RESOLVE_MS	5000
#define BENCH_CM_WAIT_MS	15000

/**
 * struct bench_cm - the rdma_cm ids of one pair
 * @run: the pair's run
 * @create: the backend's QP of a side on an id
 * @listen: the passive side's listener
 * @client: side A's id
 * @server: side B's id, from the connect request
 * @wq: woken at every event
 * @client_ev: the events @client saw, as bits
 * @server_ev: the events @server saw, as bits
 * @server_err: why B's QP or accept failed, or 0
 */
struct bench_cm {
	struct bench_run *run;
	int (*create)(struct bench_run *run, struct bench_side *s,
		      struct rdma_cm_id *id);
	struct rdma_cm_id *listen;
	struct rdma_cm_id *client;
	struct rdma_cm_id *server;
	wait_queue_head_t wq;
	unsigned long client_ev;
	unsigned long server_ev;
	int server_err;
};

static atomic_t bench_cm_port = ATOMIC_INIT(0);

/* At most @rd, and at most what the request @offer says (when it does). */
static u8 bench_cm_rd(u8 rd, u8 offer)
{
	return offer ? min(rd, offer) : rd;
}

/*
 * Side B: its QP on the request's @id, then the accept, with as many
 * READs in flight each way as rxe's pairs have (ibpost_rc_rd_atomic()),
 * or as the request offers; on a failure the request is rejected, so
 * that A's connect ends at once.
 */
static void bench_cm_accept(struct bench_cm *c, struct rdma_cm_id *id,
			    const struct rdma_conn_param *req)
{
	u8 rd = ibpost_rc_rd_atomic(c->run->ibdev);
	struct rdma_conn_param param = {
		.responder_resources = bench_cm_rd(rd, req->initiator_depth),
		.initiator_depth = bench_cm_rd(rd, req->responder_resources),
		.rnr_retry_count = 7,
	};
	int ret;

	c->server = id;
	ret = c->create(c->run, &c->run->b, id);
	if (!ret)
		ret = rdma_accept(id, &param);
	if (ret)
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	WRITE_ONCE(c->server_err, ret);
}

static int bench_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct bench_cm *c = id->context;
	unsigned long *evs;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* One connection per listener: its pair's. */
		if (c->server)
			return -ECONNREFUSED;	/* rdma_cm destroys @id */
		bench_cm_accept(c, id, &ev->param.conn);
	}
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		/* The removal waits for the ids: the run ends, and frees them. */
		bench_fail(c->run, -ENODEV, "the device is being removed");
	evs = id == c->client ? &c->client_ev : &c->server_ev;
	if (ev->event < BITS_PER_LONG)
		set_bit(ev->event, evs);
	wake_up_all(&c->wq);
	return 0;
}

/*
 * @evs reached @ev (true), or the pair failed on the way: an error event,
 * side B's failure, the run's (a device removal waits for it), a signal
 * or the time out.
 */
static bool bench_cm_wait(struct bench_cm *c, unsigned long *evs,
			  enum rdma_cm_event_type ev)
{
	unsigned long fail = BIT(RDMA_CM_EVENT_ADDR_ERROR) |
			     BIT(RDMA_CM_EVENT_ROUTE_ERROR) |
			     BIT(RDMA_CM_EVENT_CONNECT_ERROR) |
			     BIT(RDMA_CM_EVENT_UNREACHABLE) |
			     BIT(RDMA_CM_EVENT_REJECTED) |
			     BIT(RDMA_CM_EVENT_DEVICE_REMOVAL);
	bool ok;

	wait_event_interruptible_timeout(c->wq, test_bit(ev, evs) ||
					 (READ_ONCE(*evs) & fail) ||
					 READ_ONCE(c->server_err) ||
					 READ_ONCE(c->run->err),
					 msecs_to_jiffies(BENCH_CM_WAIT_MS));
	ok = test_bit(ev, evs) && !READ_ONCE(c->server_err);
	/* What the handler wrote before the event's bit (run->b). */
	smp_rmb();
	return ok;
}

/* The listener, bound to @sin's address on a port of the bench's range. */
static int bench_cm_listen(struct bench_cm *c, struct sockaddr_in *sin)
{
	int i, ret = -EADDRINUSE;

	for (i = 0; i < BENCH_CM_PORT_TRIES && ret == -EADDRINUSE; i++) {
		sin->sin_port = htons(BENCH_CM_PORT_BASE +
				      atomic_inc_return(&bench_cm_port) %
				      BENCH_CM_PORTS);
		ret = rdma_bind_addr(c->listen, (struct sockaddr *)sin);
		if (!ret)
			ret = rdma_listen(c->listen, 1);
	}
	return ret;
}

/* Listen, resolve, make A's QP, connect, and wait for both sides. */
static int bench_cm_steps(struct bench_cm *c, struct sockaddr_in *sin)
{
	u8 rd = ibpost_rc_rd_atomic(c->run->ibdev);
	struct rdma_conn_param param = {
		.responder_resources = rd, .initiator_depth = rd,
		.retry_count = 6, .rnr_retry_count = 7,
	};
	struct bench_run *run = c->run;
	int ret;

	ret = bench_cm_listen(c, sin);
	if (ret)
		return bench_fail(run, ret, "listening on addr= (an address of dev='s netdev?)");
	ret = rdma_resolve_addr(c->client, NULL, (struct sockaddr *)sin,
				BENCH_CM_RESOLVE_MS);
	if (ret || !bench_cm_wait(c, &c->client_ev,
				  RDMA_CM_EVENT_ADDR_RESOLVED))
		return bench_fail(run, ret ?: -EHOSTUNREACH,
				  "rdma_resolve_addr");
	ret = rdma_resolve_route(c->client, BENCH_CM_RESOLVE_MS);
	if (ret || !bench_cm_wait(c, &c->client_ev,
				  RDMA_CM_EVENT_ROUTE_RESOLVED))
		return bench_fail(run, ret ?: -EHOSTUNREACH,
				  "rdma_resolve_route");
	if (c->client->device != run->ibdev)
		return bench_fail(run, -EXDEV,
				  "addr= is not an address of dev='s netdev");
	ret = c->create(run, &run->a, c->client);
	if (ret)
		return ret;
	ret = rdma_connect(c->client, &param);
	if (ret)
		return bench_fail(run, ret, "rdma_connect");
	if (!bench_cm_wait(c, &c->client_ev, RDMA_CM_EVENT_ESTABLISHED) ||
	    !bench_cm_wait(c, &c->server_ev, RDMA_CM_EVENT_ESTABLISHED) ||
	    READ_ONCE(c->server_err))
		return bench_fail(run, READ_ONCE(c->server_err) ?: -ECONNREFUSED,
				  "connecting the pair through rdma_cm");
	return 0;
}

/**
 * bench_cm_connect - connect @run's pair through rdma_cm
 * @run: the run, on an iWARP device, cfg->addr an address of its netdev
 * @create: the backend's QP of a side on an id (recording its failure)
 *
 * On failure, the QPs made so far (side A's and B's ->qp or ->iqp) are
 * the backend's to destroy before bench_cm_free(); no event makes one any
 * more.
 *
 * Context: Process context; sleeps.
 * Return: 0 or a negative errno, recorded in @run.
 */
int bench_cm_connect(struct bench_run *run,
		     int (*create)(struct bench_run *run, struct bench_side *s,
				   struct rdma_cm_id *id))
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct bench_cm *c;
	int ret;

	if (!in4_pton(run->cfg->addr, -1, (u8 *)&sin.sin_addr.s_addr, -1,
		      NULL))
		return bench_fail(run, -EINVAL,
				  "iWARP: addr= must name the IPv4 address of dev='s netdev");
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return bench_fail(run, -ENOMEM, "allocating the rdma_cm state");
	c->run = run;
	c->create = create;
	init_waitqueue_head(&c->wq);
	run->cm = c;
	c->listen = rdma_create_id(&init_net, bench_cm_handler, c,
				   RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(c->listen)) {
		ret = PTR_ERR(c->listen);
		c->listen = NULL;
		return bench_fail(run, ret, "rdma_create_id");
	}
	c->client = rdma_create_id(&init_net, bench_cm_handler, c,
				   RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(c->client)) {
		ret = PTR_ERR(c->client);
		c->client = NULL;
		return bench_fail(run, ret, "rdma_create_id");
	}
	ret = bench_cm_steps(c, &sin);
	/*
	 * On failure, no connect request may still be making B's QP when
	 * the backend destroys it: a listener's destroy waits for them.
	 */
	if (ret) {
		rdma_destroy_id(c->listen);
		c->listen = NULL;
	}
	return ret;
}

/**
 * bench_cm_free - destroy the ids of @run's pair, its QPs gone
 * @run: the run (NULL ->cm: nothing to do)
 *
 * Context: Process context; sleeps (each destroy waits for its handler).
 */
void bench_cm_free(struct bench_run *run)
{
	struct bench_cm *c = run->cm;

	if (!c)
		return;
	if (c->client)
		rdma_destroy_id(c->client);
	/* The listener before B's id: no request can make another. */
	if (c->listen)
		rdma_destroy_id(c->listen);
	if (c->server)
		rdma_destroy_id(c->server);
	kfree(c);
	run->cm = NULL;
}
