// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/sweepresultcache.h"

#include <QDataStream>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSaveFile>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

constexpr quint32 kMagic = 0x4d545243; // "MTRC"

QByteArray stamp(const QString &runDir) {
    const QFileInfo info(QDir(runDir).filePath(u"result.json"_s));
    if (!info.exists())
        return {};
    return QByteArray::number(info.size()) + ':' +
           QByteArray::number(info.lastModified().toMSecsSinceEpoch());
}

void put(QDataStream &s, const KernelConfig &c) {
    s << qint32(c.blockSizeM) << qint32(c.blockSizeN) << qint32(c.blockSizeK) << qint32(c.groupSizeM)
      << qint32(c.numWarps) << qint32(c.numStages) << qint8(c.useTma ? (*c.useTma ? 1 : 0) : -1)
      << (c.extra.isEmpty() ? QByteArray() : QJsonDocument(c.extra).toJson(QJsonDocument::Compact));
}

void get(QDataStream &s, KernelConfig &c) {
    qint32 v[6];
    qint8 tma;
    QByteArray extra;
    s >> v[0] >> v[1] >> v[2] >> v[3] >> v[4] >> v[5] >> tma >> extra;
    c.blockSizeM = v[0];
    c.blockSizeN = v[1];
    c.blockSizeK = v[2];
    c.groupSizeM = v[3];
    c.numWarps = v[4];
    c.numStages = v[5];
    if (tma >= 0)
        c.useTma = tma == 1;
    if (!extra.isEmpty())
        c.extra = QJsonDocument::fromJson(extra).object();
}

void put(QDataStream &s, const QList<SweepEntry> &entries) {
    s << quint32(entries.size());
    for (const auto &e : entries) {
        s << quint8(e.op) << qint32(e.m) << e.medianUs;
        put(s, e.config);
    }
}

void get(QDataStream &s, QList<SweepEntry> &entries) {
    quint32 n = 0;
    s >> n;
    entries.reserve(n);
    for (quint32 i = 0; i < n && s.status() == QDataStream::Ok; ++i) {
        SweepEntry e;
        quint8 op;
        qint32 m;
        s >> op >> m >> e.medianUs;
        e.op = SweepOp(op);
        e.m = m;
        get(s, e.config);
        entries.append(e);
    }
}

} // namespace

QString SweepResultCache::cachePath(const QString &runDir) {
    return QDir(runDir).filePath(u".result.cache"_s);
}

bool SweepResultCache::write(const QString &runDir, const SweepResult &r) {
    const QByteArray source = stamp(runDir);
    if (source.isEmpty())
        return false;
    QSaveFile f(cachePath(runDir));
    if (!f.open(QIODevice::WriteOnly))
        return false;
    QDataStream s(&f);
    s.setVersion(QDataStream::Qt_6_4);
    s << kMagic << kVersion << source;
    s << r.runId << r.agentVersion << r.framework << r.backend << r.deviceName << r.tritonVersion
      << r.strategy << r.status << r.simulated << r.createdAt << r.finishedAt << r.gpus << r.batchSizes;
    s << quint32(r.ops.size());
    for (auto op : r.ops)
        s << quint8(op);
    s << qint32(r.experts) << qint32(r.n) << qint32(r.k) << qint32(r.topk) << r.dtype << bool(r.blockShape)
      << qint32(r.blockShape ? (*r.blockShape)[0] : 0) << qint32(r.blockShape ? (*r.blockShape)[1] : 0)
      << r.perChannelQuant;
    s << quint32(r.measurements.size());
    for (const auto &m : r.measurements) {
        s << quint8(m.op) << qint32(m.m) << qint32(m.round) << qint32(m.replays) << m.medianUs << m.minUs
          << m.maxUs << m.spread << qint32(m.gpu) << m.errorKind << m.error << bool(m.configDown);
        put(s, m.config);
        if (m.configDown)
            put(s, *m.configDown);
    }
    put(s, r.winners);
    put(s, r.defaults);
    put(s, r.roofline);
    s << quint32(r.perBatch.size());
    for (const auto &b : r.perBatch)
        s << qint32(b.m) << b.bestUs << b.defaultUs << b.speedup << b.rooflineUs << b.rooflineFraction
          << b.decision << b.chosenDefault;
    s << quint32(r.files.size());
    for (const auto &file : r.files)
        s << file.framework << file.kind << file.fileName << file.path << file.sha256
          << file.config.toJson(Framework::SGLang);
    s << r.wallSeconds << qint32(r.unitsMeasured) << qint32(r.unitsFailed) << qint32(r.unitsFromJournal)
      << qint32(r.workerCrashes) << r.budgetHit;
    return s.status() == QDataStream::Ok && f.commit();
}

