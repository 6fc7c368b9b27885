// SPDX-License-Identifier: GPL-2.0
/*
 * Scaling: the aggregate bandwidth of many loopback pairs, or of several
 * threads on one pair, posting at once.
 *
 * cfg->pairs pairs are set up, each a run of its own (struct bench_run,
 * by the command's backend), and driven by cfg->threads kthreads, the
 * t-th pinned to the t-th online CPU (modulo their number). The threads
 * share the pairs out as a storage ULP with one QP per CPU per target
 * does (NVMe-oF's host: I/O submitted on a CPU goes to that CPU's queue
 * of each controller): a pair belongs to one thread, pair p to thread
 * p % threads, and each thread round-robins over its own pairs, posting
 * wherever there is room and sleeping only when all of them are full.
 * A pair whose send queue a post call found full is passed over until a
 * signaled WR of its has completed since, as the bandwidth rows' poster
 * waits for a completion before it posts again (and as a ULP does not
 * post into a queue it knows full): the rows compare the posting of
 * WRs, not the cost of a refusal, which many full queues probed round
 * after round would multiply (raw's refusal is the bench's own room
 * check, ibpost's a post call that returns -ENOMEM).
 * With fewer pairs than threads, the threads share the pairs: pair 0 is
 * posted on by threads 0, pairs, 2 * pairs, ... ("pairs=1 threads=2" is
 * two threads on one QP, which ibpost serializes itself and raw with a
 * spinlock of its own, as a raw ULP must).
 *
 * Each (thread, pair) share of a phase is a bench_poster with its own
 * chain array, signal pattern and an equal part of the phase's WRs. A
 * phase starts all threads at once and ends when every pair has seen the
 * last of its signaled completions; the measurement runs from the start
 * to the last completion of any pair, as perftest times one.
 *
 * The pairs are torn down in parallel (system_unbound_wq): ibpost waits
 * out an RCU grace period for each CQ it frees, which adds up over 128
 * QPs. Every pair's contexts are checked, as for any run.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "bench.h"

/**
 * struct bench_pair - one pair of a scaling run
 * @run: its run
 * @teardown: tears it down in parallel with the others
 * @ret: the teardown's result
 * @set_up: its setup succeeded
 * @sharers: threads posting on it
 * @start: its completion count when the phase began
 * @need: signaled completions that end its phase
 */
struct bench_pair {
	struct bench_run run;
	struct work_struct teardown;
	int ret;
	bool set_up;
	u32 sharers;
	u32 start;
	u32 need;
};

/**
 * struct bench_share - one thread's share of one pair
 * @pair: the pair
 * @p: the thread's poster on it
 * @full: its last post call found the send queue full: not posted on
 *        again until a signaled WR completed after @p.snap
 */
struct bench_share {
	struct bench_pair *pair;
	struct bench_poster p;
	bool full;
};

struct bench_scale;

/**
 * struct bench_thread - a posting kthread
 * @sc: the scaling run
 * @index: the thread's number; its shares are @index, + threads, ...
 * @task: the kthread
 * @done: its shares are posted, or it gave up
 * @ret: 0, or why it gave up
 */
struct bench_thread {
	struct bench_scale *sc;
	u32 index;
	struct task_struct *task;
	struct completion done;
	int ret;
};

/**
 * struct bench_scale - a scaling run
 * @root: the command's run
 * @pairs: the pairs
 * @npairs: how many
 * @ninit: how many have their run initialized (set up or not)
 * @shares: max(pairs, threads) shares, share i of pair i % pairs and
 *          thread i % threads
 * @nshares: how many
 * @threads: the posting threads
 * @nthreads: how many
 * @go: starts the threads of a phase
 * @abort: the threads must give up at once (not all could be created)
 */
struct bench_scale {
	struct bench_run *root;
	struct bench_pair *pairs;
	u32 npairs;
	u32 ninit;
	struct bench_share *shares;
	u32 nshares;
	struct bench_thread threads[BENCH_MAX_THREADS];
	u32 nthreads;
	struct completion go;
	bool abort;
};

/* A pair's failure, or its command's (device removal). */
static int bench_scale_err(struct bench_scale *sc, struct bench_run *run)
{
	return READ_ONCE(sc->root->err) ?: READ_ONCE(run->err);
}

/*
 * One post call on a share: 0 when WRs were queued, 1 when its send
 * queue is full, or the failure.
 */
static int bench_scale_step(struct bench_scale *sc, struct bench_share *sh)
{
	struct bench_run *run = &sh->pair->run;
	int ret = bench_bw_step(run, &sh->p);

	if (ret && ret != -EAGAIN)
		return ret;
	return bench_scale_err(sc, run) ?: ret == -EAGAIN;
}

