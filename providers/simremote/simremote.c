/*
 * providers/simremote: HTTP calls to the simulator's cloud endpoints, with
 * the provider's token buckets in front of them.
 */
#include "providers/simremote/simremote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/client.h"
#include "runtime/clock.h"

#define BASE "/apis/sim.luascale.io/v1/"
#define TOKEN_WAIT_NS (60 * CLOCK_NS_PER_S)

struct simremote {
	struct kube_client *client;
};

/* The simulator's error name ("Throttled", "NoCapacity", ...; the
 * provider_error_str() words are taken too) as a provider error. */
static enum provider_error error_from_name(const char *name)
{
	static const struct {
		const char *wire;
		enum provider_error e;
	} all[] = {
		{"Throttled", PROVIDER_THROTTLED}, {"NoCapacity", PROVIDER_NO_CAPACITY},
		{"Quota", PROVIDER_QUOTA},         {"NotFound", PROVIDER_NOT_FOUND},
		{"Invalid", PROVIDER_INVALID},     {"Transient", PROVIDER_TRANSIENT},
		{"Auth", PROVIDER_AUTH},           {"Cancelled", PROVIDER_CANCELLED},
	};
	size_t i;

	if (!name || !*name)
		return PROVIDER_OK;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(name, all[i].wire) == 0 || strcmp(name, provider_error_str(all[i].e)) == 0)
			return all[i].e;
	return PROVIDER_TRANSIENT;
}

/* The answer's retryAfterSeconds (0 when none). */
static int64_t retry_after_of(const cJSON *doc)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "retryAfterSeconds");

	return cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 1e9 ? (int64_t)v->valuedouble : 0;
}

static void set_status(struct provider_status *st, enum provider_error code, const char *msg)
{
	st->code = code;
	st->retry_after_s = 0;
	snprintf(st->message, sizeof(st->message), "%.*s", (int)sizeof(st->message) - 1, msg ? msg : "");
}

/* Waits for a token of 'rl' (NULL: no limit). */
static int take_token(struct ratelimit *rl, struct provider_status *st)
{
	if (!rl)
		return 0;
	return provider_take_token(rl, clock_now(clock_real()) + TOKEN_WAIT_NS, clock_real(), st);
}

/* POSTs 'body' to BASE 'what'; on success returns the parsed answer. */
static cJSON *call(struct simremote *r, const char *method, const char *what, const char *body,
		   struct provider_status *st)
{
	struct kube_response resp;
	struct errbuf err;
	char path[128];
	cJSON *doc;

	memset(&resp, 0, sizeof(resp));
	snprintf(path, sizeof(path), BASE "%s", what);
	if (kube_request(r->client, method, path, body ? KUBE_CT_JSON : NULL, body,
			 body ? strlen(body) : 0, &resp, &err) < 0) {
		set_status(st, PROVIDER_TRANSIENT, err.msg);
		return NULL;
	}
	if (resp.status == 429 || resp.status >= 500) {
		set_status(st, resp.status == 429 ? PROVIDER_THROTTLED : PROVIDER_TRANSIENT,
			   resp.message[0] ? resp.message : "the simulator refused the call");
		kube_response_free(&resp);
		return NULL;
	}
	if (resp.status != 200) {
		set_status(st, PROVIDER_INVALID, resp.message[0] ? resp.message : "bad request");
		kube_response_free(&resp);
		return NULL;
	}
	doc = cJSON_ParseWithLength(resp.body ? resp.body : "", resp.body_len);
	kube_response_free(&resp);
	if (!doc)
		set_status(st, PROVIDER_TRANSIENT, "the simulator answered with malformed JSON");
	return doc;
}

static const char *str_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static int list_groups(struct provider *p, struct provider_group **groups, size_t *n,
		       struct provider_status *st)
{
	struct simremote *r = p->impl;
	const cJSON *items, *g;
	struct provider_group *out;
	cJSON *doc;
	size_t i = 0;

	*groups = NULL;
	*n = 0;
	set_status(st, PROVIDER_OK, "");
	if (take_token(p->reads, st) < 0 || !(doc = call(r, "GET", "groups", NULL, st)))
		return -1;
	items = cJSON_GetObjectItemCaseSensitive(doc, "items");
	out = calloc((size_t)cJSON_GetArraySize(items) + 1, sizeof(*out));
	if (!out) {
		cJSON_Delete(doc);
		set_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	cJSON_ArrayForEach(g, items) {
		const cJSON *insts = cJSON_GetObjectItemCaseSensitive(g, "instances"), *in;
		struct provider_group *pg = &out[i++];
		size_t k = 0;

		snprintf(pg->name, sizeof(pg->name), "%s", str_of(g, "name"));
		pg->min = cJSON_GetObjectItemCaseSensitive(g, "min") ?
			  (int)cJSON_GetObjectItemCaseSensitive(g, "min")->valuedouble : 0;
		pg->max = cJSON_GetObjectItemCaseSensitive(g, "max") ?
			  (int)cJSON_GetObjectItemCaseSensitive(g, "max")->valuedouble : 0;
		pg->target = cJSON_GetObjectItemCaseSensitive(g, "target") ?
			     (int)cJSON_GetObjectItemCaseSensitive(g, "target")->valuedouble : 0;
		pg->instances = calloc((size_t)cJSON_GetArraySize(insts) + 1, sizeof(*pg->instances));
		if (!pg->instances)
			continue;
		cJSON_ArrayForEach(in, insts) {
			struct provider_instance *pi = &pg->instances[k++];
			const char *state = str_of(in, "state");

			snprintf(pi->id, sizeof(pi->id), "%s", str_of(in, "id"));
			snprintf(pi->provider_id, sizeof(pi->provider_id), "%s", str_of(in, "providerID"));
			snprintf(pi->group, sizeof(pi->group), "%s", pg->name);
			pi->state = strcmp(state, "running") == 0 ? INSTANCE_RUNNING :
				    strcmp(state, "stopping") == 0 ? INSTANCE_STOPPING :
				    strcmp(state, "gone") == 0 ? INSTANCE_GONE : INSTANCE_PENDING;
			if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(in, "launched")) &&
			    cJSON_GetObjectItemCaseSensitive(in, "launched")->valuedouble > 0)
				pi->launched_wall = (int64_t)cJSON_GetObjectItemCaseSensitive(in, "launched")->valuedouble;
			snprintf(pi->outdated, sizeof(pi->outdated), "%s", str_of(in, "outdated"));
		}
		pg->n_instances = k;
	}
	cJSON_Delete(doc);
	*groups = out;
	*n = i;
	return 0;
}

