// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/serving/servingcomparison.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString pct(double v) {
    return std::isfinite(v) ? u"%1%2%"_s.arg(v >= 0 ? u"+"_s : QString()).arg(v, 0, 'f', 1) : u"n/a"_s;
}

QString fig(double v) {
    return std::isfinite(v) ? QString::number(v, 'f', v >= 100 ? 1 : 2) : u"n/a"_s;
}

} // namespace

const ServingResult *ServingComparison::Leg::at(int concurrency) const {
    for (const ServingResult &r : results) {
        if (r.concurrency == concurrency)
            return &r;
    }
    return nullptr;
}

QString ServingComparison::legOrder(int pairs, bool rigorous) {
    if (!rigorous)
        return u"AB"_s;
    QString s;
    for (int i = 0; i < qMax(1, pairs); ++i)
        s += i % 2 ? u"BA"_s : u"AB"_s;
    return s;
}

QList<double> ServingComparison::values(QChar arm, int concurrency, ServingResult::Metric m) const {
    QList<double> out;
    for (const Leg &l : legs) {
        if (l.arm != arm || !l.ok())
            continue;
        if (const ServingResult *r = l.at(concurrency))
            out.append(r->value(m));
    }
    return out;
}

QList<ServingComparison::Row> ServingComparison::rows() const {
    QList<Row> out;
    for (int c : workload.concurrencies) {
        for (ServingResult::Metric m : ServingResult::metrics()) {
            Row r;
            r.concurrency = c;
            r.metric = m;
            r.change = ServingChange::compute(values(u'A', c, m), values(u'B', c, m));
            r.outcome = r.change.outcome(ServingResult::lowerIsBetter(m));
            out.append(r);
        }
    }
    return out;
}

ServingComparison::Verdict ServingComparison::verdict() const {
    if (!error.isEmpty())
        return Verdict::Failed;
    bool anyB = false;
    bool anyA = false;
    for (const Leg &l : legs) {
        anyA = anyA || (l.arm == u'A' && l.ok());
        anyB = anyB || (l.arm == u'B' && l.ok());
    }
    if (!anyA)
        return Verdict::Failed;
    if (!anyB)
        return Verdict::Unpaired;
    bool better = false;
    for (const Row &r : rows()) {
        if (r.outcome == ServingChange::Outcome::Worse)
            return Verdict::Slower;
        better = better || r.outcome == ServingChange::Outcome::Better;
    }
    return better ? Verdict::Faster : Verdict::NoChange;
}

QString ServingComparison::verdictId(Verdict v) {
    switch (v) {
    case Verdict::Faster:
        return u"faster"_s;
    case Verdict::NoChange:
        return u"no-change"_s;
    case Verdict::Slower:
        return u"slower"_s;
    case Verdict::Failed:
        return u"failed"_s;
    case Verdict::Unpaired:
        return u"unpaired"_s;
    }
    return {};
}

QString ServingComparison::verdictName(Verdict v) {
    switch (v) {
    case Verdict::Faster:
        return u"Faster"_s;
    case Verdict::NoChange:
        return u"No measurable change"_s;
    case Verdict::Slower:
        return u"Slower"_s;
    case Verdict::Failed:
        return u"No result"_s;
    case Verdict::Unpaired:
        return u"Benchmark"_s;
    }
    return {};
}

