#!/usr/bin/python3
# sim_python_client.py: `luascale sim` driven by Debian's python3-kubernetes,
# a client nobody on the project wrote. Every object the simulator serves is
# deserialized into the client's typed models (a missing required field
# fails); nodes are listed, read and patched (strategic, merge, JSON patch);
# pods and nodes are watched, the client resuming after the server ends a
# watch and after a 410; evictions (a PDB's 429), a force delete, Leases,
# ConfigMaps (dry run, field validation, a namespace that is not there),
# Events with field selectors, the control plane's Events through CoreV1Api
# and EventsV1Api (list, watch, create), access reviews, Deployments (create,
# read, scale, list, watch, patch, delete), pods created and patched, a Job. Fails when the package is
# missing. usage: sim_python_client.py LUASCALE_BINARY SOURCE_DIR
import json
import os
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness  # noqa: E402

try:
    from kubernetes import client, config, watch
    from kubernetes.client.rest import ApiException
except ImportError as e:
    print("not ok 1 - python3-kubernetes is not installed (%s)" % e)
    print("1..1")
    sys.exit(1)

SCENARIO = """seed: 7
duration: 2h
node_groups:
  - name: workers
    min: 0
    max: 5
    template:
      allocatable: {cpu: 2, memory: 8Gi, pods: 110}
      labels: {node-role.kubernetes.io/worker: "true"}
cloud: {boot_delay: 500ms, boot_jitter: 0s, launch_latency: 0s, terminate_latency: 0s, shutdown_delay: 500ms}
cluster: {register_delay: 200ms, scheduler: least-allocated, scheduler_interval: 200ms}
initial_nodes:
  - {group: workers, count: 2}
workloads:
  - name: agent
    namespace: kube-system
    controller: daemonset
    requests: {cpu: 100m, memory: 64Mi}
    labels: {app: agent}
  - name: web
    controller: replicaset
    count: 2
    requests: {cpu: 200m, memory: 256Mi}
    labels: {app: web}
    grace: 0s
  - name: slow
    controller: none
    count: 1
    requests: {cpu: 100m, memory: 64Mi}
    labels: {app: slow}
    grace: 10m
pdbs:
  - name: web
    selector: {app: web}
    min_available: 2
"""


def main():
    if len(sys.argv) != 3:
        print("usage: sim_python_client.py LUASCALE_BINARY SOURCE_DIR", file=sys.stderr)
        sys.exit(2)
    h = Harness(sys.argv[1], sys.argv[2], "sim-python-")
    try:
        run(h)
    except Exception:  # an unexpected answer: a failure with its traceback
        h.ok(False, "the client raised:\n# " + traceback.format_exc().replace("\n", "\n# "))
    finally:
        h.finish()


