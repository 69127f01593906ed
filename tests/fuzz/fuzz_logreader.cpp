// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzzes the log reader and the rules: any bytes -> Diagnoser::diagnoseText, checking the invariants the
// GUI and the CLI rely on, and that streaming the same bytes in small chunks gives the same diagnosis.
#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/diagnosis.h"
#include "fuzzcheck.h"
#include "trickledevice.h"

#include <QJsonDocument>
#include <QSet>

#include <algorithm>
#include <cstddef>
#include <cstdint>

using namespace moetune;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const Diagnoser diagnoser;
    const QByteArray bytes(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const Diagnosis d = diagnoser.diagnoseText(bytes);

    FUZZ_CHECK(!d.cancelled);
    FUZZ_CHECK(d.bytesRead == bytes.size());
    FUZZ_CHECK(d.linesRead >= 0 && d.linesRead <= bytes.size() + 1);
    // The counts are those of the latest server start (earlier starts' findings are history).
    qsizetype latest = 0;
    for (const Finding &f : d.findings)
        latest += d.isLatest(f) ? 1 : 0;
    FUZZ_CHECK(d.count(Severity::Info) + d.count(Severity::Warning) + d.count(Severity::Error) == latest);
    QSet<QString> ids;
    for (qsizetype i = 0; i < d.findings.size(); ++i) {
        const Finding &f = d.findings.at(i);
        FUZZ_CHECK(!f.id.isEmpty() && !f.rule.isEmpty());
        FUZZ_CHECK(!ids.contains(f.id));
        ids.insert(f.id);
        if (i > 0) { // the latest start first, then the earlier ones; within a start, most severe first
            const Finding &prev = d.findings.at(i - 1);
            FUZZ_CHECK(prev.start > f.start || (prev.start == f.start && prev.severity >= f.severity));
        }
        FUZZ_CHECK(f.occurrences >= 1);
        FUZZ_CHECK(f.evidence.size() <= Finding::maxEvidence);
        FUZZ_CHECK(f.evidence.size() <= f.occurrences);
        for (const Evidence &e : f.evidence) {
            FUZZ_CHECK(e.line >= 1 && e.line <= d.linesRead);
            FUZZ_CHECK(e.matchStart >= 0 && e.matchLength >= 0);
            FUZZ_CHECK(e.matchStart + e.matchLength <= e.text.size());
        }
        // Every tunable shape of the latest start that needs tuning is one of the merged targets (a config in
        // use, a dense W8A8 kernel and earlier starts are findings with a target but no tuning job).
        if (f.target && d.isLatest(f) && f.target->isTunable() && f.target->needsTuning())
            FUZZ_CHECK(std::any_of(d.targets.cbegin(), d.targets.cend(),
                                   [&](const TuningTarget &t) { return t.sameShape(*f.target); }));
    }
    // The renderers must cope with whatever the engine found.
    FUZZ_CHECK(!QJsonDocument(d.toJson()).toJson().isEmpty());
    FUZZ_CHECK(!d.toMarkdown().isEmpty());

    // Streaming in chunks of 1..97 bytes must see exactly what the in-memory path saw.
    test::TrickleDevice device(bytes, 1 + static_cast<qint64>((size * 7919) % 97));
    QString error;
    const Diagnosis streamed = diagnoser.diagnoseDevice(&device, {}, &error);
    FUZZ_CHECK(error.isEmpty());
    FUZZ_CHECK(streamed.linesRead == d.linesRead);
    FUZZ_CHECK(streamed.findings == d.findings);
    FUZZ_CHECK(streamed.targets == d.targets);
    FUZZ_CHECK(streamed.summary == d.summary);
    return 0;
}
