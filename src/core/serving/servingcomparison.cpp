// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/serving/servingcomparison.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString fig(double v) {
    return std::isfinite(v) ? QString::number(v, 'f', v >= 100 ? 1 : 2) : u"n/a"_s;
}

QString num(double v, int decimals = 1) {
    return QString::number(v, 'f', decimals);
}

QString concurrencyList(const ServingWorkload &w) {
    QStringList cs;
    for (int c : w.concurrencies)
        cs.append(QString::number(c));
    return cs.join(u", "_s);
}

} // namespace

QString ServingComparison::pct(double v) {
    return std::isfinite(v) ? u"%1%2%"_s.arg(v >= 0 ? u"+"_s : QString()).arg(v, 0, 'f', 1) : u"n/a"_s;
}

const ServingResult *ServingComparison::Leg::at(int concurrency) const {
    for (const ServingResult &r : results) {
        if (r.concurrency == concurrency)
            return &r;
    }
    return nullptr;
}

QString ServingComparison::Leg::problem(const ServingWorkload &w) const {
    if (!error.isEmpty())
        return error;
    for (int c : w.concurrencies) {
        const ServingResult *r = at(c);
        if (!r)
            return u"The leg has no benchmark run at concurrency %1."_s.arg(c);
        if (QString p = r->problem(w.numPrompts); !p.isEmpty())
            return p;
    }
    return {};
}

QString ServingComparison::legOrder(int pairs, bool rigorous) {
    if (!rigorous)
        return u"AB"_s;
    QString s;
    for (int i = 0; i < qMax(1, pairs); ++i)
        s += i % 2 ? u"BA"_s : u"AB"_s;
    return s;
}

ServingResult::Metric ServingComparison::primaryMetric(const ServingWorkload &w) {
    if (w.preset == "decode"_L1)
        return ServingResult::Metric::TpotMedian;
    if (w.preset == "prefill"_L1)
        return ServingResult::Metric::TtftMedian;
    if (w.preset == "standard"_L1)
        return ServingResult::Metric::OutputThroughput;
    return w.inputLen >= 4 * w.outputLen ? ServingResult::Metric::TtftMedian
                                         : ServingResult::Metric::TpotMedian;
}

QList<double> ServingComparison::values(QChar arm, int concurrency, ServingResult::Metric m) const {
    QList<double> out;
    for (const Leg &l : legs) {
        if (l.arm != arm || !l.problem(workload).isEmpty())
            continue;
        if (const ServingResult *r = l.at(concurrency))
            out.append(r->value(m));
    }
    return out;
}

QList<QPair<int, int>> ServingComparison::legPairs() const {
    QList<QPair<int, int>> out;
    for (int i = 0; i + 1 < legs.size(); i += 2) { // legs i and i + 1 are one pair
        const Leg &x = legs[i];
        const Leg &y = legs[i + 1];
        if (x.arm == y.arm || !x.problem(workload).isEmpty() || !y.problem(workload).isEmpty())
            continue;
        out.append(x.arm == u'A' ? QPair<int, int>(i, i + 1) : QPair<int, int>(i + 1, i));
    }
    return out;
}

ServingChange ServingComparison::primaryChange() const {
    const ServingResult::Metric m = primary();
    QList<double> d;
    QList<double> a;
    QList<double> b;
    for (const auto &[ia, ib] : legPairs()) {
        double sum = 0;
        int n = 0;
        for (int c : workload.concurrencies) {
            const ServingResult *ra = legs[ia].at(c);
            const ServingResult *rb = legs[ib].at(c);
            const double va = ra ? ra->value(m) : NAN;
            const double vb = rb ? rb->value(m) : NAN;
            if (!(va > 0) || !(vb > 0) || !std::isfinite(va) || !std::isfinite(vb))
                continue;
            sum += std::log(vb / va);
            ++n;
        }
        if (n == int(workload.concurrencies.size()) && n > 0)
            d.append(sum / n);
    }
    ServingChange c = ServingChange::fromLogRatios(d, primaryLevel());
    c.legsA = c.legsB = c.pairs;
    if (workload.concurrencies.size() == 1) { // one concurrency: the medians mean something
        for (const auto &[ia, ib] : legPairs()) {
            a.append(legs[ia].at(workload.concurrencies.first())->value(m));
            b.append(legs[ib].at(workload.concurrencies.first())->value(m));
        }
        c.medianA = ServingChange::median(a);
        c.medianB = ServingChange::median(b);
    }
    return c;
}

