#!/usr/bin/env bash
# Installs what tunekit's build, tests and examples need on a Debian machine (run as root or
# with sudo available). Packages already present are left alone.
set -euo pipefail
packages=(cmake g++ make nlohmann-json3-dev libeigen3-dev libssl-dev zlib1g-dev libgtest-dev libgmock-dev
          libbenchmark-dev libcli11-dev openmpi-bin libopenmpi-dev libcpp-httplib-dev clang-format
          python3 python3-dev python3-venv clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
