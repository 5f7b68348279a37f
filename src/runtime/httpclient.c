/*
 * httpclient: libcurl set up once for the Kubernetes client and the cloud
 * providers — global initialisation, the shared connection cache under
 * mutexes, easy handles with TLS verified by default, capped bodies, wiped
 * header lists, verbose lines and error text. No API, credential or retry
 * policy lives here.
 */
#include "runtime/httpclient.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct httpclient_share {
	CURLSH *sh;
	pthread_mutex_t mu[CURL_LOCK_DATA_LAST];
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void wipe(void *p, size_t n)
{
	volatile unsigned char *v = p;

	while (p && n--)
		*v++ = 0;
}

/* ---- the shared connection cache ---- */

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access acc, void *ud)
{
	struct httpclient_share *s = ud;

	(void)h;
	(void)acc;
	if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
		pthread_mutex_lock(&s->mu[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ud)
{
	struct httpclient_share *s = ud;

	(void)h;
	if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
		pthread_mutex_unlock(&s->mu[data]);
}

struct httpclient_share *httpclient_share_new(struct errbuf *err)
{
	struct httpclient_share *s;
	int i;

	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		errbuf_set(err, "libcurl initialisation failed: %s", curl_easy_strerror(curl_init_rc));
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&s->mu[i], NULL);
	s->sh = curl_share_init();
	if (!s->sh) {
		errbuf_set(err, "libcurl: cannot create a share handle");
		httpclient_share_free(s);
		return NULL;
	}
	curl_share_setopt(s->sh, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(s->sh, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(s->sh, CURLSHOPT_USERDATA, s);
	curl_share_setopt(s->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_share_setopt(s->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	curl_share_setopt(s->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
	return s;
}

void httpclient_share_free(struct httpclient_share *s)
{
	int i;

	if (!s)
		return;
	if (s->sh)
		curl_share_cleanup(s->sh);
	for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&s->mu[i]);
	free(s);
}

/* ---- one easy handle ---- */

char *httpclient_user_agent(const char *given)
{
	struct buf ua = BUF_INIT;

	if (given)
		buf_puts(&ua, given);
	else
		buf_printf(&ua, "luascale/%s", LUASCALE_VERSION);
	if (ua.oom) {
		buf_free(&ua);
		return NULL;
	}
	return buf_take(&ua);
}

/* A PEM blob of ours, copied by libcurl (its struct takes no const). */
static void set_blob(CURL *c, CURLoption opt, const void *data, size_t len)
{
	struct curl_blob b = {NULL, len, CURL_BLOB_COPY};

	memcpy(&b.data, &data, sizeof(b.data));
	curl_easy_setopt(c, opt, &b);
}

static void set_tls(CURL *c, const struct httpclient_tls *t)
{
	static const struct httpclient_tls none;

	if (!t)
		t = &none;
	if (t->insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	} else {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	}
	if (t->ca_data) {
		set_blob(c, CURLOPT_CAINFO_BLOB, t->ca_data, t->ca_len);
		curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
	} else if (t->ca_file) {
		curl_easy_setopt(c, CURLOPT_CAINFO, t->ca_file);
		curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
	}
	if (t->cert_data) {
		set_blob(c, CURLOPT_SSLCERT_BLOB, t->cert_data, t->cert_len);
		curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
		set_blob(c, CURLOPT_SSLKEY_BLOB, t->key_data, t->key_len);
		curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (t->cert_file) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, t->cert_file);
		curl_easy_setopt(c, CURLOPT_SSLKEY, t->key_file);
	}
}

static void set_method(CURL *c, const char *method, const char *body, size_t body_len)
{
	if (strcmp(method, "GET") == 0 && !body) {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	} else if (strcmp(method, "HEAD") == 0) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else {
		if (strcmp(method, "POST") != 0)
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
		if (body) {
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		}
	}
}

CURL *httpclient_easy_new(struct httpclient_share *s, const struct httpclient_easy_opts *o)
{
	CURL *c = curl_easy_init();

	if (!c)
		return NULL;
	curl_easy_setopt(c, CURLOPT_URL, o->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, o->headers);
	if (o->user_agent)
		curl_easy_setopt(c, CURLOPT_USERAGENT, o->user_agent);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (s)
		curl_easy_setopt(c, CURLOPT_SHARE, s->sh);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	if (o->connect_ms > 0)
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o->connect_ms);
	if (o->timeout_ms > 0)
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, o->timeout_ms);
	if (o->idle_ms > 0) {
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (o->idle_ms + 999) / 1000);
	}
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	if (o->error_buf)
		curl_easy_setopt(c, CURLOPT_ERRORBUFFER, o->error_buf);
	if (o->on_write) {
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, o->on_write);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, o->write_ud);
	}
	if (o->on_header) {
		curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, o->on_header);
		curl_easy_setopt(c, CURLOPT_HEADERDATA, o->header_ud);
	}
	if (o->on_progress) {
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, o->on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, o->progress_ud);
	}
	if (o->on_debug) {
		curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, o->on_debug);
		curl_easy_setopt(c, CURLOPT_DEBUGDATA, o->debug_ud);
		curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
	}
	set_tls(c, o->tls);
	set_method(c, o->method, o->body, o->body_len);
	return c;
}

/* ---- a response body with a size cap ---- */

size_t httpclient_body_append(struct httpclient_body *b, const char *data, size_t n)
{
	if (b->data.len + n > b->max) {
		b->too_big = true;
		return 0;
	}
	if (buf_append(&b->data, data, n))
		return 0;
	return n;
}

size_t httpclient_body_write(char *data, size_t size, size_t nmemb, void *ud)
{
	return httpclient_body_append(ud, data, size * nmemb);
}

/* ---- header lists ---- */

struct curl_slist *httpclient_slist_add(struct curl_slist *l, const char *line, bool *fail)
{
	struct curl_slist *n;

	if (*fail)
		return l;
	n = curl_slist_append(l, line);
	if (!n)
		*fail = true;
	return n ? n : l;
}

void httpclient_slist_free(struct curl_slist *l)
{
	struct curl_slist *p;

	for (p = l; p; p = p->next)
		if (p->data)
			wipe(p->data, strlen(p->data));
	curl_slist_free_all(l);
}

/* ---- verbose output and errors ---- */

void httpclient_debug_lines(const char *data, size_t size,
			    void (*fn)(void *ud, const char *line, size_t len, bool first),
			    void *ud)
{
	size_t i = 0;
	bool first = true;

	while (i < size) {
		size_t j = i, len;

		while (j < size && data[j] != '\n')
			j++;
		len = j - i;
		if (len && data[i + len - 1] == '\r')
			len--;
		if (len)
			fn(ud, data + i, len, first);
		first = false;
		i = j + 1;
	}
}

void httpclient_error_text(CURL *h, CURLcode rc, const char *error_buf, char *out, size_t cap)
{
	long os_errno = 0;
	size_t l;

	if (!cap)
		return;
	snprintf(out, cap, "%s", error_buf && error_buf[0] ? error_buf : curl_easy_strerror(rc));
	while ((l = strlen(out)) && out[l - 1] == '\n')
		out[l - 1] = '\0';
	/* curl says "Couldn't connect to server"; the system says why */
	if (h && curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno) == CURLE_OK && os_errno > 0 &&
	    !strcasestr(out, strerror((int)os_errno))) {
		l = strlen(out);
		snprintf(out + l, cap - l, " (%s)", strerror((int)os_errno));
	}
}
