/*
 * What the collector records about the machine and the run besides what
 * uname gives: the capture's META keys cpu_model, mem_total_kb,
 * glibc_version, cwd and git_commit (doc/format.md).
 */
#ifndef PT_RUNINFO_H
#define PT_RUNINFO_H

#include <limits.h>
#include <stddef.h>

struct pt_runinfo {
	char cpu_model[128];    /* /proc/cpuinfo's first "model name" */
	char mem_total_kb[24];
	char glibc_version[32];
	char cwd[PATH_MAX];
	char git_commit[48];    /* HEAD of the repository holding cwd */
};

/* Fill *ri; a field that cannot be found is left empty (""). */
void pt_runinfo_get(struct pt_runinfo *ri);

#endif
