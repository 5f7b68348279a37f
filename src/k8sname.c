/*
 * k8sname: Kubernetes name rules (apimachinery's IsQualifiedName,
 * IsValidLabelValue, IsDNS1123Subdomain, IsDNS1123Label) as plain character
 * scans, no regular expressions. ASCII only: the rules admit nothing else.
 */
#include "k8sname.h"

#include <stdio.h>
#include <string.h>

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* [A-Za-z0-9._-]{1,63}, alphanumeric at both ends. */
static bool valid_name_part(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > K8SNAME_NAME_MAX || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* DNS labels of [a-z0-9-], alphanumeric at both ends, joined by '.'; the
 * total length is checked by the caller. */
static bool valid_subdomain_chars(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++) {
		bool edge = i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.';

		if (is_lower_alnum(s[i]))
			continue;
		if ((s[i] == '-' || s[i] == '.') && !edge)
			continue;
		return false;
	}
	return true;
}

static bool set_why(char *why, size_t why_len, const char *text)
{
	if (why && why_len)
		snprintf(why, why_len, "%s", text);
	return false;
}

/* [prefix/]name; on false, the reason in 'why' when it is not NULL. */
bool k8sname_valid_qualified_name(const char *key, char *why, size_t why_len)
{
	const char *slash = strchr(key, '/');
	const char *name = slash ? slash + 1 : key;
	size_t n = strlen(name), i;

	if (slash) {
		size_t plen = (size_t)(slash - key);

		if (strchr(name, '/'))
			return set_why(why, why_len, "a key has at most one '/', between prefix and name");
		if (plen == 0 || plen > K8SNAME_SUBDOMAIN_MAX)
			return set_why(why, why_len, "key prefix must be 1-253 characters");
		if (!valid_subdomain_chars(key, plen))
			return set_why(why, why_len, "key prefix must be a DNS subdomain: lowercase letters, digits, '-' and '.', each dot-separated part starting and ending with a letter or digit");
	}
	if (n == 0 || n > K8SNAME_NAME_MAX)
		return set_why(why, why_len, "key name must be 1-63 characters");
	for (i = 0; i < n; i++)
		if (!is_alnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
			return set_why(why, why_len, "key name may only contain alphanumerics, '-', '_' and '.'");
	if (!valid_name_part(name, n))
		return set_why(why, why_len, "key name must start and end with an alphanumeric character");
	return true;
}

/* Empty, or a name part of at most 63 characters. */
bool k8sname_valid_label_value(const char *value)
{
	size_t n = strlen(value);

	return n == 0 || valid_name_part(value, n);
}

/* Dot-joined DNS labels, at most 253 characters in all. */
bool k8sname_valid_dns_subdomain(const char *s)
{
	size_t n = strlen(s);

	return n <= K8SNAME_SUBDOMAIN_MAX && valid_subdomain_chars(s, n);
}

/* One DNS label: no dots, at most 63 characters. */
bool k8sname_valid_dns_label(const char *s)
{
	size_t n = strlen(s);

	return n <= K8SNAME_NAME_MAX && !strchr(s, '.') && valid_subdomain_chars(s, n);
}
