// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/diagnosis.h"

#include <QHash>
#include <QSet>

#include "core/diagnosis/evidencegroups.h"
#include "core/diagnosis/moerule.h"

#include <QJsonArray>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace moetune {

QStringList findingJobKeys(const QList<Finding> &findings) {
    QStringList keys;
    keys.reserve(findings.size());
    // start -> install folder -> the job keys whose files go there
    QHash<int, QHash<QString, QSet<QString>>> folders;
    for (const Finding &f : findings) {
        QString key;
        if (f.target && f.target->isTunable() && f.target->needsTuning()) {
            key = QString::number(f.start) + u'\n' + f.target->shapeKey();
            folders[f.start][f.target->installFolder()].insert(key);
        }
        keys.append(key);
    }
    const QString folderRule = MoeRules::id(MoeRule::FolderNoConfig);
    for (qsizetype i = 0; i < findings.size(); ++i) {
        const Finding &f = findings.at(i);
        if (f.rule != folderRule || !f.id.startsWith(folderRule + u':'))
            continue;
        const QSet<QString> jobs = folders.value(f.start).value(f.id.mid(folderRule.size() + 1));
        if (jobs.size() == 1)
            keys[i] = *jobs.begin();
    }
    return keys;
}

int Diagnosis::count(Severity severity) const {
    int n = 0;
    for (const Finding &f : findings)
        n += f.severity == severity && isLatest(f) ? 1 : 0;
    return n;
}

Severity Diagnosis::worst() const {
    Severity w = Severity::Info;
    for (const Finding &f : findings) {
        if (isLatest(f))
            w = std::max(w, f.severity);
    }
    return w;
}

const Finding *Diagnosis::find(const QString &id) const {
    for (const Finding &f : findings) {
        if (f.id == id)
            return &f;
    }
    return nullptr;
}

namespace {

QString joinLines(const QList<qint64> &lines) {
    QStringList parts;
    for (qint64 l : lines)
        parts.append(QString::number(l));
    return parts.join(u", "_s);
}

} // namespace

QString Diagnosis::findingMarkdown(const Finding &f) const {
    QString md = u"### "_s + severityName(f.severity).toUpper() + u": "_s + f.title + u"\n\n"_s;
    if (!f.explanation.isEmpty())
        md += f.explanation + u"\n\n"_s;
    if (!f.advice.isEmpty())
        md += u"**Action:** "_s + f.advice + u"\n\n"_s;
    md += u"Seen "_s + QString::number(f.occurrences) + (f.occurrences == 1 ? u" time"_s : u" times"_s);
    if (!f.sources.isEmpty())
        md += u" on "_s + f.sources.join(u", "_s);
    md += u" (rule `"_s + f.rule + u"`).\n"_s;
    if (f.target) {
        const TuningTarget &t = *f.target;
        md += u"\n| Target | |\n|---|---|\n"_s;
        md += u"| Framework | "_s + frameworkName(t.framework) + u" |\n"_s;
        md += u"| Shape | "_s + t.shapeSummary() + u" |\n"_s;
        md += u"| Device | "_s + (t.name.deviceName.isEmpty() ? u"(empty)"_s : t.name.deviceName) + u" |\n"_s;
        if (t.tritonVersion)
            md += u"| Triton | "_s + t.tritonVersion->toString() + u" (folder "_s + t.tritonFolder +
                  (t.tritonFolderMissing ? u", missing on the host"_s
                                         : (t.noConfigLoaded ? u", nothing loaded from it"_s : QString())) +
                  u") |\n"_s;
        if (!t.fallbackFolder.isEmpty())
            md += u"| Fell back to | "_s + t.fallbackFolder + u" |\n"_s;
        md += u"| Up file | `"_s + t.upPath() + u"`"_s + (t.upMissing ? u" (missing)"_s : QString()) +
              (t.upFellBack ? u" (fell back)"_s : QString()) + u" |\n"_s;
        if (!t.downPath().isEmpty())
            md += u"| Down file | `"_s + t.downPath() + u"`"_s +
                  (t.downMissing ? u" (missing)"_s : QString()) +
                  (t.downFellBack ? u" (fell back)"_s : QString()) + u" |\n"_s;
    }
    if (!f.evidence.isEmpty()) {
        // The same line from 8 ranks is one line with a count: a pasted diagnosis stays readable.
        auto write = [&md](const QList<Evidence> &lines) {
            for (const EvidenceGroup &g : groupRankEvidence(lines)) {
                md += QString::number(g.first.line).rightJustified(7) + u": "_s + g.first.text + u'\n';
                if (g.lines.size() > 1)
                    md += u"         (x"_s + QString::number(g.lines.size()) +
                          u": the same line on other ranks at lines "_s +
                          (g.lines.size() <= 4
                               ? joinLines(g.lines.mid(1))
                               : QString::number(g.lines.at(1)) + u"-"_s + QString::number(g.lines.last())) +
                          u")\n"_s;
            }
        };
        md += u"\n```\n"_s;
        const qsizetype head = f.evidenceOmitted > 0
                                   ? qMin<qsizetype>(Finding::headEvidence, f.evidence.size())
                                   : f.evidence.size();
        write(f.evidence.mid(0, head));
        if (head < f.evidence.size() || f.evidenceOmitted > 0) {
            md += u"    ... "_s + QString::number(f.evidenceOmitted) +
                  (f.evidenceOmitted == 1 ? u" line left out\n"_s : u" lines left out\n"_s);
            write(f.evidence.mid(head));
        }
        md += u"```\n"_s;
    }
    return md;
}

