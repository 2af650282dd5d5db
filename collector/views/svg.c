/*
 * The SVG flame graph; see svg.h.
 *
 * The frames are drawn in the file itself (rects and labels at full
 * width), so that the graph shows even where scripts do not run (an image
 * viewer, a code forge's file view); the script only re-lays the frames
 * out when the user zooms, from each frame's data-o and data-v.  No byte of
 * the capture goes into the script: labels appear only as escaped
 * character data and attribute values, so no command line can end the
 * CDATA section or inject markup.
 */
#include "views/svg.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "base/strbuf.h"
#include "base/utf8.h"

#define NONE PT_STACKS_NONE
#define PAD 10                  /* px left and right of the frames */
#define FRAME_H 16              /* px per level, 1 px of it a gap */
#define FONT 12                 /* px */
#define CHAR_W (FONT * 0.59)    /* average glyph width, as flamegraph.pl */
#define TOP 80                  /* px above the frames: title, controls */
#define SUB_CHARS 160           /* longest subtitle, in characters */
#define BOTTOM 32               /* px below: the details line */

struct svg {
	FILE *f;
	const struct pt_stacks *st;
	int64_t *total;                 /* per frame: own weight + children's */
	int64_t *off;                   /* per frame: offset from the left */
	uint32_t *depth;                /* per frame: 1 for a top frame */
	int64_t grand;                  /* all frames' total */
	double scale;                   /* px per unit */
	int height;
	struct pt_sb text, tmp;
};

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/*
 * Copy src (len bytes) to dst as text an XML parser takes: invalid UTF-8
 * and the non-characters U+FFFE and U+FFFF become U+FFFD, control
 * characters a space (XML 1.0 allows none but tab and newlines, and a
 * label has no use for those).  Returns the number of characters.
 */
static size_t xml_clean(struct pt_sb *dst, const char *src, size_t len)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t i = 0, chars = 0;

	pt_sb_reset(dst);
	while (i < len) {
		size_t l = pt_utf8_len(p + i, len - i);

		if (!l || (l == 3 && p[i] == 0xef && p[i + 1] == 0xbf &&
			   p[i + 2] >= 0xbe)) {
			pt_sb_addstr(dst, "\xef\xbf\xbd");
			i += l ? l : 1;
		} else if (l == 1 && (p[i] < 0x20 || p[i] == 0x7f)) {
			pt_sb_addch(dst, ' ');
			i++;
		} else {
			pt_sb_add(dst, p + i, l);
			i += l;
		}
		chars++;
	}
	return chars;
}

/* Write s (clean UTF-8, see xml_clean) as character data or as an
 * attribute's value between double quotes. */
static void xml_text(FILE *f, const char *s, size_t len)
{
	size_t i, from = 0;

	for (i = 0; i < len; i++) {
		const char *ent;

		switch (s[i]) {
		case '&': ent = "&amp;"; break;
		case '<': ent = "&lt;"; break;
		case '>': ent = "&gt;"; break;
		case '"': ent = "&quot;"; break;
		default: continue;
		}
		fwrite(s + from, 1, i - from, f);
		fputs(ent, f);
		from = i + 1;
	}
	fwrite(s + from, 1, len - from, f);
}

/* Byte length of the first n characters of clean UTF-8 s. */
static size_t utf8_prefix(const char *s, size_t len, size_t n)
{
	size_t i = 0;

	while (i < len && n--) {
		i++;
		while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
	}
	return i;
}

/*
 * Colour of a frame: a warm tone from a hash of its program (the label up
 * to the first space), so that one program has one colour in every graph.
 */
static void colour(FILE *f, const char *label, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len && label[i] != ' '; i++)
		h = (h ^ (unsigned char)label[i]) * 16777619u;
	fprintf(f, "rgb(%u,%u,%u)", 205 + (h & 0xff) * 50 / 256,
		((h >> 8) & 0xff) * 230 / 256, ((h >> 16) & 0xff) * 55 / 256);
}

