#!/usr/bin/python3
"""
The SigV4 signer and verifier against an independent implementation:
Debian's python3-botocore (botocore.auth.SigV4Auth). Generates requests
from a seed (many headers, odd spacing and tabs, repeated and mixed-case
headers, query strings with reserved characters, empty values and repeated
keys, unicode, odd paths, bodies, session tokens, GET/POST/...), and checks

  1. `luascale aws-sign` prints the Authorization header botocore computes
     for the same request, the same time and the same credentials;
  2. `luascale aws-sign --verify` accepts the request exactly as botocore
     signed it (botocore's headers, X-Amz-Date, X-Amz-Security-Token and
     Authorization), and refuses it with a changed body, a changed signed
     header or another secret;
  3. what botocore's real ec2, autoscaling and sts clients send over a
     loopback socket (recorded byte for byte) passes `--verify`.

Known, deliberate differences are kept out of the comparison (docs/providers/
aws.md): luascale never signs the hop-by-hop headers connection, keep-alive,
proxy-authorization, te, trailer, transfer-encoding, upgrade (botocore
does), so they are put in luascale's request file but not given to
botocore; and a Date header (botocore then signs Date instead of
X-Amz-Date) is not generated.

Run under /usr/bin/python3 (Debian's botocore); fails when botocore is
missing. usage: sigv4_botocore.py LUASCALE [--seed N] [--profiles N] [--per N]
"""
import argparse
import datetime
import hashlib
import http.server
import os
import random
import subprocess
import sys
import tempfile
import threading
import types
import urllib.parse

try:
    import botocore.auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
except ImportError as e:  # a missing oracle is a failure, never a skip
    print("not ok - botocore is not importable under %s: %s (install python3-botocore)"
          % (sys.executable, e))
    sys.exit(1)

HOP_BY_HOP = ["Connection", "Keep-Alive", "Proxy-Authorization", "TE", "Trailer",
              "Transfer-Encoding", "Upgrade"]
