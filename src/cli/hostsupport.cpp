#include "cli/hostsupport.h"

#include "cli/console.h"
#include "core/tuning/hostprobemerge.h"
#include "remote/agentclient.h"
#include "remote/hoststore.h"
#include "remote/localtransport.h"
#include "remote/sshtransport.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSettings>
#include <QTimer>

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune::cli {

namespace {

// Reads one line from the terminal with echo off (passwords, passphrases); "" when there is no terminal.
QString readSecret(const QString &prompt, bool *ok) {
    *ok = false;
    const int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return {};
    const QByteArray p = prompt.toUtf8();
    if (::write(fd, p.constData(), size_t(p.size())) < 0) {
        ::close(fd);
        return {};
    }
    termios old{};
    const bool haveTermios = tcgetattr(fd, &old) == 0;
    if (haveTermios) {
        termios quiet = old;
        quiet.c_lflag &= ~tcflag_t(ECHO);
        tcsetattr(fd, TCSAFLUSH, &quiet);
    }
    QByteArray line;
    char c = 0;
    ssize_t n = 0;
    while ((n = ::read(fd, &c, 1)) == 1 && c != '\n')
        line.append(c);
    if (haveTermios)
        tcsetattr(fd, TCSAFLUSH, &old);
    [[maybe_unused]] const ssize_t w = ::write(fd, "\n", 1);
    ::close(fd);
    *ok = n == 1;
    return QString::fromUtf8(line);
}

// Runs the event loop until done() or the timeout; false on timeout.
template <typename Done>
bool spin(int timeoutMs, Done done) {
    QEventLoop loop;
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done())
            loop.quit();
    });
    QTimer timeout;
    timeout.setSingleShot(true);
    bool timedOut = false;
    QObject::connect(&timeout, &QTimer::timeout, &loop, [&] {
        timedOut = true;
        loop.quit();
    });
    if (done())
        return true;
    poll.start(20);
    timeout.start(timeoutMs);
    loop.exec();
    return !timedOut || done();
}

HostConfig localHostConfig() {
    QSettings settings;
    HostConfig h = HostConfig::fromJson(
        QJsonDocument::fromJson(settings.value(u"hostsLocal/config"_s).toByteArray()).object());
    h.alias = u"local"_s;
    h.hostName.clear();
    return h;
}

} // namespace

std::optional<HostTarget> resolveHost(const QString &spec, QString *error) {
    const QString s = spec.trimmed();
    if (s.isEmpty()) {
        *error = u"no HOST given. Pass an ssh config alias, a host added in the app, user@host[:port], or "
                 u"'local' for this machine."_s;
        return std::nullopt;
    }
    if (s == u"local"_s)
        return HostTarget{localHostConfig(), true};
    QSettings settings;
    const HostStore store(&settings);
    if (const auto h = store.host(s))
        return HostTarget{*h, false};
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
    HostConfig h = HostStore::resolveSshConfig(hostName, HostStore::defaultSshConfigPath());
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
    return HostTarget{h, false};
}

HostSession::HostSession(HostTarget target, Options options)
    : m_target(std::move(target))
    , m_options(std::move(options)) {
    if (!m_options.python.isEmpty())
        m_target.host.python = m_options.python;
}

HostSession::~HostSession() {
    m_agent.reset();
    m_transport.reset();
}

