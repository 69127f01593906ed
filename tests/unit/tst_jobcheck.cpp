// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The one validator of a tuning job (core/job/jobcheck): the fields, their sentences, the file names
// next to the ones a server wanted, and TuneSpec::validate() as its first sentence.
#include "core/job/jobcheck.h"

#include <QTest>

using namespace Qt::StringLiterals;
using moetune::Framework;
using moetune::JobCheck;
using moetune::TuneSpec;
using moetune::TuningTarget;

Q_DECLARE_METATYPE(JobCheck::Field)

namespace {

TuningTarget target() {
    TuningTarget t;
    t.framework = Framework::SGLang;
    t.configRoot = u"/srv/configs"_s;
    t.tritonFolder = u"triton_3_6_0"_s;
    t.name.experts = 128;
    t.name.n = 384;
    t.name.deviceName = u"NVIDIA_H200"_s;
    t.upMissing = true;
    return t;
}

TuneSpec runnable() {
    TuneSpec s = TuneSpec::fromTarget(target());
    s.hiddenSize = 2048;
    s.topk = 8;
    return s;
}

} // namespace

class TestJobCheck : public QObject {
    Q_OBJECT
private slots:
    void problems_data() {
        QTest::addColumn<QString>("change");
        QTest::addColumn<bool>("withTarget");
        QTest::addColumn<JobCheck::Field>("field");
        QTest::addColumn<QString>("words"); // "" = runnable
        using F = JobCheck::Field;
        QTest::newRow("runnable") << QString() << true << F::Framework << QString();
        QTest::newRow("no framework") << u"framework"_s << false << F::Framework << u"framework"_s;
        QTest::newRow("no E") << u"E=0"_s << false << F::Experts << u"E must be at least 1"_s;
        QTest::newRow("no N") << u"N=0"_s << false << F::N << u"moe_intermediate_size / TP"_s;
        QTest::newRow("no K") << u"K=0"_s << false << F::K << u"hidden size (hidden_size"_s;
        QTest::newRow("top-k > E") << u"topk=200"_s << false << F::Topk << u"between 1 and E (128)"_s;
        QTest::newRow("N of another rank") << u"N=768"_s << true << F::N << u"server wanted N=384"_s;
        QTest::newRow("N without a target") << u"N=768"_s << false << F::N << QString();
        QTest::newRow("E differs") << u"E=129"_s << true << F::Experts << u"wanted E=128"_s;
        QTest::newRow("vLLM down") << u"vllm+down"_s << false << F::UpAndDown << u"no separate down file"_s;
        QTest::newRow("vLLM per-channel")
            << u"vllm+perchannel"_s << false << F::PerChannel << u"SGLang only"_s;
        QTest::newRow("negative budget") << u"budget=-1"_s << false << F::TimeBudget << u"time budget"_s;
        QTest::newRow("no batch sizes") << u"batch="_s << false << F::BatchSizes << u"at least one batch"_s;
        QTest::newRow("batch size 0") << u"batch=0"_s << false << F::BatchSizes << u"positive (got 0)"_s;
        QTest::newRow("block shape") << u"block=-1"_s << false << F::BlockShape << u"[0, group]"_s;
        QTest::newRow("no strategy") << u"strategy="_s << false << F::Strategy << u"Choose a strategy"_s;
        QTest::newRow("slash in device") << u"device=/"_s << false << F::DeviceName << u"U+002F"_s;
        QTest::newRow("long device") << u"device=long"_s << false << F::DeviceName << u"bytes long"_s;
    }
    void problems() {
        QFETCH(QString, change);
        QFETCH(bool, withTarget);
        QFETCH(JobCheck::Field, field);
        QFETCH(QString, words);
        TuneSpec s = runnable();
        if (change == "framework"_L1)
            s.framework = Framework::Unknown;
        else if (change == "E=0"_L1)
            s.experts = 0;
        else if (change == "N=0"_L1)
            s.n = 0;
        else if (change == "K=0"_L1)
            s.hiddenSize = 0;
        else if (change == "topk=200"_L1)
            s.topk = 200;
        else if (change == "N=768"_L1)
            s.n = 768;
        else if (change == "E=129"_L1)
            s.experts = 129;
        else if (change == "vllm+down"_L1)
            s.framework = Framework::VLLM, s.upAndDown = true;
        else if (change == "vllm+perchannel"_L1)
            s.framework = Framework::VLLM, s.perChannelQuant = true;
        else if (change == "budget=-1"_L1)
            s.timeBudgetSeconds = -1;
        else if (change == "batch="_L1)
            s.batchSizes.clear();
        else if (change == "batch=0"_L1)
            s.batchSizes = {1, 0};
        else if (change == "block=-1"_L1)
            s.blockShape = std::array<int, 2>{-1, 128};
        else if (change == "strategy="_L1)
            s.strategy.clear();
        else if (change == "device=/"_L1)
            s.deviceName = u"NVIDIA/H200"_s;
        else if (change == "device=long"_L1)
            s.deviceName = QString(200, u'X');
        const JobCheck c = JobCheck::check(s, withTarget ? std::optional(target()) : std::nullopt);
        if (words.isEmpty()) {
            QVERIFY2(c.ok(), qPrintable(c.firstProblem()));
            QCOMPARE(s.validate(), QString());
            return;
        }
        QVERIFY(!c.ok());
        QCOMPARE(c.problems.first().field, field);
        QVERIFY2(c.firstProblem().contains(words), qPrintable(c.firstProblem()));
        // The flows and the CLI refuse a job with the same first sentence (without a target's N and E).
        if (!withTarget)
            QCOMPARE(s.validate(), c.firstProblem());
    }

