// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_stress: concurrent posters on one QP.
 *
 * Four kernel threads post to one RC QP (RDMA WRITEs and SENDs, signaled
 * and not, chains of 1-16 WRs, retrying from *bad_wr on -ENOMEM) while a
 * fifth keeps the peer's receive queue full; IBPOST_KUNIT_ARGS="stress_wrs=<n>"
 * WRs in all (default 40000). Every signaled context must come back exactly once,
 * with success; the provider must never refuse a post (no SQ overflow);
 * the slot count must return to zero; lockdep must stay silent.
 *
 * Three runs pin the posters to different CPUs (poster i on the i-th
 * online CPU modulo their number, the receiver on the last), so that
 * posts, completions and the receiver really run at once; the fourth pins
 * every thread to CPU 0, where the fully preemptible test kernel switches
 * between them wherever a post call allows it: never under its queue
 * lock, which a post holds with interrupts off, but as the lock is
 * dropped, before the call returns.
 *
 * That the posters contended is counted, not assumed: the spread runs
 * together must have had a post call begin while another poster was
 * inside one on another CPU; the one-CPU run must have switched between posters
 * (a post by another thread than the one before) again and again. A
 * preemption inside a post call is possible there but not certain (on
 * siw the posters never were seen inside one at once).
 */
#include <linux/module.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

#define POSTERS		4
#define SEND_EVERY	8
#define CTX_SHIFT	24

struct stress {
	struct ibpost_test_pair *p;
	spinlock_t lock;		/* the callbacks run in softirq */
	unsigned long *seen[POSTERS];
	u32 per_thread, sends;
	atomic_t expected, returned, dups, bad_status, recv_returned;
	atomic_t post_errors, enomem;
	atomic_t started, go;
	/* Posters inside ibpost_post_send_list() now, in all and by CPU. */
	atomic_t in_post, *in_post_on;
	atomic_t max_in_post, overlaps, cross_cpu;
	atomic_t last_poster, switches;
	bool prepost;		/* iWARP: every receive before any SEND */
};

struct poster {
	struct stress *s;
	int id;
	unsigned int cpu;	/* where it runs, bound */
	struct task_struct *task;
	int ret;
};

static void stress_send_done(struct ibpost_qp *qp, void *context,
			     const struct ib_wc *wc)
{
	struct stress *s = ibpost_qp_priv(qp);
	unsigned long c = (unsigned long)context;
	unsigned int t = c >> CTX_SHIFT, i = c & ((1 << CTX_SHIFT) - 1);

	if (wc->status != IB_WC_SUCCESS)
		atomic_inc(&s->bad_status);
	if (t >= POSTERS || i >= s->per_thread ||
	    test_and_set_bit(i, s->seen[t]))
		atomic_inc(&s->dups);
	atomic_inc(&s->returned);
}

static void stress_recv_done(struct ibpost_qp *qp, void *context,
			     const struct ib_wc *wc)
{
	struct stress *s = ibpost_qp_priv(qp);

	if (wc->status != IB_WC_SUCCESS)
		atomic_inc(&s->bad_status);
	atomic_inc(&s->recv_returned);
}

/**
 * stress_enter - a poster is about to call ibpost_post_send_list()
 * @pt: the poster
 *
 * Counts it in, records the most posters ever inside at once, and counts
 * an overlap when another poster is inside, and a cross-CPU one when a
 * poster running on another CPU is. The fully ordered atomics make at
 * least one of two posters entering at once see the other.
 */
static void stress_enter(struct poster *pt)
{
	struct stress *s = pt->s;
	int n = atomic_inc_return(&s->in_post);
	int max = atomic_read(&s->max_in_post);
	unsigned int cpu;

	while (n > max && !atomic_try_cmpxchg(&s->max_in_post, &max, n))
		;
	if (atomic_xchg(&s->last_poster, pt->id + 1) != pt->id + 1)
		atomic_inc(&s->switches);
	if (n > 1)
		atomic_inc(&s->overlaps);
	atomic_inc(&s->in_post_on[pt->cpu]);
	/* Ours counted before theirs are read, as each other poster does. */
	smp_mb__after_atomic();
	for_each_online_cpu(cpu) {
		if (cpu != pt->cpu && atomic_read(&s->in_post_on[cpu])) {
			atomic_inc(&s->cross_cpu);
			break;
		}
	}
}

