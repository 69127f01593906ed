// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/fleet/fleetsteps.h"

#include "core/diagnosis/diagnoser.h"
#include "remote/flows/hostflows.h"
#include "remote/flows/hostsession.h"
#include "remote/transport/transport.h"

#include <QDateTime>
#include <QDir>
#include <QPointer>

#include <memory>

using namespace Qt::StringLiterals;

namespace moetune::fleetsteps {

HostFlows *flowsOf(HostSession *session) {
    if (!session)
        return nullptr;
    // The transport's state changes on its own thread: a connect asked for is remembered until the state
    // moves, so two steps in a row do not start the connection twice.
    static const char *const kAsked = "moetuneFleetConnectAsked";
    const Transport::State state = session->state();
    if ((state == Transport::State::Disconnected || state == Transport::State::Failed) &&
        !session->property(kAsked).toBool()) {
        session->setProperty(kAsked, true);
        auto once = std::make_shared<QMetaObject::Connection>();
        *once = QObject::connect(session, &HostSession::stateChanged, session, [session, once] {
            QObject::disconnect(*once);
            session->setProperty(kAsked, false);
        });
        session->connectToHost();
    }
    return session->flows();
}

void diagnose(HostSession *session, const QString &localFile, QObject *context,
              const std::function<void(const std::optional<Diagnosis> &, const QString &)> &done) {
    QString error;
    const JobId id = session->diagnoseHost(qint64{64} << 20, localFile, Diagnoser(), &error);
    if (!id)
        return done(std::nullopt, error);
    struct State {
        std::optional<Diagnosis> diagnosis;
        QString error;
        QList<QMetaObject::Connection> connections;
    };
    auto state = std::make_shared<State>();
    QPointer<QObject> guard(context);
    state->connections << QObject::connect(session, &HostSession::hostDiagnosed, context,
                                           [state, id](JobId j, const Diagnosis &d) {
                                               if (j == id)
                                                   state->diagnosis = d;
                                           });
    state->connections << QObject::connect(session, &HostSession::jobFailed, context,
                                           [state, id](JobId j, HostSession::Flow, const QString &why) {
                                               if (j == id)
                                                   state->error = why;
                                           });
    state->connections << QObject::connect(
        session, &HostSession::jobFinished, context,
        [state, id, done, guard](JobId j, HostSession::Flow, bool) {
            if (j != id)
                return;
            for (const QMetaObject::Connection &c : std::as_const(state->connections))
                QObject::disconnect(c);
            if (!guard)
                return;
            if (state->diagnosis)
                return done(state->diagnosis, QString());
            done(std::nullopt,
                 state->error.isEmpty() ? u"The diagnosis of the host's log gave nothing."_s : state->error);
        });
}

void transfer(Transport *transport, JobId id, QObject *context,
              const std::function<void(const JobResult &)> &done) {
    auto connection = std::make_shared<QMetaObject::Connection>();
    *connection = QObject::connect(transport, &Transport::finished, context,
                                   [connection, id, done](JobId j, const JobResult &r) {
                                       if (j != id)
                                           return;
                                       QObject::disconnect(*connection);
                                       done(r);
                                   });
}

double now() {
    return double(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
}

void saveRecord(const FleetRecord &record, const QString &workspacePath) {
    QString error;
    if (!record.save(workspacePath, &error))
        qWarning("fleet: the record could not be saved: %s", qPrintable(error));
}

QString groupFolder(const QString &workspacePath, const QString &recordId, int group) {
    return QDir(workspacePath).filePath(u"fleet/%1/group-%2"_s.arg(recordId).arg(group + 1));
}

} // namespace moetune::fleetsteps
