// SPDX-License-Identifier: GPL-2.0
/*
 * What both backends share: the failure record, send completion
 * accounting and the bounded waits for it, buffers, and the check that
 * every context came back.
 *
 * Completion handlers run in softirq (IB_POLL_SOFTIRQ, for raw CQs and
 * for ibpost's alike), or in the engine's poll loop (the poll modes'
 * IB_POLL_DIRECT): they only count, record and wake. The first failure of
 * a run (a completion status, a refused post, a timeout, a signal, the
 * device going away) is recorded once and stops the run; what happens
 * after bench_stop() (the flushes of teardown) is ignored, but for the
 * count of what came back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bottom_half.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include "bench.h"

/**
 * bench_side_init - a side's state before its QP is created
 * @run: its run
 * @s: the side, zeroed
 * @peer: the other side of the pair, or NULL
 * @name: its name in messages
 *
 * Context: Any context.
 */
void bench_side_init(struct bench_run *run, struct bench_side *s,
		     struct bench_side *peer, char name)
{
	s->run = run;
	s->peer = peer;
	s->name = name;
	s->txq.side = s;
	spin_lock_init(&s->txq.lock);
}

/**
 * bench_run_init - a run's state before its setup
 * @run: the run, zeroed
 * @cfg: its command
 * @root: the command's run when @run is one of its pairs; NULL otherwise
 *
 * Context: Any context.
 */
void bench_run_init(struct bench_run *run, const struct bench_cfg *cfg,
		    struct bench_run *root)
{
	const struct bench_mode_info *m = &bench_modes[cfg->mode];
	static const enum ib_wr_opcode opcodes[] = {
		[BENCH_OP_SEND] = IB_WR_SEND,
		[BENCH_OP_WRITE] = IB_WR_RDMA_WRITE,
		[BENCH_OP_READ] = IB_WR_RDMA_READ,
	};

	run->cfg = cfg;
	run->root = root ?: run;
	run->lat = m->kind == BENCH_KIND_LAT;
	run->full = m->kind == BENCH_KIND_DESTROY;
	run->seed = m->seed;
	run->poll = m->poll;
	run->ops = m->raw ? &bench_raw_ops : &bench_ibp_ops;
	run->opcode = opcodes[cfg->op];
	run->size = cfg->size;
	run->chain = run->seed ? 1 : cfg->chain;
	run->signal = run->lat ? BENCH_LAT_SIGNAL : cfg->signal;
	run->depth = cfg->depth ?: BENCH_QUEUE_DEPTH;
	if (root) {
		run->dev = root->dev;
		run->ibdev = root->ibdev;
		run->pd = root->pd;
	}
	init_waitqueue_head(&run->wq);
	init_completion(&run->pong);
	spin_lock_init(&run->lock);
	bench_side_init(run, &run->a, &run->b, 'A');
	bench_side_init(run, &run->b, &run->a, 'B');
}

/**
 * bench_fail - record a run's failure, unless one is already recorded
 * @run: the run
 * @err: negative errno
 * @why: what failed, for the message
 *
 * Context: Any context but hard IRQ.
 * Return: @err.
 */
int bench_fail(struct bench_run *run, int err, const char *why)
{
	spin_lock_bh(&run->lock);
	if (!run->err && !run->stopping) {
		run->why = why;
		WRITE_ONCE(run->err, err);
	}
	spin_unlock_bh(&run->lock);
	wake_up_all(&run->wq);
	return err;
}

/* A completion came back with an error status: the run fails with -EIO. */
void bench_fail_wc(struct bench_side *s, const struct ib_wc *wc, bool send)
{
	struct bench_run *run = s->run;

	spin_lock_bh(&run->lock);
	if (!run->err && !run->stopping) {
		run->wc_failed = true;
		run->wc_send = send;
		run->wc_side = s->name;
		run->wc_status = wc->status;
		WRITE_ONCE(run->err, -EIO);
	}
	spin_unlock_bh(&run->lock);
	wake_up_all(&run->wq);
}

/* Take @from's failure as @run's own, unless @run has one already. */
void bench_fail_from(struct bench_run *run, struct bench_run *from)
{
	spin_lock_bh(&from->lock);
	spin_lock_nested(&run->lock, SINGLE_DEPTH_NESTING);
	if (!run->err && from->err) {
		run->why = from->why;
		run->wc_failed = from->wc_failed;
		run->wc_send = from->wc_send;
		run->wc_side = from->wc_side;
		run->wc_status = from->wc_status;
		WRITE_ONCE(run->err, from->err);
	}
	spin_unlock(&run->lock);
	spin_unlock_bh(&from->lock);
	wake_up_all(&run->wq);
}

