// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Data rules: the built-in file, user rule files merged in, broken ones reported, placeholders.
#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/logreader.h"
#include "core/diagnosis/ruleset.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace moetune;
using namespace Qt::StringLiterals;

namespace {

void writeFile(const QString &path, const QByteArray &data) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(data) != data.size())
        qFatal("cannot write %s", qPrintable(path));
}

} // namespace

class TestRuleSet : public QObject {
    Q_OBJECT

private slots:
    void builtinCoversTheStartupFacts_data();
    void builtinCoversTheStartupFacts();
    void builtinRulesAreWellFormed();
    void userRulesMerge();
    void brokenRuleFiles_data();
    void brokenRuleFiles();
    void expandPlaceholders_data();
    void expandPlaceholders();
    void userRuleDirIsUnderConfig();
    void catastrophicPatternRunsOutOfItsBudget();
    void ruleFilesAreBounded();
};

void TestRuleSet::builtinCoversTheStartupFacts_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("rule");
    QTest::addColumn<QString>("title");
    QTest::newRow("sglang KV cache") << QByteArray("[2026-03-14 09:12:51 TP0] KV Cache is allocated. "
                                                   "#tokens: 1046371, K size: 23.95 GB, V size: 23.95 GB")
                                     << u"kv-cache-size"_s << u"KV cache: 1046371 tokens"_s;
    QTest::newRow("vllm KV cache") << QByteArray(
                                          "(EngineCore_DP0 pid=1) INFO 03-14 09:13:40 "
                                          "[kv_cache_utils.py:1087] GPU KV cache size: 1,234,560 tokens")
                                   << u"kv-cache-size-vllm"_s << u"KV cache: 1,234,560 tokens"_s;
    QTest::newRow("vllm KV memory")
        << QByteArray("INFO 03-14 09:13:40 [gpu_worker.py:276] Available KV cache memory: 61.23 GiB")
        << u"kv-cache-memory-vllm"_s << u"Memory for the KV cache: 61.23 GiB"_s;
    QTest::newRow("avail mem")
        << QByteArray(
               "[2026-03-14 09:12:40 TP3] Load weight end. type=X, avail mem=82.77 GB, mem usage=55.54 GB.")
        << u"memory-left"_s << u"GPU memory left: 82.77 GB at the last startup report"_s;
    QTest::newRow("low memory")
        << QByteArray(
               "[2026-03-14 09:12:40 TP3] Capture cuda graph end. Time elapsed: 3.00 s. avail mem=0.41 GB.")
        << u"memory-left-low"_s << u"Less than 1 GB of GPU memory left (0.41 GB)"_s;
    QTest::newRow("sglang cuda graph")
        << QByteArray(
               "[2026-03-14 09:12:40 TP0] Capture cuda graph end. Time elapsed: 41.87 s. mem usage=1.63 GB.")
        << u"cuda-graph-capture"_s << u"CUDA graphs captured in 41.87 s"_s;
    QTest::newRow("vllm cuda graph") << QByteArray("INFO 03-14 09:13:40 [gpu_model_runner.py:2007] Graph "
                                                   "capturing finished in 12 secs, took 0.55 GiB")
                                     << u"cuda-graph-capture-vllm"_s
                                     << u"CUDA graphs captured in 12 s (0.55 GiB)"_s;
    QTest::newRow("attention default")
        << QByteArray("[2026-03-14 09:12:10 TP0] Attention backend not explicitly specified. Use fa3 backend "
                      "by default.")
        << u"attention-backend-default"_s << u"Attention backend: fa3 (default)"_s;
    QTest::newRow("platform")
        << QByteArray("INFO 03-14 09:12:01 [__init__.py:216] Automatically detected platform cuda.")
        << u"platform-detected"_s << u"Platform: cuda"_s;
    QTest::newRow("flashinfer workspace")
        << QByteArray("[2026-03-14 09:12:10 TP0] Initialized FlashInfer allreduce fusion workspace: 64 MB")
        << u"flashinfer-workspace"_s << u"FlashInfer workspace set up"_s;
    QTest::newRow("oom") << QByteArray(
                                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
                         << u"cuda-out-of-memory"_s << u"CUDA out of memory"_s;
    QTest::newRow("nccl") << QByteArray("torch.distributed.DistBackendError: NCCL error in: "
                                        "ProcessGroupNCCL.cpp:1970, unhandled cuda error")
                          << u"nccl-error"_s << u"NCCL error"_s;
    QTest::newRow("tokenizer") << QByteArray("OSError: Can't load tokenizer for 'Qwen/Qwen3-30B-A3B'.")
                               << u"tokenizer-load-failure"_s << u"The tokenizer could not be loaded"_s;
    QTest::newRow("model id") << QByteArray(
                                     "OSError: Qwen/Qwen9-Nope is not a local folder and is not a valid "
                                     "model identifier listed on 'https://huggingface.co/models'")
                              << u"model-not-found"_s << u"Model Qwen/Qwen9-Nope not found"_s;
}

