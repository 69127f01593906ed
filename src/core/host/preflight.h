// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/host/hostprobe.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace moetune {

// Whether a tuning run can start on a host's GPUs now, from the probe's GPU list and their holders
// (nvidia-smi --query-compute-apps): every GPU the job wants, its free memory and who holds it.
struct Preflight {
    struct Gpu {
        int index = 0;
        QString name;
        qint64 totalMiB = 0;
        qint64 usedMiB = 0;
        QList<GpuProcess> holders;
        bool heldByServer = false; // a holder is (a child of) the running inference server
        bool enough = true;        // free memory >= the job's need
    };
    QList<Gpu> gpus;      // the GPUs the job would use
    qint64 neededMiB = 0; // per GPU
    bool serverHoldsGpus = false;
    QString gpuError; // the probe could not list GPUs (no nvidia-smi): not fatal for the synthetic backend
    QStringList problems; // sentences; empty = can start
    bool canStart() const { return problems.isEmpty(); }

    // wanted: device indices, empty = all. neededMiB 0 = the job needs no GPU memory (synthetic).
    static Preflight evaluate(const HostProbe &probe, const QList<int> &wanted, qint64 neededMiB);
    // One line per held GPU naming the processes: "GPU 0: pid 5123 python3 (117.2 GiB)".
    QStringList holderLines() const;
};

} // namespace moetune
