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

/* qp.c */
void ibpost_qp_teardown(struct ibpost_qp *qp, bool removal);
bool ibpost_qp_teardown_start(struct ibpost_qp *qp);
extern atomic_long_t ibpost_cq_grace_periods;

/* removal.c */
void ibpost_dev_teardown_qps(struct ibpost_dev *dev);

/* cm.c */
void ibpost_cm_attach(struct ibpost_qp *qp);
void ibpost_cm_destroy_qp(struct ibpost_qp *qp);
int ibpost_cm_create_qp(struct ibpost_qp *qp, struct ib_qp_init_attr *init);

/* drain.c */
int ibpost_drain_init(struct ibpost_qp *qp);
void ibpost_drain_cleanup(struct ibpost_qp *qp);
bool ibpost_drain(struct ibpost_qp *qp);
unsigned int ibpost_drain_timeout_ms(void);

#endif /* _IBPOST_QP_H */
