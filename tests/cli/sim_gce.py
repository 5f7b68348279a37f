#!/usr/bin/python3
# sim_gce.py: `luascale sim --gce-port` checked by Google's own auth library
# (Debian's python3-google-auth, under /usr/bin/python3) and against the
# compute v1 shapes vendored from npm @googleapis/compute (tests/data/gce/):
# a token from the face's JWT-bearer endpoint, every endpoint's answer field
# by field (names and JSON types), createInstances until nodes carry gce://
# providerIDs, resize with an idempotent requestId, deleteInstances, a
# stockout and a quota on lastAttempt, 403 rateLimitExceeded, an operation
# that stays RUNNING past wait, the metadata server and bad assertions.
# Usage: sim_gce.py LUASCALE SOURCE_DIR. Fails when google-auth is missing.
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

try:
    import google.auth.jwt
    import google.auth.transport.requests
    import requests
    from google.auth import crypt
    from google.oauth2 import service_account
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - python3-google-auth/python3-requests not importable under %s: %s"
          % (sys.executable, e))
    sys.exit(1)

LUASCALE, SRC = sys.argv[1], sys.argv[2]
SCENARIO = os.path.join(SRC, "tests/cli/sim_gce.yaml")
SCHEMAS = os.path.join(SRC, "tests/data/gce/compute_v1_schemas.d.ts")
PROJECT = "sim-test-project"
SA = "autoscaler@sim-test-project.iam.gserviceaccount.com"
TMP = tempfile.mkdtemp(prefix="sim_gce.")
procs = []
fails = 0
count = 0


def ok(cond, name, detail=""):
    global fails, count
    count += 1
    if cond:
        print("ok %d - %s" % (count, name))
    else:
        fails += 1
        print("not ok %d - %s" % (count, name))
        if detail:
            for line in str(detail).splitlines()[:20]:
                print("#   " + line)
    return cond


def until(seconds, fn):
    end = time.monotonic() + seconds
    while True:
        v = fn()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.1)


# ---- the vendored TypeScript interfaces, read as a schema ----

