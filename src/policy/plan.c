/*
 * plan: storage, copying and printing of plan actions and node notes.
 */
#include "policy/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "model.h"

static const char *const type_names[ACTION_TYPE_COUNT] = {
	"scale_up", "cordon", "uncordon", "drain", "delete", "label", "taint", "annotate",
	"replace",
};

bool action_evicts(const struct action *a)
{
	return a->type == ACTION_DRAIN || a->type == ACTION_DELETE || a->type == ACTION_REPLACE ||
	       (a->type == ACTION_TAINT && !a->remove && a->effect == TAINT_NO_EXECUTE);
}

const char *action_type_str(enum action_type t)
{
	return (unsigned)t < ACTION_TYPE_COUNT ? type_names[t] : "unknown";
}

int action_type_parse(const char *s, enum action_type *out)
{
	int i;

	for (i = 0; i < ACTION_TYPE_COUNT; i++) {
		if (strcmp(s, type_names[i]) == 0) {
			*out = (enum action_type)i;
			return 0;
		}
	}
	return -1;
}

bool plan_disruption_valid(const char *s)
{
	static const char *const names[] = {"empty", "underutilized", "drifted", "expired",
					    "interrupted", NULL};
	size_t i;

	for (i = 0; s && names[i]; i++)
		if (!strcmp(s, names[i]))
			return true;
	return false;
}

void plan_init(struct plan *p)
{
	memset(p, 0, sizeof(*p));
}

void action_free(struct action *a)
{
	size_t i;

	free(a->group);
	free(a->node);
	free(a->key);
	free(a->value);
	free(a->reason);
	free(a->where);
	free(a->disruption);
	free(a->budget);
	for (i = 0; i < a->n_instance_types; i++)
		free(a->instance_types[i]);
	free(a->instance_types);
	memset(a, 0, sizeof(*a));
}

void plan_free(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n_messages; i++)
		free(p->messages[i]);
	free(p->messages);
	for (i = 0; i < p->n_actions; i++)
		action_free(&p->actions[i]);
	for (i = 0; i < p->n_notes; i++) {
		free(p->notes[i].node);
		free(p->notes[i].why);
	}
	free(p->actions);
	free(p->notes);
	plan_init(p);
}

static int dup_str(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -1;
}

int action_copy(struct action *dst, const struct action *src)
{
	size_t i;

	*dst = *src;
	dst->group = dst->node = dst->key = dst->value = dst->reason = dst->where = NULL;
	dst->instance_types = NULL;
	dst->n_instance_types = 0;
	dst->disruption = NULL;
	dst->budget = NULL;
	if (dup_str(&dst->group, src->group) || dup_str(&dst->node, src->node) ||
	    dup_str(&dst->disruption, src->disruption) || dup_str(&dst->budget, src->budget) ||
	    dup_str(&dst->key, src->key) || dup_str(&dst->value, src->value) ||
	    dup_str(&dst->reason, src->reason ? src->reason : "") ||
	    dup_str(&dst->where, src->where ? src->where : ""))
		goto oom;
	if (src->n_instance_types) {
		dst->instance_types = calloc(src->n_instance_types, sizeof(*dst->instance_types));
		if (!dst->instance_types)
			goto oom;
		for (i = 0; i < src->n_instance_types; i++, dst->n_instance_types++)
			if (dup_str(&dst->instance_types[i], src->instance_types[i]))
				goto oom;
	}
	return 0;
oom:
	action_free(dst);
	return -1;
}

int plan_add(struct plan *p, const struct action *a)
{
	if (p->n_actions == p->cap_actions) {
		size_t cap = p->cap_actions ? p->cap_actions * 2 : 8;
		struct action *n = realloc(p->actions, cap * sizeof(*n));

		if (!n)
			return -1;
		p->actions = n;
		p->cap_actions = cap;
	}
	if (action_copy(&p->actions[p->n_actions], a) < 0)
		return -1;
	p->n_actions++;
	return 0;
}

