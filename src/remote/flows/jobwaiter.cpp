// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/jobwaiter.h"

#include "remote/flows/waiter.h"

using namespace Qt::StringLiterals;

namespace moetune {

WaitedJob waitForJob(Transport *transport, JobId id, int timeoutMs) {
    WaitedJob w;
    Waiter waiter;
    QObject context; // the connections below end with this call
    QList<QMetaObject::Connection> cs;
    cs << QObject::connect(transport, &Transport::stdoutLines, &context, [&](JobId j, const QStringList &l) {
        if (j == id)
            w.stdoutLines += l;
    });
    cs << QObject::connect(transport, &Transport::stderrLines, &context, [&](JobId j, const QStringList &l) {
        if (j == id)
            w.stderrLines += l;
    });
    cs << QObject::connect(transport, &Transport::stdoutData, &context, [&](JobId j, const QByteArray &d) {
        if (j == id)
            w.stdoutData += d;
    });
    cs << QObject::connect(transport, &Transport::finished, &context, [&](JobId j, const JobResult &r) {
        if (j != id)
            return;
        w.result = r;
        waiter.done();
    });
    const bool done = waiter.wait(timeoutMs);
    for (const auto &c : cs)
        QObject::disconnect(c);
    if (!done) {
        transport->cancel(id);
        w.result.error = u"Timed out after %1 s waiting for the host."_s.arg(timeoutMs / 1000.0);
    }
    return w;
}

bool waitForConnected(Transport *transport, int timeoutMs, QString *error) {
    if (transport->state() == Transport::State::Connected)
        return true;
    Waiter waiter;
    QObject context;
    QObject::connect(transport, &Transport::stateChanged, &context, [&](Transport::State s) {
        if (s == Transport::State::Connected || s == Transport::State::Failed ||
            s == Transport::State::Disconnected || s == Transport::State::AwaitingUser)
            waiter.done();
    });
    waiter.wait(timeoutMs);
    const bool ok = transport->state() == Transport::State::Connected;
    if (!ok && error) {
        *error = transport->stateMessage().isEmpty()
                     ? u"Could not connect to %1 (%2)."_s.arg(transport->hostLabel(),
                                                              Transport::stateName(transport->state()))
                     : transport->stateMessage();
    }
    return ok;
}

} // namespace moetune
