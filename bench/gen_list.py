#!/usr/bin/python3
# gen_list.py: writes a large List shaped like `kubectl get nodes,pods -A
# -o json` prints it (keys sorted, 4-space indent, managedFields, env,
# mounts, container statuses), for bench_load. Never commit its output.
#   /usr/bin/python3 bench/gen_list.py OUT.json [MEGABYTES]   (default 170)
import json
import random
import sys


def node(i):
    name = "node-%05d" % i
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "creationTimestamp": "2026-11-01T00:00:00Z",
            "labels": {"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
                       "kubernetes.io/os": "linux",
                       "node.kubernetes.io/instance-type": "m5.4xlarge",
                       "topology.kubernetes.io/zone": "eu-west-1" + "abc"[i % 3],
                       "luascale.io/node-group": ["general", "compute", "memory"][i % 3]},
            "name": name, "resourceVersion": str(1000 + i), "uid": "6a1f0c2e-%08d" % i},
        "spec": {"providerID": "aws:///eu-west-1a/i-%012d" % i},
        "status": {
            "addresses": [{"address": "10.0.%d.%d" % (i // 250, i % 250), "type": "InternalIP"},
                          {"address": name, "type": "Hostname"}],
            "allocatable": {"cpu": "15890m", "ephemeral-storage": "95551679124",
                            "memory": "63350Mi", "pods": "110"},
            "capacity": {"cpu": "16", "ephemeral-storage": "104845292Ki",
                         "memory": "64000Mi", "pods": "110"},
            "conditions": [
                {"lastHeartbeatTime": "2026-11-30T09:58:00Z", "lastTransitionTime": "2026-11-01T00:01:00Z",
                 "message": "kubelet has sufficient memory available", "reason": "KubeletHasSufficientMemory",
                 "status": "False", "type": "MemoryPressure"},
                {"lastHeartbeatTime": "2026-11-30T09:58:00Z", "lastTransitionTime": "2026-11-01T00:01:00Z",
                 "message": "kubelet is posting ready status", "reason": "KubeletReady",
                 "status": "True", "type": "Ready"}],
            "nodeInfo": {"architecture": "amd64", "containerRuntimeVersion": "containerd://1.7.20",
                         "kernelVersion": "6.1.0-26-amd64", "kubeletVersion": "v1.30.4",
                         "operatingSystem": "linux", "osImage": "Debian GNU/Linux 12 (bookworm)"}}}


def pod(i, nodes, rnd):
    app = "app-%d" % (i % 50)
    name = "%s-7f9c6d-%05d" % (app, i)
    cpu = rnd.randint(50, 500)
    mem = rnd.randint(64, 1024)
    env = [{"name": "VAR_%02d" % k, "value": "value-%d-%d" % (i, k)} for k in range(12)]
    env.append({"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}})
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "annotations": {"prometheus.io/port": "9090", "prometheus.io/scrape": "true"},
            "creationTimestamp": "2026-11-29T10:00:00Z",
            "generateName": app + "-7f9c6d-",
            "labels": {"app": app, "pod-template-hash": "7f9c6d", "tier": "backend"},
            "managedFields": [
                {"apiVersion": "v1", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {},
                              "f:pod-template-hash": {}}, "f:ownerReferences": {".": {}}},
                              "f:spec": {"f:containers": {"k:{\"name\":\"main\"}": {".": {}, "f:env": {},
                                         "f:image": {}, "f:name": {}, "f:resources": {".": {}}}}}},
                 "manager": "kube-controller-manager", "operation": "Update",
                 "time": "2026-11-29T10:00:00Z"},
                {"apiVersion": "v1", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:status": {"f:conditions": {}, "f:containerStatuses": {},
                              "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:startTime": {}}},
                 "manager": "kubelet", "operation": "Update", "subresource": "status",
                 "time": "2026-11-29T10:00:05Z"}],
            "name": name, "namespace": "default",
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
                                 "kind": "ReplicaSet", "name": app + "-7f9c6d", "uid": "u-%d" % (i % 50)}],
            "resourceVersion": str(5000 + i), "uid": "0b3c%010d" % i},
        "spec": {
            "containers": [{
                "env": env, "image": "registry.example/%s:1.%d" % (app, i % 7),
                "imagePullPolicy": "IfNotPresent", "name": "main",
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"},
                          {"containerPort": 9090, "name": "metrics", "protocol": "TCP"}],
                "readinessProbe": {"failureThreshold": 3, "httpGet": {"path": "/healthz", "port": 8080,
                                   "scheme": "HTTP"}, "periodSeconds": 10, "successThreshold": 1,
                                   "timeoutSeconds": 1},
                "resources": {"limits": {"memory": "%dMi" % (2 * mem)},
                              "requests": {"cpu": "%dm" % cpu, "memory": "%dMi" % mem}},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                                  "name": "kube-api-access-%05d" % (i % 10000), "readOnly": True}]}],
            "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
            "nodeName": "node-%05d" % (i % nodes), "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0, "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "securityContext": {}, "serviceAccount": "default", "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready",
                             "operator": "Exists", "tolerationSeconds": 300},
                            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable",
                             "operator": "Exists", "tolerationSeconds": 300}],
            "volumes": [{"name": "kube-api-access-%05d" % (i % 10000), "projected": {
                "defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                    {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1",
                                                             "fieldPath": "metadata.namespace"},
                                                "path": "namespace"}]}}]}}]},
        "status": {
            "conditions": [{"lastProbeTime": None, "lastTransitionTime": "2026-11-29T10:00:01Z",
                            "status": "True", "type": t}
                           for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": [{"containerID": "containerd://%064x" % i,
                                   "image": "registry.example/%s:1.%d" % (app, i % 7),
                                   "imageID": "registry.example/%s@sha256:%064x" % (app, i % 7),
                                   "lastState": {}, "name": "main", "ready": True, "restartCount": 0,
                                   "started": True,
                                   "state": {"running": {"startedAt": "2026-11-29T10:00:03Z"}}}],
            "hostIP": "10.0.0.1", "phase": "Running", "podIP": "10.1.%d.%d" % (i // 250 % 250, i % 250),
            "podIPs": [{"ip": "10.1.%d.%d" % (i // 250 % 250, i % 250)}], "qosClass": "Burstable",
            "startTime": "2026-11-29T10:00:01Z"}}


def indented(obj):
    text = json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False)
    return "\n".join("        " + line for line in text.split("\n"))


def main():
    out = sys.argv[1]
    target = int(float(sys.argv[2]) * 1e6) if len(sys.argv) > 2 else 170_000_000
    rnd = random.Random(1)
    nodes = max(1, target // 300_000)
    size = 0
    with open(out, "w") as f:
        f.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        first = True
        for i in range(nodes):
            text = indented(node(i))
            f.write(("" if first else ",\n") + text)
            size += len(text)
            first = False
        i = 0
        while size < target:
            text = indented(pod(i, nodes, rnd))
            f.write(",\n" + text)
            size += len(text) + 2
            i += 1
        f.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
    print("%s: %d nodes, %d pods" % (out, nodes, i))


if __name__ == "__main__":
    main()
