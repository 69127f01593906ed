// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/agentsentence.h"

#include "remote/flows/pushflow.h"

#include <QCoreApplication>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune {

QString agentSentenceForGui(const QString &agentMessage, const QString &hostLabel) {
    const auto tr = [](const char *text) { return QCoreApplication::translate("TunePage", text); };
    static const QRegularExpression noBackend(
        u"no GPU backend here: (\\S+) is not importable and torch\\+triton are "
        u"(missing|present but the Triton backend is missing)"_s);
    if (const auto m = noBackend.match(agentMessage); m.hasMatch())
        return tr("%1 cannot measure this job on a GPU: %2's own kernel cannot be imported with the host's "
                  "Python, and torch with Triton is %3 there. Set the host's Python to the server's "
                  "interpreter (Hosts page, Edit...), or choose Backend: synthetic for a SIMULATED practice "
                  "run.")
            .arg(hostLabel, m.captured(1),
                 m.captured(2) == "missing"_L1 ? tr("missing")
                                               : tr("there but moetune's Triton kernel is not"));
    static const QRegularExpression badPython(u"spec 'python': (.+) is not an executable interpreter"_s);
    if (const auto m = badPython.match(agentMessage); m.hasMatch())
        return tr("The host's Python (%1) is not an interpreter on %2: fix it on the Hosts page (Edit...).")
            .arg(m.captured(1), hostLabel);
    if (agentMessage.contains(u"refusing to install numbers that were never measured"_s) ||
        agentMessage.contains(u"refusing to install simulated results"_s))
        return PushFlow::refusalSentence(u"simulated"_s, QString());
    return agentMessage;
}

} // namespace moetune
