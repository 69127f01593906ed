// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// ConfigName, TritonVersion and ConfigFile against the shared vectors (tests/data/moe_vectors.json),
// which the Python agent checks too, plus validation errors and nearest-key lookup.
#include "core/job/tunespec.h"
#include "core/job/tuningtarget.h"
#include "core/moe/configfile.h"
#include "core/moe/configname.h"
#include "core/moe/tritonversion.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace moetune;
using namespace Qt::StringLiterals;

namespace {

QJsonObject vectors() {
    QFile f(QStringLiteral(MOETUNE_TEST_DATA_DIR "/moe_vectors.json"));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot open moe_vectors.json");
    return QJsonDocument::fromJson(f.readAll()).object();
}

Framework dialectOf(const QString &s) {
    return s == u"vllm"_s ? Framework::VLLM : Framework::SGLang;
}

} // namespace

class TestMoe : public QObject {
    Q_OBJECT

private slots:
    void vectorsHaveTheAgreedShape();
    void nameRoundTrip_data();
    void nameRoundTrip();
    void nameFromPath();
    void sglangNameInVllmDialect();
    void serverNames_data();
    void serverNames();
    void serverNameErrors();
    void specFromLoggedName_data();
    void specFromLoggedName();
    void groupBlockShapeInSpec();
    void invalidNames_data();
    void invalidNames();
    void tritonVersions_data();
    void tritonVersions();
    void tritonParseVariants_data();
    void tritonParseVariants();
    void tritonOrdering();
    void fileRoundTrip_data();
    void fileRoundTrip();
    void invalidFiles_data();
    void invalidFiles();
    void nearest_data();
    void nearest();
};

void TestMoe::vectorsHaveTheAgreedShape() {
    const QJsonObject v = vectors();
    QCOMPARE(v.value(u"version"_s).toInt(), 1);
    QVERIFY(v.value(u"names"_s).toArray().size() >= 25);
    QVERIFY(v.value(u"files"_s).toArray().size() >= 4);
    QVERIFY(!v.value(u"invalid_names"_s).toArray().isEmpty());
    QVERIFY(!v.value(u"triton_versions"_s).toArray().isEmpty());
}

void TestMoe::nameRoundTrip_data() {
    QTest::addColumn<QJsonObject>("row");
    for (const QJsonValue &v : vectors().value(u"names"_s).toArray()) {
        const QJsonObject o = v.toObject();
        const QString tag = o.value(u"dialect"_s).toString() + u' ' + o.value(u"name"_s).toString();
        QTest::newRow(qPrintable(tag)) << o;
    }
}

void TestMoe::nameRoundTrip() {
    QFETCH(QJsonObject, row);
    const QString fileName = row.value(u"name"_s).toString();
    const std::optional<ConfigName> name = ConfigName::parse(fileName);
    QVERIFY2(name, qPrintable(fileName));
    QCOMPARE(name->experts, row.value(u"E"_s).toInt());
    QCOMPARE(name->n, row.value(u"N"_s).toInt());
    QCOMPARE(name->deviceName, row.value(u"device_name"_s).toString());
    QCOMPARE(name->dtype, row.value(u"dtype"_s).toString()); // null -> ""
    const QJsonValue block = row.value(u"block_shape"_s);
    QCOMPARE(name->blockShape.has_value(), block.isArray());
    if (block.isArray()) {
        QCOMPARE((*name->blockShape)[0], block.toArray().at(0).toInt());
        QCOMPARE((*name->blockShape)[1], block.toArray().at(1).toInt());
    }
    QCOMPARE(name->perChannelQuant, row.value(u"per_channel_quant"_s).toBool());
    QCOMPARE(name->down, row.value(u"down"_s).toBool());
    QCOMPARE(name->fileName(dialectOf(row.value(u"dialect"_s).toString())), fileName);
}

