#!/usr/bin/python3
# sim_azure.py: `luascale sim --azure-port` checked by Azure's own SDK
# (Debian's python3-azure: azure-mgmt-compute over azure-core, azure-identity
# with msal, under /usr/bin/python3): tokens from the face's IMDS
# (ManagedIdentityCredential via AZURE_POD_IDENTITY_AUTHORITY_HOST), its AAD
# endpoint over TLS (ClientSecretCredential, and workload identity with the
# federated token file), then ComputeManagementClient reads the scale set,
# changes its capacity through the long-running operation (PUT and PATCH),
# lists VMs with instanceView page by page, deletes instances, and meets a
# stale If-Match (412), a 429 storm with Retry-After, an AllocationFailed VM,
# a quota refusal, a slow operation and ARM's errors for bad requests. Every
# answer is parsed into the SDK's models and its fields checked.
# Usage: sim_azure.py LUASCALE SOURCE_DIR. Fails when python3-azure is missing.
import json
import os
import re
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, read_env_file, stop, until  # noqa: E402

try:
    import requests
    from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
    from azure.identity import ClientSecretCredential, ManagedIdentityCredential
    from azure.mgmt.compute import ComputeManagementClient
    from azure.mgmt.network import NetworkManagementClient
    from azure.mgmt.compute.models import (Sku, VirtualMachineScaleSet,
                                           VirtualMachineScaleSetUpdate,
                                           VirtualMachineScaleSetVMInstanceRequiredIDs)
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - python3-azure (azure-mgmt-compute, azure-mgmt-network, azure-identity) not importable under %s: %s"
          % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "sim_azure.")
ok = H.ok
SCENARIO = os.path.join(H.src, "tests/cli/sim_azure.yaml")
SUB = "6d5a1f3e-2b4c-4d8e-9f10-1a2b3c4d5e6f"
RG = "MC_sim-rg_sim-aks_eastus"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
CLIENT = "0b5d1c2e-3f4a-4b6c-8d7e-9f0a1b2c3d4e"
WORKERS = "aks-workers-12345678-vmss"
ARM_SCOPE = "https://management.azure.com/.default"
ENV_NAMES = {"LUASCALE_SIM_AZURE_ARM_ENDPOINT", "AZURE_AUTHORITY_HOST", "AZURE_POD_IDENTITY_AUTHORITY_HOST",
             "ARM_SUBSCRIPTION_ID", "ARM_RESOURCE_GROUP", "AZURE_TENANT_ID", "AZURE_CLIENT_ID",
             "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE"}
# azure-core's BearerTokenCredentialPolicy refuses plain http unless a call
# says enforce_https=False (the simulator's ARM side is http on loopback)
HTTP = {"enforce_https": False}
FAST = dict(HTTP, polling_interval=0.2)


def start(name, scenario):
    env_file, tok, ca = H.path(name + ".env"), H.path(name + ".token"), H.path(name + "-ca.pem")
    sim = H.start_sim(name, scenario, ["--log-level", "debug", "--azure-port", "0", "--azure-env-out", env_file,
                                       "--azure-token-out", tok, "--azure-ca-out", ca],
                      [r"Azure face .* at http://127\.0\.0\.1:(\d+)",
                       r"over TLS at https://127\.0\.0\.1:(\d+)"])
    sim["env"] = read_env_file(env_file)
    sim["ca"] = ca
    sim["tls"] = "https://127.0.0.1:%d" % sim["ports"][1]
    sim["arm"] = sim["env"]["LUASCALE_SIM_AZURE_ARM_ENDPOINT"]
    return sim


def with_env(values, fn):
    """fn() with os.environ holding exactly the Azure names in 'values'."""
    keep = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith(("AZURE_", "ARM_", "REQUESTS_CA"))}
    os.environ.update(values)
    try:
        return fn()
    finally:
        for k in list(os.environ):
            if k.startswith(("AZURE_", "ARM_", "REQUESTS_CA")):
                del os.environ[k]
        os.environ.update(keep)


