// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/host/hostprobe.h"

#include <QString>
#include <QStringView>

namespace moetune {

// Longest host string shown whole; longer ones are cut with "…" and the count of characters left out.
inline constexpr qsizetype hostTextMaxChars = 512;

// A string the host sent (GPU and process names, paths, versions, model names) as it may be shown in a
// terminal or a widget: one line, no terminal escape sequences (LogReader::cleanText), no C0/C1 control
// characters, no bidirectional overrides or other invisible format characters (Unicode Cf), at most
// maxChars characters. A hostile host cannot recolour, move the cursor, retitle, reorder or flood the
// screen. Ordinary text is returned unchanged. For display only: act on the original.
QString hostText(QStringView raw, qsizetype maxChars = hostTextMaxChars);

// A copy of the probe with every string the host sent passed through hostText (raw's strings too), for
// the probe views of the CLI and the app. Never act on the copy (a path in it may be cut).
HostProbe hostProbeForDisplay(const HostProbe &probe);

} // namespace moetune
