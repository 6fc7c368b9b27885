/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibpost internals shared by the module's files; not part of the API.
 *
 * They live in per-layer headers, bottom to top; each includes only
 * those below it:
 *
 *   ibpost_base.h  the locking rules, ibpost_wq, enum ibpost_rule, the
 *                  test hooks and fault injection
 *   ring.h         struct ibpost_queue and its ring of slots, the
 *                  stats, slot bookkeeping and completions (ring.c);
 *                  polling and waiting for completions (comp.c)
 *   dev.h          struct ibpost_dev (dev.c)
 *   mr_table.h     struct ibpost_mr, MR lookup and use counting
 *                  (mr_table.c)
 *   sink.h         iWARP READ sinks (sink.c)
 *   qp_core.h      struct ibpost_qp, its state checks and moves, its
 *                  last reference (qp_core.c); debugfs.c
 *   post.h         the post path (post.c)
 *   mr.h           memory registration (mr.c), above the post path
 *   qp.h           QP creation and teardown (qp.c) over connection
 *                  management (cm.c) and drain (drain.c); device
 *                  removal's teardown (removal.c)
 *
 * The module's files include this header, which includes them all.
 */
#ifndef _IBPOST_INTERNAL_H
#define _IBPOST_INTERNAL_H

#include "ibpost_base.h"
#include "ibpost_test_access.h"
#include "ring.h"
#include "dev.h"
#include "mr_table.h"
#include "sink.h"
#include "qp_core.h"
#include "post.h"
#include "mr.h"
#include "qp.h"

#endif /* _IBPOST_INTERNAL_H */