def raw(sim, method, path, token, body=None, headers=None, params=None):
    """One ARM request by hand (requests), for what the SDK hides: headers, error bodies."""
    h = {"Authorization": "Bearer " + token} if token else {}
    if body is not None:
        h["Content-Type"] = "application/json"
    h.update(headers or {})
    p = {"api-version": "2022-08-01"}
    if params is not None:
        p = params
    return requests.request(method, sim["arm"] + path.lstrip("/"), headers=h, params=p,
                            data=None if body is None else (body if isinstance(body, str) else json.dumps(body)),
                            timeout=10)


def err_code(r):
    try:
        e = r.json()["error"]
        return e["code"] if isinstance(e.get("message"), str) else None
    except (ValueError, KeyError, TypeError):
        return None


def vmss_path(name):
    return "subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets/%s" % (SUB, RG, name)


def check_auth(sim):
    env = sim["env"]
    ok(set(env) == ENV_NAMES, "the env file holds exactly the names the provider reads (%s)" % ", ".join(sorted(env)))
    ok(env["ARM_SUBSCRIPTION_ID"] == SUB and env["ARM_RESOURCE_GROUP"] == RG and env["AZURE_TENANT_ID"] == TENANT
       and env["AZURE_CLIENT_ID"] == CLIENT and re.match(r"^http://127\.0\.0\.1:\d+/$", env["AZURE_AUTHORITY_HOST"])
       and env["AZURE_POD_IDENTITY_AUTHORITY_HOST"] == env["AZURE_AUTHORITY_HOST"].rstrip("/"),
       "the env file's values: the scenario's ids and the face's endpoints")
    fed = open(env["AZURE_FEDERATED_TOKEN_FILE"]).read()
    ok(os.stat(env["AZURE_FEDERATED_TOKEN_FILE"]).st_mode & 0o077 == 0 and fed.count(".") == 2,
       "the federated token file is private and holds a JWT")

    # IMDS: the Metadata header is required, and answered with
    imds = env["AZURE_POD_IDENTITY_AUTHORITY_HOST"] + "/metadata/identity/oauth2/token"
    q = {"api-version": "2018-02-01", "resource": "https://management.azure.com/"}
    r = requests.get(imds, params=q, timeout=10)
    ok(r.status_code == 400 and r.json().get("error") == "invalid_request" and
       "metadata header" in r.json().get("error_description", ""),
       "IMDS without 'Metadata: true' is refused 400 invalid_request (%d)" % r.status_code)
    r = requests.get(imds, params=q, headers={"Metadata": "true"}, timeout=10)
    doc = r.json() if r.status_code == 200 else {}
    ok(r.status_code == 200 and r.headers.get("Metadata") == "true" and doc.get("token_type") == "Bearer" and
       doc.get("resource") == q["resource"] and int(doc.get("expires_on", 0)) > time.time(),
       "IMDS with the header: a token for ARM, answered with 'Metadata: true'")
    r = requests.get(env["AZURE_POD_IDENTITY_AUTHORITY_HOST"] + "/metadata/instance",
                     params={"api-version": "2021-02-01"}, headers={"Metadata": "true"}, timeout=10)
    c = r.json().get("compute", {}) if r.status_code == 200 else {}
    ok(c.get("subscriptionId") == SUB and c.get("resourceGroupName") == RG and c.get("location") == "eastus",
       "IMDS /metadata/instance: subscription, resource group and location")

    mi = with_env({"AZURE_POD_IDENTITY_AUTHORITY_HOST": env["AZURE_POD_IDENTITY_AUTHORITY_HOST"]},
                  lambda: ManagedIdentityCredential())
    t = with_env({"AZURE_POD_IDENTITY_AUTHORITY_HOST": env["AZURE_POD_IDENTITY_AUTHORITY_HOST"]},
                 lambda: mi.get_token(ARM_SCOPE))
    ok(t.token.startswith("sim-arm.") and t.expires_on > time.time() + 3000,
       "ManagedIdentityCredential gets its token from the simulator's IMDS")
    other = with_env({"AZURE_POD_IDENTITY_AUTHORITY_HOST": env["AZURE_POD_IDENTITY_AUTHORITY_HOST"]},
                     lambda: ManagedIdentityCredential(client_id="11111111-2222-4333-8444-555555555555"))
    try:
        with_env({"AZURE_POD_IDENTITY_AUTHORITY_HOST": env["AZURE_POD_IDENTITY_AUTHORITY_HOST"]},
                 lambda: other.get_token(ARM_SCOPE))
        ok(False, "IMDS refuses a user-assigned identity it does not have")
    except ClientAuthenticationError as e:
        ok("has not been assigned" in str(e), "IMDS refuses a user-assigned identity it does not have")

    # AAD: client secret and workload identity, over TLS as azure-identity insists
    cs = ClientSecretCredential(TENANT, CLIENT, env["AZURE_CLIENT_SECRET"], authority=sim["tls"],
                                instance_discovery=False, connection_verify=sim["ca"])
    t2 = cs.get_token(ARM_SCOPE)
    ok(t2.token.startswith("sim-arm.") and t2.token != t.token, "ClientSecretCredential (msal) gets a token from the AAD endpoint")
    bad = ClientSecretCredential(TENANT, CLIENT, "wrong-secret", authority=sim["tls"], instance_discovery=False,
                                 connection_verify=sim["ca"])
    try:
        bad.get_token(ARM_SCOPE)
        ok(False, "a wrong client secret is refused")
    except ClientAuthenticationError as e:
        ok("AADSTS7000215" in str(e) and "wrong-secret" not in str(e), "a wrong client secret is refused (AADSTS7000215)")
    r = requests.post(env["AZURE_AUTHORITY_HOST"] + TENANT + "/oauth2/v2.0/token",
                      data={"grant_type": "client_credentials", "client_id": CLIENT, "scope": "https://graph.microsoft.com/.default",
                            "client_secret": env["AZURE_CLIENT_SECRET"]}, timeout=10)
    ok(r.status_code == 400 and r.json().get("error") == "invalid_scope", "a scope other than ARM's is invalid_scope")

    wi_env = {"AZURE_AUTHORITY_HOST": sim["tls"], "REQUESTS_CA_BUNDLE": sim["ca"], "AZURE_CLIENT_ID": CLIENT,
              "AZURE_TENANT_ID": TENANT, "AZURE_FEDERATED_TOKEN_FILE": env["AZURE_FEDERATED_TOKEN_FILE"]}
    wi = with_env(wi_env, lambda: ManagedIdentityCredential(client_id=CLIENT))
    t3 = with_env(wi_env, lambda: wi.get_token(ARM_SCOPE))
    ok(type(wi._credential).__name__ == "TokenExchangeCredential" and t3.token.startswith("sim-arm."),
       "workload identity: the federated token file exchanged for an ARM token (client_assertion)")
    forged = H.path("forged.token")
    open(forged, "w").write(fed[:-4] + "AAAA")
    wi_env["AZURE_FEDERATED_TOKEN_FILE"] = forged
    wib = with_env(wi_env, lambda: ManagedIdentityCredential(client_id=CLIENT))
    try:
        with_env(wi_env, lambda: wib.get_token(ARM_SCOPE))
        ok(False, "an assertion the simulator did not write is refused")
    except ClientAuthenticationError as e:
        ok("AADSTS70021" in str(e), "an assertion the simulator did not write is refused (AADSTS70021)")
    return mi, t.token


