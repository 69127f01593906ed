// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/host/hosttext.h"

#include "core/diagnosis/logreader.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

bool isLineBreakOrTab(char16_t c) {
    return c == u'\n' || c == u'\r' || c == u'\t' || c == u'\v' || c == u'\f' || c == 0x85 || c == 0x2028 ||
           c == 0x2029;
}

bool isHidden(QChar c) {
    const auto cat = c.category();
    // C1 controls (0x80-0x9f, e.g. the one-byte CSI 0x9b), bidi overrides/isolates/marks, zero-width
    // characters, BOM: all are Cc or Cf. Unpaired surrogates cannot be shown either.
    return cat == QChar::Other_Control || cat == QChar::Other_Format ||
           (c.isSurrogate() && cat == QChar::Other_Surrogate);
}

bool needsWork(QStringView s, qsizetype maxChars) {
    if (s.size() > maxChars)
        return true;
    for (qsizetype i = 0; i < s.size(); ++i) {
        const QChar c = s[i];
        if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            return true;
        if (c.unicode() >= 0x80 && (isHidden(c) || isLineBreakOrTab(c.unicode()))) {
            if (c.isHighSurrogate() && i + 1 < s.size() && s[i + 1].isLowSurrogate()) {
                ++i; // a pair: one character outside the BMP, shown as such
                continue;
            }
            return true;
        }
    }
    return false;
}

QJsonValue cleanJson(const QJsonValue &v, int depth) {
    if (v.isString())
        return hostText(v.toString());
    if (depth > 32)
        return v.isObject() || v.isArray() ? QJsonValue() : v;
    if (v.isArray()) {
        QJsonArray out;
        for (const QJsonValue e : v.toArray())
            out.append(cleanJson(e, depth + 1));
        return out;
    }
    if (v.isObject()) {
        QJsonObject out;
        const QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it)
            out.insert(hostText(it.key()), cleanJson(it.value(), depth + 1));
        return out;
    }
    return v;
}

void clean(QString &s) {
    s = hostText(s);
}

void clean(QStringList &list) {
    for (QString &s : list)
        clean(s);
}

} // namespace

QString hostText(QStringView raw, qsizetype maxChars) {
    if (!needsWork(raw, maxChars))
        return raw.toString();
    // Line breaks and tabs become spaces first, so cleanText sees one line and keeps every part of it
    // (it would keep only the text after a carriage return, as a terminal shows a progress bar).
    QString flat = raw.toString();
    for (QChar &c : flat) {
        if (isLineBreakOrTab(c.unicode()))
            c = u' ';
    }
    const QString noEscapes = LogReader::cleanText(flat);
    QString out;
    out.reserve(std::min(noEscapes.size(), maxChars + 32));
    qsizetype shown = 0;
    qsizetype left = 0;
    for (qsizetype i = 0; i < noEscapes.size(); ++i) {
        const QChar c = noEscapes[i];
        const bool pair =
            c.isHighSurrogate() && i + 1 < noEscapes.size() && noEscapes[i + 1].isLowSurrogate();
        if (!pair && isHidden(c))
            continue;
        if (shown >= maxChars) {
            ++left;
            i += pair ? 1 : 0;
            continue;
        }
        out += c;
        if (pair)
            out += noEscapes[++i];
        ++shown;
    }
    if (left > 0)
        out += u"… (%1 more characters)"_s.arg(left);
    return out;
}

HostProbe hostProbeForDisplay(const HostProbe &probe) {
    HostProbe p = probe;
    for (QString *s : {&p.hostName, &p.agentVersion, &p.pythonExecutable, &p.pythonVersion, &p.torchVersion,
                       &p.nvccVersion, &p.frameworkVersion, &p.configRoot, &p.userConfigFolder})
        clean(*s);
    for (GpuInfo &g : p.gpus) {
        clean(g.name);
        clean(g.deviceName);
        clean(g.computeCapability);
        for (GpuProcess &proc : g.processes)
            clean(proc.name);
    }
    for (TritonFolder &f : p.tritonFolders) {
        clean(f.name);
        clean(f.files);
    }
    clean(p.configFiles);
    for (QList<ServerProcess> *list : {&p.servers, &p.otherServers, &p.otherUsersServers}) {
        for (ServerProcess &s : *list) {
            clean(s.commandLine);
            clean(s.modelPath);
            clean(s.arguments);
            if (s.shape)
                clean(s.shape->quantMethod);
            ServerLaunch &l = s.launch;
            for (QString *str :
                 {&l.executable, &l.workingDir, &l.logFile, &l.supervisor, &l.systemdUnit, &l.containerId,
                  &l.serverPython, &l.serverTriton, &l.serverConfigRoot, &l.serverConfigRootSource,
                  &l.serverViewError, &l.interpreterProblem, &l.kernelSourcePath, &l.kernelSourceHash})
                clean(*str);
            clean(s.user);
            clean(s.notUsed);
            QMap<QString, QString> env;
            for (auto it = l.environment.cbegin(); it != l.environment.cend(); ++it)
                env.insert(hostText(it.key()), hostText(it.value()));
            l.environment = env;
        }
    }
    clean(p.serverChoiceProblem);
    if (p.suggestedSpec) {
        for (QString *str :
             {&p.suggestedSpec->dtype, &p.suggestedSpec->strategy, &p.suggestedSpec->deviceName,
              &p.suggestedSpec->backend, &p.suggestedSpec->python, &p.suggestedSpec->routingFile})
            clean(*str);
    }
    p.raw = cleanJson(probe.raw, 0).toObject();
    return p;
}

} // namespace moetune
