#!/usr/bin/python3
# run_once_cloud.py: `luascale run --once` against `luascale sim`'s cloud
# faces exits 5 when the cloud's node groups cannot be read, with the
# provider's message (the cloud's code first, the likely cause), and 0 when
# they can:
#   AWS:   a wrong secret (SignatureDoesNotMatch), a missing web identity
#          token file, the instance metadata endpoint down;
#   GCE:   a key the token endpoint does not know (invalid_grant, Invalid
#          JWT Signature), the metadata server down;
#   Azure: a wrong client secret (AADSTS7000215), a missing federated token
#          file, the instance metadata endpoint down.
# No secret shows in the output. Usage: run_once_cloud.py LUASCALE SOURCE_DIR.
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, read_env_file  # noqa: E402

H = Harness(sys.argv[1], sys.argv[2], "run_once_cloud.")
ok = H.ok
CLOSED = "127.0.0.1:9"  # the discard port: nothing listens there
WRONG = "wrong-S3KR1T-value-0123456789abcdefghij"


def scenario(name, cloud):
    return H.scenario(name, "node_groups:\n"
                      "  - {name: workers, min: 0, max: 6, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
                      "workloads: []\n" + cloud)


def run_once(sim, name, provider, env):
    """`luascale run --once` with 'provider' (the config's provider and
    node_groups) and exactly 'env' besides PATH and HOME: (exit status, output)."""
    cfg = H.path(name + ".yaml")
    with open(cfg, "w") as f:
        f.write("cluster: {kubeconfig: %s, context: luascale-sim}\n" % sim["kubeconfig"])
        f.write("policy: {path: %s}\n" % os.path.join(H.src, "policies/default.lua"))
        f.write(provider)
    e = {"PATH": "/usr/bin:/bin", "HOME": H.tmp, "LUASCALE_SERVER_LISTEN": "127.0.0.1:0"}
    e.update(env)
    try:
        p = subprocess.run([H.luascale, "run", "--once", "--config", cfg], env=e, timeout=120,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except subprocess.TimeoutExpired as t:
        return None, "still running after 120 s: %s" % (t.output or "")
    with open(H.path(name + ".log"), "w") as f:
        f.write(p.stdout)
    return p.returncode, p.stdout


def check(name, rc, out, want_rc, patterns, secrets=()):
    log = H.path(name + ".log")
    line = next((x for x in out.splitlines() if "cannot read the node groups from the" in x and " error " in x), "")
    ok(rc == want_rc, "%s: exit status %s (want %d)" % (name, rc, want_rc), log)
    for pat in patterns:
        ok(re.search(pat, line), "%s: the error says %s" % (name, pat), log)
    for s in secrets:
        ok(s not in out, "%s: no secret in the output" % name, log)


def phase_aws():
    env_file = H.path("aws.env")
    sim = H.start_sim("aws", scenario("aws", "aws:\n  region: us-east-1\n  credentials: {access_key_id: "
                                      "AKIATESTSIMULATED001, secret_access_key: dGVzdC1zZWNyZXQta2V5LWZvci10aGUtc2ltdWxhdG9y}\n"
                                      "  groups:\n    workers: {zones: [us-east-1a], instance_types: [m5.large]}\n"),
                      ["--aws-port", "0", "--aws-env-out", env_file], [r"AWS face .* at http://127\.0\.0\.1:(\d+)"])
    se = read_env_file(env_file)
    prov = "node_groups:\n  - name: workers\nprovider:\n  kind: aws\n  aws: {cluster_name: sim}\n"
    base = {"AWS_ENDPOINT_URL": se["AWS_ENDPOINT_URL"], "AWS_REGION": "us-east-1"}
    keys = dict(base, AWS_EC2_METADATA_DISABLED="true", AWS_ACCESS_KEY_ID=se["AWS_ACCESS_KEY_ID"])
    rc, out = run_once(sim, "aws-good", prov, dict(keys, AWS_SECRET_ACCESS_KEY=se["AWS_SECRET_ACCESS_KEY"]))
    check("aws-good", rc, out, 0, [])
    rc, out = run_once(sim, "aws-wrong-secret", prov, dict(keys, AWS_SECRET_ACCESS_KEY=WRONG))
    check("aws-wrong-secret", rc, out, 5,
          [r"from the aws provider \(authentication failed: SignatureDoesNotMatch: The request signature",
           r"\(likely cause: wrong key or secret", r"; DescribeAutoScalingGroups \(request ",
           r"--once decides nothing without them \(exit status 5\)"], [WRONG, se["AWS_SECRET_ACCESS_KEY"]])
    rc, out = run_once(sim, "aws-no-token-file", prov,
                       dict(base, AWS_EC2_METADATA_DISABLED="true", AWS_WEB_IDENTITY_TOKEN_FILE=H.path("no-such-token"),
                            AWS_ROLE_ARN="arn:aws:iam::123456789012:role/luascale"))
    check("aws-no-token-file", rc, out, 5, [r"web identity token file: cannot read .*no-such-token"])
    rc, out = run_once(sim, "aws-imds-down", prov, dict(base, AWS_EC2_METADATA_SERVICE_ENDPOINT="http://%s/" % CLOSED))
    check("aws-imds-down", rc, out, 5, [r"imds: instance metadata at http://127\.0\.0\.1:9: no answer"])


def phase_gce():
    env_file, key = H.path("gce.env"), H.path("gce-key.json")
    sim = H.start_sim("gce", scenario("gce", "gce:\n  project: sim-project\n  groups:\n"
                                      "    workers: {zone: us-central1-a, machine_type: e2-standard-4}\n"),
                      ["--gce-port", "0", "--gce-env-out", env_file, "--gce-key-out", key],
                      [r"GCE face .* at http://127\.0\.0\.1:(\d+)"])
    se = read_env_file(env_file)

    def prov(creds):
        return ("node_groups:\n  - {name: workers, max: 6, template: {allocatable: {cpu: 3920m, memory: 14Gi, pods: 110}}, "
                "gce: {zone: us-central1-a}}\nprovider:\n  kind: gce\n  gce:\n    project: sim-project\n"
                "    endpoints: {compute: \"%s\"}\n%s" % (se["LUASCALE_SIM_GCE_ENDPOINT"], creds))
    rc, out = run_once(sim, "gce-good", prov("    credentials_file: %s\n" % key), {})
    check("gce-good", rc, out, 0, [])
    # the same account with a key the token endpoint does not know
    other = H.path("other.pem")
    subprocess.run(["openssl", "genrsa", "-out", other, "2048"], check=True, capture_output=True)
    doc = json.load(open(key))
    doc["private_key"] = open(other).read()
    wrong = H.path("gce-wrong-key.json")
    json.dump(doc, open(wrong, "w"))
    rc, out = run_once(sim, "gce-wrong-key", prov("    credentials_file: %s\n" % wrong), {})
    check("gce-wrong-key", rc, out, 5,
          [r"from the gce provider \(authentication failed: invalid_grant: Invalid JWT Signature\. "
           r"\(likely cause: wrong key or secret", r"service account key .*gce-wrong-key\.json: token endpoint .*: HTTP 400"],
          ["PRIVATE KEY", doc["private_key"].splitlines()[1]])
    rc, out = run_once(sim, "gce-metadata-down", prov(""), {"GCE_METADATA_HOST": CLOSED})
    check("gce-metadata-down", rc, out, 5, [r"metadata server at http://127\.0\.0\.1:9: no answer"])
    rc, out = run_once(sim, "gce-metadata", prov(""), {"GCE_METADATA_HOST": se["GCE_METADATA_HOST"]})
    check("gce-metadata", rc, out, 0, [])


def phase_azure():
    env_file, tok = H.path("azure.env"), H.path("azure.token")
    sim = H.start_sim("azure", scenario("azure", "azure:\n  subscription_id: 6d5a1f3e-2b4c-4d8e-9f10-1a2b3c4d5e6f\n"
                                        "  resource_group: sim-rg\n  location: eastus\n"
                                        "  tenant_id: 72f988bf-86f1-41af-91ab-2d7cd011db47\n"
                                        "  client_id: 0b5d1c2e-3f4a-4b6c-8d7e-9f0a1b2c3d4e\n"
                                        "  client_secret: sim-secret-value\n"
                                        "  groups:\n    workers: {vmss: workers-vmss, vm_size: Standard_D4s_v3}\n"),
                      ["--azure-port", "0", "--azure-env-out", env_file, "--azure-token-out", tok],
                      [r"Azure face .* at http://127\.0\.0\.1:(\d+)"])
    se = read_env_file(env_file)
    prov = ("node_groups:\n  - {name: workers, max: 6, template: {allocatable: {cpu: 3920m, memory: 14Gi, pods: 110}}, "
            "azure: {vmss: workers-vmss}}\nprovider:\n  kind: azure\n"
            "  azure: {endpoints: {resource_manager: \"%s\"}}\n" % se["LUASCALE_SIM_AZURE_ARM_ENDPOINT"])
    sub = {"ARM_SUBSCRIPTION_ID": se["ARM_SUBSCRIPTION_ID"], "ARM_RESOURCE_GROUP": se["ARM_RESOURCE_GROUP"]}
    app = dict(sub, AZURE_AUTHORITY_HOST=se["AZURE_AUTHORITY_HOST"], AZURE_TENANT_ID=se["AZURE_TENANT_ID"],
               AZURE_CLIENT_ID=se["AZURE_CLIENT_ID"])
    rc, out = run_once(sim, "azure-good", prov, dict(app, AZURE_CLIENT_SECRET=se["AZURE_CLIENT_SECRET"]))
    check("azure-good", rc, out, 0, [])
    rc, out = run_once(sim, "azure-wrong-secret", prov, dict(app, AZURE_CLIENT_SECRET=WRONG))
    check("azure-wrong-secret", rc, out, 5,
          [r"from the azure provider \(authentication failed: AADSTS7000215: Invalid client secret provided\.",
           r"Trace ID: [0-9a-f-]+ .*\(likely cause: wrong key or secret",
           r"; client-secret: token endpoint http://.*: HTTP 401 invalid_client"], [WRONG, se["AZURE_CLIENT_SECRET"]])
    rc, out = run_once(sim, "azure-no-token-file", prov, dict(app, AZURE_FEDERATED_TOKEN_FILE=H.path("no-such-token")))
    check("azure-no-token-file", rc, out, 5, [r"the federated token file: cannot read .*no-such-token"])
    rc, out = run_once(sim, "azure-imds-down", prov, dict(sub, AZURE_POD_IDENTITY_AUTHORITY_HOST="http://" + CLOSED))
    check("azure-imds-down", rc, out, 5, [r"managed identity: metadata service http://127\.0\.0\.1:9: no answer"])


H.phases([phase_aws, phase_gce, phase_azure])
H.finish()