def check_throttle(ss):
    """A 429 storm (the scenario's throttle fault, two calls): the SDK's retry
    policy honours Retry-After and gets through. First of all the ARM calls:
    a list charges every scale set's throttle faults."""
    seen = []
    v = ss.get(RG, "aks-throttled-vmss", raw_response_hook=lambda resp: seen.append(
        (resp.http_response.status_code, resp.http_response.headers.get("Retry-After"))), **HTTP)
    ok(v.name == "aks-throttled-vmss" and [s for s, _ in seen] == [429, 429, 200] and seen[0][1] == "1",
       "two 429s with Retry-After: 1, retried by the SDK, then 200 (%s)" % seen)


def check_arm(sim, cred, token):
    c = ComputeManagementClient(cred, SUB, base_url=sim["arm"])
    ss = c.virtual_machine_scale_sets
    check_throttle(ss)

    # bearer tokens required
    r = raw(sim, "GET", vmss_path(WORKERS), None)
    ok(r.status_code == 401 and err_code(r) == "AuthenticationFailed" and "Bearer" in r.headers.get("WWW-Authenticate", ""),
       "ARM without a token: 401 AuthenticationFailed")
    r = raw(sim, "GET", vmss_path(WORKERS), "sim-arm.0000000000000000deadbeef")
    ok(r.status_code == 401 and err_code(r) == "InvalidAuthenticationToken", "ARM with a token it never issued: 401")
    try:
        ss.get(RG, WORKERS)
        ok(False, "azure-core refuses to send a bearer token over http unless the call says enforce_https=False")
    except Exception as e:  # ServiceRequestError from BearerTokenCredentialPolicy
        ok("https" in str(e).lower(), "azure-core refuses to send a bearer token over http unless the call says enforce_https=False")

    v = ss.get(RG, WORKERS, **HTTP)
    ok(v.name == WORKERS and v.location == "eastus" and v.sku.name == "Standard_D4s_v3" and v.sku.tier == "Standard"
       and v.sku.capacity == 1 and v.provisioning_state == "Succeeded" and v.zones == ["1", "2", "3"]
       and v.tags.get("k8s.io_cluster-autoscaler_enabled") == "true" and v.tags.get("min") == "1"
       and v.tags.get("max") == "8" and v.orchestration_mode == "Uniform"
       and v.virtual_machine_profile.os_profile.computer_name_prefix == "aks-workers-12345678-vmss"
       and v.virtual_machine_profile.storage_profile.os_disk.os_type == "Linux"
       and v.id == "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets/%s" % (SUB, RG, WORKERS),
       "SDK get: the scale set's sku, tags, zones, provisioningState and profile")
    r = raw(sim, "GET", vmss_path(WORKERS), token)
    etag0 = r.json().get("etag")
    ok(r.status_code == 200 and etag0 and r.headers.get("ETag") == etag0, "the etag is in the body and the ETag header (%s)" % etag0)
    r = raw(sim, "GET", vmss_path(WORKERS.upper()), token, params={"api-version": "2024-11-01"})
    ok(r.status_code == 200 and r.json()["name"] == WORKERS, "names are case-insensitive; api-version 2024-11-01 is served")
    names = sorted(x.name for x in ss.list(RG, **HTTP))
    ok(len(names) == 5 and WORKERS in names, "SDK list in the resource group: 5 scale sets")
    ok(sorted(x.name for x in ss.list_all(**HTTP)) == names, "SDK list_all in the subscription: the same")

    # capacity through the long-running operation, PUT with a sparse body
    seen = []
    p = ss.begin_create_or_update(RG, WORKERS, VirtualMachineScaleSet(location="eastus", sku=Sku(name="Standard_D4s_v3", capacity=4)),
                                  raw_response_hook=lambda resp: seen.append(
                                      (resp.http_response.status_code, dict(resp.http_response.headers))), **FAST)
    res = p.result()
    first = seen[0][1] if seen else {}
    ok(res.sku.capacity == 4 and res.provisioning_state == "Succeeded" and p.status() == "Succeeded",
       "begin_create_or_update: the poller ends Succeeded with capacity 4")
    ok("/operations/" in first.get("Azure-AsyncOperation", "") and "monitor=true" in first.get("Location", "")
       and first.get("Retry-After") == "1" and seen[0][0] == 200,
       "the PUT answers 200 with Azure-AsyncOperation, Location and Retry-After")
    r = raw(sim, "GET", vmss_path(WORKERS), token)
    etag1 = r.json().get("etag")
    ok(etag1 and etag1 != etag0, "the etag changed with the write (%s -> %s)" % (etag0, etag1))

    # a stale If-Match is 412, the current one goes
    try:
        ss.begin_create_or_update(RG, WORKERS, VirtualMachineScaleSet(location="eastus", sku=Sku(capacity=5)),
                                  headers={"If-Match": etag0}, **FAST).result()
        ok(False, "a stale If-Match is refused 412 PreconditionFailed")
    except HttpResponseError as e:
        ok(e.status_code == 412 and e.error and e.error.code == "PreconditionFailed",
           "a stale If-Match is refused 412 PreconditionFailed")
    ok(ss.get(RG, WORKERS, **HTTP).sku.capacity == 4, "... and the capacity did not move")

    # VMs: paged two at a time, with instanceView
    def vms_ready():
        vms = list(c.virtual_machine_scale_set_vms.list(RG, WORKERS, expand="instanceView", **HTTP))
        return vms if len(vms) == 4 and all(x.provisioning_state == "Succeeded" for x in vms) else None
    vms = until(30, vms_ready)
    ok(vms, "the 4 VMs become Succeeded")
    pages = list(c.virtual_machine_scale_set_vms.list(RG, WORKERS, expand="instanceView", **HTTP).by_page())
    ok(len(pages) == 2 and [len(list(pg)) for pg in pages] == [2, 2], "the VM list comes in pages (nextLink) of 2")
    if vms:
        ok([x.instance_id for x in vms] == ["0", "1", "2", "3"] and
           all(x.os_profile.computer_name == "aks-workers-12345678-vmss%06d" % int(x.instance_id) for x in vms) and
           all(x.instance_view.statuses[0].code == "ProvisioningState/succeeded" and
               x.instance_view.statuses[1].code == "PowerState/running" for x in vms) and
           all(x.zones and x.zones[0] in ("1", "2", "3") for x in vms) and
           len({x.zones[0] for x in vms}) == 3 and all(x.vm_id and x.latest_model_applied for x in vms),
           "VMs: instance ids, AKS computer names, instanceView statuses, zones spread")
        one = c.virtual_machine_scale_set_vms.get(RG, WORKERS, "2", expand="instanceView", **HTTP)
        ok(one.name == WORKERS + "_2" and one.os_profile.computer_name == "aks-workers-12345678-vmss000002" and one.instance_view.statuses[1].code == "PowerState/running",
           "SDK get of one VM")
        want = {"azure:///subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets/%s/virtualMachines/%s"
                % (SUB, RG, WORKERS, x.instance_id): x.os_profile.computer_name for x in vms}
        nodes = until(20, lambda: (lambda ns: ns if set(want) <= set(ns) else None)(
            {n["spec"].get("providerID", ""): n["metadata"]["name"] for n in kube(sim, "/api/v1/nodes")["items"]}))
        ok(nodes and all(nodes[k] == want[k] for k in want),
           "every VM is a Node named by its computer name, with its azure:/// providerID")
        net = NetworkManagementClient(cred, SUB, base_url=sim["arm"])
        ips = {x.os_profile.computer_name: [ipc.private_ip_address for nic in
                                            net.network_interfaces.list_virtual_machine_scale_set_vm_network_interfaces(
                                                RG, WORKERS, x.instance_id, **HTTP)
                                            for ipc in nic.ip_configurations] for x in vms}
        kn = kube(sim, "/api/v1/nodes")["items"]
        internal = {n["metadata"]["name"]: [a["address"] for a in n["status"]["addresses"] if a["type"] == "InternalIP"]
                    for n in kn}
        ok(not any("luascale.io/node-group" in n["metadata"].get("labels", {}) for n in kn),
           "the nodes carry no luascale.io/node-group label, as AKS's do not")
        ok(all(len(ips[k]) == 1 and ips[k] == internal.get(k) for k in ips),
           "each node's InternalIP is its VM's NIC private IP, as azure-mgmt-network reads it: %s / %s"
           % (ips, {k: internal.get(k) for k in ips}))

    # PATCH down by one: the newest goes
    res = ss.begin_update(RG, WORKERS, VirtualMachineScaleSetUpdate(sku=Sku(capacity=3)), **FAST).result()
    ok(res.sku.capacity == 3, "begin_update (PATCH): capacity 3")
    left = until(20, lambda: (lambda ids: ids if ids == ["0", "1", "2"] else None)(
        [x.instance_id for x in c.virtual_machine_scale_set_vms.list(RG, WORKERS, **HTTP)]))
    ok(left, "shrinking takes the newest VM (3)")

    # delete instances (POST .../delete, 202 and an operation)
    p = ss.begin_delete_instances(RG, WORKERS, VirtualMachineScaleSetVMInstanceRequiredIDs(instance_ids=["1"]), **FAST)
    p.result()
    ok(p.status() == "Succeeded" and ss.get(RG, WORKERS, **HTTP).sku.capacity == 2,
       "begin_delete_instances: Succeeded, capacity down to 2")
    left = until(20, lambda: (lambda ids: ids if ids == ["0", "2"] else None)(
        [x.instance_id for x in c.virtual_machine_scale_set_vms.list(RG, WORKERS, **HTTP)]))
    ok(left, "the deleted VM leaves the list; the others stay")
    try:
        ss.begin_delete_instances(RG, WORKERS, VirtualMachineScaleSetVMInstanceRequiredIDs(instance_ids=["7"]), **FAST).result()
        ok(False, "deleting an instance id that is no VM is refused")
    except HttpResponseError as e:
        ok(e.status_code == 400 and e.error.code == "InvalidParameter" and "not an active" in e.error.message,
           "deleting an instance id that is no VM is refused (InvalidParameter)")

    # the Location form of the operation: 202 until done, then 200
    r = raw(sim, "PATCH", vmss_path(WORKERS), token, {"sku": {"capacity": 3}})
    loc = r.headers.get("Location", "")
    mon = until(20, lambda: (lambda x: x if x.status_code == 200 else None)(
        requests.get(loc, headers={"Authorization": "Bearer " + token}, timeout=10)))
    ok(r.status_code == 200 and mon is not None, "the Location URL answers 200 once the operation is over")
    return c


