/*
 * provider: what all providers share — error names, the messages of a
 * cloud's errors and their likely causes, the group array, node templates
 * (and the Cluster Autoscaler's node-template tags), and the turns and
 * claims that keep launches of one group from racing.
 */
#include "providers/provider.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "quantity.h"

const char *provider_interruption_kind_str(enum provider_interruption_kind k)
{
	switch (k) {
	case PROVIDER_INTERRUPT_SPOT_INTERRUPTION: return "spot_interruption";
	case PROVIDER_INTERRUPT_REBALANCE: return "rebalance";
	case PROVIDER_INTERRUPT_SCHEDULED_CHANGE: return "scheduled_change";
	case PROVIDER_INTERRUPT_STOPPING: return "stopping";
	case PROVIDER_INTERRUPT_TERMINATED: return "terminated";
	}
	return "unknown";
}

bool provider_error_backs_off_group(enum provider_error e)
{
	return e == PROVIDER_NO_CAPACITY || e == PROVIDER_QUOTA || e == PROVIDER_INVALID ||
	       e == PROVIDER_AUTH;
}

/* ---- a cloud's error: its likely cause and its message ---- */

/*
 * The codes below are the ones the clouds and their SDKs document; none is
 * guessed from a message alone.
 *
 * AWS. Clock skew: the SDKs' "definite" clock-skew codes RequestTimeTooSkewed,
 * RequestExpired, RequestInTheFuture, and their "possible" ones
 * InvalidSignatureException, SignatureDoesNotMatch, AuthFailure (aws-sdk-java-v2
 * SdkDefaultRetrySetting, aws-sdk-net's retry policy, @smithy/service-error-
 * classification constants.ts), a possible one counting as skew only when its
 * message says so ("Signature expired: 20191029T154623Z is now earlier than
 * ...", "Signature not yet current", "too skewed") and as a wrong key else
 * (EC2's AuthFailure: "The provided credentials could not be validated").
 * Wrong key: InvalidClientTokenId ("The X.509 certificate or AWS access key ID
 * provided does not exist in our records"), InvalidAccessKeyId,
 * UnrecognizedClientException. Missing permission: UnauthorizedOperation,
 * AccessDenied, AccessDeniedException, NotAuthorized (docs.aws.amazon.com:
 * AWSEC2/latest/APIReference/errors-overview.html, CommonErrors).
 *
 * Entra ID (learn.microsoft.com entra/identity-platform/reference-error-codes,
 * "AADSTSnnn: ..." at the start of error_description). Clock: AADSTS700024
 * (client assertion not within its valid time range), AADSTS500133 (assertion
 * not within its valid time range). Wrong key: AADSTS7000215 (invalid client
 * secret), AADSTS7000222 (the client secret keys are expired), AADSTS70002
 * (client_secret does not match), AADSTS700016 (application not found in the
 * tenant: a wrong client id), AADSTS70021 (no federated identity record
 * matches the assertion), AADSTS700027 (client assertion failed signature
 * validation), and the OAuth error invalid_client (RFC 6749 section 5.2).
 * Azure Resource Manager: AuthorizationFailed, LinkedAuthorizationFailed (no
 * role assignment allows the action).
 *
 * Google. The token endpoint's invalid_grant with "Invalid JWT: Token must be
 * a short-lived token (60 minutes) and in a reasonable timeframe. Check your
 * iat and exp values ..." (clock) or "Invalid JWT Signature." (a wrong or
 * deleted key; also "account not found"), invalid_client; APIs: the
 * google.rpc.Code PERMISSION_DENIED (HTTP 403), compute's error reasons
 * forbidden and insufficientPermissions, ACCESS_TOKEN_SCOPE_INSUFFICIENT
 * (the instance's access scopes leave the call out).
 */

/* Case-insensitive substring test; NULL holds nothing. */
static bool says(const char *haystack, const char *needle)
{
	size_t n = strlen(needle);
	const char *p;

	if (!haystack)
		return false;
	for (p = haystack; *p; p++)
		if (strncasecmp(p, needle, n) == 0)
			return true;
	return false;
}

static bool one_of(const char *code, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(code, *list) == 0)
			return true;
	return false;
}