void TestMoe::nameFromPath() {
    const auto name = ConfigName::parse(
        u"/sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_6_0/"
        "E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128]_down.json"_s);
    QVERIFY(name);
    QCOMPARE(name->experts, 257);
    QCOMPARE(name->dtype, u"fp8_w8a8"_s);
    QVERIFY(name->down);
    const auto windows = ConfigName::parse(u"C:\\configs\\E=8,N=7168,device_name=NVIDIA_L40S.json"_s);
    QVERIFY(windows);
    QCOMPARE(windows->deviceName, u"NVIDIA_L40S"_s);
}

void TestMoe::sglangNameInVllmDialect() {
    // vLLM writes no _down / per_channel_quant and no space in the block shape.
    const auto name = ConfigName::parse(
        u"E=64,N=1408,device_name=NVIDIA_H20-3e,dtype=fp8_w8a8,block_shape=[128, 128],per_channel_quant=True_down.json"_s);
    QVERIFY(name);
    QCOMPARE(name->fileName(Framework::VLLM),
             u"E=64,N=1408,device_name=NVIDIA_H20-3e,dtype=fp8_w8a8,block_shape=[128,128].json"_s);
    const auto vllm =
        ConfigName::parse(u"E=64,N=1408,device_name=NVIDIA_H20-3e,block_shape=[128,128].json"_s);
    QVERIFY(vllm);
    QCOMPARE(vllm->fileName(Framework::SGLang),
             u"E=64,N=1408,device_name=NVIDIA_H20-3e,block_shape=[128, 128].json"_s);
}

void TestMoe::serverNames_data() {
    QTest::addColumn<QJsonObject>("row");
    const QJsonArray rows = vectors().value(u"server_names"_s).toArray();
    QVERIFY(rows.size() >= 15);
    for (const QJsonValue &v : rows) {
        const QJsonObject o = v.toObject();
        const QString tag = o.value(u"framework"_s).toString() + u' ' + o.value(u"name"_s).toString();
        QTest::newRow(qPrintable(tag)) << o;
    }
}

// The agent's naming.server_config_name reads the same rows (tests/test_naming.py): the C++ name of a
// logical shape must be byte-identical, and the file N must map back to the logical N.
void TestMoe::serverNames() {
    QFETCH(QJsonObject, row);
    const Framework fw = dialectOf(row.value(u"framework"_s).toString());
    std::optional<std::array<int, 2>> block;
    const QJsonArray b = row.value(u"block_shape"_s).toArray();
    if (b.size() == 2)
        block = std::array<int, 2>{b[0].toInt(), b[1].toInt()};
    QString error;
    const std::optional<ConfigName> name = ConfigName::forServer(
        fw, row.value(u"E"_s).toInt(), row.value(u"N"_s).toInt(), row.value(u"device_name"_s).toString(),
        row.value(u"dtype"_s).toString(), block, row.value(u"per_channel_quant"_s).toBool(),
        row.value(u"down"_s).toBool(), &error);
    QVERIFY2(name, qPrintable(error));
    const QString expected = row.value(u"name"_s).toString();
    QCOMPARE(name->fileName(fw), expected);
    const std::optional<ConfigName> parsed = ConfigName::parse(expected);
    QVERIFY(parsed);
    QCOMPARE(*parsed, *name);
    // vLLM's int8_w8a8 name carries no dtype: its N is the logical one like every other vLLM name.
    QCOMPARE(parsed->logicalN(fw), row.value(u"N"_s).toInt());
}

void TestMoe::serverNameErrors() {
    QString error;
    QVERIFY(!ConfigName::forServer(Framework::SGLang, 60, 1407, u"NVIDIA_H20"_s, u"int4_w4a16"_s,
                                   std::nullopt, false, false, &error));
    QVERIFY2(error.contains(u"N must be even"_s), qPrintable(error));
    // vLLM doubles the packed N back: an odd logical N is its own business, the name keeps it.
    QVERIFY(ConfigName::forServer(Framework::VLLM, 60, 1407, u"NVIDIA_H20"_s, u"int4_w4a16"_s, std::nullopt,
                                  false, false, &error));
    error.clear();
    QVERIFY(!ConfigName::forServer(Framework::Unknown, 8, 64, u"X"_s, QString(), std::nullopt, false, false,
                                   &error));
    QVERIFY(!error.isEmpty());
}