BOTO_UNSIGNED = ["User-Agent", "Expect", "X-Amzn-Trace-Id"]
TCHARS = "!#$%&'*+-.^_`|~"
UNICODE = ["é", "€", "日本", "ß", "Ω", "😀", "ñ"]
REGIONS = ["us-east-1", "eu-west-3", "ap-southeast-2", "cn-north-1", "us-gov-west-1"]
SERVICES = ["ec2", "autoscaling", "sts", "iam", "execute-api"]
METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "post"]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def choice(self, xs):
        return self.r.choice(xs)

    def chance(self, p):
        return self.r.random() < p

    def text(self, alphabet, lo, hi):
        return "".join(self.r.choice(alphabet) for _ in range(self.r.randint(lo, hi)))

    def header_name(self):
        base = self.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-" +
                         (TCHARS if self.chance(0.2) else ""), 1, 20)
        return self.choice(["X-Amz-Meta-", "x-", "X-Custom-", ""]) + base

    def header_value(self):
        if self.chance(0.1):
            return ""
        parts = []
        for _ in range(self.r.randint(1, 5)):
            word = self.text("abcdefghijklmnopqrstuvwxyzABCDEF0123456789!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", 0, 12)
            if self.chance(0.2):
                word += self.choice(UNICODE)
            parts.append(word)
        seps = [" ", "  ", "\t", " \t ", "   "]
        v = parts[0]
        for p in parts[1:]:
            v += self.choice(seps) + p
        if self.chance(0.3):
            v = self.choice(seps) + v
        if self.chance(0.3):
            v = v + self.choice(seps)
        return v

    def path(self):
        if self.chance(0.1):
            return "/"
        segs = []
        for _ in range(self.r.randint(0, 6)):
            kind = self.r.random()
            if kind < 0.1:
                segs.append(self.choice([".", "..", ""]))
            elif kind < 0.2:
                segs.append(self.choice(["%20", "%2F", "%C3%A9", "%c3%a9", "%25", "%7E"]))
            elif kind < 0.3:
                segs.append(self.choice(UNICODE))
            else:
                segs.append(self.text("abcXYZ019-_.~!$&'()*+,;=:@\\", 1, 10))
        p = "/" + "/".join(segs)
        if self.chance(0.2):
            p += "/"
        return p

    def qtext(self):
        if self.chance(0.15):
            return ""
        s = self.text("abcXYZ019-_.~ !\"#$%&'()*+,/:;<=>?@[\\]^`{|}", 1, 10)
        if self.chance(0.2):
            s += self.choice(UNICODE)
        return s

    def query(self):
        if self.chance(0.25):
            return ""
        pairs = []
        keys = []
        for _ in range(self.r.randint(1, 8)):
            if keys and self.chance(0.25):
                k = self.choice(keys)  # a repeated key
            else:
                k = self.qtext() or "k"
                keys.append(k)
            ek = urllib.parse.quote(k, safe="-_.~")
            v = self.qtext()
            if v == "" and self.chance(0.5):
                pairs.append(ek)  # "k" with no '=' at all
            else:
                pairs.append(ek + "=" + urllib.parse.quote(v, safe="-_.~"))
        return "&".join(pairs)

    def body(self):
        if self.chance(0.4):
            return b""
        return self.text("abcdefXYZ0123456789&=%+ \n\t" + "".join(UNICODE), 1, 200).encode()

    def request(self, token):
        host = self.choice(["ec2.us-east-1.amazonaws.com", "sts.amazonaws.com",
                            "autoscaling.eu-west-3.amazonaws.com", "127.0.0.1:8443",
                            "Example.AmazonAWS.com"])
        headers = [(self.choice(["Host", "host", "HOST"]), host)]
        names = []
        for _ in range(self.r.randint(0, 14)):
            if names and self.chance(0.25):
                n = self.choice(names)  # a repeat, maybe in another case
                n = self.choice([n, n.lower(), n.upper()])
            else:
                n = self.header_name()
                names.append(n)
            headers.append((n, self.header_value()))
        if self.chance(0.3):
            headers.append(("Content-Type", "application/x-www-form-urlencoded; charset=utf-8"))
        for n in BOTO_UNSIGNED + HOP_BY_HOP:
            if self.chance(0.1):
                headers.append((n, self.header_value() or "x"))
        if self.chance(0.15):
            headers.append(("X-Amz-Date", "20000101T000000Z"))  # stale: both replace it
        if self.chance(0.15):
            headers.append(("X-Amz-Security-Token", "stale-token"))
        body = self.body()
        if body and self.chance(0.3):
            headers.append(("Content-Length", str(len(body))))
        if self.chance(0.08):
            headers.append(("X-Amz-Content-SHA256",
                            self.choice(["UNSIGNED-PAYLOAD", hashlib.sha256(body).hexdigest()])))
        self.r.shuffle(headers)
        return {
            "method": self.choice(METHODS),
            "host": host,
            "path": self.path(),
            "query": self.query(),
            "headers": headers,
            "body": body,
        }


def wire(req, headers):
    target = req["path"] + ("?" + req["query"] if req["query"] else "")
    out = "%s %s HTTP/1.1\r\n" % (req["method"], target)
    for n, v in headers:
        out += "%s: %s\r\n" % (n, v)
    return out.encode() + b"\r\n" + req["body"]


class Recorder(http.server.BaseHTTPRequestHandler):
    """Records each request as it came over the socket and answers an
    AWS-shaped error, so the client gives up at once."""
    seen = []

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        raw = self.raw_requestline.rstrip(b"\r\n") + b"\r\n"
        for k, v in self.headers.items():
            raw += ("%s: %s\r\n" % (k, v)).encode("latin-1")
        Recorder.seen.append(raw + b"\r\n" + body)
        answer = (b"<ErrorResponse><Error><Type>Sender</Type><Code>Recorded</Code>"
                  b"<Message>recorded</Message></Error><RequestId>r</RequestId></ErrorResponse>")
        self.send_response(400)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_GET = do_POST

    def log_message(self, *args):
        pass


