// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/host/hostprobemerge.h"
#include "core/host/hosttext.h"
#include "core/host/siblingfinding.h"

#include <QSet>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

int rank(Severity s) {
    return s == Severity::Error ? 2 : s == Severity::Warning ? 1 : 0;
}

// Keeps the documented order (severity desc): a host finding goes after the log findings of its severity.
void insertFinding(Diagnosis &d, Finding f) {
    qsizetype at = d.findings.size();
    for (qsizetype i = 0; i < d.findings.size(); ++i) {
        if (rank(d.findings[i].severity) < rank(f.severity)) {
            at = i;
            break;
        }
    }
    QString id = f.id;
    for (int n = 2; d.find(id); ++n)
        id = f.id + u'#' + QString::number(n);
    f.id = id;
    d.findings.insert(at, f);
}

QString hostLabel(const HostProbe &p) {
    return p.hostName.isEmpty() ? u"the host"_s : p.hostName;
}

// The newest triton_* folder other than `except` that holds `file` (newer SGLang's fallback order).
const TritonFolder *fallbackFor(const HostProbe &p, const QString &file, const QString &except) {
    const TritonFolder *best = nullptr;
    for (const TritonFolder &f : p.tritonFolders) {
        if (f.name == except || !f.files.contains(file))
            continue;
        if (!best || (f.version && (!best->version || *f.version > *best->version)))
            best = &f;
    }
    return best;
}

QStringList folderNames(const HostProbe &p) {
    QStringList names;
    for (const TritonFolder &f : p.tritonFolders)
        names.append(f.name);
    return names;
}

Finding hostFinding(const QString &rule, const QString &key, Severity severity, const QString &title) {
    Finding f;
    f.rule = rule;
    f.id = key.isEmpty() ? rule : rule + u':' + key;
    f.severity = severity;
    f.title = title;
    f.occurrences = 1;
    f.sources = {u"probe"_s};
    return f;
}

} // namespace

