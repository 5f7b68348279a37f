/*
 * fuzz_azure_arm: the Azure provider's parsers of ARM answers on arbitrary
 * bytes (an answer as a hostile or broken endpoint might send it): error
 * bodies and their classes, a VM list's items, node-template and size
 * tags, and providerIDs, with what they promise checked.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "providers/azure/azure_arm.h"

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "azure_arm invariant broken: %s\n", what);
		abort();
	}
}

/* NUL-terminated within its buffer, and no control character. */
static void clean(const char *s, size_t cap, const char *what)
{
	size_t n = strnlen(s, cap), i;

	check(n < cap, what);
	for (i = 0; i < n; i++)
		check((unsigned char)s[i] >= 0x20 && s[i] != 0x7f, what);
}

static void vm(const cJSON *it)
{
	struct azure_vm v;
	size_t i;

	if (azure_vm_parse(it, &v) < 0)
		return;
	check(v.instance_id[0] != '\0', "a VM has an instance id");
	for (i = 0; v.instance_id[i]; i++)
		check(isdigit((unsigned char)v.instance_id[i]), "instance ids are digits");
	clean(v.name, sizeof(v.name), "a VM's name is clean");
	clean(v.why.code, sizeof(v.why.code), "a failure code is clean");
	clean(v.why.message, sizeof(v.why.message), "a failure message is clean");
	check(!v.failed || v.state != INSTANCE_RUNNING, "a failed VM is not running");
	check(!v.failed || v.why.code[0], "a failed VM says why");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct azure_error e;
	struct azure_resource_id id, id2;
	char *text = malloc(size + 1), pid[512], bad[64];
	cJSON *j, *it;
	int v;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	azure_error_parse(text, size, size ? 200 + data[0] : 0, &e);
	clean(e.code, sizeof(e.code), "an error code is clean");
	clean(e.detail_code, sizeof(e.detail_code), "a detail code is clean");
	clean(e.message, sizeof(e.message), "an error message is clean");
	check(e.window_end_s >= 0, "a window does not end before 1970");
	check(azure_error_class(&e) != PROVIDER_OK, "an error is never OK");
	check(!azure_error_throttled(&e) || azure_error_class(&e) == PROVIDER_THROTTLED,
	      "throttled errors class as throttled");

	j = cJSON_ParseWithLength(text, size);
	if (cJSON_IsObject(j)) {
		struct provider_template t;
		const cJSON *tags = cJSON_GetObjectItemCaseSensitive(j, "tags");
		int n;

		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "value"))
			vm(it);
		vm(j);
		memset(&t, 0, sizeof(t));
		n = azure_template_tags(tags ? tags : j, &t, bad, sizeof(bad));
		check(n >= 0, "a count of refused tags");
		check(n == 0 || bad[0], "a refused tag is named");
		clean(bad, sizeof(bad), "a refused tag's name is clean");
		check(t.cpu_m >= 0 && t.memory >= 0 && t.pods >= 0 && t.gpus >= 0, "resources are not negative");
		provider_template_clear(&t);
		if (azure_tag_int(tags ? tags : j, "max", &v) == 0)
			check(v >= 0 && v <= 1000000, "a max tag in range");
	}
	cJSON_Delete(j);

	if (azure_parse_provider_id(text, &id) == 0) {
		azure_format_provider_id(id.subscription, id.resource_group, id.vmss, id.instance, pid, sizeof(pid));
		check(azure_parse_provider_id(pid, &id2) == 0, "a formatted providerID parses");
		check(!strcmp(id.subscription, id2.subscription) && !strcmp(id.resource_group, id2.resource_group) &&
		      !strcmp(id.vmss, id2.vmss) && !strcmp(id.instance, id2.instance),
		      "a providerID round-trips");
		check(strlen(text) >= strlen("azure:///subscriptions/"), "a providerID has its prefix");
	}
	free(text);
	return 0;
}