def over_the_wire(binary, tmp):
    """botocore's real clients (ec2, autoscaling, sts) send requests to a
    loopback recorder; `aws-sign --verify` must accept each as recorded."""
    import botocore.session
    from botocore.config import Config
    from botocore.exceptions import ClientError

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    endpoint = "http://127.0.0.1:%d" % srv.server_address[1]
    failures = 0
    cases = [
        ("ec2", lambda c: c.describe_instances(
            InstanceIds=["i-0123456789abcdef0", "i-1"],
            Filters=[{"Name": "tag:k8s.io/cluster-autoscaler/enabled", "Values": ["true", "a b/c~d*é"]}])),
        ("ec2", lambda c: c.terminate_instances(InstanceIds=["i-0123456789abcdef0"])),
        ("autoscaling", lambda c: c.describe_auto_scaling_groups(
            AutoScalingGroupNames=["workers", "gpu nodes+1"], MaxRecords=100)),
        ("autoscaling", lambda c: c.set_desired_capacity(
            AutoScalingGroupName="workers", DesiredCapacity=3, HonorCooldown=False)),
        ("sts", lambda c: c.get_caller_identity()),
    ]
    for token in (None, "IQoJb3JpZ2luX2VjEXAMPLE+/=="):
        akid, secret = "AKIAWIREEXAMPLE", "wire/secret+EXAMPLEKEY"
        env = dict(os.environ, AWS_ACCESS_KEY_ID=akid, AWS_SECRET_ACCESS_KEY=secret)
        env.pop("AWS_SESSION_TOKEN", None)
        if token:
            env["AWS_SESSION_TOKEN"] = token
        for service, call in cases:
            Recorder.seen = []
            client = botocore.session.get_session().create_client(
                service, region_name="eu-west-3", endpoint_url=endpoint,
                aws_access_key_id=akid, aws_secret_access_key=secret, aws_session_token=token,
                config=Config(retries={"total_max_attempts": 1}))
            try:
                call(client)
            except ClientError:
                pass
            if len(Recorder.seen) != 1:
                failures += 1
                print("not ok - %s: the recorder saw %d requests" % (service, len(Recorder.seen)))
                continue
            f = os.path.join(tmp, "wire-%s-%d.req" % (service, len(os.listdir(tmp))))
            with open(f, "wb") as fh:
                fh.write(Recorder.seen[0])
            res = run(binary, ["--verify", "--region", "eu-west-3", "--service", service, "--request", f], env)
            if res.returncode != 0 or b"Verified:" not in res.stdout:
                failures += 1
                print("not ok - %s%s: --verify refused what botocore sent: %s" % (
                    service, " (token)" if token else "", res.stdout.decode(errors="replace")[-600:]))
            elif run(binary, ["--verify", "--request", f],
                     dict(env, AWS_SECRET_ACCESS_KEY=secret + "x")).returncode != 2:
                failures += 1
                print("not ok - %s: --verify accepted what botocore sent with another secret" % service)
            else:
                print("ok - botocore's %s request over the wire%s verifies (and not with another secret)" % (
                    service, " with a session token" if token else ""))
    srv.shutdown()
    return failures


def botocore_sign(req, creds, region, service, when):
    class FixedClock(datetime.datetime):
        @classmethod
        def utcnow(cls):
            return when

    saved = botocore.auth.datetime
    botocore.auth.datetime = types.SimpleNamespace(datetime=FixedClock)
    try:
        url = "https://%s%s" % (req["host"], req["path"])
        if req["query"]:
            url += "?" + req["query"]
        r = AWSRequest(method=req["method"], url=url, data=req["body"])
        for n, v in req["headers"]:
            if n not in HOP_BY_HOP:
                r.headers[n] = v
        botocore.auth.SigV4Auth(creds, service, region).add_auth(r)
        return r
    finally:
        botocore.auth.datetime = saved


