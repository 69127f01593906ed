// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/finding.h"
#include "core/diagnosis/serverstart.h"
#include "core/job/tuningtarget.h"

#include <QByteArrayView>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <functional>

namespace moetune {

// The tuning job each finding belongs to, for listing a job's findings together (its up file, its _down
// file, the Triton folder none of them was found in): the shape of a tunable target that needs tuning;
// for a "triton-folder-no-config" finding the job whose files go into that folder, when exactly one
// job of its start does. Empty for a finding of no job. One entry per finding, in order.
QStringList findingJobKeys(const QList<Finding> &findings);

// The result of reading one log.
struct Diagnosis {
    QList<Finding> findings;     // sorted: start desc, severity desc, MoE tuning jobs first (each job's
                                 // findings together), the dense block-FP8 GEMM last, then first line
    QList<TuningTarget> targets; // one per shape: up+down merged, of the latest start
    QList<ServerStart> starts;   // in log order (one when the log shows no restart); the last is the latest
    int startsOmitted = 0;       // earlier starts before those (only the latest ones are kept in detail)
    QString summary;             // one line a person can act on
    qint64 bytesRead = 0;
    qint64 linesRead = 0;
    bool cancelled = false;
    QString host; // alias of the host the log came from ("" = pasted or opened here): where to tune

    // Counts and worst severity are those of the latest server start: an earlier start's findings are
    // history (a restart after a push is meant to make them go).
    int count(Severity severity) const;
    Severity worst() const; // Info when there are no findings
    bool isLatest(const Finding &finding) const { return finding.start >= starts.size(); }
    const Finding *find(const QString &id) const;

    QString toMarkdown() const;
    // toMarkdown's text in pieces (one finding at a time), for output that need not be whole in memory.
    void writeMarkdown(const std::function<void(const QString &)> &sink) const;
    QString findingMarkdown(const Finding &finding) const;
    // The `moetune-cli diagnose --format json` schema, "moetune.diagnosis/1":
    // {schema, summary, bytes_read, lines_read, cancelled, worst: "info"|"warning"|"error"|null,
    //  counts: {info, warning, error},
    //  starts: [{line|null, time|null, framework, ready_line|null, ready_time|null, seconds_to_ready|null}],
    //  findings: [{id, rule, severity, title, explanation, advice, occurrences, sources: [..], start,
    //              evidence: [{line, text, match_start, match_length}], evidence_omitted, target:
    //              TARGET|null}],
    //  targets: [TARGET]}
    // TARGET: {framework: "sglang"|"vllm"|"unknown", config_root, triton_version|null, triton_folder,
    //  triton_folder_missing, fallback_folder|null, E, N, device_name, dtype|null, block_shape: [n, k]|null,
    //  per_channel_quant, up_missing, down_missing, up_fell_back, down_fell_back, shape, up_path,
    //  down_path|null, install_folder, ...}: docs/diagnose-json-schema.json has every field.
    //  match_start/match_length count UTF-16 units of text.
    QJsonObject toJson() const;
    // The same bytes as QJsonDocument(toJson()).toJson(QJsonDocument::Indented), handed to `sink` in
    // pieces (one finding or target at a time): a log with 32,000 shapes is written without a 170 MB
    // document in memory, nor the doubling buffer that serialises it.
    void writeJson(const std::function<void(QByteArrayView)> &sink) const;
};

} // namespace moetune
