// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The push preview's row merge (issue 20, items 3 and 4): the agent's `merge` object of a diff event read
// into PushRowMerge and shown per row (kept / replaced with its measured gain / added / kept unmeasured),
// other K's from the probe's running servers, sibling device names (the rule shared with the agent through
// tests/data/sibling_devices.json) and the diagnosis' finding for a sibling's file in the server's folder.
#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobemerge.h"
#include "core/moe/siblingdevice.h"
#include "core/push/pushrecord.h"
#include "core/push/pushrowmerge.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

const QString fileName = u"E=128,N=768,device_name=NVIDIA_H200.json"_s;
const QString target = u"/srv/sglang/configs/triton_3_6_0/"_s + fileName;

QJsonObject cfg(int bn) {
    return QJsonObject{{"BLOCK_SIZE_M"_L1, 16}, {"BLOCK_SIZE_N"_L1, bn}, {"BLOCK_SIZE_K"_L1, 64},
                       {"GROUP_SIZE_M"_L1, 1},  {"num_warps"_L1, 4},     {"num_stages"_L1, 3}};
}

QJsonObject row(int m, const QString &decision, QJsonValue gain, const QString &note = {}) {
    QJsonObject r{{"m"_L1, m},
                  {"decision"_L1, decision},
                  {"gain"_L1, gain},
                  {"default_us"_L1, gain.isDouble() ? QJsonValue(10.0 * gain.toDouble()) : QJsonValue()},
                  {"tuned_us"_L1, gain.isDouble() ? QJsonValue(10.0) : QJsonValue()},
                  {"rounds"_L1, gain.isDouble() ? 5 : 0},
                  {"h2h_decision"_L1, decision == "kept"_L1 ? u"tie_default_kept"_s : u"tuned_faster"_s},
                  {"old"_L1, decision == "added"_L1 ? QJsonValue() : QJsonValue(cfg(64))},
                  {"new"_L1, cfg(128)},
                  {"note"_L1, note},
                  {"unmeasured_k"_L1, QJsonArray()}};
    if (decision == "added"_L1)
        r.insert("serves"_L1, QJsonArray{641, 896});
    return r;
}

// A dry run's diff event over the shipped file: 1 kept, 64 replaced, 768 added, 4096 never measured.
QJsonObject diffEvent(const QJsonArray &otherK = {}, const QJsonArray &siblings = {}) {
    const QJsonArray rows{
        row(1, u"kept"_s, 0.99), row(64, u"replaced"_s, 1.25),
        row(768, u"added"_s, 1.053, u"a new key: the server then takes it for M 641-896"_s),
        row(4096, u"kept_unmeasured"_s, QJsonValue(), u"the run did not measure this batch size"_s)};
    return QJsonObject{{"type"_L1, u"diff"_s},
                       {"file_name"_L1, fileName},
                       {"target"_L1, target},
                       {"merge"_L1, QJsonObject{{"mode"_L1, u"merged"_s},
                                                {"measured_default"_L1, true},
                                                {"note"_L1, u"the run's default was this very file"_s},
                                                {"rows"_L1, rows},
                                                {"other_k"_L1, otherK},
                                                {"siblings"_L1, siblings}}}};
}

HostProbe probeServing(int hiddenSize) {
    HostProbe p;
    p.framework = Framework::SGLang;
    ServerProcess s;
    s.pid = 4242;
    s.framework = Framework::SGLang;
    s.modelPath = u"/models/Other-MoE"_s;
    s.tensorParallel = 2;
    s.shape = MoeShape{128, 8, hiddenSize, 1536, std::nullopt, QString()};
    p.servers.append(s);
    return p;
}

} // namespace

