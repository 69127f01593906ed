// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Benchmark, not a test: how long from Ctrl+V of a big server log until the Diagnose page shows its
// findings (paste into the editor, diagnosis on the worker, models and views updated, one repaint).
// Usage: bench_gui_paste [MiB=10] [repeats=5]   (runs offscreen unless QT_QPA_PLATFORM is set)
#include "app/diagnose/diagnosepage.h"
#include "app/diagnose/findingsmodel.h"
#include "app/mainwindow.h"
#include "app/widgets/logedit.h"

#include <QApplication>
#include <QClipboard>
#include <QElapsedTimer>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>

using namespace Qt::StringLiterals;

namespace {

// Startup chatter, decode stats and a few hundred MoE warnings from eight ranks, ~bytes long.
QString makeLog(qint64 bytes) {
    const QStringList chatter{
        u"[2026-11-20 10:01:02 TP%1] Decode batch. #running-req: 57, #token: 81234, token usage: 0.41, cuda "
        u"graph: "
        "True, gen throughput (token/s): 4210.33, #queue-req: 0"_s,
        u"[2026-11-20 10:01:03 TP%1] Prefill batch. #new-seq: 1, #new-token: 8192, #cached-token: 0, token "
        u"usage: "
        "0.40, #running-req: 56, #queue-req: 3"_s,
        u"[2026-11-20 10:01:04] INFO:     127.0.0.1:51234 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK"_s,
        u"[2026-11-20 10:00:05 TP%1] Load weight end. type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail "
        "mem=120.50 GB, mem usage=7.21 GB."_s};
    const QString warning =
        u"[2026-11-20 10:00:09 TP%1] Using default MoE kernel config. Performance might be sub-optimal! "
        u"Config file "
        "not found at /opt/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_6_0/"
        "E=%2,N=%3,device_name=NVIDIA_H200.json, you can create them with "
        "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton"_s;
    QString log;
    log.reserve(bytes + 4096);
    qint64 line = 0;
    while (log.size() < bytes) {
        ++line;
        if (line % 500 == 0) {
            const int shape = int(line / 500 % 4);
            log += warning.arg(line % 8).arg(64 << shape).arg(768 >> shape);
        } else {
            const QString &c = chatter.at(line % chatter.size());
            log += c.contains(u"%1"_s) ? c.arg(line % 8) : c;
        }
        log += u'\n';
    }
    return log;
}

double median(QList<double> v) {
    std::sort(v.begin(), v.end());
    return v.isEmpty() ? 0.0 : v.at(v.size() / 2);
}

} // namespace

int main(int argc, char *argv[]) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QTemporaryDir settingsDir;
    QStandardPaths::setTestModeEnabled(true);
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir.path());
    QCoreApplication::setOrganizationName(u"moetune-bench"_s);
    QCoreApplication::setApplicationName(u"bench_gui_paste"_s);

    const QStringList args = QCoreApplication::arguments();
    const qint64 mib = args.size() > 1 ? args.at(1).toLongLong() : 10;
    const int repeats = args.size() > 2 ? args.at(2).toInt() : 5;
    const QString log = makeLog(mib * 1024 * 1024);
    const qint64 bytes = log.toUtf8().size();

    moetune::MainWindow window;
    window.resize(1440, 900);
    window.show();
    auto *page = window.findChild<moetune::DiagnosePage *>();
    auto *edit = page->findChild<moetune::LogEdit *>(u"logEdit"_s);
    auto *model = page->findChild<moetune::FindingsModel *>(u"findingsModel"_s);
    QGuiApplication::clipboard()->setText(log);

    QList<double> pasteMs;
    QList<double> shownMs;
    int findings = 0;
    QString lastStatus;
    for (int i = 0; i < repeats; ++i) {
        page->clearLog();
        QCoreApplication::processEvents();
        QSignalSpy finished(page, &moetune::DiagnosePage::diagnosisFinished);
        QSignalSpy status(page, &moetune::DiagnosePage::statusMessage);
        QElapsedTimer clock;
        clock.start();
        edit->paste(); // what Ctrl+V does
        pasteMs.append(clock.nsecsElapsed() / 1e6);
        if (!finished.wait(60000)) {
            std::fprintf(stderr, "bench_gui_paste: no diagnosis within 60 s\n");
            return 1;
        }
        QCoreApplication::processEvents(); // the findings view repaints
        shownMs.append(clock.nsecsElapsed() / 1e6);
        findings = model->rowCount();
        for (const auto &message : status) {
            if (message.at(0).toString().startsWith(u"Diagnosed"_s))
                lastStatus = message.at(0).toString();
        }
    }
    std::printf("paste of %.1f MB (%lld lines): %d findings\n", bytes / 1e6, qint64(edit->blockCount()),
                findings);
    std::printf("  into the editor (GUI thread): median %.0f ms, min %.0f ms\n", median(pasteMs),
                *std::min_element(pasteMs.cbegin(), pasteMs.cend()));
    std::printf("  last run, the page's own job clock: %s\n", qPrintable(lastStatus));
    std::printf("  until the findings are shown:  median %.0f ms, min %.0f ms  (%d runs)\n", median(shownMs),
                *std::min_element(shownMs.cbegin(), shownMs.cend()), repeats);
    return 0;
}