void TestMoe::specFromLoggedName_data() {
    serverNames_data();
}

// A name found in a server's log becomes a tune spec with the layer's logical N (what the agent's spec
// takes), so the agent names its file exactly as the log did.
void TestMoe::specFromLoggedName() {
    QFETCH(QJsonObject, row);
    const Framework fw = dialectOf(row.value(u"framework"_s).toString());
    TuningTarget t;
    t.framework = fw;
    t.name = *ConfigName::parse(row.value(u"name"_s).toString());
    t.name.down = false;
    const TuneSpec spec = TuneSpec::fromTarget(t);
    QCOMPARE(spec.n, row.value(u"N"_s).toInt());
    const std::optional<ConfigName> again = ConfigName::forServer(
        fw, spec.experts, spec.n, spec.deviceName, spec.dtype, spec.blockShape, spec.perChannelQuant, false);
    QVERIFY(again);
    QCOMPARE(again->fileName(fw), t.name.fileName(fw));
}

void TestMoe::groupBlockShapeInSpec() {
    // The agent's normalised spec of an int4 layer carries block_shape [0, group]: C++ must read it back.
    QJsonObject o{{u"framework"_s, u"sglang"_s},
                  {u"E"_s, 60},
                  {u"N"_s, 1408},
                  {u"K"_s, 2048},
                  {u"topk"_s, 4},
                  {u"dtype"_s, u"int4_w4a16"_s},
                  {u"block_shape"_s, QJsonArray{0, 128}}};
    QString error;
    const std::optional<TuneSpec> spec = TuneSpec::fromJson(o, &error);
    QVERIFY2(spec, qPrintable(error));
    QCOMPARE(spec->blockShape, (std::array<int, 2>{0, 128}));
    QCOMPARE(spec->validate(), QString());
    const std::optional<ConfigName> name =
        ConfigName::forServer(Framework::SGLang, spec->experts, spec->n, u"NVIDIA_H20"_s, spec->dtype,
                              spec->blockShape, false, false);
    QVERIFY(name);
    QCOMPARE(name->fileName(Framework::SGLang), u"E=60,N=704,device_name=NVIDIA_H20,dtype=int4_w4a16.json"_s);
    o.insert(u"block_shape"_s, QJsonArray{0, 0});
    QVERIFY(!TuneSpec::fromJson(o, &error));
    QVERIFY2(error.contains(u"block_shape"_s), qPrintable(error));
}

void TestMoe::invalidNames_data() {
    QTest::addColumn<QString>("name");
    int i = 0;
    for (const QJsonValue &v : vectors().value(u"invalid_names"_s).toArray())
        QTest::newRow(qPrintable(QString::number(i++) + u' ' + v.toString())) << v.toString();
}

void TestMoe::invalidNames() {
    QFETCH(QString, name);
    QVERIFY2(!ConfigName::parse(name), qPrintable(name));
}

void TestMoe::tritonVersions_data() {
    QTest::addColumn<QString>("version");
    QTest::addColumn<QString>("folder");
    for (const QJsonValue &v : vectors().value(u"triton_versions"_s).toArray()) {
        const QJsonObject o = v.toObject();
        QTest::newRow(qPrintable(o.value(u"version"_s).toString()))
            << o.value(u"version"_s).toString() << o.value(u"folder"_s).toString();
    }
}

void TestMoe::tritonVersions() {
    QFETCH(QString, version);
    QFETCH(QString, folder);
    const auto v = TritonVersion::parse(version);
    QVERIFY(v);
    QCOMPARE(v->toString(), version);
    QCOMPARE(v->folderName(), folder);
    const auto fromFolder = TritonVersion::parse(folder);
    QVERIFY(fromFolder);
    QCOMPARE(*fromFolder, *v);
}