std::optional<SweepResult> SweepResultCache::read(const QString &runDir) {
    // Opened non-blocking and read only when a regular file: a FIFO planted as the cache never blocks.
    const int fd =
        ::open(QFile::encodeName(cachePath(runDir)).constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    struct stat st {};
    QFile f;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        !f.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
        ::close(fd);
        return std::nullopt;
    }
    QDataStream s(&f);
    s.setVersion(QDataStream::Qt_6_4);
    quint32 magic = 0, version = 0;
    QByteArray source;
    s >> magic >> version >> source;
    if (magic != kMagic || version != kVersion || source != stamp(runDir) || source.isEmpty())
        return std::nullopt;
    SweepResult r;
    s >> r.runId >> r.agentVersion >> r.framework >> r.backend >> r.deviceName >> r.tritonVersion >>
        r.strategy >> r.status >> r.simulated >> r.createdAt >> r.finishedAt >> r.gpus >> r.batchSizes;
    quint32 n = 0;
    s >> n;
    for (quint32 i = 0; i < n && i < 16; ++i) {
        quint8 op;
        s >> op;
        r.ops.append(SweepOp(op));
    }
    qint32 e, nn, k, topk, b0, b1;
    bool hasBlock;
    s >> e >> nn >> k >> topk >> r.dtype >> hasBlock >> b0 >> b1 >> r.perChannelQuant;
    r.experts = e;
    r.n = nn;
    r.k = k;
    r.topk = topk;
    if (hasBlock)
        r.blockShape = std::array<int, 2>{b0, b1};
    s >> n;
    if (s.status() != QDataStream::Ok || n > 50'000'000)
        return std::nullopt;
    r.measurements.reserve(n);
    for (quint32 i = 0; i < n && s.status() == QDataStream::Ok; ++i) {
        SweepMeasurement m;
        quint8 op;
        qint32 mm, round, replays, gpu;
        bool down;
        s >> op >> mm >> round >> replays >> m.medianUs >> m.minUs >> m.maxUs >> m.spread >> gpu >>
            m.errorKind >> m.error >> down;
        m.op = SweepOp(op);
        m.m = mm;
        m.round = round;
        m.replays = replays;
        m.gpu = gpu;
        get(s, m.config);
        if (down) {
            KernelConfig d;
            get(s, d);
            m.configDown = d;
        }
        r.measurements.append(std::move(m));
    }
    get(s, r.winners);
    get(s, r.defaults);
    get(s, r.roofline);
    s >> n;
    for (quint32 i = 0; i < n && s.status() == QDataStream::Ok; ++i) {
        BatchSummary b;
        qint32 m;
        s >> m >> b.bestUs >> b.defaultUs >> b.speedup >> b.rooflineUs >> b.rooflineFraction >> b.decision >>
            b.chosenDefault;
        b.m = m;
        r.perBatch.append(b);
    }
    s >> n;
    for (quint32 i = 0; i < n && s.status() == QDataStream::Ok; ++i) {
        SweepFile file;
        QByteArray json;
        s >> file.framework >> file.kind >> file.fileName >> file.path >> file.sha256 >> json;
        if (auto c = ConfigFile::parse(json, nullptr))
            file.config = *c;
        r.files.append(file);
    }
    qint32 um, uf, uj, wc;
    s >> r.wallSeconds >> um >> uf >> uj >> wc >> r.budgetHit;
    r.unitsMeasured = um;
    r.unitsFailed = uf;
    r.unitsFromJournal = uj;
    r.workerCrashes = wc;
    if (s.status() != QDataStream::Ok)
        return std::nullopt; // truncated or damaged: parse the JSON instead
    return r;
}

} // namespace moetune
