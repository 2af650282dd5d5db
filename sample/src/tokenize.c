/* tokenize.c - split text into lower-cased ASCII words. */
#include "config.h"

#include "sample.h"

#define MAXWORD 64

static int is_word_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '\'';
}

size_t tokenize(const char *text, size_t n, token_fn fn, void *ctx)
{
	char word[MAXWORD];
	size_t i = 0, count = 0;

	while (i < n) {
		size_t len = 0;

		while (i < n && !is_word_char((unsigned char)text[i]))
			i++;
		while (i < n && is_word_char((unsigned char)text[i])) {
			unsigned char c = (unsigned char)text[i++];

			if (c >= 'A' && c <= 'Z')
				c = (unsigned char)(c - 'A' + 'a');
			if (len < MAXWORD - 1)
				word[len++] = (char)c;
		}
		/* strip quote characters at either end: 'tis, builds' */
		{
			size_t start = 0;

			while (start < len && word[start] == '\'')
				start++;
			while (len > start && word[len - 1] == '\'')
				len--;
			if (len > start) {
				word[len] = '\0';
				fn(word + start, len - start, ctx);
				count++;
			}
		}
	}
	return count;
}