int plan_message(struct plan *p, const char *text)
{
	char **m;
	char *copy;

	if (p->n_messages % 16 == 0) {
		m = realloc(p->messages, (p->n_messages + 16) * sizeof(*m));
		if (!m)
			return -1;
		p->messages = m;
	}
	copy = strdup(text);
	if (!copy)
		return -1;
	p->messages[p->n_messages++] = copy;
	return 0;
}

int plan_note(struct plan *p, const char *node, int candidate, const char *why)
{
	struct node_note *n;

	if (p->n_notes == p->cap_notes) {
		size_t cap = p->cap_notes ? p->cap_notes * 2 : 16;
		struct node_note *nn = realloc(p->notes, cap * sizeof(*nn));

		if (!nn)
			return -1;
		p->notes = nn;
		p->cap_notes = cap;
	}
	n = &p->notes[p->n_notes];
	n->node = strdup(node);
	n->why = strdup(why ? why : "");
	n->candidate = candidate;
	if (!n->node || !n->why) {
		free(n->node);
		free(n->why);
		return -1;
	}
	p->n_notes++;
	p->notes_sorted = false;
	return 0;
}

/* a note with the order it was added in, so the sort can keep the last */
struct note_order {
	struct node_note note;
	size_t seq;
};

static int note_order_cmp(const void *a, const void *b)
{
	const struct note_order *x = a, *y = b;
	int c = strcmp(x->note.node, y->note.node);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void plan_sort_notes(struct plan *p)
{
	struct note_order *o;
	size_t i, out = 0;

	if (p->n_notes < 2) {
		p->notes_sorted = true;
		return;
	}
	o = malloc(p->n_notes * sizeof(*o));
	if (!o)
		return; /* stays unsorted: lookups scan */
	for (i = 0; i < p->n_notes; i++) {
		o[i].note = p->notes[i];
		o[i].seq = i;
	}
	qsort(o, p->n_notes, sizeof(*o), note_order_cmp);
	for (i = 0; i < p->n_notes; i++) {
		if (i + 1 < p->n_notes && strcmp(o[i].note.node, o[i + 1].note.node) == 0) {
			free(o[i].note.node); /* superseded by a later note */
			free(o[i].note.why);
			continue;
		}
		p->notes[out++] = o[i].note;
	}
	p->n_notes = out;
	p->notes_sorted = true;
	free(o);
}

static int note_key_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct node_note *)elem)->node);
}

const struct node_note *plan_find_note(const struct plan *p, const char *node)
{
	size_t i;

	if (p->n_notes == 0)
		return NULL;
	if (p->notes_sorted)
		return bsearch(node, p->notes, p->n_notes, sizeof(*p->notes), note_key_cmp);
	for (i = p->n_notes; i-- > 0;)
		if (strcmp(p->notes[i].node, node) == 0)
			return &p->notes[i];
	return NULL;
}

size_t action_log_fields(const struct action *a, struct log_field *f, char count[24])
{
	size_t n = 0;

	f[n++] = (struct log_field){"action", action_type_str(a->type)};
	if (a->type == ACTION_SCALE_UP) {
		snprintf(count, 24, "%lld", (long long)a->count);
		f[n++] = (struct log_field){"group", a->group};
		f[n++] = (struct log_field){"count", count};
	} else {
		f[n++] = (struct log_field){"node", a->node};
		if (a->type == ACTION_REPLACE)
			f[n++] = (struct log_field){"group", a->group};
		if (a->key)
			f[n++] = (struct log_field){"key", a->key};
	}
	f[n++] = (struct log_field){"reason", a->reason};
	f[n++] = (struct log_field){"where", a->where};
	return n;
}