/* Teardown begins: flushes are expected from here on. */
void bench_stop(struct bench_run *run)
{
	spin_lock_bh(&run->lock);
	WRITE_ONCE(run->stopping, true);
	spin_unlock_bh(&run->lock);
}

/* Between posts: has the run failed, or has the writer been signaled? */
int bench_check(struct bench_run *run)
{
	int err = READ_ONCE(run->err);

	if (err)
		return err;
	if (signal_pending(current))
		return bench_fail(run, -EINTR, "interrupted by a signal");
	return 0;
}

/**
 * bench_tx_done - account a send completion
 * @txq: the send queue
 * @c: raw: the slot's context; NULL for ibpost, which reclaims its slots
 * @wc: the completion
 * @signaled: the WR was posted signaled
 *
 * Only signaled WRs come back on success; send queues complete in order,
 * so the slots of every WR up to @c's are free again.
 *
 * Context: The CQ's completion context (softirq, or the poll loop of a
 * DIRECT CQ), or process context for ibpost's flushes.
 */
void bench_tx_done(struct bench_txq *txq, struct bench_wctx *c,
		   const struct ib_wc *wc, bool signaled)
{
	struct bench_run *run = txq->side->run;
	struct bench_ctxs *ctxs = &txq->side->ctxs;

	atomic_inc(signaled ? &ctxs->back_sig : &ctxs->back_unsig);
	if (wc->status != IB_WC_SUCCESS) {
		bench_fail_wc(txq->side, wc, true);
		return;
	}
	if (c) {
		/* Pairs with the acquire in bench_txq_room(): slots are free. */
		smp_store_release(&txq->freed, c->seq);
	}
	WRITE_ONCE(txq->t_last, ktime_get_ns());
	/* t_last and freed before the count the waiters look at. */
	smp_mb__before_atomic();
	atomic_inc(&txq->completions);
	/* wq_has_sleeper() orders the count before the waiter check. */
	if (wq_has_sleeper(&run->wq))
		wake_up(&run->wq);
}

/**
 * bench_post_recv - post one receive on a side, counted
 * @run: the run
 * @s: the side
 *
 * Context: Any context but hard IRQ.
 * Return: 0, or the backend's error.
 */
int bench_post_recv(struct bench_run *run, struct bench_side *s)
{
	int ret = run->ops->post_recv(run, s);

	if (!ret)
		atomic_inc(&s->ctxs.recv);
	return ret;
}

/**
 * bench_rx_done - a receive completion: answer it and repost
 * @s: the side it belongs to
 * @wc: the completion
 *
 * Every receive is answered (latency) and replaced by a new one, while
 * it succeeds and the run is not stopping.
 *
 * Context: The CQ's completion context.
 */
void bench_rx_done(struct bench_side *s, const struct ib_wc *wc)
{
	struct bench_run *run = s->run;
	int ret;

	atomic_inc(&s->ctxs.back_recv);
	if (wc->status != IB_WC_SUCCESS) {
		bench_fail_wc(s, wc, false);
		return;
	}
	if (READ_ONCE(run->stopping))
		return;
	bench_lat_rx(s);
	ret = bench_post_recv(run, s);
	if (ret)
		bench_fail(run, ret, "reposting a receive");
}

/* How many of the @n WRs from @wr on are signaled. */
u32 bench_wr_signaled(const struct ib_send_wr *wr, u32 n)
{
	u32 sig = 0;

	for (; wr && n; wr = wr->next, n--)
		sig += !!(wr->send_flags & IB_SEND_SIGNALED);
	return sig;
}

/* Raw: send queue slots the poster may still fill. */
u32 bench_txq_room(struct bench_txq *txq)
{
	/* Pairs with the release in bench_tx_done(). */
	u32 freed = smp_load_acquire(&txq->freed);

	return txq->depth - (txq->posted - freed);
}

/* Raw: the context of the @i-th WR from now on, ready to post. */
struct ib_cqe *bench_txq_next(struct bench_txq *txq, u32 i, bool signaled)
{
	u32 seq = txq->posted + i;
	struct bench_wctx *c = &txq->ctx[seq % txq->depth];

	c->seq = seq + 1;
	c->signaled = signaled;
	return &c->cqe;
}

static bool bench_txq_moved(struct bench_run *run, struct bench_txq *txq,
			    u32 snap)
{
	return (u32)atomic_read(&txq->completions) != snap ||
	       READ_ONCE(run->err);
}

/**
 * bench_txq_wait - wait for a send completion beyond @snap
 * @run: the run
 * @txq: the send queue
 * @snap: its completion count when the post that found it full began
 *
 * Context: Process context; sleeps (interruptibly).
 * Return: 0; the run's failure; -ETIMEDOUT after BENCH_TIMEOUT without a
 * completion; -EINTR on a signal.
 */
