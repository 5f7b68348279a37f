/*
 * azure_arm: parsing of ARM answers for the Azure provider — error bodies
 * and their classes, scale set VMs (provisioning and power states from the
 * instance view), VMSS providerIDs and node-template tags. Pure: no I/O,
 * no logging; everything from outside is checked, nothing is trusted.
 */
#include "providers/azure/azure_arm.h"

#include "kube/client.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errbuf.h"
#include "model.h"

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* Copies 's' replacing control characters, so a cloud's text cannot forge log lines. */
static void copy_clean(char *out, size_t len, const char *s)
{
	size_t i;

	snprintf(out, len, "%s", s);
	for (i = 0; out[i]; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = ' ';
}

/* {"endTime":"2020-01-27T20:00:00+00:00", ...} inside a detail's message. */
static int64_t window_end(const char *msg)
{
	cJSON *j;
	int64_t t = 0;

	if (!msg || msg[0] != '{')
		return 0;
	j = cJSON_Parse(msg);
	if (cJSON_IsObject(j) && model_parse_time(jstr(j, "endTime"), &t) < 0)
		t = 0;
	cJSON_Delete(j);
	return t > 0 ? t : 0;
}

void azure_error_from_json(const cJSON *e, long status, struct azure_error *out)
{
	const cJSON *d;

	memset(out, 0, sizeof(*out));
	out->status = status;
	if (!cJSON_IsObject(e))
		return;
	copy_clean(out->code, sizeof(out->code), jstr(e, "code"));
	copy_clean(out->message, sizeof(out->message), jstr(e, "message"));
	cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(e, "details")) {
		int64_t w;

		if (!out->detail_code[0])
			copy_clean(out->detail_code, sizeof(out->detail_code), jstr(d, "code"));
		w = window_end(jstr(d, "message"));
		if (w > out->window_end_s)
			out->window_end_s = w;
	}
}

void azure_error_parse(const char *body, size_t len, long status, struct azure_error *out)
{
	cJSON *j = body && len ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");

	azure_error_from_json(cJSON_IsObject(e) ? e : j, status, out);
	cJSON_Delete(j);
}

static bool contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return true;
	return false;
}

bool azure_error_throttled(const struct azure_error *e)
{
	return e->status == 429 || !strcmp(e->code, "TooManyRequests") ||
	       !strcmp(e->detail_code, "TooManyRequests");
}

enum provider_error azure_error_class(const struct azure_error *e)
{
	static const char *const no_capacity[] = {
		"AllocationFailed", "ZonalAllocationFailed", "OverconstrainedAllocationRequest",
		"OverconstrainedZonalAllocationRequest", "SkuNotAvailable", NULL,
	};
	const char *const *c;

	if (azure_error_throttled(e))
		return PROVIDER_THROTTLED;
	for (c = no_capacity; *c; c++)
		if (!strcmp(e->code, *c))
			return PROVIDER_NO_CAPACITY;
	if (contains_ci(e->code, "QuotaExceeded") ||
	    (!strcmp(e->code, "OperationNotAllowed") && contains_ci(e->message, "quota")))
		return PROVIDER_QUOTA;
	if (e->status == 401 || e->status == 403 || !strcmp(e->code, "AuthorizationFailed") ||
	    !strcmp(e->code, "InvalidAuthenticationToken"))
		return PROVIDER_AUTH;
	if (e->status == 404 || !strcmp(e->code, "ResourceNotFound") ||
	    !strcmp(e->code, "ResourceGroupNotFound") || !strcmp(e->code, "NotFound"))
		return PROVIDER_NOT_FOUND;
	/* another operation on the resource, a conflict that passes */
	if (e->status == 409)
		return PROVIDER_TRANSIENT;
	if (e->status == 0 || e->status >= 500 || !strcmp(e->code, "InternalExecutionError") ||
	    !strcmp(e->code, "InternalOperationError") || !strcmp(e->code, "RetryableError"))
		return PROVIDER_TRANSIENT;
	return PROVIDER_INVALID;
}

/* ---- VMs ---- */

