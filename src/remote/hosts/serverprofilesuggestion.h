// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/host/hostprobe.h"
#include "core/server/serverprofile.h"

namespace moetune {

// A server profile suggested from a running server as the probe saw it (its cgroup: systemd unit or
// container; its supervisor and log file; its command line, working folder and environment). Only a
// suggestion: the user confirms or edits it, and nothing runs until they click. Commands are built with
// shellQuote, so the recorded command line runs as the same words.
ServerProfile suggestServerProfile(const ServerProcess &server);

// The pid file moetune's suggested start command writes for a plain-command server.
QString serverPidFile(const ServerProcess &server);

} // namespace moetune
