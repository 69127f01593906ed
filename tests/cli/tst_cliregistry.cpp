// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The CLI's command registry (the real command objects of moetune-cli, linked from its OBJECT library):
// every command declares its application kind, and the GUI kind is a QGuiApplication on the offscreen
// platform even where the environment asks for a display that does not exist.
#include "cli/commandregistry.h"

#include <QFont>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune::cli;

namespace {

// TEST DOUBLE of a future GUI-kind command (the PDF report): only its declared kind is used here.
class FakeReportCommand : public Command {
public:
    QString name() const override { return u"zz-test-report"_s; }
    QString summary() const override { return u"test only"_s; }
    ApplicationKind applicationKind() const override { return ApplicationKind::GuiOffscreen; }
    int run(const QStringList &) override { return 0; }
};

} // namespace

MOETUNE_REGISTER_COMMAND(FakeReportCommand)

class TestCliRegistry : public QObject {
    Q_OBJECT
private slots:
    void guiKindIsOffscreen() {
        auto *gui = qobject_cast<QGuiApplication *>(QCoreApplication::instance());
        QVERIFY(gui);
        QCOMPARE(QGuiApplication::platformName(), u"offscreen"_s);
        // What a report needs of it: fonts and a painter, without a display.
        QImage image(200, 40, QImage::Format_ARGB32);
        image.fill(Qt::white);
        {
            QPainter p(&image);
            p.setFont(QFont(u"Sans"_s, 14));
            p.setPen(Qt::black);
            p.drawText(image.rect(), Qt::AlignCenter, u"E=128,N=768"_s);
        }
        int dark = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x)
                dark += qGray(image.pixel(x, y)) < 128;
        QVERIFY2(dark > 50, qPrintable(QString::number(dark)));
    }

    void declaredKinds_data() {
        QTest::addColumn<QStringList>("argv");
        QTest::addColumn<int>("kind");
        const int core = int(ApplicationKind::Core);
        QTest::newRow("diagnose") << QStringList{u"diagnose"_s, u"x.log"_s} << core;
        QTest::newRow("probe") << QStringList{u"probe"_s, u"local"_s} << core;
        QTest::newRow("trust-host") << QStringList{u"trust-host"_s, u"gpu-7"_s} << core;
        QTest::newRow("gui command") << QStringList{u"zz-test-report"_s}
                                     << int(ApplicationKind::GuiOffscreen);
        QTest::newRow("help of a gui command") << QStringList{u"help"_s, u"zz-test-report"_s} << core;
        QTest::newRow("version") << QStringList{u"--version"_s} << core;
        QTest::newRow("unknown") << QStringList{u"frobnicate"_s} << core;
        QTest::newRow("nothing") << QStringList{} << core;
    }

    void declaredKinds() {
        QFETCH(QStringList, argv);
        QFETCH(int, kind);
        QList<QByteArray> storage{QByteArrayLiteral("moetune-cli")};
        for (const QString &a : std::as_const(argv))
            storage.append(a.toLocal8Bit());
        std::vector<char *> args;
        for (QByteArray &b : storage)
            args.push_back(b.data());
        QCOMPARE(int(CommandRegistry::applicationKindFor(int(args.size()), args.data())), kind);
    }

    void everyRealCommandIsCore() {
        // diagnose, probe and trust-host must not need a display (servers have none).
        int seen = 0;
        for (const auto &command : CommandRegistry::all()) {
            if (command->name() == u"zz-test-report"_s)
                continue;
            if (command->name() == u"report"_s) { // the PDF's charts need widgets, offscreen
                QCOMPARE(command->applicationKind(), ApplicationKind::WidgetsOffscreen);
                continue;
            }
            ++seen;
            QVERIFY2(command->applicationKind() == ApplicationKind::Core, qPrintable(command->name()));
        }
        QVERIFY(seen >= 3);
    }
};

int main(int argc, char **argv) {
    // A display that is not there: a GUI application that tried to use it would abort.
    qputenv("QT_QPA_PLATFORM", "xcb");
    qunsetenv("DISPLAY");
    qunsetenv("WAYLAND_DISPLAY");
    const auto app = CommandRegistry::createApplication(ApplicationKind::GuiOffscreen, argc, argv);
    TestCliRegistry test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_cliregistry.moc"