int bench_txq_wait(struct bench_run *run, struct bench_txq *txq, u32 snap)
{
	long left;

	left = wait_event_interruptible_timeout(run->wq,
						bench_txq_moved(run, txq, snap),
						BENCH_TIMEOUT);
	if (READ_ONCE(run->err))
		return READ_ONCE(run->err);
	if (left < 0)
		return bench_fail(run, -EINTR, "interrupted by a signal");
	if (!left)
		return bench_fail(run, -ETIMEDOUT,
				  "no send completion within 30 s");
	return 0;
}

/* Wait until @need signaled WRs completed on @txq since it counted @start. */
int bench_txq_wait_count(struct bench_run *run, struct bench_txq *txq,
			 u32 start, u32 need)
{
	u32 seen;
	int ret;

	for (;;) {
		seen = atomic_read(&txq->completions);
		if (seen - start >= need)
			break;
		ret = bench_txq_wait(run, txq, seen);
		if (ret)
			return ret;
	}
	/* Pairs with the barrier in bench_tx_done(): t_last is the last. */
	smp_rmb();
	return 0;
}

#define BENCH_SPIN_CHECK	1024	/* polls between deadline checks */

static bool bench_spin_ready(struct bench_run *run,
			     const struct bench_until *u)
{
	if (u->byte)
		return READ_ONCE(*u->byte) == u->seq;
	if (u->txq)
		return (u32)atomic_read(&u->txq->completions) - u->snap >=
		       u->need;
	return try_wait_for_completion(&run->pong);
}

/**
 * bench_spin - busy-wait for @u, the poll modes reaping meanwhile
 * @run: the run
 * @u: what to wait for
 *
 * rxe (and other software providers) move data in softirq: the loop lets
 * pending softirqs run on this CPU (as a spin_unlock_bh() in a post path
 * does) instead of waiting for ksoftirqd; in the poll modes it also reaps
 * both sides' DIRECT CQs on every turn. It gives the CPU up now and then,
 * and gives up after BENCH_TIMEOUT.
 *
 * Context: Process context.
 * Return: 0; the run's failure; -EINTR on a signal; -ETIMEDOUT.
 */
int bench_spin(struct bench_run *run, const struct bench_until *u)
{
	unsigned long deadline = jiffies + BENCH_TIMEOUT;
	u32 spins = 0;
	int err;

	for (;;) {
		if (bench_spin_ready(run, u))
			return 0;
		err = READ_ONCE(run->err);
		if (err)
			return err;
		if (++spins % BENCH_SPIN_CHECK == 0) {
			if (signal_pending(current))
				return bench_fail(run, -EINTR,
						  "interrupted by a signal");
			if (time_after(jiffies, deadline))
				return bench_fail(run, -ETIMEDOUT, u->txq ?
						  "no send completion within 30 s" :
						  "no answer within 30 s");
			cond_resched();
		}
		/* Poll modes: run what completed, on both sides. */
		if (run->poll) {
			err = run->ops->poll(run);
			if (err)
				return err;
		}
		/* Let the provider's pending softirq work run here. */
		local_bh_disable();
		local_bh_enable();
		cpu_relax();
	}
}

/* How many WRs of a chain precede @bad (0 when the provider gave none). */
u32 bench_chain_index(const struct ib_send_wr *first,
		      const struct ib_send_wr *bad)
{
	u32 n = 0;

	if (!bad)
		return 0;
	for (; first && first != bad; first = first->next)
		n++;
	return n;
}

/**
 * bench_buf_alloc - a buffer of run->size bytes, not registered yet
 * @run: the run
 * @b: the buffer, zeroed
 *
 * Context: Process context; may sleep.
 * Return: 0, or the run's failure.
 */
int bench_buf_alloc(struct bench_run *run, struct bench_buf *b)
{
	b->cpu = kzalloc(run->size, GFP_KERNEL | __GFP_NOWARN);
	return b->cpu ? 0 : bench_fail(run, -ENOMEM, "allocating a buffer");
}

/**
 * bench_buf_free - undo the registration of a buffer, free it
 * @run: the run
 * @b: the buffer; nothing posted uses it any more
 *
 * A registration the backend cannot undo keeps the buffer: leaked rather
 * than freed while the device may still reach it.
 *
 * Context: Process context; may sleep.
 */
void bench_buf_free(struct bench_run *run, struct bench_buf *b)
{
	if (b->cpu && run->ops->buf_unreg(run, b))
		return;
	kfree(b->cpu);
	memset(b, 0, sizeof(*b));
}

