/*
 * dl_iterate_phdr without the library's own entry.
 *
 * AddressSanitizer's runtime, loaded as a shared library (gcc's default,
 * clang's -shared-libasan), aborts unless it is the first object
 * dl_iterate_phdr lists after the program ("ASan runtime does not come
 * first in initial library list"): a preloaded library comes before it.
 * Nothing of this library intercepts what ASan does (malloc and friends),
 * so stepping out of that list is all it takes (doc/design.md, pitfall 12),
 * and no environment variable the program could see (verify_asan_link_order)
 * has to change.  The other users of the list do not need our entry: the
 * unwinder finds our frames through _dl_find_object (glibc 2.35 and later)
 * and the program's own code is not ours; a symbolizer shows a frame of
 * ours as one of an unknown module, and LeakSanitizer finds no pointer to
 * the program's memory in our data, since we keep none.
 */
#include "pt-preload.h"
#include "pt-phdr.h"

PT_EXPORT int dl_iterate_phdr(int (*fn)(struct dl_phdr_info *, size_t, void *),
			      void *data)
{
	/* Before the constructor, too: ASan's check runs from the program's
	 * preinit_array. */
	return pt_phdr_iterate_others(PT_REAL_LAZY(dl_iterate_phdr), fn, data);
}
