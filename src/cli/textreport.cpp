// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/textreport.h"

#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/finding.h"
#include "core/diagnosis/severity.h"
#include "core/diagnosis/sourcelist.h"
#include "core/job/tuningtarget.h"
#include "core/moe/framework.h"

#include <QLocale>
#include <QRegularExpression>
#include <QSet>

using namespace Qt::StringLiterals;

namespace moetune::cli {

namespace {
constexpr const char *kBold = "1";
constexpr const char *kDim = "2";
constexpr const char *kRed = "1;31";
constexpr const char *kYellow = "1;33";
constexpr const char *kCyan = "1;36";
constexpr const char *kMatch = "1;4";

// Evidence lines can be megabytes long: show this many characters around the match.
constexpr qsizetype kEvidenceWindow = 240;

const char *severityColor(Severity s) {
    switch (s) {
    case Severity::Error:
        return kRed;
    case Severity::Warning:
        return kYellow;
    case Severity::Info:
        break;
    }
    return kCyan;
}

QString yesNo(bool b) {
    return b ? u"yes"_s : u"no"_s;
}
} // namespace

TextReport::TextReport(bool color, int maxEvidence, int width)
    : m_color(color)
    , m_maxEvidence(maxEvidence)
    , m_width(width) {}

QString TextReport::style(const QString &text, const char *code) const {
    if (!m_color || text.isEmpty())
        return text;
    return u"\x1b["_s + QLatin1StringView(code) + u'm' + text + u"\x1b[0m"_s;
}

QString TextReport::printable(QStringView text) {
    QString out;
    out.reserve(text.size());
    for (QChar c : text) {
        const char16_t u = c.unicode();
        if (u == u'\t')
            out += u' ';
        else if (u < 0x20 || u == 0x7f || (u >= 0x80 && u < 0xa0) || c.category() == QChar::Other_Format ||
                 u == 0x2028 || u == 0x2029) // bidi overrides (U+202E) and line separators too
            out += QChar(0xfffd);
        else
            out += c;
    }
    return out;
}

QString TextReport::wrap(const QString &text, const QString &indent) const {
    QString out;
    const QStringList paragraphs = text.split(u'\n');
    for (const QString &paragraph : paragraphs) {
        QString line = indent;
        bool lineHasWord = false;
        for (const QString &word : paragraph.split(u' ', Qt::SkipEmptyParts)) {
            if (lineHasWord && line.size() + 1 + word.size() > m_width) {
                out += line + u'\n';
                line = indent;
                lineHasWord = false;
            }
            if (lineHasWord)
                line += u' ';
            line += word;
            lineHasWord = true;
        }
        out += line + u'\n';
    }
    return out;
}

QString TextReport::renderTarget(const TuningTarget &t, const QString &indent) const {
    QString out;
    auto field = [&](const QString &label, const QString &value) {
        out += indent + style(label.leftJustified(14), kDim) + printable(value) + u'\n';
    };
    const ConfigName &n = t.name;
    if (t.kernel == TuningTarget::Kernel::BlockFp8Gemm) {
        field(u"kernel"_s, u"W8A8 block-FP8 GEMM (dense, not MoE)"_s);
        field(u"framework"_s, frameworkName(t.framework));
        field(u"N"_s, QString::number(n.n));
        field(u"K"_s, QString::number(t.denseK));
        field(u"device"_s, n.deviceName.isEmpty() ? u"(empty)"_s : n.deviceName);
        field(u"dtype"_s, n.dtype.isEmpty() ? u"fp8_w8a8"_s : n.dtype);
        if (n.blockShape)
            field(u"block shape"_s, u"[%1, %2]"_s.arg((*n.blockShape)[0]).arg((*n.blockShape)[1]));
        field(u"config file"_s, u"missing: "_s + t.upPath());
        return out;
    }
    field(u"framework"_s, frameworkName(t.framework));
    QString triton = t.tritonVersion ? t.tritonVersion->toString() : u"unknown"_s;
    if (!t.tritonFolder.isEmpty()) {
        triton += u", folder "_s + t.tritonFolder;
        if (t.tritonFolderMissing)
            triton += u" (missing on the host)"_s;
        else if (t.noConfigLoaded)
            triton += u" (no config loaded from it)"_s;
    }
    if (!t.fallbackFolder.isEmpty())
        triton += u", fell back to "_s + t.fallbackFolder;
    if (t.framework != Framework::VLLM || t.tritonVersion)
        field(u"triton"_s, triton);
    if (!t.configRoot.isEmpty())
        field(u"config root"_s, t.configRoot);
    field(u"experts (E)"_s, QString::number(n.experts));
    field(u"N"_s, QString::number(n.n));
    if (t.intermediateN() != n.n || t.weightN() != n.n) {
        field(u"N of layer"_s,
              QString::number(t.intermediateN()) + u" (moe_intermediate_size / TP: the spec's)"_s);
        field(u"N of weight"_s, QString::number(t.weightN()) + u" (packed int4 down weight)"_s);
    }
    field(u"device"_s, n.deviceName.isEmpty() ? u"(empty)"_s : n.deviceName);
    field(u"dtype"_s, !n.dtype.isEmpty() ? n.dtype
                      : t.dtypeCandidates().contains(u"int8_w8a8"_s)
                          ? u"bf16/fp16 or int8_w8a8 (vLLM names both files alike)"_s
                          : u"bf16/fp16"_s);
    if (n.blockShape)
        field(u"block shape"_s, u"[%1, %2]"_s.arg((*n.blockShape)[0]).arg((*n.blockShape)[1]));
    if (n.perChannelQuant)
        field(u"per-channel"_s, yesNo(true));
    auto state = [](bool missing, bool fellBack, bool loaded) {
        if (missing)
            return u"missing"_s;
        if (fellBack)
            return u"taken from another Triton folder"_s;
        if (loaded)
            return u"loaded"_s;
        return u"not reported missing"_s;
    };
    field(u"up config"_s, state(t.upMissing, t.upFellBack, t.upLoaded) + u": "_s + t.upPath());
    if (!t.downPath().isEmpty())
        field(u"down config"_s, state(t.downMissing, t.downFellBack, t.downLoaded) + u": "_s + t.downPath());
    return out;
}

QString TextReport::renderFinding(const Finding &f, bool withTargetFields) const {
    QString out;
    const QString sev = severityName(f.severity).toUpper();
    out += style(sev, severityColor(f.severity)) + QString(qMax<qsizetype>(1, 9 - sev.size()), u' ') +
           style(printable(f.title), kBold) + u'\n';
    const QString indent = u"  "_s;
    QString seen =
        u"seen "_s + QString::number(f.occurrences) + (f.occurrences == 1 ? u" time"_s : u" times"_s);
    if (!f.sources.isEmpty())
        seen += u" on "_s + printable(compactSources(f.sources));
    out += indent + seen + u"   "_s + style(u"["_s + f.rule + u"]"_s, kDim) + u'\n';
    if (f.target) {
        out += indent + style(u"target"_s, kBold) + u"  "_s + printable(f.target->shapeSummary()) +
               (withTargetFields ? QString() : style(u"  (as above)"_s, kDim)) + u'\n';
        if (withTargetFields)
            out += renderTarget(*f.target, indent + u"  "_s);
    }
    if (!f.evidence.isEmpty()) {
        out += indent + style(u"evidence"_s, kBold) + u'\n';
        int digits = 1;
        for (const Evidence &e : f.evidence)
            digits = qMax(digits, int(QString::number(e.line).size()));
        // The first line and the latest ones: a long-running log's news is at its end.
        const qsizetype all = f.evidence.size();
        const qsizetype shown = m_maxEvidence > 0 ? qMin<qsizetype>(m_maxEvidence, all) : all;
        const qsizetype head = shown == all ? all : (shown >= 2 ? 1 : 0);
        const qsizetype tailFrom = all - (shown - head);
        auto render = [&](const Evidence &e) {
            const qsizetype size = e.text.size();
            const qsizetype start = qBound<qsizetype>(0, e.matchStart, size);
            const qsizetype length = qBound<qsizetype>(0, e.matchLength, size - start);
            qsizetype from = 0;
            qsizetype to = size;
            if (size > kEvidenceWindow) {
                from = qMax<qsizetype>(0, start - kEvidenceWindow / 4);
                to = qMin<qsizetype>(size, qMax(from + kEvidenceWindow, start + length));
            }
            QString line = from > 0 ? u"…"_s : QString();
            line += printable(QStringView(e.text).mid(from, start - from));
            line += style(printable(QStringView(e.text).mid(start, length)), kMatch);
            line += printable(QStringView(e.text).mid(start + length, to - start - length));
            if (to < size)
                line += u"…"_s;
            out += indent + u"  "_s + style(QString::number(e.line).rightJustified(digits), kDim) + u" | "_s +
                   line + u'\n';
        };
        auto gapNote = [&](qint64 n) {
            out += indent + u"  "_s +
                   style(u"... %1 %2 left out"_s.arg(n).arg(n == 1 ? u"line"_s : u"lines"_s), kDim) + u'\n';
        };
        // The engine's own gap (lines it kept no copy of) lies after its first headEvidence lines.
        const bool engineGapSkipped = head < all && tailFrom >= Finding::headEvidence;
        for (qsizetype i = 0; i < head; ++i) {
            if (i == Finding::headEvidence && f.evidenceOmitted > 0)
                gapNote(f.evidenceOmitted);
            render(f.evidence[i]);
        }
        const qint64 leftOut = (tailFrom - head) + (engineGapSkipped ? f.evidenceOmitted : 0);
        if (head < all && leftOut > 0) {
            QStringList lines;
            for (qsizetype i = head; i < tailFrom && lines.size() < 8; ++i)
                lines += QString::number(f.evidence[i].line);
            QString note = u"... %1 %2 left out"_s.arg(leftOut).arg(leftOut == 1 ? u"line"_s : u"lines"_s);
            if (!lines.isEmpty())
                note += u" (line "_s + lines.join(u", "_s) +
                        (leftOut > lines.size() ? u", ..."_s : QString()) + u')';
            out += indent + u"  "_s + style(note, kDim) + u'\n';
        }
        for (qsizetype i = qMax(head, tailFrom); i < all; ++i) {
            if (i == Finding::headEvidence && f.evidenceOmitted > 0 && !engineGapSkipped && i > head)
                gapNote(f.evidenceOmitted);
            render(f.evidence[i]);
        }
    }
    if (!f.explanation.isEmpty())
        out += wrap(printable(f.explanation), indent);
    if (!f.advice.isEmpty())
        out += wrap(style(u"advice:"_s, kBold) + u' ' + printable(f.advice), indent);
    return out;
}

QString TextReport::render(const Diagnosis &d, const QString &inputLabel) const {
    QString out;
    render(d, inputLabel, [&](const QString &piece) { out += piece; });
    return out;
}

void TextReport::render(const Diagnosis &d, const QString &inputLabel,
                        const std::function<void(const QString &)> &sink) const {
    QString out;
    out += style(printable(d.summary), kBold) + u'\n';
    const QLocale c = QLocale::c();
    QString stats = printable(inputLabel) + u": "_s + c.toString(d.linesRead) + u" lines, "_s +
                    c.formattedDataSize(d.bytesRead, 1, QLocale::DataSizeTraditionalFormat) + u"; "_s;
    stats += u"%1 error(s), %2 warning(s), %3 info"_s.arg(d.count(Severity::Error))
                 .arg(d.count(Severity::Warning))
                 .arg(d.count(Severity::Info));
    if (d.cancelled)
        stats += u" (cancelled: partial result)"_s;
    out += style(stats, kDim) + u'\n';
    sink(out);
    QSet<QString> listedTargets; // a set: a list's contains() made the report quadratic in the shapes
    for (const Finding &f : d.findings) {
        bool fields = true;
        if (f.target) {
            const QString key = f.target->installFolder() + u'/' + f.target->shapeSummary();
            fields = !listedTargets.contains(key);
            listedTargets.insert(key);
        }
        sink(u'\n' + renderFinding(f, fields));
    }
}

} // namespace moetune::cli
