// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_xhost_server: a connection's buffers and messages.
 *
 * Each receive scatters over two SGEs: the header into the connection's
 * header array, the payload into its own XHOST_PAYLOAD_MAX buffer (taken
 * from allocations of XS_CHUNK_BUFS buffers, one MR each). The receive
 * callback (softirq) only queues a receive that succeeded and kicks the
 * connection's work; the work, in process context on an ordered
 * workqueue, sends HELLO once the connection is established, then
 * handles each message in arrival order, answers it and reposts its
 * receive. Answers go one at a time, signaled, and are waited for
 * (bounded), so one tx header serves them all and an ECHO goes back
 * straight from the buffer it arrived in.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched.h>
#include <linux/slab.h>
#include <rdma/rdma_cm.h>
#include "xhost.h"

#define XS_TX_TIMEOUT	(20 * HZ)
#define XS_BATCH	32	/* messages per run of the work */

static int xs_reg(struct xs_conn *c, void *buf, size_t len,
		  struct ibpost_mr **mrp)
{
	struct ibpost_mr *mr = ibpost_reg_msgs(c->dev, buf, len);

	if (IS_ERR(mr))
		return PTR_ERR(mr);
	*mrp = mr;
	return 0;
}

static int xs_buffers_reg(struct xs_conn *c)
{
	unsigned int i;
	int ret;

	ret = xs_reg(c, c->hdrs, XHOST_RECVS * sizeof(*c->hdrs), &c->hdrs_mr);
	if (!ret)
		ret = xs_reg(c, c->tx, sizeof(*c->tx), &c->tx_mr);
	for (i = 0; i < XS_CHUNKS && !ret; i++)
		ret = xs_reg(c, c->chunk[i], XS_CHUNK_BUFS * XHOST_PAYLOAD_MAX,
			     &c->chunk_mr[i]);
	if (ret)
		return ret;

	for (i = 0; i < XHOST_RECVS; i++) {
		struct xs_rx *rx = &c->rx[i];

		INIT_LIST_HEAD(&rx->node);
		rx->hdr = &c->hdrs[i];
		rx->payload = c->chunk[i / XS_CHUNK_BUFS] +
			      (i % XS_CHUNK_BUFS) * XHOST_PAYLOAD_MAX;
		rx->mr = c->chunk_mr[i / XS_CHUNK_BUFS];
	}
	return 0;
}

/*
 * The receive ring, the tx header and both windows (registered for
 * remote access only at ESTABLISHED, through the QP). On failure the
 * caller undoes what was done with xs_buffers_free().
 */
int xs_buffers_init(struct xs_conn *c)
{
	unsigned int i;

	c->hdrs = kcalloc(XHOST_RECVS, sizeof(*c->hdrs), GFP_KERNEL);
	c->tx = kzalloc(sizeof(*c->tx), GFP_KERNEL);
	c->win = kzalloc(XHOST_WIN, GFP_KERNEL);
	c->rwin = kmalloc(XHOST_WIN, GFP_KERNEL);
	if (!c->hdrs || !c->tx || !c->win || !c->rwin)
		return -ENOMEM;
	xhost_fill(c->rwin, XHOST_WIN, XHOST_READ_SEED);
	for (i = 0; i < XS_CHUNKS; i++) {
		c->chunk[i] = kmalloc(XS_CHUNK_BUFS * XHOST_PAYLOAD_MAX,
				      GFP_KERNEL);
		if (!c->chunk[i])
			return -ENOMEM;
	}
	return xs_buffers_reg(c);
}

/* After the QP is gone: no MR has a user left. */
static void xs_unreg(struct xs_conn *c, struct ibpost_mr *mr, void *buf)
{
	int ret = ibpost_dereg_mr(mr);

	if (ret) {
		/* Leak the buffer rather than free it under a live MR. */
		pr_err("connection %u: dereg_mr: %d\n", c->nr, ret);
		return;
	}
	kfree(buf);
}