ServingComparison::Row ServingComparison::primaryRow() const {
    Row r;
    r.primary = true;
    r.metric = primary();
    r.change = primaryChange();
    r.outcome = r.change.outcome(ServingResult::lowerIsBetter(r.metric), minEffectPct);
    return r;
}

int ServingComparison::looks() const {
    if (!adaptive || !rigorous)
        return 1;
    return qMax(1, pairs / 2 + pairs % 2); // 2, 4, ... and the cap when it is odd
}

double ServingComparison::primaryLevel() const {
    return 1.0 - (1.0 - kLevel) / looks();
}

double ServingComparison::secondaryLevel() const {
    const qsizetype m = workload.concurrencies.size() * ServingResult::metrics().size();
    return 1.0 - (1.0 - kLevel) / double(looks() * qMax<qsizetype>(1, m));
}

QString ServingComparison::levelText(double level) {
    return QString::number(level * 100, 'g', 4) + u'%';
}

QList<ServingComparison::Row> ServingComparison::rows() const {
    QList<Row> out{primaryRow()};
    const QList<QPair<int, int>> ps = legPairs();
    const double level = secondaryLevel();
    for (int c : workload.concurrencies) {
        for (ServingResult::Metric m : ServingResult::metrics()) {
            QList<double> a;
            QList<double> b;
            for (const auto &[ia, ib] : ps) {
                const ServingResult *ra = legs[ia].at(c);
                const ServingResult *rb = legs[ib].at(c);
                a.append(ra ? ra->value(m) : NAN);
                b.append(rb ? rb->value(m) : NAN);
            }
            Row r;
            r.concurrency = c;
            r.metric = m;
            r.change = ServingChange::paired(a, b, level);
            r.outcome = r.change.outcome(ServingResult::lowerIsBetter(m), minEffectPct);
            out.append(r);
        }
    }
    return out;
}

QString ServingComparison::adaptiveStop() const {
    const int done = completePairs();
    if (!adaptive || done < 2 || legs.size() % 2 || (done % 2 && done < pairs))
        return {};
    const ServingChange p = primaryChange();
    if (p.hasInterval() && p.highPct - p.lowPct <= marginPct)
        return u"Adaptive: stopped after %1 pairs, the %2 interval (%3 to %4) being narrower than the "
               u"margin of %5%."_s.arg(done)
                   .arg(levelText(p.level), pct(p.lowPct), pct(p.highPct))
                   .arg(marginPct);
    if (done >= pairs)
        return u"Adaptive: stopped at the cap of %1 pairs; the interval is still wider than the margin."_s
            .arg(done);
    return {};
}

QString ServingComparison::notMeasuredReason() const {
    if (!error.isEmpty())
        return error;
    for (qsizetype i = 0; i < legs.size(); ++i) {
        if (const QString p = legs[i].problem(workload); !p.isEmpty())
            return u"Leg %1 (%2): %3"_s.arg(i + 1).arg(legs[i].arm).arg(p);
    }
    bool anyA = false;
    for (const Leg &l : legs)
        anyA = anyA || l.arm == u'A';
    if (!anyA)
        return u"No benchmark finished: nothing was measured."_s;
    return {};
}

ServingComparison::Verdict ServingComparison::verdict() const {
    if (!notMeasuredReason().isEmpty())
        return Verdict::Failed;
    bool anyB = false;
    for (const Leg &l : legs)
        anyB = anyB || l.arm == u'B';
    if (!anyB)
        return Verdict::Unpaired;
    const Row p = primaryRow();
    if (!p.change.hasInterval())
        return Verdict::Inconclusive;
    if (p.outcome == ServingChange::Outcome::Better)
        return Verdict::Faster;
    if (p.outcome == ServingChange::Outcome::Worse)
        return Verdict::Slower;
    if (p.change.lowPct >= -marginPct && p.change.highPct <= marginPct)
        return Verdict::NoChange;
    return Verdict::Inconclusive;
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
    case Verdict::Inconclusive:
        return u"inconclusive"_s;
    }
    return {};
}