bool HostSession::connect(QString *error, bool *hostKeyUnknown) {
    if (hostKeyUnknown)
        *hostKeyUnknown = false;
    const QString label = m_target.local ? u"this machine"_s : m_target.host.alias;
    if (m_target.local) {
        m_transport = std::make_unique<LocalTransport>();
    } else {
        SshOptions o;
        o.host = m_target.host;
        // The files of $HOME/.ssh, like ssh and HostStore (libssh alone would look up the passwd home).
        const QString sshDir = QDir::homePath() + u"/.ssh"_s;
        o.sshDir = sshDir;
        o.knownHostsFile = sshDir + u"/known_hosts"_s;
        if (QFileInfo::exists(sshDir + u"/config"_s))
            o.sshConfigFile = sshDir + u"/config"_s;
        else
            o.sshConfigFile = u"none"_s;
        auto ssh = std::make_unique<SshTransport>(o);
        SshTransport *t = ssh.get();
        QObject::connect(
            t, &SshTransport::hostKeyUnknown, t, [this, t](const QString &type, const QString &fp) {
                m_keyType = type;
                m_fingerprint = fp;
                const bool accept = m_options.acceptNewHostKey || (!m_options.expectFingerprint.isEmpty() &&
                                                                   m_options.expectFingerprint == fp);
                if (accept)
                    m_acceptedFingerprint = fp;
                else
                    m_refusedKey = true;
                t->answerHostKey(accept);
            });
        QObject::connect(
            t, &SshTransport::secretRequested, t,
            [this, t](SshTransport::SecretKind kind, const QStringList &prompts, const QString &instruction) {
                if (!Console::stdinIsTerminal()) {
                    m_secretError = kind == SshTransport::SecretKind::Passphrase
                                        ? u"the key needs a passphrase and there is no terminal to ask it "
                                          u"on. Load the key "
                                          u"into ssh-agent (ssh-add) first."_s
                                        : u"the host asks for a password and there is no terminal to ask it "
                                          u"on. Use a key "
                                          u"(ssh-copy-id) or ssh-agent."_s;
                    t->cancelSecret();
                    return;
                }
                if (!instruction.isEmpty())
                    Console::err(instruction + u'\n');
                QStringList answers;
                const QStringList asked = prompts.isEmpty() ? QStringList{u"Password: "_s} : prompts;
                for (const QString &prompt : asked) {
                    bool ok = false;
                    QString text = prompt.trimmed();
                    if (!text.endsWith(u':'))
                        text += u':';
                    answers.append(readSecret(text + u' ', &ok));
                    if (!ok) {
                        m_secretError = u"no answer was given on the terminal."_s;
                        t->cancelSecret();
                        return;
                    }
                }
                t->provideSecret(answers, false);
            });
        m_transport = std::move(ssh);
    }
    Transport *t = m_transport.get();
    t->connectToHost();
    const bool finished = spin(m_options.timeoutMs, [t] {
        const auto s = t->state();
        return s == Transport::State::Connected || s == Transport::State::Failed;
    });
    if (t->state() == Transport::State::Connected) {
        const QString agentPath = AgentClient::defaultLocalAgentPath();
        m_agent = std::make_unique<AgentClient>(t, m_target.host, agentPath);
        if (agentPath.isEmpty()) {
            *error =
                u"the agent file moetune-agent.pyz was not found beside moetune-cli or in the build tree. "
                u"Build the moetune_agent_pyz target, or set MOETUNE_AGENT_PYZ to its path."_s;
            return false;
        }
        return true;
    }
    if (m_refusedKey) {
        if (hostKeyUnknown)
            *hostKeyUnknown = true;
        const QString alias = m_target.host.alias;
        QString keyFile = m_keyType;
        keyFile.remove(u"ssh-"_s);
        *error =
            u"the host key of %1 is not known yet: %2 key %3.\n"
            u"Check it against the host's own (on %1: ssh-keygen -lf /etc/ssh/ssh_host_%4_key.pub), "
            u"then trust it with:\n  moetune-cli trust-host %5 --fingerprint %3\n"
            u"(or repeat the command with --accept-new-host-key)."_s.arg(
                label, m_keyType, m_fingerprint, keyFile.isEmpty() ? u"ed25519"_s : keyFile.toLower(), alias);
        return false;
    }
    if (!m_secretError.isEmpty()) {
        *error = u"cannot log in to %1: %2"_s.arg(label, m_secretError);
        return false;
    }
    const QString why = t->stateMessage();
    if (!finished)
        *error = u"timed out after %1 s connecting to %2%3"_s.arg(m_options.timeoutMs / 1000)
                     .arg(label, why.isEmpty() ? QString() : u": "_s + why);
    else
        *error = why.isEmpty() ? u"could not connect to %1."_s.arg(label) : why;
    return false;
}

bool HostSession::waitCommand(quint64 id, QString *error) {
    bool done = false;
    bool ok = false;
    QString err;
    auto c = QObject::connect(m_agent.get(), &AgentClient::commandFinished, m_agent.get(),
                              [&](JobId j, bool jobOk, const QString &e, const QString &) {
                                  if (j != id)
                                      return;
                                  done = true;
                                  ok = jobOk;
                                  err = e;
                              });
    const bool inTime = spin(m_options.timeoutMs, [&done] { return done; });
    QObject::disconnect(c);
    if (!inTime) {
        m_agent->cancel(id);
        *error = u"timed out after %1 s waiting for %2."_s.arg(m_options.timeoutMs / 1000)
                     .arg(m_target.host.alias);
        return false;
    }
    if (!ok)
        *error = err;
    return ok;
}

std::optional<HostProbe> HostSession::probe(QString *error) {
    std::optional<HostProbe> result;
    const JobId id = m_agent->probe();
    auto c = QObject::connect(m_agent.get(), &AgentClient::probed, m_agent.get(),
                              [&result, id](JobId j, const HostProbe &p) {
                                  if (j == id)
                                      result = p;
                              });
    const bool ok = waitCommand(id, error);
    QObject::disconnect(c);
    if (!ok)
        return std::nullopt;
    if (!result) {
        *error = u"the agent on %1 finished without describing the host."_s.arg(m_target.host.alias);
        return std::nullopt;
    }
    if (m_target.local && result->hostName.isEmpty())
        result->hostName = u"local"_s;
    return result;
}

