// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/hosts/hoststore.h"

#include "remote/hosts/sshconfig.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSettings>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString expandHome(const QString &path) {
    if (path.startsWith(u"~/"))
        return QDir::homePath() + path.mid(1);
    return path;
}

// Keyword and arguments of one ssh_config line ("Key value", "Key=value"); comments dropped.
bool splitLine(const QString &raw, QString *key, QStringList *args) {
    const QString line = raw.trimmed();
    if (line.isEmpty() || line.startsWith(u'#'))
        return false;
    static const QRegularExpression re(u"^([A-Za-z]+)\\s*(?:=\\s*|\\s+)(.*)$"_s);
    const auto m = re.match(line);
    if (!m.hasMatch())
        return false;
    *key = m.captured(1).toLower();
    args->clear();
    // arguments may be double-quoted (ssh_config(5))
    QString cur;
    bool quoted = false;
    bool any = false;
    for (QChar c : m.captured(2)) {
        if (c == u'"') {
            quoted = !quoted;
            any = true;
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

void collectAliases(const QString &path, QStringList *out, QStringList *errors, int depth) {
    if (depth > 8) {
        if (errors)
            errors->append(u"%1: Include nested too deeply."_s.arg(path));
        return;
    }
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        if (errors && depth > 0)
            errors->append(u"Cannot read %1 (included from the ssh config): %2"_s.arg(path, f.errorString()));
        return;
    }
    const QString text = QString::fromUtf8(f.readAll());
    QString key;
    QStringList args;
    for (const QString &line : text.split(u'\n')) {
        if (!splitLine(line, &key, &args))
            continue;
        if (key == u"host") {
            for (const QString &a : std::as_const(args)) {
                if (a.contains(u'*') || a.contains(u'?') || a.startsWith(u'!'))
                    continue; // patterns and negations are not hosts one can pick
                if (!out->contains(a))
                    out->append(a);
            }
        } else if (key == u"include") {
            for (const QString &a : std::as_const(args)) {
                QString pattern = expandHome(a);
                if (QDir::isRelativePath(pattern))
                    pattern = QDir::homePath() + u"/.ssh/"_s + pattern;
                const QFileInfo fi(pattern);
                const QStringList matches =
                    QDir(fi.path()).entryList({fi.fileName()}, QDir::Files, QDir::Name);
                for (const QString &m : matches)
                    collectAliases(fi.path() + u'/' + m, out, errors, depth + 1);
            }
        }
    }
}

} // namespace

constexpr auto localSettingsKey = "hostsLocal/config";

QString HostStore::defaultSshConfigPath() {
    return QDir::homePath() + u"/.ssh/config"_s;
}

QString HostStore::localAlias() {
    return u"local"_s;
}

SshOptions HostStore::userSshOptions(const QString &sshConfigPath) {
    SshOptions o;
    const QString sshDir = QDir::homePath() + u"/.ssh"_s;
    o.sshDir = sshDir;
    o.knownHostsFile.clear(); // the config's UserKnownHostsFile, else ssh's two default files
    o.sshConfigFile = QFileInfo::exists(sshConfigPath) ? sshConfigPath : u"none"_s;
    return o;
}

QStringList HostStore::sshConfigFiles(const QString &userConfig) {
    return {userConfig, u"/etc/ssh/ssh_config"_s};
}

HostConfig HostStore::localHost() const {
    HostConfig h = HostConfig::fromJson(
        QJsonDocument::fromJson(m_settings->value(QLatin1StringView(localSettingsKey)).toByteArray())
            .object());
    h.alias = localAlias();
    h.hostName.clear();
    h.fromSshConfig = false;
    h.local = true;
    return h;
}

std::optional<HostConfig> HostStore::resolve(const QString &spec, QString *error) const {
    const QString s = spec.trimmed();
    if (s.isEmpty()) {
        *error = u"no HOST given. Pass an ssh config alias, a host added in the app, user@host[:port], or "
                 u"'local' for this machine."_s;
        return std::nullopt;
    }
    if (s == localAlias())
        return localHost();
    if (auto h = host(s))
        return h;
    static const QRegularExpression re(
        u"^(?:([^@\\s/]+)@)?([A-Za-z0-9._-]+|\\[[0-9A-Fa-f:.]+\\])(?::(\\d{1,5}))?$"_s);
    const auto m = re.match(s);
    if (!m.hasMatch()) {
        *error =
            u"'%1' is not a host: give an ssh config alias, a host added in the app, user@host[:port], or "
            u"'local'."_s.arg(s);
        return std::nullopt;
    }
    QString hostName = m.captured(2);
    if (hostName.startsWith(u'['))
        hostName = hostName.mid(1, hostName.size() - 2);
    // What ssh would do for a plain name: apply the config's matching Host patterns (Host *, ...).
    HostConfig h = resolveSshConfig(hostName, m_sshConfigPath);
    h.alias = s;
    h.fromSshConfig = false;
    if (h.hostName.isEmpty())
        h.hostName = hostName;
    if (!m.captured(1).isEmpty())
        h.user = m.captured(1);
    if (!m.captured(3).isEmpty()) {
        const int port = m.captured(3).toInt();
        if (port <= 0 || port > 65535) {
            *error = u"port %1 in '%2' is out of range (1-65535)."_s.arg(m.captured(3), s);
            return std::nullopt;
        }
        h.port = port;
    }
    return h;
}

QStringList HostStore::sshConfigAliases(const QString &configPath, QStringList *errors) {
    QStringList out;
    collectAliases(configPath, &out, errors, 0);
    return out;
}

HostConfig HostStore::resolveSshConfig(const QString &alias, const QString &configPath) {
    HostConfig h;
    h.alias = alias;
    h.fromSshConfig = true;
    const SshConfigValues v = SshConfig::resolve(alias, sshConfigFiles(configPath), nullptr, 0, {}, false);
    h.hostName = v.hostName == alias ? QString() : v.hostName;
    h.user = v.user;
    h.port = v.port == 22 ? 0 : v.port;
    h.identityFiles = v.identityFiles;
    h.proxyJump = v.proxyJump == u"none" ? QString() : v.proxyJump;
    return h;
}

HostStore::HostStore(QSettings *settings, QString sshConfigPath)
    : m_settings(settings)
    , m_sshConfigPath(std::move(sshConfigPath)) {}

QList<HostConfig> HostStore::hosts() const {
    m_errors.clear();
    QList<HostConfig> out;
    QHash<QString, HostConfig> saved;
    QStringList savedOrder;
    m_settings->beginGroup(u"hosts"_s);
    for (const QString &key : m_settings->childKeys()) {
        const QJsonDocument doc = QJsonDocument::fromJson(m_settings->value(key).toByteArray());
        if (!doc.isObject()) {
            m_errors.append(u"The saved settings of host %1 are unreadable and were skipped."_s.arg(key));
            continue;
        }
        const HostConfig h = HostConfig::fromJson(doc.object());
        saved.insert(h.alias, h);
        savedOrder.append(h.alias);
    }
    m_settings->endGroup();

    const QStringList aliases = sshConfigAliases(m_sshConfigPath, &m_errors);
    for (const QString &alias : aliases) {
        HostConfig h = resolveSshConfig(alias, m_sshConfigPath);
        if (saved.contains(alias)) {
            const HostConfig s = saved.take(alias);
            h.python = s.python;
            h.logSource = s.logSource;
            h.stopCommand = s.stopCommand;
            h.startCommand = s.startCommand;
            h.serverProfile = s.serverProfile;
            h.rememberPassword = s.rememberPassword;
        }
        out.append(h);
    }
    for (const QString &alias : std::as_const(savedOrder)) {
        if (saved.contains(alias)) {
            HostConfig h = saved.take(alias);
            h.fromSshConfig = false;
            out.append(h);
        }
    }
    return out;
}

std::optional<HostConfig> HostStore::host(const QString &alias) const {
    for (const HostConfig &h : hosts()) {
        if (h.alias == alias)
            return h;
    }
    return std::nullopt;
}

void HostStore::save(const HostConfig &host) {
    if (host.local || host.alias == localAlias()) {
        HostConfig h = host;
        h.local = false; // the key says it; the saved settings stay readable by older versions
        m_settings->setValue(QLatin1StringView(localSettingsKey),
                             QJsonDocument(h.toJson()).toJson(QJsonDocument::Compact));
        m_settings->sync();
        return;
    }
    m_settings->beginGroup(u"hosts"_s);
    // QSettings keys cannot hold '/' or '\\'; the alias is kept inside the value
    QString key = host.alias;
    key.replace(u'/', u'_').replace(u'\\', u'_');
    m_settings->setValue(key, QJsonDocument(host.toJson()).toJson(QJsonDocument::Compact));
    m_settings->endGroup();
    m_settings->sync();
}

bool HostStore::remove(const QString &alias) {
    if (sshConfigAliases(m_sshConfigPath).contains(alias))
        return false;
    QString key = alias;
    key.replace(u'/', u'_').replace(u'\\', u'_');
    m_settings->beginGroup(u"hosts"_s);
    const bool had = m_settings->contains(key);
    m_settings->remove(key);
    m_settings->endGroup();
    m_settings->sync();
    return had;
}

} // namespace moetune