QString ServingComparison::verdictName(Verdict v) {
    switch (v) {
    case Verdict::Faster:
        return u"Faster"_s;
    case Verdict::NoChange:
        return u"No change"_s;
    case Verdict::Slower:
        return u"Slower"_s;
    case Verdict::Failed:
        return u"Not measured"_s;
    case Verdict::Unpaired:
        return u"Benchmark"_s;
    case Verdict::Inconclusive:
        return u"Inconclusive"_s;
    }
    return {};
}

QString ServingComparison::verdictSentence() const {
    const Verdict v = verdict();
    if (v == Verdict::Failed)
        return u"Not measured: "_s + notMeasuredReason() + u" No verdict: nothing is compared."_s;
    if (v == Verdict::Unpaired) {
        QStringList parts;
        for (int c : workload.concurrencies) {
            const auto t = ServingChange::median(values(u'A', c, ServingResult::Metric::TpotMedian));
            const auto f = ServingChange::median(values(u'A', c, ServingResult::Metric::TtftMedian));
            const auto x = ServingChange::median(values(u'A', c, ServingResult::Metric::OutputThroughput));
            parts.append(
                u"concurrency %1: TTFT %2 ms, TPOT %3 ms, %4 tok/s"_s.arg(c).arg(fig(f), fig(t), fig(x)));
        }
        return u"Benchmark: the server as it is%1: "_s.arg(servingSimulated ? u" (SIMULATED figures)"_s
                                                                            : QString()) +
               parts.join(u"; "_s) + u'.';
    }
    const Row p = primaryRow();
    const QString metric = ServingResult::metricName(p.metric);
    const QString where = workload.concurrencies.size() == 1
                              ? u"at concurrency %1"_s.arg(workload.concurrencies.first())
                              : u"over concurrency %1"_s.arg(concurrencyList(workload));
    const QString sim = servingSimulated ? u" (SIMULATED serving figures, not a measurement)"_s : QString();
    const QString interval = u"%1 interval %2 to %3, %4 pairs"_s
                                 .arg(levelText(p.change.level), pct(p.change.lowPct), pct(p.change.highPct))
                                 .arg(p.change.pairs);
    if (v == Verdict::Inconclusive && !p.change.hasInterval())
        return u"Inconclusive: one pair of boots (%1 %2 %3) gives no interval; servers vary a few percent "
               u"between boots, so a verdict needs the rigorous mode (2 or more order-balanced pairs)%4."_s
                   .arg(metric, pct(p.change.changePct), where, sim);
    if (v == Verdict::Faster || v == Verdict::Slower) {
        QString s = u"%1: %2 %3 %4 (%5; p = %6), the primary metric of this workload%7."_s.arg(
            verdictName(v), metric, pct(p.change.changePct), where, interval,
            QString::number(p.change.pValue, 'g', 2), sim);
        if (v == Verdict::Slower)
            s += u" The pushed files made the server slower here: Undo push puts back the old ones."_s;
        return s;
    }
    if (v == Verdict::NoChange)
        return u"No change larger than %1% (%2 of %3 %4: %5)%6."_s.arg(
            num(marginPct, marginPct < 10 ? 1 : 0), interval, metric, where, pct(p.change.changePct), sim);
    return u"Inconclusive: the interval %1 to %2 (%3 %4, %5 pairs) is wider than the margin of %6%%7."_s
        .arg(pct(p.change.lowPct), pct(p.change.highPct), metric, where)
        .arg(p.change.pairs)
        .arg(u"\u00b1"_s + num(marginPct, marginPct < 10 ? 1 : 0), sim);
}