def check_faults(sim, c, token):
    ss = c.virtual_machine_scale_sets
    # AllocationFailed: the operation fails, the VM stays Failed
    try:
        ss.begin_create_or_update(RG, "aks-gpu-12345678-vmss", VirtualMachineScaleSet(location="eastus", sku=Sku(capacity=1)),
                                  **FAST).result()
        ok(False, "no capacity: the operation ends Failed with AllocationFailed")
    except HttpResponseError as e:
        ok(e.error and e.error.code == "AllocationFailed" and "sufficient capacity" in e.error.message,
           "no capacity: the operation ends Failed with AllocationFailed")
    vms = list(c.virtual_machine_scale_set_vms.list(RG, "aks-gpu-12345678-vmss", expand="instanceView", **HTTP))
    ok(len(vms) == 1 and vms[0].provisioning_state == "Failed" and
       vms[0].instance_view.statuses[0].code == "ProvisioningState/failed/AllocationFailed" and
       vms[0].instance_view.statuses[0].level == "Error",
       "the VM is Failed with ProvisioningState/failed/AllocationFailed in its instanceView")

    # quota: refused on the PUT itself, nothing changes
    for name, cap, why in (("aks-quota-12345678-vmss", 1, "a quota fault"), (WORKERS, 9, "above the group's max")):
        before = ss.get(RG, name, **HTTP).sku.capacity
        try:
            ss.begin_create_or_update(RG, name, VirtualMachineScaleSet(location="eastus", sku=Sku(capacity=cap)), **FAST).result()
            ok(False, "quota (%s): 409 OperationNotAllowed on the PUT" % why)
        except HttpResponseError as e:
            ok(e.status_code == 409 and e.error.code == "OperationNotAllowed" and "quota" in e.error.message.lower() and
               ss.get(RG, name, **HTTP).sku.capacity == before,
               "quota (%s): 409 OperationNotAllowed on the PUT, capacity unchanged" % why)

    # a slow operation stays InProgress
    p = ss.begin_update(RG, "aks-slowops-vmss", VirtualMachineScaleSetUpdate(sku=Sku(capacity=1)), **FAST)
    p.wait(1.5)
    v = ss.get(RG, "aks-slowops-vmss", **HTTP)
    ok(not p.done() and p.status() == "InProgress" and v.provisioning_state == "Updating" and v.sku.capacity == 1,
       "a slow operation stays InProgress, the scale set Updating")

    # what ARM refuses, in ARM's error shape
    cases = [
        ("GET", vmss_path(WORKERS), None, {}, 400, "MissingApiVersionParameter"),
        ("GET", vmss_path(WORKERS), None, {"api-version": "2099-01-01"}, 400, "NoRegisteredProviderFound"),
        ("GET", vmss_path(WORKERS), None, {"api-version": "2022-08-01", "$expand": "everything"}, 400, "InvalidParameter"),
        ("GET", vmss_path(WORKERS) + "/virtualMachines", None, {"api-version": "2022-08-01", "$top": "0"}, 400, "InvalidParameter"),
        ("GET", vmss_path("nope"), None, None, 404, "ResourceNotFound"),
        ("GET", vmss_path(WORKERS).replace(RG, "other-rg"), None, None, 404, "ResourceGroupNotFound"),
        ("GET", vmss_path(WORKERS).replace(SUB, "00000000-0000-4000-8000-000000000000"), None, None, 404, "SubscriptionNotFound"),
        ("GET", vmss_path(WORKERS) + "/virtualMachines/99", None, None, 404, "NotFound"),
        ("PUT", vmss_path(WORKERS), "{not json", None, 400, "InvalidRequestContent"),
        ("PUT", vmss_path(WORKERS), {"sku": {"capacity": 2}}, None, 400, "LocationRequired"),
        ("PUT", vmss_path(WORKERS), {"location": "westus", "sku": {"capacity": 2}}, None, 400, "InvalidResourceLocation"),
        ("PATCH", vmss_path(WORKERS), {"sku": {"capacity": "two"}}, None, 400, "InvalidRequestContent"),
        ("PATCH", vmss_path(WORKERS), {"sku": {"capacity": 1001}}, None, 400, "InvalidParameter"),
        ("PATCH", vmss_path(WORKERS), {"sku": {"name": "Standard_D8s_v3"}}, None, 409, "PropertyChangeNotAllowed"),
        ("PATCH", vmss_path(WORKERS), {"tags": {"a": "b"}}, None, 400, "InvalidParameter"),
        ("POST", vmss_path(WORKERS) + "/delete", {}, None, 400, "InvalidParameter"),
        ("POST", vmss_path(WORKERS) + "/delete", {"instanceIds": [0]}, None, 400, "InvalidParameter"),
        ("DELETE", vmss_path(WORKERS), None, None, 405, "MethodNotAllowed"),
    ]
    r = requests.patch(sim["arm"] + vmss_path(WORKERS), params={"api-version": "2022-08-01"}, data="sku=3",
                       headers={"Authorization": "Bearer " + token, "Content-Type": "text/plain"}, timeout=10)
    ok(r.status_code == 415 and err_code(r) == "UnsupportedMediaType", "a body that is not application/json: 415")
    bad = []
    for method, path, body, params, status, code in cases:
        r = raw(sim, method, path, token, body, params=params)
        if r.status_code != status or err_code(r) != code:
            bad.append("%s %s -> %d %s (want %d %s)" % (method, path[-40:], r.status_code, r.text[:120], status, code))
    ok(not bad, "%d bad requests each get ARM's {\"error\":{\"code\",\"message\"}} with the real code" % len(cases), *())
    for line in bad:
        print("#   " + line)
    ok(ss.get(RG, WORKERS, **HTTP).sku.capacity == 3, "... and none of them changed the scale set")