QString Diagnosis::toMarkdown() const {
    QString md;
    writeMarkdown([&](const QString &piece) { md += piece; });
    return md;
}

void Diagnosis::writeMarkdown(const std::function<void(const QString &)> &sink) const {
    QString md = u"# moetune diagnosis\n\n**"_s + summary + u"**\n\n"_s;
    md += QString::number(linesRead) + u" lines, "_s + QString::number(bytesRead) + u" bytes read"_s +
          (cancelled ? u" (cancelled)"_s : QString()) + u"; "_s + QString::number(count(Severity::Error)) +
          u" errors, "_s + QString::number(count(Severity::Warning)) + u" warnings, "_s +
          QString::number(count(Severity::Info)) + u" info.\n"_s;
    if (!targets.isEmpty()) {
        md +=
            u"\n## Tuning targets\n\n| Framework | Shape | Device | Triton folder | Up | Down |\n|---|---|---|---|---|---|\n"_s;
        for (const TuningTarget &t : targets) {
            auto state = [](bool missing, bool fellBack) {
                return missing ? u"missing"_s : (fellBack ? u"fell back"_s : u"ok"_s);
            };
            md += u"| "_s + frameworkName(t.framework) + u" | "_s + t.shapeSummary() + u" | "_s +
                  t.name.deviceName + u" | "_s +
                  (t.tritonFolder.isEmpty()
                       ? u"-"_s
                       : t.tritonFolder + (t.tritonFolderMissing
                                               ? u" (missing on the host)"_s
                                               : (t.noConfigLoaded ? u" (nothing loaded)"_s : QString()))) +
                  u" | "_s + state(t.upMissing, t.upFellBack) + u" | "_s +
                  (t.downPath().isEmpty() ? u"-"_s : state(t.downMissing, t.downFellBack)) + u" |\n"_s;
        }
    }
    if (!findings.isEmpty()) {
        md += u"\n## Findings\n\n"_s;
        sink(md);
        md.clear();
        for (const Finding &f : findings)
            sink(findingMarkdown(f) + u'\n');
    }
    sink(md);
}

