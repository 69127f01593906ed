// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The headroom check's result (issue 19): the agent's real output (tests/data/headroom_synthetic.jsonl,
// written by `moetune-agent headroom` on the synthetic backend: SIMULATED numbers, the labelled test
// double for a GPU) through the protocol parser into HeadroomResult; malformed events as sentences; the
// result kept in a workspace run and read back into the report model.
#include "core/report/report.h"
#include "core/run/agentprotocolparser.h"
#include "core/run/headroomresult.h"
#include "core/run/workspacerun.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

QByteArray agentOutput() {
    QFile f(QStringLiteral(MOETUNE_SOURCE_DIR) + u"/tests/data/headroom_synthetic.jsonl"_s);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

QJsonObject headroomEvent() {
    AgentProtocolParser p;
    QList<AgentEvent> events = p.feed(agentOutput());
    events += p.finish();
    for (const AgentEvent &e : events)
        if (e.type == "headroom"_L1)
            return e.object;
    return {};
}

} // namespace

class TestHeadroomResult : public QObject {
    Q_OBJECT
private slots:
    void parserKnowsTheEvents() {
        const QByteArray out = agentOutput();
        QVERIFY(!out.isEmpty());
        AgentProtocolParser p;
        QList<AgentEvent> events = p.feed(out);
        events += p.finish();
        QCOMPARE(p.skipped(), 0); // headroom_started, headroom_size and headroom are not dropped
        QStringList types;
        for (const AgentEvent &e : events) {
            QVERIFY2(!e.isError(), qPrintable(e.error));
            types.append(e.type);
        }
        QCOMPARE(types.first(), u"hello"_s);
        QCOMPARE(types.count(u"headroom_size"_s), 4);
        QCOMPARE(types.count(u"headroom_started"_s), 1);
        QCOMPARE(types.count(u"headroom"_s), 1);
        QCOMPARE(types.last(), u"done"_s);
    }

    void fromTheAgentsEvent() {
        QString error;
        const auto r = HeadroomResult::fromJson(headroomEvent(), &error);
        QVERIFY2(r, qPrintable(error));
        QVERIFY(r->simulated);
        QCOMPARE(r->backend, u"synthetic"_s);
        QCOMPARE(r->kind, HeadroomResult::Kind::WorthTuning);
        QVERIFY(r->headline().startsWith(u"SIMULATED: worth tuning"_s));
        QCOMPARE(r->sizes.size(), 4);
        QList<int> ms;
        for (const auto &z : r->sizes) {
            ms.append(z.m);
            QVERIFY(z.defaultUs > 0);
            QVERIFY(z.bestUs > 0 && z.bestUs <= z.defaultUs);
            QVERIFY(z.gain >= 1.0);
            QVERIFY(z.floorUs > 0 && z.floorUs < z.bestUs);
            QVERIFY2(z.defaultConfig.startsWith(u'm'), qPrintable(z.defaultConfig));
        }
        QCOMPARE(ms, (QList<int>{1, 16, 256, 1024}));
        int covered = 0;
        for (const auto &rg : r->ranges) {
            covered += int(std::count_if(r->sizes.begin(), r->sizes.end(),
                                         [&](const auto &z) { return z.m >= rg.mFrom && z.m <= rg.mTo; }));
            QVERIFY(!rg.label.isEmpty());
        }
        QCOMPARE(covered, 4); // every size in exactly one range
        QVERIFY(r->maxGain() > 1.05);
        const QString table = r->tableText();
        QVERIFY(table.contains(u"SIMULATED"_s));
        QVERIFY(table.contains(u"M = 256"_s));
        QVERIFY(table.contains(u"best screened"_s));
        QCOMPARE(HeadroomResult::kindId(r->kind), u"worth_tuning"_s);
    }

    void prewarmNote() {
        // the recorded event has no "prewarm" (an agent before it, or a check that started none): no note
        const auto none = HeadroomResult::fromJson(headroomEvent());
        QVERIFY(none);
        QCOMPARE(none->prewarmUnits, 0);
        QVERIFY(none->prewarmNote().isEmpty());
        QJsonObject o = headroomEvent();
        o.insert("prewarm"_L1, QJsonObject{{"pid"_L1, 4242}, {"units"_L1, 340}});
        const auto r = HeadroomResult::fromJson(o);
        QVERIFY(r);
        QCOMPARE(r->prewarmUnits, 340);
        QVERIFY2(r->prewarmNote().contains(u"first 340 timings"_s), qPrintable(r->prewarmNote()));
        o.insert("prewarm"_L1, QJsonObject{{"units"_L1, -5}}); // hostile: never a negative count
        QCOMPARE(HeadroomResult::fromJson(o)->prewarmUnits, 0);
        o.insert("prewarm"_L1, QJsonValue()); // null: the agent started none
        QVERIFY(HeadroomResult::fromJson(o)->prewarmNote().isEmpty());
    }
    void badEvents_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("sentence");
        QTest::newRow("not headroom")
            << QByteArray(R"({"type":"result","verdict":"x","sizes":[]})") << u"not a headroom event"_s;
        QTest::newRow("no verdict") << QByteArray(R"({"type":"headroom","sizes":[]})") << u"no verdict"_s;
        QTest::newRow("sizes not ascending")
            << QByteArray(R"({"type":"headroom","verdict":"v","sizes":[{"m":16,"gain":1},{"m":1,"gain":1}]})")
            << u"ascending"_s;
        QTest::newRow("negative gain")
            << QByteArray(R"({"type":"headroom","verdict":"v","sizes":[{"m":1,"gain":-1}]})")
            << u"negative"_s;
    }
    void badEvents() {
        QFETCH(QByteArray, json);
        QFETCH(QString, sentence);
        QString error;
        QVERIFY(!HeadroomResult::fromJson(QJsonDocument::fromJson(json).object(), &error));
        QVERIFY2(error.contains(sentence), qPrintable(error));
    }

    void keptInTheWorkspaceAndTheReport() {
        QTemporaryDir dir;
        WorkspaceRun run;
        run.dir = dir.filePath(u"r1"_s);
        run.runId = u"r1"_s;
        run.spec = QJsonObject{{"framework"_L1, "sglang"_L1}, {"E"_L1, 128}, {"N"_L1, 768}};
        run.headroom = headroomEvent();
        QString error;
        QVERIFY2(run.save(&error), qPrintable(error));
        QVERIFY(QFile::exists(QDir(run.dir).filePath(u"headroom.json"_s)));
        const auto back = WorkspaceRun::open(run.dir, &error);
        QVERIFY2(back, qPrintable(error));
        QVERIFY(back->headroom);
        QCOMPARE(*back->headroom, headroomEvent());
        const Report rep = Report::fromRun(*back);
        QVERIFY(rep.headroom);
        QCOMPARE(rep.headroom->sizes.size(), 4);
        // a damaged headroom.json loses nothing else and says so
        QFile f(QDir(run.dir).filePath(u"headroom.json"_s));
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(R"({"type":"headroom"})");
        f.close();
        const auto again = WorkspaceRun::open(run.dir, &error);
        QVERIFY(again);
        const Report rep2 = Report::fromRun(*again);
        QVERIFY(!rep2.headroom);
        QVERIFY(rep2.warnings.join(u' ').contains(u"headroom.json"_s));
    }
};

QTEST_GUILESS_MAIN(TestHeadroomResult)
#include "tst_headroomresult.moc"