/* Whether a signaled WR of @sh's pair completed since its last post. */
static bool bench_scale_freed(struct bench_share *sh)
{
	return atomic_read(&sh->pair->run.a.txq.completions) != sh->p.snap;
}

/* Post thread @t's shares of the phase, round-robin over its pairs. */
static int bench_scale_drive(struct bench_scale *sc, u32 t)
{
	struct bench_share *sh, *full;
	bool busy, moved;
	u32 i;
	int ret;

	do {
		busy = false;
		moved = false;
		full = NULL;
		for (i = t; i < sc->nshares; i += sc->nthreads) {
			sh = &sc->shares[i];
			if (sh->p.idx == sh->p.phase_len)
				continue;
			busy = true;
			if (!sh->full || bench_scale_freed(sh))
				ret = bench_scale_step(sc, sh);
			else
				ret = bench_scale_err(sc, &sh->pair->run) ?: 1;
			if (ret < 0)
				return ret;
			sh->full = ret;
			if (ret)
				full = full ?: sh;
			else
				moved = true;
		}
		/* Every pair of the thread is full: wait on the first. */
		ret = 0;
		if (!moved && full)
			ret = bench_txq_wait(&full->pair->run,
					     &full->pair->run.a.txq,
					     full->p.snap);
		ret = ret ?: READ_ONCE(sc->root->err);
		if (ret)
			return ret;
		cond_resched();
	} while (busy);
	return 0;
}