static bool digits(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (!n || n > max)
		return false;
	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

int azure_vm_parse(const cJSON *vm, struct azure_vm *out)
{
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(vm, "properties"), *st;
	const cJSON *iv = cJSON_GetObjectItemCaseSensitive(props, "instanceView");
	const char *ps = jstr(props, "provisioningState"), *power = "";
	const char *fail_code = "", *fail_msg = "";
	bool running;

	memset(out, 0, sizeof(*out));
	if (!digits(jstr(vm, "instanceId"), 10))
		return -1;
	snprintf(out->instance_id, sizeof(out->instance_id), "%s", jstr(vm, "instanceId"));
	copy_clean(out->name, sizeof(out->name), jstr(vm, "name"));
	cJSON_ArrayForEach(st, cJSON_GetObjectItemCaseSensitive(iv, "statuses")) {
		const char *code = jstr(st, "code");

		if (!strncmp(code, "PowerState/", 11))
			power = code + 11;
		else if (!strncasecmp(code, "ProvisioningState/failed/", 25)) {
			fail_code = code + 25;
			fail_msg = jstr(st, "message");
		} else if (!strncasecmp(code, "ProvisioningState/", 18) && !ps[0]) {
			ps = code + 18;
		}
	}
	if (kube_parse_time(jstr(props, "timeCreated"), &out->created_wall) < 0 || out->created_wall < 0)
		out->created_wall = 0;
	running = !strcmp(power, "running");
	if (!strcasecmp(ps, "Deleting") || !strcmp(power, "stopping") || !strcmp(power, "stopped") ||
	    !strcmp(power, "deallocating") || !strcmp(power, "deallocated"))
		out->state = INSTANCE_STOPPING;
	else if (running)
		out->state = INSTANCE_RUNNING; /* Succeeded, Updating, or Failed with a live VM */
	else
		out->state = INSTANCE_PENDING; /* Creating, starting, or not yet known */
	if (!strcasecmp(ps, "Failed") && !running && out->state != INSTANCE_STOPPING) {
		out->failed = true;
		out->why.status = 200;
		copy_clean(out->why.code, sizeof(out->why.code), fail_code[0] ? fail_code : "ProvisioningFailed");
		copy_clean(out->why.message, sizeof(out->why.message), fail_msg);
	}
	return 0;
}

/* ---- providerIDs ---- */

/* Takes the next "/name" segment from *p into out (1..len-1 bytes of 'allowed'). */
static int segment(const char **p, char *out, size_t len, bool (*ok)(int))
{
	const char *s = *p, *e;

	if (*s != '/')
		return -1;
	s++;
	for (e = s; *e && *e != '/'; e++)
		if (!ok((unsigned char)*e))
			return -1;
	if (e == s || (size_t)(e - s) >= len)
		return -1;
	snprintf(out, len, "%.*s", (int)(e - s), s);
	*p = e;
	return 0;
}

static int fixed(const char **p, const char *word)
{
	size_t n = strlen(word);

	if ((*p)[0] != '/' || strncasecmp(*p + 1, word, n) || ((*p)[n + 1] != '/' && (*p)[n + 1]))
		return -1;
	*p += n + 1;
	return 0;
}

static bool ok_name_char(int c)
{
	return isalnum(c) || c == '-' || c == '_' || c == '.' || c == '(' || c == ')';
}

static bool ok_digit(int c)
{
	return isdigit(c);
}

int azure_parse_provider_id(const char *pid, struct azure_resource_id *out)
{
	const char *p;

	memset(out, 0, sizeof(*out));
	if (!pid || strncasecmp(pid, "azure://", 8))
		return -1;
	p = pid + 8;
	if (fixed(&p, "subscriptions") || segment(&p, out->subscription, sizeof(out->subscription), ok_name_char) ||
	    fixed(&p, "resourceGroups") || segment(&p, out->resource_group, sizeof(out->resource_group), ok_name_char) ||
	    fixed(&p, "providers") || fixed(&p, "Microsoft.Compute") ||
	    fixed(&p, "virtualMachineScaleSets") || segment(&p, out->vmss, sizeof(out->vmss), ok_name_char) ||
	    fixed(&p, "virtualMachines") || segment(&p, out->instance, 11, ok_digit) || *p)
		return -1;
	return 0;
}

void azure_format_provider_id(const char *sub, const char *rg, const char *vmss, const char *n,
			      char *out, size_t len)
{
	snprintf(out, len,
		 "azure:///subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/"
		 "virtualMachineScaleSets/%s/virtualMachines/%s", sub, rg, vmss, n);
}

/* ---- tags ---- */

/* "k8s.io_role" -> "k8s.io/role", "cpu~2arch" -> "cpu_arch". */
static void tag_key(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 1 < len; s++) {
		if (s[0] == '~' && s[1] == '2') {
			out[o++] = '_';
			s++;
		} else {
			out[o++] = *s == '_' ? '/' : *s;
		}
	}
	out[o] = '\0';
}

