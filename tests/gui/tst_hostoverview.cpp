// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The Hosts page's overview of a hostile host's probe (HostOverview, offscreen): every label and every
// cell of its GPU and folder tables shows the host's strings cleaned (hostProbeForDisplay): no escape
// sequences, control characters, bidi overrides, no rich text, no flood. The models are checked by
// QAbstractItemModelTester.
#include "app/hosts/hostfoldermodel.h"
#include "app/hosts/hostgpumodel.h"
#include "app/hosts/hostoverview.h"
#include "core/host/hostprobe.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

QString hiddenIn(const QString &s) {
    for (qsizetype i = 0; i < s.size(); ++i) {
        const QChar c = s[i];
        if (c == u'\n') // the app's own line breaks between fields
            continue;
        if (c.isHighSurrogate() && i + 1 < s.size() && s[i + 1].isLowSurrogate()) {
            ++i;
            continue;
        }
        if (c.unicode() < 0x20 || c.unicode() == 0x7f || c.category() == QChar::Other_Control ||
            c.category() == QChar::Other_Format || c.isSurrogate())
            return u"U+%1 at %2 in '%3'"_s.arg(uint(c.unicode()), 4, 16, QChar(u'0')).arg(i).arg(s.left(80));
    }
    return {};
}

// Escape sequences (clear, title, colour, cursor up), a bidi override, a C1 control, a NUL, a newline.
const QString kEvil = u"\x1b[2J\x1b]0;owned\x07\x1b[31m\x1b[1A\u202e\u0085\u0000\n"_s;

} // namespace

class TestHostOverview : public QObject {
    Q_OBJECT
private slots:
    void hostileProbeShownClean() {
        const QString e = kEvil;
        const QString flood = QString(100000, u'W');
        QJsonObject probe{
            {"type"_L1, u"probe"_s},
            {"host"_L1, QJsonObject{{"hostname"_L1, QString(u"gpu-7"_s + e)},
                                    {"os"_L1, QString(u"Linux"_s + e)},
                                    {"cpu_count"_L1, 64}}},
            {"gpus"_L1,
             QJsonArray{QJsonObject{
                 {"index"_L1, 0},
                 {"name"_L1, u"NVIDIA_H200"_s},
                 {"raw_name"_L1, QString(u"NVIDIA H200"_s + e + u"<b>bold</b><img src=x>"_s)},
                 {"memory_total_mib"_L1, 143771},
                 {"memory_used_mib"_L1, 1000},
                 {"compute_capability"_L1, u"9.0"_s},
                 {"processes"_L1, QJsonArray{QJsonObject{{"pid"_L1, 4242},
                                                         {"name"_L1, QString(u"python3"_s + e + flood)},
                                                         {"used_memory_mib"_L1, 1000}}}}}}},
            {"python"_L1, QJsonObject{{"executable"_L1, QString(u"/usr/bin/python3"_s + e)},
                                      {"version"_L1, u"3.11.2"_s},
                                      {"torch"_L1, QString(u"2.5.1"_s + e)},
                                      {"triton"_L1, u"3.6.0"_s}}},
            {"frameworks"_L1,
             QJsonArray{QJsonObject{
                 {"name"_L1, u"sglang"_s},
                 {"importable"_L1, true},
                 {"version"_L1, QString(u"0.5.6"_s + e)},
                 {"config_root"_L1, QString(u"/opt/sglang/configs"_s + e)},
                 {"triton_folder"_L1, u"triton_3_6_0"_s},
                 {"triton_folder_exists"_L1, false},
                 {"triton_folders"_L1,
                  QJsonArray{QJsonObject{
                      {"name"_L1, QString(u"triton_3_4_0"_s + e)},
                      {"files"_L1, QJsonArray{QString(u"E=8,N=64,device_name="_s + e + u".json"_s)}}}}}}}},
            {"servers"_L1, QJsonArray{QJsonObject{{"pid"_L1, 4242},
                                                  {"framework"_L1, u"sglang"_s},
                                                  {"model"_L1, QString(u"/models/Qwen3"_s + e)},
                                                  {"cmdline"_L1, QJsonArray{QString(u"python3"_s + e)}},
                                                  {"tp"_L1, 1}}}},
        };
        QString error;
        const auto p = HostProbe::fromJson(probe, &error);
        QVERIFY2(p, qPrintable(error));
        QVERIFY(p->gpus.first().name.contains(QChar(0x202e))); // the value itself is kept as sent

        HostOverview view;
        QAbstractItemModelTester gpuTester(view.gpuModel(),
                                           QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester folderTester(view.folderModel(),
                                              QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.resize(1200, 900);
        view.setProbe(*p);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));

        int labels = 0;
        for (const QString &key : view.fieldKeys()) {
            const QString text = view.field(key);
            QVERIFY2(hiddenIn(text).isEmpty(), qPrintable(key + u": "_s + hiddenIn(text)));
            ++labels;
        }
        QVERIFY(labels >= 8);
        QVERIFY2(view.field(u"host"_s).startsWith(u"gpu-7  , Linux  , 64"_s),
                 qPrintable(view.field(u"host"_s)));
        QVERIFY2(view.field(u"configRoot"_s).contains(u"/opt/sglang/configs"_s),
                 qPrintable(view.field(u"configRoot"_s)));
        for (QLabel *l : view.findChildren<QLabel *>()) {
            // A host string never becomes rich text (the <b>/<img> in the GPU name must show as typed).
            if (l->text().contains(u"<b>"_s))
                QCOMPARE(l->textFormat(), Qt::PlainText);
        }
        QStringList cells;
        for (QAbstractItemModel *m : {static_cast<QAbstractItemModel *>(view.gpuModel()),
                                      static_cast<QAbstractItemModel *>(view.folderModel())}) {
            for (int r = 0; r < m->rowCount(); ++r) {
                for (int c = 0; c < m->columnCount(); ++c) {
                    for (int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole)}) {
                        const QString text = m->index(r, c).data(role).toString();
                        QVERIFY2(hiddenIn(text).isEmpty(), qPrintable(hiddenIn(text)));
                        QVERIFY2(text.size() < 2000,
                                 qPrintable(u"a cell of %1 characters"_s.arg(text.size())));
                        cells.append(text);
                    }
                }
            }
        }
        const QString all = cells.join(u'|');
        QVERIFY2(all.contains(u"NVIDIA H200  <b>bold</b><img src=x>"_s), qPrintable(all.left(2000)));
        QVERIFY2(all.contains(u"python3  WWW"_s) && all.contains(u"more characters)"_s),
                 qPrintable(all.left(2000)));
        QVERIFY2(all.contains(u"triton_3_4_0 "_s), qPrintable(all.left(2000)));
        if (const QByteArray dir = qgetenv("MOETUNE_SCREENSHOT_DIR"); !dir.isEmpty())
            view.grab().save(QString::fromLocal8Bit(dir) + u"/hostoverview-hostile.png"_s);
    }
};

QTEST_MAIN(TestHostOverview)
#include "tst_hostoverview.moc"