QString ServingComparison::verdictSentence() const {
    const Verdict v = verdict();
    if (v == Verdict::Failed)
        return error.isEmpty() ? u"No benchmark finished: nothing to compare."_s : error;
    if (v == Verdict::Unpaired) {
        QStringList parts;
        for (int c : workload.concurrencies) {
            const auto t = ServingChange::median(values(u'A', c, ServingResult::Metric::TpotMedian));
            const auto f = ServingChange::median(values(u'A', c, ServingResult::Metric::TtftMedian));
            const auto x = ServingChange::median(values(u'A', c, ServingResult::Metric::OutputThroughput));
            parts.append(
                u"concurrency %1: TTFT %2 ms, TPOT %3 ms, %4 tok/s"_s.arg(c).arg(fig(f), fig(t), fig(x)));
        }
        return u"the server as it is: "_s + parts.join(u"; "_s) + u'.';
    }
    const QList<Row> rs = rows();
    // The row that decided: the largest change on the side of the verdict.
    const Row *decide = nullptr;
    const ServingChange::Outcome want = v == Verdict::Faster   ? ServingChange::Outcome::Better
                                        : v == Verdict::Slower ? ServingChange::Outcome::Worse
                                                               : ServingChange::Outcome::NoChange;
    for (const Row &r : rs) {
        if (r.outcome == want &&
            (!decide || std::abs(r.change.changePct) > std::abs(decide->change.changePct)))
            decide = &r;
    }
    const auto describe = [](const Row &r) {
        QString s =
            u"%1 %2 at concurrency %3"_s.arg(ServingResult::metricName(r.metric), pct(r.change.changePct))
                .arg(r.concurrency);
        if (r.change.hasInterval())
            s += u" (95% interval %1 to %2, %3+%4 legs)"_s.arg(pct(r.change.lowPct), pct(r.change.highPct))
                     .arg(r.change.legsA)
                     .arg(r.change.legsB);
        return s;
    };
    if (v == Verdict::Faster)
        return describe(*decide) + u'.';
    if (v == Verdict::Slower)
        return describe(*decide) +
               u". The pushed files made the server slower here: Undo push puts back the old ones."_s;
    bool intervals = false;
    for (const Row &r : rs)
        intervals = intervals || r.change.hasInterval();
    if (!intervals) {
        const Row *largest = nullptr;
        for (const Row &r : rs) {
            if (std::isfinite(r.change.changePct) &&
                (!largest || std::abs(r.change.changePct) > std::abs(largest->change.changePct)))
                largest = &r;
        }
        return u"one boot each (largest difference: %1) cannot tell a change from "
               u"the few percent servers vary between boots; the rigorous mode (order-balanced pairs, a "
               u"restart per leg) gives a 95% interval."_s.arg(largest ? describe(*largest) : u"none"_s);
    }
    return u"every metric's 95% interval includes 0."_s;
}

QStringList ServingComparison::manualCommands() const {
    QStringList out;
    for (int c : workload.concurrencies)
        out.append(bench.manualCommand(workload, c));
    return out;
}

QString ServingComparison::text() const {
    QString s = u"Serving benchmark (%1) with %2 against %3\n  workload: %4\n  legs: %5\n"_s.arg(
        rigorous ? u"rigorous, %1 order-balanced pairs"_s.arg(pairs) : u"one boot before, one after"_s,
        bench.toolName(), bench.baseUrl(), workload.summary(), legOrder(pairs, rigorous));
    if (configsSimulated)
        s += u"  the pushed configs are SIMULATED (synthetic backend)\n"_s;
    const bool paired = verdict() != Verdict::Unpaired;
    for (const Row &r : rows()) {
        if (!std::isfinite(r.change.medianA))
            continue;
        const QString unit = ServingResult::metricUnit(r.metric);
        if (paired)
            s += u"  c=%1 %2: before %3 %4, after %5 %4, change %6%7\n"_s.arg(r.concurrency)
                     .arg(ServingResult::metricName(r.metric), fig(r.change.medianA), unit,
                          fig(r.change.medianB), pct(r.change.changePct),
                          r.change.hasInterval()
                              ? u" [95%: %1 .. %2]"_s.arg(pct(r.change.lowPct), pct(r.change.highPct))
                              : QString());
        else
            s += u"  c=%1 %2: %3 %4\n"_s.arg(r.concurrency)
                     .arg(ServingResult::metricName(r.metric), fig(r.change.medianA), unit);
    }
    s += u"%1: %2\n"_s.arg(verdictName(verdict()), verdictSentence());
    if (!note.isEmpty())
        s += note + u'\n';
    return s;
}