/* The message says a signature or token is out of its time. */
static bool says_time(const char *m)
{
	return says(m, "Signature expired") || says(m, "not yet current") ||
	       says(m, "too skewed") || says(m, "not yet valid") || says(m, "clock skew") ||
	       says(m, "reasonable timeframe") || says(m, "short-lived token") ||
	       says(m, "iat and exp");
}

/* "AADSTS7000215" from a message "AADSTS7000215: ..." into 'out'; false if none. */
static bool aadsts_of(const char *m, char *out, size_t len)
{
	size_t n = 6;

	if (!m || strncmp(m, "AADSTS", 6) != 0)
		return false;
	while (isdigit((unsigned char)m[n]))
		n++;
	if (n == 6 || n >= len)
		return false;
	memcpy(out, m, n);
	out[n] = '\0';
	return true;
}

enum provider_cause provider_error_cause(const char *code, const char *message)
{
	static const char *const aws_definite_skew[] = {
		"RequestTimeTooSkewed", "RequestExpired", "RequestInTheFuture", NULL };
	static const char *const possible_skew[] = {
		"InvalidSignatureException", "SignatureDoesNotMatch", "AuthFailure", NULL };
	static const char *const entra_skew[] = { "AADSTS700024", "AADSTS500133", NULL };
	static const char *const wrong_key[] = {
		"InvalidClientTokenId", "InvalidAccessKeyId", "UnrecognizedClientException",
		"AADSTS7000215", "AADSTS7000222", "AADSTS70002", "AADSTS700016", "AADSTS70021",
		"AADSTS700027", "invalid_client", NULL };
	static const char *const no_role[] = {
		"UnauthorizedOperation", "AccessDenied", "AccessDeniedException", "NotAuthorized",
		"AuthorizationFailed", "LinkedAuthorizationFailed", "PERMISSION_DENIED", "forbidden",
		"insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT", NULL };
	char aad[24];
	const char *c = code && *code ? code : "";

	/* "Client.UnauthorizedOperation": EC2's older spelling */
	if (!strncmp(c, "Client.", 7))
		c += 7;
	/* an Entra error names its AADSTS code at the head of the description */
	if (aadsts_of(message, aad, sizeof(aad)) && strncmp(c, "AADSTS", 6) != 0)
		c = aad;
	if (!*c)
		return PROVIDER_CAUSE_NONE;
	if (one_of(c, aws_definite_skew) || one_of(c, entra_skew))
		return PROVIDER_CAUSE_CLOCK;
	if (one_of(c, possible_skew))
		return says_time(message) ? PROVIDER_CAUSE_CLOCK : PROVIDER_CAUSE_KEY;
	if (!strcmp(c, "invalid_grant")) {
		if (says_time(message))
			return PROVIDER_CAUSE_CLOCK;
		if (says(message, "Invalid JWT Signature") || says(message, "account not found"))
			return PROVIDER_CAUSE_KEY;
		return PROVIDER_CAUSE_NONE;
	}
	if (one_of(c, wrong_key))
		return PROVIDER_CAUSE_KEY;
	if (one_of(c, no_role))
		return PROVIDER_CAUSE_ROLE;
	return PROVIDER_CAUSE_NONE;
}

const char *provider_cause_hint(enum provider_cause c)
{
	switch (c) {
	case PROVIDER_CAUSE_CLOCK:
		return "clock skew: this machine's clock differs from the cloud's; check its time "
		       "sync with chrony or NTP, or whether a signed token was used outside its "
		       "valid time";
	case PROVIDER_CAUSE_KEY:
		return "wrong key or secret: the key, secret or client id is not one the cloud "
		       "knows; it may be mistyped, rotated, deleted or expired";
	case PROVIDER_CAUSE_ROLE:
		return "missing role or permission: the identity is known but not allowed this "
		       "call; grant it an IAM policy or role assignment that allows it";
	case PROVIDER_CAUSE_NONE:
		break;
	}
	return "";
}

/* The context kept when the message must be cut for it (bytes). */
#define CONTEXT_KEEP 400
/* The longest code kept (the clouds' are a few dozen bytes). */
#define CODE_MAX 128

/*
 * Copies 's' into 'out' (at most 'cap' bytes, no NUL) as one line: control
 * characters become spaces, runs of blanks one space, leading and trailing
 * blanks go. Returns the bytes written; '*cut' tells whether 's' was longer.
 */