/**
 * stress_leave - a poster's ibpost_post_send_list() returned
 * @pt: the poster
 */
static void stress_leave(struct poster *pt)
{
	atomic_dec(&pt->s->in_post_on[pt->cpu]);
	atomic_dec(&pt->s->in_post);
}

static int stress_poster(void *arg)
{
	struct poster *pt = arg;
	struct stress *s = pt->s;
	struct ibpost_test_pair *p = s->p;
	struct ib_rdma_wr wr[16];
	const struct ib_send_wr *bad;
	struct rnd_state rnd;
	struct ib_sge sge;
	u32 i = 0, n, k, spins;
	int ret;

	prandom_seed_state(&rnd, 0x5eed + pt->id);
	/* Bound before this function ran: the CPU it counts in never changes. */
	pt->cpu = raw_smp_processor_id();
	ibpost_mr_sge(p->abuf.mr, (u8 *)p->abuf.buf + 64 * pt->id, 64, &sge);
	atomic_inc(&s->started);
	while (!atomic_read(&s->go))
		usleep_range(100, 200);
	while (i < s->per_thread) {
		n = min_t(u32, 1 + prandom_u32_state(&rnd) % 16,
			  s->per_thread - i);
		for (k = 0; k < n; k++, i++) {
			bool send = i % SEND_EVERY == 0;
			bool sig = send || prandom_u32_state(&rnd) & 1;

			memset(&wr[k], 0, sizeof(wr[k]));
			wr[k].wr.wr_id = ((u64)pt->id << CTX_SHIFT) | i;
			wr[k].wr.opcode = send ? IB_WR_SEND : IB_WR_RDMA_WRITE;
			wr[k].wr.send_flags = sig ? IB_SEND_SIGNALED : 0;
			wr[k].wr.sg_list = &sge;
			wr[k].wr.num_sge = 1;
			wr[k].wr.next = k + 1 < n ? &wr[k + 1].wr : NULL;
			wr[k].remote_addr = ibpost_mr_remote_addr(p->bw.mr) +
					    64 * pt->id;
			wr[k].rkey = ibpost_mr_rkey(p->bw.mr);
			if (sig)
				atomic_inc(&s->expected);
		}
		bad = &wr[0].wr;
		for (spins = 0;; spins++) {
			stress_enter(pt);
			ret = ibpost_post_send_list(p->a, bad, &bad);
			stress_leave(pt);
			if (ret != -ENOMEM)
				break;
			atomic_inc(&s->enomem);
			/*
			 * A full queue: retry at once a few times, then sleep.
			 * Where the provider is slow (siw) the posters spend
			 * most of a run waiting for slots; retrying together
			 * as a slot frees is when posts overlap.
			 */
			if (spins % 8 < 7)
				cpu_relax();
			else
				usleep_range(20, 50);
		}
		if (ret) {
			atomic_inc(&s->post_errors);
			pt->ret = ret;
			break;
		}
		/*
		 * A process-context loop that posts without end must yield: on
		 * a kernel without preemption nothing else (the RCU kthread,
		 * the CQ's work) would run, whatever the post path does.
		 */
		cond_resched();
	}
	return 0;
}

static int stress_receiver(void *arg)
{
	struct poster *pt = arg;
	struct stress *s = pt->s;
	struct ibpost_test_pair *p = s->p;
	u32 posted = 0;
	int ret;

	/*
	 * iWARP has no RNR: a SEND that finds no receive ends the
	 * connection. There every receive is posted before the posters
	 * start (they wait for this thread), instead of alongside them.
	 */
	if (!s->prepost) {
		atomic_inc(&s->started);
		while (!atomic_read(&s->go))
			usleep_range(100, 200);
	}
	while (posted < s->sends) {
		ret = ibpost_post_recv(p->b, NULL, p->bbuf.buf, 64, p->bbuf.mr);
		if (ret == -ENOMEM) {
			usleep_range(20, 50);
			continue;
		}
		if (ret) {
			atomic_inc(&s->post_errors);
			pt->ret = ret;
			break;
		}
		posted++;
		cond_resched();
	}
	if (s->prepost)
		atomic_inc(&s->started);
	return 0;
}

