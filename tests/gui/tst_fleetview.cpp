// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Issue 46, the Fleet view offscreen: the host and group tables and the totals line from a FleetRecord
// (every stage in its words, the groups with what sets them apart), the fleet PDF (pdftotext finds each
// host's outcome and the totals), the Results page's Fleet tab. MOETUNE_SHOTS_DIR=folder also saves the
// Fleet view during a rollout at 1440x900 and 1024x640 and the fleet PDF as PNG pages (screenshots(), a
// tool, not a check).
#include "app/fleet/fleetgroupmodel.h"
#include "app/fleet/fleethostmodel.h"
#include "app/fleet/fleetpage.h"
#include "app/fleet/fleetresultsview.h"
#include "app/hosts/hostlistmodel.h"
#include "app/hosts/hostspage.h"
#include "app/mainwindow.h"
#include "app/results/resultspage.h"
#include "clirun.h"
#include "core/fleet/fleetrecord.h"
#include "findchild.h"
#include "fleetfixture.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/hostflows.h"
#include "remote/flows/hostregistry.h"
#include "remote/flows/hostsession.h"
#include "report/fleetreport.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QLabel>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>
#include <QTreeView>

#include <algorithm>
#include <memory>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::click;
using moetune::test::named;

namespace {

const QList<FleetHostStage> kStages{
    FleetHostStage::Waiting,     FleetHostStage::Connecting,  FleetHostStage::Diagnosing,
    FleetHostStage::Diagnosed,   FleetHostStage::Unreachable, FleetHostStage::Failed,
    FleetHostStage::Tuning,      FleetHostStage::Tuned,       FleetHostStage::Importing,
    FleetHostStage::Pushing,     FleetHostStage::Restarting,  FleetHostStage::Proved,
    FleetHostStage::ProofFailed, FleetHostStage::Undoing,     FleetHostStage::Undone,
    FleetHostStage::UndoFailed,  FleetHostStage::Skipped};

FleetHostFacts facts(const QString &host, const QString &triton, const QString &device, const QString &hash) {
    FleetHostFacts f;
    f.host = host;
    f.framework = u"sglang"_s;
    f.frameworkVersion = u"0.5.4"_s;
    f.tritonVersion = triton;
    f.tritonFolder = u"configs/triton_"_s + QString(triton).replace(u'.', u'_');
    f.deviceName = device;
    f.experts = 128;
    f.intermediate = 768;
    f.dtype = u"fp8_w8a8"_s;
    f.blockShape = u"[128,128]"_s;
    f.kernelSourceHash = hash;
    f.missingConfig = u"E=128,N=768,device_name=%1,dtype=fp8_w8a8,block_shape=[128,128].json"_s.arg(device);
    return f;
}

FleetHostRecord host(const QString &name, FleetHostStage stage, const QString &reason = {}) {
    FleetHostRecord h;
    h.host.name = name;
    h.host.address = u"10.0.0.%1"_s.arg(qHash(name) % 200 + 2);
    h.stage = stage;
    h.reason = reason;
    return h;
}

void diagnosed(FleetHostRecord *h, const FleetHostFacts &f, const QString &gpu) {
    h->facts = f;
    h->gpu = gpu;
    h->framework = f.framework;
    h->frameworkVersion = f.frameworkVersion;
    h->triton = f.tritonVersion;
    h->model = u"Qwen/Qwen3-30B-A3B-FP8"_s;
    h->moeKernel = u"Triton fused MoE"_s;
    if (!f.missingConfig.isEmpty())
        h->findings = {u"Missing MoE config %1"_s.arg(f.missingConfig),
                       u"Default config in use on 8 ranks"_s};
}

void pushed(FleetHostRecord *h, const QString &run) {
    h->runId = run;
    h->push.runId = run;
    h->push.host = h->host.name;
    h->push.simulated = true;
    PushRecord::File file;
    file.fileName = h->facts.missingConfig;
    file.target = u"/opt/sglang/"_s + h->facts.tritonFolder + u'/' + file.fileName;
    file.sha256 = u"ab12"_s;
    h->push.files = {file};
    h->push.pushedAt = 1796692000;
}

// A fleet in the middle of its rollouts: three groups (two GPU names, two Triton versions), an unreachable
// host, one whose key changed, one whose restart failed and was undone, one missing nothing.
FleetRecord midRollout() {
    FleetRecord r;
    r.id = u"fleet-20261208-013000"_s;
    r.createdAt = 1796693400; // 2026-12-08 01:30 UTC
    r.inventory = u"/home/ops/fleet/hosts.yml"_s;
    r.selection = u"group inference"_s;
    const QString h200 = u"NVIDIA_H200"_s;
    const QString h100 = u"NVIDIA_H100_80GB_HBM3"_s;
    const QString k1 = u"4f1c0d9e7a2b4c6d8e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"_s;
    struct Row {
        QString name;
        FleetHostStage stage;
        QString triton;
        QString device;
        QString reason;
    };
    const QList<Row> rows{
        {u"gpu-a1"_s, FleetHostStage::Proved, u"3.5.0"_s, h200, {}},
        {u"gpu-a2"_s, FleetHostStage::Proved, u"3.5.0"_s, h200, {}},
        {u"gpu-a3"_s, FleetHostStage::Restarting, u"3.5.0"_s, h200,
         u"waiting for the server to be ready (41 s)"_s},
        {u"gpu-a4"_s, FleetHostStage::Tuned, u"3.5.0"_s, h200, {}},
        {u"gpu-b1"_s, FleetHostStage::Tuning, u"3.6.0"_s, h200, u"run 20261208-0131-b1 on 8 GPUs"_s},
        {u"gpu-b2"_s, FleetHostStage::Diagnosed, u"3.6.0"_s, h200, {}},
        {u"gpu-c1"_s, FleetHostStage::Undone, u"3.5.0"_s, h100,
         u"the restart failed (start command exited 1); undone and read back"_s},
        {u"gpu-c2"_s, FleetHostStage::Skipped, u"3.5.0"_s, h100, u"the rollout of G3 stopped at gpu-c1"_s},
        {u"gpu-c3"_s, FleetHostStage::Proved, u"3.5.0"_s, h100, {}},
        {u"gpu-d"_s, FleetHostStage::Diagnosed, u"3.5.0"_s, h200, {}},
        {u"gpu-x"_s,
         FleetHostStage::Unreachable,
         {},
         {},
         u"host key changed: refused (the key in known_hosts differs from the one offered)"_s},
        {u"gpu-y"_s, FleetHostStage::Unreachable, {}, {}, u"connection refused by 127.0.0.1:1"_s},
    };
    for (const Row &row : rows) {
        FleetHostRecord h = host(row.name, row.stage, row.reason);
        if (!row.triton.isEmpty()) {
            FleetHostFacts f = facts(row.name, row.triton, row.device, k1);
            if (row.name == "gpu-d"_L1)
                f.missingConfig.clear(); // its server found its config
            diagnosed(&h, f, row.device == h200 ? u"8x NVIDIA H200"_s : u"8x NVIDIA H100 80GB HBM3"_s);
        }
        r.hosts.append(h);
    }
    r.regroup();
    // The rollout's outcomes on top of the groups.
    auto *a1 = r.host(u"gpu-a1"_s);
    pushed(a1, u"20261208-0120-a1"_s);
    a1->proof = u"the MoE config warning is gone on every rank"_s;
    a1->servingVerdict = u"output throughput +6.1% (95% interval +2.0% to +10.3%)"_s;
    auto *a2 = r.host(u"gpu-a2"_s);
    pushed(a2, u"20261208-0125-a2"_s);
    a2->proof = u"the MoE config warning is gone on every rank"_s;
    a2->servingVerdict = u"no change shown (95% interval -1.8% to +2.9%)"_s;
    pushed(r.host(u"gpu-a3"_s), u"20261208-0128-a3"_s);
    auto *c1 = r.host(u"gpu-c1"_s);
    pushed(c1, u"20261208-0126-c1"_s);
    c1->undone = true;
    auto *c3 = r.host(u"gpu-c3"_s);
    pushed(c3, u"20261208-0122-c3"_s);
    c3->proof = u"the MoE config warning is gone on every rank"_s;
    return r;
}

int groupOf(const FleetRecord &r, const QString &host) {
    const FleetHostRecord *h = r.host(host);
    return h ? h->group : -2;
}

QString run(const QString &program, const QStringList &args) {
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(60000) || p.exitCode() != 0)
        return {};
    return QString::fromUtf8(p.readAllStandardOutput());
}

