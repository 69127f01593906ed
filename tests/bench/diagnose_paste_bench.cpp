// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// "Pasting a 10 MB log shows findings in under 200 ms" (issue 2): times what the Diagnose page does with
// a paste - the pasted QString to UTF-8, then Diagnoser::diagnoseText - on a generated 10 MB log.
// usage: diagnose_paste_bench [LOG] [--runs N]   (no LOG: generates one with tests/bench/gen_log.py)
#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/diagnosis.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {
double ms(const QElapsedTimer &t) {
    return double(t.nsecsElapsed()) / 1e6;
}
} // namespace

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    QStringList args = QCoreApplication::arguments().mid(1);
    int runs = 7;
    const qsizetype runsAt = args.indexOf(u"--runs"_s);
    if (runsAt >= 0 && runsAt + 1 < args.size()) {
        runs = qMax(1, args.at(runsAt + 1).toInt());
        args.remove(runsAt, 2);
    }
    QTemporaryDir tmp;
    QString path = args.value(0);
    if (path.isEmpty()) {
        path = tmp.filePath(u"paste-10M.log"_s);
        const int rc =
            QProcess::execute(u"python3"_s, {QStringLiteral(MOETUNE_GEN_LOG), u"--size"_s, u"10M"_s,
                                             u"--warnings"_s, u"40"_s, u"--out"_s, path});
        if (rc != 0) {
            std::fprintf(stderr, "diagnose_paste_bench: gen_log.py failed (exit %d)\n", rc);
            return 2;
        }
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "diagnose_paste_bench: cannot read %s: %s\n", qPrintable(path),
                     qPrintable(file.errorString()));
        return 2;
    }
    // What the clipboard hands the page.
    const QString pasted = QString::fromUtf8(file.readAll());

    QElapsedTimer t;
    t.start();
    const Diagnoser diagnoser;
    const double setup = ms(t);

    std::vector<double> totals;
    Diagnosis d;
    for (int i = 0; i < runs; ++i) {
        t.restart();
        const QByteArray utf8 = pasted.toUtf8();
        const double convert = ms(t);
        d = diagnoser.diagnoseText(utf8);
        const double total = ms(t);
        totals.push_back(total);
        std::printf("run %d: %.1f ms (toUtf8 %.1f ms, diagnoseText %.1f ms)\n", i + 1, total, convert,
                    total - convert);
    }
    std::vector<double> sorted = totals;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    std::printf("log: %s, %lld bytes, %lld lines; %lld findings (%d warning, %d error), %lld targets\n",
                qPrintable(path), static_cast<long long>(d.bytesRead), static_cast<long long>(d.linesRead),
                static_cast<long long>(d.findings.size()), d.count(Severity::Warning),
                d.count(Severity::Error), static_cast<long long>(d.targets.size()));
    std::printf("Diagnoser() with the built-in rules: %.1f ms (once per app)\n", setup);
    std::printf("paste 10 MB -> findings: first %.1f ms, median %.1f ms of %d  (goal < 200 ms: %s)\n",
                totals[0], median, runs, median < 200.0 ? "met" : "MISSED");
    return 0;
}
