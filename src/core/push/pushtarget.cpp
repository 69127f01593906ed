// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/push/pushtarget.h"

#include "core/host/hosttext.h"

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString join(const QString &a, const QString &b) {
    return a.endsWith(u'/') ? QString(a + b) : QString(a + u'/' + b);
}

// Absolute, without "." / ".." parts, control or invisible characters: a folder named as it is.
bool plainFolder(const QString &path) {
    if (!path.startsWith(u'/'))
        return false;
    for (const QChar c : path) {
        const auto cat = c.category();
        if (c.unicode() < 0x20 || cat == QChar::Other_Control || cat == QChar::Other_Format)
            return false;
    }
    const QStringList parts = path.split(u'/', Qt::SkipEmptyParts);
    return !parts.contains(u"."_s) && !parts.contains(u".."_s);
}

bool under(const QString &path, QString root) {
    while (root.size() > 1 && root.endsWith(u'/'))
        root.chop(1);
    return !root.isEmpty() && (path == root || path.startsWith(root + u'/'));
}

// Why a folder the log names is not where this server reads configs ("" = it is): a log line is text
// anyone who can reach the server may have had it print, so it must agree with what the host says.
QString loggedFolderProblem(const TuningTarget &tt, Framework framework, const HostProbe *probe,
                            const ServerProfile &profile) {
    const QString folder = tt.installFolder();
    if (!plainFolder(folder) || !plainFolder(tt.configRoot))
        return u"it is not an absolute folder without \".\" or \"..\" parts and control characters"_s;
    QStringList roots;
    const QString envName =
        framework == Framework::VLLM ? u"VLLM_TUNED_CONFIG_FOLDER"_s : u"SGLANG_MOE_CONFIG_DIR"_s;
    if (probe) {
        for (const ServerProcess &s : probe->servers) {
            if (s.framework != framework)
                continue;
            roots << s.launch.serverConfigRoot << s.launch.environment.value(envName);
        }
        if (probe->framework == framework)
            roots << probe->configRoot << probe->userConfigFolder;
    }
    roots << profile.persistentConfigDir;
    roots.removeAll(QString());
    if (!roots.isEmpty()) {
        for (const QString &r : std::as_const(roots)) {
            if (plainFolder(r) && under(folder, r))
                return {};
        }
        return u"it is outside the folders the host's probe shows the server reading (%1)"_s.arg(
            roots.join(u", "_s));
    }
    // No view of the host: at least the shape of a server's config folder (docs/servers.md section 1).
    const bool shaped = framework == Framework::VLLM ? folder.endsWith(u"/fused_moe/configs"_s)
                                                     : tt.configRoot.endsWith(u"/configs"_s);
    return shaped ? QString()
                  : u"it is not shaped like a config folder of the server and no probe of the host "
                    u"confirms it"_s;
}

} // namespace

