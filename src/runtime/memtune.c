/*
 * memtune: glibc's malloc knobs for a process that frees and rebuilds
 * the same large structures every round (see memtune.h).
 */
#include "runtime/memtune.h"

#include <malloc.h>

#define MMAP_THRESHOLD (32 * 1024 * 1024)
#define TRIM_THRESHOLD (64 * 1024 * 1024)
#define TOP_PAD (16 * 1024 * 1024)

void memtune_keep_freed(void)
{
	/* each returns 0 when the knob is not taken; nothing to do then:
	 * the defaults are only slower */
	(void)mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	(void)mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
	(void)mallopt(M_TOP_PAD, TOP_PAD);
}
