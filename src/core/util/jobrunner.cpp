// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/util/jobrunner.h"

#include <QMetaObject>
#include <QPointer>
#include <QThread>

namespace moetune {

JobRunner::JobRunner(QObject *parent)
    : QObject(parent) {
    // Its own pool: waitForIdle() and the destructor wait for this runner's workers only.
    m_pool.setMaxThreadCount(qMax(2, QThread::idealThreadCount()));
    m_progressTimer.setInterval(progressIntervalMs);
    connect(&m_progressTimer, &QTimer::timeout, this, &JobRunner::pollProgress);
}

JobRunner::~JobRunner() {
    // No signals from here on: the receivers may already be half destroyed.
    m_current.reset();
    for (const auto &job : std::as_const(m_running))
        job->cancel();
    m_pool.waitForDone();
    // Deliveries the workers queued die with this QObject's posted events.
}

quint64 JobRunner::startErased(std::function<Delivery(JobControl &)> work) {
    const bool wasRunning = isRunning();
    if (m_current)
        m_current->cancel(); // replaced: dropped without a cancelled() signal
    auto job = std::make_shared<JobControl>(m_nextId++);
    m_current = job;
    m_running.append(job);
    ++m_workers;
    m_pool.start([this, job, work = std::move(work)]() mutable {
        Delivery delivery = work(*job);
        // Queued to this object: dropped by Qt if the runner is gone (the destructor waits for us).
        QMetaObject::invokeMethod(
            this, [this, job, delivery = std::move(delivery)] { onWorkerDone(job, delivery); },
            Qt::QueuedConnection);
        --m_workers;
    });
    m_progressTimer.start();
    emit started(job->id());
    if (!wasRunning)
        emit runningChanged(true);
    return job->id();
}

void JobRunner::onWorkerDone(const std::shared_ptr<JobControl> &job, const Delivery &delivery) {
    m_running.removeOne(job);
    if (m_current != job || job->isCancelled())
        return; // stale: replaced or cancelled
    m_current.reset();
    m_progressTimer.stop();
    const QPointer<JobRunner> self(this);
    delivery();
    if (!self)
        return; // the delivery closed what owned the runner
    emit finished(job->id());
    if (!isRunning())
        emit runningChanged(false);
}

void JobRunner::cancel() {
    if (!m_current)
        return;
    const quint64 id = m_current->id();
    m_current->cancel();
    m_current.reset();
    m_progressTimer.stop();
    emit cancelled(id);
    emit runningChanged(false);
}

void JobRunner::pollProgress() {
    if (!m_current)
        return;
    emit progress(m_current->id(), m_current->done(), m_current->total());
}

void JobRunner::waitForIdle() {
    m_pool.waitForDone();
}

} // namespace moetune
