/*
 * --keep DIR: a history of runs without a server.  DIR holds the last N
 * captures of one job, named by the time they were kept
 * (YYYYmmddTHHMMSSZ-PID.ptcap, so that names sort in time order); each
 * run is compared with those already there (diff KEPT... -- NEW) before
 * it joins them and the oldest beyond N go.  doc/man/proftrace-record.1.scd
 * documents the layout.
 */
#include "collect/finish.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/rundiff.h"
#include "analysis/runs.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "views/rundiff.h"

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/*
 * Is name one --keep made, YYYYmmddTHHMMSSZ-PID.ptcap?  Only those are
 * compared and pruned: the directory may hold anything else.
 */
static int kept_name(const char *name)
{
	static const char form[] = "99999999T999999Z-";
	size_t i, digits = 0;

	for (i = 0; form[i]; i++)
		if (form[i] == '9' ? (unsigned)(name[i] - '0') > 9 :
				     name[i] != form[i])
			return 0;
	while ((unsigned)(name[i + digits] - '0') <= 9)
		digits++;
	return digits > 0 && !strcmp(name + i + digits, ".ptcap");
}

/* The kept captures' paths in time order (oldest first); *n of them. */
static char **list_kept(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		struct pt_sb sb = PT_SB_INIT;

		if (!kept_name(de->d_name))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			names = pt_xrealloc(names, cap * sizeof *names);
		}
		pt_sb_addf(&sb, "%s/%s", dir, de->d_name);
		names[(*n)++] = pt_sb_detach(&sb, NULL);
	}
	closedir(d);
	if (*n)
		qsort(names, *n, sizeof *names, cmp_str);
	return names;
}

static void free_list(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* mkdir -p: 0 or -1 with errno. */
static int make_dirs(const char *dir)
{
	char *p, *s;
	int rc = 0;

	if (!*dir) {
		errno = ENOENT;
		return -1;
	}
	p = s = pt_xstrdup(dir);
	while (rc == 0) {
		s = strchr(s + 1, '/');
		if (s)
			*s = '\0';
		if (mkdir(p, 0777) < 0 && errno != EEXIST)
			rc = -1;
		if (!s)
			break;
		*s = '/';
	}
	free(p);
	return rc;
}

/* Copy from to to (created, replaced atomically): 0 or -1 with errno. */
static int copy_file(const char *from, const char *to)
{
	struct pt_sb tmp = PT_SB_INIT;
	char buf[65536];
	int in, out, rc = -1, err = 0;
	ssize_t r;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	pt_sb_addf(&tmp, "%s.part", to);
	out = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (out < 0)
		goto done;
	while ((r = read(in, buf, sizeof buf)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pt_write_all(out, buf, (size_t)r) < 0)
			break;
	}
	if (r == 0 && fsync(out) == 0)
		rc = 0;
	err = errno;
	if (close(out) != 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (rc == 0 && rename(tmp.buf, to) < 0) {
		rc = -1;
		err = errno;
	}
	if (rc < 0)
		unlink(tmp.buf);
done:
	close(in);
	pt_sb_release(&tmp);
	if (rc < 0 && err)
		errno = err;
	return rc;
}

/* diff KEPT... -- CAPTURE, to fin->summary. */
static void compare(const struct pt_finish *fin, const char *dir,
		    char **kept, size_t n)
{
	struct pt_group_by g;
	struct pt_runs r;
	struct pt_rdiff d;
	struct pt_rdiff_view v = { 10, 0, 100, 1 };
	size_t i;

	pt_group_parse("command", 1, &g);
	pt_runs_init(&r, &g, n + 1);
	for (i = 0; i < n; i++)
		if (pt_runs_add(&r, kept[i], fin->redact) < 0)
			pt_warn("--keep: %s left out of the comparison",
				kept[i]);
	if (!r.nruns || pt_runs_add(&r, fin->capture, fin->redact) < 0) {
		pt_runs_free(&r);
		return;
	}
	memset(&d, 0, sizeof d);
	pt_rdiff_compute(&d, &r, r.nruns - 1, PT_DIFF_CPU);
	fprintf(fin->summary, "\nthis run (B) against the %zu kept in %s "
		"(A):\n", r.nruns - 1, dir);
	pt_rdiff_text_write(&d, &v, fin->summary);
	pt_rdiff_free(&d);
	pt_runs_free(&r);
}

int pt_keep_write(const struct pt_finish *fin, const struct pt_model *m,
		  const char *dir)
{
	struct pt_sb name = PT_SB_INIT;
	char **kept, stamp[32];
	size_t n, first;
	time_t now = time(NULL);
	struct tm tm;
	int rc = 0;

	(void)m;
	if (make_dirs(dir) < 0) {
		pt_warn_failure("--keep: cannot make %s: %s", dir,
				strerror(errno));
		return -1;
	}
	kept = list_kept(dir, &n);
	/* Compared with the last N at most: those that stay. */
	first = n > (size_t)fin->keep_last ? n - (size_t)fin->keep_last : 0;
	if (fin->summary && n > first)
		compare(fin, dir, kept + first, n - first);
	free_list(kept, n);

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	pt_sb_addf(&name, "%s/%s-%ld.ptcap", dir, stamp, (long)getpid());
	if (copy_file(fin->capture, name.buf) < 0) {
		pt_warn_failure("--keep: cannot copy the capture to %s: %s",
				name.buf, strerror(errno));
		rc = -1;
	}
	pt_sb_release(&name);

	/* The oldest beyond N go. */
	kept = list_kept(dir, &n);
	for (size_t i = 0; i + (size_t)fin->keep_last < n; i++)
		if (unlink(kept[i]) < 0)
			pt_warn("--keep: cannot remove %s: %s", kept[i],
				strerror(errno));
	free_list(kept, n);
	return rc;
}