def run(binary, args, env):
    return subprocess.run([binary, "aws-sign"] + args, env=env, capture_output=True)


def parse_blocks(stdout):
    """{file: [lines]} from aws-sign's "Request: FILE" blocks."""
    blocks, cur = {}, None
    for line in stdout.decode("utf-8", "replace").split("\n"):
        if line.startswith("Request: "):
            cur = line[len("Request: "):]
            blocks[cur] = []
        elif cur is not None:
            blocks[cur].append(line)
    return blocks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("luascale")
    ap.add_argument("--seed", type=int, default=20150830)
    ap.add_argument("--profiles", type=int, default=12)
    ap.add_argument("--per", type=int, default=30)
    a = ap.parse_args()
    g = Gen(a.seed)
    failures = 0
    checked = verified = refused = 0
    tmp = tempfile.mkdtemp(prefix="sigv4_botocore.")

    for prof in range(a.profiles):
        akid = "AKID" + g.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 16)
        secret = g.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/", 40, 40)
        token = None
        if prof % 2 == 1:
            token = g.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=", 100, 400)
        region, service = g.choice(REGIONS), g.choice(SERVICES)
        when = datetime.datetime(2015, 1, 1) + datetime.timedelta(seconds=g.r.randint(0, 15 * 365 * 86400))
        stamp = when.strftime("%Y%m%dT%H%M%SZ")
        creds = Credentials(akid, secret, token)
        env = dict(os.environ, AWS_ACCESS_KEY_ID=akid, AWS_SECRET_ACCESS_KEY=secret)
        env.pop("AWS_SESSION_TOKEN", None)
        if token:
            env["AWS_SESSION_TOKEN"] = token

        sign_files, verify_files, expect, expect_verdict = [], [], {}, {}
        tamper_files = []
        for i in range(a.per):
            req = g.request(token)
            f = os.path.join(tmp, "p%d-r%d.req" % (prof, i))
            with open(f, "wb") as fh:
                fh.write(wire(req, req["headers"]))
            signed = botocore_sign(req, creds, region, service, when)
            expect[f] = (signed.headers["Authorization"], req)
            sign_files.append(f)
            # the request as botocore would send it, plus the hop-by-hop
            # headers botocore was not given
            sent = list(signed.headers.items()) + [(n, v) for n, v in req["headers"] if n in HOP_BY_HOP]
            vf = os.path.join(tmp, "p%d-r%d.signed" % (prof, i))
            with open(vf, "wb") as fh:
                fh.write(wire(req, sent))
            verify_files.append(vf)
            # what the verifier must answer: it refuses a session token the
            # key does not have, and an X-Amz-Content-SHA256 that is not the
            # body's hash (UNSIGNED-PAYLOAD), although botocore signs both
            names = {n.lower(): v for n, v in sent}
            if not token and "x-amz-security-token" in names:
                expect_verdict[vf] = "AuthFailure" if service == "ec2" else "InvalidClientTokenId"
            elif names.get("x-amz-content-sha256", "").strip() not in ("", hashlib.sha256(req["body"]).hexdigest()):
                expect_verdict[vf] = "SignatureDoesNotMatch"
            else:
                expect_verdict[vf] = "Verified"
            if expect_verdict[vf] == "Verified" and len(tamper_files) < 6:
                # tampered: one more body byte (when no Content-Length says
                # how long it is); the Host header changed
                if "content-length" not in names:
                    tf = os.path.join(tmp, "p%d-r%d.tampered-body" % (prof, i))
                    with open(tf, "wb") as fh:
                        fh.write(wire(dict(req, body=req["body"] + b"!"), sent))
                    tamper_files.append(tf)
                hf = os.path.join(tmp, "p%d-r%d.tampered-host" % (prof, i))
                with open(hf, "wb") as fh:
                    fh.write(wire(req, [(n, v + "x" if n.lower() == "host" else v) for n, v in sent]))
                tamper_files.append(hf)

        args = ["--region", region, "--service", service, "--time", stamp]
        res = run(a.luascale, args + sum((["--request", f] for f in sign_files), []), env)
        blocks = parse_blocks(res.stdout)
        if res.returncode != 0:
            failures += 1
            print("not ok - profile %d: aws-sign exit %d: %s" % (prof, res.returncode,
                                                                   res.stderr.decode(errors="replace")[:2000]))
        for f in sign_files:
            want, req = expect[f]
            got = [l[len("Authorization: "):] for l in blocks.get(f, []) if l.startswith("Authorization: ")]
            checked += 1
            if got != [want]:
                failures += 1
                print("not ok - %s: Authorization differs from botocore's" % f)
                print("#   botocore: %s\n#   luascale: %s" % (want, got))
                print("#   request: %r" % req)
                print("#   luascale said:\n" + "\n".join("#     " + l for l in blocks.get(f, [])[:30]))
            elif token and any(token in l for l in blocks[f]):
                failures += 1
                print("not ok - %s: the session token was printed" % f)

        res = run(a.luascale, ["--verify"] + args + sum((["--request", f] for f in verify_files), []), env)
        blocks = parse_blocks(res.stdout)
        for f in verify_files:
            want = expect_verdict[f]
            got = [l for l in blocks.get(f, []) if l.split(":")[0] in
                   ("Verified", "SignatureDoesNotMatch", "InvalidClientTokenId", "AuthFailure",
                    "IncompleteSignature", "MissingAuthenticationToken", "RequestExpired")]
            if len(got) == 1 and got[0].startswith(want + ":"):
                if want == "Verified":
                    verified += 1
                else:
                    refused += 1
            else:
                failures += 1
                print("not ok - %s: --verify of botocore's request: expected %s, got %s" % (f, want, got))
        if (res.returncode == 0) != all(v == "Verified" for v in expect_verdict.values()):
            failures += 1
            print("not ok - profile %d: --verify exit %d" % (prof, res.returncode))

        res = run(a.luascale, ["--verify"] + args + sum((["--request", f] for f in tamper_files), []), env)
        blocks = parse_blocks(res.stdout)
        for f in tamper_files:
            lines = blocks.get(f, [])
            if not any(l.startswith("SignatureDoesNotMatch: ") for l in lines):
                failures += 1
                print("not ok - %s: a tampered request was not refused: %s" % (f, lines[-3:]))
            else:
                refused += 1
        if res.returncode != 2:
            failures += 1
            print("not ok - profile %d: --verify of tampered requests exit %d, expected 2" % (prof, res.returncode))
        # another secret: every request of the profile refused
        env2 = dict(env, AWS_SECRET_ACCESS_KEY=secret[:-1] + ("A" if secret[-1] != "A" else "B"))
        ok_files = [f for f in verify_files if expect_verdict[f] == "Verified"]
        res = run(a.luascale, ["--verify"] + args + ["--request", ok_files[0]], env2)
        if res.returncode != 2 or b"SignatureDoesNotMatch" not in res.stdout:
            failures += 1
            print("not ok - profile %d: another secret was not refused" % prof)
        else:
            refused += 1

    failures += over_the_wire(a.luascale, tmp)
    subprocess.run(["rm", "-rf", tmp])
    print("%d requests compared with botocore, %d botocore signatures verified, %d refused as they must be, %d failures"
          % (checked, verified, refused, failures))
    if checked == 0:
        failures += 1
    print("ok - luascale's SigV4 agrees with botocore %s" % botocore.__version__ if failures == 0
          else "not ok - luascale's SigV4 disagrees with botocore")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
