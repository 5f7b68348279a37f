/*
 * Tests for cloudhttp/oauth's shared pieces that need no server: endpoint
 * URL checks, secret and token files, credential fields, the grants' forms
 * and token answers under each rule (the token endpoint's POST and the
 * cached token are exercised by test_gceauth and test_azureauth through
 * their fake servers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "buf.h"
#include "providers/cloudhttp/oauth.h"

#define T0 1800000000LL

static void test_check_url(void **state)
{
	struct errbuf e = { "" };

	(void)state;
	assert_int_equal(oauth_check_url("https://login.example.com/t/oauth2/v2.0/token", "w", false, &e), 0);
	assert_int_equal(oauth_check_url("http://127.0.0.1:8080/token", "w", false, &e), 0);
	assert_int_equal(oauth_check_url("http://[::1]:8080/token", "w", false, &e), 0);
	assert_int_equal(oauth_check_url("http://localhost/token", "w", false, &e), 0);
	assert_int_equal(oauth_check_url("http://169.254.169.254", "w", true, &e), 0);

	assert_int_equal(oauth_check_url("http://169.254.169.254", "imds", false, &e), -1);
	assert_string_equal(e.msg, "imds: http://169.254.169.254 must be https (http only to a "
			    "loopback address, for a local simulator)");
	assert_int_equal(oauth_check_url("http://example.com/t", "imds", true, &e), -1);
	assert_non_null(strstr(e.msg, ", or to the metadata service at 169.254.169.254)"));
	assert_int_equal(oauth_check_url("https://example.com/t?a=b", "w", false, &e), -1);
	assert_string_equal(e.msg, "w: https://example.com/t?a=b must have no query or fragment");
	assert_int_equal(oauth_check_url("https://example.com/t#x", "w", false, &e), -1);
	assert_non_null(strstr(e.msg, "no query or fragment"));
	assert_int_equal(oauth_check_url("", "w", false, &e), -1);
	assert_string_equal(e.msg, "w: the URL is empty");
	assert_int_equal(oauth_check_url("https://exa mple.com/", "w", false, &e), -1);
	assert_string_equal(e.msg, "w: the URL holds a space or a control character");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_read_secret_file(void **state)
{
	char dir[] = "/tmp/test_oauth_XXXXXX", path[300];
	struct errbuf e = { "" };
	struct buf b = BUF_INIT;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/secret", dir);
	write_file(path, "  eyJ.S3KR1T \n\n");
	assert_int_equal(oauth_read_secret_file(path, "the token file", &b, &e), 0);
	assert_string_equal(b.data, "eyJ.S3KR1T");
	assert_int_equal(b.len, 10);
	oauth_wipe_buf(&b);

	write_file(path, " \n\t\n");
	assert_int_equal(oauth_read_secret_file(path, "the token file", &b, &e), -1);
	oauth_wipe_buf(&b);
	assert_non_null(strstr(e.msg, "the token file "));
	assert_non_null(strstr(e.msg, " is empty"));

	write_file(path, "two words\n");
	assert_int_equal(oauth_read_secret_file(path, "the token file", &b, &e), -1);
	oauth_wipe_buf(&b);
	assert_non_null(strstr(e.msg, "not printable ASCII"));
	assert_null(strstr(e.msg, "words"));

	unlink(path);
	assert_int_equal(oauth_read_secret_file(path, "the token file", &b, &e), -1);
	oauth_wipe_buf(&b);
	assert_non_null(strstr(e.msg, "the token file"));
	assert_non_null(strstr(e.msg, "cannot read"));
	rmdir(dir);
}

static void test_read_token_file(void **state)
{
	char dir[] = "/tmp/test_oauth_XXXXXX", path[300];
	struct errbuf e = { "" };
	struct buf b = BUF_INIT;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/token", dir);
	/* trailing blanks go; leading ones and spaces inside stay */
	write_file(path, " eyJ.S3KR1T two \n\n");
	assert_int_equal(oauth_read_token_file(path, "web identity token file", &b, &e), 0);
	assert_string_equal(b.data, " eyJ.S3KR1T two");
	assert_int_equal(b.len, 15);
	oauth_wipe_buf(&b);

	write_file(path, "\n \n");
	assert_int_equal(oauth_read_token_file(path, "web identity token file", &b, &e), -1);
	oauth_wipe_buf(&b);
	assert_non_null(strstr(e.msg, "web identity token file: "));
	assert_non_null(strstr(e.msg, " is empty"));

	write_file(path, "eyJ.S3KR1T\nsecond line\n");
	assert_int_equal(oauth_read_token_file(path, "T", &b, &e), -1);
	oauth_wipe_buf(&b);
	assert_non_null(strstr(e.msg, "holds a control character (a token is one line)"));
	assert_null(strstr(e.msg, "S3KR1T"));

	unlink(path);
	assert_int_equal(oauth_read_token_file(path, "T", &b, &e), -1);
	oauth_wipe_buf(&b);
	assert_non_null(strstr(e.msg, "cannot read"));
	rmdir(dir);
}

