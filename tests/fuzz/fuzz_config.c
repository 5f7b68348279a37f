/*
 * fuzz_config: config_parse() on arbitrary YAML with no environment
 * overrides, and again offline (cluster and policy path optional) so the
 * validation past those checks runs too; config_parse_duration() on the
 * input as one string.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const no_env[] = {NULL};
	struct config_opts opts = {.envp = no_env, .flags = CONFIG_OFFLINE};
	struct config *c;
	struct errbuf err = {{0}};
	char *text;
	int64_t ms;

	err.msg[0] = '\0';
	c = config_parse((const char *)data, size, "fuzz.yaml", NULL, NULL, &err);
	if (!c && strlen(err.msg) == 0)
		abort(); /* a failure must say why */
	config_free(c);

	err.msg[0] = '\0';
	c = config_parse_opts((const char *)data, size, "fuzz.yaml", &opts, &err);
	if (!c && strlen(err.msg) == 0)
		abort();
	config_free(c);

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	(void)config_parse_duration(text, &ms);
	free(text);
	return 0;
}
