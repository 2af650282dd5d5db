/*
 * Text helpers of the views: terminal width, base names, ISO 8601 times,
 * display widths of UTF-8.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "analysis/internal.h"
#include "base/quote.h"
#include "base/util.h"

/* ---- small string helpers ---- */

int pt_term_width(void)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS");

	if (isatty(STDOUT_FILENO) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (c && atoi(c) > 0)
		return atoi(c);
	return 100;
}

const char *pt_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	if (!s)
		return path;
	/* "dir/" names the directory: keep it whole rather than say "". */
	return s[1] ? s + 1 : path;
}

void pt_sb_add_iso8601(struct pt_sb *sb, int64_t t_ns)
{
	time_t secs = (time_t)(t_ns / 1000000000);
	int64_t ms = (t_ns % 1000000000) / 1000000;
	struct tm tm;
	char buf[64];

	if (ms < 0) {
		ms += 1000;
		secs--;
	}
	if (!gmtime_r(&secs, &tm)) {
		pt_sb_addstr(sb, "?");
		return;
	}
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	pt_sb_addf(sb, "%s.%03dZ", buf, (int)ms);
}

void pt_capture_title(const struct pt_model *m, size_t c, struct pt_sb *sb)
{
	const char *host = pt_model_meta(m, c, "host");
	const char *cmd = pt_model_meta(m, c, "command");

	pt_sb_addstr(sb, host && host[0] ? host : "capture");
	if (m->ncaptures > 1)
		pt_sb_addf(sb, " #%zu", c + 1);
	if (cmd && cmd[0]) {
		size_t n = strnlen(cmd, 120);

		/* Cut at a character boundary, not inside one. */
		while (n > 0 && cmd[n] &&
		       ((unsigned char)cmd[n] & 0xc0) == 0x80)
			n--;
		pt_sb_addstr(sb, ": ");
		pt_sb_add(sb, cmd, n);
	}
}