QString ServingComparison::sensitivitySentence() const {
    if (verdict() == Verdict::Failed)
        return {};
    const ServingChange p = primaryChange();
    if (p.pairs < 2 || !std::isfinite(p.sdLog))
        return {};
    const int n = rigorous ? qMax(pairs, p.pairs) : p.pairs;
    const double see = ServingChange::detectablePct(p.sdLog, n);
    const double noise = std::expm1(p.sdLog) * 100.0;
    QString s = u"At this server's boot-to-boot noise (the pairs' %1 ratios spread by %2%), %3 pairs can "
                u"tell about %4%"_s.arg(ServingResult::metricName(primary()), num(noise))
                    .arg(n)
                    .arg(num(see));
    const double want = qMin(marginPct / 2.0, see / 2.0);
    if (want >= minEffectPct && see > want) {
        const int need = ServingChange::pairsToDetect(p.sdLog, want, 64);
        s += need > 0 ? u"; %1% needs about %2 pairs"_s.arg(num(want)).arg(need)
                      : u"; %1% needs more than 64 pairs"_s.arg(num(want));
    }
    return s + u" (80% power, 95% test)."_s;
}

QStringList ServingComparison::manualCommands() const {
    QStringList out;
    for (int c : workload.concurrencies)
        out.append(bench.manualCommand(workload, c));
    return out;
}

