#include "core/diagnosis/diagnosis.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace moetune {

int Diagnosis::count(Severity severity) const {
    int n = 0;
    for (const Finding &f : findings)
        n += f.severity == severity ? 1 : 0;
    return n;
}

Severity Diagnosis::worst() const {
    Severity w = Severity::Info;
    for (const Finding &f : findings)
        w = std::max(w, f.severity);
    return w;
}

const Finding *Diagnosis::find(const QString &id) const {
    for (const Finding &f : findings) {
        if (f.id == id)
            return &f;
    }
    return nullptr;
}

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
        md += u"\n```\n"_s;
        for (const Evidence &e : f.evidence)
            md += QString::number(e.line).rightJustified(7) + u": "_s + e.text + u'\n';
        if (f.occurrences > f.evidence.size())
            md += u"    ... "_s + QString::number(f.occurrences - f.evidence.size()) + u" more\n"_s;
        md += u"```\n"_s;
    }
    return md;
}

QString Diagnosis::toMarkdown() const {
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
        for (const Finding &f : findings)
            md += findingMarkdown(f) + u'\n';
    }
    return md;
}

QJsonObject Diagnosis::toJson() const {
    QJsonObject root;
    root.insert(u"schema"_s, u"moetune.diagnosis/1"_s);
    root.insert(u"summary"_s, summary);
    root.insert(u"bytes_read"_s, bytesRead);
    root.insert(u"lines_read"_s, linesRead);
    root.insert(u"cancelled"_s, cancelled);
    root.insert(u"worst"_s, findings.isEmpty() ? QJsonValue() : QJsonValue(severityName(worst())));
    root.insert(u"counts"_s, QJsonObject{{u"info"_s, count(Severity::Info)},
                                         {u"warning"_s, count(Severity::Warning)},
                                         {u"error"_s, count(Severity::Error)}});
    QJsonArray fs;
    for (const Finding &f : findings) {
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
        o.insert(u"target"_s, f.target ? QJsonValue(f.target->toJson()) : QJsonValue());
        fs.append(o);
    }
    root.insert(u"findings"_s, fs);
    QJsonArray ts;
    for (const TuningTarget &t : targets)
        ts.append(t.toJson());
    root.insert(u"targets"_s, ts);
    return root;
}

} // namespace moetune
