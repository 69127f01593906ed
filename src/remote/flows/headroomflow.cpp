// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/headroomflow.h"

#include "remote/agent/agentclient.h"

using namespace Qt::StringLiterals;

namespace moetune {

HeadroomFlow::HeadroomFlow(HostCalls *calls, QObject *parent)
    : QObject(parent)
    , m_calls(calls) {}

void HeadroomFlow::check(const TuneSpec &spec,
                         const std::function<void(const HeadroomResult &, const QString &)> &done) {
    const QString invalid = spec.validate();
    if (!invalid.isEmpty())
        return done({}, invalid);
    if (!m_calls || !m_calls->agent())
        return done({}, u"No connection to the host."_s);
    const JobId id = m_calls->agent()->headroom(spec);
    m_job = id;
    QPointer<HeadroomFlow> self(this);
    m_calls->agentJob(
        id,
        [self, done](const HostCalls::Agent &a) {
            if (self)
                self->m_job = 0;
            const auto final = a.of(u"headroom"_s);
            if (final.isEmpty())
                return done({}, a.error.isEmpty() ? u"The agent sent no headroom result."_s : a.error);
            QString why;
            const auto r = HeadroomResult::fromJson(final.last(), &why);
            if (!r)
                return done({}, u"The agent's headroom result cannot be read: "_s + why);
            // A result with a failed ending (nothing could be timed) is still shown, with the error.
            done(*r, a.ok ? QString() : a.error);
        },
        [self](const AgentEvent &e) {
            if (!self || e.isError())
                return;
            if (e.type == "progress"_L1)
                emit self->progress(e.object.value("done"_L1).toInt(), e.object.value("total"_L1).toInt(),
                                    e.object.value("simulated"_L1).toBool());
            else if (e.type == "headroom_size"_L1)
                emit self->sizeMeasured(e.object);
            else if (e.type == "headroom_started"_L1)
                emit self->started(e.object);
        });
}

void HeadroomFlow::cancel() {
    if (m_job != 0 && m_calls && m_calls->agent())
        m_calls->agent()->cancel(m_job);
}

} // namespace moetune
