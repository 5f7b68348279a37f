/*
 * filewatch: inotify on the folders of followed files, a quiet time per
 * file, and a fingerprint (inode, size, mtime through symlinks) so that
 * only a real change of a followed file is reported. The thread runner
 * sits at the end; the rest is driven by the caller's clock.
 */

#include "runtime/filewatch.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/clock.h"

#define DIR_EVENTS (IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM | \
		    IN_DELETE_SELF | IN_MOVE_SELF)

struct fingerprint {
	bool present;
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
};

struct entry {
	bool used;
	char *path;
	char *dir;
	char *base;
	int wd;
	struct fingerprint seen;
	bool pending;
	int64_t deadline;
};

struct filewatch {
	int fd;
	int64_t debounce_ns;
	struct entry e[FILEWATCH_MAX];
	/* the thread runner */
	bool started;
	pthread_t thread;
	int wake; /* eventfd: filewatch_free() ends the thread */
	filewatch_fn fn;
	void *ctx;
};

static void fingerprint_of(const char *path, struct fingerprint *f)
{
	struct stat st;

	memset(f, 0, sizeof(*f));
	if (stat(path, &st) != 0)
		return;
	f->present = true;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

static bool fingerprint_same(const struct fingerprint *a, const struct fingerprint *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->mtime_ns == b->mtime_ns;
}

struct filewatch *filewatch_new(int64_t debounce_ns, struct errbuf *err)
{
	struct filewatch *w = calloc(1, sizeof(*w));

	if (!w) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	w->wake = -1;
	w->debounce_ns = debounce_ns > 0 ? debounce_ns : 0;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		errbuf_set(err, "cannot watch files (inotify): %s", strerror(errno));
		free(w);
		return NULL;
	}
	return w;
}

void filewatch_free(struct filewatch *w)
{
	size_t i;

	if (!w)
		return;
	if (w->started) {
		uint64_t one = 1;

		if (write(w->wake, &one, sizeof(one)) < 0) {
			/* an eventfd write fails only on overflow: it is readable then */
		}
		pthread_join(w->thread, NULL);
	}
	if (w->wake >= 0)
		close(w->wake);
	close(w->fd);
	for (i = 0; i < FILEWATCH_MAX; i++) {
		free(w->e[i].path);
		free(w->e[i].dir);
		free(w->e[i].base);
	}
	free(w);
}

int filewatch_add(struct filewatch *w, const char *path, unsigned id, struct errbuf *err)
{
	struct entry *e;
	const char *slash;

	if (id >= FILEWATCH_MAX)
		return errbuf_set(err, "file watch id %u out of range", id);
	if (!path || !*path)
		return errbuf_set(err, "no file to watch");
	e = &w->e[id];
	if (e->used)
		return errbuf_set(err, "file watch id %u is taken (%s)", id, e->path);
	slash = strrchr(path, '/');
	e->path = strdup(path);
	if (slash) {
		e->dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
		e->base = strdup(slash + 1);
	} else {
		e->dir = strdup(".");
		e->base = strdup(path);
	}
	if (!e->path || !e->dir || !e->base)
		return errbuf_set(err, "out of memory");
	if (!*e->base)
		return errbuf_set(err, "%s: not a file name", path);
	e->wd = inotify_add_watch(w->fd, e->dir, DIR_EVENTS | IN_ONLYDIR);
	if (e->wd < 0)
		return errbuf_set(err, "cannot watch the folder %s of %s: %s", e->dir, path,
				  strerror(errno));
	fingerprint_of(e->path, &e->seen);
	e->used = true;
	return 0;
}

int filewatch_fd(const struct filewatch *w)
{
	return w->fd;
}

const char *filewatch_path(const struct filewatch *w, unsigned id)
{
	return id < FILEWATCH_MAX && w->e[id].used ? w->e[id].path : NULL;
}

