// SPDX-License-Identifier: GPL-2.0
/*
 * Connected pairs (cm_connect.c) for ibpost_holder: Kbuild builds an object
 * into one module only (6.12's W=1 warns about an object "added to
 * multiple modules"), so this module compiles the same source as an
 * object of its own.
 */
#include "cm_connect.c"
