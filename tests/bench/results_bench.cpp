// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Prints the Results page's figures (issue 11):
//   1. reopening a workspace of 50,000 measurements shows its charts in < 1 s;
//   2. hovering a 30,000-point landscape answers in < 50 ms;
//   3. PDF export < 3 s for a full 18-size run.
// The 50,000- and 30,000-point inputs are generated here and marked SIMULATED (they measure the app,
// not a GPU); the 18-size PDF is also timed on the demo workspace's real recorded H200 run.
// Usage: results_bench [--screenshot FILE.png]  (with --screenshot: only a picture of the page on the demo)
#include "app/mainwindow.h"
#include "app/results/resultspage.h"
#include "charts/landscapechart.h"
#include "core/run/kernelconfigjson.h"
#include "core/run/sweepresultcache.h"
#include "core/run/workspace.h"
#include "report/demoworkspace.h"
#include "report/pdfreport.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QGraphicsView>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <algorithm>
#include <cstdio>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

const QList<int> kSizes{1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096};

// A simulated result with `total` measurements spread over the 18 sizes (distinct configs per size).
SweepResult generate(int total) {
    SweepResult r;
    r.runId = u"bench-%1"_s.arg(total);
    r.simulated = true;
    r.status = u"ok"_s;
    r.framework = u"sglang"_s;
    r.backend = u"synthetic"_s;
    r.deviceName = u"SIMULATED_GPU"_s;
    r.strategy = u"exhaustive"_s;
    r.ops = {SweepOp::Both};
    r.batchSizes = kSizes;
    r.experts = 128;
    r.n = 768;
    r.k = 2048;
    r.topk = 8;
    r.wallSeconds = 1000;
    QRandomGenerator rng(42);
    const int perSize = total / int(kSizes.size()) + 1;
    int made = 0;
    for (int m : kSizes) {
        const double base = 50.0 + m * 0.2;
        double best = 1e300;
        KernelConfig bestConfig;
        for (int i = 0; i < perSize && made < total; ++i, ++made) {
            SweepMeasurement meas;
            meas.m = m;
            meas.config.blockSizeM = 16 << (i % 5);
            meas.config.blockSizeN = 32 << ((i / 5) % 4);
            meas.config.blockSizeK = 32 << ((i / 20) % 4);
            meas.config.groupSizeM = 1 + (i / 80) % 64;
            meas.config.numWarps = 4 << ((i / 5120) % 2);
            meas.config.numStages = 2 + (i / 10240) % 4;
            meas.replays = 10;
            meas.medianUs = base * (1.0 + 2.0 * rng.generateDouble());
            meas.minUs = meas.medianUs * 0.99;
            meas.maxUs = meas.medianUs * 1.02;
            meas.spread = 0.03;
            if (meas.medianUs < best) {
                best = meas.medianUs;
                bestConfig = meas.config;
            }
            r.measurements.append(meas);
        }
        r.winners.append(SweepEntry{SweepOp::Both, m, bestConfig, best});
        r.defaults.append(SweepEntry{SweepOp::Both, m, r.measurements.last().config, base * 1.5});
        r.roofline.append(SweepEntry{SweepOp::Both, m, {}, base * 0.7});
    }
    r.unitsMeasured = int(r.measurements.size());
    r.recomputePerBatch();
    return r;
}

// The whole window on first start (demo log + demo workspace), Results page selected.
int windowScreenshot(const QString &path) {
    MainWindow window;
    window.resize(1500, 950);
    window.show();
    auto *page = window.findChild<ResultsPage *>();
    if (!page)
        return 1;
    QSignalSpy shown(page, &ResultsPage::workspaceShown);
    window.openInitial(QString());
    if (shown.isEmpty() && !shown.wait(20000))
        return 1;
    window.setCurrentPage(window.pageCount() - 1);
    QTest::qWait(800);
    const bool ok = window.grab().save(path, "PNG");
    std::printf("saved %s\n", qPrintable(path));
    return ok ? 0 : 1;
}

