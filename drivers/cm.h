/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rdma_cm glue of a QP made on an rdma_cm_id (cm.c), for qp.c.
 */
#ifndef _IBPOST_CM_H
#define _IBPOST_CM_H

#include "qp_core.h"

void ibpost_cm_attach(struct ibpost_qp *qp);
void ibpost_cm_destroy_qp(struct ibpost_qp *qp);
int ibpost_cm_create_qp(struct ibpost_qp *qp, struct ib_qp_init_attr *init);
void ibpost_cm_notify(struct ibpost_qp *qp, enum ib_event_type event);

#endif /* _IBPOST_CM_H */
