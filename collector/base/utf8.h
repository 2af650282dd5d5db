/* UTF-8: what the views that escape or measure text need to know. */
#ifndef PT_UTF8_H
#define PT_UTF8_H

#include <stddef.h>

/*
 * Length of the valid UTF-8 sequence that starts at p (n >= 1 bytes
 * available): 1 for ASCII, 2 to 4, or 0 if p[0] starts no valid sequence
 * (stray continuation byte, overlong form, surrogate, beyond U+10FFFF).
 */
size_t pt_utf8_len(const unsigned char *p, size_t n);

#endif
