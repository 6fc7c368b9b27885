/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test hooks: the points where ibpost asks the KUnit suites' hook, in
 * every build; the hook itself exists in test builds only (hook.c).
 * Includes nothing of ibpost's.
 */
#ifndef _IBPOST_HOOK_H
#define _IBPOST_HOOK_H

#include <linux/compiler.h>
#include <linux/irqflags.h>
#include <linux/types.h>

/*
 * Test hooks: points where the KUnit suites widen a race window or
 * simulate a provider's refusal. Compiled only into test builds (a kernel
 * with CONFIG_KUNIT); elsewhere they cost nothing.
 */
enum ibpost_hook {
	IBPOST_HOOK_REG_CHECKED,	/* a registration passed its checks */
	IBPOST_HOOK_REG_POSTED,		/* its REG_MR completed (or not) */
	IBPOST_HOOK_DEREG_REVOKED,	/* dereg revoked the MR, before LOCAL_INV */
	IBPOST_HOOK_DEREG_BUSY,		/* dereg found users, MR lock held */
	IBPOST_HOOK_POST_UNLOCKED,	/* a post dropped the queue lock */
	IBPOST_HOOK_SUBMIT,		/* return k+1: refuse the post's WR k on */
	IBPOST_HOOK_STATE_FROM,		/* a state move, sq.lock held */
	IBPOST_HOOK_GID,		/* non-zero: this GID entry is unusable */
	IBPOST_HOOK_QP_STAGE,		/* non-zero: refuse this set-up stage */
	IBPOST_HOOK_DESTROY_REFUSED,	/* non-zero: counted, no WARN_ONCE */
	IBPOST_HOOK_REMOVAL_CQS,	/* a removal's QPs torn down, CQs left */
	IBPOST_HOOK_FRWR_REVOKE,	/* a key's revocation begins (may sleep) */
	IBPOST_HOOK_RW_REPLACE,		/* non-zero: no rdma_rw MR replacement */
	IBPOST_HOOK_FRWR_REG,		/* non-zero: a REG_MR with another MR's index */
	IBPOST_HOOK_NR,
};

/* The QP set-up stages IBPOST_HOOK_QP_STAGE may refuse (its obj). */
enum ibpost_qp_stage {
	IBPOST_QP_STAGE_RINGS = 1,	/* the slot rings */
	IBPOST_QP_STAGE_SINKS,		/* iWARP rdma_cm QPs: READ sinks */
	IBPOST_QP_STAGE_DRAIN,		/* the drain's resources */
	IBPOST_QP_STAGE_UD_RTS,		/* a UD QP's move to RTS */
};

typedef int (*ibpost_hook_fn)(enum ibpost_hook point, void *obj, void *data);

int ibpost_test_set_hook(ibpost_hook_fn fn, void *data);

/* Asking the hook at a point: hook.c in test builds, nothing elsewhere. */
#ifdef IBPOST_TEST_HOOKS
int __ibpost_hook(enum ibpost_hook point, void *obj);
extern ibpost_hook_fn ibpost_hook_cur;
static inline int ibpost_hook(enum ibpost_hook point, void *obj)
{
	if (unlikely(READ_ONCE(ibpost_hook_cur)))
		return __ibpost_hook(point, obj);
	return 0;
}

/* Whether a suite has a hook set: a post then asks at every point. */
static inline bool ibpost_hooks_set(void)
{
	return READ_ONCE(ibpost_hook_cur);
}

/* A point whose hook may sleep: not asked where the caller cannot. */
static inline void ibpost_hook_sleepable(enum ibpost_hook point, void *obj)
{
	if (!irqs_disabled())
		ibpost_hook(point, obj);
}
#else
static inline int ibpost_hook(enum ibpost_hook point, void *obj)
{
	return 0;
}

static inline void ibpost_hook_sleepable(enum ibpost_hook point, void *obj)
{
}

static inline bool ibpost_hooks_set(void)
{
	return false;
}
#endif

#endif /* _IBPOST_HOOK_H */
