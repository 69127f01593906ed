// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QtGlobal>

#include <atomic>

namespace moetune {

// What a JobRunner job sees on its worker thread: whether it was cancelled (or replaced by a newer
// job), and where to put its progress; the runner polls it, so a worker never floods the event queue.
class JobControl {
public:
    explicit JobControl(quint64 id)
        : m_id(id) {}

    quint64 id() const { return m_id; }
    bool isCancelled() const { return m_cancel.load(std::memory_order_relaxed); }
    void cancel() { m_cancel.store(true, std::memory_order_relaxed); }

    // total < 0: unknown (the GUI shows a busy bar).
    void setProgress(qint64 done, qint64 total) {
        m_done.store(done, std::memory_order_relaxed);
        m_total.store(total, std::memory_order_relaxed);
    }
    // The shape of the core's progress callbacks: records progress, returns false once cancelled.
    bool report(qint64 done, qint64 total) {
        setProgress(done, total);
        return !isCancelled();
    }
    qint64 done() const { return m_done.load(std::memory_order_relaxed); }
    qint64 total() const { return m_total.load(std::memory_order_relaxed); }

private:
    const quint64 m_id;
    std::atomic<bool> m_cancel{false};
    std::atomic<qint64> m_done{0};
    std::atomic<qint64> m_total{-1};
};

} // namespace moetune
