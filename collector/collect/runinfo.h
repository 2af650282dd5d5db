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

/*
 * The commit that HEAD names in the git repository holding dir (a work
 * tree, a linked worktree or a submodule, whose .git is a file), read
 * from the repository's files: no git program runs.  Returns 0 and the
 * 40 (or 64) hex digits in out, or -1 if there is no repository or HEAD
 * names nothing yet.
 */
int pt_runinfo_git_commit(const char *dir, char *out, size_t size);

#endif
