// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/hosts/sshconfig.h"

#include "remote/hosts/knownhostsentry.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>

#include <pwd.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// Keyword (lower case) and arguments of one line: "Key value", "Key=value", double quotes group, an
// unquoted argument starting with '#' ends the line (ssh's argv_split). rest: the text after the key.
bool splitLine(const QString &raw, QString *key, QStringList *args, QString *rest) {
    const QString line = raw.trimmed();
    if (line.isEmpty() || line.startsWith(u'#'))
        return false;
    static const QRegularExpression re(u"^([A-Za-z0-9]+)\\s*(?:=\\s*|\\s+|$)(.*)$"_s);
    const auto m = re.match(line);
    if (!m.hasMatch())
        return false;
    *key = m.captured(1).toLower();
    *rest = m.captured(2).trimmed();
    args->clear();
    QString cur;
    bool quoted = false;
    bool any = false;
    const QString text = m.captured(2);
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (!quoted && !any && cur.isEmpty() && c == u'#')
            break;
        if (c == u'"') {
            quoted = !quoted;
            any = true;
        } else if (c == u'\\' && quoted && i + 1 < text.size()) {
            cur += text[++i];
        } else if (c.isSpace() && !quoted) {
            if (any || !cur.isEmpty())
                args->append(cur);
            cur.clear();
            any = false;
        } else {
            cur += c;
        }
    }
    if (any || !cur.isEmpty())
        args->append(cur);
    return true;
}

QString homeDir() {
    return QDir::homePath();
}

QString localHostName() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0)
        return {};
    return QString::fromLocal8Bit(name);
}

struct Parser {
    QString originalHost;
    bool finalPass = false;
    bool wantFinal = false;
    bool runExec = true;
    SshConfigValues v;
    QString rawHostName;
    QString error;

    QString hostSoFar() const {
        if (rawHostName.isEmpty())
            return originalHost;
        QString h = rawHostName;
        h.replace(u"%h"_s, originalHost);
        h.replace(u"%%"_s, u"%"_s);
        return h;
    }

    bool matchLine(const QStringList &args, const QString &where) {
        if (args.isEmpty()) {
            error = u"%1: Match without criteria"_s.arg(where);
            return false;
        }
        bool result = true;
        for (qsizetype i = 0; i < args.size(); ++i) {
            QString attr = args[i].toLower();
            const bool negate = attr.startsWith(u'!');
            if (negate)
                attr = attr.mid(1);
            bool ok = false;
            if (attr == u"all") {
                ok = true;
            } else if (attr == u"canonical" || attr == u"final") {
                wantFinal = true;
                ok = finalPass;
            } else {
                if (i + 1 >= args.size()) {
                    error = u"%1: Match %2 needs an argument"_s.arg(where, attr);
                    return false;
                }
                const QString &arg = args[++i];
                if (attr == u"host")
                    ok = SshConfig::matchPatternList(hostSoFar(), arg);
                else if (attr == u"originalhost")
                    ok = SshConfig::matchPatternList(originalHost, arg);
                else if (attr == u"user")
                    ok = SshConfig::matchPatternList(v.user.isEmpty() ? SshConfig::localUserName() : v.user,
                                                     arg);
                else if (attr == u"localuser")
                    ok = SshConfig::matchPatternList(SshConfig::localUserName(), arg);
                else if (attr == u"exec") {
                    if (!result)
                        continue; // ssh skips exec once the line cannot match
                    ok = runExec && runMatchExec(arg);
                } else {
                    error = u"%1: unsupported Match attribute %2"_s.arg(where, attr);
                    return false;
                }
            }
            if (ok == negate)
                result = false;
        }
        return result;
    }