class TestPushRowMerge : public QObject {
    Q_OBJECT
private slots:
    void rows_data() {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("decision");
        QTest::addColumn<QString>("line");
        QTest::newRow("a row kept")
            << 1 << int(PushRowMerge::Decision::Kept)
            << u"M=1     kept             measured: the file's row stays (tie_default_kept, 5 rounds)"_s;
        QTest::newRow("a row replaced")
            << 64 << int(PushRowMerge::Decision::Replaced)
            << u"M=64    replaced         +25.0% measured (file's row 12.50 us, run's 10.00 us, 5 rounds)"_s;
        QTest::newRow("a row added")
            << 768 << int(PushRowMerge::Decision::Added)
            << u"M=768   added            +5.3% measured (file's row 10.53 us, run's 10.00 us, 5 rounds); a new key"_s;
        QTest::newRow("a row the run never measured")
            << 4096 << int(PushRowMerge::Decision::KeptUnmeasured)
            << u"M=4096  kept, unmeasured (the run did not measure this batch size)"_s;
    }
    void rows() {
        QFETCH(int, m);
        QFETCH(int, decision);
        QFETCH(QString, line);
        QString error;
        const auto merge = PushRowMerge::fromEvent(diffEvent(), &error);
        QVERIFY2(merge, qPrintable(error));
        QCOMPARE(merge->mode, u"merged"_s);
        QCOMPARE(merge->measuredDefault, std::optional<bool>(true));
        QCOMPARE(merge->rows.size(), 4);
        const auto it = std::find_if(merge->rows.cbegin(), merge->rows.cend(),
                                     [m](const PushRowMerge::Row &r) { return r.m == m; });
        QVERIFY(it != merge->rows.cend());
        QCOMPARE(int(it->decision), decision);
        QCOMPARE(it->newConfig->blockSizeN, 128);
        QCOMPARE(it->oldConfig.has_value(), it->decision != PushRowMerge::Decision::Added);
        const QStringList lines = merge->lines();
        const QString mine = lines.filter(u"M=%1 "_s.arg(m)).value(0);
        QVERIFY2(mine.contains(line), qPrintable(mine));
        QVERIFY2(lines.first().contains(u"1 replaced, 1 added, 1 kept, 1 kept, unmeasured"_s),
                 qPrintable(lines.first()));
    }

    void targetDifferingFromTheMeasuredDefault() {
        QJsonObject e = diffEvent();
        QJsonObject m = e.value("merge"_L1).toObject();
        m.insert("measured_default"_L1, false);
        m.insert("note"_L1, u"the file at X is not the one the run measured as default"_s);
        m.insert("rows"_L1, QJsonArray{row(1, u"kept_unmeasured"_s, 1.2,
                                           u"the run did not measure this "
                                           u"file's row"_s),
                                       row(768, u"not_added"_s, 1.3, u"measured against another default"_s)});
        e.insert("merge"_L1, m);
        const auto merge = PushRowMerge::fromEvent(e);
        QVERIFY(merge);
        QCOMPARE(merge->measuredDefault, std::optional<bool>(false));
        QCOMPARE(merge->count(PushRowMerge::Decision::Replaced), 0);
        const QStringList lines = merge->lines();
        QVERIFY2(lines.first().contains(u"not the one the run measured"_s), qPrintable(lines.first()));
        // No gain is claimed for a row measured against something else.
        QVERIFY2(!lines.join(u'\n').contains(u"% measured"_s), qPrintable(lines.join(u'\n')));
        QVERIFY(lines.filter(u"M=768"_s).value(0).contains(u"not added"_s));
    }

    void newFileRowsAreTimedAgainstTheServersDefault() {
        QJsonObject e = diffEvent();
        QJsonObject m = e.value("merge"_L1).toObject();
        m.insert("mode"_L1, u"new"_s);
        m.insert("measured_default"_L1, QJsonValue());
        m.insert("rows"_L1, QJsonArray{row(64, u"added"_s, 1.25)});
        e.insert("merge"_L1, m);
        const auto merge = PushRowMerge::fromEvent(e);
        QVERIFY(merge);
        QVERIFY(!merge->measuredDefault);
        const QStringList lines = merge->lines();
        QVERIFY2(lines.first().contains(u"a new file"_s), qPrintable(lines.first()));
        // No baseline from the agent: never called the server's default (issue 40 item 8).
        QVERIFY2(lines.value(1).contains(u"+25.0% measured (baseline 12.50 us"_s),
                 qPrintable(lines.value(1)));
        QVERIFY(!lines.join(u'\n').contains(u"server's default"_s));
    }

    void baselineIsNamedAndSimulatedGainsAreNotMeasured() {
        QJsonObject e = diffEvent();
        QJsonObject m = e.value("merge"_L1).toObject();
        m.insert("mode"_L1, u"new"_s);
        m.insert("rows"_L1, QJsonArray{row(64, u"added"_s, 1.25)});
        m.insert("baseline"_L1,
                 u"the file /srv/fallback/triton_3_4_0/x.json (what the server read when the run "
                 u"measured)"_s);
        e.insert("merge"_L1, m);
        auto merge = PushRowMerge::fromEvent(e);
        QVERIFY(merge);
        QStringList lines = merge->lines();
        QVERIFY2(lines.value(1).contains(u"baseline: the file /srv/fallback/triton_3_4_0/x.json"_s),
                 qPrintable(lines.join(u'\n')));
        QVERIFY2(lines.value(2).contains(u"+25.0% measured"_s), qPrintable(lines.join(u'\n')));
        merge->simulated = true;
        lines = merge->lines();
        QVERIFY2(lines.value(2).contains(u"+25.0% simulated"_s), qPrintable(lines.join(u'\n')));
        QVERIFY2(!lines.join(u'\n').contains(u"measured ("_s), qPrintable(lines.join(u'\n')));
    }

