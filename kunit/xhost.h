/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibpost_xhost: rdma_cm connections between two hosts.
 *
 * ibpost_xhost_server (host A) listens on XHOST_PORT of every address;
 * the ibpost_xhost KUnit suite (host B) connects to it. This header holds
 * the protocol both speak, then the declarations each side shares between
 * its own files.
 *
 * Every message is a struct xhost_msg, little-endian, followed by @len
 * payload bytes for DATA and ECHO. The server speaks first (HELLO), then
 * only answers; the client posts the receive for an answer before it
 * asks, so only the server needs a receive ring.
 *
 *   type         dir     fields
 *   HELLO        A->B    addr, rkey, len: the write window;
 *                        arg0: the read window's address;
 *                        arg1: read rkey << 32 | read window length;
 *                        seed: the read window holds pattern(seed)
 *   DATA         B->A    seed, len, payload pattern(seed, len); no answer
 *   ECHO         B->A    seed, len, payload; answered by an ECHO with the
 *                        same seq, seed, len and payload
 *   CHECK_WRITE  B->A    is window[arg0, arg0 + len) pattern(seed, len)?
 *   CHECK_ZERO   B->A    is window[arg0, arg0 + len) all zero?
 *   ZERO         B->A    zero the whole write window
 *   STATS        B->A    RESULT arg0: this connection's DATA payloads
 *                        verified good; arg1: its DATA and ECHO payloads
 *                        found bad; addr: good DATA over all connections
 *   SHUTDOWN     B->A    the server records shutdown 1
 *   RESULT       A->B    seq: the request's; arg0: 1 yes, 0 no
 *   MAP          B->A    the server maps len (at most XHOST_MAP_MAX)
 *                        bytes of scattered pages holding
 *                        pattern(seed) for remote write, its fast
 *                        registration riding the RESULT: addr the
 *                        iova, arg0 the rkey, arg1 the length (0: none)
 *   CHECK_MAP    B->A    sent as SEND_WITH_INV of the map's rkey: do the
 *                        map's first len bytes hold pattern(seed)? The
 *                        server unmaps it; RESULT arg0 XHOST_MAP_ALL_OK
 *                        when the data held, the receive retired the
 *                        key and the unmap had nothing to post
 *
 * pattern(seed, len) is p[i] = (u8)(seed * 131 + i * 7 + (i >> 8)) for
 * i < len, as ibpost_test_fill() makes it.
 */
#ifndef _IBPOST_XHOST_H
#define _IBPOST_XHOST_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/list.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ibpost.h>
#include "ibpost_test.h"

#define XHOST_SERVER_ADDR	"10.77.0.1"
#define XHOST_PORT		7471
#define XHOST_MAGIC		0x78686f73U	/* "xhos" */
#define XHOST_PAYLOAD_MAX	(16U * 1024)
#define XHOST_MSG_MAX		(sizeof(struct xhost_msg) + XHOST_PAYLOAD_MAX)
#define XHOST_RECVS		128U
#define XHOST_WIN		(64U * 1024)
#define XHOST_READ_SEED		0x5eedU
#define XHOST_MAP_MAX		SZ_1M
/* CHECK_MAP's RESULT: the data, the peer's invalidation, the unmap. */
#define XHOST_MAP_DATA_OK	1U
#define XHOST_MAP_INVALIDATED	2U
#define XHOST_MAP_UNMAP_DONE	4U
#define XHOST_MAP_ALL_OK	7U

enum xhost_type {
	XHOST_HELLO = 1,
	XHOST_DATA,
	XHOST_ECHO,
	XHOST_CHECK_WRITE,
	XHOST_CHECK_ZERO,
	XHOST_ZERO,
	XHOST_STATS,
	XHOST_SHUTDOWN,
	XHOST_RESULT,
	XHOST_MAP,
	XHOST_CHECK_MAP,
};

struct xhost_msg {
	__le32 magic;
	__le32 type;
	__le32 seq;
	__le32 len;
	__le32 seed;
	__le32 rkey;
	__le64 addr;
	__le64 arg0;
	__le64 arg1;
};

static_assert(sizeof(struct xhost_msg) == 48);

static inline u8 xhost_byte(u32 seed, size_t i)
{
	return (u8)(seed * 131 + i * 7 + (i >> 8));
}

static inline void xhost_fill(void *buf, size_t len, u32 seed)
{
	u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = xhost_byte(seed, i);
}

/* Does @buf hold bytes [@off, @off + @len) of pattern(@seed)? */
static inline bool xhost_check_at(const void *buf, size_t len, u32 seed,
				  size_t off)
{
	const u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != xhost_byte(seed, off + i))
			return false;
	return true;
}

static inline bool xhost_check(const void *buf, size_t len, u32 seed)
{
	return xhost_check_at(buf, len, seed, 0);
}

static inline void xhost_msg_init(struct xhost_msg *m, u32 type, u32 seq,
				  u32 len, u32 seed)
{
	memset(m, 0, sizeof(*m));
	m->magic = cpu_to_le32(XHOST_MAGIC);
	m->type = cpu_to_le32(type);
	m->seq = cpu_to_le32(seq);
	m->len = cpu_to_le32(len);
	m->seed = cpu_to_le32(seed);
}

/* ---- The server: xhost_server.c, xhost_server_msg.c ------------------- */