void TestRuleSet::builtinCoversTheStartupFacts() {
    QFETCH(QByteArray, line);
    QFETCH(QString, rule);
    QFETCH(QString, title);
    const Diagnosis d = Diagnoser().diagnoseText(QByteArray(line + '\n'));
    const Finding *f = d.find(rule);
    QVERIFY2(f, qPrintable(rule));
    QCOMPARE(f->title, title);
    QCOMPARE(f->occurrences, 1);
    QCOMPARE(f->evidence.front().line, 1);
    QVERIFY(f->evidence.front().matchLength > 0);
}

void TestRuleSet::builtinRulesAreWellFormed() {
    const RuleSet rules = RuleSet::builtin();
    QVERIFY(rules.size() >= 15);
    QSet<QString> ids;
    for (const Rule &r : rules.rules()) {
        QVERIFY2(!ids.contains(r.id), qPrintable(r.id));
        ids.insert(r.id);
        QVERIFY2(r.pattern.isValid(), qPrintable(r.id));
        // A kernel rule's line joins the start's moe-kernel finding: its explanation is a sentence of it.
        QVERIFY2(!r.explanation.isEmpty() && (!r.advice.isEmpty() || !r.moeKernel.isEmpty()),
                 qPrintable(r.id));
        QVERIFY2(r.prefilter.size() >= 4, qPrintable(r.id));
    }
}

void TestRuleSet::userRulesMerge() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    writeFile(dir.filePath(u"10-site.json"_s), R"J({"version": 1, "rules": [
        {"id": "disk-full", "prefilter": "No space left", "pattern": "No space left on device: '([^']+)'",
         "severity": "error", "title": "Disk full at {1}", "explanation": "Writes to {1} failed.",
         "advice": "Free space under {1}."},
        {"id": "platform-detected", "prefilter": "detected platform", "pattern": "detected platform (\\w+)",
         "severity": "warning", "title": "Site override: {1}", "explanation": "x", "advice": "y"}
    ]})J");
    writeFile(dir.filePath(u"20-list.json"_s), R"([{"id": "gpu-fell-off", "prefilter": "fallen off the bus",
        "pattern": "GPU (\\S+) has fallen off the bus", "severity": "error", "title": "GPU {1} lost"}])");
    writeFile(dir.filePath(u"notes.txt"_s), "not a rule file");
    QStringList errors;
    const RuleSet rules = RuleSet::withUserRules(dir.path(), &errors);
    QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
    QCOMPARE(rules.size(), RuleSet::builtin().size() + 2); // one replaced, two added

    const Diagnosis d =
        Diagnoser(rules).diagnoseText("OSError: [Errno 28] No space left on device: '/tmp/triton'\n"
                                      "Automatically detected platform cuda.\n"
                                      "NVRM: GPU 0000:3b:00.0 has fallen off the bus.\n");
    const Finding *disk = d.find(u"disk-full"_s);
    QVERIFY(disk);
    QCOMPARE(disk->title, u"Disk full at /tmp/triton"_s);
    QCOMPARE(disk->advice, u"Free space under /tmp/triton."_s);
    QCOMPARE(disk->severity, Severity::Error);
    QCOMPARE(d.find(u"platform-detected"_s)->title, u"Site override: cuda"_s);
    QCOMPARE(d.find(u"platform-detected"_s)->severity, Severity::Warning);
    QCOMPARE(d.find(u"gpu-fell-off"_s)->title, u"GPU 0000:3b:00.0 lost"_s);
    QCOMPARE(d.worst(), Severity::Error);

    QStringList none;
    QCOMPARE(RuleSet::withUserRules(dir.filePath(u"missing"_s), &none).size(), RuleSet::builtin().size());
    QVERIFY(none.isEmpty());
}