namespace {

QJsonObject findingJson(const Finding &f) {
    QJsonObject o;
    o.insert(u"id"_s, f.id);
    o.insert(u"rule"_s, f.rule);
    o.insert(u"severity"_s, severityName(f.severity));
    o.insert(u"title"_s, f.title);
    o.insert(u"explanation"_s, f.explanation);
    o.insert(u"advice"_s, f.advice);
    o.insert(u"occurrences"_s, f.occurrences);
    o.insert(u"sources"_s, QJsonArray::fromStringList(f.sources));
    QJsonArray ev;
    for (const Evidence &e : f.evidence)
        ev.append(QJsonObject{{u"line"_s, e.line},
                              {u"text"_s, e.text},
                              {u"match_start"_s, e.matchStart},
                              {u"match_length"_s, e.matchLength}});
    o.insert(u"evidence"_s, ev);
    o.insert(u"evidence_omitted"_s, f.evidenceOmitted);
    o.insert(u"start"_s, f.start);
    o.insert(u"target"_s, f.target ? QJsonValue(f.target->toJson()) : QJsonValue());
    return o;
}

QJsonArray moeKernelsJson(const QList<MoeKernelUse> &uses) {
    QJsonArray out;
    for (const MoeKernelUse &u : uses)
        out.append(QJsonObject{{u"backend"_s, u.backend},
                               {u"scheme"_s, u.scheme.isEmpty() ? QJsonValue() : QJsonValue(u.scheme)},
                               {u"kernel"_s, u.kernel},
                               {u"triton_configs"_s, MoeBackend::configsName(u.configs)},
                               {u"line"_s, u.line}});
    return out;
}

// Everything but the two long lists, which are written empty.
QJsonObject headJson(const Diagnosis &d) {
    QJsonObject root;
    root.insert(u"schema"_s, u"moetune.diagnosis/1"_s);
    root.insert(u"summary"_s, d.summary);
    root.insert(u"bytes_read"_s, d.bytesRead);
    root.insert(u"lines_read"_s, d.linesRead);
    root.insert(u"cancelled"_s, d.cancelled);
    root.insert(u"worst"_s, d.findings.isEmpty() ? QJsonValue() : QJsonValue(severityName(d.worst())));
    root.insert(u"counts"_s, QJsonObject{{u"info"_s, d.count(Severity::Info)},
                                         {u"warning"_s, d.count(Severity::Warning)},
                                         {u"error"_s, d.count(Severity::Error)}});
    QJsonArray ss;
    for (const ServerStart &s : d.starts) {
        auto lineOrNull = [](qint64 line) { return line > 0 ? QJsonValue(line) : QJsonValue(); };
        auto textOrNull = [](const QString &t) { return t.isEmpty() ? QJsonValue() : QJsonValue(t); };
        ss.append(QJsonObject{
            {u"line"_s, lineOrNull(s.line)},
            {u"time"_s, textOrNull(s.time)},
            {u"framework"_s, frameworkId(s.framework)},
            {u"ready_line"_s, lineOrNull(s.readyLine)},
            {u"ready_time"_s, textOrNull(s.readyTime)},
            {u"seconds_to_ready"_s, s.secondsToReady ? QJsonValue(*s.secondsToReady) : QJsonValue()},
            {u"moe_kernels"_s, moeKernelsJson(s.moeKernels)}});
    }
    root.insert(u"starts"_s, ss);
    root.insert(u"starts_omitted"_s, d.startsOmitted);
    root.insert(u"findings"_s, QJsonArray());
    root.insert(u"targets"_s, QJsonArray());
    return root;
}

} // namespace

QJsonObject Diagnosis::toJson() const {
    QJsonObject root = headJson(*this);
    QJsonArray fs;
    for (const Finding &f : findings)
        fs.append(findingJson(f));
    root.insert(u"findings"_s, fs);
    QJsonArray ts;
    for (const TuningTarget &t : targets)
        ts.append(t.toJson());
    root.insert(u"targets"_s, ts);
    return root;
}

void Diagnosis::writeJson(const std::function<void(QByteArrayView)> &sink) const {
    // QJsonDocument's indented form: a key of the top object at 4 spaces, an element of its arrays at 8.
    // An empty array is "[\n    ]"; a filled one "[\n" + elements joined by ",\n" + "\n    ]". Strings
    // never hold a raw line break (JSON escapes it), so an element is re-indented line by line.
    const QByteArray head = QJsonDocument(headJson(*this)).toJson(QJsonDocument::Indented);
    QByteArray piece;
    auto element = [&](const QJsonObject &o, bool first) {
        const QByteArray json = QJsonDocument(o).toJson(QJsonDocument::Indented);
        piece.clear();
        piece.reserve(json.size() + json.size() / 8 + 16);
        if (!first)
            piece += ",\n";
        qsizetype from = 0;
        while (from < json.size()) {
            qsizetype nl = json.indexOf('\n', from);
            if (nl < 0)
                nl = json.size();
            if (from > 0)
                piece += '\n';
            piece += "        ";
            piece += QByteArrayView(json).sliced(from, nl - from);
            from = nl + 1;
        }
        sink(piece);
    };
    auto list = [&](const QByteArray &key, qsizetype &pos, const auto &items, const auto &toObject) {
        const QByteArray empty = "\n    \"" + key + "\": [\n    ]";
        const qsizetype at = head.indexOf(empty, pos);
        Q_ASSERT(at >= 0);
        const qsizetype open = at + empty.size() - 5; // just after "[\n"
        sink(QByteArrayView(head).sliced(pos, open - pos));
        bool first = true;
        for (const auto &item : items) {
            element(toObject(item), first);
            first = false;
        }
        if (!first)
            sink("\n");
        pos = open;
    };
    qsizetype pos = 0;
    list("findings"_ba, pos, findings, [](const Finding &f) { return findingJson(f); });
    list("targets"_ba, pos, targets, [](const TuningTarget &t) { return t.toJson(); });
    sink(QByteArrayView(head).sliced(pos));
}

} // namespace moetune