/* The status file's counters, in its order. */
enum xs_stat {
	XS_CONNECTIONS,		/* accepted */
	XS_ESTABLISHED,
	XS_DISCONNECTED,	/* established ones, now torn down */
	XS_DATA_OK,		/* DATA payloads verified good */
	XS_DATA_BAD,		/* DATA and ECHO payloads found bad */
	XS_ECHO_OK,		/* ECHO payloads verified and echoed */
	XS_CHECKS_OK,		/* CHECK_WRITE/CHECK_ZERO that held */
	XS_CHECKS_BAD,
	XS_RECV_POSTED,		/* of finished connections */
	XS_RECV_RETURNED,	/* of finished connections */
	XS_SHUTDOWN,		/* 1 once a SHUTDOWN came */
	XS_REJECTED,		/* connect requests refused */
	XS_MSGS_BAD,		/* malformed or unknown messages */
	XS_NR_STATS
};

extern atomic64_t xs_stats[XS_NR_STATS];

static inline void xs_count(enum xs_stat stat)
{
	atomic64_inc(&xs_stats[stat]);
}

#define XS_CHUNK_BUFS	16U	/* receive payloads per allocation */
#define XS_CHUNKS	(XHOST_RECVS / XS_CHUNK_BUFS)

/* One receive: the header lands in @hdr, the payload in @payload. */
struct xs_rx {
	struct list_head node;		/* on xs_conn.rx_done */
	struct xhost_msg *hdr;
	u8 *payload;
	struct ibpost_mr *mr;		/* @payload's */
	u32 byte_len;
	u32 wc_flags;			/* IB_WC_WITH_INVALIDATE ... */
	u32 inv_rkey;			/* the key a SEND_WITH_INV retired */
};

/* conn->flags */
enum {
	XS_F_ESTABLISHED,
	XS_F_HELLO,		/* HELLO attempted */
	XS_F_ENDED,		/* teardown queued */
	XS_F_STOPPING,		/* no work is queued any more */
	XS_F_TX_BROKEN,		/* a send never completed: send no more */
};

struct xs_conn {
	unsigned int nr;
	struct rdma_cm_id *id;
	struct ibpost_dev *dev;
	struct ibpost_qp *qp;
	unsigned long flags;
	struct workqueue_struct *wq;
	struct work_struct work;	/* HELLO, then the messages */
	struct work_struct free_work;	/* teardown */
	spinlock_t rx_lock;		/* rx_done, queueing of @work */
	struct list_head rx_done;
	struct xs_rx rx[XHOST_RECVS];
	struct xhost_msg *hdrs;
	struct ibpost_mr *hdrs_mr;
	u8 *chunk[XS_CHUNKS];
	struct ibpost_mr *chunk_mr[XS_CHUNKS];
	struct xhost_msg *tx;
	struct ibpost_mr *tx_mr;
	struct completion tx_done;
	enum ib_wc_status tx_status;
	u8 *win, *rwin;
	struct ibpost_mr *win_mr, *rwin_mr;
	struct page **map_pages;	/* MAP's pages; NULL: none */
	struct scatterlist *map_sg;
	u32 map_n;
	struct ibpost_frwr_map map;
	bool map_inv_done;		/* its unmap's LOCAL_INV came back */
	u64 data_ok, data_bad;		/* for STATS; @work only */
	atomic_t recv_posted, recv_returned;
};

int xs_buffers_init(struct xs_conn *c);
void xs_buffers_free(struct xs_conn *c);
int xs_post_recvs(struct xs_conn *c);
void xs_kick(struct xs_conn *c);
void xs_recv_done(struct ibpost_qp *qp, void *context,
		  const struct ib_wc *wc);
void xs_send_done(struct ibpost_qp *qp, void *context,
		  const struct ib_wc *wc);
void xs_conn_work(struct work_struct *work);
void xs_map_release(struct xs_conn *c);
void xs_map_free(struct xs_conn *c);

/* ---- The KUnit client: xhost_client.c, xhost_*test.c ------------------ */

struct kunit;

/* What the server's HELLO says. */
struct xc_peer {
	u64 wr_addr, rd_addr;
	u32 wr_rkey, wr_len;
	u32 rd_rkey, rd_len, rd_seed;
};

/*
 * One connection to the server with its own buffers: tx (a request),
 * rx (an answer), data (local side of RDMA and payloads), and ring
 * (xc_ring_alloc(): messages in flight). Torn down when the test ends,
 * or by xc_close(): QP, then MRs, then the cm_id.
 */
struct xc_conn {
	struct kunit *test;
	struct rdma_cm_id *id;
	struct ibpost_dev *dev;
	struct ibpost_qp *qp;
	struct ibpost_qp_attr got;
	wait_queue_head_t wq;
	unsigned long events;		/* bit per rdma_cm_event_type */
	int reject_status;
	struct ibpost_test_buf tx, rx, data;
	struct ibpost_test_buf *ring;
	u32 nring;
	struct xc_peer peer;
	u32 seq;
};

#define XC_DATA_LEN	(32U * 1024)
#define XC_REPLY_SECS	30
#define XC_DISC_SECS	30
#define XC_ECHO_LEN	4096U

struct xc_conn *xc_open(struct kunit *test);
void xc_close(struct xc_conn *c);
void xc_disconnect(struct xc_conn *c, unsigned int secs);
void xc_ring_alloc(struct xc_conn *c, u32 n);
void xc_send_comp(struct xc_conn *c, struct ibpost_comp *comp,
		  unsigned int secs);
void xc_recv_comp(struct xc_conn *c, struct ibpost_comp *comp,
		  unsigned int secs);
const struct xhost_msg *xc_call(struct xc_conn *c, u32 plen);
const struct xhost_msg *xc_request(struct xc_conn *c, u32 type, u64 arg0,
				   u32 len, u32 seed);
u64 xc_ask(struct xc_conn *c, u32 type, u64 arg0, u32 len, u32 seed);
void xc_echo(struct xc_conn *c, u32 len, u32 seed);

/* xhost_link_test.c */
void xhost_link_loss_and_reconnect(struct kunit *test);

#endif /* _IBPOST_XHOST_H */
