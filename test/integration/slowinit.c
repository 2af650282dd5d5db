/*
 * A preload library whose constructor takes 30 ms.  Listed after
 * libproftrace.so in LD_PRELOAD, it runs first, so the library's HELLO
 * comes 30 ms after the exec that announced the image (record-end.py).
 */
#include <time.h>

__attribute__((constructor)) static void slowinit(void)
{
	struct timespec t = { 0, 30 * 1000000L };

	while (nanosleep(&t, &t) != 0)
		;
}
