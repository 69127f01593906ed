#include "remote/sshsession.h"

#include "remote/knownhosts.h"
#include "remote/shellquote.h"

#include <QDir>
#include <QFileInfo>
#include <QSocketNotifier>

#include <libssh/server.h>
#ifdef MOETUNE_HAVE_LIBCRYPTO
#include <openssl/evp.h>
#endif // ssh_send_keepalive (a plain global request; the client may send it too)

#include <fcntl.h>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

constexpr int kMaxExecChannels = 8;         // OpenSSH's MaxSessions is 10; keep room for transfer helpers
constexpr qint64 kUploadChunk = 256 * 1024; // bytes written to the upload channel per step
constexpr uint32_t kReadChunk = 64 * 1024;
constexpr int kReadAhead = 32; // outstanding SFTP read requests
constexpr int kSliceMs = 20;   // longest stretch of transfer work before the worker looks at its queue
constexpr int kProgressMs = 100;
constexpr int kFlushMs = 15;
constexpr qsizetype kFlushBytes = 1 << 20;
constexpr int kMaxUndeliveredBatches = 8; // output batches the receiver may have queued before reading pauses
constexpr qsizetype kMaxBatchLines = 16384;  // lines per batch: ~1 MB as QStrings, whatever their length
constexpr qsizetype kMaxLineBytes = 1 << 20; // a longer line is delivered in pieces of this size
constexpr char kPgidMarker[] = "moetune-pgid ";
constexpr char kPgidPrefix[] = "printf 'moetune-pgid %s\\n' \"$$\" >&2; ";

JobResult failure(const QString &error) {
    JobResult r;
    r.error = error;
    return r;
}

QString expandHome(const QString &path) {
    if (path == u"~")
        return QDir::homePath();
    if (path.startsWith(u"~/"))
        return QDir::homePath() + path.mid(1);
    return path;
}

} // namespace

// SHA-256 through OpenSSL when available (about twice Qt 6.4's own implementation).
class Sha256 {
public:
#ifdef MOETUNE_HAVE_LIBCRYPTO
    Sha256()
        : m_ctx(EVP_MD_CTX_new()) {
        EVP_DigestInit_ex(m_ctx, EVP_sha256(), nullptr);
    }
    ~Sha256() {
        EVP_MD_CTX_free(m_ctx);
    }
    void add(const char *data, qint64 n) {
        EVP_DigestUpdate(m_ctx, data, size_t(n));
    }
    QByteArray hex() {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        EVP_DigestFinal_ex(m_ctx, md, &len);
        return QByteArray(reinterpret_cast<const char *>(md), int(len)).toHex();
    }
    Sha256(const Sha256 &) = delete;
    Sha256 &operator=(const Sha256 &) = delete;

private:
    EVP_MD_CTX *m_ctx;
#else
    void add(const char *data, qint64 n) {
        m_hash.addData(QByteArrayView(data, n));
    }
    QByteArray hex() {
        return m_hash.result().toHex();
    }

private:
    QCryptographicHash m_hash{QCryptographicHash::Sha256};
#endif
};

// Reads a helper channel to its end (stdout, stderr) and returns its exit status (-1 on error).
int drainChannel(ssh_channel ch, QByteArray *out, QByteArray *err, int timeoutMs) {
    char buf[16384];
    for (;;) {
        const int n = ssh_channel_read_timeout(ch, buf, sizeof buf, 0, timeoutMs);
        if (n == SSH_ERROR)
            return -1;
        if (n <= 0)
            break;
        out->append(buf, n);
    }
    for (;;) {
        const int n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 1);
        if (n <= 0)
            break;
        err->append(buf, n);
    }
    return ssh_channel_get_exit_status(ch);
}

struct SshSession::ExecState {
    qint64 pgid = 0; // the remote command's process group, announced by the wrapper's first line
    bool pgidKnown = false;
    SshJob job;
    ssh_channel channel = nullptr;
    QByteArray out;
    QByteArray err;
    QByteArray raw;
    std::unique_ptr<QFile> file;
    qint64 bytes = 0;
    QElapsedTimer started;
    QElapsedTimer lastProgress;
    QElapsedTimer lastFlush;
};

struct SshSession::TransferState {
    SshJob job;
    sftp_file remote = nullptr;
    ssh_channel upChannel = nullptr; // upload: `cat > <file>.part` on the host
    QFile local;
    std::unique_ptr<QSaveFile> save;
    Sha256 hash;
    ssh_channel sumChannel = nullptr; // download: the host's sha256sum of the file, run alongside
    qint64 total = 0;
    qint64 done = 0;
    qint64 requested = 0;
    QList<uint32_t> inFlight;
    QElapsedTimer lastProgress;
    bool cancelled = false;
    QString partPath; // upload: remote "<target>.part"
};

SshSession::SshSession(const SshOptions &options, std::shared_ptr<QAtomicInt> undelivered)
    : m_options(options)
    , m_undelivered(std::move(undelivered)) {
    // parented so that moveToThread() takes the timers along to the worker thread
    m_safetyTimer.setParent(this);
    m_keepaliveTimer.setParent(this);
    m_reconnectTimer.setParent(this);
    m_safetyTimer.setInterval(10);
    connect(&m_safetyTimer, &QTimer::timeout, this, &SshSession::pump);
    m_keepaliveTimer.setInterval(1000);
    connect(&m_keepaliveTimer, &QTimer::timeout, this, &SshSession::keepalive);
    m_reconnectTimer.setSingleShot(true);
    connect(&m_reconnectTimer, &QTimer::timeout, this, &SshSession::connectNow);
}

SshSession::~SshSession() {
    teardown();
}

QString SshSession::hostLabel() const {
    return m_options.host.alias.isEmpty() ? m_options.host.hostName : m_options.host.alias;
}

QString SshSession::sshError() const {
    return m_session ? QString::fromUtf8(ssh_get_error(m_session)) : QString();
}

QString SshSession::sftpPath(const QString &path) const {
    // "~" is the shell's $HOME (what exec commands see); sftp-server's own start folder is only the fallback
    if (path == u"~")
        return m_remoteHome.isEmpty() ? u"."_s : m_remoteHome;
    if (path.startsWith(u"~/"))
        return m_remoteHome.isEmpty() ? path.mid(2) : m_remoteHome + path.mid(1);
    return path;
}

void SshSession::setState(Transport::State s, const QString &message) {
    m_state = s;
    emit stateChanged(s, message);
    if (s == Transport::State::Failed) {
        // Nothing will run them: jobs still queued fail with the reason instead of waiting forever
        // (after the state, so that a receiver sees Failed when their results arrive).
        const QList<SshJob> queued = std::exchange(m_queue, {});
        for (const SshJob &j : queued) {
            JobResult r;
            r.error = u"The job never ran: %1"_s.arg(message);
            r.connectionLost = m_everConnected;
            emit finished(j.id, r);
        }
    }
}

