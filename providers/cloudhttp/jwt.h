/*
 * jwt: signed JSON Web Tokens as the OAuth JWT bearer grant and client
 * assertions use them (RFC 7515 compact JWS, RFC 7518 RS256, RFC 7523):
 * unpadded base64url, RSA private keys read from PEM, RS256 signing. It
 * knows no cloud: which claims a token carries is the provider's.
 */
#ifndef LUASCALE_JWT_H
#define LUASCALE_JWT_H

#include <stddef.h>

#include <openssl/evp.h>

#include "buf.h"
#include "errbuf.h"

/* Appends the unpadded base64url (RFC 4648 section 5) of 'n' bytes at 'p'
 * to 'out'. Out of memory sets out->oom. */
void jwt_b64url(struct buf *out, const unsigned char *p, size_t n);

/*
 * Reads an unencrypted PEM private key (PKCS#8 or PKCS#1) that must be RSA
 * of at least 'min_bits' bits. Returns the key (EVP_PKEY_free it), or NULL
 * with "WHAT is not a readable unencrypted PEM private key" or "WHAT must
 * be an RSA key of at least N bits (RS256)". Never quotes the key.
 */
EVP_PKEY *jwt_rsa_key_from_pem(const char *pem, int min_bits, const char *what,
			       struct errbuf *err);

/*
 * Appends to 'out' the compact JWS base64url(header).base64url(claims).
 * base64url(signature), the signature RS256 (RSASSA-PKCS1-v1_5 SHA-256)
 * with 'key' over the first two parts. 'header' and 'claims' are JSON
 * texts. 'signer' names the key in a failure ("JWT: RS256 signing with the
 * key of SIGNER failed"). Returns 0, or -1 with a message ('out' may then
 * hold part of the token: wipe it).
 */
int jwt_sign_rs256(EVP_PKEY *key, const struct buf *header, const struct buf *claims,
		   const char *signer, struct buf *out, struct errbuf *err);

#endif
