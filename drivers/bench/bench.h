/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibpost_bench: what the benchmark's files share.
 *
 * A run is one command written to debugfs: a loopback RC pair (side A and
 * side B) on one device, set up by a backend (raw verbs or ibpost), used
 * by a traffic engine (bandwidth or ping-pong latency), torn down again.
 */
#ifndef _IBPOST_BENCH_H
#define _IBPOST_BENCH_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/ibpost.h>

#define BENCH_MAX_SIZE		SZ_4M
#define BENCH_MAX_CHAIN		64
#define BENCH_MAX_ITERS		10000000
#define BENCH_MAX_SIGNAL	1024
#define BENCH_QUEUE_DEPTH	256	/* send and receive WRs asked for */
#define BENCH_CQE		1024	/* raw CQ size; caps the slots used */
#define BENCH_LAT_SIGNAL	16	/* latency: a signaled WR every 16 */
#define BENCH_TIMEOUT		(30 * HZ)
#define BENCH_RESULT_MAX	256

enum bench_mode {
	BENCH_RAW,
	BENCH_CHAIN,
	BENCH_SEED,
	BENCH_LAT_RAW,
	BENCH_LAT_CHAIN,
	BENCH_LAT_SEED,
	BENCH_CALIB,
};

enum bench_op {
	BENCH_OP_SEND,
	BENCH_OP_WRITE,
	BENCH_OP_READ,
};

/**
 * struct bench_cfg - one command, parsed and checked
 * @dev: the RDMA device's name
 * @has_mode: mode= was given
 * @mode: enum bench_mode
 * @op: enum bench_op
 * @size: bytes per WR
 * @chain: WRs per post call (bandwidth, raw and chain modes)
 * @signal: a signaled WR every this many (bandwidth)
 * @iters: WRs (bandwidth) or round trips (latency) measured
 * @warmup: WRs or round trips before the measurement
 * @bh: bandwidth: post with bottom halves disabled (1) or not (0)
 */
struct bench_cfg {
	char dev[IB_DEVICE_NAME_MAX];
	bool has_mode;
	enum bench_mode mode;
	enum bench_op op;
	u32 size;
	u32 chain;
	u32 signal;
	u32 iters;
	u32 warmup;
	u32 bh;
};

/**
 * struct bench_result - what a run measured
 * @chain: WRs per post call used
 * @signal: signal interval used (clamped to the send queue)
 * @msgs_per_s: WRs per second
 * @mib_x100: MiB per second, times 100
 * @post_ns: average ns per WR spent inside the post calls
 * @elapsed_ns: first post to last completion
 * @median_ns: one-way latency, median (half the round trip)
 * @p99_ns: one-way latency, 99th percentile
 * @min_ns: one-way latency, minimum
 */
struct bench_result {
	u32 chain;
	u32 signal;
	u64 msgs_per_s;
	u64 mib_x100;
	u64 post_ns;
	u64 elapsed_ns;
	u32 median_ns;
	u32 p99_ns;
	u32 min_ns;
};

/**
 * struct bench_buf - one buffer of a side
 * @cpu: its kernel address (kmalloc)
 * @dma: raw: its DMA address
 * @mapped: raw: @dma is mapped
 * @mr: raw: the fast-registration MR granting the peer access
 * @imr: ibpost: its registration
 * @sge: the local SGE covering it
 * @raddr: the address the peer uses (remote buffers)
 * @rkey: the key the peer uses (remote buffers)
 */
struct bench_buf {
	void *cpu;
	u64 dma;
	bool mapped;
	struct ib_mr *mr;
	struct ibpost_mr *imr;
	struct ib_sge sge;
	u64 raddr;
	u32 rkey;
};

struct bench_txq;

/**
 * struct bench_wctx - raw: the context of one send queue slot
 * @cqe: what the WR carries in wr_cqe
 * @txq: the queue
 * @seq: WRs posted on @txq up to and including this one
 */
struct bench_wctx {
	struct ib_cqe cqe;
	struct bench_txq *txq;
	u32 seq;
};

