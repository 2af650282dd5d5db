/*
 * The HTML report; see html.h.
 *
 * The page is the template collector/views/html/page.html with its style
 * (report.css) and script (report.js) put in, all three embedded into the
 * program at build time (embed.py).  The run goes in twice: the head
 * (header and summary, a few KB) as JSON in a <script type=
 * "application/json">, and the body (every execution, html-data.c) deflated
 * and in base64, which the page inflates with the browser's own
 * DecompressionStream: command lines repeat their flags over and over, and
 * a 100,000-execution build's body of 40 MB becomes 4.  Nothing of the
 * capture goes anywhere but into these two elements, JSON-escaped or
 * base64, and into the page's title, HTML-escaped.
 */
#include "views/html.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "analysis/report.h"
#include "base/strbuf.h"
#include "views/html-data.h"

/* The embedded page (generated from collector/views/html/). */
extern const char pt_html_page[], pt_html_css[], pt_html_js[];

#define ZLEVEL 6                /* level 1 is 10 % faster, 30 % larger */
#define TITLE_MAX 200           /* bytes of the command in the title */

struct b64 {
	FILE *f;
	z_stream z;
	unsigned char carry[3];
	size_t ncarry;
	unsigned char zout[1 << 16];
	char text[(sizeof(unsigned char[1 << 16]) / 3 + 2) * 4];
};

static const char b64_chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_quad(const unsigned char *in, size_t n, char *out)
{
	uint32_t v = (uint32_t)in[0] << 16 | (n > 1 ? (uint32_t)in[1] << 8 : 0) |
		     (n > 2 ? in[2] : 0);

	out[0] = b64_chars[v >> 18];
	out[1] = b64_chars[(v >> 12) & 63];
	out[2] = n > 1 ? b64_chars[(v >> 6) & 63] : '=';
	out[3] = n > 2 ? b64_chars[v & 63] : '=';
}

/* Encode n bytes of compressed data, keeping a partial triple. */
static int b64_put(struct b64 *b, const unsigned char *p, size_t n)
{
	size_t t = 0;

	while (n && b->ncarry && b->ncarry < 3) {
		b->carry[b->ncarry++] = *p++;
		n--;
	}
	if (b->ncarry == 3) {
		b64_quad(b->carry, 3, b->text + t);
		t += 4;
		b->ncarry = 0;
	}
	for (; n >= 3; p += 3, n -= 3, t += 4)
		b64_quad(p, 3, b->text + t);
	memcpy(b->carry, p, n);
	b->ncarry = n;
	return fwrite(b->text, 1, t, b->f) == t ? 0 : -1;
}

static int deflate_some(struct b64 *b, int flush)
{
	int rc;

	do {
		b->z.next_out = b->zout;
		b->z.avail_out = sizeof b->zout;
		rc = deflate(&b->z, flush);
		if (rc == Z_STREAM_ERROR)
			return -1;
		if (b64_put(b, b->zout, sizeof b->zout - b->z.avail_out) < 0)
			return -1;
	} while (b->z.avail_out == 0);
	return 0;
}

/* The body's sink: deflate what sb holds. */
static int sink(void *arg, struct pt_sb *sb)
{
	struct b64 *b = arg;
	size_t off = 0;

	while (off < sb->len) {
		size_t n = sb->len - off;

		if (n > UINT32_MAX)
			n = UINT32_MAX;
		b->z.next_in = (unsigned char *)sb->buf + off;
		b->z.avail_in = (uInt)n;
		if (deflate_some(b, Z_NO_FLUSH) < 0)
			return -1;
		off += n;
	}
	pt_sb_reset(sb);
	return 0;
}

static int write_body(const struct pt_report *r, FILE *f)
{
	static struct b64 b;    /* 150 KB of buffers: not on the stack */
	struct pt_sb sb = PT_SB_INIT;
	char tail[4];
	int rc;

	memset(&b.z, 0, sizeof b.z);
	b.f = f;
	b.ncarry = 0;
	if (deflateInit(&b.z, ZLEVEL) != Z_OK)
		return -1;
	rc = pt_html_body(r, &sb, sink, &b);
	if (rc == 0)
		rc = deflate_some(&b, Z_FINISH);
	if (rc == 0 && b.ncarry) {
		b64_quad(b.carry, b.ncarry, tail);
		rc = fwrite(tail, 1, 4, f) == 4 ? 0 : -1;
	}
	deflateEnd(&b.z);
	pt_sb_release(&sb);
	return rc;
}

/* The run's command (cut, cleaned) as text in the page's <title>. */
static void write_title(const struct pt_report *r, FILE *f)
{
	const char *cmd = r->m->ncaptures ? pt_model_meta(r->m, 0, "command")
					  : NULL;
	struct pt_sb sb = PT_SB_INIT;
	size_t i, len;

	fputs("proftrace", f);
	if (!cmd)
		return;
	len = strlen(cmd);
	if (len > TITLE_MAX)
		len = TITLE_MAX;
	/* Text of a <title> ends only at "</title": '<' and '&' are the
	 * characters to escape; control characters and invalid UTF-8 become
	 * spaces. */
	for (i = 0; i < len;) {
		size_t l = pt_utf8_len((const unsigned char *)cmd + i, len - i);

		if (!l || (l == 1 && ((unsigned char)cmd[i] < 0x20 ||
				      cmd[i] == 0x7f))) {
			pt_sb_addch(&sb, ' ');
			i += l ? l : 1;
		} else if (cmd[i] == '<') {
			pt_sb_addstr(&sb, "&lt;"), i++;
		} else if (cmd[i] == '&') {
			pt_sb_addstr(&sb, "&amp;"), i++;
		} else {
			pt_sb_add(&sb, cmd + i, l), i += l;
		}
	}
	fprintf(f, ": %s", sb.buf);
	pt_sb_release(&sb);
}

int pt_html_write(const struct pt_model *m, FILE *f)
{
	static const struct pt_group_by by_exe = { PT_GROUP_EXE, NULL };
	struct pt_report r;
	struct pt_sb head = PT_SB_INIT;
	const char *p = pt_html_page, *at;
	int rc = 0;

	/* The report's own figures and choice of lines, with its default
	 * number of rows, so that the page lists what `report` prints. */
	pt_report_compute(&r, m, &by_exe, 10);
	pt_html_head(&r, &head);
	while (rc == 0 && (at = strstr(p, "@@"))) {
		const char *end = strstr(at + 2, "@@");
		size_t name;

		if (!end)
			break;
		fwrite(p, 1, (size_t)(at - p), f);
		name = (size_t)(end - at - 2);
		if (name == 5 && !memcmp(at + 2, "STYLE", 5))
			fputs(pt_html_css, f);
		else if (name == 6 && !memcmp(at + 2, "SCRIPT", 6))
			fputs(pt_html_js, f);
		else if (name == 5 && !memcmp(at + 2, "TITLE", 5))
			write_title(&r, f);
		else if (name == 4 && !memcmp(at + 2, "HEAD", 4))
			fwrite(head.buf, 1, head.len, f);
		else if (name == 4 && !memcmp(at + 2, "DATA", 4))
			rc = write_body(&r, f);
		else
			fwrite(at, 1, (size_t)(end + 2 - at), f);
		p = end + 2;
	}
	fputs(p, f);
	pt_sb_release(&head);
	pt_report_free(&r);
	if (rc == 0 && ferror(f)) {
		rc = -1;
		if (!errno)
			errno = EIO;
	}
	return rc;
}