static void test_fields(void **state)
{
	struct errbuf e = { "" };
	char out[8] = "";

	(void)state;
	assert_int_equal(oauth_copy_field(out, sizeof(out), "AKIA1234xyz", 7, "the key", "W", &e), 0);
	assert_string_equal(out, "AKIA123");
	assert_int_equal(oauth_copy_field(out, sizeof(out), "AKIA1234", 8, "the key", "W", &e), -1);
	assert_string_equal(e.msg, "W: the key is longer than 7 bytes");
	assert_int_equal(oauth_check_field("", 0, sizeof(out), "the key", "W", &e), -1);
	assert_string_equal(e.msg, "W: the key is empty");
	assert_int_equal(oauth_check_field("a b", 3, sizeof(out), "the key", "W", &e), -1);
	assert_string_equal(e.msg, "W: the key holds a character that is not printable ASCII");
	/* the length given is checked, a NUL inside too */
	assert_int_equal(oauth_check_field("ab\0c", 4, sizeof(out), "the key", "W", &e), -1);
	assert_int_equal(oauth_check_field("ab\x7f", 3, sizeof(out), "the key", "W", &e), -1);
	assert_string_equal(out, "AKIA123");
}

static void test_forms(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	oauth_form_jwt_bearer(&b, "a.b.c");
	assert_string_equal(b.data, "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"
			    "&assertion=a.b.c");
	buf_free(&b);
	oauth_form_client_credentials(&b, "cid", "https://management.azure.com/.default", "s e",
				      NULL);
	assert_string_equal(b.data, "grant_type=client_credentials&client_id=cid&scope=https%3A%2F%2F"
			    "management.azure.com%2F.default&client_secret=s%20e");
	buf_free(&b);
	oauth_form_client_credentials(&b, "cid", "sc", NULL, "eyJ.x");
	assert_string_equal(b.data, "grant_type=client_credentials&client_id=cid&scope=sc"
			    "&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type"
			    "%3Ajwt-bearer&client_assertion=eyJ.x");
	buf_free(&b);
}

static int parse(const char *body, const struct oauth_token_rules *r, char *tok, size_t len,
		 int64_t *exp, struct errbuf *e)
{
	return oauth_parse_token(body, "W", T0, r, tok, len, exp, e);
}