/**
 * struct bench_txq - a side's send queue, as the benchmark sees it
 * @side: the side
 * @ctx: raw: one context per usable slot, used as a ring
 * @depth: usable send queue slots
 * @posted: raw: WRs posted (written by the poster only)
 * @freed: raw: WRs known complete (written by the completion handler)
 * @lat_count: latency: WRs posted, for the signaling pattern
 * @completions: signaled WRs completed successfully
 * @t_last: ktime of the last successful signaled completion
 */
struct bench_txq {
	struct bench_side *side;
	struct bench_wctx *ctx;
	u32 depth;
	u32 posted;
	u32 freed;
	u32 lat_count;
	atomic_t completions;
	u64 t_last;
};

/**
 * struct bench_side - one QP of the loopback pair and its buffers
 * @run: the run
 * @peer: the other side
 * @name: 'A' or 'B', for messages
 * @qp: raw: the QP
 * @scq: raw: its send CQ
 * @rcq: raw: its receive CQ
 * @iqp: ibpost: the QP
 * @txq: the send queue
 * @rq_depth: receives kept posted
 * @src: what this side sends, writes, or reads into
 * @dst: where the peer's data lands, or what the peer reads
 * @recv_cqe: raw: carried by every receive
 * @reg_cqe: raw: carried by the IB_WR_REG_MR
 * @reg_done: raw: completed with the IB_WR_REG_MR
 * @reg_status: raw: its completion status
 * @lat_wr: latency: this side's one WR (to the peer's @dst)
 */
struct bench_side {
	struct bench_run *run;
	struct bench_side *peer;
	char name;
	struct ib_qp *qp;
	struct ib_cq *scq;
	struct ib_cq *rcq;
	struct ibpost_qp *iqp;
	struct bench_txq txq;
	u32 rq_depth;
	struct bench_buf src;
	struct bench_buf dst;
	struct ib_cqe recv_cqe;
	struct ib_cqe reg_cqe;
	struct completion reg_done;
	enum ib_wc_status reg_status;
	struct ib_rdma_wr lat_wr;
};

/**
 * struct bench_run - the state of one command
 * @cfg: the command
 * @ops: the backend
 * @lat: a latency mode
 * @seed: ibpost seed operations rather than chains
 * @dev: the ibpost device (a reference)
 * @ibdev: its ib_device
 * @pd: ibpost's PD on it
 * @a: side A, which drives the bandwidth traffic
 * @b: side B
 * @opcode: the WR opcode of op=
 * @size: bytes per WR
 * @chain: WRs per post call
 * @signal: a signaled WR every this many (clamped to the send queues)
 * @phase_len: WRs in the current bandwidth phase
 * @post_ns: time spent inside post calls since the phase began
 * @wrs: bandwidth: @chain WRs, linked per post call
 * @resume: ibpost chains: where to repost from after -ENOMEM
 * @rtt: latency: round-trip samples
 * @wq: woken by completions and failures
 * @pong: latency SEND: completed by A's receives
 * @lock: protects the failure record and @stopping
 * @err: the first failure, 0 while none
 * @why: what failed, when not a completion
 * @wc_failed: the failure is a completion status
 * @wc_send: that completion was a send completion
 * @wc_side: and happened on this side
 * @wc_status: its status
 * @stopping: teardown started: receives are not reposted, failures not
 *            recorded
 */
struct bench_run {
	const struct bench_cfg *cfg;
	const struct bench_ops *ops;
	bool lat;
	bool seed;
	struct ibpost_dev *dev;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct bench_side a;
	struct bench_side b;
	enum ib_wr_opcode opcode;
	u32 size;
	u32 chain;
	u32 signal;
	u32 phase_len;
	u64 post_ns;
	struct ib_rdma_wr *wrs;
	const struct ib_send_wr *resume;
	u32 *rtt;
	wait_queue_head_t wq;
	struct completion pong;
	spinlock_t lock;	/* the failure record and @stopping */
	int err;
	const char *why;
	bool wc_failed;
	bool wc_send;
	char wc_side;
	enum ib_wc_status wc_status;
	bool stopping;
};