static size_t clean(char *out, size_t cap, const char *s, bool *cut)
{
	size_t n = 0;
	bool blank = true; /* drops leading blanks */

	*cut = false;
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f || ch == ' ') {
			blank = true;
			continue;
		}
		if (blank && n > 0) {
			if (n + 1 >= cap) {
				*cut = true;
				break;
			}
			out[n++] = ' ';
		}
		blank = false;
		if (n >= cap) {
			*cut = true;
			break;
		}
		out[n++] = (char)ch;
	}
	return n;
}

/* Steps back over UTF-8 continuation bytes so a cut at 'n' splits no character. */
static size_t utf8_cut(const char *s, size_t n)
{
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

size_t provider_cloud_message(char *out, size_t len, const char *code, const char *message,
			      const char *context)
{
	char c[CODE_MAX + 1], m[PROVIDER_MESSAGE_MAX], x[PROVIDER_MESSAGE_MAX], hint[300];
	size_t nc, nm, nx, nh, room, keep, n = 0;
	enum provider_cause why = provider_error_cause(code, message);
	bool cut_c, cut_m, cut_x;

	if (!out || len == 0)
		return 0;
	nc = clean(c, CODE_MAX, code, &cut_c);
	c[nc] = '\0';
	/* "AADSTS7000215: Invalid ..." under code AADSTS7000215: the code once */
	if (nc && message && !strncmp(message, c, nc) && message[nc] == ':')
		message += nc + 1;
	nm = clean(m, sizeof(m) - 1, message, &cut_m);
	nx = clean(x, sizeof(x) - 1, context, &cut_x);
	nh = why ? (size_t)snprintf(hint, sizeof(hint), " (likely cause: %s)",
				    provider_cause_hint(why)) : 0;
	if (nh >= sizeof(hint))
		nh = sizeof(hint) - 1;
	hint[nh] = '\0';
	/* what the message may take: all but the code, the hint and some context */
	room = len - 1;
	/* the context's head is kept too: CONTEXT_KEEP bytes, a fifth of a small buffer */
	keep = nx ? 2 + nx : 0;
	if (keep > CONTEXT_KEEP)
		keep = CONTEXT_KEEP;
	if (keep > room / 5)
		keep = room / 5;
	keep += nc + (nc && nm ? 2 : 0) + nh;
	room = room > keep ? room - keep : 0;
	if (nm > room || cut_m) {
		nm = room > 3 ? utf8_cut(m, room - 3) : 0;
		while (nm > 0 && m[nm - 1] == ' ')
			nm--;
		if (room >= 3) {
			memcpy(m + nm, "...", 3);
			nm += 3;
		}
	}
	m[nm] = '\0';
	x[nx] = '\0';
	n = (size_t)snprintf(out, len, "%s%s%s%s%s%s", c, nc && nm ? ": " : "", m, hint,
			     nx && (nc || nm || nh) ? "; " : "", x);
	if (n >= len) {
		/* only the context overflowed: end on a whole character */
		n = utf8_cut(out, len - 1);
		out[n] = '\0';
	}
	return n;
}

void provider_status_cloud(struct provider_status *st, enum provider_error cls, const char *code,
			   const char *message, const char *fmt, ...)
{
	char ctx[PROVIDER_MESSAGE_MAX];
	va_list ap;

	ctx[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(ctx, sizeof(ctx), fmt, ap);
		va_end(ap);
	}
	st->code = cls;
	provider_cloud_message(st->message, sizeof(st->message), code, message, ctx);
}

/* Grows '*arr' (of 'size' bytes each) by one; returns the new slot or NULL. */
static void *grow(void *arr, size_t n, size_t size, void **out)
{
	void *p = realloc(arr, (n + 1) * size);

	*out = p;
	if (!p)
		return NULL;
	memset((char *)p + n * size, 0, size);
	return (char *)p + n * size;
}

int provider_template_label(struct provider_template *t, const char *key, const char *value)
{
	struct provider_label *l = NULL;
	char *k, *v;
	size_t i;
	void *arr;

	for (i = 0; i < t->n_labels; i++)
		if (!strcmp(t->labels[i].key, key))
			l = &t->labels[i];
	if (!(v = strdup(value)))
		return -1;
	if (l) {
		free(l->value);
		l->value = v;
		return 0;
	}
	if (!(k = strdup(key)) || !(l = grow(t->labels, t->n_labels, sizeof(*l), &arr))) {
		free(k);
		free(v);
		return -1;
	}
	t->labels = arr;
	t->n_labels++;
	l->key = k;
	l->value = v;
	return 0;
}

int provider_template_taint(struct provider_template *t, const char *key, const char *value,
			    const char *effect)
{
	struct provider_taint *tt = NULL;
	char *k, *v;
	size_t i;
	void *arr;

	if (strcmp(effect, "NoSchedule") && strcmp(effect, "PreferNoSchedule") &&
	    strcmp(effect, "NoExecute"))
		return -1;
	for (i = 0; i < t->n_taints; i++)
		if (!strcmp(t->taints[i].key, key) && !strcmp(t->taints[i].effect, effect))
			tt = &t->taints[i];
	if (!(v = strdup(value)))
		return -1;
	if (tt) {
		free(tt->value);
		tt->value = v;
		return 0;
	}
	if (!(k = strdup(key)) || !(tt = grow(t->taints, t->n_taints, sizeof(*tt), &arr))) {
		free(k);
		free(v);
		return -1;
	}
	t->taints = arr;
	t->n_taints++;
	tt->key = k;
	tt->value = v;
	snprintf(tt->effect, sizeof(tt->effect), "%s", effect);
	return 0;
}

int provider_template_resource(struct provider_template *t, const char *name, int64_t value)
{
	struct provider_resource *r;
	char *nm;
	size_t i;
	void *arr;

	for (i = 0; i < t->n_resources; i++)
		if (!strcmp(t->resources[i].name, name)) {
			t->resources[i].value = value;
			return 0;
		}
	if (!(nm = strdup(name)) || !(r = grow(t->resources, t->n_resources, sizeof(*r), &arr))) {
		free(nm);
		return -1;
	}
	t->resources = arr;
	t->n_resources++;
	r->name = nm;
	r->value = value;
	return 0;
}

int provider_template_tag(struct provider_template *t, const char *kind, const char *key,
			  const char *value)
{
	struct errbuf e;
	int64_t q;

	if (strcmp(kind, "label") && strcmp(kind, "taint") && strcmp(kind, "resources"))
		return 1;
	if (!key[0])
		return -1;
	if (!strcmp(kind, "label"))
		return provider_template_label(t, key, value);
	if (!strcmp(kind, "taint")) {
		const char *colon = strrchr(value, ':');
		char val[256];

		if (!colon || (size_t)(colon - value) >= sizeof(val))
			return -1;
		snprintf(val, sizeof(val), "%.*s", (int)(colon - value), value);
		return provider_template_taint(t, key, val, colon + 1);
	}
	if (quantity_parse(value, strcmp(key, "cpu") ? QUANTITY_UNIT : QUANTITY_MILLI, &q, &e) < 0 || q < 0)
		return -1;
	if (!strcmp(key, "cpu"))
		t->cpu_m = q;
	else if (!strcmp(key, "memory"))
		t->memory = q;
	else if (!strcmp(key, "pods"))
		t->pods = q;
	else if (!strcmp(key, "nvidia.com/gpu"))
		t->gpus = q;
	else if (strcmp(key, "ephemeral-storage"))
		return provider_template_resource(t, key, q);
	return 0;
}

int64_t provider_reserved_cpu_m(int cpus)
{
	int64_t r = 0;
	int i;

	for (i = 1; i <= cpus; i++)
		r += i == 1 ? 600 : i == 2 ? 100 : i <= 4 ? 50 : 25;
	return r / 10;
}

int provider_template_copy(struct provider_template *dst, const struct provider_template *src)
{
	size_t i;

	*dst = *src;
	dst->labels = NULL;
	dst->taints = NULL;
	dst->resources = NULL;
	dst->n_labels = dst->n_taints = dst->n_resources = 0;
	for (i = 0; i < src->n_labels; i++)
		if (provider_template_label(dst, src->labels[i].key, src->labels[i].value) < 0)
			return -1;
	for (i = 0; i < src->n_taints; i++)
		if (provider_template_taint(dst, src->taints[i].key, src->taints[i].value,
					    src->taints[i].effect) < 0)
			return -1;
	for (i = 0; i < src->n_resources; i++)
		if (provider_template_resource(dst, src->resources[i].name, src->resources[i].value) < 0)
			return -1;
	return 0;
}

void provider_template_clear(struct provider_template *t)
{
	size_t i;

	for (i = 0; i < t->n_labels; i++) {
		free(t->labels[i].key);
		free(t->labels[i].value);
	}
	for (i = 0; i < t->n_taints; i++) {
		free(t->taints[i].key);
		free(t->taints[i].value);
	}
	for (i = 0; i < t->n_resources; i++)
		free(t->resources[i].name);
	free(t->labels);
	free(t->taints);
	free(t->resources);
	t->labels = NULL;
	t->taints = NULL;
	t->resources = NULL;
	t->n_labels = t->n_taints = t->n_resources = 0;
}

void provider_groups_free(struct provider_group *groups, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		free(groups[i].instances);
		provider_template_clear(&groups[i].tmpl);
		for (j = 0; j < groups[i].n_types; j++)
			provider_template_clear(&groups[i].types[j]);
		free(groups[i].types);
	}
	free(groups);
}