/*
 * MR rotation (cfg->mrs > 1, bandwidth): side A's source buffers beyond
 * its first, each allocated and registered on its own (raw: mapped, used
 * through the PD's local_dma_lkey, as a raw ULP does; ibpost: an MR of
 * its own each, so that its post looks each SGE's MR up).
 */
static int bench_rot_init(struct bench_run *run)
{
	u32 n = run->cfg->mrs ? run->cfg->mrs - 1 : 0, i;
	int ret;

	if (!n || run->lat)
		return 0;
	run->a.rot = kcalloc(n, sizeof(*run->a.rot), GFP_KERNEL);
	if (!run->a.rot)
		return bench_fail(run, -ENOMEM, "allocating the rotation");
	for (i = 0; i < n; i++) {
		ret = bench_buf_alloc(run, &run->a.rot[i]) ?:
		      run->ops->buf_reg(run, &run->a, &run->a.rot[i], false);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * bench_bufs_init - a run's buffers, then the receives that keep it fed
 * @run: the run
 * @what: the backend's receive post call, for the failure message
 *
 * Context: Process context; may sleep.
 * Return: 0, or the run's failure; bench_bufs_free() undoes what was done.
 */
int bench_bufs_init(struct bench_run *run, const char *what)
{
	struct bench_side *sides[] = { &run->a, &run->b };
	bool remote = run->opcode != IB_WR_SEND;
	unsigned int i;
	u32 n;
	int ret;

	ret = bench_rot_init(run);
	if (ret)
		return ret;

	for (i = 0; i < ARRAY_SIZE(sides); i++) {
		struct bench_side *s = sides[i];

		if (bench_need_src(run, s)) {
			ret = bench_buf_alloc(run, &s->src) ?:
			      run->ops->buf_reg(run, s, &s->src, false);
			if (ret)
				return ret;
		}
		if (bench_need_dst(run, s)) {
			ret = bench_buf_alloc(run, &s->dst) ?:
			      run->ops->buf_reg(run, s, &s->dst, remote);
			if (ret)
				return ret;
		}
	}
	for (i = 0; i < ARRAY_SIZE(sides); i++) {
		struct bench_side *s = sides[i];

		if (!bench_need_recv(run, s))
			continue;
		for (n = 0; n < s->rq_depth; n++) {
			ret = bench_post_recv(run, s);
			if (ret)
				return bench_fail(run, ret, what);
		}
	}
	return 0;
}

/* The buffers of both sides, once no posted WR uses them. */
void bench_bufs_free(struct bench_run *run)
{
	u32 i;

	/* A buffer whose registration stays is leaked by bench_buf_free(). */
	for (i = 0; run->a.rot && i < run->cfg->mrs - 1; i++)
		bench_buf_free(run, &run->a.rot[i]);
	kfree(run->a.rot);
	run->a.rot = NULL;
	bench_buf_free(run, &run->a.src);
	bench_buf_free(run, &run->a.dst);
	bench_buf_free(run, &run->b.src);
	bench_buf_free(run, &run->b.dst);
}

/* After teardown: did every context of side @s come back, once? */
static int bench_ctxs_check(struct bench_side *s)
{
	struct bench_ctxs *c = &s->ctxs;
	u32 sent = atomic_read(&c->sent), sig = atomic_read(&c->sent_sig);
	u32 back_sig = atomic_read(&c->back_sig);
	u32 back_unsig = atomic_read(&c->back_unsig);
	u32 recv = atomic_read(&c->recv), back_recv = atomic_read(&c->back_recv);

	if (back_sig == sig && back_unsig <= sent - sig && back_recv == recv)
		return 0;
	pr_warn("QP %c after teardown: %u of %u signaled send contexts came back, %u of %u unsignaled (at most), %u of %u receive contexts\n",
		s->name, back_sig, sig, back_unsig, sent - sig, back_recv,
		recv);
	return -EIO;
}

/**
 * bench_pair_teardown - stop a set-up pair, tear it down, check it
 * @run: the run whose setup succeeded
 *
 * Context: Process context; sleeps.
 * Return: 0, or -EIO (with a warning) when a context did not come back
 * exactly once; also recorded as the run's failure unless it has one.
 */
int bench_pair_teardown(struct bench_run *run)
{
	int ret;

	bench_stop(run);
	run->ops->teardown(run);
	ret = bench_ctxs_check(&run->a);
	if (!bench_ctxs_check(&run->b) && !ret)
		return 0;
	/* Recorded although stopping: nothing else can have failed now. */
	spin_lock_bh(&run->lock);
	if (!run->err) {
		run->why = "contexts missing after teardown";
		WRITE_ONCE(run->err, -EIO);
	}
	spin_unlock_bh(&run->lock);
	return -EIO;
}
