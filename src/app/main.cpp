#include "app/diagnosepage.h"
#include "app/mainwindow.h"

#include "core/util/version.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QIcon>
#include <QPixmap>
#include <QRegularExpression>
#include <QTimer>

#include <cstdio>

using namespace Qt::StringLiterals;

int main(int argc, char *argv[]) {
    QApplication app(argc, argv);
    QApplication::setOrganizationName(u"moetune"_s);
    QApplication::setApplicationName(u"moetune"_s);
    QApplication::setApplicationDisplayName(u"moetune"_s);
    QApplication::setApplicationVersion(moetune::versionString());
    QApplication::setDesktopFileName(u"moetune"_s);

    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"Diagnose and tune the fused-MoE Triton kernel configs of SGLang and vLLM servers."_s);
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(u"log"_s, u"A server log to open (else the demo log is shown)."_s,
                                 u"[log]"_s);
    const QCommandLineOption screenshot(
        u"screenshot"_s, u"Save a PNG of the window once the log is diagnosed, then quit."_s, u"file"_s);
    const QCommandLineOption windowSize(u"window-size"_s, u"Window size, e.g. 1440x900."_s, u"WxH"_s);
    const QCommandLineOption finding(u"select-finding"_s,
                                     u"Row of the finding to select (with --screenshot)."_s, u"row"_s);
    parser.addOptions({screenshot, windowSize, finding});
    parser.process(app);

    moetune::MainWindow window;
    if (parser.isSet(windowSize)) {
        static const QRegularExpression re(u"^(\\d+)x(\\d+)$"_s);
        const auto match = re.match(parser.value(windowSize));
        if (!match.hasMatch()) {
            std::fprintf(stderr, "moetune: --window-size wants WIDTHxHEIGHT, e.g. 1440x900\n");
            return 2;
        }
        window.resize(match.captured(1).toInt(), match.captured(2).toInt());
    }
    window.show();
    const QStringList args = parser.positionalArguments();
    window.openInitial(args.isEmpty() ? QString() : args.first());

    if (parser.isSet(screenshot)) {
        const QString out = parser.value(screenshot);
        const int row = parser.value(finding).toInt();
        auto *page = window.diagnosePage();
        auto grab = [&window, page, out, row] {
            if (row > 0)
                page->selectFinding(row);
            // Let the layout settle after the last model reset before grabbing.
            QTimer::singleShot(300, &window, [&window, out] {
                const bool ok = window.grab().save(out, "PNG");
                std::fprintf(stderr, ok ? "moetune: saved %s\n" : "moetune: could not write %s\n",
                             qPrintable(QDir::toNativeSeparators(out)));
                QApplication::exit(ok ? 0 : 1);
            });
        };
        if (page->isBusy())
            QObject::connect(page, &moetune::DiagnosePage::diagnosisFinished, &window, grab,
                             Qt::SingleShotConnection);
        else
            QTimer::singleShot(0, &window, grab);
        QTimer::singleShot(60000, &app, [] {
            std::fprintf(stderr, "moetune: timed out waiting for the diagnosis\n");
            QApplication::exit(1);
        });
    }
    return app.exec();
}