int screenshot(const QString &path) {
    ResultsPage page;
    page.resize(1500, 950);
    page.show();
    QSignalSpy shown(&page, &ResultsPage::workspaceShown);
    page.openDemo();
    if (!shown.wait(20000))
        return 1;
    QTest::qWait(500);
    const bool ok = page.grab().save(path, "PNG");
    auto *tabs = page.findChild<QTabWidget *>(u"tabs"_s);
    tabs->setCurrentIndex(1);
    QTest::qWait(300);
    const QString landscapePath = QString(path).replace(u".png"_s, u"-landscape.png"_s);
    page.grab().save(landscapePath, "PNG");
    tabs->setCurrentIndex(2);
    QTest::qWait(300);
    page.grab().save(QString(path).replace(u".png"_s, u"-compare.png"_s), "PNG");
    std::printf("saved %s (+ -landscape, -compare)\n", qPrintable(path));
    return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
    QApplication app(argc, argv);
    const QStringList args = QApplication::arguments();
    if (args.size() == 3 && args.at(1) == u"--screenshot"_s)
        return screenshot(args.at(2));
    if (args.size() == 3 && args.at(1) == u"--window-screenshot"_s)
        return windowScreenshot(args.at(2));

    QTemporaryDir dir;
    // 1. Reopen a workspace of 50,000 measurements.
    {
        const SweepResult big = generate(50000);
        auto ws = Workspace::create(dir.filePath(u"ws"_s), u"bench"_s);
        WorkspaceRun run;
        run.runId = big.runId;
        run.result = big;
        run.hasResultFile = true;
        QString error;
        if (!ws || !ws->addRun(run, &error)) {
            std::fprintf(stderr, "could not write the workspace: %s\n", qPrintable(error));
            return 1;
        }
        const QString runDir = ws->runs().first().dir;
        auto timeOpen = [&] {
            QElapsedTimer t;
            t.start();
            const auto again = Workspace::open(ws->path());
            return t.elapsed();
        };
        QFile::remove(SweepResultCache::cachePath(runDir));
        const qint64 cold = timeOpen(); // parses result.json and writes the cache
        QList<qint64> parse;
        for (int i = 0; i < 3; ++i)
            parse.append(timeOpen());
        std::sort(parse.begin(), parse.end());
        std::printf(
            "  reading the workspace (worker thread): first open, result.json parsed: %lld ms; reopen "
            "from its cache: median %lld ms\n",
            cold, parse.at(1));
        QList<qint64> times;
        for (int i = 0; i < 5; ++i) {
            ResultsPage page;
            page.resize(1400, 900);
            page.show();
            if (!QTest::qWaitForWindowExposed(&page))
                return 1;
            QSignalSpy shown(&page, &ResultsPage::workspaceShown);
            QElapsedTimer t;
            t.start();
            page.openWorkspace(ws->path());
            if (!shown.wait(30000))
                return 1;
            page.grab(); // paints every chart and the table once
            times.append(t.elapsed());
        }
        std::sort(times.begin(), times.end());
        std::printf("reopen a workspace of %lld measurements until its charts are painted: median %lld ms, "
                    "worst %lld ms (goal < 1000 ms)\n",
                    qlonglong(big.measurements.size()), times.at(times.size() / 2), times.last());
    }
    // 2. Hover a 30,000-point landscape.
    {
        QList<LandscapePoint> points;
        QRandomGenerator rng(7);
        for (int i = 0; i < 30000; ++i) {
            LandscapePoint p;
            p.config.blockSizeM = 16 << (i % 5);
            p.config.blockSizeN = 32 << ((i / 5) % 4);
            p.config.blockSizeK = 32 << ((i / 20) % 4);
            p.config.groupSizeM = 1 + (i / 80) % 64;
            p.config.numWarps = 4 << ((i / 5120) % 2);
            p.config.numStages = 2 + (i / 10240) % 4;
            p.medianUs = 100 * (1.0 + 3.0 * rng.generateDouble());
            p.spread = 0.02;
            p.timings = 1;
            points.append(p);
        }
        LandscapeChart chart;
        chart.resize(1300, 800);
        chart.setPoints(points, u"bench"_s, true);
        chart.show();
        if (!QTest::qWaitForWindowExposed(&chart))
            return 1;
        QTest::qWait(200);
        auto *view = chart.findChild<QGraphicsView *>(u"landscapeView"_s);
        QList<double> times;
        int found = 0;
        for (int i = 0; i < 200; ++i) {
            const int target = int(rng.bounded(30000));
            const QPoint at = view->viewport()->mapFrom(&chart, chart.pointPosition(target));
            QElapsedTimer t;
            t.start();
            QTest::mouseMove(view->viewport(), at);
            QApplication::processEvents(); // the highlight and the label repaint
            view->viewport()->repaint();
            times.append(t.nsecsElapsed() / 1e6);
            found += chart.hoverText().contains(u"rank"_s);
        }
        std::sort(times.begin(), times.end());
        std::printf(
            "hover a 30000-point landscape (mouse move -> nearest point, label and repaint): median %.1f ms, "
            "p95 %.1f ms, worst %.1f ms over %lld moves, %d found a point (goal < 50 ms)\n",
            times.at(times.size() / 2), times.at(times.size() * 95 / 100), times.last(),
            qlonglong(times.size()), found);
    }
    // 3. PDF export of a full 18-size run: the real demo run, and the 50,000-measurement one.
    {
        const auto demo = Workspace::open(DemoWorkspace::path());
        const auto big = Workspace::open(dir.filePath(u"ws"_s));
        for (const WorkspaceRun *run : {demo->run(u"20261129-qwen3-h200-fast"_s), &big->runs().first()}) {
            QList<qint64> times;
            for (int i = 0; i < 3; ++i) {
                QElapsedTimer t;
                t.start();
                QString error;
                if (!PdfReport::write(*run, dir.filePath(u"r.pdf"_s), &error)) {
                    std::fprintf(stderr, "%s\n", qPrintable(error));
                    return 1;
                }
                times.append(t.elapsed());
            }
            std::sort(times.begin(), times.end());
            std::printf("PDF export, %s (%lld sizes, %lld measurements): median %lld ms, worst %lld ms (goal "
                        "< 3000 ms)\n",
                        qPrintable(run->runId), qlonglong(run->result.perBatch.size()),
                        qlonglong(run->result.measurements.size()), times.at(1), times.last());
        }
    }
    return 0;
}
