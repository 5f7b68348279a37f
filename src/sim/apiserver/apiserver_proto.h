/*
 * sim/apiserver_proto: Kubernetes protobuf bodies for the simulated API
 * server — the "k8s\0" + runtime.Unknown envelope, and a translation
 * between an object's protobuf encoding and the JSON the handlers use,
 * driven by the descriptors protoc-c makes of the proto/k8s/ files.
 */
#ifndef LUASCALE_SIM_APISERVER_PROTO_H
#define LUASCALE_SIM_APISERVER_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#include "buf.h"
#include "errbuf.h"

struct cJSON;
struct reply;

/* The media type of Kubernetes protobuf bodies. */
#define APISERVER_PROTO_MEDIA "application/vnd.kubernetes.protobuf"

/* A kind the description covers: its group ("" core), version, and message. */
struct apiserver_proto_kind {
	const char *group;
	const char *version;
	const char *kind;
	const ProtobufCMessageDescriptor *desc;
};

/* Every kind described, and how many. */
extern const struct apiserver_proto_kind apiserver_proto_kinds[];
extern const size_t apiserver_proto_n_kinds;

/* The described message of apiVersion "v1" / "group/version" and kind,
 * or NULL. DeleteOptions is found under any apiVersion. */
const ProtobufCMessageDescriptor *apiserver_proto_find(const char *api_version, const char *kind);

/* Is field 'fd' of message 'desc' inline in JSON: its message's members
 * written in the holder's object (a pod Volume's source, a
 * PersistentVolume's)? */
bool apiserver_proto_is_inline(const ProtobufCMessageDescriptor *desc,
			       const ProtobufCFieldDescriptor *fd);

/* Does the field 'fd' of message 'desc' keep a zero value (a field the
 * Kubernetes types hold as a pointer, so 0, "" or false is a value)? */
bool apiserver_proto_keeps_zero(const ProtobufCMessageDescriptor *desc,
				const ProtobufCFieldDescriptor *fd);

/*
 * Decodes a protobuf body into a new JSON object carrying its apiVersion
 * and kind. On failure NULL, *code the HTTP status a real server gives
 * (400 malformed, 415 a kind or encoding outside the description) and a
 * message naming what failed and where (the byte offset, the JSON path).
 * A field the description lacks fails the body: it is never dropped.
 */
struct cJSON *apiserver_proto_decode(const void *data, size_t len, int *code, struct errbuf *err);

/*
 * Encodes a JSON object (with apiVersion and kind) as a protobuf body,
 * appended to 'out'. 0, or -1 with a message when its kind or one of its
 * fields is outside the description (nothing appended).
 */
int apiserver_proto_encode(const struct cJSON *obj, struct buf *out, struct errbuf *err);

/* Is this Content-Type protobuf (parameters allowed, none of stream=)? */
bool apiserver_proto_is_media(const char *content_type);

/*
 * What an Accept header prefers: 1 protobuf, 0 JSON (or no preference),
 * -1 protobuf only (nothing JSON would satisfy it).
 */
int apiserver_proto_accept(const char *accept);

/*
 * The same for a watch: a stream=watch parameter is allowed (clients ask
 * for "application/vnd.kubernetes.protobuf;stream=watch").
 */
int apiserver_proto_watch_accept(const char *accept);

/* The protobuf media type of a watch stream's answer. */
#define APISERVER_PROTO_WATCH_MEDIA APISERVER_PROTO_MEDIA ";stream=watch"

/*
 * Appends one frame of a protobuf watch stream, as the real server's
 * streaming serializer writes it: a 4-byte big-endian length, then a
 * meta.v1.WatchEvent (no envelope of its own) whose object is a
 * RawExtension holding 'obj' encoded as a protobuf body ("k8s\0" and the
 * runtime.Unknown envelope). 0, or -1 with a message (nothing appended)
 * when 'obj' is outside the description.
 */
int apiserver_proto_watch_frame(struct buf *out, const char *type, const struct cJSON *obj,
				struct errbuf *err);

/*
 * The request side of content negotiation: a POST, PUT or DELETE body in
 * protobuf becomes its JSON in 'body'. 1 (the body is JSON now), 0 (it
 * was never protobuf: untouched), or -1 with 'out' answered (400 or 415
 * Status). A PATCH's body is its patch type's, never decoded.
 */
int apiserver_proto_request(const char *method, const char *content_type, struct buf *body,
			    struct reply *out);

/*
 * The response side: when 'accept' prefers protobuf and the JSON answer
 * in 'out' is a kind the description covers, 'out' becomes protobuf; a
 * client that takes only protobuf gets 406 for anything else. Watches,
 * Tables and non-JSON answers are left alone.
 */
void apiserver_proto_reply(const char *accept, struct reply *out);

#endif