void SshSession::start() {
    m_stopped = false;
    m_reconnectAttempt = 0;
    m_everConnected = false;
    connectNow();
}

void SshSession::stop() {
    m_stopped = true;
    m_reconnectTimer.stop();
    for (const auto &e : m_execs) {
        JobResult r;
        r.error = u"Disconnected from %1 by request."_s.arg(hostLabel());
        r.cancelled = true;
        finishExec(*e, r);
    }
    if (m_transfer) {
        JobResult r;
        r.error = u"Disconnected from %1 by request."_s.arg(hostLabel());
        r.cancelled = true;
        finishTransfer(r);
    }
    const QList<SshJob> queued = std::exchange(m_queue, {});
    for (const SshJob &j : queued) {
        JobResult r;
        r.error = u"Disconnected from %1 before the job ran."_s.arg(hostLabel());
        r.cancelled = true;
        emit finished(j.id, r);
    }
    teardown();
    setState(Transport::State::Disconnected, u"Disconnected from %1."_s.arg(hostLabel()));
}

void SshSession::teardown() {
    m_keepaliveTimer.stop();
    m_safetyTimer.stop();
    delete m_notifier;
    m_notifier = nullptr;
    for (const auto &e : m_execs) {
        if (e->channel)
            ssh_channel_free(e->channel);
        e->channel = nullptr;
    }
    m_execs.clear();
    if (m_transfer) {
        if (m_transfer->remote)
            sftp_close(m_transfer->remote);
        m_transfer->remote = nullptr;
        if (m_transfer->upChannel)
            ssh_channel_free(m_transfer->upChannel);
        m_transfer->upChannel = nullptr;
        if (m_transfer->sumChannel)
            ssh_channel_free(m_transfer->sumChannel);
        m_transfer->sumChannel = nullptr;
    }
    if (m_sftp) {
        sftp_free(m_sftp);
        m_sftp = nullptr;
    }
    if (m_session) {
        ssh_disconnect(m_session);
        ssh_free(m_session);
        m_session = nullptr;
    }
    m_authStep = AuthStep::None;
    m_waitingSecret = false;
}

