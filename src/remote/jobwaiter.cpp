// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/jobwaiter.h"

#include <QEventLoop>
#include <QTimer>

using namespace Qt::StringLiterals;

namespace moetune {

WaitedJob waitForJob(Transport *transport, JobId id, int timeoutMs) {
    WaitedJob w;
    QEventLoop loop;
    bool done = false;
    QList<QMetaObject::Connection> cs;
    cs << QObject::connect(transport, &Transport::stdoutLines, &loop, [&](JobId j, const QStringList &l) {
        if (j == id)
            w.stdoutLines += l;
    });
    cs << QObject::connect(transport, &Transport::stderrLines, &loop, [&](JobId j, const QStringList &l) {
        if (j == id)
            w.stderrLines += l;
    });
    cs << QObject::connect(transport, &Transport::stdoutData, &loop, [&](JobId j, const QByteArray &d) {
        if (j == id)
            w.stdoutData += d;
    });
    cs << QObject::connect(transport, &Transport::finished, &loop, [&](JobId j, const JobResult &r) {
        if (j != id)
            return;
        w.result = r;
        done = true;
        loop.quit();
    });
    QTimer timer;
    timer.setSingleShot(true);
    QObject::connect(&timer, &QTimer::timeout, &loop, &QEventLoop::quit);
    if (timeoutMs > 0)
        timer.start(timeoutMs);
    if (!done)
        loop.exec();
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
    QEventLoop loop;
    QTimer timer;
    timer.setSingleShot(true);
    QObject::connect(&timer, &QTimer::timeout, &loop, &QEventLoop::quit);
    auto c = QObject::connect(transport, &Transport::stateChanged, &loop, [&](Transport::State s) {
        if (s == Transport::State::Connected || s == Transport::State::Failed ||
            s == Transport::State::Disconnected || s == Transport::State::AwaitingUser)
            loop.quit();
    });
    timer.start(timeoutMs);
    loop.exec();
    QObject::disconnect(c);
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
