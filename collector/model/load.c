/* Loading captures for output; see load.h. */
#include "model/load.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/strbuf.h"
#include "base/util.h"

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The captures (*.ptcap, sorted) of a directory that holds some and no
 * spool file (*.ptspool): a folder of CI artifacts, say.  Returns their
 * count and *out (paths to free), or 0 when path is to be read as it is
 * (a file, or a spool directory).
 */
static size_t captures_in_dir(const char *path, char ***out)
{
	struct stat st;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int spool = 0;
	DIR *d;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode) || !(d = opendir(path)))
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (ends_with(de->d_name, ".ptspool"))
			spool = 1;
		if (!ends_with(de->d_name, ".ptcap"))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			names = pt_xrealloc(names, cap * sizeof *names);
		}
		names[n++] = pt_xstrdup(de->d_name);
	}
	closedir(d);
	if (spool || !n) {
		for (i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return 0;
	}
	qsort(names, n, sizeof *names, cmp_names);
	for (i = 0; i < n; i++) {
		struct pt_sb sb = PT_SB_INIT;

		pt_sb_addf(&sb, "%s/%s", path, names[i]);
		free(names[i]);
		names[i] = pt_sb_detach(&sb, NULL);
	}
	*out = names;
	return n;
}

/* Read one capture file or spool directory; its name is the capture's
 * metadata "file" (the HTML report names its captures so). */
static int add_one(struct pt_model *m, const char *path)
{
	int rc = pt_model_add_capture(m, path);

	if (rc >= 0)
		pt_model_set_meta(m, m->ncaptures - 1, "file", path);
	return rc;
}

/* Add one capture; 0, 1 (damaged), -1 (not a capture). */
static int add(struct pt_model *m, const char *path)
{
	char **caps = NULL;
	size_t n = captures_in_dir(path, &caps), i;
	int status = 0, rc;

	if (!n)
		return add_one(m, path);
	for (i = 0; i < n; i++) {
		rc = status < 0 ? -1 : add_one(m, caps[i]);
		if (rc < 0 || (rc > 0 && status == 0))
			status = rc;
		free(caps[i]);
	}
	free(caps);
	return status;
}

static int load(struct pt_model *m, char *const *paths, size_t n,
		struct pt_redact *red, int lean)
{
	int status = 0;
	size_t i;

	pt_model_init(m);
	if (lean)
		pt_model_set_lean(m);
	for (i = 0; i < n; i++) {
		int rc = add(m, paths[i]);

		if (rc < 0) {
			pt_model_free(m);
			return -1;
		}
		if (rc > 0)
			status = 1;
	}
	pt_model_finish(m);
	{
		/* Trace files refused or cut: counted and said, never an
		 * error (doc/manual.md, "Traces that programs write"). */
		struct pt_sb sb = PT_SB_INIT;

		if (pt_sub_stats_line(m, &sb))
			pt_warn("%s", sb.buf);
		pt_sb_release(&sb);
	}
	if (red)
		pt_redact_model(red, m);
	return status || m->damaged;
}

int pt_model_load(struct pt_model *m, char *const *paths, size_t n,
		  struct pt_redact *red)
{
	return load(m, paths, n, red, 0);
}

int pt_model_load_lean(struct pt_model *m, char *const *paths, size_t n,
		       struct pt_redact *red)
{
	return load(m, paths, n, red, 1);
}