    void fileNames_data() {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<bool>("upAndDown");
        QTest::addColumn<bool>("match");
        QTest::addColumn<QString>("sentence");
        QTest::newRow("the wanted name") << QString() << false << true
                                         << u"Matches the file the server looked for in "
                                            u"/srv/configs/triton_3_6_0."_s;
        QTest::newRow("another dtype")
            << u"fp8_w8a8"_s << false << false
            << u"The server looks for E=128,N=384,device_name=NVIDIA_H200.json, not "
               u"E=128,N=384,device_name=NVIDIA_H200,dtype=fp8_w8a8.json: it would never read this file."_s;
        QTest::newRow("up and down")
            << QString() << true << true
            << u"Matches the file the server looked for in /srv/configs/triton_3_6_0."_s;
    }
    void fileNames() {
        QFETCH(QString, dtype);
        QFETCH(bool, upAndDown);
        QFETCH(bool, match);
        QFETCH(QString, sentence);
        TuneSpec s = runnable();
        s.dtype = dtype;
        s.upAndDown = upAndDown;
        const JobCheck c = JobCheck::check(s, target());
        QVERIFY(c.ok()); // other names are a warning, not a refusal
        QCOMPARE(c.namesMatch, match);
        QCOMPARE(c.fileNamesMatch, sentence);
        QCOMPARE(c.namesWarning(), match ? QString() : sentence);
        QCOMPARE(c.fileNames.size(), upAndDown ? 2 : 1);
        if (upAndDown)
            QVERIFY(c.fileNames.last().contains(u"_down"_s));
        // Without a target there is nothing to compare with, and no device name is the host's GPU.
        s.deviceName.clear();
        const JobCheck free = JobCheck::check(s);
        QVERIFY(free.fileNamesMatch.isEmpty());
        QVERIFY(free.namesWarning().isEmpty());
        QVERIFY(free.fileNames.first().contains(u"device_name=<the host's GPU>"_s));
    }

    void parseList_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("allowAll");
        QTest::addColumn<QList<int>>("list");
        QTest::addColumn<QString>("error");
        QTest::newRow("sizes") << u"1, 2,4,2"_s << false << QList<int>{1, 2, 4} << QString();
        QTest::newRow("not a size") << u"1,x"_s << false << QList<int>{}
                                    << u"'x' is not a positive number."_s;
        QTest::newRow("no size") << u" "_s << false << QList<int>{} << u"Give at least one batch size"_s;
        QTest::newRow("all GPUs") << u"all"_s << true << QList<int>{} << QString();
        QTest::newRow("GPU 0") << u"0,1"_s << true << QList<int>{0, 1} << QString();
        QTest::newRow("not a GPU") << u"-1"_s << true << QList<int>{} << u"'-1' is not a GPU number."_s;
    }
    void parseList() {
        QFETCH(QString, text);
        QFETCH(bool, allowAll);
        QFETCH(QList<int>, list);
        QFETCH(QString, error);
        QString e;
        const auto got = JobCheck::parseList(text, allowAll, &e);
        if (error.isEmpty()) {
            QVERIFY2(got, qPrintable(e));
            QCOMPARE(*got, list);
        } else {
            QVERIFY(!got);
            QVERIFY2(e.contains(error), qPrintable(e));
        }
    }
};

QTEST_GUILESS_MAIN(TestJobCheck)
#include "tst_jobcheck.moc"
