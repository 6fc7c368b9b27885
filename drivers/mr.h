/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory registration (mr.c), above the post path: what the module's
 * other files call of it. The table the post path searches is
 * mr_table.h's.
 */
#ifndef _IBPOST_MR_H
#define _IBPOST_MR_H

struct ibpost_dev;
struct ibpost_mr;

void ibpost_dev_release_mrs(struct ibpost_dev *dev);

/* mr.c: the steps of a registration, for mr_pages.c */
struct ibpost_mr *ibpost_mr_new(struct ibpost_dev *dev, int access);
int ibpost_mr_add(struct ibpost_mr *mr, const char *caller);
void ibpost_mr_unrevoke(struct ibpost_mr *mr);

/* mr_pages.c */
int ibpost_mr_sgt_segs(struct ibpost_mr *mr);

#endif /* _IBPOST_MR_H */
