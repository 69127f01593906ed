// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/serving/servingresult.h"

#include <QJsonDocument>
#include <QList>
#include <QRegularExpression>
#include <QStringList>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

double num(const QJsonObject &o, const char *key) {
    const QJsonValue v = o.value(QLatin1StringView(key));
    return v.isDouble() ? v.toDouble() : NAN;
}

void putNum(QJsonObject &o, const char *key, double v) {
    if (std::isfinite(v))
        o.insert(QLatin1StringView(key), v);
}

} // namespace

double ServingResult::value(Metric m) const {
    switch (m) {
    case Metric::TtftMedian:
        return medianTtftMs;
    case Metric::TpotMedian:
        return medianTpotMs;
    case Metric::OutputThroughput:
        return outputThroughput;
    }
    return NAN;
}

bool ServingResult::hasCoreMetrics() const {
    for (Metric m : metrics()) {
        if (!std::isfinite(value(m)))
            return false;
    }
    return true;
}

QString ServingResult::problem(int numPrompts) const {
    const QString where = concurrency > 0 ? u" at concurrency %1"_s.arg(concurrency) : QString();
    if (failed > 0)
        return u"%1 of %2 requests failed%3: the benchmark did not succeed, so it measured no speed."_s
            .arg(failed)
            .arg(failed + completed)
            .arg(where);
    if (completed <= 0)
        return u"The benchmark completed no request%1: the server did not answer."_s.arg(where);
    if (numPrompts > 0 && completed < numPrompts)
        return u"Only %1 of the %2 requests asked for completed%3: not a full run, so no result."_s
            .arg(completed)
            .arg(numPrompts)
            .arg(where);
    for (Metric m : metrics()) {
        const double v = value(m);
        if (!std::isfinite(v) || v <= 0)
            return u"The benchmark reported %1 = %2%3: a speed must be a positive figure, so no result."_s
                .arg(metricName(m), std::isfinite(v) ? QString::number(v) : u"nothing"_s, where);
    }
    return {};
}

QList<ServingResult::Metric> ServingResult::metrics() {
    return {Metric::TtftMedian, Metric::TpotMedian, Metric::OutputThroughput};
}

QString ServingResult::metricId(Metric m) {
    switch (m) {
    case Metric::TtftMedian:
        return u"median_ttft_ms"_s;
    case Metric::TpotMedian:
        return u"median_tpot_ms"_s;
    case Metric::OutputThroughput:
        return u"output_throughput"_s;
    }
    return {};
}

QString ServingResult::metricName(Metric m) {
    switch (m) {
    case Metric::TtftMedian:
        return u"median TTFT"_s;
    case Metric::TpotMedian:
        return u"median TPOT"_s;
    case Metric::OutputThroughput:
        return u"output throughput"_s;
    }
    return {};
}

QString ServingResult::metricUnit(Metric m) {
    return m == Metric::OutputThroughput ? u"tok/s"_s : u"ms"_s;
}

bool ServingResult::lowerIsBetter(Metric m) {
    return m != Metric::OutputThroughput;
}

std::optional<ServingResult> ServingResult::fromToolJson(const QJsonObject &o, QString *error) {
    ServingResult r;
    r.completed = o.value("completed"_L1).toInt(0);
    // vLLM records failures as a count of errors; SGLang does not write one.
    r.failed = o.contains("failed"_L1) ? o.value("failed"_L1).toInt() : 0;
    r.durationS = num(o, "duration");
    r.requestThroughput = num(o, "request_throughput");
    r.outputThroughput = num(o, "output_throughput");
    r.meanTtftMs = num(o, "mean_ttft_ms");
    r.medianTtftMs = num(o, "median_ttft_ms");
    r.p99TtftMs = num(o, "p99_ttft_ms");
    r.meanTpotMs = num(o, "mean_tpot_ms");
    r.medianTpotMs = num(o, "median_tpot_ms");
    r.medianItlMs = num(o, "median_itl_ms");
    r.concurrency = o.value("max_concurrency"_L1).toInt(0);
    r.simulated = o.value("simulated"_L1).toBool(false);
    if (!r.hasCoreMetrics()) {
        if (error)
            *error = u"The benchmark's JSON has no median_ttft_ms, median_tpot_ms or output_throughput."_s;
        return std::nullopt;
    }
    return r;
}