static void launch(struct provider *p, const char *group, int count,
		   provider_instance_cb on_instance, provider_done_cb on_done, void *ctx)
{
	struct simremote *r = p->impl;
	struct provider_status st;
	const cJSON *launched, *in;
	char *body = NULL;
	cJSON *doc, *req;
	int made = 0;

	set_status(&st, PROVIDER_OK, "");
	if (take_token(p->mutating, &st) < 0)
		goto done;
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "group", group);
	cJSON_AddNumberToObject(req, "count", count);
	body = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	if (!body) {
		set_status(&st, PROVIDER_TRANSIENT, "out of memory");
		goto done;
	}
	doc = call(r, "POST", "launch", body, &st);
	free(body);
	if (!doc)
		goto done;
	launched = cJSON_GetObjectItemCaseSensitive(doc, "launched");
	cJSON_ArrayForEach(in, launched) {
		struct provider_instance pi;

		memset(&pi, 0, sizeof(pi));
		snprintf(pi.id, sizeof(pi.id), "%s", str_of(in, "id"));
		snprintf(pi.provider_id, sizeof(pi.provider_id), "%s", str_of(in, "providerID"));
		snprintf(pi.group, sizeof(pi.group), "%s", group);
		pi.state = INSTANCE_PENDING;
		made++;
		if (on_instance)
			on_instance(ctx, &pi);
	}
	set_status(&st, error_from_name(str_of(doc, "error")), str_of(doc, "message"));
	st.retry_after_s = retry_after_of(doc);
	cJSON_Delete(doc);
done:
	if (on_done)
		on_done(ctx, made, &st);
}

static void terminate(struct provider *p, const char *group, const char *const *ids, size_t n,
		      provider_done_cb on_done, void *ctx)
{
	struct simremote *r = p->impl;
	struct provider_status st;
	cJSON *req, *arr, *doc = NULL;
	char *body = NULL;
	int count = 0;
	size_t i;

	set_status(&st, PROVIDER_OK, "");
	if (take_token(p->mutating, &st) < 0)
		goto done;
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "group", group);
	arr = cJSON_AddArrayToObject(req, "ids");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(ids[i]));
	body = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	if (!body) {
		set_status(&st, PROVIDER_TRANSIENT, "out of memory");
		goto done;
	}
	doc = call(r, "POST", "terminate", body, &st);
	free(body);
	if (!doc)
		goto done;
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(doc, "terminated")))
		count = (int)cJSON_GetObjectItemCaseSensitive(doc, "terminated")->valuedouble;
	set_status(&st, error_from_name(str_of(doc, "error")), str_of(doc, "message"));
	st.retry_after_s = retry_after_of(doc);
	cJSON_Delete(doc);
done:
	if (on_done)
		on_done(ctx, count, &st);
}

/* "sim://GROUP/ID" */
static int map_node(struct provider *p, const char *provider_id, char *group, size_t glen,
		    char *instance, size_t ilen)
{
	const char *g, *slash;

	(void)p;
	if (strncmp(provider_id, "sim://", 6) != 0)
		return -1;
	g = provider_id + 6;
	slash = strchr(g, '/');
	if (!slash || slash == g || !slash[1])
		return -1;
	snprintf(group, glen, "%.*s", (int)(slash - g), g);
	snprintf(instance, ilen, "%s", slash + 1);
	return 0;
}

static void sr_free(struct provider *p)
{
	ratelimit_free(p->mutating);
	ratelimit_free(p->reads);
	free(p->impl);
	free(p);
}

static const struct provider_ops simremote_ops = {
	.kind = "simremote",
	.list_groups = list_groups,
	.launch = launch,
	.terminate = terminate,
	.map_node = map_node,
	.free = sr_free,
};

struct provider *simremote_provider_new(struct kube_client *client,
					const struct provider_limits *lim, struct errbuf *err)
{
	struct provider *p = calloc(1, sizeof(*p));
	struct simremote *r = calloc(1, sizeof(*r));

	if (!p || !r) {
		free(p);
		free(r);
		errbuf_set(err, "out of memory");
		return NULL;
	}
	r->client = client;
	p->ops = &simremote_ops;
	p->impl = r;
	if (lim && lim->mutating_qps > 0)
		p->mutating = ratelimit_new(clock_real(), lim->mutating_qps,
					    lim->mutating_burst > 0 ? lim->mutating_burst : 1);
	if (lim && lim->read_qps > 0)
		p->reads = ratelimit_new(clock_real(), lim->read_qps,
					 lim->read_burst > 0 ? lim->read_burst : 1);
	if ((lim && lim->mutating_qps > 0 && !p->mutating) || (lim && lim->read_qps > 0 && !p->reads)) {
		sr_free(p);
		errbuf_set(err, "invalid provider rate limits");
		return NULL;
	}
	return p;
}
