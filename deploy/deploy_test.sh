#!/usr/bin/env bash
# Runs deploy_check.py over the deploy/ files in the runfiles: systemd units
# (systemd-analyze security and verify, skipped without systemd-analyze) and
# the Kubernetes manifests (probes, service account tokens, security
# contexts, NetworkPolicy). Needs /usr/bin/python3 with PyYAML (python3-yaml).
set -euo pipefail
dir="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-tunefleet}/deploy"
[[ -f "$dir/deploy_check.py" ]] || dir="$(dirname "$0")"
exec /usr/bin/python3 "$dir/deploy_check.py" "$dir"