PushTarget PushTarget::choose(Framework framework, const ConfigName &shape, const Diagnosis *before,
                              const HostProbe *probe, const ServerProfile &profile) {
    PushTarget t;
    // The server of this framework that serves this shape (a host may run several servers; the probe is
    // focused on the one the user chose, HostProbe::focused): with several, the one that serves this
    // shape; when none or more than one does, the push asks which (issue 41), never guesses.
    const ServerProcess *server = nullptr;
    QStringList others;
    int serving = 0;
    if (probe) {
        for (const ServerProcess &s : probe->servers) {
            if (s.framework != framework)
                continue;
            serving += s.serves(shape, framework) ? 1 : 0;
            if (!server || (!server->serves(shape, framework) && s.serves(shape, framework))) {
                if (server)
                    others.append(QString::number(server->pid));
                server = &s;
            } else {
                others.append(QString::number(s.pid));
            }
        }
    }
    // 1. The server's own warning names the path it wanted.
    if (before) {
        for (const TuningTarget &tt : before->targets) {
            if (tt.framework == framework && tt.name.sameShape(shape) && !tt.configRoot.isEmpty()) {
                if (const QString why = loggedFolderProblem(tt, framework, probe, profile); !why.isEmpty()) {
                    t.warnings.append(u"The log names %1 as the wanted folder, but %2: it is never a push "
                                      u"target."_s.arg(hostText(tt.installFolder()), why));
                    continue;
                }
                t.folder = tt.installFolder();
                t.source = u"the path the server itself logged as wanted (%1)"_s.arg(tt.upPath());
                break;
            }
        }
    }
    if (t.folder.isEmpty() && server && !others.isEmpty() &&
        !(server->serves(shape, framework) && serving == 1)) {
        t.error = probe->serverQuestion(u"(moetune-cli --server PID|PORT, or the Hosts page's Server)"_s);
        return t;
    }
    // 2. The server's interpreter as the probe saw it (its Triton, its environment).
    bool usedServer = false;
    if (t.folder.isEmpty() && server && !server->launch.serverConfigRoot.isEmpty()) {
        usedServer = true;
        const ServerLaunch &l = server->launch;
        if (framework == Framework::SGLang) {
            const auto tv = TritonVersion::parse(l.serverTriton);
            if (tv) {
                t.folder = join(l.serverConfigRoot, tv->folderName());
                t.source = u"the server's interpreter %1 (Triton %2, config root from %3)"_s.arg(
                    l.serverPython, tv->toString(),
                    l.serverConfigRootSource == "module"_L1 ? u"its sglang module"_s
                                                            : l.serverConfigRootSource);
            }
        } else {
            t.folder = l.environment.value(u"VLLM_TUNED_CONFIG_FOLDER"_s, l.serverConfigRoot);
            t.source = u"the server's interpreter %1"_s.arg(l.serverPython);
        }
    }
    // 3. The agent's interpreter (the host's configured python): may not be the server's.
    if (t.folder.isEmpty() && probe && !probe->configRoot.isEmpty() && probe->framework == framework) {
        if (framework == Framework::SGLang && probe->tritonVersion)
            t.folder = join(probe->configRoot, probe->tritonVersion->folderName());
        else if (framework == Framework::VLLM)
            t.folder = probe->userConfigFolder.isEmpty() ? probe->configRoot : probe->userConfigFolder;
        if (!t.folder.isEmpty()) {
            t.source = u"the host's configured interpreter %1"_s.arg(probe->pythonExecutable);
            t.warnings.append(
                u"No running server was seen: the folder comes from the host's configured "
                u"interpreter, which may not be the one the server runs (its Triton decides the "
                u"folder). Diagnose the server's log first to push where it looks."_s);
        }
    }
    if (t.folder.isEmpty()) {
        t.error = u"moetune cannot tell where this server reads its configs: diagnose its log (the warning "
                  u"names the wanted path) or set the host's python to the server's interpreter."_s;
        if (!t.warnings.isEmpty())
            t.error += u' ' + t.warnings.join(u' ');
        return t;
    }
    const bool inContainer =
        (server && !server->launch.containerId.isEmpty()) || profile.kind == ServerProfile::Kind::Docker;
    const bool envRoot = server && !server->launch.environment
                                        .value(framework == Framework::VLLM ? u"VLLM_TUNED_CONFIG_FOLDER"_s
                                                                            : u"SGLANG_MOE_CONFIG_DIR"_s)
                                        .isEmpty();
    if (inContainer)
        t.warnings.append(
            u"The server runs in a docker container: %1 is inside the container's writable layer "
            u"and is lost when the container is recreated."_s.arg(t.folder));
    if (!envRoot && (t.folder.contains(u"/site-packages/"_s) || t.folder.contains(u"/dist-packages/"_s)))
        t.warnings.append(u"%1 is inside the installed %2 package: upgrading or reinstalling it replaces the "
                          u"folder and the tuned file with it."_s.arg(t.folder, frameworkName(framework)));
    if (!t.warnings.isEmpty() || inContainer) {
        const QString dir = profile.persistentConfigDir.isEmpty()
                                ? u"~/moetune-configs/%1"_s.arg(frameworkId(framework))
                                : profile.persistentConfigDir;
        if (framework == Framework::SGLang) {
            const int slash = int(t.folder.lastIndexOf(u'/'));
            const QString tritonFolder = t.folder.mid(slash + 1);
            t.persistentFolder = join(join(dir, u"configs"_s), tritonFolder);
            t.persistentEnv = u"SGLANG_MOE_CONFIG_DIR="_s + dir;
            t.persistentNote =
                u"With SGLANG_MOE_CONFIG_DIR set, SGLang reads only that folder (no built-in "
                u"configs): copy the files of other shapes you rely on into %1 as well, and set "
                u"the variable in the %2's environment."_s.arg(join(dir, u"configs"_s),
                                                               ServerProfile::kindName(profile.kind));
        } else {
            t.persistentFolder = dir;
            t.persistentEnv = u"VLLM_TUNED_CONFIG_FOLDER="_s + dir;
            t.persistentNote =
                u"vLLM searches that folder first and still reads its own; set the variable in "
                u"the %1's environment."_s.arg(ServerProfile::kindName(profile.kind));
        }
    }
    // Said after the survival warnings: which server was used is not a reason to move the folder.
    if (usedServer && !others.isEmpty())
        t.warnings.append(u"Several %1 servers run on this host; the folder is that of pid %2, which serves "
                          u"this shape (also running: pid %3)."_s.arg(
                              frameworkName(framework), QString::number(server->pid), others.join(u", "_s)));
    if (usedServer)
        t.source += u"; the server: "_s + server->label();
    return t;
}

PushTarget PushTarget::persistent() const {
    PushTarget p = *this;
    if (persistentFolder.isEmpty()) {
        p.error = u"No persistent folder is offered for this target."_s;
        return p;
    }
    p.folder = persistentFolder;
    p.source = u"the persistent folder (the server must run with %1)"_s.arg(persistentEnv);
    p.warnings = {
        u"The server reads this folder only when started with %1: %2"_s.arg(persistentEnv, persistentNote)};
    return p;
}

} // namespace moetune
