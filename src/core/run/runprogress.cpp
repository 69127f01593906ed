// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/runprogress.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

bool finitePositive(const QJsonValue &v) {
    return v.isDouble() && std::isfinite(v.toDouble()) && v.toDouble() > 0;
}

bool wholeNumberIn(const QJsonValue &v, double lo, double hi) {
    const double d = v.toDouble(-1);
    return v.isDouble() && std::floor(d) == d && d >= lo && d <= hi;
}

// An absolute path without "." or ".." parts or control characters.
bool plainAbsolute(const QString &path) {
    if (!path.startsWith(u'/'))
        return false;
    for (QChar c : path) {
        if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            return false;
    }
    const QStringList parts = path.split(u'/', Qt::SkipEmptyParts);
    return !parts.contains(u"."_s) && !parts.contains(u".."_s);
}

// A file the agent says it wrote must lie in the run's folder (attach --from N saw no run_started: a
// folder named after the run).
bool insideRunFolder(const QString &path, const QString &runDir, const QString &runId) {
    if (!plainAbsolute(path))
        return false;
    if (!runDir.isEmpty()) {
        QString dir = runDir;
        while (dir.size() > 1 && dir.endsWith(u'/'))
            dir.chop(1);
        return path.startsWith(dir + u'/');
    }
    const QStringList parts = path.split(u'/', Qt::SkipEmptyParts);
    return !runId.isEmpty() && parts.mid(0, parts.size() - 1).contains(runId);
}

} // namespace