void provider_limits_from(struct provider_limits *out, const struct config *c)
{
	out->mutating_qps = c->provider_qps;
	out->mutating_burst = (int)c->provider_burst;
	out->read_qps = c->provider_read_qps;
	out->read_burst = (int)c->provider_read_burst;
}

/* ---- turns and claims ---- */

struct provider_claim_entry {
	char group[64];
	char id[128];
};

struct provider_turns {
	pthread_mutex_t turn[PROVIDER_TURNS];
	pthread_mutex_t mu; /* the claims */
	struct provider_claim_entry *claims; /* a ring of PROVIDER_CLAIMS_MAX */
	size_t n_claims, head;
};

struct provider_turns *provider_turns_new(void)
{
	struct provider_turns *t = calloc(1, sizeof(*t));
	size_t i;

	if (!t)
		return NULL;
	t->claims = calloc(PROVIDER_CLAIMS_MAX, sizeof(*t->claims));
	if (!t->claims) {
		free(t);
		return NULL;
	}
	for (i = 0; i < PROVIDER_TURNS; i++)
		pthread_mutex_init(&t->turn[i], NULL);
	pthread_mutex_init(&t->mu, NULL);
	return t;
}

void provider_turns_free(struct provider_turns *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < PROVIDER_TURNS; i++)
		pthread_mutex_destroy(&t->turn[i]);
	pthread_mutex_destroy(&t->mu);
	free(t->claims);
	free(t);
}

