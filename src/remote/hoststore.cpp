#include "remote/hoststore.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSettings>

#include <libssh/libssh.h>

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

// ProxyJump as written for alias (first match wins, like ssh); libssh itself uses it when connecting.
QString proxyJumpFor(const QString &alias, const QString &path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    bool inMatch = true; // lines before the first Host apply to every host
    QString key;
    QStringList args;
    for (const QString &line : QString::fromUtf8(f.readAll()).split(u'\n')) {
        if (!splitLine(line, &key, &args))
            continue;
        if (key == u"host") {
            inMatch = false;
            for (const QString &a : std::as_const(args)) {
                const bool neg = a.startsWith(u'!');
                const QString pat = neg ? a.mid(1) : a;
                const QRegularExpression re(QRegularExpression::wildcardToRegularExpression(pat));
                if (re.match(alias).hasMatch()) {
                    if (neg) {
                        inMatch = false;
                        break;
                    }
                    inMatch = true;
                }
            }
        } else if (key == u"match") {
            inMatch = false;
        } else if (inMatch && key == u"proxyjump" && !args.isEmpty()) {
            return args.first() == u"none" ? QString() : args.first();
        }
    }
    return {};
}

QString optionString(ssh_session s, ssh_options_e opt) {
    char *value = nullptr;
    if (ssh_options_get(s, opt, &value) != SSH_OK || !value)
        return {};
    const QString out = QString::fromUtf8(value);
    ssh_string_free_char(value);
    return out;
}

} // namespace

QString HostStore::defaultSshConfigPath() {
    return QDir::homePath() + u"/.ssh/config"_s;
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
    ssh_session s = ssh_new();
    const QByteArray a = alias.toUtf8();
    ssh_options_set(s, SSH_OPTIONS_HOST, a.constData());
    const QByteArray cfg = QFile::encodeName(configPath);
    if (ssh_options_parse_config(s, cfg.constData()) == SSH_OK) {
        const QString host = optionString(s, SSH_OPTIONS_HOST);
        h.hostName = host == alias ? QString() : host;
        h.user = optionString(s, SSH_OPTIONS_USER);
        unsigned int port = 0;
        if (ssh_options_get_port(s, &port) == SSH_OK && port != 22)
            h.port = int(port);
        const QString id = optionString(s, SSH_OPTIONS_IDENTITY);
        // libssh lists its default identities too ("%d/id_rsa"); keep only what the config names
        if (!id.isEmpty() && !id.startsWith(u"%d/"))
            h.identityFiles.append(id);
    }
    ssh_free(s);
    h.proxyJump = proxyJumpFor(alias, configPath);
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
