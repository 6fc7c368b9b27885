/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QP layer above the QP object (qp_core.h) and its clients: a QP's
 * creation, teardown and state changes (qp.c), which call down to its
 * connection management (cm.c), its drain (drain.c), its completions and
 * the MR table; and device removal's teardown of a device's QPs
 * (removal.c), above them.
 */
#ifndef _IBPOST_QP_H
#define _IBPOST_QP_H

#include "qp_core.h"
#include "cm.h"
#include "drain.h"
#include "qp_event.h"

/* qp.c */
void ibpost_qp_teardown(struct ibpost_qp *qp, bool removal);
bool ibpost_qp_teardown_start(struct ibpost_qp *qp);
extern atomic_long_t ibpost_cq_grace_periods;

/* removal.c */
void ibpost_dev_teardown_qps(struct ibpost_dev *dev);

#endif /* _IBPOST_QP_H */