def check_not_allowed():
    """The other throttling shape: 429 OperationNotAllowed with TooManyRequests details."""
    text = open(SCENARIO).read().replace("  retry_after: 1s\n", "  retry_after: 1s\n  throttle: operation_not_allowed\n")
    path = H.path("notallowed.yaml")
    open(path, "w").write(text)
    sim = start("notallowed", path)
    mi = with_env({"AZURE_POD_IDENTITY_AUTHORITY_HOST": sim["env"]["AZURE_POD_IDENTITY_AUTHORITY_HOST"]},
                  lambda: ManagedIdentityCredential())
    token = with_env({"AZURE_POD_IDENTITY_AUTHORITY_HOST": sim["env"]["AZURE_POD_IDENTITY_AUTHORITY_HOST"]},
                     lambda: mi.get_token(ARM_SCOPE)).token
    r = raw(sim, "GET", vmss_path("aks-throttled-vmss"), token)
    e = r.json().get("error", {}) if r.status_code == 429 else {}
    d = (e.get("details") or [{}])[0]
    ok(r.status_code == 429 and r.headers.get("Retry-After") == "1" and e.get("code") == "OperationNotAllowed" and
       d.get("code") == "TooManyRequests" and json.loads(d.get("message", "{}")).get("operationGroup") == "HighCostGet30Min",
       "throttle: operation_not_allowed gives 429 OperationNotAllowed with TooManyRequests details and Retry-After")
    c = ComputeManagementClient(mi, SUB, base_url=sim["arm"])
    seen = []
    v = with_env({"AZURE_POD_IDENTITY_AUTHORITY_HOST": sim["env"]["AZURE_POD_IDENTITY_AUTHORITY_HOST"]},
                 lambda: c.virtual_machine_scale_sets.get(RG, "aks-throttled-vmss", raw_response_hook=lambda resp: seen.append(
                     resp.http_response.status_code), **HTTP))
    ok(v.name == "aks-throttled-vmss" and seen == [429, 200], "the SDK retries it after Retry-After (%s)" % seen)
    stop(sim["proc"])


try:
    s = start("main", SCENARIO)
    cred, tok = check_auth(s)
    pod_host = {"AZURE_POD_IDENTITY_AUTHORITY_HOST": s["env"]["AZURE_POD_IDENTITY_AUTHORITY_HOST"]}
    client = with_env(pod_host, lambda: check_arm(s, cred, tok))
    with_env(pod_host, lambda: check_faults(s, client, tok))
    ok(not re.search(r"sim-secret-value|sim-arm\.[0-9a-f]{8}", open(s["log"]).read()),
       "the simulator's log holds no secret and no token")
    stop(s["proc"])
    check_not_allowed()
except Exception:  # noqa: BLE001 - a crash is a failure, with its traceback
    ok(False, "the test ran to its end")
    print("# " + traceback.format_exc().replace("\n", "\n# "))
finally:
    H.finish()
