// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QEventLoop>

#include <functional>

namespace moetune {

// The one nested event loop of moetune, for the CLI and the tests (never on a GUI thread): wait() runs
// the caller's event loop until done() is called (from a flow's callback or a signal) or timeoutMs pass.
// A done() that comes before wait() (a flow that ends at once) is kept, so no wake-up is ever lost; each
// wait() consumes it. HostSessionSync, the CLI's FlowHost and waitForJob() all wait through it.
class Waiter {
public:
    Waiter() = default;
    Waiter(const Waiter &) = delete;
    Waiter &operator=(const Waiter &) = delete;

    // True when done() came; false when the time ran out (timeoutMs <= 0: no limit).
    bool wait(int timeoutMs);
    void done();
    bool isDone() const { return m_done; }

private:
    QEventLoop m_loop;
    bool m_done = false;
};

// Waits until condition() holds, checking it every pollMs (for states that change without a signal
// this side can hear); true when it held within timeoutMs.
bool waitUntil(const std::function<bool()> &condition, int timeoutMs, int pollMs = 20);

} // namespace moetune
