// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/push/pushrowmerge.h"

#include "core/host/hosttext.h"
#include "core/run/kernelconfigjson.h"

#include <QDateTime>
#include <QFileInfo>
#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

struct DecisionName {
    PushRowMerge::Decision decision;
    QLatin1StringView id;
};

constexpr DecisionName decisionNames[] = {
    {PushRowMerge::Decision::Kept, "kept"_L1},
    {PushRowMerge::Decision::Replaced, "replaced"_L1},
    {PushRowMerge::Decision::Added, "added"_L1},
    {PushRowMerge::Decision::KeptUnmeasured, "kept_unmeasured"_L1},
    {PushRowMerge::Decision::NotAdded, "not_added"_L1},
};

PushRowMerge::Decision decisionFromId(const QString &id) {
    for (const DecisionName &d : decisionNames) {
        if (id == d.id)
            return d.decision;
    }
    return PushRowMerge::Decision::Unknown;
}

QString decisionId(PushRowMerge::Decision d) {
    for (const DecisionName &n : decisionNames) {
        if (n.decision == d)
            return n.id;
    }
    return u"unknown"_s;
}

std::optional<double> number(const QJsonValue &v) {
    return v.isDouble() ? std::optional<double>(v.toDouble()) : std::nullopt;
}

std::optional<KernelConfig> config(const QJsonValue &v) {
    return v.isObject() ? KernelConfigJson::fromJson(v.toObject()) : std::nullopt;
}

QString us(std::optional<double> v) {
    return v ? QString::number(*v, 'f', 2) + u" us"_s : u"?"_s;
}

QString kList(const QList<int> &ks) {
    QStringList s;
    for (const int k : ks)
        s.append(u"K=%1"_s.arg(k));
    return s.join(u", "_s);
}

} // namespace

std::optional<PushRowMerge> PushRowMerge::fromEvent(const QJsonObject &event, QString *error) {
    const QJsonValue mv = event.value("merge"_L1);
    if (!mv.isObject()) {
        if (error)
            *error = u"The agent sent no row merge for %1 (an agent older than issue 20): deploy the "
                     u"matching agent."_s.arg(hostText(event.value("file_name"_L1).toString()));
        return std::nullopt;
    }
    const QJsonObject m = mv.toObject();
    PushRowMerge p;
    p.fileName = event.value("file_name"_L1).toString();
    p.target = event.value("target"_L1).toString();
    if (const auto name = ConfigName::parse(p.fileName))
        p.deviceName = name->deviceName;
    p.mode = m.value("mode"_L1).toString();
    p.oldSha256 = event.value("old_sha256"_L1).toString();
    p.baseline = m.value("baseline"_L1).toString();
    if (m.value("measured_default"_L1).isBool())
        p.measuredDefault = m.value("measured_default"_L1).toBool();
    p.note = m.value("note"_L1).toString();
    for (const QJsonValue v : m.value("rows"_L1).toArray()) {
        const QJsonObject r = v.toObject();
        if (!r.value("m"_L1).isDouble() || r.value("m"_L1).toInt() <= 0) {
            if (error)
                *error = u"The agent's row merge for %1 has a row without a batch size."_s.arg(
                    hostText(p.fileName));
            return std::nullopt;
        }
        Row row;
        row.m = r.value("m"_L1).toInt();
        row.decision = decisionFromId(r.value("decision"_L1).toString());
        row.gain = number(r.value("gain"_L1));
        row.defaultUs = number(r.value("default_us"_L1));
        row.tunedUs = number(r.value("tuned_us"_L1));
        row.rounds = r.value("rounds"_L1).toInt();
        row.h2hDecision = r.value("h2h_decision"_L1).toString();
        row.oldConfig = config(r.value("old"_L1));
        row.newConfig = config(r.value("new"_L1));
        row.note = r.value("note"_L1).toString();
        for (const QJsonValue k : r.value("unmeasured_k"_L1).toArray())
            row.unmeasuredK.append(k.toInt());
        const QJsonArray serves = r.value("serves"_L1).toArray();
        if (serves.size() == 2) {
            row.servesFrom = serves.at(0).toInt();
            row.servesTo = serves.at(1).toInt(); // null: every larger M
        }
        p.rows.append(row);
    }
    for (const QJsonValue v : m.value("other_k"_L1).toArray()) {
        const QJsonObject o = v.toObject();
        if (o.value("K"_L1).toInt() > 0)
            p.otherK.append({o.value("K"_L1).toInt(), o.value("source"_L1).toString()});
    }
    for (const QJsonValue v : m.value("siblings"_L1).toArray())
        p.siblings.append(v.toObject().value("file_name"_L1).toString());
    return p;
}

