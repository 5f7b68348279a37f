/*
 * Tests for cloudhttp/jwt: unpadded base64url against RFC 4648's vectors,
 * PEM RSA keys (read, too small, not a key) and RS256 compact tokens whose
 * signature is libcrypto's own over their first two parts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "buf.h"
#include "providers/cloudhttp/jwt.h"

static void b64url_of(const char *in, size_t n, char *out, size_t len)
{
	struct buf b = BUF_INIT;

	jwt_b64url(&b, (const unsigned char *)in, n);
	assert_false(b.oom);
	snprintf(out, len, "%.*s", (int)b.len, b.data ? b.data : "");
	buf_free(&b);
}

static void test_b64url_vectors(void **state)
{
	/* RFC 4648 section 10, without the padding */
	static const char *const vec[][2] = {
		{ "", "" },         { "f", "Zg" },         { "fo", "Zm8" },         { "foo", "Zm9v" },
		{ "foob", "Zm9vYg" }, { "fooba", "Zm9vYmE" }, { "foobar", "Zm9vYmFy" },
	};
	char out[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		b64url_of(vec[i][0], strlen(vec[i][0]), out, sizeof(out));
		assert_string_equal(out, vec[i][1]);
	}
	/* the URL-safe alphabet: '-' and '_' where base64 has '+' and '/' */
	b64url_of("\xfb\xff", 2, out, sizeof(out));
	assert_string_equal(out, "-_8");
}

static char *pem_of(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *pem;
	long n;

	assert_non_null(b);
	assert_int_equal(PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL), 1);
	n = BIO_get_mem_data(b, &data);
	pem = calloc(1, (size_t)n + 1);
	assert_non_null(pem);
	memcpy(pem, data, (size_t)n);
	BIO_free(b);
	return pem;
}

static void test_key_from_pem(void **state)
{
	EVP_PKEY *gen = EVP_RSA_gen(2048), *small = EVP_RSA_gen(1024), *k;
	char *pem = pem_of(gen), *small_pem = pem_of(small);
	struct errbuf e = { "" };

	(void)state;
	k = jwt_rsa_key_from_pem(pem, 2048, "key K: private_key", &e);
	assert_non_null(k);
	assert_int_equal(EVP_PKEY_eq(k, gen), 1);
	EVP_PKEY_free(k);

	assert_null(jwt_rsa_key_from_pem(small_pem, 2048, "key K: private_key", &e));
	assert_string_equal(e.msg, "key K: private_key must be an RSA key of at least 2048 bits (RS256)");

	assert_null(jwt_rsa_key_from_pem("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE "
					 "KEY-----\n", 2048, "key K: private_key", &e));
	assert_string_equal(e.msg, "key K: private_key is not a readable unencrypted PEM private key");
	free(pem);
	free(small_pem);
	EVP_PKEY_free(gen);
	EVP_PKEY_free(small);
}

static void test_sign_rs256(void **state)
{
	EVP_PKEY *key = EVP_RSA_gen(2048);
	struct buf hdr = BUF_INIT, claims = BUF_INIT, out = BUF_INIT, want = BUF_INIT;
	struct errbuf e = { "" };
	unsigned char sig[512];
	size_t n = sizeof(sig), signed_len;
	const char *dot1, *dot2;
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	(void)state;
	buf_puts(&hdr, "{\"alg\":\"RS256\",\"typ\":\"JWT\"}");
	buf_puts(&claims, "{\"iss\":\"a@b\",\"iat\":1}");
	buf_puts(&out, "prefix:");
	if (jwt_sign_rs256(key, &hdr, &claims, "a@b", &out, &e) < 0)
		fail_msg("%s", e.msg);
	/* appended after what 'out' held, the first two parts as they are */
	assert_int_equal(strncmp(out.data, "prefix:", 7), 0);
	jwt_b64url(&want, (const unsigned char *)hdr.data, hdr.len);
	buf_puts(&want, ".");
	jwt_b64url(&want, (const unsigned char *)claims.data, claims.len);
	buf_puts(&want, ".");
	assert_int_equal(strncmp(out.data + 7, want.data, want.len), 0);
	dot1 = strchr(out.data + 7, '.');
	dot2 = strchr(dot1 + 1, '.');
	assert_non_null(dot2);
	assert_null(strchr(dot2 + 1, '.'));
	assert_null(strchr(out.data, '='));
	/* RSASSA-PKCS1-v1_5 is deterministic: the third part is libcrypto's own
	 * signature over header.claims */
	signed_len = (size_t)(dot2 - (out.data + 7));
	assert_int_equal(EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key), 1);
	assert_int_equal(EVP_DigestSign(md, sig, &n, (const unsigned char *)out.data + 7, signed_len), 1);
	assert_int_equal(n, 256);
	buf_free(&want);
	jwt_b64url(&want, sig, n);
	assert_string_equal(dot2 + 1, want.data);
	EVP_MD_CTX_free(md);
	buf_free(&hdr);
	buf_free(&claims);
	buf_free(&out);
	buf_free(&want);
	EVP_PKEY_free(key);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_b64url_vectors),
		cmocka_unit_test(test_key_from_pem),
		cmocka_unit_test(test_sign_rs256),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
