// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace moetune {

// The agent speaks to a command line ("--python / spec 'python'", "install-config", "test fixture"): the
// GUI shows the same facts in its own words, naming the field or the button to use. Messages it does not
// know are shown as they are.
QString agentSentenceForGui(const QString &agentMessage, const QString &hostLabel);

} // namespace moetune