    void olderAgentWithoutMerge() {
        QJsonObject e = diffEvent();
        e.remove("merge"_L1);
        QString error;
        QVERIFY(!PushRowMerge::fromEvent(e, &error));
        QVERIFY(error.contains(u"older"_s));
    }

    void otherK_data() {
        QTest::addColumn<int>("servedK");
        QTest::addColumn<QList<int>>("replacedRowK");
        QTest::newRow("served model of another K") << 4096 << QList<int>{4096};
        QTest::newRow("served model of the run's K") << 2048 << QList<int>{};
    }
    void otherK() {
        QFETCH(int, servedK);
        QFETCH(QList<int>, replacedRowK);
        auto merge = PushRowMerge::fromEvent(diffEvent());
        QVERIFY(merge);
        // E=128 and 1536 / TP 2 = 768 per rank: this file's shape; the run measured K=2048.
        merge->addServedK(probeServing(servedK), Framework::SGLang, 2048);
        for (const PushRowMerge::Row &r : std::as_const(merge->rows)) {
            const bool changes =
                r.decision == PushRowMerge::Decision::Replaced || r.decision == PushRowMerge::Decision::Added;
            QCOMPARE(r.unmeasuredK, changes ? replacedRowK : QList<int>{});
        }
        const QString text = merge->lines().join(u'\n');
        QCOMPARE(text.contains(u"another model reads this file too: K=4096"_s), servedK != 2048);
        QVERIFY(text.contains(u"M=64    replaced"_s));
        QCOMPARE(text.contains(u"NOT measured for K=4096"_s), servedK != 2048);
    }

    void otherKFromTheAgentsPushRecords() {
        const auto merge = PushRowMerge::fromEvent(diffEvent(
            QJsonArray{QJsonObject{{"K"_L1, 7168}, {"source"_L1, u"moetune's push record /r/push.json"_s}}}));
        QVERIFY(merge);
        QCOMPARE(merge->otherK.size(), 1);
        QVERIFY(merge->lines().join(u'\n').contains(u"K=7168 (moetune's push record /r/push.json)"_s));
    }

    void siblingsInThePreview() {
        const auto merge = PushRowMerge::fromEvent(diffEvent(
            {}, QJsonArray{QJsonObject{{"file_name"_L1, u"E=128,N=768,device_name=NVIDIA_H200_NVL.json"_s},
                                       {"device_name"_L1, u"NVIDIA_H200_NVL"_s}}}));
        QVERIFY(merge);
        const QString text = merge->lines().join(u'\n');
        QVERIFY2(
            text.contains(u"also holds E=128,N=768,device_name=NVIDIA_H200_NVL.json, for the device name "
                          u"NVIDIA_H200_NVL: the server on NVIDIA_H200 does not read it"_s),
            qPrintable(text));
    }