void TestRuleSet::brokenRuleFiles_data() {
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("errorPart");
    QTest::addColumn<int>("loaded"); // rules of the file that still load
    QTest::newRow("not json") << QByteArray("{\"rules\": [\n{oops") << u"not valid JSON"_s << 0;
    QTest::newRow("wrong top level") << QByteArray("{\"version\": 1}") << u"expected {\"version\": 1"_s << 0;
    QTest::newRow("rule not object") << QByteArray("[5]") << u"rule #1 is not an object"_s << 0;
    const QByteArray good =
        R"({"id": "good", "prefilter": "good line", "pattern": "good line", "title": "Good"})";
    QTest::newRow("missing id") << QByteArray("[" + good +
                                              R"(, {"prefilter": "abcd", "pattern": "a", "title": "t"}])")
                                << u"the field \"id\" is missing"_s << 1;
    QTest::newRow("bad regex")
        << QByteArray("[" + good + R"(, {"id": "r", "prefilter": "abcd", "pattern": "a(b", "title": "t"}])")
        << u"not a valid regular expression"_s << 1;
    QTest::newRow("short prefilter")
        << QByteArray(R"([{"id": "r", "prefilter": "ab", "pattern": "ab", "title": "t"}])") << u"too short"_s
        << 0;
    QTest::newRow("bad severity")
        << QByteArray(
               R"([{"id": "r", "prefilter": "abcd", "pattern": "abcd", "title": "t", "severity": "fatal"}])")
        << u"not one of info, warning, error"_s << 0;
    QTest::newRow("bad id") << QByteArray(
                                   R"([{"id": "a b", "prefilter": "abcd", "pattern": "abcd", "title": "t"}])")
                            << u"an id may hold only"_s << 0;
    QTest::newRow("title not string")
        << QByteArray(R"([{"id": "r", "prefilter": "abcd", "pattern": "abcd", "title": 5}])")
        << u"must be a string"_s << 0;
    QTest::newRow("bad quote")
        << QByteArray(
               R"([{"id": "r", "prefilter": "abcd", "pattern": "abcd", "title": "t", "quote": "middle"}])")
        << u"not one of first, last"_s << 0;
    QTest::newRow("joins without join_text")
        << QByteArray(
               R"([{"id": "r", "prefilter": "abcd", "pattern": "abcd", "title": "t", "joins": "kv-cache-size"}])")
        << u"needs a \"join_text\""_s << 0;
}

void TestRuleSet::brokenRuleFiles() {
    QFETCH(QByteArray, content);
    QFETCH(QString, errorPart);
    QFETCH(int, loaded);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(u"mine.json"_s);
    writeFile(path, content);
    QStringList errors;
    const RuleSet rules = RuleSet::withUserRules(dir.path(), &errors);
    QCOMPARE(errors.size(), 1);
    QVERIFY2(errors.front().contains(errorPart), qPrintable(errors.front()));
    QVERIFY2(errors.front().startsWith(path), qPrintable(errors.front())); // names the file to fix
    QCOMPARE(rules.size(), RuleSet::builtin().size() + loaded);            // the rest still loads
}

void TestRuleSet::expandPlaceholders_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expanded");
    QTest::newRow("none") << u"plain"_s << u"plain"_s;
    QTest::newRow("numbered") << u"{1} then {2}"_s << u"42 then GB"_s;
    QTest::newRow("named") << u"value {amount}"_s << u"value 42"_s;
    QTest::newRow("whole match") << u"[{0}]"_s << u"[mem=42 GB]"_s;
    QTest::newRow("missing capture") << u"x{7}y"_s << u"xy"_s;
    QTest::newRow("not a placeholder") << u"{ 1 } {}"_s << u"{ 1 } {}"_s;
    QTest::newRow("fallback unused") << u"{1|none}"_s << u"42"_s;
    QTest::newRow("fallback for a missing capture") << u"at {7|a startup step}."_s << u"at a startup step."_s;
}

void TestRuleSet::expandPlaceholders() {
    QFETCH(QString, text);
    QFETCH(QString, expanded);
    const QRegularExpression re(u"mem=(?<amount>\\d+) (GB)"_s);
    QCOMPARE(Rule::expand(text, re.match(u"avail mem=42 GB."_s)), expanded);
}

void TestRuleSet::userRuleDirIsUnderConfig() {
    QVERIFY(RuleSet::userRulesDir().endsWith(u"/rules"_s));
}