/* Seconds of a value in microseconds. */
static double secs(int64_t us)
{
	return (double)us / 1e6;
}

/* Frame id (PT_STACKS_NONE: the root "all") with its label already in
 * s->text (clean, `chars` characters). */
static void frame(struct svg *s, uint32_t id, size_t chars)
{
	int64_t v = id == NONE ? s->grand : s->total[id];
	int64_t o = id == NONE ? 0 : s->off[id];
	uint32_t d = id == NONE ? 0 : s->depth[id];
	double x = PAD + (double)o * s->scale, w = (double)v * s->scale;
	double pct = s->grand > 0 ? 100.0 * (double)v / (double)s->grand : 0;
	int y = s->height - BOTTOM - (int)(d + 1) * FRAME_H;
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
	char wtext[32];

	/* The width as written decides the tooltip: a frame of 0.9996 px
	 * is written "1.000", and gets one like any other 1 px frame. */
	snprintf(wtext, sizeof wtext, "%.3f", w);
	w = strtod(wtext, NULL);

	fprintf(s->f, "<g class=\"f\" id=\"f%u\"", id == NONE ? 0 : id + 1);
	if (id != NONE)
		fprintf(s->f, " data-p=\"f%u\"",
			s->st->parent[id] == NONE ? 0 : s->st->parent[id] + 1);
	fprintf(s->f, " data-v=\"%lld\" data-o=\"%lld\" data-l=\"",
		(long long)v, (long long)o);
	xml_text(s->f, s->text.buf, s->text.len);
	fputs("\">", s->f);
	/* A tooltip where scripts do not run, for the frames one can
	 * point at: Chromium takes a minute to lay out tens of thousands
	 * of <title> elements. */
	if (w >= 1) {
		fputs("<title>", s->f);
		xml_text(s->f, s->text.buf, s->text.len);
		fprintf(s->f, "\n%.3f s, %.1f %%</title>", secs(v), pct);
	}
	fprintf(s->f, "<rect x=\"%.3f\" y=\"%d\" width=\"%s\" "
		"height=\"%d\" fill=\"", x, y, wtext, FRAME_H - 1);
	if (id == NONE)
		fputs("rgb(200,200,200)", s->f);
	else
		colour(s->f, s->text.buf, s->text.len);
	fprintf(s->f, "\"/><text x=\"%.3f\" y=\"%d\">", x + 3,
		y + FRAME_H - 4);
	/* The label as far as it fits; the script does the same on zoom. */
	if (fit >= 3) {
		if (chars <= fit)
			xml_text(s->f, s->text.buf, s->text.len);
		else {
			xml_text(s->f, s->text.buf,
				 utf8_prefix(s->text.buf, s->text.len,
					     fit - 2));
			fputs("..", s->f);
		}
	}
	fputs("</text></g>\n", s->f);
}

