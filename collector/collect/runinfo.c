/* Machine and run facts for the capture's META; see runinfo.h. */
#include "collect/runinfo.h"

#include <ctype.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/strbuf.h"

/* The first line of path, without its newline, into out; 0 or -1. */
static int read_line(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fgets(out, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	out[strcspn(out, "\r\n")] = '\0';
	return 0;
}

static int is_hash(const char *s)
{
	size_t n = 0;

	while (isxdigit((unsigned char)s[n]))
		n++;
	return (n == 40 || n == 64) && s[n] == '\0';
}

/* The directory that a .git file ("gitdir: PATH") or directory names. */
static char *git_dir_of(const char *top)
{
	struct pt_sb sb = PT_SB_INIT;
	char line[PATH_MAX + 16];
	struct stat st;

	pt_sb_addf(&sb, "%s/.git", top);
	if (stat(sb.buf, &st) < 0)
		goto none;
	if (S_ISDIR(st.st_mode))
		return pt_sb_detach(&sb, NULL);
	if (read_line(sb.buf, line, sizeof line) < 0 ||
	    strncmp(line, "gitdir: ", 8))
		goto none;
	pt_sb_reset(&sb);
	if (line[8] != '/')
		pt_sb_addf(&sb, "%s/", top);
	pt_sb_addstr(&sb, line + 8);
	return pt_sb_detach(&sb, NULL);
none:
	pt_sb_release(&sb);
	return NULL;
}

/* REF (refs/heads/x) as a loose ref file or a line of packed-refs. */
static int resolve_ref(const char *common, const char *ref, char *out,
		       size_t size)
{
	struct pt_sb sb = PT_SB_INIT;
	char line[PATH_MAX + 80];
	FILE *f;
	int rc = -1;

	pt_sb_addf(&sb, "%s/%s", common, ref);
	if (read_line(sb.buf, out, size) == 0 && is_hash(out)) {
		pt_sb_release(&sb);
		return 0;
	}
	pt_sb_reset(&sb);
	pt_sb_addf(&sb, "%s/packed-refs", common);
	f = fopen(sb.buf, "re");
	pt_sb_release(&sb);
	while (f && fgets(line, sizeof line, f)) {
		char *sp = strchr(line, ' ');

		line[strcspn(line, "\r\n")] = '\0';
		if (!sp || strcmp(sp + 1, ref))
			continue;
		*sp = '\0';
		if (is_hash(line) && strlen(line) < size) {
			strcpy(out, line);
			rc = 0;
		}
		break;
	}
	if (f)
		fclose(f);
	return rc;
}

/*
 * The commit that HEAD names in the git repository holding dir (a work
 * tree, a linked worktree or a submodule, whose .git is a file), read
 * from the repository's files: no git program runs.  Returns 0 and the
 * 40 (or 64) hex digits in out, or -1 if there is no repository or HEAD
 * names nothing yet.
 */
static int head_commit(const char *dir, char *out, size_t size)
{
	char *top = realpath(dir, NULL), *gitdir = NULL, *slash;
	char head[PATH_MAX + 16], rel[PATH_MAX];
	struct pt_sb common = PT_SB_INIT, path = PT_SB_INIT;
	int rc = -1;

	/* The nearest directory upwards that holds .git. */
	while (top && !(gitdir = git_dir_of(top))) {
		slash = strrchr(top, '/');
		if (!slash || slash == top)
			break;
		*slash = '\0';
	}
	if (!gitdir)
		goto out;
	pt_sb_addf(&path, "%s/HEAD", gitdir);
	if (read_line(path.buf, head, sizeof head) < 0)
		goto out;
	if (is_hash(head)) {                    /* detached */
		if (strlen(head) < size) {
			strcpy(out, head);
			rc = 0;
		}
		goto out;
	}
	if (strncmp(head, "ref: ", 5))
		goto out;
	/* A linked worktree keeps its branches in the common directory. */
	pt_sb_reset(&path);
	pt_sb_addf(&path, "%s/commondir", gitdir);
	if (read_line(path.buf, rel, sizeof rel) == 0) {
		if (rel[0] != '/')
			pt_sb_addf(&common, "%s/", gitdir);
		pt_sb_addstr(&common, rel);
	} else {
		pt_sb_addstr(&common, gitdir);
	}
	rc = resolve_ref(gitdir, head + 5, out, size);
	if (rc < 0)
		rc = resolve_ref(common.buf, head + 5, out, size);
out:
	free(top);
	free(gitdir);
	pt_sb_release(&common);
	pt_sb_release(&path);
	return rc;
}

static void cpu_model(char *out, size_t size)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	while (f && fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');

		/* "model name" on x86, "Model" or "cpu model" elsewhere. */
		if (colon && (!strncmp(line, "model name", 10) ||
			      !strncmp(line, "cpu model", 9) ||
			      !strncmp(line, "Model", 5))) {
			colon++;
			colon += strspn(colon, " \t");
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(out, size, "%s", colon);
			break;
		}
	}
	if (f)
		fclose(f);
}

void pt_runinfo_get(struct pt_runinfo *ri)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	memset(ri, 0, sizeof *ri);
	cpu_model(ri->cpu_model, sizeof ri->cpu_model);
	if (pages > 0 && psize > 0)
		snprintf(ri->mem_total_kb, sizeof ri->mem_total_kb, "%llu",
			 (unsigned long long)pages * (unsigned long long)psize / 1024);
	snprintf(ri->glibc_version, sizeof ri->glibc_version, "%s",
		 gnu_get_libc_version());
	if (!getcwd(ri->cwd, sizeof ri->cwd))
		ri->cwd[0] = '\0';
	else if (head_commit(ri->cwd, ri->git_commit,
			     sizeof ri->git_commit) < 0)
		ri->git_commit[0] = '\0';
}
