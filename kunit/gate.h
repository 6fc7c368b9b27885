/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A gate on one of ibpost's test hooks: the first thread to reach the
 * hook point stops there until the test opens the gate, which widens a
 * race window to the width of the test's choosing. At IBPOST_HOOK_SUBMIT
 * (called under a queue lock) it never waits: it makes "the provider"
 * refuse the first chain from WR @refuse - 1 on.
 */
#ifndef _IBPOST_GATE_H
#define _IBPOST_GATE_H

#include <linux/completion.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_test_access.h"

struct ibpost_gate {
	enum ibpost_hook point;
	int refuse;
	atomic_t hits;
	struct completion arrived;
	struct completion release;
	/* Run at the point instead of waiting, when set (process context). */
	void (*at)(struct ibpost_gate *g);
};

static inline int ibpost_gate_fn(enum ibpost_hook point, void *obj,
				 void *data)
{
	struct ibpost_gate *g = data;

	if (point != g->point || atomic_inc_return(&g->hits) != 1)
		return 0;
	if (point == IBPOST_HOOK_SUBMIT)
		return g->refuse;
	complete(&g->arrived);
	if (g->at)
		g->at(g);
	else
		wait_for_completion_timeout(&g->release, 120 * HZ);
	return 0;
}

static inline void ibpost_gate_close(void *data)
{
	struct ibpost_gate *g = data;

	complete_all(&g->release);
	ibpost_test_set_hook(NULL, NULL);
}

/* Install a gate at @point, opened and removed at test exit. */
static inline struct ibpost_gate *ibpost_gate(struct kunit *test,
					      enum ibpost_hook point)
{
	struct ibpost_gate *g = kunit_kzalloc(test, sizeof(*g), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, g);
	g->point = point;
	atomic_set(&g->hits, 0);
	init_completion(&g->arrived);
	init_completion(&g->release);
	KUNIT_ASSERT_EQ(test, 0, ibpost_test_set_hook(ibpost_gate_fn, g));
	ibpost_test_defer(test, ibpost_gate_close, g);
	return g;
}

#endif /* _IBPOST_GATE_H */