// The words of phrase in that order in text (a table cell wraps, and -layout puts the next cell's words
// between the lines of a wrapped one).
bool hasWords(const QString &text, const QString &phrase, qsizetype from = 0) {
    qsizetype at = from;
    for (const QString &w : phrase.split(u' ', Qt::SkipEmptyParts)) {
        at = text.indexOf(w, at);
        if (at < 0)
            return false;
        at += w.size();
    }
    return true;
}

// pdftotext gives the font's ligatures as such ("conﬁg"); a reader's search finds "config".
QString pdfText(const QString &pdf) {
    QString t = run(u"pdftotext"_s, {u"-layout"_s, pdf, u"-"_s});
    t.replace(QChar(0xfb00), u"ff"_s).replace(QChar(0xfb01), u"fi"_s).replace(QChar(0xfb02), u"fl"_s);
    t.replace(QChar(0xfb03), u"ffi"_s).replace(QChar(0xfb04), u"ffl"_s);
    return t.simplified();
}

} // namespace

class TestFleetView : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    // The app's loop (fleetFromTheHostsPage, then rollOutStopsAtTheFailingHostThenUndoGroup).
    std::unique_ptr<test::FleetFixture> m_fleet;
    std::unique_ptr<QTemporaryDir> m_loopDir;
    std::unique_ptr<QSettings> m_loopSettings;
    std::unique_ptr<MainWindow> m_window;
    int m_group = -1;

    static QString stageOf(const FleetPage *page, const QString &name) {
        const FleetHostModel *hosts = page->hostModel();
        for (int i = 0; i < hosts->rowCount(); ++i)
            if (hosts->index(i, 0).data().toString() == name)
                return hosts->index(i, FleetHostModel::StageColumn).data().toString();
        return u"<no row>"_s;
    }
    static QString stages(const FleetPage *page) {
        const FleetHostModel *hosts = page->hostModel();
        QStringList out;
        for (int i = 0; i < hosts->rowCount(); ++i)
            out.append(hosts->index(i, 0).data().toString() + u": "_s +
                       hosts->index(i, FleetHostModel::StageColumn).data().toString());
        return out.join(u'\n');
    }

    // Fills the group records of midRollout() (after regroup, so their indexes are known).
    static void rollouts(FleetRecord *r) {
        const int ga = groupOf(*r, u"gpu-a1"_s);
        const int gb = groupOf(*r, u"gpu-b1"_s);
        const int gc = groupOf(*r, u"gpu-c1"_s);
        QVERIFY(ga >= 0 && gb >= 0 && gc >= 0);
        FleetGroupRecord &a = r->groups[ga];
        a.tuneHost = u"gpu-a4"_s;
        a.runId = u"20261208-0110-a4"_s;
        a.canary = u"gpu-a1"_s;
        a.state = u"rolling out"_s;
        FleetGroupRecord &b = r->groups[gb];
        b.tuneHost = u"gpu-b1"_s;
        b.state = u"tuning"_s;
        FleetGroupRecord &c = r->groups[gc];
        c.tuneHost = u"gpu-c3"_s;
        c.runId = u"20261208-0111-c3"_s;
        c.canary = u"gpu-c3"_s;
        c.state = u"stopped"_s;
        c.reason = u"gpu-c1: the restart failed (start command exited 1); gpu-c1 undone"_s;
    }