static pthread_mutex_t *turn_of(struct provider_turns *t, const char *group)
{
	uint32_t h = 2166136261u;

	for (; *group; group++)
		h = (h ^ (unsigned char)*group) * 16777619u;
	return &t->turn[h % PROVIDER_TURNS];
}

void provider_turn_take(struct provider_turns *t, const char *group)
{
	pthread_mutex_lock(turn_of(t, group));
}

void provider_turn_give(struct provider_turns *t, const char *group)
{
	pthread_mutex_unlock(turn_of(t, group));
}

bool provider_claim(struct provider_turns *t, const char *group, const char *id)
{
	size_t i, at;
	bool ok = true;

	pthread_mutex_lock(&t->mu);
	for (i = 0; i < t->n_claims && ok; i++)
		if (!strcmp(t->claims[i].id, id) && !strcmp(t->claims[i].group, group))
			ok = false;
	if (ok) {
		at = t->n_claims < PROVIDER_CLAIMS_MAX ? t->n_claims++ : t->head++ % PROVIDER_CLAIMS_MAX;
		snprintf(t->claims[at].group, sizeof(t->claims[at].group), "%s", group);
		snprintf(t->claims[at].id, sizeof(t->claims[at].id), "%s", id);
	}
	pthread_mutex_unlock(&t->mu);
	return ok;
}

int provider_take_token(struct ratelimit *rl, int64_t deadline_ns, struct clock *c,
			struct provider_status *st)
{
	int64_t start = clock_now(c);
	int rc = ratelimit_acquire(rl, deadline_ns);

	if (rc == 0)
		return 0;
	st->retry_after_s = 0;
	if (rc == RATELIMIT_FENCED) {
		st->code = PROVIDER_CANCELLED;
		snprintf(st->message, sizeof(st->message),
			 "not sent: this process does not hold the leader Lease");
	} else {
		st->code = PROVIDER_THROTTLED;
		snprintf(st->message, sizeof(st->message),
			 "no token of the provider's rate limit within %.0fs",
			 (double)(deadline_ns - start) / CLOCK_NS_PER_S);
	}
	return -1;
}