void action_describe(const struct action *a, char *out, size_t len)
{
	const char *t = action_type_str(a->type);

	switch (a->type) {
	case ACTION_SCALE_UP:
		if (a->n_instance_types) {
			size_t i, k;

			k = (size_t)snprintf(out, len, "%s %s +%lld (", t, a->group ? a->group : "?",
					     (long long)a->count);
			for (i = 0; i < a->n_instance_types && k < len; i++)
				k += (size_t)snprintf(out + k, len - k, "%s%s", i ? ", " : "",
						      a->instance_types[i]);
			if (k < len)
				snprintf(out + k, len - k, ")");
		} else {
			snprintf(out, len, "%s %s +%lld", t, a->group ? a->group : "?", (long long)a->count);
		}
		break;
	case ACTION_LABEL:
	case ACTION_ANNOTATE:
		if (a->remove)
			snprintf(out, len, "%s %s %s-", t, a->node, a->key);
		else
			snprintf(out, len, "%s %s %s=%s", t, a->node, a->key, a->value ? a->value : "");
		break;
	case ACTION_TAINT:
		if (a->remove)
			snprintf(out, len, "%s %s %s:%s-", t, a->node, a->key,
				 taint_effect_str((enum taint_effect)a->effect));
		else
			snprintf(out, len, "%s %s %s=%s:%s", t, a->node, a->key,
				 a->value ? a->value : "",
				 taint_effect_str((enum taint_effect)a->effect));
		break;
	case ACTION_REPLACE: {
		size_t i, k;

		k = (size_t)snprintf(out, len, "%s %s with a node of %s", t, a->node ? a->node : "?",
				     a->group ? a->group : "?");
		for (i = 0; i < a->n_instance_types && k < len; i++)
			k += (size_t)snprintf(out + k, len - k, "%s%s", i ? ", " : " (",
					      a->instance_types[i]);
		if (a->n_instance_types && k < len)
			snprintf(out + k, len - k, ")");
		break;
	}
	default:
		snprintf(out, len, "%s %s", t, a->node ? a->node : "?");
	}
}

void action_to_json(const struct action *a, struct buf *b)
{
	buf_puts(b, "{\"type\":");
	buf_json_string(b, action_type_str(a->type));
	if (a->type == ACTION_REPLACE) {
		buf_puts(b, ",\"node\":");
		buf_json_string(b, a->node);
	}
	if (a->type == ACTION_SCALE_UP || a->type == ACTION_REPLACE) {
		buf_puts(b, ",\"group\":");
		buf_json_string(b, a->group);
		if (a->type == ACTION_SCALE_UP)
			buf_printf(b, ",\"count\":%lld", (long long)a->count);
		if (a->n_instance_types) {
			size_t i;

			buf_puts(b, ",\"instance_types\":[");
			for (i = 0; i < a->n_instance_types; i++) {
				if (i)
					buf_puts(b, ",");
				buf_json_string(b, a->instance_types[i]);
			}
			buf_puts(b, "]");
		}
	} else {
		buf_puts(b, ",\"node\":");
		buf_json_string(b, a->node);
	}
	if (a->type == ACTION_LABEL || a->type == ACTION_TAINT || a->type == ACTION_ANNOTATE) {
		buf_puts(b, ",\"key\":");
		buf_json_string(b, a->key);
		if (!a->remove) {
			buf_puts(b, ",\"value\":");
			buf_json_string(b, a->value ? a->value : "");
		}
		if (a->type == ACTION_TAINT) {
			buf_puts(b, ",\"effect\":");
			buf_json_string(b, taint_effect_str((enum taint_effect)a->effect));
		}
		if (a->remove)
			buf_puts(b, ",\"remove\":true");
	}
	if (a->disruption) {
		buf_puts(b, ",\"disruption\":");
		buf_json_string(b, a->disruption);
	}
	buf_puts(b, ",\"reason\":");
	buf_json_string(b, a->reason);
	if (a->where && a->where[0]) {
		buf_puts(b, ",\"where\":");
		buf_json_string(b, a->where);
	}
	buf_puts(b, "}");
}