static void note_bad(int *n, char *bad, size_t blen, const char *name)
{
	if ((*n)++ == 0 && bad && blen)
		copy_clean(bad, blen, name);
}

const char *azure_aks_pool(const cJSON *vmss)
{
	const cJSON *tags = cJSON_GetObjectItemCaseSensitive(vmss, "tags");
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(tags, "aks-managed-poolName");

	if (!cJSON_IsString(p) || !p->valuestring[0])
		p = cJSON_GetObjectItemCaseSensitive(tags, "poolName");
	return cJSON_IsString(p) && p->valuestring[0] ? p->valuestring : NULL;
}

static const cJSON *child(const cJSON *o, const char *path)
{
	char key[64];

	while (o && *path) {
		size_t n = strcspn(path, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		o = cJSON_GetObjectItemCaseSensitive(o, key);
		path += n + (path[n] == '.');
	}
	return o;
}

void azure_aks_template(const cJSON *vmss, const char *pool, const char *rg, int gpus,
			struct provider_template *t)
{
	const cJSON *vp = child(vmss, "properties.virtualMachineProfile");
	const cJSON *disk = child(vp, "storageProfile.osDisk");
	const cJSON *diff = child(disk, "diffDiskSettings.option");
	const cJSON *tier = child(disk, "managedDisk.storageAccountType");
	const cJSON *prio = cJSON_GetObjectItemCaseSensitive(vp, "priority");

	provider_template_label(t, "kubernetes.azure.com/agentpool", pool);
	provider_template_label(t, "agentpool", pool);
	provider_template_label(t, "kubernetes.azure.com/mode", "user");
	provider_template_label(t, "kubernetes.azure.com/role", "agent");
	if (rg && rg[0])
		provider_template_label(t, "kubernetes.azure.com/cluster", rg);
	if (disk) {
		const char *profile = cJSON_IsString(diff) && !strcasecmp(diff->valuestring, "Local") ? "ephemeral"
												 : "managed";

		provider_template_label(t, "kubernetes.azure.com/storageprofile", profile);
		provider_template_label(t, "storageprofile", profile);
		if (cJSON_IsString(tier) && tier->valuestring[0]) {
			provider_template_label(t, "kubernetes.azure.com/storagetier", tier->valuestring);
			provider_template_label(t, "storagetier", tier->valuestring);
		}
	}
	if (gpus > 0) {
		provider_template_label(t, "accelerator", "nvidia");
		provider_template_label(t, "kubernetes.azure.com/accelerator", "nvidia");
	}
	if (cJSON_IsString(prio) && !strcasecmp(prio->valuestring, "Spot")) {
		provider_template_label(t, "kubernetes.azure.com/scalesetpriority", "spot");
		provider_template_taint(t, "kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule");
	}
}

int azure_template_tags(const cJSON *tags, struct provider_template *t, char *bad, size_t blen)
{
	static const char prefix[] = "k8s.io_cluster-autoscaler_node-template_";
	const cJSON *tag;
	int n_bad = 0;

	if (bad && blen)
		bad[0] = '\0';
	cJSON_ArrayForEach(tag, tags) {
		const char *k = tag->string, *sep;
		char kind[32], key[256];
		int rc = -1;

		if (!k || strncmp(k, prefix, sizeof(prefix) - 1))
			continue;
		sep = strchr(k + sizeof(prefix) - 1, '_');
		if (sep && cJSON_IsString(tag)) {
			snprintf(kind, sizeof(kind), "%.*s", (int)(sep - k - (sizeof(prefix) - 1)), k + sizeof(prefix) - 1);
			tag_key(sep + 1, key, sizeof(key));
			rc = provider_template_tag(t, kind, key, tag->valuestring);
		}
		if (rc == 1 && !strcmp(kind, "autoscaling-options"))
			continue; /* autoscaling-options_*: not the template's */
		if (rc != 0)
			note_bad(&n_bad, bad, blen, k);
	}
	return n_bad;
}

int azure_tag_int(const cJSON *tags, const char *name, int *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(tags, name);
	char *end;
	long n;

	if (!v)
		return 1;
	if (!cJSON_IsString(v) || !digits(v->valuestring, 7))
		return -1;
	n = strtol(v->valuestring, &end, 10);
	if (n < 0 || n > 1000000)
		return -1;
	*out = (int)n;
	return 0;
}
