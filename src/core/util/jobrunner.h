// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/util/jobcontrol.h"

#include <QList>
#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include <atomic>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace moetune {

// Work off the GUI thread, one current job per runner (hotspot's JobTracker): each start() numbers a
// job and cancels the one before; a result is delivered on the runner's thread only while its job is
// still the current one, so stale results are dropped by id, never shown. Cancel is an atomic flag the
// work polls (JobControl) plus cancelled(id) at once. Only QtCore: the app's pages, the report's PDF
// export and the CLI can all use it. Use one runner per kind of work (diagnosis, landscape, export).
class JobRunner : public QObject {
    Q_OBJECT
public:
    static constexpr int progressIntervalMs = 50;

    explicit JobRunner(QObject *parent = nullptr);
    // Cancels every job and waits for the workers; nothing is delivered or emitted afterwards.
    ~JobRunner() override;

    // work(JobControl &) -> R runs on a worker thread; deliver(R) runs later on this object's thread,
    // unless the job was cancelled or replaced by then. Returns the new job's id (> 0).
    template <typename Work, typename Deliver>
    quint64 start(Work work, Deliver deliver) {
        using Result = std::invoke_result_t<Work &, JobControl &>;
        return startErased([work = std::move(work), deliver = std::move(deliver)](
                               JobControl &control) mutable -> std::function<void()> {
            auto result = std::make_shared<Result>(work(control));
            return [deliver, result]() mutable { deliver(std::move(*result)); };
        });
    }

    // Cancels the current job: its result is dropped and cancelled(id) is emitted now.
    void cancel();
    bool isRunning() const { return m_current != nullptr; }
    quint64 currentJob() const { return m_current ? m_current->id() : 0; }
    // Workers still computing, cancelled or replaced ones included.
    int workersRunning() const { return m_workers.load(); }
    // Blocks until every worker has returned (shutdown, tests); cancelled ones stop at their next poll.
    void waitForIdle();

signals:
    void started(quint64 job);
    void progress(quint64 job, qint64 done, qint64 total);
    void finished(quint64 job); // after its result was delivered
    void cancelled(quint64 job);
    void runningChanged(bool running);

private:
    using Delivery = std::function<void()>;
    quint64 startErased(std::function<Delivery(JobControl &)> work);
    void onWorkerDone(const std::shared_ptr<JobControl> &job, const Delivery &delivery);
    void pollProgress();

    QThreadPool m_pool;
    QTimer m_progressTimer;
    std::shared_ptr<JobControl> m_current;
    QList<std::shared_ptr<JobControl>> m_running;
    quint64 m_nextId = 1;
    std::atomic<int> m_workers{0};
};

} // namespace moetune
