// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The chart library offscreen: the live best-so-far chart fed by a real agent run (synthetic backend,
// the labelled test double for a GPU), the tuned-vs-default chart and the landscape on the demo
// workspace (a real recorded H200 sweep).
#include "charts/landscapechart.h"
#include "charts/latencychart.h"
#include "charts/livebestchart.h"
#include "core/run/agentprotocolparser.h"
#include "core/run/sweepresultbuilder.h"
#include "core/run/workspace.h"
#include "report/demoworkspace.h"

#include <QChart>
#include <QElapsedTimer>
#include <QGraphicsView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <cmath>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

// The compiled-in copy: read-only, so opening it writes no cache into the source tree.
QString demoDir() {
    return DemoWorkspace::path();
}

AgentEvent makeEvent(const QJsonObject &o) {
    AgentEvent e;
    e.type = o.value("type"_L1).toString();
    e.object = o;
    return e;
}

} // namespace

class TstCharts : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_home;
    QList<AgentEvent> m_events; // one real synthetic run, up+down, three batch sizes

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        const QJsonObject spec{{"framework"_L1, u"sglang"_s},
                               {"E"_L1, 8},
                               {"N"_L1, 128},
                               {"K"_L1, 256},
                               {"topk"_L1, 2},
                               {"ops"_L1, u"up+down"_s},
                               {"batch_sizes"_L1, QJsonArray{1, 16, 256}},
                               {"backend"_L1, u"synthetic"_s}};
        const QString specPath = m_home.filePath(u"spec.json"_s);
        QFile f(specPath);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(spec).toJson());
        f.close();
        QProcess p;
        p.start(u"python3"_s, {QStringLiteral(MOETUNE_AGENT_PYZ), u"--home"_s, m_home.path(), u"tune"_s,
                               specPath, u"--foreground"_s});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        AgentProtocolParser parser;
        m_events = parser.feed(p.readAllStandardOutput());
        m_events += parser.finish();
        QVERIFY(m_events.size() > 100);
    }

    void liveChartFollowsTheRun_data() {
        QTest::addColumn<int>("axis");
        QTest::newRow("evaluations") << int(LiveBestChart::XAxis::Evaluations);
        QTest::newRow("seconds") << int(LiveBestChart::XAxis::Seconds);
    }
    void liveChartFollowsTheRun() {
        QFETCH(int, axis);
        LiveBestChart chart;
        chart.resize(800, 500);
        chart.show();
        chart.setXAxis(LiveBestChart::XAxis(axis));
        QSignalSpy redrawn(&chart, &LiveBestChart::redrawn);
        SweepResultBuilder builder;
        for (const auto &e : std::as_const(m_events)) {
            chart.addEvent(e);
            builder.add(e);
        }
        QTRY_VERIFY(redrawn.count() >= 1);
        QVERIFY(chart.isSimulated());
        QVERIFY(chart.isFinished());
        QVERIFY(chart.chart()->title().startsWith(u"SIMULATED"_s));
        QCOMPARE(chart.batchSizes(), (QList<int>{1, 16, 256}));
        for (int m : {1, 16, 256}) {
            // The last point is the run's final up + down best, as in result.json.
            QCOMPARE(chart.bestUs(m), builder.result().batch(m)->bestUs);
            const QList<QPointF> curve = chart.curve(m);
            QVERIFY(curve.size() >= 2);
            // Steps: x never goes back, and each change of latency is a vertical segment. (The agent's
            // best can rise: a re-timed winner comes out slower, or up and down must share BLOCK_SIZE_M.)
            for (qsizetype i = 1; i < curve.size(); ++i) {
                QVERIFY(curve.at(i).x() >= curve.at(i - 1).x());
                QVERIFY(curve.at(i).y() == curve.at(i - 1).y() || curve.at(i).x() == curve.at(i - 1).x());
            }
        }
        if (LiveBestChart::XAxis(axis) == LiveBestChart::XAxis::Evaluations)
            QCOMPARE(chart.curve(1).last().x(), double(chart.evaluations()));
    }

    // 5000 events arriving in one go cost one redraw, not 5000.
    void liveChartCoalescesRedraws() {
        LiveBestChart chart;
        chart.show();
        QSignalSpy redrawn(&chart, &LiveBestChart::redrawn);
        chart.addEvent(makeEvent(
            {{"type"_L1, u"run_started"_s},
             {"seq"_L1, 0},
             {"ts"_L1, 1000.0},
             {"spec"_L1, QJsonObject{{"ops"_L1, u"up"_s}, {"batch_sizes"_L1, QJsonArray{1, 64}}}}}));
        for (int i = 1; i <= 5000; ++i) {
            chart.addEvent(makeEvent({{"type"_L1, u"measurement"_s},
                                      {"seq"_L1, 2 * i - 1},
                                      {"ts"_L1, 1000.0 + i * 0.001},
                                      {"round"_L1, 0},
                                      {"op"_L1, u"both"_s},
                                      {"m"_L1, i % 2 ? 1 : 64}}));
            chart.addEvent(makeEvent({{"type"_L1, u"best"_s},
                                      {"seq"_L1, 2 * i},
                                      {"ts"_L1, 1000.0 + i * 0.001},
                                      {"op"_L1, u"both"_s},
                                      {"m"_L1, i % 2 ? 1 : 64},
                                      {"median_us"_L1, 10000.0 / i}}));
        }
        QTRY_COMPARE(redrawn.count(), 1);
        QTest::qWait(2 * chart.redrawInterval());
        QCOMPARE(redrawn.count(), 1);
        QCOMPARE(chart.evaluations(), 5000);
        QCOMPARE(chart.bestUs(64), 10000.0 / 5000);
        // A re-attach that repeats old events changes nothing.
        chart.addEvent(makeEvent({{"type"_L1, u"best"_s},
                                  {"seq"_L1, 10},
                                  {"op"_L1, u"both"_s},
                                  {"m"_L1, 64},
                                  {"median_us"_L1, 0.001}}));
        QCOMPARE(chart.bestUs(64), 10000.0 / 5000);
        QVERIFY(!chart.isSimulated());
        QVERIFY(!chart.chart()->title().contains(u"SIMULATED"_s));
    }

    void latencyChartShowsEveryBatchSize() {
        const auto ws = Workspace::open(demoDir());
        QVERIFY(ws);
        const SweepResult &r = ws->run(u"20261129-qwen3-h200-fast"_s)->result;
        LatencyChart chart;
        chart.resize(900, 500);
        chart.setResult(r);
        chart.show();
        QCOMPARE(chart.pointCount(u"tuned"_s), 18);
        QCOMPARE(chart.pointCount(u"default config"_s), 18);
        QCOMPARE(chart.pointCount(u"HBM floor"_s), 18);
        QStringList expected;
        for (const auto &b : r.perBatch)
            expected.append(QString::number(b.speedup, 'f', 2) + u'x');
        QCOMPARE(chart.speedupLabels(), expected);
        QVERIFY(!chart.chart()->title().contains(u"SIMULATED"_s));
        SweepResult simulated = r;
        simulated.simulated = true;
        chart.setResult(simulated);
        QVERIFY(chart.chart()->title().startsWith(u"SIMULATED"_s));
    }

    void landscapeHoverFindsThePoint_data() {
        QTest::addColumn<int>("mode");
        QTest::newRow("by rank") << int(LandscapeChart::XMode::Rank);
        QTest::newRow("by BLOCK_SIZE_N") << int(LandscapeChart::XMode::Parameter);
    }
    void landscapeHoverFindsThePoint() {
        QFETCH(int, mode);
        const auto ws = Workspace::open(demoDir());
        QVERIFY(ws);
        const SweepResult &r = ws->run(u"20261129-qwen3-h200-exhaustive"_s)->result;
        const auto points = r.landscape(SweepOp::Both, 256);
        LandscapeChart chart;
        chart.resize(1000, 600);
        chart.setPoints(points, u"M=256"_s, r.simulated);
        chart.setXMode(LandscapeChart::XMode(mode), KernelConfigJson::Parameter::BlockN);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        QCOMPARE(chart.pointCount(), int(points.size()));
        int winner = -1;
        for (int i = 0; i < chart.pointCount(); ++i)
            if (chart.point(i).winner)
                winner = i;
        QVERIFY(winner >= 0);
        QSignalSpy hovered(&chart, &LandscapeChart::hovered);
        const QPoint at = chart.pointPosition(winner);
        QVERIFY(chart.rect().contains(at));
        auto *view = chart.findChild<QGraphicsView *>(u"landscapeView"_s);
        QVERIFY(view);
        QTest::mouseMove(view->viewport(), view->viewport()->mapFrom(&chart, at));
        QTRY_VERIFY(hovered.count() >= 1);
        const int found = hovered.last().at(0).toInt();
        QVERIFY(found >= 0);
        // Points may overlap; the one found is drawn where the mouse is.
        QVERIFY((chart.pointPosition(found) - at).manhattanLength() <= 8);
        QVERIFY(chart.hoverText().contains(KernelConfigJson::key(chart.point(found).config)));
        if (found == winner)
            QVERIFY(chart.hoverText().contains(u"WINNER"_s));
        QVERIFY(chart.hoverText().contains(u"spread"_s));
        // Far from every point: nothing.
        QCOMPARE(chart.pointAt(QPoint(2, 2)), -1);
    }

    void landscapeColoursByParameter() {
        QList<LandscapePoint> points;
        for (int bm : {16, 32, 64})
            for (int i = 0; i < 10; ++i) {
                LandscapePoint p;
                p.config.blockSizeM = bm;
                p.config.blockSizeN = p.config.blockSizeK = 64;
                p.config.groupSizeM = 1;
                p.config.numWarps = 4;
                p.config.numStages = 2 + i % 3;
                p.medianUs = 100 + bm + i;
                points.append(p);
            }
        LandscapeChart chart;
        chart.setColorBy(KernelConfigJson::Parameter::BlockM);
        chart.setPoints(points, u"t"_s, true);
        QStringList legend;
        for (auto *s : chart.chart()->series())
            legend.append(s->name());
        QVERIFY(legend.contains(u"BM=16"_s) && legend.contains(u"BM=32"_s) && legend.contains(u"BM=64"_s));
        QVERIFY(chart.chart()->title().startsWith(u"SIMULATED"_s));
    }
};

QTEST_MAIN(TstCharts)
#include "tst_charts.moc"
