# simharness.py: what the end-to-end tests of `luascale run` against
# `luascale sim` (one per cloud face: run_sim_aws.py, run_sim_gce.py) share:
# TAP output, polling against a deadline, scenarios, starting and stopping
# the simulator and the daemon by PID, and reading the simulated cluster.
# KEEP_TMP=1 keeps the temporary directory (scenario, configs, logs).
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request


class Harness:
    """One test run: a temporary directory, the processes it started, TAP counts."""

    def __init__(self, luascale, src, prefix):
        self.luascale = os.path.abspath(luascale)
        self.src = os.path.abspath(src)
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.procs = []
        self.fails = 0
        self.count = 0
        self.child = False

    # ---- TAP ----

    def ok(self, cond, name, *logs):
        """Prints one TAP line; on failure, the tail of each log."""
        self.count += 1
        if cond:
            print("ok %d - %s" % (self.count, name))
            return True
        self.fails += 1
        print("not ok %d - %s" % (self.count, name))
        for path in logs:
            try:
                lines = open(path).read().splitlines()[-25:]
            except OSError:
                continue
            for line in lines:
                print("#   %s: %s" % (os.path.basename(path), line))
        return False

    def finish(self):
        """Stops everything, removes the directory, exits with the verdict."""
        self.cleanup()
        print("1..%d" % self.count)
        sys.exit(1 if self.fails else 0)

    def phases(self, fns, limit=600):
        """Runs independent phases (each starts its own simulator and daemons,
        with file names of its own) at the same time, each in a forked child,
        and prints their TAP lines phase by phase, renumbered. A phase that
        is still running after 'limit' seconds is killed, with what it
        printed so far and a failure saying so. Most of a phase's time is
        spent waiting on simulated boots and retries, so they overlap well;
        LUASCALE_TEST_PHASES=serial runs them one after the other instead."""
        if os.environ.get("LUASCALE_TEST_PHASES") == "serial":
            for fn in fns:
                fn()
            return
        sys.stdout.flush()
        kids = []
        for i, fn in enumerate(fns):
            out = self.path("phase-%d-%s.tap" % (i, fn.__name__))
            pid = os.fork()
            if pid == 0:  # the child: its TAP lines go to its own file
                code = 1
                try:
                    os.setpgid(0, 0)  # its simulators and daemons with it
                    self.child = True
                    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                    os.dup2(fd, 1)
                    os.dup2(fd, 2)
                    self.procs, self.fails, self.count = [], 0, 0
                    try:
                        fn()
                    except BaseException as e:  # noqa: B902 (a crash of the phase is its failure)
                        self.ok(False, "phase %s raised %r" % (fn.__name__, e))
                    for p in self.procs:
                        stop(p)
                    code = 1 if self.fails else 0
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            kids.append((pid, fn.__name__, out))
        end = time.monotonic() + limit
        status = {}
        while len(status) < len(kids):
            for pid, name, _ in kids:
                if pid in status:
                    continue
                done, st = os.waitpid(pid, os.WNOHANG)
                if done:
                    status[pid] = st
                elif time.monotonic() > end:
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except OSError:
                        os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    status[pid] = None
            time.sleep(0.2)
        for pid, name, out in kids:
            print("# phase %s" % name)
            try:
                lines = open(out).read().splitlines()
            except OSError:
                lines = []
            for line in lines:
                m = re.match(r"^(not ok|ok)(?: \d+)?( - .*)?$", line)
                if m:
                    self.count += 1
                    if m.group(1) == "not ok":
                        self.fails += 1
                    print("%s %d%s" % (m.group(1), self.count, m.group(2) or ""))
                else:
                    print(line)
            st = status[pid]
            if st is None:
                self.ok(False, "phase %s still ran after %d s: killed (its lines so far are above)" % (name, limit))
            elif not (os.WIFEXITED(st) and os.WEXITSTATUS(st) in (0, 1)):
                self.ok(False, "phase %s ended abnormally (wait status %d)" % (name, st))
            elif os.WEXITSTATUS(st) == 1 and not any(line.startswith("not ok") for line in lines):
                self.ok(False, "phase %s failed without a failing check (see its lines above)" % name)

    # ---- files and processes ----

    def path(self, name):
        return os.path.join(self.tmp, name)

    def scenario(self, name, body, boot="2s"):
        """Writes a scenario: the common timing, one workers node at start,
        then 'body' (node_groups, workloads, faults, the cloud's section)."""
        path = self.path(name + ".yaml")
        with open(path, "w") as f:
            f.write("seed: 5\nstart: \"2026-12-01T08:00:00Z\"\nduration: 2h\n")
            f.write("cloud: {boot_delay: %s, boot_jitter: 500ms, launch_latency: 300ms, "
                    "terminate_latency: 300ms, shutdown_delay: 1s}\n" % boot)
            f.write("cluster: {register_delay: 500ms, scheduler_interval: 200ms}\n")
            f.write("initial_nodes: [{group: workers, count: 1}]\n")
            f.write(body)
        return path

    def start_sim(self, name, scen, face_args, ready_res):
        """Starts `luascale sim` with the cloud face's flags; waits until its
        output matches the API server's and every regex in 'ready_res'
        (each with one port group). Returns {kube, ports, kubeconfig, log, proc}."""
        out = self.path(name + "-sim.log")
        kc = self.path(name + ".kubeconfig")
        p = subprocess.Popen([self.luascale, "sim", "--listen", "127.0.0.1:0", "--scenario", scen,
                              "--kubeconfig-out", kc] + list(face_args),
                             stdout=open(out, "w"), stderr=subprocess.STDOUT)
        self.procs.append(p)

        def ready():
            text = open(out).read()
            m = re.search(r"serving .* on http://127\.0\.0\.1:(\d+)", text)
            found = [re.search(r, text) for r in ready_res]
            return (int(m.group(1)), [int(f.group(1)) for f in found]) if m and all(found) else None

        ports = until(20, ready)
        if not ports:
            print("not ok - luascale sim %s did not start:\n%s" % (name, open(out).read()))
            self.cleanup()
            sys.exit(1)
        return {"name": name, "kube": ports[0], "ports": ports[1], "kubeconfig": kc, "log": out, "proc": p}

    def start_run(self, sim, name, body, env, params="{}", policy=None):
        """Starts `luascale run` on the simulator's cluster with 'policy'
        (default: policies/default.lua), quick intervals, and 'body'
        (node_groups and provider); 'env' is its whole environment besides
        PATH and HOME."""
        cfg = self.path(name + ".yaml")
        with open(cfg, "w") as f:
            f.write("cluster: {kubeconfig: %s, context: luascale-sim}\n" % sim["kubeconfig"])
            f.write("policy: {path: %s, params: %s}\n"
                    % (policy or os.path.join(self.src, "policies/default.lua"), params))
            f.write("intervals: {reconcile: 1s, batch_idle: 200ms, batch_max: 1s}\n")
            f.write("safety: {max_scale_down_per_round: 5}\n")
            f.write("provisioning: {backoff_initial: 1m}\n")
            f.write(body)
        # a free loopback port for /metrics, unless the test says otherwise
        e = {"PATH": "/usr/bin:/bin", "HOME": self.tmp, "LUASCALE_SERVER_LISTEN": "127.0.0.1:0"}
        e.update(env)
        log = self.path(name + "-run.log")
        p = subprocess.Popen([self.luascale, "run", "--config", cfg], env=e,
                             stdout=open(log, "w"), stderr=subprocess.STDOUT)
        self.procs.append(p)
        time.sleep(1)
        if p.poll() is not None:
            print("not ok - luascale run %s exited at once:\n%s" % (name, open(log).read()))
            self.cleanup()
            sys.exit(1)
        return {"proc": p, "log": log}

    def cleanup(self):
        for p in self.procs:
            stop(p)
        if self.child:  # a phase's child: the directory is the parent's
            return
        if os.environ.get("KEEP_TMP"):
            print("# kept %s (KEEP_TMP)" % self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


def until(seconds, fn):
    """fn() every 0.2 s until it is true or 'seconds' pass; its last value."""
    end = time.monotonic() + seconds
    while True:
        v = fn()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.2)