/*
 * The WRs are split over four runs (a fresh QP pair each): under TCG with
 * KASAN and lockdep the guest posts about 400 WRs/s, and one KUnit case
 * must end well within kunit's 300 s timeout and the hung-task limit.
 */
struct stress_run {
	int run;
	bool one_cpu;
};

static const struct stress_run stress_runs[] = {
	{ 1, false }, { 2, false }, { 3, false }, { 4, true },
};

/* Cross-CPU overlaps of the spread runs so far (they run in order). */
static atomic_t stress_cross_cpu_runs;

static void stress_run_desc(const struct stress_run *r, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "run_%d_of_4_%s", r->run,
		 r->one_cpu ? "all_on_cpu0" : "spread_over_cpus");
}

KUNIT_ARRAY_PARAM(stress_run, stress_runs, stress_run_desc);

/* The CPU thread @i of the run is bound to. */
static unsigned int stress_cpu(const struct stress_run *r, int i)
{
	unsigned int n = num_online_cpus();

	if (r->one_cpu)
		return cpumask_first(cpu_online_mask);
	return cpumask_nth(i == POSTERS ? n - 1 : i % n, cpu_online_mask);
}

static void ibpost_stress_concurrent_posters(struct kunit *test)
{
	const struct stress_run *r = test->param_value;
	struct poster pt[POSTERS + 1] = {};
	struct ibpost_test_queue tq;
	struct ibpost_qp_attr attr;
	struct ibpost_comp comp;
	unsigned long t0;
	struct stress *s;
	int i, tries, ret;

	/*
	 * A spread run needs a second CPU, before anything is set up. The
	 * test guest has two: there one missing is a failure, not a skip.
	 */
	if (!r->one_cpu && num_online_cpus() < 2) {
		KUNIT_ASSERT_EQ_MSG(test, 1U, num_possible_cpus(),
				    "%u CPUs possible but 1 online: run %d cannot spread its threads",
				    num_possible_cpus(), r->run);
		ibpost_test_skip(test,
				 "a one-CPU machine: run %d spreads its threads over CPUs",
				 r->run);
	}
	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	spin_lock_init(&s->lock);
	s->per_thread = ibpost_test_knob("stress_wrs", 40000) /
			ARRAY_SIZE(stress_runs) / POSTERS;
	s->sends = POSTERS * DIV_ROUND_UP(s->per_thread, SEND_EVERY);
	for (i = 0; i < POSTERS; i++) {
		s->seen[i] = kunit_kcalloc(test, BITS_TO_LONGS(s->per_thread),
					   sizeof(long), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, s->seen[i]);
	}
	s->in_post_on = kunit_kcalloc(test, nr_cpu_ids, sizeof(atomic_t),
				      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s->in_post_on);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.max_send_wr = 256;
	attr.max_recv_wr = 1024;
	s->prepost = ibpost_test_iwarp(ibpost_test_dev(test));
	if (s->prepost)
		attr.max_recv_wr = s->sends;
	attr.send_done = stress_send_done;
	attr.recv_done = stress_recv_done;
	attr.priv = s;
	s->p = ibpost_test_pair(test, &attr);

	/* Every thread exists before any runs: none is left behind. */
	for (i = 0; i <= POSTERS; i++) {
		pt[i].s = s;
		pt[i].id = i;
		pt[i].task = kthread_create(i < POSTERS ? stress_poster :
					    stress_receiver, &pt[i],
					    "ibpost_stress/%d", i);
		if (IS_ERR(pt[i].task))
			break;
		get_task_struct(pt[i].task);
		kthread_bind(pt[i].task, stress_cpu(r, i));
	}
	if (i <= POSTERS) {
		ret = PTR_ERR(pt[i].task);
		while (i--) {	/* never woken: their functions never run */
			kthread_stop(pt[i].task);
			put_task_struct(pt[i].task);
		}
		KUNIT_FAIL_AND_ABORT(test, "kthread_create: %d", ret);
	}
	for (i = 0; i <= POSTERS; i++)
		wake_up_process(pt[i].task);
	for (tries = 0; tries < 500 &&
	     atomic_read(&s->started) <= POSTERS; tries++)
		msleep(20);
	KUNIT_EXPECT_EQ(test, POSTERS + 1, atomic_read(&s->started));
	t0 = jiffies;
	atomic_set(&s->go, 1);
	for (i = 0; i <= POSTERS; i++) {
		KUNIT_EXPECT_EQ_MSG(test, 0, kthread_stop(pt[i].task),
				    "thread %d", i);
		put_task_struct(pt[i].task);
		KUNIT_EXPECT_EQ_MSG(test, 0, pt[i].ret, "thread %d", i);
	}
	for (tries = 0; tries < 600 &&
	     (atomic_read(&s->returned) < atomic_read(&s->expected) ||
	      atomic_read(&s->recv_returned) < s->sends); tries++)
		msleep(100);

	KUNIT_EXPECT_EQ(test, 0, atomic_read(&s->post_errors));
	KUNIT_EXPECT_EQ(test, atomic_read(&s->expected),
			atomic_read(&s->returned));
	KUNIT_EXPECT_EQ(test, (int)s->sends, atomic_read(&s->recv_returned));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&s->dups));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&s->bad_status));
	/*
	 * The posters did contend: spread, inside post calls on two CPUs at
	 * once; on one CPU, taking turns (each thread posts for a time
	 * slice at most: with 4 threads, many more turns than threads).
	 */
	if (r->one_cpu) {
		KUNIT_EXPECT_GE_MSG(test, atomic_read(&s->switches),
				    4 * POSTERS,
				    "the posters on one CPU did not take turns");
	} else {
		/*
		 * Summed over the spread runs (on siw a run may see as few
		 * as 3), required by the last of them.
		 */
		if (r->run == 1)
			atomic_set(&stress_cross_cpu_runs, 0);
		atomic_add(atomic_read(&s->cross_cpu), &stress_cross_cpu_runs);
		if (r->run == 3)
			KUNIT_EXPECT_GT_MSG(test,
					    atomic_read(&stress_cross_cpu_runs), 0,
					    "posters never were inside a post call on two CPUs at once");
	}
	ibpost_test_queue_get(s->p->a, true, &tq);
	KUNIT_EXPECT_EQ(test, 0U, tq.provider_errors);
	ibpost_test_queue_get(s->p->b, false, &tq);
	KUNIT_EXPECT_EQ(test, 0U, tq.provider_errors);

	/* One more signaled WR reclaims the trailing unsignaled slots. */
	atomic_inc(&s->expected);
	ret = ibpost_post_write(s->p->a, NULL, s->p->abuf.buf, 8,
				s->p->abuf.mr, IB_SEND_SIGNALED,
				ibpost_mr_remote_addr(s->p->bw.mr),
				ibpost_mr_rkey(s->p->bw.mr));
	KUNIT_ASSERT_EQ(test, 0, ret);
	for (tries = 0; tries < 100 &&
	     atomic_read(&s->returned) < atomic_read(&s->expected); tries++)
		msleep(20);
	KUNIT_EXPECT_EQ(test, 0U, ibpost_test_in_use(s->p->a, true));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_get_send_comp(s->p->a, &comp, 0));
	kunit_info(test, "%u WRs from %d threads on %u CPUs + %u receives in %u ms: %d contexts back, 0 lost, -ENOMEM retries %d",
		   POSTERS * s->per_thread, POSTERS,
		   r->one_cpu ? 1 : min_t(unsigned int, num_online_cpus(),
					  POSTERS), s->sends,
		   jiffies_to_msecs(jiffies - t0), atomic_read(&s->returned),
		   atomic_read(&s->enomem));
	kunit_info(test, "post calls begun inside another's: %d (%d across CPUs), at most %d at once, %d turns",
		   atomic_read(&s->overlaps), atomic_read(&s->cross_cpu),
		   atomic_read(&s->max_in_post), atomic_read(&s->switches));
	pr_info("ibpost_stress: %u WRs posted concurrently, %d contexts back, lost %d\n",
		POSTERS * s->per_thread + s->sends,
		atomic_read(&s->returned) + atomic_read(&s->recv_returned),
		atomic_read(&s->expected) - atomic_read(&s->returned));
}

static struct kunit_case ibpost_stress_cases[] = {
	KUNIT_CASE_PARAM(ibpost_stress_concurrent_posters,
			 stress_run_gen_params),
	{}
};

static struct kunit_suite ibpost_stress_suite = {
	.name = "ibpost_stress",
	.test_cases = ibpost_stress_cases,
};

kunit_test_suites(&ibpost_stress_suite);
