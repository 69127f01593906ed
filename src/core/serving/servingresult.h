// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>

#include <cmath>
#include <limits>
#include <optional>

namespace moetune {

// What one run of a server's own serving benchmark measured (one concurrency, one boot), parsed from
// its output (docs/servers.md section 10): vLLM's printed result block or its --save-result JSON, SGLang's
// JSON line (its --output-file) or its printed block, which has the same shape as vLLM's. A figure the
// tool did not print stays NaN: nothing is made up.
struct ServingResult {
    enum class Metric { TtftMedian, TpotMedian, OutputThroughput };

    int concurrency = 0;
    int completed = 0;
    int failed = 0;
    double durationS = NAN;
    double requestThroughput = NAN; // req/s
    double outputThroughput = NAN;  // tok/s
    double meanTtftMs = NAN;
    double medianTtftMs = NAN;
    double p99TtftMs = NAN;
    double meanTpotMs = NAN;
    double medianTpotMs = NAN;
    double medianItlMs = NAN;
    // The tool said its figures are simulated ("simulated": true in its JSON, as a practice double of the
    // tool writes): no server was measured, and every sentence about them says SIMULATED.
    bool simulated = false;

    double value(Metric m) const;
    bool hasCoreMetrics() const; // median TTFT, median TPOT and output throughput all present
    // Why this run is not a result (docs/serving-statistics.md), "" when it is: failed requests, fewer
    // completed than the numPrompts asked for (0 = not checked), a median TTFT, median TPOT or output
    // throughput that is missing, zero or negative.
    QString problem(int numPrompts = 0) const;

    static QString metricId(Metric m);   // "median_ttft_ms", "median_tpot_ms", "output_throughput"
    static QString metricName(Metric m); // "median TTFT (ms)", ...
    static QString metricUnit(Metric m); // "ms", "tok/s"
    static bool lowerIsBetter(Metric m);
    static QList<Metric> metrics();

    // The tools' JSON: vLLM's --save-result object or one SGLang --output-file line (same key names).
    static std::optional<ServingResult> fromToolJson(const QJsonObject &o, QString *error = nullptr);
    // The last JSON object line of an SGLang --output-file (it appends one line per run).
    static std::optional<ServingResult> fromJsonLines(const QByteArray &text, QString *error = nullptr);
    // The printed "============ Serving Benchmark Result ============" block (vLLM and SGLang).
    static std::optional<ServingResult> fromPrintedBlock(const QString &text, QString *error = nullptr);

    QJsonObject toJson() const; // moetune's own record (the tool's key names)
    static ServingResult fromJson(const QJsonObject &o);
};

} // namespace moetune
