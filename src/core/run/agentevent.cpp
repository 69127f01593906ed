// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/agentevent.h"

using namespace Qt::StringLiterals;

namespace moetune {

qint64 AgentEvent::seq() const {
    const QJsonValue v = object.value("seq"_L1);
    return v.isDouble() ? qint64(v.toDouble()) : -1;
}

} // namespace moetune
