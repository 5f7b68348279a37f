/*
 * kubeconfig: where the API server is and how to authenticate, read from a
 * kubeconfig file (clusters, users, contexts) or from the in-cluster
 * service-account environment. It resolves one explicitly named context into
 * a struct kube_config; it never falls back to current-context. It does no
 * I/O on the network and runs no credential plugin (client.c does both).
 */
#ifndef LUASCALE_KUBE_KUBECONFIG_H
#define LUASCALE_KUBE_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "errbuf.h"

/* users[].user.exec.interactiveMode */
enum kube_exec_interactive {
	KUBE_EXEC_NEVER,
	KUBE_EXEC_IF_AVAILABLE,
	KUBE_EXEC_ALWAYS,
};

/* An exec credential plugin (client.authentication.k8s.io/v1 or v1beta1). */
struct kube_exec {
	char *command;          /* as written, or made absolute when it is a
				 * relative path containing '/' (relative to the
				 * kubeconfig's folder, as client-go does) */
	char **args;            /* n_args strings */
	size_t n_args;
	char **env_names;       /* n_env pairs added to the plugin's environment */
	char **env_values;
	size_t n_env;
	char *api_version;      /* "client.authentication.k8s.io/v1" or ".../v1beta1" */
	enum kube_exec_interactive interactive;
	bool provide_cluster_info;
	char *install_hint;     /* may be NULL */
};

/*
 * One resolved context: everything a client needs. Every string is owned by
 * the struct (kube_config_free). Secrets (token, key_data) are never put in
 * a log line or an error message by this module.
 */
struct kube_config {
	char *context;           /* the context's name ("in-cluster" for in-cluster) */
	char *source;            /* the kubeconfig file whose cluster gave 'server'
				  * (NULL in-cluster), for messages */
	char *cluster_name;
	char *user_name;
	char *namespace;         /* the context's namespace, or NULL */

	char *server;            /* "https://host:port" (no trailing slash) */
	char *tls_server_name;   /* clusters[].cluster.tls-server-name, or NULL */
	bool insecure_skip_tls_verify;
	char *ca_file;           /* path, or NULL */
	unsigned char *ca_data;  /* PEM bytes (decoded from base64), or NULL */
	size_t ca_len;

	char *cert_file;         /* client certificate path, or NULL */
	unsigned char *cert_data;/* client certificate PEM, or NULL */
	size_t cert_len;
	char *key_file;          /* client key path, or NULL */
	unsigned char *key_data; /* client key PEM, or NULL (secret) */
	size_t key_len;

	char *token;             /* bearer token, or NULL (secret) */
	char *token_file;        /* re-read while running, or NULL; when set,
				  * the client uses it and not 'token' */
	struct kube_exec *exec;  /* exec plugin, or NULL */
};

/* Frees 'c' and everything it owns (secrets are wiped first). NULL is a no-op. */
void kube_config_free(struct kube_config *c);

/*
 * Reads the kubeconfig at 'path' and resolves context 'context', which must
 * be given (NULL or "" is an error that lists the contexts in the file:
 * luascale never takes current-context silently). 'path' may hold several
 * files separated by ':' (as $KUBECONFIG does): a name is looked up in the
 * files in order and the first file that defines it wins. NULL 'path' means
 * $KUBECONFIG, else $HOME/.kube/config. Relative file paths in the config
 * (certificate-authority, client-certificate, client-key, tokenFile, an exec
 * command containing '/') are relative to the folder of the file that holds
 * them. Files named by the config are not read here (the client reads them).
 * Returns 0 with a new config in *out, or -1 with a message naming
 * "file:line:col" where the problem is.
 */
int kubeconfig_load(const char *path, const char *context, struct kube_config **out,
		    struct errbuf *err);

/*
 * Like kubeconfig_load, for one document already in memory: 'source' names
 * it in messages and 'base_dir' (may be NULL: the current directory) is
 * where relative paths start.
 */
int kubeconfig_parse(const char *text, size_t len, const char *source, const char *base_dir,
		     const char *context, struct kube_config **out, struct errbuf *err);

/* Where the in-cluster settings come from. NULL fields take the defaults. */
struct kube_incluster_env {
	const char *host;       /* default: $KUBERNETES_SERVICE_HOST */
	const char *port;       /* default: $KUBERNETES_SERVICE_PORT */
	const char *token_file; /* default: KUBE_SA_TOKEN_FILE */
	const char *ca_file;    /* default: KUBE_SA_CA_FILE */
	const char *ns_file;    /* default: KUBE_SA_NAMESPACE_FILE (optional) */
};

#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define KUBE_SA_TOKEN_FILE KUBE_SA_DIR "/token"
#define KUBE_SA_CA_FILE KUBE_SA_DIR "/ca.crt"
#define KUBE_SA_NAMESPACE_FILE KUBE_SA_DIR "/namespace"

/*
 * The in-cluster config: server https://HOST:PORT (IPv6 hosts bracketed),
 * the service-account token as token_file (the client re-reads it as it
 * rotates) and the CA file. 'env' may be NULL for all defaults. Checks that
 * host and port are set and that the token file is readable and not empty.
 * Returns 0 with a new config in *out, or -1 with a message.
 */
int kube_config_incluster(const struct kube_incluster_env *env, struct kube_config **out,
			  struct errbuf *err);

/*
 * Decodes standard base64 ('=' padding optional, ASCII whitespace ignored)
 * into a new buffer (NUL-terminated, the NUL not counted in *out_len).
 * Returns the buffer (caller frees) or NULL with a message in 'err' that
 * names the offset of the first bad character.
 */
unsigned char *kube_base64_decode(const char *s, size_t len, size_t *out_len,
				  struct errbuf *err);

/*
 * Where a bearer token has a byte that may not go into an HTTP header (a
 * control character: below 0x20, or 0x7f; CR and LF would start a header
 * of their own): its index, or -1 when the token is clean. An empty token
 * is clean. Never prints the token.
 */
ptrdiff_t kube_token_check(const char *token);

/*
 * Copies 'url' into 'out' (always NUL-terminated, truncated to 'outlen')
 * with any user information ("https://user:password@host") replaced by
 * "<redacted>@": the form of a URL that may go into a log line or an error.
 * Returns 'out'.
 */
char *kube_url_redact(const char *url, char *out, size_t outlen);

#endif
