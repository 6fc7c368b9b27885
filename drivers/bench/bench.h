/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibpost_bench: what the benchmark's files share.
 *
 * A run is one command written to debugfs: a loopback RC pair (side A and
 * side B) on one device, set up by a backend (raw verbs or ibpost), used
 * by an engine (bandwidth, ping-pong latency, or memory), torn down
 * again; the scaling engine sets up many pairs, each a run of its own.
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
#define BENCH_MAX_DEPTH		4096
#define BENCH_MAX_PAIRS		512	/* 1,024 QPs */
#define BENCH_MAX_THREADS	8
#define BENCH_MAX_COUNT		256
#define BENCH_MAX_MRS		1024
#define BENCH_MAX_SGES		4	/* sges= */
#define BENCH_MAX_ROT_BYTES	SZ_64M	/* mrs= times size= */
#define BENCH_QUEUE_DEPTH	256	/* default send and receive WRs asked */
#define BENCH_LAT_SIGNAL	16	/* latency: a signaled WR every 16 */
#define BENCH_POLL_BUDGET	16	/* completions per CQ and poll */
#define BENCH_TIMEOUT		(30 * HZ)
#define BENCH_RESULT_MAX	256

enum bench_mode {
	BENCH_RAW,
	BENCH_CHAIN,
	BENCH_SEED,
	BENCH_RAW_POLL,
	BENCH_CHAIN_POLL,
	BENCH_SEED_POLL,
	BENCH_LAT_RAW,
	BENCH_LAT_CHAIN,
	BENCH_LAT_SEED,
	BENCH_LAT_RAW_POLL,
	BENCH_LAT_CHAIN_POLL,
	BENCH_LAT_SEED_POLL,
	BENCH_SCALE_RAW,
	BENCH_SCALE_CHAIN,
	BENCH_MEM_RAW,
	BENCH_MEM_IBPOST,
	BENCH_DESTROY_RAW,
	BENCH_DESTROY_IBPOST,
	BENCH_CALIB,
	BENCH_NR_MODES,
};

/* The engine a mode runs. */
enum bench_kind {
	BENCH_KIND_BW,
	BENCH_KIND_LAT,
	BENCH_KIND_SCALE,
	BENCH_KIND_MEM,
	BENCH_KIND_DESTROY,
	BENCH_KIND_CALIB,
};

/**
 * struct bench_mode_info - what a mode= value selects
 * @name: its name in commands and results
 * @kind: the engine
 * @raw: raw verbs; else ibpost
 * @seed: ibpost's seed operations; else chains
 * @poll: completions busy-polled (IB_POLL_DIRECT); else softirq
 */
struct bench_mode_info {
	const char *name;
	enum bench_kind kind;
	bool raw;
	bool seed;
	bool poll;
};

extern const struct bench_mode_info bench_modes[BENCH_NR_MODES];

/* What a memory run measures: QPs with their CQs, or registrations. */
enum bench_obj {
	BENCH_OBJ_QP,
	BENCH_OBJ_MR,
};

enum bench_op {
	BENCH_OP_SEND,
	BENCH_OP_WRITE,
	BENCH_OP_READ,
};

/**
 * struct bench_cfg - one command, parsed and checked
 * @dev: the RDMA device's name
 * @addr: on iWARP, where pairs connect through rdma_cm: an IPv4 address
 *        of the device's netdev, in dotted quad
 * @has_mode: mode= was given
 * @mode: enum bench_mode
 * @op: enum bench_op
 * @size: bytes per WR
 * @chain: WRs per post call (bandwidth, raw and chain modes)
 * @signal: a signaled WR every this many (bandwidth)
 * @iters: WRs (bandwidth) or round trips (latency) measured
 * @warmup: WRs or round trips before the measurement
 * @bh: bandwidth: post with bottom halves disabled (1) or not (0)
 * @depth: send and receive WRs asked for per QP (0: BENCH_QUEUE_DEPTH);
 *         each backend asks its provider for one more (the drain's) and
 *         uses what it grants
 * @pairs: scaling: loopback pairs posting at once
 * @threads: scaling: posting threads
 * @count: memory: objects created per measurement
 * @mrs: bandwidth: side A's source buffers, each registered on its own,
 *       WR i of a phase from buffer i % @mrs (MR rotation; default 1)
 * @inl: bandwidth SEND and WRITE: every WR carries its data inline
 *       (IB_SEND_INLINE, from the buffer's kernel address)
 * @sges: bandwidth: SGEs per WR, the source cut in that many consecutive
 *        pieces of one buffer (default 1)
 * @shared_cq: scaling: every QP's CQs from ib_core's CQ pool, shared with
 *             the other pairs' QPs (raw: ib_cq_pool_get(); ibpost: the
 *             QP's shared_cq), any completion vector
 * @obj: memory: enum bench_obj
 */
