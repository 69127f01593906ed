#pragma once

#include <QJsonArray>
#include <QString>

namespace moetune::test {

// Runs the agent's `tune --foreground` on its synthetic backend (the labelled test double for a GPU:
// every run folder it writes says SIMULATED) for a small SGLang shape (E=8, N=128, K=256, top-k 2) at
// `batchSizes`, with `agentHome` as the agent's --home. Returns the one run folder it wrote, or an empty
// string with `*error` saying what went wrong (exit status, stderr, how many run folders).
QString runSyntheticTune(const QString &agentPyz, const QString &agentHome, const QJsonArray &batchSizes,
                         QString *error);

} // namespace moetune::test