Diagnosis mergeHostProbe(Diagnosis d, const HostProbe &hostProbe, const QString &hostName) {
    // Every string below goes into a finding's text, shown in a terminal or a widget: the host's strings
    // as hostText shows them (no escape sequences, no bidi overrides, no floods). Targets stay the log's.
    const HostProbe probe = hostProbeForDisplay(hostProbe);
    const QString host = hostText(hostName.isEmpty() ? hostLabel(probe) : hostName);
    const QString installed = probe.installedTritonFolder();
    const QStringList folders = folderNames(probe);
    const QString listing = folders.isEmpty() ? u"none"_s : folders.join(u", "_s);
    QStringList summaryNotes;
    QSet<QString> folderReported;

    for (TuningTarget &t : d.targets) {
        const QString upFile = t.name.fileName(t.framework);
        ConfigName downName = t.name;
        downName.down = true;
        const QString downFile = downName.fileName(Framework::SGLang);

        for (const ServerProcess &s : probe.servers) {
            if (!s.serves(t.name, t.framework))
                continue;
            Finding f = hostFinding(u"host-served-model"_s, t.shapeSummary(), Severity::Info,
                                    u"%1 serves %2 with this shape"_s.arg(host, s.modelPath));
            f.explanation =
                u"The running server (pid %1, TP %2) serves %3: %4 experts, top-k %5, hidden size %6, "
                "MoE intermediate size %7 (N = %8 per rank). That is the shape of %9."_s.arg(
                    QString::number(s.pid), QString::number(s.tensorParallel), s.modelPath,
                    QString::number(s.shape->experts), QString::number(s.shape->topk),
                    QString::number(s.shape->hiddenSize), QString::number(s.shape->intermediateSize),
                    QString::number(s.shape->intermediateSize / qMax(1, s.tensorParallel)), upFile);
            f.advice =
                u"The tuning job is filled in from this model: K = %1, top-k = %2."_s.arg(s.shape->hiddenSize)
                    .arg(s.shape->topk);
            f.target = t;
            insertFinding(d, f);
            break;
        }

        if (auto sibling = siblingDeviceFinding(t, probe, host)) // a file the server never reads
            insertFinding(d, *sibling);

        if (t.framework != Framework::SGLang || probe.framework != Framework::SGLang)
            continue;

        if (t.tritonVersion && probe.tritonVersion && *t.tritonVersion != *probe.tritonVersion) {
            Finding f = hostFinding(u"host-triton-version-differs"_s, t.tritonFolder, Severity::Warning,
                                    u"Triton on %1 is %2, the log was written under %3"_s.arg(
                                        host, probe.tritonVersion->toString(), t.tritonVersion->toString()));
            f.explanation =
                u"The server looks configs up in the folder of the installed Triton. The host now has "
                "Triton %1 (folder %2), so the log may be older than the last upgrade."_s.arg(
                    probe.tritonVersion->toString(), installed);
            f.advice = u"Fetch a fresh log after restarting the server, and tune into %1."_s.arg(installed);
            f.target = t;
            insertFinding(d, f);
        }

        const QString wanted = probe.tritonVersion ? installed : t.tritonFolder;
        const TritonFolder *present = probe.folder(wanted);
        if (!wanted.isEmpty() && !folderReported.contains(wanted)) {
            folderReported.insert(wanted);
            if (!present) {
                Finding f = hostFinding(u"host-triton-folder-missing"_s, wanted, Severity::Warning,
                                        u"Confirmed on %1: folder %2 does not exist"_s.arg(host, wanted));
                f.explanation =
                    u"The config root %1 on %2 holds these Triton folders: %3. There is no %4 for "
                    "the installed Triton%5, so every MoE shape falls back to an older folder or "
                    "to the built-in defaults."_s.arg(
                        probe.configRoot, host, listing, wanted,
                        probe.tritonVersion ? u" "_s + probe.tritonVersion->toString() : QString());
                f.advice = u"Tune the shapes below; installing the result creates %1."_s.arg(wanted);
                f.target = t;
                insertFinding(d, f);
                summaryNotes.append(u"%1 confirmed missing on %2"_s.arg(wanted, host));
            } else {
                Finding f = hostFinding(u"host-triton-folder-present"_s, wanted, Severity::Info,
                                        u"Folder %1 exists on %2"_s.arg(wanted, host));
                f.explanation = u"%1 holds %2 config file(s)."_s.arg(wanted).arg(present->files.size());
                f.target = t;
                insertFinding(d, f);
            }
        }

        for (const auto &[file, missing, isDown] :
             {std::tuple{upFile, t.upMissing || t.upFellBack, false},
              std::tuple{downFile, t.downMissing || t.downFellBack, true}}) {
            if (!missing)
                continue;
            if (present && present->files.contains(file)) {
                Finding f = hostFinding(u"host-config-now-present"_s, file, Severity::Info,
                                        u"%1 now exists in %2 on %3"_s.arg(file, wanted, host));
                f.explanation =
                    u"The log says the server did not find this file, but the folder holds it now: "
                    "it was added after the server started."_s;
                f.advice = u"Restart the server so that it loads the file."_s;
                f.target = t;
                insertFinding(d, f);
                continue;
            }
            if (const TritonFolder *fb = fallbackFor(probe, file, wanted)) {
                Finding f = hostFinding(u"host-fallback-folder"_s, file, Severity::Warning,
                                        u"On %1 the %2 config falls back to %3"_s.arg(
                                            host, isDown ? u"down"_s : u"up"_s, fb->name));
                f.explanation =
                    u"%1 is not in %2 but %3 holds it, so the server uses a config tuned under another "
                    "Triton version."_s.arg(file, wanted, fb->name);
                f.advice =
                    u"Tune this shape under the installed Triton, or copy the file into %1 as a stopgap."_s
                        .arg(wanted);
                f.target = t;
                if (!isDown && t.fallbackFolder.isEmpty())
                    t.fallbackFolder = fb->name;
                insertFinding(d, f);
            }
        }
        if (probe.tritonVersion && !present)
            t.tritonFolderMissing = true;
    }

    // The host's own state even when the log had no MoE warning (e.g. a log from before an upgrade).
    if (d.targets.isEmpty() && probe.framework == Framework::SGLang && probe.tritonVersion &&
        !probe.folder(installed)) {
        Finding f = hostFinding(u"host-triton-folder-missing"_s, installed, Severity::Warning,
                                u"Folder %1 does not exist on %2"_s.arg(installed, host));
        f.explanation =
            u"The config root %1 holds: %2. The installed Triton %3 has no folder, so the server's MoE "
            "layers will use fallback or default configs."_s.arg(probe.configRoot, listing,
                                                                 probe.tritonVersion->toString());
        f.advice = u"Tune the served model's shape (Tune page) and install the result."_s;
        insertFinding(d, f);
        summaryNotes.append(u"%1 missing on %2"_s.arg(installed, host));
    }

    Finding facts = hostFinding(u"host-facts"_s, QString(), Severity::Info, u"Host %1"_s.arg(host));
    QStringList lines;
    for (const GpuInfo &g : probe.gpus) {
        lines.append(u"GPU %1: %2, %3 of %4 MiB in use by %5 process(es)"_s.arg(
            QString::number(g.index), g.name, QString::number(g.memoryUsedMiB),
            QString::number(g.memoryTotalMiB), QString::number(g.processes.size())));
    }
    if (probe.gpus.isEmpty())
        lines.append(u"no GPU found"_s);
    lines.append(u"python %1, torch %2, Triton %3"_s.arg(
        probe.pythonVersion.isEmpty() ? u"?"_s : probe.pythonVersion,
        probe.torchVersion.isEmpty() ? u"none"_s : probe.torchVersion,
        probe.tritonVersion ? probe.tritonVersion->toString() : u"none"_s));
    if (probe.framework != Framework::Unknown) {
        lines.append(u"%1 %2, config root %3 (folders: %4)"_s.arg(
            frameworkName(probe.framework), probe.frameworkVersion, probe.configRoot, listing));
    } else {
        lines.append(u"neither SGLang nor vLLM importable from %1"_s.arg(probe.pythonExecutable));
    }
    if (probe.simulated)
        lines.append(u"simulated probe"_s);
    facts.explanation = lines.join(u"; "_s) + u'.';
    insertFinding(d, facts);

    d.summary = u"%1: %2"_s.arg(host, d.summary.isEmpty() ? u"no MoE warnings in the log"_s : d.summary);
    if (!summaryNotes.isEmpty())
        d.summary += u" ("_s + summaryNotes.join(u"; "_s) + u')';
    return d;
}

} // namespace moetune
