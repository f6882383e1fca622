#!/usr/bin/env bash
# Install the browser the browser tests drive: Debian's chromium, only when it is missing.
# Playwright (from the dev extra) drives this binary; its own browser download is never used.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "setup_browser: /usr/bin/chromium is missing; run as root: apt-get install -y chromium" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends chromium