// Issue 42 item 8: ^(a+)+$ backtracks exponentially on a line of a's that does not end the pattern. The
// rule runs out of its match budget on the first such line, is named in the diagnosis, and is not
// applied again: the log is read in the time of a log without it.
void TestRuleSet::catastrophicPatternRunsOutOfItsBudget() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    writeFile(dir.filePath(u"evil.json"_s), R"J([{"id": "aaaa", "prefilter": "aaaa", "pattern": "^(a+)+$",
        "severity": "info", "title": "a's"},
        {"id": "fine", "prefilter": "aaaaa", "pattern": "^a+$", "severity": "info", "title": "fine a's"}])J");
    QStringList errors;
    const RuleSet rules = RuleSet::withUserRules(dir.path(), &errors);
    QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
    QByteArray log;
    for (int i = 0; i < 2000; ++i)
        log += QByteArray(40, 'a') + "!\n";
    log += QByteArray(20, 'a') + '\n'; // a line both rules match
    QElapsedTimer t;
    t.start();
    const Diagnosis d = Diagnoser(rules).diagnoseText(log);
    const qint64 ms = t.elapsed();
    const Finding *budget = d.find(u"rule-budget-aaaa"_s);
    QVERIFY(budget);
    QVERIFY2(budget->title.contains(u"Rule \"aaaa\" ran out of its match budget"_s),
             qPrintable(budget->title));
    QVERIFY2(budget->explanation.contains(dir.filePath(u"evil.json"_s)), qPrintable(budget->explanation));
    QCOMPARE(budget->severity, Severity::Warning);
    QCOMPARE(budget->evidence.first().line, 1);
    QVERIFY(!d.find(u"aaaa"_s)); // left out after it ran out, even where it would match
    QVERIFY(d.find(u"fine"_s));  // the other rule goes on
    QVERIFY(!d.find(u"rule-budget-fine"_s));
    QVERIFY2(ms < 3000, qPrintable(u"%1 ms"_s.arg(ms))); // unbounded: 2000 lines x the library's own limit

    // The budget is far from what a built-in rule needs on the longest line the reader gives a rule
    // (LogReader::maxLineBytes), its literal at the start, middle or end.
    const RuleSet builtin = RuleSet::builtin();
    for (const Rule &r : builtin.rules()) {
        const QString lit = QString::fromUtf8(r.prefilter);
        const QString filler = QString(u"x 12.5 GB, "_s).repeated(int(LogReader::maxLineBytes / 11) - 8);
        const QStringList lines{lit + u" 1 2 3 "_s + filler, filler + lit + u" 1.5 GB"_s + filler.left(200),
                                filler + u" "_s + lit};
        for (const QString &line : lines)
            QVERIFY2(r.pattern.match(line.left(LogReader::maxLineBytes)).isValid(), qPrintable(r.id));
    }
}

// Issue 42 item 6: a rule folder's files are read bounded (count, size, a field's length), a FIFO
// among them is refused rather than waited on, and each refusal is a sentence naming the file.
void TestRuleSet::ruleFilesAreBounded() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QByteArray rule = R"J({"id": "r%1", "prefilter": "abcd%1", "pattern": "abcd%1", "title": "t"})J";
    // a huge title (the file's size is refused before it is parsed)
    writeFile(dir.filePath(u"00-huge.json"_s),
              R"J([{"id": "huge", "prefilter": "abcd", "pattern": "abcd", "title": ")J" +
                  QByteArray(2 << 20, 'x') + "\"}]");
    // a title longer than a rule may hold, in a small file
    writeFile(dir.filePath(u"01-long.json"_s),
              R"J([{"id": "long", "prefilter": "abcd", "pattern": "abcd", "title": ")J" +
                  QByteArray(Rule::kMaxTextChars + 1, 'x') + "\"}]");
    QCOMPARE(::mkfifo(QFile::encodeName(dir.filePath(u"02-fifo.json"_s)).constData(), 0600), 0);
    // more rules than a set holds
    QByteArray many = "[";
    for (qsizetype i = 0; i < RuleSet::kMaxRules + 10; ++i)
        many += (i ? "," : "") + QString::fromLatin1(rule).arg(i).toLatin1();
    writeFile(dir.filePath(u"03-many.json"_s), many + "]");
    // more files than are read
    for (qsizetype i = 0; i < RuleSet::kMaxRuleFiles; ++i)
        writeFile(dir.filePath(u"9%1.json"_s.arg(i, 3, 10, QChar(u'0'))), "[]");
    QStringList errors;
    const RuleSet rules = RuleSet::withUserRules(dir.path(), &errors);
    const QString all = errors.join(u'\n');
    QVERIFY2(all.contains(u"00-huge.json: is 2.0 MiB, more than the 1 MiB a rule file may be"_s),
             qPrintable(all));
    QVERIFY2(
        all.contains(u"the field \"title\" is 8193 characters long, more than the 8192 a rule may hold"_s),
        qPrintable(all));
    QVERIFY2(all.contains(u"02-fifo.json: is not a regular file"_s), qPrintable(all));
    QVERIFY2(all.contains(u"a rule set holds at most 1024 rules"_s), qPrintable(all));
    QVERIFY2(all.contains(u"holds %1 rule files; only the first %2 (by name) were read"_s
                              .arg(RuleSet::kMaxRuleFiles + 4)
                              .arg(RuleSet::kMaxRuleFiles)),
             qPrintable(all));
    QCOMPARE(rules.size(), RuleSet::kMaxRules);
    QVERIFY(!rules.rules().isEmpty());
}

QTEST_GUILESS_MAIN(TestRuleSet)
#include "tst_ruleset.moc"
