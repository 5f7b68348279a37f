#!/usr/bin/python3
# run_sim_metrics.py: the HTTP endpoint of `luascale run` against `luascale
# sim`, read by Prometheus's own tools (Debian's prometheus package):
#   promtool  `promtool check metrics` passes on /metrics of a live run that
#             scaled up, and every family the operations guide lists is there;
#             a second run that scales down counts the removal by group and
#             reason and observes its drain-to-delete time;
#   scrape    a real Prometheus (loopback, its storage in the test's temporary
#             directory, scrape_interval 1s, a config the test writes)
#             scrapes luascale; its HTTP API (/api/v1/query) shows the
#             target up and luascale_reconciles_total rising.
# Also /healthz and /readyz, 404 and 405, --no-server. Fails when promtool or
# prometheus is missing.
# Usage: run_sim_metrics.py LUASCALE SOURCE_DIR promtool|scrape
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, log_has, pod, pods_running, until  # noqa: E402

which = sys.argv[3] if len(sys.argv) > 3 else "promtool"
H = Harness(sys.argv[1], sys.argv[2], "run_sim_metrics.")
ok = H.ok

for tool in ("promtool", "prometheus"):
    if not shutil.which(tool, path="/usr/bin:/bin"):
        print("not ok - %s is not installed (Debian's prometheus package): this test needs it" % tool)
        H.cleanup()
        sys.exit(1)

GROUP = ("  - {name: workers, min: 1, max: 6, "
         "template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}\n")
FAMILIES = [
    "luascale_build_info", "luascale_reconciles_total", "luascale_reconcile_duration_seconds",
    "luascale_last_successful_reconcile_timestamp_seconds", "luascale_policy_call_duration_seconds",
    "luascale_policy_instructions", "luascale_policy_reloads_total", "luascale_actions_planned_total",
    "luascale_actions_executed_total", "luascale_actions_failed_total", "luascale_rejections_total",
    "luascale_launches_total", "luascale_launched_instances_total", "luascale_terminations_total",
    "luascale_pending_to_launch_seconds", "luascale_launch_to_ready_seconds",
    "luascale_node_group_min_size", "luascale_node_group_max_size", "luascale_node_group_target_size",
    "luascale_node_group_ready_nodes", "luascale_node_group_upcoming_nodes",
    "luascale_node_group_backoff", "luascale_node_group_backoff_until_timestamp_seconds",
    "luascale_pending_pods", "luascale_unschedulable_pods", "luascale_provider_calls_total",
    "luascale_provider_call_duration_seconds", "luascale_provider_throttles_total",
    "luascale_rate_limiter_wait_seconds_total", "luascale_rate_limiter_rate",
    "luascale_kube_writes_waiting", "luascale_kube_api_requests_total", "luascale_watch_restarts_total",
    "luascale_relists_total", "luascale_cache_lists_total", "luascale_watch_errors_total", "luascale_cache_synced",
    "luascale_cache_unavailable",
    "luascale_leader", "luascale_leader_transitions_total", "luascale_fenced_writes_total", "luascale_log_lines_dropped_total",
    "luascale_metrics_series_dropped_total",
    "luascale_work_queue_workers", "luascale_work_queue_busy_workers", "luascale_work_queue_waiting_tasks",
    "luascale_work_queue_max_workers",
    "luascale_pod_bindings_total",
    "luascale_unneeded_nodes", "luascale_evictions_total", "luascale_max_nodes",
    "luascale_cluster_cpu_cores", "luascale_cluster_memory_bytes",
    "luascale_nodes_removed_total", "luascale_node_removal_duration_seconds", "luascale_unremovable_nodes",
    "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_max_fds",
    "process_start_time_seconds",
]


def get(port, path, method="GET"):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, "", e.read().decode()
    except OSError:
        return None, "", ""


def sample(text, name, labels=""):
    m = re.search(r"^%s%s (\S+)$" % (re.escape(name), re.escape(labels)), text, re.M)
    return float(m.group(1)) if m else None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


