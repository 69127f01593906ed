// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/tuning/runprogress.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace moetune {

bool RunProgress::apply(const QJsonObject &e) {
    const QString rid = e.value("run_id"_L1).toString();
    if (!runId.isEmpty() && !rid.isEmpty() && rid != runId)
        return false;
    const qint64 seq = e.contains("seq"_L1) ? qint64(e.value("seq"_L1).toDouble()) : -1;
    if (seq >= 0 && seq <= lastSeq) {
        ++duplicatesDropped;
        return false;
    }
    if (seq >= 0)
        lastSeq = seq;
    if (runId.isEmpty())
        runId = rid;
    if (e.value("simulated"_L1).toBool())
        simulated = true;
    const QString type = e.value("type"_L1).toString();
    if (type == "run_started"_L1) {
        runDir = e.value("run_dir"_L1).toString();
        pid = qint64(e.value("pid"_L1).toDouble());
        backend = e.value("backend"_L1).toString();
        strategy = e.value("strategy"_L1).toString();
        deviceName = e.value("device_name"_L1).toString();
        state = u"running"_s;
    } else if (type == "phase"_L1) {
        phase = e.value("name"_L1).toString();
    } else if (type == "progress"_L1) {
        done = qint64(e.value("done"_L1).toDouble());
        total = qint64(e.value("total"_L1).toDouble());
        elapsedS = e.value("elapsed_s"_L1).toDouble();
        etaS = e.value("eta_s"_L1).isDouble() ? e.value("eta_s"_L1).toDouble() : -1;
    } else if (type == "measurement"_L1) {
        ++measurements;
        ++gpus[e.value("gpu"_L1).toInt()].measured;
        if (e.value("round"_L1).toInt() == -1) {
            const int m = e.value("m"_L1).toInt();
            defaultUs[m] += e.value("median_us"_L1).toDouble();
        }
    } else if (type == "candidate_error"_L1) {
        ++failures;
        ++gpus[e.value("gpu"_L1).toInt()].failed;
    } else if (type == "best"_L1) {
        Best b;
        b.op = e.value("op"_L1).toString();
        b.m = e.value("m"_L1).toInt();
        b.medianUs = e.value("median_us"_L1).toDouble();
        b.defaultUs = e.value("default_us"_L1).toDouble();
        b.config = e.value("config"_L1).toObject();
        b.final = e.value("final"_L1).toBool();
        best.insert({b.op, b.m}, b);
    } else if (type == "result_written"_L1) {
        if (e.value("kind"_L1).toString() == "result"_L1)
            resultPath = e.value("path"_L1).toString();
        else
            files.append(e.value("path"_L1).toString());
    } else if (type == "error"_L1) {
        error = e.value("message"_L1).toString();
    } else if (type == "done"_L1) {
        doneStatus = e.value("status"_L1).toString();
        wallS = e.value("wall_s"_L1).toDouble();
        state = doneStatus == "ok"_L1 ? u"finished"_s : doneStatus;
    }
    return true;
}

QMap<int, double> RunProgress::bestPerBatch() const {
    QMap<int, double> out;
    for (const Best &b : best)
        out[b.m] += b.medianUs;
    return out;
}

QString RunProgress::progressLine() const {
    QString s = u"%1/%2"_s.arg(done).arg(total);
    if (total > 0)
        s += u" (%1%)"_s.arg(int(100.0 * double(done) / double(total)));
    if (etaS >= 0 && !finished())
        s += u", ETA %1 s"_s.arg(qRound(etaS));
    if (failures > 0)
        s += u", %1 failed"_s.arg(failures);
    if (simulated)
        s += u" [SIMULATED]"_s;
    return s;
}

} // namespace moetune
