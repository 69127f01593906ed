// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/transport/transport.h"

using namespace Qt::StringLiterals;

namespace moetune {

QString Transport::stateName(State s) {
    switch (s) {
    case State::Disconnected:
        return u"disconnected"_s;
    case State::Connecting:
        return u"connecting"_s;
    case State::AwaitingUser:
        return u"waiting for you"_s;
    case State::Connected:
        return u"connected"_s;
    case State::Reconnecting:
        return u"reconnecting"_s;
    case State::Failed:
        return u"failed"_s;
    }
    return {};
}

} // namespace moetune
