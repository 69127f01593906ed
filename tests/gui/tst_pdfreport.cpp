// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The PDF report read as a reader would: pdftotext holds the table values, pdfimages lists no raster
// images (the charts are vectors), pdffonts shows every font embedded. On the demo workspace (a real
// recorded H200 sweep) and on a real synthetic agent run (the labelled GPU test double).
#include "core/report/report.h"
#include "core/report/reporttext.h"
#include "core/run/workspace.h"
#include "report/demoworkspace.h"
#include "report/pdfreport.h"

#include "syntheticrun.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

QString tool(const QString &name, const QStringList &args, int *exitCode = nullptr) {
    QProcess p;
    p.start(name, args);
    if (!p.waitForFinished(60000))
        return {};
    if (exitCode)
        *exitCode = p.exitCode();
    return QString::fromUtf8(p.readAllStandardOutput());
}

} // namespace

class TstPdfReport : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        for (const char *t : {"pdftotext", "pdfimages", "pdffonts"})
            if (QStandardPaths::findExecutable(QString::fromLatin1(t)).isEmpty())
                QFAIL(
                    qPrintable(u"%1 is missing (poppler-utils; packaging/install-deps.sh installs it)"_s.arg(
                        QString::fromLatin1(t))));
    }

    void demoReportReadsBack_data() {
        QTest::addColumn<QString>("runId");
        QTest::newRow("fast, 18 sizes") << u"20261129-qwen3-h200-fast"_s;
        QTest::newRow("exhaustive, 5 sizes") << u"20261129-qwen3-h200-exhaustive"_s;
    }
    void demoReportReadsBack() {
        QFETCH(QString, runId);
        QString error;
        const auto ws = Workspace::open(DemoWorkspace::path(), &error);
        QVERIFY2(ws, qPrintable(error));
        const WorkspaceRun *run = ws->run(runId);
        QVERIFY(run);
        const QString pdf = m_dir.filePath(PdfReport::suggestedFileName(*run));
        QVERIFY(!pdf.contains(u"SIMULATED"_s));
        QVERIFY2(PdfReport::write(*run, pdf, &error), qPrintable(error));

        const QString text = tool(u"pdftotext"_s, {u"-layout"_s, pdf, u"-"_s});
        const Report report = Report::fromRun(*run);
        QVERIFY(report.rows.size() >= 5);
        for (const auto &row : report.rows) {
            // Each row's values, in the order the table prints them, on one line of the page.
            const QString line = u"%1 +%2 +%3 +%4 +%5 +%6 +%7"_s.arg(row.m).arg(
                QRegularExpression::escape(row.config), ReportText::us(row.tunedUs),
                ReportText::us(row.defaultUs), QRegularExpression::escape(ReportText::speedup(row.speedup)),
                ReportText::us(row.floorUs), ReportText::percent(row.floorFraction));
            QVERIFY2(QRegularExpression(line).match(text).hasMatch(), qPrintable(line));
        }
        QVERIFY(text.contains(u"NVIDIA H200"_s));
        QVERIFY(text.contains(u"Triton"_s) && text.contains(u"3.6.0"_s));
        QVERIFY(text.contains(u"Tuning cost"_s));
        QVERIFY(text.contains(u"Reference method"_s));
        QVERIFY(text.contains(u"Not installed on a server"_s));
        QVERIFY(!text.contains(u"SIMULATED"_s));

        // No raster image anywhere: pdfimages -list prints only its two header lines.
        const QStringList images = tool(u"pdfimages"_s, {u"-list"_s, pdf}).split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(images.size(), 2);
        // Every font embedded.
        const QStringList fonts = tool(u"pdffonts"_s, {pdf}).split(u'\n', Qt::SkipEmptyParts);
        QVERIFY(fonts.size() > 2);
        for (const QString &line : fonts.mid(2)) {
            const QStringList cols = line.simplified().split(u' ');
            // name type encoding emb sub uni object ID: "emb" is the 4th column from the right of 7.
            QVERIFY2(cols.size() >= 7 && cols.at(cols.size() - 5) == u"yes"_s, qPrintable(line));
        }
        const int pages =
            tool(u"pdfinfo"_s, {pdf}).section(u"Pages:"_s, 1).simplified().section(u' ', 0, 0).toInt();
        QVERIFY2(pages >= 2 && pages <= 6, qPrintable(QString::number(pages)));
    }

    void simulatedRunIsMarkedOnEveryPage() {
        QTemporaryDir home;
        QString error;
        const QString folder = moetune::test::runSyntheticTune(QStringLiteral(MOETUNE_AGENT_PYZ), home.path(),
                                                               QJsonArray{1, 64}, &error);
        QVERIFY2(!folder.isEmpty(), qPrintable(error));
        const auto run = WorkspaceRun::open(folder, &error);
        QVERIFY2(run, qPrintable(error));
        const QString pdf = m_dir.filePath(PdfReport::suggestedFileName(*run));
        QVERIFY(QFileInfo(pdf).fileName().startsWith(u"SIMULATED-"_s));
        QVERIFY2(PdfReport::write(*run, pdf, &error), qPrintable(error));
        const int pages =
            tool(u"pdfinfo"_s, {pdf}).section(u"Pages:"_s, 1).simplified().section(u' ', 0, 0).toInt();
        QVERIFY(pages >= 2);
        for (int page = 1; page <= pages; ++page) {
            const QString text = tool(u"pdftotext"_s, {u"-f"_s, QString::number(page), u"-l"_s,
                                                       QString::number(page), pdf, u"-"_s});
            QVERIFY2(text.contains(u"SIMULATED"_s), qPrintable(u"page %1"_s.arg(page)));
        }
    }

    void unwritablePathSaysWhy() {
        const auto ws = Workspace::open(DemoWorkspace::path());
        QVERIFY(ws);
        QString error;
        QVERIFY(!PdfReport::write(ws->runs().first(), m_dir.filePath(u"missing/folder/r.pdf"_s), &error));
        QVERIFY2(error.contains(u"Could not write"_s), qPrintable(error));
    }
};

QTEST_MAIN(TstPdfReport)
#include "tst_pdfreport.moc"