bool RunProgress::apply(const QJsonObject &e, QString *problem) {
    auto refuse = [problem](const QString &why) {
        if (problem)
            *problem = why;
        return false;
    };
    const QString rid = e.value("run_id"_L1).toString();
    if (!runId.isEmpty() && rid != runId)
        return refuse(rid.isEmpty() ? u"an event without a run_id while following run %1"_s.arg(runId)
                                    : u"an event of run %1 while following run %2"_s.arg(rid, runId));
    qint64 seq = -1;
    if (e.contains("seq"_L1)) {
        if (!wholeNumberIn(e.value("seq"_L1), 0, 9007199254740992.0))
            return refuse(u"a seq that is not a whole number >= 0"_s);
        seq = qint64(e.value("seq"_L1).toDouble());
    }
    if (seq >= 0 && seq <= lastSeq) {
        ++duplicatesDropped;
        return false;
    }
    // seq is the line of the run's journal: each event follows the last one (an agent may skip a few
    // damaged lines, never thousands).
    if (seq > lastSeq + 1 + kMaxSeqGap)
        return refuse(u"seq %1 jumps ahead of the last event seen (%2)"_s.arg(seq).arg(lastSeq));
    const QString type = e.value("type"_L1).toString();
    if (type == "run_started"_L1) {
        const QString dir = e.value("run_dir"_L1).toString();
        // none given: result paths must then lie in a folder named after the run (insideRunFolder)
        if (!dir.isEmpty() &&
            (!plainAbsolute(dir) ||
             (!rid.isEmpty() && dir.section(u'/', -1, -1, QString::SectionSkipEmpty) != rid)))
            return refuse(u"a run_dir that is not an absolute folder named after the run: %1"_s.arg(dir));
    } else if (type == "measurement"_L1) {
        if (!finitePositive(e.value("median_us"_L1)))
            return refuse(u"a measurement whose median_us is not a finite number > 0"_s);
        for (const auto key : {"min_us"_L1, "max_us"_L1}) {
            if (e.contains(key) && !e.value(key).isNull() && !finitePositive(e.value(key)))
                return refuse(u"a measurement whose %1 is not a finite number > 0"_s.arg(key));
        }
        if (!wholeNumberIn(e.value("gpu"_L1), 0, kMaxGpuIndex))
            return refuse(u"a measurement whose gpu is not an index 0..%1"_s.arg(kMaxGpuIndex));
        if (!wholeNumberIn(e.value("m"_L1), 1, kMaxBatchSize))
            return refuse(u"a measurement whose batch size m is not 1..%1"_s.arg(kMaxBatchSize));
        if (e.value("round"_L1).toInt() == -1 && defaultUs.size() >= kMaxBestEntries &&
            !defaultUs.contains(e.value("m"_L1).toInt()))
            return refuse(u"default measurements of more than %1 batch sizes"_s.arg(kMaxBestEntries));
    } else if (type == "candidate_error"_L1) {
        if (!wholeNumberIn(e.value("gpu"_L1), 0, kMaxGpuIndex))
            return refuse(u"a candidate_error whose gpu is not an index 0..%1"_s.arg(kMaxGpuIndex));
    } else if (type == "best"_L1) {
        if (!finitePositive(e.value("median_us"_L1)))
            return refuse(u"a best whose median_us is not a finite number > 0"_s);
        const QJsonValue def = e.value("default_us"_L1);
        if (!def.isNull() && !def.isUndefined() && !finitePositive(def))
            return refuse(u"a best whose default_us is not a finite number > 0"_s);
        if (!wholeNumberIn(e.value("m"_L1), 1, kMaxBatchSize))
            return refuse(u"a best whose batch size m is not 1..%1"_s.arg(kMaxBatchSize));
        if (best.size() >= kMaxBestEntries &&
            !best.contains({e.value("op"_L1).toString(), e.value("m"_L1).toInt()}))
            return refuse(u"more than %1 (op, batch size) pairs"_s.arg(kMaxBestEntries));
    } else if (type == "result_written"_L1) {
        const QString path = e.value("path"_L1).toString();
        if (!insideRunFolder(path, runDir, runId.isEmpty() ? rid : runId))
            return refuse(u"a result_written path outside the run's folder: %1"_s.arg(path));
        if (e.value("kind"_L1).toString() != "result"_L1 && files.size() >= kMaxFiles)
            return refuse(u"more than %1 result files"_s.arg(kMaxFiles));
    }
    if (seq >= 0)
        lastSeq = seq;
    if (runId.isEmpty())
        runId = rid;
    if (e.value("simulated"_L1).toBool())
        simulated = true;
    if (type == "run_started"_L1) {
        runDir = e.value("run_dir"_L1).toString();
        pid = qint64(e.value("pid"_L1).toDouble());
        backend = e.value("backend"_L1).toString();
        strategy = e.value("strategy"_L1).toString();
        deviceName = e.value("device_name"_L1).toString();
        const QJsonObject spec = e.value("spec"_L1).toObject();
        if (spec.contains("ops"_L1))
            ops = spec.value("ops"_L1).toString() == "up+down"_L1 ? QStringList{u"up"_s, u"down"_s}
                                                                  : QStringList{u"both"_s};
        // A resumed run's journal holds units timed before: those seen in this replay are not counted twice.
        journalUnits = qMax(0, e.value("journal_entries"_L1).toInt() - unitsSeen);
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
        ++unitsSeen;
        ++gpus[e.value("gpu"_L1).toInt()].measured;
        if (e.value("round"_L1).toInt() == -1) {
            const int m = e.value("m"_L1).toInt();
            defaultUs[m] += e.value("median_us"_L1).toDouble();
            defaultPerOp.insert({e.value("op"_L1).toString(), m}, e.value("median_us"_L1).toDouble());
        }
    } else if (type == "candidate_error"_L1) {
        ++failures;
        ++unitsSeen;
        ++gpus[e.value("gpu"_L1).toInt()].failed;
        ++failureKinds[e.value("kind"_L1).toString(u"other"_s)];
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
    for (const Row &r : rows())
        if (r.complete)
            out.insert(r.m, r.bestUs);
    return out;
}

QList<RunProgress::Row> RunProgress::rows() const {
    QList<int> sizes;
    for (const Best &b : best)
        if (!sizes.contains(b.m))
            sizes.append(b.m);
    std::sort(sizes.begin(), sizes.end());
    QStringList runOps = ops;
    if (runOps.isEmpty()) // no run_started seen: the GEMMs that have a best
        for (const Best &b : best)
            if (!runOps.contains(b.op))
                runOps.append(b.op);
    auto defaultOf = [this](const QString &op, int m) {
        const double d = defaultPerOp.value({op, m});
        if (d > 0)
            return d;
        const auto it = best.constFind({op, m});
        return it != best.cend() ? it->defaultUs : 0.0;
    };
    QList<Row> out;
    for (int m : std::as_const(sizes)) {
        Row row;
        row.m = m;
        QStringList have;
        for (const QString &op : std::as_const(runOps))
            if (best.contains({op, m}))
                have.append(op);
        if (have.isEmpty())
            continue; // a GEMM the spec did not name
        row.complete = have.size() == runOps.size();
        if (row.complete) {
            row.op = u"up+down"_s;
            bool allDefaults = true;
            for (const QString &op : std::as_const(runOps)) {
                row.bestUs += best.value({op, m}).medianUs;
                const double d = defaultOf(op, m);
                allDefaults = allDefaults && d > 0;
                row.defaultUs += d;
            }
            if (!allDefaults)
                row.defaultUs = 0;
        } else {
            row.op = have.first(); // the GEMM measured first, against its own default
            row.bestUs = best.value({row.op, m}).medianUs;
            row.defaultUs = defaultOf(row.op, m);
        }
        out.append(row);
    }
    return out;
}

QString RunProgress::failureText() const {
    QStringList parts;
    for (auto it = failureKinds.cbegin(); it != failureKinds.cend(); ++it) {
        const QString &k = it.key();
        const int n = it.value();
        if (k == "compile"_L1)
            parts.append(u"%1 did not compile"_s.arg(n));
        else if (k == "resources"_L1)
            parts.append(u"%1 out of shared memory or registers"_s.arg(n));
        else if (k == "oom"_L1)
            parts.append(u"%1 out of GPU memory"_s.arg(n));
        else if (k == "mismatch"_L1)
            parts.append(u"%1 gave wrong results"_s.arg(n));
        else if (k == "crash"_L1)
            parts.append(u"%1 crashed or hung a worker"_s.arg(n));
        else
            parts.append(u"%1 %2"_s.arg(n).arg(k == "other"_L1 ? u"other errors"_s : k));
    }
    return parts.join(u", "_s);
}

QString RunProgress::progressLine() const {
    const qint64 units = unitsDone();
    const qint64 all = qMax(total, units);
    QString s = u"%1/%2"_s.arg(units).arg(all);
    if (finished()) {
        if (all > 0)
            s += u" (%1%)"_s.arg(int(100.0 * double(units) / double(all)));
    } else if (units >= all) {
        // The strategy adds phases as it learns: every unit known so far is done, the run is not.
        s += u" known so far, more to come"_s;
    } else {
        // Never 100% before the run's own done; the ETA is that of the units known so far.
        s += u" known so far (%1%)"_s.arg(qMin(99, int(100.0 * double(units) / double(all))));
        if (etaS >= 0)
            s += u", ETA %1 s for those"_s.arg(qRound(etaS));
    }
    if (failures > 0)
        s += u", %1 failed"_s.arg(failures);
    if (simulated)
        s += u" [SIMULATED]"_s;
    return s;
}

} // namespace moetune