static void test_parse_token(void **state)
{
	static const struct oauth_token_rules azure = { .type_required = true, .expires_on = true };
	struct oauth_token_rules imds = azure;
	struct errbuf e = { "" };
	char tok[32];
	int64_t exp = 0;

	(void)state;
	/* token_type may be absent without rules, never another type */
	assert_int_equal(parse("{\"access_token\":\"ya29.x\",\"expires_in\":3599}", NULL, tok,
			       sizeof(tok), &exp, &e), 0);
	assert_string_equal(tok, "ya29.x");
	assert_int_equal(exp, T0 + 3599);
	assert_int_equal(parse("{\"access_token\":\"ya29.x\",\"expires_in\":3599,\"token_type\":\"MAC\"}",
			       NULL, tok, sizeof(tok), &exp, &e), -1);
	assert_string_equal(e.msg, "W: token_type is not \"Bearer\"");
	assert_int_equal(parse("{\"access_token\":\"ya29.x\",\"expires_in\":3599}", &azure, tok,
			       sizeof(tok), &exp, &e), -1);
	assert_string_equal(e.msg, "W: token_type is not \"Bearer\"");

	/* a string expires_in and expires_on only under the rule */
	assert_int_equal(parse("{\"access_token\":\"t\",\"expires_in\":\"3599\"}", NULL, tok,
			       sizeof(tok), &exp, &e), -1);
	assert_string_equal(e.msg, "W: the answer has no number expires_in");
	assert_int_equal(parse("{\"access_token\":\"t\",\"token_type\":\"bearer\",\"expires_in\":\"86399\"}",
			       &azure, tok, sizeof(tok), &exp, &e), 0);
	assert_int_equal(exp, T0 + 86399);
	assert_int_equal(parse("{\"access_token\":\"t\",\"token_type\":\"Bearer\",\"expires_on\":\"1800003600\"}",
			       &azure, tok, sizeof(tok), &exp, &e), 0);
	assert_int_equal(exp, T0 + 3600);
	assert_int_equal(parse("{\"access_token\":\"t\",\"token_type\":\"Bearer\"}", &azure, tok,
			       sizeof(tok), &exp, &e), -1);
	assert_string_equal(e.msg, "W: the answer has neither expires_in nor expires_on");

	/* the lifetime, the token itself, the answer */
	assert_int_equal(parse("{\"access_token\":\"t\",\"expires_in\":0}", NULL, tok, sizeof(tok),
			       &exp, &e), -1);
	assert_string_equal(e.msg, "W: the token's lifetime 0 s is not between 1 s and 7 days");
	assert_int_equal(parse("{\"access_token\":\"t\",\"expires_in\":604801}", NULL, tok,
			       sizeof(tok), &exp, &e), -1);
	assert_int_equal(parse("{\"access_token\":\"S3KR1T S3KR1T\",\"expires_in\":60}", NULL, tok,
			       sizeof(tok), &exp, &e), -1);
	assert_non_null(strstr(e.msg, "not printable ASCII"));
	assert_null(strstr(e.msg, "S3KR1T"));
	assert_int_equal(parse("{\"access_token\":\"0123456789012345678901234567890123\","
			       "\"expires_in\":60}", NULL, tok, sizeof(tok), &exp, &e), -1);
	assert_non_null(strstr(e.msg, "longer than 31 bytes"));
	assert_int_equal(parse("{\"access_token\":\"\",\"expires_in\":60}", NULL, tok, sizeof(tok),
			       &exp, &e), -1);
	assert_string_equal(e.msg, "W: the answer has no string access_token");
	assert_int_equal(parse("[1]", NULL, tok, sizeof(tok), &exp, &e), -1);
	assert_string_equal(e.msg, "W: the answer is not a JSON object");

	/* another audience or identity is refused; trailing slashes and case do not matter */
	imds.resource = "https://management.azure.com/";
	imds.client_id = "ABC";
	assert_int_equal(parse("{\"access_token\":\"t\",\"token_type\":\"Bearer\",\"expires_in\":60,"
			       "\"resource\":\"https://management.azure.com\",\"client_id\":\"abc\"}",
			       &imds, tok, sizeof(tok), &exp, &e), 0);
	assert_int_equal(parse("{\"access_token\":\"t\",\"token_type\":\"Bearer\",\"expires_in\":60,"
			       "\"resource\":\"https://vault.azure.net\"}", &imds, tok, sizeof(tok),
			       &exp, &e), -1);
	assert_string_equal(e.msg, "W: the token is for https://vault.azure.net, not "
			    "https://management.azure.com/: refused");
	assert_int_equal(parse("{\"access_token\":\"t\",\"token_type\":\"Bearer\",\"expires_in\":60,"
			       "\"client_id\":\"xyz\"}", &imds, tok, sizeof(tok), &exp, &e), -1);
	assert_string_equal(e.msg, "W: the token is for identity xyz, not ABC: refused");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_url),
		cmocka_unit_test(test_read_secret_file),
		cmocka_unit_test(test_read_token_file),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_parse_token),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