/* The page's behaviour; L (the layout) is written before it. */
static const char script[] =
	"var svg = document.documentElement, frames = [], byId = {};\n"
	"var root, zoomed = null, pattern = null;\n"
	"var details = document.getElementById('details');\n"
	"var matched = document.getElementById('matched');\n"
	"var unzoom = document.getElementById('unzoom');\n"
	"function secs(v) { return (v / 1e6).toFixed(3) + ' s'; }\n"
	"function pct(v) {\n"
	"  return (root.v > 0 ? 100 * v / root.v : 0).toFixed(1) + ' %';\n"
	"}\n"
	"function fit(f, x, w) {\n"
	"  var n = Math.floor((w - 6) / L.charw), t = f.label;\n"
	"  if (n < 3) t = '';\n"
	"  else if (Array.from(t).length > n)\n"
	"    t = Array.from(t).slice(0, n - 2).join('') + '..';\n"
	"  f.text.textContent = t;\n"
	"  f.text.setAttribute('x', (x + 3).toFixed(3));\n"
	"}\n"
	"function place(f, x, w) {\n"
	"  f.rect.setAttribute('x', x.toFixed(3));\n"
	"  f.rect.setAttribute('width', w.toFixed(3));\n"
	"  fit(f, x, w);\n"
	"}\n"
	"function zoom(z) {\n"
	"  var up = {}, a, full = L.width - 2 * L.pad, sc = full / (z.v || 1);\n"
	"  for (a = z; a; a = a.parent) up[a.id] = true;\n"
	"  frames.forEach(function (f) {\n"
	"    var inside = f.depth > z.depth && f.o >= z.o &&\n"
	"                 f.o + f.v <= z.o + z.v;\n"
	"    f.g.classList.toggle('hide', !up[f.id] && !inside);\n"
	"    f.g.classList.toggle('par', up[f.id] && f !== z);\n"
	"    if (up[f.id]) place(f, L.pad, full);\n"
	"    else if (inside) place(f, L.pad + (f.o - z.o) * sc, f.v * sc);\n"
	"  });\n"
	"  zoomed = z === root ? null : z;\n"
	"  unzoom.classList.toggle('hide', !zoomed);\n"
	"}\n"
	"function search(re) {\n"
	"  var hits = [], sum = 0, end = -1;\n"
	"  pattern = re;\n"
	"  frames.forEach(function (f) {\n"
	"    var hit = re !== null && f !== root && re.test(f.label);\n"
	"    f.rect.setAttribute('fill', hit ? 'rgb(230,0,230)' : f.fill);\n"
	"    if (hit) hits.push(f);\n"
	"  });\n"
	"  /* Nested matches count once: sum the outermost ones. */\n"
	"  hits.sort(function (a, b) { return a.o - b.o || a.depth - b.depth; });\n"
	"  hits.forEach(function (f) {\n"
	"    if (f.o >= end) { sum += f.v; end = f.o + f.v; }\n"
	"  });\n"
	"  matched.textContent = re === null ? '' :\n"
	"    'Matched: ' + pct(sum) + ' (' + secs(sum) + ', ' + hits.length +\n"
	"    (hits.length === 1 ? ' frame)' : ' frames)');\n"
	"  document.getElementById('search').textContent =\n"
	"    re === null ? 'Search' : 'Reset search';\n"
	"}\n"
	"function ask() {\n"
	"  var s;\n"
	"  if (pattern !== null) { search(null); return; }\n"
	"  s = prompt('Search frames (regular expression)', '');\n"
	"  if (!s) return;\n"
	"  try { search(new RegExp(s)); }\n"
	"  catch (e) { matched.textContent = 'Bad expression: ' + e.message; }\n"
	"}\n"
	"function show(f) {\n"
	"  details.textContent = f ? f.label + ': ' + secs(f.v) + L.unit +\n"
	"    ', ' + pct(f.v) : ' ';\n"
	"}\n"
	"[].forEach.call(document.querySelectorAll('g.f'), function (g) {\n"
	"  var f = { g: g, id: g.id, v: +g.getAttribute('data-v'),\n"
	"            o: +g.getAttribute('data-o'),\n"
	"            rect: g.querySelector('rect'),\n"
	"            text: g.querySelector('text'),\n"
	"            label: g.getAttribute('data-l') };\n"
	"  f.parent = byId[g.getAttribute('data-p')] || null;\n"
	"  f.depth = f.parent ? f.parent.depth + 1 : 0;\n"
	"  f.fill = f.rect.getAttribute('fill');\n"
	"  frames.push(f);\n"
	"  byId[f.id] = f;\n"
	"  g.addEventListener('click', function () { zoom(f); });\n"
	"  g.addEventListener('mouseover', function () { show(f); });\n"
	"  g.addEventListener('mouseout', function () { show(null); });\n"
	"});\n"
	"root = byId.f0;\n"
	"unzoom.addEventListener('click', function () { zoom(root); });\n"
	"document.getElementById('search').addEventListener('click', ask);\n"
	"document.addEventListener('keydown', function (e) {\n"
	"  if ((e.ctrlKey && e.key === 'f') || e.key === '/') {\n"
	"    e.preventDefault();\n"
	"    pattern = null;\n"
	"    ask();\n"
	"  } else if (e.key === 'Escape') {\n"
	"    zoom(root);\n"
	"    search(null);\n"
	"  }\n"
	"});\n"
	"/* A state to open in: #z=FRAME-ID&s=REGEX (links, tests). */\n"
	"location.hash.slice(1).split('&').forEach(function (kv) {\n"
	"  var k = kv.slice(0, 2), v = decodeURIComponent(kv.slice(2));\n"
	"  if (k === 'z=' && byId[v]) zoom(byId[v]);\n"
	"  if (k === 's=' && v) search(new RegExp(v));\n"
	"});\n";

