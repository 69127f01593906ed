// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/host/siblingfinding.h"

#include "core/moe/siblingdevice.h"

using namespace Qt::StringLiterals;

namespace moetune {

std::optional<Finding> siblingDeviceFinding(const TuningTarget &t, const HostProbe &probe,
                                            const QString &host) {
    if (!(t.upMissing || t.upFellBack) || probe.framework != t.framework)
        return std::nullopt;
    QString folder;
    QStringList files;
    if (t.framework == Framework::SGLang) {
        const QString wanted = probe.tritonVersion ? probe.installedTritonFolder() : t.tritonFolder;
        const TritonFolder *f = probe.folder(wanted);
        if (!f)
            return std::nullopt;
        folder = probe.configRoot + u'/' + wanted;
        files = f->files;
    } else {
        folder = probe.configRoot;
        files = probe.configFiles;
    }
    const QStringList siblings = siblingDeviceFiles(t.name, files);
    if (siblings.isEmpty())
        return std::nullopt;
    QStringList devices;
    for (const QString &s : siblings)
        devices.append(ConfigName::parse(s)->deviceName);
    const QString wantedFile = t.name.fileName(t.framework);
    Finding f;
    f.rule = u"host-sibling-device-file"_s;
    f.id = f.rule + u':' + wantedFile;
    f.severity = Severity::Warning;
    f.title = u"On %1, %2 holds this shape's config for %3, which the server on %4 does not read"_s.arg(
        host, folder, devices.join(u", "_s), t.name.deviceName);
    f.explanation =
        u"The server looks %1 up by its own GPU's exact device name (%2). %3 in %4 %5 for another device "
        u"name of the same GPU model, so this server never reads %6; it runs %7."_s.arg(
            wantedFile, t.name.deviceName, siblings.join(u", "_s), folder,
            siblings.size() == 1 ? u"is"_s : u"are"_s, siblings.size() == 1 ? u"it"_s : u"them"_s,
            t.upFellBack ? u"a fallback folder's file"_s : u"its built-in default configs"_s);
    f.advice = u"Tune this shape on this GPU and install %1 (a sibling GPU's file differs in clocks, memory "
               u"and power: copying it under this name is an unmeasured stopgap)."_s.arg(wantedFile);
    f.occurrences = 1;
    f.sources = {u"probe"_s};
    f.target = t;
    return f;
}

} // namespace moetune