static int bench_scale_thread(void *data)
{
	struct bench_thread *t = data;
	struct bench_scale *sc = t->sc;

	wait_for_completion(&sc->go);
	t->ret = READ_ONCE(sc->abort) ? -ECANCELED :
					 bench_scale_drive(sc, t->index);
	complete(&t->done);
	/* Stay for kthread_stop(): the task must not go before it. */
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/* The @t-th online CPU, counting round. */
static unsigned int bench_scale_cpu(u32 t)
{
	unsigned int n = t % num_online_cpus(), cpu;

	for_each_online_cpu(cpu)
		if (!n--)
			return cpu;
	return cpumask_first(cpu_online_mask);
}

/*
 * Run the threads of a phase: create them, start them together at *@t0,
 * wait for each to be done and stop it. Return: the first thread's
 * failure, or 0.
 */
static int bench_scale_threads(struct bench_scale *sc, u64 *t0)
{
	struct task_struct *task;
	u32 t, n;
	int ret = 0;

	init_completion(&sc->go);
	WRITE_ONCE(sc->abort, false);
	for (n = 0; n < sc->nthreads; n++) {
		struct bench_thread *th = &sc->threads[n];

		th->sc = sc;
		th->index = n;
		init_completion(&th->done);
		task = kthread_create_on_cpu(bench_scale_thread, th,
					     bench_scale_cpu(n),
					     "ibpost_bench/%u");
		if (IS_ERR(task)) {
			ret = bench_fail(sc->root, PTR_ERR(task),
					 "kthread_create_on_cpu");
			WRITE_ONCE(sc->abort, true);
			break;
		}
		th->task = task;
		wake_up_process(task);
	}
	*t0 = ktime_get_ns();
	complete_all(&sc->go);
	for (t = 0; t < n; t++) {
		wait_for_completion(&sc->threads[t].done);
		kthread_stop(sc->threads[t].task);
		ret = ret ?: sc->threads[t].ret;
	}
	return ret;
}

/* Post @total WRs over all shares; *@elapsed_ns: start to last completion. */
static int bench_scale_phase(struct bench_scale *sc, u32 total,
			     u64 *elapsed_ns)
{
	u32 quota = max(total / sc->nshares, 1U), i;
	u64 t0, t_last = 0;
	int ret;

	for (i = 0; i < sc->npairs; i++) {
		struct bench_pair *pr = &sc->pairs[i];

		pr->start = atomic_read(&pr->run.a.txq.completions);
		pr->need = 0;
	}
	for (i = 0; i < sc->nshares; i++) {
		struct bench_share *sh = &sc->shares[i];

		bench_bw_start(&sh->p, quota);
		sh->full = false;
		sh->pair->need += DIV_ROUND_UP(quota, sh->pair->run.signal);
	}
	ret = bench_scale_threads(sc, &t0);
	for (i = 0; i < sc->npairs && !ret; i++) {
		struct bench_run *run = &sc->pairs[i].run;

		ret = READ_ONCE(sc->root->err) ?:
		      bench_txq_wait_count(run, &run->a.txq,
					   sc->pairs[i].start,
					   sc->pairs[i].need);
		t_last = max(t_last, READ_ONCE(run->a.txq.t_last));
	}
	*elapsed_ns = t_last > t0 ? t_last - t0 : 1;
	return ret;
}

/* Set the pairs up, one after the other, and deal the shares out. */
static int bench_scale_setup(struct bench_scale *sc)
{
	struct bench_run *root = sc->root;
	struct bench_pair *pr;
	u32 i;
	int ret;

	for (i = 0; i < sc->npairs; i++) {
		pr = &sc->pairs[i];
		bench_run_init(&pr->run, root->cfg, root);
		sc->ninit++;
		ret = pr->run.ops->setup(&pr->run);
		if (ret)
			return ret;
		pr->set_up = true;
	}
	for (i = 0; i < sc->nshares; i++) {
		sc->shares[i].pair = &sc->pairs[i % sc->npairs];
		sc->shares[i].pair->sharers++;
	}
	for (i = 0; i < sc->npairs; i++) {
		struct bench_run *run = &sc->pairs[i].run;
		u32 sharers = sc->pairs[i].sharers;

		run->shared = sharers > 1;
		/* A full queue holds a signaled WR of one of its posters. */
		run->signal = clamp(run->signal, 1U,
				    max(run->a.txq.depth / sharers, 1U));
	}
	for (i = 0; i < sc->nshares; i++) {
		ret = bench_poster_init(&sc->shares[i].pair->run,
					&sc->shares[i].p);
		if (ret)
			return ret;
	}
	return 0;
}

static void bench_scale_teardown_one(struct work_struct *work)
{
	struct bench_pair *pr = container_of(work, struct bench_pair,
					     teardown);

	pr->ret = bench_pair_teardown(&pr->run);
}

/* Tear down the pairs set up, in parallel. Return: the first failure. */
static int bench_scale_teardown(struct bench_scale *sc)
{
	int ret = 0;
	u32 i;

	for (i = 0; i < sc->npairs && sc->pairs[i].set_up; i++) {
		INIT_WORK(&sc->pairs[i].teardown, bench_scale_teardown_one);
		queue_work(system_unbound_wq, &sc->pairs[i].teardown);
	}
	for (i = 0; i < sc->npairs && sc->pairs[i].set_up; i++) {
		flush_work(&sc->pairs[i].teardown);
		ret = ret ?: sc->pairs[i].ret;
	}
	return ret;
}

/* Warm up, measure, and fill @res. */
static int bench_scale_measure(struct bench_scale *sc,
			       struct bench_result *res)
{
	const struct bench_cfg *cfg = sc->root->cfg;
	struct bench_run *first = &sc->pairs[0].run;
	u64 elapsed, post_ns = 0;
	u32 i;
	int ret;

	if (cfg->warmup) {
		ret = bench_scale_phase(sc, cfg->warmup, &elapsed);
		if (ret)
			return ret;
	}
	ret = bench_scale_phase(sc, cfg->iters, &elapsed);
	if (ret)
		return ret;
	for (i = 0; i < sc->nshares; i++)
		post_ns += sc->shares[i].p.post_ns;
	res->chain = first->chain;
	res->signal = first->signal;
	bench_bw_figures(res, cfg->size,
			 (u64)max(cfg->iters / sc->nshares, 1U) * sc->nshares,
			 elapsed, post_ns);
	return 0;
}

/**
 * bench_scale - set up cfg->pairs pairs, measure their aggregate bandwidth
 * @run: the command's run (its own pair stays unused)
 * @res: filled with the figures of all pairs together
 *
 * Context: Process context; sleeps.
 * Return: 0, or the run's failure (a pair's, taken as the command's).
 */
int bench_scale(struct bench_run *run, struct bench_result *res)
{
	const struct bench_cfg *cfg = run->cfg;
	struct bench_scale *sc;
	int ret, ret2;
	u32 i;

	sc = kzalloc(sizeof(*sc), GFP_KERNEL);
	if (!sc)
		return bench_fail(run, -ENOMEM, "allocating the scaling run");
	sc->root = run;
	sc->npairs = cfg->pairs;
	sc->nthreads = cfg->threads;
	sc->nshares = max(cfg->pairs, cfg->threads);
	sc->pairs = kvcalloc(sc->npairs, sizeof(*sc->pairs), GFP_KERNEL);
	sc->shares = kcalloc(sc->nshares, sizeof(*sc->shares), GFP_KERNEL);
	if (!sc->pairs || !sc->shares) {
		ret = bench_fail(run, -ENOMEM, "allocating the pairs");
		goto out_free;
	}
	ret = bench_scale_setup(sc);
	if (!ret)
		ret = bench_scale_measure(sc, res);
	ret2 = bench_scale_teardown(sc);
	/* The first pair's failure tells what happened. */
	for (i = 0; i < sc->ninit; i++)
		bench_fail_from(run, &sc->pairs[i].run);
	ret = ret ?: ret2;
	for (i = 0; i < sc->nshares; i++)
		kfree(sc->shares[i].p.wrs);
out_free:
	kfree(sc->shares);
	kvfree(sc->pairs);
	kfree(sc);
	return ret;
}