void SshSession::connectNow() {
    if (m_stopped)
        return;
    teardown();
    const HostConfig &h = m_options.host;
    setState(m_everConnected ? Transport::State::Reconnecting : Transport::State::Connecting,
             u"Connecting to %1…"_s.arg(h.displayName()));
    m_session = ssh_new();
    const QByteArray alias = h.sshName().toUtf8(); // a typed user@host:port is not a host name to libssh
    ssh_options_set(m_session, SSH_OPTIONS_HOST, alias.constData());
    if (!m_options.sshDir.isEmpty()) {
        const QByteArray dir = QFile::encodeName(m_options.sshDir);
        ssh_options_set(m_session, SSH_OPTIONS_SSH_DIR, dir.constData());
    }
    if (!m_options.knownHostsFile.isEmpty()) {
        const QByteArray kh = QFile::encodeName(m_options.knownHostsFile);
        ssh_options_set(m_session, SSH_OPTIONS_KNOWNHOSTS, kh.constData());
        ssh_options_set(m_session, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
    }
    if (m_options.sshConfigFile == u"none") {
        const int no = 0;
        ssh_options_set(m_session, SSH_OPTIONS_PROCESS_CONFIG, &no);
    } else {
        const QByteArray cfg = QFile::encodeName(expandHome(m_options.sshConfigFile));
        if (ssh_options_parse_config(m_session,
                                     m_options.sshConfigFile.isEmpty() ? nullptr : cfg.constData()) < 0) {
            const QString why = sshError();
            teardown();
            setState(Transport::State::Failed,
                     u"Cannot read the ssh config for %1: %2"_s.arg(hostLabel(), why));
            return;
        }
    }
    // What the app knows explicitly wins over the config file (as on ssh's command line).
    if (!h.hostName.isEmpty()) {
        const QByteArray hn = h.hostName.toUtf8();
        ssh_options_set(m_session, SSH_OPTIONS_HOST, hn.constData());
    }
    if (!h.user.isEmpty()) {
        const QByteArray u = h.user.toUtf8();
        ssh_options_set(m_session, SSH_OPTIONS_USER, u.constData());
    }
    if (h.port > 0) {
        const unsigned int port = unsigned(h.port);
        ssh_options_set(m_session, SSH_OPTIONS_PORT, &port);
    }
    if (!h.fromSshConfig) {
        for (const QString &id : h.identityFiles) {
            const QByteArray p = QFile::encodeName(expandHome(id));
            ssh_options_set(m_session, SSH_OPTIONS_ADD_IDENTITY, p.constData());
        }
        if (!h.proxyJump.isEmpty()) {
            const QByteArray pc = (u"ssh -J "_s + shellQuote(h.proxyJump) + u" -W [%h]:%p"_s).toUtf8();
            ssh_options_set(m_session, SSH_OPTIONS_PROXYCOMMAND, pc.constData());
        }
    }
    const long timeoutUsec = long(m_options.connectTimeoutMs) * 1000;
    ssh_options_set(m_session, SSH_OPTIONS_TIMEOUT_USEC, &timeoutUsec);
    // SFTP is request/response: without TCP_NODELAY each small request waits out Nagle + delayed ACK (~40 ms)
    const int nodelay = 1;
    ssh_options_set(m_session, SSH_OPTIONS_NODELAY, &nodelay);
    // AES-GCM first: OpenSSL runs it on AES-NI, several times faster than libssh's own chacha20-poly1305
    // (a config file's Ciphers line, parsed above, is replaced; the set stays within OpenSSH's defaults).
    static const char kCiphers[] =
        "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,"
        "aes128-ctr,aes192-ctr,aes256-ctr";
    ssh_options_set(m_session, SSH_OPTIONS_CIPHERS_C_S, kCiphers);
    ssh_options_set(m_session, SSH_OPTIONS_CIPHERS_S_C, kCiphers);
    m_rx = {};
    m_tx = {};
    ssh_set_counters(m_session, &m_tx, &m_rx);

    if (ssh_connect(m_session) != SSH_OK) {
        const QString why = sshError();
        teardown();
        if (m_everConnected) {
            scheduleReconnect();
            return;
        }
        setState(Transport::State::Failed, u"Cannot connect to %1: %2"_s.arg(h.displayName(), why));
        return;
    }
    if (checkHostKey())
        continueAuth();
}

bool SshSession::checkHostKey() {
    ssh_key key = nullptr;
    if (ssh_get_server_publickey(m_session, &key) != SSH_OK) {
        const QString why = sshError();
        teardown();
        setState(Transport::State::Failed, u"%1 sent no host key: %2"_s.arg(hostLabel(), why));
        return false;
    }
    unsigned char *hash = nullptr;
    size_t hashLen = 0;
    QString fingerprint;
    if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hashLen) == 0) {
        char *fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hashLen);
        fingerprint = QString::fromUtf8(fp);
        ssh_string_free_char(fp);
        ssh_clean_pubkey_hash(&hash);
    }
    const QString type = QString::fromUtf8(ssh_key_type_to_char(ssh_key_type(key)));
    char *b64 = nullptr;
    QByteArray blob;
    if (ssh_pki_export_pubkey_base64(key, &b64) == SSH_OK) {
        blob = QByteArray::fromBase64(QByteArray(b64));
        ssh_string_free_char(b64);
    }
    ssh_key_free(key);

    // The name ssh looks up: the host actually connected to (HostName after the config) and its port.
    char *host = nullptr;
    m_khHost = m_options.host.hostName.isEmpty() ? m_options.host.alias : m_options.host.hostName;
    if (ssh_options_get(m_session, SSH_OPTIONS_HOST, &host) == SSH_OK && host) {
        m_khHost = QString::fromUtf8(host);
        ssh_string_free_char(host);
    }
    unsigned int port = 22;
    ssh_options_get_port(m_session, &port);
    m_khPort = int(port);
    m_hostKeyBlob = blob;
    const QString khName = QString::fromUtf8(KnownHostsEntry::lookupName(m_khHost, m_khPort));
    const KnownHosts knownHosts = this->knownHosts();
    const QString khFile = knownHosts.files().value(0);
    const QString removeCmd = khFile == QDir::homePath() + u"/.ssh/known_hosts"_s
                                  ? u"ssh-keygen -R '%1'"_s.arg(khName)
                                  : u"ssh-keygen -R '%1' -f '%2'"_s.arg(khName, khFile);
    auto where = [](const QList<HostKeyVerdict::Where> &lines) {
        QStringList out;
        for (const auto &w : lines)
            out.append(u"%1 line %2"_s.arg(w.file).arg(w.line));
        return out.join(u", "_s);
    };

    // Decided here from the files, never by ssh_session_is_known_server(): with StrictHostKeyChecking
    // no/accept-new in ~/.ssh/config, libssh 0.10 answers OK for a changed key when the global file has no
    // match. Unknown keys are always the user's decision; changed and revoked keys are always refused.
    const HostKeyVerdict v =
        blob.isEmpty()
            ? HostKeyVerdict{HostKeyVerdict::Status::Error, {}, {}, u"the host key cannot be read"_s}
            : knownHosts.check(m_khHost, m_khPort, blob);
    switch (v.status) {
    case HostKeyVerdict::Status::Known:
        return true;
    case HostKeyVerdict::Status::Revoked:
        teardown();
        setState(Transport::State::Failed,
                 u"The host key of %1, %2 (%3), is marked @revoked in %4. Refusing to connect: a revoked key "
                 "is never accepted. Ask the host's administrator for its current key."_s.arg(
                     hostLabel(), fingerprint, type, where(v.lines)));
        return false;
    case HostKeyVerdict::Status::Changed:
        teardown();
        setState(Transport::State::Failed,
                 u"Host key for %1 changed: %2 (%3) does not match %4. Refusing to connect; if the host was "
                 "reinstalled, remove its line from %5 (%6). If it was not, someone may be intercepting the "
                 "connection."_s.arg(hostLabel(), fingerprint, type, where(v.lines), khFile, removeCmd));
        return false;
    case HostKeyVerdict::Status::OtherType:
        teardown();
        setState(
            Transport::State::Failed,
            u"Host key for %1 changed: it now offers a %2 key (%3) but %4 records a key of another type "
            "for it. Refusing to connect; if the host was reinstalled, remove its line from %5 (%6)."_s.arg(
                hostLabel(), type, fingerprint, where(v.lines), khFile, removeCmd));
        return false;
    case HostKeyVerdict::Status::Unknown: {
        QString message =
            u"%1 is not a known host. Its %2 key fingerprint is %3. Accept it only if it matches the host's "
            "(ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on the host)."_s.arg(hostLabel(), type, fingerprint);
        if (!v.certAuthorities.isEmpty())
            message +=
                u" Note: %1 trusts a certificate authority (@cert-authority) for this host, but host "
                "certificates are not supported by moetune; the host's plain key is what is shown."_s.arg(
                    where(v.certAuthorities));
        setState(Transport::State::AwaitingUser, message);
        emit hostKeyUnknown(type, fingerprint);
        return false;
    }
    case HostKeyVerdict::Status::Error:
        break;
    }
    teardown();
    setState(Transport::State::Failed,
             u"Cannot check the host key of %1 against %2: %3"_s.arg(hostLabel(), khFile, v.error));
    return false;
}

KnownHosts SshSession::knownHosts() const {
    return KnownHosts(KnownHosts::defaultFiles(expandHome(m_options.knownHostsFile)));
}

void SshSession::hostKeyAnswer(bool accept) {
    if (!m_session || m_state != Transport::State::AwaitingUser || m_authStep != AuthStep::None)
        return;
    if (!accept) {
        teardown();
        setState(Transport::State::Failed, u"Host key of %1 not accepted; not connected."_s.arg(hostLabel()));
        return;
    }
    QString why;
    if (!knownHosts().add(m_khHost, m_khPort, m_hostKeyBlob, &why)) {
        teardown();
        setState(Transport::State::Failed, u"Cannot record the host key of %1: %2"_s.arg(hostLabel(), why));
        return;
    }
    setState(m_everConnected ? Transport::State::Reconnecting : Transport::State::Connecting,
             u"Host key of %1 recorded; authenticating…"_s.arg(hostLabel()));
    continueAuth();
}

void SshSession::secretAnswer(const QStringList &answers, bool cancelled) {
    if (!m_waitingSecret || !m_session)
        return;
    m_waitingSecret = false;
    if (cancelled) {
        teardown();
        setState(Transport::State::Failed, u"Authentication to %1 cancelled."_s.arg(hostLabel()));
        return;
    }
    switch (m_authStep) {
    case AuthStep::IdentityFiles: {
        const QString path = m_identities.value(m_identityIndex);
        m_passphrases.insert(path, answers.value(0));
        break;
    }
    case AuthStep::KbdInteractive:
        for (int i = 0; i < answers.size(); ++i) {
            const QByteArray a = answers[i].toUtf8();
            ssh_userauth_kbdint_setanswer(m_session, unsigned(i), a.constData());
        }
        break;
    case AuthStep::Password:
        m_password = answers.value(0);
        m_passwordKnown = true;
        break;
    default:
        break;
    }
    continueAuth();
}

