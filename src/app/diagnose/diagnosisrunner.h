#pragma once

#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/diagnosis.h"

#include <QByteArray>
#include <QFutureWatcher>
#include <QHash>
#include <QObject>
#include <QString>
#include <QTimer>

#include <atomic>
#include <memory>

namespace moetune {

// Runs diagnoses on a worker thread (QtConcurrent) one job at a time from the GUI's point of view:
// starting a job cancels the previous one, and results of stale jobs are dropped by job id.
class DiagnosisRunner : public QObject {
    Q_OBJECT
public:
    explicit DiagnosisRunner(QObject *parent = nullptr);
    ~DiagnosisRunner() override;

    void setDiagnoser(const Diagnoser &diagnoser);

    // Each returns the new job's id (> 0). The text is copied into the job.
    quint64 startText(const QByteArray &text);
    quint64 startFile(const QString &path);

    // Cancels the current job: its result will not be delivered; cancelled(job) is emitted at once.
    void cancel();
    bool isRunning() const { return m_current != nullptr; }
    quint64 currentJob() const;
    // Blocks until every worker still running (also cancelled ones) has returned; for shutdown and tests.
    void waitForIdle();
    int workersRunning() const { return int(m_running.size()); }

signals:
    void started(quint64 job);
    void progress(quint64 job, qint64 done, qint64 total);
    void finished(quint64 job, const moetune::Diagnosis &diagnosis);
    void failed(quint64 job, const QString &error);
    void cancelled(quint64 job);
    void runningChanged(bool running);

private:
    struct Job {
        quint64 id = 0;
        std::atomic<bool> cancel{false};
        std::atomic<qint64> done{0};
        std::atomic<qint64> total{0};
    };
    struct Result {
        Diagnosis diagnosis;
        QString error;
    };
    quint64 start(const std::function<Result(const std::shared_ptr<Job> &)> &work);
    void pollProgress();

    Diagnoser m_diagnoser;
    std::shared_ptr<Job> m_current;
    quint64 m_nextId = 1;
    QTimer m_progressTimer;
    QHash<QFutureWatcher<Result> *, std::shared_ptr<Job>> m_running;
};

} // namespace moetune
