// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/host/hostmismatch.h"

#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"
#include "core/host/hosttext.h"

#include <QCoreApplication>
#include <QRegularExpression>
#include <QSet>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString tr(const char *text) {
    return QCoreApplication::translate("HostMismatch", text);
}

// "NVIDIA H100 80GB HBM3" as the config file names write it: NVIDIA_H100_80GB_HBM3.
QString fileStyleName(const QString &gpuName) {
    QString s = gpuName.trimmed();
    s.replace(u' ', u'_');
    return s;
}

} // namespace

QStringList hostMismatches(const Diagnosis &d, const HostProbe &hostProbe, const QString &label) {
    // Sentences for the screen: the host's strings (GPU names) as hostText shows them.
    const HostProbe probe = hostProbeForDisplay(hostProbe);
    const QString hostLabel = hostText(label);
    QStringList out;
    // Tensor-parallel ranks the log shows (TP0..TPn): the server used at least that many GPUs.
    static const QRegularExpression rankRe(u"^TP(\\d+)$"_s);
    int ranks = 0;
    for (const Finding &f : d.findings) {
        for (const QString &source : f.sources) {
            const auto m = rankRe.match(source);
            if (m.hasMatch())
                ranks = qMax(ranks, m.captured(1).toInt() + 1);
        }
    }
    const auto gpus = int(probe.gpus.size());
    if (ranks > gpus) {
        out.append(gpus == 0
                       ? tr("The log shows %1 GPU ranks (TP0-%2), but %3 has no GPU: this log is "
                            "probably from another machine.")
                             .arg(ranks)
                             .arg(ranks - 1)
                             .arg(hostLabel)
                       : tr("The log shows %1 GPU ranks (TP0-%2), but %3 has %4 GPU(s): this log may be "
                            "from another machine.")
                             .arg(ranks)
                             .arg(ranks - 1)
                             .arg(hostLabel)
                             .arg(gpus));
    }
    if (gpus > 0) {
        QSet<QString> hostDevices;
        for (const GpuInfo &g : probe.gpus)
            hostDevices.insert(fileStyleName(g.name));
        QSet<QString> reported;
        for (const TuningTarget &t : d.targets) {
            const QString device = t.name.deviceName;
            if (!device.isEmpty() && !hostDevices.contains(device) && !reported.contains(device)) {
                reported.insert(device);
                out.append(tr("The log tuned for %1, but the GPUs of %2 are %3.")
                               .arg(device, hostLabel, QStringList(hostDevices.values()).join(u", "_s)));
            }
        }
    }
    if (probe.tritonVersion) {
        QSet<QString> reported;
        for (const TuningTarget &t : d.targets) {
            if (t.tritonVersion && *t.tritonVersion != *probe.tritonVersion) {
                const QString logged = t.tritonVersion->toString();
                if (reported.contains(logged))
                    continue;
                reported.insert(logged);
                out.append(tr("The log's server ran Triton %1; %2 has Triton %3 installed now.")
                               .arg(logged, hostLabel, probe.tritonVersion->toString()));
            }
        }
    }
    return out;
}

} // namespace moetune
