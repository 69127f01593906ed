// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/transport/transport.h"

#include <QColor>
#include <QIcon>

namespace moetune {

// The Hosts page's icons, drawn in code so that they follow the palette and need no resource file.
class HostIcons {
public:
    static QIcon page();                        // the navigation entry: a server rack
    static QIcon state(Transport::State state); // a coloured dot per connection state
    static QColor stateColor(Transport::State state);
};

} // namespace moetune