    // `Match exec`: the command through /bin/sh with the tokens known so far; exit status 0 matches.
    bool runMatchExec(const QString &command) const {
        const QString cmd = SshConfig::expand(command, originalHost, hostSoFar(), v.port > 0 ? v.port : 22,
                                              v.user.isEmpty() ? SshConfig::localUserName() : v.user);
        QProcess p;
        p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        p.start(u"/bin/sh"_s, {u"-c"_s, cmd});
        p.closeWriteChannel();
        const bool ok =
            p.waitForFinished(30000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
        if (p.state() != QProcess::NotRunning) {
            p.kill();
            p.waitForFinished();
        }
        return ok;
    }

    void set(const QString &key, const QStringList &args, const QString &rest) {
        if (args.isEmpty())
            return;
        const QString &a = args.first();
        if (key == u"hostname") {
            if (rawHostName.isEmpty())
                rawHostName = a;
        } else if (key == u"user") {
            if (v.user.isEmpty())
                v.user = a;
        } else if (key == u"port") {
            if (v.port == 0)
                v.port = a.toInt();
        } else if (key == u"identityfile") {
            v.identityFiles.append(a);
        } else if (key == u"identitiesonly") {
            if (!v.identitiesOnly)
                v.identitiesOnly = a.toLower() == u"yes" || a.toLower() == u"true";
        } else if (key == u"proxyjump") {
            if (v.proxyJump.isEmpty() && v.proxyCommand.isEmpty())
                v.proxyJump = a;
        } else if (key == u"proxycommand") {
            if (v.proxyJump.isEmpty() && v.proxyCommand.isEmpty())
                v.proxyCommand = rest;
        } else if (key == u"userknownhostsfile") {
            if (!v.userKnownHostsFiles)
                v.userKnownHostsFiles = args;
        } else if (key == u"globalknownhostsfile") {
            if (!v.globalKnownHostsFiles)
                v.globalKnownHostsFiles = args;
        } else if (key == u"revokedhostkeys") {
            if (!v.revokedHostKeys)
                v.revokedHostKeys = a;
        } else if (key == u"hostkeyalias") {
            if (v.hostKeyAlias.isEmpty())
                v.hostKeyAlias = a;
        } else if (key == u"stricthostkeychecking") {
            if (v.strictHostKeyChecking.isEmpty())
                v.strictHostKeyChecking = a.toLower();
        } else if (key == u"hostkeyalgorithms") {
            if (v.hostKeyAlgorithms.isEmpty())
                v.hostKeyAlgorithms = a;
        } else if (key == u"kexalgorithms") {
            if (v.kexAlgorithms.isEmpty())
                v.kexAlgorithms = a;
        } else if (key == u"pubkeyacceptedalgorithms" || key == u"pubkeyacceptedkeytypes") {
            if (v.pubkeyAcceptedAlgorithms.isEmpty())
                v.pubkeyAcceptedAlgorithms = a;
        } else if (key == u"connecttimeout") {
            if (v.connectTimeoutS == 0)
                v.connectTimeoutS = a.toInt();
        }
    }

    // One file; inactive: an Include from a block that does not apply (its lines never apply).
    void parseFile(const QString &path, bool userFile, bool inactive, int depth) {
        if (!error.isEmpty())
            return;
        if (depth > 16) {
            error = u"%1: Include nested too deeply"_s.arg(path);
            return;
        }
        QFile f(path);
        if (!f.exists())
            return;
        if (!f.open(QIODevice::ReadOnly)) {
            error = u"cannot read %1: %2"_s.arg(path, f.errorString());
            return;
        }
        bool active = !inactive;
        int lineNo = 0;
        QString key;
        QString rest;
        QStringList args;
        for (const QString &line : QString::fromUtf8(f.readAll()).split(u'\n')) {
            ++lineNo;
            if (!splitLine(line, &key, &args, &rest))
                continue;
            const QString where = u"%1 line %2"_s.arg(path).arg(lineNo);
            if (key == u"host") {
                bool match = false;
                for (const QString &p : std::as_const(args)) {
                    const bool neg = p.startsWith(u'!');
                    if (KnownHostsEntry::globMatch(originalHost.toLower().toUtf8(),
                                                   (neg ? p.mid(1) : p).toLower().toUtf8())) {
                        if (neg) {
                            match = false;
                            break;
                        }
                        match = true;
                    }
                }
                active = !inactive && match;
            } else if (key == u"match") {
                const bool m = matchLine(args, where);
                if (!error.isEmpty())
                    return;
                active = !inactive && m;
            } else if (key == u"include") {
                for (const QString &a : std::as_const(args)) {
                    QString pattern = a.startsWith(u"~/") ? homeDir() + a.mid(1) : a;
                    if (QDir::isRelativePath(pattern))
                        pattern = (userFile ? homeDir() + u"/.ssh/"_s : u"/etc/ssh/"_s) + pattern;
                    const QFileInfo fi(pattern);
                    const QStringList names =
                        QDir(fi.path()).entryList({fi.fileName()}, QDir::Files, QDir::Name);
                    for (const QString &n : names)
                        parseFile(fi.path() + u'/' + n, userFile, !active, depth + 1);
                    if (!error.isEmpty())
                        return;
                }
            } else if (active) {
                set(key, args, rest);
            }
        }
    }
};

} // namespace

