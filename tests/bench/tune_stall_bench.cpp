// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Benchmark: the Tune page stays responsive while a run streams 1000 results a second into it (the
// live chart, the best-so-far table, the progress labels). A 1 ms timer measures how late the event
// loop gets to it; the longest stall is the figure (goal <= 50 ms). Events are synthetic run events
// (measurement + best + progress, as the agent sends them), fed every 20 ms as many as are due at 1000/s (a
// late tick catches up) for the given seconds (default 10). Prints: events fed, redraws, longest stall, p99
// stall. Usage: tune_stall_bench [SECONDS] [SCREENSHOT.png]
#include "app/tune/tunebestmodel.h"
#include "app/tune/tunepage.h"
#include "charts/livebestchart.h"
#include "remote/flows/hostregistry.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <ctime>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {
double threadCpuMs() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}
} // namespace

int main(int argc, char **argv) {
    QApplication app(argc, argv);
    const int seconds = argc > 1 ? QString::fromLocal8Bit(argv[1]).toInt() : 10;
    HostRegistry registry; // the Local machine; no connection is made (events are fed directly)
    TunePage page(&registry);
    page.resize(1500, 950);
    TuneSpec spec;
    spec.framework = Framework::SGLang;
    spec.experts = 128;
    spec.n = 384;
    spec.hiddenSize = 2048;
    spec.topk = 8;
    spec.backend = u"synthetic"_s;
    page.tuneSpec(HostRegistry::localAlias(), spec);
    page.show();
    const QList<int> sizes{1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096};
    QJsonArray bs;
    for (int m : sizes)
        bs.append(m);
    qint64 seq = 0;
    const double t0 = 1795994928.0;
    page.applyRunEvent(QJsonObject{{"type"_L1, u"run_started"_s},
                                   {"run_id"_L1, u"bench"_s},
                                   {"seq"_L1, seq++},
                                   {"ts"_L1, t0},
                                   {"simulated"_L1, true},
                                   {"spec"_L1, QJsonObject{{"batch_sizes"_L1, bs}, {"ops"_L1, u"up"_s}}}});
    QList<double> best(sizes.size(), 1000.0);
    qint64 fed = 0;
    QElapsedTimer run;
    run.start();
    QTimer feeder;
    feeder.setInterval(20);
    QObject::connect(&feeder, &QTimer::timeout, [&] {
        // As many as are due at 1000 a second since the start: a late tick catches up, like a stream does;
        // never more than the total announced (a real run's done never passes its total either).
        const qint64 due = std::min<qint64>(run.elapsed(), qint64(seconds) * 1000) - fed;
        for (qint64 i = 0; i < due; ++i) {
            const int k = int(fed % sizes.size());
            const double ts = t0 + double(run.elapsed()) / 1000.0;
            const double us = 50.0 + double((fed * 7919) % 1000) / 10.0;
            page.applyRunEvent(QJsonObject{{"type"_L1, u"measurement"_s},
                                           {"run_id"_L1, u"bench"_s},
                                           {"seq"_L1, seq++},
                                           {"ts"_L1, ts},
                                           {"op"_L1, u"both"_s},
                                           {"m"_L1, sizes[k]},
                                           {"gpu"_L1, int(fed % 8)},
                                           {"round"_L1, 0},
                                           {"median_us"_L1, us},
                                           {"simulated"_L1, true}});
            if (us < best[k]) {
                best[k] = us;
                page.applyRunEvent(QJsonObject{{"type"_L1, u"best"_s},
                                               {"run_id"_L1, u"bench"_s},
                                               {"seq"_L1, seq++},
                                               {"ts"_L1, ts},
                                               {"op"_L1, u"both"_s},
                                               {"m"_L1, sizes[k]},
                                               {"median_us"_L1, us},
                                               {"simulated"_L1, true}});
            }
            if (fed % 50 == 0)
                page.applyRunEvent(QJsonObject{{"type"_L1, u"progress"_s},
                                               {"run_id"_L1, u"bench"_s},
                                               {"seq"_L1, seq++},
                                               {"ts"_L1, ts},
                                               {"done"_L1, fed},
                                               {"total"_L1, qint64(seconds) * 1000},
                                               {"elapsed_s"_L1, double(run.elapsed()) / 1000.0},
                                               {"eta_s"_L1, 5.0},
                                               {"simulated"_L1, true}});
            ++fed;
        }
    });
    QList<double> stalls;
    QList<double> busy; // GUI-thread CPU time between two ticks: work, not the OS running others
    QElapsedTimer tick;
    tick.start();
    double lastCpu = threadCpuMs();
    QTimer probe;
    probe.setInterval(1);
    probe.setTimerType(Qt::PreciseTimer);
    QObject::connect(&probe, &QTimer::timeout, [&] {
        stalls.append(double(tick.nsecsElapsed()) / 1e6);
        tick.restart();
        const double cpu = threadCpuMs();
        busy.append(cpu - lastCpu);
        lastCpu = cpu;
    });
    QTimer::singleShot(500, [&] { // after the first layout and paint
        feeder.start();
        run.restart();
        probe.start();
        tick.restart();
        lastCpu = threadCpuMs();
    });
    QTimer::singleShot(500 + seconds * 1000, [&] { app.quit(); });
    app.exec();
    if (argc > 2) // a screenshot of the page as it was at the end of the stream
        page.grab().save(QString::fromLocal8Bit(argv[2]), "PNG");
    std::sort(stalls.begin(), stalls.end());
    const double longest = stalls.isEmpty() ? 0 : stalls.last();
    const double p99 = stalls.isEmpty() ? 0 : stalls[qsizetype(double(stalls.size() - 1) * 0.99)];
    std::printf("tune_stall_bench: %lld events fed in %d s (%.0f/s), chart redraws %d, rows %d\n",
                static_cast<long long>(fed), seconds, double(fed) / seconds, page.liveChart()->redraws(),
                page.bestModel()->rowCount());
    std::printf("tune_stall_bench: longest event-loop stall %.1f ms, p99 %.1f ms (goal <= 50 ms)\n", longest,
                p99);
    std::sort(busy.begin(), busy.end());
    std::printf(
        "tune_stall_bench: longest GUI-thread CPU time between two ticks %.1f ms (the rest of a stall "
        "is the machine running other processes)\n",
        busy.isEmpty() ? 0.0 : busy.last());
    return 0;
}