    void siblingDeviceNames_data() {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::addColumn<bool>("siblings");
        QFile f(QStringLiteral(MOETUNE_TEST_DATA_DIR "/sibling_devices.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray pairs = QJsonDocument::fromJson(f.readAll()).object().value("pairs"_L1).toArray();
        QVERIFY(pairs.size() >= 10);
        for (const QJsonValue v : pairs) {
            const QJsonArray p = v.toArray();
            const QString a = p.at(0).toString(), b = p.at(1).toString();
            QTest::newRow(qPrintable(a + u" / "_s + b)) << a << b << p.at(2).toBool();
        }
    }
    void siblingDeviceNames() {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(bool, siblings);
        QCOMPARE(isSiblingDevice(a, b), siblings);
        QCOMPARE(isSiblingDevice(b, a), siblings);
    }

    void diagnosisNamesTheSiblingFile_data() {
        QTest::addColumn<QString>("inFolder");
        QTest::addColumn<bool>("finding");
        QTest::newRow("H200 NVL file") << u"E=128,N=768,device_name=NVIDIA_H200_NVL.json"_s << true;
        QTest::newRow("other shape") << u"E=64,N=768,device_name=NVIDIA_H200_NVL.json"_s << false;
        QTest::newRow("H20 is another GPU") << u"E=128,N=768,device_name=NVIDIA_H20.json"_s << false;
    }
    void diagnosisNamesTheSiblingFile() {
        QFETCH(QString, inFolder);
        QFETCH(bool, finding);
        Diagnosis d;
        TuningTarget t;
        t.framework = Framework::SGLang;
        t.name = *ConfigName::parse(fileName);
        t.tritonVersion = TritonVersion::parse(u"3.6.0");
        t.tritonFolder = u"triton_3_6_0"_s;
        t.configRoot = u"/srv/sglang/configs"_s;
        t.upMissing = true;
        d.targets.append(t);
        HostProbe probe;
        probe.hostName = u"gpu-7"_s;
        probe.framework = Framework::SGLang;
        probe.tritonVersion = TritonVersion::parse(u"3.6.0");
        probe.configRoot = u"/srv/sglang/configs"_s;
        probe.tritonFolders.append(TritonFolder{u"triton_3_6_0"_s, probe.tritonVersion, {inFolder}});
        const Diagnosis merged = mergeHostProbe(d, probe);
        const Finding *f = merged.find(u"host-sibling-device-file:"_s + fileName);
        QCOMPARE(f != nullptr, finding);
        if (f) {
            QCOMPARE(f->severity, Severity::Warning);
            QVERIFY2(f->explanation.contains(u"this server never reads it"_s), qPrintable(f->explanation));
            QVERIFY(f->title.contains(u"NVIDIA_H200_NVL"_s));
        }
    }
};

// Undo of a run's pushes (issue 40 item 5): every push kept, the plan checked before anything is touched,
// the host script run for real in a temporary folder, and the sentence built from its read-back.
class TestPushUndo : public QObject {
    Q_OBJECT
    static QString sha(const QByteArray &b) {
        return QString::fromLatin1(QCryptographicHash::hash(b, QCryptographicHash::Sha256).toHex());
    }
    static PushRecord::File file(const QString &t, const QByteArray &now, const QByteArray *before,
                                 const QString &backup = {}) {
        PushRecord::File f;
        f.fileName = QFileInfo(t).fileName();
        f.target = t;
        f.sha256 = sha(now);
        f.existedBefore = before != nullptr;
        f.previousSha256 = before ? sha(*before) : QString();
        f.unchanged = before && *before == now;
        f.backup = f.unchanged ? QString() : backup;
        return f;
    }
    static PushRecord push(const QList<PushRecord::File> &files, double at) {
        PushRecord r;
        r.runId = u"r1"_s;
        r.pushedAt = at;
        r.files = files;
        return r;
    }
    static QStringList runScript(const QString &script, int *exitCode) {
        QProcess sh;
        sh.start(u"/bin/sh"_s, {u"-c"_s, script});
        sh.waitForFinished(30000);
        *exitCode = sh.exitCode();
        return QString::fromUtf8(sh.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts);
    }
    static void write(const QString &path, const QByteArray &b) {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(b);
    }
    static QByteArray read(const QString &path) {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<absent>");
    }

private slots:
    void historyKeepsEveryPush() {
        PushHistory h;
        h.runId = u"r1"_s;
        const QByteArray a = "A";
        h.pushes = {push({file(u"/x/t.json"_s, a, nullptr)}, 1.0), push({file(u"/x/t.json"_s, a, &a)}, 2.0)};
        QString error;
        const auto back = PushHistory::fromJson(h.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->pushes.size(), 2);
        QCOMPARE(back->pushes, h.pushes);
        // A version 1 record (one push, an older app) reads as a history of one.
        const auto v1 = PushHistory::fromJson(h.pushes.first().toJson(), &error);
        QVERIFY(v1);
        QCOMPARE(v1->pushes.size(), 1);
        QVERIFY(!v1->pushes.first().files.first().existedBefore);
    }

    void pushPushAgainUndoIsByteForByteTheFolderBefore() {
        QTemporaryDir dir;
        const QString t = dir.filePath(u"E=8,N=128,device_name=X.json"_s);
        const QByteArray a = "pushed\n";
        write(t, a);
        PushHistory h;
        h.runId = u"r1"_s;
        h.pushes = {push({file(t, a, nullptr)}, 1.0), push({file(t, a, &a)}, 2.0)};
        const PushUndo u = PushUndo::plan(h);
        QVERIFY2(u.error.isEmpty(), qPrintable(u.error));
        QCOMPARE(u.undone, QList<int>{0});
        QCOMPARE(u.noOps, QList<int>{1});
        int rc = -1;
        const QStringList out = runScript(u.script(), &rc);
        QCOMPARE(rc, 0);
        QVERIFY(!QFile::exists(t));
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
                 QStringList{});
        const PushUndo::Outcome o = u.readBack(out, u"r1"_s);
        QVERIFY2(o.ok, qPrintable(o.error));
        QVERIFY2(o.lines.value(0).contains(t + u": absent, as it was before the first push of run r1"_s),
                 qPrintable(o.lines.join(u'\n')));
        // The read-back decides: a file still there is an error naming it.
        const PushUndo::Outcome bad = u.readBack({u"now 0 "_s + sha(a)}, u"r1"_s);
        QVERIFY(!bad.ok);
        QVERIFY2(bad.error.contains(t + u" is not what it was before the first push"_s),
                 qPrintable(bad.error));
    }

    void twoPushesUndoneInReverseOrder() {
        QTemporaryDir dir;
        const QString t = dir.filePath(u"t.json"_s);
        const QByteArray orig = "original\n", a = "A\n", b = "B\n";
        write(t, b);
        write(t + u".bak-1"_s, orig);
        write(t + u".bak-2"_s, a);
        PushHistory h;
        h.runId = u"r1"_s;
        h.pushes = {push({file(t, a, &orig, t + u".bak-1"_s)}, 1.0),
                    push({file(t, b, &a, t + u".bak-2"_s)}, 2.0)};
        const PushUndo u = PushUndo::plan(h);
        QVERIFY2(u.error.isEmpty(), qPrintable(u.error));
        QCOMPARE(u.undone, (QList<int>{1, 0}));
        QCOMPARE(u.steps.size(), 2);
        QCOMPARE(u.steps.first().backup, t + u".bak-2"_s); // the newest push first
        int rc = -1;
        const QStringList out = runScript(u.script(), &rc);
        QCOMPARE(rc, 0);
        QCOMPARE(read(t), orig);
        const PushUndo::Outcome o = u.readBack(out, u"r1"_s);
        QVERIFY2(o.ok, qPrintable(o.error));
        QVERIFY2(o.summary.contains(u"1 file(s) restored byte for byte"_s), qPrintable(o.summary));
        QVERIFY(o.lines.value(0).contains(u"byte for byte what it was before the first push"_s));
    }

    void aHandEditIsRefusedAndNothingTouched() {
        QTemporaryDir dir;
        const QString t = dir.filePath(u"t.json"_s);
        const QString other = dir.filePath(u"u.json"_s);
        const QByteArray a = "A\n", hand = "by hand\n";
        write(t, hand);
        write(other, a);
        PushHistory h;
        h.runId = u"r1"_s;
        h.pushes = {push({file(other, a, nullptr), file(t, a, nullptr)}, 1.0)};
        const PushUndo u = PushUndo::plan(h);
        int rc = -1;
        const QStringList out = runScript(u.script(), &rc);
        QCOMPARE(rc, 3);
        QCOMPARE(read(t), hand);
        QCOMPARE(read(other), a); // the other file is not touched either
        const QString why = u.refusal(out, u"r1"_s);
        QVERIFY2(why.startsWith(u"Undo refused, nothing was touched: "_s + t +
                                u" is not what the push of run r1 "
                                u"installed"_s),
                 qPrintable(why));
        // A hand edit between two pushes of the run: undoing both would lose it.
        const QByteArray c = "C\n";
        h.pushes = {push({file(t, a, nullptr)}, 1.0), push({file(t, hand, &c, t + u".bak"_s)}, 2.0)};
        const PushUndo between = PushUndo::plan(h);
        QVERIFY2(between.error.contains(t + u" was changed by hand or by another tool between two pushes"_s),
                 qPrintable(between.error));
    }

    void nothingLeftToUndo() {
        PushHistory h;
        h.runId = u"r1"_s;
        QVERIFY(PushUndo::plan(h).error.contains(u"no push"_s));
        const QByteArray a = "A";
        h.pushes = {push({file(u"/x/t.json"_s, a, nullptr)}, 1.0)};
        h.pushes[0].undoneAt = 5.0;
        QVERIFY(PushUndo::plan(h).error.contains(u"already undone"_s));
        h.pushes = {push({file(u"/x/t.json"_s, a, &a)}, 1.0)}; // changed nothing
        const PushUndo u = PushUndo::plan(h);
        QVERIFY(u.error.isEmpty());
        QVERIFY(u.nothingToPutBack());
        QCOMPARE(u.noOps, QList<int>{0});
    }
};

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    int rc = 0;
    {
        TestPushRowMerge t;
        rc |= QTest::qExec(&t, argc, argv);
    }
    {
        TestPushUndo t;
        rc |= QTest::qExec(&t, argc, argv);
    }
    return rc;
}
#include "tst_pushrowmerge.moc"
