#!/usr/bin/python3
"""`luascale gce-jwt` checked by Google's own auth library (Debian's
python3-google-auth): every assertion luascale signs for a fresh
service-account key must decode and verify with google.auth.jwt.decode
(signature, aud, iat/exp window), carry the header and claims google-auth
itself puts in a service-account grant, and a tampered one must be refused.
Fails (never skips) when google-auth or cryptography is missing.

usage: gce_jwt_google_auth.py LUASCALE
"""
import base64
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
from unittest import mock

try:
    import google.auth._helpers as gahelpers
    import google.auth.crypt
    import google.auth.jwt as gajwt
    from google.oauth2 import service_account
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
except ImportError as e:  # a missing oracle is a failure, not a skip
    print("FAIL: python3-google-auth / python3-cryptography missing: %s" % e)
    sys.exit(1)

LUASCALE = sys.argv[1]
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def at(t):
    """google-auth's clock pinned to unix time t."""
    return mock.patch.object(gahelpers, "utcnow",
                             return_value=datetime.datetime.utcfromtimestamp(t))


def luascale_jwt(key_file, t, scope=None, aud=None):
    cmd = [LUASCALE, "gce-jwt", "--key", key_file, "--time", str(t)]
    if scope:
        cmd += ["--scope", scope]
    if aud:
        cmd += ["--aud", aud]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise SystemExit("FAIL: %s exited %d: %s" % (cmd, p.returncode, p.stderr))
    return p.stdout.strip()


def b64url_flip(seg):
    """The segment with its first character changed."""
    return ("A" if seg[0] != "A" else "B") + seg[1:]


def main(tmp):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    pub = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key() \
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    token_uri = "https://oauth2.googleapis.com/token"
    info = {
        "type": "service_account",
        "project_id": "luascale-test",
        "private_key_id": "0123456789abcdef0123456789abcdef01234567",
        "private_key": pem,
        "client_email": "autoscaler@luascale-test.iam.gserviceaccount.com",
        "client_id": "100000000000000000001",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": token_uri,
    }
    key_file = os.path.join(tmp, "sa.json")
    with open(key_file, "w") as f:
        json.dump(info, f)

    cases = [
        (1800000000, None, None),
        (1700000123, "https://www.googleapis.com/auth/cloud-platform", None),
        (2000000000, "https://www.googleapis.com/auth/compute "
                     "https://www.googleapis.com/auth/devstorage.read_only", None),
        (1800000777, None, "http://127.0.0.1:8931/token"),
    ]
    for t, scope, aud in cases:
        jwt = luascale_jwt(key_file, t, scope, aud)
        want_aud = aud or token_uri
        want_scope = scope or "https://www.googleapis.com/auth/compute"
        with at(t + 5):
            claims = gajwt.decode(jwt, certs=pub, audience=want_aud)
        header = gajwt.decode_header(jwt)
        check(header == {"alg": "RS256", "typ": "JWT", "kid": info["private_key_id"]},
              "header at %d: %r" % (t, header))
        check(claims == {"iss": info["client_email"], "scope": want_scope, "aud": want_aud,
                         "iat": t, "exp": t + 3600},
              "claims at %d: %r" % (t, claims))
        # the verifier on its own, as google-auth's signers' callers use it
        signed, _, sig = jwt.rpartition(".")
        verifier = google.auth.crypt.RSAVerifier.from_string(pub)
        check(verifier.verify(signed.encode(), gahelpers.padded_urlsafe_b64decode(sig)),
              "RSAVerifier refused the signature at %d" % t)

        # what google-auth itself sends for this key at the same time:
        # the same header and the same claims (its own signature, not bytes)
        creds = service_account.Credentials.from_service_account_info(
            info, scopes=want_scope.split(" "))
        if aud:
            creds = service_account.Credentials(
                creds.signer, info["client_email"], aud, scopes=want_scope.split(" "))
        with at(t):
            theirs = creds._make_authorization_grant_assertion()
        theirs = theirs.decode() if isinstance(theirs, bytes) else theirs
        check(gajwt.decode_header(theirs) == header,
              "google-auth's header %r != luascale's %r" % (gajwt.decode_header(theirs), header))
        check(gajwt.decode(theirs, verify=False) == claims,
              "google-auth's claims %r != luascale's %r" % (gajwt.decode(theirs, verify=False),
                                                           claims))

        # tampering: claims changed under the old signature, a flipped
        # signature, a foreign key, the wrong audience, an expired token
        h, c, s = jwt.split(".")
        forged = dict(claims, iss="intruder@evil.example")
        forged_c = base64.urlsafe_b64encode(
            json.dumps(forged, separators=(",", ":")).encode()).decode().rstrip("=")
        tampered = [
            ("claims", "%s.%s.%s" % (h, forged_c, s), pub, want_aud, t + 5),
            ("signature", "%s.%s.%s" % (h, c, b64url_flip(s)), pub, want_aud, t + 5),
            ("foreign key", jwt, other, want_aud, t + 5),
            ("audience", jwt, pub, "https://example.com/token", t + 5),
            ("expired", jwt, pub, want_aud, t + 3600 + 301 + 5),
        ]
        for what, tok, certs, audience, now in tampered:
            try:
                with at(now):
                    gajwt.decode(tok, certs=certs, audience=audience)
                check(False, "google-auth accepted the %s-tampered assertion at %d" % (what, t))
            except ValueError:
                pass

    # a key without private_key_id: no kid, as google-auth omits it
    nokid = dict(info)
    del nokid["private_key_id"]
    nokid_file = os.path.join(tmp, "nokid.json")
    with open(nokid_file, "w") as f:
        json.dump(nokid, f)
    jwt = luascale_jwt(nokid_file, 1800000000)
    check(gajwt.decode_header(jwt) == {"alg": "RS256", "typ": "JWT"},
          "header without kid: %r" % gajwt.decode_header(jwt))

    # keys luascale must refuse, with a message saying what is supported
    bad = {
        "authorized_user.json": ({"type": "authorized_user", "client_id": "x",
                                  "client_secret": "s3kr1t", "refresh_token": "r"},
                                 "service_account"),
        "http_token_uri.json": (dict(info, token_uri="http://oauth2.example.com/token"), "https"),
        "no_email.json": ({k: v for k, v in info.items() if k != "client_email"},
                          "client_email"),
    }
    for name, (content, needle) in bad.items():
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            json.dump(content, f)
        p = subprocess.run([LUASCALE, "gce-jwt", "--key", path, "--time", "1800000000"],
                           capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and needle in p.stderr and "s3kr1t" not in p.stderr
              and "PRIVATE KEY" not in p.stderr,
              "%s: exit %d, stderr %r" % (name, p.returncode, p.stderr))

    if FAILS:
        print("%d failure(s)" % len(FAILS))
        sys.exit(1)
    print("ok: %d assertions verified by google-auth, tampering refused" % len(cases))


if __name__ == "__main__":
    TMP = tempfile.mkdtemp(prefix="gcejwt.")
    try:
        main(TMP)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)  # the keys do not stay behind

