/* Keys cut to a column; see keyfit.h. */
#include "views/keyfit.h"

#include <string.h>

/* Columns of s: UTF-8 characters (every one counts one). */
static size_t cols(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			c++;
	return c;
}

void pt_key_fit(struct pt_sb *sb, const char *key, const char *label,
		size_t room)
{
	size_t klen = strlen(key), used, i;
	const char *suffix = strstr(key, " #");

	if (cols(key, klen) <= room) {
		pt_sb_add(sb, key, klen);
		return;
	}
	/* Keep the position among equals ("#2"), which tells keys apart. */
	if (suffix && suffix[2] >= '1' && suffix[2] <= '9' &&
	    strspn(suffix + 2, "0123456789") == strlen(suffix + 2))
		klen = (size_t)(suffix - key);
	else
		suffix = NULL;
	pt_sb_addstr(sb, label);
	if (suffix)
		pt_sb_addstr(sb, suffix);
	used = cols(label, strlen(label)) + (suffix ? strlen(suffix) : 0);
	if (used + 3 + 3 >= room)
		return;
	pt_sb_addstr(sb, " · ");
	used += 3;
	/* Whole words while they fit, keeping room for "...". */
	i = 0;
	while (i < klen) {
		size_t end = i;

		while (end < klen && key[end] != ' ')
			end++;
		if (used + cols(key + i, end - i) + (end < klen ? 4 : 0) >
		    room) {
			pt_sb_addstr(sb, "...");
			return;
		}
		pt_sb_add(sb, key + i, end - i);
		used += cols(key + i, end - i);
		if (end < klen) {
			pt_sb_addch(sb, ' ');
			used++;
		}
		i = end + 1;
	}
}
