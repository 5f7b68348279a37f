/*
 * sim/clouds/sim_cloud_kind: what a simulated cloud registers so that the
 * shared code — a scenario's sections, a world's flavour, `luascale sim`'s
 * options and faces — reaches it without naming it. Each <k>_face.h
 * declares its `sim_cloud_<k>`; the table is LUASCALE_SIM_CLOUDS, generated
 * from the <k>_face.c files, so adding a cloud adds files here only.
 */
#ifndef LUASCALE_SIM_CLOUD_KIND_H
#define LUASCALE_SIM_CLOUD_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "errbuf.h"

struct logger;
struct scenario_walk; /* sim/world/scenario_parse.h */
struct sim_cloud;
struct ytree_node;

/* At most this many `luascale sim` options per cloud. */
#define SIM_CLOUD_MAX_OPTS 8

/* One option of `luascale sim`: --<cloud>-<suffix> PORT or FILE. */
struct sim_cloud_opt {
	const char *suffix; /* "port", "env-out": --aws-port, --aws-env-out */
	bool port;          /* a port (127.0.0.1 only; 0: a free one), else a file's path */
	int dflt_port;      /* a port's value when not given (the first's is -1: not served) */
	const char *dflt;   /* a file's path when not given */
};

/* What `luascale sim` hands a face: each option's value, defaults filled in. */
struct sim_face_args {
	int port[SIM_CLOUD_MAX_OPTS];         /* a port option's value, by its index */
	const char *path[SIM_CLOUD_MAX_OPTS]; /* a file option's value, by its index */
	int64_t latency_ns;                   /* --fault latency=DUR: every answer waits */
	const struct logger *log;             /* borrowed */
};

struct sim_cloud_kind {
	const char *name; /* "aws": its scenario section's key and its options' prefix */
	/*
	 * The order the clouds came in (aws 1, gce 2, azure 3; a new cloud takes
	 * the next): their sections are read, their options listed and their
	 * faces served in it (sim_cloud_kind_next), so messages read as before.
	 */
	int rank;
	/*
	 * The message refusing its section after another cloud's (a scenario
	 * has one cloud), or NULL for the common one.
	 */
	const char *refusal;

	/*
	 * The scenario: parses its section 'm' into *conf (in x's arena), with
	 * the scenario's groups and faults already read; 0, or -1 with x's
	 * error set (sim/world/scenario_parse.h's helpers).
	 */
	int (*parse)(struct scenario_walk *x, const struct ytree_node *m, const void **conf);
	/* the taint a node gets when its instance is about to be interrupted (GKE's), or NULL */
	const char *interruption_taint;

	/*
	 * The world: its flavour of 'cloud' (borrowed) from the parsed section,
	 * NULL with a message; started once the starting nodes are in; freed
	 * (NULL: nothing) after the cloud.
	 */
	void *(*flavour_new)(struct sim_cloud *cloud, const void *conf, uint64_t seed,
			     struct errbuf *err);
	void (*flavour_start)(void *flavour);
	void (*flavour_free)(void *flavour);
};

/*
 * A cloud's face as `luascale sim` serves it (sim_face_<k>, at the end of
 * its <k>_face.c). Apart from sim_cloud_kind so that what runs a world
 * without serving it (bench_simulate, the replay, luascale test) links no
 * face and no HTTP server.
 */
struct sim_cloud_face {
	const struct sim_cloud_kind *kind;
	/*
	 * Its options (opts[0] the face's port: given, the face is served),
	 * the lines it adds to the usage's synopsis and its paragraph there
	 * (each ends with a newline).
	 */
	const struct sim_cloud_opt *opts;
	size_t n_opts;
	const char *synopsis;
	const char *usage;
	/*
	 * Serves the face of 'flavour' (borrowed) and writes its files: the
	 * face (free with face_free), or NULL with the message `luascale sim:`
	 * prints. face_announce prints where it is and what it wrote.
	 */
	void *(*face_serve)(void *flavour, const struct sim_face_args *a, struct errbuf *err);
	void (*face_announce)(const void *face, const struct sim_face_args *a, FILE *out);
	void (*face_free)(void *face);
};

/*
 * The registered clouds by rank: the first (prev NULL), or the one after
 * 'prev'; NULL after the last.
 */
const struct sim_cloud_kind *sim_cloud_kind_next(const struct sim_cloud_kind *prev);

/* The registered cloud called 'name', or NULL. */
const struct sim_cloud_kind *sim_cloud_kind_find(const char *name);

/* The registered faces in their clouds' rank order, as sim_cloud_kind_next
 * (sim_cloud_face.c: link it only to serve faces). */
const struct sim_cloud_face *sim_cloud_face_next(const struct sim_cloud_face *prev);

#endif
