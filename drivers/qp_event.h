/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A QP's asynchronous events (qp_event.c), below qp.c, which gives every
 * QP the handler and stops the events at destroy.
 */
#ifndef _IBPOST_QP_EVENT_H
#define _IBPOST_QP_EVENT_H

#include "qp_core.h"

void ibpost_qp_event(struct ib_event *event, void *context);
void ibpost_qp_event_work(struct work_struct *work);
void ibpost_qp_events_stop(struct ibpost_qp *qp);

#endif /* _IBPOST_QP_EVENT_H */
