/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory registration (mr.c), above the post path: what the module's
 * other files call of it. The table the post path searches is
 * mr_table.h's.
 */
#ifndef _IBPOST_MR_H
#define _IBPOST_MR_H

struct ibpost_dev;

void ibpost_dev_release_mrs(struct ibpost_dev *dev);

#endif /* _IBPOST_MR_H */
