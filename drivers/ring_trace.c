// SPDX-License-Identifier: GPL-2.0
/*
 * The ring's tracepoints' definitions; the events are declared in
 * ring_trace.h. Apart from trace.c: a file defines the events of one
 * trace header (each defines its system's name).
 */
#define CREATE_TRACE_POINTS
#include "ring_trace.h"
