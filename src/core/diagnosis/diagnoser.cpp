// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/diagnoser.h"

#include "core/diagnosis/diagnosisbuilder.h"
#include "core/diagnosis/logreader.h"

#include <QFile>
#include <QFileInfo>
#include <QThread>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <vector>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

bool startsLikeLogLine(QByteArrayView s) {
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (s.size() >= 4 && s[0] == '[' && digit(s[1]) && digit(s[2]) && digit(s[3]))
        return true; // SGLang "[2026-..."
    if (s.size() >= 2 && s[0] == '(' && ((s[1] >= 'A' && s[1] <= 'Z') || (s[1] >= 'a' && s[1] <= 'z')))
        return s.first(std::min<qsizetype>(s.size(), 120)).contains(" pid="); // vLLM "(EngineCore_DP0 pid=1)"
    for (QByteArrayView level : {"INFO ", "WARNING ", "ERROR ", "DEBUG "}) {
        if (s.startsWith(level))
            return true;
    }
    return false;
}

} // namespace

Diagnoser::Diagnoser(RuleSet rules)
    : m_rules(std::move(rules)) {}

Diagnosis Diagnoser::diagnoseFile(const QString &path, const Progress &progress, QString *error) const {
    const QFileInfo info(path);
    const int threads = m_maxThreads > 0 ? m_maxThreads : std::min(4, QThread::idealThreadCount());
    if (threads > 1 && info.isFile() && info.size() >= m_parallelThreshold) {
        QString parallelError;
        Diagnosis d = diagnoseFileParallel(path, info.size(), threads, progress, &parallelError);
        // A read error (e.g. the file shrank while read) is the answer: a second pass would read another
        // file.
        if (!parallelError.isEmpty() && error)
            *error = parallelError;
        return d;
    }
    DiagnosisBuilder builder(m_rules);
    LogReader reader(builder.literals());
    reader.readFile(
        path, [&](const LogReader::Hit &hit) { builder.addHit(hit); }, progress, error);
    return builder.finish(reader.bytesRead(), reader.linesRead(), reader.cancelled());
}

Diagnosis Diagnoser::diagnoseFileParallel(const QString &path, qint64 size, int threads,
                                          const Progress &progress, QString *error) const {
    // Split points just after a '\n' near each k/threads of the file.
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = u"Cannot open %1: %2."_s.arg(path, file.errorString());
        return {};
    }
    // Every part reads this one descriptor, so a log rotated meanwhile is still read as one file.
    size = std::min(size, file.size());
    std::vector<qint64> bounds{0};
    for (int k = 1; k < threads; ++k) {
        qint64 pos = std::max(bounds.back(), size * k / threads);
        if (!file.seek(pos)) {
            *error = file.errorString();
            return {};
        }
        const QByteArray probe = file.read(1 << 20);
        qsizetype cut = -1;
        // Prefer a line that starts like a server log line, so no terminal-wrapped message is cut.
        for (qsizetype nl = probe.indexOf('\n'); nl >= 0; nl = probe.indexOf('\n', nl + 1)) {
            if (cut < 0)
                cut = nl + 1;
            if (startsLikeLogLine(QByteArrayView(probe).sliced(nl + 1))) {
                cut = nl + 1;
                break;
            }
        }
        if (cut < 0)
            continue; // a huge line: fewer parts
        pos += cut;
        if (pos < size && pos > bounds.back())
            bounds.push_back(pos);
    }
    bounds.push_back(size);
    const size_t parts = bounds.size() - 1;

    std::vector<std::unique_ptr<DiagnosisBuilder>> builders;
    std::vector<std::unique_ptr<LogReader>> readers;
    std::vector<std::atomic<qint64>> done(parts);
    std::vector<QString> errors(parts);
    std::atomic<bool> cancel{false};
    std::vector<std::future<bool>> jobs;
    for (size_t i = 0; i < parts; ++i) {
        builders.push_back(std::make_unique<DiagnosisBuilder>(m_rules));
        readers.push_back(std::make_unique<LogReader>(builders.back()->literals()));
        done[i] = 0;
    }
    for (size_t i = 0; i < parts; ++i) {
        jobs.push_back(std::async(std::launch::async, [&, i] {
            return readers[i]->readOpenFileRange(
                file.handle(), path, bounds[i], bounds[i + 1],
                [&](const LogReader::Hit &hit) { builders[i]->addHit(hit); },
                [&](qint64 d, qint64) {
                    done[i] = d;
                    return !cancel.load();
                },
                &errors[i]);
        }));
    }
    // Progress is reported from this thread only: the caller's callback need not be thread-safe.
    for (size_t i = 0; i < parts; ++i) {
        while (jobs[i].wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
            if (progress && !cancel) {
                qint64 sum = 0;
                for (const auto &d : done)
                    sum += d;
                if (!progress(sum, size))
                    cancel = true;
            }
        }
    }
    bool ok = true;
    for (size_t i = 0; i < parts; ++i)
        ok = jobs[i].get() && ok;
    for (const QString &e : errors) {
        if (!e.isEmpty()) {
            *error = e;
            return {};
        }
    }
    if (!ok) {
        *error = u"A part of the file could not be read."_s;
        return {};
    }
    // A wrapped message that the end of a part rejoined with the next part's first lines: a single pass
    // skips those lines, so read the next part again knowing it (rare: splits prefer a log line's start).
    for (size_t i = 0; i + 1 < parts; ++i) {
        const qint64 spill = builders[i]->consumedThrough() - readers[i]->linesRead();
        if (spill <= 0 || cancel)
            continue;
        builders[i + 1] = std::make_unique<DiagnosisBuilder>(m_rules);
        builders[i + 1]->skipThrough(spill);
        readers[i + 1] = std::make_unique<LogReader>(builders[i + 1]->literals());
        if (!readers[i + 1]->readOpenFileRange(
                file.handle(), path, bounds[i + 1], bounds[i + 2],
                [&](const LogReader::Hit &hit) { builders[i + 1]->addHit(hit); }, {}, error)) {
            return {};
        }
    }
    qint64 lines = readers[0]->linesRead();
    qint64 bytes = readers[0]->bytesRead();
    bool cancelled = readers[0]->cancelled();
    for (size_t i = 1; i < parts; ++i) {
        builders[0]->merge(std::move(*builders[i]), lines);
        lines += readers[i]->linesRead();
        bytes += readers[i]->bytesRead();
        cancelled = cancelled || readers[i]->cancelled();
    }
    if (progress && !cancelled)
        progress(bytes, size);
    return builders[0]->finish(bytes, lines, cancelled);
}

Diagnosis Diagnoser::diagnoseText(QByteArrayView text, const Progress &progress) const {
    DiagnosisBuilder builder(m_rules);
    LogReader reader(builder.literals());
    reader.readBuffer(
        text, [&](const LogReader::Hit &hit) { builder.addHit(hit); }, progress);
    return builder.finish(reader.bytesRead(), reader.linesRead(), reader.cancelled());
}

Diagnosis Diagnoser::diagnoseDevice(QIODevice *dev, const Progress &progress, QString *error) const {
    DiagnosisBuilder builder(m_rules);
    LogReader reader(builder.literals());
    reader.readDevice(
        dev, [&](const LogReader::Hit &hit) { builder.addHit(hit); }, progress, error);
    return builder.finish(reader.bytesRead(), reader.linesRead(), reader.cancelled());
}

} // namespace moetune
