/*
 * jwt: RS256-signed JSON Web Tokens for OAuth assertions (RFC 7515, 7518,
 * 7523) with libcrypto: base64url, PEM RSA keys, the signature. Which
 * claims a token carries and where it goes are the provider's. Never
 * quotes a key.
 */
#include "providers/cloudhttp/jwt.h"

#include <stdlib.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>

void jwt_b64url(struct buf *out, const unsigned char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	char q[4];
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		q[0] = tab[p[i] >> 2];
		q[1] = tab[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
		q[2] = tab[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)];
		q[3] = tab[p[i + 2] & 63];
		buf_append(out, q, 4);
	}
	if (n - i == 1) {
		q[0] = tab[p[i] >> 2];
		q[1] = tab[(p[i] & 3) << 4];
		buf_append(out, q, 2);
	} else if (n - i == 2) {
		q[0] = tab[p[i] >> 2];
		q[1] = tab[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
		q[2] = tab[(p[i + 1] & 15) << 2];
		buf_append(out, q, 3);
	}
}

/* A pem_password_cb that refuses: an encrypted key is not read. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

EVP_PKEY *jwt_rsa_key_from_pem(const char *pem, int min_bits, const char *what,
			       struct errbuf *err)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;

	BIO_free(bio);
	ERR_clear_error();
	if (!key) {
		errbuf_set(err, "%s is not a readable unencrypted PEM private key", what);
		return NULL;
	}
	if (EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA || EVP_PKEY_get_bits(key) < min_bits) {
		EVP_PKEY_free(key);
		errbuf_set(err, "%s must be an RSA key of at least %d bits (RS256)", what, min_bits);
		return NULL;
	}
	return key;
}

int jwt_sign_rs256(EVP_PKEY *key, const struct buf *header, const struct buf *claims,
		   const char *signer, struct buf *out, struct errbuf *err)
{
	EVP_MD_CTX *md = NULL;
	unsigned char *sig = NULL;
	size_t siglen = 0, start = out->len;
	int rc = -1;

	if (header->oom || claims->oom) {
		errbuf_set(err, "JWT: out of memory");
		goto out;
	}
	jwt_b64url(out, (const unsigned char *)header->data, header->len);
	buf_puts(out, ".");
	jwt_b64url(out, (const unsigned char *)claims->data, claims->len);
	if (out->oom) {
		errbuf_set(err, "JWT: out of memory");
		goto out;
	}
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestSign(md, NULL, &siglen, (const unsigned char *)out->data + start,
			   out->len - start) != 1 ||
	    !(sig = malloc(siglen)) ||
	    EVP_DigestSign(md, sig, &siglen, (const unsigned char *)out->data + start,
			   out->len - start) != 1) {
		ERR_clear_error();
		errbuf_set(err, "JWT: RS256 signing with the key of %s failed", signer);
		goto out;
	}
	buf_puts(out, ".");
	jwt_b64url(out, sig, siglen);
	if (out->oom) {
		errbuf_set(err, "JWT: out of memory");
		goto out;
	}
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	free(sig);
	return rc;
}
