/*
 * filewatch: tells when files (the policy, the config) have changed, with
 * inotify on the folder that holds each one, so that a file replaced by a
 * rename and a mounted ConfigMap's "..data" symlink swap are seen as well
 * as a file written in place. It does not reload anything itself.
 */
#ifndef LUASCALE_FILEWATCH_H
#define LUASCALE_FILEWATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "errbuf.h"

#define FILEWATCH_MAX 32 /* files one watcher follows (ids 0..31) */

struct filewatch;

/*
 * A watcher whose changes are reported once no event of a file has come
 * for 'debounce_ns' (a burst of events is one change). NULL with why
 * (inotify not available, no descriptors left).
 */
struct filewatch *filewatch_new(int64_t debounce_ns, struct errbuf *err);

/* Stops the thread (filewatch_start) if any, and frees. NULL is a no-op. */
void filewatch_free(struct filewatch *w);

/*
 * Follows the file at 'path' (copied) under 'id' (0..FILEWATCH_MAX-1). Its
 * folder is watched for a write that ends (IN_CLOSE_WRITE), a file moved
 * in (IN_MOVED_TO), a symlink created and entries removed; events of
 * other files are ignored except those whose name starts with ".." (a
 * ConfigMap volume's "..data" and its timestamped folders). A file that
 * is written is only looked at once its writer closes it, so a half-written
 * file is not reported while it is being written. Returns 0, or -1 with
 * why (folder missing, too many watches).
 */
int filewatch_add(struct filewatch *w, const char *path, unsigned id, struct errbuf *err);

/* The inotify descriptor (non-blocking), readable when events wait. */
int filewatch_fd(const struct filewatch *w);

/*
 * Reads the events waiting (never blocks) and marks the files they concern
 * as pending, their quiet time running from 'now' (ns, any clock, the same
 * as filewatch_due's). Returns how many events concerned a followed file,
 * or -1 with why on a read error. A queue overflow marks every file.
 */
int filewatch_read(struct filewatch *w, int64_t now, struct errbuf *err);

/*
 * The files whose quiet time has passed at 'now' and whose content is not
 * what was seen last (another inode, size or modification time, through
 * symlinks): a bit per id. A file that is missing is not reported (its
 * return is). Each change is reported once.
 */
uint32_t filewatch_due(struct filewatch *w, int64_t now);

/* The earliest time a pending file's quiet time ends, or -1 when none is. */
int64_t filewatch_deadline(const struct filewatch *w);

/* The path followed under 'id', or NULL. Borrowed. */
const char *filewatch_path(const struct filewatch *w, unsigned id);

/* Called from the watcher's thread with the ids changed (a bit each). */
typedef void (*filewatch_fn)(void *ctx, uint32_t changed);

/*
 * Runs the watcher on a thread of its own on the real clock, calling 'fn'
 * for each change. Add every file first. Returns 0, or -1 with why.
 * filewatch_free() stops it.
 */
int filewatch_start(struct filewatch *w, filewatch_fn fn, void *ctx, struct errbuf *err);

#endif