scen = H.scenario("metrics", "node_groups:\n" + GROUP + "workloads:\n" + pod("web", "2s", 2, "workers"))
SIM = H.start_sim("metrics", scen, [], [])
STARTED = time.time()
run = H.start_run(SIM, "run", "node_groups:\n" + GROUP + "provider: {kind: sim}\n", {})
m = until(20, lambda: log_has(run["log"], r"serving /metrics.* \(port (\d+)\)"))
ok(m, "luascale run says where it serves", run["log"])
PORT = int(m.group(1)) if m else 0

if which == "promtool":
    ok(until(40, lambda: pods_running(SIM, "web-")), "the pending pods get nodes and run", run["log"])
    # a round after the nodes are Ready: launch-to-Ready observed
    ok(until(20, lambda: "luascale_launch_to_ready_seconds_count" in get(PORT, "/metrics")[2]),
       "the launch-to-Ready latency is observed", run["log"])
    code, ctype, text = get(PORT, "/metrics")
    ok(code == 200 and ctype.startswith("text/plain; version=0.0.4"),
       "/metrics answers 200 in the text format 0.0.4 (%s, %s)" % (code, ctype))
    p = subprocess.run(["promtool", "check", "metrics"], input=text.encode(), capture_output=True)
    ok(p.returncode == 0 and not p.stdout.strip() and not p.stderr.strip(),
       "promtool check metrics passes: %s%s" % (p.stdout.decode()[:400], p.stderr.decode()[:400]))
    missing = [f for f in FAMILIES if "# TYPE %s " % f not in text]
    ok(not missing, "every documented family is exported (missing: %s)" % missing)
    ok(sample(text, "luascale_launches_total", '{group="workers",outcome="ok"}') == 1 and
       sample(text, "luascale_launched_instances_total", '{group="workers"}') == 1,
       "one launch (the first pod fits the initial node), counted by group and outcome")
    ok(sample(text, "luascale_actions_planned_total", '{type="scale_up"}') == 1 and
       sample(text, "luascale_actions_executed_total", '{type="scale_up"}') == 1,
       "the scale-up counted as planned and executed")
    ok(sample(text, "luascale_node_group_ready_nodes", '{group="workers"}') == 2 and
       sample(text, "luascale_node_group_max_size", '{group="workers"}') == 6,
       "the group's sizes")
    ok((sample(text, "luascale_kube_api_requests_total", '{verb="GET",code="200"}') or 0) > 0 and
       (sample(text, "luascale_provider_calls_total", '{operation="launch",outcome="ok"}') or 0) == 1,
       "API requests by verb and code, provider calls by operation and outcome")
    ok(sample(text, "luascale_leader") == 1, "without leader election the process may act")
    ok(sample(text, "luascale_cluster_cpu_cores", '{kind="capacity"}') == 8 and
       sample(text, "luascale_cluster_memory_bytes", '{kind="capacity"}') == 2 * 16 * 2**30 and
       sample(text, "luascale_unneeded_nodes", '{group="workers"}') == 0 and
       sample(text, "luascale_max_nodes") == 0,
       "the cluster's capacity (two nodes of 4 CPU, 16Gi), no node being removed, no cap")
    ok(sample(text, "luascale_reconciles_total", '{outcome="error"}') == 0 and
       sample(text, "luascale_evictions_total", '{result="pdb_blocked"}') == 0 and
       sample(text, "luascale_actions_failed_total", '{type="drain"}') == 0,
       "counters with known labels are there at 0")
    start = sample(text, "process_start_time_seconds") or 0
    ok((sample(text, "process_resident_memory_bytes") or 0) > 0 and
       (sample(text, "process_open_fds") or 0) > 0 and
       (sample(text, "process_max_fds") or 0) >= (sample(text, "process_open_fds") or 0) and
       STARTED - 2 <= start <= time.time() + 2,
       "process_* from /proc/self (start %s)" % start)
    # the provider's bucket (qps 5, burst 10) sizes the pool: 8 + 10 + 5 x 30 s
    ok(sample(text, "luascale_work_queue_max_workers") == 168 and
       (sample(text, "luascale_work_queue_workers") or 0) >= 8 and
       sample(text, "luascale_work_queue_busy_workers") is not None and
       sample(text, "luascale_work_queue_waiting_tasks") is not None,
       "the work queue's size, cap, busy workers and waiting tasks")
    ok(not re.search(r'(node|pod)="', text), "no node or pod names as labels")
    ok(get(PORT, "/healthz")[0] == 200 and get(PORT, "/readyz")[0] == 200, "/healthz and /readyz are 200")
    ok(get(PORT, "/nope")[0] == 404 and get(PORT, "/metrics", "POST")[0] == 405, "404 and 405")
    # --no-server: no listener, and said so by its absence in the log
    cfg = H.path("run.yaml")
    e = {"PATH": "/usr/bin:/bin", "HOME": H.tmp, "LUASCALE_SERVER_LISTEN": "127.0.0.1:%d" % PORT}
    p = subprocess.run([H.luascale, "run", "--config", cfg, "--once", "--no-server"], env=e,
                       capture_output=True, timeout=60)
    ok(p.returncode == 0 and b"serving /metrics" not in p.stderr,
       "--no-server runs without the endpoint (the port in use is no error)")
    p = subprocess.run([H.luascale, "run", "--config", cfg, "--once"], env=e, capture_output=True, timeout=60)
    ok(p.returncode != 0 and b"cannot listen" in p.stderr,
       "a port in use stops the start with a clear message: %s" % p.stderr.decode()[-200:])
    # a scale-down: short pods, then the emptied node goes (unneeded for 3s)
    scen = H.scenario("down", "node_groups:\n" + GROUP + "workloads:\n" + pod("job", "1s", 2, "workers", "5s"))
    SIM2 = H.start_sim("down", scen, [], [])
    run2 = H.start_run(SIM2, "down", "node_groups:\n" + GROUP + "provider: {kind: sim}\n", {},
                       "{unneeded_for: 3s, scale_down_delay_after_add: 0s}")
    m = until(20, lambda: log_has(run2["log"], r"serving /metrics.* \(port (\d+)\)"))
    PORT2 = int(m.group(1)) if m else 0
    removed = until(60, lambda: (lambda t: t if sample(t, "luascale_nodes_removed_total",
                                                         '{group="workers",reason="underutilized"}') == 1
                                 else None)(get(PORT2, "/metrics")[2]))
    ok(removed, "the node removed once its pods ended counts as removed, by group and reason", run2["log"])
    removed = removed or ""
    ok(sample(removed, "luascale_node_removal_duration_seconds_count") == 1 and
       sample(removed, "luascale_nodes_removed_total", '{group="workers",reason="policy"}') == 0 and
       sample(removed, "luascale_actions_executed_total", '{type="delete"}') == 1,
       "its drain-to-delete time is observed once; no removal of another reason")
