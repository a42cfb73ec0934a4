#!/usr/bin/python3
"""Checks the deployment files under deploy/ (run by //deploy:deploy_test).

systemd (skipped, with a message, where systemd-analyze is missing):
  * every unit, and the agent with each of its drop-ins, scores at most
    MAX_EXPOSURE in `systemd-analyze security --offline=true`;
  * every unit sets SystemCallFilter= and SystemCallErrorNumber=EPERM;
  * the tracker's ExecStart passes --builder_keys= (pinned builder keys) and
    the builder's --signing_key=;
  * `systemd-analyze verify` passes in a scratch root holding the units, the
    host's stock units and stub binaries (skipped where the host has no
    stock units), and neither command warns about a line it ignored.
Kubernetes (PyYAML):
  * every container of every Deployment, DaemonSet and StatefulSet has a
    liveness and a readiness probe on a port it declares, and no `grpc:`
    probe on a TLS port (the kubelet's gRPC probe speaks plaintext);
  * every pod: automountServiceAccountToken false, runAsNonRoot; every
    container: no privilege escalation, read-only root, capabilities ALL
    dropped;
  * the tracker container passes --builder_keys= and the builder container
    --signing_key=, each a file under one of the container's volume mounts;
  * the token Secrets hold no plaintext token: every line of a `tokens` key
    is '<role> $argon2id$...' or '<role> REPLACE_..._HASH', then only
    id=, keys= or identity= fields;
  * NetworkPolicy: a default deny of all ingress in the namespace, and every
    rule names its sources and ports, the ports being the tracker's gRPC port
    (tracker pods only), a daemon's /metrics port or a port another workload
    declares (the example database's); one rule lets the tracker's gRPC port
    in;
  * tracker replicas: more than one only on a PostgreSQL store (never a
    file), each passing --advertise=, never two on one node (required pod
    anti-affinity on the hostname) and a PodDisruptionBudget keeping one.
The manifests are deploy/k8s/*.yaml and the examples in deploy/k8s/examples.

Usage: deploy_check.py [DEPLOY_DIR]   (default: this file's directory)
Exit status 0 when every check passes; each failure is printed.
"""

import atexit
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_EXPOSURE = 2.0
UNIT_DIR = "etc/systemd/system"
# Instances of the agent template checked, each with the drop-ins it gets.
AGENT_INSTANCES = {
    "x86": [],
    "h100": ["tunefleet-agent-gpu.conf"],
    "rk3399": ["../aarch64/rk3399-big-cores.conf"],
}
# The optional drop-in every unit may get.
PRIVATE_NETWORK = "tunefleet-private-network.conf"

failures = []
# Scratch roots live here; removed at exit (Bazel's TEST_TMPDIR when set).
scratch = tempfile.mkdtemp(prefix="deploy_check.", dir=os.environ.get("TEST_TMPDIR"))
atexit.register(shutil.rmtree, scratch, ignore_errors=True)


def fail(message):
    failures.append(message)
    print("FAIL: " + message)


# --------------------------------------------------------------- systemd ---


def unit_names(systemd_dir):
    """Unit names to check -> drop-in files (paths relative to systemd_dir)."""
    units = {}
    for path in sorted(glob.glob(os.path.join(systemd_dir, "*.service"))):
        name = os.path.basename(path)
        if name.endswith("@.service"):
            for instance, dropins in AGENT_INSTANCES.items():
                units[name.replace("@.", "@%s." % instance)] = dropins
            units[name.replace("@.", "@private.")] = [PRIVATE_NETWORK]
        else:
            units[name] = []
            units[name.replace(".service", "-private.service")] = [PRIVATE_NETWORK]
    return units


