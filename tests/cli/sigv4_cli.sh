#!/usr/bin/env bash
# `luascale aws-sign`: AWS's published IAM ListUsers example signed from a
# raw request file (CRLF and LF, origin and absolute form, stdin), --verify
# on what it printed, the secret and token never printed, and file:line
# errors for malformed requests.
# usage: sigv4_cli.sh LUASCALE_BINARY SOURCE_DIR
set -u
BIN=$1
SRC=$2
cd "$SRC" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. tests/cli/lib.sh

D=tests/data/sigv4
export AWS_ACCESS_KEY_ID=AKIDEXAMPLE
export AWS_SECRET_ACCESS_KEY='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
unset AWS_SESSION_TOKEN
AUTHZ=$(cat $D/iam-listusers.authz)
SIGN=("$BIN" aws-sign --region us-east-1 --service iam)

# The canonical request and string to sign as printed, cut out of stdout.
section() { # LABEL NEXT_LABEL
  awk -v a="$1:" -v b="$2:" '$0 == a {on = 1; next} $0 == b {on = 0} on' "$TMP/out"
}

t="signs AWS's example: the documented canonical request, string to sign and Authorization"
if run "$t" 0 "${SIGN[@]}" --request $D/iam-listusers.req --time 20150830T123600Z &&
   has out "Authorization: $AUTHZ" && has out "X-Amz-Date: 20150830T123600Z" &&
   [ "$(section CanonicalRequest StringToSign)" = "$(cat $D/iam-listusers.creq)" ] &&
   [ "$(section StringToSign Signature)" = "$(cat $D/iam-listusers.sts)" ] &&
   ! has out "EXAMPLEKEY"; then ok "$t"; else not_ok "$t"; fi

t="without --time the request's X-Amz-Date is the signing time"
if run "$t" 0 "${SIGN[@]}" --request $D/iam-listusers.req && has out "Authorization: $AUTHZ"; then
  ok "$t"; else not_ok "$t"; fi

t="LF line ends, the absolute form of AWS's example, and standard input give the same"
sed 's/\r$//; s#^GET /?#GET https://iam.amazonaws.com/?#' $D/iam-listusers.req >"$TMP/lf.req"
if run "$t" 0 "${SIGN[@]}" --request - --time 20150830T123600Z <"$TMP/lf.req" &&
   has out "Authorization: $AUTHZ"; then ok "$t"; else not_ok "$t"; fi

t="an absolute target without a path signs the path /"
printf 'GET https://iam.amazonaws.com HTTP/1.1\nHost: iam.amazonaws.com\n\n' >"$TMP/nopath.req"
if run "$t" 0 "${SIGN[@]}" --request "$TMP/nopath.req" --time 20150830T123600Z &&
   [ "$(section CanonicalRequest StringToSign | head -3)" = "$(printf 'GET\n/\n')" ]; then
  ok "$t"; else not_ok "$t"; fi

t="--time moves the signing time and the signature"
if run "$t" 0 "${SIGN[@]}" --request $D/iam-listusers.req --time 20150830T123601Z &&
   has out "X-Amz-Date: 20150830T123601Z" && ! has out "$AUTHZ"; then ok "$t"; else not_ok "$t"; fi

t="--verify accepts the documented request and signature"
{ cat $D/iam-listusers.req | sed '/^\r$/d'; printf 'Authorization: %s\r\n\r\n' "$AUTHZ"; } >"$TMP/signed.req"
if run "$t" 0 "$BIN" aws-sign --verify --request "$TMP/signed.req" --time 20150830T124000Z &&
   has out "Verified"; then ok "$t"; else not_ok "$t"; fi

t="--verify refuses a wrong secret, a stale request and a changed header, with AWS's codes"
sed 's/charset=utf-8/charset=latin1/' "$TMP/signed.req" >"$TMP/changed.req"
if AWS_SECRET_ACCESS_KEY=wrong run "$t" 2 "$BIN" aws-sign --verify --request "$TMP/signed.req" \
     --time 20150830T124000Z && has out "SignatureDoesNotMatch" &&
   run "$t" 2 "$BIN" aws-sign --verify --request "$TMP/signed.req" --time 20150830T130000Z &&
   has out "RequestExpired" &&
   run "$t" 2 "$BIN" aws-sign --verify --request "$TMP/changed.req" --time 20150830T124000Z &&
   has out "SignatureDoesNotMatch" && has out "charset=latin1" &&
   AWS_ACCESS_KEY_ID=AKIDOTHER run "$t" 2 "$BIN" aws-sign --verify --request "$TMP/signed.req" \
     --time 20150830T124000Z && has out "InvalidClientTokenId" &&
   run "$t" 2 "$BIN" aws-sign --verify --request "$TMP/signed.req" --service ec2 \
     --time 20150830T124000Z && has out "SignatureDoesNotMatch: Credential should be scoped"; then
  ok "$t"; else not_ok "$t"; fi