private slots:
    void cleanupTestCase() {
        m_window.reset(); // its sessions before the hosts
        m_fleet.reset();
    }

    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        QStandardPaths::setTestModeEnabled(true);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_home.path());
        QCoreApplication::setOrganizationName(u"moetune-test"_s);
        QCoreApplication::setApplicationName(u"tst_fleetview"_s);
    }

    // (a) Every stage in the words a user reads, with its reason; rows refreshed in place, batched.
    void hostModelShowsEveryStage() {
        FleetRecord r;
        r.id = u"fleet-stages"_s;
        for (FleetHostStage s : kStages)
            r.hosts.append(host(u"h-"_s + fleetStageName(s), s, u"why "_s + fleetStageName(s)));
        FleetHostModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRecord(&r);
        QCOMPARE(model.rowCount(), int(kStages.size()));
        QStringList words;
        for (int i = 0; i < kStages.size(); ++i) {
            const QString text = model.index(i, FleetHostModel::StageColumn).data().toString();
            const QString expected =
                fleetStageText(kStages.at(i)) + u": why "_s + fleetStageName(kStages.at(i));
            QCOMPARE(text, expected);
            QVERIFY2(!fleetStageText(kStages.at(i)).isEmpty(), qPrintable(fleetStageName(kStages.at(i))));
            words.append(fleetStageText(kStages.at(i)));
        }
        words.removeDuplicates();
        QCOMPARE(words.size(), kStages.size()); // no two stages read the same

        // hostChanged marks rows; one flush tells the view, per run of adjacent rows, never a reset.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        for (int k = 0; k < 50; ++k) {
            r.hosts[3].stage = FleetHostStage::Connecting;
            model.hostChanged(3);
            model.hostChanged(4);
            model.hostChanged(9);
        }
        QCOMPARE(changed.size(), 0); // nothing before the interval
        QTRY_COMPARE_WITH_TIMEOUT(changed.size(), 2, 2000);
        QCOMPARE(changed.at(0).at(0).value<QModelIndex>().row(), 3);
        QCOMPARE(changed.at(0).at(1).value<QModelIndex>().row(), 4);
        QCOMPARE(changed.at(1).at(0).value<QModelIndex>().row(), 9);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(model.index(3, FleetHostModel::StageColumn).data().toString(),
                 fleetStageText(FleetHostStage::Connecting) + u": why diagnosed"_s);
    }

    // (a) The tables and the totals of a fleet mid-rollout: groups, what sets them apart, outcomes.
    void tablesFromRecord() {
        FleetRecord r = midRollout();
        rollouts(&r);
        QCOMPARE(r.groups.size(), 3); // H200 on Triton 3.5.0, H200 on 3.6.0, H100 on 3.5.0
        FleetHostModel hosts;
        FleetGroupModel groups;
        QAbstractItemModelTester t1(&hosts, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(&groups, QAbstractItemModelTester::FailureReportingMode::QtTest);
        hosts.setRecord(&r);
        groups.setRecord(&r);
        QCOMPARE(hosts.rowCount(), 12);
        QCOMPARE(groups.rowCount(), 3);
        auto cell = [&](const QString &name, int column) {
            for (int i = 0; i < hosts.rowCount(); ++i)
                if (hosts.index(i, 0).data().toString() == name)
                    return hosts.index(i, column).data().toString();
            return u"<no row>"_s;
        };
        QCOMPARE(cell(u"gpu-a1"_s, FleetHostModel::GpuColumn), u"8x NVIDIA H200"_s);
        QCOMPARE(cell(u"gpu-a1"_s, FleetHostModel::FrameworkColumn), u"sglang 0.5.4"_s);
        QCOMPARE(cell(u"gpu-b1"_s, FleetHostModel::TritonColumn), u"3.6.0"_s);
        QVERIFY(cell(u"gpu-a1"_s, FleetHostModel::KernelColumn).startsWith(u"Triton fused MoE (4f1c0d9e"_s));
        QVERIFY(cell(u"gpu-a1"_s, FleetHostModel::FindingsColumn).endsWith(u"(+1 more)"_s));
        QCOMPARE(cell(u"gpu-d"_s, FleetHostModel::GroupColumn), u"none needed"_s);
        QCOMPARE(cell(u"gpu-x"_s, FleetHostModel::GpuColumn), QString()); // unknown, not invented
        QVERIFY(cell(u"gpu-x"_s, FleetHostModel::StageColumn).contains(u"host key changed"_s));
        QVERIFY(cell(u"gpu-y"_s, FleetHostModel::StageColumn).contains(u"connection refused"_s));
        QVERIFY(cell(u"gpu-c1"_s, FleetHostModel::StageColumn).contains(u"the restart failed"_s));
        hosts.setTuneProgress(groupOf(r, u"gpu-b1"_s), 340, 911);
        QCOMPARE(cell(u"gpu-b1"_s, FleetHostModel::StageColumn),
                 fleetStageText(FleetHostStage::Tuning) +
                     u" 340/911 (37%): run 20261208-0131-b1 on 8 GPUs"_s);

        const int ga = groupOf(r, u"gpu-a1"_s);
        const int gb = groupOf(r, u"gpu-b1"_s);
        const int gc = groupOf(r, u"gpu-c1"_s);
        QCOMPARE(groups.index(ga, FleetGroupModel::HostsColumn).data().toString(),
                 u"4: gpu-a1, gpu-a2, gpu-a3, gpu-a4"_s);
        QCOMPARE(groups.index(gc, FleetGroupModel::HostsColumn).data().toString(),
                 u"3: gpu-c1, gpu-c2, gpu-c3"_s);
        QCOMPARE(groups.index(ga, FleetGroupModel::KernelColumn).data().toString(), u"4f1c0d9e7a2b"_s);
        QCOMPARE(groups.index(ga, FleetGroupModel::RunColumn).data().toString(),
                 u"[SIMULATED] on gpu-a4, run 20261208-0110-a4"_s); // its pushes say simulated
        QCOMPARE(groups.index(gb, FleetGroupModel::RunColumn).data().toString(), u"on gpu-b1"_s);
        QVERIFY(groups.index(gc, FleetGroupModel::StateColumn)
                    .data()
                    .toString()
                    .startsWith(u"stopped: gpu-c1"_s));
        // What sets the groups apart is named, both ways.
        const QString apartA =
            groups.index(ga, FleetGroupModel::ApartColumn).data(Qt::ToolTipRole).toString();
        QVERIFY(groups.index(ga, FleetGroupModel::ApartColumn)
                    .data()
                    .toString()
                    .contains(u"vs %1: Triton 3.5.0 vs 3.6.0"_s.arg(gb + 1)));
        QVERIFY2(apartA.contains(u"vs group %1"_s.arg(gb + 1)) && apartA.contains(u"3.6.0"_s),
                 qPrintable(apartA));
        QVERIFY2(apartA.contains(u"vs group %1"_s.arg(gc + 1)) && apartA.contains(u"H100"_s),
                 qPrintable(apartA));

        const FleetTotals totals = FleetTotals::of(r);
        QCOMPARE(totals.hosts, 12);
        QCOMPARE(totals.diagnosed, 10);
        QCOMPARE(totals.unreachable, 2);
        QCOMPARE(totals.groups, 3);
        QCOMPARE(totals.tuned, 2);
        QCOMPARE(totals.pushed, 5);
        QCOMPARE(totals.proved, 3);
        QCOMPARE(totals.undone, 1);
        QCOMPARE(totals.skipped, 1);
        QCOMPARE(totals.inProgress, 2); // gpu-a3 restarting, gpu-b1 tuning
        QCOMPARE(totals.text(), u"12 hosts: 10 diagnosed, 2 in progress, 2 unreachable, 1 missing nothing "
                                u"\u00b7 3 groups, 2 tuned \u00b7 5 pushed, 3 proved, 1 undone, 1 skipped"_s);
    }

    // The fleet PDF: each host's outcome and the totals, as pdftotext reads them back.
    void fleetPdf() {
        if (QStandardPaths::findExecutable(u"pdftotext"_s).isEmpty())
            QFAIL("pdftotext is missing (poppler-utils; packaging/install-deps.sh installs it)");
        FleetRecord r = midRollout();
        rollouts(&r);
        QTemporaryDir dir;
        const QString pdf = dir.filePath(FleetReport::suggestedFileName(r));
        QVERIFY(pdf.endsWith(u"SIMULATED-moetune-fleet-report-fleet-20261208-013000.pdf"_s));
        QString error;
        QVERIFY2(FleetReport::write(r, pdf, &error), qPrintable(error));
        if (const QString shots = qEnvironmentVariable("MOETUNE_SHOTS_DIR"); !shots.isEmpty()) {
            QFile::remove(shots + u"/fleet-report.pdf"_s);
            QFile::copy(pdf, shots + u"/fleet-report.pdf"_s);
            run(u"pdftoppm"_s, {u"-r"_s, u"60"_s, u"-png"_s, pdf, shots + u"/fleet-report"_s});
        }
        const QString flat = pdfText(pdf);
        QVERIFY(!flat.isEmpty());
        QVERIFY(flat.contains(u"SIMULATED"_s));
        for (const FleetHostRecord &h : r.hosts) {
            QVERIFY2(flat.contains(h.host.name), qPrintable(h.host.name));
            // The outcome's words, as laid out (table cells wrap: compare word by word in order).
            const QString outcome = r.nothingMissing.contains(h.host.name)
                                        ? u"its server found its config: nothing to tune"_s
                                        : FleetReport::outcome(h);
            QVERIFY2(hasWords(flat, outcome, flat.indexOf(h.host.name)),
                     qPrintable(h.host.name + u": "_s + outcome));
        }
        QVERIFY(hasWords(flat, u"unreachable: host key changed"_s));
        QVERIFY(hasWords(flat, u"pushed, restarted, proved"_s));
        QVERIFY(hasWords(flat, u"+6.1% (95% interval +2.0% to +10.3%)"_s));
        QVERIFY(hasWords(flat, u"on gpu-a4, run 20261208-0110-a4 (SIMULATED)"_s));
        // The totals table, four counts to a row.
        QVERIFY2(flat.contains(u"hosts 12 diagnosed 10 unreachable 2 failed 0"_s), qPrintable(flat));
        QVERIFY(flat.contains(u"groups 3 tuned 2 pushed 5 proved 3"_s));
        QVERIFY(flat.contains(u"proof failed 0 undone 1 undo failed 0 skipped 1"_s));
        QVERIFY(flat.contains(FleetTotals::of(r).text().simplified().left(40)));
    }

    // The Results page's Fleet tab: the newest record of the workspace, and its export.
    void resultsFleetTab() {
        QTemporaryDir ws;
        FleetRecord older = midRollout();
        older.id = u"fleet-20261207-090000"_s;
        older.createdAt = 1796634000;
        older.selection = u"all"_s;
        FleetRecord r = midRollout();
        rollouts(&r);
        QString error;
        QVERIFY2(older.save(ws.path(), &error), qPrintable(error));
        QVERIFY2(r.save(ws.path(), &error), qPrintable(error));
        FleetResultsView view;
        QSignalSpy shown(&view, &FleetResultsView::shown);
        view.setWorkspace(ws.path());
        QVERIFY(shown.wait(10000));
        QCOMPARE(shown.first().first().toBool(), true);
        QVERIFY(view.record());
        QCOMPARE(view.record()->id, r.id);
        auto *browser = moetune::test::named<QTextBrowser>(&view, u"fleetReportBrowser"_s);
        QVERIFY(browser);
        QVERIFY(browser->toPlainText().contains(u"on gpu-a4, run 20261208-0110-a4 (SIMULATED)"_s));
        // The record changes on disk after the tab was filled: the export says what is there now.
        r.host(u"gpu-a3"_s)->stage = FleetHostStage::Proved;
        r.host(u"gpu-a3"_s)->reason.clear();
        QVERIFY2(r.save(ws.path(), &error), qPrintable(error));
        QTemporaryDir out;
        const QString written = view.exportReport(out.filePath(u"fleet.pdf"_s));
        QCOMPARE(written, out.filePath(u"SIMULATED-fleet.pdf"_s)); // the name says what it is
        const QString flat = pdfText(written);
        QVERIFY2(flat.contains(u"4 proved"_s), qPrintable(flat));

        QTemporaryDir empty;
        view.setWorkspace(empty.path());
        QVERIFY(shown.wait(10000));
        QCOMPARE(shown.last().first().toBool(), false);
        QVERIFY(!view.record());
    }

    // `moetune-cli report WORKSPACE --fleet [--run ID] [--pdf FILE]`: the same report from the real binary.
    void cliFleetReport() {
        const QString cli = QCoreApplication::applicationDirPath() + u"/../../src/cli/moetune-cli"_s;
        QVERIFY2(QFileInfo(cli).isExecutable(), qPrintable(cli));
        QTemporaryDir ws;
        FleetRecord r = midRollout();
        rollouts(&r);
        QString error;
        QVERIFY2(r.save(ws.path(), &error), qPrintable(error));
        const test::CliResult text = test::runCli(cli, {u"report"_s, ws.path(), u"--fleet"_s}, 60000);
        QCOMPARE(text.exitCode, 0);
        const QString printed = QString::fromUtf8(text.out);
        QVERIFY2(printed.contains(FleetTotals::of(r).text()), qPrintable(printed));
        QVERIFY(printed.contains(u"unreachable: connection refused by 127.0.0.1:1"_s));
        QTemporaryDir out;
        const test::CliResult pdf = test::runCli(
            cli, {u"report"_s, ws.path(), u"--fleet"_s, u"--run"_s, r.id, u"--pdf"_s, out.path()}, 60000);
        QCOMPARE(pdf.exitCode, 0);
        const QString file = out.filePath(FleetReport::suggestedFileName(r));
        QVERIFY2(QFileInfo::exists(file), qPrintable(QString::fromUtf8(pdf.out) + pdf.err));
        QVERIFY(pdf.err.contains(u"simulated"_s));
        QVERIFY(hasWords(pdfText(file), u"gpu-c1 20261208-0126-c1 pushed, then undone"_s));
        const test::CliResult none = test::runCli(cli, {u"report"_s, out.path(), u"--fleet"_s}, 60000);
        QCOMPARE(none.exitCode, 2);
        QVERIFY(none.err.contains(u"holds no fleet records"_s));
        const test::CliResult unknown =
            test::runCli(cli, {u"report"_s, ws.path(), u"--fleet"_s, u"--run"_s, u"fleet-nope"_s}, 60000);
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY(unknown.err.contains(r.id));
    }

    // Open Inventory...: the sets (all, each group, each tag) with their counts; a malformed file is named
    // with its line; a set diagnosed from it keeps hosts nobody listens for, with the reason.
    void inventorySets() {
        QTemporaryDir dir;
        QSettings settings(dir.filePath(u"moetune.ini"_s), QSettings::IniFormat);
        QFile sshConfig(dir.filePath(u"ssh_config"_s));
        QVERIFY(sshConfig.open(QIODevice::WriteOnly));
        sshConfig.close();
        HostRegistry registry;
        registry.setSources(&settings, sshConfig.fileName());
        SshOptions ssh;
        ssh.sshConfigFile = sshConfig.fileName();
        ssh.knownHostsFile = dir.filePath(u"known_hosts"_s);
        ssh.useAgent = false;
        ssh.connectTimeoutMs = 5000;
        registry.setSshTemplate(ssh);
        FleetPage page(&registry);
        page.setWorkspacePath(dir.filePath(u"workspace"_s));
        page.resize(1200, 800);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));

        QFile bad(dir.filePath(u"bad.yml"_s));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("all:\n  hosts:\n    gpu-01: {ansible_port: notaport}\n");
        bad.close();
        QVERIFY(!page.openInventory(bad.fileName()));
        QVERIFY2(page.bannerText().contains(u"bad.yml"_s), qPrintable(page.bannerText()));

        QFile ini(dir.filePath(u"hosts.ini"_s));
        QVERIFY(ini.open(QIODevice::WriteOnly));
        ini.write("[h200]\ngpu-01 ansible_host=127.0.0.1 ansible_port=1 moetune_tags=rack1\n"
                  "gpu-02 ansible_host=127.0.0.1 ansible_port=1\n[h100]\ngpu-04 ansible_host=127.0.0.1 "
                  "ansible_port=1\n");
        ini.close();
        QVERIFY(page.openInventory(ini.fileName()));
        auto *sets = named<QComboBox>(&page, u"setCombo"_s);
        QStringList items;
        for (int i = 0; i < sets->count(); ++i)
            items.append(sets->itemText(i));
        QCOMPARE(items, (QStringList{u"All hosts (3)"_s, u"Group h100 (1)"_s, u"Group h200 (2)"_s,
                                     u"Tag rack1 (1)"_s}));
        QVERIFY(page.chooseSet(u"group h200"_s));
        QCOMPARE(named<QPushButton>(&page, u"diagnoseButton"_s)->text(), u"Diagnose All (2)"_s);
        click(&page, u"diagnoseButton"_s);
        QVERIFY(page.isDiagnosing());
        QTRY_VERIFY_WITH_TIMEOUT(!page.isDiagnosing(), 60000);
        const FleetRecord *r = page.record();
        QVERIFY(r);
        QCOMPARE(r->selection, u"group h200"_s);
        QCOMPARE(r->inventory, QFileInfo(ini.fileName()).absoluteFilePath());
        QCOMPARE(r->hosts.size(), 2);
        for (int i = 0; i < 2; ++i) {
            QCOMPARE(r->hosts.at(i).stage, FleetHostStage::Unreachable);
            QVERIFY2(page.hostModel()->stageText(i).contains(u"refused"_s, Qt::CaseInsensitive),
                     qPrintable(page.hostModel()->stageText(i)));
        }
        QCOMPARE(page.groupModel()->rowCount(), 0);
        QVERIFY(page.totalsText().startsWith(u"2 hosts: 2 unreachable"_s));
        QVERIFY(!named<QPushButton>(&page, u"tuneButton"_s)->isEnabled());
        // Saved in the workspace: the page opens it again (a rollout cut short can be undone from it).
        QCOMPARE(FleetRecord::loadAll(page.workspacePath()).value(0).id, r->id);
    }

    // A tool: MOETUNE_SHOTS_DIR=folder saves the Fleet view showing the mid-rollout record of
    // midRollout() (a record built here: three groups, one rolling out with a host restarting, one tuning
    // at 340/911, one stopped and undone, two unreachable) at 1440x900 and 1024x640.
    void screenshots() {
        const QString dir = qEnvironmentVariable("MOETUNE_SHOTS_DIR");
        if (dir.isEmpty())
            QSKIP("set MOETUNE_SHOTS_DIR to save screenshots");
        QTemporaryDir ws;
        MainWindow window;
        auto *page = window.findChild<FleetPage *>();
        page->setWorkspacePath(ws.path());
        FleetRecord r = midRollout();
        rollouts(&r);
        page->openRecord(r);
        const int gb = groupOf(r, u"gpu-b1"_s);
        page->hostModel()->setTuneProgress(gb, 340, 911);
        page->groupModel()->setTuneProgress(gb, 340, 911);
        page->groupModel()->refresh();
        page->hostModel()->flush();
        page->selectGroup(groupOf(r, u"gpu-a1"_s));
        for (int i = 0; i < window.pageCount(); ++i)
            if (window.page(i) == page)
                window.setCurrentPage(i);
        for (const QSize size : {QSize(1440, 900), MainWindow::minimumWindowSize}) {
            window.resize(size);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            QTest::qWait(200);
            QVERIFY(
                window.grab().save(dir + u"/fleet-record-%1x%2.png"_s.arg(size.width()).arg(size.height())));
        }
    }

    // (b) The whole loop in the app against FleetFixture's standard scenario (10 hosts, 9 real sshd on
    // 127.0.0.1, each with its own labelled fake server tree: TEST DOUBLES of SGLang, its kernel source,
    // nvidia-smi and the server; the tuning runs on the synthetic backend, every number SIMULATED): select
    // the hosts on the Hosts page, Diagnose All, three groups + the unreachable and changed-key hosts with
    // their reasons; Tune Group; Roll Out, which stops at the host whose restart fails and undoes it; Undo
    // Group. The real buttons; the event loop's longest stall is measured during the diagnosis.
    void fleetFromTheHostsPage() {
        qunsetenv("SSH_AUTH_SOCK");
        const QString agent = QStringLiteral(MOETUNE_AGENT_PYZ);
        QVERIFY2(QFileInfo::exists(agent), qPrintable(agent));
        m_fleet = std::make_unique<test::FleetFixture>(test::FleetFixture::standardScenario());
        test::FleetFixture &fleet = *m_fleet;
        QString error;
        QVERIFY2(fleet.start(&error), qPrintable(error));
        m_loopDir = std::make_unique<QTemporaryDir>();
        QTemporaryDir &dir = *m_loopDir;
        const QString settingsFile = dir.filePath(u"moetune.ini"_s);
        QVERIFY(fleet.saveAppHosts(settingsFile));
        m_loopSettings = std::make_unique<QSettings>(settingsFile, QSettings::IniFormat);
        QSettings &settings = *m_loopSettings;

        m_window = std::make_unique<MainWindow>();
        MainWindow &window = *m_window;
        HostRegistry *registry = window.hostRegistry();
        registry->setSshTemplate(fleet.environment(agent).ssh);
        registry->setAgentPath(agent);
        registry->setSources(&settings, fleet.sshHome().configPath());
        auto *fleetPage = window.findChild<FleetPage *>();
        QVERIFY(fleetPage);
        fleetPage->setWorkspacePath(dir.filePath(u"workspace"_s));
        FleetTuneFlow::Options tune;
        tune.backend = u"synthetic"_s; // SIMULATED: no GPU here
        tune.batchSizes = {1, 16};
        fleetPage->setTuneOptions(tune);
        window.resize(1440, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));

        // Hosts page: every host of the fleet selected (Ctrl+click's selection), then Diagnose All.
        auto *hostsPage = window.findChild<HostsPage *>();
        auto *hostView = named<QTreeView>(hostsPage, u"hostView"_s);
        QVERIFY(hostView);
        QStringList names;
        for (int i = 0; i < fleet.size(); ++i)
            names.append(fleet.spec(i).name);
        hostView->selectionModel()->clearSelection();
        for (int r = 0; r < hostView->model()->rowCount(); ++r) {
            const QModelIndex i = hostView->model()->index(r, 0);
            if (names.contains(i.data(HostListModel::AliasRole).toString()))
                hostView->selectionModel()->select(i,
                                                   QItemSelectionModel::Select | QItemSelectionModel::Rows);
        }
        QCOMPARE(hostsPage->selectedAliases().size(), fleet.size());
        auto *diagnoseAll = named<QPushButton>(hostsPage, u"diagnoseAllButton"_s);
        QCOMPARE(diagnoseAll->text(), u"Diagnose All (%1)"_s.arg(fleet.size()));

        // The GUI thread's longest gap while every host is diagnosed (a 5 ms timer's ticks).
        QElapsedTimer clock;
        clock.start();
        qint64 last = -1;
        qint64 longest = 0;
        QTimer tick;
        tick.setTimerType(Qt::PreciseTimer);
        tick.setInterval(5);
        connect(&tick, &QTimer::timeout, &tick, [&] {
            const qint64 now = clock.elapsed();
            if (last >= 0)
                longest = std::max(longest, now - last - 5);
            last = now;
        });
        tick.start();
        click(hostsPage, u"diagnoseAllButton"_s);
        QCOMPARE(window.page(window.currentPage()), fleetPage); // the Fleet view opened
        QVERIFY(fleetPage->isDiagnosing());
        QTRY_VERIFY_WITH_TIMEOUT(!fleetPage->isDiagnosing(), 300000);
        tick.stop();
        const qint64 diagnoseMs = clock.elapsed();
        qInfo("fleet diagnose of %d hosts in the app: %lld ms; longest event-loop stall %lld ms",
              fleet.size(), diagnoseMs, longest);
        QVERIFY2(longest < 2000, qPrintable(u"the window stalled %1 ms"_s.arg(longest)));

        const FleetRecord *record = fleetPage->record();
        QVERIFY(record);
        FleetHostModel *hosts = fleetPage->hostModel();
        FleetGroupModel *groups = fleetPage->groupModel();
        auto stageOf = [fleetPage](const QString &name) { return TestFleetView::stageOf(fleetPage, name); };
        auto stages = [fleetPage] { return TestFleetView::stages(fleetPage); };
        QCOMPARE(hosts->rowCount(), fleet.size());
        QVERIFY2(groups->rowCount() == 3, qPrintable(stages()));
        QVERIFY2(stageOf(u"gpu-08"_s).startsWith(fleetStageText(FleetHostStage::Unreachable) + u": "_s),
                 qPrintable(stages()));
        QVERIFY2(stageOf(u"gpu-09"_s).contains(u"changed"_s), qPrintable(stages()));
        QVERIFY2(stageOf(u"gpu-01"_s) ==
                     fleetStageText(FleetHostStage::Diagnosed) + u": wants "_s + fleet.missingConfig(0),
                 qPrintable(stages()));
        const int g = record->host(u"gpu-01"_s)->group;
        QVERIFY(g >= 0);
        QCOMPARE(groups->index(g, FleetGroupModel::HostsColumn).data().toString(),
                 u"4: gpu-01, gpu-02, gpu-03, gpu-10"_s);
        QVERIFY(!groups->index(g, FleetGroupModel::ApartColumn).data().toString().isEmpty());
        QVERIFY(fleetPage->totalsText().startsWith(u"10 hosts: 8 diagnosed, 2 unreachable"_s));

        // Tune Group on gpu-02, the user's choice.
        QVERIFY(fleetPage->selectGroup(g));
        auto *tuneOn = named<QComboBox>(fleetPage, u"tuneHostCombo"_s);
        tuneOn->setCurrentIndex(tuneOn->findData(u"gpu-02"_s));
        QVERIFY(tuneOn->currentIndex() > 0);
        click(fleetPage, u"tuneButton"_s);
        QVERIFY(fleetPage->isGroupBusy(g));
        QTRY_VERIFY_WITH_TIMEOUT(!fleetPage->isGroupBusy(g), 600000);
        QVERIFY2(record->groups.at(g).state == u"tuned"_s,
                 qPrintable(fleetPage->bannerText() + u'\n' + stages()));
        QVERIFY(groups->index(g, FleetGroupModel::RunColumn)
                    .data()
                    .toString()
                    .startsWith(u"[SIMULATED] on gpu-02"_s));

        m_group = g;
    }

    // (b, continued) Roll Out: canary gpu-01, one at a time; it stops at gpu-03 (its restart fails) and
    // undoes it; then Undo Group puts back the proved hosts; Results shows the record.
    void rollOutStopsAtTheFailingHostThenUndoGroup() {
        QVERIFY(m_window && m_group >= 0);
        MainWindow &window = *m_window;
        auto *fleetPage = window.findChild<FleetPage *>();
        const FleetRecord *record = fleetPage->record();
        const int g = m_group;
        auto stageOf = [fleetPage](const QString &name) { return TestFleetView::stageOf(fleetPage, name); };
        auto stages = [fleetPage] { return TestFleetView::stages(fleetPage); };
        FleetHostModel *hosts = fleetPage->hostModel();
        auto *canary = named<QComboBox>(fleetPage, u"canaryCombo"_s);
        canary->setCurrentIndex(canary->findData(u"gpu-01"_s));
        QVERIFY(canary->currentIndex() >= 0);
        named<QSpinBox>(fleetPage, u"parallelSpin"_s)->setValue(1);
        click(fleetPage, u"rollOutButton"_s);
        QMessageBox *ask = nullptr;
        QTRY_VERIFY((ask = fleetPage->findChild<QMessageBox *>(u"confirmRollOut"_s)));
        QVERIFY(ask->informativeText().startsWith(u"gpu-01 first"_s));
        click(ask, u"confirmRollOutButton"_s);
        QTRY_VERIFY(fleetPage->isGroupBusy(g));
        const QString shots = qEnvironmentVariable("MOETUNE_SHOTS_DIR");
        if (!shots.isEmpty()) { // the Fleet view during the rollout, at both sizes
            QTRY_VERIFY_WITH_TIMEOUT(record->host(u"gpu-02"_s)->stage == FleetHostStage::Restarting ||
                                         record->host(u"gpu-02"_s)->stage == FleetHostStage::Pushing ||
                                         !fleetPage->isGroupBusy(g),
                                     600000);
            hosts->flush();
            QTest::qWait(50);
            QVERIFY(window.grab().save(shots + u"/fleet-rollout-1440x900.png"_s));
            window.resize(MainWindow::minimumWindowSize);
            QTest::qWait(100);
            QVERIFY(window.grab().save(shots + u"/fleet-rollout-1024x640.png"_s));
            window.resize(1440, 900);
        }
        QTRY_VERIFY_WITH_TIMEOUT(!fleetPage->isGroupBusy(g), 600000);
        QVERIFY2(record->host(u"gpu-01"_s)->stage == FleetHostStage::Proved, qPrintable(stages()));
        QVERIFY2(record->host(u"gpu-02"_s)->stage == FleetHostStage::Proved, qPrintable(stages()));
        const FleetHostRecord *failing = record->host(u"gpu-03"_s);
        QVERIFY2(failing->undone, qPrintable(stages()));
        QVERIFY2(record->host(u"gpu-10"_s)->stage == FleetHostStage::Skipped, qPrintable(stages()));
        QVERIFY(!stageOf(u"gpu-03"_s).isEmpty());
        QVERIFY(fleetPage->bannerText().startsWith(u"Group %1 stopped at gpu-03"_s.arg(g + 1)));
        if (!shots.isEmpty())
            QVERIFY(window.grab().save(shots + u"/fleet-stopped-1440x900.png"_s));

        // Undo Group: the two proved hosts, from their records.
        click(fleetPage, u"undoButton"_s);
        QTRY_VERIFY((ask = fleetPage->findChild<QMessageBox *>(u"confirmUndoGroup"_s)));
        click(ask, u"confirmUndoGroupButton"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!fleetPage->isGroupBusy(g), 600000);
        QVERIFY2(record->host(u"gpu-01"_s)->undone && record->host(u"gpu-02"_s)->undone,
                 qPrintable(stages()));
        QVERIFY2(record->groups.at(g).state == u"undone"_s, qPrintable(record->groups.at(g).state));
        QTRY_VERIFY(fleetPage->totalsText().contains(u"3 undone"_s));
        QVERIFY(!named<QPushButton>(fleetPage, u"undoButton"_s)->isEnabled()); // nothing left to undo

        // Results: the record saved, in the Fleet tab.
        auto *results = window.findChild<ResultsPage *>();
        QTRY_VERIFY_WITH_TIMEOUT(results->fleetView()->record() &&
                                     results->fleetView()->record()->id == record->id &&
                                     results->fleetView()->record()->host(u"gpu-01"_s)->undone,
                                 10000);
    }
};

QTEST_MAIN(TestFleetView)
#include "tst_fleetview.moc"