QString ServingComparison::text() const {
    const QString mode =
        !rigorous ? u"one boot before, one after"_s
        : adaptive
            ? u"rigorous, adaptive: order-balanced pairs until the interval is narrower than the margin, at most %1"_s
                  .arg(pairs)
            : u"rigorous, %1 order-balanced pairs"_s.arg(pairs);
    QString s = u"Serving benchmark (%1) with %2 against %3%4\n  workload: %5\n  legs: %6\n"_s.arg(
        mode, bench.toolName(), bench.baseUrl(), bench.addressNote(), workload.summary(),
        legs.isEmpty() ? u"none"_s : QString(legOrder(int(legs.size() + 1) / 2, rigorous).left(legs.size())));
    if (configsSimulated)
        s += u"  the pushed configs are SIMULATED (synthetic backend)\n"_s;
    if (servingSimulated)
        s += u"  the serving figures are SIMULATED (a practice double of the tool, no server measured)\n"_s;
    const Verdict v = verdict();
    if (v == Verdict::Failed) {
        s += verdictSentence() + u'\n';
        if (!note.isEmpty())
            s += note + u'\n';
        return s;
    }
    if (v == Verdict::Unpaired) {
        for (int c : workload.concurrencies) {
            for (ServingResult::Metric m : ServingResult::metrics())
                s += u"  c=%1 %2: %3 %4\n"_s.arg(c).arg(ServingResult::metricName(m),
                                                        fig(ServingChange::median(values(u'A', c, m))),
                                                        ServingResult::metricUnit(m));
        }
        s += verdictSentence() + u'\n';
        return s;
    }
    s += u"  primary metric (declared by the %1 preset, decides the verdict): %2; margin \u00b1%3%, minimum "
         u"effect %4%\n"_s.arg(workload.preset, ServingResult::metricName(primary()), num(marginPct),
                               num(minEffectPct));
    const QList<Row> rs = rows();
    for (const Row &r : rs) {
        const QString interval = r.change.hasInterval()
                                     ? u" [%1: %2 .. %3]"_s.arg(levelText(r.change.level),
                                                                pct(r.change.lowPct), pct(r.change.highPct))
                                     : QString();
        if (r.primary) {
            s += u"  PRIMARY %1 over concurrency %2: change %3%4, %5 pairs\n"_s.arg(
                ServingResult::metricName(r.metric), concurrencyList(workload), pct(r.change.changePct),
                interval, QString::number(r.change.pairs));
            s += u"  secondary (Bonferroni over %1 rows, they never decide):\n"_s.arg(rs.size() - 1);
            continue;
        }
        const QString unit = ServingResult::metricUnit(r.metric);
        s += u"  c=%1 %2: before %3 %4, after %5 %4, change %6%7\n"_s.arg(r.concurrency)
                 .arg(ServingResult::metricName(r.metric), fig(r.change.medianA), unit, fig(r.change.medianB),
                      pct(r.change.changePct), interval);
    }
    s += verdictSentence() + u'\n';
    if (const QString see = sensitivitySentence(); !see.isEmpty())
        s += see + u'\n';
    if (!stopReason.isEmpty())
        s += stopReason + u'\n';
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
                              {"problem"_L1, l.problem(workload)},
                              {"commands"_L1, QJsonArray::fromStringList(l.commands)}});
    }
    const Verdict v = verdict();
    QJsonArray changes;
    const auto n = [](double x) { return std::isfinite(x) ? QJsonValue(x) : QJsonValue(); };
    if (v != Verdict::Failed) {
        for (const Row &r : rows()) {
            changes.append(
                QJsonObject{{"primary"_L1, r.primary},
                            {"concurrency"_L1, r.concurrency},
                            {"metric"_L1, ServingResult::metricId(r.metric)},
                            {"median_before"_L1, n(r.change.medianA)},
                            {"median_after"_L1, n(r.change.medianB)},
                            {"change_pct"_L1, n(r.change.changePct)},
                            {"low_pct"_L1, n(r.change.lowPct)},
                            {"high_pct"_L1, n(r.change.highPct)},
                            {"level"_L1, r.change.level},
                            {"p_value"_L1, n(r.change.pValue)},
                            {"sd_log"_L1, n(r.change.sdLog)},
                            {"pairs"_L1, r.change.pairs},
                            {"outcome"_L1, r.outcome == ServingChange::Outcome::Better  ? u"better"_s
                                           : r.outcome == ServingChange::Outcome::Worse ? u"worse"_s
                                                                                        : u"no-change"_s}});
        }
    }
    return QJsonObject{
        {"format"_L1, u"moetune-serving"_s},
        {"version"_L1, 2},
        {"workload"_L1, workload.toJson()},
        {"bench"_L1, bench.toJson()},
        {"rigorous"_L1, rigorous},
        {"pairs"_L1, pairs},
        {"adaptive"_L1, adaptive},
        {"margin_pct"_L1, marginPct},
        {"min_effect_pct"_L1, minEffectPct},
        {"stop_reason"_L1, stopReason},
        {"primary_metric"_L1, ServingResult::metricId(primary())},
        {"run_id"_L1, runId},
        {"configs_simulated"_L1, configsSimulated},
        {"serving_simulated"_L1, servingSimulated},
        {"legs"_L1, ls},
        {"changes"_L1, changes},
        {"interval"_L1, u"Student t on the per-pair log ratios ln(after / before), n - 1 degrees of freedom; "
                        u"primary %1 (%2 look(s)), secondary Bonferroni %3"_s.arg(levelText(primaryLevel()))
                            .arg(looks())
                            .arg(levelText(secondaryLevel()))},
        {"verdict"_L1, verdictId(v)},
        {"verdict_text"_L1, verdictSentence()},
        {"sensitivity"_L1, sensitivitySentence()},
        {"manual_commands"_L1, QJsonArray::fromStringList(manualCommands())},
        {"error"_L1, error},
        {"not_measured"_L1, v == Verdict::Failed ? notMeasuredReason() : QString()},
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
    c.adaptive = o.value("adaptive"_L1).toBool();
    c.marginPct = o.value("margin_pct"_L1).toDouble(kDefaultMarginPct);
    c.minEffectPct = o.value("min_effect_pct"_L1).toDouble(kDefaultMinEffectPct);
    c.stopReason = o.value("stop_reason"_L1).toString();
    c.runId = o.value("run_id"_L1).toString();
    c.configsSimulated = o.value("configs_simulated"_L1).toBool();
    c.servingSimulated = o.value("serving_simulated"_L1).toBool();
    c.error = o.value("error"_L1).toString();
    c.note = o.value("note"_L1).toString();
    for (const QJsonValue lv : o.value("legs"_L1).toArray()) {
        const QJsonObject lo = lv.toObject();
        Leg l;
        l.arm = lo.value("arm"_L1).toString() == "B"_L1 ? u'B' : u'A';
        l.error = lo.value("error"_L1).toString();
        for (const QJsonValue cv : lo.value("commands"_L1).toArray())
            l.commands.append(cv.toString());
        for (const QJsonValue rv : lo.value("results"_L1).toArray()) {
            l.results.append(ServingResult::fromJson(rv.toObject()));
            c.servingSimulated = c.servingSimulated || l.results.last().simulated;
        }
        c.legs.append(l);
    }
    return c;
}

} // namespace moetune
