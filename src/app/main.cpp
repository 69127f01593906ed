#include "app/diagnose/diagnosepage.h"
#include "app/mainwindow.h"
#include "app/startupclock.h"

#include "core/util/version.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QHash>
#include <QIcon>
#include <QImage>
#include <QPixmap>
#include <QRegularExpression>
#include <QTimer>

#include <algorithm>
#include <cstdio>

using namespace Qt::StringLiterals;

// A palette of the most frequent colours keeps a UI screenshot small enough for a README.
static QImage reduceColors(const QImage &image, int colors) {
    const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
    QHash<QRgb, int> counts;
    for (int y = 0; y < rgb.height(); ++y) {
        const auto *line = reinterpret_cast<const QRgb *>(rgb.constScanLine(y));
        for (int x = 0; x < rgb.width(); ++x)
            ++counts[line[x]];
    }
    QList<std::pair<int, QRgb>> byCount;
    byCount.reserve(counts.size());
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        byCount.append({it.value(), it.key()});
    std::sort(byCount.begin(), byCount.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    QList<QRgb> table;
    for (qsizetype i = 0; i < byCount.size() && i < colors; ++i)
        table.append(byCount.at(i).second);
    return rgb.convertToFormat(QImage::Format_Indexed8, table, Qt::ThresholdDither);
}

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
    const QCommandLineOption screenshotColors(
        u"screenshot-colors"_s, u"Reduce the screenshot to this many colours (2-256; default: all)."_s,
        u"n"_s);
    const QCommandLineOption startupTime(
        u"startup-time"_s,
        u"Print when the process started, the first window was painted and the first log diagnosed "
        "(ms since the epoch), then quit."_s);
    parser.addOptions({screenshot, windowSize, finding, screenshotColors, startupTime});
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
    if (parser.isSet(startupTime))
        new moetune::StartupClock(&window, window.findChild<moetune::DiagnosePage *>());
    window.show();
    const QStringList args = parser.positionalArguments();
    window.openInitial(args.isEmpty() ? QString() : args.first());

    if (parser.isSet(screenshot)) {
        const QString out = parser.value(screenshot);
        const int row = parser.value(finding).toInt();
        const int colors = qBound(0, parser.value(screenshotColors).toInt(), 256);
        auto *page = window.findChild<moetune::DiagnosePage *>();
        auto grab = [&window, page, out, row, colors] {
            if (row > 0)
                page->selectFinding(row);
            // Let the layout settle after the last model reset before grabbing.
            QTimer::singleShot(300, &window, [&window, out, colors] {
                QImage image = window.grab().toImage();
                if (colors >= 2)
                    image = reduceColors(image, colors);
                const bool ok = image.save(out, "PNG");
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
