// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/configname.h"

#include <QString>
#include <QStringList>

namespace moetune {

// Device names of one GPU model (NVIDIA_H200 and NVIDIA_H200_NVL, NVIDIA_H20 and NVIDIA_H20-3e,
// AMD_Instinct_MI300X and _VF): a server looks its files up by its own exact device name, so a file of a
// sibling name sitting in its folder is never read by it. The model is the name's words up to its first
// word with a digit (H20 and H200 differ). The agent's rowmerge.is_sibling_device is the same rule
// (tests/data/sibling_devices.json keeps the two in step).
bool isSiblingDevice(const QString &a, const QString &b);

// Files among `files` (names in a folder) of the same shape as `name` (E, N, dtype, block, _down) for a
// sibling device name.
QStringList siblingDeviceFiles(const ConfigName &name, const QStringList &files);

} // namespace moetune
