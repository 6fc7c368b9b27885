// SPDX-License-Identifier: GPL-2.0
/*
 * The shared KUnit helpers (helpers.c) for ibpost_xhost_kunit: Kbuild
 * builds an object into one module only (6.12's W=1 warns about an
 * object "added to multiple modules"), so this module compiles the same
 * source as an object of its own.
 */
#include "helpers.c"