void SshSession::continueAuth() {
    auto ask = [this](int kind, const QStringList &prompts, const QString &instruction) {
        m_waitingSecret = true;
        setState(Transport::State::AwaitingUser, prompts.value(0));
        emit secretRequested(kind, prompts, instruction);
    };
    if (m_authStep == AuthStep::None) {
        m_triedMethods.clear();
        const int rc = ssh_userauth_none(m_session, nullptr);
        if (rc == SSH_AUTH_SUCCESS)
            return authenticated();
        if (rc == SSH_AUTH_ERROR)
            return connectionLost(sshError());
        m_authStep = AuthStep::PublicKeyAuto;
    }
    const int methods = ssh_userauth_list(m_session, nullptr);
    if (m_authStep == AuthStep::PublicKeyAuto) {
        if (methods & SSH_AUTH_METHOD_PUBLICKEY) {
            m_triedMethods.append(m_options.useAgent ? u"agent and default keys"_s : u"default keys"_s);
            const int rc = ssh_userauth_publickey_auto(m_session, nullptr, nullptr);
            if (rc == SSH_AUTH_SUCCESS)
                return authenticated();
            if (rc == SSH_AUTH_ERROR && !ssh_is_connected(m_session))
                return connectionLost(sshError());
        }
        m_authStep = AuthStep::IdentityFiles;
        m_identityIndex = 0;
        m_identities = identityCandidates();
    }
    if (m_authStep == AuthStep::IdentityFiles) {
        const bool defaults = m_options.host.identityFiles.isEmpty();
        for (; (methods & SSH_AUTH_METHOD_PUBLICKEY) && m_identityIndex < m_identities.size();
             ++m_identityIndex) {
            const QString path = m_identities[m_identityIndex];
            if (!QFileInfo::exists(path))
                continue;
            const QByteArray file = QFile::encodeName(path);
            const bool havePass = m_passphrases.contains(path);
            const QByteArray pass = m_passphrases.value(path).toUtf8();
            ssh_key key = nullptr;
            if (ssh_pki_import_privkey_file(file.constData(), havePass ? pass.constData() : nullptr, nullptr,
                                            nullptr, &key) != SSH_OK) {
                if (!havePass) {
                    ask(0, {u"Passphrase for %1"_s.arg(path)}, u"The key file is encrypted."_s);
                    return;
                }
                m_passphrases.remove(path); // a wrong passphrase is not kept for reconnects
                m_triedMethods.append(u"%1 (could not be decrypted)"_s.arg(path));
                continue;
            }
            if (defaults && !havePass) {
                ssh_key_free(key); // a default key without passphrase was offered by publickey_auto already
                continue;
            }
            m_triedMethods.append(path);
            const int rc = ssh_userauth_publickey(m_session, nullptr, key);
            ssh_key_free(key);
            if (rc == SSH_AUTH_SUCCESS)
                return authenticated();
        }
        m_authStep = AuthStep::KbdInteractive;
    }
    if (m_authStep == AuthStep::KbdInteractive) {
        if (methods & SSH_AUTH_METHOD_INTERACTIVE) {
            if (!m_triedMethods.contains(u"keyboard-interactive"_s))
                m_triedMethods.append(u"keyboard-interactive"_s);
            int rc = ssh_userauth_kbdint(m_session, nullptr, nullptr);
            while (rc == SSH_AUTH_INFO) {
                const int n = ssh_userauth_kbdint_getnprompts(m_session);
                if (n > 0) {
                    QStringList prompts;
                    for (int i = 0; i < n; ++i)
                        prompts.append(QString::fromUtf8(
                            ssh_userauth_kbdint_getprompt(m_session, unsigned(i), nullptr)));
                    ask(1, prompts, QString::fromUtf8(ssh_userauth_kbdint_getinstruction(m_session)));
                    return;
                }
                rc = ssh_userauth_kbdint(m_session, nullptr, nullptr);
            }
            if (rc == SSH_AUTH_SUCCESS)
                return authenticated();
        }
        m_authStep = AuthStep::Password;
    }
    if (m_authStep == AuthStep::Password && (methods & SSH_AUTH_METHOD_PASSWORD)) {
        if (!m_passwordKnown) {
            ask(2, {u"Password for %1"_s.arg(m_options.host.displayName())}, QString());
            return;
        }
        m_triedMethods.append(u"password"_s);
        const QByteArray pw = m_password.toUtf8();
        if (ssh_userauth_password(m_session, nullptr, pw.constData()) == SSH_AUTH_SUCCESS)
            return authenticated();
        m_passwordKnown = false;
        m_password.clear();
    }
    const QString tried =
        m_triedMethods.isEmpty() ? u"no method the server offers"_s : m_triedMethods.join(u", "_s);
    teardown();
    setState(
        Transport::State::Failed,
        u"Authentication to %1 failed (tried: %2). Check that your key is in the host's authorized_keys, "
        "that ssh-agent holds it (ssh-add -l), or the user name."_s.arg(m_options.host.displayName(), tried));
}

QStringList SshSession::identityCandidates() const {
    QStringList out;
    for (const QString &id : m_options.host.identityFiles)
        out.append(expandHome(id));
    if (!out.isEmpty())
        return out;
    // No IdentityFile: ssh's default keys, so that an encrypted one gets its passphrase asked (libssh's
    // publickey_auto skips it silently without a terminal callback).
    const QString dir =
        m_options.sshDir.isEmpty() ? QDir::homePath() + u"/.ssh"_s : expandHome(m_options.sshDir);
    for (const char *name : {"id_rsa", "id_ecdsa", "id_ed25519", "id_dsa"})
        out.append(dir + u'/' + QLatin1StringView(name));
    return out;
}

void SshSession::authenticated() {
    m_authStep = AuthStep::Done;
    QByteArray home;
    QString homeError;
    if (runHelper(u"printf '%s' \"$HOME\""_s, &home, &homeError))
        m_remoteHome = QString::fromUtf8(home);
    m_everConnected = true;
    m_reconnectAttempt = 0;
    m_lastRx.start();
    m_lastRxPackets = m_rx.in_packets;
    m_notifier = new QSocketNotifier(qintptr(ssh_get_fd(m_session)), QSocketNotifier::Read, this);
    m_notifier->setEnabled(false);
    connect(m_notifier, &QSocketNotifier::activated, this, &SshSession::pump);
    m_keepaliveTimer.start();
    setState(Transport::State::Connected, u"Connected to %1."_s.arg(m_options.host.displayName()));
    startQueued();
    schedulePump();
}