def until(deadline_s, fn):
    """Polls fn() until it returns something true or the deadline passes."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            v = fn()
        except ApiException:
            v = None
        if v:
            return v
        if time.monotonic() > end:
            return None
        time.sleep(0.1)


def typed(api, path, model):
    """GETs 'path' raw and deserializes it into 'model' as the client does:
    the error, or None."""
    resp = api.call_api(path, "GET", auth_settings=["BearerToken"], _preload_content=False,
                        response_type=None)[0]
    data = resp.data
    try:
        api.deserialize(type("R", (), {"data": data})(), model)
    except (ValueError, TypeError) as e:
        return "%s: %s" % (model, e)
    return None


def typed_data(api, data, model):
    """Deserializes an already parsed answer into 'model': the error, or None."""
    try:
        api.deserialize(type("R", (), {"data": json.dumps(data)})(), model)
    except (ValueError, TypeError) as e:
        return "%s: %s" % (model, e)
    return None


def raw(api, method, path, body=None, ctype="application/json", query=None):
    """One request with a raw body; (status, parsed body, headers). The
    client encodes bodies of JSON types itself: those go as objects."""
    if body is not None and "json" in ctype:
        body = json.loads(body)
    try:
        resp = api.call_api(path, method, query_params=query or [],
                            header_params={"Content-Type": ctype, "Accept": "application/json"},
                            body=body, auth_settings=["BearerToken"],
                            _preload_content=False, response_type=None)[0]
        return resp.status, json.loads(resp.data or b"{}"), resp.getheaders()
    except ApiException as e:
        return e.status, json.loads(e.body or b"{}"), e.headers or {}


def run(h):
    scen = h.path("scenario.yaml")
    with open(scen, "w") as f:
        f.write(SCENARIO)
    sim = h.start_sim("py", scen, ["--watch-timeout", "2s", "--log-level", "debug"], [])
    log = sim["log"]
    config.load_kube_config(config_file=sim["kubeconfig"])
    api = client.ApiClient()
    v1 = client.CoreV1Api(api)
    apps = client.AppsV1Api(api)
    policy = client.PolicyV1Api(api)
    coord = client.CoordinationV1Api(api)
    authz = client.AuthorizationV1Api(api)

    running = until(30, lambda: len(v1.list_pod_for_all_namespaces(
        field_selector="status.phase=Running").items) == 5)
    h.ok(running, "the simulated cluster comes up: typed pod lists", log)

    # ---- typed models for everything served ----
    for path, model in [("/api/v1/nodes", "V1NodeList"), ("/api/v1/pods", "V1PodList"),
                        ("/api/v1/namespaces", "V1NamespaceList"),
                        ("/api/v1/events", "CoreV1EventList"),
                        ("/api/v1/configmaps", "V1ConfigMapList"),
                        ("/apis/policy/v1/poddisruptionbudgets", "V1PodDisruptionBudgetList"),
                        ("/apis/coordination.k8s.io/v1/leases", "V1LeaseList"),
                        ("/apis/apps/v1/daemonsets", "V1DaemonSetList"),
                        ("/api/v1/persistentvolumeclaims", "V1PersistentVolumeClaimList"),
                        ("/api/v1/persistentvolumes", "V1PersistentVolumeList"),
                        ("/apis/storage.k8s.io/v1/storageclasses", "V1StorageClassList"),
                        ("/api/v1/nodes/workers-1", "V1Node"),
                        ("/api/v1/namespaces/default/pods/web-1", "V1Pod")]:
        err = typed(api, path, model)
        h.ok(err is None, "%s deserializes into %s%s" % (path, model, ": " + err if err else ""))

    nodes = v1.list_node().items
    n = nodes[0]
    info = n.status.node_info
    h.ok(len(nodes) == 2 and info.boot_id and info.machine_id and info.system_uuid and
         info.kernel_version and info.container_runtime_version,
         "list_node: every NodeSystemInfo field")
    labels = n.metadata.labels
    h.ok(all(k in labels for k in ["kubernetes.io/os", "kubernetes.io/arch", "kubernetes.io/hostname",
                                   "node.kubernetes.io/instance-type",
                                   "topology.kubernetes.io/zone", "topology.kubernetes.io/region"]),
         "nodes carry the well-known labels: %s" % sorted(labels))
    types = sorted(a.type for a in n.status.addresses)
    h.ok(types == ["Hostname", "InternalIP"], "nodes carry InternalIP and Hostname addresses")
    pod = v1.read_namespaced_pod("web-1", "default")
    h.ok(pod.status.pod_ip and pod.status.pod_i_ps and pod.status.host_ip and
         pod.status.host_ip == [a.address for a in
                                v1.read_node(pod.spec.node_name).status.addresses
                                if a.type == "InternalIP"][0],
         "running pods carry podIP(s) and their node's hostIP")
    ds = apps.read_namespaced_daemon_set("agent", "kube-system")
    h.ok(ds.status.desired_number_scheduled == 2 and ds.status.number_ready == 2,
         "DaemonSet status counts its pods (%s)" % ds.status)

    # ---- node patches, each kind ----
    p = v1.patch_node("workers-1", {"spec": {"unschedulable": True}})
    h.ok(p.spec.unschedulable is True, "patch_node (strategic merge) answers a typed Node")
    p = v1.patch_node("workers-1", [{"op": "test", "path": "/spec/unschedulable", "value": True},
                                    {"op": "remove", "path": "/spec/unschedulable"},
                                    {"op": "add", "path": "/metadata/labels/tier", "value": "gold"}])
    h.ok(not p.spec.unschedulable and p.metadata.labels.get("tier") == "gold",
         "patch_node with a JSON patch (test, remove, add)")
    try:
        v1.patch_node("workers-1", [{"op": "test", "path": "/metadata/labels/tier", "value": "x"}])
        h.ok(False, "a failed JSON patch test is refused")
    except ApiException as e:
        h.ok(e.status == 422, "a failed JSON patch test is refused 422 (%s)" % e.status)
    s, body, _ = raw(api, "PATCH", "/api/v1/nodes/workers-1",
                     json.dumps({"metadata": {"labels": {"tier": None}}}),
                     "application/merge-patch+json")
    h.ok(s == 200 and "tier" not in body["metadata"]["labels"] and
         typed_data(api, body, "V1Node") is None, "a merge patch of a node removes a label")
    rv = v1.read_node("workers-1").metadata.resource_version
    p = v1.patch_node("workers-1", {"spec": {"unschedulable": True}}, dry_run="All")
    h.ok(p.spec.unschedulable is True and not v1.read_node("workers-1").spec.unschedulable and
         v1.read_node("workers-1").metadata.resource_version == rv,
         "dry_run=All on patch_node answers the result and changes nothing")
    s, body, _ = raw(api, "PATCH", "/api/v1/nodes/workers-1", "{}", "application/xml")
    h.ok(s == 415 and body.get("reason") == "UnsupportedMediaType", "an unknown patch type is 415")

    # ---- field selectors ----
    sel = v1.list_node(field_selector="spec.unschedulable=false").items
    h.ok(len(sel) == 2, "spec.unschedulable=false matches nodes without the field")
    for fs in ["spec.schedulerName=default-scheduler", "spec.restartPolicy=Always",
               "status.podIP=%s" % pod.status.pod_ip, "spec.hostNetwork=false",
               "spec.serviceAccountName!=x", "status.nominatedNodeName="]:
        got = v1.list_pod_for_all_namespaces(field_selector=fs).items
        h.ok(len(got) >= 1, "pod field selector %s" % fs)
    try:
        v1.list_pod_for_all_namespaces(field_selector="spec.priority=0")
        h.ok(False, "an unsupported field selector is refused")
    except ApiException as e:
        h.ok(e.status == 400 and "field label not supported: spec.priority" in e.body,
             "an unsupported field selector is 400 with the real message")

    # ---- watches: events arrive, the server ends the watch, the client resumes ----
    w = watch.Watch()
    seen = []
    done = threading.Event()

    def watch_nodes():
        for ev in w.stream(v1.list_node, resource_version=v1.list_node().metadata.resource_version):
            seen.append((ev["type"], ev["object"].metadata.name,
                         bool(ev["object"].spec.unschedulable)))
            if ev["type"] == "MODIFIED" and ev["object"].metadata.name == "workers-2" and \
                    ev["object"].spec.unschedulable:
                break
        done.set()

    t = threading.Thread(target=watch_nodes, daemon=True)
    t.start()

    def watches_started():
        with open(log) as f:
            return sum(1 for line in f if "GET /api/v1/nodes -> 200 (watch)" in line)

    # the server ends each watch after 2 s: wait for the client's second one
    h.ok(until(20, lambda: watches_started() >= 2), "the client re-watches after the server ends a watch", log)
    v1.patch_node("workers-2", {"spec": {"unschedulable": True}})
    h.ok(done.wait(20) and ("MODIFIED", "workers-2", True) in seen,
         "watch.Watch().stream(list_node) yields the change on the resumed watch: %s" % seen)
    w.stop()
    v1.patch_node("workers-2", {"spec": {"unschedulable": None}})

    # a named object: GET nodes/X?watch=true watches that one
    s, _, _ = raw(api, "GET", "/api/v1/watch/nodes/workers-1", query=[("timeoutSeconds", "1")])
    h.ok(s == 200, "the legacy /api/v1/watch/nodes/NAME path is served")

    # 410: the client retries once, then reports it
    def faults(spec):
        return raw(api, "POST", "/apis/sim.luascale.io/v1/faults", json.dumps({"faults": spec}))[0]

    h.ok(faults(["expire-watches=1"]) == 200, "a 410 fault is injected")
    w = watch.Watch()
    got = []
    done = threading.Event()

    def watch_after_410():
        for ev in w.stream(v1.list_node, resource_version=v1.list_node().metadata.resource_version):
            got.append((ev["type"], ev["object"].metadata.name,
                        (ev["object"].metadata.labels or {}).get("after410")))
            if (ev["object"].metadata.labels or {}).get("after410") == "yes":
                break
        done.set()

    before = watches_started()
    t = threading.Thread(target=watch_after_410, daemon=True)
    t.start()
    h.ok(until(20, lambda: watches_started() >= before + 2),
         "after an in-stream 410 the client watches again", log)
    v1.patch_node("workers-1", {"metadata": {"labels": {"after410": "yes"}}})
    h.ok(done.wait(20) and ("MODIFIED", "workers-1", "yes") in got,
         "the watch after the 410 yields the change: %s" % got)
    w.stop()
    faults(["expire-watches=2"])
    try:
        for ev in watch.Watch().stream(v1.list_namespaced_pod, "default",
                                       resource_version=v1.list_namespaced_pod("default").metadata.resource_version):
            pass
        h.ok(False, "a second 410 reaches the caller")
    except ApiException as e:
        h.ok(e.status == 410, "a second 410 reaches the caller as ApiException 410")
    faults(["clear"])

    # pods: a watch from now sees a deletion, typed
    w = watch.Watch()
    pods_seen = []

    def watch_pods():
        for ev in w.stream(v1.list_namespaced_pod, "default", label_selector="app=slow"):
            pods_seen.append((ev["type"], ev["object"].metadata.name,
                              ev["object"].metadata.deletion_timestamp is not None))
            if ev["type"] == "DELETED":
                w.stop()

    def pod_watches():
        with open(log) as f:
            return sum(1 for line in f if "GET /api/v1/namespaces/default/pods -> 200 (watch)" in line)

    before = pod_watches()
    t = threading.Thread(target=watch_pods, daemon=True)
    t.start()
    until(10, lambda: pods_seen)
    h.ok(until(20, lambda: pod_watches() >= before + 2),
         "a pod watch the server ends is resumed by the client", log)

    # ---- a force delete of a Terminating pod ----
    v1.delete_namespaced_pod("slow-1", "default")
    term = v1.read_namespaced_pod("slow-1", "default")
    h.ok(term.metadata.deletion_timestamp is not None, "a pod with a 10m grace is Terminating")
    v1.delete_namespaced_pod("slow-1", "default", grace_period_seconds=0)
    try:
        v1.read_namespaced_pod("slow-1", "default")
        h.ok(False, "a force delete removes a Terminating pod")
    except ApiException as e:
        h.ok(e.status == 404, "a force delete removes a Terminating pod")
    t.join(20)
    h.ok(("DELETED", "slow-1", True) in pods_seen, "the pod watch saw it go: %s" % pods_seen)

    # ---- evictions ----
    ev = client.V1Eviction(metadata=client.V1ObjectMeta(name="web-1", namespace="default"))
    try:
        policy  # the PDB is read below
        v1.create_namespaced_pod_eviction("web-1", "default", ev)
        h.ok(False, "an eviction the PDB forbids is refused")
    except ApiException as e:
        h.ok(e.status == 429, "an eviction the PDB forbids is 429 (%s)" % e.status)
    pdb = policy.read_namespaced_pod_disruption_budget("web", "default")
    h.ok(pdb.status.disruptions_allowed == 0, "the PDB says no disruption is allowed")
    v1.create_namespaced_pod_eviction("web-1", "default", ev, dry_run="All")
    h.ok(v1.read_namespaced_pod("web-1", "default").metadata.deletion_timestamp is None,
         "a dry-run eviction changes nothing")

    # ---- leases ----
    node_leases = until(20, lambda: len(coord.list_namespaced_lease("kube-node-lease").items) == 2)
    h.ok(node_leases, "every Ready node renews a Lease in kube-node-lease")
    lease = client.V1Lease(metadata=client.V1ObjectMeta(name="me"),
                           spec=client.V1LeaseSpec(holder_identity="a", lease_duration_seconds=15))
    made = coord.create_namespaced_lease("default", lease)
    made.spec.holder_identity = "b"
    upd = coord.replace_namespaced_lease("me", "default", made)
    h.ok(upd.spec.holder_identity == "b", "a Lease is created and replaced")
    try:
        coord.replace_namespaced_lease("me", "default", made)  # stale resourceVersion
        h.ok(False, "a stale Lease update is refused")
    except ApiException as e:
        h.ok(e.status == 409, "a stale Lease update is 409")
    try:
        coord.read_namespaced_lease("nope", "default")
    except ApiException as e:
        d = json.loads(e.body).get("details", {})
        h.ok(e.status == 404 and d.get("group") == "coordination.k8s.io" and d.get("kind") == "leases"
             and d.get("name") == "nope", "a 404 carries details with group, kind and name: %s" % d)

    # ---- configmaps ----
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cfg"), data={"a": "1"})
    v1.create_namespaced_config_map("default", cm, dry_run="All")
    try:
        v1.read_namespaced_config_map("cfg", "default")
        h.ok(False, "a dry-run create stores nothing")
    except ApiException as e:
        h.ok(e.status == 404, "a dry-run create stores nothing")
    rv0 = v1.list_namespaced_config_map("default").metadata.resource_version
    v1.create_namespaced_config_map("default", cm)
    h.ok(int(v1.list_namespaced_config_map("default").metadata.resource_version) > int(rv0),
         "a real create bumps the resourceVersion")
    c = v1.patch_namespaced_config_map("cfg", "default", {"data": {"b": "2"}})
    c = v1.patch_namespaced_config_map("cfg", "default",
                                       [{"op": "move", "from": "/data/a", "path": "/data/c"},
                                        {"op": "copy", "from": "/data/b", "path": "/data/d"}])
    h.ok(c.data == {"b": "2", "c": "1", "d": "2"}, "configmap strategic and JSON patches: %s" % c.data)
    s, body, hdrs = raw(api, "POST", "/api/v1/namespaces/default/configmaps",
                        json.dumps({"metadata": {"name": "strict"}, "data": {}, "bogus": 1}),
                        query=[("fieldValidation", "Strict")])
    h.ok(s == 400 and 'unknown field "bogus"' in body.get("message", ""),
         "fieldValidation=Strict refuses an unknown field: %s" % body.get("message"))
    s, body, hdrs = raw(api, "POST", "/api/v1/namespaces/default/configmaps",
                        json.dumps({"metadata": {"name": "warned"}, "bogus": 1}))
    h.ok(s == 201 and "bogus" not in body and "unknown field" in (hdrs.get("Warning") or ""),
         "by default an unknown field is dropped with a Warning header")
    s, body, _ = raw(api, "POST", "/api/v1/namespaces/default/configmaps",
                     json.dumps({"metadata": {"name": "typed"}, "data": {"a": 1}}))
    h.ok(s == 400, "a wrong type is 400")
    s, body, _ = raw(api, "POST", "/api/v1/namespaces/nowhere/configmaps",
                     json.dumps({"metadata": {"name": "x"}}))
    h.ok(s == 404 and body.get("details", {}).get("kind") == "namespaces",
         "a namespace that does not exist is 404")
    s, body, _ = raw(api, "PATCH", "/api/v1/namespaces/default/configmaps/applied",
                     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: v\n",
                     "application/apply-patch+yaml", query=[("fieldManager", "test")])
    h.ok(s == 201 and v1.read_namespaced_config_map("applied", "default").data == {"k": "v"},
         "server-side apply (YAML) creates a configmap")
    s, body, _ = raw(api, "PATCH", "/api/v1/namespaces/default/configmaps/applied",
                     "{}", "application/apply-patch+yaml")
    h.ok(s == 422, "apply without fieldManager is refused")
    v1.delete_namespaced_config_map("cfg", "default", dry_run="All")
    h.ok(v1.read_namespaced_config_map("cfg", "default").data, "a dry-run delete keeps it")
    v1.delete_namespaced_config_map("cfg", "default")

    # ---- events ----
    e = client.CoreV1Event(metadata=client.V1ObjectMeta(name="n1.1"),
                           involved_object=client.V1ObjectReference(kind="Node", name="workers-1",
                                                                    api_version="v1"),
                           reason="Test", message="hello", type="Normal",
                           source=client.V1EventSource(component="pytest"))
    v1.create_namespaced_event("default", e)
    got = v1.list_namespaced_event("default", field_selector="involvedObject.apiVersion=v1,"
                                   "involvedObject.kind=Node,source=pytest").items
    h.ok(len(got) == 1 and got[0].message == "hello", "events by involvedObject.apiVersion and source")
    got[0].message = "changed"
    v1.replace_namespaced_event("n1.1", "default", got[0])
    v1.patch_namespaced_event("n1.1", "default", {"count": 2})
    ev1 = v1.read_namespaced_event("n1.1", "default")
    h.ok(ev1.message == "changed" and ev1.count == 2, "an Event is replaced, patched and read back")
    v1.delete_namespaced_event("n1.1", "default")
    h.ok(not v1.list_namespaced_event("default", field_selector="reason=Test").items,
         "an Event is deleted")

    # ---- the control plane's Events: CoreV1Api and EventsV1Api ----
    evapi = client.EventsV1Api(api)
    for path, model in [("/api/v1/events?fieldSelector=reason%3DRegisteredNode", "CoreV1EventList"),
                        ("/apis/events.k8s.io/v1/events?fieldSelector=reportingController%3D"
                         "default-scheduler", "EventsV1EventList")]:
        err = typed(api, path, model)
        h.ok(err is None, "typed models: %s (%s)" % (model, err or "ok"))
    reg = v1.list_event_for_all_namespaces(field_selector="reason=RegisteredNode").items
    h.ok(sorted(e.involved_object.name for e in reg) == ["workers-1", "workers-2"] and
         all(e.source.component == "node-controller" and e.count == 1 and e.first_timestamp
             for e in reg), "CoreV1Api: the node controller's RegisteredNode per node")
    sched = evapi.list_namespaced_event("default", field_selector="reason=Scheduled").items
    h.ok(any(e.regarding.name == "web-1" and e.reporting_controller == "default-scheduler" and
             e.note.startswith("Successfully assigned default/web-1 to workers-") and e.event_time
             for e in sched), "EventsV1Api: the scheduler's Scheduled, regarding the pod")
    # (the kubelets' and the node controller's Events come from the core
    # recorder: eventTime null, which this client's EventsV1Event refuses,
    # as against a real server; so those are read through CoreV1Api)
    rv = evapi.list_namespaced_event(
        "default", field_selector="reportingController=default-scheduler").metadata.resource_version
    evapi.create_namespaced_event("default", client.EventsV1Event(
        metadata=client.V1ObjectMeta(name="py.1"), event_time="2026-01-01T00:00:00.000000Z",
        reporting_controller="example.com/py", reporting_instance="py-1", action="Testing",
        reason="PyTest", note="from EventsV1Api", type="Normal",
        regarding=client.V1ObjectReference(kind="Node", name="workers-1", api_version="v1")))
    seen = None
    w = watch.Watch()
    for ev in w.stream(evapi.list_namespaced_event, "default", resource_version=rv,
                       field_selector="reason=PyTest", timeout_seconds=5):
        seen = ev
        w.stop()
    h.ok(seen and seen["type"] == "ADDED" and isinstance(seen["object"], client.EventsV1Event) and
         seen["object"].note == "from EventsV1Api",
         "EventsV1Api: create, then the watch brings it as a typed EventsV1Event")
    core = v1.read_namespaced_event("py.1", "default")
    h.ok(core.message == "from EventsV1Api" and core.reporting_component == "example.com/py" and
         core.involved_object.name == "workers-1", "the same Event through CoreV1Api")
    rv = v1.list_event_for_all_namespaces().metadata.resource_version
    v1.delete_namespaced_pod("web-2", "default", grace_period_seconds=0)
    seen = None
    w = watch.Watch()
    for ev in w.stream(v1.list_event_for_all_namespaces, resource_version=rv,
                       field_selector="reason=Killing,involvedObject.name=web-2", timeout_seconds=10):
        seen = ev
        w.stop()
    h.ok(seen and isinstance(seen["object"], client.CoreV1Event) and
         seen["object"].source.component == "kubelet" and seen["object"].type == "Normal",
         "CoreV1Api watch: the kubelet's Killing of a deleted pod")

    # ---- authorization ----
    r = authz.create_self_subject_access_review(client.V1SelfSubjectAccessReview(
        spec=client.V1SelfSubjectAccessReviewSpec(
            resource_attributes=client.V1ResourceAttributes(verb="list", resource="nodes"))))
    h.ok(r.status.allowed is True, "a SelfSubjectAccessReview is allowed")

    # ---- workloads: Deployments through AppsV1Api, pods through CoreV1Api ----
    batch = client.BatchV1Api(api)
    small = client.V1ResourceRequirements(requests={"cpu": "50m", "memory": "32Mi"})
    dep = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="pyweb"),
        spec=client.V1DeploymentSpec(
            replicas=2, selector=client.V1LabelSelector(match_labels={"app": "pyweb"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "pyweb"}),
                spec=client.V1PodSpec(termination_grace_period_seconds=0, containers=[
                    client.V1Container(name="web", image="nginx:1", resources=small)]))))
    seen_d = []

    def watch_deploys():
        for ev in watch.Watch().stream(apps.list_namespaced_deployment, "default",
                                       timeout_seconds=20):
            seen_d.append(ev)
            o = ev["object"]
            if o.status and (o.status.available_replicas or 0) >= 2:
                break

    wt = threading.Thread(target=watch_deploys, daemon=True)
    wt.start()
    d = apps.create_namespaced_deployment("default", dep)
    h.ok(isinstance(d, client.V1Deployment) and d.metadata.generation == 1 and
         d.spec.strategy.type == "RollingUpdate",
         "create_namespaced_deployment answers a typed, defaulted Deployment")
    avail = until(30, lambda: (apps.read_namespaced_deployment("pyweb", "default")
                               .status.available_replicas or 0) == 2)
    h.ok(avail, "read_namespaced_deployment: its two pods become available", log)
    wt.join(25)
    h.ok(seen_d and all(isinstance(e["object"], client.V1Deployment) for e in seen_d) and
         (seen_d[-1]["object"].status.available_replicas or 0) >= 2,
         "watch of deployments yields typed Deployments up to availability (%d events)" % len(seen_d))
    sc = apps.patch_namespaced_deployment_scale("pyweb", "default", {"spec": {"replicas": 3}})
    h.ok(isinstance(sc, client.V1Scale) and sc.spec.replicas == 3 and "app=pyweb" in sc.status.selector,
         "patch_namespaced_deployment_scale answers a typed Scale")
    avail = until(30, lambda: (apps.read_namespaced_deployment("pyweb", "default")
                               .status.available_replicas or 0) == 3)
    h.ok(avail, "the scaled Deployment has three available pods", log)
    sc = apps.read_namespaced_deployment_scale("pyweb", "default")
    h.ok(sc.spec.replicas == 3 and sc.status.replicas == 3, "read_namespaced_deployment_scale")
    lst = apps.list_namespaced_deployment("default").items
    h.ok([x.metadata.name for x in lst] == ["pyweb"], "list_namespaced_deployment")
    rss = apps.list_namespaced_replica_set("default", label_selector="app=pyweb").items
    h.ok(len(rss) == 1 and rss[0].metadata.owner_references[0].kind == "Deployment" and
         rss[0].metadata.owner_references[0].uid == d.metadata.uid,
         "its ReplicaSet is listed, owned by the Deployment")
    pods = v1.list_namespaced_pod("default", label_selector="app=pyweb").items
    h.ok(len(pods) == 3 and all(p.metadata.owner_references[0].uid == rss[0].metadata.uid
                                for p in pods), "its pods are typed and owned by the ReplicaSet")
    gen = apps.read_namespaced_deployment("pyweb", "default").metadata.generation
    d = apps.patch_namespaced_deployment("pyweb", "default", {"spec": {"template": {"spec": {
        "containers": [{"name": "web", "image": "nginx:2"}]}}}})
    h.ok(d.metadata.generation == gen + 1, "patch_namespaced_deployment bumps the generation")
    rolled = until(60, lambda: all(p.spec.containers[0].image == "nginx:2" for p in
                                   v1.list_namespaced_pod("default", label_selector="app=pyweb",
                                                          field_selector="status.phase=Running").items)
                   and (apps.read_namespaced_deployment("pyweb", "default").status
                        .updated_replicas or 0) == 3)
    h.ok(rolled, "a template patch rolls the pods to the new image", log)
    for path, model in [("/apis/apps/v1/deployments", "V1DeploymentList"),
                        ("/apis/apps/v1/replicasets", "V1ReplicaSetList"),
                        ("/apis/apps/v1/namespaces/default/deployments/pyweb", "V1Deployment"),
                        ("/apis/apps/v1/namespaces/default/deployments/pyweb/scale", "V1Scale"),
                        ("/api/v1/limitranges", "V1LimitRangeList")]:
        err = typed(api, path, model)
        h.ok(err is None, "%s deserializes into %s%s" % (path, model, ": " + err if err else ""))
    st = apps.delete_namespaced_deployment("pyweb", "default")
    h.ok(isinstance(st, client.V1Status) and st.status == "Success" and st.details.name == "pyweb"
         and st.details.kind == "deployments" and st.details.group == "apps",
         "delete_namespaced_deployment answers a Status Success naming it")
    gone = until(30, lambda: not apps.list_namespaced_replica_set(
        "default", label_selector="app=pyweb").items and not v1.list_namespaced_pod(
        "default", label_selector="app=pyweb").items)
    h.ok(gone, "delete_namespaced_deployment takes its ReplicaSet and pods with it", log)

    pod = v1.create_namespaced_pod("default", client.V1Pod(
        metadata=client.V1ObjectMeta(name="pypod", labels={"app": "pypod"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")])))
    h.ok(isinstance(pod, client.V1Pod) and
         pod.spec.containers[0].resources.requests == {"cpu": "500m", "memory": "512Mi"},
         "create_namespaced_pod answers a typed Pod with the LimitRange's requests")
    pod = v1.patch_namespaced_pod("pypod", "default", {"metadata": {"labels": {"tier": "x"}}})
    h.ok(pod.metadata.labels == {"app": "pypod", "tier": "x"}, "patch_namespaced_pod changes a label")
    try:
        v1.patch_namespaced_pod("pypod", "default", {"spec": {"nodeSelector": {"a": "b"}}})
        h.ok(False, "a pod's spec is immutable")
    except ApiException as e:
        h.ok(e.status == 422 and "Forbidden" in e.body, "a patch of a pod's spec is 422 Forbidden")
    job = batch.create_namespaced_job("default", client.V1Job(
        metadata=client.V1ObjectMeta(name="pyjob"),
        spec=client.V1JobSpec(template=client.V1PodTemplateSpec(
            metadata=client.V1ObjectMeta(annotations={"sim.luascale.io/duration": "1s"}),
            spec=client.V1PodSpec(restart_policy="Never", containers=[
                client.V1Container(name="c", image="busybox", resources=small)])))))
    h.ok(isinstance(job, client.V1Job) and job.spec.completions == 1, "create_namespaced_job")
    done_job = until(30, lambda: batch.read_namespaced_job("pyjob", "default").status.succeeded == 1)
    h.ok(done_job and any(c.type == "Complete" and c.status == "True" for c in
                          batch.read_namespaced_job("pyjob", "default").status.conditions),
         "the Job completes", log)
    err = typed(api, "/apis/batch/v1/jobs", "V1JobList")
    h.ok(err is None, "/apis/batch/v1/jobs deserializes into V1JobList%s" % (": " + err if err else ""))

    # ---- resourceVersions ----
    try:
        v1.list_node(resource_version="999999999", resource_version_match="NotOlderThan")
        h.ok(False, "a future resourceVersion is refused")
    except ApiException as e:
        h.ok(e.status == 504 and "Too large resource version" in e.body,
             "a future resourceVersion is 504 Too large resource version")


if __name__ == "__main__":
    main()
