#include "core/moe/configname.h"
#include "core/moe/precompiledregex.h"

#include <QRegularExpression>
#include <QStringList>

using namespace Qt::StringLiterals;

namespace moetune {

std::optional<ConfigName> ConfigName::parse(QStringView fileNameOrPath) {
    qsizetype slash = std::max(fileNameOrPath.lastIndexOf(u'/'), fileNameOrPath.lastIndexOf(u'\\'));
    // A device name cannot hold '/', but "[128, 128]" never does either, so the last separator is safe.
    const QString name = fileNameOrPath.mid(slash + 1).trimmed().toString();
    static const QRegularExpression re = precompiledRegex(
        u"^E=(\\d{1,6}),N=(\\d{1,7}),device_name=([^,]*?)(?:,dtype=([A-Za-z0-9_]+?))?"
        "(?:,block_shape=\\[(\\d{1,5}), ?(\\d{1,5})\\])?(?:,per_channel_quant=(True))?(_down)?\\.json$"_s);
    const QRegularExpressionMatch m = re.match(name);
    if (!m.hasMatch())
        return std::nullopt;
    ConfigName c;
    c.experts = m.capturedView(1).toInt();
    c.n = m.capturedView(2).toInt();
    if (c.experts <= 0 || c.n <= 0)
        return std::nullopt;
    c.deviceName = m.captured(3);
    c.dtype = m.captured(4);
    if (m.capturedLength(5) > 0) {
        const int bn = m.capturedView(5).toInt();
        const int bk = m.capturedView(6).toInt();
        if (bn <= 0 || bk <= 0)
            return std::nullopt;
        c.blockShape = std::array<int, 2>{bn, bk};
    }
    c.perChannelQuant = m.capturedLength(7) > 0;
    c.down = m.capturedLength(8) > 0;
    return c;
}

QString ConfigName::fileName(Framework dialect) const {
    QString s =
        u"E="_s + QString::number(experts) + u",N="_s + QString::number(n) + u",device_name="_s + deviceName;
    if (!dtype.isEmpty())
        s += u",dtype="_s + dtype;
    if (blockShape) {
        const QString sep = dialect == Framework::VLLM ? u","_s : u", "_s;
        s += u",block_shape=["_s + QString::number((*blockShape)[0]) + sep +
             QString::number((*blockShape)[1]) + u']';
    }
    if (dialect != Framework::VLLM) {
        if (perChannelQuant)
            s += u",per_channel_quant=True"_s;
        if (down)
            s += u"_down"_s;
    }
    return s + u".json"_s;
}

std::optional<ConfigName> ConfigName::forServer(Framework server, int experts, int logicalN,
                                                const QString &deviceName, const QString &dtype,
                                                std::optional<std::array<int, 2>> blockShape,
                                                bool perChannelQuant, bool down, QString *error) {
    auto fail = [error](const QString &why) -> std::optional<ConfigName> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    if (server != Framework::SGLang && server != Framework::VLLM)
        return fail(u"Unknown server framework: the file name depends on it (SGLang or vLLM)."_s);
    ConfigName c;
    c.experts = experts;
    c.n = logicalN;
    c.deviceName = deviceName;
    const bool plain = dtype.isEmpty() || dtype == "bf16"_L1 || dtype == "fp16"_L1 ||
                       dtype == "bfloat16"_L1 || dtype == "float16"_L1 || dtype == "auto"_L1;
    c.dtype = plain ? QString() : dtype;
    const bool sglang = server == Framework::SGLang;
    // vLLM's int8_w8a8 layers share the plain file.
    if (!sglang && c.dtype == "int8_w8a8"_L1)
        c.dtype.clear();
    // [0, group] describes group-quantised weights; no server writes it into the name.
    if (blockShape && (*blockShape)[0] > 0 && (*blockShape)[1] > 0)
        c.blockShape = blockShape;
    // Both servers read N from the packed down weight (two int4 per byte); only vLLM doubles it back.
    if (dtype == "int4_w4a16"_L1 && sglang) {
        if (logicalN % 2 != 0)
            return fail(u"int4_w4a16 packs two weights per byte: N must be even (got %1)."_s.arg(logicalN));
        c.n = logicalN / 2;
    }
    c.perChannelQuant = perChannelQuant && sglang;
    c.down = down && sglang;
    return c;
}

int ConfigName::logicalN(Framework server) const {
    return server == Framework::SGLang && dtype == "int4_w4a16"_L1 ? 2 * n : n;
}

const QStringList &ConfigName::knownDtypes() {
    static const QStringList dtypes{u"fp8_w8a8"_s, u"int8_w8a8"_s, u"int8_w8a16"_s, u"int4_w4a16"_s,
                                    u"float32"_s};
    return dtypes;
}

} // namespace moetune