void SshSession::connectionLost(const QString &why) {
    const QString message =
        u"Connection to %1 lost: %2"_s.arg(hostLabel(), why.isEmpty() ? u"closed"_s : why);
    for (const auto &e : std::as_const(m_execs)) {
        JobResult r;
        r.error = message + u" The command may or may not have finished on the host; it is not re-run."_s;
        r.connectionLost = true;
        r.bytes = e->bytes;
        finishExec(*e, r);
    }
    if (m_transfer) {
        JobResult r;
        r.error = message + u" The transfer was abandoned; nothing was written at the target."_s;
        r.connectionLost = true;
        finishTransfer(r);
    }
    teardown();
    if (!m_everConnected || m_stopped) {
        setState(Transport::State::Failed, message);
        return;
    }
    setState(Transport::State::Reconnecting, message);
    scheduleReconnect();
}

void SshSession::scheduleReconnect() {
    if (m_stopped)
        return;
    if (m_reconnectAttempt >= m_options.maxReconnectAttempts) {
        const QList<SshJob> queued = std::exchange(m_queue, {});
        for (const SshJob &j : queued) {
            JobResult r;
            r.error = u"%1 stayed unreachable; the job never ran."_s.arg(hostLabel());
            r.connectionLost = true;
            emit finished(j.id, r);
        }
        setState(Transport::State::Failed,
                 u"Gave up reconnecting to %1 after %2 attempts. Check the host and connect again."_s
                     .arg(hostLabel())
                     .arg(m_reconnectAttempt));
        return;
    }
    const int delay = qMin(30000, m_options.initialBackoffMs << qMin(m_reconnectAttempt, 10));
    ++m_reconnectAttempt;
    setState(Transport::State::Reconnecting,
             u"Lost the connection to %1; retrying in %2 s (attempt %3 of %4). %5 queued job(s) wait."_s
                 .arg(hostLabel())
                 .arg(delay / 1000.0)
                 .arg(m_reconnectAttempt)
                 .arg(m_options.maxReconnectAttempts)
                 .arg(m_queue.size()));
    m_reconnectTimer.start(delay);
}

void SshSession::keepalive() {
    if (m_state != Transport::State::Connected || !m_session)
        return;
    if (m_rx.in_packets != m_lastRxPackets) {
        m_lastRxPackets = m_rx.in_packets;
        m_lastRx.restart();
    }
    if (!ssh_is_connected(m_session) || (ssh_get_status(m_session) & (SSH_CLOSED | SSH_CLOSED_ERROR)))
        return connectionLost(sshError());
    if (m_lastRx.elapsed() > m_options.deadAfterMs)
        return connectionLost(u"no answer for %1 s"_s.arg(m_lastRx.elapsed() / 1000));
    if (m_lastRx.elapsed() >= m_options.keepaliveIntervalMs) {
        // Non-blocking: sends the request (or collects the previous reply); never waits.
        ssh_set_blocking(m_session, 0);
        ssh_send_keepalive(m_session);
        ssh_set_blocking(m_session, 1);
        if (!ssh_is_connected(m_session))
            return connectionLost(sshError());
    }
}

void SshSession::submit(const SshJob &job) {
    m_queue.append(job);
    if (m_state == Transport::State::Connected) {
        startQueued();
        schedulePump();
    }
}

void SshSession::cancelJob(JobId id) {
    for (qsizetype i = 0; i < m_queue.size(); ++i) {
        if (m_queue[i].id == id) {
            m_queue.removeAt(i);
            JobResult r;
            r.cancelled = true;
            r.error = u"Cancelled before it started."_s;
            emit finished(id, r);
            return;
        }
    }
    for (const auto &e : std::as_const(m_execs)) {
        if (e->job.id == id) {
            // TERM the remote command (OpenSSH honours the "signal" request), then close the channel
            terminateRemote(*e);
            JobResult r;
            r.cancelled = true;
            r.error = u"Cancelled."_s;
            r.bytes = e->bytes;
            finishExec(*e, r);
            m_execs.removeOne(e);
            return;
        }
    }
    if (m_transfer && m_transfer->job.id == id) {
        m_transfer->cancelled = true;
        schedulePump();
    }
}

void SshSession::schedulePump() {
    if (m_pumpScheduled)
        return;
    m_pumpScheduled = true;
    QMetaObject::invokeMethod(this, &SshSession::pump, Qt::QueuedConnection);
}

void SshSession::startQueued() {
    if (m_state != Transport::State::Connected)
        return;
    for (qsizetype i = 0; i < m_queue.size();) {
        const SshJob job = m_queue[i];
        if (job.kind == SshJob::Kind::Exec) {
            if (m_execs.size() >= kMaxExecChannels) {
                ++i;
                continue;
            }
            m_queue.removeAt(i);
            if (!startExec(job)) {
                if (m_state != Transport::State::Connected)
                    return;
            }
            continue;
        }
        if (m_transfer) {
            ++i;
            continue;
        }
        m_queue.removeAt(i);
        startTransfer(job);
        if (m_state != Transport::State::Connected)
            return;
    }
}

bool SshSession::startExec(const SshJob &job) {
    auto e = std::make_shared<ExecState>();
    e->job = job;
    auto fail = [&](const QString &why) {
        if (e->channel)
            ssh_channel_free(e->channel);
        e->channel = nullptr;
        if (!ssh_is_connected(m_session)) {
            m_queue.prepend(job); // never started: it runs after the reconnect, once
            connectionLost(why);
            return false;
        }
        JobResult r;
        r.error = u"Cannot run the command on %1: %2"_s.arg(hostLabel(), why);
        emit finished(job.id, r);
        return false;
    };
    if (!job.exec.stdoutFile.isEmpty()) {
        e->file = std::make_unique<QFile>(job.exec.stdoutFile);
        if (!e->file->open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            JobResult r;
            r.error = u"Cannot write %1: %2"_s.arg(job.exec.stdoutFile, e->file->errorString());
            emit finished(job.id, r);
            return false;
        }
    }
    e->channel = ssh_channel_new(m_session);
    if (!e->channel || ssh_channel_open_session(e->channel) != SSH_OK)
        return fail(sshError());
    // sshd refuses "signal" requests for root logins (no privilege separation), so the command first
    // announces its process group on stderr: cancel can then `kill -TERM -- -PGID` on any host.
    const QByteArray cmd = (QString::fromLatin1(kPgidPrefix) + job.exec.command).toUtf8();
    if (ssh_channel_request_exec(e->channel, cmd.constData()) != SSH_OK)
        return fail(sshError());
    if (!job.exec.stdinData.isEmpty()) {
        const QByteArray &in = job.exec.stdinData;
        qsizetype off = 0;
        while (off < in.size()) {
            const int n = ssh_channel_write(e->channel, in.constData() + off,
                                            uint32_t(qMin<qsizetype>(in.size() - off, 1 << 20)));
            if (n <= 0)
                break;
            off += n;
        }
    }
    ssh_channel_send_eof(e->channel);
    e->started.start();
    e->lastProgress.start();
    m_execs.append(e);
    if (m_notifier)
        m_notifier->setEnabled(true);
    if (!m_safetyTimer.isActive())
        m_safetyTimer.start();
    return true;
}

