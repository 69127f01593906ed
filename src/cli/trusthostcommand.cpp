// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/trusthostcommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "cli/hostcli.h"

#include <QCommandLineParser>

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(TrustHostCommand)

QString TrustHostCommand::name() const {
    return u"trust-host"_s;
}

QString TrustHostCommand::summary() const {
    return u"Record a host's SSH key in known_hosts (after you checked its fingerprint)"_s;
}

int TrustHostCommand::run(const QStringList &args) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"Connect to HOST and record its host key in your known_hosts (the ssh config's first "
        u"UserKnownHostsFile, else ~/.ssh/known_hosts), like answering 'yes' to ssh. Under "
        u"StrictHostKeyChecking yes nothing is recorded: add the key line yourself, as with ssh. "
        u"With --fingerprint only the key with that SHA256 fingerprint is recorded. A key that differs from "
        u"the recorded one is refused; remove the old line (ssh-keygen -R HOST) if the host was "
        u"reinstalled.\n\n"
        u"Exit status: 0 trusted (or already known), 2 refused or connection error."_s);
    parser.addHelpOption();
    parser.addPositionalArgument(u"HOST"_s,
                                 u"An ssh config alias, a host added in the app, or user@host[:port]."_s);
    const QCommandLineOption fingerprint(u"fingerprint"_s,
                                         u"The SHA256 fingerprint you expect (SHA256:...)."_s, u"FP"_s);
    parser.addOption(fingerprint);
    if (!parser.parse(args))
        return Console::fail(u"trust-host"_s,
                             parser.errorText() + u". Run 'moetune-cli trust-host --help'."_s);
    if (parser.isSet(u"help"_s)) {
        QString help = parser.helpText();
        const qsizetype options = help.indexOf(u" [options]"_s);
        if (help.startsWith(u"Usage: "_s) && options > 0)
            help.replace(7, options - 7, u"moetune-cli trust-host"_s);
        Console::out(help);
        return ExitClean;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1)
        return Console::fail(u"trust-host"_s, u"give one HOST."_s);
    QString error;
    const auto host = resolveHost(positional.first(), &error);
    if (!host)
        return Console::fail(u"trust-host"_s, error);
    if (host->local || host->isPractice())
        return Console::fail(u"trust-host"_s, u"'local' is this machine; it has no host key to trust."_s);
    HostSessionSync::Options options;
    options.expectFingerprint = parser.value(fingerprint);
    options.acceptNewHostKey = options.expectFingerprint.isEmpty();
    options.askSecret = terminalSecretPrompt();
    HostSessionSync session(*host, options);
    bool unknown = false;
    const bool ok = session.connect(&error, &unknown);
    // Authentication may still fail after the key was recorded: the key is what this command is about.
    if (!session.acceptedFingerprint().isEmpty()) {
        Console::out(u"Recorded the %1 key %2 of %3 in known_hosts.\n"_s.arg(
            session.seenKeyType(), session.acceptedFingerprint(), host->label()));
        return ExitClean;
    }
    if (unknown)
        return Console::fail(u"trust-host"_s, u"%1 offers the %2 key %3, not %4; nothing was recorded."_s.arg(
                                                  host->label(), session.seenKeyType(),
                                                  session.seenFingerprint(), options.expectFingerprint));
    if (ok) {
        Console::out(u"The host key of %1 is already known; nothing to do.\n"_s.arg(host->label()));
        return ExitClean;
    }
    return Console::fail(u"trust-host"_s, error);
}

} // namespace moetune::cli
