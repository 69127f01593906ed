// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// What OpenSSH's client would use for one target, read from ssh_config files the way ssh reads them
// (ssh_config(5)): the first value of an option wins (IdentityFile accumulates); a `Host` line applies
// when one of its patterns matches the name typed and none of its !patterns does; `Match` with all,
// host (the HostName so far), originalhost, user, localuser, exec, canonical and final; Include (globs,
// relative to ~/.ssh, conditional inside a block); comments after an argument; "Key=value" and quoted
// arguments. libssh 0.10's own parser is not used for this: it applies a Host block whose !pattern
// excludes the host.
struct SshConfigValues {
    QString hostName;          // HostName with %h expanded; "" = not set (the name typed)
    QString user;              // "" = not set
    int port = 0;              // 0 = not set
    QStringList identityFiles; // every IdentityFile line, in order, ~ and tokens expanded
    std::optional<bool> identitiesOnly;
    QString proxyJump;    // as written; "" = not set ("none" is kept: it disables a later default)
    QString proxyCommand; // as written
    std::optional<QStringList> userKnownHostsFiles;   // expanded; {"none"} stays as written
    std::optional<QStringList> globalKnownHostsFiles; // expanded
    std::optional<QString> revokedHostKeys;           // as written (ssh 9.2 expands nothing in it)
    QString hostKeyAlias;
    QString strictHostKeyChecking; // lower case as written: yes, no, ask, accept-new, off; "" = not set
    QString hostKeyAlgorithms;
    QString kexAlgorithms;
    QString pubkeyAcceptedAlgorithms;
    int connectTimeoutS = 0;
};

class SshConfig {
public:
    // files: read in order (the user's config, then the system's); a missing file is skipped, an
    // unreadable one is an error. host: the name as typed (what Host lines match). commandLinePort /
    // commandLineUser: given on the command line (`ssh -p`, `-l`, user@), they win over the config and are
    // what %p / %r and `Match user` see.
    // runExec false (the host list, on the GUI thread): a `Match exec` line is taken as not matching
    // instead of running its command; the connection runs it, as ssh does.
    static SshConfigValues resolve(const QString &host, const QStringList &files, QString *error,
                                   int commandLinePort = 0, const QString &commandLineUser = {},
                                   bool runExec = true);
    // OpenSSH's TOKENS (%% %d %h %i %k %L %l %n %p %r %u), ~ and ${VAR}, for a resolved target.
    static QString expand(const QString &text, const QString &originalHost, const QString &hostName, int port,
                          const QString &remoteUser, const QString &hostKeyAlias = {});
    // OpenSSH's pattern list ("a*,!b?,c"): true when one pattern matches and no !pattern does.
    static bool matchPatternList(const QString &text, const QString &list);
    static QString localUserName();
};

} // namespace moetune