void SshSession::terminateRemote(ExecState &e) {
    ssh_channel_request_send_signal(e.channel, "TERM"); // honoured by sshd with privilege separation
    if (e.pgid > 1) {
        QByteArray out;
        QString error;
        runHelper(u"kill -TERM -- -%1 2>/dev/null; true"_s.arg(e.pgid), &out, &error);
    }
}

bool SshSession::receiverBehind() const {
    return m_undelivered->loadRelaxed() >= kMaxUndeliveredBatches;
}

QStringList SshSession::takeLines(QByteArray &buf, bool final) {
    QStringList lines;
    qsizetype start = 0;
    while (lines.size() < kMaxBatchLines) {
        const qsizetype nl = buf.indexOf('\n', start);
        if (nl < 0) {
            // A line without end is cut once it is long (at a UTF-8 boundary): memory stays bounded
            // whatever the host prints.
            qsizetype cut = buf.size() - start >= kMaxLineBytes ? start + kMaxLineBytes : -1;
            while (cut > start && (uchar(buf[cut]) & 0xC0) == 0x80)
                --cut;
            if (cut > start) {
                lines.append(QString::fromUtf8(buf.constData() + start, cut - start));
                start = cut;
                continue;
            }
            break;
        }
        qsizetype end = nl;
        if (end > start && buf[end - 1] == '\r')
            --end;
        lines.append(QString::fromUtf8(buf.constData() + start, end - start));
        start = nl + 1;
    }
    buf.remove(0, start);
    if (final && !buf.isEmpty() && lines.size() < kMaxBatchLines) {
        lines.append(QString::fromUtf8(buf));
        buf.clear();
    }
    return lines;
}

void SshSession::flushLines(ExecState &e, bool final) {
    // Coalesce: at most one batch per channel every kFlushMs (or per kFlushBytes), so a fast stream costs
    // the receiving thread a few events a second, not one per SSH packet.
    if (!final && e.lastFlush.isValid() && e.lastFlush.elapsed() < kFlushMs &&
        e.out.size() + e.err.size() + e.raw.size() < kFlushBytes)
        return;
    e.lastFlush.start();
    // Every emitted batch is counted (the receiver counts it back once delivered); nothing empty is sent.
    // While the receiver is behind, batches wait here (bounded: reading has stopped too), except at the end.
    if (!e.job.exec.rawStdout && !e.file) {
        while (final || !receiverBehind()) {
            const QStringList out = takeLines(e.out, final);
            if (out.isEmpty())
                break;
            m_undelivered->ref();
            emit stdoutLines(e.job.id, out);
        }
    }
    if (!e.raw.isEmpty() && (final || !receiverBehind())) {
        m_undelivered->ref();
        emit stdoutData(e.job.id, e.raw);
        e.raw.clear();
    }
    while (final || !receiverBehind()) {
        const QStringList err = takeLines(e.err, final);
        if (err.isEmpty())
            break;
        m_undelivered->ref();
        emit stderrLines(e.job.id, err);
    }
}

bool SshSession::serviceExec(ExecState &e) {
    static thread_local char buf[64 * 1024];
    bool error = false;
    // Backpressure: while the receiving (GUI) thread has not taken the earlier batches, read nothing more;
    // the data waits in the SSH window / TCP instead of piling up in the receiver's event queue.
    const bool throttled = receiverBehind();
    for (int isStderr : {0, 1}) {
        for (int rounds = 0; !throttled && rounds < 8; ++rounds) { // bounded: no channel starves the others
            const int n = ssh_channel_read_nonblocking(e.channel, buf, sizeof buf, isStderr);
            if (n == SSH_ERROR) {
                error = true;
                break;
            }
            if (n <= 0)
                break;
            if (isStderr) {
                e.err.append(buf, n);
                if (!e.pgidKnown) {
                    const qsizetype nl = e.err.indexOf('\n');
                    if (nl >= 0) {
                        e.pgidKnown = true;
                        if (e.err.startsWith(kPgidMarker)) {
                            e.pgid = e.err
                                         .mid(qsizetype(qstrlen(kPgidMarker)),
                                              nl - qsizetype(qstrlen(kPgidMarker)))
                                         .trimmed()
                                         .toLongLong();
                            e.err.remove(0, nl + 1);
                        }
                    }
                }
            } else {
                e.bytes += n;
                if (e.file)
                    e.file->write(buf, n);
                else if (e.job.exec.rawStdout)
                    e.raw.append(buf, n);
                else
                    e.out.append(buf, n);
            }
        }
    }
    flushLines(e, false);
    if (e.file && e.lastProgress.elapsed() >= kProgressMs) {
        e.lastProgress.restart();
        emit progress(e.job.id, e.bytes, e.job.exec.expectedBytes);
    }
    if (error || !ssh_is_connected(m_session)) {
        connectionLost(sshError());
        return false;
    }
    if (ssh_channel_is_eof(e.channel)) {
        JobResult r;
        r.exitStatus = ssh_channel_get_exit_status(e.channel); // only after EOF (libssh rule)
        r.bytes = e.bytes;
        if (r.exitStatus < 0)
            r.error =
                u"The command on %1 ended without an exit status (killed by a signal?)."_s.arg(hostLabel());
        finishExec(e, r);
        return false;
    }
    if (e.job.exec.timeoutMs > 0 && e.started.elapsed() > e.job.exec.timeoutMs) {
        terminateRemote(e);
        JobResult r;
        r.bytes = e.bytes;
        r.error = u"The command on %1 timed out after %2 s and was stopped."_s.arg(hostLabel())
                      .arg(e.job.exec.timeoutMs / 1000.0);
        finishExec(e, r);
        return false;
    }
    return true;
}

void SshSession::finishExec(ExecState &e, JobResult r) {
    flushLines(e, true);
    if (e.file) {
        e.file->close();
        emit progress(e.job.id, e.bytes, e.job.exec.expectedBytes);
    }
    if (e.channel) {
        if (ssh_is_connected(m_session))
            ssh_channel_close(e.channel);
        ssh_channel_free(e.channel);
        e.channel = nullptr;
    }
    emit finished(e.job.id, r);
}