void PushRowMerge::addOtherK(const OtherK &other) {
    for (const OtherK &o : std::as_const(otherK)) {
        if (o.k == other.k)
            return;
    }
    otherK.append(other);
    for (Row &r : rows) {
        if ((r.decision == Decision::Replaced || r.decision == Decision::Added) &&
            !r.unmeasuredK.contains(other.k))
            r.unmeasuredK.append(other.k);
    }
}

void PushRowMerge::addServedK(const HostProbe &probe, Framework framework, int runK) {
    auto name = ConfigName::parse(fileName);
    if (!name || runK <= 0)
        return;
    name->down = false;
    for (const ServerProcess &s : probe.servers) {
        if (!s.serves(*name, framework) || s.shape->hiddenSize <= 0 || s.shape->hiddenSize == runK)
            continue;
        addOtherK({s.shape->hiddenSize,
                   u"the running server (pid %1) serves %2, hidden size %3"_s.arg(
                       QString::number(s.pid), s.modelPath, QString::number(s.shape->hiddenSize))});
    }
}

void PushRowMerge::markInstalledByRun(const PushHistory &history) {
    installedByRunAt = 0;
    if (oldSha256.isEmpty())
        return;
    for (const int i : history.notUndone()) { // oldest first: the newest match wins
        for (const PushRecord::File &f : history.pushes[i].files) {
            if (f.target == target && f.sha256 == oldSha256)
                installedByRunAt = history.pushes[i].pushedAt;
        }
    }
}

int PushRowMerge::count(Decision d) const {
    int n = 0;
    for (const Row &r : rows)
        n += r.decision == d ? 1 : 0;
    return n;
}

QString PushRowMerge::decisionText(Decision d) {
    switch (d) {
    case Decision::Kept:
        return u"kept"_s;
    case Decision::Replaced:
        return u"replaced"_s;
    case Decision::Added:
        return u"added"_s;
    case Decision::KeptUnmeasured:
        return u"kept, unmeasured"_s;
    case Decision::NotAdded:
        return u"not added"_s;
    case Decision::Unknown:
        break;
    }
    return u"unknown"_s;
}

