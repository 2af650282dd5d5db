/*
 * Unit tests of shell, CSV and JSON quoting.
 *
 * `test-quote` checks fixed cases.  `test-quote --emit` prints, for each
 * tricky string, the original and its quoted form, NUL-separated, then the
 * whole list quoted as one command line: check-quote.py feeds those to
 * Python's shlex.split(), the reference the quoting promises to match.
 * `test-quote --json` prints, for each JSON style, each tricky string and
 * each byte, the style, the string and its JSON form, NUL-separated:
 * check-quote.py reads those back with Python's json module.
 */
#include <stdio.h>
#include <string.h>

#include "base/quote.h"

static const char *const tricky[] = {
	"", "plain", "a b", "it's", "'", "''", "\"", "\\", "\n", "a\nb",
	"\t", " ", "$HOME", "`ls`", "$(ls)", "~", "~user", "#comment", "a#b",
	"*", "?", "[a]", "{a,b}", "x=1", "-", "--opt=val", "a;b", "a&b",
	"a|b", "<in", ">out", "(x)", "!", "!!", "a'b'c", "'''", "\\'",
	"caf\xc3\xa9", "\xff\xfe", "\x80", "tab\there", "%s", "@file",
	"+x", ",", ":", "/usr/bin/cc", "-DX=\"1 2\"", "\r\n", "\x01\x7f",
};

#define N_TRICKY (sizeof tricky / sizeof tricky[0])

static int failures;

static void expect_shell(const char *in, const char *want)
{
	struct pt_sb sb = PT_SB_INIT;

	pt_quote_shell(&sb, in);
	if (strcmp(sb.buf, want)) {
		fprintf(stderr, "FAIL: shell(\"%s\") = [%s], expected [%s]\n",
			in, sb.buf, want);
		failures++;
	}
	pt_sb_release(&sb);
}

static void expect_csv(const char *in, const char *want)
{
	struct pt_sb sb = PT_SB_INIT;

	pt_quote_csv(&sb, in);
	if (strcmp(sb.buf, want)) {
		fprintf(stderr, "FAIL: csv(\"%s\") = [%s], expected [%s]\n",
			in, sb.buf, want);
		failures++;
	}
	pt_sb_release(&sb);
}

static int emit(void)
{
	struct pt_sb sb = PT_SB_INIT;
	size_t i;

	for (i = 0; i < N_TRICKY; i++) {
		pt_sb_addstr(&sb, tricky[i]);
		pt_sb_addch(&sb, '\0');
		pt_quote_shell(&sb, tricky[i]);
		pt_sb_addch(&sb, '\0');
	}
	/* The last field: every string at once, as one command line. */
	pt_quote_argv(&sb, tricky, N_TRICKY);
	fwrite(sb.buf, 1, sb.len, stdout);
	pt_sb_release(&sb);
	return ferror(stdout) ? 1 : 0;
}

static void emit_json(struct pt_sb *sb, unsigned style, const char *s)
{
	pt_sb_addf(sb, "%u", style);
	pt_sb_addch(sb, '\0');
	pt_sb_addstr(sb, s);
	pt_sb_addch(sb, '\0');
	pt_quote_json(sb, s, strlen(s), style);
	pt_sb_addch(sb, '\0');
}

static int emit_jsons(void)
{
	static const char *const more[] = {
		"</script><script>x()", "&amp; <!--", "\xe2\x80\xa8 \xe2\x80\xa9",
		"\xe2\x82\xac \xf0\x9f\x98\x80", "a\xff" "b\xc3(",
	};
	struct pt_sb sb = PT_SB_INIT;
	unsigned style;
	char one[2] = "";
	size_t i;

	for (style = 0; style < 3; style++) {
		for (i = 0; i < N_TRICKY; i++)
			emit_json(&sb, style, tricky[i]);
		for (i = 0; i < sizeof more / sizeof *more; i++)
			emit_json(&sb, style, more[i]);
		for (i = 1; i < 256; i++) {
			one[0] = (char)i;
			emit_json(&sb, style, one);
		}
	}
	fwrite(sb.buf, 1, sb.len, stdout);
	pt_sb_release(&sb);
	return ferror(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct pt_sb sb = PT_SB_INIT;

	if (argc > 1 && !strcmp(argv[1], "--emit"))
		return emit();
	if (argc > 1 && !strcmp(argv[1], "--json"))
		return emit_jsons();

	expect_shell("", "''");
	expect_shell("cc", "cc");
	expect_shell("-I/usr/include,x=y:@z%+", "-I/usr/include,x=y:@z%+");
	expect_shell("a b", "'a b'");
	expect_shell("it's", "'it'\\''s'");
	expect_shell("'", "''\\'''");
	expect_shell("a\nb", "'a\nb'");
	expect_shell("$x", "'$x'");
	expect_shell("caf\xc3\xa9", "'caf\xc3\xa9'");
	expect_shell("~", "'~'");

	pt_quote_argv(&sb, (const char *const[]){ "sh", "-c", "echo 'hi'" }, 3);
	if (strcmp(sb.buf, "sh -c 'echo '\\''hi'\\'''")) {
		fprintf(stderr, "FAIL: argv = [%s]\n", sb.buf);
		failures++;
	}
	pt_sb_reset(&sb);
	pt_quote_argv(&sb, NULL, 0);
	if (sb.len) {
		fprintf(stderr, "FAIL: empty argv = [%s]\n", sb.buf);
		failures++;
	}
	pt_sb_release(&sb);

	expect_csv("", "");
	expect_csv("plain text", "plain text");
	expect_csv("a,b", "\"a,b\"");
	expect_csv("say \"hi\"", "\"say \"\"hi\"\"\"");
	expect_csv("\"", "\"\"\"\"");
	expect_csv("a\nb", "\"a\nb\"");
	expect_csv("a\rb", "\"a\rb\"");
	expect_csv("it's", "it's");
	expect_csv("\xff,", "\"\xff,\"");

	printf("%s: %d failure(s)\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
