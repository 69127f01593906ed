// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// JobRunner: results delivered on the runner's thread, stale and cancelled jobs dropped by id,
// progress polled, workers waited for on destruction.
#include "core/util/jobrunner.h"

#include <QSemaphore>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>
#include <memory>

using namespace moetune;

namespace {

// Work that blocks until the test releases it, so the order of events is the test's, not the scheduler's.
struct Gate {
    QSemaphore entered;
    QSemaphore release;
};

} // namespace

class TestJobRunner : public QObject {
    Q_OBJECT
private slots:
    void deliversOnRunnerThread();
    void staleResultsDropped_data();
    void staleResultsDropped();
    void progressIsPolled();
    void destructionWaitsAndDeliversNothing();
};

void TestJobRunner::deliversOnRunnerThread() {
    JobRunner runner;
    QSignalSpy finished(&runner, &JobRunner::finished);
    QSignalSpy running(&runner, &JobRunner::runningChanged);
    QThread *workerThread = nullptr;
    QThread *deliveryThread = nullptr;
    int got = 0;
    const quint64 id = runner.start(
        [&workerThread](JobControl &) {
            workerThread = QThread::currentThread();
            return 42;
        },
        [&](int value) {
            deliveryThread = QThread::currentThread();
            got = value;
        });
    QVERIFY(id > 0);
    QVERIFY(runner.isRunning());
    QCOMPARE(runner.currentJob(), id);
    QTRY_COMPARE(finished.count(), 1);
    QCOMPARE(finished.at(0).at(0).toULongLong(), id);
    QCOMPARE(got, 42);
    QVERIFY(workerThread != nullptr);
    QVERIFY(workerThread != QThread::currentThread());
    QCOMPARE(deliveryThread, QThread::currentThread());
    QVERIFY(!runner.isRunning());
    QCOMPARE(running.count(), 2); // true, then false
}

void TestJobRunner::staleResultsDropped_data() {
    QTest::addColumn<bool>("cancelFirst");
    QTest::newRow("replaced by a newer job") << false;
    QTest::newRow("cancelled") << true;
}

void TestJobRunner::staleResultsDropped() {
    QFETCH(bool, cancelFirst);
    JobRunner runner;
    QSignalSpy cancelled(&runner, &JobRunner::cancelled);
    QSignalSpy finished(&runner, &JobRunner::finished);
    auto gate = std::make_shared<Gate>();
    QStringList delivered;
    std::atomic<bool> sawCancel{false};
    const quint64 first = runner.start(
        [gate, &sawCancel](JobControl &control) {
            gate->entered.release();
            gate->release.acquire();
            sawCancel = control.isCancelled();
            return QStringLiteral("first");
        },
        [&delivered](const QString &s) { delivered.append(s); });
    QVERIFY(gate->entered.tryAcquire(1, 5000));
    if (cancelFirst) {
        runner.cancel();
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(cancelled.at(0).at(0).toULongLong(), first);
        QVERIFY(!runner.isRunning());
    } else {
        const quint64 second = runner.start([](JobControl &) { return QStringLiteral("second"); },
                                            [&delivered](const QString &s) { delivered.append(s); });
        QVERIFY(second > first);
        QTRY_COMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).toULongLong(), second);
        QCOMPARE(cancelled.count(), 0); // a replaced job is not "cancelled" for the user
    }
    gate->release.release();
    runner.waitForIdle();
    QCOMPARE(runner.workersRunning(), 0);
    QVERIFY(sawCancel);
    QCoreApplication::processEvents(); // the stale delivery would arrive now
    QTest::qWait(20);
    QCOMPARE(delivered, cancelFirst ? QStringList{} : QStringList{QStringLiteral("second")});
}

void TestJobRunner::progressIsPolled() {
    JobRunner runner;
    QSignalSpy progress(&runner, &JobRunner::progress);
    auto gate = std::make_shared<Gate>();
    bool done = false;
    const quint64 id = runner.start(
        [gate](JobControl &control) {
            control.setProgress(3, 10);
            gate->entered.release();
            gate->release.acquire();
            return 0;
        },
        [&done](int) { done = true; });
    QVERIFY(gate->entered.tryAcquire(1, 5000));
    QTRY_VERIFY(!progress.isEmpty());
    const QList<QVariant> last = progress.last();
    QCOMPARE(last.at(0).toULongLong(), id);
    QCOMPARE(last.at(1).toLongLong(), 3);
    QCOMPARE(last.at(2).toLongLong(), 10);
    gate->release.release();
    QTRY_VERIFY(done);
}

void TestJobRunner::destructionWaitsAndDeliversNothing() {
    auto gate = std::make_shared<Gate>();
    std::atomic<bool> returned{false};
    bool delivered = false;
    {
        JobRunner runner;
        runner.start(
            [gate, &returned](JobControl &control) {
                gate->entered.release();
                // Returns once cancelled: the destructor's cancel reaches a worker that polls.
                while (!control.isCancelled())
                    QThread::msleep(1);
                returned = true;
                return 1;
            },
            [&delivered](int) { delivered = true; });
        QVERIFY(gate->entered.tryAcquire(1, 5000));
    }
    QVERIFY(returned); // the destructor waited for the worker
    QCoreApplication::processEvents();
    QVERIFY(!delivered);
}

QTEST_GUILESS_MAIN(TestJobRunner)
#include "tst_jobrunner.moc"
