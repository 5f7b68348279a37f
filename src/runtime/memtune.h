/*
 * memtune: how the process's allocator keeps freed memory. Every round
 * builds a snapshot and a policy view and frees them again; by default
 * glibc maps large blocks fresh and gives the top of the heap back at
 * once, so each round pays page faults for memory it just returned.
 */
#ifndef LUASCALE_MEMTUNE_H
#define LUASCALE_MEMTUNE_H

/*
 * Keeps up to a bounded amount of freed memory for reuse instead of
 * returning it to the system: blocks below 32 MiB come from the heap, and
 * up to 64 MiB of free heap top is kept. RSS then stays near its peak
 * rather than falling between rounds. Call once, before other threads
 * start. Not an error when the allocator ignores it (sanitizers).
 */
void memtune_keep_freed(void);

#endif