QStringList PushRowMerge::lines() const {
    QStringList out;
    QStringList counts;
    // The file there is what this run pushed: its rows are the run's own, not unknown ones (issue 45).
    const bool ours = installedByRunAt > 0;
    const auto label = [ours](Decision d) {
        return ours && d == Decision::KeptUnmeasured ? u"already installed"_s : decisionText(d);
    };
    for (const Decision d : {Decision::Replaced, Decision::Added, Decision::Kept, Decision::KeptUnmeasured,
                             Decision::NotAdded}) {
        if (const int n = count(d))
            counts.append(u"%1 %2"_s.arg(n).arg(label(d)));
    }
    const QString name = hostText(fileName);
    QString head;
    if (ours)
        head =
            u"%1: already installed by this run (pushed %2): the file there is the one this run pushed"_s.arg(
                name, QDateTime::fromMSecsSinceEpoch(qint64(installedByRunAt * 1000.0))
                          .toString(u"yyyy-MM-dd HH:mm"_s));
    else if (mode == "merged"_L1)
        head = u"%1: merged row by row into the file there (%2)"_s.arg(name, hostText(note));
    else if (mode == "new"_L1)
        head = u"%1: a new file (no file at the target): every row from the run"_s.arg(name);
    else
        head = u"%1: %2"_s.arg(name, hostText(note));
    out.append(head + (counts.isEmpty() ? QString() : u": "_s + counts.join(u", "_s)));
    // A simulated run's gains are simulated, never measured (issue 40 item 8).
    const QString measured = simulated ? u"simulated"_s : u"measured"_s;
    // Only a merge timed this file's own row; a new file's rows were timed against the run's baseline,
    // called the server's default only when it was the built-in one.
    const QString against = mode == "merged"_L1   ? u"file's row"_s
                            : !baseline.isEmpty() ? hostText(baseline)
                                                  : u"the run's baseline"_s;
    if (mode != "merged"_L1 && !baseline.isEmpty())
        out.append(u"  baseline: %1"_s.arg(hostText(baseline)));
    for (const Row &r : rows) {
        QString line = u"  M=%1 %2 "_s.arg(r.m, -5).arg(label(r.decision), -16);
        const bool changes = r.decision == Decision::Replaced || r.decision == Decision::Added;
        if (r.decision == Decision::Kept) {
            line += u"%1: the file's row stays (%2, %3 rounds)"_s.arg(
                measured, r.h2hDecision.isEmpty() ? u"not beaten"_s : hostText(r.h2hDecision),
                QString::number(r.rounds));
        } else if (changes) {
            if (r.gain)
                line += u"%1%2% %3"_s.arg(*r.gain >= 1.0 ? u"+"_s : QString())
                            .arg((*r.gain - 1.0) * 100.0, 0, 'f', 1)
                            .arg(measured);
            else
                line += u"no gain %1"_s.arg(measured);
            line += u" (%1 %2, run's %3, %4 rounds)"_s
                        .arg(mode == "merged"_L1 ? against : u"baseline"_s, us(r.defaultUs), us(r.tunedUs))
                        .arg(r.rounds);
        }
        if (!r.note.isEmpty())
            line += (changes || r.decision == Decision::Kept ? u"; "_s : u"("_s) + hostText(r.note) +
                    (changes || r.decision == Decision::Kept ? QString() : u")"_s);
        if (!r.unmeasuredK.isEmpty())
            line += u" - NOT measured for %1"_s.arg(kList(r.unmeasuredK));
        out.append(line);
    }
    for (const OtherK &o : otherK) {
        out.append(u"  Warning: another model reads this file too: K=%1 (%2). A file name has no K: the rows "
                   u"this push replaces or adds were measured for the run's K only, not for K=%1 (marked "
                   u"per row). Tune that model's shape as well before relying on them."_s.arg(o.k)
                       .arg(hostText(o.source)));
    }
    const QString folder = hostText(QFileInfo(target).path());
    for (const QString &s : siblings) {
        const auto sib = ConfigName::parse(s);
        out.append(u"  Note: %1 also holds %2, for the device name %3: the server on %4 does not read it "
                   u"(it looks up %5 only)."_s.arg(folder, hostText(s),
                                                   hostText(sib ? sib->deviceName : QString()),
                                                   hostText(deviceName), name));
    }
    return out;
}

QJsonObject PushRowMerge::toJson() const {
    QJsonArray rs;
    for (const Row &r : rows) {
        QJsonArray ks;
        for (const int k : r.unmeasuredK)
            ks.append(k);
        rs.append(QJsonObject{
            {"m"_L1, r.m},
            {"decision"_L1, decisionId(r.decision)},
            {"gain"_L1, r.gain ? QJsonValue(*r.gain) : QJsonValue()},
            {"default_us"_L1, r.defaultUs ? QJsonValue(*r.defaultUs) : QJsonValue()},
            {"tuned_us"_L1, r.tunedUs ? QJsonValue(*r.tunedUs) : QJsonValue()},
            {"rounds"_L1, r.rounds},
            {"old"_L1, r.oldConfig ? QJsonValue(KernelConfigJson::toJson(*r.oldConfig)) : QJsonValue()},
            {"new"_L1, r.newConfig ? QJsonValue(KernelConfigJson::toJson(*r.newConfig)) : QJsonValue()},
            {"note"_L1, r.note},
            {"unmeasured_k"_L1, ks}});
    }
    QJsonArray ok;
    for (const OtherK &o : otherK)
        ok.append(QJsonObject{{"K"_L1, o.k}, {"source"_L1, o.source}});
    return QJsonObject{
        {"file_name"_L1, fileName},
        {"target"_L1, target},
        {"mode"_L1, mode},
        {"measured_default"_L1, measuredDefault ? QJsonValue(*measuredDefault) : QJsonValue()},
        {"note"_L1, note},
        {"rows"_L1, rs},
        {"other_k"_L1, ok},
        {"siblings"_L1, QJsonArray::fromStringList(siblings)},
        {"baseline"_L1, baseline},
        {"simulated"_L1, simulated},
        {"installed_by_run_at"_L1, installedByRunAt > 0 ? QJsonValue(installedByRunAt) : QJsonValue()}};
}

} // namespace moetune