void xs_buffers_free(struct xs_conn *c)
{
	unsigned int i;

	xs_unreg(c, c->win_mr, c->win);
	xs_unreg(c, c->rwin_mr, c->rwin);
	xs_unreg(c, c->tx_mr, c->tx);
	xs_unreg(c, c->hdrs_mr, c->hdrs);
	for (i = 0; i < XS_CHUNKS; i++)
		xs_unreg(c, c->chunk_mr[i], c->chunk[i]);
}

static int xs_post_rx(struct xs_conn *c, struct xs_rx *rx)
{
	struct ibpost_sge sgl[2] = {
		{ .addr = rx->hdr, .length = sizeof(*rx->hdr),
		  .mr = c->hdrs_mr },
		{ .addr = rx->payload, .length = XHOST_PAYLOAD_MAX,
		  .mr = rx->mr },
	};
	int ret;

	ret = ibpost_post_recvv(c->qp, rx, sgl, ARRAY_SIZE(sgl));
	if (!ret)
		atomic_inc(&c->recv_posted);
	return ret;
}

int xs_post_recvs(struct xs_conn *c)
{
	unsigned int i;
	int ret;

	for (i = 0; i < XHOST_RECVS; i++) {
		ret = xs_post_rx(c, &c->rx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Queue the work, unless the teardown has begun. Any context. */
void xs_kick(struct xs_conn *c)
{
	spin_lock_bh(&c->rx_lock);
	if (!test_bit(XS_F_STOPPING, &c->flags))
		queue_work(c->wq, &c->work);
	spin_unlock_bh(&c->rx_lock);
}

/* Softirq, or process context when ibpost flushes: never sleeps. */
void xs_recv_done(struct ibpost_qp *qp, void *context,
		  const struct ib_wc *wc)
{
	struct xs_conn *c = ibpost_qp_priv(qp);
	struct xs_rx *rx = context;

	atomic_inc(&c->recv_returned);
	if (wc->status != IB_WC_SUCCESS)
		return;
	rx->byte_len = wc->byte_len;
	rx->wc_flags = wc->wc_flags;
	rx->inv_rkey = wc->ex.invalidate_rkey;
	spin_lock_bh(&c->rx_lock);
	if (!test_bit(XS_F_STOPPING, &c->flags)) {
		list_add_tail(&rx->node, &c->rx_done);
		queue_work(c->wq, &c->work);
	}
	spin_unlock_bh(&c->rx_lock);
}

/* The map's pages and list, once nothing can reach them. */
void xs_map_free(struct xs_conn *c)
{
	u32 i;

	for (i = 0; i < c->map_n; i++)
		__free_pages(c->map_pages[i], 1);
	kfree(c->map_pages);
	kfree(c->map_sg);
	c->map_pages = NULL;
	c->map_sg = NULL;
	c->map_n = 0;
	c->map_inv_done = false;
}

void xs_send_done(struct ibpost_qp *qp, void *context,
		  const struct ib_wc *wc)
{
	struct xs_conn *c = ibpost_qp_priv(qp);

	/*
	 * An unmap's LOCAL_INV: the map's pages are the server's again, freed
	 * by the work (the next MAP) or the teardown, not in a softirq.
	 */
	if (context == c->map_pages) {
		WRITE_ONCE(c->map_inv_done, true);
		return;
	}

	c->tx_status = wc->status;
	complete(&c->tx_done);
}

/* Send and wait; one send at a time. */
static int xs_send(struct xs_conn *c, struct ibpost_sge *sgl, int nsge)
{
	int ret;

	if (test_bit(XS_F_TX_BROKEN, &c->flags))
		return -EIO;
	reinit_completion(&c->tx_done);
	ret = ibpost_post_sendv(c->qp, c, sgl, nsge, IB_SEND_SIGNALED);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&c->tx_done, XS_TX_TIMEOUT)) {
		/* Its completion may still come: never reuse c->tx. */
		set_bit(XS_F_TX_BROKEN, &c->flags);
		return -ETIMEDOUT;
	}
	return c->tx_status == IB_WC_SUCCESS ? 0 : -EIO;
}

static void xs_answer(struct xs_conn *c, struct ibpost_sge *sgl, int nsge)
{
	int ret = xs_send(c, sgl, nsge);

	if (ret)
		pr_warn_ratelimited("connection %u: answer not sent: %d\n",
				    c->nr, ret);
}

static void xs_result(struct xs_conn *c, const struct xhost_msg *req,
		      u64 arg0, u64 arg1, u64 addr)
{
	struct ibpost_sge sge = {
		.addr = c->tx, .length = sizeof(*c->tx), .mr = c->tx_mr,
	};

	xhost_msg_init(c->tx, XHOST_RESULT, le32_to_cpu(req->seq), 0, 0);
	c->tx->arg0 = cpu_to_le64(arg0);
	c->tx->arg1 = cpu_to_le64(arg1);
	c->tx->addr = cpu_to_le64(addr);
	xs_answer(c, &sge, 1);
}

static int xs_windows(struct xs_conn *c)
{
	struct ibpost_mr *mr;

	mr = ibpost_reg_write(c->qp, c->win, XHOST_WIN);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	c->win_mr = mr;
	mr = ibpost_reg_read(c->qp, c->rwin, XHOST_WIN);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	c->rwin_mr = mr;
	return 0;
}

/* ESTABLISHED: the QP is in RTS, remote access can be granted. */
static void xs_hello(struct xs_conn *c)
{
	struct xhost_msg *m = c->tx;
	struct ibpost_sge sge = {
		.addr = m, .length = sizeof(*m), .mr = c->tx_mr,
	};
	int ret;

	ret = xs_windows(c);
	if (!ret) {
		xhost_msg_init(m, XHOST_HELLO, 0, XHOST_WIN, XHOST_READ_SEED);
		m->addr = cpu_to_le64(ibpost_mr_remote_addr(c->win_mr));
		m->rkey = cpu_to_le32(ibpost_mr_rkey(c->win_mr));
		m->arg0 = cpu_to_le64(ibpost_mr_remote_addr(c->rwin_mr));
		m->arg1 = cpu_to_le64((u64)ibpost_mr_rkey(c->rwin_mr) << 32 |
				      XHOST_WIN);
		ret = xs_send(c, &sge, 1);
	}
	if (ret) {
		pr_warn("connection %u: no HELLO (%d): disconnecting\n",
			c->nr, ret);
		rdma_disconnect(c->id);
	}
}

/* DATA and ECHO: is the payload pattern(seed, len)? */
static bool xs_payload_ok(struct xs_conn *c, const struct xs_rx *rx)
{
	const struct xhost_msg *m = rx->hdr;

	if (xhost_check(rx->payload, le32_to_cpu(m->len),
			le32_to_cpu(m->seed)))
		return true;
	c->data_bad++;
	xs_count(XS_DATA_BAD);
	return false;
}

static void xs_echo(struct xs_conn *c, const struct xs_rx *rx)
{
	u32 len = le32_to_cpu(rx->hdr->len);
	struct ibpost_sge sgl[2] = {
		{ .addr = c->tx, .length = sizeof(*c->tx), .mr = c->tx_mr },
		{ .addr = rx->payload, .length = len, .mr = rx->mr },
	};

	if (xs_payload_ok(c, rx))
		xs_count(XS_ECHO_OK);
	*c->tx = *rx->hdr;	/* the same seq, len and seed */
	xs_answer(c, sgl, len ? 2 : 1);
}

/* CHECK_WRITE and CHECK_ZERO on window[arg0, arg0 + len). */
static void xs_check(struct xs_conn *c, const struct xhost_msg *m, bool zero)
{
	u64 off = le64_to_cpu(m->arg0);
	u32 len = le32_to_cpu(m->len);
	bool ok;

	ok = c->win_mr && off <= XHOST_WIN && len <= XHOST_WIN - off;
	if (ok && zero)
		ok = !memchr_inv(c->win + off, 0, len);
	else if (ok)
		ok = xhost_check(c->win + off, len, le32_to_cpu(m->seed));
	xs_count(ok ? XS_CHECKS_OK : XS_CHECKS_BAD);
	xs_result(c, m, ok, 0, 0);
}

/*
 * MAP: scattered pages (each the first of an order-1 block) holding
 * pattern(seed), mapped for the client's WRITE; the fast registration
 * rides the RESULT that carries its key.
 */
static void xs_map(struct xs_conn *c, const struct xhost_msg *m)
{
	u32 len = le32_to_cpu(m->len), seed = le32_to_cpu(m->seed);
	u32 i, j, n = DIV_ROUND_UP(len, PAGE_SIZE);

	if (c->map_pages && !c->map.ent && READ_ONCE(c->map_inv_done))
		xs_map_free(c);
	if (c->map_pages || !len || len > XHOST_MAP_MAX)
		goto fail;
	c->map_pages = kcalloc(n, sizeof(*c->map_pages), GFP_KERNEL);
	c->map_sg = kcalloc(n, sizeof(*c->map_sg), GFP_KERNEL);
	if (!c->map_pages || !c->map_sg)
		goto fail_free;
	sg_init_table(c->map_sg, n);
	for (i = 0; i < n; i++) {
		u32 plen = min_t(u32, PAGE_SIZE, len - i * PAGE_SIZE);
		u8 *va;

		c->map_pages[i] = alloc_pages(GFP_KERNEL, 1);
		if (!c->map_pages[i])
			goto fail_free;
		c->map_n++;
		va = page_address(c->map_pages[i]);
		for (j = 0; j < PAGE_SIZE; j++)
			va[j] = xhost_byte(seed, i * PAGE_SIZE + j);
		sg_set_page(&c->map_sg[i], c->map_pages[i], plen, 0);
	}
	if (ibpost_frwr_map(c->qp, c->map_sg, n, IB_ACCESS_REMOTE_WRITE,
			    &c->map))
		goto fail_free;
	xs_result(c, m, c->map.rkey, c->map.length, c->map.iova);
	return;

fail_free:
	xs_map_free(c);
fail:
	xs_result(c, m, 0, 0, 0);
}

/*
 * CHECK_MAP, which came as the SEND_WITH_INV of the map's key: the key
 * is retired, so the unmap posts nothing; then the map's bytes are read.
 */
static void xs_check_map(struct xs_conn *c, const struct xs_rx *rx)
{
	const struct xhost_msg *m = rx->hdr;
	u32 len = le32_to_cpu(m->len), seed = le32_to_cpu(m->seed);
	u64 ok = 0;
	u32 i;
	int un;

	if (!c->map.ent || len > c->map.length) {
		xs_count(XS_CHECKS_BAD);
		xs_result(c, m, 0, 0, 0);
		return;
	}
	if ((rx->wc_flags & IB_WC_WITH_INVALIDATE) &&
	    rx->inv_rkey == c->map.rkey)
		ok |= XHOST_MAP_INVALIDATED;
	un = ibpost_frwr_unmap(c->qp, &c->map, c->map_pages);
	if (un == IBPOST_FRWR_DONE) {
		ok |= XHOST_MAP_UNMAP_DONE | XHOST_MAP_DATA_OK;
		for (i = 0; i < len; i += PAGE_SIZE)
			if (!xhost_check_at(page_address(c->map_pages[i / PAGE_SIZE]),
					    min_t(u32, PAGE_SIZE, len - i),
					    seed, i))
				ok &= ~XHOST_MAP_DATA_OK;
		xs_map_free(c);
	}
	/* Else its LOCAL_INV's completion frees the pages (xs_send_done()). */
	xs_count(ok == XHOST_MAP_ALL_OK ? XS_CHECKS_OK : XS_CHECKS_BAD);
	xs_result(c, m, ok, 0, 0);
}

/*
 * A map the client left, before the QP goes: its unmap (DONE, or a
 * LOCAL_INV whose context the QP's destroy returns: xs_conn_release()
 * frees the pages then) gives the pages back. One the unmap refuses
 * keeps them, said once.
 */
void xs_map_release(struct xs_conn *c)
{
	int un;

	if (!c->map.ent)
		return;
	un = ibpost_frwr_unmap(c->qp, &c->map, c->map_pages);
	if (un == IBPOST_FRWR_DONE)
		xs_map_free(c);
	else if (un < 0)
		pr_warn("connection %u: unmap: %d: its pages are kept\n",
			c->nr, un);
}

/* A whole message: magic, and a payload exactly where one belongs. */
static bool xs_msg_ok(const struct xs_rx *rx)
{
	const struct xhost_msg *m = rx->hdr;
	u32 type, len;

	if (rx->byte_len < sizeof(*m) ||
	    le32_to_cpu(m->magic) != XHOST_MAGIC)
		return false;
	type = le32_to_cpu(m->type);
	len = le32_to_cpu(m->len);
	if (type == XHOST_DATA || type == XHOST_ECHO)
		return len <= XHOST_PAYLOAD_MAX &&
		       rx->byte_len == sizeof(*m) + len;
	return rx->byte_len == sizeof(*m);
}

static void xs_handle(struct xs_conn *c, const struct xs_rx *rx)
{
	const struct xhost_msg *m = rx->hdr;

	if (!xs_msg_ok(rx)) {
		xs_count(XS_MSGS_BAD);
		pr_warn_ratelimited("connection %u: malformed message of %u bytes\n",
				    c->nr, rx->byte_len);
		return;
	}
	switch (le32_to_cpu(m->type)) {
	case XHOST_DATA:
		if (xs_payload_ok(c, rx)) {
			c->data_ok++;
			xs_count(XS_DATA_OK);
		}
		break;
	case XHOST_ECHO:
		xs_echo(c, rx);
		break;
	case XHOST_CHECK_WRITE:
	case XHOST_CHECK_ZERO:
		xs_check(c, m, le32_to_cpu(m->type) == XHOST_CHECK_ZERO);
		break;
	case XHOST_ZERO:
		if (c->win_mr)
			memset(c->win, 0, XHOST_WIN);
		xs_result(c, m, !!c->win_mr, 0, 0);
		break;
	case XHOST_STATS:
		xs_result(c, m, c->data_ok, c->data_bad,
			  atomic64_read(&xs_stats[XS_DATA_OK]));
		break;
	case XHOST_MAP:
		xs_map(c, m);
		break;
	case XHOST_CHECK_MAP:
		xs_check_map(c, rx);
		break;
	case XHOST_SHUTDOWN:
		atomic64_set(&xs_stats[XS_SHUTDOWN], 1);
		pr_info("connection %u: shutdown requested\n", c->nr);
		xs_result(c, m, 1, 0, 0);
		break;
	default:
		xs_count(XS_MSGS_BAD);
		xs_result(c, m, 0, 0, 0);
		break;
	}
}

void xs_conn_work(struct work_struct *work)
{
	struct xs_conn *c = container_of(work, struct xs_conn, work);
	struct xs_rx *rx;
	int n, ret;

	if (test_bit(XS_F_ESTABLISHED, &c->flags) &&
	    !test_and_set_bit(XS_F_HELLO, &c->flags))
		xs_hello(c);
	for (n = 0; n < XS_BATCH; n++) {
		spin_lock_bh(&c->rx_lock);
		rx = list_first_entry_or_null(&c->rx_done, struct xs_rx, node);
		if (rx)
			list_del_init(&rx->node);
		spin_unlock_bh(&c->rx_lock);
		if (!rx)
			return;
		xs_handle(c, rx);
		ret = xs_post_rx(c, rx);
		if (ret)
			pr_warn_ratelimited("connection %u: receive not reposted: %d\n",
					    c->nr, ret);
		cond_resched();
	}
	/* More may be waiting: let other work (a teardown) run first. */
	xs_kick(c);
}