/* Whether event 'ev' (of a folder an entry is in) can change entry 'e'. */
static bool concerns(const struct entry *e, const struct inotify_event *ev)
{
	const char *name = ev->len ? ev->name : "";

	if (ev->wd != e->wd)
		return false;
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF))
		return true;
	if (ev->mask & IN_CREATE) {
		/* a new regular file is not final before it is closed; a new
		 * symlink is complete at once (kubelet's ..data_tmp) */
		struct stat st;
		char p[PATH_MAX];

		if (ev->mask & IN_ISDIR)
			return false;
		snprintf(p, sizeof(p), "%s/%s", e->dir, name);
		if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
			return false;
	}
	return strcmp(name, e->base) == 0 || strncmp(name, "..", 2) == 0;
}

static void mark(struct entry *e, int64_t when)
{
	e->pending = true;
	e->deadline = when;
}

int filewatch_read(struct filewatch *w, int64_t now, struct errbuf *err)
{
	char evbuf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	int hits = 0;

	for (;;) {
		ssize_t n = read(w->fd, evbuf, sizeof(evbuf));
		char *p;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return hits;
		if (n <= 0)
			return errbuf_set(err, "reading file events: %s",
					  n < 0 ? strerror(errno) : "end of file");
		for (p = evbuf; p < evbuf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			size_t i;

			for (i = 0; i < FILEWATCH_MAX; i++) {
				struct entry *e = &w->e[i];

				if (!e->used)
					continue;
				if ((ev->mask & IN_Q_OVERFLOW) || concerns(e, ev)) {
					mark(e, now + w->debounce_ns);
					hits++;
				}
			}
			p += sizeof(struct inotify_event) + ev->len;
		}
	}
}

uint32_t filewatch_due(struct filewatch *w, int64_t now)
{
	uint32_t changed = 0;
	unsigned i;

	for (i = 0; i < FILEWATCH_MAX; i++) {
		struct entry *e = &w->e[i];
		struct fingerprint f;

		if (!e->used || !e->pending || e->deadline > now)
			continue;
		e->pending = false;
		fingerprint_of(e->path, &f);
		if (fingerprint_same(&f, &e->seen))
			continue;
		e->seen = f;
		if (f.present)
			changed |= 1u << i;
	}
	return changed;
}

int64_t filewatch_deadline(const struct filewatch *w)
{
	int64_t d = -1;
	size_t i;

	for (i = 0; i < FILEWATCH_MAX; i++)
		if (w->e[i].used && w->e[i].pending && (d < 0 || w->e[i].deadline < d))
			d = w->e[i].deadline;
	return d;
}

static void *watch_thread(void *arg)
{
	struct filewatch *w = arg;
	struct clock *clock = clock_real();

	for (;;) {
		struct pollfd pf[2] = {{w->fd, POLLIN, 0}, {w->wake, POLLIN, 0}};
		int64_t d = filewatch_deadline(w), now = clock_now(clock);
		int timeout = -1;
		struct errbuf err;
		uint32_t changed;

		if (d >= 0)
			timeout = d <= now ? 0 : (int)((d - now + 999999) / 1000000);
		if (poll(pf, 2, timeout) < 0 && errno != EINTR)
			break;
		if (pf[1].revents)
			break;
		if ((pf[0].revents & POLLIN) && filewatch_read(w, clock_now(clock), &err) < 0)
			break;
		changed = filewatch_due(w, clock_now(clock));
		if (changed)
			w->fn(w->ctx, changed);
	}
	return NULL;
}

int filewatch_start(struct filewatch *w, filewatch_fn fn, void *ctx, struct errbuf *err)
{
	if (w->started)
		return errbuf_set(err, "the file watcher runs already");
	w->wake = eventfd(0, EFD_CLOEXEC);
	if (w->wake < 0)
		return errbuf_set(err, "cannot watch files: eventfd: %s", strerror(errno));
	w->fn = fn;
	w->ctx = ctx;
	if (pthread_create(&w->thread, NULL, watch_thread, w) != 0)
		return errbuf_set(err, "cannot start the file watcher thread");
	w->started = true;
	return 0;
}