def load_schemas(path):
    text = re.sub(r"/\*.*?\*/", "", open(path).read(), flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    schemas = {}
    for m in re.finditer(r"export interface Schema\$(\w+) \{", text):
        body, _ = parse_fields(text, m.end())
        schemas[m.group(1)] = body
    return schemas


def skip_ws(s, i):
    while i < len(s) and s[i] in " \t\r\n":
        i += 1
    return i


def parse_fields(s, i):
    """Fields from just after '{' to the matching '}': ({name: type}, index after '}')."""
    fields = {}
    while True:
        i = skip_ws(s, i)
        if s[i] == "}":
            return fields, i + 1
        if s[i] == "[":  # an index signature: {[key: string]: T}
            j = s.index("]", i)
            i = skip_ws(s, j + 1)
            assert s[i] == ":"
            t, i = parse_type(s, i + 1)
            fields["*"] = t
        else:
            m = re.compile(r"(\w+)\??\s*:").match(s, i)
            if not m:
                raise ValueError("cannot read a field at %r" % s[i:i + 60])
            t, i = parse_type(s, m.end())
            fields[m.group(1)] = t
        i = skip_ws(s, i)
        if s[i] == ";":
            i += 1


def parse_type(s, i):
    alts = []
    while True:
        i = skip_ws(s, i)
        if s.startswith("Array<", i):
            t, i = parse_type(s, i + 6)
            i = skip_ws(s, i)
            assert s[i] == ">"
            i += 1
            t = ("array", t)
        elif s[i] == "{":
            f, i = parse_fields(s, i + 1)
            t = ("map", f["*"]) if list(f) == ["*"] else ("object", f)
        else:
            m = re.compile(r"Schema\$(\w+)|string|number|boolean|null|any").match(s, i)
            if not m:
                raise ValueError("cannot read a type at %r" % s[i:i + 60])
            i = m.end()
            t = ("ref", m.group(1)) if m.group(1) else m.group(0)
        while s.startswith("[]", i):
            t = ("array", t)
            i += 2
        if t != "null":
            alts.append(t)
        i = skip_ws(s, i)
        if s[i] != "|":
            return (alts[0] if len(alts) == 1 else ("union", alts)), i
        i += 1


def check(schemas, v, t, path, errs):
    """Is 'v' of type 't' (every key known, every type right)? Problems go to errs."""
    if isinstance(t, tuple) and t[0] == "ref":
        t = ("object", schemas[t[1]]) if t[1] in schemas else "any"
    if t == "any":
        return
    if t == "string":
        if not isinstance(v, str):
            errs.append("%s: %r is not a string" % (path, v))
    elif t == "number":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            errs.append("%s: %r is not a number" % (path, v))
    elif t == "boolean":
        if not isinstance(v, bool):
            errs.append("%s: %r is not a boolean" % (path, v))
    elif t[0] == "array":
        if not isinstance(v, list):
            errs.append("%s: not an array" % path)
        else:
            for k, x in enumerate(v):
                check(schemas, x, t[1], "%s[%d]" % (path, k), errs)
    elif t[0] == "map":
        if not isinstance(v, dict):
            errs.append("%s: not an object" % path)
        else:
            for k, x in v.items():
                check(schemas, x, t[1], "%s.%s" % (path, k), errs)
    elif t[0] == "object":
        if not isinstance(v, dict):
            errs.append("%s: not an object" % path)
            return
        for k, x in v.items():
            if k not in t[1]:
                errs.append("%s.%s: no such field in the schema" % (path, k))
            else:
                check(schemas, x, t[1][k], "%s.%s" % (path, k), errs)
    elif t[0] == "union":
        for alt in t[1]:
            e = []
            check(schemas, v, alt, path, e)
            if not e:
                return
        errs.append("%s: %r matches none of %r" % (path, v, t[1]))


def get_path(v, path):
    for part in path.split("."):
        if isinstance(v, list):
            v = v[int(part)] if part.isdigit() and int(part) < len(v) else None
        elif isinstance(v, dict):
            v = v.get(part)
        else:
            return None
    return v


SEEN = set()  # every field name in the answers checked by shape()


def collect_keys(v):
    if isinstance(v, dict):
        for k, x in v.items():
            SEEN.add(k)
            collect_keys(x)
    elif isinstance(v, list):
        for x in v:
            collect_keys(x)


# The fields of Google's JSON error envelope ({"error": {"code", "message",
# "status", "errors": [{"reason", "domain"}]}}): part of every Google API's
# wire format, not of the compute discovery document's schemas.
ERROR_ENVELOPE = {"error", "errors", "code", "message", "reason"}


def provider_reads(path):
    """The JSON field names the GCE provider reads from compute answers: every
    string literal that is the last argument of a cloudjson_str() call or of a cJSON
    object lookup (Get/Detach...ObjectItem...) in its source (calls nest)."""
    text = re.sub(r"/\*.*?\*/", "", open(path).read(), flags=re.S)
    names = set()
    for m in re.finditer(r',\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*\)', text):
        depth, i = 0, m.start()
        while i > 0:  # back to the '(' this ')' closes
            i -= 1
            c = text[i]
            if c == ")":
                depth += 1
            elif c == "(":
                if depth == 0:
                    break
                depth -= 1
        fn = re.search(r"(\w+)\s*$", text[:i])
        if fn and (fn.group(1) in ("str", "cloudjson_str") or re.match(r"cJSON_\w*FromObject|cJSON_\w*ObjectItem", fn.group(1))):
            names.add(m.group(1))
    return names


def schema_fields(schemas):
    """Every field name of every interface, inline objects included."""
    names = set()

    def walk(t):
        if isinstance(t, dict):
            for k, x in t.items():
                if k != "*":
                    names.add(k)
                walk(x)
        elif isinstance(t, tuple):
            for x in t[1:]:
                if isinstance(x, list):
                    for y in x:
                        walk(y)
                else:
                    walk(x)

    for body in schemas.values():
        walk(body)
    return names


def shape(schemas, name, v, required, label):
    """The answer 'v' is a Schema$name, with every field the provider reads."""
    collect_keys(v)
    errs = []
    check(schemas, v, ("ref", name), name, errs)
    for r in required:
        if get_path(v, r) is None:
            errs.append("%s: the field %s is missing" % (name, r))
    ok(not errs, "%s: a %s with %s" % (label, name, ", ".join(required) or "its fields"),
       "\n".join(errs) + "\n" + json.dumps(v)[:600])


# ---- the simulator ----

def start_sim(name="sim", scenario=SCENARIO):
    out = os.path.join(TMP, name + ".out")
    env_file = os.path.join(TMP, name + ".env")
    key_file = os.path.join(TMP, name + ".key.json")
    log = open(out, "w")
    p = subprocess.Popen([LUASCALE, "sim", "--listen", "127.0.0.1:0", "--scenario", scenario,
                          "--kubeconfig-out", os.path.join(TMP, name + ".kubeconfig"),
                          "--gce-port", "0", "--gce-env-out", env_file, "--gce-key-out", key_file],
                         stdout=log, stderr=subprocess.STDOUT)
    procs.append(p)

    def ready():
        try:
            text = open(out).read()
        except OSError:
            return None
        m = re.search(r"serving .* on http://127\.0\.0\.1:(\d+)", text)
        g = re.search(r"GCE face .* at http://127\.0\.0\.1:(\d+)", text)
        return (int(m.group(1)), int(g.group(1))) if m and g else None

    ports = until(20, ready)
    if not ports:
        print("not ok - luascale sim did not start:\n%s" % open(out).read())
        sys.exit(1)
    env = {}
    for line in open(env_file):
        m = re.match(r"^([A-Z0-9_]+)='(.*)'$", line.strip())
        if m:
            env[m.group(1)] = m.group(2)
    return {"kube": ports[0], "gce": ports[1], "env": env, "key": key_file, "out": out}


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
    shutil.rmtree(TMP, ignore_errors=True)


def kube_nodes(sim):
    with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/nodes" % sim["kube"], timeout=10) as r:
        return json.load(r)["items"]


def google_error(r, code, reason):
    try:
        e = r.json()["error"]
    except ValueError:
        return False
    return (r.status_code == code and e.get("code") == code and isinstance(e.get("message"), str)
            and isinstance(e.get("status"), str) and isinstance(e.get("errors"), list)
            and e["errors"] and e["errors"][0].get("reason") == reason
            and isinstance(e["errors"][0].get("domain"), str))


def main():
    schemas = load_schemas(SCHEMAS)
    ok(all(n in schemas for n in ("InstanceGroupManager", "ManagedInstance", "Operation",
                                  "InstanceTemplate", "MachineType",
                                  "InstanceGroupManagersListManagedInstancesResponse")),
       "the vendored compute v1 interfaces are read", sorted(schemas)[:20])
    sim = start_sim()
    env = sim["env"]
    root = env["LUASCALE_SIM_GCE_ENDPOINT"]
    ok(root == "http://127.0.0.1:%d/compute/v1/" % sim["gce"] and
       env["GCE_METADATA_HOST"] == "127.0.0.1:%d" % sim["gce"] and
       env["GOOGLE_APPLICATION_CREDENTIALS"] == sim["key"] and env["GOOGLE_CLOUD_PROJECT"] == PROJECT,
       "the env file names the endpoint, the metadata host, the key and the project", env)
    ok(os.stat(sim["key"]).st_mode & 0o777 == 0o600, "the key file is mode 0600")
    key = json.load(open(sim["key"]))
    ok(key["type"] == "service_account" and key["client_email"] == SA and
       key["token_uri"] == "http://127.0.0.1:%d/token" % sim["gce"],
       "the key is a service-account key whose token_uri is the face", {k: key[k] for k in key if k != "private_key"})

    # --- auth: google-auth's own service-account flow ---
    creds = service_account.Credentials.from_service_account_file(
        sim["key"], scopes=["https://www.googleapis.com/auth/compute"])
    creds.refresh(google.auth.transport.requests.Request())
    ok(creds.token and creds.expiry is not None, "google-auth gets a token from the face's token endpoint")
    s = requests.Session()
    s.headers["Authorization"] = "Bearer " + creds.token
    base = root + "projects/%s/" % PROJECT

    # throttled first: the fault fires once
    r = s.get(base + "zones/us-central1-a/instanceGroupManagers/throttled-mig")
    ok(google_error(r, 403, "rateLimitExceeded"), "a throttled call is 403 rateLimitExceeded", r.text)

    r = requests.get(base + "zones/us-central1-a/instanceGroupManagers/workers-mig")
    ok(google_error(r, 401, "required"), "no token: 401 in Google's error shape", r.text)
    r = requests.get(base + "zones/us-central1-a/instanceGroupManagers/workers-mig",
                     headers={"Authorization": "Bearer ya29.forged"})
    ok(r.status_code == 401, "a token the face did not issue: 401", r.text)

    # a bad assertion: signed by another key, and a wrong audience
    other = crypt.RSASigner.from_string(
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
                       capture_output=True, text=True, check=True).stdout, key_id=key["private_key_id"])
    mine = crypt.RSASigner.from_service_account_info(key)
    now = int(time.time())
    claims = {"iss": SA, "aud": key["token_uri"], "iat": now, "exp": now + 3600,
              "scope": "https://www.googleapis.com/auth/compute"}
    for label, signer, over in (("another key's signature", other, {}),
                                ("a wrong aud", mine, {"aud": "https://oauth2.googleapis.com/token"}),
                                ("a wrong iss", mine, {"iss": "x@y.iam.gserviceaccount.com"}),
                                ("an expired assertion", mine, {"iat": now - 7200, "exp": now - 3600})):
        c = dict(claims, **over)
        jwt = google.auth.jwt.encode(signer, c).decode()
        r = requests.post(key["token_uri"], data={
            "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": jwt})
        ok(r.status_code == 400 and r.json().get("error") == "invalid_grant",
           "the token endpoint refuses %s with invalid_grant" % label, r.text)
    jwt = google.auth.jwt.encode(mine, claims).decode()
    r = requests.post(key["token_uri"], data={
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": jwt})
    ok(r.status_code == 200 and r.json().get("token_type") == "Bearer" and
       isinstance(r.json().get("expires_in"), int), "a good assertion gets a Bearer token", r.text)

    # --- the metadata server ---
    md = "http://%s/computeMetadata/v1/" % env["GCE_METADATA_HOST"]
    r = requests.get(md + "instance/service-accounts/default/token")
    ok(r.status_code == 403, "the metadata server wants Metadata-Flavor: Google", r.text)
    r = requests.get(md + "instance/service-accounts/default/token", headers={"Metadata-Flavor": "Google"})
    ok(r.status_code == 200 and r.headers.get("Metadata-Flavor") == "Google" and r.json()["access_token"],
       "the metadata token, answered with Metadata-Flavor: Google", r.text)
    mtok = r.json()["access_token"]
    r = requests.get(md + "project/project-id", headers={"Metadata-Flavor": "Google"})
    ok(r.text == PROJECT, "metadata project-id", r.text)
    r = requests.get(md + "instance/zone", headers={"Metadata-Flavor": "Google"})
    ok(re.match(r"^projects/\d+/zones/us-central1-a$", r.text), "metadata zone", r.text)
    r = requests.get(base + "zones/us-central1-a/instanceGroupManagers/workers-mig",
                     headers={"Authorization": "Bearer " + mtok})
    ok(r.status_code == 200, "the metadata server's token works on compute", r.text)

    # --- MIGs ---
    r = s.get(base + "zones/us-central1-a/instanceGroupManagers/workers-mig")
    mig = r.json()
    shape(schemas, "InstanceGroupManager", mig,
          ["name", "targetSize", "baseInstanceName", "instanceTemplate", "status.isStable",
           "currentActions.creating", "currentActions.none", "listManagedInstancesResults",
           "selfLink", "zone"], "GET a zonal MIG")
    ok(mig["targetSize"] == 1 and mig["baseInstanceName"] == "gke-workers" and
       mig["instanceTemplate"].endswith("/global/instanceTemplates/workers-tpl") and
       mig["listManagedInstancesResults"] == "PAGINATED", "the zonal MIG's values", mig)
    r = s.get(base + "regions/us-central1/instanceGroupManagers/regional-mig")
    shape(schemas, "InstanceGroupManager", r.json(), ["name", "targetSize", "region", "selfLink"],
          "GET a regional MIG")
    r = s.get(base + "zones/us-central1-a/instanceGroupManagers/nope")
    ok(google_error(r, 404, "notFound"), "an unknown MIG is 404 notFound", r.text)
    r = s.get(base + "aggregated/instanceGroupManagers", params={"filter": "name eq work.*"})
    agg = r.json()
    shape(schemas, "InstanceGroupManagerAggregatedList", agg, ["items"], "aggregated list")
    names = [m["name"] for sl in agg.get("items", {}).values() for m in sl.get("instanceGroupManagers", [])]
    ok(names == ["workers-mig"], "the aggregated list filters by name", names)
    r = s.get(base + "aggregated/instanceGroupManagers")
    names = sorted(m["name"] for sl in r.json()["items"].values() for m in sl["instanceGroupManagers"])
    ok(len(names) == 6, "the aggregated list holds every MIG", names)
    r = s.get(base + "zones/us-central1-a/instanceGroupManagers")
    shape(schemas, "InstanceGroupManagerList", r.json(), ["items"], "plain zonal list")
    r = s.get(base + "regions/us-central1/instanceGroupManagers")
    shape(schemas, "RegionInstanceGroupManagerList", r.json(), ["items"], "plain regional list")

    # --- createInstances: nodes with gce:// providerIDs ---
    want = ["gke-workers-a1b2", "gke-workers-c3d4"]
    r = s.post(base + "zones/us-central1-a/instanceGroupManagers/workers-mig/createInstances",
               json={"instances": [{"name": n} for n in want]})
    op = r.json()
    shape(schemas, "Operation", op, ["name", "status", "selfLink", "zone", "targetLink", "operationType"],
          "createInstances")
    r = s.post(base + "zones/us-central1-a/operations/%s/wait" % op["name"])
    shape(schemas, "Operation", r.json(), ["name", "status"], "operations.wait")
    ok(r.json()["status"] == "DONE", "the createInstances operation is DONE", r.text)
    r = s.get(base + "zones/us-central1-a/operations/%s" % op["name"])
    ok(r.status_code == 200 and r.json()["name"] == op["name"], "operations.get", r.text)
    r = s.post(base + "zones/us-central1-a/instanceGroupManagers/workers-mig/createInstances",
               json={"instances": [{"name": "Bad_Name"}]})
    ok(google_error(r, 400, "invalid"), "createInstances refuses a name that is not RFC 1035", r.text)

    def nodes_up():
        by = {n["metadata"]["name"]: n for n in kube_nodes(sim)}
        return by if all(w in by for w in want) else None
    by = until(20, nodes_up)
    ok(by and all(by[w]["spec"].get("providerID") == "gce://%s/us-central1-a/%s" % (PROJECT, w)
                  for w in want),
       "the created instances are nodes named as asked, with gce:// providerIDs",
       by and {w: by[w]["spec"].get("providerID") for w in want if w in by})
    ok(by and not any("luascale.io/node-group" in by[w]["metadata"]["labels"] for w in want),
       "the nodes carry no luascale.io/node-group label, as GCE's do not",
       by and [by[w]["metadata"]["labels"] for w in want if w in by])
    ips = {w: [n.get("networkIP") for n in
               s.get(base + "zones/us-central1-a/instances/" + w).json().get("networkInterfaces", [])]
           for w in want}
    ok(by and all(len(ips[w]) == 1 and ips[w] ==
                  [a["address"] for a in by[w]["status"]["addresses"] if a["type"] == "InternalIP"]
                  for w in want if w in by),
       "each node's InternalIP is its instance's networkInterfaces[0].networkIP",
       (ips, by and {w: by[w]["status"]["addresses"] for w in want if w in by}))

    def listed():
        r = s.post(base + "zones/us-central1-a/instanceGroupManagers/workers-mig/listManagedInstances")
        items = r.json().get("managedInstances", [])
        return items if len(items) == 3 and all(i.get("currentAction") == "NONE" for i in items) else None
    items = until(20, listed)
    ok(items, "listManagedInstances: three, all running")
    r = s.post(base + "zones/us-central1-a/instanceGroupManagers/workers-mig/listManagedInstances",
               params={"maxResults": 2})
    page = r.json()
    shape(schemas, "InstanceGroupManagersListManagedInstancesResponse", page,
          ["managedInstances.0.instance", "managedInstances.0.name", "managedInstances.0.instanceStatus",
           "managedInstances.0.currentAction", "nextPageToken"], "listManagedInstances page 1")
    r = s.post(base + "zones/us-central1-a/instanceGroupManagers/workers-mig/listManagedInstances",
               params={"maxResults": 2, "pageToken": page["nextPageToken"]})
    ok(len(page["managedInstances"]) == 2 and len(r.json()["managedInstances"]) == 1 and
       "nextPageToken" not in r.json(), "pageToken follows to the last page", r.text)
    r = s.post(base + "zones/us-central1-a/instanceGroupManagers/workers-mig/listManagedInstances",
               params={"maxResults": 501})
    ok(google_error(r, 400, "invalid"), "maxResults above 500 is refused", r.text)

    # --- resize with a requestId (idempotent), regional spread ---
    rid = "0f8fad5b-d9cb-469f-a165-70867728950e"
    url = base + "regions/us-central1/instanceGroupManagers/regional-mig/resize"
    op1 = s.post(url, params={"size": 3, "requestId": rid}).json()
    op2 = s.post(url, params={"size": 3, "requestId": rid}).json()
    shape(schemas, "Operation", op1, ["name", "status", "region"], "resize")
    ok(op1["name"] == op2["name"], "a repeated requestId returns the same operation", (op1, op2))
    r = s.get(base + "regions/us-central1/instanceGroupManagers/regional-mig")
    ok(r.json()["targetSize"] == 3, "resize sets targetSize once", r.text)

    def regional():
        r = s.post(base + "regions/us-central1/instanceGroupManagers/regional-mig/listManagedInstances")
        items = r.json().get("managedInstances", [])
        return items if len(items) == 3 and all(i.get("instanceStatus") == "RUNNING" for i in items) else None
    items = until(20, regional)
    zones = sorted(i["instance"].split("/zones/")[1].split("/")[0] for i in (items or []))
    ok(zones == ["us-central1-a", "us-central1-b", "us-central1-c"],
       "a regional MIG spreads over its zones", zones)

    # --- deleteInstances ---
    urls = [i["instance"] for i in items or []][:1] + [base + "zones/us-central1-a/instances/nope"]
    r = s.post(base + "regions/us-central1/instanceGroupManagers/regional-mig/deleteInstances",
               json={"instances": urls, "skipInstancesOnValidationError": True})
    shape(schemas, "Operation", r.json(), ["name", "status"], "deleteInstances")
    r = s.get(base + "regions/us-central1/instanceGroupManagers/regional-mig")
    ok(r.json()["targetSize"] == 2, "deleteInstances lowers targetSize by the one it deleted", r.text)
    r = s.post(base + "regions/us-central1/instanceGroupManagers/regional-mig/deleteInstances",
               json={"instances": [base + "zones/us-central1-a/instances/nope"]})
    ok(google_error(r, 400, "invalid"), "without skipInstancesOnValidationError a stranger is refused", r.text)

    # --- stockout and quota on lastAttempt, not on the operation ---
    for mig, zone, code in (("gpu-mig", "us-central1-b", "ZONE_RESOURCE_POOL_EXHAUSTED"),
                            ("quota-mig", "us-central1-a", "QUOTA_EXCEEDED")):
        op = s.post(base + "zones/%s/instanceGroupManagers/%s/resize" % (zone, mig),
                    params={"size": 1}).json()
        ok(op.get("status") == "DONE" and "error" not in op,
           "%s: the resize operation succeeds" % mig, op)

        def failed():
            r = s.post(base + "zones/%s/instanceGroupManagers/%s/listManagedInstances" % (zone, mig))
            items = r.json().get("managedInstances", [])
            return items if items and get_path(items[0], "lastAttempt.errors.errors.0.code") else None
        items = until(10, failed)
        if ok(items, "%s: a failed creation shows on lastAttempt" % mig):
            shape(schemas, "ManagedInstance", items[0],
                  ["instance", "name", "currentAction", "lastAttempt.errors.errors.0.code",
                   "lastAttempt.errors.errors.0.message"], "%s managed instance" % mig)
            ok(items[0]["currentAction"] == "CREATING" and
               items[0]["lastAttempt"]["errors"]["errors"][0]["code"] == code,
               "%s: CREATING with %s" % (mig, code), items[0])

    # --- a slow operation stays RUNNING past wait's deadline ---
    op = s.post(base + "zones/us-central1-c/instanceGroupManagers/slowops-mig/resize",
                params={"size": 1}).json()
    t0 = time.monotonic()
    r = s.post(base + "zones/us-central1-c/operations/%s/wait" % op["name"])
    ok(r.status_code == 200 and r.json()["status"] == "RUNNING" and time.monotonic() - t0 >= 0.9,
       "operations.wait returns RUNNING after its deadline", r.text)

    # --- templates and machine types ---
    r = s.get(base + "global/instanceTemplates/gpu-mig-template")
    t = r.json()
    shape(schemas, "InstanceTemplate", t,
          ["name", "properties.machineType", "properties.guestAccelerators.0.acceleratorType",
           "properties.guestAccelerators.0.acceleratorCount", "properties.labels",
           "properties.scheduling.provisioningModel", "properties.scheduling.preemptible"], "instance template")
    ok(t["properties"]["scheduling"]["provisioningModel"] == "SPOT",
       "a spot MIG's template says provisioningModel SPOT", t)
    r = s.get(base + "regions/us-central1/instanceTemplates/workers-tpl")
    t = r.json()
    shape(schemas, "InstanceTemplate", t, ["properties.machineType", "region", "properties.metadata.items.0.key",
                                           "properties.metadata.items.0.value"], "regional template")
    ok(t["properties"]["metadata"]["items"] == [
        {"key": "kube-env", "value": "AUTOSCALER_ENV_VARS: node_labels=pool=workers;node_taints=;os=linux\n"}],
       "a GKE template carries its kube-env as a metadata item", t)
    ok(t["properties"]["machineType"] == "e2-standard-4" and t["properties"]["labels"] == {"pool": "workers"},
       "the template carries the machine type and labels", t)
    r = s.get(base + "zones/us-central1-b/machineTypes/a2-highgpu-1g")
    mt = r.json()
    shape(schemas, "MachineType", mt, ["name", "guestCpus", "memoryMb", "accelerators.0.guestAcceleratorType",
                                       "accelerators.0.guestAcceleratorCount"], "machine type")
    ok(mt["guestCpus"] == 12 and mt["memoryMb"] == 87040, "a2-highgpu-1g: 12 CPUs, 87040 MB", mt)
    r = s.get(base + "zones/us-central1-a/machineTypes/e2-standard-8")
    ok(r.json().get("guestCpus") == 8 and r.json().get("memoryMb") == 32768, "e2-standard-8", r.text)
    r = s.get(root + "projects/other-project/zones/us-central1-a/instanceGroupManagers/workers-mig")
    ok(r.status_code == 403, "another project is refused", r.text)

    # --- throttle_status: 429 ---
    alt = os.path.join(TMP, "sim429.yaml")
    with open(alt, "w") as f:
        f.write(open(SCENARIO).read().replace("  retry: 1s\n", "  retry: 1s\n  throttle_status: 429\n"))
    sim2 = start_sim("sim429", alt)
    c2 = service_account.Credentials.from_service_account_file(
        sim2["key"], scopes=["https://www.googleapis.com/auth/compute"])
    c2.refresh(google.auth.transport.requests.Request())
    r = requests.get(sim2["env"]["LUASCALE_SIM_GCE_ENDPOINT"] +
                     "projects/%s/zones/us-central1-a/instanceGroupManagers/throttled-mig" % PROJECT,
                     headers={"Authorization": "Bearer " + c2.token})
    ok(google_error(r, 429, "rateLimitExceeded") and r.json()["error"]["status"] == "RESOURCE_EXHAUSTED",
       "with throttle_status 429 a throttled call is 429 rateLimitExceeded", r.text)
    r = requests.get(sim2["env"]["LUASCALE_SIM_GCE_ENDPOINT"] +
                     "projects/%s/zones/us-central1-a/instanceGroupManagers/throttled-mig" % PROJECT,
                     headers={"Authorization": "Bearer " + creds.token})
    ok(r.status_code == 401, "another simulator's token is refused", r.text)

    # --- the provider's side: what it reads is what the schema and the face carry ---
    reads = provider_reads(os.path.join(SRC, "providers/gce/gce.c"))
    fields = schema_fields(schemas)
    ok(len(reads) >= 20 and {"targetSize", "lastAttempt", "currentAction", "guestCpus", "managedInstances",
                             "guestAccelerators"} <= reads,
       "the provider's JSON reads are found in its source (%d fields)" % len(reads), sorted(reads))
    unknown = sorted(reads - fields - ERROR_ENVELOPE)
    ok(not unknown, "every field the provider reads is a field of the compute v1 schemas", unknown)
    unseen = sorted(reads - SEEN - ERROR_ENVELOPE)
    ok(not unseen, "every field the provider reads is in the face's answers checked above", unseen)


try:
    main()
except Exception as ex:  # an unexpected answer is a failure with its story
    import traceback
    fails += 1
    print("not ok - unexpected: %s" % ex)
    for line in traceback.format_exc().splitlines():
        print("#   " + line)
finally:
    if fails:
        path = os.path.join(TMP, "sim.out")
        if os.path.exists(path):
            for line in open(path).read().splitlines()[-15:]:
                print("#   sim: %s" % line)
    cleanup()
print("1..%d" % count)
sys.exit(1 if fails else 0)
