/*
 * In the fuzz targets only: the capture reader reads its file 8 KiB at a
 * time instead of 128 KiB.  ASan serves allocations that large with mmap
 * and munmap, and on the VMs this runs on the page faults cut the fuzzing
 * speed fivefold.  The size changes nothing the reader sees: inflate
 * returns the same bytes.
 */
#include "capture/gunzip.h"

size_t pt_gunzip_in_size(void)
{
	return 8u << 10;
}
