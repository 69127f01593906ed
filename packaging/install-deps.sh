#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs the Debian 12 / Ubuntu 24.04 packages moetune needs to build, run and test.
# Idempotent: only missing packages are installed; apt-get update runs only when something is missing.
set -euo pipefail

# libqt6opengl6-dev: Qt6Charts' CMake config requires Qt6OpenGL's, which --no-install-recommends leaves out.
PKGS=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-base-dev-tools qt6-qpa-plugins qt6-charts-dev libqt6opengl6-dev qt6-svg-dev libgl-dev libxkbcommon-dev
  libssh-dev qtkeychain-qt6-dev libyaml-cpp-dev
  python3 pylint mypy black openssh-server openssh-client libnss-wrapper
  xvfb xauth fonts-dejavu-core poppler-utils
  clang clang-tidy libclang-rt-14-dev time dbus gnome-keyring
)

# Arguments: install just these packages the same way (run.sh asks for x11vnc when there is no display).
if [ $# -gt 0 ]; then PKGS=("$@"); fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
