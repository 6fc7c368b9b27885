// SPDX-License-Identifier: GPL-2.0
/*
 * The tracepoints' definitions; the events are declared in
 * ibpost_trace.h.
 */
#define CREATE_TRACE_POINTS
#include "ibpost_trace.h"