struct bench_cfg {
	char dev[IB_DEVICE_NAME_MAX];
	char addr[16];
	bool has_mode;
	enum bench_mode mode;
	enum bench_op op;
	u32 size;
	u32 chain;
	u32 signal;
	u32 iters;
	u32 warmup;
	u32 bh;
	u32 depth;
	u32 pairs;
	u32 threads;
	u32 count;
	u32 mrs;
	u32 inl;
	u32 sges;
	u32 shared_cq;
	enum bench_obj obj;
};

/**
 * struct bench_result - what a run measured
 * @chain: WRs per post call used
 * @signal: signal interval used (clamped to the send queue)
 * @msgs_per_s: WRs per second
 * @mib_x100: MiB per second, times 100
 * @post_ns: average ns per WR spent inside the post calls
 * @elapsed_ns: first post to last completion
 * @wrs: WRs measured (scaling: all pairs together)
 * @median_ns: one-way latency, median (half the round trip)
 * @p99_ns: one-way latency, 99th percentile
 * @min_ns: one-way latency, minimum
 * @obj_bytes: memory: bytes of pages taken per object
 * @slab_bytes: memory: of which bytes of slab pages, per object
 */
struct bench_result {
	u32 chain;
	u32 signal;
	u64 msgs_per_s;
	u64 mib_x100;
	u64 post_ns;
	u64 elapsed_ns;
	u64 wrs;
	u32 median_ns;
	u32 p99_ns;
	u32 min_ns;
	s64 obj_bytes;
	s64 slab_bytes;
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
struct bench_cm;
struct rdma_cm_id;

/**
 * struct bench_wctx - raw: the context of one send queue slot
 * @cqe: what the WR carries in wr_cqe
 * @txq: the queue
 * @seq: WRs posted on @txq up to and including this one
 * @signaled: the WR in the slot is signaled
 */
struct bench_wctx {
	struct ib_cqe cqe;
	struct bench_txq *txq;
	u32 seq;
	bool signaled;
};

/**
 * struct bench_txq - a side's send queue, as the benchmark sees it
 * @side: the side
 * @ctx: raw: one context per usable slot, used as a ring
 * @depth: usable send queue slots
 * @lock: raw: serializes the posters when several threads share the QP
 * @posted: raw: WRs posted (written by the poster, under @lock if shared)
 * @freed: raw: WRs known complete (written by the completion handler)
 * @lat_count: latency: WRs posted, for the signaling pattern
 * @completions: signaled WRs completed successfully
 * @t_last: ktime of the last successful signaled completion
 */
struct bench_txq {
	struct bench_side *side;
	struct bench_wctx *ctx;
	u32 depth;
	spinlock_t lock;	/* raw shared posting: @posted, @ctx, the post */
	u32 posted;
	u32 freed;
	u32 lat_count;
	atomic_t completions;
	u64 t_last;
};

/**
 * struct bench_ctxs - a side's contexts, checked after teardown
 * @sent: send WRs accepted by the post calls
 * @sent_sig: of those, the signaled ones
 * @back_sig: completions of signaled send WRs, any status
 * @back_unsig: completions of unsignaled send WRs (errors, flushes)
 * @recv: receives accepted by the post calls
 * @back_recv: receive completions, any status
 *
 * Every signaled WR and every receive must come back exactly once,
 * every unsignaled WR at most once (only when it did not succeed).
 */
struct bench_ctxs {
	atomic_t sent;
	atomic_t sent_sig;
	atomic_t back_sig;
	atomic_t back_unsig;
	atomic_t recv;
	atomic_t back_recv;
};

/**
 * struct bench_side - one QP of the loopback pair and its buffers
 * @run: the run
 * @peer: the other side
 * @name: 'A' or 'B', for messages
 * @qp: raw: the QP
 * @id: on iWARP, the side's rdma_cm id (the pair's struct bench_cm owns it)
 * @scq: raw: its send CQ
 * @rcq: raw: its receive CQ
 * @iqp: ibpost: the QP
 * @txq: the send queue
 * @ctxs: its contexts, counted
 * @rq_depth: receives kept posted
 * @src: what this side sends, writes, or reads into
 * @rot: side A with cfg->mrs > 1: its source buffers after @src (so
 *       cfg->mrs - 1 of them), each registered on its own
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
	struct rdma_cm_id *id;
	struct ib_cq *scq;
	struct ib_cq *rcq;
	struct ibpost_qp *iqp;
	struct bench_txq txq;
	struct bench_ctxs ctxs;
	u32 rq_depth;
	struct bench_buf src;
	struct bench_buf *rot;
	struct bench_buf dst;
	struct ib_cqe recv_cqe;
	struct ib_cqe reg_cqe;
	struct completion reg_done;
	enum ib_wc_status reg_status;
	struct ib_rdma_wr lat_wr;
};

/**
 * struct bench_poster - one posting thread's bandwidth phase on side A
 * @wrs: its chain array, from A's src buffer to B's dst buffer
 * @isge: cfg->inl: the one SGE of every WR, the source's kernel address
 * @msge: cfg->sges > 1: every WR's SGEs, A's src buffer in pieces
 * @resume: ibpost chains: where to repost from after -ENOMEM
 * @phase_len: WRs in the phase
 * @idx: WRs of the phase queued so far
 * @left: WRs of the current chain not queued yet
 * @snap: the send queue's completion count before the last post call
 * @post_ns: time spent inside post calls since the phase began
 */
struct bench_poster {
	struct ib_rdma_wr *wrs;
	struct ib_sge isge;
	struct ib_sge msge[BENCH_MAX_SGES];
	const struct ib_send_wr *resume;
	u32 phase_len;
	u32 idx;
	u32 left;
	u32 snap;
	u64 post_ns;
};

/**
 * struct bench_run - the state of one command, or of one of its pairs
 * @cfg: the command
 * @ops: the backend
 * @root: the command's run: itself, or the one whose pair this is
 * @lat: a latency mode
 * @full: a destroy mode: both sides' receive queues filled, nothing sent
 * @seed: ibpost seed operations rather than chains
 * @poll: completions are busy-polled (IB_POLL_DIRECT) by the engine
 * @shared: several threads post on side A (raw then serializes them)
 * @iwarp: the device is iWARP: the pair connects through rdma_cm (@cm)
 * @cm: on iWARP, the pair's rdma_cm ids (cm.c)
 * @dev: the ibpost device (a reference)
 * @ibdev: its ib_device
 * @pd: ibpost's PD on it
 * @a: side A, which drives the bandwidth traffic
 * @b: side B
 * @opcode: the WR opcode of op=
 * @size: bytes per WR
 * @chain: WRs per post call
 * @signal: a signaled WR every this many (clamped to the send queues)
 * @depth: send and receive WRs asked for per QP
 * @port: raw: the port of the pair
 * @av: raw, the command's run: the port's loopback address (@have_av)
 * @have_av: @av is filled
 * @post: bandwidth: the one poster
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
	struct bench_run *root;
	bool lat;
	bool full;
	bool seed;
	bool poll;
	bool shared;
	bool iwarp;
	struct bench_cm *cm;
	struct ibpost_dev *dev;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct bench_side a;
	struct bench_side b;
	enum ib_wr_opcode opcode;
	u32 size;
	u32 chain;
	u32 signal;
	u32 depth;
	u32 port;
	struct rdma_ah_attr av;
	bool have_av;
	struct bench_poster post;
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
 * @teardown: undo a successful @setup; every context has come back when
 *            it returns
 * @side_create: create side @s's QP (and CQs), not connected
 * @side_destroy: undo @side_create on a QP that never left RESET, or
 *                once @teardown's drain is over
 * @buf_reg: make buffer @b usable by side @s's WRs; @remote: by the peer
 *           too. Undone by @buf_unreg, also after a failure
 * @buf_unreg: undo @buf_reg; nonzero when @b must be leaked
 * @post_recv: post one receive on side @s into its dst buffer
 * @post_bw: post up to @n bandwidth WRs of side A for poster @p, from WR
 *           @p->idx of its phase (@fresh: a new chain, else the rest of
 *           the previous one); *@queued says how many were queued.
 *           -EAGAIN: the send queue is full, wait for a completion
 * @post_lat: post side @s's latency WR; -EAGAIN as for @post_bw. May be
 *            called from a completion handler (softirq)
 * @poll: poll modes: process the completions ready on both sides
 */
struct bench_ops {
	int (*setup)(struct bench_run *run);
	void (*teardown)(struct bench_run *run);
	int (*side_create)(struct bench_run *run, struct bench_side *s);
	void (*side_destroy)(struct bench_run *run, struct bench_side *s);
	int (*buf_reg)(struct bench_run *run, struct bench_side *s,
		       struct bench_buf *b, bool remote);
	int (*buf_unreg)(struct bench_run *run, struct bench_buf *b);
	int (*post_recv)(struct bench_run *run, struct bench_side *s);
	int (*post_bw)(struct bench_run *run, struct bench_poster *p, u32 n,
		       bool fresh, u32 *queued);
	int (*post_lat)(struct bench_run *run, struct bench_side *s);
	int (*poll)(struct bench_run *run);
};

extern const struct bench_ops bench_raw_ops;
extern const struct bench_ops bench_ibp_ops;

/* cm.c: iWARP pairs; @create makes the backend's QP of side @s on @id. */
int bench_cm_connect(struct bench_run *run,
		     int (*create)(struct bench_run *run, struct bench_side *s,
				   struct rdma_cm_id *id));
void bench_cm_free(struct bench_run *run);

/* Which buffers and receives a run needs on side @s. */
static inline bool bench_need_src(const struct bench_run *run,
				  const struct bench_side *s)
{
	return run->lat || s == &run->a;
}

static inline bool bench_need_dst(const struct bench_run *run,
				  const struct bench_side *s)
{
	return run->lat || run->full || s == &run->b;
}

static inline bool bench_need_recv(const struct bench_run *run,
				   const struct bench_side *s)
{
	return run->opcode == IB_WR_SEND && bench_need_dst(run, s);
}

/* Bandwidth: the buffer side A's WR @idx of a phase reads or fills. */
static inline struct bench_buf *bench_src(struct bench_side *s, u32 idx)
{
	u32 k = s->rot ? idx % s->run->cfg->mrs : 0;

	return k ? &s->rot[k - 1] : &s->src;
}

/* Bandwidth: a WR's send flags, signaled (@sig) or not. */
static inline int bench_bw_flags(const struct bench_run *run, bool sig)
{
	return (sig ? IB_SEND_SIGNALED : 0) |
	       (run->cfg->inl ? IB_SEND_INLINE : 0);
}

/* Bandwidth: every signal-th WR of a phase is signaled, and its last. */
static inline bool bench_bw_signaled(const struct bench_run *run,
				     const struct bench_poster *p, u32 idx)
{
	return (idx + 1) % run->signal == 0 || idx + 1 == p->phase_len;
}

/* Latency: every signal-th WR of a side is signaled. */
static inline int bench_lat_flags(const struct bench_run *run,
				  const struct bench_txq *txq)
{
	return (txq->lat_count + 1) % run->signal ? 0 : IB_SEND_SIGNALED;
}

/* @n send WRs were queued on side @s, @sig of them signaled. */
static inline void bench_ctx_sent(struct bench_side *s, u32 n, u32 sig)
{
	atomic_add(n, &s->ctxs.sent);
	if (sig)
		atomic_add(sig, &s->ctxs.sent_sig);
}

/*
 * Piece @i of the run->cfg->sges a WR's source is cut in (sges=): its
 * offset in the source; *@len its length, the last piece taking what the
 * others leave. The chained modes' SGEs and the seed mode's alike.
 */
static inline u32 bench_piece(const struct bench_run *run, u32 i, u32 *len)
{
	u32 n = run->cfg->sges, each = run->size / n;

	*len = i + 1 < n ? each : run->size - i * each;
	return i * each;
}

/**
 * struct bench_until - what a spin (bench_spin()) waits for
 * @byte: the last byte of a buffer, to become @seq; or NULL
 * @seq: see @byte
 * @txq: without @byte: @need signaled WRs completed on it since its count
 *       was @snap; or NULL
 * @snap: see @txq
 * @need: see @txq
 *
 * With neither, run->pong.
 */
struct bench_until {
	const u8 *byte;
	u8 seq;
	struct bench_txq *txq;
	u32 snap;
	u32 need;
};

/* core.c */
void bench_side_init(struct bench_run *run, struct bench_side *s,
		     struct bench_side *peer, char name);
void bench_run_init(struct bench_run *run, const struct bench_cfg *cfg,
		    struct bench_run *root);
int bench_fail(struct bench_run *run, int err, const char *why);
void bench_fail_wc(struct bench_side *s, const struct ib_wc *wc, bool send);
void bench_fail_from(struct bench_run *run, struct bench_run *from);
void bench_stop(struct bench_run *run);
int bench_check(struct bench_run *run);
void bench_tx_done(struct bench_txq *txq, struct bench_wctx *c,
		   const struct ib_wc *wc, bool signaled);
void bench_rx_done(struct bench_side *s, const struct ib_wc *wc);
int bench_post_recv(struct bench_run *run, struct bench_side *s);
u32 bench_wr_signaled(const struct ib_send_wr *wr, u32 n);
u32 bench_txq_room(struct bench_txq *txq);
struct ib_cqe *bench_txq_next(struct bench_txq *txq, u32 i, bool signaled);
int bench_txq_wait(struct bench_run *run, struct bench_txq *txq, u32 snap);
int bench_txq_wait_count(struct bench_run *run, struct bench_txq *txq,
			 u32 start, u32 need);
int bench_spin(struct bench_run *run, const struct bench_until *u);
u32 bench_chain_index(const struct ib_send_wr *first,
		      const struct ib_send_wr *bad);
int bench_buf_alloc(struct bench_run *run, struct bench_buf *b);
void bench_buf_free(struct bench_run *run, struct bench_buf *b);
int bench_bufs_init(struct bench_run *run, const char *what);
void bench_bufs_free(struct bench_run *run);
int bench_pair_teardown(struct bench_run *run);

/* bw.c */
void bench_pcprof_mark(void);
void bench_sges(const struct bench_run *run, const struct ib_sge *whole,
		struct ib_sge *sge);
int bench_poster_init(struct bench_run *run, struct bench_poster *p);
void bench_bw_start(struct bench_poster *p, u32 total);
int bench_bw_step(struct bench_run *run, struct bench_poster *p);
void bench_bw_figures(struct bench_result *res, u32 size, u64 wrs,
		      u64 elapsed_ns, u64 post_ns);
int bench_bw(struct bench_run *run, struct bench_result *res);

/* lat.c */
int bench_lat(struct bench_run *run, struct bench_result *res);
void bench_lat_rx(struct bench_side *s);

/* scale.c */
int bench_scale(struct bench_run *run, struct bench_result *res);

/* mem.c */
int bench_mem(struct bench_run *run, struct bench_result *res);

/* destroy.c */
int bench_destroy(struct bench_run *run, struct bench_result *res);

/* stats.c */
void bench_lat_stats(u32 *rtt, u32 n, struct bench_result *res);
u64 bench_per_second(u64 count, u64 elapsed_ns);
u64 bench_mib_x100(u64 bytes, u64 elapsed_ns);

/* calib.c: the guest's memcpy and crc32 speed, into @line. */
int bench_calib(const struct bench_cfg *cfg, char *line, size_t len);

#endif /* _IBPOST_BENCH_H */