else:
    prom_port = free_port()
    cfg = H.path("prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                "scrape_configs:\n"
                "  - job_name: luascale\n"
                "    static_configs: [{targets: ['127.0.0.1:%d']}]\n" % PORT)
    plog = H.path("prometheus.log")
    prom = subprocess.Popen(["prometheus", "--config.file=" + cfg, "--storage.tsdb.path=" + H.path("tsdb"),
                             "--web.listen-address=127.0.0.1:%d" % prom_port],
                            stdout=open(plog, "w"), stderr=subprocess.STDOUT)
    H.procs.append(prom)

    def query(q):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/query?%s" % (
                    prom_port, urllib.parse.urlencode({"query": q})), timeout=5) as r:
                d = json.load(r)
        except (OSError, ValueError):
            return None
        if d.get("status") != "success" or not d["data"]["result"]:
            return None
        return float(d["data"]["result"][0]["value"][1])

    ok(until(30, lambda: query('up{job="luascale"}') == 1), "Prometheus scrapes luascale (up == 1)", plog)
    first = until(20, lambda: query("sum(luascale_reconciles_total)"))
    ok(first is not None, "Prometheus has luascale_reconciles_total (%s)" % first, plog, run["log"])
    later = until(30, lambda: (lambda v: v if v is not None and first is not None and v > first else None)(
        query("sum(luascale_reconciles_total)")))
    ok(later, "and it rises between scrapes (%s -> %s)" % (first, later), plog, run["log"])
    ok(until(20, lambda: query('luascale_build_info') == 1), "luascale_build_info is queryable")
    ok(until(30, lambda: (query('sum(luascale_node_group_ready_nodes{group="workers"})') or 0) == 2),
       "the group's ready nodes reach Prometheus", run["log"])
H.finish()