QString SshConfig::localUserName() {
    const passwd *pw = getpwuid(getuid());
    return pw ? QString::fromLocal8Bit(pw->pw_name) : qEnvironmentVariable("USER");
}

bool SshConfig::matchPatternList(const QString &text, const QString &list) {
    const QByteArray t = text.toLower().toUtf8();
    bool match = false;
    for (const QString &raw : list.split(u',')) {
        const bool neg = raw.startsWith(u'!');
        const QByteArray p = (neg ? raw.mid(1) : raw).toLower().toUtf8();
        if (p.isEmpty() || !KnownHostsEntry::globMatch(t, p))
            continue;
        if (neg)
            return false;
        match = true;
    }
    return match;
}

QString SshConfig::expand(const QString &text, const QString &originalHost, const QString &hostName, int port,
                          const QString &remoteUser, const QString &hostKeyAlias) {
    QString in = text;
    if (in == u"~" || in.startsWith(u"~/"))
        in = homeDir() + in.mid(1);
    const QString local = localHostName();
    QString out;
    for (qsizetype i = 0; i < in.size(); ++i) {
        const QChar c = in[i];
        if (c == u'$' && i + 1 < in.size() && in[i + 1] == u'{') {
            const qsizetype close = in.indexOf(u'}', i + 2);
            if (close > 0) {
                out += qEnvironmentVariable(in.mid(i + 2, close - i - 2).toLocal8Bit().constData());
                i = close;
                continue;
            }
        }
        if (c != u'%' || i + 1 >= in.size()) {
            out += c;
            continue;
        }
        const QChar t = in[++i];
        switch (t.unicode()) {
        case '%':
            out += u'%';
            break;
        case 'd':
            out += homeDir();
            break;
        case 'h':
            out += hostName;
            break;
        case 'i':
            out += QString::number(getuid());
            break;
        case 'k':
            out += hostKeyAlias.isEmpty() ? originalHost : hostKeyAlias;
            break;
        case 'L':
            out += local.section(u'.', 0, 0);
            break;
        case 'l':
            out += local;
            break;
        case 'n':
            out += originalHost;
            break;
        case 'p':
            out += QString::number(port);
            break;
        case 'r':
            out += remoteUser;
            break;
        case 'u':
            out += localUserName();
            break;
        case 'C':
            out += QString::fromLatin1(
                QCryptographicHash::hash((local + hostName + QString::number(port) + remoteUser).toUtf8(),
                                         QCryptographicHash::Sha1)
                    .toHex());
            break;
        default:
            out += u'%';
            out += t;
        }
    }
    return out;
}

SshConfigValues SshConfig::resolve(const QString &host, const QStringList &files, QString *error,
                                   int commandLinePort, const QString &commandLineUser, bool runExec) {
    Parser p;
    p.runExec = runExec;
    p.originalHost = host;
    p.v.port = commandLinePort;
    p.v.user = commandLineUser;
    for (qsizetype i = 0; i < files.size(); ++i)
        p.parseFile(files[i], i == 0, false, 0);
    if (p.error.isEmpty() && p.wantFinal) {
        // `Match canonical` / `Match final`: ssh reads the files once more, earlier values still winning
        p.finalPass = true;
        for (qsizetype i = 0; i < files.size(); ++i)
            p.parseFile(files[i], i == 0, false, 0);
    }
    if (error)
        *error = p.error;
    SshConfigValues v = p.v;
    v.hostName = p.rawHostName.isEmpty() ? QString() : p.hostSoFar();
    const QString hostName = v.hostName.isEmpty() ? host : v.hostName;
    const int port = v.port > 0 ? v.port : 22;
    const QString user = v.user.isEmpty() ? localUserName() : v.user;
    auto expandAll = [&](const QStringList &in) {
        QStringList out;
        for (const QString &s : in)
            out.append(s == u"none" ? s : expand(s, host, hostName, port, user, v.hostKeyAlias));
        return out;
    };
    v.identityFiles = expandAll(v.identityFiles);
    if (v.userKnownHostsFiles)
        v.userKnownHostsFiles = expandAll(*v.userKnownHostsFiles);
    if (v.globalKnownHostsFiles)
        v.globalKnownHostsFiles = expandAll(*v.globalKnownHostsFiles);
    // RevokedHostKeys is used as written: OpenSSH 9.2 expands neither ~ nor tokens in it (a "~/" path is
    // a missing file, and ssh refuses to connect then).
    return v;
}

} // namespace moetune