QJsonObject ServingComparison::toJson() const {
    QJsonArray ls;
    for (const Leg &l : legs) {
        QJsonArray rs;
        for (const ServingResult &r : l.results)
            rs.append(r.toJson());
        ls.append(QJsonObject{{"arm"_L1, QString(l.arm)},
                              {"results"_L1, rs},
                              {"error"_L1, l.error},
                              {"commands"_L1, QJsonArray::fromStringList(l.commands)}});
    }
    QJsonArray changes;
    for (const Row &r : rows()) {
        const auto n = [](double v) { return std::isfinite(v) ? QJsonValue(v) : QJsonValue(); };
        changes.append(
            QJsonObject{{"concurrency"_L1, r.concurrency},
                        {"metric"_L1, ServingResult::metricId(r.metric)},
                        {"median_before"_L1, n(r.change.medianA)},
                        {"median_after"_L1, n(r.change.medianB)},
                        {"change_pct"_L1, n(r.change.changePct)},
                        {"low_pct"_L1, n(r.change.lowPct)},
                        {"high_pct"_L1, n(r.change.highPct)},
                        {"legs_before"_L1, r.change.legsA},
                        {"legs_after"_L1, r.change.legsB},
                        {"outcome"_L1, r.outcome == ServingChange::Outcome::Better  ? u"better"_s
                                       : r.outcome == ServingChange::Outcome::Worse ? u"worse"_s
                                                                                    : u"no-change"_s}});
    }
    return QJsonObject{{"format"_L1, u"moetune-serving"_s},
                       {"version"_L1, 1},
                       {"workload"_L1, workload.toJson()},
                       {"bench"_L1, bench.toJson()},
                       {"rigorous"_L1, rigorous},
                       {"pairs"_L1, pairs},
                       {"run_id"_L1, runId},
                       {"configs_simulated"_L1, configsSimulated},
                       {"legs"_L1, ls},
                       {"changes"_L1, changes},
                       {"interval"_L1, u"percentile bootstrap over legs, %1 resamples, seed %2"_s
                                           .arg(ServingChange::kResamples)
                                           .arg(ServingChange::kSeed)},
                       {"verdict"_L1, verdictId(verdict())},
                       {"verdict_text"_L1, verdictSentence()},
                       {"manual_commands"_L1, QJsonArray::fromStringList(manualCommands())},
                       {"error"_L1, error},
                       {"note"_L1, note}};
}

std::optional<ServingComparison> ServingComparison::fromJson(const QJsonObject &o, QString *err) {
    if (o.value("format"_L1).toString() != "moetune-serving"_L1) {
        if (err)
            *err = u"not a moetune serving benchmark (format \"moetune-serving\")"_s;
        return std::nullopt;
    }
    ServingComparison c;
    c.workload = ServingWorkload::fromJson(o.value("workload"_L1).toObject());
    c.bench = ServingBenchCommand::fromJson(o.value("bench"_L1).toObject());
    c.rigorous = o.value("rigorous"_L1).toBool();
    c.pairs = o.value("pairs"_L1).toInt(1);
    c.runId = o.value("run_id"_L1).toString();
    c.configsSimulated = o.value("configs_simulated"_L1).toBool();
    c.error = o.value("error"_L1).toString();
    c.note = o.value("note"_L1).toString();
    for (const QJsonValue lv : o.value("legs"_L1).toArray()) {
        const QJsonObject lo = lv.toObject();
        Leg l;
        l.arm = lo.value("arm"_L1).toString() == "B"_L1 ? u'B' : u'A';
        l.error = lo.value("error"_L1).toString();
        for (const QJsonValue cv : lo.value("commands"_L1).toArray())
            l.commands.append(cv.toString());
        for (const QJsonValue rv : lo.value("results"_L1).toArray())
            l.results.append(ServingResult::fromJson(rv.toObject()));
        c.legs.append(l);
    }
    return c;
}

} // namespace moetune