void TestMoe::tritonParseVariants_data() {
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("expected"); // "" = rejected
    QTest::newRow("major.minor") << u"3.6"_s << u"3.6.0"_s;
    QTest::newRow("local build") << u"3.6.0+git9a1b2c3"_s << u"3.6.0"_s;
    QTest::newRow("pre-release") << u"3.5.0rc1"_s << u"3.5.0"_s;
    QTest::newRow("folder two parts") << u"triton_3_4"_s << u"3.4.0"_s;
    QTest::newRow("path to folder") << u"/x/configs/triton_3_3_1/"_s << u"3.3.1"_s;
    QTest::newRow("empty") << QString() << QString();
    QTest::newRow("word") << u"latest"_s << QString();
    QTest::newRow("folder suffix") << u"triton_3_6_0_old"_s << QString();
    QTest::newRow("single number") << u"3"_s << QString();
}

void TestMoe::tritonParseVariants() {
    QFETCH(QString, input);
    QFETCH(QString, expected);
    const auto v = TritonVersion::parse(input);
    QCOMPARE(v ? v->toString() : QString(), expected);
}

void TestMoe::tritonOrdering() {
    QVERIFY(TritonVersion(3, 4, 0) < TritonVersion(3, 6, 0));
    QVERIFY(TritonVersion(3, 10, 0) > TritonVersion(3, 9, 9));
    QVERIFY(TritonVersion(3, 3, 1) > TritonVersion(3, 3, 0));
    QCOMPARE(TritonVersion(3, 6, 0), *TritonVersion::parse(u"triton_3_6_0"_s));
}

void TestMoe::fileRoundTrip_data() {
    QTest::addColumn<QJsonObject>("row");
    int i = 0;
    for (const QJsonValue &v : vectors().value(u"files"_s).toArray())
        QTest::newRow(qPrintable(u"file "_s + QString::number(i++) + u' ' +
                                 v.toObject().value(u"dialect"_s).toString()))
            << v.toObject();
}

void TestMoe::fileRoundTrip() {
    QFETCH(QJsonObject, row);
    const QByteArray text = row.value(u"text"_s).toString().toUtf8();
    QString error;
    const std::optional<ConfigFile> file = ConfigFile::parse(text, &error);
    QVERIFY2(file, qPrintable(error));
    const QJsonObject entries = row.value(u"entries"_s).toObject();
    QCOMPARE(file->entries.size(), entries.size());
    for (auto it = entries.begin(); it != entries.end(); ++it) {
        QVERIFY(file->entries.contains(it.key().toInt()));
        const KernelConfig c = file->entries.value(it.key().toInt());
        const QJsonObject e = it.value().toObject();
        QCOMPARE(c.blockSizeM, e.value(u"BLOCK_SIZE_M"_s).toInt());
        QCOMPARE(c.blockSizeN, e.value(u"BLOCK_SIZE_N"_s).toInt());
        QCOMPARE(c.blockSizeK, e.value(u"BLOCK_SIZE_K"_s).toInt());
        QCOMPARE(c.groupSizeM, e.value(u"GROUP_SIZE_M"_s).toInt());
        QCOMPARE(c.numWarps, e.value(u"num_warps"_s).toInt());
        QCOMPARE(c.numStages, e.value(u"num_stages"_s).toInt());
        QCOMPARE(c.useTma.has_value(), e.contains(u"USE_TMA"_s));
        QCOMPARE(c.extra.size(), e.size() - 6 - (e.contains(u"USE_TMA"_s) ? 1 : 0));
    }
    const QJsonValue tv = row.value(u"triton_version"_s);
    QCOMPARE(file->tritonVersion, tv.isString() ? tv.toString() : QString());
    // Byte for byte what the server's tuner writes.
    QCOMPARE(file->toJson(dialectOf(row.value(u"dialect"_s).toString())), text);
}

