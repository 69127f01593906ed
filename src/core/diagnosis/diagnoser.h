// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/ruleset.h"

#include <QByteArrayView>
#include <QString>

#include <functional>

class QIODevice;

namespace moetune {

// Reads a server log and turns it into findings and tuning targets. Thread-safe (const, no shared state).
class Diagnoser {
public:
    using Progress = std::function<bool(qint64 done, qint64 total)>; // return false to cancel

    explicit Diagnoser(RuleSet rules = RuleSet::builtin());

    // Reads the file in windows (never mapped); never holds the whole file in memory. A file that
    // shrinks while read gives an error in *error; one that grows is diagnosed as it was at the start.
    Diagnosis diagnoseFile(const QString &path, const Progress &progress = {},
                           QString *error = nullptr) const;
    Diagnosis diagnoseText(QByteArrayView text, const Progress &progress = {}) const;
    // stdin, sockets: read in chunks until EOF.
    Diagnosis diagnoseDevice(QIODevice *dev, const Progress &progress = {}, QString *error = nullptr) const;

    const RuleSet &rules() const { return m_rules; }

    // A file of at least parallelThreshold bytes is split at line ends and read by up to maxThreads
    // threads (default: the CPU count, at most 4); results are identical to a single pass.
    void setMaxThreads(int threads) { m_maxThreads = threads; }
    void setParallelThreshold(qint64 bytes) { m_parallelThreshold = bytes; }

private:
    Diagnosis diagnoseFileParallel(const QString &path, qint64 size, int threads, const Progress &progress,
                                   QString *error) const;

    RuleSet m_rules;
    int m_maxThreads = 0; // 0 = the CPU count, at most 4
    qint64 m_parallelThreshold = 64LL * 1024 * 1024;
};

} // namespace moetune