static const char style[] =
	"text { font-family: Verdana, sans-serif; font-size: 12px; "
	"fill: #000; }\n"
	".title { font-size: 17px; }\n"
	".sub { fill: #555; }\n"
	".btn { cursor: pointer; fill: #036; text-decoration: underline; }\n"
	"g.f { cursor: pointer; }\n"
	"g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	"g.f text { pointer-events: none; }\n"
	".par rect { opacity: 0.5; }\n"
	".hide { display: none; }\n";

/* What the run was, for the subtitle: command, host, start. */
static void describe(struct svg *s, const struct pt_model *m,
		     const struct pt_analysis *a)
{
	const char *cmd = m->ncaptures ? pt_model_meta(m, 0, "command") : NULL;
	const char *host = m->ncaptures ? pt_model_meta(m, 0, "host") : NULL;

	pt_sb_reset(&s->tmp);
	if (cmd)
		pt_sb_addf(&s->tmp, "%s", cmd);
	if (host)
		pt_sb_addf(&s->tmp, "%son %s", cmd ? " " : "", host);
	if (m->n) {
		pt_sb_addstr(&s->tmp, cmd || host ? ", " : "");
		pt_sb_add_iso8601(&s->tmp, a->t0);
	}
	if (m->ncaptures > 1)
		pt_sb_addf(&s->tmp, " and %zu more captures",
			   m->ncaptures - 1);
	if (xml_clean(&s->text, s->tmp.buf, s->tmp.len) > SUB_CHARS) {
		s->text.len = utf8_prefix(s->text.buf, s->text.len,
					  SUB_CHARS - 3);
		pt_sb_addstr(&s->text, "...");
	}
}

int pt_svg_write(const struct pt_model *m, FILE *f,
		 enum pt_stacks_weight weight)
{
	struct pt_stacks st;
	struct pt_analysis a;
	struct svg s;
	uint32_t i, c, maxdepth = 0;
	size_t left_out = 0, n;
	int64_t o;
	int rc = 0;

	memset(&s, 0, sizeof s);
	s.f = f;
	s.st = &st;
	pt_sb_init(&s.text);
	pt_sb_init(&s.tmp);
	pt_stacks_build(&st, m, weight);
	pt_analyze_tree(&a, m);
	n = st.n ? st.n : 1;
	s.total = pt_xcalloc(n, sizeof *s.total);
	s.off = pt_xcalloc(n, sizeof *s.off);
	s.depth = pt_xcalloc(n, sizeof *s.depth);

