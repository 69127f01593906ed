// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/job/tunespec.h"
#include "core/run/headroomresult.h"
#include "remote/flows/hostcalls.h"

#include <QObject>
#include <QPointer>

#include <functional>

namespace moetune {

// The headroom check of one host (issue 19), below both shells: the agent's `headroom SPEC` over the
// host's HostCalls, its progress and per-size rows as signals, the final result (or a sentence) to done.
class HeadroomFlow : public QObject {
    Q_OBJECT
public:
    explicit HeadroomFlow(HostCalls *calls, QObject *parent = nullptr);

    // done(result, error): error is "" when the agent sent its headroom event and ended ok.
    void check(const TuneSpec &spec,
               const std::function<void(const HeadroomResult &, const QString &)> &done);
    void cancel();
    bool running() const { return m_job != 0; }

signals:
    void progress(int done, int total, bool simulated);
    void sizeMeasured(const QJsonObject &headroomSize);
    void started(const QJsonObject &headroomStarted);

private:
    QPointer<HostCalls> m_calls;
    JobId m_job = 0;
};

} // namespace moetune