std::optional<ServingResult> ServingResult::fromJsonLines(const QByteArray &text, QString *error) {
    const QList<QByteArray> lines = text.split('\n');
    for (auto it = lines.crbegin(); it != lines.crend(); ++it) {
        const QByteArray line = it->trimmed();
        if (line.isEmpty())
            continue;
        QJsonParseError pe{};
        const QJsonDocument doc = QJsonDocument::fromJson(line, &pe);
        if (doc.isObject())
            return fromToolJson(doc.object(), error);
        // vLLM writes one indented object, not a line: try the whole text once.
        const QJsonDocument whole = QJsonDocument::fromJson(text, &pe);
        if (whole.isObject())
            return fromToolJson(whole.object(), error);
        if (error)
            *error = u"The benchmark's result file is not JSON: %1"_s.arg(pe.errorString());
        return std::nullopt;
    }
    if (error)
        *error = u"The benchmark's result file is empty."_s;
    return std::nullopt;
}

std::optional<ServingResult> ServingResult::fromPrintedBlock(const QString &text, QString *error) {
    const qsizetype start = text.lastIndexOf(u"Serving Benchmark Result"_s);
    if (start < 0) {
        if (error)
            *error = u"The benchmark printed no \"Serving Benchmark Result\" block."_s;
        return std::nullopt;
    }
    ServingResult r;
    r.simulated = QStringView(text).mid(start).contains(u"SIMULATED"_s); // a practice double says so
    static const QRegularExpression line(u"^\\s*([^:\\n]+?):\\s*([-+0-9.eE]+|inf|nan)\\s*$"_s,
                                         QRegularExpression::MultilineOption);
    auto it = line.globalMatch(QStringView(text).mid(start));
    while (it.hasNext()) {
        const auto m = it.next();
        const QString key = m.captured(1).trimmed();
        bool ok = false;
        const double v = m.captured(2).toDouble(&ok);
        if (!ok)
            continue;
        if (key == "Successful requests"_L1)
            r.completed = int(v);
        else if (key == "Failed requests"_L1)
            r.failed = int(v);
        else if (key.startsWith(u"Benchmark duration"_s))
            r.durationS = v;
        else if (key == "Request throughput (req/s)"_L1)
            r.requestThroughput = v;
        else if (key == "Output token throughput (tok/s)"_L1)
            r.outputThroughput = v;
        else if (key == "Mean TTFT (ms)"_L1)
            r.meanTtftMs = v;
        else if (key == "Median TTFT (ms)"_L1)
            r.medianTtftMs = v;
        else if (key == "P99 TTFT (ms)"_L1)
            r.p99TtftMs = v;
        else if (key == "Mean TPOT (ms)"_L1)
            r.meanTpotMs = v;
        else if (key == "Median TPOT (ms)"_L1)
            r.medianTpotMs = v;
        else if (key == "Median ITL (ms)"_L1)
            r.medianItlMs = v;
        else if (key == "Max request concurrency"_L1 || key == "Maximum request concurrency"_L1)
            r.concurrency = int(v);
    }
    if (!r.hasCoreMetrics()) {
        if (error)
            *error = u"The benchmark's result block lacks Median TTFT, Median TPOT or Output token "
                     u"throughput."_s;
        return std::nullopt;
    }
    return r;
}

QJsonObject ServingResult::toJson() const {
    QJsonObject o{{"max_concurrency"_L1, concurrency}, {"completed"_L1, completed}, {"failed"_L1, failed}};
    putNum(o, "duration", durationS);
    putNum(o, "request_throughput", requestThroughput);
    putNum(o, "output_throughput", outputThroughput);
    putNum(o, "mean_ttft_ms", meanTtftMs);
    putNum(o, "median_ttft_ms", medianTtftMs);
    putNum(o, "p99_ttft_ms", p99TtftMs);
    putNum(o, "mean_tpot_ms", meanTpotMs);
    putNum(o, "median_tpot_ms", medianTpotMs);
    putNum(o, "median_itl_ms", medianItlMs);
    if (simulated)
        o.insert("simulated"_L1, true);
    return o;
}

ServingResult ServingResult::fromJson(const QJsonObject &o) {
    QString ignored;
    ServingResult r = fromToolJson(o, &ignored).value_or(ServingResult{});
    if (!r.hasCoreMetrics()) { // keep what there is
        r.medianTtftMs = num(o, "median_ttft_ms");
        r.medianTpotMs = num(o, "median_tpot_ms");
        r.outputThroughput = num(o, "output_throughput");
    }
    r.concurrency = o.value("max_concurrency"_L1).toInt(0);
    r.completed = o.value("completed"_L1).toInt(0);
    r.failed = o.value("failed"_L1).toInt(0);
    r.simulated = o.value("simulated"_L1).toBool(false);
    return r;
}

} // namespace moetune