	/* A child's id is always above its parent's. */
	for (i = (uint32_t)st.n; i-- > 0;) {
		s.total[i] = sat_add(s.total[i], st.weight[i]);
		if (st.parent[i] != NONE)
			s.total[st.parent[i]] = sat_add(s.total[st.parent[i]],
							s.total[i]);
		else
			s.grand = sat_add(s.grand, s.total[i]);
	}
	for (i = 0, o = 0; i < st.n; i++)
		if (st.parent[i] == NONE) {
			s.off[i] = o;
			o = sat_add(o, s.total[i]);
			s.depth[i] = 1;
		}
	for (i = 0; i < st.n; i++) {
		o = s.off[i];
		for (c = st.first[i]; c != NONE; c = st.next[c]) {
			s.off[c] = o;
			o = sat_add(o, s.total[c]);
			s.depth[c] = s.depth[i] + 1;
		}
		/* Only frames that get drawn count for the height. */
		if (s.total[i] > 0 && s.depth[i] > maxdepth)
			maxdepth = s.depth[i];
	}
	s.scale = s.grand > 0 ? (double)(PT_SVG_WIDTH - 2 * PAD) /
		(double)s.grand : 0;
	for (i = 0; i < st.n; i++)
		if (s.total[i] > 0 && (double)s.total[i] * s.scale < 0.01)
			left_out++;
	s.height = TOP + (int)(maxdepth + 1) * FRAME_H + BOTTOM;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n"
		"<style><![CDATA[\n%s]]></style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text class=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">"
		"Flame graph: %s</text>\n<text class=\"sub\" x=\"%d\" y=\"44\" "
		"text-anchor=\"middle\">", PT_SVG_WIDTH, s.height, PT_SVG_WIDTH,
		s.height, style, PT_SVG_WIDTH / 2,
		weight == PT_STACKS_WALL ? "wall time" : "CPU time",
		PT_SVG_WIDTH / 2);
	describe(&s, m, &a);
	xml_text(f, s.text.buf, s.text.len);
	fprintf(f, "</text>\n<text class=\"sub\" x=\"%d\" y=\"62\" "
		"text-anchor=\"middle\">", PT_SVG_WIDTH / 2);
	fprintf(f, "%.3f s in %zu executions, the sum of each program's %s",
		secs(s.grand), m->n, weight == PT_STACKS_WALL ?
		"own wall time (not waiting for its children)" :
		"user and system CPU time");
	if (left_out)
		fprintf(f, "; %zu frames too narrow to draw left out",
			left_out);
	fprintf(f, "</text>\n"
		"<text id=\"unzoom\" class=\"btn hide\" x=\"%d\" y=\"24\">"
		"Reset zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%d\" y=\"24\" "
		"text-anchor=\"end\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\">"
		"</text>\n", PAD, PT_SVG_WIDTH - PAD, PAD, s.height - 12,
		PT_SVG_WIDTH - PAD, s.height - 12);

	pt_sb_reset(&s.tmp);
	frame(&s, NONE, xml_clean(&s.text, "all", 3));
	for (i = 0; i < st.n; i++) {
		const char *lab;
		size_t len;

		if (!s.total[i] || (double)s.total[i] * s.scale < 0.01)
			continue;
		lab = pt_stacks_label(&st, i, &len);
		frame(&s, i, xml_clean(&s.text, lab, len));
	}
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"\"use strict\";\n"
		"var L = { width: %d, pad: %d, charw: %.3f, unit: '%s' };\n"
		"%s]]></script>\n</svg>\n", PT_SVG_WIDTH, PAD, CHAR_W,
		weight == PT_STACKS_WALL ? "" : " CPU", script);
	if (fflush(f) != 0 || ferror(f))
		rc = -1;

	free(s.total);
	free(s.off);
	free(s.depth);
	pt_sb_release(&s.text);
	pt_sb_release(&s.tmp);
	pt_analysis_free(&a);
	pt_stacks_free(&st);
	if (rc < 0 && !errno)
		errno = EIO;
	return rc;
}

int pt_svg_write_wall(const struct pt_model *m, FILE *f)
{
	return pt_svg_write(m, f, PT_STACKS_WALL);
}

int pt_svg_write_cpu(const struct pt_model *m, FILE *f)
{
	return pt_svg_write(m, f, PT_STACKS_CPU);
}
