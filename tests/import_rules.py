#!/usr/bin/env python3
"""Checks that no file includes from a room it must not.

The rooms and their rules (each folder's header comment or README says
the same in words):

  * the engine (src/engine/) knows no Kubernetes and no cloud: it reaches
    them through engine/kubeops.h and providers/provider.h, the two
    interfaces, never through src/kube/, a cloud's folder, the simulator,
    libcurl (or runtime/httpclient.h) or libmicrohttpd;
  * providers (providers/) know no Lua: no Lua header, nothing of
    src/policy/;
  * Lua (src/policy/) knows no socket: no libcurl, libmicrohttpd or socket
    header, nothing of src/kube/, src/runtime/httpserver.h,
    src/runtime/httpclient.h or a cloud's HTTP code;
  * the simulator's clouds (src/sim/clouds/) know no provider code:
    nothing under providers/ (what both sides of a cloud's wire share,
    such as SigV4, lives in src/wire/); and no world, but a cloud's
    registration (<cloud>_kind.c) reads the scenario through
    sim/world/scenario_parse.h;
  * no shared room names a cloud: nothing in src/ (but the commands of
    src/cli/ and the simulator's clouds) or in providers/'s own files
    includes from a cloud's folder, providers/<cloud>/ (a folder holding
    <cloud>_config.c), or a simulated cloud's own files in
    src/sim/clouds/ (<cloud>_face.h, cloud_<cloud>.h, ...): the build lists
    the clouds (generated/luascale_clouds.h), so adding one edits no
    shared file;
  * a cloud's config file (providers/<cloud>/<cloud>_config.[ch]) knows
    nothing else of its cloud and no HTTP library: whatever reads a
    config links it.

Usage: import_rules.py [ROOT]   (ROOT: the source tree, default ..)
       import_rules.py --self-test (each rule must catch a planted include)
Prints every violation as FILE:LINE: includes X (RULE) and a summary
line; exits 1 when there is any, 2 when the tree or a room is not found.
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')

SOCKET_HEADERS = ("sys/socket.h", "netdb.h", "netinet/", "arpa/inet.h", "sys/un.h")
LUA_HEADERS = ("lua.h", "lauxlib.h", "lualib.h", "lua5.4/")
HTTP_LIBS = ("curl/", "microhttpd.h")


def starts(name, prefixes):
    return any(name == p or name.startswith(p) for p in prefixes)


def engine_rule(name, system):
    if system:
        if starts(name, HTTP_LIBS):
            return "the engine knows no HTTP library"
        return None
    if name == "runtime/httpclient.h":
        return "the engine knows no HTTP library (runtime/httpclient.h is libcurl's)"
    if name.startswith("kube/"):
        return "the engine knows no Kubernetes client (use engine/kubeops.h)"
    if name.startswith("providers/") and name != "providers/provider.h":
        return "the engine knows no cloud (use providers/provider.h)"
    if name.startswith("sim/"):
        return "the engine knows no simulator"
    return None


def providers_rule(name, system):
    if system and starts(name, LUA_HEADERS):
        return "providers know no Lua"
    if not system and name.startswith("policy/"):
        return "providers know no Lua (src/policy/)"
    return None


def policy_rule(name, system):
    if system and (starts(name, HTTP_LIBS) or starts(name, SOCKET_HEADERS)):
        return "Lua knows no socket"
    if not system and (name.startswith("kube/") or name in ("runtime/httpserver.h", "runtime/httpclient.h") or
                       name.startswith("providers/cloudhttp/")):
        return "Lua knows no socket (%s talks to the network)" % name
    return None


# The clouds of the tree being checked (check() fills it).
CLOUDS = set()


def cloud_of_include(name):
    """The cloud whose own file 'name' is, or None."""
    parts = name.split("/")
    if len(parts) >= 3 and parts[0] == "providers" and parts[1] in CLOUDS:
        return parts[1]
    if len(parts) == 3 and parts[:2] == ["sim", "clouds"]:
        stem = parts[2].rsplit(".", 1)[0]
        for c in CLOUDS:
            if stem == "cloud_" + c or stem.startswith(c + "_"):
                return c
    return None


def shared_rule(name, system):
    if system:
        return None
    c = cloud_of_include(name)
    if c:
        return "a shared room names no cloud (%s is %s's: the build lists the clouds)" % (name, c)
    return None


def cloud_config_rule(name, system):
    if system:
        if starts(name, HTTP_LIBS):
            return "a cloud's config file knows no HTTP library (whatever reads a config links it)"
        return None
    if name.startswith("providers/") and not re.match(r"^providers/([^/]+)/\1_config\.h$", name):
        return "a cloud's config file knows nothing else of its cloud (%s): whatever reads a config links it" % name
    return None


def sim_clouds_rule(name, system):
    if not system and name.startswith("providers/"):
        return "the simulator's clouds know no provider code (shared wire code: src/wire/)"
    return None


def sim_cloud_model_rule(name, system):
    if not system and name.startswith("sim/world/"):
        return ("a simulated cloud knows no world (%s): only its registration, <cloud>_kind.c, "
                "reads the scenario, through sim/world/scenario_parse.h" % name)
    return None


def sim_cloud_kind_rule(name, system):
    if not system and name.startswith("sim/world/") and name != "sim/world/scenario_parse.h":
        return "a simulated cloud's registration reads the world only through sim/world/scenario_parse.h"
    return None


# (path regex, rule): a file may fall under several
ROOMS = [
    (re.compile(r"^src/engine/"), engine_rule),
    (re.compile(r"^providers/"), providers_rule),
    (re.compile(r"^src/policy/"), policy_rule),
    (re.compile(r"^src/sim/clouds/"), sim_clouds_rule),
    (re.compile(r"^src/sim/clouds/(?![^/]+_kind\.c$)"), sim_cloud_model_rule),
    (re.compile(r"^src/sim/clouds/[^/]+_kind\.c$"), sim_cloud_kind_rule),
    (re.compile(r"^(src/(?!sim/clouds/|cli/)|providers/[^/]+$)"), shared_rule),
    (re.compile(r"^providers/([^/]+)/\1_config\.[ch]$"), cloud_config_rule),
]

# how the summary names a room whose pattern is not a folder
LABELS = {shared_rule: "shared rooms", cloud_config_rule: "clouds' config files",
          sim_cloud_model_rule: "sim clouds' models", sim_cloud_kind_rule: "sim clouds' kinds"}


def label(rx, rule):
    return LABELS.get(rule, rx.pattern.lstrip("^"))


def sources(root):
    for top in ("src", "providers"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    full = os.path.join(dirpath, f)
                    yield os.path.relpath(full, root), full


def find_clouds(root):
    found = set()
    top = os.path.join(root, "providers")
    for d in sorted(os.listdir(top)) if os.path.isdir(top) else []:
        if os.path.isfile(os.path.join(top, d, d + "_config.c")):
            found.add(d)
    return found


def check(root):
    if not os.path.isdir(os.path.join(root, "src")):
        print("import_rules: no src/ under %s" % root)
        return 2
    CLOUDS.clear()
    CLOUDS.update(find_clouds(root))
    print("clouds: %s" % (", ".join(sorted(CLOUDS)) or "none"))
    checked = bad = 0
    per_room = {}
    for rel, full in sources(root):
        rel = rel.replace(os.sep, "/")
        rules = [(rx, r) for rx, r in ROOMS if rx.search(rel)]
        if not rules:
            continue
        checked += 1
        with open(full, encoding="utf-8", errors="replace") as fh:
            for no, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                system, name = m.group(1) == "<", m.group(2)
                for rx, rule in rules:
                    per_room.setdefault(rx.pattern, [0, 0])
                    why = rule(name, system)
                    if why:
                        bad += 1
                        per_room[rx.pattern][1] += 1
                        print("%s:%d: includes %s%s%s (%s)" % (rel, no, m.group(1), name,
                                                            ">" if system else '"', why))
        for rx, _ in rules:
            per_room.setdefault(rx.pattern, [0, 0])[0] += 1
    empty = []
    for rx, rule in ROOMS:
        files, errs = per_room.get(rx.pattern, [0, 0])
        print("room %-21s %4d files, %d violations" % (label(rx, rule), files, errs))
        if files == 0:
            empty.append(label(rx, rule))
    if empty:
        print("import_rules: no file in %s under %s: a room moved without this test"
              % (", ".join(empty), root))
        return 2
    print("import rules: %d files checked, %d violations" % (checked, bad))
    return 1 if bad else 0


# a planted include per rule, and one each room may make
PLANTED = [
    ("src/engine/a.c", '#include "kube/client.h"', True),
    ("src/engine/b.c", '#include "providers/aws/aws.h"', True),
    ("src/engine/c.c", '#include <curl/curl.h>', True),
    ("src/engine/d.c", '#include "sim/world/cluster.h"', True),
    ("src/engine/e.c", '#include "runtime/httpclient.h"', True),
    ("src/engine/ok.c", '#include "providers/provider.h"\n#include "engine/kubeops.h"', False),
    ("providers/x/a.c", '#include <lauxlib.h>', True),
    ("providers/x/b.h", '#include "policy/host.h"', True),
    ("providers/x/ok.c", '#include <curl/curl.h>', False),
    ("src/policy/a.c", '  #  include <sys/socket.h>', True),
    ("src/policy/b.c", '#include "kube/informer.h"', True),
    ("src/policy/c.c", '#include <microhttpd.h>', True),
    ("src/policy/d.c", '#include "runtime/httpclient.h"', True),
    ("src/policy/ok.c", '#include <lua.h>\n#include "model.h"', False),
    ("src/sim/clouds/a.c", '#include "providers/cloudhttp/xmltree.h"', True),
    ("src/sim/clouds/ok.c", '#include "wire/sigv4.h"', False),
    ("providers/x/x_config.c", '#include "providers/x/x.h"', True),
    ("providers/x/x_config.h", '#include <curl/curl.h>', True),
    ("providers/x/y.c", '#include "providers/x/x_config.h"\n#include "config_parse.h"', False),
    ("src/a.c", '#include "providers/x/x_auth.h"', True),
    ("src/sim/world/a.c", '#include "sim/clouds/x_face.h"', True),
    ("src/sim/world/b.c", '#include "sim/clouds/cloud_x.h"', True),
    ("providers/registry.c", '#include "providers/x/x.h"', True),
    ("src/ok.c", '#include "config_parse.h"\n#include "sim/clouds/cloud.h"\n#include "providers/cloudhttp/oauth.h"', False),
    ("src/cli/ok.c", '#include "providers/x/x_auth.h"', False),
    ("src/sim/clouds/x_face.c", '#include "sim/world/scenario.h"', True),
    ("src/sim/clouds/x_kind.c", '#include "sim/world/cluster.h"', True),
    ("src/sim/clouds/y_kind.c", '#include "sim/world/scenario_parse.h"', False),
]


def self_test():
    failed = 0
    with tempfile.TemporaryDirectory() as root:
        for rel, text, _ in PLANTED:
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
        for rel, text, bad in PLANTED:
            for other, _, _ in PLANTED:
                with open(os.path.join(root, other), "w") as fh:
                    fh.write("/* nothing */\n")
            with open(os.path.join(root, rel), "w") as fh:
                fh.write(text + "\n")
            rc = check(root)
            if rc != (1 if bad else 0):
                print("SELF-TEST FAILED: %s with %r gave %d, want %d" % (rel, text, rc, 1 if bad else 0))
                failed += 1
        for rel, _, _ in PLANTED:
            if rel.startswith("src/sim/clouds/"):
                os.remove(os.path.join(root, rel))
        if check(root) != 2:
            print("SELF-TEST FAILED: an empty room is not reported")
            failed += 1
    print("self-test: %d of %d cases failed" % (failed, len(PLANTED) + 1))
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    return check(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                                 os.path.join(os.path.dirname(__file__), "..")))


if __name__ == "__main__":
    sys.exit(main())
