// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"
#include "core/moe/configname.h"
#include "core/server/serverprofile.h"

#include <QString>
#include <QStringList>

namespace moetune {

// Where a push writes, decided from the server's own view: the wanted path of its warning line first,
// then the probe of the SERVER's interpreter (its Triton and config root, its SGLANG_MOE_CONFIG_DIR),
// and only then the agent's own interpreter (said so). Also whether the file would survive, and the
// persistent alternative (a host folder + SGLANG_MOE_CONFIG_DIR / VLLM_TUNED_CONFIG_FOLDER).
struct PushTarget {
    QString folder;           // the exact folder the files go into ("" = undecided: error says why)
    QString source;           // a sentence: where the folder came from
    QStringList warnings;     // the target would not survive, or the view is not the server's
    QString persistentFolder; // the alternative folder for the same files ("" = none offered)
    QString persistentEnv;    // "SGLANG_MOE_CONFIG_DIR=/srv/moe" the server needs for it
    QString persistentNote;   // what else that change means
    QString error;

    // shape: the pushed (up) file's name; server may be null (no running server seen).
    static PushTarget choose(Framework framework, const ConfigName &shape, const Diagnosis *before,
                             const HostProbe *probe, const ServerProfile &profile);
    // The same files into the persistent folder instead (after the user chose it).
    PushTarget persistent() const;
};

} // namespace moetune