void SshSession::pump() {
    m_pumpScheduled = false;
    if (m_state != Transport::State::Connected || !m_session)
        return;
    QElapsedTimer slice;
    slice.start();
    do {
        const auto execs = m_execs;
        for (const auto &e : execs) {
            if (!m_execs.contains(e))
                continue;
            if (!serviceExec(*e)) {
                m_execs.removeOne(e);
            }
            if (m_state != Transport::State::Connected)
                return;
        }
        if (m_transfer && !serviceTransfer()) {
            if (m_state != Transport::State::Connected)
                return;
        }
    } while (m_transfer && slice.elapsed() < kSliceMs);
    startQueued();
    if (m_state != Transport::State::Connected)
        return;
    if (m_execs.isEmpty())
        m_safetyTimer.stop();
    // throttled: unread data keeps the socket readable, so only the timer may wake the pump
    if (m_notifier)
        m_notifier->setEnabled(!m_execs.isEmpty() && !receiverBehind());
    if (m_transfer)
        schedulePump();
}

bool SshSession::ensureSftp(QString *error) {
    if (m_sftp)
        return true;
    m_sftp = sftp_new(m_session);
    if (!m_sftp || sftp_init(m_sftp) != SSH_OK) {
        *error = u"Cannot start SFTP on %1: %2 (is the sftp subsystem enabled in sshd_config?)"_s.arg(
            hostLabel(), sshError());
        if (m_sftp)
            sftp_free(m_sftp);
        m_sftp = nullptr;
        return false;
    }
    return true;
}

bool SshSession::runHelper(const QString &command, QByteArray *out, QString *error) {
    ssh_channel ch = ssh_channel_new(m_session);
    if (!ch || ssh_channel_open_session(ch) != SSH_OK) {
        *error = sshError();
        if (ch)
            ssh_channel_free(ch);
        return false;
    }
    const QByteArray cmd = command.toUtf8();
    if (ssh_channel_request_exec(ch, cmd.constData()) != SSH_OK) {
        *error = sshError();
        ssh_channel_free(ch);
        return false;
    }
    ssh_channel_send_eof(ch);
    QByteArray err;
    char buf[16384];
    for (;;) {
        const int n = ssh_channel_read_timeout(ch, buf, sizeof buf, 0, m_options.deadAfterMs * 6);
        if (n == SSH_ERROR) {
            *error = sshError();
            ssh_channel_free(ch);
            return false;
        }
        if (n <= 0)
            break;
        out->append(buf, n);
    }
    for (;;) {
        const int n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 1);
        if (n <= 0)
            break;
        err.append(buf, n);
    }
    const int status = ssh_channel_get_exit_status(ch);
    ssh_channel_close(ch);
    ssh_channel_free(ch);
    if (status != 0) {
        *error = QString::fromUtf8(err.trimmed());
        if (error->isEmpty())
            *error = u"exit status %1"_s.arg(status);
        return false;
    }
    return true;
}

void SshSession::startTransfer(const SshJob &job) {
    m_transfer = std::make_unique<TransferState>();
    TransferState &t = *m_transfer;
    t.job = job;
    t.lastProgress.start();
    QString error;
    if (!ensureSftp(&error))
        return finishTransfer(failure(error));
    const QString remote = sftpPath(job.remotePath);
    if (job.kind == SshJob::Kind::Upload) {
        t.local.setFileName(job.localPath);
        if (!t.local.open(QIODevice::ReadOnly))
            return finishTransfer(failure(u"Cannot read %1: %2"_s.arg(job.localPath, t.local.errorString())));
        t.total = t.local.size();
        t.partPath = job.remotePath + u".part"_s;
        // Uploads stream through an exec channel: libssh 0.10 has no asynchronous SFTP write, and one
        // synchronous SSH_FXP_WRITE round trip per chunk capped uploads far below scp.
        t.upChannel = ssh_channel_new(m_session);
        // the host hashes what it received while it writes it: no second pass over the file
        const QByteArray cmd = (u"umask 022 && { tee -- "_s + shellQuotePath(t.partPath) +
                                u" || echo moetune-write-failed >&2; } | sha256sum"_s)
                                   .toUtf8();
        if (!t.upChannel || ssh_channel_open_session(t.upChannel) != SSH_OK ||
            ssh_channel_request_exec(t.upChannel, cmd.constData()) != SSH_OK) {
            if (!ssh_is_connected(m_session))
                return connectionLost(sshError());
            return finishTransfer(
                failure(u"Cannot write %1 on %2: %3"_s.arg(t.partPath, hostLabel(), sshError())));
        }
    } else {
        const QByteArray path = remote.toUtf8();
        sftp_attributes attr = sftp_stat(m_sftp, path.constData());
        if (!attr)
            return finishTransfer(
                failure(u"Cannot read %1 on %2: %3"_s.arg(job.remotePath, hostLabel(), sshError())));
        t.total = qint64(attr->size);
        sftp_attributes_free(attr);
        t.remote = sftp_open(m_sftp, path.constData(), O_RDONLY, 0);
        if (!t.remote)
            return finishTransfer(
                failure(u"Cannot open %1 on %2: %3"_s.arg(job.remotePath, hostLabel(), sshError())));
        // the host's checksum runs alongside the transfer, on the host's CPU
        t.sumChannel = ssh_channel_new(m_session);
        const QByteArray sum = (u"sha256sum < "_s + shellQuotePath(job.remotePath)).toUtf8();
        if (t.sumChannel && (ssh_channel_open_session(t.sumChannel) != SSH_OK ||
                             ssh_channel_request_exec(t.sumChannel, sum.constData()) != SSH_OK)) {
            ssh_channel_free(t.sumChannel);
            t.sumChannel = nullptr;
        }
        t.save = std::make_unique<QSaveFile>(job.localPath);
        if (!t.save->open(QIODevice::WriteOnly))
            return finishTransfer(
                failure(u"Cannot write %1: %2"_s.arg(job.localPath, t.save->errorString())));
    }
    emit progress(job.id, 0, t.total);
    schedulePump();
}