void TestMoe::invalidFiles_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("errorPart");
    const QByteArray ok =
        R"("BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1, "num_warps": 4)";
    QTest::newRow("not json") << QByteArray("{\n  \"1\": {\n  oops") << u"Not valid JSON"_s;
    QTest::newRow("array") << QByteArray("[1, 2]") << u"must be a JSON object"_s;
    QTest::newRow("empty object") << QByteArray("{}") << u"no batch-size entries"_s;
    QTest::newRow("non-integer key") << QByteArray("{\"one\": {" + ok + ", \"num_stages\": 2}}")
                                     << u"Key \"one\""_s;
    QTest::newRow("negative key") << QByteArray("{\"-4\": {" + ok + ", \"num_stages\": 2}}")
                                  << u"Key \"-4\""_s;
    QTest::newRow("leading zero key")
        << QByteArray("{\"016\": {" + ok + ", \"num_stages\": 2}}") << u"Key \"016\""_s;
    QTest::newRow("value not object") << QByteArray("{\"1\": 5}") << u"not an object"_s;
    QTest::newRow("missing field") << QByteArray("{\"1\": {" + ok + "}}") << u"Missing field num_stages"_s;
    QTest::newRow("string field") << QByteArray("{\"1\": {" + ok + ", \"num_stages\": \"2\"}}")
                                  << u"num_stages must be an integer"_s;
    QTest::newRow("fraction") << QByteArray("{\"1\": {" + ok + ", \"num_stages\": 2.5}}")
                              << u"num_stages must be an integer"_s;
    QTest::newRow("zero stages") << QByteArray("{\"1\": {" + ok + ", \"num_stages\": 0}}") << u"at least 1"_s;
    QTest::newRow("block not power of two")
        << QByteArray(
               R"({"1": {"BLOCK_SIZE_M": 48, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1, "num_warps": 4, "num_stages": 2}})")
        << u"BLOCK_SIZE_M must be a power of two, not 48"_s;
    QTest::newRow("warps not power of two")
        << QByteArray(
               R"({"1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1, "num_warps": 6, "num_stages": 2}})")
        << u"num_warps must be a power of two"_s;
    QTest::newRow("tma not bool") << QByteArray("{\"1\": {" + ok + ", \"num_stages\": 2, \"USE_TMA\": 1}}")
                                  << u"USE_TMA must be true or false"_s;
    QTest::newRow("triton_version not string")
        << QByteArray("{\"triton_version\": 3.4, \"1\": {" + ok + ", \"num_stages\": 2}}")
        << u"\"triton_version\" must be a string"_s;
}

void TestMoe::invalidFiles() {
    QFETCH(QByteArray, json);
    QFETCH(QString, errorPart);
    QString error;
    QVERIFY(!ConfigFile::parse(json, &error));
    QVERIFY2(error.contains(errorPart), qPrintable(error));
    QVERIFY(!ConfigFile::parse(json, nullptr)); // no error sink: still refused, no crash
}

void TestMoe::nearest_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("expectedBlockM"); // blockSizeM encodes the key below
    QTest::newRow("exact") << 64 << 64;
    QTest::newRow("below first") << 1 << 16;
    QTest::newRow("between, nearer lower") << 70 << 64;
    QTest::newRow("tie takes smaller key") << 80 << 64;
    QTest::newRow("between, nearer upper") << 90 << 128;
    QTest::newRow("above last") << 100000 << 256;
}

void TestMoe::nearest() {
    QFETCH(int, m);
    QFETCH(int, expectedBlockM);
    ConfigFile file;
    for (int key : {16, 64, 96, 256}) {
        KernelConfig c{key == 96 ? 128 : key, 64, 64, 1, 4, 3, std::nullopt, {}};
        file.entries.insert(key, c);
    }
    const KernelConfig *c = file.nearest(m);
    QVERIFY(c);
    QCOMPARE(c->blockSizeM, expectedBlockM);
    QVERIFY(!ConfigFile().nearest(m));
}

QTEST_GUILESS_MAIN(TestMoe)
#include "tst_moe.moc"