t="a session token is signed and sent, but printed only as <redacted>"
if AWS_SESSION_TOKEN='SECRETTOKEN/abc==' run "$t" 0 "${SIGN[@]}" --request $D/iam-listusers.req &&
   has out "x-amz-security-token:<redacted>" && has out "X-Amz-Security-Token: <redacted>" &&
   has out "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token" &&
   ! has out "SECRETTOKEN"; then ok "$t"; else not_ok "$t"; fi

t="a body: its SHA-256 is the payload hash; Content-Length must agree"
printf 'POST / HTTP/1.1\nHost: sts.amazonaws.com\nContent-Length: 43\n\nAction=GetCallerIdentity&Version=2011-06-15' >"$TMP/post.req"
H=$(printf 'Action=GetCallerIdentity&Version=2011-06-15' | sha256sum | cut -d' ' -f1)
printf 'POST / HTTP/1.1\nHost: sts.amazonaws.com\nContent-Length: 44\n\nAction=GetCallerIdentity&Version=2011-06-15' >"$TMP/short.req"
if run "$t" 0 "${SIGN[@]}" --request "$TMP/post.req" --time 20150830T123600Z && has out "$H" &&
   has out "content-length;host;x-amz-date" &&
   run "$t" 2 "${SIGN[@]}" --request "$TMP/short.req" --time 20150830T123600Z &&
   has err "Content-Length says 44 bytes"; then ok "$t"; else not_ok "$t"; fi

# malformed requests: each names the file and line
check_bad() { # NAME CONTENT EXPECTED_ERR
  printf "$2" >"$TMP/bad.req"
  t="malformed request refused: $1"
  if run "$t" 2 "${SIGN[@]}" --request "$TMP/bad.req" --time 20150830T123600Z &&
     has err "$3"; then ok "$t"; else not_ok "$t"; fi
}
check_bad "no Host header" 'GET / HTTP/1.1\nX-A: b\n\n' "no Host header"
check_bad "a line without a colon" 'GET / HTTP/1.1\nHost: a\nnot a header\n\n' "bad.req:3: expected \"Name: value\""
check_bad "a folded header" 'GET / HTTP/1.1\nHost: a\nX-A: b\n  c\n\n' "bad.req:4: folded header"
check_bad "a request line without version" 'GET /\nHost: a\n\n' "bad.req:1: the request line"
check_bad "a relative target" 'GET x HTTP/1.1\nHost: a\n\n' "bad.req:1: the request target"
check_bad "a space in a name" 'GET / HTTP/1.1\nHost : a\n\n' "bad.req:2: a header name cannot hold spaces"
check_bad "a bare CR in a value" 'GET / HTTP/1.1\nHost: a\nX-A: b\rc\n\n' "bad.req:3: the header value holds a control character"
check_bad "an empty file" '' "bad.req:1: empty request"
check_bad "a fragment" 'GET https://a?x=1#f HTTP/1.1\nHost: a\n\n' "bad.req:1: the request target holds a fragment"
check_bad "a bad query escape" 'GET /?a=%%zz HTTP/1.1\nHost: a\n\n' "malformed %-escape"

t="usage errors: missing flags, missing credentials, a bad --time"
if run "$t" 1 "$BIN" aws-sign --request $D/iam-listusers.req &&
   run "$t" 1 "$BIN" aws-sign --request $D/iam-listusers.req --region r --service s --time yesterday &&
   run "$t" 2 env -u AWS_SECRET_ACCESS_KEY "$BIN" aws-sign --request $D/iam-listusers.req \
     --region r --service s && has err "AWS_SECRET_ACCESS_KEY is not set"; then
  ok "$t"; else not_ok "$t"; fi

finish