def make_root(systemd_dir, units, with_stock_units):
    """A scratch root holding the units (a '-private' unit is its base unit
    under an alias directory), their drop-ins and stub ExecStart binaries."""
    root = tempfile.mkdtemp(prefix="root.", dir=scratch)
    unit_dir = os.path.join(root, UNIT_DIR)
    os.makedirs(unit_dir)
    for path in glob.glob(os.path.join(systemd_dir, "*.service")):
        text = open(path).read()
        shutil.copy(path, unit_dir)
        base = os.path.basename(path)
        if not base.endswith("@.service"):
            # tunefleet-x-private.service: the same unit under another name.
            with open(os.path.join(unit_dir, base.replace(".service", "-private.service")), "w") as f:
                f.write(text)
        for binary in re.findall(r"^ExecStart=-?(/\S+)", text, re.M):
            stub = os.path.join(root, binary.lstrip("/"))
            os.makedirs(os.path.dirname(stub), exist_ok=True)
            with open(stub, "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(stub, 0o755)
    for unit, dropins in units.items():
        if not dropins:
            continue
        dropin_dir = os.path.join(unit_dir, unit + ".d")
        os.makedirs(dropin_dir, exist_ok=True)
        for dropin in dropins:
            shutil.copy(os.path.join(systemd_dir, dropin), dropin_dir)
    if with_stock_units:
        shutil.copytree(with_stock_units, os.path.join(root, "usr/lib/systemd/system"), symlinks=True)
    return root


def warnings_in(output):
    """Lines where systemd says it ignored something in a unit file."""
    return [line for line in output.splitlines() if re.search(r"\.(service|conf):\d+:", line)]


def check_unit_text(systemd_dir):
    for path in sorted(glob.glob(os.path.join(systemd_dir, "*.service"))):
        text = open(path).read()
        name = os.path.basename(path)
        if not re.search(r"^SystemCallFilter=@system-service", text, re.M):
            fail("%s: no SystemCallFilter=@system-service allow list" % name)
        if not re.search(r"^SystemCallFilter=~.*@privileged", text, re.M):
            fail("%s: SystemCallFilter= does not take @privileged away" % name)
        if not re.search(r"^SystemCallErrorNumber=EPERM$", text, re.M):
            fail("%s: no SystemCallErrorNumber=EPERM (a refused call would kill it)" % name)


# ExecStart flags a unit must pass: unit file -> flags.
REQUIRED_UNIT_FLAGS = {
    "tunefleet-tracker.service": ["--builder_keys=/", "--token_file=/"],
    "tunefleet-builder.service": ["--signing_key=/"],
}


def exec_start(text):
    """The ExecStart= command line, continuation lines joined."""
    found = re.search(r"^ExecStart=((?:.*\\\n)*.*)", text, re.M)
    return found.group(1).replace("\\\n", " ") if found else ""


def check_unit_flags(systemd_dir):
    for name, flags in REQUIRED_UNIT_FLAGS.items():
        path = os.path.join(systemd_dir, name)
        if not os.path.exists(path):
            fail("%s: missing" % name)
            continue
        command = exec_start(open(path).read()).split()
        for flag in flags:
            if not any(arg.startswith(flag) for arg in command):
                fail("%s: ExecStart does not pass %s<file>" % (name, flag.rstrip("/")))


def check_security(analyze, root, units):
    for unit in units:
        run = subprocess.run(
            [analyze, "security", "--offline=true", "--root=" + root, "--no-pager", unit],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", run.stdout)
        if not found:
            fail("%s: no exposure level in `systemd-analyze security` output:\n%s%s" %
                 (unit, run.stdout[-2000:], run.stderr[-2000:]))
            continue
        exposure = float(found.group(1))
        print("exposure %-40s %.1f" % (unit, exposure))
        if exposure > MAX_EXPOSURE:
            fail("%s: exposure %.1f > %.1f; still open:\n%s" % (
                unit, exposure, MAX_EXPOSURE,
                "\n".join(l for l in run.stdout.splitlines() if l.startswith("\u2717"))))
        for line in warnings_in(run.stderr):
            fail("%s: systemd ignored a setting: %s" % (unit, line))


def check_verify(analyze, systemd_dir, units):
    stock = next((d for d in ("/usr/lib/systemd/system", "/lib/systemd/system")
                  if os.path.exists(os.path.join(d, "sysinit.target"))), None)
    if stock is None:
        print("SKIP systemd-analyze verify: no stock units (sysinit.target) on this host")
        return
    root = make_root(systemd_dir, units, stock)
    run = subprocess.run([analyze, "verify", "--root=" + root, "--no-pager"] + list(units),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if run.returncode != 0 or run.stdout.strip():
        fail("systemd-analyze verify (exit %d):\n%s" % (run.returncode, run.stdout))
    else:
        print("systemd-analyze verify: %d units clean" % len(units))


def check_systemd(deploy_dir):
    systemd_dir = os.path.join(deploy_dir, "systemd")
    check_unit_text(systemd_dir)
    check_unit_flags(systemd_dir)
    analyze = shutil.which("systemd-analyze") or (
        "/usr/bin/systemd-analyze" if os.path.exists("/usr/bin/systemd-analyze") else None)
    if analyze is None:
        print("SKIP systemd-analyze checks: systemd-analyze is not installed")
        return
    units = unit_names(systemd_dir)
    check_security(analyze, make_root(systemd_dir, units, None), units)
    check_verify(analyze, systemd_dir, units)


# ------------------------------------------------------------ Kubernetes ---

WORKLOADS = ("Deployment", "DaemonSet", "StatefulSet")


def flag_port(args, flag):
    for arg in args:
        if arg.startswith("--%s=" % flag):
            return int(arg.rsplit(":", 1)[1])
    return None


def container_port(container, port):
    """A probe's port (number or name) as a number, or None if undeclared."""
    for declared in container.get("ports", []):
        if port in (declared.get("name"), declared.get("containerPort")):
            return declared["containerPort"]
    return None


def check_probe(where, container, kind):
    probe = container.get(kind)
    if not probe:
        fail("%s: no %s" % (where, kind))
        return
    handlers = [h for h in ("httpGet", "tcpSocket", "grpc", "exec") if h in probe]
    if len(handlers) != 1:
        fail("%s: %s needs exactly one handler, has %s" % (where, kind, handlers))
        return
    handler = handlers[0]
    if handler == "exec":
        return
    port = container_port(container, probe[handler].get("port"))
    if port is None:
        fail("%s: %s port %r is not a declared container port" %
             (where, kind, probe[handler].get("port")))
        return
    args = container.get("args", [])
    if handler == "grpc" and port == flag_port(args, "listen") and any(
            a.startswith("--tls_cert=") for a in args):
        fail("%s: %s is a kubelet gRPC probe on the TLS port %d; it speaks plaintext "
             "and would always fail" % (where, kind, port))
    if handler == "httpGet" and port != flag_port(args, "metrics_listen"):
        fail("%s: %s httpGet on port %d, but --metrics_listen says %s" %
             (where, kind, port, flag_port(args, "metrics_listen")))


def check_workload(doc):
    name = "%s/%s" % (doc["kind"], doc["metadata"]["name"])
    pod = doc["spec"]["template"]["spec"]
    if pod.get("automountServiceAccountToken") is not False:
        fail("%s: automountServiceAccountToken is not false" % name)
    if not pod.get("securityContext", {}).get("runAsNonRoot"):
        fail("%s: pod securityContext lacks runAsNonRoot: true" % name)
    if pod.get("hostNetwork") or pod.get("hostPID") or pod.get("hostIPC"):
        fail("%s: shares a host namespace" % name)
    for container in pod.get("containers", []):
        where = "%s container %s" % (name, container["name"])
        check_probe(where, container, "livenessProbe")
        check_probe(where, container, "readinessProbe")
        context = container.get("securityContext", {})
        if context.get("allowPrivilegeEscalation") is not False:
            fail("%s: allowPrivilegeEscalation is not false" % where)
        if context.get("readOnlyRootFilesystem") is not True:
            fail("%s: readOnlyRootFilesystem is not true" % where)
        if "ALL" not in context.get("capabilities", {}).get("drop", []):
            fail("%s: capabilities do not drop ALL" % where)
        if context.get("privileged"):
            fail("%s: privileged" % where)


def selects(selector, labels):
    if selector.get("matchExpressions"):
        return None  # not evaluated here; flagged by the caller
    return all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())


def check_network_policies(workloads, policies):
    """workloads: name -> (pod labels, {"grpc"/"metrics": port it serves},
    is tracker, namespace)."""
    if not policies:
        fail("no NetworkPolicy in deploy/k8s")
        return
    default_deny = tracker_grpc_allowed = False
    namespace = {w[3] for w in workloads.values()}
    for policy in policies:
        name = "NetworkPolicy/" + policy["metadata"]["name"]
        spec = policy["spec"]
        if policy["metadata"].get("namespace") not in namespace:
            fail("%s: not in the workloads' namespace %s" % (name, sorted(namespace)))
        if "Ingress" not in spec.get("policyTypes", []):
            fail("%s: policyTypes lacks Ingress" % name)
            continue
        selector = spec.get("podSelector", {})
        if selector == {} and not spec.get("ingress"):
            default_deny = True
            continue
        selected = []
        for workload, (labels, ports, is_tracker, _) in workloads.items():
            hit = selects(selector, labels)
            if hit is None:
                fail("%s: matchExpressions are not checked; use matchLabels" % name)
                break
            if hit:
                selected.append((workload, ports, is_tracker))
        for rule in spec.get("ingress", []):
            if not rule.get("from"):
                fail("%s: an ingress rule without `from` admits every source" % name)
            rule_ports = [p.get("port") for p in rule.get("ports", [])]
            if not rule_ports:
                fail("%s: an ingress rule without `ports` opens every port" % name)
            for workload, ports, is_tracker in selected:
                for port in rule_ports:
                    if port not in ports.values():
                        fail("%s: lets port %s into %s, which serves only %s" %
                             (name, port, workload, sorted(ports.values())))
                    elif is_tracker and port == ports.get("grpc"):
                        tracker_grpc_allowed = True
    if not default_deny:
        fail("no default-deny NetworkPolicy (podSelector {}, policyTypes [Ingress], no rules)")
    if not tracker_grpc_allowed:
        fail("no NetworkPolicy lets the tracker's gRPC port in")


# Container args a workload must pass: container name -> flags whose value is
# a file the container mounts.
REQUIRED_CONTAINER_FILE_FLAGS = {
    "tracker": ["builder_keys", "token_file"],
    "builder": ["signing_key"],
}
ROLES = ("user", "builder", "agent", "tuner", "admin")
# '<role> <hash> [id=..] [keys=..] [identity=..]' with an Argon2id hash (what
# `tunefleet token new/hash` writes) or a placeholder naming a hash.
TOKEN_LINE = re.compile(
    r"^(%s)\s+(\$argon2id\$\S+|REPLACE_\w*HASH\w*)"
    r"(\s+(id=[0-9a-f]+|keys=[\w.,-]+|identity=\S+))*\s*$" % "|".join(ROLES))


def check_container_files(name, container):
    args = container.get("args", [])
    mounts = [m.get("mountPath", "").rstrip("/") + "/" for m in container.get("volumeMounts", [])]
    for flag in REQUIRED_CONTAINER_FILE_FLAGS.get(container["name"], []):
        values = [a.split("=", 1)[1] for a in args if a.startswith("--%s=" % flag)]
        if not values or not values[0]:
            fail("%s container %s: no --%s=<file>" % (name, container["name"], flag))
        elif not any(values[0].startswith(m) for m in mounts):
            fail("%s container %s: --%s=%s is not under any volume mount" %
                 (name, container["name"], flag, values[0]))


def check_token_secrets(docs):
    """The tracker's token file in a Secret holds hashes, never tokens."""
    token_files = 0
    for doc in docs:
        if doc.get("kind") != "Secret":
            continue
        name = "Secret/" + doc["metadata"]["name"]
        for key, text in (doc.get("stringData") or {}).items():
            if key != "tokens":
                continue
            token_files += 1
            lines = [l.strip() for l in str(text).splitlines()]
            lines = [l for l in lines if l and not l.startswith("#")]
            if not lines:
                fail("%s: key tokens holds no line" % name)
            for line in lines:
                if not TOKEN_LINE.match(line):
                    # Never print the line: it may be a real token.
                    fail("%s: a tokens line is not '<role> $argon2id$...' or a "
                         "REPLACE_..._HASH placeholder (plaintext token?): starts %r" %
                         (name, line.split()[0] if line.split() else ""))
        if "tokens" in (doc.get("data") or {}):
            fail("%s: tokens under data: (base64) cannot be checked; use stringData" % name)
    if token_files == 0:
        fail("no Secret with a `tokens` key (the tracker's token file) in deploy/k8s")


def check_tracker_replicas(docs):
    """Several tracker replicas share a PostgreSQL store, advertise their own
    address, never share a node, and a disruption budget keeps one."""
    budgets = [d for d in docs if d.get("kind") == "PodDisruptionBudget"]
    for doc in docs:
        if doc.get("kind") not in WORKLOADS:
            continue
        pod = doc["spec"]["template"]["spec"]
        trackers = [c for c in pod.get("containers", [])
                    if any(a.startswith("--listen=") for a in c.get("args", []))]
        replicas = doc["spec"].get("replicas", 1)
        if not trackers or replicas <= 1:
            continue
        name = "%s/%s" % (doc["kind"], doc["metadata"]["name"])
        for container in trackers:
            args = container.get("args", [])
            store = [a.split("=", 1)[1] for a in args if a.startswith("--store=")]
            env = {e["name"]: e for e in container.get("env", [])}
            value = store[0] if store else ""
            if value.startswith("$(") and value.endswith(")"):
                value = env.get(value[2:-1], {}).get("valueFrom") and "postgresql://(secret)"
            if not value or not str(value).startswith("postgres"):
                fail("%s: %d tracker replicas on --store=%s; replicas need a PostgreSQL store "
                     "(each would lead its own file)" % (name, replicas, store[0] if store else ""))
            if not any(a.startswith("--advertise=") for a in args):
                fail("%s: tracker replicas without --advertise= (standbys could not name the "
                     "leader)" % name)
        labels = doc["spec"]["template"]["metadata"].get("labels", {})
        anti = (pod.get("affinity", {}).get("podAntiAffinity", {})
                .get("requiredDuringSchedulingIgnoredDuringExecution", []))
        if not any(term.get("topologyKey") == "kubernetes.io/hostname" and
                   selects(term.get("labelSelector", {}), labels) for term in anti):
            fail("%s: tracker replicas may share a node (no required pod anti-affinity on "
                 "kubernetes.io/hostname selecting them)" % name)
        if not any(selects(b["spec"].get("selector", {}), labels) and
                   b["spec"].get("minAvailable", 0) >= 1 for b in budgets):
            fail("%s: no PodDisruptionBudget keeps one tracker replica" % name)


def check_k8s(deploy_dir):
    try:
        import yaml
    except ImportError:
        fail("PyYAML is missing (Debian: python3-yaml)")
        return
    docs = []
    files = sorted(glob.glob(os.path.join(deploy_dir, "k8s", "*.yaml")) +
                   glob.glob(os.path.join(deploy_dir, "k8s", "examples", "*.yaml")))
    for path in files:
        try:
            docs += [d for d in yaml.safe_load_all(open(path)) if d]
        except yaml.YAMLError as error:
            fail("%s does not parse: %s" % (path, error))
    workloads = {}
    policies = [d for d in docs if d.get("kind") == "NetworkPolicy"]
    for doc in docs:
        if doc.get("kind") not in WORKLOADS:
            continue
        check_workload(doc)
        template = doc["spec"]["template"]
        for container in template["spec"]["containers"]:
            check_container_files("%s/%s" % (doc["kind"], doc["metadata"]["name"]), container)
        ports = {}
        is_tracker = False
        for container in template["spec"]["containers"]:
            for declared in container.get("ports", []):
                ports.setdefault(declared.get("name", str(declared["containerPort"])),
                                 declared["containerPort"])
            args = container.get("args", [])
            if flag_port(args, "metrics_listen") is not None:
                ports["metrics"] = flag_port(args, "metrics_listen")
            if flag_port(args, "listen") is not None:
                ports["grpc"] = flag_port(args, "listen")
                is_tracker = True
        workloads["%s/%s" % (doc["kind"], doc["metadata"]["name"])] = (
            template["metadata"].get("labels", {}), ports, is_tracker,
            doc["metadata"].get("namespace"))
    if not workloads:
        fail("no Deployment, DaemonSet or StatefulSet in deploy/k8s")
    if not any(w[2] for w in workloads.values()):
        fail("no workload runs a tracker (a container with --listen=)")
    check_network_policies(workloads, policies)
    check_tracker_replicas(docs)
    check_token_secrets(docs)
    if not any(c["name"] == "builder" for d in docs if d.get("kind") in WORKLOADS
               for c in d["spec"]["template"]["spec"]["containers"]):
        fail("no workload has a container named builder (its --signing_key is checked)")
    print("k8s: %d files, %d workloads, %d NetworkPolicies" %
          (len(files), len(workloads), len(policies)))


def main():
    deploy_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    check_systemd(deploy_dir)
    check_k8s(deploy_dir)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all deploy checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