def stop(p, sig=signal.SIGTERM):
    """Ends one process we started (by its PID), waiting for it."""
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()


def kube(sim, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (sim["kube"], path), timeout=10) as r:
        return json.load(r)


def pods_running(sim, prefix):
    """The pods named prefix*, when there are some and all run; else None."""
    pods = [p for p in kube(sim, "/api/v1/pods")["items"] if p["metadata"]["name"].startswith(prefix)]
    return pods if pods and all(p["status"].get("phase") == "Running" for p in pods) else None


def nodes(sim):
    return {n["metadata"]["name"]: n for n in kube(sim, "/api/v1/nodes")["items"]}


def log_has(path, pattern):
    try:
        return re.search(pattern, open(path).read(), re.M)
    except OSError:
        return None


def read_env_file(path):
    """NAME='value' lines of a simulator's env file."""
    env = {}
    for line in open(path):
        m = re.match(r"^([A-Z0-9_]+)='(.*)'$", line.strip())
        if m:
            env[m.group(1)] = m.group(2)
    return env


def pod(name, at, n, pool, duration=None):
    """A workload line: n pods of 3 CPUs selecting pool=<pool>."""
    d = ", duration: %s" % duration if duration else ""
    return ("  - {name: %s, at: %s, count: %d, requests: {cpu: 3, memory: 1Gi}, "
            "node_selector: {pool: %s}%s}\n" % (name, at, n, pool, d))