bool SshSession::serviceTransfer() {
    TransferState &t = *m_transfer;
    if (t.cancelled) {
        JobResult r;
        r.cancelled = true;
        r.error = u"Cancelled."_s;
        finishTransfer(r);
        return false;
    }
    static thread_local QByteArray buf;
    QElapsedTimer slice;
    slice.start();
    if (t.job.kind == SshJob::Kind::Upload) {
        buf.resize(kUploadChunk);
        while (t.done < t.total && slice.elapsed() < kSliceMs) {
            const qint64 n = t.local.read(buf.data(), kUploadChunk);
            if (n <= 0) {
                finishTransfer(failure(u"Cannot read %1: %2"_s.arg(t.job.localPath, t.local.errorString())));
                return false;
            }
            for (qint64 off = 0; off < n;) {
                const int w = ssh_channel_write(t.upChannel, buf.constData() + off, uint32_t(n - off));
                if (w == SSH_ERROR || ssh_channel_is_closed(t.upChannel)) {
                    if (!ssh_is_connected(m_session)) {
                        connectionLost(sshError());
                        return false;
                    }
                    QString why = sshError();
                    char err[4096];
                    const int e = ssh_channel_read_nonblocking(t.upChannel, err, sizeof err, 1);
                    if (e > 0)
                        why = QString::fromUtf8(err, e).trimmed();
                    finishTransfer(failure(u"Cannot write %1 on %2: %3"_s.arg(t.partPath, hostLabel(), why)));
                    return false;
                }
                off += w;
            }
            t.hash.add(buf.constData(), n);
            t.done += n;
        }
    } else {
        buf.resize(kReadChunk);
        while (slice.elapsed() < kSliceMs) {
            while (t.inFlight.size() < kReadAhead && t.requested < t.total) {
                const int id = sftp_async_read_begin(t.remote, kReadChunk);
                if (id < 0) {
                    connectionLost(sshError());
                    return false;
                }
                t.inFlight.append(uint32_t(id));
                t.requested += kReadChunk;
            }
            if (t.inFlight.isEmpty())
                break;
            const int n = sftp_async_read(t.remote, buf.data(), kReadChunk, t.inFlight.takeFirst());
            if (n < 0) {
                if (!ssh_is_connected(m_session)) {
                    connectionLost(sshError());
                    return false;
                }
                finishTransfer(
                    failure(u"Reading %1 on %2 failed: %3"_s.arg(t.job.remotePath, hostLabel(), sshError())));
                return false;
            }
            if (n == 0) { // the file shrank under us: take what is there
                t.inFlight.clear();
                t.total = t.done;
                break;
            }
            t.save->write(buf.constData(), n);
            t.hash.add(buf.constData(), n);
            t.done += n;
        }
    }
    if (t.lastProgress.elapsed() >= kProgressMs) {
        t.lastProgress.restart();
        emit progress(t.job.id, t.done, t.total);
    }
    if (t.done < t.total || !t.inFlight.isEmpty())
        return true;

    // All bytes moved: verify against the host's own sha256sum, then put the file in place.
    emit progress(t.job.id, t.done, t.total);
    if (t.remote)
        sftp_close(t.remote);
    t.remote = nullptr;
    QByteArray remoteSum;
    if (t.upChannel) {
        ssh_channel_send_eof(t.upChannel);
        QByteArray err;
        const int status = drainChannel(t.upChannel, &remoteSum, &err, m_options.deadAfterMs * 6);
        ssh_channel_close(t.upChannel);
        ssh_channel_free(t.upChannel);
        t.upChannel = nullptr;
        if (!ssh_is_connected(m_session)) {
            connectionLost(sshError());
            return false;
        }
        if (status != 0 || err.contains("moetune-write-failed")) {
            err.replace("moetune-write-failed", "");
            finishTransfer(failure(u"Cannot write %1 on %2: %3"_s.arg(t.partPath, hostLabel(),
                                                                      QString::fromUtf8(err.trimmed()))));
            return false;
        }
    }
    const QByteArray localHash = t.hash.hex();
    const QString checked =
        t.job.kind == SshJob::Kind::Upload ? (t.job.remotePath + u".part"_s) : t.job.remotePath;
    QByteArray out = remoteSum;
    QString error;
    if (t.sumChannel) {
        QByteArray err;
        const int status = drainChannel(t.sumChannel, &out, &err, m_options.deadAfterMs * 6);
        ssh_channel_close(t.sumChannel);
        ssh_channel_free(t.sumChannel);
        t.sumChannel = nullptr;
        if (status != 0)
            out.clear();
    }
    if (out.size() < 64 && !runHelper(u"sha256sum < "_s + shellQuotePath(checked), &out, &error)) {
        if (!ssh_is_connected(m_session)) {
            connectionLost(error);
            return false;
        }
        finishTransfer(failure(u"Cannot checksum %1 on %2: %3"_s.arg(checked, hostLabel(), error)));
        return false;
    }
    const QByteArray remoteHash = out.left(64);
    if (remoteHash != localHash) {
        finishTransfer(
            failure(u"Checksum mismatch for %1 on %2 (local %3, remote %4); nothing was replaced."_s.arg(
                checked, hostLabel(), QString::fromLatin1(localHash), QString::fromLatin1(remoteHash))));
        return false;
    }
    if (t.job.kind == SshJob::Kind::Upload) {
        out.clear();
        if (!runHelper(u"mv -f -- "_s + shellQuotePath(checked) + u' ' + shellQuotePath(t.job.remotePath),
                       &out, &error)) {
            if (!ssh_is_connected(m_session)) {
                connectionLost(error);
                return false;
            }
            finishTransfer(
                failure(u"Cannot move %1 into place on %2: %3"_s.arg(checked, hostLabel(), error)));
            return false;
        }
    } else if (!t.save->commit()) {
        finishTransfer(failure(u"Cannot write %1: %2"_s.arg(t.job.localPath, t.save->errorString())));
        return false;
    }
    JobResult r;
    r.exitStatus = 0;
    r.sha256 = localHash;
    r.bytes = t.done;
    emit progress(t.job.id, t.done, t.total);
    finishTransfer(r);
    return false;
}

void SshSession::finishTransfer(JobResult r) {
    std::unique_ptr<TransferState> t = std::move(m_transfer);
    if (!t)
        return;
    if (t->remote) {
        sftp_close(t->remote);
        t->remote = nullptr;
    }
    if (t->save && !r.ok())
        t->save->cancelWriting(); // a failed download leaves nothing at the target
    if (t->upChannel) {
        ssh_channel_free(t->upChannel);
        t->upChannel = nullptr;
    }
    if (t->sumChannel) {
        ssh_channel_free(t->sumChannel);
        t->sumChannel = nullptr;
    }
    if (!r.ok() && !t->partPath.isEmpty() && m_session && ssh_is_connected(m_session)) {
        QByteArray out;
        QString error;
        runHelper(u"rm -f -- "_s + shellQuotePath(t->partPath), &out, &error); // no half file left behind
    }
    r.bytes = r.bytes ? r.bytes : t->done;
    emit finished(t->job.id, r);
}

} // namespace moetune
