// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/push/pushproof.h"

#include "core/moe/configname.h"

#include <QFile>
#include <QJsonArray>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

bool aboutPushed(const Finding &f, const QList<ConfigName> &pushed) {
    if (!f.target)
        return false;
    for (const ConfigName &p : pushed) {
        if (f.target->name.sameShape(p))
            return true;
    }
    return false;
}

void addUnique(QStringList &list, const QStringList &items) {
    for (const QString &s : items) {
        if (!list.contains(s))
            list.append(s);
    }
}

} // namespace

PushProof PushProof::compare(const Diagnosis &before, const Diagnosis &after,
                             const QStringList &pushedTargets, const QString &afterLogPath) {
    PushProof p;
    p.pushedTargets = pushedTargets;
    QList<ConfigName> pushed;
    for (const QString &t : pushedTargets) {
        if (auto n = ConfigName::parse(t))
            pushed.append(*n);
    }
    for (const Finding &f : before.findings) {
        if (f.severity >= Severity::Warning && aboutPushed(f, pushed)) {
            ++p.findingsBefore;
            QStringList ranks = f.sources;
            ranks.removeAll(u"probe"_s); // a listing of the host's folders, not a rank of the server
            addUnique(p.ranksBefore, ranks);
        }
    }
    for (const Finding &f : after.findings) {
        if (f.severity >= Severity::Warning && aboutPushed(f, pushed))
            p.remaining.append({f.id, f.title, f.sources, f.occurrences});
    }
    p.afterLogEmpty = after.linesRead == 0;
    // The INFO line of a hit names the file the server loaded (docs/servers.md section 8: one per rank).
    QFile log(afterLogPath);
    if (!pushedTargets.isEmpty() && !afterLogPath.isEmpty() && log.open(QIODevice::ReadOnly)) {
        static const QRegularExpression rank(u"\\b(TP\\d+)\\]"_s);
        while (!log.atEnd()) {
            const QString line = QString::fromUtf8(log.readLine(1 << 20));
            if (!line.contains(u"Using MoE kernel config from "_s) &&
                !line.contains(u"Using configuration from "_s))
                continue;
            for (const QString &t : pushedTargets) {
                if (line.contains(t)) {
                    const auto m = rank.match(line);
                    addUnique(p.ranksUsing, {m.hasMatch() ? m.captured(1) : u"main"_s});
                }
            }
        }
    }
    return p;
}

QString PushProof::summary() const {
    if (afterLogEmpty)
        return u"The server wrote no log since the restart: nothing is proven yet."_s;
    if (warningGone()) {
        QString s = u"The warning for this shape is gone on every rank"_s;
        if (!ranksBefore.isEmpty())
            s += u" (%1 before)"_s.arg(ranksBefore.join(u", "_s));
        if (!ranksUsing.isEmpty())
            s += u"; the server uses the pushed file on %1"_s.arg(ranksUsing.join(u", "_s));
        return s + u'.';
    }
    QStringList parts;
    for (const Remaining &r : remaining)
        parts.append(u"%1 (%2)"_s.arg(r.title, r.sources.join(u", "_s)));
    return u"Still reported after the restart: "_s + parts.join(u"; "_s) + u'.';
}

QJsonObject PushProof::toJson() const {
    QJsonArray rem;
    for (const Remaining &r : remaining)
        rem.append(QJsonObject{{"id"_L1, r.findingId},
                               {"title"_L1, r.title},
                               {"sources"_L1, QJsonArray::fromStringList(r.sources)},
                               {"occurrences"_L1, r.occurrences}});
    return QJsonObject{{"warning_gone"_L1, warningGone()},
                       {"summary"_L1, summary()},
                       {"pushed_targets"_L1, QJsonArray::fromStringList(pushedTargets)},
                       {"ranks_before"_L1, QJsonArray::fromStringList(ranksBefore)},
                       {"findings_before"_L1, findingsBefore},
                       {"ranks_using"_L1, QJsonArray::fromStringList(ranksUsing)},
                       {"after_log_empty"_L1, afterLogEmpty},
                       {"remaining"_L1, rem}};
}

} // namespace moetune