bool HostSession::fetchLog(qint64 maxBytes, const QString &localFile, QString *error) {
    if (m_target.host.logSource.kind == LogSource::Kind::None) {
        *error =
            u"%1 has no log source. Pass --log /path/to/server.log or --log 'journalctl -u sglang -n 20000' "
            u"(or set it in the app's Hosts page)."_s.arg(m_target.host.alias);
        return false;
    }
    return waitCommand(m_agent->fetchLog(maxBytes, localFile), error);
}

void HostSession::disconnect() {
    if (m_transport)
        m_transport->disconnectFromHost();
}

QList<QCommandLineOption> HostDiagnoseSource::options() const {
    return {
        QCommandLineOption(
            u"host"_s,
            u"Diagnose the server log of HOST (ssh config alias, app host, user@host[:port], or "
            u"'local'), merged with what the host's probe finds."_s,
            u"HOST"_s),
        QCommandLineOption(u"python"_s, u"With --host: the host's Python interpreter (e.g. a venv's)."_s,
                           u"PATH"_s),
        QCommandLineOption(u"bytes"_s,
                           u"With --host: how much of the end of the log to fetch (default 64M)."_s,
                           u"N[K|M|G]"_s, u"64M"_s),
        QCommandLineOption(
            u"log"_s,
            u"With --host: the log source, a file path on the host or a command that prints the "
            u"log (default: the host's setting in the app)."_s,
            u"SOURCE"_s),
        QCommandLineOption(
            u"accept-new-host-key"_s,
            u"With --host: record an unknown host key instead of refusing (a changed key is always "
            u"refused)."_s),
    };
}

bool HostDiagnoseSource::isSelected(const QCommandLineParser &parser) const {
    return parser.isSet(u"host"_s);
}

std::unique_ptr<QIODevice> HostDiagnoseSource::open(const QCommandLineParser &parser, QString *label,
                                                    QString *error) {
    auto target = resolveHost(parser.value(u"host"_s), error);
    if (!target)
        return nullptr;
    if (parser.isSet(u"log"_s))
        target->host.logSource = LogSource::fromString(parser.value(u"log"_s));
    static const QRegularExpression sizeRe(u"^(\\d+)([KkMmGg]?)[Bb]?$"_s);
    const auto m = sizeRe.match(parser.value(u"bytes"_s).trimmed());
    if (!m.hasMatch() || m.captured(1).toLongLong() <= 0) {
        *error = u"--bytes wants a size such as 1048576, 512K, 64M or 2G (got '%1')."_s.arg(
            parser.value(u"bytes"_s));
        return nullptr;
    }
    const QString unit = m.captured(2).toUpper();
    const int shift = unit == u"K"_s ? 10 : unit == u"M"_s ? 20 : unit == u"G"_s ? 30 : 0;
    const qint64 maxBytes = m.captured(1).toLongLong() << shift;

    HostSession::Options options;
    options.python = parser.value(u"python"_s);
    options.acceptNewHostKey = parser.isSet(u"accept-new-host-key"_s);
    HostSession session(*target, options);
    if (!session.connect(error))
        return nullptr;
    QString probeError;
    m_probe = session.probe(&probeError);
    if (!m_probe)
        Console::err(
            u"moetune-cli diagnose: warning: the probe of %1 failed, so the diagnosis has no host facts: %2\n"_s
                .arg(target->host.alias, probeError));
    m_log = std::make_unique<QTemporaryFile>(QDir::tempPath() + u"/moetune-host-log-XXXXXX.log"_s);
    if (!m_log->open()) {
        *error = u"cannot create a temporary file for the log: %1"_s.arg(m_log->errorString());
        return nullptr;
    }
    m_log->close();
    QString fetchError;
    if (!session.fetchLog(maxBytes, m_log->fileName(), &fetchError)) {
        *error = u"cannot fetch the log of %1: %2"_s.arg(target->host.alias, fetchError);
        return nullptr;
    }
    session.disconnect();
    *label = target->host.alias + u':' + target->host.logSource.value;
    auto file = std::make_unique<QFile>(m_log->fileName());
    if (!file->open(QIODevice::ReadOnly)) {
        *error = u"cannot read the fetched log %1: %2"_s.arg(m_log->fileName(), file->errorString());
        return nullptr;
    }
    return file;
}

Diagnosis HostDiagnoseSource::merge(Diagnosis diagnosis) const {
    return m_probe ? mergeHostProbe(std::move(diagnosis), *m_probe) : diagnosis;
}

MOETUNE_REGISTER_DIAGNOSE_SOURCE(HostDiagnoseSource)

} // namespace moetune::cli
