// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// SshSession: host key check (known_hosts, decided here) and authentication in ssh's order.
#include "remote/hosts/knownhosts.h"
#include "remote/transport/sshsessionjobs.h"

#include <QFileInfo>

using namespace Qt::StringLiterals;
using namespace moetune::sshdetail;

namespace moetune {

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

    // The name ssh looks up: HostKeyAlias as written, else the host actually connected to (HostName after
    // the config) and its port.
    char *host = nullptr;
    m_khHost = m_options.host.hostName.isEmpty() ? m_options.host.alias : m_options.host.hostName;
    if (ssh_options_get(m_session, SSH_OPTIONS_HOST, &host) == SSH_OK && host) {
        m_khHost = QString::fromUtf8(host);
        ssh_string_free_char(host);
    }
    unsigned int port = 22;
    ssh_options_get_port(m_session, &port);
    m_khPort = int(port);
    const bool aliased = !m_config.hostKeyAlias.isEmpty();
    if (aliased) {
        m_khHost = m_config.hostKeyAlias;
        m_khPort = 22; // ssh looks the alias up as written, without a port
    }
    m_hostKeyBlob = blob;
    const QString khName = QString::fromUtf8(KnownHostsEntry::lookupName(m_khHost, m_khPort));
    const KnownHosts knownHosts = this->knownHosts();
    const QString khFile =
        knownHosts.writeFile().isEmpty() ? knownHosts.files().value(0) : knownHosts.writeFile();
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
    // RevokedHostKeys first, as ssh: a key it names, or a file that cannot be read, ends the connection.
    if (m_config.revokedHostKeys && *m_config.revokedHostKeys != u"none" && !blob.isEmpty()) {
        QString why;
        const auto revoked = KnownHosts::revokedByFile(*m_config.revokedHostKeys, blob, &why);
        if (!revoked || *revoked) {
            teardown();
            setState(Transport::State::Failed,
                     revoked ? u"The host key of %1, %2 (%3), is revoked by %4 (RevokedHostKeys in the ssh "
                               "config). Refusing to connect: a revoked key is never accepted."_s.arg(
                                   hostLabel(), fingerprint, type, *m_config.revokedHostKeys)
                             : u"Cannot check the host key of %1, %2 (%3): %4. Refusing to connect, as ssh "
                               "does."_s.arg(hostLabel(), fingerprint, type, why));
            return false;
        }
    }
    HostKeyVerdict v =
        blob.isEmpty()
            ? HostKeyVerdict{HostKeyVerdict::Status::Error, {}, {}, {}, u"the host key cannot be read"_s}
            : knownHosts.check(m_khHost, m_khPort, blob);
    // ssh retries an unknown [host]:port under the plain host name and takes an exact match from it.
    if (v.status == HostKeyVerdict::Status::Unknown && !aliased && m_khPort != 22 &&
        knownHosts.check(m_khHost, 22, blob).status == HostKeyVerdict::Status::Known)
        v.status = HostKeyVerdict::Status::Known;
    const QString strict = m_config.strictHostKeyChecking;
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
        // A certificate authority trusted for this host is revoked: ssh refuses a certificate it signed.
        // moetune cannot see the host's certificate, so it refuses whenever such a CA is named.
        for (const QByteArray &ca : std::as_const(v.caKeys)) {
            QString why;
            const auto byFile = m_config.revokedHostKeys && *m_config.revokedHostKeys != u"none"
                                    ? KnownHosts::revokedByFile(*m_config.revokedHostKeys, ca, &why)
                                    : std::optional<bool>(false);
            if (knownHosts.revoked(m_khHost, m_khPort, ca) || !byFile || *byFile) {
                teardown();
                setState(Transport::State::Failed,
                         u"A certificate authority that %1 trusts for %2 is revoked (@revoked or "
                         "RevokedHostKeys). moetune cannot check host certificates, so it refuses to connect "
                         "rather than ask about the host's plain key %3 (%4)."_s.arg(
                             where(v.certAuthorities), hostLabel(), fingerprint, type));
                return false;
            }
        }
        if (strict == u"yes") {
            // ssh never offers to trust a key then; neither does moetune
            teardown();
            setState(Transport::State::Failed,
                     u"%1 is not a known host (its %2 key fingerprint is %3) and the ssh config says "
                     "StrictHostKeyChecking yes, so no key is added on connecting. Check the fingerprint "
                     "against the host's own (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on the host), then "
                     "add the host's public key line to %4 yourself."_s.arg(hostLabel(), type, fingerprint,
                                                                            khFile));
            return false;
        }
        QString message =
            u"%1 is not a known host. Its %2 key fingerprint is %3. Accept it only if it matches the host's "
            "(ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on the host)."_s.arg(hostLabel(), type, fingerprint);
        if (!v.certAuthorities.isEmpty())
            message +=
                u" Note: %1 trusts a certificate authority (@cert-authority) for this host; moetune checks "
                "plain host keys only (libssh 0.10 does not ask for host certificates), so the host's plain "
                "key is what is shown."_s.arg(where(v.certAuthorities));
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
    // An explicit file (tests, fixtures) wins like `ssh -o UserKnownHostsFile=`; then the config's
    // UserKnownHostsFile / GlobalKnownHostsFile ("none": no file); then ssh's defaults.
    auto listed = [](const std::optional<QStringList> &files, const QStringList &defaults) {
        if (!files)
            return defaults;
        QStringList out;
        for (const QString &f : *files)
            if (f != u"none")
                out.append(f);
        return out;
    };
    const QStringList user = !m_options.knownHostsFile.isEmpty()
                                 ? QStringList{expandHome(m_options.knownHostsFile)}
                                 : listed(m_config.userKnownHostsFiles, KnownHosts::defaultUserFiles());
    return KnownHosts(user, listed(m_config.globalKnownHostsFiles, KnownHosts::defaultGlobalFiles()));
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
    auto ask = [this](SshTransport::SecretKind kind, const QStringList &prompts, const QString &instruction) {
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
        // As ssh: the default keys only when no IdentityFile is named; the agent's keys unless
        // IdentitiesOnly yes (moetune then does not use the agent at all).
        const bool named = !m_options.host.identityFiles.isEmpty() || !m_config.identityFiles.isEmpty();
        const bool identitiesOnly = m_config.identitiesOnly.value_or(false);
        m_autoTried = false;
        if ((methods & SSH_AUTH_METHOD_PUBLICKEY) && !named && !identitiesOnly) {
            m_autoTried = true;
            m_triedMethods.append(m_options.useAgent ? u"agent and default keys"_s : u"default keys"_s);
            const int rc = ssh_userauth_publickey_auto(m_session, nullptr, nullptr);
            if (rc == SSH_AUTH_SUCCESS)
                return authenticated();
            if (rc == SSH_AUTH_ERROR && !ssh_is_connected(m_session))
                return connectionLost(sshError());
        } else if ((methods & SSH_AUTH_METHOD_PUBLICKEY) && !identitiesOnly && m_options.useAgent &&
                   !qEnvironmentVariableIsEmpty("SSH_AUTH_SOCK")) {
            m_triedMethods.append(u"agent"_s);
            const int rc = ssh_userauth_agent(m_session, nullptr);
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
        const bool defaults = m_options.host.identityFiles.isEmpty() && m_config.identityFiles.isEmpty();
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
                    ask(SshTransport::SecretKind::Passphrase, {u"Passphrase for %1"_s.arg(path)},
                        u"The key file is encrypted."_s);
                    return;
                }
                m_passphrases.remove(path); // a wrong passphrase is not kept for reconnects
                m_triedMethods.append(u"%1 (could not be decrypted)"_s.arg(path));
                continue;
            }
            if (defaults && !havePass && m_autoTried) {
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
                    ask(SshTransport::SecretKind::KeyboardInteractive, prompts,
                        QString::fromUtf8(ssh_userauth_kbdint_getinstruction(m_session)));
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
            ask(SshTransport::SecretKind::Password, {u"Password for %1"_s.arg(m_options.host.displayName())},
                QString());
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
    const QStringList named =
        m_options.host.identityFiles.isEmpty() ? m_config.identityFiles : m_options.host.identityFiles;
    for (const QString &id : named)
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

} // namespace moetune
