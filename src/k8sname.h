/*
 * k8sname: the Kubernetes rules for names, in one place: qualified names
 * (label, annotation and taint keys, extended resource names), label values,
 * DNS-1123 labels and subdomains. Pure checks on NUL-terminated strings;
 * what a name is used for, and the message around a refusal, is the caller's.
 */
#ifndef LUASCALE_K8SNAME_H
#define LUASCALE_K8SNAME_H

#include <stdbool.h>
#include <stddef.h>

#define K8SNAME_NAME_MAX 63       /* qualified-name name part, label value, DNS label */
#define K8SNAME_SUBDOMAIN_MAX 253 /* DNS subdomain, qualified-name prefix */

/*
 * Is 'key' a qualified name: an optional prefix and '/', then a name? The
 * prefix is a DNS subdomain (see k8sname_valid_dns_subdomain); the name is
 * 1-63 characters of [A-Za-z0-9._-] starting and ending with a letter or
 * digit. This is the rule for label, annotation and taint keys.
 * When false and 'why' is not NULL, writes the reason (a phrase such as
 * "key prefix must be 1-253 characters") into 'why' (why_len bytes,
 * NUL-terminated, cut short if needed). 'key' must not be NULL.
 */
bool k8sname_valid_qualified_name(const char *key, char *why, size_t why_len);

/* Is 'value' a label value: empty, or 1-63 characters of [A-Za-z0-9._-]
 * starting and ending with a letter or digit? 'value' must not be NULL. */
bool k8sname_valid_label_value(const char *value);

/* Is 's' a DNS-1123 subdomain: 1-253 characters, one or more DNS labels
 * (lowercase letters, digits and '-', starting and ending with a letter or
 * digit) joined by '.'? 's' must not be NULL. */
bool k8sname_valid_dns_subdomain(const char *s);

/* Is 's' a DNS-1123 label: 1-63 lowercase letters, digits and '-',
 * starting and ending with a letter or digit? 's' must not be NULL. */
bool k8sname_valid_dns_label(const char *s);

#endif
