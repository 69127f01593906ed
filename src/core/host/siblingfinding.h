// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/finding.h"
#include "core/host/hostprobe.h"
#include "core/job/tuningtarget.h"

#include <optional>

namespace moetune {

// A finding (rule "host-sibling-device-file") when the folder the server reads for target t holds a file
// of t's shape for a sibling device name (NVIDIA_H200_NVL beside a wanted NVIDIA_H200 file, -3e, _VF):
// the server looks its files up by its own exact device name and does not read it. Only where a listing
// is known (the probe's folder listing) and the target's own file is missing or fell back.
std::optional<Finding> siblingDeviceFinding(const TuningTarget &t, const HostProbe &probe,
                                            const QString &host);

} // namespace moetune
