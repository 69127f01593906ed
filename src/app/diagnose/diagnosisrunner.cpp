#include "app/diagnose/diagnosisrunner.h"

#include <QtConcurrent/QtConcurrentRun>

using namespace Qt::StringLiterals;

namespace moetune {

DiagnosisRunner::DiagnosisRunner(QObject *parent)
    : QObject(parent) {
    // Progress is polled from atomics: a worker never floods the GUI's event queue.
    m_progressTimer.setInterval(50);
    connect(&m_progressTimer, &QTimer::timeout, this, &DiagnosisRunner::pollProgress);
}

DiagnosisRunner::~DiagnosisRunner() {
    // No signals from here on: the receivers may already be half destroyed.
    m_current.reset();
    for (const auto &job : std::as_const(m_running))
        job->cancel.store(true);
    waitForIdle();
}

void DiagnosisRunner::setDiagnoser(const Diagnoser &diagnoser) {
    m_diagnoser = diagnoser;
}

quint64 DiagnosisRunner::currentJob() const {
    return m_current ? m_current->id : 0;
}

quint64 DiagnosisRunner::startText(const QByteArray &text) {
    const Diagnoser diagnoser = m_diagnoser;
    return start([diagnoser, text](const std::shared_ptr<Job> &job) {
        Result result;
        result.diagnosis = diagnoser.diagnoseText(text, [job](qint64 done, qint64 total) {
            job->done.store(done, std::memory_order_relaxed);
            job->total.store(total, std::memory_order_relaxed);
            return !job->cancel.load(std::memory_order_relaxed);
        });
        return result;
    });
}

quint64 DiagnosisRunner::startFile(const QString &path) {
    const Diagnoser diagnoser = m_diagnoser;
    return start([diagnoser, path](const std::shared_ptr<Job> &job) {
        Result result;
        result.diagnosis = diagnoser.diagnoseFile(
            path,
            [job](qint64 done, qint64 total) {
                job->done.store(done, std::memory_order_relaxed);
                job->total.store(total, std::memory_order_relaxed);
                return !job->cancel.load(std::memory_order_relaxed);
            },
            &result.error);
        return result;
    });
}

quint64 DiagnosisRunner::start(const std::function<Result(const std::shared_ptr<Job> &)> &work) {
    const bool wasRunning = isRunning();
    if (m_current)
        m_current->cancel.store(true); // its result is dropped by id below; no signal for a replaced job
    auto job = std::make_shared<Job>();
    job->id = m_nextId++;
    m_current = job;

    auto *watcher = new QFutureWatcher<Result>(this);
    connect(watcher, &QFutureWatcher<Result>::finished, this, [this, watcher, job] {
        m_running.remove(watcher);
        watcher->deleteLater();
        if (m_current != job)
            return; // stale: replaced or cancelled
        m_current.reset();
        m_progressTimer.stop();
        const Result result = watcher->result();
        if (!result.error.isEmpty())
            emit failed(job->id, result.error);
        else if (result.diagnosis.cancelled)
            emit cancelled(job->id);
        else
            emit finished(job->id, result.diagnosis);
        emit runningChanged(false);
    });
    m_running.insert(watcher, job);
    watcher->setFuture(QtConcurrent::run([work, job] { return work(job); }));
    m_progressTimer.start();
    emit started(job->id);
    if (!wasRunning)
        emit runningChanged(true);
    return job->id;
}

void DiagnosisRunner::cancel() {
    if (!m_current)
        return;
    const quint64 id = m_current->id;
    m_current->cancel.store(true);
    m_current.reset();
    m_progressTimer.stop();
    emit cancelled(id);
    emit runningChanged(false);
}

void DiagnosisRunner::pollProgress() {
    if (!m_current)
        return;
    emit progress(m_current->id, m_current->done.load(std::memory_order_relaxed),
                  m_current->total.load(std::memory_order_relaxed));
}

void DiagnosisRunner::waitForIdle() {
    // Cancelled workers stop at their next progress callback, so this is short.
    for (auto it = m_running.cbegin(); it != m_running.cend(); ++it)
        it.key()->waitForFinished();
}

} // namespace moetune