/**
 * struct bench_ops - a backend: raw verbs or ibpost
 * @setup: create and connect the pair, register buffers, post receives;
 *         unwinds itself on failure
 * @teardown: undo a successful @setup
 * @post_bw: post up to @n bandwidth WRs of side A, the first being WR
 *           @idx of the phase (@fresh: a new chain, else the rest of the
 *           previous one); *@queued says how many were queued. -EAGAIN:
 *           the send queue is full, wait for a completion
 * @post_lat: post side @s's latency WR; -EAGAIN as for @post_bw. May be
 *            called from a completion handler (softirq)
 */
struct bench_ops {
	int (*setup)(struct bench_run *run);
	void (*teardown)(struct bench_run *run);
	int (*post_bw)(struct bench_run *run, u32 idx, u32 n, bool fresh,
		       u32 *queued);
	int (*post_lat)(struct bench_run *run, struct bench_side *s);
};

extern const struct bench_ops bench_raw_ops;
extern const struct bench_ops bench_ibp_ops;

static inline bool bench_mode_is_lat(enum bench_mode mode)
{
	return mode >= BENCH_LAT_RAW;
}

/* Which buffers and receives a run needs on side @s. */
static inline bool bench_need_src(const struct bench_run *run,
				  const struct bench_side *s)
{
	return run->lat || s == &run->a;
}

static inline bool bench_need_dst(const struct bench_run *run,
				  const struct bench_side *s)
{
	return run->lat || s == &run->b;
}

static inline bool bench_need_recv(const struct bench_run *run,
				   const struct bench_side *s)
{
	return run->opcode == IB_WR_SEND && bench_need_dst(run, s);
}

/* Bandwidth: every signal-th WR of a phase is signaled, and its last. */
static inline bool bench_bw_signaled(const struct bench_run *run, u32 idx)
{
	return (idx + 1) % run->signal == 0 || idx + 1 == run->phase_len;
}

/* Latency: every signal-th WR of a side is signaled. */
static inline int bench_lat_flags(const struct bench_run *run,
				  const struct bench_txq *txq)
{
	return (txq->lat_count + 1) % run->signal ? 0 : IB_SEND_SIGNALED;
}

/* core.c */
int bench_fail(struct bench_run *run, int err, const char *why);
void bench_fail_wc(struct bench_side *s, const struct ib_wc *wc, bool send);
void bench_stop(struct bench_run *run);
int bench_check(struct bench_run *run);
void bench_tx_done(struct bench_txq *txq, struct bench_wctx *c,
		   const struct ib_wc *wc);
bool bench_rx_ok(struct bench_side *s, const struct ib_wc *wc);
u32 bench_txq_room(struct bench_txq *txq);
struct ib_cqe *bench_txq_next(struct bench_txq *txq, u32 i);
int bench_txq_wait(struct bench_run *run, struct bench_txq *txq, u32 snap);
int bench_txq_wait_count(struct bench_run *run, struct bench_txq *txq,
			 u32 start, u32 need);
u32 bench_chain_index(const struct ib_send_wr *first,
		      const struct ib_send_wr *bad);

/* bw.c */
int bench_bw(struct bench_run *run, struct bench_result *res);

/* lat.c */
int bench_lat(struct bench_run *run, struct bench_result *res);
void bench_lat_rx(struct bench_side *s);

/* stats.c */
void bench_lat_stats(u32 *rtt, u32 n, struct bench_result *res);
u64 bench_per_second(u64 count, u64 elapsed_ns);
u64 bench_mib_x100(u64 bytes, u64 elapsed_ns);

int bench_bufs_init(struct bench_run *run,
		    int (*buf_init)(struct bench_run *run, struct bench_side *s,
				    struct bench_buf *b, bool remote),
		    int (*post_recv)(struct bench_run *run,
				     struct bench_side *s),
		    const char *what);

/* calib.c: the guest's memcpy and crc32 speed, into @line. */
int bench_calib(const struct bench_cfg *cfg, char *line, size_t len);

#endif /* _IBPOST_BENCH_H */
